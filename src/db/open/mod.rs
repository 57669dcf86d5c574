//! Opening a database: directory checks, the lock, recovery, a fresh
//! manifest, and the cleanup of files the durable state no longer names.
//!
//! Every open writes a new manifest holding one snapshot edit and points
//! `CURRENT` at it; only after that is durable are the old manifest,
//! tables and logs the state does not name, and temporary files deleted.
//! A read-only open ([`open_read_only`]) recovers the same state and
//! writes nothing; a secondary ([`open_secondary`]) does so without the
//! lock, beside a writer.

mod dir_check;
mod recovery;
mod secondary;

use std::collections::HashSet;
use std::hash::{BuildHasher, Hasher};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};

use crossbeam_channel::{Receiver, unbounded};
use parking_lot::{Condvar, Mutex, RwLock};

use crate::fs::{FileSystem, RefuseWrites};
use crate::manifest::{
    FileKind, ManifestWriter, NUM_LEVELS, VersionSet, log_file_name, parse_file_name, set_current,
};
use crate::memtable::Memtable;
use crate::policy::FilterPolicy;
use crate::recovery::RecoveryReport;
use crate::wal::FrameWriter;
use crate::{Error, Result};

use super::lock::DirLock;
use super::snapshot::SnapshotList;
use super::stats::Counters;
use super::write::{CommitQueue, WriteState};
use super::{BgSignal, DbInner, ManifestState};
use crate::options::Options;
use crate::tree::{MemRef, SuperVersion, Tree};
use dir_check::{Found, is_siftdb_name};

pub(crate) use recovery::list_logs;
pub(crate) use secondary::{catch_up, open_secondary};

/// The opened state and the receiving ends of the background channels.
pub(crate) type Opened = (Arc<DbInner>, Receiver<BgSignal>, Receiver<BgSignal>);

/// A random 64-bit salt, from std's per-process random hasher keys mixed
/// with the time and process id (no extra dependency).
fn random_salt() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    h.finish()
}

/// The policy to write tables with, and the stored one it replaces (if the
/// options name a different one). An unparsable stored policy is
/// `Corruption` of `manifest`, the file that stores it (the recovery scan
/// refuses it first, with the same error): guessing would change the
/// tree's filters.
fn resolve_policy(
    manifest: &Path,
    set: &VersionSet,
    opts: &Options,
) -> Result<(FilterPolicy, Option<String>)> {
    let stored = match &set.filter_policy {
        Some(text) => Some(
            text.parse::<FilterPolicy>()
                .map_err(|e| Error::corruption_in(manifest, 0, format!("stored filter policy: {e}")))?,
        ),
        None => None,
    };
    Ok(match (&opts.filter_policy, stored) {
        (Some(chosen), Some(stored)) if *chosen != stored => (chosen.clone(), Some(stored.to_string())),
        (Some(chosen), _) => (chosen.clone(), None),
        (None, Some(stored)) => (stored, None),
        (None, None) => (FilterPolicy::default(), None),
    })
}

/// Makes `set`'s budget the one to plan with: the options' if they name
/// one (`u64::MAX` lifts it), else the stored one. A budget moves a Monkey
/// policy's bits; a per-level policy has none to move, and planning it as
/// Monkey behind the user's back would change its filters, so it is refused.
fn resolve_budget(set: &mut VersionSet, opts: &Options, policy: &FilterPolicy) -> Result<()> {
    if let Some(bytes) = opts.filter_memory_bytes {
        set.filter_memory_bytes = (bytes != u64::MAX).then_some(bytes);
    }
    match set.filter_memory_bytes {
        Some(bytes) if !policy.is_budgeted() => Err(Error::InvalidArgument(format!(
            "a filter memory budget ({bytes} bytes) needs a monkey:B filter policy, not {policy} \
             (set filter_memory_bytes to u64::MAX to lift a stored budget)"
        ))),
        _ => Ok(()),
    }
}

fn check_options(opts: &Options) -> Result<()> {
    opts.validate()
}

