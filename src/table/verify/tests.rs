//! Tests of `verify`.

use super::*;
use crate::key::ValueKind;
use crate::prefix::PrefixExtractor;
use crate::filter::FilterKind;
use crate::fs::StdFs;
use crate::table::{TableBuilder, TableOptions};

fn build(dir: &Path, filter: FilterKind) -> std::path::PathBuf {
    build_with(dir, TableOptions { block_bytes: 256, filter, ..TableOptions::default() })
}

fn build_with(dir: &Path, opts: TableOptions) -> std::path::PathBuf {
    let path = dir.join("000001.sst");
    let mut b = TableBuilder::create(&path, opts).unwrap();
    for i in 0..200u32 {
        let key = format!("key{i:05}");
        b.add(key.as_bytes(), u64::from(i) + 10, ValueKind::Value, b"value").unwrap();
        if i % 7 == 0 {
            b.add(key.as_bytes(), u64::from(i) + 1, ValueKind::Tombstone, b"").unwrap();
        }
    }
    b.finish().unwrap();
    path
}

#[test]
fn a_fresh_table_is_clean() {
    let dir = tempfile::tempdir().unwrap();
    for kind in [FilterKind::None, FilterKind::BinaryFuse8, FilterKind::Bloom { bits_per_key: 10.0 }] {
        let path = build(dir.path(), kind);
        let r = verify_table(&StdFs, &path).unwrap();
        assert!(r.is_clean(), "{kind}: {:?}", r.problems);
        assert_eq!(r.entries_checked, 229);
        assert_eq!(r.keys_probed, if kind == FilterKind::None { 0 } else { 200 });
        std::fs::remove_file(&path).unwrap();
    }
}

/// A table whose filter holds prefixes too: its header counts keys and
/// prefixes, and every prefix is probed (before, verification called
/// every such table's key count wrong).
#[test]
fn a_table_with_prefixes_is_clean_and_its_prefixes_are_probed() {
    let dir = tempfile::tempdir().unwrap();
    for (extractor, prefixes) in [(PrefixExtractor::fixed(7), 20), (PrefixExtractor::up_to(b'9'), 20)] {
        let opts = TableOptions {
            block_bytes: 256,
            filter: FilterKind::BinaryFuse8,
            prefix_extractor: Some(extractor),
            ..TableOptions::default()
        };
        let path = build_with(dir.path(), opts);
        let r = verify_table(&StdFs, &path).unwrap();
        assert!(r.is_clean(), "{extractor}: {:?}", r.problems);
        assert!(r.properties_compared);
        assert_eq!((r.keys_probed, r.prefixes_probed), (200, prefixes), "{extractor}");
        std::fs::remove_file(&path).unwrap();
    }
}

#[test]
fn every_flipped_byte_is_found_and_data_damage_names_its_block() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), FilterKind::Xor8);
    let good = std::fs::read(&path).unwrap();
    let footer = Footer::decode(&good).unwrap();
    let index =
        Index::new(read_block(&Bytes::from(good.clone()), footer.index, BlockType::Index).unwrap())
            .unwrap();
    let blocks: Vec<BlockHandle> = (0..index.len()).map(|i| index.entry(i).unwrap().1).collect();
    let bad_path = dir.path().join("bad.sst");
    for i in (0..good.len()).step_by(3) {
        let mut bad = good.clone();
        bad[i] ^= 0x41;
        std::fs::write(&bad_path, &bad).unwrap();
        match verify_table(&StdFs, &bad_path) {
            Err(e) => assert!(e.is_corruption(), "flip at {i}: {e}"),
            Ok(r) => {
                assert!(!r.is_clean(), "flip at {i} went unnoticed");
                if let Some(h) = blocks
                    .iter()
                    .find(|h| (h.offset..h.offset + h.size_with_trailer()).contains(&(i as u64)))
                {
                    assert!(
                        r.problems.iter().any(|p| p.offset == h.offset),
                        "flip at {i}: {:?}",
                        r.problems
                    );
                }
            }
        }
    }
}

fn data_handles(bytes: &[u8]) -> (Footer, Vec<BlockHandle>) {
    let footer = Footer::decode(bytes).unwrap();
    let index =
        Index::new(read_block(&Bytes::copy_from_slice(bytes), footer.index, BlockType::Index).unwrap())
            .unwrap();
    (footer, (0..index.len()).map(|i| index.entry(i).unwrap().1).collect())
}

#[test]
fn one_damaged_data_block_is_one_problem_and_skips_the_property_comparison() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), FilterKind::BinaryFuse8);
    let clean = verify_table(&StdFs, &path).unwrap();
    assert!(clean.properties_compared && clean.unreadable_data_blocks == 0);
    let mut bytes = std::fs::read(&path).unwrap();
    let (_, blocks) = data_handles(&bytes);
    let h = blocks[2];
    bytes[usize::try_from(h.offset).unwrap() + 3] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    let r = verify_table(&StdFs, &path).unwrap();
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert_eq!(r.problems[0].offset, h.offset);
    assert_eq!(r.unreadable_data_blocks, 1);
    assert!(!r.properties_compared);
}

#[test]
fn an_unreadable_index_is_reported_at_its_own_offset() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), FilterKind::BinaryFuse8);
    let mut bytes = std::fs::read(&path).unwrap();
    let (footer, _) = data_handles(&bytes);
    bytes[usize::try_from(footer.index.offset).unwrap() + 2] ^= 0x04;
    std::fs::write(&path, &bytes).unwrap();
    let r = verify_table(&StdFs, &path).unwrap();
    assert!(!r.problems.is_empty());
    assert!(r.problems.iter().all(|p| p.offset == footer.index.offset), "{:?}", r.problems);
    assert!(r.problems.iter().any(|p| p.what.contains("index block is unreadable")));
}

#[test]
fn truncated_and_foreign_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), FilterKind::BinaryFuse8);
    let good = std::fs::read(&path).unwrap();
    let bad_path = dir.path().join("bad.sst");
    for len in [0, 10, good.len() / 2, good.len() - 1] {
        std::fs::write(&bad_path, &good[..len]).unwrap();
        assert!(verify_table(&StdFs, &bad_path).unwrap_err().is_corruption(), "len {len}");
    }
    assert!(matches!(verify_table(&StdFs, &dir.path().join("missing.sst")), Err(Error::Io(_))));
}
