//! `siftdb bench` and `siftdb bench filters` end to end on small key sets: the
//! reports come from the engine and the filters, and say what filters save.

use std::process::Command;

/// Run in cargo's scratch directory: the bench writes its chart to the
/// working directory by default, and a test run must not leave one in the repo.
fn siftdb() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_siftdb"));
    cmd.current_dir(env!("CARGO_TARGET_TMPDIR"));
    cmd
}

#[test]
fn filters_save_block_reads_and_every_output_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("out.csv");
    let svg = dir.path().join("out.svg");
    let out = siftdb()
        .args(["bench", "--keys", "20000", "--lookups", "4000", "--value-bytes", "40", "--threads", "2"])
        .args(["--policies", "none,fuse8,monkey:10", "--workloads", "absent,uniform,mixed,scan", "--json"])
        .arg("--dir")
        .arg(dir.path().join("dbs"))
        .arg("--csv")
        .arg(&csv)
        .arg("--svg")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["config"]["keys"], 20000);
    // The run's last line names every file it wrote (on stderr, beside --json).
    let stderr = String::from_utf8_lossy(&out.stderr);
    let want = format!(
        "siftdb bench: wrote chart {}, CSV {}, databases in {}",
        svg.display(),
        csv.display(),
        dir.path().join("dbs").display()
    );
    assert_eq!(stderr.lines().last(), Some(want.as_str()), "{stderr}");
    // No tree-shape warning (a sampling-noise one is expected at 4,000 lookups).
    let warnings = report["warnings"].as_array().unwrap();
    assert!(warnings.iter().all(|w| !w.as_str().unwrap().contains("level(s)")), "{warnings:?}");
    let policies = report["policies"].as_array().unwrap();
    assert_eq!(policies.len(), 3);
    // What each level's tables chose is in the report: fallbacks and misses.
    for p in policies {
        for l in p["levels"].as_array().unwrap() {
            assert!(l["filter_fallbacks"].is_u64() && l["tables_over_target"].is_u64(), "{l}");
        }
    }

    let absent = |p: &serde_json::Value| {
        p["workloads"].as_array().unwrap().iter().find(|w| w["workload"] == "absent").cloned().unwrap()
    };
    let none = absent(&policies[0]);
    let fuse8 = absent(&policies[1]);
    // Without filters an absent key costs a block read in most levels whose
    // range covers it; with fuse8 it costs about Σ FPR.
    let none_blocks = none["blocks_per_lookup"].as_f64().unwrap();
    let fuse_blocks = fuse8["blocks_per_lookup"].as_f64().unwrap();
    assert!(none_blocks > 0.5, "{none_blocks}");
    assert!(fuse_blocks < 0.05, "{fuse_blocks}");
    assert_eq!(fuse8["within_bound"], true);
    assert!(fuse8["vs_baseline"]["blocks_per_lookup"].as_f64().unwrap() < 0.1);
    assert_eq!(policies[0]["filter_bytes"], 0);
    assert!(policies[1]["filter_bits_per_key"].as_f64().unwrap() > 8.0);
    for p in policies {
        assert_eq!(p["scan"]["ranges"], 20);
        assert!(p["scan"]["entries"].as_u64().unwrap() > 5000, "{}", p["scan"]);
        assert_eq!(p["scan"]["mismatches"], 0);
        for w in p["workloads"].as_array().unwrap() {
            assert_eq!(w["wrong_answers"], 0, "{}: {}", p["policy"], w["workload"]);
            assert_eq!(w["lookups"], 4000);
        }
        let levels = p["levels"].as_array().unwrap();
        // 20,000 keys is the documented minimum for a tree of at least 4
        // levels; the sizes scale so L1..L4 all hold tables.
        let holding = levels.iter().filter(|l| l["tables"].as_u64().unwrap() > 0).count();
        assert!(holding >= 4, "{}: {levels:?}", p["policy"]);
        assert!((1..=4).all(|i| levels[i]["tables"].as_u64().unwrap() > 0), "{}: {levels:?}", p["policy"]);
        assert_eq!(p["levels_with_tables"], holding);
        assert_eq!(p["fewer_than_4_levels"], false);
    }
    // The bound is (present fraction) + Σ over probed filters of their FPR +
    // 0.1%: every L0 table, one table per deeper level.
    for p in policies {
        let probed: f64 = p["levels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                let tables = l["tables"].as_u64().unwrap();
                let probed = if l["level"] == 0 { tables } else { tables.min(1) };
                probed as f64 * l["filter_fpr"].as_f64().unwrap()
            })
            .sum();
        for w in p["workloads"].as_array().unwrap() {
            let present = w["present_lookups"].as_f64().unwrap() / w["lookups"].as_f64().unwrap();
            let bound = w["bound_blocks_per_lookup"].as_f64().unwrap();
            let repeats = w["repeat_slack"].as_f64().unwrap();
            // The repeat term, zipfian only: four standard deviations of the
            // excess of Σ w² over 1/lookups, at the Σ FPR (capped at 1) probed.
            let weight = w["repeat_weight"].as_f64().unwrap();
            let excess = (weight - 1.0 / w["lookups"].as_f64().unwrap()).max(0.0);
            let want = if w["workload"] == "zipfian" { 4.0 * (excess * probed.min(1.0)).sqrt() } else { 0.0 };
            assert!((repeats - want).abs() < 1e-9, "{}: {w}", p["policy"]);
            assert!(
                (bound - (present + probed + 0.001 + repeats)).abs() < 1e-9,
                "{}: {bound} vs {probed}",
                p["policy"]
            );
            // At 4,000 lookups the 0.1% slack is under three standard
            // errors of the false positives: an excess within them passes,
            // with a warning naming it.
            let blocks = w["blocks_per_lookup"].as_f64().unwrap();
            let errors = 3.0 * (probed.min(1.0) / w["lookups"].as_f64().unwrap()).sqrt();
            assert!(blocks <= bound + (errors - 0.001).max(0.0), "{}: {w}", p["policy"]);
            let named =
                format!("{} {}: read", p["policy"].as_str().unwrap(), w["workload"].as_str().unwrap());
            let warned = warnings.iter().any(|x| x.as_str().unwrap().starts_with(&named));
            assert_eq!(w["within_bound"] == false, warned, "{}: {w}", p["policy"]);
        }
    }
    // Present keys are found: uniform lookups read at least one block each.
    let uniform =
        policies[1]["workloads"].as_array().unwrap().iter().find(|w| w["workload"] == "uniform").unwrap();
    assert!(uniform["blocks_per_lookup"].as_f64().unwrap() >= 1.0);

    // Ratios to the baseline: none against itself is 1; filters cut blocks,
    // latency and wasted reads, and cost table bytes.
    for w in policies[0]["workloads"].as_array().unwrap() {
        for k in [
            "blocks_per_lookup",
            "table_probes_per_lookup",
            "lookups_per_second",
            "latency_mean",
            "latency_p50",
        ] {
            assert_eq!(w["vs_baseline"][k], 1.0, "none {}: {k}", w["workload"]);
        }
    }
    let fuse_absent = &fuse8["vs_baseline"];
    for k in ["latency_mean", "latency_p50", "latency_p99", "latency_p999", "table_probes_per_lookup"] {
        assert!(fuse_absent[k].as_f64().unwrap() > 0.0, "{k}: {fuse_absent}");
    }
    // Whether the filter is faster is for the benchmarks (timing on a shared
    // machine is no test): here the latency ratios are finite and are the
    // policy's latency over the baseline's, as the two runs reported them.
    for (k, stat) in
        [("latency_mean", "mean"), ("latency_p50", "p50"), ("latency_p99", "p99"), ("latency_p999", "p999")]
    {
        let got = fuse_absent[k].as_f64().unwrap();
        let (f, b) =
            (fuse8["latency_ns"][stat].as_f64().unwrap(), none["latency_ns"][stat].as_f64().unwrap());
        assert!(got.is_finite() && f > 0.0 && b > 0.0, "{k}: {fuse_absent}");
        assert!((got - f / b).abs() <= 1e-9 * got, "{k}: {got} vs {f} / {b}");
    }
    // What the filter must cut is counted, not timed: blocks read.
    assert!(fuse_absent["blocks_per_lookup"].as_f64().unwrap() < 1.0, "{fuse_absent}");
    // Against `none` (every probe of an absent key reads a block) the FPR
    // ratio is the share of wasted reads left.
    assert_eq!(fuse_absent["observed_fpr"], fuse8["observed_fpr"]);
    assert!(policies[1]["vs_baseline"]["filter_bytes"].is_null());
    assert!(policies[1]["vs_baseline"]["table_bytes"].as_f64().unwrap() > 1.0);
    assert!(policies[1]["vs_baseline"]["build_seconds"].as_f64().unwrap() > 0.0);
    // Load throughput counts the puts alone; settling is reported apart.
    for p in policies {
        let (load, build) = (p["load_seconds"].as_f64().unwrap(), p["build_seconds"].as_f64().unwrap());
        assert!(load > 0.0 && load <= build, "{}: {load} {build}", p["policy"]);
        let keys_per_second = p["load_keys_per_second"].as_f64().unwrap();
        assert!((keys_per_second - 20000.0 / load).abs() < 1e-6 * keys_per_second);
        let mb = p["load_mb_per_second"].as_f64().unwrap();
        assert!((mb - 20000.0 * 56.0 / 1e6 / load).abs() < 1e-6 * mb, "16-byte keys + 40-byte values");
        assert!((p["settle_seconds"].as_f64().unwrap() - (build - load)).abs() < 1e-6);
    }

    // CSV: per (policy, workload) an `all` row, then one row per level
    // holding tables; every row has every column.
    let csv = std::fs::read_to_string(csv).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(&header[..3], ["policy", "workload", "level"]);
    for want in
        ["blocks_vs_none", "observed_fpr_vs_none", "mean_vs_none", "p999_vs_none", "build_seconds_vs_none"]
    {
        assert!(header.contains(&want), "{want} missing from {header:?}");
    }
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(rows.iter().all(|r| r.len() == header.len()));
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let level_rows: usize =
        policies.iter().map(|p| p["levels_with_tables"].as_u64().unwrap() as usize).sum::<usize>() * 3;
    assert_eq!(rows.len(), 3 * 3 + level_rows);
    assert_eq!(rows.iter().filter(|r| r[col("level")] == "all").count(), 9);
    // The level rows of fuse8/absent add up to its `all` row.
    let fuse_rows: Vec<&Vec<&str>> =
        rows.iter().filter(|r| r[0] == "fuse8" && r[col("workload")] == "absent").collect();
    let sum: f64 = fuse_rows
        .iter()
        .filter(|r| r[col("level")] != "all")
        .map(|r| r[col("blocks_per_lookup")].parse::<f64>().unwrap())
        .sum();
    let all: f64 = fuse_rows[0][col("blocks_per_lookup")].parse().unwrap();
    assert!((sum - all).abs() < 1e-9, "{sum} vs {all}");
    // An explicit --svg is still the chart's path (bench_chart.rs checks its content).
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("fuse8") && svg.contains("monkey:10 (default)"));
    assert!(svg.contains("uniform keys: data blocks read per lookup"), "{svg}");
    assert!(svg.contains("lower is better, log scale"), "{svg}");
}

