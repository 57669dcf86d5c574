//! The write-ahead log: one frame ([`crate::frame`]) per write batch, of
//! type [`RecordType::Batch`]. A write is acknowledged after its frame is
//! appended (and, under `Options::sync`, synced); recovery replays the
//! frames of the live logs (`crate::recovery`).

use crate::fs::WritableFile;

pub use crate::frame::{
    FrameReader, FrameWriter, HEADER_LEN, LogEnd, MAX_PAYLOAD, Record, RecordType, RecoveryMode, encode_record,
};

/// A writer of write-batch frames, appending at the end of `file`.
#[must_use]
pub fn writer(file: Box<dyn WritableFile>) -> FrameWriter {
    FrameWriter::new(file, RecordType::Batch)
}

/// A reader of the write-batch frames of `log`, in recovery `mode`.
#[must_use]
pub fn reader(log: &[u8], mode: RecoveryMode) -> FrameReader<'_> {
    FrameReader::new(log, RecordType::Batch, mode)
}
