//! Ingest: tables built elsewhere (`TableWriter`, in other threads or
//! processes) installed in one step, without the write path.
//!
//! 1. **Check**, holding nothing: each file is verified whole (`check`),
//!    and the files' key ranges must not overlap one another unless the
//!    caller allows it.
//! 2. **Bring in**, holding nothing: each file is hard-linked (copied across
//!    file systems) under a fresh table number, or rewritten there if its
//!    filter was built under another salt, and the directory is synced.
//!    Until the manifest names them these are unreferenced tables, which
//!    the next open deletes: a crash here leaves none of the ingest.
//! 3. **Install**, holding the compaction lock and then the write lock (so
//!    no write and no compaction moves under it): if a memtable holds keys
//!    in the files' ranges it is flushed first (or the ingest refused). The
//!    files get sequence number `G = last + 1` (with overlap allowed, `G`,
//!    `G + 1`, … in the order given); each goes to the deepest level at and
//!    above which no table meets its range (level 0 otherwise, as the
//!    newest), so that a lookup walking down the levels meets nothing
//!    older first. One manifest edit adds them all and records `G`: the
//!    files carry placeholder sequence numbers, and a record with
//!    `min_seq == max_seq` gives every entry that number
//!    (`Table::with_global_seq`, format 9). Readers see all of it or none.
//!    With buffered writes the WAL is synced first: a power cut must not
//!    keep the ingest and lose writes older than it.
//! 4. With `move_files`, the sources are removed once the edit is durable.

mod check;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::key::{MAX_SEQ, SeqNo};
use crate::manifest::{NUM_LEVELS, TableRecord, VersionEdit, WriteTotals, table_file_name};
use crate::options::Compaction;
use crate::policy::Writing;
use crate::table::Table;
use crate::tree::{SuperVersion, TableFile};
use crate::{Error, Result};

use super::{Db, DbInner};
use check::{Checked, check_file, refuse_overlaps};

/// How [`Db::ingest_with`] installs files.
#[derive(Debug, Clone, Default)]
pub struct IngestOptions {
    /// Remove each source file once the ingest is durable. By default the
    /// source stays: the database holds its own hard link (or copy), and a
    /// source rewritten in place afterwards would change it — replace it by
    /// rename instead (as `TableWriter` publishes).
    pub move_files: bool,
    /// Accept files whose key ranges overlap one another: each then gets a
    /// sequence number of its own, later files newer (they win), and all go
    /// to level 0. By default overlapping files are refused.
    pub allow_overlap: bool,
    /// Refuse an ingest whose key ranges meet writes still in a memtable,
    /// instead of flushing them first (the default, as in `RocksDB`, so
    /// that an ingest always succeeds).
    pub refuse_memtable_overlap: bool,
}

/// What an ingest installed.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Ingested {
    /// The sequence number the ingest's entries read at (the first file's,
    /// when overlapping files got one each).
    pub seq: SeqNo,
    /// One per file, in the order given.
    pub tables: Vec<IngestedTable>,
}

/// One file of an ingest.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct IngestedTable {
    /// The file the caller named.
    pub source: PathBuf,
    /// Its table number in the database (`{number:06}.sst`).
    pub file_number: u64,
    /// The level it was installed at.
    pub level: usize,
    /// Its entries.
    pub entries: u64,
    /// Its size in bytes.
    pub bytes: u64,
    /// Whether it was rewritten because its filter was built under
    /// another hash salt than the database's.
    pub rebuilt: bool,
}

impl Db {
    /// Installs tables built elsewhere ([`crate::TableWriter`]) in one
    /// step: every key in them becomes visible at once, newer than every
    /// earlier write and older than every later one. Each file is checked
    /// whole first; a failed ingest changes nothing. Once it returns, the
    /// ingest is durable, and so is every write before it (with
    /// `sync = false` it fsyncs the WAL first). See
    /// [`Db::ingest_with`] for the choices.
    ///
    /// # Errors
    /// `InvalidArgument` for no files, files whose key ranges overlap, a
    /// table with several versions of a key or range tombstones, or an
    /// empty table; `Corruption` naming the file and offset for a damaged
    /// one; `WritesDisabled`, `OpenedReadOnly`, `Closed`; `Io`.
    pub fn ingest<P: AsRef<Path>>(&self, paths: impl IntoIterator<Item = P>) -> Result<Ingested> {
        self.ingest_with(paths, &IngestOptions::default())
    }

