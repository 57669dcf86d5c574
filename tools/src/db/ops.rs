//! `siftdb db get|put|delete|scan|flush|compact`: using a database from
//! the shell. `get` and `scan` open it read-only (nothing in the directory
//! changes); the others open it for writing (taking its lock).

use std::ops::Bound;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use siftdb::ValueKind;
use siftdb::{Db, FilterPolicy, Options};

use super::describe;
use crate::Outcome;
use crate::bytes_arg::{parse, show};
use crate::output;
use crate::sst::open::problem_json;
use crate::sst::scan::{EntrySink, entry_json};

/// Options shared by every command that opens a database.
#[derive(Debug, clap::Args)]
pub struct Reading {
    /// The database directory.
    pub dir: PathBuf,
    /// Read and print keys and values as hex.
    #[arg(long)]
    pub hex: bool,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
}

/// Options of the commands that write: only they take `--policy`, since
/// only they store it (a read-only open would silently ignore it).
#[derive(Debug, clap::Args)]
pub struct Common {
    #[command(flatten)]
    db: Reading,
    /// Filter policy for tables this command writes, stored in the database
    /// in place of the old one: `default`, a kind such as `fuse8`,
    /// `per-level:blocked-bloom:10,fuse8`, or `monkey:B`, each optionally
    /// with `+skip-last`. Without it, the database's stored policy is used.
    #[arg(long, value_parser = crate::policy_arg::parse)]
    policy: Option<FilterPolicy>,
}

/// Arguments of `db get`.
#[derive(Debug, clap::Args)]
pub struct GetArgs {
    #[command(flatten)]
    common: Reading,
    /// The key.
    key: String,
}

/// Arguments of `db delete`.
#[derive(Debug, clap::Args)]
pub struct KeyArgs {
    #[command(flatten)]
    common: Common,
    /// The key.
    key: String,
}

/// Arguments of `db delete-range`.
#[derive(Debug, clap::Args)]
pub struct RangeArgs {
    #[command(flatten)]
    common: Common,
    /// The first key deleted.
    start: String,
    /// The first key kept after the range (it must sort after START).
    end: String,
}

/// Arguments of `db checkpoint`.
#[derive(Debug, clap::Args)]
pub struct CheckpointArgs {
    #[command(flatten)]
    common: Common,
    /// The new directory for the copy (absent or empty).
    dst: PathBuf,
}

/// Arguments of `db ingest`.
#[derive(Debug, clap::Args)]
pub struct IngestArgs {
    #[command(flatten)]
    common: Common,
    /// The tables to install (built with `siftdb sst write` or `TableWriter`).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Remove each file once the ingest is durable.
    #[arg(long = "move")]
    move_files: bool,
    /// Accept files whose key ranges overlap (later files win, at level 0).
    #[arg(long)]
    allow_overlap: bool,
}

/// Arguments of `db put`.
#[derive(Debug, clap::Args)]
pub struct PutArgs {
    #[command(flatten)]
    common: Common,
    /// The key.
    key: String,
    /// The value.
    value: String,
}

/// Arguments of `db scan`.
#[derive(Debug, clap::Args)]
pub struct ScanArgs {
    #[command(flatten)]
    common: Reading,
    /// First key to show (inclusive).
    #[arg(long)]
    from: Option<String>,
    /// Key to stop before (exclusive).
    #[arg(long)]
    to: Option<String>,
    /// Only keys starting with this prefix.
    #[arg(long)]
    prefix: Option<String>,
    /// Show at most this many entries (at least 1; omit for no limit).
    #[arg(long, value_parser = crate::numbers::limit)]
    limit: Option<usize>,
    /// Last key first (with `--limit N`: the last N keys of the range).
    #[arg(long)]
    reverse: bool,
}

/// How a command opens the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// [`Db::open_read_only`], or a secondary if another process holds
    /// the database: writes nothing.
    Read,
    /// [`Db::open`] on an existing database.
    Write,
    /// [`Db::open`], creating the database if the directory is missing or empty.
    Create,
}

