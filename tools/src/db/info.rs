//! `siftdb db info`: the tree level by level, its filters, and the state of
//! the manifest and the write-ahead logs, read without opening the database.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Value, json};
use siftdb::manifest::NUM_LEVELS;
use siftdb::policy::{LevelModel, TreeShape};
use siftdb::recovery::RecoveryScan;
use siftdb::table::{FilterStatus, Table};

use super::inspect;
use super::report::{end_name, log_json, lost_text, lost_writes_json, recovery_json, torn_bytes};

mod budget;
mod observe;
mod ranges;
mod text;
use crate::Outcome;
use crate::bytes_arg::show;
use crate::output;
use crate::sst::info::status_name;
use observe::{Observed, observe, tables_extractor};
use siftdb::FilterPolicy;

/// Arguments of `db info`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The database directory.
    dir: PathBuf,
    /// The filter policy to compute each level's target rate under, in the
    /// library's grammar (`fuse8`, `per-level:blocked-bloom:10,fuse8`,
    /// `monkey:10+skip-last`, …); default: the policy stored in the database.
    #[arg(long, value_parser = crate::policy_arg::parse)]
    policy: Option<FilterPolicy>,
    /// Show the plan a filter memory budget of BYTES would give this tree
    /// (per level: kind, bits/key, target rate, filter bytes), writing nothing.
    #[arg(long, value_name = "BYTES", value_parser = crate::numbers::count(0, u64::MAX - 1))]
    budget: Option<u64>,
    /// List every table, not only the per-level totals (text output; JSON always lists them).
    #[arg(long)]
    tables: bool,
    /// Print keys as hex.
    #[arg(long)]
    hex: bool,
    /// Absent-key lookups run through the engine (opened read-only) to
    /// measure each level's observed false-positive rate (0 to 10^8; 0 skips them).
    #[arg(long, default_value_t = 10_000, value_parser = crate::numbers::count(0, crate::numbers::MAX_PROBES))]
    probes: u64,
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
}

