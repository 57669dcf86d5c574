//! Reading a log back, and deciding what a damaged tail means.
//!
//! Replay walks the frames from offset 0. When a frame does not parse (short
//! header, length past the end, checksum mismatch) the reader asks one
//! question: *does any valid frame start anywhere after this offset?*
//!
//! - **No** — the damage is in the last record. It is a *torn tail* only if
//!   it is what an interrupted append leaves: the record is incomplete (its
//!   header, or the payload its length announces, runs past the end of the
//!   file), every byte from it to the end is zero (space the file system
//!   allocated but never wrote), or the file ends in zeros from a 512-byte
//!   sector boundary inside it (the file's new size reached the disk but its
//!   last sectors did not). The price of the last rule: a record whose own
//!   bytes end in ≥ 512 zeros across a sector boundary and that is *also*
//!   damaged elsewhere reads as torn. The frames before it are the log; the
//!   reader stops with [`LogEnd::TornTail`] and [`FrameReader::valid_len`] is
//!   the offset to truncate the file to before appending again. This is not
//!   an error in either mode: the write was never acknowledged as durable.
//!   A *complete* last record that fails its checksum (or has an unknown
//!   type) is damage to a write that may have been acknowledged, so it is
//!   treated like mid-log corruption below. So is a last record whose
//!   length field alone was damaged: it seems to run past the end, but its
//!   checksum matches once the length is taken to be the bytes that remain.
//! - **Yes** — the damage is *mid-log corruption*: a record that was once
//!   complete (later ones were written after it) has changed. In
//!   [`RecoveryMode::AbsoluteConsistency`] (the default) the reader returns
//!   `Error::Corruption` with the damaged record's offset. In
//!   [`RecoveryMode::PointInTime`] it stops there with [`LogEnd::Stopped`],
//!   recovering exactly the writes before the damage.
//!
//! A frame with a valid checksum whose type is the *other* known log type (a
//! manifest read as a WAL, or the reverse) is mid-log corruption at its
//! offset wherever it sits, since no torn write produces a valid checksum.
//! A type byte that is neither known type is treated like any other damage
//! (it is checked before the crc, to keep the forward scan cheap), so a new
//! record type needs a new log format version, not just a new type byte.
//!
//! The forward scan costs one header parse per remaining byte, plus one crc
//! for each offset whose header has a known type and a length that fits.
//! The crc work is capped (32 bytes per scanned byte plus 64 MiB); a tail
//! crafted to exceed it (a torn write of a value full of plausible frame
//! headers) is treated as mid-log corruption. Likewise a payload that itself
//! contains a byte-exact valid frame can make a torn tail look like mid-log
//! corruption. Both err on the side of refusing to open (or, in
//! `PointInTime`, of stopping at the same offset), never of dropping
//! acknowledged data.

use crate::{Error, Result};

use super::format::{Frame, HEADER_LEN, RecordType, parse_frame, parse_frame_with_cost};

/// The unit a disk writes atomically, and so the unit a power loss drops.
const SECTOR_BYTES: usize = 512;

/// The forward scan may checksum this many bytes per byte it scans, plus
/// [`SCAN_BUDGET_BASE`]. Enough for any natural tail (a zero-filled tail
/// costs 5 bytes per offset); only payloads crafted to be full of plausible
/// frame headers with long lengths exhaust it.
const SCAN_BUDGET_PER_BYTE: usize = 32;
const SCAN_BUDGET_BASE: usize = 64 << 20;

/// How replay treats a damaged record that has valid records after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecoveryMode {
    /// Any damage other than a torn tail is `Error::Corruption`.
    #[default]
    AbsoluteConsistency,
    /// Stop at the first damaged record and recover everything before it.
    PointInTime,
}

/// One record read from a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// Offset of the record's header in the log.
    pub offset: u64,
    /// The record's payload.
    pub payload: &'a [u8],
}

/// Why reading stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogEnd {
    /// Every byte of the log was a valid record.
    Clean,
    /// The bytes from `at` to the end are an incomplete last write, dropped.
    TornTail {
        /// Offset of the first dropped byte (equals the valid length).
        at: u64,
        /// How many bytes were dropped.
        dropped: u64,
    },
    /// [`RecoveryMode::PointInTime`] stopped at a damaged record with valid
    /// records after it.
    Stopped {
        /// Offset of the damaged record.
        at: u64,
        /// What was wrong with it.
        what: String,
    },
}

/// Iterates the records of a log held in memory.
///
/// ```
/// use siftdb::frame::{RecoveryMode, FrameReader, RecordType, encode_record, LogEnd};
/// let mut log = encode_record(RecordType::Batch, b"one").unwrap();
/// log.extend(encode_record(RecordType::Batch, b"two").unwrap());
/// log.extend_from_slice(&[7, 7, 7]); // a torn third write
/// let mut reader = FrameReader::new(&log, RecordType::Batch, RecoveryMode::default());
/// let got: Vec<&[u8]> = reader.by_ref().map(|r| r.unwrap().payload).collect();
/// assert_eq!(got, [b"one".as_slice(), b"two"]);
/// assert_eq!(reader.valid_len(), 24);
/// assert_eq!(reader.end(), Some(&LogEnd::TornTail { at: 24, dropped: 3 }));
/// ```
#[derive(Debug, Clone)]
pub struct FrameReader<'a> {
    log: &'a [u8],
    pos: usize,
    kind: RecordType,
    mode: RecoveryMode,
    end: Option<LogEnd>,
    failed: bool,
}

