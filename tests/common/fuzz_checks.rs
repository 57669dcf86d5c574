//! The body of every fuzz target, written once.
//!
//! `fuzz/fuzz_targets/*.rs` call these under libFuzzer; the root crate's
//! `tests/fuzz_corpus_replay.rs` calls them over every file committed in
//! `fuzz/corpus/<target>/`, so CI replays the corpus with plain `cargo test`.
//!
//! Each check decodes arbitrary bytes and, when decoding succeeds, *uses* the
//! result (queries a filter, iterates a log, re-encodes an edit) and asserts
//! the invariants any successful decode must satisfy. A panic anywhere is a
//! finding. Each returns whether the bytes decoded, so the corpus seeder can
//! assert that real encodings do.

#![allow(dead_code, reason = "each fuzz target uses one check")]

use siftdb::codec::seal;
use siftdb::filter::{
    BinaryFuse8, BinaryFuse16, BlockedBloom, Bloom, CountingBloom, CuckooFilter, Filter, FilterCodec,
    KeyHash, Ribbon, Xor8, Xor16,
};
use siftdb::key::MAX_SEQ;
use siftdb::manifest::{VersionEdit, replay};
use siftdb::table::block::Block;
use siftdb::table::compression::{BlockCompressor, CODEC_LZ4, CODEC_RAW, CODEC_ZSTD, decompress_block};
use siftdb::table::filter_block::TableFilter;
use siftdb::table::index::Index;
use siftdb::table::range_del_block;
use siftdb::table::range_filter_block::TableRangeFilter;
use siftdb::table::{Compression, Entry, Footer, Table, TableProperties};
use siftdb::wal::{FrameReader, LogEnd, RecordType, RecoveryMode};
use siftdb::{Error, WriteBatch};

use bytes::Bytes;

/// A check: arbitrary bytes in, whether they decoded out; panics on a broken invariant.
pub type Check = fn(&[u8]) -> bool;

/// Every target name (the fuzz binary's and the corpus directory's) and its check.
pub const TARGETS: &[(&str, Check)] = &[
    ("filter_bloom", check_bloom),
    ("filter_blocked_bloom", check_blocked_bloom),
    ("filter_counting_bloom", check_counting_bloom),
    ("filter_cuckoo", check_cuckoo),
    ("filter_xor8", check_xor8),
    ("filter_xor16", check_xor16),
    ("filter_binary_fuse8", check_binary_fuse8),
    ("filter_binary_fuse16", check_binary_fuse16),
    ("filter_ribbon", check_ribbon),
    ("wal_reader", check_wal_reader),
    ("write_batch", check_write_batch),
    ("version_edit", check_version_edit),
    ("manifest_replay", check_manifest_replay),
    ("current_file", check_current_file),
    ("table_block", check_table_block),
    ("table_index", check_table_index),
    ("table_footer", check_table_footer),
    ("table_properties", check_table_properties),
    ("table_filter_block", check_table_filter_block),
    ("table_file", check_table_file),
    ("table_range_del", check_table_range_del),
    ("table_range_filter", check_table_range_filter),
    ("table_compressed_block", check_table_compressed_block),
];

/// A decode failure must be typed corruption (or, for a well-formed file
/// declaring a newer format version, `Unsupported`), never another kind of
/// error.
fn expect_corruption<T>(result: Result<T, Error>) -> Option<T> {
    match result {
        Ok(v) => Some(v),
        Err(e) => {
            assert!(
                e.is_corruption() || e.is_unsupported(),
                "decode failed with a non-corruption error: {e}"
            );
            None
        }
    }
}

/// Hashes to probe a decoded filter with: spread over the whole u64 range.
fn probes() -> impl Iterator<Item = u64> {
    (0..64u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 7))
}

/// Queries a decoded static filter; it must answer without panicking and
/// report a sane size and FPR.
fn use_filter(f: &impl Filter) {
    let hits = probes().filter(|&h| f.contains(h)).count();
    assert!(hits <= 64);
    assert!(f.size_bytes() > 0);
    let fpr = f.theoretical_fpr();
    assert!(fpr.is_nan() || (0.0..=1.0).contains(&fpr), "fpr {fpr}");
}