#[expect(clippy::too_many_lines, reason = "one JSON document assembled in order")]
fn document(i: &RecoveryScan, a: &Args) -> Result<Value, String> {
    let stored = i.manifest.state.filter_policy.clone();
    let (policy, policy_source) = match (a.policy.clone(), &stored) {
        (Some(p), _) => (p, "given"),
        (None, Some(text)) => match text.parse::<FilterPolicy>() {
            Ok(p) => (p, "stored"),
            // The library's own error, naming the manifest, as open and
            // `db verify` report it.
            Err(e) => {
                let e =
                    siftdb::Error::corruption_in(&i.manifest.path, 0, format!("stored filter policy: {e}"));
                return Err(e.to_string());
            }
        },
        (None, None) => (FilterPolicy::default(), "default (none stored)"),
    };
    let mut levels: Vec<Vec<Value>> = vec![Vec::new(); NUM_LEVELS];
    let mut level_keys = [0f64; NUM_LEVELS];
    let mut problems: Vec<String> = Vec::new();
    for t in &i.tables {
        let r = &t.record;
        let missing = t.actual_size.is_none();
        // The scan's own open, where it made one: a writer holding the
        // database may have deleted the file since (its mapping still reads).
        let opened =
            if missing { None } else { Some(t.table.clone().map_or_else(|| Table::open_path(&t.path), Ok)) };
        let (distinct, filter_keys, filter) = match &opened {
            Some(Ok(table)) => {
                (table.properties().distinct_keys, table.filter_keys(), Some(table.filter_details()))
            }
            _ => (0, 0, None),
        };
        // What the open table holds on the heap, beyond its mapping.
        let heap = match &opened {
            Some(Ok(table)) => {
                json!({ "filters": table.filter_heap_bytes(), "indexes": table.index_heap_bytes() })
            }
            _ => Value::Null,
        };
        let (prefix_extractor, range_tombstones, compression) = match &opened {
            Some(Ok(table)) => {
                let p = table.properties();
                let codec = p.compression.clone().unwrap_or_else(|| "none".into());
                (p.prefix_extractor.clone(), p.range_tombstones, Some(codec))
            }
            _ => (None, 0, None),
        };
        let dropped_reason = match filter.as_ref().map(|d| &d.status) {
            Some(FilterStatus::Dropped(why)) => Some(why.clone()),
            _ => None,
        };
        let name = format!("table {} (level {})", r.file_number, t.level);
        let open_error = opened.as_ref().and_then(|o| o.as_ref().err()).map(ToString::to_string);
        if missing {
            problems.push(format!("{name} named by the manifest is missing: {}", t.path.display()));
        } else if let Some(e) = &open_error {
            problems.push(format!("{name} cannot be opened: {e}"));
        }
        if let Some(why) = &dropped_reason {
            problems
                .push(format!("{name}: filter dropped as corrupt, so every lookup in it reads data ({why})"));
        }
        // Only a filter the table holds in memory counts toward filter memory.
        let in_memory =
            filter.as_ref().is_some_and(|d| matches!(d.status, FilterStatus::Loaded | FilterStatus::Unknown));
        #[expect(clippy::cast_precision_loss, reason = "key counts for a planning model")]
        if let Some(k) = level_keys.get_mut(t.level) {
            *k += filter_keys as f64;
        }
        let fpr = filter.as_ref().map_or(1.0, |d| d.theoretical_fpr.unwrap_or(1.0));
        if let Some(l) = levels.get_mut(t.level) {
            l.push(json!({
                "number": r.file_number,
                "path": t.path.display().to_string(),
                "size": r.file_size,
                "missing": missing,
                "open_error": open_error,
                "entries": r.entries,
                "distinct_keys": distinct,
                "filter_keys": filter_keys,
                "prefix_extractor": prefix_extractor,
                "range_filter": opened.as_ref().and_then(|o| o.as_ref().ok()).map(crate::sst::range_filter::range_filter_json),
                "range_tombstones": range_tombstones,
                "compression": compression,
                "smallest_key": show(&r.smallest, a.hex),
                "largest_key": show(&r.largest, a.hex),
                "min_seq": r.min_seq,
                "max_seq": r.max_seq,
                "filter_kind": r.filter.to_string(),
                "filter_bytes": r.filter_bytes,
                "filter_memory_bytes": if in_memory { r.filter_bytes } else { 0 },
                "heap_bytes": heap,
                "filter_status": filter.as_ref().map(|d| status_name(&d.status)),
                "dropped_reason": dropped_reason,
                "fallback_reason": filter.as_ref().and_then(|d| d.fallback_reason.clone()),
                "bits_per_key": filter.as_ref().map(|d| d.bits_per_key),
                "theoretical_fpr": fpr,
            }));
        }
    }
    // A WAL the open would refuse (a cut after its sync, damage strict
    // recovery refuses) is a problem too: the database does not open.
    for l in i.logs.iter().filter(|l| l.replayed || l.missing) {
        if let Some(e) = &l.error {
            problems.push(format!("WAL {}: {e}", l.number));
        }
    }
    let report = i.report();
    if let Some(cut) = &report.cut {
        problems.push(format!(
            "a point-in-time open would recover through seq {} and lose {} synced write(s) of WAL {}",
            i.last_seq(),
            lost_text(report.synced_writes_lost),
            cut.number
        ));
    }
    let deepest = levels.iter().rposition(|l| !l.is_empty()).unwrap_or(0);
    // The tree as the engine plans it (`TreeShape::settling`): level 0 as
    // runs of flushes on their way down, the flush level (never Ribbon under
    // Monkey), each deeper level one run in tables of its mean size.
    #[expect(clippy::cast_precision_loss, reason = "table counts for a planning model")]
    let models: Vec<LevelModel> = levels
        .iter()
        .zip(level_keys)
        .take(deepest + 1)
        .enumerate()
        .map(|(n, (tables, keys))| {
            let table_keys = (keys / tables.len().max(1) as f64).max(1.0);
            if n == 0 {
                LevelModel { run_keys: table_keys, runs: tables.len() as f64, table_keys }
            } else {
                LevelModel { run_keys: keys, runs: 1.0, table_keys }
            }
        })
        .collect();
    // As the engine plans: under the stored budget, if any.
    let shape = TreeShape::settling(models).with_filter_memory_bytes(i.manifest.state.filter_memory_bytes);
    let budget_plan = budget::plan(&policy, &shape, a.budget)?;
    let mut expected_fp_reads = 0.0;
    let mut total_filter_memory = 0u64;
    let mut total_filter_bytes = 0u64;
    let mut total_heap = [0u64; 2];
    let stored_budget = i.manifest.state.filter_memory_bytes;
    #[expect(clippy::cast_precision_loss, reason = "a share for display")]
    let of_budget = |bytes: u64| stored_budget.filter(|&b| b > 0).map(|b| bytes as f64 / b as f64);
    let level_docs: Vec<Value> = levels
        .iter()
        .enumerate()
        .take(deepest + 1)
        .map(|(n, tables)| {
            let sum = |f: &str| tables.iter().filter_map(|t| t[f].as_u64()).sum::<u64>();
            let filter_bytes = sum("filter_bytes");
            total_filter_bytes += filter_bytes;
            let fallbacks = tables.iter().filter(|t| !t["fallback_reason"].is_null()).count();
            let filter_memory = sum("filter_memory_bytes");
            total_filter_memory += filter_memory;
            let heap = |f: &str| tables.iter().filter_map(|t| t["heap_bytes"][f].as_u64()).sum::<u64>();
            let heap = [heap("filters"), heap("indexes")];
            total_heap = [total_heap[0] + heap[0], total_heap[1] + heap[1]];
            let keys = sum("distinct_keys");
            let filter_keys = sum("filter_keys");
            let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
            let mut extractors: BTreeMap<String, u64> = BTreeMap::new();
            let mut codecs: BTreeMap<String, u64> = BTreeMap::new();
            for t in tables {
                *codecs.entry(t["compression"].as_str().unwrap_or("?").to_string()).or_default() += 1;
                *kinds.entry(t["filter_kind"].as_str().unwrap_or("?").to_string()).or_default() += 1;
                let e = t["prefix_extractor"].as_str().unwrap_or("none");
                *extractors.entry(e.to_string()).or_default() += 1;
            }
            let fprs: Vec<f64> = tables.iter().filter_map(|t| t["theoretical_fpr"].as_f64()).collect();
            #[expect(clippy::cast_precision_loss, reason = "averages for display")]
            let mean_fpr =
                if fprs.is_empty() { None } else { Some(fprs.iter().sum::<f64>() / fprs.len() as f64) };
            // Level 0 tables overlap, so an absent key probes each one;
            // deeper levels are partitioned, so it probes one.
            expected_fp_reads += if n == 0 { fprs.iter().sum() } else { mean_fpr.unwrap_or(0.0) };
            #[expect(clippy::cast_precision_loss, reason = "a ratio for display")]
            let bpk = if filter_keys == 0 { 0.0 } else { (filter_bytes * 8) as f64 / filter_keys as f64 };
            let plan = policy.for_level(n, &shape);
            let over_target = tables
                .iter()
                .filter(|t| {
                    let kind = t["filter_kind"].as_str().and_then(|k| k.parse::<siftdb::FilterKind>().ok());
                    let keys = t["filter_keys"].as_u64().unwrap_or(0);
                    let planned =
                        kind.map_or(plan.target_fpr, |k| plan.table_target(k, keys, policy.is_budgeted()));
                    let fault = !t["fallback_reason"].is_null() || !t["dropped_reason"].is_null();
                    let built = t["theoretical_fpr"].as_f64().unwrap_or(1.0);
                    siftdb::LevelStats::off_plan(n, policy.is_budgeted(), fault, built, planned)
                })
                .count();
            // The spread of table sizes: a level's small tables each pay a
            // filter's fixed bytes and a probe (`LevelStats::small_tables`,
            // against the options' target, which the directory does not
            // record).
            let mut sizes: Vec<u64> = tables.iter().filter_map(|t| t["size"].as_u64()).collect();
            sizes.sort_unstable();
            let table_bytes = match (sizes.first(), sizes.get(sizes.len() / 2), sizes.last()) {
                (Some(min), Some(median), Some(max)) => json!({ "min": min, "median": median, "max": max }),
                _ => Value::Null,
            };
            json!({
                "level": n,
                "tables": tables.len(),
                "table_bytes": table_bytes,
                "entries": sum("entries"),
                "keys": keys,
                "filter_keys": filter_keys,
                "prefix_extractors": extractors,
                "compression": codecs,
                "bytes": sum("size"),
                "filter_bytes": filter_bytes,
                "budget_share": of_budget(filter_bytes),
                "filter_memory_bytes": filter_memory,
                "heap_bytes": { "filters": heap[0], "indexes": heap[1] },
                "range_tombstones": sum("range_tombstones"),
                "filter_kinds": kinds,
                "filter_fallbacks": fallbacks,
                "tables_over_target": over_target,
                "bits_per_key": bpk,
                "mean_theoretical_fpr": mean_fpr,
                "target_filter_kind": plan.kind.to_string(),
                "target_fpr": plan.target_fpr,
                "table_list": tables,
            })
        })
        .collect();
    let s = &i.manifest.state;
    Ok(json!({
        "path": i.dir.display().to_string(),
        "ok": problems.is_empty(),
        "problems": problems,
        "policy": policy.to_string(),
        "policy_source": policy_source,
        "stored_policy": stored,
        "replaced_policy": i.manifest.state.replaced_policy,
        "filter_memory_budget": i.manifest.state.filter_memory_bytes,
        "budget_plan": budget_plan,
        "compaction": s.compaction,
        "fifo_dropped": {
            "tables": s.fifo_dropped.tables,
            "entries": s.fifo_dropped.entries,
            "bytes": s.fifo_dropped.bytes,
        },
        "manifest": {
            "number": i.manifest.number,
            "path": i.manifest.path.display().to_string(),
            "size": i.manifest.size,
            "edits": i.manifest.edits,
            "valid_len": i.manifest.valid_len,
            "end": end_name(Some(&i.manifest.end)),
            "torn_bytes": torn_bytes(Some(&i.manifest.end)),
        },
        "next_file_number": s.next_file_number,
        "manifest_last_seq": s.last_seq,
        "format_version": s.format_version.unwrap_or(1),
        "last_seq": i.last_seq(),
        "log_number": s.log_number,
        "hash_salt": s.hash_salt,
        "writes": {
            "user_bytes": s.write_totals.user_bytes,
            "flush_bytes": s.write_totals.flush_bytes,
            "compaction_bytes": s.write_totals.compaction_bytes,
            "write_amplification": s.write_totals.write_amplification(),
        },
        "tables": i.tables.len(),
        "filter_memory_bytes": total_filter_memory,
        "filter_bytes": total_filter_bytes,
        "heap_bytes": { "filters": total_heap[0], "indexes": total_heap[1] },
        "filter_budget_share": of_budget(total_filter_bytes),
        "expected_false_positive_reads": expected_fp_reads,
        "levels": level_docs,
        "wal": i.logs.iter().map(log_json).collect::<Vec<_>>(),
        "recovery": recovery_json(&report),
        "lost_writes": s.lost_writes.iter().map(lost_writes_json).collect::<Vec<_>>(),
        "unreferenced_tables": i.unreferenced_tables.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "old_manifests": i.old_manifests.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
    }))
}

