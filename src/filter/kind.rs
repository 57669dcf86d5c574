//! The filter kinds a table can carry, named for configuration and display.

use std::fmt;
use std::str::FromStr;

use super::{BlockedBloom, Bloom};
use crate::{Error, Result};

/// Which filter a table carries.
///
/// Parses from and displays as the names the CLI uses: `none`, `bloom:10`,
/// `blocked-bloom:10`, `xor8`, `xor16`, `fuse8`, `fuse16`.
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
    /// Classic Bloom filter.
    Bloom {
        /// Bits of filter per distinct key.
        bits_per_key: f64,
    },
    /// Cache-line blocked Bloom filter.
    BlockedBloom {
        /// Bits of filter per distinct key.
        bits_per_key: f64,
    },
    /// Xor filter, 8-bit fingerprints (ε ≈ 0.39%, ~9.84 bits/key).
    Xor8,
    /// Xor filter, 16-bit fingerprints (ε ≈ 0.0015%, ~19.7 bits/key).
    Xor16,
    /// Binary fuse filter, 8-bit fingerprints (ε ≈ 0.39%, ~9.0 bits/key).
    BinaryFuse8,
    /// Binary fuse filter, 16-bit fingerprints (ε ≈ 0.0015%, ~18 bits/key).
    BinaryFuse16,
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
    /// Checks the kind's parameters (a Bloom kind's bits per key, see
    /// [`check_bits_per_key`]); the variants' fields are public, so a kind
    /// built in code is checked where it is used: `TableBuilder::create`
    /// and `Db::open` call this.
    ///
    /// # Errors
    /// `InvalidArgument` naming the kind and what is wrong.
    pub fn validate(&self) -> Result<()> {
        match *self {
            FilterKind::Bloom { bits_per_key } | FilterKind::BlockedBloom { bits_per_key } => {
                check_bits_per_key(bits_per_key)
                    .map(|_| ())
                    .map_err(|e| Error::InvalidArgument(format!("filter {self}: {}", message(&e))))
            }
            _ => Ok(()),
        }
    }

    /// Whether this kind is built once from the whole key set (and so may
    /// fail to peel and fall back to a blocked Bloom filter).
    #[must_use]
    pub fn is_static(&self) -> bool {
        matches!(
            self,
            FilterKind::Xor8 | FilterKind::Xor16 | FilterKind::BinaryFuse8 | FilterKind::BinaryFuse16
        )
    }
}

impl FilterKind {
    /// The false-positive rate theory predicts for a filter of this kind at
    /// full load (1 for `None`).
    #[must_use]
    pub fn theoretical_fpr(&self) -> f64 {
        match *self {
            FilterKind::None => 1.0,
            FilterKind::Bloom { bits_per_key } => {
                let k = Bloom::probes_for_bits_per_key(bits_per_key);
                (1.0 - (-f64::from(k) / bits_per_key).exp()).powi(k.cast_signed())
            }
            FilterKind::BlockedBloom { bits_per_key } => BlockedBloom::fpr_for_bits_per_key(bits_per_key),
            FilterKind::Xor8 | FilterKind::BinaryFuse8 => 1.0 / 256.0,
            FilterKind::Xor16 | FilterKind::BinaryFuse16 => 1.0 / 65536.0,
        }
    }

    /// Bits per key a filter of this kind occupies for a large key set
    /// (xor: 1.23 cells per key; binary fuse: about 1.125).
    #[must_use]
    pub fn nominal_bits_per_key(&self) -> f64 {
        match *self {
            FilterKind::None => 0.0,
            FilterKind::Bloom { bits_per_key } | FilterKind::BlockedBloom { bits_per_key } => bits_per_key,
            FilterKind::Xor8 => 1.23 * 8.0,
            FilterKind::Xor16 => 1.23 * 16.0,
            FilterKind::BinaryFuse8 => 1.125 * 8.0,
            FilterKind::BinaryFuse16 => 1.125 * 16.0,
        }
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
        match self {
            FilterKind::None => write!(f, "none"),
            FilterKind::Bloom { bits_per_key } => write!(f, "bloom:{bits_per_key}"),
            FilterKind::BlockedBloom { bits_per_key } => write!(f, "blocked-bloom:{bits_per_key}"),
            FilterKind::Xor8 => write!(f, "xor8"),
            FilterKind::Xor16 => write!(f, "xor16"),
            FilterKind::BinaryFuse8 => write!(f, "fuse8"),
            FilterKind::BinaryFuse16 => write!(f, "fuse16"),
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
        let bits = |arg: Option<&str>| -> Result<f64> {
            let a = arg.unwrap_or("10");
            a.parse::<f64>().ok().and_then(|b| check_bits_per_key(b).ok()).ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "filter '{s}': bits per key must be a number from {MIN_BITS_PER_KEY} to \
                     {MAX_BITS_PER_KEY}, got '{a}'"
                ))
            })
        };
        let no_arg = |kind: FilterKind| -> Result<FilterKind> {
            match arg {
                None => Ok(kind),
                Some(_) => Err(Error::InvalidArgument(format!("filter '{s}' takes no parameter"))),
            }
        };
        match name {
            "none" => no_arg(FilterKind::None),
            "bloom" => Ok(FilterKind::Bloom { bits_per_key: bits(arg)? }),
            "blocked-bloom" | "blocked" => Ok(FilterKind::BlockedBloom { bits_per_key: bits(arg)? }),
            "xor8" => no_arg(FilterKind::Xor8),
            "xor16" => no_arg(FilterKind::Xor16),
            "fuse8" | "binary-fuse8" => no_arg(FilterKind::BinaryFuse8),
            "fuse16" | "binary-fuse16" => no_arg(FilterKind::BinaryFuse16),
            _ => Err(Error::InvalidArgument(format!(
                "unknown filter '{s}' (expected none, bloom:B, blocked-bloom:B, xor8, xor16, fuse8, fuse16)"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in [
            FilterKind::None,
            FilterKind::Bloom { bits_per_key: 10.0 },
            FilterKind::BlockedBloom { bits_per_key: 7.5 },
            FilterKind::Xor8,
            FilterKind::Xor16,
            FilterKind::BinaryFuse8,
            FilterKind::BinaryFuse16,
        ] {
            assert_eq!(k.to_string().parse::<FilterKind>().unwrap(), k);
        }
    }

    #[test]
    fn bad_names_are_invalid_arguments() {
        for s in ["", "bloom:x", "bloom:0", "xor8:3", "cuckoo", "bloom:inf"] {
            assert!(matches!(s.parse::<FilterKind>(), Err(Error::InvalidArgument(_))), "{s}");
        }
    }
}
