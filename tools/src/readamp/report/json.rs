//! The report as one JSON document.

use super::*;

impl Report {
    /// One JSON document; field names are documented in the README.
    pub fn to_json(&self) -> Value {
        let c = &self.config;
        let policies: Vec<Value> = self
            .results
            .iter()
            .map(|r| {
                let workloads: Vec<Value> = r
                    .workloads
                    .iter()
                    .map(|w| {
                        let f = figures(w);
                        let per_lookup = |x: u64| x as f64 / w.lookups.max(1) as f64;
                        json!({
                            "workload": w.workload.name(),
                            "lookups": w.lookups,
                            "present_lookups": w.present_lookups,
                            "blocks_per_lookup": f.blocks_per_lookup,
                            "blocks_per_lookup_by_level": w.stats.levels.iter().map(|l| per_lookup(l.data_blocks_read)).collect::<Vec<_>>(),
                            "blocks_vs_baseline_by_level": self.level_block_ratios(w),
                            "filter_probes_per_lookup": f.probes_per_lookup,
                            "filter_probes_per_lookup_by_level": w.stats.levels.iter().map(|l| per_lookup(l.filter_probes)).collect::<Vec<_>>(),
                            "table_probes_per_lookup": f.table_probes_per_lookup,
                            "observed_fpr": f.observed_fpr,
                            "observed_fpr_by_level": w.stats.levels.iter().map(|l| l.observed_fpr()).collect::<Vec<_>>(),
                            "theoretical_fpr_sum": probed_fpr_sum(r),
                            "repeat_weight": w.repeat_weight,
                            "repeat_slack": repeat_slack(r, w),
                            "bound_blocks_per_lookup": block_bound(r, w),
                            "expected_blocks_per_lookup": expected_blocks(r, w),
                            "within_bound": within_bound(r, w),
                            "lookups_per_second": f.lookups_per_second,
                            "latency_ns": { "mean": f.mean_ns, "p50": f.p50_ns, "p99": f.p99_ns, "p999": f.p999_ns },
                            "vs_baseline": self.ratios(w).to_json(),
                            "wrong_answers": w.wrong_answers,
                        })
                    })
                    .collect();
                let x = self.tree_ratios(r);
                json!({
                    "policy": r.name,
                    "build_seconds": r.build.as_secs_f64(),
                    "load_seconds": r.load.as_secs_f64(),
                    "load_keys_per_second": load_figures(c, r).keys_per_second,
                    "load_mb_per_second": load_figures(c, r).mb_per_second,
                    "settle_seconds": load_figures(c, r).settle_seconds,
                    "filter_bytes": filter_bytes(r),
                    "filter_bits_per_key": bits_per_key(r),
                    "filter_budget_share": budget_share(c, r),
                    "table_bytes": table_bytes(r),
                    "vs_baseline": {
                        "filter_bytes": x.filter_bytes,
                        "table_bytes": x.table_bytes,
                        "build_seconds": x.build_seconds,
                        "load_keys_per_second": x.load_keys_per_second,
                    },
                    "levels_with_tables": levels_with_tables(r),
                    "fewer_than_4_levels": levels_with_tables(r) < MIN_LEVELS,
                    "levels": r.levels.iter().map(|l| json!({
                        "level": l.level, "tables": l.tables, "keys": l.keys, "bytes": l.bytes,
                        "filter_kinds": l.filter_kinds, "filter_bytes": l.filter_bytes,
                        "filter_bits_per_key": level_bits_per_key(l),
                        "target_fpr": l.target_fpr, "filter_fpr": l.filter_fpr, "built_fpr": l.built_fpr,
                        "filter_fallbacks": l.filter_fallbacks, "tables_over_target": l.tables_over_target,
                    })).collect::<Vec<_>>(),
                    "workloads": workloads,
                    "scan": r.scan.as_ref().map(|s| json!({ "ranges": s.ranges, "entries": s.entries, "mismatches": s.mismatches, "seconds": s.elapsed.as_secs_f64() })),
                })
            })
            .collect();
        json!({
            "config": {
                "keys": c.keys, "lookups": c.lookups, "value_bytes": c.value_bytes,
                "seed": c.seed, "threads": c.threads, "hit_ratio": c.hit_ratio,
                "filter_memory_bytes": c.filter_memory_bytes,
            },
            "machine": {
                "cores": self.machine.cores,
                "load_average_start": self.machine.load_start,
                "load_average_end": self.machine.load_end,
                "ribbon_simd": self.machine.ribbon_simd,
                "times_unreliable": self.machine.overloaded().is_some(),
            },
            "policies": policies,
            "verdict": self.verdict().iter().map(Verdict::to_json).collect::<Vec<_>>(),
            "verdict_detail": self.verdict_detail(),
            "warnings": self.warnings(),
        })
    }
}
