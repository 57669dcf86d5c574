//! `siftdb sst probe --range START END`: what the range filter says about
//! the keys in `[START, END)`, beside the keys the table holds there.

use std::path::Path;

use serde_json::json;
use siftdb::filter::RangeProbe;
use siftdb::table::FilterAnswer;
use siftdb::{FIRST_BYTES_IMAGE, KeyImage};

use super::open::{open_table, problem_json};
use super::probe_prefix::{keys_from, print_held};
use crate::Outcome;
use crate::bytes_arg::show;
use crate::output;

/// Runs the range probe. A range filter that rules out a range the table
/// holds keys in (a false negative), a dropped range filter, or a damaged
/// block is a problem (exit 1).
///
/// # Errors
/// A one-line message for a file that is not a readable table, or a range
/// whose end is not after its start.
pub fn run(file: &Path, (start, end): (&[u8], &[u8]), hex: bool, as_json: bool) -> Result<Outcome, String> {
    if start >= end {
        return Err(format!(
            "--range: the end {} is not after the start {}",
            show(end, hex),
            show(start, hex)
        ));
    }
    let table = open_table(file)?;
    let image = KeyImage::first_bytes();
    // An excluded end: a key below it may share its image.
    let (lo, hi) = (image.image(start), image.image(end));
    let filter = table.range_filter();
    let built_in = filter.is_some_and(|f| f.image() == FIRST_BYTES_IMAGE);
    let probe = filter.filter(|_| built_in).map(|f| f.layout().probe(lo, hi));
    let too_wide = probe == Some(RangeProbe::TooWide);
    // Buckets the range touches; `None` when it is too wide to ask.
    let buckets = probe.and_then(|p| match p {
        RangeProbe::Empty => Some(0),
        RangeProbe::Buckets(ids) => Some(ids.end() - ids.start() + 1),
        RangeProbe::TooWide => None,
    });
    let answer = match filter {
        _ if table.range_filter_dropped().is_some() => "dropped",
        None => "no_range_filter",
        Some(_) if !built_in => "other_image",
        Some(_) => match table.range_answer(&image, lo, hi) {
            FilterAnswer::NoFilter if too_wide => "too_wide",
            FilterAnswer::NoFilter => "unknown",
            FilterAnswer::Absent => "empty",
            FilterAnswer::MayContain => "may_contain",
        },
    };
    let (listed, count, error) = keys_from(&table, start, |k| k < end);
    let error = error.map(|e| problem_json(file, &e));
    let held = if error.is_some() { None } else { Some(count > 0) };
    let false_negative = answer == "empty" && held == Some(true);
    let false_positive = answer == "may_contain" && held == Some(false);
    let doc = json!({
        "path": file.display().to_string(),
        "start": show(start, hex),
        "end": show(end, hex),
        "image": filter.map(|f| f.image().to_string()),
        "images": [format!("{lo:#018x}"), format!("{hi:#018x}")],
        "buckets_probed": buckets,
        "filter": answer,
        "dropped_reason": table.range_filter_dropped(),
        "keys_in_range": count,
        "keys": listed.iter().map(|k| show(k, hex)).collect::<Vec<_>>(),
        "false_positive": false_positive,
        "false_negative": false_negative,
        "error": error,
    });
    if as_json {
        output::print_json(&doc);
    } else {
        println!("range     [{}, {})", show(start, hex), show(end, hex));
        println!("images    {lo:#018x} ..= {hi:#018x} (first 8 bytes, big-endian)");
        match (filter, buckets) {
            (None, _) => println!("the table has no range filter: every scan reads it"),
            (Some(f), _) if !built_in => {
                println!("range filter over image {}, which this tool cannot compute", f.image())
            }
            (Some(_), _) if too_wide => println!("more buckets than a scan probes: the range is not asked"),
            (Some(f), Some(b)) => println!("{b} bucket(s) of 2^{} images probed", f.layout().shift),
            (Some(_), None) => {}
        }
        println!("filter    {answer}");
        let verdict = match (false_negative, false_positive) {
            (true, _) => " (RANGE FILTER FALSE NEGATIVE: it hides keys the table holds)",
            (_, true) => " (false positive: the range is empty)",
            _ => "",
        };
        let held = format!("{} in the range{verdict}", output::count(count, "key", "keys"));
        print_held(&held, &listed, error.as_ref(), hex);
    }
    let problem = false_negative || table.range_filter_dropped().is_some() || error.is_some();
    Ok(if problem { Outcome::ProblemsFound } else { Outcome::Clean })
}
