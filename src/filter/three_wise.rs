//! What xor and binary fuse filters share once built: a seed, a key count,
//! a cell layout and one fingerprint per cell, queried by xoring a key's
//! three cells.
//!
//! The two filters differ only in their [`Layout`] (three equal blocks, or
//! overlapping segments) and in the geometry fields of their encoding. The
//! common part of both encodings, drawn in full in each filter's module:
//!
//! ```text
//! offset  size   field
//! 0       1      kind (0x11/0x12 xor, 0x21/0x22 binary fuse)
//! 1       1      version: 1
//! 2       8      seed (u64 LE)
//! 10      4      keys (u32 LE)
//! 14      G      geometry, the layout's own fields
//! 14+G    C·B    fingerprints, C = cells, B = 1 or 2 bytes (LE)
//! end−4   4      crc32 of every byte before it (codec::seal)
//! ```

use super::BuildError;
use super::fingerprint::Fingerprint;
use super::peel::{self, Constructed, Layout};
use crate::codec::{Reader, seal, unseal};
use crate::{Error, Result};

const VERSION: u8 = 1;

/// Bytes of the common header: kind, version, seed, keys.
const COMMON_HEADER_LEN: usize = 14;

/// Offset of the geometry fields in the encoding.
pub(crate) const GEOMETRY_OFFSET: u64 = COMMON_HEADER_LEN as u64;

/// A built 3-wise filter body. Invariant (relied on by the unchecked reads
/// in [`ThreeWise::contains`]): `fingerprints.len() == layout.cells_len()`;
/// [`ThreeWise::build`] allocates it so (through `peel::construct`) and
/// [`ThreeWise::decode`] rejects anything else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ThreeWise<F, L> {
    pub(crate) seed: u64,
    pub(crate) keys: u32,
    pub(crate) layout: L,
    pub(crate) fingerprints: Box<[F]>,
}

impl<F: Fingerprint, L: Layout> ThreeWise<F, L> {
    /// Peels with up to `max_attempts` seeds and validates the result
    /// against every input hash (in peel order when the peel could show it
    /// holds exactly the input, see [`peel::Peeled`]; else in input order).
    pub(crate) fn build(
        hashes: &[u64],
        max_attempts: u32,
        layout_for: impl Fn(usize) -> std::result::Result<L, BuildError>,
    ) -> std::result::Result<Self, BuildError> {
        let Constructed { seed, layout, fingerprints, keys, peeled } =
            peel::construct::<F, _>(hashes, max_attempts, layout_for)?;
        let keys = u32::try_from(keys).map_err(|_| BuildError::TooManyKeys { keys, max: peel::MAX_KEYS })?;
        let f = ThreeWise { seed, keys, layout, fingerprints };
        match peeled {
            Some(peeled) => f.validate(peeled.hashes())?,
            None => f.validate(hashes.iter().copied())?,
        }
        Ok(f)
    }

    /// `ValidationFailed` naming the first of `hashes`, in the order given,
    /// that the filter rejects.
    pub(crate) fn validate(
        &self,
        hashes: impl IntoIterator<Item = u64>,
    ) -> std::result::Result<(), BuildError> {
        match hashes.into_iter().find(|&h| !self.contains(h)) {
            Some(hash) => Err(BuildError::ValidationFailed { hash }),
            None => Ok(()),
        }
    }

    #[inline]
    pub(crate) fn contains(&self, hash: u64) -> bool {
        let h = peel::mix(hash, self.seed);
        let [a, b, c] = self.layout.cells(h);
        let fp = &self.fingerprints;
        // SAFETY: `Layout` keeps a, b, c below cells_len, and the array
        // always has exactly cells_len entries (the type's invariant).
        // Unchecked: measured ~10% faster.
        let (fa, fb, fc) = unsafe { (*fp.get_unchecked(a), *fp.get_unchecked(b), *fp.get_unchecked(c)) };
        F::from_hash(h) ^ fa ^ fb ^ fc == F::default()
    }

    pub(crate) fn size_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + std::mem::size_of_val::<[F]>(&self.fingerprints)
    }

    pub(crate) fn theoretical_fpr() -> f64 {
        (-f64::from(F::BITS)).exp2()
    }

    /// Bytes of an encoding with `geometry_len` bytes of geometry and `cells` cells.
    pub(crate) fn encoded_len(geometry_len: usize, cells: usize) -> usize {
        COMMON_HEADER_LEN + geometry_len + cells * F::BYTES + 4
    }

    /// The sealed encoding, with `geometry` as the layout's fields.
    pub(crate) fn encode(&self, kind: u8, geometry: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::encoded_len(geometry.len(), self.fingerprints.len()));
        out.push(kind);
        out.push(VERSION);
        out.extend_from_slice(&self.seed.to_le_bytes());
        out.extend_from_slice(&self.keys.to_le_bytes());
        out.extend_from_slice(geometry);
        F::write_all_le(&self.fingerprints, &mut out);
        seal(out)
    }

    /// Parses an encoding of `kind`; `name` ("xor", "binary fuse") goes in
    /// error messages and `geometry` reads and checks the layout's fields.
    pub(crate) fn decode(
        bytes: &[u8],
        kind: u8,
        name: &str,
        geometry: impl FnOnce(&mut Reader<'_>) -> Result<L>,
    ) -> Result<Self> {
        let mut r = Reader::new(unseal(bytes)?);
        let found = r.u8()?;
        if found != kind {
            return Err(Error::corruption(0, format!("kind {found:#04x} is not {name}{}", F::BITS)));
        }
        let version = r.u8()?;
        if version != VERSION {
            return Err(Error::corruption(1, format!("unknown {name} filter version {version}")));
        }
        let seed = r.u64()?;
        let keys = r.u32()?;
        let layout = geometry(&mut r)?;
        let cells = layout.cells_len();
        if keys as usize > cells {
            return Err(Error::corruption(10, format!("{keys} keys cannot fit {cells} cells")));
        }
        let at = r.position();
        let expected = cells * F::BYTES;
        if r.remaining() != expected {
            return Err(Error::corruption(
                at as u64,
                format!("fingerprints take {} bytes, the geometry needs {expected}", r.remaining()),
            ));
        }
        let fingerprints = F::read_all_le(r.bytes(expected)?).into_boxed_slice();
        Ok(ThreeWise { seed, keys, layout, fingerprints })
    }

    /// Flips bits of the first cell of `hash` (tests of validation).
    #[cfg(test)]
    pub(crate) fn damage_first_cell_of(&mut self, hash: u64) {
        let cell = self.layout.cells(peel::mix(hash, self.seed))[0];
        self.fingerprints[cell] = self.fingerprints[cell] ^ F::from_hash(1);
    }
}
