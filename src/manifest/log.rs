//! Writing and replaying a manifest: a log of [`VersionEdit`]s in the WAL's
//! record frame ([`crate::frame::format`]) with record type
//! [`RecordType::Edit`].
//!
//! A new manifest starts with one snapshot edit ([`VersionSet::snapshot_edit`])
//! and then one edit per flush or compaction, each synced before the change
//! it records is used. Replay always uses
//! [`RecoveryMode::AbsoluteConsistency`]: a torn last edit was never
//! acknowledged and is dropped; damage before valid edits is `Corruption`,
//! since skipping an edit would resurrect deleted tables or lose new ones.

use std::path::Path;

use crate::fs::FileSystem;
use crate::frame::{FrameReader, FrameWriter, LogEnd, RecordType, RecoveryMode};
use crate::{Error, Result};

use super::edit::VersionEdit;
use super::filename::manifest_file_name;
use super::version::VersionSet;

/// Appends edits to a manifest file.
#[derive(Debug)]
pub struct ManifestWriter {
    log: FrameWriter,
    number: u64,
}

impl ManifestWriter {
    /// Creates `dir/MANIFEST-{number}` holding `first` (normally a snapshot
    /// edit), synced, with the directory entry synced too. The caller then
    /// points `CURRENT` at it ([`super::set_current`]).
    ///
    /// # Errors
    /// `Io` from the file system; `InvalidArgument` as for [`ManifestWriter::append`].
    pub fn create(fs: &dyn FileSystem, dir: &Path, number: u64, first: &VersionEdit) -> Result<Self> {
        let file = fs.create(&dir.join(manifest_file_name(number)))?;
        let mut writer = ManifestWriter { log: FrameWriter::new(file, RecordType::Edit), number };
        writer.append(first)?;
        fs.sync_dir(dir)?;
        Ok(writer)
    }

    /// A writer for manifest `number` that appends nothing: every append
    /// fails. For a database opened read-only, which must never write.
    #[must_use]
    pub(crate) fn refusing(number: u64) -> Self {
        let file = Box::new(crate::fs::RefuseWrites);
        ManifestWriter { log: FrameWriter::new(file, RecordType::Edit), number }
    }

    /// Reopens an existing manifest for appending after cutting it to
    /// `valid_len` (from [`Replayed::valid_len`]), so a torn tail is gone
    /// before the next edit lands.
    ///
    /// # Errors
    /// `Io` from the file system.
    pub fn reopen(fs: &dyn FileSystem, dir: &Path, number: u64, valid_len: u64) -> Result<Self> {
        let path = dir.join(manifest_file_name(number));
        fs.truncate(&path, valid_len)?;
        let file = fs.open_append(&path)?;
        Ok(ManifestWriter { log: FrameWriter::new(file, RecordType::Edit), number })
    }

    /// Appends `edit` and syncs it: when this returns `Ok`, the edit survives
    /// a crash.
    ///
    /// # Errors
    /// `InvalidArgument` (nothing written) if the edit would not decode back
    /// to itself; `Io` on a write failure, then `WritesDisabled` forever (see
    /// [`FrameWriter`]).
    pub fn append(&mut self, edit: &VersionEdit) -> Result<()> {
        let bytes = edit.encode();
        // A manifest that cannot be read back bricks the database, so an edit
        // that would not round-trip (a level out of range, an inverted range,
        // a filter kind the parser rejects such as `bloom:100`) is refused here.
        match VersionEdit::decode(&bytes) {
            Ok(back) if back == *edit => {}
            Ok(_) => return Err(Error::InvalidArgument("version edit would not read back unchanged".into())),
            Err(e) => return Err(Error::InvalidArgument(format!("version edit would not read back: {e}"))),
        }
        self.log.append(&bytes)?;
        self.log.sync()
    }

    /// The manifest's file number.
    #[must_use]
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The manifest's size, to decide when to start a new one.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.log.len()
    }

    /// Whether nothing has been written.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.log.is_empty()
    }
}

/// The result of replaying a manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Replayed {
    /// The state after every edit.
    pub state: VersionSet,
    /// Edits applied.
    pub edits: usize,
    /// Bytes of whole edits; truncate to this before appending.
    pub valid_len: u64,
    /// Whether a torn last edit was dropped.
    pub end: LogEnd,
}

/// Replays the bytes of a manifest file into the state it describes.
/// Corruption offsets are relative to the file; attach the path with
/// [`Error::at_file`]`(path, 0)`.
///
/// # Errors
/// `Corruption` for damage before the last edit, an edit that does not
/// decode or apply, an empty manifest, or a final state that fails
/// [`VersionSet::validate`].
pub fn replay(bytes: &[u8]) -> Result<Replayed> {
    let mut reader = FrameReader::new(bytes, RecordType::Edit, RecoveryMode::AbsoluteConsistency);
    let mut state = VersionSet::default();
    let mut edits = 0;
    for record in reader.by_ref() {
        let record = record?;
        let payload_at = record.offset + crate::frame::HEADER_LEN as u64;
        let edit = VersionEdit::decode(record.payload).map_err(|e| rebase(e, payload_at))?;
        state.apply(&edit).map_err(|e| rebase(e, record.offset))?;
        edits += 1;
    }
    let valid_len = reader.valid_len();
    let end = reader.end().cloned().unwrap_or(LogEnd::Clean);
    if edits == 0 {
        return Err(Error::corruption(0, "manifest holds no complete edit"));
    }
    state.validate().map_err(|e| rebase(e, valid_len))?;
    Ok(Replayed { state, edits, valid_len, end })
}

