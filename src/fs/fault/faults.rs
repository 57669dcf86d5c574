//! Planned failures and operation counters for [`super::FaultFs`].

use std::fmt;
use std::io;

/// A kind of operation a fault can be planned for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FaultOp {
    /// `FileSystem::create`.
    Create,
    /// `FileSystem::open_append`.
    OpenAppend,
    /// `WritableFile::write_all`.
    Write,
    /// `WritableFile::sync`.
    Sync,
    /// `FileSystem::rename`.
    Rename,
    /// `FileSystem::remove_file` and `FileSystem::remove_dir`.
    Remove,
    /// `FileSystem::sync_dir`.
    SyncDir,
    /// `FileSystem::truncate`.
    Truncate,
    /// `FileSystem::create_dir_all`.
    CreateDir,
    /// Any of the above (reads are never failed).
    Any,
}

impl FaultOp {
    /// Every concrete kind, in counter order.
    pub const ALL: [FaultOp; 9] = [
        FaultOp::Create,
        FaultOp::OpenAppend,
        FaultOp::Write,
        FaultOp::Sync,
        FaultOp::Rename,
        FaultOp::Remove,
        FaultOp::SyncDir,
        FaultOp::Truncate,
        FaultOp::CreateDir,
    ];

    fn slot(self) -> Option<usize> {
        Self::ALL.iter().position(|&op| op == self)
    }

    fn matches(self, op: FaultOp) -> bool {
        self == FaultOp::Any || self == op
    }
}

/// The error payload of every error [`super::FaultFs`] makes up; find it with
/// [`super::FaultFs::is_simulated`] or `io::Error::get_ref`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FaultError {
    /// A planned failure of an operation of this kind.
    Injected(FaultOp),
    /// The handle was opened before a simulated crash.
    DeadHandle,
}

impl fmt::Display for FaultError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultError::Injected(op) => write!(f, "faultfs: injected {op:?} failure"),
            FaultError::DeadHandle => f.write_str("faultfs: handle opened before a simulated crash"),
        }
    }
}

impl std::error::Error for FaultError {}

/// How many operations of each kind were attempted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpCounts([u64; FaultOp::ALL.len()]);

impl OpCounts {
    /// Operations of kind `op` (all kinds for [`FaultOp::Any`]).
    #[must_use]
    pub fn get(&self, op: FaultOp) -> u64 {
        match op.slot().and_then(|i| self.0.get(i)) {
            Some(&n) => n,
            None => self.0.iter().sum(),
        }
    }
}

#[derive(Debug)]
struct Plan {
    op: FaultOp,
    /// Matching operations still allowed to succeed.
    pass: u64,
    /// Whether operations after the failed one keep failing.
    sticky: bool,
    fired: bool,
}

/// The fault plan and counters.
#[derive(Debug, Default)]
pub(super) struct Faults {
    counts: OpCounts,
    plan: Option<Plan>,
}

impl Faults {
    pub(super) fn plan(&mut self, op: FaultOp, pass: u64, sticky: bool) {
        self.plan = Some(Plan { op, pass, sticky, fired: false });
    }

    pub(super) fn disable(&mut self) {
        self.plan = None;
    }

    pub(super) fn counts(&self) -> OpCounts {
        self.counts
    }

    pub(super) fn reset_counts(&mut self) {
        self.counts = OpCounts::default();
    }

    /// Counts one operation of kind `op` and says whether it must fail.
    pub(super) fn check(&mut self, op: FaultOp) -> io::Result<()> {
        if let Some(n) = op.slot().and_then(|i| self.counts.0.get_mut(i)) {
            *n += 1;
        }
        let Some(plan) = &mut self.plan else { return Ok(()) };
        if !plan.op.matches(op) {
            return Ok(());
        }
        let fail = if plan.fired {
            plan.sticky
        } else if plan.pass == 0 {
            plan.fired = true;
            true
        } else {
            plan.pass -= 1;
            false
        };
        if fail { Err(io::Error::other(FaultError::Injected(op))) } else { Ok(()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcomes(f: &mut Faults, ops: &[FaultOp]) -> Vec<bool> {
        ops.iter().map(|&op| f.check(op).is_ok()).collect()
    }

    #[test]
    fn sticky_plan_fails_the_nth_matching_op_and_all_later_ones() {
        use FaultOp::{Sync, Write};
        let mut f = Faults::default();
        f.plan(Write, 2, true);
        assert_eq!(
            outcomes(&mut f, &[Write, Sync, Write, Write, Sync, Write]),
            [true, true, true, false, true, false]
        );
        assert_eq!(f.counts().get(Write), 4);
        assert_eq!(f.counts().get(Sync), 2);
        assert_eq!(f.counts().get(FaultOp::Any), 6);
    }

    #[test]
    fn one_shot_plan_fails_once_and_any_matches_every_kind() {
        use FaultOp::{Any, Rename, Sync, Write};
        let mut f = Faults::default();
        f.plan(Any, 1, false);
        assert_eq!(outcomes(&mut f, &[Rename, Sync, Write, Write]), [true, false, true, true]);
        f.plan(Any, 0, true);
        f.disable();
        assert_eq!(outcomes(&mut f, &[Write]), [true]);
    }
}
