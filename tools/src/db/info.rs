//! `siftdb db info`: the tree level by level, its filters, and the state of
//! the manifest and the write-ahead logs, read without opening the database.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Value, json};
use siftdb::manifest::NUM_LEVELS;
use siftdb::policy::{LevelModel, TreeShape};
use siftdb::recovery::{LogInfo, RecoveryReport, RecoveryScan};
use siftdb::table::{FilterStatus, Table};
use siftdb::wal::LogEnd;
use siftdb::{Db, Options, PrefixExtractor};

use super::{inspect, parse_policy};
use crate::Outcome;
use crate::bytes_arg::show;
use crate::output;
use crate::sst::info::{fmt_rate, status_name};
use crate::sst::open::problem_json;
use siftdb::FilterPolicy;

/// Arguments of `db info`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The database directory.
    dir: PathBuf,
    /// The filter policy to compute each level's target rate under, in the
    /// library's grammar (`fuse8`, `per-level:blocked-bloom:10,fuse8`,
    /// `monkey:10+skip-last`, …); default: the policy stored in the database.
    #[arg(long)]
    policy: Option<String>,
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

/// What the probes saw, per level; or why they could not run.
enum Observed {
    Levels(Vec<LevelSeen>),
    /// Another process holds the database: the file-by-file report stands,
    /// without observed rates.
    Locked,
    /// A lookup met damage: a problem found, `{offset, what}`.
    Damaged(Value),
}

/// One level's counters over the probes.
#[derive(Clone, Copy)]
struct LevelSeen {
    filter_probes: u64,
    observed_fpr: Option<f64>,
    prefix_probes: u64,
    prefix_skipped: u64,
    prefix_false_positives: u64,
}

/// The extractor most of the document's tables were written with, if this
/// build knows it.
fn tables_extractor(doc: &Value) -> Option<PrefixExtractor> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for level in doc["levels"].as_array().into_iter().flatten() {
        for t in level["table_list"].as_array().into_iter().flatten() {
            if let Some(name) = t["prefix_extractor"].as_str() {
                *counts.entry(name).or_default() += 1;
            }
        }
    }
    counts.into_iter().max_by_key(|(_, n)| *n).and_then(|(name, _)| name.parse().ok())
}

/// A prefix of `e`'s near the prefix of `anchor` (one byte changed: the
/// last for a fixed length, the one before the delimiter for `up_to`), so
/// it falls inside real tables' key ranges and (almost surely) no key has
/// it; `None` if `anchor` has no prefix.
fn absent_prefix(e: &PrefixExtractor, anchor: &[u8], r: u8) -> Option<Vec<u8>> {
    let q = e.extract(anchor)?;
    (1..=2).find_map(|back| {
        let at = q.len().checked_sub(back)?;
        let mut p = q.to_vec();
        p[at] = r;
        (p != q && e.extract(&p) == Some(&p[..])).then_some(p)
    })
}

/// Looks up `n` keys that are (almost surely) absent through a read-only
/// [`Db`], and reads each level's filter counters. The keys are a table's
/// smallest key plus 8 random bytes, so they fall inside real tables' key
/// ranges and reach their filters, as an application's misses would.
fn observe(i: &RecoveryScan, a: &Args, extractor: Option<PrefixExtractor>) -> Result<Observed, String> {
    // The stored policy: a read-only open changes nothing either way. With
    // the tables' prefix extractor, prefix scans are measured too.
    let opts = Options { prefix_extractor: extractor, ..Options::default() };
    let db = match Db::open_read_only(&a.dir, opts) {
        Ok(db) => db,
        Err(siftdb::Error::Locked(_)) => return Ok(Observed::Locked),
        Err(e) if e.is_corruption() => return Ok(Observed::Damaged(problem_json(&a.dir, &e))),
        Err(e) => return Err(super::describe(&a.dir, &e)),
    };
    let anchors: Vec<&[u8]> = i.tables.iter().map(|t| t.record.smallest.as_slice()).collect();
    let before = db.stats();
    let mut state = 0x0b5e_17ed;
    for _ in 0..a.probes {
        let r = crate::sst::fpr::next(&mut state);
        let Some(anchor) = anchors.get(usize::try_from(r % anchors.len().max(1) as u64).unwrap_or(0)) else {
            break;
        };
        let mut key = anchor.to_vec();
        key.extend_from_slice(&crate::sst::fpr::next(&mut state).to_be_bytes());
        let prefix = extractor.and_then(|e| absent_prefix(&e, anchor, key[key.len() - 1]));
        let scanned = match prefix {
            Some(p) => db.prefix(p).next().transpose().map(|_| ()),
            None => Ok(()),
        };
        match db.get(&key).map(|_| ()).and(scanned) {
            Ok(()) => {}
            Err(e) if e.is_corruption() => return Ok(Observed::Damaged(problem_json(&a.dir, &e))),
            Err(e) => return Err(super::describe(&a.dir, &e)),
        }
    }
    let delta = db.stats().since(&before);
    Ok(Observed::Levels(
        delta
            .levels
            .iter()
            .map(|l| LevelSeen {
                filter_probes: l.filter_probes,
                observed_fpr: l.observed_fpr(),
                prefix_probes: l.prefix_probes,
                prefix_skipped: l.prefix_skipped,
                prefix_false_positives: l.prefix_false_positives,
            })
            .collect(),
    ))
}

