//! Which codec each level's tables are written with.
//!
//! A [`CompressionPolicy`] is a per-level list of codecs (the last entry
//! repeating, as a [`FilterPolicy`](super::FilterPolicy)'s does) and an
//! optional codec for the tree's last level. Unlike the filter policy it is
//! not stored in the manifest: each table records the codec it was written
//! with, and a reader needs nothing else, so a database opened with another
//! policy reads its old tables and writes new ones with the new choice.

use std::fmt;
use std::str::FromStr;

use crate::table::Compression;
use crate::{Error, Result};

/// The codec for each level's tables.
///
/// The default is `lz4` on every level. On the 10^6-key bench with
/// half-compressible values (docs/measurements.md, "Compression policy"),
/// LZ4 stored the tree in 0.63 of the raw bytes and wrote a third fewer
/// table bytes; zstd at the last level (`lz4+last:zstd:3`, the issue's
/// candidate) stored 5% fewer bytes than LZ4 but, the last level holding
/// nine keys in ten, cut cached point reads to 0.48 of raw tables' rate
/// against LZ4's 0.61-0.66. A store whose cold data is text-like (where
/// zstd's entropy stage gains more) and rarely read may prefer it.
///
/// "The last level" is decided as the filter policy's `+skip-last` decides
/// it: the deepest level the tree will have once the data it holds has
/// settled (DESIGN.md, "What the last level is"). Level 0 never is. As the
/// tree grows a level, the old last level becomes a middle one; its tables
/// keep their codec until compaction rewrites them, which is harmless, since
/// every table records its own.
///
/// ```
/// use siftdb::{Compression, CompressionPolicy};
/// let p: CompressionPolicy = "per-level:none,lz4+last:zstd:6".parse()?;
/// assert_eq!(p.for_level(0, false), Compression::None);
/// assert_eq!(p.for_level(3, false), Compression::Lz4);
/// assert_eq!(p.for_level(3, true), Compression::Zstd { level: 6 });
/// assert_eq!(CompressionPolicy::default().to_string(), "lz4");
/// # Ok::<(), siftdb::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompressionPolicy {
    levels: Vec<Compression>,
    last: Option<Compression>,
}

impl Default for CompressionPolicy {
    fn default() -> Self {
        CompressionPolicy::uniform(Compression::Lz4)
    }
}

/// The forms [`CompressionPolicy::from_str`] accepts, for error messages.
pub const COMPRESSION_FORMS: &str = "default, a codec on every level (none, lz4, zstd, zstd:N with 1 <= N <= 22), \
     or per-level:C0,C1,... (level 0 first, the last repeating), each optionally followed by +last:C \
     (the codec of the tree's last level)";

impl CompressionPolicy {
    /// The same codec on every level.
    #[must_use]
    pub fn uniform(c: Compression) -> Self {
        CompressionPolicy::per_level(vec![c])
    }

    /// Entry `i` is for level `i`; the last entry repeats for deeper levels.
    /// An empty list means no compression.
    #[must_use]
    pub fn per_level(mut codecs: Vec<Compression>) -> Self {
        if codecs.is_empty() {
            codecs.push(Compression::None);
        }
        CompressionPolicy { levels: codecs, last: None }
    }

    /// `c` for tables written to the tree's last level, whatever the
    /// per-level list says for that level.
    #[must_use]
    pub fn with_last_level(mut self, c: Compression) -> Self {
        self.last = Some(c);
        self
    }

    /// The codec of the last level, if the policy names one.
    #[must_use]
    pub fn last_level(&self) -> Option<Compression> {
        self.last
    }

    /// The codec for a table written to `level`; `is_last` says that level
    /// is the tree's last.
    #[must_use]
    pub fn for_level(&self, level: usize, is_last: bool) -> Compression {
        match self.last {
            Some(c) if is_last => c,
            _ => self.levels.get(level).or(self.levels.last()).copied().unwrap_or_default(),
        }
    }

