//! The framed record log shared by the write-ahead log and the manifest:
//! each record one checksummed frame, written in one call, so a crash
//! tears at most the last.
//!
//! [`FrameWriter`] appends frames through the [`crate::fs`] layer;
//! [`FrameReader`] replays them and classifies damage (see [`reader`] for
//! the exact torn-tail and corruption rules). A log holds one
//! [`RecordType`]: write batches (`crate::wal`) or version edits (the
//! manifest). The frame format is drawn in [`format`](mod@format).

pub mod format;
pub mod reader;
mod writer;

pub use format::{HEADER_LEN, MAX_PAYLOAD, RecordType, encode_record};
pub use reader::{FrameReader, LogEnd, Record, RecoveryMode};
pub use writer::FrameWriter;

#[cfg(test)]
mod tests;
