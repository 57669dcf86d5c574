//! `siftdb sst scan`: a table's entries in internal-key order.

use std::path::PathBuf;

use serde_json::{Value, json};
use siftdb::table::{TableEntry, ValueKind};

use super::open::{describe, open_table};
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
    /// Show at most this many entries.
    #[arg(long)]
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

/// Runs `sst scan`.
///
/// # Errors
/// A one-line message for a bad key argument, an unreadable table, or a
/// data block that fails its checksum mid-scan.
pub fn run(a: &Args) -> Result<Outcome, String> {
    let from = a.from.as_deref().map(|k| parse(k, a.hex)).transpose()?;
    let to = a.to.as_deref().map(|k| parse(k, a.hex)).transpose()?;
    let table = open_table(&a.file)?;
    let mut it = table.iter();
    if let Some(from) = &from {
        it.seek(from).map_err(|e| describe(&a.file, &e))?;
    }
    let limit = a.limit.unwrap_or(usize::MAX);
    let mut entries: Vec<TableEntry> = Vec::new();
    let mut truncated = false;
    for e in it {
        let e = e.map_err(|e| describe(&a.file, &e))?;
        if to.as_deref().is_some_and(|to| e.user_key.as_ref() >= to) {
            break;
        }
        if entries.len() == limit {
            truncated = true;
            break;
        }
        entries.push(e);
    }
    if a.json {
        let list: Vec<Value> =
            entries.iter().map(|e| entry_json(&e.user_key, Some(e.seq), e.kind, &e.value, a.hex)).collect();
        output::print_json(&json!({
            "path": a.file.display().to_string(),
            "count": list.len(),
            "truncated": truncated,
            "entries": list,
        }));
    } else {
        for e in &entries {
            match e.kind {
                ValueKind::Value => {
                    println!("{} @{} value {}", show(&e.user_key, a.hex), e.seq, show(&e.value, a.hex));
                }
                ValueKind::Tombstone => println!("{} @{} tombstone", show(&e.user_key, a.hex), e.seq),
            }
        }
        if truncated {
            println!("(limit {limit} reached)");
        }
    }
    Ok(Outcome::Clean)
}
