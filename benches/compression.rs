//! Block codecs on a real 4 KiB data block (keys `user-key-NNNNNNNNNN`,
//! 100-byte values half random and half repeated text): compress and
//! decompress throughput of lz4 (`lz4_flex`) and zstd at levels 1 and 3,
//! through the functions tables use. docs/measurements.md has the figures
//! and the comparison with the crates considered instead.
//!
//! Quick run: `cargo bench --bench compression -- --warm-up-time 1 --measurement-time 2`

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use siftdb::ValueKind;
use siftdb::filter::FilterKind;
use siftdb::table::compression::{BlockCompressor, CODEC_RAW, decompress_block};
use siftdb::table::{Compression, Table, TableBuilder, TableOptions};

/// The first data block of a raw table, as a table stores it.
fn real_block() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.sst");
    let opts = TableOptions { filter: FilterKind::None, ..TableOptions::default() };
    let mut b = TableBuilder::create(&path, opts).unwrap();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..200u64 {
        let mut value: Vec<u8> = (0..50)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x.to_le_bytes()[2]
            })
            .collect();
        value.extend(b"the quick brown fox jumps over the lazy dog, again".iter().take(50));
        b.add(format!("user-key-{i:010}").as_bytes(), i + 1, ValueKind::Value, &value).unwrap();
    }
    b.finish().unwrap();
    let t = Table::open_path(&path).unwrap();
    let h = t.data_block_handles().unwrap()[0];
    std::fs::read(&path).unwrap()[h.offset as usize..(h.offset + u64::from(h.size)) as usize].to_vec()
}

fn codecs(c: &mut Criterion) {
    let raw = real_block();
    let mut g = c.benchmark_group("block_4k");
    g.throughput(Throughput::Bytes(raw.len() as u64));
    for codec in [Compression::Lz4, Compression::Zstd { level: 1 }, Compression::Zstd { level: 3 }] {
        let mut z = BlockCompressor::new(codec).unwrap();
        let (stored, nibble) = z.compress(&raw);
        let stored = stored.to_vec();
        assert_ne!(nibble, CODEC_RAW, "{codec}: the block compresses");
        #[expect(clippy::cast_precision_loss, reason = "a ratio for display")]
        let ratio = stored.len() as f64 / raw.len() as f64;
        eprintln!("{codec}: {} raw bytes stored as {} ({ratio:.3})", raw.len(), stored.len());
        g.bench_function(format!("decompress/{codec}"), |b| {
            b.iter(|| decompress_block(nibble, black_box(&stored), 1 << 16).unwrap());
        });
        g.bench_function(format!("compress/{codec}"), |b| {
            b.iter(|| z.compress(black_box(&raw)).1);
        });
    }
    g.finish();
}

criterion_group!(benches, codecs);
criterion_main!(benches);
