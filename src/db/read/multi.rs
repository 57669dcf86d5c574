//! Batched point lookups: [`Db::multi_get`] and
//! [`Snapshot::multi_get`](crate::Snapshot::multi_get).
//!
//! A lookup of an absent key spends much of its time waiting for its
//! filters' cache lines; one lookup can only overlap the waits of its own
//! levels ([`super`]). A batch overlaps them across keys: the keys are
//! sorted (duplicates answered once), each walks the memtables as a single
//! lookup does, and the rest go through the tree one step at a time, a
//! step being one level-0 table (newest first) or one deeper level. Each
//! step is a few passes over its keys: the filters asked, each key's
//! filter lines requested a few keys ahead of its answer (a table with
//! several of the keys answers them in one call, which Ribbon runs as one
//! batch); the survivors' index searches run in lockstep (a step of each
//! before the next of any, so their cache misses overlap), and each block
//! found has its first lines requested; then the blocks are read, once for
//! the neighbouring keys that fall in one ([`Table::get_batch`] is the same
//! for one table). A key leaves the batch when a step decides it. A
//! deeper level's tables are found by one walk along the level for all
//! the sorted keys.
//!
//! Each key meets the same sources in the same order as
//! [`DbInner::get_in`], and the same rules decide it (range tombstones
//! asked first, the newest covering one ends the search), so the answers
//! are the same as a loop of `get` at the batch's one snapshot; probes are
//! counted per level as there, and each key counts as a get.
//!
//! What it gains, measured: docs/measurements.md ("Batched lookups").
//!
//! [`Table::get_batch`]: crate::table::Table::get_batch

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

use super::{Tally, visible};
use crate::Result;
use crate::db::stats::{ReadStripe, bump};
use crate::db::{Db, DbInner};
use crate::filter::KeyHash;
use crate::key::{SeqNo, ValueKind};
use crate::table::{BatchScratch, BlockHandle, Entry, FilterAnswer, Lookup, Search, locate_all};
use crate::tree::{SuperVersion, TableFile, prefix};

impl Db {
    /// The value of each of `keys`, in order: what [`Db::get`] would give
    /// for each, all read at one snapshot (so a write landing meanwhile is
    /// seen by all of them or none). Duplicates and absent keys are
    /// answered like any other.
    ///
    /// Faster than a loop of `get` for more than a few keys: the keys'
    /// filter probes overlap their memory waits, and a data block several
    /// keys fall in is read once.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = siftdb::Db::open(dir.path(), siftdb::Options::default()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// db.put(b"c", b"3").unwrap();
    /// let keys: Vec<Vec<u8>> = vec![b"c".to_vec(), b"b".to_vec(), b"a".to_vec(), b"c".to_vec()];
    /// let values = db.multi_get(&keys).unwrap();
    /// assert_eq!(values, [Some("3".into()), None, Some("1".into()), Some("3".into())]);
    /// ```
    ///
    /// # Errors
    /// As [`Db::get`]: `Corruption` or `Io` from a table read (the whole
    /// batch fails); `Closed`.
    pub fn multi_get<K: AsRef<[u8]>>(&self, keys: impl IntoIterator<Item = K>) -> Result<Vec<Option<Bytes>>> {
        let keys: Vec<K> = keys.into_iter().collect();
        self.inner.multi_get_in(None, &keys, None)
    }
}

/// Where one distinct key of a batch stands.
struct Pending<'k> {
    key: &'k [u8],
    /// Its first 8 bytes as an integer ([`prefix`]), kept so that the
    /// level walks need not load the key again.
    prefix: u64,
    /// Its filter hash under the database's salt, made once.
    hash: KeyHash,
    /// The newest range tombstone covering it seen so far.
    deleted_at: Option<SeqNo>,
    /// Whether a source has decided it.
    done: bool,
    /// Its value, once decided.
    value: Option<Bytes>,
}

