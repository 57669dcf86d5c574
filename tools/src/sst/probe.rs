//! `siftdb sst probe`: the filter's answer for one key beside the truth.

use std::path::PathBuf;

use serde_json::{Value, json};
use siftdb::filter::hash_key;
use siftdb::table::{FilterAnswer, MAX_SEQ};

use super::open::{describe, open_table};
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
    key: String,
    /// Read and print the key and values as hex.
    #[arg(long)]
    hex: bool,
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
}

/// Runs `sst probe`. A filter that rules out a key the table holds (a
/// false negative) is a problem (exit 1).
///
/// # Errors
/// A one-line message for a bad key or an unreadable table.
pub fn run(a: &Args) -> Result<Outcome, String> {
    let key = parse(&a.key, a.hex)?;
    let table = open_table(&a.file)?;
    let lookup = table.get(&key, MAX_SEQ).map_err(|e| describe(&a.file, &e))?;
    // The truth comes from the data, read whatever the filter said.
    let mut it = table.iter();
    it.seek(&key).map_err(|e| describe(&a.file, &e))?;
    let mut versions = Vec::new();
    for e in it {
        let e = e.map_err(|e| describe(&a.file, &e))?;
        if e.user_key.as_ref() != key.as_slice() {
            break;
        }
        versions.push(e);
    }
    let held = !versions.is_empty();
    let answer = match lookup.filter {
        FilterAnswer::NoFilter => "no_filter",
        FilterAnswer::Absent => "absent",
        FilterAnswer::MayContain => "may_contain",
    };
    let false_negative = lookup.filter == FilterAnswer::Absent && held;
    let false_positive = lookup.filter == FilterAnswer::MayContain && !held;
    let seed = table.filter_details().header.map(|h| h.seed);
    let list: Vec<Value> =
        versions.iter().map(|e| entry_json(&e.user_key, Some(e.seq), e.kind, &e.value, a.hex)).collect();
    let doc = json!({
        "path": a.file.display().to_string(),
        "key": show(&key, a.hex),
        "key_hash": seed.map(|s| hash_key(s, &key)),
        "filter": answer,
        "held": held,
        "false_positive": false_positive,
        "false_negative": false_negative,
        "newest": list.first(),
        "versions": list,
    });
    if a.json {
        output::print_json(&doc);
    } else {
        println!("key       {}", show(&key, a.hex));
        if let Some(h) = doc["key_hash"].as_u64() {
            println!("hash      {h:#018x}");
        }
        println!("filter    {answer}");
        let verdict = match (held, false_positive, false_negative) {
            (_, _, true) => "held: FILTER FALSE NEGATIVE (the filter hides a key the table holds)",
            (false, true, _) => "not held (false positive: the filter let an absent key through)",
            (false, _, _) => "not held",
            (true, _, _) => "held",
        };
        println!("table     {verdict}");
        for v in &list {
            match v["value"].as_str() {
                Some(val) => println!("  @{} value {val}", v["seq"]),
                None => println!("  @{} tombstone", v["seq"]),
            }
        }
    }
    Ok(if false_negative { Outcome::ProblemsFound } else { Outcome::Clean })
}
