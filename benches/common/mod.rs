//! Inputs and peer filters shared by the filter benchmarks
//! (`benches/filters.rs`, `benches/peers.rs`), so both time the same sets.

use siftdb::filter::{BinaryFuse8, BlockedBloom, Xor8, hash_key};

/// Bits per key for the Bloom filters and their peer.
pub const BPK: f64 = 10.0;

/// `n` key hashes, for key numbers `from..from + n`.
pub fn keys(from: u64, n: usize) -> Vec<u64> {
    (from..from + n as u64).map(|i| hash_key(0, &i.to_le_bytes())).collect()
}

/// fastbloom at [`BPK`] bits per key, holding `k`.
pub fn fastbloom_build(k: &[u64]) -> fastbloom::BloomFilter {
    let mut f =
        fastbloom::BloomFilter::with_num_bits((k.len() as f64 * BPK) as usize).expected_items(k.len());
    for &h in k {
        f.insert_hash(h);
    }
    f
}

/// Our blocked Bloom filter at [`BPK`] bits per key, holding `k`.
pub fn blocked_build(k: &[u64]) -> BlockedBloom {
    let mut f = BlockedBloom::new(k.len(), BPK);
    for &h in k {
        f.insert(h);
    }
    f
}

/// The filters both benchmarks query, ours beside each peer, all holding
/// the same keys.
pub struct QuerySet {
    pub fuse8: BinaryFuse8,
    pub xorf_fuse8: xorf::BinaryFuse8,
    pub xor8: Xor8,
    pub xorf_xor8: xorf::Xor8,
    pub blocked: BlockedBloom,
    pub fastbloom: fastbloom::BloomFilter,
}

impl QuerySet {
    /// Builds every filter over `k`.
    pub fn new(k: &[u64]) -> Self {
        QuerySet {
            fuse8: BinaryFuse8::build(k).expect("builds"),
            xorf_fuse8: xorf::BinaryFuse8::try_from(k).expect("builds"),
            xor8: Xor8::build(k).expect("builds"),
            xorf_xor8: xorf::Xor8::from(k),
            blocked: blocked_build(k),
            fastbloom: fastbloom_build(k),
        }
    }
}
