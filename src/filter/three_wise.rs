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

use std::fmt;

use bytes::Bytes;

use super::fingerprint::Fingerprint;
use super::kind::{KindSpec, decoder};
use super::peel::{self, Constructed, LOOKAHEAD, Layout};
use super::zeroed_buf::ZeroedBuf;
use super::{BuildError, Filter, FilterCodec};
use crate::codec::{Reader, seal, unseal};
use crate::{Error, Result};

const VERSION: u8 = 1;

/// Bytes of the common header: kind, version, seed, keys.
const COMMON_HEADER_LEN: usize = 14;

/// Offset of the geometry fields in the encoding.
pub(crate) const GEOMETRY_OFFSET: u64 = COMMON_HEADER_LEN as u64;

/// What a 3-wise filter's layout adds to the shared code: its encoding
/// fields and its sizing. Implemented by [`XorLayout`](super::XorLayout)
/// and [`FuseLayout`](super::FuseLayout) only (the trait is not nameable
/// outside the crate).
pub trait Geometry: Layout + Copy + fmt::Debug + PartialEq + Send + Sync + 'static {
    /// The encoding's kind byte, less the fingerprint bytes (0x10 xor, 0x20 fuse).
    const KIND_BASE: u8;
    /// The filter's name in error messages.
    const NAME: &'static str;
    /// Cells per key for a large key set (xor 1.23, binary fuse ~1.125).
    const CELLS_PER_KEY: f64;
    /// Bytes of the geometry fields.
    const LEN: usize;
    /// The layout for `n` distinct keys.
    ///
    /// # Errors
    /// `TooManyKeys` beyond [`peel::MAX_KEYS`].
    fn for_keys(n: usize) -> std::result::Result<Self, BuildError>;
    /// Appends the geometry fields.
    fn write(&self, out: &mut Vec<u8>);
    /// Reads and checks the geometry fields.
    ///
    /// # Errors
    /// `Corruption` for a geometry no build could produce.
    fn read(r: &mut Reader<'_>) -> Result<Self>;
    /// The geometry's parameters, for inspection.
    fn parameters(&self) -> Vec<(&'static str, u64)>;
    /// Three cells shared by every key: only one distinct key can peel.
    #[cfg(test)]
    fn cramped() -> Self;
}

/// A static filter whose key owns three cells of fingerprints, reported
/// present when the xor of the three equals its fingerprint: the xor filter
/// ([`Xor`](super::Xor), layout [`XorLayout`](super::XorLayout)) and the
/// binary fuse filter ([`BinaryFuse`](super::BinaryFuse), layout
/// [`FuseLayout`](super::FuseLayout)), with fingerprints of type `F` (`u8`
/// or `u16`).
///
/// Invariant (relied on by the unchecked reads in `contains`):
/// `fingerprints.len() == layout.cells_len()`; the build allocates it so
/// (through `peel::construct`) and `decode` rejects anything else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreeWise<F: Fingerprint, L> {
    pub(crate) seed: u64,
    pub(crate) keys: u32,
    pub(crate) layout: L,
    pub(crate) fingerprints: ZeroedBuf<F>,
}

impl<F: Fingerprint, L: Geometry> ThreeWise<F, L> {
    #[expect(clippy::cast_possible_truncation, reason = "BITS / 8 is 1 or 2")]
    const KIND: u8 = L::KIND_BASE | (F::BITS / 8) as u8;

    /// Builds the filter from a set of hashes (duplicates allowed, and
    /// removed), then checks that it contains every one of them.
    ///
    /// # Errors
    /// [`BuildError::PeelingFailed`] when no seed of 100 peels,
    /// [`BuildError::ValidationFailed`] if the result rejects an input hash,
    /// [`BuildError::TooManyKeys`] beyond 2^31 keys.
    pub fn build(hashes: &[u64]) -> std::result::Result<Self, BuildError> {
        Self::build_with(hashes, peel::MAX_ATTEMPTS, L::for_keys)
    }

    /// The seed the input hashes are remixed with.
    #[must_use]
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Distinct keys the filter was built from.
    #[must_use]
    pub fn keys(&self) -> usize {
        self.keys as usize
    }

    /// Cells (fingerprints) in the array.
    #[must_use]
    pub fn cells(&self) -> usize {
        self.fingerprints.len()
    }

    /// Bits per fingerprint.
    #[must_use]
    pub fn fingerprint_bits(&self) -> u32 {
        F::BITS
    }

