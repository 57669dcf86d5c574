//! The report as human-readable tables.

use super::*;

/// The width the default text report fits.
pub(super) const TEXT_WIDTH: usize = 120;

/// What the lookup table's columns mean, printed under it.
pub(super) const LOOKUP_LEGEND: &str = "  blocks/lookup: data blocks read per lookup; saved: share of no filter's reads saved; \
probes/lookup: tables whose filter or index was consulted;\n  obs fpr: false positives over probes of tables \
lacking the key; vs none: ratio to the no-filter run; bound: the most blocks/lookup the filters' theoretical rates \
allow (+0.1%).\n";

/// What the per-level blocks table's last columns mean.
pub(super) const EXPECTED_LEGEND: &str = "  expected: one block per present key, plus each level's probes of tables lacking the key times the level's built rate (its tables' real rates, by keys): what `all` should be, within sampling error; ratio: all / expected.\n";

/// What the tree table's columns mean.
pub(super) const TREE_LEGEND: &str = "  sum probed fpr: Σ of the theoretical rates of the filters an absent key meets (its expected wasted reads); \
build s: load, flushes and compactions;\n  settle s (--wide): the flushes and compactions alone.\n";

/// What marks a time measured on a machine busier than its cores.
pub(super) const BUSY_MARK: &str = "?";

impl Report {
    /// The legend of [`BUSY_MARK`].
    fn busy_legend(&self) -> String {
        format!(
            "{BUSY_MARK}: unreliable, measured while the load average ({:.2}) exceeded the {} cores.\n",
            self.machine.overloaded().unwrap_or(0.0),
            self.machine.cores
        )
    }

