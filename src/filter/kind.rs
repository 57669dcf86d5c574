//! The filter kinds a table can carry, named for configuration and display.

use std::fmt;
use std::str::FromStr;

use bytes::Bytes;

use super::codec::StoredFilter;
use super::{AnyFilter, BuildError, FilterCodec};
use crate::{Error, Result};

/// The registry's rows: one line a kind, naming its `FilterKind` variant
/// (with `{ bits_per_key }` when it is sized by bits per key), the
/// [`KindSpec`] its own module defines, and the database format version
/// that introduced it (`since N`). Adding a kind is its module, its spec
/// and one line here: the enum, [`FilterKind::ALL`], parsing, display, the
/// filter-block tag, sizing, building and decoding all follow.
///
/// Why the version: the manifest stores each table's kind by name, and a
/// build that does not know a name must say "written by a newer siftdb",
/// not "corrupt". So a new kind bumps `DB_FORMAT_VERSION` (DESIGN.md,
/// "Format versions"), its row names the bumped version, and a database
/// that gets a table of the kind records at least that version first
/// (`db/install.rs`); an older build meets the version before the name.
/// The table format needs no bump: a filter block of an unknown tag reads
/// as "may contain", which is correct.
macro_rules! filter_kinds {
    ($( $(#[$doc:meta])* $variant:ident $({ $bits:ident })? => $spec:path, since $since:literal; )*) => {
        /// Which filter a table carries.
        ///
        /// Parses from and displays as the names the CLI uses: `none`,
        /// `bloom:10`, `blocked-bloom:10`, `xor8`, `xor16`, `fuse8`, `fuse16`,
        /// `ribbon:7`.
        ///
        /// ```
        /// use siftdb::filter::FilterKind;
        /// let k: FilterKind = "blocked-bloom:10".parse().unwrap();
        /// assert_eq!(k, FilterKind::BlockedBloom { bits_per_key: 10.0 });
        /// assert_eq!(k.to_string(), "blocked-bloom:10");
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq)]
        #[non_exhaustive]
        pub enum FilterKind {
            /// No filter: every lookup reads the table's index and a data block.
            None,
            $(
                $(#[$doc])*
                $variant $({
                    /// Bits of filter per distinct key.
                    $bits: f64
                })?,
            )*
        }

        impl FilterKind {
            /// Every kind a table can carry (the sized ones at
            /// [`EXAMPLE_BITS_PER_KEY`]), `None` left out: what tests and
            /// benches iterate.
            pub const ALL: &'static [FilterKind] =
                &[$( FilterKind::$variant $({ $bits: EXAMPLE_BITS_PER_KEY })?, )*];

            /// The registry entry, `None` for [`FilterKind::None`].
            fn spec(&self) -> Option<&'static KindSpec> {
                match self {
                    FilterKind::None => None,
                    $( FilterKind::$variant { .. } => Some(&$spec), )*
                }
            }

            /// The bits-per-key parameter of a sized kind.
            fn parameter(&self) -> Option<f64> {
                match *self {
                    $($( FilterKind::$variant { $bits } => Some($bits), )?)*
                    _ => None,
                }
            }

            /// The kind `spec` describes, at `bits_per_key` if it is sized.
            #[allow(unused_variables, reason = "fixed-rate rows ignore the parameter")]
            fn from_spec(spec: &KindSpec, bits_per_key: f64) -> FilterKind {
                $(
                    if std::ptr::eq(spec, &$spec) {
                        return FilterKind::$variant $({ $bits: bits_per_key })?;
                    }
                )*
                FilterKind::None
            }

            fn specs() -> impl Iterator<Item = &'static KindSpec> {
                [$( &$spec, )*].into_iter()
            }

            /// The database format version that introduced this kind
            /// (1 for [`FilterKind::None`]): a database holding a table of
            /// it records at least this version, so that a build too old
            /// to know the kind refuses the database as newer, not damaged.
            #[must_use]
            pub fn first_db_format(&self) -> u32 {
                match self {
                    FilterKind::None => 1,
                    $( FilterKind::$variant { .. } => $since, )*
                }
            }
        }
    };
}

filter_kinds! {
    /// Classic Bloom filter.
    Bloom { bits_per_key } => super::bloom::KIND, since 1;
    /// Cache-line blocked Bloom filter.
    BlockedBloom { bits_per_key } => super::blocked_bloom::KIND, since 1;
    /// Xor filter, 8-bit fingerprints (ε ≈ 0.39%, ~9.84 bits/key).
    Xor8 => super::xor::XOR8, since 1;
    /// Xor filter, 16-bit fingerprints (ε ≈ 0.0015%, ~19.7 bits/key).
    Xor16 => super::xor::XOR16, since 1;
    /// Binary fuse filter, 8-bit fingerprints (ε ≈ 0.39%, ~9.0 bits/key).
    BinaryFuse8 => super::binary_fuse::FUSE8, since 1;
    /// Binary fuse filter, 16-bit fingerprints (ε ≈ 0.0015%, ~18 bits/key).
    BinaryFuse16 => super::binary_fuse::FUSE16, since 1;
    /// Ribbon filter (width 128) at any bits per key from 1 to 32: about
    /// 3% over the bound `log2(1/ε)`. Added while builds wrote format 5,
    /// so format-5 builds without it exist: its tables need format 6.
    Ribbon { bits_per_key } => super::ribbon::KIND, since 6;
}

