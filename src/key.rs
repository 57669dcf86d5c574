//! Sequence numbers, value kinds and the internal-key order shared by the
//! memtable, the WAL and (at integration) the tables.
//!
//! Every write gets a sequence number. An *internal key* is a user key plus
//! the sequence number of the write; all versions of a key sort together,
//! newest first, so a reader at snapshot `s` takes the first version whose
//! sequence number is `<= s`.
//!
//! Sequence numbers fit in 56 bits so that a sequence number and a
//! [`ValueKind`] pack into one `u64` trailer (`seq << 8 | kind`), the form a
//! table may store after each user key:
//!
//! ```text
//!   trailer (u64, LE on disk)
//!   +------------------------------+--------+
//!   | seq (56 bits)                | kind u8|
//!   +------------------------------+--------+
//!   bits 63..8                      bits 7..0
//! ```

use std::cmp::Ordering;
use std::ops::Bound;

use crate::{Error, Result};

/// A write's sequence number. Larger is newer.
pub type SeqNo = u64;

/// The largest sequence number a write may carry (56 bits), and the snapshot
/// that sees every write.
pub const MAX_SEQ: SeqNo = (1 << 56) - 1;

/// What a versioned entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum ValueKind {
    /// A deletion marker: the key has no value as of this version.
    Tombstone = 0,
    /// A value.
    Value = 1,
}

impl ValueKind {
    /// The on-disk byte for this kind.
    #[must_use]
    pub fn as_u8(self) -> u8 {
        self as u8
    }

    /// Parses an on-disk kind byte.
    ///
    /// # Errors
    /// `Corruption` at `offset` for any byte that is not a known kind.
    pub fn from_u8(byte: u8, offset: u64) -> Result<Self> {
        match byte {
            0 => Ok(ValueKind::Tombstone),
            1 => Ok(ValueKind::Value),
            other => Err(Error::corruption(offset, format!("unknown value kind {other}"))),
        }
    }
}

/// Orders two internal keys: user key ascending, then sequence number
/// descending (newest version first). The numbers may be sequence numbers
/// (the memtable) or whole trailers (`seq << 8 | kind`, the tables), which
/// sort as their sequence numbers do: one order for both.
///
/// ```
/// use std::cmp::Ordering;
/// use siftdb::key::compare_internal;
/// assert_eq!(compare_internal(b"a", 1, b"b", 9), Ordering::Less);
/// assert_eq!(compare_internal(b"a", 9, b"a", 1), Ordering::Less); // newer first
/// ```
#[must_use]
#[inline]
pub fn compare_internal(a_key: &[u8], a_seq: SeqNo, b_key: &[u8], b_seq: SeqNo) -> Ordering {
    a_key.cmp(b_key).then_with(|| b_seq.cmp(&a_seq))
}

/// Whether `key` lies before a range's `start` bound.
pub(crate) fn before_start<K: AsRef<[u8]>>(start: &Bound<K>, key: &[u8]) -> bool {
    match start {
        Bound::Included(s) => key < s.as_ref(),
        Bound::Excluded(s) => key <= s.as_ref(),
        Bound::Unbounded => false,
    }
}

/// Whether `key` lies past a range's `end` bound.
pub(crate) fn past_end<K: AsRef<[u8]>>(end: &Bound<K>, key: &[u8]) -> bool {
    match end {
        Bound::Included(e) => key > e.as_ref(),
        Bound::Excluded(e) => key >= e.as_ref(),
        Bound::Unbounded => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_order_is_user_key_then_newest_first() {
        let mut keys = vec![(b"b".to_vec(), 1), (b"a".to_vec(), 1), (b"a".to_vec(), 5), (b"ab".to_vec(), 0)];
        keys.sort_by(|x, y| compare_internal(&x.0, x.1, &y.0, y.1));
        assert_eq!(
            keys,
            vec![(b"a".to_vec(), 5), (b"a".to_vec(), 1), (b"ab".to_vec(), 0), (b"b".to_vec(), 1)]
        );
    }
}
