//! `siftdb sst write OUT.sst`: a table from sorted lines on stdin, through
//! the library's `TableWriter`, for a bulk load or a test table.
//!
//! The order check is made here as well as in the writer so that the
//! message names input lines and shows the keys as the rest of the tool
//! does (`--hex` or escaped), not as the library's error does.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde_json::json;
use siftdb::{FilterPolicy, Options, TableWriter, TableWritten};

use super::open::describe;
use crate::Outcome;
use crate::bytes_arg::{parse, show, unescape};
use crate::output;

/// Arguments of `sst write`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Input, one entry per line, keys in strictly increasing byte order, each once:
  KEY<TAB>VALUE   a value (split at the first tab; nothing after it: an empty value)
  KEY             a line without a tab: a deletion of KEY
Keys and values are text in which \\\\ is a backslash, \\xNN a byte and \\u{XXXX} a
character (what `sst scan` prints, so its output can be written back; a tab or
newline inside a key is \\x09, \\x0a), or hex digits with --hex. An empty line is
an error. Every entry is written at sequence number 0.

Out-of-order or repeated keys, or a bad escape, exit 2 with one line naming the
input line; so does an empty input. Then no file is left at OUT.")]
pub struct Args {
    /// The table file to create (refused if it exists).
    out: PathBuf,
    /// Keys and values are hex digits.
    #[arg(long)]
    hex: bool,
    /// The filter policy the table's filter comes from (the kind it gives
    /// the last level, where a bulk load lands): `default`, a kind such as
    /// `fuse8`, `per-level:…`, or `monkey:B`, optionally with `+skip-last`.
    #[arg(long, value_parser = crate::policy_arg::parse)]
    policy: Option<FilterPolicy>,
    /// The filter's hash salt (default 0). A database answers with its own
    /// salt: ingesting a table written under another one rebuilds its filter.
    #[arg(long, value_parser = crate::numbers::count(0, u64::MAX))]
    salt: Option<u64>,
    /// Also give the table a range filter over its keys' first 8 bytes
    /// (big-endian), with this point filter over its buckets (default
    /// `ribbon:10`), as a database with `Options::range_filter` would.
    #[arg(long, value_name = "KIND", num_args = 0..=1, default_missing_value = "ribbon:10", value_parser = crate::readamp::parse_range_kind)]
    range_filter: Option<siftdb::FilterKind>,
    /// Print what was written as one JSON document.
    #[arg(long)]
    json: bool,
}

/// One input line as an entry: the key, and the value (`None`: a deletion).
fn entry(line: &[u8], hex: bool) -> Result<(Vec<u8>, Option<Vec<u8>>), String> {
    if line.is_empty() {
        return Err("empty line (a deletion is the key alone)".into());
    }
    let text =
        std::str::from_utf8(line).map_err(|_| "not UTF-8 text (write other bytes as \\xNN)".to_owned())?;
    let field = |s: &str| if hex { parse(s, true) } else { unescape(s) };
    match text.split_once('\t') {
        Some((k, v)) => Ok((field(k)?, Some(field(v)?))),
        None => Ok((field(text)?, None)),
    }
}

/// Runs `sst write`.
///
/// # Errors
/// A one-line message (exit 2) for bad input, an existing OUT, or a write
/// that failed; OUT is then left absent.
pub fn run(a: &Args) -> Result<Outcome, String> {
    let range_filter = a.range_filter.map(|kind| siftdb::RangeFilterPolicy { kind, ..Default::default() });
    let opts =
        Options { filter_policy: a.policy.clone(), hash_salt: a.salt, range_filter, ..Options::default() };
    // The library's bad-input messages name the path already.
    let fail = |e: &siftdb::Error| match e {
        siftdb::Error::InvalidArgument(m) => m.clone(),
        other => describe(&a.out, other),
    };
    let mut w = TableWriter::create(&a.out, &opts).map_err(|e| fail(&e))?;
    let mut last: Option<(Vec<u8>, usize)> = None;
    for (i, line) in std::io::stdin().lock().split(b'\n').enumerate() {
        let n = i + 1;
        let line = line.map_err(|e| format!("reading stdin at line {n}: {e}"))?;
        let (key, value) = entry(&line, a.hex).map_err(|e| format!("line {n}: {e}"))?;
        if let Some((prev, at)) = &last
            && key <= *prev
        {
            return Err(format!(
                "line {n}: key {} does not sort after key {} (line {at}): input must be sorted, each key once",
                show(&key, a.hex),
                show(prev, a.hex)
            ));
        }
        match &value {
            Some(v) => w.add(&key, v),
            None => w.delete(&key),
        }
        .map_err(|e| format!("line {n}: {}", fail(&e)))?;
        last = Some((key, n));
    }
    if last.is_none() {
        return Err(format!("{}: no entries on stdin: an empty table is not written", a.out.display()));
    }
    let written = w.finish().map_err(|e| fail(&e))?;
    report(&written, &a.out, a.hex, a.json);
    Ok(Outcome::Clean)
}

fn report(w: &TableWritten, out: &Path, hex: bool, json: bool) {
    if json {
        output::print_json(&json!({
            "path": out.display().to_string(),
            "entries": w.entries,
            "deletions": w.deletions,
            "file_bytes": w.file_bytes,
            "smallest": show(&w.smallest, hex),
            "largest": show(&w.largest, hex),
            "filter": w.filter.to_string(),
            "filter_bytes": w.filter_bytes,
            "salt": w.salt,
        }));
        return;
    }
    println!(
        "wrote {}: {} ({}), {} bytes, keys {} .. {}, filter {} (salt {})",
        out.display(),
        output::count(w.entries, "entry", "entries"),
        output::count(w.deletions, "deletion", "deletions"),
        w.file_bytes,
        show(&w.smallest, hex),
        show(&w.largest, hex),
        w.filter,
        w.salt
    );
}
