//! Prefix extractors: which leading bytes of a key a table's filter also
//! holds, so that a scan of one prefix can skip every table without it.
//!
//! An extractor maps a key to its prefix, or to nothing for a key outside
//! its domain (shorter than a fixed length, or without the delimiter). The
//! two kinds share the property prefix filtering rests on: if `p` has a
//! prefix `q`, then every key starting with `p` has the same prefix `q`
//! ([`PrefixExtractor::extract`] is stable under extension). So a scan of
//! the keys starting with `p` may skip a table whose filter lacks `q`, and
//! a scan of a range whose keys all start with `q` likewise
//! ([`PrefixExtractor::prefix_of_range`]).
//!
//! A table records the extractor it was written with, by name
//! ([`PrefixExtractor::name`], `fixed:8` or `up-to:0x3a`). A scan consults a
//! table's prefix entries only when that name is the database's current
//! extractor's: a changed extractor costs speed, never a wrong answer.

use std::fmt;
use std::ops::Bound;
use std::str::FromStr;

use crate::filter::hash_key;
use crate::{Error, Result};

/// Which leading bytes of a key are its prefix, for prefix filters
/// ([`crate::Options::prefix_extractor`]).
///
/// ```
/// use siftdb::PrefixExtractor;
/// let by_user = PrefixExtractor::up_to(b':');
/// assert_eq!(by_user.extract(b"user42:name"), Some(&b"user42:"[..]));
/// assert_eq!(by_user.extract(b"no-delimiter"), None);
/// let fixed = PrefixExtractor::fixed(4);
/// assert_eq!(fixed.extract(b"abcdef"), Some(&b"abcd"[..]));
/// assert_eq!(fixed.extract(b"abc"), None);
/// assert_eq!(fixed.name(), "fixed:4");
/// assert_eq!("up-to:0x3a".parse::<PrefixExtractor>().unwrap(), by_user);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PrefixExtractor(Rule);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Rule {
    Fixed(usize),
    UpTo(u8),
}

/// The largest fixed prefix length accepted: the longest key
/// ([`crate::MAX_KEY_BYTES`]).
pub const MAX_FIXED_PREFIX: usize = 65_535;

/// Xored into a table's hash seed for prefix entries, so that a prefix and
/// a whole key with the same bytes are different filter entries (a key
/// `ab` present must not make the prefix `ab` look present, nor the
/// reverse, beyond the filter's false-positive rate).
const PREFIX_SEED: u64 = 0x7072_6566_6978_2d31;

impl PrefixExtractor {
    /// The first `n` bytes; keys shorter than `n` have no prefix. `n` must be
    /// from 1 to [`MAX_FIXED_PREFIX`] ([`crate::Options::validate`] says so).
    #[must_use]
    pub const fn fixed(n: usize) -> Self {
        PrefixExtractor(Rule::Fixed(n))
    }

    /// The bytes through the first `delimiter`, delimiter included; keys
    /// without it have no prefix.
    #[must_use]
    pub const fn up_to(delimiter: u8) -> Self {
        PrefixExtractor(Rule::UpTo(delimiter))
    }

    /// The prefix of `key`, or `None` if `key` is outside the extractor's
    /// domain (such keys add no prefix entry, and a scan whose prefix has
    /// none cannot use the filter).
    #[must_use]
    pub fn extract<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        match self.0 {
            Rule::Fixed(n) => key.get(..n),
            Rule::UpTo(d) => key.iter().position(|&b| b == d).map(|at| &key[..=at]),
        }
    }

    /// The stable name written into each table's properties: `fixed:N` or
    /// `up-to:0xHH`. [`FromStr`] reads it back.
    #[must_use]
    pub fn name(&self) -> String {
        self.to_string()
    }

    /// The extracted prefix every key of `(start, end)` shares, if the range
    /// lies within one prefix: `start`'s prefix `q`, when every key up to
    /// `end` still starts with `q`. Scans of such a range may skip tables
    /// whose filter lacks `q`.
    #[must_use]
    pub fn prefix_of_range<'k>(&self, start: Bound<&'k [u8]>, end: Bound<&[u8]>) -> Option<&'k [u8]> {
        let (Bound::Included(start) | Bound::Excluded(start)) = start else { return None };
        let q = self.extract(start)?;
        let within = match end {
            Bound::Unbounded => false,
            Bound::Included(e) => e.starts_with(q),
            // Keys below `e` all start with `q` when `e` is at most the
            // first key past every key starting with `q`.
            Bound::Excluded(e) => e.starts_with(q) || at_most_successor(e, q),
        };
        within.then_some(q)
    }

    /// The filter hash of prefix `q` in a table whose keys hash under `seed`.
    #[must_use]
    pub fn hash(seed: u64, q: &[u8]) -> u64 {
        hash_key(seed ^ PREFIX_SEED, q)
    }

    /// Checks the parameters.
    ///
    /// # Errors
    /// `InvalidArgument` for a fixed length of 0 or above [`MAX_FIXED_PREFIX`].
    pub fn validate(&self) -> Result<()> {
        match self.0 {
            Rule::Fixed(n) if n == 0 || n > MAX_FIXED_PREFIX => Err(Error::InvalidArgument(format!(
                "prefix extractor fixed:{n}: the length must be from 1 to {MAX_FIXED_PREFIX}"
            ))),
            _ => Ok(()),
        }
    }
}