/// Runs `check` on `data` as given and again with a valid crc32 appended
/// (`codec::seal`): a sealed format rejects almost every mutation at its
/// checksum, so the second run is what reaches the parser behind it.
/// Returns whether `data` itself decoded.
fn with_resealed(data: &[u8], check: fn(&[u8]) -> bool) -> bool {
    let _ = check(&seal(data.to_vec()));
    check(data)
}

macro_rules! static_filter_check {
    ($name:ident, $ty:ty) => {
        /// Decodes (as given and resealed), queries, and checks that
        /// re-encoding is stable.
        pub fn $name(data: &[u8]) -> bool {
            with_resealed(data, |data| {
                let Some(f) = expect_corruption(<$ty>::decode(data)) else { return false };
                use_filter(&f);
                let again = <$ty>::decode(&f.encode()).expect("a re-encoded filter decodes");
                assert_eq!(again.encode(), f.encode(), "re-encoding is not stable");
                for h in probes() {
                    assert_eq!(again.contains(h), f.contains(h));
                }
                true
            })
        }
    };
}

static_filter_check!(check_xor8, Xor8);
static_filter_check!(check_xor16, Xor16);
static_filter_check!(check_binary_fuse8, BinaryFuse8);
static_filter_check!(check_binary_fuse16, BinaryFuse16);
static_filter_check!(check_ribbon, Ribbon);

macro_rules! bloom_check {
    ($name:ident, $ty:ty) => {
        /// Decodes (as given and resealed), queries, then inserts: an
        /// inserted hash must be found.
        pub fn $name(data: &[u8]) -> bool {
            with_resealed(data, |data| {
                let Some(mut f) = expect_corruption(<$ty>::decode(data)) else { return false };
                use_filter(&f);
                let again = <$ty>::decode(&f.encode()).expect("a re-encoded filter decodes");
                assert_eq!(again.encode(), f.encode(), "re-encoding is not stable");
                for h in probes().take(8) {
                    f.insert(h);
                    assert!(f.contains(h), "false negative after insert");
                }
                true
            })
        }
    };
}

bloom_check!(check_bloom, Bloom);
bloom_check!(check_blocked_bloom, BlockedBloom);

/// Decodes (as given and resealed), queries, inserts and removes.
pub fn check_counting_bloom(data: &[u8]) -> bool {
    with_resealed(data, counting_bloom_once)
}

fn counting_bloom_once(data: &[u8]) -> bool {
    let Some(mut f) = expect_corruption(CountingBloom::decode(data)) else { return false };
    use_filter(&f);
    let again = CountingBloom::decode(&f.encode()).expect("a re-encoded filter decodes");
    assert_eq!(again.encode(), f.encode(), "re-encoding is not stable");
    for h in probes().take(8) {
        f.insert(h);
        assert!(f.contains(h), "false negative after insert");
    }
    for h in probes().take(4) {
        f.remove(h);
    }
    true
}

/// Decodes (as given and resealed), queries, inserts (may be full) and removes.
pub fn check_cuckoo(data: &[u8]) -> bool {
    with_resealed(data, cuckoo_once)
}

fn cuckoo_once(data: &[u8]) -> bool {
    let Some(mut f) = expect_corruption(CuckooFilter::decode(data)) else { return false };
    use_filter(&f);
    assert!(f.len() <= f.capacity() + f.stash_len() + f.num_buckets() * 8);
    let again = CuckooFilter::decode(&f.encode()).expect("a re-encoded filter decodes");
    assert_eq!(again.encode(), f.encode(), "re-encoding is not stable");
    for h in probes().take(8) {
        if f.insert(h).is_ok() {
            assert!(f.contains(h), "false negative after insert");
        }
    }
    for h in probes().take(8) {
        f.remove(h);
    }
    true
}

