//! Compaction: a strategy chooses a job, one executor runs it.
//!
//! - [`strategy`]: the seam. A [`CompactionStrategy`] chooses a
//!   [`Choice`] from the tree, the options and the [`State`]; what
//!   compaction remembers between jobs is [`Progress`].
//! - [`leveled`]: the leveled strategy (L0 trigger, level targets, least
//!   overlap below per byte, a cursor per level for ties, range-tombstone
//!   moves), and the invariant that is leveled's alone.
//! - [`fifo`]: first in, first out (`Compaction::Fifo`): tables are
//!   never merged, the oldest are dropped past a byte limit or a TTL.
//! - [`refresh`]: which table to rewrite to the filter plan, when nothing
//!   needs merging (drift from the plan, a mixed level's share, a Bloom
//!   level's price).
//! - [`executor`]: merge, drop shadowed versions and dead tombstones, return
//!   the edit (or, for a drop, the edit that removes the tables).
//! - [`writer`]: output tables split at the target size between user keys
//!   (a small remainder joins the last).
//!
//! The database holds the strategy ([`strategy_for`]) and owns the loop, the
//! threads, the install and the counters (`db::compact`): it asks the
//! strategy for a choice, [`run`] writes the choice's outputs through a
//! [`TableSink`] and returns the edit. Nothing here imports `db`. One
//! compaction runs at a time (the database's `compaction` lock, which
//! holds the [`Progress`]), on the background thread or on the caller of
//! `Db::compact`; a large merge may split by key range into pieces merged
//! side by side on threads of its own ([`subcompaction`]).
//!
//! A new strategy is a file here implementing [`CompactionStrategy`],
//! its `mod` line, and its arm in [`strategy_for`].

pub(crate) mod executor;
pub(crate) mod fifo;
pub(crate) mod leveled;
pub(crate) mod range_dels;
pub(crate) mod refresh;
pub(crate) mod strategy;
pub(crate) mod subcompaction;
pub(crate) mod writer;

use std::collections::HashSet;
use std::sync::Arc;

pub(crate) use executor::{keep, run};
pub(crate) use refresh::Drift;
pub(crate) use strategy::{Choice, CompactionStrategy, Progress, State};

use crate::key::SeqNo;
use crate::manifest::VersionEdit;
use crate::options::{Compaction, Options};
use crate::planner::Planner;
use crate::sink::TableSink;
use crate::tree::TableFile;

/// The strategy `opts` choose: a new one adds its arm here.
pub(crate) fn strategy_for(opts: &Options) -> Box<dyn CompactionStrategy> {
    match opts.compaction {
        Compaction::Fifo { max_bytes, ttl } => Box::new(fifo::Fifo { max_bytes, ttl }),
        // `Compaction` is non-exhaustive only to callers outside the crate.
        Compaction::Leveled => Box::new(leveled::Leveled),
    }
}

/// How far `Db::compact` lets a table's filter drift from the plan:
/// [`PLAN_DRIFT`](crate::policy::PLAN_DRIFT) of its bytes.
pub(crate) const EXPLICIT_DRIFT: Drift = Drift::Bytes(crate::policy::PLAN_DRIFT);

/// What a job needs from the database that runs it: compaction reads the
/// tree and these, and returns an edit; it never reaches into the database.
pub(crate) struct JobContext<'a> {
    pub opts: &'a Options,
    /// Where output tables are written.
    pub sink: TableSink<'a>,
    /// The oldest sequence number a reader may still look at: versions
    /// newer than it are all kept.
    pub horizon: SeqNo,
    /// Whether the filter policy is a memory budget (its Bloom levels keep
    /// an account, `policy::BloomLedger`).
    pub budgeted: bool,
    /// The filter and codec each output gets, planned from a value the
    /// database made before the job started (never a call back into it).
    pub planner: &'a Planner<'a>,
    /// The newest live snapshot when the job started: the compaction
    /// filter (`Options::compaction_filter`) sees only entries newer.
    pub newest_snapshot: Option<SeqNo>,
}

/// A job's result, for the database to install and count.
pub(crate) struct Outcome {
    /// Adds the outputs, removes the inputs.
    pub edit: VersionEdit,
    pub outputs: Vec<Arc<TableFile>>,
    /// Bytes of the input tables.
    pub bytes_read: u64,
    /// Bytes of the output tables.
    pub bytes_written: u64,
    /// Versions a range tombstone deleted for every reader, dropped (those
    /// of tables dropped unread included).
    pub dropped_by_range: u64,
    /// Entries the compaction filter removed and changed.
    pub filtered: Filtered,
    /// Key-range pieces the merge ran side by side (1: not split).
    pub pieces: usize,
}

impl Outcome {
    /// A job that read and wrote no table (a move, a drop): only `edit`,
    /// with `outputs` the open tables it adds.
    pub(crate) fn unwritten(edit: VersionEdit, outputs: Vec<Arc<TableFile>>) -> Self {
        Outcome {
            edit,
            outputs,
            bytes_read: 0,
            bytes_written: 0,
            dropped_by_range: 0,
            filtered: Filtered::default(),
            pieces: 1,
        }
    }
}

/// What the compaction filter did in one job.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Filtered {
    pub removed: u64,
    pub changed: u64,
}

/// The tables refreshed since the tree last changed shape (a flush or a
/// merge): each is refreshed at most once per shape.
///
/// A refresh writes its table to the plan of the shape it sees, and leaves
/// that shape as it was (`crate::planner` counts only data and index bytes), so
/// it cures its drift. This is the backstop should some drift outlive its
/// rewrite: `compact()` would otherwise rewrite the table without end,
/// while a table refreshed under one shape is still brought to the plan of
/// the next.
#[derive(Debug, Default)]
pub(crate) struct Refreshed {
    /// `Stats::flushes` when the set was last emptied.
    flushes: u64,
    tables: HashSet<u64>,
}

impl Refreshed {
    /// The tables refreshed under the current shape, given the flushes so far.
    pub(crate) fn since(&mut self, flushes: u64) -> &HashSet<u64> {
        if flushes != self.flushes {
            self.clear();
            self.flushes = flushes;
        }
        &self.tables
    }

    /// Records the tables a refresh wrote.
    pub(crate) fn add(&mut self, tables: impl IntoIterator<Item = u64>) {
        self.tables.extend(tables);
    }

    /// Forgets every table: the shape changed.
    pub(crate) fn clear(&mut self) {
        self.tables.clear();
    }
}
