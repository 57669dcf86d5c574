//! Opening a database another process holds, as a secondary: without the
//! lock, from a recovery scan repeated until it saw one state whole.
//!
//! What a whole state is, and how the scan is repeated until it reads one
//! beside a writer, is `crate::recovery::scan_whole`'s rule (shared with
//! `db info`): this opens the tables it found into the tree.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use crate::Result;
use crate::fs::{FileSystem, RefuseWrites};
use crate::manifest::{ManifestWriter, VersionSet};
use crate::memtable::Memtable;
use crate::options::Options;
use crate::policy::FilterPolicy;
use crate::recovery::{RecoveryReport, scan_whole};
use crate::table::Table;
use crate::tree::{TableFile, Tree};

use super::{
    ManifestState, Opened, Recovered, assemble, check_options, existing_database, recovery, resolve_budget,
    resolve_policy,
};

/// One whole state of a database, read without its lock.
pub(crate) struct CaughtUp {
    /// The manifest's state, with the logs' last sequence number.
    pub set: VersionSet,
    pub manifest_number: u64,
    pub tree: Tree,
    /// The logs' writes not yet in tables.
    pub mem: Memtable,
    /// The newest log read (the manifest's log number if none).
    pub wal_number: u64,
    pub policy: FilterPolicy,
    pub replaced_policy: Option<String>,
    pub report: RecoveryReport,
}

/// Reads one whole state of the database in `dir`, opening only the
/// tables `open` lacks.
///
/// # Errors
/// What opening read-only returns, once the scan stands
/// (`recovery::scan_whole`).
pub(crate) fn catch_up(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    opts: &Options,
    open: &HashMap<u64, Arc<TableFile>>,
    cleanup_failures: &Arc<AtomicU64>,
) -> Result<CaughtUp> {
    let mut opened: HashMap<u64, Table> = open.iter().map(|(&n, t)| (n, t.table.clone())).collect();
    let mut scanned = scan_whole(&**fs, dir, opts.recovery, &mut opened)?;
    if let Some(e) = scanned.refusal() {
        return Err(e);
    }
    let tables = recovery::table_files(fs, Some(&mut scanned), cleanup_failures);
    let mut set = scanned.manifest.state.clone();
    let (policy, superseded) = resolve_policy(&scanned.manifest.path, &set, opts)?;
    let replaced_policy = superseded.or_else(|| set.replaced_policy.clone());
    let manifest_number = scanned.manifest.number;
    let tree = Tree::from_version(&set.version, &tables);
    let replayed = recovery::read_only(scanned);
    set.last_seq = replayed.last_seq;
    set.wal_ends.clone_from(&replayed.wal_ends);
    Ok(CaughtUp {
        wal_number: replayed.active_log.unwrap_or(set.log_number),
        set,
        manifest_number,
        tree,
        mem: replayed.mem,
        policy,
        replaced_policy,
        report: replayed.report,
    })
}

/// Opens `dir` for [`super::super::Db::open_secondary`]: as a read-only
/// open, without the lock, from one whole state.
pub(crate) fn open_secondary(dir: &Path, opts: Options) -> Result<Opened> {
    check_options(&opts)?;
    let fs = Arc::clone(&opts.fs);
    existing_database(&*fs, dir)?;
    let cleanup_failures = Arc::new(AtomicU64::new(0));
    let mut c = catch_up(&fs, dir, &opts, &HashMap::new(), &cleanup_failures)?;
    resolve_budget(&mut c.set, &opts, &c.policy)?;
    let recovered = Recovered {
        lock: None,
        salt: c.set.hash_salt.unwrap_or(0),
        tree: c.tree,
        mem: c.mem,
        wal: crate::wal::writer(Box::new(RefuseWrites)),
        wal_number: c.wal_number,
        next_file: c.set.next_file_number,
        manifest: ManifestState {
            base_len: 0,
            writer: ManifestWriter::refusing(c.manifest_number),
            set: c.set,
        },
        read_only: true,
        secondary: true,
        cleanup_failures,
        policy: c.policy,
        replaced_policy: c.replaced_policy,
        recovery: c.report,
    };
    Ok(assemble(dir, opts, recovered))
}
