//! Point lookups.
//!
//! Newest data first: the active memtable, the frozen memtables (newest
//! first), the level-0 tables (newest first), then one table per deeper
//! level, found by binary search on the level's key ranges. The first
//! version found at or below the snapshot (a value or a tombstone) decides.
//! The key is hashed once, under the database's salt, and the hash goes to
//! every table probe ([`crate::table::Table::get_hashed`]), which asks the
//! table's filter before touching its index or data. The candidate tables
//! are found first and their filters' cache lines requested together
//! ([`crate::filter::Filter::prefetch`]), then probed in order; what the filter said
//! and whether the table held the key is added to that level's counters,
//! the one place a probe is counted.
//!
//! Range tombstones are asked before a source's point entries, and before
//! a table's filter: a filter knows only the keys written, so one that
//! answers "absent" must not hide the table's range tombstones. The newest
//! tombstone covering the key that the snapshot sees decides against any
//! older version; and once one is found, nothing in an older source can be
//! newer than it (a table's key range covers its tombstones, so the one
//! ordering of sources that holds for versions holds for them too), so the
//! lookup ends there. A source without range tombstones costs one check of
//! an empty `Option`.

use std::sync::Arc;

use bytes::Bytes;

use crate::Result;
use crate::filter::KeyHash;
use crate::key::{SeqNo, ValueKind};
use crate::table::{Entry, FilterAnswer, Lookup};
use crate::tree::{SuperVersion, TableFile};

use super::DbInner;
use super::stats::{LevelCounters, bump};

mod multi;

/// Candidate tables whose filters are prefetched together: more than a
/// settled tree's levels plus a full level 0 (the rest are probed unfetched).
const AHEAD: usize = 12;

impl DbInner {
    /// Looks `key` up as of `snapshot`, or of the newest visible write when
    /// `None`. The newest visible sequence number is read *after* the tree:
    /// a compaction only drops versions shadowed at or below the visible
    /// sequence number of its time, which is then at most ours.
    pub(crate) fn get_at(&self, key: &[u8], snapshot: Option<SeqNo>) -> Result<Option<Bytes>> {
        self.get_in(None, key, snapshot)
    }

    /// [`DbInner::get_at`] in `pinned`, if given, else in the current tree
    /// (a secondary's snapshot keeps the state it was taken in: the
    /// writer's compactions never heard of it).
    pub(crate) fn get_in(
        &self,
        pinned: Option<&Arc<SuperVersion>>,
        key: &[u8],
        snapshot: Option<SeqNo>,
    ) -> Result<Option<Bytes>> {
        self.check_open()?;
        let counts = self.counters.read_stripe();
        bump(&counts.gets, 1);
        let sv = pinned.map_or_else(|| self.current(), Arc::clone);
        let snapshot = snapshot.unwrap_or_else(|| self.visible_seq());
        let mems = std::iter::once(&sv.mem).chain(sv.imm.iter().rev());
        // The newest range tombstone seen so far that covers the key.
        let mut deleted_at: Option<SeqNo> = None;
        for m in mems {
            if let Some(dels) = m.mem.range_dels() {
                deleted_at = deleted_at.max(dels.covering(key, snapshot));
            }
            if let Some((seq, kind, value)) = m.mem.get_version(key, snapshot) {
                bump(&counts.memtable_hits, 1);
                return Ok(visible(seq, kind, value, deleted_at));
            }
            if deleted_at.is_some() {
                return Ok(None);
            }
        }
        let hash = KeyHash::new(self.salt, key);
        // In tests, every lookup checks the search arrays against the plain
        // search by whole keys.
        debug_assert!(
            sv.tree.candidates(key).map(|(n, t)| (n, t.number())).eq(sv
                .tree
                .each_level()
                .flat_map(|l| l.tables_for(key).map(move |t| (l.number, t.number())))),
            "the level search arrays disagree with the tree"
        );
        let mut candidates = sv.tree.candidates(key);
        // The first candidates' filters start loading before any is probed,
        // so their cache misses overlap: a miss pays about one memory
        // latency, not one per level.
        let mut ahead: [Option<(usize, &Arc<TableFile>)>; AHEAD] = [None; AHEAD];
        for slot in &mut ahead {
            let Some((number, t)) = candidates.next() else { break };
            t.table.prefetch_filter(key, hash);
            *slot = Some((number, t));
        }
        for (number, t) in ahead.into_iter().flatten().chain(candidates) {
            if let Some(dels) = t.table.range_dels() {
                deleted_at = deleted_at.max(dels.covering(key, snapshot));
            }
            let lookup = t.table.get_hashed(key, hash, snapshot)?;
            if let Some(c) = counts.levels.get(number) {
                count_probe(c, &lookup);
            }
            match lookup.entry {
                Some(Entry::Value { seq, value }) => {
                    return Ok(visible(seq, ValueKind::Value, value, deleted_at));
                }
                Some(Entry::Tombstone { .. }) => return Ok(None),
                None if deleted_at.is_some() => return Ok(None),
                None => {}
            }
        }
        Ok(None)
    }
}

