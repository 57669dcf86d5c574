//! Tests of the range-filter block, and of tables carrying one: build,
//! validation, versions, damage, and what a reader answers.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::fs::StdFs;
use crate::key::ValueKind;
use crate::key_image::KeyImage;
use crate::table::format::{FORMAT_VERSION, FORMAT_VERSION_ALIGNED};
use crate::table::stats::FilterAnswer;
use crate::table::{Table, TableBuilder, TableOptions, verify_table};

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn images(n: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..n).map(mix).collect();
    v.sort_unstable();
    v
}

fn policy(kind: FilterKind) -> RangeFilterPolicy {
    RangeFilterPolicy { kind, ..RangeFilterPolicy::default() }
}

#[test]
fn built_blocks_hold_every_image_for_every_kind_and_any_offset() {
    let xs = images(2000);
    let kinds = [
        FilterKind::Ribbon { bits_per_key: 10.0 },
        FilterKind::BlockedBloom { bits_per_key: 10.0 },
        FilterKind::Bloom { bits_per_key: 8.0 },
        FilterKind::Xor8,
        FilterKind::BinaryFuse16,
    ];
    for kind in kinds {
        for at in [0u64, 1, 63, 4096 + 17] {
            let built = build(&policy(kind), 5, &xs, (at, false));
            assert_eq!((built.kind, &built.fallback_reason), (kind, &None), "{kind}");
            // Buckets are 1/1024 of the mean gap: a few neighbours share one.
            assert!((1990..=2000).contains(&built.buckets), "{kind}: {}", built.buckets);
            let f = TableRangeFilter::decode(&built.block).unwrap();
            assert_eq!((f.image(), f.version(), f.block_bytes()), ("be8", 1, built.block.len()));
            assert_eq!(f.layout(), RangeLayout::for_images(&xs).unwrap());
            assert!(xs.iter().all(|&x| f.may_intersect(x, x)), "{kind} at {at}");
            assert!(xs[0] == 0 || !f.may_intersect(0, xs[0] - 1));
            assert!(!f.may_intersect(xs[1999] + 1, u64::MAX));
        }
    }
    assert_eq!(build(&policy(FilterKind::Xor8), 5, &[], (0, false)), BuiltRangeFilter {
        block: Vec::new(),
        kind: FilterKind::None,
        buckets: 0,
        fallback_reason: None,
    });
}

/// The padding puts the point filter's array on a 64-byte file offset, so
/// a mapped block views it in place.
/// A static kind that fails to build falls back to blocked Bloom at its
/// bits per key, as the point filter does, and the table says why.
#[test]
fn a_failed_build_falls_back_and_says_so() {
    let xs = images(1000);
    let built = build(&policy(FilterKind::Ribbon { bits_per_key: 10.0 }), 5, &xs, (0, true));
    assert_eq!(built.kind, FilterKind::BlockedBloom { bits_per_key: 10.0 });
    assert_eq!(built.fallback_reason.as_deref(), Some("ribbon:10: injected build failure"));
    let f = TableRangeFilter::decode(&built.block).unwrap();
    assert!(xs.iter().all(|&x| f.may_intersect(x, x)));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.sst");
    let opts = TableOptions {
        range_filter: Some(RangeFilterPolicy::default()),
        inject_filter_build_failure: true,
        ..TableOptions::default()
    };
    let mut b = TableBuilder::new(Arc::new(StdFs), &path, opts).unwrap();
    b.add(b"k", 1, ValueKind::Value, b"v").unwrap();
    b.finish().unwrap();
    let p = Table::open(&StdFs, &path).unwrap().properties().clone();
    assert_eq!(p.range_filter_kind, "blocked-bloom:10");
    assert_eq!(p.range_filter_fallback_reason.as_deref(), Some("ribbon:10: injected build failure"));
}

