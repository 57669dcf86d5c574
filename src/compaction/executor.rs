//! Running one compaction: merge the inputs, drop what no reader can see,
//! write the output tables, and install them in one manifest edit.
//!
//! What is dropped, per user key (versions arrive newest first):
//! - every version newer than the *horizon* (the oldest live snapshot, or
//!   the newest visible sequence number when there is none) is kept, since
//!   some reader may still look at it;
//! - of the versions at or below the horizon only the newest is kept: it
//!   shadows the rest for every reader;
//! - that newest version is dropped too if it is a tombstone and no deeper
//!   level holds the key's range (nothing older can be uncovered);
//! - a version a range tombstone at or below the horizon covers is dropped,
//!   a table such a tombstone wholly covers is not even read, and the
//!   tombstone goes too once nothing below can need it
//!   ([`super::range_dels`]);
//! - a value every reader sees, written where no deeper level holds its
//!   key range (the job's outputs are then the oldest versions there are),
//!   loses its sequence number: it is written as 0 ([`bottommost`]);
//! - the compaction filter (`Options::compaction_filter`), if any, is asked
//!   about each key's newest version when it is a value newer than every
//!   live snapshot: kept, changed, or turned into a tombstone
//!   ([`apply_filter`]). A refresh asks nothing.
//!
//! Output tables split at the level's `table_target_bytes_for`, only between user keys, so
//! the output level stays a set of non-overlapping key ranges. Outputs are
//! published atomically by the table builder; the job returns one manifest
//! edit that adds them and removes the inputs, which the database installs
//! (inputs are deleted once no reader holds them).

use std::sync::Arc;

use crate::Result;
use crate::key::{SeqNo, ValueKind};
use crate::manifest::{DropTotals, TableRecord, VersionEdit};
use crate::merge::Merge;
use crate::policy::Writing;
use crate::sources::{KeyVersion, Source, TablesSource};
use crate::tree::{TableFile, Tree};

use super::range_dels::RangeDelRules;
use super::strategy::{Choice, Job};
use super::subcompaction::{self, Piece};
use super::writer::OutputWriter;
use super::{Filtered, JobContext, Outcome};
use crate::options::{CompactionFilter, Decision};

