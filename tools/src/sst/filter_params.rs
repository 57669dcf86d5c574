//! A table's filter in full: the parameters inside the filter's own
//! encoding, decoded through the filter types' accessors.

use std::path::Path;

use serde_json::{Value, json};
use siftdb::filter::{BinaryFuse, BlockedBloom, Bloom, Filter, Fingerprint, Xor};
use siftdb::table::filter_block::{FILTER_HEADER_LEN, TableFilter};
use siftdb::table::format::Footer;

/// The kind-specific parameters of the table's filter as JSON fields, or
/// `None` if there is no filter block or it cannot be decoded (which
/// [`siftdb::table::Table::filter_details`] already reports). Call it only
/// for a table whose filter loaded: opening checked the block's crc, so
/// the bytes are sliced here without checking it again.
#[must_use]
pub fn filter_params(path: &Path) -> Option<Value> {
    let file = std::fs::read(path).ok()?;
    let footer = Footer::decode(&file).ok()?;
    if footer.filter.is_null() {
        return None;
    }
    let start = usize::try_from(footer.filter.offset).ok()?;
    let block = file.get(start..start.checked_add(footer.filter.size as usize)?)?;
    let header = TableFilter::decode(block).ok()?.header();
    let body = block.get(FILTER_HEADER_LEN..)?;
    match header.tag {
        1 => Bloom::decode(body).ok().map(|f| {
            json!({
                "probes": f.num_probes(),
                "bits": f.num_bits(),
                "keys_inserted": f.keys_inserted(),
                "encoded_bytes": body.len(),
                "in_memory_bytes": f.size_bytes(),
            })
        }),
        2 => BlockedBloom::decode(body).ok().map(|f| {
            json!({
                "probes": f.num_probes(),
                "blocks": f.num_blocks(),
                "block_bits": 512,
                "bits": f.num_bits(),
                "keys_inserted": f.keys_inserted(),
                "encoded_bytes": body.len(),
                "in_memory_bytes": f.size_bytes(),
            })
        }),
        3 => Xor::<u8>::decode(body).ok().map(|f| xor_params(&f, body.len())),
        4 => Xor::<u16>::decode(body).ok().map(|f| xor_params(&f, body.len())),
        5 => BinaryFuse::<u8>::decode(body).ok().map(|f| fuse_params(&f, body.len())),
        6 => BinaryFuse::<u16>::decode(body).ok().map(|f| fuse_params(&f, body.len())),
        _ => None,
    }
}

fn xor_params<F: Fingerprint>(f: &Xor<F>, encoded: usize) -> Value {
    json!({
        "fingerprint_bits": f.fingerprint_bits(),
        "filter_seed": f.seed(),
        "keys": f.keys(),
        "cells": f.cells(),
        "block_length": f.block_length(),
        "encoded_bytes": encoded,
        "in_memory_bytes": f.size_bytes(),
    })
}

fn fuse_params<F: Fingerprint>(f: &BinaryFuse<F>, encoded: usize) -> Value {
    json!({
        "fingerprint_bits": f.fingerprint_bits(),
        "filter_seed": f.seed(),
        "keys": f.keys(),
        "cells": f.cells(),
        "segment_length": f.segment_length(),
        "segment_count": f.segment_count(),
        "encoded_bytes": encoded,
        "in_memory_bytes": f.size_bytes(),
    })
}
