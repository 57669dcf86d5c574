//! `siftdb db recover DIR --point-in-time`: what `db verify` recommends
//! when a WAL was cut or damaged after it was synced. The default open
//! refuses such a database (serving what is left would bring back older
//! values and deleted keys without a word); this command says what a
//! point-in-time open would give up, and with the flag, gives it up: the
//! database keeps every write before the cut, and its manifest records
//! the loss, which `db info` and `Db::stats` show from then on.

use std::path::PathBuf;

use serde_json::json;
use siftdb::fs::StdFs;
use siftdb::recovery::{RecoveryReport, RecoveryScan, scan};
use siftdb::{Db, Options, RecoveryMode};

use super::report::{lost_text, lost_writes_json, recovery_json};
use super::{describe, inspect};
use crate::Outcome;
use crate::output;

/// Arguments of `db recover`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The database directory.
    dir: PathBuf,
    /// Open in point-in-time mode, keeping the writes before a WAL cut or
    /// damage and giving up the synced writes after it. Required: without
    /// it the command only says what would be lost.
    #[arg(long)]
    point_in_time: bool,
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
}

/// What a point-in-time open gives up, in one line.
fn loss_text(scan: &RecoveryScan, r: &RecoveryReport) -> String {
    let kept = format!("keeps every write through seq {}", scan.last_seq());
    match &r.cut {
        Some(cut) => format!(
            "WAL {} was synced through byte {} but its whole records end at byte {}: a point-in-time \
             recovery {kept} and loses {} synced write(s) after the cut",
            cut.path.display(),
            cut.recorded.len,
            cut.found,
            lost_text(r.synced_writes_lost)
        ),
        None => format!(
            "a point-in-time recovery {kept} and drops {} byte(s) of WAL after the damage it stops at",
            r.torn_bytes
        ),
    }
}

/// Runs `db recover`: exit 0 when the database opens (as it was, or after
/// recovering with `--point-in-time`); without the flag, a database that
/// needs it is refused with what it would lose (exit 2).
///
/// # Errors
/// A one-line message when the directory is not a database, when the
/// recovery needs the flag, or when even a point-in-time open fails.
pub fn run(a: &Args) -> Result<Outcome, String> {
    let dir = &a.dir;
    let Some(strict_refusal) = inspect(dir)?.refusal() else {
        let text = format!("{}: nothing to recover: the database opens as it is", dir.display());
        report(a, &text, json!({ "needed": false, "recovered": false }));
        return Ok(Outcome::Clean);
    };
    let mut pit = scan(&StdFs, dir, RecoveryMode::PointInTime).map_err(|e| describe(dir, &e))?;
    if let Some(e) = pit.refusal() {
        return Err(format!(
            "{}: a point-in-time recovery cannot open it either ({}); the default open refuses with: {}",
            dir.display(),
            describe(dir, &e),
            describe(dir, &strict_refusal)
        ));
    }
    let plan = loss_text(&pit, &pit.report());
    if !a.point_in_time {
        return Err(format!(
            "{}: {plan}; nothing changed: rerun with --point-in-time to recover",
            dir.display()
        ));
    }
    if !a.json {
        println!("{}: {plan}", dir.display());
    }
    let opts = Options { recovery: RecoveryMode::PointInTime, ..Options::default() };
    let db = Db::open(dir, opts).map_err(|e| describe(dir, &e))?;
    let stats = db.stats();
    db.close().map_err(|e| describe(dir, &e))?;
    let r = &stats.recovery;
    let text = format!(
        "recovered: {} operation(s) replayed from {} WAL(s); the loss is recorded in the manifest (`siftdb db \
         info` shows it)",
        r.ops_replayed, r.logs_replayed
    );
    let lost: Vec<_> = stats.lost_writes.iter().map(lost_writes_json).collect();
    report(
        a,
        &text,
        json!({ "needed": true, "recovered": true, "plan": plan, "recovery": recovery_json(r), "lost_writes": lost }),
    );
    Ok(Outcome::Clean)
}

fn report(a: &Args, text: &str, mut doc: serde_json::Value) {
    if a.json {
        doc["path"] = json!(a.dir.display().to_string());
        doc["ok"] = json!(true);
        output::print_json(&doc);
    } else {
        println!("{text}");
    }
}