impl DbInner {
    /// `get_in` for each of `keys`, at one snapshot: `snapshot`, or the
    /// newest visible write when `None`.
    pub(crate) fn multi_get_in<K: AsRef<[u8]>>(
        &self,
        pinned: Option<&Arc<SuperVersion>>,
        keys: &[K],
        snapshot: Option<SeqNo>,
    ) -> Result<Vec<Option<Bytes>>> {
        self.check_open()?;
        let counts = self.counters.read_stripe();
        bump(&counts.gets, keys.len() as u64);
        // The tree first, then the sequence number, as for one get.
        let sv = pinned.map_or_else(|| self.current(), Arc::clone);
        let snapshot = snapshot.unwrap_or_else(|| self.visible_seq());

        // Distinct keys in ascending order; `slot[i]` is where key `i` went.
        // Sorted on each key's first 8 bytes as an integer, whole keys
        // breaking ties: one compare, not a `memcmp` through two pointers.
        let mut order: Vec<(u64, usize)> =
            keys.iter().enumerate().map(|(i, k)| (prefix(k.as_ref()), i)).collect();
        order.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| keys[a.1].as_ref().cmp(keys[b.1].as_ref())));
        let mut slot = vec![0usize; keys.len()];
        let mut pending: Vec<Pending<'_>> = Vec::with_capacity(keys.len());
        for &(kp, i) in &order {
            let key = keys[i].as_ref();
            if pending.last().is_none_or(|p| p.prefix != kp || p.key != key) {
                pending.push(Pending {
                    key,
                    prefix: kp,
                    hash: KeyHash::new(self.salt, key),
                    deleted_at: None,
                    done: false,
                    value: None,
                });
            }
            slot[i] = pending.len() - 1;
        }

        for p in &mut pending {
            search_memtables(&sv, p, snapshot, counts);
        }
        let mut open: Vec<usize> = Vec::with_capacity(pending.len());
        open.extend((0..pending.len()).filter(|&i| !pending[i].done));

        let mut step = Step::with_capacity(open.len());
        for (level, tables) in sv.tree.levels().iter().enumerate() {
            if level == 0 {
                // Each level-0 table is a step of its own: a key may be in
                // several, and the newest decides.
                for t in tables {
                    let holds = |key: &[u8]| {
                        t.record.smallest.as_slice() <= key && key <= t.record.largest.as_slice()
                    };
                    step.clear();
                    step.members.extend(open.iter().copied().filter(|&i| holds(pending[i].key)));
                    step.groups.push((t, 0..step.members.len()));
                    self.step(&mut step, &mut pending, snapshot, level)?;
                    open.retain(|&i| !pending[i].done);
                }
            } else {
                // At most one table a key; sorted keys group by table.
                step.clear();
                let mut walk = sv.tree.level_walk(level);
                for &i in &open {
                    let found = walk.candidate(pending[i].key, pending[i].prefix);
                    debug_assert!(
                        found.map(|t| t.number())
                            == sv
                                .tree
                                .candidates(pending[i].key)
                                .find(|c| c.0 == level)
                                .map(|c| c.1.number()),
                        "the level's candidate disagrees with the lookup's"
                    );
                    let Some(t) = found else { continue };
                    let at = step.members.len();
                    step.members.push(i);
                    match step.groups.last_mut() {
                        Some((last, run)) if Arc::ptr_eq(last, t) => run.end = at + 1,
                        _ => step.groups.push((t, at..at + 1)),
                    }
                }
                self.step(&mut step, &mut pending, snapshot, level)?;
                open.retain(|&i| !pending[i].done);
            }
            if open.is_empty() {
                break;
            }
        }
        Ok(slot.into_iter().map(|s| pending[s].value.clone()).collect())
    }

    /// One step of the batch: `step.groups` are tables of `level`, each
    /// with the run of `step.members` (pending keys, ascending) it may
    /// hold. Each pass runs over every key before the next starts, so the
    /// memory waits of the step's keys overlap: every filter's lines are
    /// requested; the filters answer; each survivor's data block is found
    /// in its table's index and its first lines requested; then the blocks
    /// are read. The probes are counted once a step.
    fn step<'k>(
        &self,
        step: &mut Step<'_, 'k>,
        pending: &mut [Pending<'k>],
        snapshot: SeqNo,
        level: usize,
    ) -> Result<()> {
        let Step { members, groups, probe, located, searches, scratch } = step;
        // The next member to request lines for, and its group.
        let (mut issued, mut issued_group) = (0, 0);
        let mut tally = Tally::default();
        located.clear();
        for (g, (t, run)) in groups.iter().enumerate() {
            let until = (run.end + AHEAD).min(members.len());
            while issued < until {
                while groups[issued_group].1.end <= issued {
                    issued_group += 1;
                }
                let p = &pending[members[issued]];
                groups[issued_group].0.table.prefetch_filter(p.key, p.hash);
                issued += 1;
            }
            let keys = &members[run.clone()];
            if let Some(dels) = t.table.range_dels() {
                for &i in keys {
                    let p = &mut pending[i];
                    p.deleted_at = p.deleted_at.max(dels.covering(p.key, snapshot));
                }
            }
            let answer = if let [i] = keys {
                // One key (the usual case below level 0): no batch to set up.
                let answer = t.table.filter_answer_hashed(pending[*i].key, pending[*i].hash);
                scratch.passed.clear();
                scratch.passed.push(answer != FilterAnswer::Absent);
                answer
            } else {
                probe.clear();
                probe.extend(keys.iter().map(|&i| (pending[i].key, pending[i].hash)));
                t.table.filter_batch(probe, scratch)
            };
            for (&i, &pass) in keys.iter().zip(&scratch.passed) {
                let filter = if pass { answer } else { FilterAnswer::Absent };
                let lookup = Lookup { entry: None, filter, blocks_read: 0, bytes_read: 0 };
                if pass {
                    located.push((i, g, None, lookup));
                    searches.push(t.table.index_search());
                } else {
                    decide(&mut pending[i], lookup, &mut tally);
                }
            }
        }
        // The survivors' index searches in lockstep, then every block found
        // requested before any is read.
        locate_all(searches, |j| (&groups[located[j].1].0.table, pending[located[j].0].key), snapshot)?;
        for ((i, g, handle, lookup), s) in located.iter_mut().zip(searches.drain(..)) {
            let table = &groups[*g].0.table;
            *handle = table.located(&s)?;
            match *handle {
                Some(h) => table.prefetch_block(h),
                // Past the table's last block: no entry, as `locate` said.
                None => decide(&mut pending[*i], Lookup { entry: None, ..*lookup }, &mut tally),
            }
        }
        let mut last = None;
        let mut last_group = usize::MAX;
        for (i, g, handle, mut lookup) in located.drain(..) {
            let Some(handle) = handle else { continue };
            if g != last_group {
                (last, last_group) = (None, g);
            }
            groups[g].0.table.entry_at(handle, pending[i].key, snapshot, &mut last, &mut lookup)?;
            decide(&mut pending[i], lookup, &mut tally);
        }
        if let Some(c) = self.counters.read_stripe().levels.get(level) {
            tally.bump(c);
        }
        Ok(())
    }
}

