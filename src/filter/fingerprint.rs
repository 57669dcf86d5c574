//! Fingerprint widths shared by the xor and binary fuse filters.
//!
//! Both filters store one fingerprint per cell and answer a query by xoring
//! three cells with the key's own fingerprint. The width is the only thing
//! that differs between `Xor8` and `Xor16` (or `BinaryFuse8` and
//! `BinaryFuse16`), so it is a type parameter bounded by [`Fingerprint`].

use std::fmt::Debug;
use std::ops::BitXor;

use super::zeroed_buf::Plain;

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
}

/// A fingerprint width: implemented for `u8` and `u16` only.
///
/// The false-positive rate of a filter storing these fingerprints is
/// 2^−[`Fingerprint::BITS`].
pub trait Fingerprint:
    Copy + Default + Eq + BitXor<Output = Self> + Debug + Send + Sync + 'static + sealed::Sealed + Plain
{
    /// Bits per fingerprint.
    const BITS: u32;
    /// Bytes per fingerprint in the encoding.
    const BYTES: usize;

    /// The fingerprint of an already remixed key hash: its two 32-bit halves
    /// folded together, so it draws on bits the cell indices use least.
    fn from_hash(hash: u64) -> Self;

    /// Appends `fingerprints` little-endian.
    fn write_all_le(fingerprints: &[Self], out: &mut Vec<u8>);

    /// Fills `out` from `bytes`, whose length the caller has checked is
    /// `out.len()` · [`Fingerprint::BYTES`]; a ragged tail would be ignored.
    fn read_all_le(bytes: &[u8], out: &mut [Self]);
}

impl Fingerprint for u8 {
    const BITS: u32 = 8;
    const BYTES: usize = 1;

    #[inline]
    #[expect(clippy::cast_possible_truncation, reason = "keeping the low bits is the fingerprint")]
    fn from_hash(hash: u64) -> Self {
        (hash ^ (hash >> 32)) as u8
    }

    fn write_all_le(fingerprints: &[Self], out: &mut Vec<u8>) {
        out.extend_from_slice(fingerprints);
    }

    fn read_all_le(bytes: &[u8], out: &mut [Self]) {
        let n = out.len().min(bytes.len());
        out[..n].copy_from_slice(&bytes[..n]);
    }
}

impl Fingerprint for u16 {
    const BITS: u32 = 16;
    const BYTES: usize = 2;

    #[inline]
    #[expect(clippy::cast_possible_truncation, reason = "keeping the low bits is the fingerprint")]
    fn from_hash(hash: u64) -> Self {
        (hash ^ (hash >> 32)) as u16
    }

    fn write_all_le(fingerprints: &[Self], out: &mut Vec<u8>) {
        out.reserve(fingerprints.len() * 2);
        for f in fingerprints {
            out.extend_from_slice(&f.to_le_bytes());
        }
    }

    fn read_all_le(bytes: &[u8], out: &mut [Self]) {
        for (f, c) in out.iter_mut().zip(bytes.chunks_exact(2)) {
            *f = u16::from_le_bytes([c[0], c[1]]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_bit_fingerprints_round_trip_little_endian() {
        let fps = [0x0102u16, 0xfffe, 0];
        let mut out = Vec::new();
        u16::write_all_le(&fps, &mut out);
        assert_eq!(out, [0x02, 0x01, 0xfe, 0xff, 0, 0]);
        let mut back = [1u16; 3];
        u16::read_all_le(&out, &mut back);
        assert_eq!(back, fps);
    }

    #[test]
    fn fingerprints_fold_both_halves() {
        assert_eq!(u8::from_hash(0x0000_0012_0000_0034), 0x26);
        assert_eq!(u16::from_hash(0xabcd_0000_0000_1234), 0x1234);
        assert_eq!(u16::from_hash(0x0000_5678_0000_1234), 0x1234 ^ 0x5678);
    }
}
