//! The scan against databases made by hand.

use std::path::{Path, PathBuf};

use super::*;
use crate::batch::WriteBatch;
use crate::wal::HEADER_LEN;
use crate::FilterKind;
use crate::fs::StdFs;
use crate::manifest::{ManifestWriter, VersionEdit, WalEnd, log_file_name, set_current};
use crate::key::ValueKind;
use crate::table::{TableBuilder, TableOptions};

/// A database made by hand: table 3 in level 1, log 4 with two batches
/// (seqs 11..=13), manifest 2.
fn make(dir: &Path) {
    make_with(dir, |_| Vec::new());
}

/// [`make`], with the synced WAL ends `ends(log length)` recorded.
fn make_with(dir: &Path, ends: impl Fn(u64) -> Vec<(u64, WalEnd)>) {
    let mut w = crate::wal::writer(StdFs.create(&dir.join(log_file_name(4))).unwrap());
    let mut batch = WriteBatch::new();
    batch.put("c", "3");
    batch.delete("a");
    w.append(&batch.encode(11)).unwrap();
    let mut batch = WriteBatch::new();
    batch.put("d", "4");
    w.append(&batch.encode(13)).unwrap();
    w.sync().unwrap();
    let log_len = std::fs::metadata(dir.join(log_file_name(4))).unwrap().len();
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
        wal_ends: ends(log_len),
        ..VersionEdit::default()
    };
    ManifestWriter::create(&StdFs, dir, 2, &edit).unwrap();
    set_current(&StdFs, dir, 2).unwrap();
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

/// Cuts log 4 of [`make_with`]'s database by one byte (into its second
/// batch, seq 13).
fn cut_log(dir: &Path) -> u64 {
    let log = dir.join(log_file_name(4));
    let len = std::fs::metadata(&log).unwrap().len();
    StdFs.truncate(&log, len - 1).unwrap();
    len
}

#[test]
fn a_cut_before_the_recorded_end_refuses_strictly_and_counts_its_loss() {
    let dir = tempfile::tempdir().unwrap();
    make_with(dir.path(), |len| vec![(4, WalEnd { len, last_seq: Some(13) })]);
    let len = cut_log(dir.path());
    let mut strict = scan(&StdFs, dir.path(), RecoveryMode::AbsoluteConsistency).unwrap();
    let cut = strict.cut.clone().expect("a cut");
    assert_eq!((cut.number, cut.recorded.len, cut.size), (4, len, Some(len - 1)));
    assert_eq!(strict.report().synced_writes_lost, Some(1), "seq 13 is lost");
    assert!(strict.logs[0].end.is_none(), "a cut is not a torn tail");
    let refusal = strict.refusal().expect("strict opening refuses");
    assert!(refusal.to_string().contains(&format!("synced through byte {len}, writes through seq 13")));

    let pit = scan(&StdFs, dir.path(), RecoveryMode::PointInTime).unwrap();
    assert_eq!(pit.stop, Some((dir.path().join(log_file_name(4)), cut.found)));
    assert_eq!(pit.last_seq(), 12);
    // The reopened database records what it kept, with the seq it reached.
    assert_eq!(pit.kept_wal_ends().into_iter().collect::<Vec<_>>(), [(4, WalEnd { len: cut.found, last_seq: Some(12) })]);
}

#[test]
fn an_end_recorded_without_its_seq_still_refuses_but_cannot_count() {
    // Format 4 recorded lengths only.
    let dir = tempfile::tempdir().unwrap();
    make_with(dir.path(), |len| vec![(4, WalEnd { len, last_seq: None })]);
    cut_log(dir.path());
    let mut strict = scan(&StdFs, dir.path(), RecoveryMode::AbsoluteConsistency).unwrap();
    assert_eq!(strict.report().synced_writes_lost, None);
    assert!(strict.refusal().is_some_and(|e| e.is_corruption()));
    // Recorded short of the log's end: the tail past it is a torn tail.
    let dir = tempfile::tempdir().unwrap();
    make_with(dir.path(), |_| vec![(4, WalEnd { len: HEADER_LEN as u64, last_seq: Some(11) })]);
    cut_log(dir.path());
    let mut strict = scan(&StdFs, dir.path(), RecoveryMode::AbsoluteConsistency).unwrap();
    assert!(strict.cut.is_none() && strict.refusal().is_none());
    assert!(matches!(strict.logs[0].end, Some(LogEnd::TornTail { .. })));
}
