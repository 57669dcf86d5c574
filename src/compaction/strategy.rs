//! The strategy seam: a [`CompactionStrategy`] looks at the tree, the
//! options and the [`State`] compaction keeps between jobs, and answers with
//! a [`Choice`]; one executor ([`super::run`]) runs any choice, and the
//! database installs the edit it returns.
//!
//! A strategy only chooses. It writes nothing, takes no lock and reads no
//! counter: everything it may look at is in its arguments, made by the
//! database under the compaction lock before it asks. What a strategy may
//! leave to others, and what it must keep, is written in its own file
//! ([`super::leveled`], [`super::fifo`]).

use std::collections::HashSet;
use std::sync::Arc;

use super::{Drift, Refreshed};
use crate::key::SeqNo;
use crate::options::Options;
use crate::planner::Planner;
use crate::tree::{TableFile, Tree};

/// How compaction chooses its next job.
///
/// The database holds one, made by [`super::strategy_for`] from the
/// options, as a `Box<dyn CompactionStrategy>` rather than an enum of the
/// strategies there are: a new strategy is then its own file and one arm
/// in `strategy_for`, not an arm in every method. The call is made once per
/// job, so its dynamic dispatch costs nothing measurable.
///
/// Whatever a strategy chooses must keep the tree a valid `Version`
/// (`manifest::version`): level 0 may overlap, newest first; each deeper
/// level must be a sorted run of disjoint tables, and an edit that breaks
/// that is refused. A strategy that needs another shape changes that check
/// and the readers' search (`tree::search`) along with it, and says so in
/// its module docs.
pub(crate) trait CompactionStrategy: Send + Sync {
    /// The next job on `tree`, or [`Choice::Nothing`] when nothing is due.
    /// Background compaction and `Db::compact_due` ask with
    /// [`Drift::Presence`]; `Db::compact` with
    /// [`EXPLICIT_DRIFT`](super::EXPLICIT_DRIFT), until the answer is
    /// `Nothing`.
    fn choose(&self, tree: &Tree, opts: &Options, state: &State<'_>) -> Choice;

    /// What `Db::compact` runs before asking [`choose`](Self::choose),
    /// while the answer is not `Nothing`: the jobs that settle every table
    /// numbered below `before` (the flushes of writes made before the call)
    /// into its place. None by default.
    fn settle(&self, tree: &Tree, opts: &Options, before: u64) -> Choice {
        let _ = (tree, opts, before);
        Choice::Nothing
    }

    /// Whether every job this strategy chooses is a [`Choice::Drop`],
    /// which writes nothing: the flush thread then runs them right after
    /// each flush, so a byte limit holds flush by flush. `false` by
    /// default.
    fn drops_only(&self) -> bool {
        false
    }
}

/// What a strategy chooses: one job, or nothing.
#[derive(Debug, Clone)]
pub(crate) enum Choice {
    /// Nothing is due.
    Nothing,
    /// The job's tables of `level`, with those of `next_inputs` at
    /// `level + 1`, merged into `level + 1`: shadowed versions, dead
    /// tombstones and what range tombstones delete are dropped.
    Merge(Job),
    /// The job's one table rewritten at its level as it is (no entry
    /// dropped) with the filter its level's plan now gives it
    /// ([`super::refresh`]).
    Refresh(Job),
    /// The job's tables of `level` moved to `level + 1` as they are (a
    /// trivial move): nothing is read or written, only the manifest
    /// changes. For tables that overlap nothing below and each other.
    Move(Job),
    /// The job's tables of `level` removed from the tree unread, with
    /// everything in them ([`super::fifo`]'s expiry). Nothing is written.
    Drop(Job),
}

impl Choice {
    /// The job to run, if there is one.
    pub fn job(&self) -> Option<&Job> {
        match self {
            Self::Nothing => None,
            Self::Merge(job) | Self::Refresh(job) | Self::Drop(job) | Self::Move(job) => Some(job),
        }
    }

