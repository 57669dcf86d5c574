//! Four writers, four readers and a flusher for about three seconds: every
//! read sees a value that was written for its key, nothing deadlocks, and
//! the final state holds each writer's last write.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use siftdb::{Db, Options};

const KEYS: u64 = 64;

fn value_for(writer: u64, key: u64, round: u64) -> Vec<u8> {
    format!("w{writer}-k{key}-r{round}").into_bytes()
}

#[test]
fn writers_readers_and_flushes_agree() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options { memtable_bytes: 16 << 10, hash_salt: Some(9), ..Options::default() };
    let db = Db::open(dir.path(), opts).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut writers = Vec::new();
    for w in 0..4u64 {
        let db = db.clone();
        let stop = Arc::clone(&stop);
        writers.push(std::thread::spawn(move || {
            let mut round = 0;
            while !stop.load(Ordering::Relaxed) {
                for k in 0..KEYS {
                    db.put(format!("w{w}-k{k}").as_bytes(), value_for(w, k, round)).unwrap();
                }
                round += 1;
            }
            round - 1
        }));
    }
    let mut readers = Vec::new();
    for r in 0..4u64 {
        let db = db.clone();
        let stop = Arc::clone(&stop);
        readers.push(std::thread::spawn(move || {
            let mut seen = 0u64;
            let mut i = r;
            while !stop.load(Ordering::Relaxed) {
                let (w, k) = (i % 4, (i / 4) % KEYS);
                let key = format!("w{w}-k{k}");
                if let Some(v) = db.get(key.as_bytes()).unwrap() {
                    assert!(v.starts_with(format!("{key}-r").as_bytes()), "{key} -> {v:?}");
                    seen += 1;
                }
                if i % 97 == 0 {
                    for item in db.prefix(format!("w{w}-").as_bytes()) {
                        let (k, v) = item.unwrap();
                        assert!(v.starts_with(&k), "{k:?} -> {v:?}");
                    }
                }
                i = i.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407) >> 1;
            }
            seen
        }));
    }
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(300));
        db.flush().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let last_rounds: Vec<u64> = writers.into_iter().map(|t| t.join().unwrap()).collect();
    let seen: u64 = readers.into_iter().map(|t| t.join().unwrap()).sum();
    assert!(seen > 0);
    for (w, &round) in last_rounds.iter().enumerate() {
        for k in 0..KEYS {
            let got = db.get(format!("w{w}-k{k}").as_bytes()).unwrap().unwrap();
            assert_eq!(got, value_for(w as u64, k, round));
        }
    }
    assert!(db.stats().flushes >= 3, "{:?}", db.stats());
}