/// Runs what a strategy chose on `tree` to completion: its outputs are
/// published, and the edit that swaps them in is returned for the database
/// to install; `None` for [`Choice::Nothing`].
///
/// # Errors
/// Reading an input or writing an output; nothing is installed then.
pub(crate) fn run(ctx: &JobContext<'_>, choice: &Choice, tree: &Tree) -> Result<Option<Outcome>> {
    if let Choice::Drop(job) = choice {
        return Ok(Some(drop_tables(ctx, job)));
    }
    if let Choice::Move(job) = choice {
        return Ok(Some(move_tables(ctx, job)));
    }
    let (Some(job), Some(output_level)) = (choice.job(), choice.output_level()) else {
        return Ok(None);
    };
    let refresh = matches!(choice, Choice::Refresh(_));
    let horizon = ctx.horizon;
    let rules = RangeDelRules::new(job.inputs.iter().chain(&job.next_inputs), horizon);
    // A table a range tombstone wholly deletes is removed unread (a refresh
    // keeps its table as it is).
    let mut dropped_by_range = 0;
    let mut read = |tables: &[Arc<TableFile>]| -> Vec<Arc<TableFile>> {
        let (kept, dropped): (Vec<_>, Vec<_>) =
            tables.iter().cloned().partition(|t| refresh || !rules.drops_table(t));
        dropped_by_range += dropped.iter().map(|t| t.record.entries).sum::<u64>();
        kept
    };
    let (upper, lower) = (read(&job.inputs), read(&job.next_inputs));

    // The upper inputs' entries leave their level and arrive at the output
    // (which may be a new deepest level); the policy plans with that.
    let entries = job.inputs.iter().map(|t| t.record.entries).sum();
    let passing = if job.through { job.next_inputs.iter().map(|t| t.record.entries).sum() } else { 0 };
    let writing = Writing { level: output_level, entries, from: Some(job.level), passing };
    let replaced = match (refresh, job.through) {
        (true, _) => &job.inputs[..],
        (false, false) => &job.next_inputs[..],
        (false, true) => &[][..],
    };
    let incoming: u64 = job.inputs.iter().chain(&job.next_inputs).map(|t| t.record.entries).sum();
    // Each output gets the part of the carried tombstones within its range.
    let carried = if refresh {
        let all = job.inputs.iter().filter_map(|t| t.table.range_dels());
        all.flat_map(|d| d.tombstones().iter().cloned()).collect()
    } else {
        rules.carried(tree, output_level)
    };
    let bottommost = !refresh && bottommost(tree, output_level, job.inputs.iter().chain(&job.next_inputs));
    let merge = PieceMerge {
        ctx,
        tree,
        refresh,
        bottommost,
        level: job.level,
        output_level,
        rules: &rules,
        upper,
        lower,
    };
    let writer = |piece: &Piece| {
        #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
        let part = (incoming as f64 * piece.share).ceil() as u64;
        let mut out =
            OutputWriter::new(ctx, tree, writing, !refresh, replaced, incoming).piece(piece.share, part);
        out.carry_range_dels(
            carried.iter().filter_map(|d| d.clipped(piece.lo.as_deref(), piece.hi.as_deref())).collect(),
        );
        out
    };
    // A refresh keeps its table whole. A budget's Bloom bits are one
    // account over the level, kept by one writer; and under a fixed filter
    // memory budget, whose plan moves with the tables' sizes, split merges
    // left the plan asking 5-6 refreshes after a one-key write, not 2-3
    // (tests/filter_budget.rs), so those merge whole too.
    let whole = Piece::whole();
    let first = writer(&whole);
    let budget = ctx.opts.filter_memory_bytes.is_some();
    let pieces = if refresh || budget || first.keeps_bloom_account() {
        Vec::new()
    } else {
        let table_bytes = ctx.opts.table_target_bytes_for(output_level);
        subcompaction::pieces(ctx.opts.subcompactions, &job.next_inputs, table_bytes)
    };
    let done = if pieces.len() < 2 {
        merge.run(&whole, first)?
    } else {
        drop(first);
        merge.run_pieces(&pieces, writer)?
    };
    dropped_by_range += done.dropped_by_range;
    let (outputs, filtered) = (done.outputs, done.filtered);

    let mut edit =
        VersionEdit { next_file_number: Some(ctx.sink.next_file_number()), ..VersionEdit::default() };
    for t in &job.inputs {
        edit.removed.push((level_u8(job.level), t.number()));
    }
    for t in &job.next_inputs {
        edit.removed.push((level_u8(job.level + 1), t.number()));
    }
    for t in &outputs {
        edit.added.push((level_u8(output_level), TableRecord::clone(&t.record)));
    }
    let bytes_written = outputs.iter().map(|t| t.record.file_size).sum();
    Ok(Some(Outcome {
        edit,
        outputs,
        bytes_read: job.input_bytes(),
        bytes_written,
        dropped_by_range,
        filtered,
        pieces: pieces.len().max(1),
    }))
}

/// What every piece of one merge reads and decides with.
struct PieceMerge<'a> {
    ctx: &'a JobContext<'a>,
    tree: &'a Tree,
    refresh: bool,
    /// Nothing below the output level meets the job's key range.
    bottommost: bool,
    level: usize,
    output_level: usize,
    rules: &'a RangeDelRules,
    /// The input tables left to read, of the job's level and the next.
    upper: Vec<Arc<TableFile>>,
    lower: Vec<Arc<TableFile>>,
}

/// What one piece wrote and dropped.
#[derive(Default)]
struct PieceDone {
    outputs: Vec<Arc<TableFile>>,
    dropped_by_range: u64,
    filtered: Filtered,
}