/// How many keys ahead of the one being answered a step has requested
/// filter lines for. Requesting them all first (as before) gave the same
/// rate in batches of 32 and about a tenth less in batches of 256; 3 and 8
/// measured alike (docs/measurements.md, "Batched lookups, second pass").
const AHEAD: usize = 8;

/// What one table's lookup tells a pending key, as in `get_in`: a version
/// decides it (a tombstone as absent); a range tombstone seen over it
/// decides it absent; otherwise the search goes on.
fn decide(p: &mut Pending<'_>, lookup: Lookup, tally: &mut Tally) {
    tally.add(&lookup);
    match lookup.entry {
        Some(Entry::Value { seq, value }) => p.decide(visible(seq, ValueKind::Value, value, p.deleted_at)),
        Some(Entry::Tombstone { .. }) => p.decide(None),
        None if p.deleted_at.is_some() => p.decide(None),
        None => {}
    }
}

/// The memtables' part of one key's lookup, as in `get_in`: decides the key
/// if a memtable holds a version of it, or a range tombstone there covers
/// it.
fn search_memtables(sv: &SuperVersion, p: &mut Pending<'_>, snapshot: SeqNo, counts: &ReadStripe) {
    for m in std::iter::once(&sv.mem).chain(sv.imm.iter().rev()) {
        if let Some(dels) = m.mem.range_dels() {
            p.deleted_at = p.deleted_at.max(dels.covering(p.key, snapshot));
        }
        if let Some((seq, kind, value)) = m.mem.get_version(p.key, snapshot) {
            bump(&counts.memtable_hits, 1);
            p.decide(visible(seq, kind, value, p.deleted_at));
            return;
        }
        if p.deleted_at.is_some() {
            p.decide(None);
            return;
        }
    }
}

impl Pending<'_> {
    fn decide(&mut self, value: Option<Bytes>) {
        self.done = true;
        self.value = value;
    }
}

/// The buffers of one step, reused from step to step of a batch.
struct Step<'t, 'k> {
    /// Indexes of pending keys, grouped by table.
    members: Vec<usize>,
    /// Each table of the step, with its run of `members`.
    groups: Vec<(&'t Arc<TableFile>, Range<usize>)>,
    probe: Vec<(&'k [u8], KeyHash)>,
    /// Keys that passed their filter: the key, its group, its data block
    /// once found, and the lookup so far.
    located: Vec<(usize, usize, Option<BlockHandle>, Lookup)>,
    /// Their index searches, in the same order.
    searches: Vec<Search>,
    scratch: BatchScratch,
}

impl Step<'_, '_> {
    /// Room for `keys` keys, so a batch allocates its buffers once.
    fn with_capacity(keys: usize) -> Self {
        Step {
            members: Vec::with_capacity(keys),
            groups: Vec::with_capacity(keys),
            probe: Vec::with_capacity(keys),
            located: Vec::with_capacity(keys),
            searches: Vec::with_capacity(keys),
            scratch: BatchScratch::with_capacity(keys),
        }
    }

    fn clear(&mut self) {
        self.members.clear();
        self.groups.clear();
    }
}
