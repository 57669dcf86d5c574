//! `siftdb db`: inspect, check and use a database directory.

mod info;
mod ops;
mod recover;
mod report;
mod verify;

use std::path::Path;

use clap::Subcommand;
use siftdb::Error;
use siftdb::fs::StdFs;
use siftdb::recovery::{RecoveryScan, inspect_db};

use crate::Outcome;

/// The `db` subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Levels, tables, filters and their memory, target rates, WAL and manifest state (read-only).
    #[command(visible_alias = "stats")] // RocksDB's name for it
    Info(info::Args),
    /// Check every table, the manifest and the WALs without modifying anything.
    Verify(verify::Args),
    /// Print the value of a key.
    Get(ops::GetArgs),
    /// Write a key (creates the database if the directory is missing or empty).
    Put(ops::PutArgs),
    /// Delete a key.
    Delete(ops::KeyArgs),
    /// Delete every key from START up to (not including) END, in one write.
    DeleteRange(ops::RangeArgs),
    /// Live keys in order.
    Scan(ops::ScanArgs),
    /// Write a consistent copy of the database into DST, a new directory
    /// (tables hard-linked where the file system allows).
    Checkpoint(ops::CheckpointArgs),
    /// Install tables built elsewhere (`siftdb sst write`) in one step:
    /// checked whole, newer than every earlier write, all or nothing.
    Ingest(ops::IngestArgs),
    /// Write the memtable to a level-0 table.
    Flush(ops::Common),
    /// Compact until every level is within its target size.
    Compact(ops::Common),
    /// Recover a database whose WAL was cut or damaged after it was synced
    /// (what `db verify` recommends): says what would be lost, and with
    /// `--point-in-time` recovers, recording the loss.
    Recover(recover::Args),
}

/// Runs one `db` subcommand.
///
/// # Errors
/// A one-line message (exit 2) for bad arguments or a directory that is
/// not a database.
pub fn run(cmd: &Command) -> Result<Outcome, String> {
    match cmd {
        Command::Info(a) => info::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Get(a) => ops::get(a),
        Command::Put(a) => ops::put(a),
        Command::Delete(a) => ops::delete(a),
        Command::DeleteRange(a) => ops::delete_range(a),
        Command::Scan(a) => ops::scan(a),
        Command::Checkpoint(a) => ops::checkpoint(a),
        Command::Ingest(a) => ops::ingest(a),
        Command::Flush(c) => ops::maintain(c, false),
        Command::Compact(c) => ops::maintain(c, true),
        Command::Recover(a) => recover::run(a),
    }
}

/// One line naming `dir` for an inspection error.
#[must_use]
pub fn describe(dir: &Path, e: &Error) -> String {
    match e {
        Error::InvalidArgument(msg) => msg.clone(),
        // These name their path already.
        Error::Corruption { file: Some(_), .. }
        | Error::Unsupported { file: Some(_), .. }
        | Error::Locked(_) => e.to_string(),
        Error::Io(io) => format!("{}: {io}", dir.display()),
        other => format!("{}: {other}", dir.display()),
    }
}

/// Reads the database in `dir` read-only.
///
/// # Errors
/// As [`describe`] renders [`inspect_db`]'s errors.
pub fn inspect(dir: &Path) -> Result<RecoveryScan, String> {
    inspect_db(&StdFs, dir).map_err(|e| describe(dir, &e))
}

/// Opens the database in `dir` for reading: read-only, or, when another
/// process holds it (`Locked`), as a secondary that reads beside the
/// holder without disturbing it, saying so on stderr.
///
/// # Errors
/// Those of [`Db::open_read_only`], or of [`Db::open_secondary`] when held.
pub fn open_for_reading(dir: &Path, opts: siftdb::Options) -> Result<siftdb::Db, Error> {
    match siftdb::Db::open_read_only(dir, opts.clone()) {
        Err(Error::Locked(_)) => {
            eprintln!(
                "siftdb: {}: held by another process; reading it as a secondary \
                 (what the holder had published when this command began)",
                dir.display()
            );
            siftdb::Db::open_secondary(dir, opts)
        }
        opened => opened,
    }
}