/// Replays arbitrary bytes as a log of each record type in both recovery
/// modes; every payload read is also decoded as what it claims to be.
pub fn check_wal_reader(data: &[u8]) -> bool {
    let mut any_clean = false;
    for kind in [RecordType::Batch, RecordType::Edit] {
        for mode in [RecoveryMode::AbsoluteConsistency, RecoveryMode::PointInTime] {
            let mut reader = FrameReader::new(data, kind, mode);
            let mut last_end = 0u64;
            let mut failed = false;
            for record in reader.by_ref() {
                let Some(record) = expect_corruption(record) else {
                    assert_eq!(mode, RecoveryMode::AbsoluteConsistency, "PointInTime never errs");
                    failed = true;
                    break;
                };
                assert!(record.offset >= last_end, "records go backwards");
                last_end = record.offset + record.payload.len() as u64;
                assert!(last_end <= data.len() as u64);
                match kind {
                    RecordType::Batch => drop(expect_corruption(WriteBatch::decode(record.payload))),
                    RecordType::Edit => drop(expect_corruption(VersionEdit::decode(record.payload))),
                }
            }
            if failed {
                continue;
            }
            let valid = reader.valid_len();
            assert!(valid <= data.len() as u64 && valid >= last_end);
            match reader.end().expect("a finished reader says why") {
                LogEnd::Clean => {
                    assert_eq!(valid, data.len() as u64, "clean end before the end");
                    any_clean = true;
                }
                LogEnd::TornTail { at, dropped } => {
                    assert_eq!(*at, valid);
                    assert_eq!(at + dropped, data.len() as u64, "torn tail must run to the end");
                }
                LogEnd::Stopped { at, .. } => {
                    assert_eq!(mode, RecoveryMode::PointInTime, "only PointInTime stops");
                    assert_eq!(*at, valid);
                }
            }
        }
    }
    any_clean
}

/// Decodes a batch; a decoded batch must survive a re-encode unchanged.
pub fn check_write_batch(data: &[u8]) -> bool {
    let Some((seq, batch)) = expect_corruption(WriteBatch::decode(data)) else { return false };
    // Not byte-identical: the varint reader accepts overlong encodings
    // (0x80 0x00 for 0), harmless behind the WAL's crc. Semantically equal.
    let again = WriteBatch::decode(&batch.encode(seq)).expect("a re-encoded batch decodes");
    assert_eq!(again, (seq, batch.clone()));
    let ops = batch.iter().count();
    assert_eq!(ops, batch.len());
    true
}

/// Decodes an edit (as given and resealed); a decoded edit must survive a
/// re-encode unchanged.
pub fn check_version_edit(data: &[u8]) -> bool {
    with_resealed(data, version_edit_once)
}

fn version_edit_once(data: &[u8]) -> bool {
    let Some(edit) = expect_corruption(VersionEdit::decode(data)) else { return false };
    let again = VersionEdit::decode(&edit.encode()).expect("a re-encoded edit decodes");
    assert_eq!(again, edit);
    true
}

/// Replays a manifest; a replayed state must be valid and its snapshot edit
/// must round-trip.
pub fn check_manifest_replay(data: &[u8]) -> bool {
    let Some(replayed) = expect_corruption(replay(data)) else { return false };
    assert!(replayed.valid_len <= data.len() as u64);
    assert!(replayed.edits > 0);
    replayed.state.validate().expect("a replayed state is valid");
    let snapshot = replayed.state.snapshot_edit();
    let again = VersionEdit::decode(&snapshot.encode()).expect("a snapshot edit decodes");
    assert_eq!(again, snapshot);
    true
}

/// A scratch directory for this thread, removed when the thread ends:
/// `read_current` and `Table::open` read files, not buffers.
fn scratch_dir() -> std::path::PathBuf {
    thread_local! {
        static DIR: tempfile::TempDir = {
            // tmpfs when there is one: the table target writes a file per input.
            let shm = std::path::Path::new("/dev/shm");
            if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.expect("scratch dir")
        };
    }
    DIR.with(|d| d.path().to_path_buf())
}

/// Parses `data` as a CURRENT file.
pub fn check_current_file(data: &[u8]) -> bool {
    let dir = scratch_dir();
    std::fs::write(dir.join("CURRENT"), data).expect("write scratch CURRENT");
    let Some(number) = expect_corruption(siftdb::manifest::read_current(&siftdb::fs::StdFs, &dir)) else {
        return false;
    };
    let expected = siftdb::manifest::current_contents(number);
    assert_eq!(data, expected.as_bytes(), "only a canonical manifest name with its checksum parses");
    true
}

