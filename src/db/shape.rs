//! The database's side of filter planning: the [`Planner`] (`crate::planner`)
//! made from its options, policy, flush history and plan cache, and thin
//! calls through it for the flush, ingest and `stats()` paths.

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

use crate::planner::{FlushHistory, Planner};
use crate::policy::{LevelFilter, TreeShape, Writing};
use crate::table::Compression;
use crate::tree::Tree;

use super::DbInner;

impl DbInner {
    /// A planner holding what it needs now: the flush history and the
    /// active memtable's size are read once, here.
    pub(crate) fn planner(&self) -> Planner<'_> {
        let mem = &self.current().mem.mem;
        Planner {
            opts: &self.opts,
            policy: &self.policy,
            history: FlushHistory {
                flushes: self.counters.flushes.load(Relaxed),
                flushed_entries: self.counters.flushed_entries.load(Relaxed),
                memtable: (mem.len(), mem.approximate_bytes()),
            },
            cache: &self.plan_cache,
            plans_made: &self.counters.filter_plans,
        }
    }

    /// [`Planner::shape`].
    pub(crate) fn shape(&self, tree: &Tree, writing: Option<Writing>) -> TreeShape {
        self.planner().shape(tree, writing)
    }

    /// [`Planner::plan`].
    pub(crate) fn plan(&self, shape: &TreeShape) -> Arc<Vec<LevelFilter>> {
        self.planner().plan(shape)
    }

    /// [`Planner::compression_for`].
    pub(crate) fn compression_for(&self, tree: &Tree, writing: Writing) -> Compression {
        self.planner().compression_for(tree, writing)
    }

    /// [`Planner::filter_for`].
    pub(crate) fn filter_for(&self, tree: &Tree, writing: Writing) -> LevelFilter {
        self.planner().filter_for(tree, writing)
    }
}
