//! Writing a compaction's output as tables of about the output level's
//! `Options::table_target_bytes_for`.

use std::sync::Arc;

use super::JobContext;
use super::refresh::bloom_account;
use crate::Result;
use crate::filter::FilterKind;
use crate::policy::{BloomLedger, LevelFilter, MixLedger, Writing};
use crate::range_del::{RangeTombstone, successor};
use crate::sink::{NewTable, TableSink};
use crate::sources::KeyVersion;
use crate::table::Compression;
use crate::tree::{TableFile, Tree, kinds_left};

/// Builds output tables one after another, splitting between user keys.
pub(crate) struct OutputWriter<'a> {
    ctx: &'a JobContext<'a>,
    level: usize,
    planned: LevelFilter,
    /// The codec of every output.
    compression: Compression,
    /// On a mixed level: the keys of each kind, choosing each table's.
    ledger: Option<MixLedger>,
    /// Under a budget, where the plan writes blocked Bloom: the level's
    /// filter bits against their price, sizing each table's filter.
    bloom: Option<BloomLedger>,
    /// The entries a table is expected to hold, for the ledger.
    table_keys: u64,
    /// Whether outputs split (a refresh keeps its table whole, so the
    /// tree's shape does not move).
    split: bool,
    /// Versions the merge brings in all, and bytes of the finished
    /// outputs: with the versions read so far, what is left to write.
    incoming: u64,
    finished_bytes: u64,
    current: Option<(NewTable, FilterKind)>,
    done: Vec<Arc<TableFile>>,
    /// Outputs finishing on threads of their own (filter built, footer
    /// written, synced, renamed, directory synced, opened) while the merge
    /// goes on into the next: finishing one 8 MiB table took 5-14 ms of
    /// `fsync` alone on the test VM, the merge's thread idle meanwhile.
    /// Where a ledger chooses each table's filter from the last ones', they
    /// finish in turn instead (`done`). Joined, in order, by `finish`.
    finishing: Vec<Finishing>,
    /// The inputs' range tombstones, each output taking its part of them.
    range_dels: Vec<RangeTombstone>,
    /// Where the current output's key range starts (the cut after the
    /// previous output's last key); `None` for the first.
    cut: Option<bytes::Bytes>,
    /// The last user key added.
    last_key: Option<bytes::Bytes>,
}

impl<'a> OutputWriter<'a> {
    /// A writer of tables for `writing.level` of `tree`, with the filter
    /// the policy plans for that write. The write replaces `replaced` (tables
    /// of that level) and brings `incoming` entries.
    pub fn new(
        ctx: &'a JobContext<'a>,
        tree: &Tree,
        writing: Writing,
        split: bool,
        replaced: &[Arc<TableFile>],
        incoming: u64,
    ) -> Self {
        let planned = ctx.planner.filter_for(tree, writing);
        let compression = ctx.planner.compression_for(tree, writing);
        let level = tree.level(writing.level);
        let kept = kinds_left(level, |n| replaced.iter().any(|r| r.number() == n));
        let ledger = MixLedger::new(&planned, &kept, incoming);
        let bloom = if ctx.budgeted {
            bloom_account(level, &planned, |n| replaced.iter().any(|r| r.number() == n))
        } else {
            None
        };
        // A whole-table rewrite keeps its size; a merge's outputs are about
        // the size of the level's tables.
        let mean = kept.iter().map(|&(_, n)| n).sum::<u64>().checked_div(kept.len() as u64);
        let table_keys = if split { mean.unwrap_or(incoming).min(incoming) } else { incoming };
        OutputWriter {
            ctx,
            level: writing.level,
            planned,
            compression,
            ledger,
            bloom,
            table_keys,
            split,
            incoming,
            finished_bytes: 0,
            current: None,
            done: Vec::new(),
            finishing: Vec::new(),
            range_dels: Vec::new(),
            cut: None,
            last_key: None,
        }
    }

    /// Whether the write keeps a memory budget's account of a Bloom level's
    /// bits (one account over all the outputs, so it is not split).
    pub fn keeps_bloom_account(&self) -> bool {
        self.bloom.is_some()
    }

