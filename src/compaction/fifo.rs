//! FIFO compaction ([`Compaction::Fifo`](crate::Compaction::Fifo)): tables
//! stay as they were flushed, and the oldest are dropped whole once the
//! tree passes its byte limit or they pass their time to live.
//!
//! # Invariant
//!
//! - Nothing is merged or rewritten: every job is a [`Choice::Drop`], an
//!   edit that removes tables and writes none. Every flush stays on level
//!   0 (newest first, as under leveled), and so does every ingested table
//!   (`db::ingest` puts none deeper under FIFO).
//! - Only the *bottom* of the tree is dropped: the deepest level holding
//!   tables, or, when level 0 is all there is, its oldest table. A table
//!   deeper down holds older versions than any above it, so dropping from
//!   the bottom never uncovers a version a dropped table shadowed, and a
//!   newer table always outlives an older one. (Tables below level 0 are
//!   there only if the database ran leveled before: they go first, the
//!   oldest-written first, since no two of a level overlap.)
//! - A table expires once its newest write is `ttl` old. Tables record when
//!   they were written (`TableProperties::created_unix_secs`, the
//!   database clock's time when the flush began, after its last write) in
//!   whole seconds, truncated: it expires at `created + 1 + ttl` seconds,
//!   rounded up, so never early.
//!
//! Level 0's count is no backlog here: the write path's level-0 stops do
//! not apply (`Options::l0_stop_trigger`), and the filter planner models
//! all of the tree as level 0's runs (`crate::planner`).

use std::sync::Arc;
use std::time::Duration;

use super::strategy::{Choice, CompactionStrategy, Job, State};
use crate::options::Options;
use crate::tree::{TableFile, Tree};

/// FIFO compaction: see the module docs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fifo {
    /// Drop while all tables together pass this many bytes.
    pub max_bytes: Option<u64>,
    /// Drop a table once its newest write is this old.
    pub ttl: Option<Duration>,
}

impl Fifo {
    /// Whether `t` has expired at `now` (seconds since the Unix epoch).
    fn expired(&self, t: &TableFile, now: u64) -> bool {
        self.ttl.is_some_and(|ttl| {
            let secs = ttl.as_secs() + u64::from(ttl.subsec_nanos() > 0);
            let created = t.table.properties().created_unix_secs;
            now >= created.saturating_add(1).saturating_add(secs)
        })
    }
}

impl CompactionStrategy for Fifo {
    /// The bottom tables to drop, oldest first, while the tree is over
    /// `max_bytes` or they are past the TTL; one level per job.
    fn choose(&self, tree: &Tree, _opts: &Options, state: &State<'_>) -> Choice {
        let Some((level, oldest_first)) = bottom(tree) else {
            return Choice::Nothing;
        };
        let mut total: u64 = tree.levels.iter().flatten().map(|t| t.record.file_size).sum();
        let mut inputs = Vec::new();
        for t in oldest_first {
            let over = self.max_bytes.is_some_and(|max| total > max);
            if !over && !self.expired(&t, state.now_unix_secs) {
                break;
            }
            total -= t.record.file_size;
            inputs.push(t);
        }
        if inputs.is_empty() {
            return Choice::Nothing;
        }
        Choice::Drop(Job::new(level, inputs, Vec::new()))
    }

    fn drops_only(&self) -> bool {
        true
    }
}

/// The deepest level holding tables, and its tables oldest first: level
/// 0's from the back (it is newest first), a deeper level's by creation
/// time (then by number, the order they were written in).
fn bottom(tree: &Tree) -> Option<(usize, Vec<Arc<TableFile>>)> {
    let level = tree.levels.iter().rposition(|l| !l.is_empty())?;
    let mut tables: Vec<Arc<TableFile>> = tree.levels[level].clone();
    if level == 0 {
        tables.reverse();
    } else {
        tables.sort_by_key(|t| (t.table.properties().created_unix_secs, t.number()));
    }
    Some((level, tables))
}
