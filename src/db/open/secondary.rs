//! Opening a database another process holds, as a secondary: without the
//! lock, from a recovery scan repeated until it saw one state whole.
//!
//! The writer changes the directory while the scan reads it: it appends
//! manifest edits, rolls to a new manifest, and deletes the tables and logs
//! an edit has dropped. Each deletion comes only after the edit that makes
//! it safe is in the manifest, and every edit grows the manifest or moves
//! `CURRENT` (`crate::recovery::manifest_mark`). A scan that found every
//! file its manifest names (tables opened, logs read) holds that manifest's
//! state whole, whatever the writer did next. A scan that found one
//! missing is damage only if the mark held through it; else the writer
//! deleted the file after a newer edit, and the scan is repeated, reusing
//! the tables it opened, so a busy writer costs the repeats only its new
//! tables.
//!
//! The logs are read as they stand: a batch being appended is a torn tail
//! and left out (it was not acknowledged before the scan began).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use crate::fs::{FileSystem, RefuseWrites};
use crate::manifest::{ManifestWriter, VersionSet};
use crate::memtable::Memtable;
use crate::options::Options;
use crate::policy::FilterPolicy;
use crate::recovery::{RecoveryReport, SCAN_RETRY_TIME, manifest_mark, scan_reusing};
use crate::tree::{TableFile, Tree};
use crate::{Error, Result};

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
/// What opening read-only returns, when a scan the manifest did not move
/// under finds it; `Io` if the manifest moved under every attempt for
/// [`SCAN_RETRY_TIME`].
pub(crate) fn catch_up(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    opts: &Options,
    mut open: HashMap<u64, Arc<TableFile>>,
    cleanup_failures: &Arc<AtomicU64>,
) -> Result<CaughtUp> {
    let mut last_error = None;
    let started = Instant::now();
    for attempt in 0u64.. {
        if attempt > 0 {
            if started.elapsed() >= SCAN_RETRY_TIME {
                break;
            }
            std::thread::sleep(Duration::from_millis(attempt.min(10)));
        }
        let before = match manifest_mark(&**fs, dir) {
            Ok(mark) => mark,
            // A manifest roll between reading CURRENT and the manifest.
            Err(e) => {
                last_error = Some(e);
                continue;
            }
        };
        let scanned = scan_reusing(&**fs, dir, opts.recovery, &|n| open.contains_key(&n));
        let settled = manifest_mark(&**fs, dir).is_ok_and(|after| after == before);
        let mut scanned = match scanned {
            Ok(s) => s,
            // A file gone under the scan is no verdict even with the mark
            // held: the writer deletes what an edit already dropped (an
            // older log the scan reads for its report) after that edit.
            Err(e) if settled && !vanished(&e) => return Err(e),
            Err(e) => {
                last_error = Some(e);
                continue;
            }
        };
        // Kept whatever this attempt's verdict: the next one reuses them.
        open.extend(recovery::table_files(fs, Some(&mut scanned), cleanup_failures));
        // A clean scan is one whole state even if the manifest moved on:
        // every file its manifest named was there, open or read whole. A
        // refusal is damage only if the manifest held still meanwhile.
        if let Some(e) = scanned.refusal() {
            if settled {
                return Err(e);
            }
            last_error = Some(e);
            continue;
        }
        let mut set = scanned.manifest.state.clone();
        let (policy, superseded) = resolve_policy(&scanned.manifest.path, &set, opts)?;
        let replaced_policy = superseded.or_else(|| set.replaced_policy.clone());
        let manifest_number = scanned.manifest.number;
        let tree = Tree::from_version(&set.version, &open);
        let replayed = recovery::read_only(scanned);
        set.last_seq = replayed.last_seq;
        set.wal_ends.clone_from(&replayed.wal_ends);
        return Ok(CaughtUp {
            wal_number: replayed.active_log.unwrap_or(set.log_number),
            set,
            manifest_number,
            tree,
            mem: replayed.mem,
            policy,
            replaced_policy,
            report: replayed.report,
        });
    }
    Err(last_error.unwrap_or_else(|| {
        Error::Io(std::io::Error::other(format!(
            "{}: the writer changed the database during every attempt to read it, for {} s",
            dir.display(),
            SCAN_RETRY_TIME.as_secs()
        )))
    }))
}

/// Whether `e` says a file was not found.
pub(crate) fn vanished(e: &Error) -> bool {
    matches!(e, Error::Io(io) if io.kind() == std::io::ErrorKind::NotFound)
}

/// Opens `dir` for [`super::super::Db::open_secondary`]: as a read-only
/// open, without the lock, from one whole state.
pub(crate) fn open_secondary(dir: &Path, opts: Options) -> Result<Opened> {
    check_options(&opts)?;
    let fs = Arc::clone(&opts.fs);
    existing_database(&*fs, dir)?;
    let cleanup_failures = Arc::new(AtomicU64::new(0));
    let mut c = catch_up(&fs, dir, &opts, HashMap::new(), &cleanup_failures)?;
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
