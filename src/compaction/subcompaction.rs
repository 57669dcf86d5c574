//! Splitting one merge by key range into pieces merged side by side
//! (`RocksDB`'s subcompactions): a level-0 merge rewrites all of level 1,
//! and while it runs alone on the compaction thread a full level 0 stops
//! the writer with a core idle.
//!
//! The cuts fall between the output level's input tables, chosen so each
//! piece holds about an equal share of their bytes: those tables partition
//! the key range, and the level above spreads over it as they do (level
//! 0's tables each span nearly all of it). A cut is the successor
//! (`key\0`) of the largest key of the table before it, so piece `i`
//! takes the user keys in `[cut[i-1], cut[i])`: every version of a key
//! lands in one piece, and a range tombstone clipped at a cut records the
//! key before it as its table's largest (as an output cut between user
//! keys does), so each piece's outputs lie wholly below the next piece's
//! and the level stays a set of disjoint ranges. A job whose output level has
//! fewer input tables than pieces is not split.

use std::sync::Arc;

use bytes::Bytes;

use crate::range_del::successor;
use crate::tree::TableFile;

/// One piece's key range: `[lo, hi)`, unbounded where `None`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Piece {
    pub lo: Option<Bytes>,
    pub hi: Option<Bytes>,
    /// The piece's share of the output level's input bytes (0 to 1), which
    /// sizes its share of the job's incoming versions.
    pub share: f64,
}

impl Piece {
    /// The whole key range, unsplit.
    pub fn whole() -> Self {
        Piece { lo: None, hi: None, share: 1.0 }
    }

    /// Whether `key` lies past the piece's end.
    pub fn past(&self, key: &[u8]) -> bool {
        self.hi.as_deref().is_some_and(|hi| key >= hi)
    }
}

/// The pieces a merge over `next_inputs` (the output level's input
/// tables, in key order) splits into: at most `max`, at most one per table,
/// and each over at least [`MIN_PIECE_TABLES`] output tables (of
/// `table_bytes`) of them; one whole piece when that leaves one.
pub(crate) fn pieces(max: usize, next_inputs: &[Arc<TableFile>], table_bytes: u64) -> Vec<Piece> {
    let tables: Vec<(&[u8], u64)> =
        next_inputs.iter().map(|t| (t.record.largest.as_slice(), t.record.file_size)).collect();
    split(max, &tables, table_bytes.saturating_mul(MIN_PIECE_TABLES))
}

/// Output tables' worth of the output level's bytes a piece rewrites at
/// least. Each piece ends in a table of its own, which the merge's
/// remainder estimate may leave under a quarter of the target; in pieces
/// of a table or two, such tables stayed on the deep levels of
/// `tests/compaction_shape.rs` (one of 3 on a level, where none was before).
const MIN_PIECE_TABLES: u64 = 4;

/// [`pieces`] over each table's largest key and size, each piece over at
/// least `min_bytes` of them.
fn split(max: usize, tables: &[(&[u8], u64)], min_bytes: u64) -> Vec<Piece> {
    let sizes: Vec<u64> = tables.iter().map(|t| t.1.max(1)).collect();
    let total: u64 = sizes.iter().sum();
    let fit = usize::try_from(total / min_bytes.max(1)).unwrap_or(usize::MAX);
    let n = max.min(tables.len()).min(fit);
    if n < 2 {
        return vec![Piece::whole()];
    }
    let mut pieces = Vec::with_capacity(n);
    let (mut lo, mut from, mut run) = (None, 0, 0u64);
    for (i, &(largest, _)) in tables.iter().enumerate().take(tables.len() - 1) {
        run += sizes[i];
        // Cut after table `i` once the tables up to it hold the next
        // piece's share of the bytes.
        let wanted = u128::from(total) * (pieces.len() as u128 + 1) / n as u128;
        if pieces.len() + 1 < n && u128::from(run) >= wanted {
            let hi = successor(largest);
            pieces.push(Piece { lo: lo.take(), hi: Some(hi.clone()), share: share(&sizes[from..=i], total) });
            lo = Some(hi);
            from = i + 1;
        }
    }
    pieces.push(Piece { lo, hi: None, share: share(&sizes[from..], total) });
    pieces
}

#[expect(clippy::cast_precision_loss, reason = "a share of bytes, for an estimate")]
fn share(sizes: &[u64], total: u64) -> f64 {
    sizes.iter().sum::<u64>() as f64 / total as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each piece's `[lo, hi)`.
    type Bounds<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

    fn cuts(pieces: &[Piece]) -> Vec<Bounds<'_>> {
        pieces.iter().map(|p| (p.lo.as_deref(), p.hi.as_deref())).collect()
    }

    #[test]
    fn pieces_cut_after_tables_into_equal_shares_of_bytes() {
        // Tables by their largest keys.
        let tables: Vec<(&[u8], u64)> = vec![(b"b", 10), (b"d", 10), (b"f", 10), (b"h", 10)];
        let two = split(2, &tables, 1);
        assert_eq!(cuts(&two), [(None, Some(&b"d\0"[..])), (Some(&b"d\0"[..]), None)]);
        assert_eq!(two.iter().map(|p| p.share).collect::<Vec<_>>(), [0.5, 0.5]);
        let four = split(4, &tables, 1);
        assert_eq!(four.len(), 4);
        assert_eq!(four[1].lo.as_deref(), Some(&b"b\0"[..]));
        assert_eq!(four[3].hi, None);
        // A large first table is a piece of its own.
        let skewed = split(2, &[(b"b", 90), (b"d", 5), (b"f", 5)], 1);
        assert_eq!(cuts(&skewed), [(None, Some(&b"b\0"[..])), (Some(&b"b\0"[..]), None)]);
        assert!((skewed[0].share - 0.9).abs() < 1e-9);
        // Every key falls in exactly one piece; a table's largest key in its own.
        for key in [&b""[..], b"a", b"b", b"b\0", b"c", b"d", b"e", b"zz"] {
            let holding = four.iter().filter(|p| p.lo.as_deref().is_none_or(|lo| key >= lo) && !p.past(key));
            assert_eq!(holding.count(), 1, "{key:?}");
        }
        assert!(!four[0].past(b"b") && four[0].past(b"b\0"));
    }

    #[test]
    fn no_split_without_two_tables_or_bytes_for_two_pieces() {
        let whole = [Piece::whole()];
        assert_eq!(split(2, &[], 1), whole);
        assert_eq!(split(2, &[(b"a", 10)], 1), whole);
        assert_eq!(split(1, &[(b"a", 10), (b"b", 10)], 1), whole);
        assert_eq!(split(8, &[(b"a", 1), (b"b", 1), (b"c", 1)], 1).len(), 3, "at most a piece per table");
        // Each piece rewrites at least `min_bytes` of the level.
        let tables: Vec<(&[u8], u64)> = vec![(b"a", 10), (b"b", 10), (b"c", 10), (b"d", 10)];
        assert_eq!(split(4, &tables, 21), whole);
        assert_eq!(split(4, &tables, 20).len(), 2);
        assert_eq!(split(4, &tables, 0).len(), 4);
    }
}
