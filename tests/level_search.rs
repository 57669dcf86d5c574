//! Point lookups find their tables through each level's 8-byte key
//! prefixes, falling back to whole keys when prefixes tie: keys that share
//! long prefixes, keys shorter than 8 bytes, keys that are prefixes of one
//! another, with zero bytes and 0xff bytes, spread over many small tables
//! on several levels, all answer as a `BTreeMap` does.

mod common;

use std::collections::BTreeMap;

use siftdb::{Db, Options};

fn keys() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for i in 0..3000u32 {
        // One 8-byte prefix for all: every comparison ties on the prefix.
        out.push(format!("user:000{i:06}").into_bytes());
        // Short keys, some prefixes of others.
        out.push(format!("{i:x}").into_bytes());
        let mut z = vec![b'k', 0, 0];
        z.extend_from_slice(&i.to_be_bytes());
        out.push(z);
        out.push(vec![0xff; 1 + (i as usize % 12)].into_iter().chain(i.to_le_bytes()).collect());
    }
    out.push(Vec::from(&b"user:000"[..]));
    out.push(vec![0]);
    out
}

#[test]
fn lookups_agree_with_a_map_whatever_the_key_prefixes() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        memtable_bytes: 16 << 10,
        table_target_bytes: 8 << 10,
        base_level_bytes: 32 << 10,
        l0_compaction_trigger: 3,
        fs: common::no_sync_fs(),
        hash_salt: Some(3),
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let mut model = BTreeMap::new();
    for (n, k) in keys().into_iter().enumerate() {
        if n % 3 == 1 {
            continue; // absent, between present ones
        }
        let v = (n as u32).to_le_bytes().to_vec();
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    }
    db.flush().unwrap();
    db.compact().unwrap();
    let s = db.stats();
    let deep_levels = s.levels.iter().skip(1).filter(|l| l.tables > 4).count();
    assert!(deep_levels >= 1, "want many tables below level 0: {s}");
    for k in keys() {
        assert_eq!(db.get(&k).unwrap().as_deref(), model.get(&k).map(Vec::as_slice), "{k:?}");
        let mut longer = k.clone();
        longer.push(0);
        assert_eq!(db.get(&longer).unwrap().as_deref(), model.get(&longer).map(Vec::as_slice), "{longer:?}");
    }
    for probe in [
        &b""[..],
        b"\0\0",
        b"user:00",
        b"user:001",
        b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
    ] {
        assert_eq!(db.get(probe).unwrap().as_deref(), model.get(probe).map(Vec::as_slice), "{probe:?}");
    }
}