/// The bits per key [`FilterKind::ALL`] lists the sized kinds at.
pub const EXAMPLE_BITS_PER_KEY: f64 = 10.0;

/// What siftdb needs to know of one filter kind to store it in tables:
/// one `static` per kind, in the kind's own module, named in the
/// `filter_kinds!` table above.
pub(crate) struct KindSpec {
    /// The filter-block tag (`table/filter_block.rs`); never reused.
    pub(crate) tag: u8,
    /// The name it parses from and displays as (`bloom`, `xor8`).
    pub(crate) name: &'static str,
    /// Other names it parses from.
    pub(crate) aliases: &'static [&'static str],
    /// Built once from the whole key set: such a build may fail (and a
    /// table then falls back to blocked Bloom).
    pub(crate) is_static: bool,
    /// The most bits per key a sized kind takes ([`MAX_BITS_PER_KEY`] for
    /// the Bloom family, 32 for Ribbon; unused by fixed-rate kinds).
    pub(crate) max_bits_per_key: f64,
    /// Bits per key for a large key set, given the kind's parameter.
    pub(crate) nominal_bits_per_key: fn(f64) -> f64,
    /// The rate theory gives at full load, given the kind's parameter.
    pub(crate) theoretical_fpr: fn(f64) -> f64,
    /// [`FilterCodec::encoded_len`].
    pub(crate) encoded_len: fn(usize, f64) -> Option<usize>,
    /// Builds from distinct hashes at a parameter, with a carry of filter
    /// bits its level is owed ([`FilterKind::build_with_carry`]).
    pub(crate) build: fn(&[u64], f64, i64) -> Built,
    /// [`FilterCodec::decode`], or [`FilterCodec::decode_shared`] of the
    /// same bytes held in the `Bytes`.
    pub(crate) decode: Decoder,
}

/// [`KindSpec::decode`]: the bytes, and the `Bytes` holding them when the
/// filter may view its array there.
pub(crate) type Decoder = fn(&[u8], Option<&Bytes>) -> Result<Box<dyn StoredFilter>>;

/// What [`KindSpec::build`] returns.
pub(crate) type Built = std::result::Result<Box<dyn StoredFilter>, BuildError>;

/// `T`'s decoder as a [`KindSpec::decode`].
pub(crate) fn decoder<T: FilterCodec + Send + Sync + fmt::Debug + 'static>(
    bytes: &[u8],
    shared: Option<&Bytes>,
) -> Result<Box<dyn StoredFilter>> {
    Ok(Box::new(match shared {
        Some(shared) => T::decode_shared(shared)?,
        None => T::decode(bytes)?,
    }))
}

/// The fewest bits per key a Bloom-family filter (classic, blocked,
/// counting) is built with: below one bit per key every other bit is set
/// and the filter answers "may contain" to nearly everything.
pub const MIN_BITS_PER_KEY: f64 = 1.0;

/// The most bits per key a Bloom-family filter is built with: 64 bits per
/// key is already ~10⁻¹⁴ false positives, far past any use, and a limit
/// keeps a typo (`1e15`, `inf`) from asking for petabytes.
pub const MAX_BITS_PER_KEY: f64 = 64.0;

/// Checks a Bloom-family `bits_per_key`: a finite number from
/// [`MIN_BITS_PER_KEY`] to [`MAX_BITS_PER_KEY`].
///
/// # Errors
/// `InvalidArgument` naming the value and the range (NaN and infinities
/// included).
pub fn check_bits_per_key(bits_per_key: f64) -> Result<f64> {
    if bits_per_key.is_finite() && (MIN_BITS_PER_KEY..=MAX_BITS_PER_KEY).contains(&bits_per_key) {
        Ok(bits_per_key)
    } else {
        Err(Error::InvalidArgument(format!(
            "bits per key must be a number from {MIN_BITS_PER_KEY} to {MAX_BITS_PER_KEY}, got {bits_per_key}"
        )))
    }
}