    /// This writer as one of the pieces a merge splits into by key range
    /// (`share` of it, `incoming` versions): a mixed level's ledger keeps
    /// that share of the level's account, so the pieces' tables together
    /// carry the planned mix.
    pub fn piece(mut self, share: f64, incoming: u64) -> Self {
        self.incoming = incoming;
        self.table_keys = self.table_keys.min(incoming);
        if let Some(ledger) = &mut self.ledger {
            ledger.scale(share);
        }
        self
    }

    /// Carries `tombstones` into the outputs, each cut to the key range of
    /// the output it lands in: an output ends at its last key, cut at that
    /// key's successor, so its range (which covers its tombstones) ends at
    /// its last key exactly and the level's ranges stay disjoint.
    pub fn carry_range_dels(&mut self, tombstones: Vec<RangeTombstone>) {
        self.range_dels = crate::range_del::coalesced(tombstones);
    }

    /// Adds a version; `new_key` says it starts a new user key (a split
    /// point); `read` counts the versions the merge has read so far, this
    /// one and those it dropped included.
    pub fn add(&mut self, v: &KeyVersion, new_key: bool, read: u64) -> Result<()> {
        if new_key
            && self.split
            && let Some((t, _)) = &self.current
            && split_here(
                t.estimated_size(),
                self.remaining(t.estimated_size(), read),
                self.ctx.opts.table_target_bytes_for(self.level),
            )
        {
            let end = self.last_key.as_deref().map(successor);
            self.finish_current(end)?;
        }
        self.start_if_none()?;
        self.last_key = Some(v.key.clone());
        let Some((t, _)) = &mut self.current else { return Ok(()) };
        t.add(&v.key, v.seq, v.kind, &v.value)
    }

    fn start_if_none(&mut self) -> Result<()> {
        if self.current.is_none() {
            let filter = match &self.ledger {
                Some(ledger) => ledger.next_kind(&self.planned, self.table_keys),
                None => self.planned.kind,
            };
            let carry = self.bloom.map_or(0, |b| b.carry_bits(filter));
            self.current = Some((self.ctx.sink.start(self.level, filter, carry, self.compression)?, filter));
        }
        Ok(())
    }

    /// Bytes still to write, about: the versions not yet read, at the bytes
    /// written per version read so far (which counts the versions dropped,
    /// so a merge that drops many expects less).
    fn remaining(&self, current: u64, read: u64) -> u64 {
        let written = u128::from(self.finished_bytes + current);
        let left = u128::from(self.incoming.saturating_sub(read));
        u64::try_from(left * written / u128::from(read.max(1))).unwrap_or(u64::MAX)
    }

    /// Finishes the current output, giving it the tombstones' parts below
    /// `end` (all that are left when `None`).
    fn finish_current(&mut self, end: Option<bytes::Bytes>) -> Result<()> {
        if let Some((t, _)) = &mut self.current {
            for piece in self.range_dels.iter().filter_map(|d| d.clipped(self.cut.as_deref(), end.as_deref()))
            {
                t.add_range_tombstone(&piece)?;
            }
        }
        self.cut = end;
        if let Some((t, filter)) = self.current.take() {
            self.finished_bytes += t.estimated_size();
            if self.ledger.is_none() && self.bloom.is_none() {
                self.finishing.push(finish_aside(&self.ctx.sink, t)?);
                return Ok(());
            }
            let table = self.ctx.sink.finish(t)?;
            if let Some(ledger) = &mut self.ledger {
                ledger.wrote(&self.planned, filter, table.record.entries);
            }
            if let Some(bloom) = &mut self.bloom {
                bloom.wrote(table.record.filter, table.table.filter_keys(), table.record.filter_bytes);
            }
            self.done.push(Arc::new(table));
        }
        Ok(())
    }

