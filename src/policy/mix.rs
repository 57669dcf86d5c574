//! Mixed levels: a level whose plan gives a share of its tables a
//! stronger filter kind, and the ledger that keeps that share as tables
//! are written and rewritten.
//!
//! A mixed level's share is kept in whole tables. Each table written to the
//! level takes the stronger kind when the level's keys of that kind, with
//! half of the new table's, stay within the planned share of the level's
//! keys once the write is done; otherwise the level's main kind. A refresh
//! uses the same rule with the table it replaces left out, so a table the
//! rule would write as the other kind is the one `Db::compact` rewrites,
//! and the rewrite stays put: the share ends within half a table of plan.

use super::LevelFilter;
use crate::filter::FilterKind;

/// Part of a level planned with a stronger filter than the rest.
///
/// Fixed-rate kinds move in jumps (xor8 to xor16 doubles a level's bits),
/// so a budget between two jumps is spent by giving some of the level's
/// tables the stronger kind: the level's rate and bits are then the
/// key-weighted mean of the two, which lie on the segment between the two
/// kinds' points (Monkey's optimum over a level's convex hull).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mix {
    /// The stronger kind.
    pub kind: FilterKind,
    /// Share of the level's keys that carry it, in whole tables: in (0, 1).
    pub share: f64,
}

/// The keys of one level a write is about to change, for choosing each
/// new table's kind on a mixed level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixLedger {
    /// Keys the level should hold of the stronger kind once the write is done.
    want: f64,
    /// Keys it holds of that kind outside the tables being replaced, plus
    /// those written so far.
    have: f64,
}

impl MixLedger {
    /// The ledger for a write to a level planned `planned`, if it is mixed.
    /// `kept` lists each table the write leaves on the level (its kind and
    /// entries), `incoming` the entries the write brings.
    #[must_use]
    pub fn new(planned: &LevelFilter, kept: &[(FilterKind, u64)], incoming: u64) -> Option<Self> {
        let mix = planned.mix?;
        let total: u64 = kept.iter().map(|&(_, n)| n).sum::<u64>() + incoming;
        let have: u64 = kept.iter().filter(|&&(k, _)| k == mix.kind).map(|&(_, n)| n).sum();
        #[expect(clippy::cast_precision_loss, reason = "key counts far below 2^52")]
        Some(MixLedger { want: mix.share * total as f64, have: have as f64 })
    }

    /// This ledger's part for one of the pieces a write splits into by key
    /// range (`share` of its keys): the pieces' parts add up to the whole.
    pub fn scale(&mut self, share: f64) {
        self.want *= share;
        self.have *= share;
    }

    /// The kind of the next table, expected to hold `table_keys` keys.
    #[must_use]
    pub fn next_kind(&self, planned: &LevelFilter, table_keys: u64) -> FilterKind {
        match planned.mix {
            #[expect(clippy::cast_precision_loss, reason = "key counts far below 2^52")]
            Some(mix) if self.have + table_keys as f64 / 2.0 <= self.want => mix.kind,
            _ => planned.kind,
        }
    }

    /// Records a table written with `kind` and `entries` keys.
    pub fn wrote(&mut self, planned: &LevelFilter, kind: FilterKind, entries: u64) {
        if planned.mix.is_some_and(|m| m.kind == kind) {
            #[expect(clippy::cast_precision_loss, reason = "key counts far below 2^52")]
            let n = entries as f64;
            self.have += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mixed(share: f64) -> LevelFilter {
        LevelFilter {
            kind: FilterKind::Xor8,
            target_fpr: 0.0,
            bits_per_key: 0.0,
            mix: Some(Mix { kind: FilterKind::Xor16, share }),
        }
    }

    /// Ten tables of 100 keys written one after another reach the share in
    /// whole tables, and rewriting any one of them keeps its kind.
    #[test]
    fn a_level_fills_to_its_share_and_refreshes_stay_put() {
        for share in [0.1, 0.25, 0.5, 0.8] {
            let plan = mixed(share);
            let mut ledger = MixLedger::new(&plan, &[], 1000).unwrap();
            let mut tables = Vec::new();
            for _ in 0..10 {
                let kind = ledger.next_kind(&plan, 100);
                ledger.wrote(&plan, kind, 100);
                tables.push((kind, 100u64));
            }
            let strong = tables.iter().filter(|t| t.0 == FilterKind::Xor16).count();
            assert!(
                (f64::from(u32::try_from(strong).unwrap()) - share * 10.0).abs() <= 0.5,
                "{share}: {strong}"
            );
            for i in 0..tables.len() {
                let mut kept = tables.clone();
                let (kind, n) = kept.remove(i);
                let again = MixLedger::new(&plan, &kept, n).unwrap().next_kind(&plan, n);
                assert_eq!(again, kind, "{share}: table {i}");
            }
        }
    }

    #[test]
    fn an_unmixed_level_has_no_ledger() {
        let plan = LevelFilter::for_kind(FilterKind::Xor8, 1000.0);
        assert!(MixLedger::new(&plan, &[], 10).is_none());
    }
}