    /// [`Db::ingest`] with [`IngestOptions`].
    ///
    /// # Errors
    /// As [`Db::ingest`]; `InvalidArgument` too if a memtable holds keys
    /// in the files' ranges and `refuse_memtable_overlap` is set.
    pub fn ingest_with<P: AsRef<Path>>(
        &self,
        paths: impl IntoIterator<Item = P>,
        opts: &IngestOptions,
    ) -> Result<Ingested> {
        let paths: Vec<PathBuf> = paths.into_iter().map(|p| p.as_ref().to_path_buf()).collect();
        self.inner.ingest(&paths, opts)
    }
}

/// A file brought into the database directory, not yet installed.
struct Staged {
    checked: Checked,
    number: u64,
    table: Table,
    path: PathBuf,
    bytes: u64,
}

impl DbInner {
    fn ingest(&self, paths: &[PathBuf], opts: &IngestOptions) -> Result<Ingested> {
        self.check_writable()?;
        if paths.is_empty() {
            return Err(Error::InvalidArgument("ingest: no files named".into()));
        }
        let checked =
            paths.iter().map(|p| check_file(&*self.fs, p, self.salt)).collect::<Result<Vec<Checked>>>()?;
        let overlapping = match refuse_overlaps(&checked) {
            Err(e) if !opts.allow_overlap => return Err(e),
            verdict => verdict.is_err(),
        };
        let staged = self.bring_in(checked)?;
        let installed = self.install_ingest(&staged, overlapping, opts);
        let ingested = match installed {
            Ok(ingested) => ingested,
            Err(e) => {
                // A failed manifest write (the database then fails) may
                // have left the edit in the manifest: the files stay, and
                // the next open deletes them if it is not.
                if self.failure.lock().is_none() {
                    for s in &staged {
                        self.remove_obsolete_file(&s.path);
                    }
                }
                return Err(e);
            }
        };
        if opts.move_files {
            for s in &staged {
                self.fs.remove_file(&s.checked.source)?;
            }
        }
        Ok(ingested)
    }