/// How a log or manifest ended, as a word.
#[must_use]
pub fn end_name(end: Option<&LogEnd>) -> &'static str {
    match end {
        Some(LogEnd::Clean) => "clean",
        Some(LogEnd::TornTail { .. }) => "torn_tail",
        Some(LogEnd::Stopped { .. }) => "stopped",
        None => "damaged",
    }
}

fn torn_bytes(end: Option<&LogEnd>) -> u64 {
    match end {
        Some(LogEnd::TornTail { dropped, .. }) => *dropped,
        _ => 0,
    }
}

/// How many synced writes a cut loses, in words ("an unknown number" for
/// a log whose end was recorded without its sequence number).
#[must_use]
pub fn lost_text(lost: Option<u64>) -> String {
    lost.map_or_else(|| "an unknown number of".to_owned(), |n| n.to_string())
}

/// The JSON object for what recovery would replay and lose, shared with
/// `db verify`.
#[must_use]
pub fn recovery_json(r: &RecoveryReport) -> Value {
    json!({
        "logs_replayed": r.logs_replayed,
        "ops_replayed": r.ops_replayed,
        "torn_bytes": r.torn_bytes,
        "cut": r.cut.as_ref().map(|c| json!({
            "number": c.number,
            "path": c.path.display().to_string(),
            "recorded_len": c.recorded.len,
            "recorded_last_seq": c.recorded.last_seq,
            "found_len": c.found,
            "size": c.size,
        })),
        "synced_writes_lost": r.synced_writes_lost,
    })
}

/// The JSON object for one log, shared with `db verify`.
#[must_use]
pub fn log_json(l: &LogInfo) -> Value {
    json!({
        "number": l.number,
        "path": l.path.display().to_string(),
        "size": l.size,
        "live": l.live,
        "records": l.records,
        "ops": l.ops,
        "last_seq": l.last_seq,
        "valid_len": l.valid_len,
        "missing": l.missing,
        "recorded_synced_len": l.recorded_end.map(|e| e.len),
        "recorded_synced_seq": l.recorded_end.and_then(|e| e.last_seq),
        "end": end_name(l.end.as_ref()),
        "torn_bytes": torn_bytes(l.end.as_ref()),
        "error": l.error.as_ref().map(ToString::to_string),
    })
}

