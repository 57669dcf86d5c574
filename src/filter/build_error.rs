//! Why a filter could not be built or take another key.

use std::fmt;

/// A static filter (xor, binary fuse, Ribbon) could not be built.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildError {
    /// Peeling the hypergraph stalled on every seed tried.
    PeelingFailed {
        /// Seeds tried before giving up.
        attempts: u32,
        /// Distinct keys in the input.
        keys: usize,
    },
    /// A Ribbon filter's equations contradicted each other on every seed
    /// tried (the banded system had no solution).
    BandingFailed {
        /// Seeds tried before giving up.
        attempts: u32,
        /// Distinct keys in the input.
        keys: usize,
    },
    /// The built filter rejected one of its own input hashes.
    ValidationFailed {
        /// The hash that read as absent.
        hash: u64,
    },
    /// More keys than the structure can index.
    TooManyKeys {
        /// Keys given.
        keys: usize,
        /// The most this structure accepts.
        max: usize,
    },
    /// A failure injected by a test, to exercise fallback paths.
    Injected,
    /// [`FilterKind::None`](super::FilterKind::None) was asked to build:
    /// there is no filter to build.
    NoFilter,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::PeelingFailed { attempts, keys } => {
                write!(f, "peeling failed after {attempts} seeds for {keys} keys")
            }
            BuildError::BandingFailed { attempts, keys } => {
                write!(f, "ribbon banding found no solvable system in {attempts} seeds for {keys} keys")
            }
            BuildError::ValidationFailed { hash } => {
                write!(f, "validation failed: built filter rejects input hash {hash:#018x}")
            }
            BuildError::TooManyKeys { keys, max } => {
                write!(f, "{keys} keys exceed the maximum of {max}")
            }
            BuildError::Injected => write!(f, "injected build failure"),
            BuildError::NoFilter => write!(f, "filter kind none has no filter to build"),
        }
    }
}

impl std::error::Error for BuildError {}

/// A cuckoo filter insert failed: the kick chain hit its limit and the stash
/// was full. The filter still holds every earlier entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Full;

impl fmt::Display for Full {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cuckoo filter is full")
    }
}

impl std::error::Error for Full {}
