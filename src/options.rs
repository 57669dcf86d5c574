//! How a database is configured.

use std::sync::Arc;

mod compaction;

pub use compaction::{Clock, Compaction, CompactionFilter, Decision, SystemClock};

use crate::fs::{FileSystem, StdFs};
use crate::key_image::RangeFilterPolicy;
use crate::policy::{CompressionPolicy, FilterPolicy};
use crate::prefix::PrefixExtractor;
use crate::wal::RecoveryMode;
use crate::{Error, Result};

/// The largest user key accepted, in bytes (64 KiB − 1).
///
/// Keys are short by nature; a bound keeps index blocks and WAL records of
/// sane size. Empty keys are allowed: the empty string is a key like any
/// other, and sorts before every other key.
pub const MAX_KEY_BYTES: usize = 65_535;

/// The largest value accepted, in bytes (64 MiB).
///
/// A value lives inside one data block and one WAL record; far below the
/// WAL's 1 GiB record limit, it keeps a single write from stalling the log.
pub const MAX_VALUE_BYTES: usize = 64 << 20;

/// Database configuration. `Options::default()` suits tests and small data.
///
/// ```
/// let opts = siftdb::Options { memtable_bytes: 1 << 20, sync: true, ..Default::default() };
/// assert_eq!(opts.l0_compaction_trigger, 4);
/// ```
#[derive(Debug, Clone)]
pub struct Options {
    /// Approximate bytes a memtable holds before it is frozen and flushed to
    /// a level-0 table. Default 64 MiB, with level 1 at 256 MiB
    /// ([`Options::base_level_bytes`]): `RocksDB`'s and fjall's sizes. Level
    /// 0's trigger of 4 such tables then holds as much as level 1's target,
    /// so a level-0 compaction rewrites about one byte of level 1 per byte it
    /// brings down, and a 10^7-key tree needs two levels below level 0, not
    /// three: against 16 MiB and 64 MiB, a 10^7-key fill ran 1.27 times as
    /// fast and wrote 0.64 of the table bytes (docs/measurements.md, "Level
    /// sizes"). It costs up to three memtables of memory (one filling, two
    /// waiting for their flush).
    pub memtable_bytes: usize,
    /// `true`: every write is fsynced before it is acknowledged (concurrent
    /// writers share fsyncs: group commit). `false`: every write reaches the
    /// operating system before it is acknowledged (it survives a process
    /// crash, not a power loss) and is fsynced at flush and by [`crate::Db::sync`].
    pub sync: bool,
    /// What WAL replay does with a damaged record: `AbsoluteConsistency`
    /// (the default) refuses to open with `Corruption`, `PointInTime` stops
    /// there and recovers the writes before it. A torn tail (the last record
    /// cut short, or a zero-filled tail) is always dropped. The manifest
    /// ignores this setting: its damage is always `Corruption`, since
    /// skipping an edit would lose tables or resurrect deleted ones.
    pub recovery: RecoveryMode,
    /// A fixed filter hash salt, for reproducible tests and benchmarks.
    /// `None` makes a random one when the database is created. Either way the
    /// salt is stored in the manifest and an existing database keeps its own;
    /// `Db::options()` of an open database names it.
    pub hash_salt: Option<u64>,
    /// Which filter each level's tables carry. The policy is part of the
    /// database: it is stored in the manifest and kept across opens.
    ///
    /// - `None` (the default): use the stored policy, or
    ///   [`FilterPolicy::default`] for a new database (which is then stored).
    /// - `Some(policy)`: use `policy` for every table written from now on,
    ///   and store it in place of the old one; [`crate::Stats`] and
    ///   `siftdb db info` report the policy it replaced. Tables already
    ///   written keep their filters until compaction rewrites them.
    ///
    /// [`crate::Db::filter_policy`] tells which policy an open database uses.
    pub filter_policy: Option<FilterPolicy>,
    /// The most bytes of filter the planner spends over all live tables
    /// (stored in the manifest and kept across opens, as `filter_policy`).
    ///
    /// - `None` (the default): the stored budget, or none for a database
    ///   that never stored one (filter memory then grows with the data, at
    ///   the policy's bits per key).
    /// - `Some(bytes)`: store and use `bytes`; `Some(u64::MAX)` lifts a
    ///   stored budget.
    ///
    /// A budget caps a Monkey policy (`monkey:B`): its bits per key become
    /// at most `bytes × 8 / keys` over the keys the tree holds once
    /// settled, placed as Monkey places them (the deepest levels give up
    /// bits first, down to no filter). A per-level policy has no bits to
    /// move, so an open with a budget and such a policy is
    /// `InvalidArgument`. What the cap allows to pass it for a while is in
    /// the `policy` module's docs ("A memory budget").
    pub filter_memory_bytes: Option<u64>,
    /// Which leading bytes of a key count as its prefix for prefix filters
    /// (default `None`: filters hold whole keys only).
    ///
    /// With an extractor, every table written from then on also puts each
    /// distinct prefix of its keys into its filter (sized for keys and
    /// prefixes together, at the level's bits per entry), and records the
    /// extractor's name. [`crate::Db::prefix`] and [`crate::Db::range`] over
    /// a range within one prefix then skip every table whose filter lacks
    /// it. Keys outside the extractor's domain (shorter than
    /// [`PrefixExtractor::fixed`]'s length, or without
    /// [`PrefixExtractor::up_to`]'s delimiter) add no prefix, and scans of a
    /// prefix the extractor gives nothing for are not filtered.
    ///
    /// Changing it is safe at any open: tables written under another
    /// extractor, or none, are never skipped by prefix (they are read as
    /// before), until compaction rewrites them under the new one.
    pub prefix_extractor: Option<PrefixExtractor>,
    /// If set, every table written from then on (flushes, compactions) also
    /// gets a range filter over its keys' images, and a bounded scan skips
    /// the tables it proves hold no key in its range (docs/scan-filters.md).
    /// Default `None`. Like the extractor, safe to change at any open: a
    /// table is probed only under the image it was built with (by name).
    pub range_filter: Option<RangeFilterPolicy>,
    /// Target size of a table's data blocks.
    pub block_bytes: usize,
    /// The codec each level's tables are written with (default
    /// [`CompressionPolicy::default`]: LZ4 on every level; the figures
    /// behind it are in its docs). It is not stored: each table records its own codec, so
    /// a database opened with another policy reads the tables it has and
    /// writes new ones (flushes and compactions) with the new policy.
    pub compression: CompressionPolicy,
    /// The file system every file goes through (tests inject faults here).
    pub fs: Arc<dyn FileSystem>,
    /// Level-0 tables that trigger a compaction into level 1, at least
    /// (leveled compaction; default 4): level 0 then waits, up to
    /// [`Options::l0_compaction_trigger_max`] tables, until it holds as
    /// many bytes as level 1.
    pub l0_compaction_trigger: usize,
    /// Level-0 tables that trigger a compaction into level 1 whatever
    /// level 1 holds (default 7; at most `l0_compaction_trigger` keeps a
    /// fixed trigger, as `RocksDB` does). Each level-0 merge rewrites all of
    /// level 1 that its flushes overlap, which for keys spread over the key
    /// space is all of it: waiting until level 0 holds level 1's bytes
    /// keeps that rewrite to at most one byte per byte merged in, where a
    /// fixed trigger of 4 flushes (29 MB each at 10^7 keys) over a full
    /// level 1 of 256 MiB rewrites 2.3 (over a 10^7-key fill, 1.4 on
    /// average: docs/measurements.md).
    /// The price is up to this many tables on level 0: a point read
    /// probes their filters, a scan reads each. It is capped at
    /// `l0_slowdown_trigger − 1`, so the wait never slows writes.
    pub l0_compaction_trigger_max: usize,
    /// Level-0 tables past which each write sleeps ~1 ms (leveled
    /// compaction only: FIFO keeps every table on level 0). Default 12:
    /// above `l0_compaction_trigger_max` by the flushes that arrive while
    /// a merge of that many tables runs (at 8, a 7-table merge over a full
    /// level 1 slowed a 10^7-key fill for 1.1-1.6 s; `RocksDB`'s default is
    /// 20).
    pub l0_slowdown_trigger: usize,
    /// Level-0 tables past which writes wait for compaction (leveled
    /// only; default 20).
    pub l0_stop_trigger: usize,
    /// Target size of level 1; level `i` aims at `base_level_bytes × ratio^(i−1)`.
    /// Default 256 MiB (see [`Options::memtable_bytes`]).
    pub base_level_bytes: u64,
    /// Size ratio between adjacent levels.
    pub level_size_ratio: u64,
    /// Size at which compaction output tables of level 1 are split; level
    /// `i ≥ 1` splits at `table_target_bytes × table_size_multiplier^(i−1)`.
    pub table_target_bytes: u64,
    /// Growth of the table size from one level to the next (`RocksDB`'s
    /// `target_file_size_multiplier`); 1 (the default) keeps one size.
    /// A multiplier near the level size ratio keeps the table count per
    /// level about even, so the big levels hold big tables, whose filters'
    /// fixed bytes (a header, one 64-byte Bloom block, a fuse filter's
    /// segments) cost little per key.
    pub table_size_multiplier: u64,
    /// Number of levels, level 0 included: 2 to 7 (the manifest records
    /// levels 0 to 6), default 7.
    pub max_levels: usize,
    /// Size past which the manifest is rewritten as one snapshot edit (it
    /// otherwise grows by one edit per flush and compaction until reopened).
    pub manifest_roll_bytes: u64,
    /// The compaction strategy: [`Compaction::Leveled`] (the default), or
    /// [`Compaction::Fifo`] for data kept for a window of time or bytes.
    /// Each open runs the strategy it is given (a FIFO database reopened
    /// leveled merges its tables down as usual); the manifest records the
    /// last one for `siftdb db info`.
    pub compaction: Compaction,
    /// Called on each key's newest value a leveled merge rewrites, to keep,
    /// remove or change it (default `None`); what it sees and must do is in
    /// [`CompactionFilter`]'s docs.
    pub compaction_filter: Option<Arc<dyn CompactionFilter>>,
    /// The clock tables record their creation time with, and FIFO's TTL
    /// reads (default [`SystemClock`]).
    pub clock: Arc<dyn Clock>,
    /// Pieces a merge may split into by key range, merged side by side on
    /// threads of their own (`RocksDB`'s `max_subcompactions`; the cuts fall
    /// between the output level's input tables). Default 2: while a
    /// level-0 merge rewrites level 1, a full level 0 stops the writer and
    /// leaves a core idle. 1 merges on the compaction thread alone, as do
    /// refreshes and every merge under `filter_memory_bytes` (whose plan
    /// moves with the tables' sizes).
    pub subcompactions: usize,
    /// Whether background compaction runs on its own; `false` leaves it to
    /// [`crate::Db::compact`] (writes still stop past `l0_stop_trigger`
    /// only when this is `true`).
    pub auto_compaction: bool,
    /// Fault injection (feature `internals`, for the project's own tests):
    /// every xor or fuse filter build fails, to exercise the blocked-Bloom
    /// fallback (see `TableOptions`).
    #[cfg(feature = "internals")]
    pub inject_filter_build_failure: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            memtable_bytes: 64 << 20,
            sync: false,
            recovery: RecoveryMode::default(),
            hash_salt: None,
            filter_policy: None,
            filter_memory_bytes: None,
            prefix_extractor: None,
            range_filter: None,
            block_bytes: 4096,
            compression: CompressionPolicy::default(),
            fs: Arc::new(StdFs),
            l0_compaction_trigger: 4,
            l0_compaction_trigger_max: 7,
            l0_slowdown_trigger: 12,
            l0_stop_trigger: 20,
            base_level_bytes: 256 << 20,
            level_size_ratio: 10,
            table_target_bytes: 8 << 20,
            max_levels: 7,
            manifest_roll_bytes: 4 << 20,
            auto_compaction: true,
            subcompactions: 2,
            compaction: Compaction::Leveled,
            compaction_filter: None,
            clock: Arc::new(SystemClock),
            table_size_multiplier: 1,
            #[cfg(feature = "internals")]
            inject_filter_build_failure: false,
        }
    }
}

