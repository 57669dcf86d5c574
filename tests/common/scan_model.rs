//! A `BTreeMap` model of a database's contents, and scans of both turned
//! into comparable pairs.

#![allow(dead_code, reason = "each test binary uses part of this")]

use std::collections::BTreeMap;
use std::ops::{Bound, RangeBounds};

/// What the database should hold.
pub type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Every pair a scan yields, owned (panics on an error).
pub fn pairs(
    it: impl Iterator<Item = siftdb::Result<(bytes::Bytes, bytes::Bytes)>>,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    it.map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec()))).collect::<siftdb::Result<_>>().unwrap()
}

/// The model's pairs whose keys start with `p`, ascending.
pub fn model_prefix(m: &Model, p: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    m.iter().filter(|(k, _)| k.starts_with(p)).map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// The model's pairs within `(lo, hi)`, ascending.
pub fn model_range(m: &Model, lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> Vec<(Vec<u8>, Vec<u8>)> {
    m.iter()
        .filter(|(k, _)| RangeBounds::<[u8]>::contains(&(lo, hi), k.as_slice()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}
