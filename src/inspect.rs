//! Read-only inspection of a database directory, for the command line's
//! `db info` and `db verify`: the manifest's state, the tables it names and
//! the write-ahead logs, read straight from the files.
//!
//! Opening a `Db` takes the lock, truncates torn log tails and may write a
//! new manifest; inspecting does none of that. It reads `CURRENT`, replays
//! the manifest it names and reads every log with strict recovery
//! ([`RecoveryMode::AbsoluteConsistency`]), recording what it finds. It
//! never writes, so it is safe on a database another process has open
//! (though it may then see a log mid-append, as a torn tail).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::batch::WriteBatch;
use crate::fs::FileSystem;
use crate::manifest::{
    FileKind, TableRecord, VersionSet, manifest_file_name, parse_file_name, read_current, replay,
    table_file_name,
};
use crate::wal::{HEADER_LEN, LogEnd, RecordType, RecoveryMode, WalReader};
use crate::{Error, Result};

/// The manifest named by `CURRENT`, replayed.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestInfo {
    /// The manifest's file number.
    pub number: u64,
    /// The manifest file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// Edits replayed.
    pub edits: usize,
    /// Bytes of whole edits (less than `size` after a torn last edit).
    pub valid_len: u64,
    /// How the manifest ended (a torn last edit was never acknowledged).
    pub end: LogEnd,
    /// The state it describes: live tables and counters.
    pub state: VersionSet,
}

/// One live table as the manifest records it, and whether its file is there.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveTable {
    /// Its level.
    pub level: usize,
    /// The manifest's record.
    pub record: Arc<TableRecord>,
    /// Where the file should be.
    pub path: PathBuf,
    /// The file's actual size, or `None` if it is missing.
    pub actual_size: Option<u64>,
}

/// One write-ahead log, read with strict recovery.
#[derive(Debug)]
pub struct LogInfo {
    /// The log's file number.
    pub number: u64,
    /// The log file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// Whether recovery would replay it (number at or above the manifest's
    /// log number); older logs are flushed leftovers.
    pub live: bool,
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
    /// The damage strict recovery refuses, if any.
    pub error: Option<Error>,
}

/// Everything [`inspect_db`] read.
#[derive(Debug)]
pub struct DbInspection {
    /// The database directory.
    pub dir: PathBuf,
    /// The live manifest.
    pub manifest: ManifestInfo,
    /// Live tables, level by level in the manifest's order.
    pub tables: Vec<LiveTable>,
    /// Write-ahead logs in the directory, oldest first.
    pub logs: Vec<LogInfo>,
    /// Table files the manifest does not name (left by an interrupted
    /// flush or compaction; deleted on the next open).
    pub unreferenced_tables: Vec<PathBuf>,
    /// Manifests other than the live one.
    pub old_manifests: Vec<PathBuf>,
}

impl DbInspection {
    /// The largest sequence number recovery would reach: the manifest's,
    /// or a live log's if larger.
    #[must_use]
    pub fn last_seq(&self) -> u64 {
        self.logs
            .iter()
            .filter(|l| l.live)
            .filter_map(|l| l.last_seq)
            .fold(self.manifest.state.last_seq, u64::max)
    }
}

