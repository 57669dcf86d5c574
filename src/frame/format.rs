//! The log record frame shared by the WAL and the manifest.
//!
//! ```text
//!   offset 0        4        8      9
//!   +--------+--------+------+---------------------+
//!   | crc32  | len    | type | payload (len bytes) |
//!   | u32 LE | u32 LE | u8   |                     |
//!   +--------+--------+------+---------------------+
//!   crc32 covers bytes 4.. (len, type and payload), so a damaged length or
//!   type is caught as surely as a damaged payload.
//! ```
//!
//! Records are not split across blocks (unlike the 32 KiB blocks of `LevelDB`): a
//! log is a plain sequence of frames, one per write batch or version edit,
//! and each frame is written with a single `write` call.

use crate::{Error, Result};

/// Bytes in a record header: crc32, length, type.
pub const HEADER_LEN: usize = 9;

/// The largest payload a record may carry (1 GiB). Larger lengths in a header
/// are treated as damage, never as an allocation request.
pub const MAX_PAYLOAD: usize = 1 << 30;

/// What a record's payload is. A log holds one type only, so a manifest read
/// as a WAL (or the reverse) fails loudly instead of misparsing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum RecordType {
    /// A [`crate::WriteBatch`] in a write-ahead log.
    Batch = 1,
    /// A [`crate::manifest::VersionEdit`] in a manifest.
    Edit = 2,
}

/// Frames `payload` as one record.
///
/// # Errors
/// `InvalidArgument` if the payload exceeds [`MAX_PAYLOAD`].
pub fn encode_record(kind: RecordType, payload: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(&[0; HEADER_LEN]);
    out.extend_from_slice(payload);
    seal_record(&mut out, kind)?;
    Ok(out)
}

/// Completes a record in `frame`: `HEADER_LEN` placeholder bytes followed by
/// the payload become the header (crc, length, type) and the payload.
///
/// # Errors
/// `InvalidArgument` if the payload exceeds [`MAX_PAYLOAD`].
pub(crate) fn seal_record(frame: &mut [u8], kind: RecordType) -> Result<()> {
    let payload_len = frame.len().saturating_sub(HEADER_LEN);
    if payload_len > MAX_PAYLOAD {
        return Err(Error::InvalidArgument(format!(
            "log record of {payload_len} bytes exceeds the {MAX_PAYLOAD}-byte limit"
        )));
    }
    let len = u32::try_from(payload_len)
        .map_err(|_| Error::InvalidArgument("log record length does not fit in u32".into()))?;
    let (header, _) = frame
        .split_first_chunk_mut::<HEADER_LEN>()
        .ok_or_else(|| Error::InvalidArgument("a record frame is shorter than its header".into()))?;
    header[4..8].copy_from_slice(&len.to_le_bytes());
    header[8] = kind as u8;
    let crc = crc32fast::hash(frame.get(4..).unwrap_or_default());
    if let Some(slot) = frame.get_mut(..4) {
        slot.copy_from_slice(&crc.to_le_bytes());
    }
    Ok(())
}

/// The outcome of parsing the frame that starts at some offset.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame<'a> {
    /// A whole, checksummed record of the expected type.
    Good {
        /// The payload.
        payload: &'a [u8],
        /// Offset just past the record.
        next: usize,
    },
    /// A checksummed record whose type is not the one this log holds. This is
    /// never a torn write, so it is always reported as corruption.
    WrongType(u8),
    /// Not a record: short header, length past the end, or checksum mismatch.
    Bad(&'static str),
}

/// Parses the frame at `at` of `log`.
pub(crate) fn parse_frame(log: &[u8], at: usize, expected: RecordType) -> Frame<'_> {
    parse_frame_with_cost(log, at, expected).0
}

/// Parses the frame at `at` of `log`, also returning how many bytes were
/// checksummed (the reader's forward scan budgets this).
pub(crate) fn parse_frame_with_cost(log: &[u8], at: usize, expected: RecordType) -> (Frame<'_>, usize) {
    let Some(header) = log.get(at..).and_then(|rest| rest.get(..HEADER_LEN)) else {
        return (Frame::Bad("record header runs past the end of the log"), 0);
    };
    let word = |i: usize| header.get(i..i + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let stored_crc = word(0);
    let len = word(4) as usize;
    if len > MAX_PAYLOAD {
        return (Frame::Bad("record length exceeds the 1 GiB limit"), 0);
    }
    // Checked before the crc so the reader's forward scan over a damaged
    // tail rejects almost every offset without hashing anything.
    let kind = header.get(8).copied().unwrap_or_default();
    if kind != RecordType::Batch as u8 && kind != RecordType::Edit as u8 {
        return (Frame::Bad("unknown record type"), 0);
    }
    let body_end = at + HEADER_LEN + len;
    let Some(covered) = log.get(at + 4..body_end) else {
        return (Frame::Bad("record payload runs past the end of the log"), 0);
    };
    let cost = covered.len();
    if crc32fast::hash(covered) != stored_crc {
        return (Frame::Bad("record checksum mismatch"), cost);
    }
    if kind != expected as u8 {
        return (Frame::WrongType(kind), cost);
    }
    (Frame::Good { payload: covered.get(5..).unwrap_or_default(), next: body_end }, cost)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_frame_bytes() {
        let rec = encode_record(RecordType::Batch, b"hi").unwrap();
        let crc = crc32fast::hash(&[2, 0, 0, 0, 1, b'h', b'i']);
        let mut want = crc.to_le_bytes().to_vec();
        want.extend_from_slice(&[2, 0, 0, 0, 1, b'h', b'i']);
        assert_eq!(rec, want);
        assert_eq!(parse_frame(&rec, 0, RecordType::Batch), Frame::Good { payload: b"hi", next: 11 });
        assert_eq!(parse_frame(&rec, 0, RecordType::Edit), Frame::WrongType(1));
    }

    #[test]
    fn every_flip_and_truncation_of_a_frame_is_rejected() {
        let rec = encode_record(RecordType::Edit, b"payload bytes").unwrap();
        for i in 0..rec.len() {
            for bit in 0..8 {
                let mut bad = rec.clone();
                bad[i] ^= 1 << bit;
                assert!(
                    matches!(parse_frame(&bad, 0, RecordType::Edit), Frame::Bad(_)),
                    "flip of bit {bit} at {i}"
                );
            }
        }
        for len in 0..rec.len() {
            assert!(matches!(parse_frame(&rec[..len], 0, RecordType::Edit), Frame::Bad(_)), "cut at {len}");
        }
    }
}
