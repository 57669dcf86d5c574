//! Which compaction strategy a database runs, and the clock its expiry
//! reads.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::{Error, Result};

/// The compaction strategy ([`crate::Options::compaction`]).
///
/// ```
/// use std::time::Duration;
/// use siftdb::{Compaction, Options};
///
/// // Keep about the last 7 days, and never more than 10 GiB.
/// let opts = Options {
///     compaction: Compaction::Fifo {
///         max_bytes: Some(10 << 30),
///         ttl: Some(Duration::from_secs(7 * 24 * 3600)),
///     },
///     ..Options::default()
/// };
/// assert!(opts.validate().is_ok());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Compaction {
    /// Leveled compaction (the default): flushes merge down a tree of
    /// levels, each a sorted run `level_size_ratio` times the one above, so
    /// a key is read from at most one table per level and overwritten or
    /// deleted data is reclaimed.
    #[default]
    Leveled,
    /// First in, first out: every flush stays a level-0 table as it was
    /// written, and whole tables are dropped, oldest first, once the tables
    /// pass `max_bytes` or the oldest was written more than `ttl` ago. Data
    /// is written once (write amplification about 1) and never merged, so
    /// overwritten and deleted versions take space until their table is
    /// dropped, and a lookup probes every table's filter.
    ///
    /// For data kept for a window of time or space: time series, event logs,
    /// caches. A key's age is its table's: a table expires once its newest
    /// write is `ttl` old (tables record when they were written, in whole
    /// seconds, so a table is dropped up to a second after its newest write
    /// turned `ttl` old, and up to [`Compaction::TTL_RECHECK_MAX`] later
    /// when nothing is written). Until then its keys are read as usual.
    ///
    /// A database that held leveled tables keeps them until they go: tables
    /// below level 0 hold older data than any above, so the deepest level's
    /// go first (its oldest table first), then level 0's, oldest first.
    /// Reopening with [`Compaction::Leveled`] merges what is left as usual.
    Fifo {
        /// Drop the oldest tables while all tables together pass this many
        /// bytes; `None`: no size limit.
        max_bytes: Option<u64>,
        /// Drop a table once it was written this long ago; `None`: no
        /// time limit.
        ttl: Option<Duration>,
    },
}

impl Compaction {
    /// The longest an idle database waits before it looks for expired
    /// tables again (shorter for a shorter TTL: a tenth of it, at least a
    /// second).
    pub const TTL_RECHECK_MAX: Duration = Duration::from_secs(60);

    /// Checks for limits FIFO cannot keep.
    ///
    /// # Errors
    /// `InvalidArgument` for a `max_bytes` of 0 or a zero `ttl`.
    pub fn validate(&self) -> Result<()> {
        match self {
            Compaction::Leveled => Ok(()),
            Compaction::Fifo { max_bytes, ttl } => {
                if *max_bytes == Some(0) {
                    return Err(Error::InvalidArgument(
                        "option compaction: FIFO max_bytes must be positive".into(),
                    ));
                }
                if ttl.is_some_and(|t| t.is_zero()) {
                    return Err(Error::InvalidArgument(
                        "option compaction: FIFO ttl must be positive".into(),
                    ));
                }
                Ok(())
            }
        }
    }

    /// How often an idle database looks for expired tables: `None` unless
    /// this is FIFO with a TTL.
    #[must_use]
    pub fn ttl_recheck(&self) -> Option<Duration> {
        match self {
            Compaction::Fifo { ttl: Some(ttl), .. } => {
                Some((*ttl / 10).clamp(Duration::from_secs(1), Self::TTL_RECHECK_MAX))
            }
            _ => None,
        }
    }
}

impl fmt::Display for Compaction {
    /// `leveled`, or `fifo` with its limits: `fifo:max_bytes=1073741824,ttl=3600s`
    /// (the grammar [`Compaction::from_str`](#impl-FromStr-for-Compaction) reads).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Compaction::Leveled => f.write_str("leveled"),
            Compaction::Fifo { max_bytes, ttl } => {
                f.write_str("fifo")?;
                let mut sep = ':';
                if let Some(b) = max_bytes {
                    write!(f, "{sep}max_bytes={b}")?;
                    sep = ',';
                }
                if let Some(t) = ttl {
                    write!(f, "{sep}ttl={}s", t.as_secs_f64())?;
                }
                Ok(())
            }
        }
    }
}

impl FromStr for Compaction {
    type Err = Error;