/// Reads the database in `dir` without modifying anything.
///
/// # Errors
/// `InvalidArgument` if `dir` is missing, is not a directory, or has no `CURRENT` (not
/// a database); `Io` if a file cannot be read; `Corruption` naming the
/// file if `CURRENT` or the manifest is damaged. Damage in tables or logs
/// is not an error: it is recorded in the result.
pub fn inspect_db(fs: &dyn FileSystem, dir: &Path) -> Result<DbInspection> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(Error::InvalidArgument(format!("{}: not a directory", dir.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::InvalidArgument(format!("{}: no such directory", dir.display())));
        }
        Err(e) => return Err(Error::Io(e)),
    }
    if !fs.exists(&dir.join(crate::manifest::CURRENT)) {
        return Err(Error::InvalidArgument(format!(
            "{}: not a siftdb database (no CURRENT file)",
            dir.display()
        )));
    }
    let number = read_current(fs, dir)?;
    let path = dir.join(manifest_file_name(number));
    let bytes = fs.read(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            Error::corruption_in(&path, 0, "manifest named by CURRENT is missing")
        }
        _ => Error::Io(e),
    })?;
    let replayed = replay(&bytes).map_err(|e| e.at_file(&path, 0))?;
    let manifest = ManifestInfo {
        number,
        path,
        size: bytes.len() as u64,
        edits: replayed.edits,
        valid_len: replayed.valid_len,
        end: replayed.end,
        state: replayed.state,
    };

    let tables = manifest
        .state
        .version
        .tables()
        .map(|(level, record)| {
            let path = dir.join(table_file_name(record.file_number));
            let actual_size = fs
                .open_read(&path)
                .and_then(|f| f.metadata())
                .ok()
                .filter(std::fs::Metadata::is_file)
                .map(|m| m.len());
            LiveTable { level, record: Arc::clone(record), path, actual_size }
        })
        .collect::<Vec<_>>();

    let mut files: Vec<(FileKind, u64, PathBuf)> = fs
        .list_dir(dir)?
        .into_iter()
        .filter_map(|p| {
            let (kind, n) = p.file_name()?.to_str().and_then(parse_file_name)?;
            Some((kind, n, p))
        })
        .collect();
    files.sort_by_key(|(_, n, _)| *n);
    let mut logs = Vec::new();
    let mut unreferenced_tables = Vec::new();
    let mut old_manifests = Vec::new();
    for (kind, n, p) in files {
        match kind {
            FileKind::Log => logs.push(read_log(fs, n, p, n >= manifest.state.log_number)?),
            FileKind::Table if !tables.iter().any(|t| t.record.file_number == n) => {
                unreferenced_tables.push(p);
            }
            FileKind::Manifest if n != number => old_manifests.push(p),
            _ => {}
        }
    }
    Ok(DbInspection { dir: dir.to_path_buf(), manifest, tables, logs, unreferenced_tables, old_manifests })
}