    /// Human-readable tables.
    pub fn to_text(&self, wide: bool) -> String {
        let c = &self.config;
        let mut s = format!(
            "siftdb read-amplification benchmark: {} keys, {}-byte values, {} lookups per workload, {} thread(s), seed {}\n",
            c.keys, c.value_bytes, c.lookups, c.threads, c.seed
        );
        s.push_str(&output::wrap(
            "Every tree is loaded and compacted in one thread, so one seed gives the same trees and the same counts \
             on every run; only times vary.",
            TEXT_WIDTH,
            "",
            "",
        ));
        let m = &self.machine;
        let load = |l: Option<f64>| l.map_or_else(|| "unknown".to_string(), |v| format!("{v:.2}"));
        let _ = writeln!(
            s,
            "Machine: {} cores, load average {} at start and {} at end; Ribbon queries use {}.\n",
            m.cores,
            load(m.load_start),
            load(m.load_end),
            m.ribbon_simd
        );
        let verdicts = self.verdict();
        if let Some(first) = verdicts.first() {
            s.push_str(&output::wrap(
                &format!("Verdict, among policies at {}; within 3 standard errors is a tie:", first.memory()),
                TEXT_WIDTH,
                "",
                "  ",
            ));
            for line in verdicts.iter().flat_map(Verdict::lines) {
                s.push_str(&output::wrap(&line, TEXT_WIDTH, "  ", "    "));
            }
            s.push('\n');
        }
        let detail = if wide { self.verdict_detail() } else { Vec::new() };
        if !detail.is_empty() {
            s.push_str(
                "Every policy (data-block reads saved against no filter, at the memory each spends):\n",
            );
            for line in &detail {
                s.push_str(&output::wrap(line, TEXT_WIDTH, "  ", "    "));
            }
            s.push('\n');
        }
        for w in self.warnings() {
            s.push_str(&output::wrap(&format!("warning: {w}"), TEXT_WIDTH, "", "  "));
            s.push('\n');
        }
        let vs = |x: Option<f64>| {
            x.map_or("-".to_string(), |v| if v < 0.01 { format!("{v:.5}x") } else { format!("{v:.3}x") })
        };
        // On a machine busier than its cores a time is not the code's
        // alone: the cell says so itself, since a table travels without
        // the warning above it.
        let busy = if self.machine.overloaded().is_some() { BUSY_MARK } else { "" };
        let timed = |cell: String| format!("{cell}{busy}");
        let us = |ns: f64| timed(format!("{:.1}", ns / 1000.0));
        let mut rows = Vec::new();
        for r in &self.results {
            for w in &r.workloads {
                let f = figures(w);
                let x = self.ratios(w);
                let saved = self
                    .baseline(w.workload)
                    .and_then(|b| verdict::saved(f.blocks_per_lookup, blocks_read(w), b.blocks_per_lookup))
                    .unwrap_or_else(|| "-".into());
                let bound = format!(
                    "{} {:.4}",
                    if within_bound(r, w) { "ok <=" } else { "EXCEEDED" },
                    block_bound(r, w)
                );
                let obs = f.observed_fpr.map_or("-".into(), |v| format!("{:.3}%", v * 100.0));
                rows.push(if wide {
                    vec![
                        r.name.clone(),
                        w.workload.name().to_string(),
                        format!("{:.4}", f.blocks_per_lookup),
                        vs(x.blocks_per_lookup),
                        saved,
                        format!("{:.2}", f.table_probes_per_lookup),
                        obs,
                        timed(format!("{:.0}", f.lookups_per_second)),
                        timed(vs(x.lookups_per_second)),
                        us(f.mean_ns),
                        timed(vs(x.mean)),
                        us(f.p50_ns as f64),
                        us(f.p99_ns as f64),
                        timed(vs(x.p99)),
                        us(f.p999_ns as f64),
                        bound,
                    ]
                } else {
                    vec![
                        r.name.clone(),
                        w.workload.name().to_string(),
                        format!("{:.4}", f.blocks_per_lookup),
                        saved,
                        format!("{:.2}", f.table_probes_per_lookup),
                        obs,
                        // One mark per row keeps the table in 120 columns;
                        // --wide marks every time.
                        format!("{:.0}", f.lookups_per_second),
                        timed(vs(x.lookups_per_second)),
                        format!("{:.1}", f.p99_ns as f64 / 1000.0),
                        bound,
                    ]
                });
            }
        }
        let header: &[&str] = if wide {
            &[
                "policy",
                "workload",
                "blocks/lookup",
                "vs none",
                "saved",
                "probes/lookup",
                "obs fpr",
                "lookups/s",
                "vs none",
                "mean us",
                "vs none",
                "p50 us",
                "p99 us",
                "vs none",
                "p99.9 us",
                "bound (blocks/lookup)",
            ]
        } else {
            &[
                "policy",
                "workload",
                "blocks/lookup",
                "saved",
                "probes/lookup",
                "obs fpr",
                "lookups/s",
                "vs none",
                "p99 us",
                "bound",
            ]
        };
        s.push_str(&output::table(header, &rows));
        s.push_str(&output::wrap(LOOKUP_LEGEND, TEXT_WIDTH, "  ", "  "));
        if !busy.is_empty() {
            s.push_str(&output::wrap(&self.busy_legend(), TEXT_WIDTH, "  ", "  "));
        }
        if !wide {
            s.push_str(
                "  (--wide adds mean, p50 and p99.9 latencies, every ratio to none, and load throughput)\n",
            );
        }
        s.push_str("\nFilter memory, build and tree (after load and compaction):\n");
        if let Some(budget) = c.filter_memory_bytes {
            let _ = writeln!(
                s,
                "  filter budget {budget} bytes ({:.2} bits/key), planned under by the budgeted (monkey) policies; \
                 vs budget: each policy's filter bytes over it",
                budget as f64 * 8.0 / c.keys.max(1) as f64
            );
        }
        let rows: Vec<Vec<String>> = self
            .results
            .iter()
            .map(|r| {
                let x = self.tree_ratios(r);
                let mut row = vec![
                    r.name.clone(),
                    format!("{:.2}", filter_bytes(r) as f64 / (1 << 20) as f64),
                    format!("{:.2}", bits_per_key(r)),
                ];
                row.extend(budget_share(c, r).map(|x| format!("{:.1}%", x * 100.0)));
                row.extend([
                    format!("{:.3}%", probed_fpr_sum(r) * 100.0),
                    timed(format!("{:.1}", r.build.as_secs_f64())),
                    timed(vs(x.build_seconds)),
                ]);
                if wide {
                    row.extend([
                        vs(x.table_bytes),
                        timed(format!("{:.0}", load_figures(c, r).keys_per_second)),
                        timed(format!("{:.1}", load_figures(c, r).mb_per_second)),
                        timed(format!("{:.1}", load_figures(c, r).settle_seconds)),
                    ]);
                }
                row.push(
                    r.levels
                        .iter()
                        .filter(|l| l.tables > 0)
                        .map(|l| format!("L{}:{}", l.level, l.tables))
                        .collect::<Vec<_>>()
                        .join(" "),
                );
                row.push(if wide { scan_cell(r.scan.as_ref()) } else { scan_brief(r.scan.as_ref()) });
                row
            })
            .collect();
        let mut header = vec!["policy", "filter MiB", "bits/key"];
        if c.filter_memory_bytes.is_some() {
            header.push("vs budget");
        }
        header.extend(["sum probed fpr", "build s", "vs none"]);
        if wide {
            header.extend(["bytes vs none", "load keys/s", "load MB/s", "settle s"]);
        }
        header.extend(["tables per level", "scan check"]);
        s.push_str(&output::table(&header, &rows));
        s.push_str(&output::wrap(TREE_LEGEND, TEXT_WIDTH, "  ", "  "));
        if !busy.is_empty() {
            s.push_str(&output::wrap(&self.busy_legend(), TEXT_WIDTH, "  ", "  "));
        }
        let levels: Vec<usize> = {
            let mut l: Vec<usize> = self
                .results
                .iter()
                .flat_map(|r| r.levels.iter().filter(|l| l.tables > 0).map(|l| l.level))
                .collect();
            l.sort_unstable();
            l.dedup();
            l
        };
        s.push_str(
            "\nData blocks read per lookup, by level, and against what the probes made should read:\n",
        );
        let mut rows = Vec::new();
        for r in &self.results {
            for w in &r.workloads {
                let mut row = vec![r.name.clone(), w.workload.name().to_string()];
                for &level in &levels {
                    let blocks =
                        w.stats.levels.iter().find(|l| l.level == level).map_or(0, |l| l.data_blocks_read);
                    row.push(format!("{:.4}", blocks as f64 / w.lookups.max(1) as f64));
                }
                let measured = figures(w).blocks_per_lookup;
                let expected = expected_blocks(r, w);
                row.push(format!("{measured:.4}"));
                row.push(expected.map_or("-".into(), |e| format!("{e:.4}")));
                row.push(
                    expected.filter(|&e| e > 0.0).map_or("-".into(), |e| format!("{:.3}", measured / e)),
                );
                rows.push(row);
            }
        }
        let header: Vec<String> = ["policy".to_string(), "workload".to_string()]
            .into_iter()
            .chain(levels.iter().map(|l| format!("L{l}")))
            .chain(["all", "expected", "ratio"].map(String::from))
            .collect();
        s.push_str(&output::table(&header.iter().map(String::as_str).collect::<Vec<_>>(), &rows));
        s.push_str(&output::wrap(EXPECTED_LEGEND, TEXT_WIDTH, "  ", "  "));
        s.push_str("\nPer level, absent keys (blocks read per lookup; observed vs targeted FPR):\n");
        let mut rows = Vec::new();
        for r in &self.results {
            let Some(w) = r.workloads.iter().find(|w| w.workload == Workload::Absent) else { continue };
            for (shape, l) in r.levels.iter().zip(&w.stats.levels).filter(|(s, _)| s.tables > 0) {
                let mut filter = kinds_summary(&shape.filter_kinds);
                let mut notes = Vec::new();
                if shape.filter_fallbacks > 0 {
                    notes.push(format!("{} fell back", shape.filter_fallbacks));
                }
                if shape.tables_over_target > 0 {
                    notes.push(format!("{} over target", shape.tables_over_target));
                }
                if !notes.is_empty() {
                    filter = format!("{filter} ({})", notes.join(", "));
                }
                rows.push(vec![
                    r.name.clone(),
                    format!("L{}", shape.level),
                    shape.keys.to_string(),
                    filter,
                    format!("{:.2}", level_bits_per_key(shape)),
                    format!("{:.4}%", shape.target_fpr * 100.0),
                    format!("{:.4}%", shape.filter_fpr * 100.0),
                    l.observed_fpr().map_or("-".into(), |v| format!("{:.4}%", v * 100.0)),
                    format!("{:.4}", l.data_blocks_read as f64 / w.lookups.max(1) as f64),
                ]);
            }
        }
        s.push_str(&output::table(
            &[
                "policy",
                "level",
                "keys",
                "filter",
                "bits/key",
                "target fpr",
                "filter fpr",
                "observed fpr",
                "blocks/lookup",
            ],
            &rows,
        ));
        s
    }
}
