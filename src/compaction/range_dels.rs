//! What a compaction does with range tombstones: it gives back the space
//! of what they delete, and drops the tombstones themselves once nothing
//! can need them (docs/range-deletes.md, "Compaction").
//!
//! The *horizon* is the executor's: the oldest sequence number a reader may
//! still look at. A tombstone at or below it is seen by every reader, so
//! - a version it covers with a smaller sequence number is seen by none,
//!   and is dropped (above the horizon some snapshot may sit between the
//!   two, and the version stays, as an older point version does);
//! - an input table whose whole key range it covers, and whose every
//!   version is older than it, is dropped without being read;
//! - the tombstone itself is dropped once no level below the output holds
//!   a key of its range: everything it covered in the inputs is gone, and
//!   there is nothing older left for it to hide.
//!
//! Every other tombstone is carried into the outputs.

use std::sync::Arc;

use crate::key::SeqNo;
use crate::range_del::{RangeDels, RangeTombstone};
use crate::sources::KeyVersion;
use crate::tree::{Level, TableFile, Tree};

/// The inputs' range tombstones, and the rules above.
pub(crate) struct RangeDelRules {
    dels: RangeDels,
    horizon: SeqNo,
}

impl RangeDelRules {
    /// The rules for a compaction of `inputs` below `horizon`.
    pub fn new<'a>(inputs: impl IntoIterator<Item = &'a Arc<TableFile>>, horizon: SeqNo) -> Self {
        let tombstones =
            inputs.into_iter().filter_map(|t| t.table.range_dels()).flat_map(RangeDels::tombstones);
        RangeDelRules { dels: RangeDels::new(tombstones.cloned()), horizon }
    }

    /// Whether `v` is deleted for every reader.
    pub fn drops(&self, v: &KeyVersion) -> bool {
        !self.dels.is_empty() && self.dels.deletes(&v.key, v.seq, self.horizon)
    }

    /// Whether a tombstone seen by every reader deletes all of `t`: its
    /// whole key range, every version in it.
    pub fn drops_table(&self, t: &TableFile) -> bool {
        let r = &t.record;
        !self.dels.is_empty()
            && self.dels.tombstones().iter().any(|d| {
                d.seq > r.max_seq
                    && d.seq <= self.horizon
                    && d.start.as_ref() <= r.smallest.as_slice()
                    && r.largest.as_slice() < d.end.as_ref()
            })
    }

    /// The tombstones the outputs carry: all but those every reader sees
    /// whose range no level below `output_level` of `tree` holds a key of.
    pub fn carried(&self, tree: &Tree, output_level: usize) -> Vec<RangeTombstone> {
        let below: Vec<Level<'_>> = tree.each_level().skip(output_level + 1).collect();
        let needed = |d: &RangeTombstone| d.seq > self.horizon || below.iter().any(|l| meets(*l, d));
        self.dels.tombstones().iter().filter(|d| needed(d)).cloned().collect()
    }
}

/// Whether a table of sorted level `l` holds a key range meeting `d`'s.
fn meets(l: Level<'_>, d: &RangeTombstone) -> bool {
    let i = l.first_ending_at_or_after(&d.start);
    l.tables.get(i).is_some_and(|t| t.record.smallest.as_slice() < d.end.as_ref())
}