    /// Peels with up to `max_attempts` seeds and validates the result
    /// against every input hash (in peel order when the peel could show it
    /// holds exactly the input, see [`peel::Peeled`]; else in input order).
    pub(crate) fn build_with(
        hashes: &[u64],
        max_attempts: u32,
        layout_for: impl Fn(usize) -> std::result::Result<L, BuildError>,
    ) -> std::result::Result<Self, BuildError> {
        let Constructed { seed, layout, fingerprints, keys, peeled } =
            peel::construct::<F, _>(hashes, max_attempts, layout_for)?;
        let keys = u32::try_from(keys).map_err(|_| BuildError::TooManyKeys { keys, max: peel::MAX_KEYS })?;
        let f = ThreeWise { seed, keys, layout, fingerprints };
        match peeled {
            Some(peeled) => {
                if let Some(h) = f.first_rejected(peeled.mixed()) {
                    return Err(BuildError::ValidationFailed { hash: peel::unmix(h, f.seed) });
                }
            }
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

    /// Bytes of an encoding with `cells` cells.
    fn encoded_bytes(cells: usize) -> usize {
        COMMON_HEADER_LEN + L::LEN + cells * F::BYTES + 4
    }

    /// [`ThreeWise::first_rejected`] over `hashes` remixed, unmixed again
    /// (tests of the build's validation walk).
    #[cfg(test)]
    pub(crate) fn first_rejected_of(&self, hashes: &[u64]) -> Option<u64> {
        let mixed: Vec<u64> = hashes.iter().map(|&h| peel::mix(h, self.seed)).collect();
        self.first_rejected(&mixed).map(|h| peel::unmix(h, self.seed))
    }

    /// Flips bits of the first cell of `hash` (tests of validation).
    #[cfg(test)]
    pub(crate) fn damage_first_cell_of(&mut self, hash: u64) {
        let cell = self.layout.cells(peel::mix(hash, self.seed))[0];
        self.fingerprints[cell] = self.fingerprints[cell] ^ F::from_hash(1);
    }
}

impl<F: Fingerprint, L: Geometry> ThreeWise<F, L> {
    /// The first remixed hash of `mixed`, read from its end, that the
    /// filter rejects.
    ///
    /// An xor filter's cells are spread over the whole array, so beyond the
    /// cache every probe misses; the cells of the key [`LOOKAHEAD`] places
    /// ahead are asked for early, so the misses overlap. (A binary fuse
    /// filter's keys, in peel order, land near each other already.)
    fn first_rejected(&self, mixed: &[u64]) -> Option<u64> {
        for i in (0..mixed.len()).rev() {
            if !L::LOCAL
                && let Some(&ahead) = i.checked_sub(LOOKAHEAD).and_then(|j| mixed.get(j))
            {
                self.prefetch_mixed(ahead);
            }
            let h = mixed[i];
            if !self.contains_mixed(h) {
                return Some(h);
            }
        }
        None
    }

    #[inline]
    fn prefetch_mixed(&self, h: u64) {
        peel::prefetch_cells(&self.fingerprints, self.layout.cells(h));
    }

    /// [`Filter::contains`] of the key whose remixed hash is `h`.
    #[inline]
    fn contains_mixed(&self, h: u64) -> bool {
        let [a, b, c] = self.layout.cells(h);
        let fp = &self.fingerprints;
        // SAFETY: `Layout` keeps a, b, c below cells_len, and the array
        // always has exactly cells_len entries (the type's invariant).
        // Unchecked: measured ~10% faster.
        let (fa, fb, fc) = unsafe { (*fp.get_unchecked(a), *fp.get_unchecked(b), *fp.get_unchecked(c)) };
        F::from_hash(h) ^ fa ^ fb ^ fc == F::default()
    }
}

impl<F: Fingerprint, L: Geometry> Filter for ThreeWise<F, L> {
    #[inline]
    fn contains(&self, hash: u64) -> bool {
        self.contains_mixed(peel::mix(hash, self.seed))
    }

    #[inline]
    fn prefetch(&self, hash: u64) {
        self.prefetch_mixed(peel::mix(hash, self.seed));
    }

    fn size_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + std::mem::size_of_val::<[F]>(&self.fingerprints)
    }

    fn theoretical_fpr(&self) -> f64 {
        (-f64::from(F::BITS)).exp2()
    }
}

impl<F: Fingerprint, L: Geometry> ThreeWise<F, L> {
    /// [`FilterCodec::decode`], the fingerprints viewed in place in
    /// `shared` (holding `bytes`) where they are aligned.
    fn decode_in(bytes: &[u8], shared: Option<&Bytes>) -> Result<Self> {
        let mut r = Reader::new(unseal(bytes)?);
        let found = r.u8()?;
        if found != Self::KIND {
            return Err(Error::corruption(0, format!("kind {found:#04x} is not {}{}", L::NAME, F::BITS)));
        }
        let version = r.u8()?;
        if version != VERSION {
            return Err(Error::corruption(1, format!("unknown {} filter version {version}", L::NAME)));
        }
        let seed = r.u64()?;
        let keys = r.u32()?;
        let layout = L::read(&mut r)?;
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
        let stored = r.bytes(expected)?;
        let fingerprints = shared.and_then(|s| ZeroedBuf::view(s, stored)).unwrap_or_else(|| {
            let mut fingerprints = ZeroedBuf::kept(cells);
            F::read_all_le(stored, &mut fingerprints);
            fingerprints
        });
        Ok(ThreeWise { seed, keys, layout, fingerprints })
    }
}

impl<F: Fingerprint, L: Geometry> FilterCodec for ThreeWise<F, L> {
    /// Serialises the filter (format in the layout's module docs).
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::encoded_bytes(self.fingerprints.len()));
        out.push(Self::KIND);
        out.push(VERSION);
        out.extend_from_slice(&self.seed.to_le_bytes());
        out.extend_from_slice(&self.keys.to_le_bytes());
        self.layout.write(&mut out);
        F::write_all_le(&self.fingerprints, &mut out);
        seal(out)
    }

    /// Parses an encoding of this type.
    ///
    /// # Errors
    /// `Corruption` for bytes that are not a valid encoding of this type.
    fn decode(bytes: &[u8]) -> Result<Self> {
        Self::decode_in(bytes, None)
    }

    fn decode_shared(shared: &Bytes) -> Result<Self> {
        Self::decode_in(shared, Some(shared))
    }

    fn in_place(&self) -> Option<&[u8]> {
        self.fingerprints.shared()
    }

    /// The length of [`FilterCodec::encode`] for `distinct_keys` keys,
    /// without building it (the rate is fixed, so `bits_per_key` is
    /// ignored); `None` beyond 2^31 keys.
    fn encoded_len(distinct_keys: usize, _bits_per_key: f64) -> Option<usize> {
        Some(Self::encoded_bytes(L::for_keys(distinct_keys).ok()?.cells_len()))
    }

    fn array_offset(&self) -> Option<usize> {
        Some(COMMON_HEADER_LEN + L::LEN)
    }

    fn parameters(&self) -> Vec<(&'static str, u64)> {
        let mut out = vec![
            ("fingerprint_bits", u64::from(F::BITS)),
            ("filter_seed", self.seed),
            ("keys", u64::from(self.keys)),
            ("cells", self.cells() as u64),
        ];
        out.extend(self.layout.parameters());
        out
    }
}

