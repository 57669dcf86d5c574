//! The write-ahead log: one framed record per write batch.
//!
//! [`WalWriter`] appends records through the [`crate::fs`] layer;
//! [`WalReader`] replays them and classifies damage (see [`reader`] for
//! the exact torn-tail and corruption rules). The manifest reuses both with
//! [`RecordType::Edit`]. The frame format is drawn in [`format`](mod@format).

pub mod format;
pub mod reader;
mod writer;

pub use format::{HEADER_LEN, MAX_PAYLOAD, RecordType, encode_record};
pub use reader::{LogEnd, Record, RecoveryMode, WalReader};
pub use writer::WalWriter;

#[cfg(test)]
mod tests;