    /// Step 2: links (or rewrites) every file in under a fresh number and
    /// syncs the directory; on failure removes what it brought in.
    fn bring_in(&self, checked: Vec<Checked>) -> Result<Vec<Staged>> {
        let mut staged = Vec::with_capacity(checked.len());
        let mut result = Ok(());
        for c in checked {
            match self.stage(c) {
                Ok(s) => staged.push(s),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        let result = result.and_then(|()| self.fs.sync_dir(&self.dir).map_err(Error::from));
        if let Err(e) = result {
            for s in &staged {
                self.remove_obsolete_file(&s.path);
            }
            return Err(e);
        }
        Ok(staged)
    }

    fn stage(&self, checked: Checked) -> Result<Staged> {
        if checked.needs_rebuild {
            return self.rebuild(checked);
        }
        let number = self.allocate_file_number();
        let path = self.dir.join(table_file_name(number));
        self.fs.link_or_copy(&checked.source, &path)?;
        let table = Table::open(&*self.fs, &path).map_err(|e| e.at_file(&path, 0))?;
        let bytes = table.file_size();
        Ok(Staged { checked, number, table, path, bytes })
    }

    /// Rewrites a file whose filter has another salt, with the filter the
    /// policy gives the level it will likely land on; the entries keep the
    /// placeholder number 0 (the install numbers them).
    fn rebuild(&self, checked: Checked) -> Result<Staged> {
        let sv = self.current();
        let level = deepest_free_level(&sv, &checked, self.last_level(&sv, checked.entries));
        let writing = Writing { level, entries: checked.entries, from: None, passing: 0 };
        let filter = self.filter_for(&sv.tree, writing).kind;
        let compression = self.compression_for(&sv.tree, writing);
        drop(sv);
        let sink = self.sink();
        let mut t = sink.start(level, filter, 0, compression)?;
        for e in &checked.table {
            let e = e?;
            t.add(&e.user_key, 0, e.kind, &e.value)?;
        }
        let written = sink.finish(t)?;
        let bytes = written.record.file_size;
        Ok(Staged {
            number: written.number(),
            table: written.table.clone(),
            path: written.path.clone(),
            bytes,
            checked,
        })
    }

    /// The deepest level the tree will have with `incoming` more entries;
    /// 0 under FIFO, which keeps every table there (`compaction::fifo`).
    fn last_level(&self, sv: &SuperVersion, incoming: u64) -> usize {
        if matches!(self.opts.compaction, Compaction::Fifo { .. }) {
            return 0;
        }
        let shape =
            self.shape(&sv.tree, Some(Writing { level: 0, entries: incoming, from: None, passing: 0 }));
        shape.level_models().len().saturating_sub(1).clamp(1, NUM_LEVELS - 1)
    }

    /// Step 3: under the compaction and write locks, numbers and places
    /// every staged file and installs them in one edit.
    fn install_ingest(&self, staged: &[Staged], overlapping: bool, opts: &IngestOptions) -> Result<Ingested> {
        let _no_compaction = self.compaction.lock();
        let mut w = self.write.lock();
        self.check_writable()?;
        let meets_memtable = |sv: &SuperVersion| {
            std::iter::once(&sv.mem)
                .chain(&sv.imm)
                .any(|m| staged.iter().any(|s| memtable_meets(&m.mem, &s.checked)))
        };
        if meets_memtable(&self.current()) {
            if opts.refuse_memtable_overlap {
                return Err(Error::InvalidArgument(
                    "ingest: the files' key ranges meet writes still in a memtable \
                     (IngestOptions::refuse_memtable_overlap is set)"
                        .into(),
                ));
            }
            if !w.mem.is_empty() {
                self.rotate(&mut w)?;
            }
            self.wake_flush();
            self.wait_flushed(w.wal_number)?;
        }
        // The ingest is newer than every buffered write before it, and its
        // edit is durable once installed: unsynced, those writes could be
        // lost under it by a power cut, leaving a hole, not a prefix.
        if !self.opts.sync {
            self.sync_held(&mut w)?;
        }
        let sv = self.current();
        let first = w.last_seq + 1;
        let last = if overlapping { first + staged.len() as u64 - 1 } else { first };
        if last > MAX_SEQ {
            return Err(Error::WritesDisabled("sequence numbers exhausted (2^56 writes)".into()));
        }
        let total: u64 = staged.iter().map(|s| s.checked.entries).sum();
        let deepest = self.last_level(&sv, total);
        let mut edit = VersionEdit { last_seq: Some(last), ..VersionEdit::default() };
        let mut opened = Vec::with_capacity(staged.len());
        let mut tables = Vec::with_capacity(staged.len());
        for (i, s) in staged.iter().enumerate() {
            let seq = if overlapping { first + i as u64 } else { first };
            let level = if overlapping { 0 } else { deepest_free_level(&sv, &s.checked, deepest) };
            let p = s.table.properties();
            let record = TableRecord {
                file_number: s.number,
                file_size: s.bytes,
                smallest: s.checked.smallest.clone(),
                largest: s.checked.largest.clone(),
                min_seq: seq,
                max_seq: seq,
                entries: s.checked.entries,
                filter: p.filter_kind.parse().unwrap_or(crate::FilterKind::None),
                filter_bytes: p.filter_bytes,
            };
            edit.added.push((u8::try_from(level).unwrap_or(0), record.clone()));
            let file = TableFile::new(
                Arc::new(record),
                s.table.clone(),
                s.path.clone(),
                Arc::clone(&self.fs),
                Arc::clone(&self.counters.cleanup_failures),
            );
            opened.push(Arc::new(file));
            tables.push(IngestedTable {
                source: s.checked.source.clone(),
                file_number: s.number,
                level,
                entries: s.checked.entries,
                bytes: s.bytes,
                rebuilt: s.checked.needs_rebuild,
            });
        }
        drop(sv);
        edit.next_file_number = Some(self.next_file.load(Ordering::SeqCst));
        self.install(&edit, opened, false, WriteTotals::default())?;
        w.last_seq = last;
        self.visible_seq.store(last, Ordering::Release);
        drop(w);
        self.wake_compaction();
        Ok(Ingested { seq: first, tables })
    }
}

/// Whether `mem` holds a write (a version or a range tombstone) in the
/// key range of `c`.
fn memtable_meets(mem: &Arc<crate::memtable::Memtable>, c: &Checked) -> bool {
    use std::ops::Bound::Included;
    let (lo, hi) = (Included(c.smallest.as_slice()), Included(c.largest.as_slice()));
    mem.range(lo, hi, MAX_SEQ).next().is_some()
        || mem.range_dels().is_some_and(|d| d.meeting(lo, hi).next().is_some())
}

/// The deepest level, at most `deepest`, such that no table at it or above
/// it meets `c`'s key range (table ranges include their range tombstones);
/// level 0 if level 0 does.
fn deepest_free_level(sv: &SuperVersion, c: &Checked, deepest: usize) -> usize {
    let meets = |level: usize| {
        sv.tree.level(level).iter().any(|t| t.record.smallest <= c.largest && c.smallest <= t.record.largest)
    };
    let mut chosen = 0;
    for level in 0..=deepest {
        if meets(level) {
            break;
        }
        chosen = level;
    }
    chosen
}
