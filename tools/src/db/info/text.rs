//! `db info`'s text report, printed from its JSON document (so the two
//! always say the same).

use serde_json::Value;

use crate::output;
use crate::sst::info::fmt_rate;

/// Prints `doc` for a person; `tables` lists every table too.
#[expect(clippy::too_many_lines, reason = "one report, section by section")]
pub fn print(doc: &Value, tables: bool) {
    let g = |v: &Value, k: &str| match &v[k] {
        Value::String(s) => s.clone(),
        Value::Null => "-".to_string(),
        other => other.to_string(),
    };
    println!("database        {}", g(doc, "path"));
    println!(
        "manifest        {} ({} bytes, {} edits, {}; database format version {})",
        g(&doc["manifest"], "path"),
        g(&doc["manifest"], "size"),
        g(&doc["manifest"], "edits"),
        g(&doc["manifest"], "end"),
        g(doc, "format_version")
    );
    for l in doc["lost_writes"].as_array().map(Vec::as_slice).unwrap_or_default() {
        println!("{}", l["text"].as_str().unwrap_or_default());
    }
    println!(
        "sequence        last {} (manifest {}), next file number {}, log number {}",
        g(doc, "last_seq"),
        g(doc, "manifest_last_seq"),
        g(doc, "next_file_number"),
        g(doc, "log_number")
    );
    match doc["replaced_policy"].as_str() {
        Some(old) => println!(
            "filter policy   {} ({}; replaced {old}, whose filters older tables may still carry)",
            g(doc, "policy"),
            g(doc, "policy_source")
        ),
        None => println!("filter policy   {} ({})", g(doc, "policy"), g(doc, "policy_source")),
    }
    let d = &doc["fifo_dropped"];
    match (doc["compaction"].as_str(), d["tables"].as_u64().unwrap_or(0)) {
        (Some(c), 0) => println!("compaction      {c} (last opened with)"),
        (Some(c), n) => println!(
            "compaction      {c} (last opened with); FIFO dropped {n} tables, {} entries, {} bytes (over the database's life)",
            g(d, "entries"),
            g(d, "bytes")
        ),
        (None, _) => println!("compaction      not recorded (written before format version 11)"),
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
    println!("filter memory   {} bytes (filters loaded in memory)", g(doc, "filter_memory_bytes"));
    let per_level: Vec<String> = levels_of(doc)
        .iter()
        .filter(|l| l["tables"].as_u64().is_some_and(|n| n > 0))
        .map(|l| {
            format!(
                "L{} {}/{}",
                g(l, "level"),
                g(&l["heap_bytes"], "filters"),
                g(&l["heap_bytes"], "indexes")
            )
        })
        .collect();
    println!(
        "heap            filters {} bytes, indexes {} bytes (held beyond the tables' mappings; per level filters/indexes: {})",
        g(&doc["heap_bytes"], "filters"),
        g(&doc["heap_bytes"], "indexes"),
        if per_level.is_empty() { "-".to_string() } else { per_level.join(", ") }
    );
    if let (Some(share), Some(budget)) =
        (doc["filter_budget_share"].as_f64(), doc["filter_memory_budget"].as_u64())
    {
        // Level 0 apart: the plan does not charge its flushes, so the
        // levels it does charge may be within the budget when all are not.
        let l0 = doc["levels"][0]["budget_share"].as_f64().unwrap_or(0.0);
        println!(
            "filter budget   {} bytes written, {:.1}% of the budget of {budget} ({:.1}% in levels 1+, which the plan charges)",
            g(doc, "filter_bytes"),
            share * 100.0,
            (share - l0) * 100.0
        );
    }
    println!(
        "expected false-positive reads per absent lookup: {:.5}",
        doc["expected_false_positive_reads"].as_f64().unwrap_or(0.0)
    );
    let levels = levels_of(doc);
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
    // As `Stats` shows them: a line only when some level holds any.
    let tombstones: Vec<String> = levels
        .iter()
        .filter(|l| l["range_tombstones"].as_u64().is_some_and(|n| n > 0))
        .map(|l| format!("L{} {}", g(l, "level"), g(l, "range_tombstones")))
        .collect();
    if !tombstones.is_empty() {
        println!("range tombstones: {}", tombstones.join(", "));
    }
    // Each table names its codec, so a level may mix them; a line only
    // when some table is compressed.
    let codecs: Vec<String> = levels
        .iter()
        .flat_map(|l| {
            let counts = l["compression"].as_object().into_iter().flatten();
            counts.map(move |(c, n)| (g(l, "level"), c.clone(), n.as_u64().unwrap_or(0)))
        })
        .map(|(level, c, n)| format!("L{level} {c} {n}"))
        .collect();
    if codecs.iter().any(|c| !c.contains(" none ")) {
        println!("compression (tables per codec): {}", codecs.join(", "));
    }
    for (family, heading) in [
        ("prefix", format!("absent-prefix scans (extractor {})", g(doc, "prefix_extractor"))),
        (
            "range",
            format!("short-range scans ({} values within a table's key range)", super::ranges::SCAN_LENGTH),
        ),
    ] {
        let lines: Vec<String> = levels
            .iter()
            .filter(|l| l[format!("{family}_probes")].as_u64().is_some_and(|n| n > 0))
            .map(|l| {
                format!(
                    "  level {}: {} of {} skipped, {}",
                    g(l, "level"),
                    g(l, &format!("{family}_skipped")),
                    output::count(l[format!("{family}_probes")].as_u64().unwrap_or(0), "table", "tables"),
                    output::count(
                        l[format!("{family}_false_positives")].as_u64().unwrap_or(0),
                        "false positive",
                        "false positives"
                    )
                )
            })
            .collect();
        if !lines.is_empty() {
            println!("\n{heading}:");
            println!("{}", lines.join("\n"));
        }
    }
    if tables {
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
}

fn levels_of(doc: &Value) -> &[Value] {
    doc["levels"].as_array().map(Vec::as_slice).unwrap_or_default()
}