/// Opens the database in `dir`. Only `put` may create one; every other
/// command refuses a directory without a database.
fn open(dir: &Path, policy: Option<&FilterPolicy>, mode: Mode) -> Result<Db, String> {
    let exists = dir.join(siftdb::manifest::CURRENT).is_file();
    if !exists && mode != Mode::Create {
        // The wording of `db info` and `db verify` (issue 30).
        return Err(if dir.is_dir() {
            format!("{}: not a siftdb database (no CURRENT file)", dir.display())
        } else if dir.exists() {
            format!("{}: not a directory", dir.display())
        } else {
            format!("{}: no such directory", dir.display())
        });
    }
    let opts = Options { filter_policy: policy.cloned(), ..Options::default() };
    let db = match mode {
        Mode::Read => super::open_for_reading(dir, opts),
        Mode::Write | Mode::Create => Db::open(dir, opts),
    };
    db.map_err(|e| describe(dir, &e))
}

fn close(db: &Db, dir: &Path) -> Result<(), String> {
    db.close().map_err(|e| describe(dir, &e))
}

/// Runs `db get`: prints the value (exit 0), or `(not found)` (exit 1, as
/// `git config` does, so a script can test for the key). Damage met while
/// looking the key up is a problem found (exit 1 too, reported on stderr
/// with its offset, and as `error` in the JSON); never a "not found".
///
/// # Errors
/// A one-line message if the database cannot be opened, or an I/O error.
pub fn get(a: &GetArgs) -> Result<Outcome, String> {
    let c = &a.common;
    let key = parse(&a.key, c.hex)?;
    let db = open(&c.dir, None, Mode::Read)?;
    let value = match db.get(&key) {
        Ok(value) => value,
        Err(e) if e.is_corruption() => {
            close(&db, &c.dir)?;
            if c.json {
                output::print_json(&json!({
                    "path": c.dir.display().to_string(),
                    "key": show(&key, c.hex),
                    "found": Value::Null,
                    "value": Value::Null,
                    "error": problem_json(&c.dir, &e),
                }));
            } else {
                eprintln!("siftdb: {}", describe(&c.dir, &e));
            }
            return Ok(Outcome::ProblemsFound);
        }
        Err(e) => return Err(describe(&c.dir, &e)),
    };
    close(&db, &c.dir)?;
    if c.json {
        output::print_json(&json!({
            "path": c.dir.display().to_string(),
            "key": show(&key, c.hex),
            "found": value.is_some(),
            "value": value.as_ref().map(|v| show(v, c.hex)),
        }));
    } else {
        match &value {
            Some(v) => println!("{}", show(v, c.hex)),
            None => println!("(not found)"),
        }
    }
    Ok(if value.is_some() { Outcome::Clean } else { Outcome::NotFound })
}

/// Runs `db put` (creating the database if the directory is missing or empty).
///
/// # Errors
/// A one-line message if the database cannot be opened or written.
pub fn put(a: &PutArgs) -> Result<Outcome, String> {
    let c = &a.common.db;
    let key = parse(&a.key, c.hex)?;
    let value = parse(&a.value, c.hex)?;
    let db = open(&c.dir, a.common.policy.as_ref(), Mode::Create)?;
    db.put(&key, &value).map_err(|e| describe(&c.dir, &e))?;
    close(&db, &c.dir)?;
    report(c, "put", json!({ "key": show(&key, c.hex), "value_bytes": value.len() }));
    Ok(Outcome::Clean)
}

/// Runs `db delete`.
///
/// # Errors
/// A one-line message if the database cannot be opened or written.
pub fn delete(a: &KeyArgs) -> Result<Outcome, String> {
    let c = &a.common.db;
    let key = parse(&a.key, c.hex)?;
    let db = open(&c.dir, a.common.policy.as_ref(), Mode::Write)?;
    db.delete(&key).map_err(|e| describe(&c.dir, &e))?;
    close(&db, &c.dir)?;
    report(c, "delete", json!({ "key": show(&key, c.hex) }));
    Ok(Outcome::Clean)
}

