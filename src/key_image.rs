//! Key images: an order-preserving map from keys to `u64`, which a table's
//! range filter ([`crate::filter::RangeFilter`]) is built over.
//!
//! An image must never decrease in key order: `a ≤ b` implies
//! `image(a) ≤ image(b)`. Then every key of a range `[a, b]` has its image
//! in `[image(a), image(b)]`, and a range filter that finds that interval
//! empty proves the range empty. Keys may share an image (a range within
//! one image value is always "maybe").
//!
//! The default, [`KeyImage::first_bytes`], reads a key's first 8 bytes as a
//! big-endian number, shorter keys padded with zeros: exact for 8-byte ids
//! and timestamps stored big-endian, and for any key whose first 8 bytes
//! tell its neighbours apart. Keys whose first bytes are a constant tag
//! (`user:…`) want a mapping of their own, [`KeyImage::custom`].
//!
//! A table records its image's name beside its range filter, and a scan
//! consults the filter only when that name is the database's current
//! image's: a changed mapping costs speed until compaction rewrites the
//! tables, never an answer.

use std::fmt;
use std::ops::Bound;

use crate::filter::FilterKind;

/// An order-preserving map from keys to `u64`
/// ([`RangeFilterPolicy::image`]).
///
/// ```
/// use siftdb::KeyImage;
/// let be = KeyImage::first_bytes();
/// assert_eq!(be.image(&7u64.to_be_bytes()), 7);
/// assert_eq!(be.image(b"\x01"), 1 << 56);
/// assert!(be.image(b"abc") <= be.image(b"abd"));
/// // Ids after a fixed 5-byte tag, "user:" + 8 bytes big-endian.
/// fn after_tag(k: &[u8]) -> u64 {
///     KeyImage::first_bytes().image(k.get(5..).unwrap_or_default())
/// }
/// let ids = KeyImage::custom("after-5", after_tag);
/// assert_eq!(ids.image(b"user:\0\0\0\0\0\0\0\x09"), 9);
/// ```
#[derive(Clone, Copy)]
pub struct KeyImage {
    name: &'static str,
    map: fn(&[u8]) -> u64,
}

/// The name [`KeyImage::first_bytes`] records in tables.
pub const FIRST_BYTES_IMAGE: &str = "be8";

fn first_bytes(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = key.len().min(8);
    b[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(b)
}

impl KeyImage {
    /// A key's first 8 bytes, big-endian, zero-padded (name `be8`).
    #[must_use]
    pub const fn first_bytes() -> KeyImage {
        KeyImage { name: FIRST_BYTES_IMAGE, map: first_bytes }
    }

    /// A mapping of the caller's. `map` must never decrease in key order
    /// (byte-wise, as the database sorts): a mapping that does makes range
    /// scans miss keys. `name` is recorded in every table built with it:
    /// give a changed mapping a new name, and tables built with the old
    /// one are never probed under the new.
    #[must_use]
    pub const fn custom(name: &'static str, map: fn(&[u8]) -> u64) -> KeyImage {
        KeyImage { name, map }
    }

    /// The image of `key`.
    #[must_use]
    #[inline]
    pub fn image(&self, key: &[u8]) -> u64 {
        (self.map)(key)
    }

    /// The name tables record.
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The images every key within `(start, end)` maps into, inclusive:
    /// an unbounded side is the end of `u64`. An excluded end is kept in:
    /// keys below it may share its image.
    #[must_use]
    pub fn bounds(&self, start: Bound<&[u8]>, end: Bound<&[u8]>) -> (u64, u64) {
        let lo = match start {
            Bound::Included(k) | Bound::Excluded(k) => self.image(k),
            Bound::Unbounded => 0,
        };
        let hi = match end {
            Bound::Included(k) | Bound::Excluded(k) => self.image(k),
            Bound::Unbounded => u64::MAX,
        };
        (lo, hi)
    }
}

/// What a table's range filter is built from: the image of its keys and
/// the point filter over their buckets.
///
/// ```
/// use siftdb::{FilterKind, KeyImage, RangeFilterPolicy};
/// let p = RangeFilterPolicy::default();
/// assert_eq!((p.image, p.kind), (KeyImage::first_bytes(), FilterKind::Ribbon { bits_per_key: 10.0 }));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RangeFilterPolicy {
    /// How keys map to the filter's `u64` images.
    pub image: KeyImage,
    /// The point filter over the non-empty buckets, at its bits per bucket
    /// (about one bucket per key on sparse keys, fewer on dense ones).
    /// Default Ribbon at 10 bits: a 2-bucket probe errs about 0.3% of the
    /// time ([`crate::filter::RangeFilter`] has the rate).
    pub kind: FilterKind,
}

