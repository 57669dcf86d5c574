//! Tests of the range-tombstone block, and of tables carrying one: build,
//! open, bounds, versions and damage.

use std::path::{Path, PathBuf};

use super::*;
use crate::Error;
use crate::filter::FilterKind;
use crate::fs::StdFs;
use crate::key::ValueKind;
use crate::table::format::{
    BLOCK_TRAILER_LEN, BlockType, FOOTER_LEN, FORMAT_VERSION_ALIGNED, FORMAT_VERSION_COMPRESSED, FORMAT_VERSION_PLAIN, FORMAT_VERSION_RANGE_DEL, Footer,
};
use crate::table::{Table, TableBuilder, TableOptions, TableRecord, verify_table};

fn t(start: &str, end: &str, seq: u64) -> RangeTombstone {
    RangeTombstone::new(start.as_bytes().to_vec(), end.as_bytes().to_vec(), seq)
}

fn sample() -> RangeDels {
    RangeDels::new([t("b", "f", 7), t("d", "h", 9), t("", "a", 3)])
}

#[test]
fn the_block_round_trips_sorted() {
    let dels = sample();
    let enc = Bytes::from(encode(&dels));
    let back = decode(&enc).unwrap();
    assert_eq!(back, dels);
    assert_eq!(back.tombstones()[0], t("", "a", 3));
    assert_eq!(decode(&Bytes::from(encode(&RangeDels::default()))).unwrap(), RangeDels::default());
}

fn corruption_at(block: &[u8]) -> (u64, String) {
    match decode(&Bytes::copy_from_slice(block)) {
        Err(Error::Corruption { offset, what, .. }) => (offset, what),
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_truncation_is_corruption_and_flips_never_panic() {
    let enc = encode(&sample());
    for len in 0..enc.len() {
        assert!(decode(&Bytes::copy_from_slice(&enc[..len])).unwrap_err().is_corruption(), "len {len}");
    }
    for i in 0..enc.len() {
        for bit in 0..8 {
            let mut bad = enc.clone();
            bad[i] ^= 1 << bit;
            if let Err(e) = decode(&Bytes::from(bad)) {
                assert!(e.is_corruption());
            }
        }
    }
    // Trailing bytes are damage too.
    let mut long = enc.clone();
    long.push(0);
    assert_eq!(corruption_at(&long).0, enc.len() as u64);
}

#[test]
fn a_length_past_the_block_is_corruption() {
    // One tombstone whose start claims 100 bytes.
    let mut b = vec![1, 100];
    b.extend_from_slice(&[b'a'; 20]);
    let (offset, what) = corruption_at(&b);
    assert_eq!(offset, 2, "{what}");
}

#[test]
fn a_count_too_big_for_the_bytes_is_refused_before_allocating() {
    let mut b = Vec::new();
    put_varint(&mut b, u64::MAX);
    assert!(corruption_at(&b).1.contains("cannot fit"));
    let mut one = encode(&RangeDels::new([t("a", "b", 1)]));
    one[0] = 2;
    assert_eq!(corruption_at(&one).0, 0);
}

#[test]
fn an_empty_range_or_a_huge_seq_is_corruption() {
    let raw = |start: &[u8], end: &[u8], seq: u64| {
        let mut b = vec![1];
        put_length_prefixed(&mut b, start);
        put_length_prefixed(&mut b, end);
        b.extend_from_slice(&seq.to_le_bytes());
        b
    };
    for (start, end) in [(&b"b"[..], &b"a"[..]), (b"a", b"a")] {
        let (offset, what) = corruption_at(&raw(start, end, 1));
        assert_eq!(offset, 1);
        assert!(what.contains("empty"), "{what}");
    }
    let (offset, what) = corruption_at(&raw(b"a", b"b", MAX_SEQ + 1));
    assert_eq!(offset, 5, "{what}");
    assert!(decode(&Bytes::from(raw(b"a", b"b", MAX_SEQ))).is_ok());
}

/// No filter: a table with an aligned filter block is format 4 whatever
/// else it holds, and these tables are about formats 1 and 2.
fn opts() -> TableOptions {
    TableOptions { block_bytes: 64, filter: FilterKind::None, ..TableOptions::default() }
}

/// A table with `points` (key, seq) and `dels`, tombstones interleaved with
/// the points and added out of order.
fn build(dir: &Path, points: &[(&str, u64)], dels: &[RangeTombstone]) -> (PathBuf, TableRecord) {
    let path = dir.join("000001.sst");
    let _ = std::fs::remove_file(&path);
    let mut b = TableBuilder::create(&path, opts()).unwrap();
    let mut rest = dels.iter().rev();
    for &(k, seq) in points {
        b.add(k.as_bytes(), seq, ValueKind::Value, b"v").unwrap();
        if let Some(d) = rest.next() {
            b.add_range_tombstone(d).unwrap();
        }
    }
    for d in rest {
        b.add_range_tombstone(d).unwrap();
    }
    (path.clone(), b.finish().unwrap())
}

#[test]
fn points_and_tombstones_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let dels = [t("c", "d", 20), t("a", "q", 30), t("c", "d", 20), t("m", "n", 5)];
    let points = [("c", 10), ("c2", 11), ("d", 12)];
    let (path, rec) = build(dir.path(), &points, &dels);
    let table = Table::open_path(&path).unwrap();
    assert_eq!(table.footer().version, FORMAT_VERSION_RANGE_DEL);
    let got = table.range_dels().unwrap();
    assert_eq!(got, &RangeDels::new(dels.clone()));
    assert_eq!(got.len(), 3, "duplicates are written once");
    assert_eq!(table.properties().range_tombstones, 3);
    let keys: Vec<_> = table.iter().map(|e| e.unwrap().user_key).collect();
    assert_eq!(keys, ["c", "c2", "d"].map(|k| Bytes::from(k.as_bytes())));
    assert!(table.get(b"c2", 100).unwrap().entry.is_some());
    assert!(got.deletes(b"c2", 11, 100));
    // The bounds take in the tombstones: [a, q) around points in [c, d].
    assert_eq!((&rec.smallest[..], &rec.largest[..]), (&b"a"[..], &b"q"[..]));
    assert_eq!((rec.min_seq, rec.max_seq, rec.entries), (5, 30, 3));
    let p = table.properties();
    assert_eq!((p.smallest_key.as_deref(), p.largest_key.as_deref()), (Some(&b"a"[..]), Some(&b"q"[..])));
    assert_eq!((p.min_seq, p.max_seq, p.entries), (5, 30, 3));
    let r = verify_table(&StdFs, &path).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    assert!(r.properties_compared);
    assert_eq!(r.range_tombstones_checked, 3);
}

#[test]
fn a_tombstone_ending_in_a_zero_byte_bounds_the_table_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let (_, rec) = build(dir.path(), &[("a", 1)], &[RangeTombstone::new(&b"b"[..], &b"e\0"[..], 2)]);
    assert_eq!((&rec.smallest[..], &rec.largest[..]), (&b"a"[..], &b"e"[..]));
    // Points outside the tombstones keep their own bounds.
    let (_, rec) = build(dir.path(), &[("a", 1), ("z", 9)], &[t("b", "c", 2)]);
    assert_eq!((&rec.smallest[..], &rec.largest[..], rec.min_seq, rec.max_seq), (&b"a"[..], &b"z"[..], 1, 9));
}