impl PieceMerge<'_> {
    /// Merges the versions of `piece`'s key range into `out`'s tables.
    fn run(&self, piece: &Piece, mut out: OutputWriter<'_>) -> Result<PieceDone> {
        let start = piece.lo.as_deref().unwrap_or_default();
        let mut sources: Vec<Box<dyn Source>> = Vec::new();
        if self.level == 0 {
            for t in &self.upper {
                sources.push(Box::new(TablesSource::new(vec![Arc::clone(t)], start)?));
            }
        } else if !self.upper.is_empty() {
            sources.push(Box::new(TablesSource::new(self.upper.clone(), start)?));
        }
        if !self.lower.is_empty() {
            sources.push(Box::new(TablesSource::new(self.lower.clone(), start)?));
        }
        let may_exist_deeper = |key: &[u8]| {
            let mut deeper = self.tree.each_level().skip(self.output_level + 1);
            deeper.any(|level| level.tables_for(key).next().is_some())
        };
        let (refresh, horizon) = (self.refresh, self.ctx.horizon);
        let mut done = PieceDone::default();
        let mut current: Option<bytes::Bytes> = None;
        let mut kept_at_horizon = false;
        let mut merge = Merge::new(sources);
        let mut read = 0u64;
        let filter = self.ctx.opts.compaction_filter.as_deref().filter(|_| !refresh);
        while let Some(mut v) = merge.next_version()? {
            if piece.past(&v.key) {
                break;
            }
            read += 1;
            let new_key = current.as_ref() != Some(&v.key);
            if new_key {
                current = Some(v.key.clone());
                kept_at_horizon = false;
            }
            // A refresh copies its table as it is: only the filter changes.
            if !refresh && self.rules.drops(&v) {
                done.dropped_by_range += 1;
                continue;
            }
            if let Some(f) = filter
                && new_key
                && v.kind == ValueKind::Value
                && self.ctx.newest_snapshot.is_none_or(|s| v.seq > s)
            {
                apply_filter(f, self.output_level, &mut v, &mut done.filtered);
            }
            if !refresh && !keep(&v, horizon, &mut kept_at_horizon, &may_exist_deeper) {
                continue;
            }
            if self.bottommost && v.seq <= horizon && v.kind == ValueKind::Value {
                v.seq = 0;
            }
            out.add(&v, new_key, read)?;
        }
        done.outputs = out.finish()?;
        Ok(done)
    }

    /// Runs `pieces` side by side, the first on this thread, each into a
    /// writer of its own; their outputs in key order. If one fails, what
    /// the others published is marked for deletion and the error returned.
    fn run_pieces<'w>(
        &self,
        pieces: &[Piece],
        writer: impl Fn(&Piece) -> OutputWriter<'w>,
    ) -> Result<PieceDone> {
        let results: Vec<Result<PieceDone>> = std::thread::scope(|s| {
            let spawned: Vec<_> = pieces[1..]
                .iter()
                .map(|p| {
                    let out = writer(p);
                    std::thread::Builder::new()
                        .name("siftdb-subcompact".into())
                        .spawn_scoped(s, move || self.run(p, out))
                })
                .collect();
            let mut results = vec![self.run(&pieces[0], writer(&pieces[0]))];
            for handle in spawned {
                results.push(match handle {
                    Ok(h) => h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                    Err(e) => Err(e.into()),
                });
            }
            results
        });
        let mut all = PieceDone::default();
        let mut failed = None;
        for r in results {
            match r {
                Ok(done) => {
                    all.outputs.extend(done.outputs);
                    all.dropped_by_range += done.dropped_by_range;
                    all.filtered.removed += done.filtered.removed;
                    all.filtered.changed += done.filtered.changed;
                }
                Err(e) => failed = failed.or(Some(e)),
            }
        }
        if let Some(e) = failed {
            for t in &all.outputs {
                t.mark_obsolete();
            }
            return Err(e);
        }
        Ok(all)
    }
}

/// The compaction filter's decision on `v`, a key's newest version and a
/// value no snapshot sees: a removed key becomes a tombstone at the same
/// sequence number (which `keep` drops once nothing older needs hiding), so
/// no older version of it comes back.
fn apply_filter(f: &dyn CompactionFilter, level: usize, v: &mut KeyVersion, filtered: &mut Filtered) {
    match f.filter(level, &v.key, &v.value) {
        Decision::Keep => {}
        Decision::Remove => {
            v.kind = ValueKind::Tombstone;
            v.value = bytes::Bytes::new();
            filtered.removed += 1;
        }
        Decision::ChangeValue(value) => {
            v.value = bytes::Bytes::from(value);
            filtered.changed += 1;
        }
    }
}