fn read_log(fs: &dyn FileSystem, number: u64, path: PathBuf, live: bool) -> Result<LogInfo> {
    let bytes = fs.read(&path)?;
    let mut info = LogInfo {
        number,
        size: bytes.len() as u64,
        live,
        records: 0,
        ops: 0,
        last_seq: None,
        valid_len: 0,
        end: None,
        error: None,
        path,
    };
    let mut reader = WalReader::new(&bytes, RecordType::Batch, RecoveryMode::AbsoluteConsistency);
    for record in reader.by_ref() {
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                info.error = Some(e.at_file(&info.path, 0));
                break;
            }
        };
        match WriteBatch::decode(record.payload) {
            Ok((base, batch)) => {
                info.records += 1;
                info.ops += batch.len() as u64;
                if !batch.is_empty() {
                    let last = base.saturating_add(batch.len() as u64 - 1);
                    info.last_seq = Some(info.last_seq.map_or(last, |s| s.max(last)));
                }
            }
            Err(e) => {
                info.error = Some(e.at_file(&info.path, record.offset + HEADER_LEN as u64));
                break;
            }
        }
    }
    info.valid_len = reader.valid_len();
    if info.error.is_none() {
        info.end = reader.end().cloned();
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FilterKind;
    use crate::fs::StdFs;
    use crate::manifest::{ManifestWriter, VersionEdit, log_file_name, set_current};
    use crate::key::ValueKind;
    use crate::table::{TableBuilder, TableOptions};
    use crate::wal::WalWriter;

    /// A database made by hand: table 3 in level 1, log 4 with two batches
    /// (seqs 11..=13), manifest 2.
    fn make(dir: &Path) {
        let opts = TableOptions { filter: FilterKind::Xor8, ..TableOptions::default() };
        let mut b = TableBuilder::create(dir.join(table_file_name(3)), opts).unwrap();
        b.add(b"a", 5, ValueKind::Value, b"1").unwrap();
        b.add(b"b", 6, ValueKind::Tombstone, b"").unwrap();
        let meta = b.finish().unwrap();
        let record = TableRecord {
            file_number: 3,
            file_size: meta.file_size,
            smallest: b"a".to_vec(),
            largest: b"b".to_vec(),
            min_seq: 5,
            max_seq: 6,
            entries: 2,
            filter: meta.filter_kind,
            filter_bytes: meta.filter_bytes,
        };
        let edit = VersionEdit {
            added: vec![(1, record)],
            next_file_number: Some(5),
            last_seq: Some(10),
            log_number: Some(4),
            hash_salt: Some(9),
            ..VersionEdit::default()
        };
        ManifestWriter::create(&StdFs, dir, 2, &edit).unwrap();
        set_current(&StdFs, dir, 2).unwrap();
        let mut w = WalWriter::new(StdFs.create(&dir.join(log_file_name(4))).unwrap());
        let mut batch = WriteBatch::new();
        batch.put("c", "3");
        batch.delete("a");
        w.append(&batch.encode(11)).unwrap();
        let mut batch = WriteBatch::new();
        batch.put("d", "4");
        w.append(&batch.encode(13)).unwrap();
        w.sync().unwrap();
    }

    #[test]
    fn reads_manifest_tables_and_logs() {
        let dir = tempfile::tempdir().unwrap();
        make(dir.path());
        let before: Vec<(PathBuf, Vec<u8>)> = StdFs
            .list_dir(dir.path())
            .unwrap()
            .into_iter()
            .map(|p| (p.clone(), std::fs::read(p).unwrap()))
            .collect();
        let i = inspect_db(&StdFs, dir.path()).unwrap();
        assert_eq!((i.manifest.number, i.manifest.edits, i.manifest.end.clone()), (2, 1, LogEnd::Clean));
        assert_eq!(i.tables.len(), 1);
        assert_eq!((i.tables[0].level, i.tables[0].actual_size), (1, Some(i.tables[0].record.file_size)));
        assert_eq!(i.logs.len(), 1);
        let log = &i.logs[0];
        assert_eq!((log.live, log.records, log.ops, log.last_seq), (true, 2, 3, Some(13)));
        assert!(log.error.is_none());
        assert_eq!(i.last_seq(), 13);
        let after: Vec<(PathBuf, Vec<u8>)> = StdFs
            .list_dir(dir.path())
            .unwrap()
            .into_iter()
            .map(|p| (p.clone(), std::fs::read(p).unwrap()))
            .collect();
        assert_eq!(before, after, "inspection must not touch the directory");
    }

    #[test]
    fn damage_is_recorded_and_non_databases_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        make(dir.path());
        let log = dir.path().join(log_file_name(4));
        let mut bytes = std::fs::read(&log).unwrap();
        bytes[HEADER_LEN + 2] ^= 0xff; // inside the first record, a valid one follows
        std::fs::write(&log, &bytes).unwrap();
        std::fs::remove_file(dir.path().join(table_file_name(3))).unwrap();
        let i = inspect_db(&StdFs, dir.path()).unwrap();
        assert!(i.logs[0].error.as_ref().is_some_and(Error::is_corruption));
        assert_eq!(i.tables[0].actual_size, None);

        let empty = tempfile::tempdir().unwrap();
        assert!(matches!(inspect_db(&StdFs, empty.path()), Err(Error::InvalidArgument(_))));
        std::fs::write(dir.path().join(manifest_file_name(2)), b"garbage").unwrap();
        assert!(inspect_db(&StdFs, dir.path()).unwrap_err().is_corruption());
    }
}
