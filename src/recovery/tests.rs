//! The scan against databases made by hand.

use std::path::{Path, PathBuf};

use super::*;
use crate::batch::WriteBatch;
use crate::wal::HEADER_LEN;
use crate::FilterKind;
use crate::fs::StdFs;
use crate::manifest::{ManifestWriter, VersionEdit, log_file_name, set_current};
use crate::key::ValueKind;
use crate::table::{TableBuilder, TableOptions};

/// A database made by hand: table 3 in level 1, log 4 with two batches
/// (seqs 11..=13), manifest 2.
fn make(dir: &Path) {
    let opts = TableOptions { filter: FilterKind::Xor8, file_number: 3, ..TableOptions::default() };
    let mut b = TableBuilder::create(dir.join(table_file_name(3)), opts).unwrap();
    b.add(b"a", 5, ValueKind::Value, b"1").unwrap();
    b.add(b"b", 6, ValueKind::Tombstone, b"").unwrap();
    // The builder's report is the manifest's record.
    let record = b.finish().unwrap();
    assert_eq!((record.file_number, &record.smallest[..], &record.largest[..]), (3, &b"a"[..], &b"b"[..]));
    assert_eq!((record.min_seq, record.max_seq, record.entries), (5, 6, 2));
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
    let mut w = crate::wal::writer(StdFs.create(&dir.join(log_file_name(4))).unwrap());
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
