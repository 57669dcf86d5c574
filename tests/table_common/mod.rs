//! Shared helpers for the table integration tests.
#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use siftdb::ValueKind;
use siftdb::filter::FilterKind;
use siftdb::fs::StdFs;
use siftdb::table::{TableBuilder, TableOptions, TableRecord};

/// Filter kinds exercised by every generic test: none, then every kind a
/// table can carry ([`FilterKind::ALL`]).
pub fn kinds() -> Vec<FilterKind> {
    std::iter::once(FilterKind::None).chain(FilterKind::ALL.iter().copied()).collect()
}

/// One entry as the tests write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub key: Vec<u8>,
    pub seq: u64,
    pub kind: ValueKind,
    pub value: Vec<u8>,
}

/// Key `i` of the standard data set: even numbers, so odd ones are absent.
pub fn key(i: u64) -> Vec<u8> {
    format!("user-key-{:08}", i * 2).into_bytes()
}

/// A key that sorts between `key(i)` and `key(i + 1)`.
pub fn absent_key(i: u64) -> Vec<u8> {
    format!("user-key-{:08}", i * 2 + 1).into_bytes()
}

/// `n` keys; every 7th has three versions (newest a tombstone when i % 21 == 0),
/// the rest one value. Sorted in internal-key order.
pub fn rows(n: u64) -> Vec<Row> {
    let mut out = Vec::new();
    for i in 0..n {
        let k = key(i);
        if i % 7 == 0 {
            let newest = if i % 21 == 0 { ValueKind::Tombstone } else { ValueKind::Value };
            for (seq, kind) in [(i + 300, newest), (i + 200, ValueKind::Value), (i + 100, ValueKind::Value)] {
                let value =
                    if kind == ValueKind::Value { format!("v{i}@{seq}").into_bytes() } else { Vec::new() };
                out.push(Row { key: k.clone(), seq, kind, value });
            }
        } else {
            out.push(Row {
                key: k,
                seq: i + 100,
                kind: ValueKind::Value,
                value: format!("v{i}").into_bytes(),
            });
        }
    }
    out
}

pub fn opts(filter: FilterKind) -> TableOptions {
    TableOptions { filter, block_bytes: 512, seed: 42, level: 1, ..TableOptions::default() }
}

pub fn build(path: &Path, filter: FilterKind, rows: &[Row]) -> TableRecord {
    build_with(path, opts(filter), rows)
}

pub fn build_with(path: &Path, opts: TableOptions, rows: &[Row]) -> TableRecord {
    let mut b = TableBuilder::new(Arc::new(StdFs), path, opts).unwrap();
    for r in rows {
        b.add(&r.key, r.seq, r.kind, &r.value).unwrap();
    }
    b.finish().unwrap()
}

pub fn table_path(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}