/// Runs `db delete-range`.
///
/// # Errors
/// A one-line message if the range is empty or reversed, or the database
/// cannot be opened or written.
pub fn delete_range(a: &RangeArgs) -> Result<Outcome, String> {
    let c = &a.common.db;
    let (start, end) = (parse(&a.start, c.hex)?, parse(&a.end, c.hex)?);
    if start >= end {
        // Said before the database is opened, so a typo creates nothing.
        return Err(format!(
            "delete-range: START {} must sort before END {}",
            show(&start, c.hex),
            show(&end, c.hex)
        ));
    }
    let db = open(&c.dir, a.common.policy.as_ref(), Mode::Write)?;
    db.delete_range(&start, &end).map_err(|e| describe(&c.dir, &e))?;
    close(&db, &c.dir)?;
    report(c, "delete-range", json!({ "start": show(&start, c.hex), "end": show(&end, c.hex) }));
    Ok(Outcome::Clean)
}

/// Runs `db checkpoint`.
///
/// # Errors
/// A one-line message if the database cannot be opened or the copy fails.
pub fn checkpoint(a: &CheckpointArgs) -> Result<Outcome, String> {
    let c = &a.common.db;
    let db = open(&c.dir, a.common.policy.as_ref(), Mode::Write)?;
    db.checkpoint(&a.dst).map_err(|e| describe(&a.dst, &e))?;
    close(&db, &c.dir)?;
    report(c, "checkpoint", json!({ "dst": a.dst.display().to_string() }));
    Ok(Outcome::Clean)
}

/// Runs `db ingest`: installs the files in one step and reports where
/// each went.
///
/// # Errors
/// A one-line message if the database cannot be opened or the ingest is
/// refused (the database is then unchanged).
pub fn ingest(a: &IngestArgs) -> Result<Outcome, String> {
    let c = &a.common.db;
    let db = open(&c.dir, a.common.policy.as_ref(), Mode::Write)?;
    let opts = siftdb::IngestOptions {
        move_files: a.move_files,
        allow_overlap: a.allow_overlap,
        ..Default::default()
    };
    let got = db.ingest_with(&a.files, &opts).map_err(|e| describe(&c.dir, &e))?;
    close(&db, &c.dir)?;
    let tables: Vec<Value> = got
        .tables
        .iter()
        .map(|t| {
            json!({
                "source": t.source.display().to_string(),
                "file_number": t.file_number,
                "level": t.level,
                "entries": t.entries,
                "bytes": t.bytes,
                "rebuilt": t.rebuilt,
            })
        })
        .collect();
    if !c.json {
        for t in &got.tables {
            let rebuilt = if t.rebuilt { " (rewritten: its filter had another salt)" } else { "" };
            println!(
                "{} -> level {} as table {}: {}{rebuilt}",
                t.source.display(),
                t.level,
                t.file_number,
                output::count(t.entries, "entry", "entries")
            );
        }
    }
    report(c, "ingest", json!({ "seq": got.seq, "tables": tables }));
    Ok(Outcome::Clean)
}

/// Runs `db flush` or `db compact`.
///
/// # Errors
/// A one-line message if the database cannot be opened or the work fails.
pub fn maintain(w: &Common, compact: bool) -> Result<Outcome, String> {
    let c = &w.db;
    let db = open(&c.dir, w.policy.as_ref(), Mode::Write)?;
    let r = if compact { db.compact() } else { db.flush() };
    r.map_err(|e| describe(&c.dir, &e))?;
    let stats = db.stats();
    let levels: Vec<Value> = stats
        .levels
        .iter()
        // `LevelStats::keys` counts entries, every version and tombstone
        // (`db info`'s `keys` are distinct keys): named for what it counts.
        .map(|l| {
            json!({
                "level": l.level,
                "tables": l.tables,
                "entries": l.keys,
                "bytes": l.bytes,
                "range_tombstones": l.range_tombstones,
            })
        })
        .collect();
    close(&db, &c.dir)?;
    // The counter starts at this open, so it is exactly what this command's
    // flush or compaction gave back; `db info` opens nothing that could count it.
    let doc = json!({ "levels": levels, "range_deleted_entries": stats.range_deleted_entries });
    report(c, if compact { "compact" } else { "flush" }, doc);
    Ok(Outcome::Clean)
}