/// The edit that moves `job`'s tables a level down as they are: the same
/// files, records and open tables (the install keeps them live).
fn move_tables(ctx: &JobContext<'_>, job: &Job) -> Outcome {
    let (from, to) = (level_u8(job.level), level_u8(job.target_level()));
    let edit = VersionEdit {
        next_file_number: Some(ctx.sink.next_file_number()),
        removed: job.inputs.iter().map(|t| (from, t.number())).collect(),
        added: job.inputs.iter().map(|t| (to, TableRecord::clone(&t.record))).collect(),
        ..VersionEdit::default()
    };
    Outcome::unwritten(edit, job.inputs.clone())
}

/// The edit that removes `job`'s tables of its level, reading nothing.
fn drop_tables(ctx: &JobContext<'_>, job: &Job) -> Outcome {
    let level = level_u8(job.level);
    let edit = VersionEdit {
        next_file_number: Some(ctx.sink.next_file_number()),
        removed: job.inputs.iter().map(|t| (level, t.number())).collect(),
        // What this edit drops; the install records the running sum.
        fifo_dropped: Some(DropTotals {
            tables: job.inputs.len() as u64,
            entries: job.inputs.iter().map(|t| t.record.entries).sum(),
            bytes: job.input_bytes(),
        }),
        ..VersionEdit::default()
    };
    Outcome::unwritten(edit, Vec::new())
}

/// Whether no level below `output_level` holds a key in the key range of
/// `inputs`: the merge's outputs are then the oldest versions of their
/// keys anywhere in the tree.
///
/// There a value every reader sees (at or below the horizon; the one
/// version of its key kept there) needs no sequence number: it is written
/// as 0. Every snapshot sees it, every newer version of its key sits above
/// it, and every range tombstone that covers it is newer than it (a
/// tombstone reaches a level only with or after what it deletes, and an
/// ingested table goes no deeper than any table meeting its range), so it
/// still orders and deletes as before. The eight bytes of its trailer then
/// repeat from entry to entry, and the codec takes most of them. `RocksDB`
/// zeroes them at its bottommost level too: at 10^7 `db_bench` keys its
/// level-1 tables written with nothing below held 64.9 bytes an entry, its
/// flushes 70.2 (docs/measurements.md).
fn bottommost<'t>(
    tree: &Tree,
    output_level: usize,
    inputs: impl Iterator<Item = &'t Arc<TableFile>>,
) -> bool {
    let (mut lo, mut hi): (Option<&[u8]>, Option<&[u8]>) = (None, None);
    for t in inputs {
        let (s, l) = (t.record.smallest.as_slice(), t.record.largest.as_slice());
        lo = Some(lo.map_or(s, |lo| lo.min(s)));
        hi = Some(hi.map_or(l, |hi| hi.max(l)));
    }
    let (Some(lo), Some(hi)) = (lo, hi) else { return false };
    !tree.each_level().skip(output_level + 1).any(|level| level.meets(lo, hi))
}

/// A level as the manifest records it (levels are fewer than 256).
fn level_u8(level: usize) -> u8 {
    u8::try_from(level).unwrap_or(u8::MAX)
}

/// The drop rules of the module docs for one version; a flush applies
/// them too, with every key taken to exist deeper (so no tombstone goes).
pub(crate) fn keep(
    v: &KeyVersion,
    horizon: SeqNo,
    kept_at_horizon: &mut bool,
    may_exist_deeper: &impl Fn(&[u8]) -> bool,
) -> bool {
    if v.seq > horizon {
        return true;
    }
    if *kept_at_horizon {
        return false;
    }
    *kept_at_horizon = true;
    v.kind != ValueKind::Tombstone || may_exist_deeper(&v.key)
}
