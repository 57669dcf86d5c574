//! The ranges of keys `Db::range` and `Snapshot::range` take.

use std::ops::{Bound, Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};

use bytes::Bytes;

/// A range of keys, each bound any `AsRef<[u8]>` a user holds: `"a".."c"`,
/// `b"a"..=b"c"`, `String::from("a")..`, `..key`, `..`, or a pair of
/// [`Bound`]s.
///
/// A trait of its own rather than `RangeBounds<K>`: for `b"a"..b"c"` the
/// standard trait has two answers (`K = &[u8; 1]` and `K = [u8; 1]`) and
/// the call does not compile; here each range type names its key type once.
pub trait KeyRange {
    /// The bounds as owned bytes (copied: the range may borrow the caller's keys).
    fn into_bounds(self) -> (Bound<Bytes>, Bound<Bytes>);
}

fn own<K: AsRef<[u8]>>(b: Bound<&K>) -> Bound<Bytes> {
    match b {
        Bound::Included(k) => Bound::Included(Bytes::copy_from_slice(k.as_ref())),
        Bound::Excluded(k) => Bound::Excluded(Bytes::copy_from_slice(k.as_ref())),
        Bound::Unbounded => Bound::Unbounded,
    }
}

impl<K: AsRef<[u8]>> KeyRange for Range<K> {
    fn into_bounds(self) -> (Bound<Bytes>, Bound<Bytes>) {
        (own(Bound::Included(&self.start)), own(Bound::Excluded(&self.end)))
    }
}

impl<K: AsRef<[u8]>> KeyRange for RangeInclusive<K> {
    fn into_bounds(self) -> (Bound<Bytes>, Bound<Bytes>) {
        (own(Bound::Included(self.start())), own(Bound::Included(self.end())))
    }
}

impl<K: AsRef<[u8]>> KeyRange for RangeFrom<K> {
    fn into_bounds(self) -> (Bound<Bytes>, Bound<Bytes>) {
        (own(Bound::Included(&self.start)), Bound::Unbounded)
    }
}

impl<K: AsRef<[u8]>> KeyRange for RangeTo<K> {
    fn into_bounds(self) -> (Bound<Bytes>, Bound<Bytes>) {
        (Bound::Unbounded, own(Bound::Excluded(&self.end)))
    }
}

impl<K: AsRef<[u8]>> KeyRange for RangeToInclusive<K> {
    fn into_bounds(self) -> (Bound<Bytes>, Bound<Bytes>) {
        (Bound::Unbounded, own(Bound::Included(&self.end)))
    }
}

impl KeyRange for RangeFull {
    fn into_bounds(self) -> (Bound<Bytes>, Bound<Bytes>) {
        (Bound::Unbounded, Bound::Unbounded)
    }
}

impl<K: AsRef<[u8]>> KeyRange for (Bound<K>, Bound<K>) {
    fn into_bounds(self) -> (Bound<Bytes>, Bound<Bytes>) {
        (own(self.0.as_ref()), own(self.1.as_ref()))
    }
}