    /// Finishes the last table and returns every output.
    pub fn finish(mut self) -> Result<Vec<Arc<TableFile>>> {
        // Tombstones left past the last key (or with no key at all) still
        // need a table to carry them.
        let left = self.range_dels.iter().any(|d| d.clipped(self.cut.as_deref(), None).is_some());
        if left {
            self.start_if_none()?;
        }
        self.finish_current(None)?;
        let mut first_error = None;
        for output in std::mem::take(&mut self.finishing) {
            let joined = match output {
                Finishing::Aside(handle) => handle.join(),
                Finishing::Here(table) => Ok(Ok(table)),
            };
            match joined {
                Ok(Ok(table)) => self.done.push(Arc::new(table)),
                // Every thread is joined before the error returns: no
                // output is still being written once the job has failed.
                Ok(Err(e)) => {
                    first_error.get_or_insert(e);
                }
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        first_error.map_or_else(|| Ok(std::mem::take(&mut self.done)), Err)
    }
}

impl Drop for OutputWriter<'_> {
    /// A merge that failed before [`OutputWriter::finish`] still waits for
    /// the outputs it handed off: none is written after the job returns.
    fn drop(&mut self) {
        for output in self.finishing.drain(..) {
            if let Finishing::Aside(handle) = output {
                let _ = handle.join();
            }
        }
    }
}

/// An output handed off to finish, in the order written.
enum Finishing {
    /// Finishing on a thread of its own.
    Aside(std::thread::JoinHandle<Result<TableFile>>),
    /// Finished on the merge's thread, where no thread could be had.
    Here(TableFile),
}

/// Starts finishing `t` on a thread of its own, or, where the system gives
/// none, finishes it here.
fn finish_aside(sink: &TableSink<'_>, t: NewTable) -> Result<Finishing> {
    let finisher = sink.finisher();
    // The table goes over a channel: a spawn that fails drops its closure,
    // and the table with it.
    let (send, receive) = std::sync::mpsc::sync_channel::<NewTable>(1);
    let spawned = std::thread::Builder::new().name("siftdb-finish".into()).spawn(move || {
        let t = receive.recv().map_err(|_| crate::Error::Closed)?;
        finisher.finish(t)
    });
    let Ok(handle) = spawned else { return Ok(Finishing::Here(sink.finish(t)?)) };
    match send.send(t) {
        Ok(()) => Ok(Finishing::Aside(handle)),
        // The thread ended without taking it (it cannot, but if it did).
        Err(std::sync::mpsc::SendError(t)) => Ok(Finishing::Here(sink.finish(t)?)),
    }
}

/// Whether an output table of `current` bytes ends here, with about
/// `remaining` bytes of the merge still to come, for tables of `target`.
///
/// At the target, unless what is left is under a quarter of it: the last
/// table then takes it (up to 1.25× the target) instead of leaving it as a
/// table of its own. Those remainders, as small as a few keys, persisted on
/// the deep levels `Db::compact` reaches in large merges (five tables of
/// 14–23 KB beside one of 173 KB, on a level of 205 KB tables), each
/// paying a filter's fixed bytes and a probe. `remaining` is an estimate (the versions left at
/// the bytes per version so far); where it errs high a remainder is still
/// written, and widening (`leveled::widen_to_target`) merges it later.
///
/// Tried and not kept (docs/measurements.md): halving what is left once it
/// fits two tables, and splitting each whole merge into equal tables. Both
/// leave no small table, but their tables of half a target are too large
/// for widening to take in: a 3·10^6-key load ended with 62% and 7% more
/// tables.
fn split_here(current: u64, remaining: u64, target: u64) -> bool {
    current >= target && remaining >= target / 4
}

#[cfg(test)]
mod tests {
    use super::split_here;

    #[test]
    fn the_last_table_takes_a_small_remainder() {
        let sizes = |total: u64, target: u64| {
            // Bytes arrive a key of 10 at a time.
            let (mut done, mut current, mut out) = (0, 0, Vec::new());
            while done + current < total {
                if split_here(current, total - done - current, target) {
                    out.push(current);
                    done += current;
                    current = 0;
                }
                current += 10;
            }
            out.push(current);
            out
        };
        assert_eq!(sizes(1000, 2000), [1000]);
        assert_eq!(sizes(2000, 2000), [2000]);
        // A remainder under a quarter of the target joins the last table.
        assert_eq!(sizes(2100, 2000), [2100]);
        assert_eq!(sizes(2490, 2000), [2490]);
        // From a quarter up it is a table of its own, as every full one.
        assert_eq!(sizes(2500, 2000), [2000, 500]);
        assert_eq!(sizes(6300, 2000), [2000, 2000, 2300]);
        for total in (10..50_000).step_by(770) {
            let out = sizes(total, 2000);
            assert_eq!(out.iter().sum::<u64>(), total);
            assert!(out.iter().all(|&t| t < 2500), "{total}: {out:?}");
            assert!(out.len() == 1 || out.iter().all(|&t| t >= 500), "{total}: {out:?}");
        }
    }
}