#[test]
fn a_table_of_tombstones_only_builds_and_reads() {
    let dir = tempfile::tempdir().unwrap();
    let (path, rec) = build(dir.path(), &[], &[t("k", "p", 4), t("b", "d", 6)]);
    assert_eq!((&rec.smallest[..], &rec.largest[..], rec.min_seq, rec.max_seq), (&b"b"[..], &b"p"[..], 4, 6));
    assert_eq!(rec.entries, 0);
    let table = Table::open_path(&path).unwrap();
    assert_eq!(table.iter().count(), 0);
    assert!(table.get(b"c", 100).unwrap().entry.is_none());
    assert_eq!(table.range_dels().unwrap().covering(b"c", 100), Some(6));
    let r = verify_table(&StdFs, &path).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
}

#[test]
fn a_table_without_tombstones_is_version_1_and_has_no_block() {
    let dir = tempfile::tempdir().unwrap();
    for points in [&[][..], &[("a", 1), ("b", 2)][..]] {
        let (path, _) = build(dir.path(), points, &[]);
        let table = Table::open_path(&path).unwrap();
        assert_eq!(table.footer().version, FORMAT_VERSION_PLAIN);
        assert!(table.range_dels().is_none());
        assert_eq!((table.properties().range_del_block, table.properties().range_tombstones), (None, 0));
        // The same layout as before: the footer's blocks, then the footer,
        // and no tag 20 or 21 in the properties (whose encoding, re-made
        // from what was read, is the stored block).
        let file = std::fs::read(&path).unwrap();
        let f = table.footer();
        assert_eq!(f.properties.offset + f.properties.size_with_trailer(), (file.len() - FOOTER_LEN) as u64);
        let at = usize::try_from(f.properties.offset).unwrap();
        assert_eq!(&file[at..at + f.properties.size as usize], &table.properties().encode()[..]);
    }
    // Adding a tombstone that is refused leaves the table at version 1.
    let path = dir.path().join("000002.sst");
    let mut b = TableBuilder::create(&path, opts()).unwrap();
    let bad = RangeTombstone::new(&b"b"[..], &b"a"[..], 1);
    assert!(matches!(b.add_range_tombstone(&bad), Err(Error::InvalidArgument(_))));
    assert!(matches!(b.add_range_tombstone(&t("a", "b", MAX_SEQ + 1)), Err(Error::InvalidArgument(_))));
    b.add(b"a", 1, ValueKind::Value, b"v").unwrap();
    b.finish().unwrap();
    assert_eq!(Table::open_path(&path).unwrap().footer().version, FORMAT_VERSION_PLAIN);
}

