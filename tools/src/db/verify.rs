//! `siftdb db verify`: every table, the manifest and the WALs, checked
//! without opening (or modifying) the database.

use std::path::PathBuf;

use serde_json::{Value, json};
use siftdb::Error;
use siftdb::table::Table;
use siftdb::wal::LogEnd;

use super::report::{log_json, lost_text, recovery_json};
use crate::Outcome;
use crate::bytes_arg::show;
use crate::output;
use crate::sst::verify::verify_one;

/// Arguments of `db verify`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The database directory.
    dir: PathBuf,
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
}

/// Runs `db verify`. A damaged manifest, a missing or damaged table, or a
/// WAL that strict recovery refuses is a problem (exit 1); a directory
/// that is not a database is exit 2.
///
/// # Errors
/// A one-line message if `dir` is not a database.
pub fn run(a: &Args) -> Result<Outcome, String> {
    let mut problems: Vec<Value> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut problem = |path: &str, offset: Option<u64>, what: String| {
        problems.push(json!({ "path": path, "offset": offset, "what": what }));
    };
    let inspection = match siftdb::recovery::inspect_db(&siftdb::fs::StdFs, &a.dir) {
        Ok(i) => Some(i),
        Err(e @ Error::Corruption { .. }) => {
            let (path, offset, what) = located(&e, &a.dir);
            problem(&path, offset, format!("manifest: {what}"));
            None
        }
        Err(e) => return Err(super::describe(&a.dir, &e)),
    };
    let mut tables: Vec<Value> = Vec::new();
    let mut logs: Vec<Value> = Vec::new();
    let mut recovery: Option<Value> = None;
    if let Some(i) = &inspection {
        // What stops the database from opening, as opening finds it (the
        // same scan): a stored policy that does not parse, a lost WAL.
        for e in i.policy_error.iter().chain(i.chain_error.iter()) {
            let (path, offset, what) = located(e, &a.dir);
            problem(&path, offset, what);
        }
        for t in &i.tables {
            let path = t.path.display().to_string();
            let r = &t.record;
            let Some(size) = t.actual_size else {
                problem(
                    &path,
                    None,
                    format!("table {} (level {}) named by the manifest is missing", r.file_number, t.level),
                );
                continue;
            };
            if r.max_seq > i.manifest.state.last_seq {
                problem(
                    &path,
                    None,
                    format!(
                        "holds seq {} beyond the manifest's last seq {}",
                        r.max_seq, i.manifest.state.last_seq
                    ),
                );
            }
            if size != r.file_size {
                problem(&path, None, format!("file is {size} bytes, the manifest says {}", r.file_size));
            }
            let v = verify_one(&t.path);
            if let Some(err) = v["error"].as_str() {
                // The problem carries the path; its text must not repeat it.
                let what = err.strip_prefix(&format!("{path}: ")).unwrap_or(err);
                problem(&path, None, what.to_string());
            }
            for p in v["problems"].as_array().map(Vec::as_slice).unwrap_or_default() {
                problem(&path, p["offset"].as_u64(), p["what"].as_str().unwrap_or_default().to_string());
            }
            // The manifest's record must describe the file it names.
            if let Ok(table) = Table::open_path(&t.path) {
                let p = table.properties();
                // An ingested table's file holds 0 throughout, and its record
                // the one number every entry reads at (format 9).
                let ingested = r.min_seq == r.max_seq && (p.min_seq, p.max_seq) == (0, 0);
                let seqs = if ingested { (r.min_seq, r.max_seq) } else { (p.min_seq, p.max_seq) };
                let check = |name: &str, manifest: String, file: String| {
                    (manifest != file).then(|| format!("manifest says {name} {manifest}, the table {file}"))
                };
                let opt =
                    |k: &Option<Vec<u8>>| k.as_deref().map_or_else(|| "none".into(), |k| show(k, false));
                for m in [
                    check("entries", r.entries.to_string(), p.entries.to_string()),
                    check("smallest key", show(&r.smallest, false), opt(&p.smallest_key)),
                    check("largest key", show(&r.largest, false), opt(&p.largest_key)),
                    check("min seq", r.min_seq.to_string(), seqs.0.to_string()),
                    check("max seq", r.max_seq.to_string(), seqs.1.to_string()),
                ]
                .into_iter()
                .flatten()
                {
                    problem(&path, None, m);
                }
            }
            tables.push(v);
        }
        for l in &i.logs {
            let path = l.path.display().to_string();
            match &l.error {
                Some(e) if l.replayed || l.missing => {
                    let offset = match e {
                        Error::Corruption { offset, .. } => Some(*offset),
                        _ => None,
                    };
                    problem(&path, offset, format!("WAL unreadable under strict recovery: {e}"));
                }
                Some(e) => notes.push(format!("{path}: damaged, but not replayed on open: {e}")),
                None => {}
            }
            if let Some(LogEnd::TornTail { at, dropped }) = &l.end {
                notes.push(format!(
                    "{path}: torn tail of {dropped} bytes at {at} (an unacknowledged write; dropped on open)"
                ));
            }
            // A live log is replayed on open: its writes are not in the
            // tables (the manifest's last seq counts writes an earlier open
            // recovered from it, so it cannot tell). An older log is.
            if !l.live {
                notes.push(format!(
                    "{path}: an older log whose writes are already in the tables (not replayed; deleted on \
                     the next open)"
                ));
            }
            logs.push(log_json(l));
        }
        let report = i.report();
        if let Some(cut) = &report.cut {
            notes.push(format!(
                "{}: a point-in-time open would recover through seq {} and lose {} synced write(s); \
                 `siftdb db recover {} --point-in-time` does it",
                cut.path.display(),
                i.last_seq(),
                lost_text(report.synced_writes_lost),
                a.dir.display()
            ));
        }
        // A loss taken earlier is history, not damage: a note, not a problem.
        for l in &i.manifest.state.lost_writes {
            notes.push(l.to_string());
        }
        recovery = Some(recovery_json(&report));
        if let LogEnd::TornTail { at, dropped } = &i.manifest.end {
            notes.push(format!(
                "{}: torn last edit of {dropped} bytes at {at} (dropped on open)",
                i.manifest.path.display()
            ));
        }
        for p in &i.unreferenced_tables {
            notes.push(format!("{}: not named by the manifest (removed at next open)", p.display()));
        }
    }
    if a.json {
        output::print_json(&json!({
            "path": a.dir.display().to_string(),
            "ok": problems.is_empty(),
            "manifest_ok": inspection.is_some(),
            "tables_checked": tables.len(),
            "logs_checked": logs.len(),
            "problems": problems,
            "notes": notes,
            "tables": tables,
            "wal": logs,
            "recovery": recovery,
        }));
    } else {
        for p in &problems {
            match p["offset"].as_u64() {
                Some(o) => println!(
                    "{}: offset {o}: {}",
                    p["path"].as_str().unwrap_or_default(),
                    p["what"].as_str().unwrap_or_default()
                ),
                None => println!(
                    "{}: {}",
                    p["path"].as_str().unwrap_or_default(),
                    p["what"].as_str().unwrap_or_default()
                ),
            }
        }
        for n in &notes {
            println!("note: {n}");
        }
        println!(
            "{}: {} table(s), {} WAL(s) checked, {} problem(s)",
            a.dir.display(),
            tables.len(),
            logs.len(),
            problems.len()
        );
    }
    Ok(if problems.is_empty() { Outcome::Clean } else { Outcome::ProblemsFound })
}

/// The path (the file the error names, else `dir`), offset and message of
/// a scan's error.
fn located(e: &Error, dir: &std::path::Path) -> (String, Option<u64>, String) {
    match e {
        Error::Corruption { file, offset, what } => {
            (file.as_deref().unwrap_or(dir).display().to_string(), Some(*offset), what.clone())
        }
        other => (dir.display().to_string(), None, other.to_string()),
    }
}
