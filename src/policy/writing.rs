//! The table write a filter plan is made for.

/// A table write the plan is made for: flushes and compactions describe
/// theirs so the tree shape the policy plans with counts the keys where they
/// are going. (It lives here, below both the database and compaction, so
/// neither reaches into the other for it.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Writing {
    /// The level the new tables go to.
    pub level: usize,
    /// Entries arriving at `level` from outside it.
    pub entries: u64,
    /// The level they leave (a compaction's upper inputs), if any.
    pub from: Option<usize>,
    /// Entries of the level just above `level` that arrive with them: a
    /// level-0 merge written through level 1 into an empty level 2 takes
    /// all of level 1 along.
    pub passing: u64,
}
