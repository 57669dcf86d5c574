//! `siftdb bench engine` end to end on a small key set, and its driver
//! (the library's `workloads::round`) against engines that misbehave.

use std::path::Path;
use std::process::Command;

use siftdb_cli::engine::{Engine, Shape, Siftdb, Written};
use siftdb_cli::keys::KeyFormat;
use siftdb_cli::workloads::{Config, Workload, round};

fn siftdb() -> Command {
    Command::new(env!("CARGO_BIN_EXE_siftdb"))
}

#[test]
fn every_workload_reports_rates_latencies_and_write_amplification() {
    let dir = tempfile::tempdir().unwrap();
    let out = siftdb()
        .args(["bench", "engine", "--keys", "20000", "--ops", "5000", "--rounds", "2", "--threads", "2"])
        .args(["--value-bytes", "40", "--policy", "blocked-bloom:10", "--memtable-mib", "1"])
        .args(["--table-mib", "2", "--level1-mib", "4", "--json", "--dir"])
        .arg(dir.path().join("stores"))
        .output()
        .unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["keys"], 20000);
    assert_eq!(report["filter_policy"], "blocked-bloom:10");
    assert_eq!(report["memtable_bytes"], 1 << 20);
    assert_eq!(report["table_target_bytes"], 2 << 20);
    assert_eq!(report["level1_bytes"], 4 << 20);
    assert_eq!(report["sync"], false);
    let names: Vec<&str> =
        report["workloads"].as_array().unwrap().iter().map(|w| w["workload"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["fillseq", "fillrandom", "readrandom", "readmissing", "seekrandom", "overwrite", "readwhilewriting"]
    );
    for w in report["workloads"].as_array().unwrap() {
        assert_eq!(w["rounds"], 2, "{w}");
        let (lo, mid, hi) = (
            w["min_ops_per_sec"].as_f64().unwrap(),
            w["ops_per_sec"].as_f64().unwrap(),
            w["max_ops_per_sec"].as_f64().unwrap(),
        );
        assert!(0.0 < lo && lo <= mid && mid <= hi, "{w}");
        let l = &w["latency_us"];
        let (p50, p99, p999) =
            (l["p50"].as_f64().unwrap(), l["p99"].as_f64().unwrap(), l["p99_9"].as_f64().unwrap());
        assert!(0.0 < p50 && p50 <= p99 && p99 <= p999 && p999 <= l["max"].as_f64().unwrap(), "{w}");
        let writes = ["fillseq", "fillrandom", "overwrite"].contains(&w["workload"].as_str().unwrap());
        // A write is flushed once and rewritten by compaction at least once
        // on its way down a settled tree (fillseq's tables may move whole).
        assert_eq!(w["write_amplification"].is_f64(), writes, "{w}");
        if writes {
            let tables = w["write_amplification"].as_f64().unwrap();
            assert!(tables >= 1.0, "{w}");
            assert!(w["settle_seconds"].is_f64(), "{w}");
            // write(2) counts the WAL (one copy of every user byte, and
            // more) and the manifest besides the tables (Linux only).
            if cfg!(target_os = "linux") {
                let process = w["process_write_amplification"].as_f64().unwrap();
                assert!(process >= tables + 1.0, "{w}");
                // Before the full settle, no more was written than after it.
                let idle = &w["at_idle"];
                assert!(idle["write_amplification"].as_f64().unwrap() <= tables, "{w}");
                assert!(idle["process_write_amplification"].as_f64().unwrap() <= process, "{w}");
            }
        } else {
            assert!(w["process_write_amplification"].is_null(), "{w}");
        }
        let background = ["readwhilewriting", "scanhot"].contains(&w["workload"].as_str().unwrap());
        assert_eq!(w["background_writes_per_sec"].is_f64(), background, "{w}");
    }
    for r in report["rounds"].as_array().unwrap() {
        // Reads began on a settled tree: nothing left in level 0.
        assert_eq!(r["shape"]["l0_tables"], 0, "{r}");
        assert!(r["shape"]["tables"].as_u64().unwrap() > 0, "{r}");
        // 20,000 keys of 16 bytes and values of 40: more on disk than that,
        // a filter of some bits per key, and a heap this small store's
        // memtables and indexes keep well under 64 MiB.
        let shape = &r["shape"];
        assert!(shape["disk_bytes"].as_u64().unwrap() > 20_000 * 56, "{r}");
        let filter = shape["filter_bytes"].as_u64().unwrap();
        assert!((20_000 / 8..20_000 * 4).contains(&filter), "{r}");
        assert!(shape["heap_bytes"].as_u64().unwrap() < 64 << 20, "{r}");
        // A small fill waits on nothing for long, but the time is counted.
        assert!((0.0..60.0).contains(&shape["write_stall_seconds"].as_f64().unwrap()), "{r}");
        let ops = |name: &str| {
            r["phases"].as_array().unwrap().iter().find(|p| p["workload"] == name).unwrap()["ops"]
                .as_u64()
                .unwrap()
        };
        assert_eq!(ops("fillrandom"), 20000);
        // 5,000 operations shared by 2 threads.
        assert_eq!(ops("readmissing"), 5000);
        assert_eq!(ops("overwrite"), 5000);
    }
    // Each round removed what it wrote.
    assert_eq!(std::fs::read_dir(dir.path().join("stores")).unwrap().count(), 0);
}

