//! The filter library on its own: build, query, encode, decode, and the
//! measured false-positive rate beside the theory.
//!
//! `cargo run --release --example filters`

use siftdb::filter::{BinaryFuse8, BlockedBloom, Filter, FilterCodec, hash_key};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let keys: Vec<u64> = (0..100_000u64).map(|i| hash_key(7, &i.to_le_bytes())).collect();
    let absent: Vec<u64> = (100_000..200_000u64).map(|i| hash_key(7, &i.to_le_bytes())).collect();

    // A static filter: built once from every key, validated before it returns.
    let fuse = BinaryFuse8::build(&keys)?;
    // A dynamic one: sized for n keys at b bits per key (checked), then filled.
    let mut bloom = BlockedBloom::try_new(keys.len(), 10.0)?;
    for &h in &keys {
        bloom.insert(h);
    }

    for (name, filter) in [("fuse8", &fuse as &dyn Filter), ("blocked-bloom:10", &bloom as &dyn Filter)] {
        assert!(keys.iter().all(|&h| filter.contains(h)), "no false negatives, ever");
        let false_positives = absent.iter().filter(|&&h| filter.contains(h)).count();
        println!(
            "{name:18} {:6.2} bits/key  fpr {:.4}% (theory {:.4}%)",
            filter.size_bytes() as f64 * 8.0 / keys.len() as f64,
            false_positives as f64 * 100.0 / absent.len() as f64,
            filter.theoretical_fpr() * 100.0
        );
    }

    // Encodings are crc-sealed: decode() rejects damage with a typed error.
    let mut bytes = fuse.encode();
    assert!(BinaryFuse8::decode(&bytes)?.contains(keys[0]));
    bytes[20] ^= 1;
    println!("damaged: {}", BinaryFuse8::decode(&bytes).unwrap_err());
    Ok(())
}