pub(crate) fn open(dir: &Path, opts: Options) -> Result<Opened> {
    check_options(&opts)?;
    let fs = Arc::clone(&opts.fs);
    let found = dir_check::classify(&*fs, dir)?;
    if found == Found::Missing {
        fs.create_dir_all(dir)?;
    }
    let lock = DirLock::acquire(&*fs, dir)?;
    // Re-check under the lock: another process may have created it meanwhile.
    let existing = fs.exists(&dir.join(crate::manifest::CURRENT));
    if !existing {
        dir_check::check_fresh(&*fs, dir)?;
    }

    let mut scanned = if existing { Some(recovery::scan_to_open(&*fs, dir, opts.recovery)?) } else { None };
    let (mut set, old_manifest) = if let Some(s) = &scanned {
        (s.manifest.state.clone(), Some(s.manifest.number))
    } else {
        let salt = opts.hash_salt.unwrap_or_else(random_salt);
        (VersionSet { hash_salt: Some(salt), next_file_number: 1, ..VersionSet::default() }, None)
    };
    let salt = set.hash_salt.unwrap_or(0);
    // A new database stores no policy yet, so no manifest is named.
    let manifest = scanned.as_ref().map_or(dir, |s| s.manifest.path.as_path());
    let (policy, superseded) = resolve_policy(manifest, &set, &opts)?;
    // The snapshot edit below makes the policy in use the stored one.
    set.filter_policy = Some(policy.to_string());
    if superseded.is_some() {
        set.replaced_policy = superseded;
    }
    resolve_budget(&mut set, &opts, &policy)?;
    // Recorded for inspection (`db info`); each open runs its own.
    set.compaction = Some(opts.compaction.to_string());
    let replaced_policy = set.replaced_policy.clone();
    let cleanup_failures = Arc::new(AtomicU64::new(0));
    let tables = recovery::table_files(&fs, scanned.as_mut(), &cleanup_failures);

    // File numbers continue above anything in the directory, so a file left
    // by a crash is never reused under a new meaning.
    let max_in_dir = fs
        .list_dir(dir)?
        .iter()
        .filter_map(|p| p.file_name()?.to_str().and_then(|n| parse_file_name(n.trim_end_matches(".tmp"))))
        .map(|(_, n)| n)
        .max()
        .unwrap_or(0);
    let mut next_file = set.next_file_number.max(max_in_dir + 1);

    let replayed = recovery::apply(&*fs, dir, scanned, set.last_seq)?;
    let (wal_number, wal_file) = if let Some(n) = replayed.active_log {
        (n, fs.open_append(&dir.join(log_file_name(n)))?)
    } else {
        let n = next_file;
        next_file += 1;
        let f = fs.create(&dir.join(log_file_name(n)))?;
        fs.sync_dir(dir)?;
        (n, f)
    };
    let manifest_number = next_file;
    next_file += 1;
    if replayed.active_log.is_none() {
        // No log holds unflushed writes: the new one is the oldest needed.
        set.log_number = wal_number;
    }
    set.next_file_number = next_file;
    set.last_seq = replayed.last_seq;
    let log_number = set.log_number;
    set.wal_ends = replayed.wal_ends.clone();
    set.wal_ends.retain(|&n, _| n >= log_number);
    // Synced writes this open gives up are remembered in the manifest it
    // starts, so every later open can still say so (and `db info` shows it).
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    if let Some(lost) = replayed.report.lost_writes(now) {
        set.remember_lost_writes(&[lost]);
    }
    let writer = ManifestWriter::create(&*fs, dir, manifest_number, &set.snapshot_edit())?;
    set_current(&*fs, dir, manifest_number)?;

    // The new state is durable; what it does not name can go.
    remove_obsolete(&*fs, dir, &set, manifest_number, wal_number, old_manifest);
    for path in &replayed.discard {
        let _ = fs.remove_file(path);
    }

    let recovered = Recovered {
        lock: Some(lock),
        salt,
        tree: Tree::from_version(&set.version, &tables),
        mem: replayed.mem,
        wal: crate::wal::writer(wal_file),
        wal_number,
        manifest: ManifestState { base_len: writer.len(), writer, set },
        next_file,
        read_only: false,
        secondary: false,
        cleanup_failures,
        policy,
        replaced_policy,
        recovery: replayed.report,
    };
    Ok(assemble(dir, opts, recovered))
}

/// Opens `dir` for [`super::Db::open_read_only`]: recovers the state as
/// [`open`] does, writing nothing. The log writers refuse every write
/// ([`RefuseWrites`]) and `read_only` makes every write path stop earlier
/// with `OpenedReadOnly`.
pub(crate) fn open_read_only(dir: &Path, opts: Options) -> Result<Opened> {
    check_options(&opts)?;
    let fs = Arc::clone(&opts.fs);
    existing_database(&*fs, dir)?;
    let lock = DirLock::acquire_shared(&*fs, dir)?;
    let mut scanned = recovery::scan_to_open(&*fs, dir, opts.recovery)?;
    let manifest_number = scanned.manifest.number;
    let mut set = scanned.manifest.state.clone();
    let (policy, superseded) = resolve_policy(&scanned.manifest.path, &set, &opts)?;
    let replaced_policy = superseded.or_else(|| set.replaced_policy.clone());
    resolve_budget(&mut set, &opts, &policy)?;
    let cleanup_failures = Arc::new(AtomicU64::new(0));
    let tables = recovery::table_files(&fs, Some(&mut scanned), &cleanup_failures);
    let replayed = recovery::read_only(scanned);
    set.last_seq = replayed.last_seq;
    set.wal_ends.clone_from(&replayed.wal_ends);
    let recovered = Recovered {
        lock,
        salt: set.hash_salt.unwrap_or(0),
        tree: Tree::from_version(&set.version, &tables),
        mem: replayed.mem,
        wal: crate::wal::writer(Box::new(RefuseWrites)),
        wal_number: replayed.active_log.unwrap_or(set.log_number),
        next_file: set.next_file_number,
        manifest: ManifestState { base_len: 0, writer: ManifestWriter::refusing(manifest_number), set },
        read_only: true,
        secondary: false,
        cleanup_failures,
        policy,
        replaced_policy,
        recovery: replayed.report,
    };
    Ok(assemble(dir, opts, recovered))
}