impl Default for RangeFilterPolicy {
    fn default() -> Self {
        RangeFilterPolicy { image: KeyImage::first_bytes(), kind: FilterKind::Ribbon { bits_per_key: 10.0 } }
    }
}

impl RangeFilterPolicy {
    /// Checks the image's name and the kind's parameters.
    ///
    /// # Errors
    /// `InvalidArgument` for an image name that is empty or longer than 255
    /// bytes (tables record it), a kind that builds nothing (`none`), or
    /// bits per key out of range.
    pub fn validate(&self) -> crate::Result<()> {
        let name = self.image.name();
        if name.is_empty() || name.len() > 255 {
            return Err(crate::Error::InvalidArgument(format!(
                "a key image's name must be 1 to 255 bytes, got {} ({name:?})",
                name.len()
            )));
        }
        if self.kind == FilterKind::None {
            return Err(crate::Error::InvalidArgument(
                "a range filter needs a filter kind: leave the range filter unset for none".into(),
            ));
        }
        self.kind.validate()
    }
}

/// Images are equal when their names are: the name is what a table records.
impl PartialEq for KeyImage {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for KeyImage {}

impl fmt::Debug for KeyImage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyImage({})", self.name)
    }
}

impl Default for KeyImage {
    fn default() -> Self {
        KeyImage::first_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_bytes_never_decreases_in_key_order() {
        let mut keys: Vec<Vec<u8>> = vec![
            vec![],
            vec![0],
            vec![0, 0],
            vec![1],
            vec![1, 0, 0, 0, 0, 0, 0, 0, 9],
            vec![1, 255],
            b"abcdefgh".to_vec(),
            b"abcdefgh\xff\xff".to_vec(),
            b"abcdefgi".to_vec(),
            vec![255; 12],
        ];
        keys.sort();
        let img = KeyImage::first_bytes();
        for w in keys.windows(2) {
            assert!(img.image(&w[0]) <= img.image(&w[1]), "{:?} then {:?}", w[0], w[1]);
        }
        assert_eq!(img.image(&[255; 12]), u64::MAX);
        assert_eq!(img.bounds(Bound::Unbounded, Bound::Excluded(b"\x01")), (0, 1 << 56));
        assert_eq!(img.bounds(Bound::Included(b"\x02"), Bound::Unbounded), (2 << 56, u64::MAX));
    }

    #[test]
    fn policies_with_unusable_names_or_kinds_are_refused() {
        let ok = RangeFilterPolicy::default();
        assert!(ok.validate().is_ok());
        let named = |name| RangeFilterPolicy { image: KeyImage::custom(name, first_bytes), ..ok };
        assert!(named("").validate().unwrap_err().to_string().contains("1 to 255 bytes"));
        let long: &'static str = Box::leak("x".repeat(256).into_boxed_str());
        assert!(named(long).validate().is_err() && named(&long[..255]).validate().is_ok());
        let none = RangeFilterPolicy { kind: FilterKind::None, ..ok };
        assert!(none.validate().unwrap_err().to_string().contains("needs a filter kind"));
        let bad_bits = RangeFilterPolicy { kind: FilterKind::Ribbon { bits_per_key: 0.1 }, ..ok };
        assert!(bad_bits.validate().is_err());
    }

    #[test]
    fn images_compare_by_name() {
        fn zero(_: &[u8]) -> u64 {
            0
        }
        assert_eq!(KeyImage::custom(FIRST_BYTES_IMAGE, zero), KeyImage::first_bytes());
        assert_ne!(KeyImage::custom("zero", zero), KeyImage::first_bytes());
        assert_eq!(format!("{:?}", KeyImage::default()), "KeyImage(be8)");
    }
}