#[expect(clippy::too_many_lines, reason = "one JSON document assembled in order")]
fn document(i: &RecoveryScan, a: &Args) -> Result<Value, String> {
    let stored = i.manifest.state.filter_policy.clone();
    let (policy, policy_source) = match (parse_policy(a.policy.as_deref())?, &stored) {
        (Some(p), _) => (p, "given"),
        (None, Some(text)) => match text.parse::<FilterPolicy>() {
            Ok(p) => (p, "stored"),
            Err(e) => return Err(format!("{}: stored filter policy: {e}", a.dir.display())),
        },
        (None, None) => (FilterPolicy::default(), "default (none stored)"),
    };
    let mut levels: Vec<Vec<Value>> = vec![Vec::new(); NUM_LEVELS];
    let mut level_keys = [0f64; NUM_LEVELS];
    let mut problems: Vec<String> = Vec::new();
    for t in &i.tables {
        let r = &t.record;
        let missing = t.actual_size.is_none();
        let opened = if missing { None } else { Some(Table::open_path(&t.path)) };
        let (distinct, filter_keys, filter) = match &opened {
            Some(Ok(table)) => {
                (table.properties().distinct_keys, table.filter_keys(), Some(table.filter_details()))
            }
            _ => (0, 0, None),
        };
        let prefix_extractor = match &opened {
            Some(Ok(table)) => table.properties().prefix_extractor.clone(),
            _ => None,
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
                "smallest_key": show(&r.smallest, a.hex),
                "largest_key": show(&r.largest, a.hex),
                "min_seq": r.min_seq,
                "max_seq": r.max_seq,
                "filter_kind": r.filter.to_string(),
                "filter_bytes": r.filter_bytes,
                "filter_memory_bytes": if in_memory { r.filter_bytes } else { 0 },
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
    let shape = TreeShape::settling(models);
    let mut expected_fp_reads = 0.0;
    let mut total_filter_memory = 0u64;
    let level_docs: Vec<Value> = levels
        .iter()
        .enumerate()
        .take(deepest + 1)
        .map(|(n, tables)| {
            let sum = |f: &str| tables.iter().filter_map(|t| t[f].as_u64()).sum::<u64>();
            let filter_bytes = sum("filter_bytes");
            let fallbacks = tables.iter().filter(|t| !t["fallback_reason"].is_null()).count();
            let filter_memory = sum("filter_memory_bytes");
            total_filter_memory += filter_memory;
            let keys = sum("distinct_keys");
            let filter_keys = sum("filter_keys");
            let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
            let mut extractors: BTreeMap<String, u64> = BTreeMap::new();
            for t in tables {
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
                    siftdb::LevelStats::misses(t["theoretical_fpr"].as_f64().unwrap_or(1.0), planned)
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
                "bytes": sum("size"),
                "filter_bytes": filter_bytes,
                "filter_memory_bytes": filter_memory,
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
        "expected_false_positive_reads": expected_fp_reads,
        "levels": level_docs,
        "wal": i.logs.iter().map(log_json).collect::<Vec<_>>(),
        "recovery": recovery_json(&report),
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
        Some(observe(&i, a, extractor)?)
    } else {
        None
    };
    let per_level = match observed {
        Some(Observed::Levels(levels)) => Some(levels),
        Some(Observed::Locked) => {
            eprintln!("siftdb: {}: locked by another process; observed rates skipped", a.dir.display());
            None
        }
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
        }
    }
    let outcome = if doc["ok"] == Value::Bool(true) { Outcome::Clean } else { Outcome::ProblemsFound };
    if a.json {
        output::print_json(&doc);
        return Ok(outcome);
    }
    let g = |v: &Value, k: &str| match &v[k] {
        Value::String(s) => s.clone(),
        Value::Null => "-".to_string(),
        other => other.to_string(),
    };
    println!("database        {}", g(&doc, "path"));
    println!(
        "manifest        {} ({} bytes, {} edits, {}; database format version {})",
        g(&doc["manifest"], "path"),
        g(&doc["manifest"], "size"),
        g(&doc["manifest"], "edits"),
        g(&doc["manifest"], "end"),
        g(&doc, "format_version")
    );
    println!(
        "sequence        last {} (manifest {}), next file number {}, log number {}",
        g(&doc, "last_seq"),
        g(&doc, "manifest_last_seq"),
        g(&doc, "next_file_number"),
        g(&doc, "log_number")
    );
    match doc["replaced_policy"].as_str() {
        Some(old) => println!(
            "filter policy   {} ({}; replaced {old}, whose filters older tables may still carry)",
            g(&doc, "policy"),
            g(&doc, "policy_source")
        ),
        None => println!("filter policy   {} ({})", g(&doc, "policy"), g(&doc, "policy_source")),
    }
    let w = &doc["writes"];
    match w["write_amplification"].as_f64() {
        Some(wa) => println!(
            "writes          {} application bytes flushed; tables written: {} by flushes, {} by compactions; write amplification {wa:.2} (over the database's life)",
            g(w, "user_bytes"),
            g(w, "flush_bytes"),
            g(w, "compaction_bytes")
        ),
        None => println!(
            "writes          none flushed yet (or written before format version 3, which counted none)"
        ),
    }
    println!("filter memory   {} bytes (filters loaded in memory)", g(&doc, "filter_memory_bytes"));
    println!(
        "expected false-positive reads per absent lookup: {:.5}",
        doc["expected_false_positive_reads"].as_f64().unwrap_or(0.0)
    );
    let levels = doc["levels"].as_array().map(Vec::as_slice).unwrap_or_default();
    let rows: Vec<Vec<String>> = levels
        .iter()
        .map(|l| {
            vec![
                g(l, "level"),
                g(l, "tables"),
                g(l, "keys"),
                g(l, "bytes"),
                {
                    let kinds = l["filter_kinds"]
                        .as_object()
                        .map(|m| m.keys().cloned().collect::<Vec<_>>().join(","))
                        .unwrap_or_default();
                    let mut notes = Vec::new();
                    if let Some(n) = l["filter_fallbacks"].as_u64().filter(|&n| n > 0) {
                        notes.push(format!("{n} fell back"));
                    }
                    if let Some(n) = l["tables_over_target"].as_u64().filter(|&n| n > 0) {
                        notes.push(format!("{n} over target"));
                    }
                    // Tables a quarter of the level's median or less.
                    let spread = &l["table_bytes"];
                    if let (Some(min), Some(median)) = (spread["min"].as_u64(), spread["median"].as_u64())
                        && min.saturating_mul(4) <= median
                    {
                        notes.push(format!("smallest table {min} bytes, median {median}"));
                    }
                    for (e, n) in l["prefix_extractors"].as_object().into_iter().flatten() {
                        if e != "none" {
                            notes.push(format!("prefixes {e} in {n}"));
                        }
                    }
                    if notes.is_empty() { kinds } else { format!("{kinds} ({})", notes.join(", ")) }
                },
                g(l, "filter_bytes"),
                format!("{:.2}", l["bits_per_key"].as_f64().unwrap_or(0.0)),
                fmt_rate(l["mean_theoretical_fpr"].as_f64()),
                format!("{} {}", g(l, "target_filter_kind"), fmt_rate(l["target_fpr"].as_f64())),
                match l["observed_fpr"].as_f64() {
                    Some(r) => format!("{} ({} probes)", fmt_rate(Some(r)), g(l, "observed_probes")),
                    None => "-".to_string(),
                },
            ]
        })
        .collect();
    println!();
    print!(
        "{}",
        output::table(
            &[
                "level",
                "tables",
                "keys",
                "bytes",
                "filters",
                "filter bytes",
                "bits/key",
                "FPR",
                "target (policy)",
                "observed FPR"
            ],
            &rows
        )
    );
    let prefix_lines: Vec<String> = levels
        .iter()
        .filter(|l| l["prefix_probes"].as_u64().is_some_and(|n| n > 0))
        .map(|l| {
            format!(
                "  level {}: {} of {} tables skipped, {} false positives",
                g(l, "level"),
                g(l, "prefix_skipped"),
                g(l, "prefix_probes"),
                g(l, "prefix_false_positives")
            )
        })
        .collect();
    if !prefix_lines.is_empty() {
        println!("\nabsent-prefix scans (extractor {}):", g(&doc, "prefix_extractor"));
        println!("{}", prefix_lines.join("\n"));
    }
    if a.tables {
        let rows: Vec<Vec<String>> = levels
            .iter()
            .flat_map(|l| {
                l["table_list"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .map(move |t| (l["level"].clone(), t))
            })
            .map(|(lvl, t)| {
                vec![
                    lvl.to_string(),
                    g(&t, "number"),
                    g(&t, "size"),
                    g(&t, "entries"),
                    format!("{} .. {}", g(&t, "smallest_key"), g(&t, "largest_key")),
                    format!("{} .. {}", g(&t, "min_seq"), g(&t, "max_seq")),
                    match (&t["missing"], &t["open_error"], t["filter_status"].as_str()) {
                        (Value::Bool(true), _, _) => format!("{} (TABLE MISSING)", g(&t, "filter_kind")),
                        (_, Value::String(_), _) => format!("{} (TABLE UNREADABLE)", g(&t, "filter_kind")),
                        (_, _, Some("dropped")) => format!("{} (DROPPED)", g(&t, "filter_kind")),
                        _ if !t["fallback_reason"].is_null() => {
                            format!("{} (fell back: {})", g(&t, "filter_kind"), g(&t, "fallback_reason"))
                        }
                        _ => g(&t, "filter_kind"),
                    },
                ]
            })
            .collect();
        println!();
        print!("{}", output::table(&["level", "table", "bytes", "entries", "keys", "seq", "filter"], &rows));
    }
    let rows: Vec<Vec<String>> = doc["wal"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|l| {
            vec![
                g(l, "path"),
                g(l, "size"),
                if l["live"] == Value::Bool(true) { "live".into() } else { "flushed".into() },
                g(l, "records"),
                g(l, "last_seq"),
                if l["recorded_synced_len"].is_null() { "-".into() } else { g(l, "recorded_synced_len") },
                if l["missing"] == Value::Bool(true) { "MISSING".into() } else { g(l, "end") },
            ]
        })
        .collect();
    println!();
    print!("{}", output::table(&["wal", "bytes", "state", "records", "last seq", "synced", "end"], &rows));
    for p in doc["unreferenced_tables"].as_array().map(Vec::as_slice).unwrap_or_default() {
        println!("unreferenced table (removed at next open): {}", p.as_str().unwrap_or_default());
    }
    let problems = doc["problems"].as_array().map(Vec::as_slice).unwrap_or_default();
    if !problems.is_empty() {
        println!();
    }
    for p in problems {
        println!("PROBLEM: {}", p.as_str().unwrap_or_default());
    }
    Ok(outcome)
}