fn rebase(e: Error, base: u64) -> Error {
    match e {
        Error::Corruption { file: None, offset, what } => {
            Error::corruption(base.saturating_add(offset), what)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::StdFs;
    use crate::manifest::edit::tests::table;

    fn edits() -> Vec<VersionEdit> {
        vec![
            VersionEdit {
                next_file_number: Some(2),
                last_seq: Some(0),
                log_number: Some(1),
                hash_salt: Some(0x5eed),
                ..VersionEdit::default()
            },
            VersionEdit {
                added: vec![(0, table(3, b"a", b"m"))],
                next_file_number: Some(5),
                last_seq: Some(40),
                log_number: Some(4),
                ..VersionEdit::default()
            },
            VersionEdit {
                removed: vec![(0, 3)],
                added: vec![(1, table(6, b"a", b"f")), (1, table(7, b"g", b"m"))],
                next_file_number: Some(8),
                ..VersionEdit::default()
            },
        ]
    }

    fn write(dir: &Path, edits: &[VersionEdit]) -> Vec<u8> {
        let mut w = ManifestWriter::create(&StdFs, dir, 1, &edits[0]).unwrap();
        for e in &edits[1..] {
            w.append(e).unwrap();
        }
        StdFs.read(&dir.join("MANIFEST-000001")).unwrap()
    }

    #[test]
    fn replay_rebuilds_the_final_state() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = write(dir.path(), &edits());
        let r = replay(&bytes).unwrap();
        assert_eq!((r.edits, r.valid_len, r.end), (3, bytes.len() as u64, LogEnd::Clean));
        let s = &r.state;
        assert_eq!((s.next_file_number, s.last_seq, s.log_number, s.hash_salt), (8, 40, 4, Some(0x5eed)));
        assert!(s.version.level(0).is_empty());
        let l1: Vec<u64> = s.version.level(1).iter().map(|t| t.file_number).collect();
        assert_eq!(l1, [6, 7]);

        // A fresh manifest from the snapshot replays to the same state.
        let dir2 = tempfile::tempdir().unwrap();
        let again = replay(&write(dir2.path(), &[s.snapshot_edit()])).unwrap();
        let declared = VersionSet { format_version: Some(crate::manifest::DB_FORMAT_VERSION), ..r.state };
        assert_eq!(again.state, declared);
    }

    #[test]
    fn torn_tail_is_dropped_and_reopen_truncates_it() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = write(dir.path(), &edits());
        let two = replay(&bytes).unwrap().valid_len;
        let path = dir.path().join("MANIFEST-000001");
        let mut torn = bytes.clone();
        torn.truncate(bytes.len() - 3);
        std::fs::write(&path, &torn).unwrap();
        let r = replay(&torn).unwrap();
        assert_eq!(r.edits, 2);
        assert!(matches!(r.end, LogEnd::TornTail { .. }));
        assert!(r.valid_len < two);

        let mut w = ManifestWriter::reopen(&StdFs, dir.path(), 1, r.valid_len).unwrap();
        assert_eq!(w.len(), r.valid_len);
        w.append(&edits()[2]).unwrap();
        assert_eq!(replay(&StdFs.read(&path).unwrap()).unwrap().state, replay(&bytes).unwrap().state);
    }

    #[test]
    fn damage_before_the_last_edit_is_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = write(dir.path(), &edits());
        let last_start = usize::try_from(
            FrameReader::new(&bytes, RecordType::Edit, RecoveryMode::default())
                .map(|r| r.unwrap().offset)
                .last()
                .unwrap(),
        )
        .unwrap();
        for i in 0..last_start {
            let mut bad = bytes.clone();
            bad[i] ^= 0x20;
            assert!(replay(&bad).unwrap_err().is_corruption(), "flip at {i}");
        }
        for cut in 0..bytes.len() {
            match replay(&bytes[..cut]) {
                Ok(r) => assert!(r.edits < 3 && r.valid_len <= cut as u64),
                Err(e) => assert!(e.is_corruption(), "cut at {cut}: {e}"),
            }
        }
    }

    #[test]
    fn edits_that_would_not_read_back_are_refused_before_writing() {
        use crate::filter::FilterKind;
        let dir = tempfile::tempdir().unwrap();
        let mut w = ManifestWriter::create(&StdFs, dir.path(), 1, &edits()[0]).unwrap();
        let len = w.len();
        let mut odd_filter = table(3, b"a", b"b");
        odd_filter.filter = FilterKind::Bloom { bits_per_key: 100.0 };
        let mut nan_filter = table(3, b"a", b"b");
        nan_filter.filter = FilterKind::BlockedBloom { bits_per_key: f64::NAN };
        for bad in [
            VersionEdit { added: vec![(7, table(3, b"a", b"b"))], ..VersionEdit::default() },
            VersionEdit { added: vec![(0, table(3, b"b", b"a"))], ..VersionEdit::default() },
            VersionEdit { added: vec![(0, odd_filter)], ..VersionEdit::default() },
            VersionEdit { added: vec![(0, nan_filter)], ..VersionEdit::default() },
            VersionEdit { last_seq: Some(u64::MAX), ..VersionEdit::default() },
        ] {
            assert!(matches!(w.append(&bad), Err(Error::InvalidArgument(_))), "{bad:?}");
        }
        assert_eq!(w.len(), len);
        w.append(&edits()[1]).unwrap();
    }

    #[test]
    fn a_wal_is_not_a_manifest() {
        let wal = crate::frame::encode_record(RecordType::Batch, &edits()[0].encode()).unwrap();
        assert!(replay(&wal).unwrap_err().is_corruption());
        assert!(replay(&[]).unwrap_err().is_corruption());
    }
}
