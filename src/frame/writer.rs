//! Appending records to a log file.

use crate::fs::WritableFile;
use crate::{Error, Result};

use super::format::{HEADER_LEN, RecordType, seal_record};

/// Appends framed records to a log (WAL or manifest) through a
/// [`WritableFile`].
///
/// Each record goes out in one `write_all` call, so a crash tears at most the
/// last record. After any failed write or sync the writer refuses further
/// work with [`Error::WritesDisabled`]: the file's tail is then unknown, and the
/// owner must reopen (recover) rather than append after possible garbage.
#[derive(Debug)]
pub struct FrameWriter {
    file: Box<dyn WritableFile>,
    kind: RecordType,
    failed: Option<String>,
    /// The record being written, reused: a put frames its record without
    /// allocating.
    frame: Vec<u8>,
}

/// A frame buffer grown past this by one large record is let go after it,
/// so one huge batch does not pin its size for the log's life.
const KEEP_FRAME_BYTES: usize = 1 << 20;

impl FrameWriter {
    /// A writer of records of type `kind`, appending at the end of `file`
    /// (the WAL writes [`RecordType::Batch`], the manifest
    /// [`RecordType::Edit`]).
    #[must_use]
    pub fn new(file: Box<dyn WritableFile>, kind: RecordType) -> Self {
        FrameWriter { file, kind, failed: None, frame: Vec::new() }
    }

    /// Appends one record holding `payload`; returns the offset at which the
    /// record starts. The record is not durable until [`FrameWriter::sync`].
    ///
    /// # Errors
    /// `InvalidArgument` for a payload over the size limit (the writer stays
    /// usable); `Io` if the write fails, and `WritesDisabled` on every call after.
    pub fn append(&mut self, payload: &[u8]) -> Result<u64> {
        self.append_with(|out| out.extend_from_slice(payload))
    }

    /// [`FrameWriter::append`] of the payload `fill` writes into the buffer
    /// it is given (after bytes it must leave alone), so the caller's
    /// encoding goes straight into the record.
    ///
    /// # Errors
    /// As [`FrameWriter::append`].
    pub fn append_with(&mut self, fill: impl FnOnce(&mut Vec<u8>)) -> Result<u64> {
        self.check()?;
        let mut frame = std::mem::take(&mut self.frame);
        frame.clear();
        frame.extend_from_slice(&[0; HEADER_LEN]);
        fill(&mut frame);
        let written = seal_record(&mut frame, self.kind).and_then(|()| {
            let offset = self.file.len();
            match self.file.write_all(&frame) {
                Ok(()) => Ok(offset),
                Err(e) => {
                    self.failed = Some(format!("log write failed: {e}"));
                    Err(e.into())
                }
            }
        });
        if frame.capacity() <= KEEP_FRAME_BYTES {
            self.frame = frame;
        }
        written
    }

    /// Makes every appended record durable.
    ///
    /// # Errors
    /// `Io` if the sync fails, and `WritesDisabled` on every call after.
    pub fn sync(&mut self) -> Result<()> {
        self.check()?;
        if let Err(e) = self.file.sync() {
            self.failed = Some(format!("log sync failed: {e}"));
            return Err(e.into());
        }
        Ok(())
    }

    /// Bytes in the file, including records not yet synced.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.file.len()
    }

    /// Whether the file is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.file.len() == 0
    }

    fn check(&self) -> Result<()> {
        match &self.failed {
            Some(why) => Err(Error::WritesDisabled(why.clone())),
            None => Ok(()),
        }
    }
}