impl Options {
    /// Whether table builds are told to fail their xor and fuse filters
    /// (the `internals` feature's fault hook; never without it).
    #[cfg_attr(
        not(feature = "internals"),
        allow(clippy::unused_self, reason = "no hook without the feature")
    )]
    pub(crate) fn injects_filter_build_failure(&self) -> bool {
        #[cfg(feature = "internals")]
        return self.inject_filter_build_failure;
        #[cfg(not(feature = "internals"))]
        false
    }

    /// Checks the options for values the engine cannot work with.
    ///
    /// # Errors
    /// `InvalidArgument` naming the bad option.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str| Err(Error::InvalidArgument(format!("option {what}")));
        if self.memtable_bytes == 0 {
            return bad("memtable_bytes must be positive");
        }
        if self.block_bytes == 0 {
            return bad("block_bytes must be positive");
        }
        if let Some(e) = &self.prefix_extractor {
            e.validate()?;
        }
        if let Some(r) = &self.range_filter {
            r.validate()?;
        }
        if !(2..=crate::manifest::NUM_LEVELS).contains(&self.max_levels) {
            return Err(Error::InvalidArgument(format!(
                "option max_levels must be from 2 to {}, got {}",
                crate::manifest::NUM_LEVELS,
                self.max_levels
            )));
        }
        if self.level_size_ratio < 2 {
            return bad("level_size_ratio must be at least 2");
        }
        if self.l0_compaction_trigger == 0 {
            return bad("l0_compaction_trigger must be positive");
        }
        if self.l0_slowdown_trigger < self.l0_compaction_trigger
            || self.l0_stop_trigger < self.l0_slowdown_trigger
        {
            return bad("l0 triggers must satisfy compaction <= slowdown <= stop");
        }
        if self.base_level_bytes == 0 || self.table_target_bytes == 0 {
            return bad("base_level_bytes and table_target_bytes must be positive");
        }
        self.compaction.validate()?;
        if self.table_size_multiplier == 0 {
            return bad("table_size_multiplier must be at least 1");
        }
        if !(1..=64).contains(&self.subcompactions) {
            return bad("subcompactions must be 1 to 64");
        }
        if let Some(policy) = &self.filter_policy {
            policy.validate().map_err(|e| match e {
                Error::InvalidArgument(m) => {
                    Error::InvalidArgument(format!("option filter_policy {policy}: {m}"))
                }
                other => other,
            })?;
        }
        self.compression.validate().map_err(|e| match e {
            Error::InvalidArgument(m) => {
                Error::InvalidArgument(format!("option compression {}: {m}", self.compression))
            }
            other => other,
        })?;
        Ok(())
    }

    /// Size at which compaction splits the tables it writes to `level`
    /// (level 0 and 1: `table_target_bytes`).
    #[must_use]
    pub fn table_target_bytes_for(&self, level: usize) -> u64 {
        grown(self.table_target_bytes, self.table_size_multiplier, level)
    }

    /// Target bytes of `level` (≥ 1).
    #[must_use]
    pub fn level_target_bytes(&self, level: usize) -> u64 {
        grown(self.base_level_bytes, self.level_size_ratio, level)
    }
}

