//! Keys in db_bench's layout for the engine-level benches
//! (`benches/memtable.rs`, `benches/scans.rs`), so both time the same keys.

/// `n` keys: a pseudo-random number's 8 bytes big-endian, then eight
/// `tail` bytes (`b'0'` for present keys; `b'1'` gives absent keys inside
/// the same key range).
pub fn keys(n: usize, tail: u8) -> Vec<[u8; 16]> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut k = [tail; 16];
            k[..8].copy_from_slice(&x.to_be_bytes());
            k
        })
        .collect()
}
