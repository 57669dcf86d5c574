//! Internal keys: a user key plus the sequence number and kind of one write.
//!
//! ```text
//! +----------------------+-------------------------------------+
//! | user key (n bytes)   | trailer: u64 LE = seq << 8 | kind   |
//! +----------------------+-------------------------------------+
//! ```
//!
//! `kind` is [`ValueKind::Tombstone`] (0) or [`ValueKind::Value`] (1), and
//! `seq` is at most [`MAX_SEQ`] = 2^56 − 1. Internal keys order by user key
//! ascending, then by trailer *descending*, so the newest version of a key
//! comes first and a seek to `(key, snapshot)` lands on the newest version
//! visible at that snapshot.

use std::cmp::Ordering;

use crate::{Error, Result};

/// Bytes in the trailer that follows the user key.
pub const TRAILER_LEN: usize = 8;

// One definition of kinds and the sequence-number limit for the WAL, the
// memtable and the tables.
pub(crate) use crate::key::{MAX_SEQ, ValueKind, compare_internal};

/// Packs `seq` and `kind` into a trailer. `seq` must be at most [`MAX_SEQ`].
#[must_use]
#[inline]
pub fn pack_trailer(seq: u64, kind: ValueKind) -> u64 {
    (seq << 8) | kind as u64
}

/// Appends the internal key for `(user_key, seq, kind)` to `out`.
pub fn encode_internal_key(out: &mut Vec<u8>, user_key: &[u8], seq: u64, kind: ValueKind) {
    out.extend_from_slice(user_key);
    out.extend_from_slice(&pack_trailer(seq, kind).to_le_bytes());
}

/// The internal key for `(user_key, seq, kind)` as a new vector.
#[must_use]
pub fn internal_key(user_key: &[u8], seq: u64, kind: ValueKind) -> Vec<u8> {
    let mut out = Vec::with_capacity(user_key.len() + TRAILER_LEN);
    encode_internal_key(&mut out, user_key, seq, kind);
    out
}

/// Splits an internal key into its user key and raw trailer.
///
/// # Errors
/// `Corruption` if `ikey` is shorter than a trailer.
#[inline]
pub fn split_internal_key(ikey: &[u8]) -> Result<(&[u8], u64)> {
    let Some(split) = ikey.len().checked_sub(TRAILER_LEN) else {
        return Err(Error::corruption(0, format!("internal key of {} bytes has no trailer", ikey.len())));
    };
    let (user, trailer) = ikey.split_at(split);
    let mut raw = [0u8; TRAILER_LEN];
    raw.copy_from_slice(trailer);
    Ok((user, u64::from_le_bytes(raw)))
}

/// Splits an internal key into user key, sequence number and kind.
///
/// # Errors
/// `Corruption` if `ikey` is too short or its kind byte is unknown.
pub fn parse_internal_key(ikey: &[u8]) -> Result<(&[u8], u64, ValueKind)> {
    let (user, trailer) = split_internal_key(ikey)?;
    #[expect(clippy::cast_possible_truncation, reason = "the kind is the low byte of the trailer")]
    let kind_byte = trailer as u8;
    let kind = ValueKind::from_u8(kind_byte, user.len() as u64)?;
    Ok((user, trailer >> 8, kind))
}

/// Orders two encoded internal keys.
///
/// # Errors
/// `Corruption` if either is shorter than a trailer.
pub fn compare_internal_keys(a: &[u8], b: &[u8]) -> Result<Ordering> {
    let (au, at) = split_internal_key(a)?;
    let (bu, bt) = split_internal_key(b)?;
    Ok(compare_internal(au, at, bu, bt))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newer_versions_sort_first_and_user_keys_dominate() {
        let a5 = internal_key(b"a", 5, ValueKind::Value);
        let a3 = internal_key(b"a", 3, ValueKind::Tombstone);
        let b9 = internal_key(b"b", 9, ValueKind::Value);
        assert_eq!(compare_internal_keys(&a5, &a3).unwrap(), Ordering::Less);
        assert_eq!(compare_internal_keys(&a3, &b9).unwrap(), Ordering::Less);
        // A longer user key with a shared prefix sorts after, whatever the trailers.
        let ab = internal_key(b"ab", MAX_SEQ, ValueKind::Value);
        assert_eq!(compare_internal_keys(&a3, &ab).unwrap(), Ordering::Less);
    }

    #[test]
    fn golden_trailer_bytes() {
        let k = internal_key(b"k", 0x0102, ValueKind::Value);
        assert_eq!(k, [b'k', 0x01, 0x02, 0x01, 0, 0, 0, 0, 0]);
        let (user, seq, kind) = parse_internal_key(&k).unwrap();
        assert_eq!((user, seq, kind), (&b"k"[..], 0x0102, ValueKind::Value));
    }

    #[test]
    fn short_keys_and_unknown_kinds_are_corruption() {
        for len in 0..TRAILER_LEN {
            assert!(parse_internal_key(&vec![0; len]).unwrap_err().is_corruption());
        }
        let mut k = internal_key(b"x", 1, ValueKind::Value);
        k[1] = 7;
        assert!(parse_internal_key(&k).unwrap_err().is_corruption());
        let max = internal_key(b"", MAX_SEQ, ValueKind::Value);
        assert_eq!(parse_internal_key(&max).unwrap().1, MAX_SEQ);
    }
}
