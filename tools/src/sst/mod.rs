//! `siftdb sst`: inspect and check one table file, read-only, or write
//! one from sorted lines (`sst write`).

mod filter_params;
pub mod fpr;
pub mod info;
mod layout;
pub mod open;
mod probe;
mod probe_prefix;
mod probe_range;
pub mod range_filter;
pub mod scan;
pub mod verify;
mod write;

use std::path::PathBuf;

use clap::Subcommand;

use crate::Outcome;

/// The `sst` subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Footer, blocks, key and sequence ranges, counts, and the filter in full.
    Info {
        /// The table file.
        file: PathBuf,
        /// Print keys as hex.
        #[arg(long)]
        hex: bool,
        /// Print one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Entries in order, with sequence number and kind.
    #[command(visible_alias = "dump")] // sst_dump's name for it
    Scan(scan::Args),
    /// Check every checksum, key order, the filter (no false negatives) and the properties.
    Verify(verify::Args),
    /// Measure the filter's false-positive rate on random absent keys.
    Fpr(fpr::Args),
    /// What the filter says about one key, and whether the table holds it.
    Probe(probe::Args),
    /// The file as a list of regions: data blocks, index, filter, range tombstones, properties, footer, trailers.
    Layout {
        /// The table file.
        file: PathBuf,
        /// Print one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Write a new table from sorted `KEY<TAB>VALUE` lines (a key alone: a deletion) on stdin.
    Write(write::Args),
}

/// Runs one `sst` subcommand.
///
/// # Errors
/// A one-line message (exit 2) for bad arguments or a file that is not a
/// readable table.
pub fn run(cmd: &Command) -> Result<Outcome, String> {
    match cmd {
        Command::Info { file, hex, json } => info::run(file, *hex, *json),
        Command::Scan(a) => scan::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Fpr(a) => fpr::run(a),
        Command::Probe(a) => probe::run(a),
        Command::Layout { file, json } => layout::run(file, *json),
        Command::Write(a) => write::run(a),
    }
}