/// The smallest byte string greater than every string starting with `q`;
/// `None` if there is none (`q` all `0xff`).
pub(crate) fn successor(q: &[u8]) -> Option<Vec<u8>> {
    let mut s = q.to_vec();
    while let Some(last) = s.pop() {
        if last < u8::MAX {
            s.push(last + 1);
            return Some(s);
        }
    }
    None
}

/// Whether `e <= successor(q)`, without building it: `true` when `q` has
/// no successor (every key at or above an all-`0xff` `q` starts with it).
fn at_most_successor(e: &[u8], q: &[u8]) -> bool {
    let Some(k) = q.iter().rposition(|&b| b < u8::MAX) else { return true };
    // successor(q) = q[..k] followed by q[k] + 1.
    match e.get(..k).map(|head| head.cmp(&q[..k])) {
        None => e < &q[..k],
        Some(std::cmp::Ordering::Less) => true,
        Some(std::cmp::Ordering::Greater) => false,
        Some(std::cmp::Ordering::Equal) => match e.get(k) {
            None => true,
            Some(&b) => b < q[k] + 1 || (b == q[k] + 1 && e.len() == k + 1),
        },
    }
}

impl fmt::Display for PrefixExtractor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Rule::Fixed(n) => write!(f, "fixed:{n}"),
            Rule::UpTo(d) => write!(f, "up-to:0x{d:02x}"),
        }
    }
}

impl FromStr for PrefixExtractor {
    type Err = Error;