#[test]
fn the_array_lands_aligned_and_is_read_in_place() {
    let xs = images(3000);
    for at in [0u64, 5, 64, 1000] {
        let built = build(&policy(FilterKind::BlockedBloom { bits_per_key: 10.0 }), 5, &xs, (at, false));
        let mut buf = bytes::BytesMut::zeroed(built.block.len() + 128);
        let o = (64 - (buf.as_ptr() as usize) % 64) % 64 + (at % 64) as usize;
        buf[o..o + built.block.len()].copy_from_slice(&built.block);
        let whole = buf.freeze();
        let mapped = whole.slice(o..o + built.block.len());
        let f = TableRangeFilter::decode_mapped(&mapped).unwrap();
        assert!(f.points().unwrap().in_place_within(&whole).is_some(), "block at {at}");
        assert!(xs.iter().all(|&x| f.may_intersect(x, x)));
    }
}

#[test]
fn truncations_and_bad_headers_are_corruption_and_flips_never_panic() {
    let xs = images(300);
    let block = build(&policy(FilterKind::Ribbon { bits_per_key: 10.0 }), 5, &xs, (0, false)).block;
    for len in 0..block.len() {
        assert!(TableRangeFilter::decode(&block[..len]).unwrap_err().is_corruption(), "len {len}");
    }
    let bad = |i: usize, v: u8| {
        let mut b = block.clone();
        b[i] = v;
        TableRangeFilter::decode(&b).unwrap_err()
    };
    assert!(bad(1, 64).to_string().contains("shift 64"));
    assert!(bad(18, 0).to_string().contains("image name"));
    assert!(bad(19, 0xff).to_string().contains("image name"));
    let pad_at = 19 + 3;
    assert!(bad(pad_at, 64).is_corruption());
    let mut swapped = block.clone();
    swapped[2..10].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(TableRangeFilter::decode(&swapped).unwrap_err().to_string().contains("above max"));
    for i in 0..block.len().min(200) {
        for bit in 0..8 {
            let mut b = block.clone();
            b[i] ^= 1 << bit;
            if let Ok(f) = TableRangeFilter::decode(&b) {
                let _ = f.may_intersect(0, u64::MAX);
            }
        }
    }
}

#[test]
fn a_newer_version_or_an_unknown_kind_answers_maybe() {
    let xs = images(300);
    let mut block = build(&policy(FilterKind::Ribbon { bits_per_key: 10.0 }), 5, &xs, (0, false)).block;
    block[0] = RANGE_FILTER_VERSION + 1;
    block.truncate(7);
    let f = TableRangeFilter::decode(&block).unwrap();
    assert!(f.points().is_none() && f.may_intersect(0, 0) && f.may_intersect(5, 5));
    let mut unknown_kind = build(&policy(FilterKind::Ribbon { bits_per_key: 10.0 }), 5, &xs, (0, false)).block;
    let inner = unknown_kind.len() - TableRangeFilter::decode(&unknown_kind).unwrap().points().unwrap().block_bytes();
    unknown_kind[inner] = 200;
    let f = TableRangeFilter::decode(&unknown_kind).unwrap();
    assert!(f.points().unwrap().kind().is_none());
    assert!(f.may_intersect(xs[0] + 1, xs[0] + 2) && f.may_intersect(xs[5] + 1, xs[5] + 1));
}

fn key(i: u64) -> [u8; 8] {
    (i << 20).to_be_bytes()
}

/// A table of keys `i · 2^20` for `i` in `0..n`, with a range filter.
fn table(dir: &Path, name: &str, n: u64, range: Option<RangeFilterPolicy>) -> PathBuf {
    let path = dir.join(name);
    let opts = TableOptions { range_filter: range, seed: 3, ..TableOptions::default() };
    let mut b = TableBuilder::new(Arc::new(StdFs), &path, opts).unwrap();
    for i in 0..n {
        let kind = if i % 7 == 3 { ValueKind::Tombstone } else { ValueKind::Value };
        b.add(&key(i), i + 1, kind, b"v").unwrap();
    }
    b.finish().unwrap();
    path
}

