//! The report as CSV: one row per policy and workload, and per level.

use super::*;

/// The CSV header. `theoretical_fpr` is Σ probed filter FPR on `all` rows
/// and the level's filter FPR on level rows; `target_fpr` is on level rows
/// only; the run-wide columns (bound, latency, throughput, build, ratios
/// other than `blocks_vs_none`) are on `all` rows only.
pub const CSV_COLUMNS: [&str; 40] = [
    "policy",
    "workload",
    "level",
    "lookups",
    "present_lookups",
    "blocks_per_lookup",
    "filter_probes_per_lookup",
    "table_probes_per_lookup",
    "observed_fpr",
    "theoretical_fpr",
    "target_fpr",
    "bound_blocks_per_lookup",
    "within_bound",
    "lookups_per_second",
    "mean_ns",
    "p50_ns",
    "p99_ns",
    "p999_ns",
    "tables",
    "keys",
    "table_bytes",
    "filter_bytes",
    "filter_bits_per_key",
    "build_seconds",
    "load_keys_per_second",
    "load_mb_per_second",
    "settle_seconds",
    "blocks_vs_none",
    "table_probes_vs_none",
    "observed_fpr_vs_none",
    "lookups_per_second_vs_none",
    "mean_vs_none",
    "p50_vs_none",
    "p99_vs_none",
    "p999_vs_none",
    "filter_bytes_vs_none",
    "table_bytes_vs_none",
    "build_seconds_vs_none",
    "load_keys_per_second_vs_none",
    "wrong_answers",
];

impl Report {
    /// Long-format CSV: for each (policy, workload) one row with `level` =
    /// `all` (whole-tree figures), then one row per level holding tables
    /// (per-level figures; whole-run columns left empty). The schema is in
    /// the README.
    pub fn to_csv(&self) -> String {
        let mut s = CSV_COLUMNS.join(",");
        s.push('\n');
        let opt = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v}"));
        for r in &self.results {
            let t = self.tree_ratios(r);
            let load = load_figures(&self.config, r);
            for w in &r.workloads {
                let f = figures(w);
                let x = self.ratios(w);
                let n = w.lookups.max(1) as f64;
                let policy = r.name.replace(',', ";");
                let all = [
                    policy.clone(),
                    w.workload.name().into(),
                    "all".into(),
                    w.lookups.to_string(),
                    w.present_lookups.to_string(),
                    f.blocks_per_lookup.to_string(),
                    f.probes_per_lookup.to_string(),
                    f.table_probes_per_lookup.to_string(),
                    opt(f.observed_fpr),
                    probed_fpr_sum(r).to_string(),
                    String::new(),
                    block_bound(r, w).to_string(),
                    within_bound(r, w).to_string(),
                    f.lookups_per_second.to_string(),
                    f.mean_ns.to_string(),
                    f.p50_ns.to_string(),
                    f.p99_ns.to_string(),
                    f.p999_ns.to_string(),
                    r.levels.iter().map(|l| l.tables).sum::<u64>().to_string(),
                    r.levels.iter().map(|l| l.keys).sum::<u64>().to_string(),
                    table_bytes(r).to_string(),
                    filter_bytes(r).to_string(),
                    bits_per_key(r).to_string(),
                    r.build.as_secs_f64().to_string(),
                    load.keys_per_second.to_string(),
                    load.mb_per_second.to_string(),
                    load.settle_seconds.to_string(),
                    opt(x.blocks_per_lookup),
                    opt(x.table_probes_per_lookup),
                    opt(x.observed_fpr),
                    opt(x.lookups_per_second),
                    opt(x.mean),
                    opt(x.p50),
                    opt(x.p99),
                    opt(x.p999),
                    opt(t.filter_bytes),
                    opt(t.table_bytes),
                    opt(t.build_seconds),
                    opt(t.load_keys_per_second),
                    w.wrong_answers.to_string(),
                ];
                s.push_str(&all.join(","));
                s.push('\n');
                let level_ratios = self.level_block_ratios(w);
                for ((shape, l), blocks_vs) in r.levels.iter().zip(&w.stats.levels).zip(level_ratios) {
                    if shape.tables == 0 {
                        continue;
                    }
                    let mut row = vec![String::new(); CSV_COLUMNS.len()];
                    let mut set = |name: &str, v: String| {
                        if let Some(i) = CSV_COLUMNS.iter().position(|c| *c == name) {
                            row[i] = v;
                        }
                    };
                    set("policy", policy.clone());
                    set("workload", w.workload.name().into());
                    set("level", shape.level.to_string());
                    set("lookups", w.lookups.to_string());
                    set("present_lookups", w.present_lookups.to_string());
                    set("blocks_per_lookup", (l.data_blocks_read as f64 / n).to_string());
                    set("filter_probes_per_lookup", (l.filter_probes as f64 / n).to_string());
                    set(
                        "table_probes_per_lookup",
                        ((l.filter_probes + l.probes_without_filter) as f64 / n).to_string(),
                    );
                    set("observed_fpr", opt(l.observed_fpr()));
                    set("theoretical_fpr", shape.filter_fpr.to_string());
                    set("target_fpr", shape.target_fpr.to_string());
                    set("tables", shape.tables.to_string());
                    set("keys", shape.keys.to_string());
                    set("table_bytes", shape.bytes.to_string());
                    set("filter_bytes", shape.filter_bytes.to_string());
                    set("filter_bits_per_key", level_bits_per_key(shape).to_string());
                    set("blocks_vs_none", opt(blocks_vs));
                    s.push_str(&row.join(","));
                    s.push('\n');
                }
            }
        }
        s
    }
}