/// The table filter kind of `ThreeWise<F, L>` under filter-block `tag`.
pub(crate) const fn kind_spec<F: Fingerprint, L: Geometry>(
    tag: u8,
    name: &'static str,
    aliases: &'static [&'static str],
) -> KindSpec {
    KindSpec {
        tag,
        name,
        aliases,
        is_static: true,
        max_bits_per_key: super::kind::MAX_BITS_PER_KEY,
        nominal_bits_per_key: nominal_bits_per_key::<F, L>,
        theoretical_fpr: fixed_fpr::<F>,
        encoded_len: <ThreeWise<F, L> as FilterCodec>::encoded_len,
        build: build_boxed::<F, L>,
        decode: decoder::<ThreeWise<F, L>>,
    }
}

fn nominal_bits_per_key<F: Fingerprint, L: Geometry>(_: f64) -> f64 {
    L::CELLS_PER_KEY * f64::from(F::BITS)
}

fn fixed_fpr<F: Fingerprint>(_: f64) -> f64 {
    (-f64::from(F::BITS)).exp2()
}

fn build_boxed<F: Fingerprint, L: Geometry>(hashes: &[u64], _: f64, _: i64) -> super::kind::Built {
    Ok(Box::new(ThreeWise::<F, L>::build(hashes)?))
}
