//! Writing a compaction's output as tables of about the output level's
//! `Options::table_target_bytes_for`.

use std::sync::Arc;

use super::JobContext;
use super::picker::bloom_account;
use crate::Result;
use crate::filter::FilterKind;
use crate::policy::{BloomLedger, LevelFilter, MixLedger, Writing};
use crate::sink::NewTable;
use crate::sources::KeyVersion;
use crate::tree::{TableFile, Tree, kinds_left};

/// Builds output tables one after another, splitting between user keys.
pub(crate) struct OutputWriter<'a> {
    ctx: &'a JobContext<'a>,
    level: usize,
    planned: LevelFilter,
    /// On a mixed level: the keys of each kind, choosing each table's.
    ledger: Option<MixLedger>,
    /// Under a budget, where the plan writes blocked Bloom: the level's
    /// filter bits against their price, sizing each table's filter.
    bloom: Option<BloomLedger>,
    /// The entries a table is expected to hold, for the ledger.
    table_keys: u64,
    /// Whether outputs split at `table_target_bytes` (a refresh keeps its
    /// table whole, so the tree's shape does not move).
    split: bool,
    current: Option<(NewTable, FilterKind)>,
    done: Vec<Arc<TableFile>>,
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
        let planned = (ctx.filter_for)(tree, writing);
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
            ledger,
            bloom,
            table_keys,
            split,
            current: None,
            done: Vec::new(),
        }
    }

    /// Adds a version; `new_key` says it starts a new user key (a split point).
    pub fn add(&mut self, v: &KeyVersion, new_key: bool) -> Result<()> {
        if new_key
            && self.split
            && let Some((t, _)) = &self.current
            && t.estimated_size() >= self.ctx.opts.table_target_bytes_for(self.level)
        {
            self.finish_current()?;
        }
        if self.current.is_none() {
            let filter = match &self.ledger {
                Some(ledger) => ledger.next_kind(&self.planned, self.table_keys),
                None => self.planned.kind,
            };
            let carry = self.bloom.map_or(0, |b| b.carry_bits(filter));
            self.current = Some((self.ctx.sink.start(self.level, filter, carry)?, filter));
        }
        let Some((t, _)) = &mut self.current else { return Ok(()) };
        t.add(&v.key, v.seq, v.kind, &v.value)
    }

    fn finish_current(&mut self) -> Result<()> {
        if let Some((t, filter)) = self.current.take() {
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
        self.finish_current()?;
        Ok(self.done)
    }
}
