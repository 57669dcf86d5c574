//! Sorted sources of versions: a memtable, or the tables of one sorted run,
//! each yielding versions in internal-key order (user key ascending, then
//! newest first), or, read backwards, in the reverse of that order (user key
//! descending, then oldest first). [`crate::merge`] merges them for reads, flushes and
//! compactions.

use std::cmp::Ordering;
use std::ops::Bound;
use std::sync::Arc;

use bytes::Bytes;

use crate::Result;
use crate::key::{MAX_SEQ, SeqNo, ValueKind, before_start, past_end};
use crate::memtable::{MemEntry, Memtable, MemtableRange};
use crate::table::{TableEntry, TableIter, TableRevIter};
use crate::tree::{Level, TableFile};

/// One version of one key: its value or tombstone at one sequence number.
#[derive(Debug, Clone)]
pub(crate) struct KeyVersion {
    pub key: Bytes,
    pub seq: SeqNo,
    pub kind: ValueKind,
    pub value: Bytes,
}

/// A sorted stream of versions (in internal-key order, or its reverse for
/// the backward sources).
pub(crate) trait Source: Send {
    /// The current version; `None` once exhausted.
    fn head(&self) -> Option<&KeyVersion>;
    /// Moves to the next version.
    fn advance(&mut self) -> Result<()>;
}

/// Reads a memtable from a start key (in chunks, see [`MemtableRange`]).
pub(crate) struct MemSource {
    range: MemtableRange,
    head: Option<KeyVersion>,
}

impl MemSource {
    /// Every version from `start` on (what a flush writes).
    pub fn new(mem: &Arc<Memtable>, start: &[u8]) -> Self {
        Self::of(mem.range(Bound::Included(start), Bound::Unbounded, MAX_SEQ))
    }

    /// From `start` on, each key's newest version at or below `snapshot`
    /// only: all a reader at `snapshot` keeps of the memtable
    /// ([`MemtableRange::newest_only`]).
    pub fn visible(mem: &Arc<Memtable>, start: &[u8], snapshot: SeqNo) -> Self {
        Self::of(mem.range(Bound::Included(start), Bound::Unbounded, snapshot).newest_only())
    }

    fn of(mut range: MemtableRange) -> Self {
        let head = range.next().map(from_mem);
        MemSource { range, head }
    }
}

fn from_mem(e: MemEntry) -> KeyVersion {
    KeyVersion { key: e.user_key, seq: e.seq, kind: e.kind, value: e.value }
}

impl Source for MemSource {
    fn head(&self) -> Option<&KeyVersion> {
        self.head.as_ref()
    }

    fn advance(&mut self) -> Result<()> {
        self.head = self.range.next().map(from_mem);
        Ok(())
    }
}

/// What a scan's table sources report as they open tables: the database
/// keeps per-level counts of them.
pub(crate) trait ScanObserver: Send + Sync {
    /// A table of `level` was opened and seeked. `passed`: which of the
    /// table's scan filters were probed and passed; `held`: the table holds
    /// a key within the scan's bounds (so a filter that passed with `held`
    /// false gave a false positive).
    fn table_opened(&self, level: usize, passed: Passed, held: bool);
}

/// Which of a table's scan filters were probed and answered "maybe".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Passed {
    /// The point filter's prefix entry for the scan's prefix.
    pub prefix: bool,
    /// The range filter for the scan's bounds.
    pub range: bool,
}

/// A scan's watch over one table source: the level, what each table's
/// scan filters said, and whom to tell about each table opened.
pub(crate) struct ScanWatch {
    pub level: usize,
    /// Per table of the source: which filters were probed and passed.
    pub passed: Vec<Passed>,
    pub observer: Arc<dyn ScanObserver>,
}

/// Reads the tables of one sorted run (a level ≥ 1) in order, or a single
/// level-0 table, opening each table's iterator only when reached, and no
/// table that starts past the end bound.
pub(crate) struct TablesSource {
    tables: Vec<Arc<TableFile>>,
    next_table: usize,
    end: Bound<Bytes>,
    watch: Option<ScanWatch>,
    iter: Option<TableIter>,
    head: Option<KeyVersion>,
}

impl TablesSource {
    /// Starts at the first version with user key ≥ `start`.
    pub fn new(tables: Vec<Arc<TableFile>>, start: &[u8]) -> Result<Self> {
        Self::scan(tables, start, Bound::Unbounded, None)
    }

    /// [`TablesSource::new`] for a scan that ends at `end`: a table whose
    /// smallest key lies past it is never opened. `watch` hears of each
    /// table opened.
    pub fn scan(
        tables: Vec<Arc<TableFile>>,
        start: &[u8],
        end: Bound<Bytes>,
        watch: Option<ScanWatch>,
    ) -> Result<Self> {
        let first = Level { number: 1, tables: &tables }.first_ending_at_or_after(start);
        let mut s = TablesSource { tables, next_table: first, end, watch, iter: None, head: None };
        s.open_next(Some(start))?;
        Ok(s)
    }