/// `InvalidArgument` unless `dir` holds a database: an open that writes
/// nothing cannot create one.
fn existing_database(fs: &dyn FileSystem, dir: &Path) -> Result<()> {
    match dir_check::classify(fs, dir)? {
        Found::Database => Ok(()),
        Found::Missing => Err(Error::InvalidArgument(format!("{}: no such directory", dir.display()))),
        Found::Fresh => Err(Error::InvalidArgument(format!(
            "{} is not a siftdb database (no CURRENT file)",
            dir.display()
        ))),
    }
}

/// The state an open recovered, before it becomes a [`DbInner`].
struct Recovered {
    lock: Option<DirLock>,
    salt: u64,
    tree: Tree,
    mem: Memtable,
    wal: FrameWriter,
    wal_number: u64,
    /// Its `set.last_seq` is the last sequence number recovered.
    manifest: ManifestState,
    next_file: u64,
    read_only: bool,
    /// Opened without the lock, beside a writer.
    secondary: bool,
    /// Shared with the tables opened, which count their own failed deletes.
    cleanup_failures: Arc<AtomicU64>,
    policy: FilterPolicy,
    replaced_policy: Option<String>,
    recovery: RecoveryReport,
}

fn assemble(dir: &Path, mut opts: Options, r: Recovered) -> Opened {
    // `Db::options()` names the salt in use, so tables built elsewhere
    // from those options (`TableWriter`) carry filters this database reads.
    opts.hash_salt = Some(r.salt);
    // Likewise the budget in use, which the planner reads from there.
    opts.filter_memory_bytes = r.manifest.set.filter_memory_bytes;
    let mem = Arc::new(r.mem);
    let last_seq = r.manifest.set.last_seq;
    let (flush_tx, flush_rx) = unbounded();
    let (compact_tx, compact_rx) = unbounded();
    let inner = DbInner {
        dir: dir.to_path_buf(),
        fs: Arc::clone(&opts.fs),
        salt: r.salt,
        lock: Mutex::new(r.lock),
        write: Mutex::new(WriteState {
            wal: r.wal,
            wal_number: r.wal_number,
            mem: Arc::clone(&mem),
            last_seq,
        }),
        commit: CommitQueue::default(),
        visible_seq: AtomicU64::new(last_seq),
        sv: RwLock::new(Arc::new(SuperVersion {
            mem: MemRef { mem, wal_number: r.wal_number },
            imm: Vec::new(),
            tree: Arc::new(crate::tree::SearchTree::new(r.tree)),
        })),
        manifest: Mutex::new(r.manifest),
        compaction: Mutex::new(crate::compaction::Progress::new(NUM_LEVELS)),
        strategy: crate::compaction::strategy_for(&opts),
        next_file: AtomicU64::new(r.next_file),
        counters: Arc::new(Counters::new(NUM_LEVELS, r.cleanup_failures)),
        policy: r.policy,
        replaced_policy: r.replaced_policy,
        recovery: r.recovery,
        plan_cache: Mutex::new(None),
        snapshots: SnapshotList::default(),
        failure: Mutex::new(None),
        read_only: r.read_only,
        secondary: r.secondary,
        closed: AtomicBool::new(false),
        bg_changed: Condvar::new(),
        bg_epoch: Mutex::new(0),
        wakes: super::Wakes::default(),
        flush_tx,
        compact_tx,
        opts,
    };
    (Arc::new(inner), flush_rx, compact_rx)
}

/// Deletes temporary files, old manifests, tables the manifest does not
/// name, and logs older than the log number. Best effort: a file that stays
/// is deleted by a later open.
fn remove_obsolete(
    fs: &dyn FileSystem,
    dir: &Path,
    set: &VersionSet,
    manifest_number: u64,
    wal_number: u64,
    _old_manifest: Option<u64>,
) {
    let live: HashSet<u64> = set.version.tables().map(|(_, t)| t.file_number).collect();
    let Ok(entries) = fs.list_dir(dir) else { return };
    for path in entries {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
        let obsolete = if is_temp_name(name) {
            is_siftdb_name(name)
        } else {
            match parse_file_name(name) {
                Some((FileKind::Manifest, n)) => n != manifest_number,
                Some((FileKind::Table, n)) => !live.contains(&n),
                Some((FileKind::Log, n)) => n < set.log_number || n > wal_number,
                _ => false,
            }
        };
        if obsolete {
            let _ = fs.remove_file(&path);
        }
    }
}

/// Whether `name` is a temporary file (siftdb writes the suffix in lower case).
fn is_temp_name(name: &str) -> bool {
    std::path::Path::new(name).extension().is_some_and(|e| e == "tmp")
}
