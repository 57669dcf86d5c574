//! Compressed tables (issue 62): every codec reads back byte-exact, blocks
//! that do not pay stay raw, old raw tables still open, and a damaged
//! compressed block is `Corruption` naming the file and an offset, never a
//! panic or a wrong value.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use proptest::prelude::*;
use siftdb::fs::StdFs;
use siftdb::range_del::RangeTombstone;
use siftdb::table::{
    BlockHandle, Compression, Entry, FORMAT_VERSION_ALIGNED, FORMAT_VERSION_COMPRESSED, FORMAT_VERSION_PLAIN,
    Footer, Table, TableBuilder, TableOptions, verify_table,
};
use siftdb::{Error, ValueKind};

const CODECS: [Compression; 3] = [Compression::None, Compression::Lz4, Compression::Zstd { level: 3 }];

/// (user key, newest-first seq) -> (kind, value), in internal-key order.
type Model = BTreeMap<(Vec<u8>, std::cmp::Reverse<u64>), (ValueKind, Vec<u8>)>;

/// A value that compresses (a repeated phrase) or does not (noise).
fn value(i: u64, compressible: bool, len: usize) -> Vec<u8> {
    if compressible {
        format!("value {i} of the sample, ").into_bytes().into_iter().cycle().take(len).collect()
    } else {
        let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x.to_le_bytes()[3]
            })
            .collect()
    }
}

fn build(path: &Path, model: &Model, opts: TableOptions, dels: &[RangeTombstone]) -> Table {
    let mut b = TableBuilder::new(Arc::new(StdFs), path, opts).unwrap();
    for ((k, seq), (kind, v)) in model {
        b.add(k, seq.0, *kind, v).unwrap();
    }
    for t in dels {
        b.add_range_tombstone(t).unwrap();
    }
    b.finish().unwrap();
    Table::open(&StdFs, path).unwrap()
}

fn sample(n: u64, compressible: bool) -> Model {
    (0..n)
        .map(|i| {
            let key = format!("key-{i:06}").into_bytes();
            (
                (key, std::cmp::Reverse(i + 1)),
                (ValueKind::Value, value(i, compressible, 40 + (i % 7) as usize * 20)),
            )
        })
        .collect()
}

fn opts(compression: Compression, block_bytes: usize) -> TableOptions {
    TableOptions { compression, block_bytes, seed: 3, ..TableOptions::default() }
}

/// [`opts`] without a filter: a table with an aligned filter block is
/// format 4 whether compressed or not, and these tables are about 1 and 3.
fn unfiltered(compression: Compression, block_bytes: usize) -> TableOptions {
    TableOptions { filter: siftdb::FilterKind::None, ..opts(compression, block_bytes) }
}