/// Keys to probe tables and blocks with: the seeds' keys and a few others.
fn table_probe_keys() -> impl Iterator<Item = Vec<u8>> {
    (0..40u32).map(|i| format!("key{i:04}").into_bytes()).chain([Vec::new(), vec![0xff; 9]])
}

/// Walks a block cursor to its end (bounded), then seeks to a few keys.
fn walk_block(block: &Block) -> Result<usize, Error> {
    let mut it = block.cursor();
    it.seek_to_first()?;
    let mut n = 0;
    while it.valid() && n < 1 << 20 {
        let _ = (it.key().len(), it.value().len());
        it.advance()?;
        n += 1;
    }
    for key in table_probe_keys().take(8) {
        it.seek(&key, u64::MAX)?;
        if it.valid() {
            let _ = (it.key().len(), it.value().len());
        }
    }
    Ok(n)
}

/// A data or index block's contents (trailer excluded): parse and walk.
pub fn check_table_block(data: &[u8]) -> bool {
    let Some(block) = expect_corruption(Block::new(Bytes::copy_from_slice(data))) else { return false };
    expect_corruption(walk_block(&block)).is_some()
}

/// The largest block the compressed-block target lets a claim reach: big
/// enough for any seed, small enough that a run stays fast.
const FUZZ_BLOCK_LIMIT: usize = 1 << 16;

/// A compressed block as stored: the first byte is the codec nibble (odd
/// lz4, even zstd), the rest the block's contents (the uncompressed length,
/// then the payload). Decompression is bounded and exact; what it yields
/// must then parse and walk as a block does (`table_block`).
pub fn check_table_compressed_block(data: &[u8]) -> bool {
    let Some((&codec, stored)) = data.split_first() else { return false };
    let codec = if codec & 1 == 1 { CODEC_LZ4 } else { CODEC_ZSTD };
    let Some(raw) = expect_corruption(decompress_block(codec, stored, FUZZ_BLOCK_LIMIT)) else {
        return false;
    };
    assert!(raw.len() <= FUZZ_BLOCK_LIMIT, "{} bytes past the limit", raw.len());
    // What decoded re-encodes, under either codec, and decodes back to itself.
    for c in [Compression::Lz4, Compression::Zstd { level: 1 }] {
        let mut z = BlockCompressor::new(c).expect("a valid level");
        let (stored, codec) = z.compress(&raw);
        if codec != CODEC_RAW {
            assert_eq!(decompress_block(codec, stored, raw.len()).expect("own encoding decodes"), raw);
        }
    }
    check_table_block(&raw)
}

/// An index block's contents: every entry is checked at parse, so entries
/// and lookups on a parsed index must not fail.
pub fn check_table_index(data: &[u8]) -> bool {
    let Some(index) = expect_corruption(Index::new(Bytes::copy_from_slice(data))) else { return false };
    for i in 0..index.len() {
        index.entry(i).expect("entries are checked at parse");
    }
    for key in table_probe_keys() {
        if let Some((i, _)) = index.find(&key, u64::MAX).expect("entries are checked at parse") {
            assert!(i < index.len());
        }
    }
    true
}

/// A whole table file as the footer parser sees it: handles must end
/// before the footer.
pub fn check_table_footer(data: &[u8]) -> bool {
    let Some(footer) = expect_corruption(Footer::decode(data)) else { return false };
    let footer_at = (data.len() - 56) as u64;
    for h in [footer.index, footer.filter, footer.properties] {
        assert!(h.offset + h.size_with_trailer() <= footer_at || h.is_null(), "handle {h:?} past footer");
    }
    let mut again = data[..data.len() - 56].to_vec();
    again.extend(footer.encode());
    assert_eq!(Footer::decode(&again).expect("re-encoded footer"), footer);
    true
}

/// A properties block's contents.
pub fn check_table_properties(data: &[u8]) -> bool {
    let Some(p) = expect_corruption(TableProperties::decode(data)) else { return false };
    let again = TableProperties::decode(&p.encode()).expect("re-encoded properties decode");
    // Compared as bytes: a stored NaN bits-per-key is legal and NaN != NaN.
    assert_eq!(again.encode(), p.encode());
    true
}