    /// `leveled`, `fifo`, or `fifo:` followed by `max_bytes=N` and/or
    /// `ttl=Ss` (seconds, fractions allowed), comma-separated.
    ///
    /// ```
    /// use std::time::Duration;
    /// use siftdb::Compaction;
    ///
    /// let c: Compaction = "fifo:max_bytes=1048576,ttl=60s".parse()?;
    /// assert_eq!(c, Compaction::Fifo { max_bytes: Some(1 << 20), ttl: Some(Duration::from_secs(60)) });
    /// assert_eq!(c.to_string().parse::<Compaction>()?, c);
    /// # Ok::<(), siftdb::Error>(())
    /// ```
    fn from_str(s: &str) -> Result<Self> {
        let bad = |why: &str| Error::InvalidArgument(format!("compaction '{}': {why}", s.trim()));
        let (name, limits) = s.trim().split_once(':').unwrap_or((s.trim(), ""));
        let c = match name {
            "leveled" if !s.contains(':') => Compaction::Leveled,
            "leveled" => return Err(bad("leveled takes no limits")),
            "fifo" => {
                let (mut max_bytes, mut ttl) = (None, None);
                // `fifo:` names at least one limit, and no empty ones.
                let parts = if s.contains(':') { limits.split(',').collect() } else { Vec::new() };
                for part in parts {
                    match part.split_once('=') {
                        Some(("max_bytes", n)) if max_bytes.is_none() => {
                            max_bytes =
                                Some(n.parse::<u64>().map_err(|_| bad("max_bytes is a count of bytes"))?);
                        }
                        Some(("ttl", t)) if ttl.is_none() => {
                            let secs = t.strip_suffix('s').unwrap_or(t).parse::<f64>().ok();
                            let d = secs
                                .and_then(|x| Duration::try_from_secs_f64(x).ok())
                                .ok_or_else(|| bad("ttl is a number of seconds, like 3600s"))?;
                            ttl = Some(d);
                        }
                        _ => {
                            return Err(bad(&format!(
                                "unknown or repeated limit {part:?} (max_bytes=N, ttl=Ss)"
                            )));
                        }
                    }
                }
                Compaction::Fifo { max_bytes, ttl }
            }
            _ => return Err(bad("expected leveled or fifo[:max_bytes=N][,ttl=Ss]")),
        };
        c.validate()?;
        Ok(c)
    }
}

/// What a [`CompactionFilter`] decides for one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Keep the entry as it is.
    Keep,
    /// Delete the key: the entry becomes a tombstone (dropped too once
    /// nothing older can need it), so no older version of the key comes
    /// back.
    Remove,
    /// Keep the key with this value instead.
    ChangeValue(Vec<u8>),
}

/// A function leveled compaction calls on the entries it rewrites
/// ([`crate::Options::compaction_filter`]): per-key expiry, dropping a
/// tenant's keys lazily, rewriting old values to a new encoding.
///
/// What it sees, and what it must do:
///
/// - Only entries a merge rewrites: nothing is called at a flush, on a
///   table no merge touches (a settled tree may keep an expired key for a
///   long time: reads should check expiry themselves, as the `expiry`
///   example does), or under FIFO, which never merges.
/// - Only each key's newest version in the merge, only values (never a
///   tombstone), and only one no live snapshot can see: an entry written
///   at or before the newest snapshot is kept as it is, so every snapshot
///   reads what it read before (a merge that would change an entry a
///   snapshot taken while it ran can see is not installed, and runs again).
/// - It must be deterministic and quick, and must not call back into the
///   database: it runs on the compaction thread (or the caller of
///   [`crate::Db::compact`]), inside the job.
///
/// ```
/// use std::sync::Arc;
/// use siftdb::{CompactionFilter, Decision, Options};
///
/// /// Drops every key under `tmp:` the next time compaction passes it.
/// #[derive(Debug)]
/// struct DropTemporary;
///
/// impl CompactionFilter for DropTemporary {
///     fn filter(&self, _level: usize, key: &[u8], _value: &[u8]) -> Decision {
///         if key.starts_with(b"tmp:") { Decision::Remove } else { Decision::Keep }
///     }
/// }
///
/// let opts = Options { compaction_filter: Some(Arc::new(DropTemporary)), ..Options::default() };
/// # let _ = opts;
/// ```
pub trait CompactionFilter: Send + Sync + fmt::Debug {
    /// The decision for `key`'s newest version, `value`, being written to
    /// `level`.
    fn filter(&self, level: usize, key: &[u8], value: &[u8]) -> Decision;
}

/// Where the database reads the time: when a table was written, and
/// whether it has expired ([`Compaction::Fifo`]'s `ttl`).
///
/// [`SystemClock`] by default; tests substitute a clock they move by hand.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current time.
    fn now(&self) -> SystemTime;

    /// The current time in whole seconds since the Unix epoch (0 before it).
    fn now_unix_secs(&self) -> u64 {
        self.now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
    }
}

/// The operating system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}