impl<'a> FrameReader<'a> {
    /// A reader of records of type `kind` over the whole contents of a log file.
    #[must_use]
    pub fn new(log: &'a [u8], kind: RecordType, mode: RecoveryMode) -> Self {
        FrameReader { log, pos: 0, kind, mode, end: None, failed: false }
    }

    /// Bytes of whole, valid records read so far. Once iteration has ended
    /// without error, the length to truncate the file to before appending.
    #[must_use]
    pub fn valid_len(&self) -> u64 {
        self.pos as u64
    }

    /// Why reading stopped; `None` while records remain or after an error.
    #[must_use]
    pub fn end(&self) -> Option<&LogEnd> {
        self.end.as_ref()
    }

    /// Whether a valid frame starts at any offset in `from..`, within a
    /// budget of checksummed bytes.
    fn scan_after(&self, from: usize) -> Scan {
        let last_start = self.log.len().saturating_sub(HEADER_LEN);
        let remaining = self.log.len().saturating_sub(from);
        let mut budget = remaining.saturating_mul(SCAN_BUDGET_PER_BYTE).saturating_add(SCAN_BUDGET_BASE);
        for at in from..=last_start {
            let (frame, cost) = parse_frame_with_cost(self.log, at, self.kind);
            if !matches!(frame, Frame::Bad(_)) {
                return Scan::Found;
            }
            budget = match budget.checked_sub(cost) {
                Some(left) => left,
                None => return Scan::GaveUp,
            };
        }
        Scan::NothingValid
    }

    /// Whether the bytes from the current position to the end are what an
    /// interrupted append leaves: all zeros, or one record cut short (and
    /// not a complete record whose length field was damaged).
    fn is_torn_write(&self) -> bool {
        let rest = self.log.get(self.pos..).unwrap_or_default();
        if rest.iter().all(|&b| b == 0) {
            return true;
        }
        // Sectors lost after the size was extended read back as zeros from
        // a sector boundary to the end.
        let zeros_from = self.log.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        if zeros_from.max(self.pos + 1).next_multiple_of(SECTOR_BYTES) < self.log.len() {
            return true;
        }
        let Some(header) = rest.get(..HEADER_LEN) else { return true };
        let word =
            |i: usize| header.get(i..i + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let len = word(4) as usize;
        if HEADER_LEN.saturating_add(len) <= rest.len() {
            return false;
        }
        // Runs past the end: torn, unless the record fills the rest exactly
        // and only its length field changed.
        let Ok(actual) = u32::try_from(rest.len() - HEADER_LEN) else { return true };
        let mut crc = crc32fast::Hasher::new();
        crc.update(&actual.to_le_bytes());
        crc.update(rest.get(8..).unwrap_or_default());
        crc.finalize() != word(0)
    }

    /// Handles damage at the current position: a torn tail ends cleanly,
    /// anything else depends on the mode.
    fn damaged(&mut self, mut what: String, certainly_mid_log: bool) -> Option<Result<Record<'a>>> {
        let at = self.pos as u64;
        if !certainly_mid_log {
            match self.scan_after(self.pos + 1) {
                Scan::NothingValid if self.is_torn_write() => {
                    let dropped = (self.log.len() - self.pos) as u64;
                    self.end = Some(LogEnd::TornTail { at, dropped });
                    return None;
                }
                Scan::NothingValid => what.push_str(", in a complete last record (not a torn write)"),
                Scan::Found => what.push_str(", with valid records after it"),
                Scan::GaveUp => what.push_str(", and the scan for valid records after it ran out of budget"),
            }
        }
        match self.mode {
            RecoveryMode::AbsoluteConsistency => {
                // Fuse: an error ends iteration, and `end()` stays `None`.
                self.failed = true;
                Some(Err(Error::corruption(at, what)))
            }
            RecoveryMode::PointInTime => {
                self.end = Some(LogEnd::Stopped { at, what });
                None
            }
        }
    }
}

/// What the forward scan after a damaged record found.
enum Scan {
    Found,
    NothingValid,
    GaveUp,
}

impl<'a> Iterator for FrameReader<'a> {
    type Item = Result<Record<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.end.is_some() || self.failed {
            return None;
        }
        if self.pos == self.log.len() {
            self.end = Some(LogEnd::Clean);
            return None;
        }
        match parse_frame(self.log, self.pos, self.kind) {
            Frame::Good { payload, next } => {
                let offset = self.pos as u64;
                self.pos = next;
                Some(Ok(Record { offset, payload }))
            }
            Frame::WrongType(t) => {
                self.damaged(format!("record of type {t} in a log of type {}", self.kind as u8), true)
            }
            Frame::Bad(what) => self.damaged(what.to_string(), false),
        }
    }
}
