//! The edit's encoding: round trips, golden bytes, damage, newer formats.

use super::*;

pub(crate) fn table(number: u64, smallest: &[u8], largest: &[u8]) -> TableRecord {
    TableRecord {
        file_number: number,
        file_size: 4096 + number,
        smallest: smallest.to_vec(),
        largest: largest.to_vec(),
        min_seq: number * 10,
        max_seq: number * 10 + 5,
        entries: 100,
        filter: FilterKind::BlockedBloom { bits_per_key: 7.5 },
        filter_bytes: 120,
    }
}

fn full_edit() -> VersionEdit {
    let mut fuse = table(9, b"m", b"z");
    fuse.filter = FilterKind::BinaryFuse8;
    VersionEdit {
        added: vec![(0, table(7, b"a", b"k")), (3, fuse)],
        removed: vec![(1, 3), (6, 4)],
        next_file_number: Some(10),
        last_seq: Some(MAX_SEQ),
        log_number: Some(8),
        hash_salt: Some(0xdead_beef_0123_4567),
        filter_policy: Some("monkey:10+skip-last".to_owned()),
        replaced_policy: Some("xor16".to_owned()),
        filter_memory_bytes: Some(u64::MAX - 1),
        format_version: Some(DB_FORMAT_VERSION),
        write_totals: Some(WriteTotals { user_bytes: 1 << 40, flush_bytes: 12_345, compaction_bytes: 0 }),
        compaction: Some("fifo:max_bytes=1073741824,ttl=3600s".to_owned()),
        fifo_dropped: Some(DropTotals { tables: 3, entries: 1 << 33, bytes: u64::MAX }),
        wal_ends: vec![
            (8, WalEnd { len: 4096, last_seq: Some(MAX_SEQ) }),
            (11, WalEnd { len: 0, last_seq: Some(0) }),
            (12, WalEnd { len: 77, last_seq: None }),
        ],
        lost_writes: vec![
            LostWrites { log_number: 5, synced_len: 4096, found_len: 0, writes_lost: Some(0), recovered_at: 1 },
            LostWrites {
                log_number: 8,
                synced_len: 1 << 40,
                found_len: 77,
                writes_lost: None,
                recovered_at: 1_796_515_200,
            },
        ],
    }
}

#[test]
fn round_trip() {
    for edit in [VersionEdit::default(), full_edit()] {
        assert_eq!(VersionEdit::decode(&edit.encode()).unwrap(), edit);
    }
}

#[test]
fn golden_bytes() {
    let edit =
        VersionEdit { next_file_number: Some(300), removed: vec![(2, 5)], ..VersionEdit::default() };
    assert_eq!(edit.encode(), seal(vec![1, 0xac, 0x02, 6, 2, 5]));
}

#[test]
fn format_4_wal_ends_still_read_and_keep_their_tag() {
    // Tag 11 as format 4 wrote it: log 8 synced through 4096 bytes.
    let v4 = seal(vec![11, 8, 0x80, 0x20]);
    let edit = VersionEdit::decode(&v4).unwrap();
    assert_eq!(edit.wal_ends, [(8, WalEnd { len: 4096, last_seq: None })]);
    assert_eq!(edit.encode(), v4, "no sequence number is invented for it");
    // Tag 12 carries the sequence, checked like every other.
    let v5 = seal(vec![12, 8, 0x80, 0x20, 5]);
    assert_eq!(VersionEdit::decode(&v5).unwrap().wal_ends, [(8, WalEnd { len: 4096, last_seq: Some(5) })]);
    let too_big = seal(vec![12, 8, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]);
    assert!(VersionEdit::decode(&too_big).unwrap_err().is_corruption());
}

#[test]
fn every_flip_and_truncation_is_corruption() {
    let bytes = full_edit().encode();
    for i in 0..bytes.len() {
        let mut bad = bytes.clone();
        bad[i] ^= 0x04;
        assert!(VersionEdit::decode(&bad).unwrap_err().is_corruption(), "flip at {i}");
    }
    for len in 0..bytes.len() {
        assert!(VersionEdit::decode(&bytes[..len]).unwrap_err().is_corruption(), "cut at {len}");
    }
}