#[test]
fn a_table_with_a_range_filter_is_version_5_and_skips_empty_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let path = table(dir.path(), "r.sst", 5000, Some(RangeFilterPolicy::default()));
    let t = Table::open(&StdFs, &path).unwrap();
    assert_eq!(t.footer().version, FORMAT_VERSION);
    assert!(verify_table(&StdFs, &path).unwrap().is_clean());
    let p = t.properties();
    assert_eq!((p.range_filter_buckets, p.range_filter_kind.as_str()), (5000, "ribbon:10"));
    let img = KeyImage::first_bytes();
    // Every key (tombstones too: a scan must see them) answers "maybe".
    for i in 0..5000 {
        let x = i << 20;
        assert_eq!(t.range_answer(&img, x, x), FilterAnswer::MayContain, "{i}");
        assert_eq!(t.range_answer(&img, x.saturating_sub(500), x + 10), FilterAnswer::MayContain);
    }
    // Empty ranges of 256 in the middle of the gaps: nearly all skipped.
    let skipped =
        (0..4999u64).filter(|i| t.range_answer(&img, (i << 20) + 5000, (i << 20) + 5255) == FilterAnswer::Absent);
    assert!(skipped.count() > 4950);
    // Another image's name, or none: never skipped.
    assert_eq!(t.range_answer(&KeyImage::custom("other", |_| 0), 100, 200), FilterAnswer::NoFilter);
    assert!(t.filter_heap_bytes() < 512, "both arrays read in place: {}", t.filter_heap_bytes());
    // Without: the format version of before, and no answer.
    let plain = Table::open(&StdFs, table(dir.path(), "p.sst", 5000, None)).unwrap();
    assert_eq!(plain.footer().version, FORMAT_VERSION_ALIGNED);
    assert_eq!(plain.range_answer(&img, 100, 200), FilterAnswer::NoFilter);
    assert_eq!(plain.properties().range_filter_block, None);
}

/// A damaged range-filter block is dropped at open: the table opens,
/// answers `NoFilter` (is read) and says why.
#[test]
fn a_damaged_range_filter_is_dropped_and_the_table_still_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = table(dir.path(), "r.sst", 3000, Some(RangeFilterPolicy::default()));
    let h = Table::open(&StdFs, &path).unwrap().properties().range_filter_block.unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[usize::try_from(h.offset).unwrap() + 40] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    let t = Table::open(&StdFs, &path).unwrap();
    assert!(t.range_filter().is_none());
    let why = t.range_filter_dropped().unwrap();
    assert!(why.contains("checksum") && why.contains("r.sst"), "{why}");
    assert_eq!(t.range_answer(&KeyImage::first_bytes(), 100, 200), FilterAnswer::NoFilter);
    assert!(t.get(&key(7), 100).unwrap().entry.is_some());
    assert!(!verify_table(&StdFs, &path).unwrap().is_clean());
}

/// A version-5 footer without the block, or an older one with it, is
/// `Corruption` naming the file.
#[test]
fn the_version_and_the_properties_must_agree() {
    let dir = tempfile::tempdir().unwrap();
    for (range, version) in [(Some(RangeFilterPolicy::default()), FORMAT_VERSION_ALIGNED), (None, FORMAT_VERSION)] {
        let path = table(dir.path(), "v.sst", 100, range);
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.len() - FOOTER_LEN;
        bytes[at + 36..at + 40].copy_from_slice(&version.to_le_bytes());
        let crc = crc32fast::hash(&bytes[at..at + 44]);
        bytes[at + 44..at + 48].copy_from_slice(&crc.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let e = Table::open(&StdFs, &path).unwrap_err();
        assert!(e.is_corruption() && e.to_string().contains("range-filter block"), "{e}");
        assert!(e.to_string().contains("v.sst"), "{e}");
    }
}
