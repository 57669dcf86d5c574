//! The values every writing workload puts: windows of one buffer made once
//! (db_bench's `RandomGenerator`), so making a value costs a slice, not
//! `len` random draws inside the timed loop.
//!
//! The buffer is made of 100-byte pieces, as db_bench's is for its
//! `compression_ratio`: a piece starts with `round((1 − F) × 100)` uniformly
//! random bytes (all 256 values: no codec shrinks them) and repeats them to
//! its end, so a fraction F of its bytes (the compressibility) copies the
//! bytes just before. A value starts at a piece's start, so a 100-byte
//! value is exactly one piece and holds F repeated bytes; longer values
//! hold whole pieces and a part of the next. At F = 1 every byte is `a`.

use crate::keys::SplitMix;

/// Bytes per piece (db_bench's).
const PIECE: usize = 100;
/// Pieces values start at: about 1 MiB of them.
const STARTS: usize = (1 << 20) / PIECE;

/// The values of one round (shared by `siftdb bench engine` and `bench ingest`).
pub struct Values {
    buf: Vec<u8>,
    len: usize,
}

// Not derived: the buffer is a mebibyte of bytes no one wants printed.
impl std::fmt::Debug for Values {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Values").field("len", &self.len).finish_non_exhaustive()
    }
}

impl Values {
    /// Values of `len` bytes, a fraction `compressibility` (0 to 1) of
    /// each piece repeated.
    #[must_use]
    pub fn new(len: usize, seed: u64, compressibility: f64) -> Self {
        let mut rng = SplitMix::new(seed ^ 0x7A1E);
        let random = ((1.0 - compressibility.clamp(0.0, 1.0)) * PIECE as f64).round() as usize;
        let pieces = STARTS + len.div_ceil(PIECE) + 1;
        let mut buf = Vec::with_capacity(pieces * PIECE);
        for _ in 0..pieces {
            let start = buf.len();
            buf.extend((0..random).map(|_| rng.next_u64() as u8));
            if random == 0 {
                buf.push(b'a');
            }
            while buf.len() < start + PIECE {
                buf.push(buf[start + (buf.len() - start) % random.max(1)]);
            }
        }
        Values { buf, len }
    }

    /// The value of write number `i`.
    #[must_use]
    pub fn get(&self, i: u64) -> &[u8] {
        let at = (i.wrapping_mul(0x9E37_79B9) % STARTS as u64) as usize * PIECE;
        &self.buf[at..at + self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fraction_of_each_piece_repeats_what_came_before() {
        for (f, random) in [(0.0, 100), (0.5, 50), (0.25, 75), (1.0, 0)] {
            let v = Values::new(100, 7, f);
            for i in 0..50u64 {
                let x = v.get(i);
                assert_eq!(x.len(), 100);
                let r = random.max(1);
                assert!(x[r..].iter().enumerate().all(|(j, &b)| b == x[j % r]), "{f}");
            }
        }
        // Incompressible values are distinct: no window repeats another's bytes.
        let v = Values::new(100, 7, 0.0);
        assert_ne!(v.get(1), v.get(2));
    }
}