    /// Reads `fixed:N`, `up-to:0xHH`, or `up-to:C` for one printable ASCII
    /// character `C` (`up-to::` is the colon).
    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            Error::InvalidArgument(format!(
                "prefix extractor {s:?}: expected fixed:N (N from 1 to {MAX_FIXED_PREFIX}), up-to:0xHH or up-to:C"
            ))
        };
        let extractor = if let Some(n) = s.strip_prefix("fixed:") {
            PrefixExtractor::fixed(n.parse().map_err(|_| bad())?)
        } else if let Some(d) = s.strip_prefix("up-to:") {
            let byte = match d.strip_prefix("0x") {
                Some(hex) if hex.len() == 2 => u8::from_str_radix(hex, 16).map_err(|_| bad())?,
                _ if d.len() == 1 && d.as_bytes()[0].is_ascii_graphic() => d.as_bytes()[0],
                _ => return Err(bad()),
            };
            PrefixExtractor::up_to(byte)
        } else {
            return Err(bad());
        };
        extractor.validate().map_err(|_| bad())?;
        Ok(extractor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extraction_is_stable_under_extension() {
        let keys: [&[u8]; 8] = [b"", b"a", b"ab", b"abc", b"a:b", b":", b"ab:cd:e", b"\xff\xff:"];
        for e in [PrefixExtractor::fixed(1), PrefixExtractor::fixed(2), PrefixExtractor::up_to(b':')] {
            for p in keys {
                let Some(q) = e.extract(p) else { continue };
                for tail in [&b""[..], b"x", b":", b"\x00\xff"] {
                    let k = [p, tail].concat();
                    assert_eq!(e.extract(&k), Some(q), "{e} {p:?}+{tail:?}");
                }
            }
        }
        assert_eq!(PrefixExtractor::up_to(b':').extract(b":rest"), Some(&b":"[..]));
        assert_eq!(PrefixExtractor::fixed(3).extract(b"ab"), None);
    }

    #[test]
    fn names_round_trip_and_bad_ones_are_errors() {
        for e in [
            PrefixExtractor::fixed(1),
            PrefixExtractor::fixed(8),
            PrefixExtractor::up_to(0),
            PrefixExtractor::up_to(b':'),
        ] {
            assert_eq!(e.name().parse::<PrefixExtractor>().unwrap(), e);
        }
        assert_eq!("up-to::".parse::<PrefixExtractor>().unwrap(), PrefixExtractor::up_to(b':'));
        assert_eq!("up-to:/".parse::<PrefixExtractor>().unwrap(), PrefixExtractor::up_to(b'/'));
        for bad in [
            "",
            "fixed:",
            "fixed:0",
            "fixed:-1",
            "fixed:99999999",
            "up-to:",
            "up-to:0x",
            "up-to:0xzz",
            "up-to:ab",
            "prefix:3",
        ] {
            let err = bad.parse::<PrefixExtractor>().unwrap_err();
            assert!(matches!(err, Error::InvalidArgument(_)), "{bad}: {err}");
        }
        assert!(PrefixExtractor::fixed(0).validate().is_err());
    }

    #[test]
    fn ranges_within_one_prefix() {
        let e = PrefixExtractor::fixed(2);
        let inc = |k: &'static [u8]| Bound::Included(k);
        let exc = |k: &'static [u8]| Bound::Excluded(k);
        assert_eq!(e.prefix_of_range(inc(b"ab"), exc(b"ac")), Some(&b"ab"[..]));
        assert_eq!(e.prefix_of_range(inc(b"abx"), exc(b"abz")), Some(&b"ab"[..]));
        assert_eq!(e.prefix_of_range(inc(b"abx"), inc(b"abz")), Some(&b"ab"[..]));
        assert_eq!(e.prefix_of_range(inc(b"ab"), exc(b"ac\x00")), None);
        assert_eq!(e.prefix_of_range(inc(b"ab"), inc(b"ac")), None);
        assert_eq!(e.prefix_of_range(inc(b"a"), exc(b"ab")), None);
        assert_eq!(e.prefix_of_range(inc(b"ab"), Bound::Unbounded), None);
        assert_eq!(e.prefix_of_range(Bound::Unbounded, exc(b"ab")), None);
        assert_eq!(e.prefix_of_range(inc(b"\xff\xff"), exc(b"\xff\xff\x01")), Some(&b"\xff\xff"[..]));
        let d = PrefixExtractor::up_to(b':');
        assert_eq!(d.prefix_of_range(inc(b"u1:"), exc(b"u1;")), Some(&b"u1:"[..]));
        assert_eq!(d.prefix_of_range(inc(b"u1:a"), exc(b"u1:b")), Some(&b"u1:"[..]));
        assert_eq!(d.prefix_of_range(inc(b"u1"), exc(b"u1;")), None);
        // Every key a range yields starts with the prefix it names.
        for (s, t) in [(&b"ab"[..], &b"ac"[..]), (b"abq", b"ac")] {
            let q = e.prefix_of_range(inc(s), Bound::Excluded(t)).unwrap();
            for k in [&b"ab"[..], b"ab\xff\xff", b"abz"] {
                assert!(k.starts_with(q));
            }
        }
        assert_eq!(successor(b"a\xff"), Some(b"b".to_vec()));
        // The allocation-free comparison agrees with building the successor.
        let words: [&[u8]; 12] = [
            b"",
            b"a",
            b"ab",
            b"ac",
            b"ab\xff",
            b"a\xff",
            b"b",
            b"b\x00",
            b"\xff",
            b"\xff\xff",
            b"ab\x00",
            b"aa\xff\xff",
        ];
        for q in words {
            for e in words {
                let want = successor(q).is_none_or(|s| e <= s.as_slice());
                assert_eq!(at_most_successor(e, q), want, "{e:?} vs successor of {q:?}");
            }
        }
        assert_eq!(successor(b"\xff"), None);
    }

    #[test]
    fn prefix_and_key_hashes_differ() {
        assert_ne!(PrefixExtractor::hash(7, b"ab"), hash_key(7, b"ab"));
        assert_eq!(PrefixExtractor::hash(7, b"ab"), PrefixExtractor::hash(7, b"ab"));
    }
}