/// A range-tombstone block's contents: every tombstone decoded is a
/// non-empty range at a valid seq, and re-encoding reads back the same set.
pub fn check_table_range_del(data: &[u8]) -> bool {
    let Some(dels) = expect_corruption(range_del_block::decode(&Bytes::copy_from_slice(data))) else {
        return false;
    };
    assert!(dels.len() <= data.len() / 11, "{} tombstones from {} bytes", dels.len(), data.len());
    for t in dels.tombstones() {
        assert!(t.start < t.end && t.seq <= MAX_SEQ, "{t:?}");
    }
    let again = range_del_block::decode(&Bytes::from(range_del_block::encode(&dels)));
    assert_eq!(again.expect("re-encoded tombstones decode"), dels);
    for key in table_probe_keys() {
        let _ = dels.covering(&key, MAX_SEQ);
    }
    true
}

/// A filter block's contents: decode, then probe.
pub fn check_table_filter_block(data: &[u8]) -> bool {
    let Some(f) = expect_corruption(TableFilter::decode(data)) else {
        for shift in 0..8 {
            assert!(expect_corruption(TableFilter::decode_mapped(&shifted(data, shift), true)).is_none());
        }
        return false;
    };
    let answers: Vec<bool> =
        table_probe_keys().map(|key| f.may_contain(siftdb::filter::hash_key(f.seed(), &key))).collect();
    // Read in place at every offset from a cache line (a few for a long
    // block): a view where aligned, else a copy, and the same answers.
    let shifts = if data.len() <= 1 << 16 { 0..64 } else { 0..2 };
    for shift in shifts {
        let mapped = shifted(data, shift);
        let g = TableFilter::decode_mapped(&mapped, true).expect("decodes as the copy did");
        if let Some(range) = g.in_place_within(&mapped) {
            assert!(range.end <= mapped.len() as u64 && g.kind().is_some(), "{range:?}");
        }
        let again: Vec<bool> =
            table_probe_keys().map(|key| g.may_contain(siftdb::filter::hash_key(g.seed(), &key))).collect();
        assert_eq!(again, answers, "in place at shift {shift}");
    }
    if let Some(fpr) = f.theoretical_fpr() {
        assert!(fpr.is_nan() || (0.0..=1.0).contains(&fpr), "fpr {fpr}");
    }
    true
}

/// A range-filter block's contents: decode, then probe ranges. A range
/// outside the stored image bounds is empty; a decoded block answers the
/// same read in place at any offset as copied.
pub fn check_table_range_filter(data: &[u8]) -> bool {
    let Some(f) = expect_corruption(TableRangeFilter::decode(data)) else {
        for shift in [0, 1, 7] {
            assert!(expect_corruption(TableRangeFilter::decode_mapped(&shifted(data, shift))).is_none());
        }
        return false;
    };
    let probes = [(0, 0), (0, u64::MAX), (1 << 40, (1 << 40) + 255), (u64::MAX - 15, u64::MAX), (9, 3)];
    let answers: Vec<bool> = probes.iter().map(|&(lo, hi)| f.may_intersect(lo, hi)).collect();
    let l = f.layout();
    // A known version with a known point-filter kind answers; an unknown
    // one is "maybe" throughout.
    if f.points().and_then(|p| p.kind()).is_some() {
        assert!(l.shift <= 63 && l.min <= l.max, "{l:?}");
        assert!(!f.may_intersect(9, 3), "a reversed range is empty");
        if l.min > 0 {
            assert!(!f.may_intersect(0, l.min - 1), "below the smallest image: {l:?}");
        }
    } else {
        assert!(answers.iter().all(|&a| a), "an unknown version or kind answers maybe");
    }
    for shift in [0, 1, 7, 63] {
        let g = TableRangeFilter::decode_mapped(&shifted(data, shift)).expect("decodes as the copy did");
        let again: Vec<bool> = probes.iter().map(|&(lo, hi)| g.may_intersect(lo, hi)).collect();
        assert_eq!(again, answers, "in place at shift {shift}");
    }
    true
}

