//! `siftdb sst verify`: a full check of one table or of every `*.sst` in a
//! directory.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use siftdb::Error;
use siftdb::fs::StdFs;
use siftdb::table::verify_table;

use super::open::describe;
use crate::Outcome;
use crate::output;

/// Arguments of `sst verify`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A table file, or a directory whose `*.sst` files are all checked.
    path: PathBuf,
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
}

/// The result of checking one table, as the JSON object `sst verify` and
/// `db verify` print: `problems` is empty when the table is sound;
/// `error` is set (and the counts are 0) when it could not be read as a
/// table at all.
#[must_use]
pub fn verify_one(path: &Path) -> Value {
    check(path).0
}

/// [`verify_one`]'s result, and the error that kept the table from being
/// read, if one did.
fn check(path: &Path) -> (Value, Option<Error>) {
    match verify_table(&StdFs, path) {
        Ok(r) => (
            json!({
                "path": path.display().to_string(),
                "ok": r.is_clean(),
                "error": null,
                "blocks_checked": r.blocks_checked,
                "entries_checked": r.entries_checked,
                "keys_probed": r.keys_probed,
                "prefixes_probed": r.prefixes_probed,
                "range_keys_probed": r.range_keys_probed,
                "range_tombstones_checked": r.range_tombstones_checked,
                "unreadable_data_blocks": r.unreadable_data_blocks,
                "properties_compared": r.properties_compared,
                "problems": r.problems.iter().map(|p| json!({"offset": p.offset, "what": p.what})).collect::<Vec<_>>(),
            }),
            None,
        ),
        Err(e) => (
            json!({
                "path": path.display().to_string(),
                "ok": false,
                "error": describe(path, &e),
                "blocks_checked": 0,
                "entries_checked": 0,
                "keys_probed": 0,
                "prefixes_probed": 0,
                "range_keys_probed": 0,
                "range_tombstones_checked": 0,
                "unreadable_data_blocks": 0,
                "properties_compared": false,
                "problems": [],
            }),
            Some(e),
        ),
    }
}

/// Every `*.sst` file directly in `dir`, sorted by name.
///
/// # Errors
/// A one-line message if `dir` cannot be listed.
pub fn tables_in(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut out: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "sst"))
        .collect();
    out.sort();
    Ok(out)
}

/// Prints a table's verify result as text lines.
pub fn print_text(v: &Value) {
    let path = v["path"].as_str().unwrap_or_default();
    if let Some(err) = v["error"].as_str() {
        println!("{err}");
        return;
    }
    let problems = v["problems"].as_array().map(Vec::as_slice).unwrap_or_default();
    for p in problems {
        println!("{path}: offset {}: {}", p["offset"], p["what"].as_str().unwrap_or_default());
    }
    if let Some(n) = v["unreadable_data_blocks"].as_u64().filter(|n| *n > 0) {
        println!(
            "{path}: note: {n} data block(s) unreadable, so the properties were not compared with the contents"
        );
    }
    println!(
        "{path}: {} ({} blocks, {} entries, {} keys probed against the filter)",
        if problems.is_empty() { "OK".to_string() } else { format!("{} problem(s)", problems.len()) },
        v["blocks_checked"],
        v["entries_checked"],
        v["keys_probed"]
    );
}

/// Runs `sst verify`.
///
/// Damage is a problem found (exit 1) wherever it is: in a data block, in
/// the footer, or a file cut short or not a table at all (which a damaged
/// footer cannot be told from), in a FILE as in a DIR; so is a DIR holding
/// no `*.sst` file (nothing was verified).
///
/// # Errors
/// A one-line message (exit 2) if a single FILE cannot be checked at all:
/// missing or unreadable, or written by a newer siftdb; or if a DIR cannot
/// be listed.
pub fn run(a: &Args) -> Result<Outcome, String> {
    let mut error = None;
    let results: Vec<Value> = if a.path.is_dir() {
        let tables = tables_in(&a.path)?;
        if tables.is_empty() {
            error = Some(format!(
                "{}: no table files (*.sst) in this directory: nothing verified",
                a.path.display()
            ));
        }
        tables.iter().map(|p| verify_one(p)).collect()
    } else {
        let (v, e) = check(&a.path);
        if let Some(e) = e.filter(|e| !e.is_corruption()) {
            return Err(describe(&a.path, &e));
        }
        vec![v]
    };
    let problems: usize = results
        .iter()
        .map(|v| v["problems"].as_array().map_or(0, Vec::len) + usize::from(!v["error"].is_null()))
        .sum::<usize>()
        + usize::from(error.is_some());
    if a.json {
        output::print_json(&json!({
            "path": a.path.display().to_string(),
            "ok": problems == 0,
            "tables_checked": results.len(),
            "problems": problems,
            "error": error,
            "tables": results,
        }));
    } else {
        results.iter().for_each(print_text);
        if let Some(e) = &error {
            println!("{e}");
        }
        println!("{} table(s) checked, {problems} problem(s)", results.len());
    }
    Ok(if problems == 0 { Outcome::Clean } else { Outcome::ProblemsFound })
}
