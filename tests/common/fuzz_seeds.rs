//! Real encodings of every format, used to seed `fuzz/corpus/<target>/`.
//!
//! Seeds are small (a few dozen keys) so mutations reach every field and the
//! committed corpus stays well under a megabyte.

#![allow(dead_code, reason = "each test binary uses part of this")]

use siftdb::WriteBatch;
use siftdb::filter::{
    BinaryFuse8, BinaryFuse16, BlockedBloom, Bloom, CountingBloom, CuckooFilter, FilterKind, Xor8, Xor16,
    hash_key,
};
use siftdb::manifest::{TableRecord, VersionEdit};
use siftdb::wal::{RecordType, encode_record};

/// `(target, seed file name, bytes)` for every seed.
pub fn seeds() -> Vec<(&'static str, String, Vec<u8>)> {
    let mut out = Vec::new();
    for n in [0usize, 1, 10, 50] {
        let hashes: Vec<u64> = (0..n).map(|i| hash_key(7, format!("key{i}").as_bytes())).collect();
        let mut bloom = Bloom::new(n.max(1), 10.0);
        let mut blocked = BlockedBloom::new(n.max(1), 10.0);
        let mut counting = CountingBloom::new(n.max(1), 10.0);
        let mut cuckoo = CuckooFilter::new(n.max(8), 12).unwrap();
        for &h in &hashes {
            bloom.insert(h);
            blocked.insert(h);
            counting.insert(h);
            cuckoo.insert(h).unwrap();
        }
        let name = format!("keys{n}");
        out.push(("filter_bloom", name.clone(), bloom.encode()));
        out.push(("filter_blocked_bloom", name.clone(), blocked.encode()));
        out.push(("filter_counting_bloom", name.clone(), counting.encode()));
        out.push(("filter_cuckoo", name.clone(), cuckoo.encode()));
        out.push(("filter_xor8", name.clone(), Xor8::build(&hashes).unwrap().encode()));
        out.push(("filter_xor16", name.clone(), Xor16::build(&hashes).unwrap().encode()));
        out.push(("filter_binary_fuse8", name.clone(), BinaryFuse8::build(&hashes).unwrap().encode()));
        out.push(("filter_binary_fuse16", name.clone(), BinaryFuse16::build(&hashes).unwrap().encode()));
    }
    let batches = sample_batches();
    for (i, (seq, b)) in batches.iter().enumerate() {
        out.push(("write_batch", format!("batch{i}"), b.encode(*seq)));
    }
    out.push(("wal_reader", "three_batches".into(), wal_bytes(&batches)));
    let mut torn = wal_bytes(&batches);
    torn.truncate(torn.len() - 3);
    out.push(("wal_reader", "torn_tail".into(), torn));
    out.push(("wal_reader", "empty".into(), Vec::new()));
    let edits = sample_edits();
    for (i, e) in edits.iter().enumerate() {
        out.push(("version_edit", format!("edit{i}"), e.encode()));
    }
    let manifest = manifest_bytes(&edits);
    out.push(("manifest_replay", "three_edits".into(), manifest.clone()));
    out.push(("wal_reader", "manifest".into(), manifest));
    out.push(("current_file", "manifest1".into(), b"MANIFEST-000001\n".to_vec()));
    out.push(("current_file", "manifest123456789".into(), b"MANIFEST-123456789\n".to_vec()));
    out
}

/// A few batches with their base sequence numbers, consecutive.
pub fn sample_batches() -> Vec<(u64, WriteBatch)> {
    let mut a = WriteBatch::new();
    a.put(b"apple", b"red");
    a.put(b"banana", b"yellow");
    let mut b = WriteBatch::new();
    b.delete(b"apple");
    b.put(b"", b"empty key");
    let mut c = WriteBatch::new();
    c.put(b"cherry", vec![b'c'; 40]);
    vec![(1, a), (3, b), (5, c)]
}

/// The batches as a WAL.
pub fn wal_bytes(batches: &[(u64, WriteBatch)]) -> Vec<u8> {
    let mut log = Vec::new();
    for (seq, b) in batches {
        log.extend(encode_record(RecordType::Batch, &b.encode(*seq)).unwrap());
    }
    log
}

fn table(number: u64, smallest: &[u8], largest: &[u8], filter: FilterKind) -> TableRecord {
    TableRecord {
        file_number: number,
        file_size: 4096,
        smallest: smallest.to_vec(),
        largest: largest.to_vec(),
        min_seq: 1,
        max_seq: 9,
        entries: 20,
        filter,
        filter_bytes: 30,
    }
}

/// A valid manifest history: create, add tables, compact one away.
pub fn sample_edits() -> Vec<VersionEdit> {
    vec![
        VersionEdit {
            next_file_number: Some(2),
            last_seq: Some(0),
            log_number: Some(1),
            hash_salt: Some(0x5eed),
            ..VersionEdit::default()
        },
        VersionEdit {
            added: vec![
                (0, table(3, b"a", b"m", FilterKind::Bloom { bits_per_key: 10.0 })),
                (1, table(4, b"n", b"z", FilterKind::BinaryFuse8)),
            ],
            next_file_number: Some(6),
            last_seq: Some(9),
            log_number: Some(5),
            ..VersionEdit::default()
        },
        VersionEdit {
            added: vec![(1, table(6, b"a", b"m", FilterKind::Xor16))],
            removed: vec![(0, 3)],
            next_file_number: Some(7),
            ..VersionEdit::default()
        },
    ]
}

/// The edits as a manifest file.
pub fn manifest_bytes(edits: &[VersionEdit]) -> Vec<u8> {
    let mut log = Vec::new();
    for e in edits {
        log.extend(encode_record(RecordType::Edit, &e.encode()).unwrap());
    }
    log
}
