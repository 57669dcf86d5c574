//! `siftdb sst scan`: a table's entries in internal-key order.

use std::ops::Bound;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use siftdb::ValueKind;
use siftdb::table::TableEntry;

use super::info::{range_tombstone_json, range_tombstone_line};
use super::open::{open_table, problem_json};
use crate::Outcome;
use crate::bytes_arg::{parse, show};
use crate::output;

/// Arguments of `sst scan`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The table file.
    file: PathBuf,
    /// First user key to show (inclusive).
    #[arg(long)]
    from: Option<String>,
    /// User key to stop before (exclusive).
    #[arg(long)]
    to: Option<String>,
    /// Show at most this many entries (at least 1; omit for no limit).
    #[arg(long, value_parser = crate::numbers::limit)]
    limit: Option<usize>,
    /// Read and print keys and values as hex.
    #[arg(long)]
    hex: bool,
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
}

/// The JSON object for one entry, shared with `db scan`.
#[must_use]
pub fn entry_json(key: &[u8], seq: Option<u64>, kind: ValueKind, value: &[u8], hex: bool) -> Value {
    json!({
        "key": show(key, hex),
        "seq": seq,
        "kind": kind_name(kind),
        "value": if kind == ValueKind::Value { Value::String(show(value, hex)) } else { Value::Null },
    })
}

/// `value` or `tombstone`.
#[must_use]
pub fn kind_name(kind: ValueKind) -> &'static str {
    match kind {
        ValueKind::Value => "value",
        ValueKind::Tombstone => "tombstone",
    }
}

/// A scan's entries on their way out. In text, each entry is printed as
/// soon as it is read, so the entries before a damaged block are shown; in
/// JSON they are gathered into the one document printed at the end. The
/// limit note and a problem that stopped the scan go to stderr in text
/// (stdout holds entries only), and into fields in JSON.
pub struct EntrySink {
    json: bool,
    limit: usize,
    count: usize,
    truncated: bool,
    entries: Vec<Value>,
    range_tombstones: Option<Vec<Value>>,
}

impl EntrySink {
    /// A sink printing JSON or text, showing at most `limit` entries.
    #[must_use]
    pub fn new(json: bool, limit: Option<usize>) -> Self {
        EntrySink {
            json,
            limit: limit.unwrap_or(usize::MAX),
            count: 0,
            truncated: false,
            entries: Vec::new(),
            range_tombstones: None,
        }
    }

    /// Shows a table's range tombstones: in text, one line each now,
    /// before the entries; in JSON, a `range_tombstones` array (absent from
    /// the documents of scans that have none to show, such as `db scan`).
    /// The entry limit does not apply to them.
    pub fn range_tombstones(&mut self, docs: Vec<Value>, lines: impl Iterator<Item = String>) {
        if self.json {
            self.range_tombstones = Some(docs);
        } else {
            for line in lines {
                println!("{line}");
            }
        }
    }

    /// Shows one entry (its JSON object or its text line), unless the
    /// limit is reached: then it returns `false`, the entry is not shown,
    /// and the output is marked truncated.
    pub fn offer(&mut self, doc: impl FnOnce() -> Value, line: impl FnOnce() -> String) -> bool {
        if self.count == self.limit {
            self.truncated = true;
            return false;
        }
        self.count += 1;
        if self.json {
            self.entries.push(doc());
        } else {
            println!("{}", line());
        }
        true
    }

    /// Ends the output: the JSON document (`path`, `count`, `truncated`,
    /// `entries`, `error`), or the notes on stderr. `error` (an
    /// `{offset, what}` object) is the problem that stopped the scan, which
    /// makes the outcome [`Outcome::ProblemsFound`].
    #[must_use]
    pub fn finish(self, path: &Path, error: Option<Value>) -> Outcome {
        if self.json {
            let mut doc = json!({
                "path": path.display().to_string(),
                "count": self.count,
                "truncated": self.truncated,
                "entries": self.entries,
                "error": error,
            });
            if let (Some(ts), Some(obj)) = (self.range_tombstones, doc.as_object_mut()) {
                obj.insert("range_tombstones".into(), Value::Array(ts));
            }
            output::print_json(&doc);
        } else {
            if self.truncated {
                eprintln!(
                    "siftdb: limit of {} reached; more entries follow",
                    output::count(self.limit as u64, "entry", "entries")
                );
            }
            if let Some(e) = &error {
                eprintln!(
                    "siftdb: {}; scan stopped after {}",
                    e["what"].as_str().unwrap_or_default(),
                    output::count(self.count as u64, "entry", "entries")
                );
            }
        }
        if error.is_some() { Outcome::ProblemsFound } else { Outcome::Clean }
    }
}

/// The text line of one table entry.
fn entry_line(e: &TableEntry, hex: bool) -> String {
    match e.kind {
        ValueKind::Value => format!("{} @{} value {}", show(&e.user_key, hex), e.seq, show(&e.value, hex)),
        ValueKind::Tombstone => format!("{} @{} tombstone", show(&e.user_key, hex), e.seq),
    }
}

/// Runs `sst scan`: the range tombstones that meet `[from, to)` (in
/// text, each as `[start, end) @seq range tombstone`, before the entries),
/// then the entries. A damaged data block ends the scan after the entries
/// before it, with the problem and its offset reported (exit 1).
///
/// # Errors
/// A one-line message for a bad key argument or a file that is not a
/// readable table.
pub fn run(a: &Args) -> Result<Outcome, String> {
    let from = a.from.as_deref().map(|k| parse(k, a.hex)).transpose()?;
    let to = a.to.as_deref().map(|k| parse(k, a.hex)).transpose()?;
    let table = open_table(&a.file)?;
    let mut sink = EntrySink::new(a.json, a.limit);
    if let Some(dels) = table.range_dels() {
        let lower = from.as_deref().map_or(Bound::Unbounded, Bound::Included);
        let upper = to.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        let shown: Vec<_> = dels.meeting(lower, upper).collect();
        sink.range_tombstones(
            shown.iter().map(|t| range_tombstone_json(t, a.hex)).collect(),
            shown.iter().map(|t| format!("{} range tombstone", range_tombstone_line(t, a.hex))),
        );
    }
    let mut it = table.iter();
    let mut error = None;
    if let Some(from) = &from
        && let Err(e) = it.seek(from)
    {
        error = Some(problem_json(&a.file, &e));
    }
    if error.is_none() {
        for e in it {
            let e = match e {
                Ok(e) => e,
                Err(e) => {
                    error = Some(problem_json(&a.file, &e));
                    break;
                }
            };
            if to.as_deref().is_some_and(|to| e.user_key.as_ref() >= to) {
                break;
            }
            let doc = || entry_json(&e.user_key, Some(e.seq), e.kind, &e.value, a.hex);
            if !sink.offer(doc, || entry_line(&e, a.hex)) {
                break;
            }
        }
    }
    Ok(sink.finish(&a.file, error))
}
