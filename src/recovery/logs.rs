//! Reading one write-ahead log for a recovery scan: replayed into the
//! scan's memtable when it is live, read for the report when it is not.

use std::path::PathBuf;

use super::RecoveryScan;
use crate::batch::WriteBatch;
use crate::fs::FileSystem;
use crate::wal::{HEADER_LEN, LogEnd, RecoveryMode};
use crate::{Error, Result};

/// One write-ahead log, as the scan read it.
#[derive(Debug)]
pub struct LogInfo {
    /// The log's file number.
    pub number: u64,
    /// The log file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// Whether it is live (numbered at or above the manifest's log
    /// number); older logs are flushed leftovers, deleted on open.
    pub live: bool,
    /// Whether recovery replays it: live, and not after a point-in-time
    /// stop in an earlier log.
    pub replayed: bool,
    /// Whole records read.
    pub records: u64,
    /// Operations in those records' batches.
    pub ops: u64,
    /// The largest sequence number written, if any record held one.
    pub last_seq: Option<u64>,
    /// Bytes of whole records.
    pub valid_len: u64,
    /// How reading ended, if it ended without an error.
    pub end: Option<LogEnd>,
    /// The damage the recovery mode refuses, if any (for a replayed log,
    /// opening refuses too).
    pub error: Option<Error>,
}

/// Reads log `number` at `path` in `mode` into `report`: its info, and for
/// a replayed log its writes (into `report.mem`) and where it stopped.
pub(super) fn read_log(
    fs: &dyn FileSystem,
    report: &mut RecoveryScan,
    number: u64,
    path: PathBuf,
    mode: RecoveryMode,
) -> Result<()> {
    let live = number >= report.manifest.state.log_number;
    let replayed = live && report.stop.is_none();
    if live && !replayed {
        report.discard.push(path.clone());
    }
    let bytes = fs.read(&path)?;
    let mut info = LogInfo {
        number,
        size: bytes.len() as u64,
        live,
        replayed,
        records: 0,
        ops: 0,
        last_seq: None,
        valid_len: 0,
        end: None,
        error: None,
        path,
    };
    let mut reader = crate::wal::reader(&bytes, mode);
    for record in reader.by_ref() {
        let applied = record.map_err(|e| e.at_file(&info.path, 0)).and_then(|record| {
            let (base, batch) = WriteBatch::decode(record.payload)
                .map_err(|e| e.at_file(&info.path, record.offset + HEADER_LEN as u64))?;
            if replayed {
                report.mem.apply_batch(base, &batch).map_err(|e| match e {
                    Error::InvalidArgument(what) => Error::corruption_in(&info.path, record.offset, what),
                    other => other,
                })?;
            }
            Ok((base, batch.len() as u64))
        });
        match applied {
            Ok((base, ops)) => {
                info.records += 1;
                info.ops += ops;
                if ops > 0 {
                    let last = base.saturating_add(ops - 1);
                    info.last_seq = Some(info.last_seq.map_or(last, |s| s.max(last)));
                }
            }
            Err(e) => {
                info.error = Some(e);
                break;
            }
        }
    }
    info.valid_len = reader.valid_len();
    if info.error.is_none() {
        info.end = reader.end().cloned();
    }
    if replayed {
        if let Some(LogEnd::Stopped { at, .. }) = &info.end {
            report.stop = Some((info.path.clone(), *at));
        }
        report.active_log = Some(number);
    }
    report.logs.push(info);
    Ok(())
}