/// Reads everything back through get, iter and reverse iter.
fn assert_reads_back(table: &Table, model: &Model) {
    let forward: Vec<_> = table
        .iter()
        .map(Result::unwrap)
        .map(|e| (e.user_key.to_vec(), e.seq, e.kind, e.value.to_vec()))
        .collect();
    let want: Vec<_> = model.iter().map(|((k, s), (kind, v))| (k.clone(), s.0, *kind, v.clone())).collect();
    assert_eq!(forward, want);
    let backward: Vec<_> = table
        .iter_rev((Bound::Unbounded, Bound::Unbounded))
        .unwrap()
        .map(Result::unwrap)
        .map(|e| (e.user_key.to_vec(), e.seq, e.kind, e.value.to_vec()))
        .collect();
    assert_eq!(backward, want.iter().rev().cloned().collect::<Vec<_>>());
    let mut newest: BTreeMap<&[u8], Entry> = BTreeMap::new();
    for ((k, s), (kind, v)) in model {
        newest.entry(k).or_insert_with(|| match kind {
            ValueKind::Value => Entry::Value { seq: s.0, value: v.clone().into() },
            ValueKind::Tombstone => Entry::Tombstone { seq: s.0 },
        });
    }
    for (k, e) in newest {
        assert_eq!(table.get(k, u64::MAX).unwrap().entry, Some(e));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn every_codec_reads_back_byte_exact(
        entries in prop::collection::vec(
            (prop::collection::vec(prop::sample::select(vec![b'a', b'b', b'c', 0u8, 0xff]), 0..8),
             0u64..50, any::<bool>(), any::<bool>(), 0usize..300),
            0..300),
        block_bytes in 32usize..4096,
        codec in 0usize..3,
        level in 1i32..6,
    ) {
        let model: Model = entries
            .into_iter()
            .enumerate()
            .map(|(i, (k, seq, tomb, squeezable, len))| {
                let kind = if tomb { ValueKind::Tombstone } else { ValueKind::Value };
                let v = if tomb { Vec::new() } else { value(i as u64, squeezable, len) };
                ((k, std::cmp::Reverse(seq)), (kind, v))
            })
            .collect();
        let compression = match CODECS[codec] {
            Compression::Zstd { .. } => Compression::Zstd { level },
            c => c,
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.sst");
        let table = build(&path, &model, opts(compression, block_bytes), &[]);
        assert_reads_back(&table, &model);
        let report = verify_table(&StdFs, &path).unwrap();
        prop_assert!(report.is_clean(), "{report:?}");
        let p = table.properties();
        prop_assert_eq!(p.compression.clone(), (compression != Compression::None).then(|| compression.to_string()));
        let file = std::fs::read(&path).unwrap();
        let any = p.compressed_data_blocks > 0 || codec_of(&file, table.footer().index) != 0;
        let want = match (table.footer().filter.is_null(), any) {
            (false, _) => FORMAT_VERSION_ALIGNED,
            (true, true) => FORMAT_VERSION_COMPRESSED,
            (true, false) => FORMAT_VERSION_PLAIN,
        };
        prop_assert_eq!(table.footer().version, want);
    }
}

#[test]
fn incompressible_blocks_stay_raw_and_compressible_tables_shrink() {
    let dir = tempfile::tempdir().unwrap();
    for c in &CODECS[1..] {
        let noise = sample(200, false);
        let t = build(&dir.path().join("noise.sst"), &noise, unfiltered(*c, 4096), &[]);
        // No data block paid: each is read as a slice of the map. The
        // index block would pay (mostly the zero high bytes of its
        // handles), but is stored raw so an open reads it in place; so the
        // table says nothing of compression but in its properties.
        let file = std::fs::read(t.path()).unwrap();
        assert_eq!(t.properties().compressed_data_blocks, 0, "{c}");
        assert!(t.data_block_handles().unwrap().iter().all(|h| codec_of(&file, *h) == 0), "{c}");
        assert_eq!((t.footer().version, codec_of(&file, t.footer().index)), (FORMAT_VERSION_PLAIN, 0));
        assert_eq!(t.properties().data_raw_bytes, t.properties().data_bytes);
        assert_reads_back(&t, &noise);

        let text = sample(200, true);
        let raw = build(&dir.path().join("raw.sst"), &text, unfiltered(Compression::None, 4096), &[]);
        let t = build(&dir.path().join("text.sst"), &text, unfiltered(*c, 4096), &[]);
        let p = t.properties();
        let file = std::fs::read(t.path()).unwrap();
        assert_eq!(
            (t.footer().version, codec_of(&file, t.footer().index)),
            (FORMAT_VERSION_COMPRESSED, 0),
            "{c}"
        );
        assert_eq!(p.compressed_data_blocks, p.data_blocks, "{c}");
        assert_eq!(p.data_raw_bytes, raw.properties().data_bytes, "{c}");
        assert!(p.data_bytes * 3 < p.data_raw_bytes, "{c}: {} of {}", p.data_bytes, p.data_raw_bytes);
        assert!(t.file_size() * 2 < raw.file_size(), "{c}: {} vs {}", t.file_size(), raw.file_size());
        assert_reads_back(&t, &text);
    }
}

/// The codec nibble in the trailer of the block at `h`.
fn codec_of(file: &[u8], h: BlockHandle) -> u8 {
    file[(h.offset + u64::from(h.size)) as usize] >> 4
}

#[test]
fn a_table_whose_blocks_all_stay_raw_is_the_plain_format() {
    // An empty table, and under zstd (whose frame header alone is 1/8 of
    // a small block) one entry of noise: no block saves 1/8, so nothing
    // about the table says compression but the properties, which older
    // builds skip. (The index, which lz4 squeezes even at one entry, is
    // stored raw whatever the codec, to be read in place.)
    let dir = tempfile::tempdir().unwrap();
    let noise: Model =
        [((value(7, false, 20), std::cmp::Reverse(1)), (ValueKind::Value, value(8, false, 300)))].into();
    for (c, model) in [
        (Compression::Lz4, Model::new()),
        (Compression::Zstd { level: 3 }, Model::new()),
        (Compression::Zstd { level: 3 }, noise.clone()),
        (Compression::Lz4, noise),
    ] {
        let t = build(&dir.path().join("n.sst"), &model, unfiltered(c, 4096), &[]);
        assert_eq!(t.footer().version, FORMAT_VERSION_PLAIN, "{c}");
        assert_eq!(t.properties().compression, Some(c.to_string()));
        assert_reads_back(&t, &model);
    }
}

#[test]
fn version_3_holds_range_tombstones_or_none() {
    let dir = tempfile::tempdir().unwrap();
    let text = sample(100, true);
    let del = RangeTombstone {
        start: bytes::Bytes::from_static(b"key-000010"),
        end: bytes::Bytes::from_static(b"key-000020"),
        seq: 500,
    };
    let t = build(
        &dir.path().join("d.sst"),
        &text,
        unfiltered(Compression::Lz4, 1024),
        std::slice::from_ref(&del),
    );
    assert_eq!(t.footer().version, FORMAT_VERSION_COMPRESSED);
    assert_eq!(t.range_dels().unwrap().len(), 1);
    assert!(verify_table(&StdFs, t.path()).unwrap().is_clean());
}

#[test]
fn the_hard_bound_holds_the_largest_entry_twice() {
    let bound = siftdb::table::compression::MAX_UNCOMPRESSED_BLOCK;
    assert!(bound >= 2 * siftdb::MAX_VALUE_BYTES + siftdb::MAX_KEY_BYTES);
}

#[test]
fn an_old_raw_table_still_opens_and_reads() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pre_policy_db/000006.sst");
    let t = Table::open(&StdFs, &path).unwrap();
    assert_eq!(t.footer().version, FORMAT_VERSION_PLAIN);
    assert_eq!(t.properties().compression, None);
    let n = t.iter().map(Result::unwrap).count() as u64;
    assert_eq!(n, t.properties().entries);
    assert!(verify_table(&StdFs, &path).unwrap().is_clean());
}

/// Rewrites the footer's version, with a good crc.
fn set_version(path: &Path, version: u32) {
    let mut b = std::fs::read(path).unwrap();
    let at = b.len() - 56;
    let mut f = Footer::decode(&b).unwrap();
    f.version = version;
    b[at..].copy_from_slice(&f.encode());
    std::fs::write(path, b).unwrap();
}

/// Every read of the table at `path`: Ok, or the error of the first that
/// failed.
fn read_all(path: &Path, model: &Model) -> Result<(), Error> {
    let t = Table::open(&StdFs, path)?;
    for (k, _) in model.keys() {
        t.get(k, u64::MAX)?;
    }
    for e in t.iter() {
        e?;
    }
    for e in t.iter_rev((Bound::Unbounded, Bound::Unbounded))? {
        e?;
    }
    Ok(())
}

fn assert_corruption_in_file(e: &Error, path: &Path, len: u64) {
    match e {
        Error::Corruption { file: Some(f), offset, .. } => {
            assert_eq!(f, path, "{e}");
            assert!(*offset < len, "{e}");
        }
        other => panic!("expected Corruption naming the file, got {other:?}"),
    }
}

#[test]
fn a_codec_nibble_in_an_older_version_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let text = sample(100, true);
    let del = RangeTombstone {
        start: bytes::Bytes::from_static(b"a"),
        end: bytes::Bytes::from_static(b"b"),
        seq: 500,
    };
    for (version, dels) in [(2, vec![del]), (1, vec![])] {
        let path = dir.path().join(format!("v{version}.sst"));
        build(&path, &text, opts(Compression::Zstd { level: 3 }, 1024), &dels);
        set_version(&path, version);
        let e = read_all(&path, &text).unwrap_err();
        assert_corruption_in_file(&e, &path, std::fs::metadata(&path).unwrap().len());
        assert!(e.to_string().contains("codec 2"), "{e}");
        assert!(!verify_table(&StdFs, &path).unwrap().is_clean());
    }
}