/// Runs `db info`. A table the manifest names that is missing or cannot
/// be opened, or a filter dropped as corrupt, is a problem (exit 1),
/// listed under `problems`.
///
/// # Errors
/// A one-line message if the directory is not a readable database or the
/// policy does not parse.
pub fn run(a: &Args) -> Result<Outcome, String> {
    let i = inspect(&a.dir)?;
    let mut doc = document(&i, a)?;
    let extractor = tables_extractor(&doc);
    // Probing needs every table readable; a damaged database is already
    // reported under `problems`.
    let observed = if a.probes > 0 && doc["ok"] == Value::Bool(true) && !i.tables.is_empty() {
        Some(observe(&i, a, (extractor, ranges::tables_use_first_bytes(&doc)))?)
    } else {
        None
    };
    let per_level = match observed {
        Some(Observed::Levels(levels)) => Some(levels),
        Some(Observed::Damaged(problem)) => {
            let what = problem["what"].as_str().unwrap_or_default().to_string();
            if let Some(problems) = doc["problems"].as_array_mut() {
                problems.push(json!(format!("a lookup met damage: {what}")));
            }
            doc["ok"] = json!(false);
            None
        }
        None => None,
    };
    doc["probes"] = json!(per_level.as_ref().map_or(0, |_| a.probes));
    doc["prefix_extractor"] = json!(extractor.map(|e| e.name()));
    if let Some(levels) = doc["levels"].as_array_mut() {
        for l in levels {
            let n = l["level"].as_u64().and_then(|n| usize::try_from(n).ok()).unwrap_or(usize::MAX);
            let seen = per_level.as_ref().and_then(|o| o.get(n).copied());
            l["observed_probes"] = json!(seen.map(|s| s.filter_probes));
            l["observed_fpr"] = json!(seen.and_then(|s| s.observed_fpr));
            l["prefix_probes"] = json!(seen.map(|s| s.prefix_probes));
            l["prefix_skipped"] = json!(seen.map(|s| s.prefix_skipped));
            l["prefix_false_positives"] = json!(seen.map(|s| s.prefix_false_positives));
            l["range_probes"] = json!(seen.map(|s| s.range[0]));
            l["range_skipped"] = json!(seen.map(|s| s.range[1]));
            l["range_false_positives"] = json!(seen.map(|s| s.range[2]));
        }
    }
    let outcome = if doc["ok"] == Value::Bool(true) { Outcome::Clean } else { Outcome::ProblemsFound };
    if a.json {
        output::print_json(&doc);
        return Ok(outcome);
    }
    text::print(&doc, a.tables);
    budget::print(&doc["budget_plan"]);
    Ok(outcome)
}
