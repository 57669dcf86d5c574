//! Reading one write-ahead log for a recovery scan: replayed into the
//! scan's memtable when it is live, read for the report when it is not.

use std::path::PathBuf;

use super::{RecoveryScan, WalCut};
use crate::batch::WriteBatch;
use crate::fs::FileSystem;
use crate::manifest::WalEnd;
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
    /// Whether recovery replays it: live, present, and not after a
    /// point-in-time stop or a cut in an earlier log.
    pub replayed: bool,
    /// The manifest recorded a synced end for it, but the file is missing
    /// (read as empty: a cut at byte 0).
    pub missing: bool,
    /// The synced end the manifest recorded for it, if any.
    pub recorded_end: Option<WalEnd>,
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
    let recorded_end = if live { report.manifest.state.wal_ends.get(&number).copied() } else { None };
    let (bytes, missing) = match fs.read(&path) {
        Ok(bytes) => (bytes, false),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && recorded_end.is_some() => (Vec::new(), true),
        Err(e) => return Err(e.into()),
    };
    let replayed = live && !missing && !report.halted();
    if live && !missing && !replayed {
        report.discard.push(path.clone());
    }
    let mut info = LogInfo {
        number,
        size: bytes.len() as u64,
        live,
        replayed,
        missing,
        recorded_end,
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
    // Checked before the log's own stop is taken: a stop inside the synced
    // part is a cut too, and only a cut says how much was lost.
    if let Some(end) = recorded_end
        && (replayed || missing)
        && !report.halted()
        && info.valid_len < end.len
    {
        let cut = WalCut {
            number,
            path: info.path.clone(),
            recorded: end,
            found: info.valid_len,
            size: (!missing).then_some(info.size),
        };
        if mode == RecoveryMode::AbsoluteConsistency && info.error.is_none() {
            // Not a torn tail after all: `end` is for logs read without error.
            info.error = Some(cut.error());
            info.end = None;
        }
        report.cut = Some(cut);
        if !missing {
            // Point-in-time recovery keeps the prefix: cut here.
            report.stop = Some((info.path.clone(), info.valid_len));
        }
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