#[test]
fn the_text_report_names_the_shape_and_every_column() {
    let out = siftdb()
        .args(["bench", "engine", "--keys", "5000", "--ops", "1000", "--rounds", "1"])
        .args(["--workloads", "readmissing,fillrandom"])
        .output()
        .unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("round 1: reads began on"), "{text}");
    assert!(text.contains("in level 0"), "{text}");
    assert!(text.contains("MiB, disk ") && text.contains("MiB, heap "), "{text}");
    for column in ["op/s", "range", "spread", "p50 us", "p99 us", "p99.9 us", "write amp", "settle s"] {
        assert!(text.contains(column), "{column} missing: {text}");
    }
    // Run in the fixed order, each once.
    let fill = text.find("\nfillrandom").unwrap();
    let missing = text.find("\nreadmissing").unwrap();
    assert!(fill < missing, "{text}");
    assert!(!text.contains("\nreadrandom"), "{text}");
}

/// Issue 68: under FIFO nothing is rewritten: the fill writes its
/// flushes alone (write amplification under 1 with compressible values),
/// every table stays on level 0, and reads still find every key.
#[test]
fn fifo_writes_each_byte_once_and_keeps_every_table_on_level_0() {
    let out = siftdb()
        .current_dir(env!("CARGO_TARGET_TMPDIR"))
        .args(["bench", "engine", "--keys", "20000", "--rounds", "1", "--workloads", "fillrandom,readrandom"])
        .args(["--memtable-mib", "1", "--compaction", "fifo", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["compaction"], "fifo");
    let round = &report["rounds"][0];
    let fill = &round["phases"][0];
    assert_eq!(fill["workload"], "fillrandom", "{fill}");
    let wa = fill["write_amplification"].as_f64().unwrap();
    assert!(wa > 0.0 && wa < 1.0, "{fill}");
    let shape = &round["shape"];
    assert_eq!(shape["tables"], shape["l0_tables"], "{shape}");
    assert!(shape["tables"].as_u64().unwrap() > 1, "{shape}");
}

/// Issue 61: half the keys deleted in ranges and settled give the disk
/// back, and the deleted keys are gone.
#[test]
fn deleterange_shrinks_the_disk_and_finds_no_deleted_key() {
    let out = siftdb()
        .current_dir(env!("CARGO_TARGET_TMPDIR"))
        .args(["bench", "engine", "--keys", "20000", "--rounds", "1", "--workloads", "deleterange"])
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let phase = &report["rounds"][0]["phases"][0];
    assert_eq!(phase["workload"], "deleterange", "{phase}");
    // Every other run of 1,000 keys: 10 range deletes of 10,000 keys.
    assert_eq!(phase["ops"], 10, "{phase}");
    let d = &phase["range_deletes"];
    assert_eq!(d["keys_deleted"], 10_000, "{d}");
    let (before, after) = (d["disk_bytes_before"].as_u64().unwrap(), d["disk_bytes_after"].as_u64().unwrap());
    assert!(0 < after && after < before, "{d}");
    // The gets checked every answer (a deleted key found fails the run);
    // they all ran.
    assert_eq!(d["deleted_gets"]["ops"], 20_000, "{d}");
    assert_eq!(d["absent_gets"]["ops"], 20_000, "{d}");
    let summary = &report["workloads"][0]["range_deletes"];
    assert!(summary["disk_ratio"]["median"].as_f64().unwrap() < 1.0, "{summary}");
    assert!(summary["deleted_gets_per_sec"]["median"].as_f64().unwrap() > 0.0, "{summary}");
}

/// An engine that still finds the keys a range delete covered fails the round.
#[test]
fn a_deleted_key_found_stops_the_benchmark() {
    struct Undeleting(Siftdb);
    impl Engine for Undeleting {
        fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
            self.0.put(key, value)
        }
        fn put_many(&self, pairs: &[([u8; 16], Vec<u8>)]) -> Result<(), String> {
            self.0.put_many(pairs)
        }
        fn get(&self, key: &[u8]) -> Result<Option<usize>, String> {
            self.0.get(key)
        }
        fn seek(&self, key: &[u8], n: usize) -> Result<usize, String> {
            self.0.seek(key, n)
        }
        // Acknowledged, never done.
        fn delete_range(&self, _: &[u8], _: &[u8]) -> Result<(), String> {
            Ok(())
        }
        fn settle(&self) -> Result<(), String> {
            self.0.settle()
        }
        fn shape(&self) -> Shape {
            self.0.shape()
        }
        fn written(&self) -> Option<Written> {
            self.0.written()
        }
        fn close(self) -> Result<(), String> {
            self.0.close()
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let open = |p: &Path| Siftdb::open(p, &siftdb::Options::default()).map(Undeleting);
    let err = round(&config(vec![Workload::DeleteRange]), dir.path(), &open).unwrap_err();
    assert!(err.contains("is deleted by a range delete, but the engine returned"), "{err}");
}

#[test]
fn bad_arguments_and_a_used_directory_are_refused() {
    for args in [
        &["bench", "engine", "--workloads", "readsome"][..],
        &["bench", "engine", "--workloads", ","],
        &["bench", "engine", "--rounds", "0"],
        &["bench", "engine", "--memtable-mib", "0"],
        &["bench", "engine", "--table-mib", "5000"],
        &["bench", "engine", "--policy", "bloom:x"],
        &["bench", "engine", "--compaction", "fifo:max_bytes=0"],
        &["bench", "engine", "--compaction", "universal"],
        &["bench", "engine", "--hot-seconds", "0"],
    ] {
        let out = siftdb().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("precious"), b"data").unwrap();
    let out = siftdb().args(["bench", "engine", "--keys", "1000", "--dir"]).arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not empty"));
    assert_eq!(std::fs::read(dir.path().join("precious")).unwrap(), b"data");
}

/// siftdb, except that it answers one key wrongly.
struct Lying {
    db: Siftdb,
    missing_found: bool,
}

impl Engine for Lying {
    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        self.db.put(key, value)
    }
    fn put_many(&self, pairs: &[([u8; 16], Vec<u8>)]) -> Result<(), String> {
        self.db.put_many(pairs)
    }
    fn get(&self, key: &[u8]) -> Result<Option<usize>, String> {
        match self.db.get(key)? {
            // A present key reported absent, or an absent one found.
            Some(_) if !self.missing_found => Ok(None),
            None if self.missing_found => Ok(Some(3)),
            got => Ok(got),
        }
    }
    fn seek(&self, key: &[u8], n: usize) -> Result<usize, String> {
        self.db.seek(key, n)
    }
    fn settle(&self) -> Result<(), String> {
        self.db.settle()
    }
    fn shape(&self) -> Shape {
        self.db.shape()
    }
    fn written(&self) -> Option<Written> {
        self.db.written()
    }
    fn close(self) -> Result<(), String> {
        self.db.close()
    }
}

fn config(workloads: Vec<Workload>) -> Config {
    Config {
        keys: 2000,
        value_bytes: 10,
        value_compressibility: 0.5,
        ops: 100,
        threads: 1,
        nexts: 5,
        seed: 1,
        key_format: KeyFormat::default(),
        workloads,
        unsettled: false,
        hot_writes: std::time::Duration::from_millis(100),
        progress: false,
    }
}

#[test]
fn a_wrong_answer_stops_the_benchmark() {
    for (missing_found, workload) in [
        (false, Workload::ReadRandom),
        (true, Workload::ReadMissing),
        (false, Workload::MultiGet32),
        (true, Workload::MultiMissing256),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let open =
            |p: &Path| Siftdb::open(p, &siftdb::Options::default()).map(|db| Lying { db, missing_found });
        let err = round(&config(vec![workload]), dir.path(), &open).unwrap_err();
        assert!(err.starts_with("wrong answer: key "), "{err}");
        // The honest engine passes the same round.
        let dir = tempfile::tempdir().unwrap();
        let r = round(&config(vec![workload]), dir.path(), &|p: &Path| {
            Siftdb::open(p, &siftdb::Options::default())
        })
        .unwrap();
        assert_eq!(r.phases.len(), 1);
        assert_eq!(r.phases[0].ops, 100);
    }
}

/// Issue 69: db_bench's key layout, for figures set beside `RocksDB`'s,
/// runs every workload with answers checked (an absent key that collided
/// with a present one, or a deleted range that missed, would stop it), and
/// the report names it.
#[test]
fn db_bench_keys_pass_every_checked_workload() {
    let cfg = Config {
        key_format: KeyFormat::DbBench,
        ..config(vec![
            Workload::FillSeq,
            Workload::FillRandom,
            Workload::ReadRandom,
            Workload::ReadMissing,
            Workload::SeekRandom,
            Workload::DeleteRange,
        ])
    };
    let dir = tempfile::tempdir().unwrap();
    let r = round(&cfg, dir.path(), &|p: &Path| Siftdb::open(p, &siftdb::Options::default())).unwrap();
    assert_eq!(r.phases.len(), 6);
    let out = siftdb()
        .current_dir(env!("CARGO_TARGET_TMPDIR"))
        .args(["bench", "engine", "--keys", "5000", "--rounds", "1", "--workloads", "fillrandom,readmissing"])
        .args(["--key-format", "dbbench", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["key_format"], "dbbench");
    let out = siftdb().args(["bench", "engine", "--key-format", "binary"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Adding the batched reads moved the later workloads' places in the
/// enum, which seeded their draws: seekrandom, readwhilewriting and
/// deleterange drew other keys than in every earlier run. Each workload
/// keeps the stream it had, and no two share one.
#[test]
fn each_workload_keeps_its_own_stream_of_draws() {
    let before_batches = [
        Workload::FillSeq,
        Workload::FillRandom,
        Workload::ReadRandom,
        Workload::ReadMissing,
        Workload::SeekRandom,
        Workload::Overwrite,
        Workload::ReadWhileWriting,
        Workload::DeleteRange,
    ];
    for (place, w) in before_batches.into_iter().enumerate() {
        assert_eq!(w.stream(), place as u64, "{}", w.name());
    }
    let mut streams: Vec<u64> = Workload::ALL.iter().map(|w| w.stream()).collect();
    streams.sort_unstable();
    streams.dedup();
    assert_eq!(streams.len(), Workload::ALL.len());
}

/// siftdb, with its puts, settles and seek keys counted.
struct Counting {
    db: Siftdb,
    puts: std::sync::atomic::AtomicU64,
    settles: std::sync::atomic::AtomicU64,
    seeks: std::sync::Mutex<Vec<Vec<u8>>>,
}

impl Engine for Counting {
    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        self.puts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.db.put(key, value)
    }
    fn put_many(&self, pairs: &[([u8; 16], Vec<u8>)]) -> Result<(), String> {
        self.puts.fetch_add(pairs.len() as u64, std::sync::atomic::Ordering::Relaxed);
        self.db.put_many(pairs)
    }
    fn get(&self, key: &[u8]) -> Result<Option<usize>, String> {
        self.db.get(key)
    }
    fn seek(&self, key: &[u8], n: usize) -> Result<usize, String> {
        self.seeks.lock().unwrap().push(key.to_vec());
        self.db.seek(key, n)
    }
    fn settle(&self) -> Result<(), String> {
        self.settles.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.db.settle()
    }
    fn shape(&self) -> Shape {
        self.db.shape()
    }
    fn written(&self) -> Option<Written> {
        self.db.written()
    }
    fn close(self) -> Result<(), String> {
        use std::sync::atomic::Ordering::Relaxed;
        // What the round did, checked where the engine ends.
        let seeks = self.seeks.lock().unwrap();
        let hot = seeks.iter().filter(|k| k.as_slice() == KeyFormat::default().key(1, 2000, 0)).count();
        let report =
            format!("{} {} {} {hot}", self.puts.load(Relaxed), self.settles.load(Relaxed), seeks.len());
        drop(seeks);
        self.db.close()?;
        Err(report)
    }
}

/// Issue 71: `--unsettled` reads the store as the load left it (no settle
/// at all), `seekmix` makes every 20th operation a put, and `scanhot`
/// overwrites then scans zipfian keys, the hottest one far more often than
/// a uniform draw would.
#[test]
fn unsettled_rounds_never_settle_and_the_hot_spot_is_hot() {
    let cfg = Config {
        unsettled: true,
        ops: 2000,
        ..config(vec![Workload::FillRandom, Workload::SeekMix, Workload::ScanHot])
    };
    let dir = tempfile::tempdir().unwrap();
    let open = |p: &Path| {
        Siftdb::open(p, &siftdb::Options::default()).map(|db| Counting {
            db,
            puts: 0.into(),
            settles: 0.into(),
            seeks: Vec::new().into(),
        })
    };
    // The counting engine reports through close's error, after the phases ran.
    let report = round(&cfg, dir.path(), &open).unwrap_err();
    let n: Vec<u64> = report.split(' ').map(|f| f.parse().unwrap()).collect();
    let (puts, settles, seeks, hot) = (n[0], n[1], n[2], n[3]);
    assert_eq!(settles, 0, "{report}");
    // seekmix: 100 of its 2,000 operations are puts, the rest seeks.
    assert_eq!(seeks, 1900 + 2000, "{report}");
    let hot_writes = puts - 2000 - 100;
    assert!(hot_writes > 0, "{report}");
    // Key 0 is zipf's hottest: ~12% of 2,000 scanhot seeks at 0.99 over
    // 2,000 keys; a uniform draw would give it one in 2,000.
    assert!(hot > 100, "{report}");
    // The same round with its figures: the overwrites are recorded.
    let dir = tempfile::tempdir().unwrap();
    let r = round(&cfg, dir.path(), &|p: &Path| Siftdb::open(p, &siftdb::Options::default())).unwrap();
    let names: Vec<&str> = r.phases.iter().map(|p| p.workload.name()).collect();
    assert_eq!(names, ["fillrandom", "seekmix", "scanhot"]);
    assert!(r.phases[0].settle.is_none());
    let (writes, over) = r.phases[2].background_writes.unwrap();
    assert!(writes > 0 && over >= cfg.hot_writes, "{writes} in {over:?}");
}