/// Recomputes the crc of the block whose contents are `start..end`.
fn reseal(b: &mut [u8], start: usize, end: usize) {
    let mut h = crc32fast::Hasher::new();
    h.update(&b[start..=end]);
    b[end + 1..end + 5].copy_from_slice(&h.finalize().to_le_bytes());
}

#[test]
fn a_claim_above_the_tables_largest_block_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = sample(100, true);
    let path = dir.path().join("c.sst");
    let t = build(&path, &text, opts(Compression::Lz4, 256), &[]);
    let h = t.data_block_handles().unwrap()[0];
    let mut b = std::fs::read(&path).unwrap();
    let (start, end) = (h.offset as usize, (h.offset + u64::from(h.size)) as usize);
    // The claim is a two-byte varint (256..16384): the largest two-byte
    // claim keeps the layout and is far above the 256-byte blocks.
    assert!(b[start] & 0x80 != 0 && b[start + 1] & 0x80 == 0);
    b[start..start + 2].copy_from_slice(&[0xff, 0x7f]);
    reseal(&mut b, start, end);
    std::fs::write(&path, &b).unwrap();
    let e = read_all(&path, &text).unwrap_err();
    assert_corruption_in_file(&e, &path, b.len() as u64);
    assert!(e.to_string().contains("claims 16383"), "{e}");
}

