//! `siftdb sst probe`: the filter's answer for one key beside the truth.

use std::path::PathBuf;

use serde_json::{Value, json};
use siftdb::filter::hash_key;
use siftdb::table::{FilterAnswer, FilterStatus};

use super::info::status_name;
use super::open::{open_table, problem_json};
use super::scan::entry_json;
use crate::Outcome;
use crate::bytes_arg::{parse, show};
use crate::output;

/// Arguments of `sst probe`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The table file.
    file: PathBuf,
    /// The user key to look for.
    #[arg(required_unless_present_any = ["prefix", "range"])]
    key: Option<String>,
    /// Probe a prefix instead of a key: the table's prefix extractor's
    /// prefix of P is asked of the filter, beside the keys the table holds
    /// that start with P.
    #[arg(long, value_name = "P", conflicts_with = "key")]
    prefix: Option<String>,
    /// Probe a range instead: the range filter is asked about the keys in
    /// [START, END) (their first 8 bytes, big-endian), beside the keys the
    /// table holds there.
    #[arg(long, num_args = 2, value_names = ["START", "END"], conflicts_with_all = ["key", "prefix"])]
    range: Option<Vec<String>>,
    /// Read and print the key and values as hex.
    #[arg(long)]
    hex: bool,
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
}

/// Runs `sst probe`. A filter that rules out a key the table holds (a
/// false negative), a filter dropped as corrupt, or a damaged data block
/// met while reading the key's versions is a problem (exit 1); what could
/// be read is still shown.
///
/// # Errors
/// A one-line message for a bad key or a file that is not a readable table.
pub fn run(a: &Args) -> Result<Outcome, String> {
    if let Some(p) = &a.prefix {
        return super::probe_prefix::run(&a.file, &parse(p, a.hex)?, a.hex, a.json);
    }
    if let Some([start, end]) = a.range.as_deref() {
        let (start, end) = (parse(start, a.hex)?, parse(end, a.hex)?);
        return super::probe_range::run(&a.file, (&start, &end), a.hex, a.json);
    }
    let key = parse(a.key.as_deref().unwrap_or_default(), a.hex)?;
    let table = open_table(&a.file)?;
    let details = table.filter_details();
    let dropped = match &details.status {
        FilterStatus::Dropped(why) => Some(why.clone()),
        _ => None,
    };
    let unknown = matches!(details.status, FilterStatus::Unknown);
    let answer = match table.filter_answer(&key) {
        _ if dropped.is_some() => "dropped",
        // It answers "may contain" for every key: not a false positive.
        _ if unknown => "unknown",
        FilterAnswer::NoFilter => "no_filter",
        FilterAnswer::Absent => "absent",
        FilterAnswer::MayContain => "may_contain",
    };
    // The truth comes from the data, read whatever the filter said.
    let mut versions = Vec::new();
    let mut error = None;
    let mut it = table.iter();
    match it.seek(&key) {
        Err(e) => error = Some(problem_json(&a.file, &e)),
        Ok(()) => {
            for e in it {
                match e {
                    Ok(e) if e.user_key.as_ref() == key.as_slice() => versions.push(e),
                    Ok(_) => break,
                    Err(e) => {
                        error = Some(problem_json(&a.file, &e));
                        break;
                    }
                }
            }
        }
    }
    // Damage before any version was found leaves the truth unknown.
    let held = if versions.is_empty() && error.is_some() { None } else { Some(!versions.is_empty()) };
    let false_negative = answer == "absent" && held == Some(true);
    let false_positive = answer == "may_contain" && held == Some(false);
    let seed = details.header.map(|h| h.seed);
    let list: Vec<Value> =
        versions.iter().map(|e| entry_json(&e.user_key, Some(e.seq), e.kind, &e.value, a.hex)).collect();
    let doc = json!({
        "path": a.file.display().to_string(),
        "key": show(&key, a.hex),
        "key_hash": seed.map(|s| hash_key(s, &key)),
        "filter": answer,
        "filter_status": status_name(&details.status),
        "dropped_reason": dropped,
        "held": held,
        "false_positive": false_positive,
        "false_negative": false_negative,
        "newest": list.first(),
        "versions": list,
        "error": error,
    });
    if a.json {
        output::print_json(&doc);
    } else {
        println!("key       {}", show(&key, a.hex));
        if let Some(h) = doc["key_hash"].as_u64() {
            println!("hash      {h:#018x}");
        }
        match (&dropped, details.header) {
            (Some(why), _) => println!("filter    DROPPED as corrupt, every lookup reads data ({why})"),
            (None, Some(h)) if unknown => println!(
                "filter    unknown filter kind {} (filter format version {}): reads as may-contain",
                h.tag, h.version
            ),
            _ => println!("filter    {answer}"),
        }
        let verdict = match (held, false_positive, false_negative) {
            (None, _, _) => "unknown: a damaged block stopped the read",
            (_, _, true) => "held: FILTER FALSE NEGATIVE (the filter hides a key the table holds)",
            (Some(false), true, _) => "not held (false positive: the filter let an absent key through)",
            (Some(false), _, _) => "not held",
            (Some(true), _, _) => "held",
        };
        println!("table     {verdict}");
        for v in &list {
            match v["value"].as_str() {
                Some(val) => println!("  @{} value {val}", v["seq"]),
                None => println!("  @{} tombstone", v["seq"]),
            }
        }
        if let Some(e) = &error {
            println!("problem   {}", e["what"].as_str().unwrap_or_default());
        }
    }
    let problem = false_negative || dropped.is_some() || error.is_some();
    Ok(if problem { Outcome::ProblemsFound } else { Outcome::Clean })
}