fn report(c: &Reading, op: &str, mut doc: Value) {
    if let Some(m) = doc.as_object_mut() {
        m.insert("op".into(), json!(op));
        m.insert("path".into(), json!(c.dir.display().to_string()));
        m.insert("ok".into(), json!(true));
    }
    if c.json {
        output::print_json(&doc);
    } else {
        println!("{op}: ok");
        let levels = doc["levels"].as_array().map(Vec::as_slice).unwrap_or_default();
        let n = |l: &Value, field: &str| l[field].as_u64().unwrap_or(0);
        for l in levels.iter().filter(|l| n(l, "tables") != 0) {
            let tombstones = match n(l, "range_tombstones") {
                0 => String::new(),
                t => format!(", {}", output::count(t, "range tombstone", "range tombstones")),
            };
            println!(
                "  level {}: {}, {}, {}{tombstones}",
                l["level"],
                output::count(n(l, "tables"), "table", "tables"),
                output::count(n(l, "entries"), "entry", "entries"),
                output::count(n(l, "bytes"), "byte", "bytes")
            );
        }
        if let Some(dropped) = doc["range_deleted_entries"].as_u64().filter(|&d| d > 0) {
            println!("  {} dropped by range deletes", output::count(dropped, "version", "versions"));
        }
    }
}

/// Runs `db scan`: live keys in order, or last first with `--reverse`
/// (tombstones and older versions hidden), printed as they are read. A damaged table ends the scan after
/// the keys before the damage, with the problem reported (exit 1).
///
/// # Errors
/// A one-line message for bad keys or a database that cannot be opened.
pub fn scan(a: &ScanArgs) -> Result<Outcome, String> {
    let c = &a.common;
    let from = a.from.as_deref().map(|k| parse(k, c.hex)).transpose()?;
    let to = a.to.as_deref().map(|k| parse(k, c.hex)).transpose()?;
    let prefix = a.prefix.as_deref().map(|k| parse(k, c.hex)).transpose()?;
    let db = open(&c.dir, None, Mode::Read)?;
    let lo = from.as_deref().map_or(Bound::Unbounded, Bound::Included);
    let hi = to.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
    let iter = match &prefix {
        Some(p) => db.prefix(p),
        None => db.range((lo, hi)),
    };
    let iter: Box<dyn Iterator<Item = <siftdb::DbIter as Iterator>::Item>> =
        if a.reverse { Box::new(iter.rev()) } else { Box::new(iter) };
    let mut sink = EntrySink::new(c.json, a.limit);
    let mut error = None;
    for kv in iter {
        let (k, v) = match kv {
            Ok(kv) => kv,
            Err(e) => {
                error = Some(problem_json(&c.dir, &e));
                break;
            }
        };
        // With a prefix too, `--from` and `--to` bound the keys shown: the
        // scan skips keys short of the bound it starts at and ends past the
        // other.
        let below = from.as_deref().is_some_and(|f| k.as_ref() < f);
        let past = to.as_deref().is_some_and(|t| k.as_ref() >= t);
        if (below && a.reverse) || (past && !a.reverse) {
            break;
        }
        if below || past {
            continue;
        }
        let doc = || entry_json(&k, None, ValueKind::Value, &v, c.hex);
        if !sink.offer(doc, || format!("{} = {}", show(&k, c.hex), show(&v, c.hex))) {
            break;
        }
    }
    close(&db, &c.dir)?;
    Ok(sink.finish(&c.dir, error))
}