/// A table written before range deletes existed (the fixture of
/// `tests/db_policy_upgrade.rs`, from build 2957098) still opens and checks.
#[test]
fn a_table_from_before_range_deletes_still_reads() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pre_policy_db/000006.sst");
    let table = Table::open_path(&path).unwrap();
    assert_eq!(table.footer().version, 1);
    assert!(table.range_dels().is_none());
    assert!(table.iter().count() > 0);
    assert!(verify_table(&StdFs, &path).unwrap().is_clean());
}

/// Rewrites the footer of `path` with `version`, crc recomputed.
fn set_version(path: &Path, version: u32) {
    let mut b = std::fs::read(path).unwrap();
    let f = b.len() - FOOTER_LEN;
    let mut footer = Footer::decode(&b).unwrap();
    footer.version = version;
    b[f..].copy_from_slice(&footer.encode());
    std::fs::write(path, b).unwrap();
}

fn open_err(path: &Path) -> (Option<PathBuf>, u64, String) {
    match Table::open_path(path) {
        Err(Error::Corruption { file, offset, what }) => (file, offset, what),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_version_that_disagrees_with_the_block_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = build(dir.path(), &[("a", 1)], &[]);
    set_version(&path, FORMAT_VERSION_RANGE_DEL);
    let (file, offset, what) = open_err(&path);
    let len = std::fs::metadata(&path).unwrap().len();
    assert_eq!((file.as_deref(), offset), (Some(&*path), len - FOOTER_LEN as u64 + 36), "{what}");
    assert!(!verify_table(&StdFs, &path).unwrap().is_clean());

    let (path, _) = build(dir.path(), &[("a", 1)], &[t("a", "b", 2)]);
    set_version(&path, FORMAT_VERSION_PLAIN);
    let (_, _, what) = open_err(&path);
    assert!(what.contains("cannot hold"), "{what}");
    assert!(!verify_table(&StdFs, &path).unwrap().is_clean());

    // Versions 3 (compression) and 4 (aligned filter) may hold range
    // tombstones or not: a table whose blocks all stayed raw reads the same.
    for (dels, version) in [vec![], vec![t("a", "b", 2)]].into_iter().flat_map(|d| {
        [(d.clone(), FORMAT_VERSION_COMPRESSED), (d, FORMAT_VERSION_ALIGNED)]
    }) {
        let (path, _) = build(dir.path(), &[("a", 1)], &dels);
        set_version(&path, version);
        assert!(Table::open_path(&path).is_ok());
    }
}

#[test]
fn a_damaged_block_is_corruption_naming_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = build(dir.path(), &[("a", 1)], &[t("a", "b", 2), t("c", "d", 3)]);
    let clean = std::fs::read(&path).unwrap();
    let h = Table::open_path(&path).unwrap().properties().range_del_block.unwrap();
    let start = usize::try_from(h.offset).unwrap();
    for i in start..start + h.size as usize + BLOCK_TRAILER_LEN {
        let mut bad = clean.clone();
        bad[i] ^= 0x20;
        std::fs::write(&path, &bad).unwrap();
        let (file, offset, what) = open_err(&path);
        assert_eq!(file.as_deref(), Some(&*path));
        assert!(offset >= h.offset && offset <= h.offset + u64::from(h.size), "flip at {i}: {offset} {what}");
        let r = verify_table(&StdFs, &path).unwrap();
        assert!(!r.is_clean() && !r.properties_compared, "flip at {i}");
    }
}

/// Damage under a valid crc: what only the decoder's own checks catch.
#[test]
fn a_malformed_block_with_a_good_crc_is_corruption_at_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = build(dir.path(), &[("a", 1)], &[t("a", "b", 2)]);
    let clean = std::fs::read(&path).unwrap();
    let h = Table::open_path(&path).unwrap().properties().range_del_block.unwrap();
    let start = usize::try_from(h.offset).unwrap();
    let end = start + h.size as usize;
    let reseal = |contents: &mut Vec<u8>| {
        let mut crc = crc32fast::Hasher::new();
        crc.update(&contents[start..end]);
        crc.update(&[BlockType::RangeDel as u8]);
        contents[end + 1..end + 5].copy_from_slice(&crc.finalize().to_le_bytes());
    };
    // count 1 -> 9: more than the bytes can hold.
    let mut bad = clean.clone();
    bad[start] = 9;
    reseal(&mut bad);
    std::fs::write(&path, &bad).unwrap();
    assert_eq!(open_err(&path).1, h.offset);
    // end "b" -> "a": start >= end.
    let mut bad = clean.clone();
    bad[start + 4] = b'a';
    reseal(&mut bad);
    std::fs::write(&path, &bad).unwrap();
    let (_, offset, what) = open_err(&path);
    assert_eq!(offset, h.offset + 1, "{what}");
    assert!(what.contains("empty"), "{what}");
}