#[test]
fn the_absent_key_bound_counts_every_level_probed() {
    // An absent key probes every L0 table and one table per deeper level, so
    // the bound is L0 tables × FPR + one FPR per deeper level + 0.1% (issue
    // 7; the report's unit tests pin the arithmetic with 3 L0 tables). The
    // loader settles with `compact()`, which empties level 0.
    let out = siftdb()
        .args([
            "bench",
            "--keys",
            "20000",
            "--value-bytes",
            "20",
            "--lookups",
            "50000",
            "--workloads",
            "absent",
        ])
        .arg("--json")
        .args(["--policies", "none,bloom:10,blocked-bloom:10"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for p in report["policies"].as_array().unwrap() {
        let levels = p["levels"].as_array().unwrap();
        assert_eq!(levels[0]["tables"], 0, "{}: {}", p["policy"], levels[0]);
        let fpr = |l: &serde_json::Value| l["filter_fpr"].as_f64().unwrap();
        let probed: f64 = fpr(&levels[0]) * levels[0]["tables"].as_f64().unwrap()
            + levels[1..].iter().filter(|l| l["tables"].as_u64().unwrap() > 0).map(fpr).sum::<f64>();
        let w = &p["workloads"][0];
        assert_eq!(w["within_bound"], true, "{}: {w}", p["policy"]);
        let bound = w["bound_blocks_per_lookup"].as_f64().unwrap();
        let repeats = w["repeat_slack"].as_f64().unwrap();
        assert!((bound - probed - 0.001 - repeats).abs() < 1e-9, "{}: {bound} vs {probed}", p["policy"]);
        // The expectation from the probes really made: none for no filter;
        // for a filter, the measured reads within sampling error of it
        // (about 900 false positives expected here: five deviations ≈ 17%).
        // The rate a small filter realizes strays from its theory as well
        // (a blocked Bloom filter of 30 blocks, as the levels of a
        // 7,000-key tree hold, is as good as its few blocks' loads): with
        // blocked-bloom:10 the same check read −26% at 7,000 keys and +16%
        // at 12,000; at 20,000 (the bench's least for four levels) both
        // Bloom policies read within 3%.
        let expected = &w["expected_blocks_per_lookup"];
        if p["policy"] == "none" {
            assert!(expected.is_null(), "{expected}");
        } else {
            let (e, m) = (expected.as_f64().unwrap(), w["blocks_per_lookup"].as_f64().unwrap());
            assert!(e > 0.0 && e <= bound && (m / e - 1.0).abs() < 0.25, "{}: {m} vs {e}", p["policy"]);
        }
    }
}

#[test]
fn a_tree_of_fewer_than_4_levels_is_warned_about() {
    // 1,000 keys without values fill two memtables of the 16 KiB floor: the
    // tree holds tables in 3 levels.
    let out = siftdb()
        .args(["bench", "--keys", "1000", "--value-bytes", "0", "--lookups", "1000", "--workloads", "absent"])
        .args(["--policies", "none,xor16", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // (A busy machine adds a load-average warning; only the tree's count.)
    let warnings: Vec<&str> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .filter(|w| !w.contains("load average"))
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("fewer than 4"), "{warnings:?}");
    for p in report["policies"].as_array().unwrap() {
        assert_eq!(p["fewer_than_4_levels"], true);
        assert!(p["levels_with_tables"].as_u64().unwrap() < 4);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("warning") && stderr.contains("--keys 20000"), "{stderr}");
    let text = siftdb()
        .args(["bench", "--keys", "1000", "--value-bytes", "0", "--lookups", "1000", "--workloads", "absent"])
        .args(["--policies", "none"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains("warning: none: the tree has 3 level(s)"));
}

#[test]
fn the_scan_check_is_a_workload_of_its_own() {
    let out = siftdb()
        .args([
            "bench",
            "--keys",
            "3000",
            "--lookups",
            "100",
            "--workloads",
            "scan",
            "--policies",
            "none,xor8",
            "--wide",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    // 20 ranges of 500 keys each (the last may be short), none mismatched
    // (in full with --wide; the default says "ok, N entries").
    let scan_lines: Vec<&str> = text.lines().filter(|l| l.contains("20 ranges,")).collect();
    assert_eq!(scan_lines.len(), 2, "{text}");
    assert!(scan_lines.iter().all(|l| l.ends_with(" 0 mismatches")), "{text}");

    let json = |workloads: &str| -> serde_json::Value {
        let out = siftdb()
            .args(["bench", "--keys", "3000", "--lookups", "100", "--policies", "none", "--json"])
            .args(["--workloads", workloads])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let only_scan = json("scan");
    let p = &only_scan["policies"][0];
    assert_eq!(p["workloads"], serde_json::json!([]));
    assert_eq!((p["scan"]["ranges"].as_u64(), p["scan"]["mismatches"].as_u64()), (Some(20), Some(0)));
    let entries = p["scan"]["entries"].as_u64().unwrap();
    assert!((9000..=10_000).contains(&entries), "{entries}");
    // Not selected: not run.
    assert!(json("uniform")["policies"][0]["scan"].is_null());
}

#[test]
fn an_existing_database_dir_is_refused_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let dbs = tmp.path().join("dbs");
    let bench = |extra: &[&str]| {
        siftdb()
            .args(["bench", "--keys", "1000", "--lookups", "100", "--workloads", "uniform", "--json"])
            .args(["--policies", "none,xor8", "--dir"])
            .arg(&dbs)
            .args(extra)
            .output()
            .unwrap()
    };
    assert_eq!(bench(&[]).status.code(), Some(0));
    assert!(dbs.join("xor8").join("CURRENT").exists(), "--dir keeps the databases");
    // Run again into the same directory: refused, and nothing touched.
    let marker = dbs.join("none").join("MARKER");
    std::fs::write(&marker, b"mine").unwrap();
    let out = bench(&[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("not empty") && err.contains("--force"), "{err}");
    assert!(marker.exists());
    // --force (or --overwrite) deletes and rebuilds.
    for flag in ["--force", "--overwrite"] {
        let out = bench(&[flag]);
        assert_eq!(out.status.code(), Some(0), "{flag}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(!marker.exists());
    }
}

#[test]
fn bad_arguments_exit_2_with_one_line() {
    for args in [
        vec!["bench", "--policies", "bogus"],
        vec!["bench", "--workloads", "sideways"],
        vec!["bench", "--keys", "5"],
        vec!["bench", "--hit-ratio", "2"],
    ] {
        let out = siftdb().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn filter_bench_reports_every_structure_near_its_theory() {
    let out = siftdb()
        .args(["bench", "filters", "--keys", "50000", "--probes", "200000", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let filters = report["filters"].as_array().unwrap();
    let names: Vec<&str> = filters.iter().map(|f| f["name"].as_str().unwrap()).collect();
    // Every table filter kind (a new kind fails here until the bench times
    // it), and the structures that are not table kinds.
    let kinds: Vec<String> = siftdb::FilterKind::ALL.iter().map(ToString::to_string).collect();
    for want in kinds.iter().map(String::as_str).chain(["counting-bloom:10", "cuckoo:12"]) {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    for f in filters {
        let (fpr, theory) = (f["fpr"].as_f64().unwrap(), f["theoretical_fpr"].as_f64().unwrap());
        // 200k probes: loose bounds that still catch a broken filter.
        assert!(fpr <= theory * 1.5 + 1e-4, "{}: {fpr} vs {theory}", f["name"]);
        assert!(f["bits_per_key"].as_f64().unwrap() > 0.0);
    }
    assert!(report["errors"].as_array().unwrap().is_empty());
    assert_eq!(report["ribbon_simd"], siftdb::filter::Ribbon::simd());
}

/// An unwritable `--csv` or `--svg` fails before the run: no report, only
/// the error (as JSON on stdout, since `--json` asked for it).
#[test]
fn an_unwritable_output_path_fails_before_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    for flag in ["--csv", "--svg"] {
        let out = siftdb()
            .args(["bench", "--keys", "1000", "--lookups", "100", "--policies", "none", "--json", flag])
            .arg(tmp.path().join("missing-dir").join("out"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag}: {out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            v["policies"].is_null() && v["error"].as_str().unwrap().contains("missing-dir"),
            "{flag}: {v}"
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("missing-dir"), "{flag}");
    }
}

/// The report with every time-derived figure removed: what must repeat.
fn counts_only(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            map.retain(|k, _| {
                !(k.contains("second")
                    || k.contains("latency")
                    || k.contains("load_average")
                    || k == "times_unreliable"
                    || k == "p99")
            });
            map.values_mut().for_each(counts_only);
        }
        serde_json::Value::Array(items) => {
            // A busy machine's load-average warning is about times too.
            items.retain(|i| !i.as_str().is_some_and(|s| s.contains("load average")));
            items.iter_mut().for_each(counts_only);
        }
        _ => {}
    }
}

/// Issue 30 step 1: two runs with one seed build the same trees and count
/// the same blocks, probes and false positives; only times may differ.
/// Before the loader compacted in its own thread, background compaction
/// left 0-3 level-0 tables and `none` read 2.149 or 3.147 blocks per
/// absent lookup from one run to the next. The two runs see different
/// machine loads on purpose: a busy machine marks its times unreliable,
/// which is about times, not counts (CI on a loaded machine once failed
/// here because one run saw a load above the cores and the other didn't).
#[test]
fn one_seed_gives_the_same_counts_on_every_run() {
    let run = |load: &str| {
        let out = siftdb()
            .env("SIFTDB_BENCH_LOAD_AVERAGE", load)
            .args(["bench", "--keys", "20000", "--lookups", "3000", "--seed", "7", "--json"])
            .args(["--policies", "none;fuse8;monkey:10", "--workloads", "absent,uniform"])
            .output()
            .unwrap();
        assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
        let mut report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        counts_only(&mut report);
        report
    };
    let (first, second) = (run("0.0"), run("64.0"));
    assert_eq!(first, second);
    // The comparison covered the counts themselves.
    let none = &first["policies"][0]["workloads"][0];
    assert!(none["blocks_per_lookup"].as_f64().unwrap() > 0.5, "{none}");
}

/// Issue 30 step 2: the text report opens with the verdict, and the JSON
/// carries the same lines.
#[test]
fn the_report_opens_with_a_verdict() {
    let args = ["bench", "--keys", "20000", "--lookups", "2000", "--workloads", "absent,uniform"];
    let out = siftdb().args(args).args(["--policies", "none,fuse8,blocked-bloom:10"]).output().unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    // Progress, when stderr is no terminal: a header with a forecast, then a
    // line per finished policy.
    let progress = String::from_utf8_lossy(&out.stderr);
    assert!(
        progress
            .starts_with("siftdb bench: 20000 keys, seed 42: 3 policies x 2 workload(s); expect roughly ")
    );
    for (i, p) in ["none", "fuse8", "blocked-bloom:10"].iter().enumerate() {
        assert!(progress.contains(&format!("[policy {}/3] {p}: built in ", i + 1)), "{progress}");
    }
    // After the run's one-line header, its determinism and machine lines,
    // the verdict comes first.
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let at = lines.iter().position(|l| l.starts_with("Verdict")).unwrap();
    assert!(lines[..at].iter().all(|l| !l.contains('|') && !l.starts_with("policy")), "{text}");
    assert!(lines[at - 1].starts_with("Machine: "), "{text}");
    assert!(lines[at..].iter().position(|l| l.starts_with("  absent: ")).unwrap() <= 2, "{text}");
    // One line per workload (the run has no default policy: every memory
    // competes), and the long form only with --wide.
    let absent = lines.iter().find(|l| l.starts_with("  absent: ")).unwrap();
    assert!(absent.starts_with("  absent: pick fuse8: 0.0"), "{text}");
    assert!(
        text.contains("Verdict, among policies at any memory (the default policy did not run);"),
        "{text}"
    );
    assert!(!text.contains("blocked-bloom:10 saves 9"), "{text}");
    let json =
        siftdb().args(args).args(["--policies", "none,fuse8,blocked-bloom:10", "--json"]).output().unwrap();
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let verdict = report["verdict"].as_array().unwrap();
    assert_eq!(verdict.len(), 2, "{verdict:?}");
    assert_eq!(verdict[0]["workload"], "absent");
    assert_eq!(verdict[0]["pick"]["policy"], "fuse8");
    assert!(verdict[0]["lines"][0].as_str().unwrap().starts_with(&absent["  ".len()..]), "{verdict:?}");
    let detail = report["verdict_detail"].as_array().unwrap();
    assert!(detail[0].as_str().unwrap().contains("blocked-bloom:10 saves 9"), "{detail:?}");
    // The default report fits 120 columns and names the machine's load;
    // `--wide` adds the latency columns.
    assert!(text.lines().all(|l| l.chars().count() <= 120), "{text}");
    assert!(text.contains("Machine: ") && text.contains(" cores, load average "), "{text}");
    assert!(report["machine"]["cores"].as_u64().unwrap() >= 1);
    // And the instructions Ribbon's queries take on it.
    let simd = siftdb::filter::Ribbon::simd();
    assert!(text.contains(&format!("; Ribbon queries use {simd}.")), "{text}");
    assert_eq!(report["machine"]["ribbon_simd"], simd);
    assert!(!text.contains("p99.9 us"));
    let wide =
        siftdb().args(args).args(["--policies", "none,fuse8,blocked-bloom:10", "--wide"]).output().unwrap();
    let wide = String::from_utf8_lossy(&wide.stdout);
    assert!(wide.contains("p99.9 us"));
    let wide_words = wide.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(wide_words.contains("blocked-bloom:10 saves 9"), "{wide}");
}

/// Issue 38: Ribbon runs in the read-amplification bench beside the other
/// kinds, per policy, with its rate at its bits per key.
#[test]
fn ribbon_policies_run_in_the_bench() {
    let out = siftdb()
        .args(["bench", "--keys", "20000", "--lookups", "20000", "--workloads", "absent", "--json"])
        .args(["--policies", "ribbon:7;bloom:10;fuse8;none"])
        .output()
        .unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = report.to_string();
    for policy in ["ribbon:7", "bloom:10", "fuse8", "none"] {
        assert!(text.contains(&format!("\"{policy}\"")), "{policy} missing");
    }
    let policies = report["policies"].as_array().unwrap();
    let blocks = |policy: &str| {
        policies
            .iter()
            .find(|r| r["policy"] == policy)
            .and_then(|r| r["workloads"][0]["blocks_per_lookup"].as_f64())
            .unwrap_or_else(|| panic!("{policy}: {report}"))
    };
    // About 1% a level at 7 bits/key: far below no filter, above fuse8's 0.39%.
    assert!(blocks("ribbon:7") < blocks("none") / 20.0);
    assert!(blocks("ribbon:7") > blocks("fuse8"));
}

#[test]
fn prefix_workloads_skip_tables_and_say_what_it_saves() {
    let dir = tempfile::tempdir().unwrap();
    let out = siftdb()
        .args(["bench", "--keys", "30000", "--lookups", "3000", "--value-bytes", "20"])
        .args(["--policies", "none;fuse8", "--workloads", "prefix-absent,prefix-present", "--json"])
        .arg("--dir")
        .arg(dir.path().join("dbs"))
        .output()
        .unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let prefix = &report["prefix"];
    assert_eq!(prefix["extractor"], "fixed:8");
    let results = prefix["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    let find = |policy: &str, w: &str| {
        results.iter().find(|r| r["policy"] == policy && r["workload"] == w).cloned().unwrap()
    };
    for r in results {
        for run in ["with_prefix_filter", "without_prefix_filter"] {
            assert_eq!(r[run]["wrong_answers"], 0, "{r}");
            assert_eq!(r[run]["scans"], 3000);
        }
    }
    // Without filters nothing is skipped, and a bound cannot be given.
    let none = find("none", "prefix-absent");
    assert_eq!(none["with_prefix_filter"]["prefix_probes"], 0);
    assert!(none["block_bound"].is_null());
    // With fuse8 absent prefixes open almost no table, and read within the bound.
    let fuse = find("fuse8", "prefix-absent");
    let with = &fuse["with_prefix_filter"];
    let without = &fuse["without_prefix_filter"];
    assert!(without["tables_opened_per_scan"].as_f64().unwrap() >= 1.0, "{without}");
    assert!(with["tables_opened_per_scan"].as_f64().unwrap() < 0.05, "{with}");
    assert!(
        with["data_blocks_per_scan"].as_f64().unwrap() <= fuse["block_bound"].as_f64().unwrap(),
        "{fuse}"
    );
    assert!(with["prefix_skipped"].as_u64().unwrap() > 2900, "{with}");
    // Present prefixes: every scan finds its group, and the group's table is never skipped.
    let present = find("fuse8", "prefix-present");
    let p = &present["with_prefix_filter"];
    assert!(p["tables_opened_per_scan"].as_f64().unwrap() >= 1.0, "{p}");
    // The text form names both workloads.
    let text = siftdb()
        .args(["bench", "--keys", "20000", "--lookups", "500", "--policies", "fuse8"])
        .args(["--workloads", "prefix-absent,prefix-present", "--prefix-extractor", "fixed:8"])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("prefix-absent") && text.contains("prefix-present") && text.contains("speedup"),
        "{text}"
    );
}
