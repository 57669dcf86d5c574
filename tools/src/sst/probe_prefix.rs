//! `siftdb sst probe --prefix P`: what the filter says about a prefix,
//! beside the keys the table holds under it.

use std::path::Path;

use serde_json::json;
use siftdb::table::{FilterAnswer, FilterStatus, Table};

use super::info::status_name;
use super::open::{open_table, problem_json};
use crate::Outcome;
use crate::bytes_arg::show;
use crate::output;

/// Keys listed at most, of those starting with the prefix.
const LISTED: usize = 10;

/// Distinct user keys of `table` starting with `p` (up to `LISTED` of them
/// kept), and the count; or the error that stopped the read.
fn keys_with(table: &Table, p: &[u8]) -> (Vec<Vec<u8>>, u64, Option<siftdb::Error>) {
    keys_from(table, p, |k| k.starts_with(p))
}

/// Distinct user keys of `table` from `seek` on while `within` holds (up to
/// `LISTED` of them kept), and the count; or the error that stopped the
/// read.
pub(super) fn keys_from(
    table: &Table,
    seek: &[u8],
    within: impl Fn(&[u8]) -> bool,
) -> (Vec<Vec<u8>>, u64, Option<siftdb::Error>) {
    let (mut keys, mut count) = (Vec::new(), 0u64);
    let mut last: Option<Vec<u8>> = None;
    let mut it = table.iter();
    if let Err(e) = it.seek(seek) {
        return (keys, count, Some(e));
    }
    for e in it {
        match e {
            Ok(e) if within(&e.user_key) => {
                if last.as_deref() != Some(&e.user_key[..]) {
                    count += 1;
                    if keys.len() < LISTED {
                        keys.push(e.user_key.to_vec());
                    }
                    last = Some(e.user_key.to_vec());
                }
            }
            Ok(_) => break,
            Err(e) => return (keys, count, Some(e)),
        }
    }
    (keys, count, None)
}

/// The text lines about what the table holds: `what` (count and verdict),
/// the keys listed, and the problem that stopped the read, if one did.
pub(super) fn print_held(what: &str, listed: &[Vec<u8>], error: Option<&serde_json::Value>, hex: bool) {
    println!("table     {what}");
    for k in listed {
        println!("  {}", show(k, hex));
    }
    if let Some(e) = error {
        println!("problem   {}", e["what"].as_str().unwrap_or_default());
    }
}

/// Runs the prefix probe. A filter that rules out a prefix the table holds
/// (a false negative), a dropped filter, or a damaged block is a problem
/// (exit 1).
///
/// # Errors
/// A one-line message for a file that is not a readable table.
pub fn run(file: &Path, p: &[u8], hex: bool, as_json: bool) -> Result<Outcome, String> {
    let table = open_table(file)?;
    let details = table.filter_details();
    let dropped = matches!(details.status, FilterStatus::Dropped(_));
    let extractor = table.prefix_extractor();
    let extracted = extractor.and_then(|e| e.extract(p).map(<[u8]>::to_vec));
    // The filter holds the extracted prefix q; its truth is whether any key
    // starts with q (a key under q but not under P is no false positive).
    let answer = match (&extractor, &extracted) {
        _ if dropped => "dropped",
        (None, _) if table.properties().prefix_extractor.is_some() => "unknown_extractor",
        (None, _) => "no_prefix_filter",
        (Some(_), None) => "outside_domain",
        (Some(e), Some(q)) => match table.prefix_answer(e, q) {
            FilterAnswer::NoFilter => "no_filter",
            FilterAnswer::Absent => "absent",
            FilterAnswer::MayContain => "may_contain",
        },
    };
    let (listed, count, error) = keys_with(&table, p);
    let (_, q_count, q_error) = match &extracted {
        Some(q) => keys_with(&table, q),
        None => (Vec::new(), 0, None),
    };
    let error = error.or(q_error).map(|e| problem_json(file, &e));
    let q_held = if error.is_some() { None } else { Some(q_count > 0) };
    let false_negative = answer == "absent" && q_held == Some(true);
    let false_positive = answer == "may_contain" && q_held == Some(false);
    let doc = json!({
        "path": file.display().to_string(),
        "prefix": show(p, hex),
        "extractor": table.properties().prefix_extractor,
        "extracted": extracted.as_deref().map(|q| show(q, hex)),
        "filter": answer,
        "filter_status": status_name(&details.status),
        "keys_with_prefix": count,
        "keys": listed.iter().map(|k| show(k, hex)).collect::<Vec<_>>(),
        "false_positive": false_positive,
        "false_negative": false_negative,
        "error": error,
    });
    if as_json {
        output::print_json(&doc);
    } else {
        println!("prefix    {}", show(p, hex));
        match (&doc["extractor"], &extracted) {
            (serde_json::Value::Null, _) => println!("extractor none: the filter holds whole keys only"),
            (e, Some(q)) => println!("extractor {} -> {}", e.as_str().unwrap_or_default(), show(q, hex)),
            (e, None) => {
                println!(
                    "extractor {} gives this prefix none: scans of it are not filtered",
                    e.as_str().unwrap_or_default()
                );
            }
        }
        println!("filter    {answer}");
        let verdict = match (false_negative, false_positive) {
            (true, _) => " (FILTER FALSE NEGATIVE: the filter hides a prefix the table holds)",
            (_, true) => " (false positive: no key has the extracted prefix)",
            _ => "",
        };
        print_held(&format!("{count} keys start with the prefix{verdict}"), &listed, error.as_ref(), hex);
    }
    let problem = false_negative || dropped || error.is_some();
    Ok(if problem { Outcome::ProblemsFound } else { Outcome::Clean })
}