impl FilterKind {
    /// Checks the kind's parameters (a sized kind's bits per key, see
    /// [`check_bits_per_key`]); the variants' fields are public, so a kind
    /// built in code is checked where it is used: `TableBuilder::create`
    /// and `Db::open` call this.
    ///
    /// # Errors
    /// `InvalidArgument` naming the kind and what is wrong.
    pub fn validate(&self) -> Result<()> {
        match (self.spec(), self.parameter()) {
            (Some(spec), Some(bits_per_key)) => check_bits_for(spec, bits_per_key)
                .map(|_| ())
                .map_err(|e| Error::InvalidArgument(format!("filter {self}: {}", message(&e)))),
            _ => Ok(()),
        }
    }

    /// The bits-per-key parameter of a kind sized by it (`bloom:B`,
    /// `blocked-bloom:B`); `None` for fixed-rate kinds and `None`.
    #[must_use]
    pub fn bits_per_key(&self) -> Option<f64> {
        self.parameter()
    }

    /// The most bits per key this kind takes, if it is sized by them
    /// ([`MAX_BITS_PER_KEY`] for the Bloom family, 32 for Ribbon).
    #[must_use]
    pub fn max_bits_per_key(&self) -> Option<f64> {
        self.parameter().and(self.spec().map(|s| s.max_bits_per_key))
    }

    /// This kind at `bits_per_key`, if it is sized by bits per key; a
    /// fixed-rate kind (and `None`) is returned as it is.
    #[must_use]
    pub fn at_bits_per_key(self, bits_per_key: f64) -> FilterKind {
        match self.spec() {
            Some(spec) if self.parameter().is_some() => Self::from_spec(spec, bits_per_key),
            _ => self,
        }
    }

    /// Whether this kind is built once from the whole key set (and so may
    /// fail to peel and fall back to a blocked Bloom filter).
    #[must_use]
    pub fn is_static(&self) -> bool {
        self.spec().is_some_and(|s| s.is_static)
    }

    /// The tag a table's filter block stores for this kind; `None` for
    /// [`FilterKind::None`].
    #[must_use]
    pub fn tag(&self) -> Option<u8> {
        self.spec().map(|s| s.tag)
    }

    /// The kind stored under filter-block `tag` with parameter
    /// `bits_per_key` (ignored by fixed-rate kinds); `None` for a tag this
    /// build does not know.
    #[must_use]
    pub fn of_tag(tag: u8, bits_per_key: f64) -> Option<FilterKind> {
        Self::specs().find(|s| s.tag == tag).map(|s| Self::from_spec(s, bits_per_key))
    }

    /// The false-positive rate theory predicts for a filter of this kind at
    /// full load (1 for `None`).
    #[must_use]
    pub fn theoretical_fpr(&self) -> f64 {
        self.spec().map_or(1.0, |s| (s.theoretical_fpr)(self.parameter().unwrap_or(0.0)))
    }

    /// Bits per key a filter of this kind occupies for a large key set
    /// (xor: 1.23 cells per key; binary fuse: about 1.125).
    #[must_use]
    pub fn nominal_bits_per_key(&self) -> f64 {
        self.spec().map_or(0.0, |s| (s.nominal_bits_per_key)(self.parameter().unwrap_or(0.0)))
    }

    /// Bytes of this kind's encoding ([`FilterCodec::encode`]) when built
    /// from `keys` distinct keys: `Some(0)` for `None`, `None` when the
    /// kind cannot hold that many.
    #[must_use]
    pub fn encoded_len(&self, keys: usize) -> Option<usize> {
        self.spec().map_or(Some(0), |s| (s.encoded_len)(keys, self.parameter().unwrap_or(0.0)))
    }

    /// Builds a filter of this kind from `hashes`, one per distinct key
    /// (a Bloom kind counts duplicates as keys; a static kind removes them).
    ///
    /// # Errors
    /// What the kind's own build reports (a static filter that does not
    /// peel, one that fails validation, too many keys);
    /// [`BuildError::NoFilter`] for [`FilterKind::None`], which has no filter.
    pub fn build(&self, hashes: &[u64]) -> std::result::Result<AnyFilter, BuildError> {
        self.build_with_carry(hashes, 0)
    }

    /// [`FilterKind::build`] for a table whose level is owed `carry_bits`
    /// filter bits (negative: it is over its budget). A blocked Bloom
    /// filter then takes a 64-byte block more or less than the smallest at
    /// its bits per key (see [`BlockedBloom::blocks_with_carry`]); other
    /// kinds ignore the carry.
    ///
    /// # Errors
    /// As [`FilterKind::build`].
    ///
    /// [`BlockedBloom::blocks_with_carry`]: super::BlockedBloom::blocks_with_carry
    pub fn build_with_carry(
        &self,
        hashes: &[u64],
        carry_bits: i64,
    ) -> std::result::Result<AnyFilter, BuildError> {
        let spec = self.spec().ok_or(BuildError::NoFilter)?;
        let inner = (spec.build)(hashes, self.parameter().unwrap_or(0.0), carry_bits)?;
        Ok(AnyFilter::from_boxed(*self, inner))
    }