/// `base × factor^(level−1)` (`base` for levels 0 and 1), saturating.
fn grown(base: u64, factor: u64, level: usize) -> u64 {
    (1..level).fold(base, |size, _| size.saturating_mul(factor))
}

/// Checks a key and value against [`MAX_KEY_BYTES`] and [`MAX_VALUE_BYTES`].
///
/// # Errors
/// `InvalidArgument` naming the limit exceeded.
pub(crate) fn check_entry(key: &[u8], value: &[u8]) -> Result<()> {
    if key.len() > MAX_KEY_BYTES {
        return Err(Error::InvalidArgument(format!(
            "key of {} bytes exceeds the {MAX_KEY_BYTES}-byte limit",
            key.len()
        )));
    }
    if value.len() > MAX_VALUE_BYTES {
        return Err(Error::InvalidArgument(format!(
            "value of {} bytes exceeds the {MAX_VALUE_BYTES}-byte limit",
            value.len()
        )));
    }
    Ok(())
}

/// Checks every op of `batch` and the batch's total size (one WAL record).
///
/// # Errors
/// `InvalidArgument` naming the limit exceeded.
pub(crate) fn check_batch(batch: &crate::WriteBatch) -> Result<()> {
    for op in batch.iter() {
        if let crate::BatchOp::DeleteRange { start, end } = op {
            check_entry(start, b"")?;
            check_entry(end, b"")?;
            if start >= end {
                return Err(Error::InvalidArgument(format!(
                    "delete_range: start {:?} must sort before end {:?}",
                    bytes::Bytes::copy_from_slice(start),
                    bytes::Bytes::copy_from_slice(end)
                )));
            }
        } else {
            check_entry(op.key(), op.value())?;
        }
    }
    // Each op adds at most a kind byte and two 10-byte varints; 12 header bytes.
    let bound = batch.payload_bytes() + 21 * batch.len() + 12;
    if bound > crate::wal::MAX_PAYLOAD {
        return Err(Error::InvalidArgument(format!(
            "batch of about {bound} bytes exceeds the {}-byte WAL record limit",
            crate::wal::MAX_PAYLOAD
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_extractors_are_validated() {
        assert_eq!(crate::prefix::MAX_FIXED_PREFIX, MAX_KEY_BYTES);
        let with = |e| Options { prefix_extractor: Some(e), ..Options::default() };
        assert!(with(PrefixExtractor::fixed(8)).validate().is_ok());
        assert!(with(PrefixExtractor::up_to(b':')).validate().is_ok());
        for bad in [0, MAX_KEY_BYTES + 1] {
            let err = with(PrefixExtractor::fixed(bad)).validate().unwrap_err();
            assert!(matches!(&err, Error::InvalidArgument(m) if m.contains("fixed")), "{err}");
        }
    }

    #[test]
    fn defaults_validate_and_level_targets_grow_by_the_ratio() {
        let o = Options::default();
        o.validate().unwrap();
        assert_eq!(o.level_target_bytes(1), 256 << 20);
        assert_eq!(o.level_target_bytes(3), 25_600 << 20);
        let bad = Options { l0_stop_trigger: 1, ..Options::default() };
        assert!(matches!(bad.validate(), Err(Error::InvalidArgument(_))));
    }

    #[test]
    fn entry_limits_are_inclusive() {
        check_entry(&vec![0; MAX_KEY_BYTES], b"").unwrap();
        assert!(check_entry(&vec![0; MAX_KEY_BYTES + 1], b"").is_err());
        check_entry(b"", b"").unwrap();
    }
}