/// The value a version gives a reader, given the newest range tombstone
/// over its key the reader sees (`deleted_at`).
fn visible(seq: SeqNo, kind: ValueKind, value: Bytes, deleted_at: Option<SeqNo>) -> Option<Bytes> {
    let deleted = deleted_at.is_some_and(|t| t > seq);
    (kind == ValueKind::Value && !deleted).then_some(value)
}

/// Adds one table probe to its level's counters: one atomic add for a
/// filter's "absent" (a probe is the sum of its answers, see
/// `Counters::snapshot`), three for a probe that read a block.
fn count_probe(c: &LevelCounters, lookup: &Lookup) {
    let mut tally = Tally::default();
    tally.add(lookup);
    tally.bump(c);
}

/// Table probes of one level, summed before they are added to its
/// counters (a batch adds a step's probes at once).
#[derive(Debug, Default)]
struct Tally {
    /// By the filter's answer: no filter, absent, found, a false positive.
    answers: [u64; 4],
    blocks_read: u64,
    bytes_read: u64,
}

impl Tally {
    fn add(&mut self, lookup: &Lookup) {
        let found = lookup.entry.is_some();
        let answer = match lookup.filter {
            FilterAnswer::NoFilter => 0,
            FilterAnswer::Absent => 1,
            FilterAnswer::MayContain if found => 2,
            FilterAnswer::MayContain => 3,
        };
        self.answers[answer] += 1;
        self.blocks_read += u64::from(lookup.blocks_read);
        self.bytes_read += lookup.bytes_read;
    }

    /// Adds the sums to `c`, skipping the zeros.
    fn bump(&self, c: &LevelCounters) {
        let counters = [
            &c.probes_without_filter,
            &c.filter_negatives,
            &c.filter_true_positives,
            &c.filter_false_positives,
        ];
        for (counter, &n) in counters.into_iter().zip(&self.answers) {
            if n > 0 {
                bump(counter, n);
            }
        }
        if self.blocks_read > 0 {
            bump(&c.data_blocks_read, self.blocks_read);
            bump(&c.bytes_read, self.bytes_read);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::filter::HASHES;
    use crate::{Db, FilterKind, FilterPolicy, Options};

    /// A filter on every table, however small: `monkey:10`, the default,
    /// leaves a table of three keys unfiltered (its filter block alone
    /// would cost 80 bits a key).
    fn bloom() -> FilterPolicy {
        FilterPolicy::uniform(FilterKind::BlockedBloom { bits_per_key: 10.0 })
    }

    /// Three level-0 tables that all cover the key, so a miss probes three
    /// filters; it hashes the key once.
    #[test]
    fn a_lookup_hashes_its_key_once() {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options {
            auto_compaction: false,
            hash_salt: Some(5),
            filter_policy: Some(bloom()),
            ..Options::default()
        };
        let db = Db::open(dir.path(), opts).unwrap();
        for round in 0..3u32 {
            for k in [b"a".as_slice(), b"m", b"z"] {
                db.put(k, round.to_le_bytes()).unwrap();
            }
            db.flush().unwrap();
        }
        assert_eq!(db.stats().levels[0].tables, 3);
        let before = HASHES.with(std::cell::Cell::get);
        assert_eq!(db.get(b"q").unwrap(), None);
        assert_eq!(HASHES.with(std::cell::Cell::get) - before, 1, "one hash for three probes");
        let stats = db.stats();
        assert_eq!(stats.levels[0].filter_probes, 3);
        // Present keys too: the newest table answers, hashed once.
        let before = HASHES.with(std::cell::Cell::get);
        assert_eq!(db.get(b"m").unwrap().as_deref(), Some(&2u32.to_le_bytes()[..]));
        assert_eq!(HASHES.with(std::cell::Cell::get) - before, 1);
    }

    /// More candidate tables than are prefetched ahead: the rest are still
    /// probed, in order, so a key only the oldest level-0 table holds is
    /// found, and a newer version in a newer table wins.
    #[test]
    fn candidates_beyond_the_prefetched_ones_are_probed() {
        let dir = tempfile::tempdir().unwrap();
        let tables = super::AHEAD + 4;
        let opts = Options {
            auto_compaction: false,
            l0_slowdown_trigger: 64,
            l0_stop_trigger: 64,
            hash_salt: Some(5),
            filter_policy: Some(bloom()),
            ..Options::default()
        };
        let db = Db::open(dir.path(), opts).unwrap();
        for i in 0..tables {
            // Every table spans "a".."z", so each is a candidate for every key.
            db.put(b"a", i.to_le_bytes()).unwrap();
            db.put(format!("m{i:02}"), b"only here").unwrap();
            db.put(b"z", i.to_le_bytes()).unwrap();
            db.flush().unwrap();
        }
        assert_eq!(db.stats().levels[0].tables, tables as u64);
        for i in 0..tables {
            assert_eq!(db.get(format!("m{i:02}")).unwrap().as_deref(), Some(&b"only here"[..]), "m{i:02}");
        }
        assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&(tables - 1).to_le_bytes()[..]));
        let before = db.stats();
        assert_eq!(db.get(b"m99").unwrap(), None);
        assert_eq!(db.stats().since(&before).levels[0].filter_probes, tables as u64, "every table asked");
    }
}