    /// Checks every codec's parameters ([`Compression::validate`]):
    /// `Db::open` refuses a policy that fails.
    ///
    /// # Errors
    /// `InvalidArgument` naming the first bad codec.
    pub fn validate(&self) -> Result<()> {
        self.levels.iter().chain(&self.last).try_for_each(Compression::validate)
    }
}

impl fmt::Display for CompressionPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let [one] = self.levels.as_slice() {
            write!(f, "{one}")?;
        } else {
            let names: Vec<String> = self.levels.iter().map(ToString::to_string).collect();
            write!(f, "per-level:{}", names.join(","))?;
        }
        if let Some(c) = self.last {
            write!(f, "+last:{c}")?;
        }
        Ok(())
    }
}

impl FromStr for CompressionPolicy {
    type Err = Error;

    /// Parses `default`, a codec (`none`, `lz4`, `zstd`, `zstd:N`),
    /// `per-level:<codec>,<codec>,…`, any of them (but `default`) optionally
    /// followed by `+last:<codec>`. [`Display`](fmt::Display) writes the
    /// same grammar.
    ///
    /// # Errors
    /// `InvalidArgument` saying what is wrong and naming every accepted form.
    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim();
        let bad = |why: String| {
            Error::InvalidArgument(format!("compression '{s}': {why}; expected {COMPRESSION_FORMS}"))
        };
        let codec = |c: &str| {
            c.trim().parse::<Compression>().map_err(|e| match e {
                Error::InvalidArgument(m) => bad(m),
                other => other,
            })
        };
        if s == "default" {
            return Ok(CompressionPolicy::default());
        }
        let (body, last) = match s.split_once("+last:") {
            Some((body, last)) => (body, Some(codec(last)?)),
            None => (s, None),
        };
        let policy = match body.strip_prefix("per-level:") {
            Some(codecs) => {
                CompressionPolicy::per_level(codecs.split(',').map(codec).collect::<Result<_>>()?)
            }
            None => CompressionPolicy::uniform(codec(body)?),
        };
        Ok(match last {
            Some(c) => policy.with_last_level(c),
            None => policy,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips() {
        for s in [
            "none",
            "lz4",
            "zstd:3",
            "per-level:none,lz4,zstd:9",
            "lz4+last:zstd:3",
            "per-level:none,lz4+last:zstd:1",
        ] {
            let p: CompressionPolicy = s.parse().unwrap();
            assert_eq!(p.to_string(), s);
            assert_eq!(p.to_string().parse::<CompressionPolicy>().unwrap(), p);
        }
        assert_eq!("zstd".parse::<CompressionPolicy>().unwrap().to_string(), "zstd:3");
        assert_eq!("default".parse::<CompressionPolicy>().unwrap(), CompressionPolicy::default());
        assert_eq!(CompressionPolicy::per_level(vec![]), CompressionPolicy::uniform(Compression::None));
    }

    #[test]
    fn bad_text_and_levels_are_invalid_arguments() {
        for s in [
            "",
            "gzip",
            "zstd:0",
            "zstd:23",
            "per-level:",
            "per-level:lz4,,none",
            "lz4+last:",
            "lz4+last:brotli",
        ] {
            let err = s.parse::<CompressionPolicy>().unwrap_err();
            assert!(matches!(&err, Error::InvalidArgument(m) if m.contains("expected")), "{s}: {err}");
        }
        let p = CompressionPolicy::uniform(Compression::Lz4).with_last_level(Compression::Zstd { level: 40 });
        assert!(matches!(p.validate(), Err(Error::InvalidArgument(_))));
        CompressionPolicy::default().validate().unwrap();
    }

    #[test]
    fn the_last_entry_repeats_and_the_last_level_overrides() {
        let p = CompressionPolicy::per_level(vec![Compression::None, Compression::Lz4]);
        assert_eq!(p.for_level(0, false), Compression::None);
        assert_eq!(p.for_level(6, true), Compression::Lz4);
        let p = p.with_last_level(Compression::Zstd { level: 3 });
        assert_eq!(p.for_level(6, false), Compression::Lz4);
        assert_eq!(p.for_level(2, true), Compression::Zstd { level: 3 });
    }
}