    /// Parses a filter of this kind from its encoding.
    ///
    /// # Errors
    /// `Corruption` for bytes that are not a valid encoding of this kind;
    /// `InvalidArgument` for [`FilterKind::None`].
    pub fn decode(&self, bytes: &[u8]) -> Result<AnyFilter> {
        let spec = self
            .spec()
            .ok_or_else(|| Error::InvalidArgument("filter kind none has no encoding".to_owned()))?;
        Ok(AnyFilter::from_boxed(*self, (spec.decode)(bytes, None)?))
    }

    /// [`FilterKind::decode`] of bytes held in `shared` (a table's
    /// mapping), viewing the filter's array there where it is aligned
    /// ([`FilterCodec::decode_shared`]).
    ///
    /// # Errors
    /// As [`FilterKind::decode`].
    pub fn decode_shared(&self, shared: &Bytes) -> Result<AnyFilter> {
        let spec = self
            .spec()
            .ok_or_else(|| Error::InvalidArgument("filter kind none has no encoding".to_owned()))?;
        Ok(AnyFilter::from_boxed(*self, (spec.decode)(shared, Some(shared))?))
    }
}

/// [`check_bits_per_key`] against the kind's own maximum.
fn check_bits_for(spec: &KindSpec, bits_per_key: f64) -> Result<f64> {
    let max = spec.max_bits_per_key;
    if bits_per_key.is_finite() && (MIN_BITS_PER_KEY..=max).contains(&bits_per_key) {
        Ok(bits_per_key)
    } else {
        Err(Error::InvalidArgument(format!(
            "bits per key must be a number from {MIN_BITS_PER_KEY} to {max}, got {bits_per_key}"
        )))
    }
}

/// An `InvalidArgument`'s message without the variant's prefix.
fn message(e: &Error) -> String {
    match e {
        Error::InvalidArgument(m) => m.clone(),
        other => other.to_string(),
    }
}

impl fmt::Display for FilterKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.spec(), self.parameter()) {
            (None, _) => write!(f, "none"),
            (Some(s), Some(bits_per_key)) => write!(f, "{}:{bits_per_key}", s.name),
            (Some(s), None) => write!(f, "{}", s.name),
        }
    }
}

impl FromStr for FilterKind {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (s, None),
        };
        if name == "none" {
            return match arg {
                None => Ok(FilterKind::None),
                Some(_) => Err(Error::InvalidArgument(format!("filter '{s}' takes no parameter"))),
            };
        }
        let Some(spec) = Self::specs().find(|k| k.name == name || k.aliases.contains(&name)) else {
            let names: Vec<String> = Self::ALL
                .iter()
                .map(|k| if k.parameter().is_some() { format!("{}:B", k.spec_name()) } else { k.to_string() })
                .collect();
            return Err(Error::InvalidArgument(format!(
                "unknown filter '{s}' (expected none, {})",
                names.join(", ")
            )));
        };
        let sized = Self::from_spec(spec, EXAMPLE_BITS_PER_KEY).parameter().is_some();
        match (sized, arg) {
            (false, None) => Ok(Self::from_spec(spec, 0.0)),
            (false, Some(_)) => Err(Error::InvalidArgument(format!("filter '{s}' takes no parameter"))),
            (true, arg) => {
                let a = arg.unwrap_or("10");
                let bits =
                    a.parse::<f64>().ok().and_then(|b| check_bits_for(spec, b).ok()).ok_or_else(|| {
                        Error::InvalidArgument(format!(
                            "filter '{s}': bits per key must be a number from {MIN_BITS_PER_KEY} to \
                         {}, got '{a}'",
                            spec.max_bits_per_key
                        ))
                    })?;
                Ok(Self::from_spec(spec, bits))
            }
        }
    }
}

impl FilterKind {
    fn spec_name(&self) -> &'static str {
        self.spec().map_or("none", |s| s.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let odd = [
            FilterKind::None,
            FilterKind::BlockedBloom { bits_per_key: 7.5 },
            FilterKind::Ribbon { bits_per_key: 6.5 },
            FilterKind::Ribbon { bits_per_key: 32.0 },
        ];
        for &k in FilterKind::ALL.iter().chain(&odd) {
            assert_eq!(k.to_string().parse::<FilterKind>().unwrap(), k);
        }
    }

    #[test]
    fn bad_names_are_invalid_arguments() {
        for s in [
            "",
            "bloom:x",
            "bloom:0",
            "xor8:3",
            "cuckoo",
            "bloom:inf",
            "ribbon:33",
            "ribbon:0.5",
            "ribbon:nan",
        ] {
            assert!(matches!(s.parse::<FilterKind>(), Err(Error::InvalidArgument(_))), "{s}");
        }
    }
}