    fn open_next(&mut self, seek: Option<&[u8]>) -> Result<()> {
        loop {
            let i = self.next_table;
            let Some(t) = self.tables.get(i).filter(|t| !past_end(&self.end, &t.record.smallest)) else {
                self.iter = None;
                self.head = None;
                return Ok(());
            };
            self.next_table += 1;
            let mut it = t.table.iter();
            if let Some(k) = seek {
                it.seek(k)?;
            }
            self.iter = Some(it);
            self.pull()?;
            if let Some(w) = &self.watch {
                let held = self.head.as_ref().is_some_and(|v| !past_end(&self.end, &v.key));
                w.observer.table_opened(w.level, w.passed.get(i).copied().unwrap_or_default(), held);
            }
            if self.head.is_some() {
                return Ok(());
            }
        }
    }

    fn pull(&mut self) -> Result<()> {
        self.head = next_version(self.iter.as_mut())?;
        Ok(())
    }
}

impl Source for TablesSource {
    fn head(&self) -> Option<&KeyVersion> {
        self.head.as_ref()
    }

    fn advance(&mut self) -> Result<()> {
        self.pull()?;
        if self.head.is_none() {
            self.open_next(None)?;
        }
        Ok(())
    }
}

/// Reads a memtable backwards from an end bound down to a start bound.
pub(crate) struct MemRevSource {
    range: MemtableRange,
    head: Option<KeyVersion>,
}

impl MemRevSource {
    /// Within `bounds`, from the end down, each key's newest version at or
    /// below `snapshot` only ([`MemtableRange::newest_only`]).
    pub fn visible(mem: &Arc<Memtable>, bounds: (Bound<&[u8]>, Bound<&[u8]>), snapshot: SeqNo) -> Self {
        let mut range = mem.range(bounds.0, bounds.1, snapshot).newest_only();
        let head = range.next_back().map(from_mem);
        MemRevSource { range, head }
    }
}

impl Source for MemRevSource {
    fn head(&self) -> Option<&KeyVersion> {
        self.head.as_ref()
    }

    fn advance(&mut self) -> Result<()> {
        self.head = self.range.next_back().map(from_mem);
        Ok(())
    }
}

/// Reads the tables of one sorted run (or one level-0 table) backwards from
/// an end bound down to a start bound, opening each table's reverse cursor
/// only when reached and no table or block wholly below the start.
pub(crate) struct TablesRevSource {
    tables: Vec<Arc<TableFile>>,
    /// Tables not opened yet: the next is `left - 1`.
    left: usize,
    /// Tables below this index end below the start bound.
    skip: usize,
    start: Bound<Bytes>,
    watch: Option<ScanWatch>,
    iter: Option<TableRevIter>,
    head: Option<KeyVersion>,
}

impl TablesRevSource {
    /// Starts at the last version whose user key lies within `bounds`
    /// (lower, upper) and goes down to the lower bound. `watch` hears of
    /// each table opened.
    pub fn new(
        tables: Vec<Arc<TableFile>>,
        bounds: (Bound<&[u8]>, Bound<&[u8]>),
        watch: Option<ScanWatch>,
    ) -> Result<Self> {
        let (start, end) = bounds;
        // Tables sorted by smallest key: those starting within the end bound.
        let left = tables.partition_point(|t| !past_end(&end, &t.record.smallest));
        // Tables ending below the start bound are never opened.
        let skip = tables.partition_point(|t| before_start(&start, &t.record.largest));
        let start = start.map(Bytes::copy_from_slice);
        let mut s = TablesRevSource { tables, left, skip, start, watch, iter: None, head: None };
        s.open_previous(end)?;
        Ok(s)
    }

    fn open_previous(&mut self, end: Bound<&[u8]>) -> Result<()> {
        let mut end = end;
        loop {
            let Some(i) = self.left.checked_sub(1).filter(|&i| i >= self.skip) else {
                self.iter = None;
                self.head = None;
                return Ok(());
            };
            self.left = i;
            let Some(t) = self.tables.get(i) else { return Ok(()) };
            let start = self.start.as_ref().map(|a| &a[..]);
            self.iter = Some(t.table.iter_rev((start, end))?);
            self.pull()?;
            if let Some(w) = &self.watch {
                // The reverse cursor yields only keys within the bounds.
                w.observer.table_opened(
                    w.level,
                    w.passed.get(i).copied().unwrap_or_default(),
                    self.head.is_some(),
                );
            }
            if self.head.is_some() {
                return Ok(());
            }
            // Only the first table read can hold keys past the end bound.
            end = Bound::Unbounded;
        }
    }

    fn pull(&mut self) -> Result<()> {
        self.head = next_version(self.iter.as_mut())?;
        Ok(())
    }
}

impl Source for TablesRevSource {
    fn head(&self) -> Option<&KeyVersion> {
        self.head.as_ref()
    }

    fn advance(&mut self) -> Result<()> {
        self.pull()?;
        if self.head.is_none() {
            self.open_previous(Bound::Unbounded)?;
        }
        Ok(())
    }
}

/// The next entry of a table cursor, either way, as a key version.
fn next_version(it: Option<&mut impl Iterator<Item = Result<TableEntry>>>) -> Result<Option<KeyVersion>> {
    let Some(e) = it.and_then(Iterator::next).transpose()? else { return Ok(None) };
    Ok(Some(KeyVersion { key: e.user_key, seq: e.seq, kind: e.kind, value: e.value }))
}

/// Newest-first internal order.
pub(crate) fn internal_cmp(a: &KeyVersion, b: &KeyVersion) -> Ordering {
    a.key.cmp(&b.key).then_with(|| b.seq.cmp(&a.seq))
}