    /// The level the job's outputs go to; `None` for a job that writes
    /// none.
    pub fn output_level(&self) -> Option<usize> {
        match self {
            Self::Nothing | Self::Drop(_) => None,
            Self::Merge(job) | Self::Move(job) => Some(job.target_level()),
            Self::Refresh(job) => Some(job.level),
        }
    }
}

/// The tables one job reads: `inputs` of `level` and, for a merge,
/// `next_inputs` of `level + 1`.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    pub level: usize,
    pub inputs: Vec<Arc<TableFile>>,
    pub next_inputs: Vec<Arc<TableFile>>,
    /// A merge that takes all of `level + 1` along and writes to the empty
    /// `level + 2`, where its output would have moved next
    /// (`leveled::job_with`).
    pub through: bool,
}

impl Job {
    /// The tables `inputs` of `level`, merged or moved into `level + 1`
    /// with `next_inputs`.
    pub fn new(level: usize, inputs: Vec<Arc<TableFile>>, next_inputs: Vec<Arc<TableFile>>) -> Self {
        Job { level, inputs, next_inputs, through: false }
    }

    /// The level a merge or a move writes to: `level + 1`, or `level + 2`
    /// for a merge [`Job::through`] the level below.
    pub fn target_level(&self) -> usize {
        self.level + 1 + usize::from(self.through)
    }

    /// Bytes of every input table.
    pub fn input_bytes(&self) -> u64 {
        let (here, below) = self.input_bytes_by_level();
        here + below
    }

    /// Bytes of the input tables of `level`, and of `level + 1`.
    pub fn input_bytes_by_level(&self) -> (u64, u64) {
        let bytes = |tables: &[Arc<TableFile>]| tables.iter().map(|t| t.record.file_size).sum();
        (bytes(&self.inputs), bytes(&self.next_inputs))
    }
}

/// What compaction remembers between jobs, kept under the database's
/// compaction lock (held while a job is chosen and run).
#[derive(Debug)]
pub(crate) struct Progress {
    /// Per level, the largest key the last merge from it took: where a
    /// round robin over the level's tables goes on.
    pub cursors: Vec<Vec<u8>>,
    /// The tables refreshed under the current shape.
    pub refreshed: Refreshed,
}

impl Progress {
    /// Nothing compacted yet, for a tree of `levels` levels.
    pub fn new(levels: usize) -> Self {
        Self { cursors: vec![Vec::new(); levels], refreshed: Refreshed::default() }
    }

    /// Notes a job that ran and wrote the tables numbered `outputs`: a
    /// refresh's outputs are not refreshed again under this shape; a merge
    /// changes the shape and moves its level's cursor.
    pub fn record(&mut self, choice: &Choice, outputs: impl IntoIterator<Item = u64>) {
        match choice {
            Choice::Nothing | Choice::Drop(_) => {}
            Choice::Refresh(_) => self.refreshed.add(outputs),
            Choice::Merge(job) | Choice::Move(job) => {
                self.refreshed.clear();
                if let (Some(cursor), Some(largest)) =
                    (self.cursors.get_mut(job.level), job.inputs.iter().map(|t| &t.record.largest).max())
                {
                    cursor.clone_from(largest);
                }
            }
        }
    }
}

/// What a strategy chooses from, besides the tree and the options.
pub(crate) struct State<'a> {
    /// [`Progress::cursors`].
    pub cursors: &'a [Vec<u8>],
    /// The tables refreshed under the current shape: a refresh that did
    /// not cure a drift would not cure it the second time either.
    pub refreshed: &'a HashSet<u64>,
    /// The oldest sequence number a reader may still look at.
    pub horizon: SeqNo,
    /// How far a table's filter may drift from the plan before it is
    /// refreshed.
    pub drift: Drift,
    /// Whether the filter policy is a memory budget.
    pub budgeted: bool,
    /// The filter plan, made when the strategy asks for it.
    pub planner: &'a Planner<'a>,
    /// The time by the database's clock, in seconds since the Unix epoch
    /// (what tables record as their creation time).
    pub now_unix_secs: u64,
}
