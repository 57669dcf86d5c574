//! A deterministic single-threaded workload and the model it must leave:
//! puts, deletes, multi-key batches, and (optionally) flushes and
//! compactions, over a small key space so keys are overwritten often.

#![allow(dead_code, reason = "each test binary uses part of this")]

use std::collections::BTreeMap;

use siftdb::{Db, WriteBatch};

/// The state a database should hold: key -> value (deleted keys absent).
pub type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// A tiny xorshift generator: tests need reproducible randomness, not quality.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    /// Uniform-ish in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
}

/// One step of the workload.
#[derive(Debug, Clone)]
pub enum Op {
    /// `(key, Some(value))` puts, `(key, None)` deletes; one op is one batch.
    Write(Vec<(Vec<u8>, Option<Vec<u8>>)>),
    /// `Db::flush`: every write before it becomes durable.
    Flush,
    /// `Db::compact`.
    Compact,
}

pub fn key(i: u64) -> Vec<u8> {
    format!("key{i:03}").into_bytes()
}

/// `n` ops over `keys` keys; values are unique per op so a recovered
/// value names the op that wrote it. Values are padded to fill memtables
/// quickly.
pub fn ops(seed: u64, n: usize, keys: u64, with_maintenance: bool) -> Vec<Op> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let roll = rng.below(100);
            if with_maintenance && roll < 3 {
                return Op::Flush;
            }
            if with_maintenance && roll < 5 {
                return Op::Compact;
            }
            let width = if roll < 25 { 1 + rng.below(4) } else { 1 };
            let entries = (0..width)
                .map(|j| {
                    let k = key(rng.below(keys));
                    let v = (rng.below(5) != 0).then(|| format!("op{i}.{j}:{}", "x".repeat(40)).into_bytes());
                    (k, v)
                })
                .collect();
            Op::Write(entries)
        })
        .collect()
}

pub fn apply(model: &mut Model, op: &Op) {
    if let Op::Write(entries) = op {
        for (k, v) in entries {
            match v {
                Some(v) => model.insert(k.clone(), v.clone()),
                None => model.remove(k),
            };
        }
    }
}

/// Runs one op against the database.
pub fn run(db: &Db, op: &Op) -> siftdb::Result<()> {
    match op {
        Op::Write(entries) => {
            if let [(k, v)] = entries.as_slice() {
                return match v {
                    Some(v) => db.put(k, v),
                    None => db.delete(k),
                };
            }
            let mut batch = WriteBatch::new();
            for (k, v) in entries {
                match v {
                    Some(v) => batch.put(k, v),
                    None => batch.delete(k),
                }
            }
            db.write(batch)
        }
        Op::Flush => db.flush(),
        Op::Compact => db.compact(),
    }
}

/// Everything the database holds, by a full scan, cross-checked by point
/// reads of every key in `keys` range.
pub fn contents(db: &Db, keys: u64) -> Model {
    let scanned: Model = db.iter().map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap()).collect();
    for i in 0..keys {
        let k = key(i);
        let got = db.get(&k).unwrap().map(|v| v.to_vec());
        assert_eq!(
            got.as_ref(),
            scanned.get(&k),
            "get and scan disagree on {:?}",
            String::from_utf8_lossy(&k)
        );
    }
    scanned
}
