//! The compression policy is the open's, not the database's: each table
//! records its own codec, so a database reopened under another policy reads
//! every table it has and writes new ones with the new codec, and the
//! policy's last-level codec lands on the tree's last level only.

use std::collections::BTreeMap;

use siftdb::{Compression, CompressionPolicy, Db, Error, Options};

fn opts(compression: CompressionPolicy) -> Options {
    Options {
        memtable_bytes: 32 << 10,
        table_target_bytes: 16 << 10,
        base_level_bytes: 64 << 10,
        hash_salt: Some(5),
        auto_compaction: false,
        compression,
        ..Options::default()
    }
}

/// Half repeated text, half bytes that do not repeat: compressible, but
/// not to nothing, so a codec mix-up shows as wrong bytes.
fn value(i: u32, round: u32) -> Vec<u8> {
    let mut v = format!("value of key {i} in round {round}, ").repeat(3).into_bytes();
    let mut x = (u64::from(i) << 8 | u64::from(round)).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for _ in 0..40 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.push(x.to_le_bytes()[0]);
    }
    v
}

fn check(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    for (k, v) in model {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(v.as_slice()), "{}", String::from_utf8_lossy(k));
    }
    let scanned: Vec<(Vec<u8>, Vec<u8>)> =
        db.iter().map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap()).collect();
    assert_eq!(scanned.len(), model.len());
    assert!(scanned.iter().zip(model).all(|((k, v), (mk, mv))| k == mk && v == mv));
}

#[test]
fn reopening_under_another_policy_reads_old_tables_and_writes_new_ones() {
    let dir = tempfile::tempdir().unwrap();
    let mut model = BTreeMap::new();
    let policies = ["none", "lz4", "zstd:1", "lz4+last:zstd:3", "default", "none", "per-level:zstd:9,lz4"];
    let mut newest_file = 0;
    for (round, text) in (0u32..).zip(policies) {
        let policy: CompressionPolicy = text.parse().unwrap();
        let db = Db::open(dir.path(), opts(policy.clone())).unwrap();
        // What earlier policies wrote reads back before anything is rewritten.
        check(&db, &model);
        let n = 4_000u32;
        for i in (0..n).filter(|i| round == 0 || i % (round + 1) == 0) {
            let k = format!("key{:08}", i.wrapping_mul(2_654_435_761) % n).into_bytes();
            let v = value(i, round);
            db.put(&k, &v).unwrap();
            model.insert(k, v);
        }
        db.compact().unwrap();
        check(&db, &model);
        let tables = db.tables();
        let deepest = tables.iter().map(|t| t.level).max().unwrap();
        assert!(deepest >= 2, "{text}: the tree has a middle level");
        for t in tables.iter().filter(|t| t.file_number > newest_file) {
            let want = policy.for_level(t.level, t.level == deepest);
            assert_eq!(t.compression, want, "{text}: table {} on level {}", t.file_number, t.level);
        }
        if policy.last_level().is_some() {
            let last = Compression::Zstd { level: 3 };
            assert!(tables.iter().any(|t| t.level == deepest && t.compression == last), "{text}");
        }
        newest_file = tables.iter().map(|t| t.file_number).max().unwrap();
        db.close().unwrap();
    }
    // Every codec is on disk at once, and the last open reads them all: a
    // flush under no codec lands beside what the last policy wrote (the
    // rounds' compactions may have rewritten every older table).
    let db = Db::open(dir.path(), opts(CompressionPolicy::uniform(Compression::None))).unwrap();
    for i in 0..100u32 {
        let (k, v) = (format!("lastkey{i:04}").into_bytes(), value(i, 99));
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    }
    db.flush().unwrap();
    check(&db, &model);
    let codecs: std::collections::HashSet<_> = db.tables().iter().map(|t| t.compression).collect();
    assert!(codecs.len() >= 2, "{codecs:?}");
}

#[test]
fn a_bad_zstd_level_is_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let bad = CompressionPolicy::uniform(Compression::Lz4).with_last_level(Compression::Zstd { level: 0 });
    match Db::open(dir.path(), opts(bad)) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("compression") && m.contains("zstd"), "{m}"),
        other => panic!("{other:?}"),
    }
}
