//! Writing a compaction's output as tables of about the output level's
//! `Options::table_target_bytes_for`.

use std::sync::Arc;

use crate::Result;
use crate::db::DbInner;
use crate::db::iter::Version;
use crate::db::tree::{TableFile, Tree};
use crate::filter::FilterKind;
use crate::manifest::table_file_name;
use crate::policy::Writing;
use crate::table::{TableBuilder, TableOptions};

/// Builds output tables one after another, splitting between user keys.
pub(crate) struct OutputWriter<'a> {
    db: &'a DbInner,
    level: usize,
    filter: FilterKind,
    /// Whether outputs split at `table_target_bytes` (a refresh keeps its
    /// table whole, so the tree's shape does not move).
    split: bool,
    current: Option<(u64, TableBuilder)>,
    done: Vec<Arc<TableFile>>,
}

impl<'a> OutputWriter<'a> {
    /// A writer of tables for `writing.level` of `tree`, with the filter
    /// the policy plans for that write.
    pub fn new(db: &'a DbInner, tree: &Tree, writing: Writing, split: bool) -> Self {
        let filter = db.filter_for(tree, writing).kind;
        OutputWriter { db, level: writing.level, filter, split, current: None, done: Vec::new() }
    }

    /// Adds a version; `new_key` says it starts a new user key (a split point).
    pub fn add(&mut self, v: &Version, new_key: bool) -> Result<()> {
        if new_key
            && self.split
            && let Some((_, b)) = &self.current
            && b.estimated_size() >= self.db.opts.table_target_bytes_for(self.level)
        {
            self.finish_current()?;
        }
        if self.current.is_none() {
            let number = self.db.allocate_file_number();
            let path = self.db.dir.join(table_file_name(number));
            let opts = TableOptions {
                block_bytes: self.db.opts.block_bytes,
                filter: self.filter,
                level: u32::try_from(self.level).unwrap_or(u32::MAX),
                seed: self.db.salt,
                inject_filter_build_failure: self.db.opts.inject_filter_build_failure,
                ..TableOptions::default()
            };
            self.current = Some((number, TableBuilder::new(Arc::clone(&self.db.fs), &path, opts)?));
        }
        if let Some((_, b)) = &mut self.current {
            b.add(&v.key, v.seq, v.kind, &v.value)?;
        }
        Ok(())
    }

    fn finish_current(&mut self) -> Result<()> {
        if let Some((number, builder)) = self.current.take() {
            let table = self.db.finish_table(number, builder)?;
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
