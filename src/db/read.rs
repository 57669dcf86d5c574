//! Point lookups.
//!
//! Newest data first: the active memtable, the frozen memtables (newest
//! first), the level-0 tables (newest first), then one table per deeper
//! level, found by binary search on the level's key ranges. The first
//! version found at or below the snapshot (a value or a tombstone) decides.
//! Each table probe goes through [`crate::table::Table::get`], which asks the
//! table's filter before touching its index or data; what the filter said
//! and whether the table held the key is added to that level's counters.

use bytes::Bytes;

use crate::Result;
use crate::key::{SeqNo, ValueKind};
use crate::table::{Entry, FilterAnswer, Lookup};

use super::DbInner;
use super::stats::{LevelCounters, bump};

impl DbInner {
    /// Looks `key` up as of `snapshot`, or of the newest visible write when
    /// `None`. The newest visible sequence number is read *after* the tree:
    /// a compaction only drops versions shadowed at or below the visible
    /// sequence number of its time, which is then at most ours.
    pub(crate) fn get_at(&self, key: &[u8], snapshot: Option<SeqNo>) -> Result<Option<Bytes>> {
        self.check_open()?;
        bump(&self.counters.gets, 1);
        let sv = self.current();
        let snapshot = snapshot.unwrap_or_else(|| self.visible_seq());
        let mems = std::iter::once(&sv.mem).chain(sv.imm.iter().rev());
        for m in mems {
            if let Some((kind, value)) = m.mem.get(key, snapshot) {
                bump(&self.counters.memtable_hits, 1);
                return Ok(match kind {
                    ValueKind::Value => Some(value),
                    ValueKind::Tombstone => None,
                });
            }
        }
        for level in sv.tree.each_level() {
            for t in level.tables_for(key) {
                let lookup = t.table.get(key, snapshot)?;
                if let Some(c) = self.counters.levels.get(level.number) {
                    count_probe(c, &lookup);
                }
                match lookup.entry {
                    Some(Entry::Value { value, .. }) => return Ok(Some(value)),
                    Some(Entry::Tombstone { .. }) => return Ok(None),
                    None => {}
                }
            }
        }
        Ok(None)
    }
}

/// Adds one table probe to its level's counters.
fn count_probe(c: &LevelCounters, lookup: &Lookup) {
    let found = lookup.entry.is_some();
    match lookup.filter {
        FilterAnswer::NoFilter => bump(&c.probes_without_filter, 1),
        FilterAnswer::Absent => {
            bump(&c.filter_probes, 1);
            bump(&c.filter_negatives, 1);
        }
        FilterAnswer::MayContain => {
            bump(&c.filter_probes, 1);
            bump(if found { &c.filter_true_positives } else { &c.filter_false_positives }, 1);
        }
    }
    bump(&c.data_blocks_read, u64::from(lookup.blocks_read));
    bump(&c.bytes_read, lookup.bytes_read);
}