/// `data` in a buffer of its own starting `shift` bytes past a 64-byte
/// boundary.
fn shifted(data: &[u8], shift: usize) -> Bytes {
    let mut buf = bytes::BytesMut::zeroed(data.len() + 128);
    let at = (shift + 64 - buf.as_ptr() as usize % 64) % 64;
    buf[at..at + data.len()].copy_from_slice(data);
    buf.freeze().slice(at..at + data.len())
}

/// Opens arbitrary bytes as a table, then gets every probe key and
/// iterates. Every read either succeeds or is `Corruption`, and iteration
/// ends. (Order is not asserted: a crafted file with valid checksums may
/// hold unsorted entries, which the reader does not promise to detect.)
pub fn check_table_file(data: &[u8]) -> bool {
    let path = scratch_dir().join("000001.sst");
    std::fs::write(&path, data).expect("write scratch table");
    let Some(table) = expect_corruption(Table::open(&siftdb::fs::StdFs, &path)) else { return false };
    let mut clean = true;
    for key in table_probe_keys() {
        if let Some(lookup) = expect_corruption(table.get(&key, u64::MAX)) {
            match lookup.entry {
                Some(Entry::Value { seq, .. } | Entry::Tombstone { seq }) => assert!(seq <= MAX_SEQ),
                None => {}
            }
        } else {
            clean = false;
        }
    }
    // The same keys as one batch: a typed error, or each key's own answer.
    let keys: Vec<Vec<u8>> = table_probe_keys().collect();
    let probes: Vec<(&[u8], KeyHash)> = keys.iter().map(|k| (k.as_slice(), KeyHash::new(0, k))).collect();
    let mut batch = Vec::new();
    if expect_corruption(table.get_batch(&probes, u64::MAX, &mut batch)).is_some() {
        for (key, lookup) in keys.iter().zip(&batch) {
            if let Ok(single) = table.get(key, u64::MAX) {
                assert_eq!(lookup.entry, single.entry, "a batch answers as the key's own lookup");
            }
        }
    } else {
        clean = false;
    }
    let mut forward = Vec::new();
    for (n, entry) in table.iter().enumerate() {
        assert!(n < 1 << 22, "iteration does not end");
        let Some(e) = expect_corruption(entry) else {
            clean = false;
            break;
        };
        assert!(e.seq <= MAX_SEQ);
        forward.push((e.user_key, e.seq));
    }
    // Backwards, from the end and from each probe key: damage is
    // corruption, and a table read cleanly both ways reads the same
    // entries in reverse, if they are in order. A crafted file whose
    // checksums hold may hold them out of order (libFuzzer forges a crc
    // from the comparisons it traces), which the reader does not promise to
    // detect and `verify_table` reports: a reverse scan then seeks by an
    // order the file breaks.
    let sorted = forward.windows(2).all(|w| w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 > w[1].1));
    let forward_clean = clean && sorted;
    let bounds = std::iter::once(None).chain(table_probe_keys().map(Some));
    for bound in bounds {
        let upper = bound.as_deref().map_or(std::ops::Bound::Unbounded, std::ops::Bound::Excluded);
        let Some(it) = expect_corruption(table.iter_rev((std::ops::Bound::Unbounded, upper))) else {
            clean = false;
            continue;
        };
        let mut backward = Vec::new();
        let mut whole = true;
        for (n, entry) in it.enumerate() {
            assert!(n < 1 << 22, "reverse iteration does not end");
            let Some(e) = expect_corruption(entry) else {
                whole = false;
                break;
            };
            backward.push((e.user_key, e.seq));
        }
        clean &= whole;
        if whole && forward_clean {
            let want: Vec<_> = forward
                .iter()
                .filter(|(k, _)| bound.as_deref().is_none_or(|b| k.as_ref() < b))
                .rev()
                .cloned()
                .collect();
            assert_eq!(backward, want, "reverse iteration disagrees with forward");
        }
    }
    if let Some(dels) = table.range_dels() {
        for key in table_probe_keys() {
            let _ = dels.covering(&key, MAX_SEQ);
        }
    }
    let _ = table.filter_details();
    clean
}