#[test]
fn a_newer_format_version_is_unsupported_not_corruption() {
    // Version 3 first, then a field this build has never heard of: the
    // version is met first, so the answer is "newer", not "damaged".
    let newer = DB_FORMAT_VERSION + 1;
    let body = vec![9, u8::try_from(newer).unwrap(), 99, 0];
    match VersionEdit::decode(&seal(body)) {
        Err(Error::Unsupported { format: "database", found, supported, .. }) => {
            assert_eq!((found, supported), (newer, DB_FORMAT_VERSION));
        }
        other => panic!("{other:?}"),
    }
    // Without the version first, an unknown tag is damage.
    assert!(VersionEdit::decode(&seal(vec![99, 0])).unwrap_err().is_corruption());
    // The current version decodes.
    let edit = VersionEdit { format_version: Some(DB_FORMAT_VERSION), ..VersionEdit::default() };
    assert_eq!(VersionEdit::decode(&edit.encode()).unwrap(), edit);
    assert_eq!(edit.encode()[0], 9, "the version must be the first field");
}

#[test]
fn well_sealed_nonsense_is_corruption() {
    let cases: [&[u8]; 23] = [
        &[99, 0],                                                               // unknown tag
        &[1, 5, 1, 6],                                                          // repeated scalar
        &[6, 7, 1],                                                             // level out of range
        &[2, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01],             // seq 2^56
        &[5, 0, 1, 1, 1, b'b', 1, b'a', 0, 0, 0, 4, b'n', b'o', b'n', b'e', 0], // smallest > largest
        &[5, 0, 1, 1, 0, 0, 5, 4, 0, 4, b'n', b'o', b'p', b'e', 0], // min seq > max seq, bad filter
        &[5, 0, 1, 1, 0, 0, 0, 0, 0, 3, b'z', b'i', b'p', 0],       // unknown filter kind
        &[7, 2, 0xff, 0xfe],                                        // policy not UTF-8
        &[7, 1, b'x', 7, 1, b'y'],                                  // repeated policy
        &[8, 1, b'x', 8, 1, b'y'],                                  // repeated replaced policy
        &[9, 0],                                                    // format version 0
        &[9, 2, 9, 2],                                              // repeated format version
        &[10, 1, 2],                                                // write totals cut short
        &[10, 1, 2, 3, 10, 1, 2, 3],                                // repeated write totals
        &[11, 8],                                                   // WAL end cut short
        &[13, 8, 100, 40, 1],                                       // lost writes cut short
        &[13, 8, 100, 100, 1, 0],                                   // nothing was lost
        &[14, 0x80],                                                // filter memory cut short
        &[14, 5, 14, 6],                                            // repeated filter memory
        &[15, 2, 0xff, 0xfe],                                       // compaction not UTF-8
        &[15, 1, b'x', 15, 1, b'y'],                                // repeated compaction
        &[16, 1, 2],                                                // FIFO drops cut short
        &[16, 1, 2, 3, 16, 1, 2, 3],                                // repeated FIFO drops
    ];
    for body in cases {
        let err = VersionEdit::decode(&seal(body.to_vec())).unwrap_err();
        assert!(err.is_corruption(), "{body:?}: {err}");
    }
    let mut inverted_seq = vec![5, 0, 1, 1, 0, 0, 5, 4, 0, 4];
    inverted_seq.extend_from_slice(b"none");
    inverted_seq.push(0);
    assert!(VersionEdit::decode(&seal(inverted_seq)).unwrap_err().is_corruption());
}

#[test]
fn lost_writes_round_trip_and_say_when_the_count_is_unknown() {
    // Log 8: 100 bytes synced, 40 found, 3 writes lost, at second 9.
    let known = seal(vec![13, 8, 100, 40, 4, 9]);
    let edit = VersionEdit::decode(&known).unwrap();
    let want =
        LostWrites { log_number: 8, synced_len: 100, found_len: 40, writes_lost: Some(3), recovered_at: 9 };
    assert_eq!(edit.lost_writes, [want]);
    assert_eq!(edit.encode(), known);
    let unknown = VersionEdit::decode(&seal(vec![13, 8, 100, 40, 0, 9])).unwrap();
    assert_eq!(unknown.lost_writes[0].writes_lost, None);
}