#[test]
fn every_damaged_byte_of_a_compressed_table_is_corruption_or_right() {
    let dir = tempfile::tempdir().unwrap();
    let text = sample(60, true);
    for c in &CODECS[1..] {
        let path = dir.path().join("t.sst");
        let t = build(&path, &text, opts(*c, 512), &[]);
        assert!(t.properties().compressed_data_blocks >= 3, "{c}");
        let handles = t.data_block_handles().unwrap();
        let good = std::fs::read(&path).unwrap();
        let data_end = usize::try_from(t.footer().index.offset).unwrap();
        drop(t);
        for i in 0..data_end {
            // A plain flip: the crc catches it, so every read is right or
            // Corruption naming the file.
            let mut bad = good.clone();
            bad[i] ^= 0x21;
            std::fs::write(&path, &bad).unwrap();
            match read_all(&path, &text) {
                Ok(()) => assert_reads_back(&Table::open(&StdFs, &path).unwrap(), &text),
                Err(e) => assert_corruption_in_file(&e, &path, bad.len() as u64),
            }
            // The same flip with the crc recomputed (damage a crc misses,
            // or a crafted file): decompression sees it, and must answer
            // Corruption or decode, never panic or over-allocate.
            let Some(h) =
                handles.iter().find(|h| (h.offset..h.offset + u64::from(h.size)).contains(&(i as u64)))
            else {
                continue;
            };
            reseal(&mut bad, h.offset as usize, (h.offset + u64::from(h.size)) as usize);
            std::fs::write(&path, &bad).unwrap();
            if let Err(e) = read_all(&path, &text) {
                assert_corruption_in_file(&e, &path, bad.len() as u64);
            }
            let _ = verify_table(&StdFs, &path).unwrap();
        }
    }
}

/// A table written before indexes were stored raw still opens and reads,
/// its lz4 index decompressed: `tests/fixtures/compressed_index/t.sst`, 3,000
/// keys `key000000` … with the value `value of key {i} ` and `i % 50` x's,
/// written by f8f32a0's `siftdb sst write --policy fuse8` (lz4 data and
/// index blocks).
#[test]
fn an_older_table_with_a_compressed_index_still_reads() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compressed_index/t.sst");
    let file = std::fs::read(&path).unwrap();
    let t = Table::open_path(&path).unwrap();
    assert_eq!(
        codec_of(&file, t.footer().index),
        Compression::Lz4.codec(),
        "the fixture's index is compressed"
    );
    let model: Model = (0..3000u32)
        .map(|i| {
            let value = format!("value of key {i} {}", "x".repeat((i % 50) as usize)).into_bytes();
            ((format!("key{i:06}").into_bytes(), std::cmp::Reverse(0)), (ValueKind::Value, value))
        })
        .collect();
    assert_reads_back(&t, &model);
    assert!(verify_table(&StdFs, &path).unwrap().is_clean());
}
