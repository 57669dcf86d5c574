//! Block compression: the codecs, the rule that decides whether a block is
//! stored compressed, and the bounded decompression every read goes through.
//!
//! A compressed block's contents (what its handle covers; the trailer,
//! drawn in [`format`](super::format), says which codec):
//!
//! ```text
//! +------------------------------+---------------------------------------+
//! | uncompressed length: varint  | compressed bytes (lz4 block / zstd    |
//! |                              | frame) of exactly that many bytes     |
//! +------------------------------+---------------------------------------+
//! ```
//!
//! Why these codecs: `lz4_flex` is pure Rust (no C toolchain) and decodes
//! at memory speed, so a cached read barely notices it. Its decoder, which
//! meets damaged and crafted blocks, is built safe (`safe-decode`); its
//! encoder, which only ever reads our own blocks, uses its pointer-based
//! path, 0.8x the time of the safe one (an eighth of a 10^8-key fill's CPU
//! went to compressing, docs/measurements.md); `zstd` (the reference C
//! library) compresses far better for cold levels, and is the library every
//! other zstd reader is checked against. docs/measurements.md compares both
//! with the crate considered instead (`lz4`, `ruzstd`).
//!
//! A block is stored compressed only if that saves at least 1/8 of it
//! (the rule `RocksDB` uses), so incompressible data is stored raw and costs
//! nothing on reads. Decompression never trusts the stored length: it is
//! checked against the table's largest block before anything is allocated,
//! and the output must be exactly that long.

use std::cell::RefCell;
use std::fmt;
use std::ops::RangeInclusive;
use std::str::FromStr;

use crate::codec::{Reader, put_varint};
use crate::{Error, Result};

/// The codec nibble of a block stored raw.
pub const CODEC_RAW: u8 = 0;
/// The codec nibble of an lz4 block.
pub const CODEC_LZ4: u8 = 1;
/// The codec nibble of a zstd block.
pub const CODEC_ZSTD: u8 = 2;

/// The zstd levels a table may be written with.
pub const ZSTD_LEVELS: RangeInclusive<i32> = 1..=22;
/// The zstd level `"zstd"` without a level means (zstd's own default).
pub const ZSTD_DEFAULT_LEVEL: i32 = 3;

/// The largest uncompressed block any table may claim: a block closes one
/// entry past its target size, and an entry is at most a key, a value and
/// their headers, so even a one-entry block of the largest value fits
/// twice over. Blocks larger than this (a huge target size) are stored raw.
/// Spelled out because `MAX_VALUE_BYTES` (64 MiB) and `MAX_KEY_BYTES`
/// live in the layer above; `tests/table_compression.rs` checks they agree.
pub const MAX_UNCOMPRESSED_BLOCK: usize = 2 * (64 << 20) + 65_535 + 64;

/// How a table's data blocks (and its index block, if it pays) are
/// compressed.
///
/// Displays and parses as `none`, `lz4`, `zstd` (level 3) or `zstd:N`.
///
/// ```
/// use siftdb::table::Compression;
/// let c: Compression = "zstd:6".parse().unwrap();
/// assert_eq!(c, Compression::Zstd { level: 6 });
/// assert_eq!(c.to_string(), "zstd:6");
/// assert!("zstd:99".parse::<Compression>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Compression {
    /// Blocks are stored raw.
    #[default]
    None,
    /// LZ4 block format (`lz4_flex`): fast to decode, modest ratio.
    Lz4,
    /// Zstandard at `level` (1 to 22, `ZSTD_LEVELS`): slower, smaller.
    Zstd {
        /// The compression level.
        level: i32,
    },
}

impl Compression {
    /// Checks the zstd level.
    ///
    /// # Errors
    /// `InvalidArgument` for a zstd level outside 1 to 22 (`ZSTD_LEVELS`).
    pub fn validate(&self) -> Result<()> {
        match self {
            Compression::Zstd { level } if !ZSTD_LEVELS.contains(level) => Err(Error::InvalidArgument(
                format!("zstd level {level} is outside {}..={}", ZSTD_LEVELS.start(), ZSTD_LEVELS.end()),
            )),
            _ => Ok(()),
        }
    }

    /// The codec nibble blocks compressed this way carry in their trailer.
    #[must_use]
    pub fn codec(&self) -> u8 {
        match self {
            Compression::None => CODEC_RAW,
            Compression::Lz4 => CODEC_LZ4,
            Compression::Zstd { .. } => CODEC_ZSTD,
        }
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Compression::None => f.write_str("none"),
            Compression::Lz4 => f.write_str("lz4"),
            Compression::Zstd { level } => write!(f, "zstd:{level}"),
        }
    }
}

impl FromStr for Compression {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let c = match s {
            "none" => Compression::None,
            "lz4" => Compression::Lz4,
            "zstd" => Compression::Zstd { level: ZSTD_DEFAULT_LEVEL },
            _ => {
                let level = s.strip_prefix("zstd:").and_then(|l| l.parse().ok()).ok_or_else(|| {
                    Error::InvalidArgument(format!("unknown compression {s:?}: none, lz4, zstd or zstd:LEVEL"))
                })?;
                Compression::Zstd { level }
            }
        };
        c.validate()?;
        Ok(c)
    }
}

/// Compresses blocks for one table, keeping the zstd context between them.
pub struct BlockCompressor {
    compression: Compression,
    zstd: Option<zstd::bulk::Compressor<'static>>,
    buf: Vec<u8>,
}

impl fmt::Debug for BlockCompressor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockCompressor").field("compression", &self.compression).finish_non_exhaustive()
    }
}

impl BlockCompressor {
    /// A compressor for `compression`.
    ///
    /// # Errors
    /// `InvalidArgument` for a bad level; `Io` if zstd cannot make a context.
    pub fn new(compression: Compression) -> Result<Self> {
        compression.validate()?;
        let zstd = match compression {
            Compression::Zstd { level } => Some(zstd::bulk::Compressor::new(level)?),
            _ => None,
        };
        Ok(BlockCompressor { compression, zstd, buf: Vec::new() })
    }

    /// The block to store for `raw` and its codec nibble: the compressed
    /// form if it saves at least 1/8, else `raw` itself and [`CODEC_RAW`].
    #[must_use]
    pub fn compress<'a>(&'a mut self, raw: &'a [u8]) -> (&'a [u8], u8) {
        let codec = self.compression.codec();
        if codec == CODEC_RAW || raw.len() > MAX_UNCOMPRESSED_BLOCK {
            return (raw, CODEC_RAW);
        }
        let limit = raw.len() - raw.len() / 8;
        self.buf.clear();
        put_varint(&mut self.buf, raw.len() as u64);
        let header = self.buf.len();
        // Both write after the length header, into room for their worst case.
        let n = if let Some(z) = &mut self.zstd {
            self.buf.resize(header + zstd::zstd_safe::compress_bound(raw.len()), 0);
            z.compress_to_buffer(raw, self.buf.get_mut(header..).unwrap_or_default()).ok()
        } else {
            self.buf.resize(header + lz4_flex::block::get_maximum_output_size(raw.len()), 0);
            lz4_flex::block::compress_into(raw, self.buf.get_mut(header..).unwrap_or_default()).ok()
        };
        let ok = n.map(|n| self.buf.truncate(header + n)).is_some();
        // A codec error is no reason to fail a write: the block is stored raw.
        if ok && self.buf.len() <= limit { (&self.buf, codec) } else { (raw, CODEC_RAW) }
    }
}

thread_local! {
    /// A zstd context per reading thread: making one per block costs more
    /// than decoding a small block.
    static ZSTD_DECODER: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

/// Decompresses a stored block of codec `codec`, refusing an uncompressed
/// length above `limit` before allocating it. Offsets in errors are from
/// the start of `stored`.
///
/// # Errors
/// `Corruption` for an unknown codec, a length above `limit`, a damaged
/// payload, or output not exactly the claimed length.
pub fn decompress_block(codec: u8, stored: &[u8], limit: usize) -> Result<Vec<u8>> {
    let mut r = Reader::new(stored);
    let claimed = r.varint()?;
    let at = r.position();
    let payload = stored.get(at..).unwrap_or_default();
    let len = usize::try_from(claimed).ok().filter(|&n| n <= limit.min(MAX_UNCOMPRESSED_BLOCK)).ok_or_else(
        || Error::corruption(0, format!("compressed block claims {claimed} bytes, more than the {limit} allowed")),
    )?;
    let damaged = |why: String| Error::corruption(at as u64, format!("compressed block (codec {codec}): {why}"));
    let n = match codec {
        CODEC_LZ4 => {
            let mut out = vec![0u8; len];
            let n = lz4_flex::block::decompress_into(payload, &mut out).map_err(|e| damaged(e.to_string()))?;
            out.truncate(n);
            out
        }
        CODEC_ZSTD => {
            let mut out = Vec::with_capacity(len);
            ZSTD_DECODER.with_borrow_mut(|d| {
                let d = match d {
                    Some(d) => d,
                    None => d.insert(zstd::bulk::Decompressor::new().map_err(|e| damaged(e.to_string()))?),
                };
                d.decompress_to_buffer(payload, &mut out).map_err(|e| damaged(e.to_string()))
            })?;
            out
        }
        _ => return Err(Error::corruption(0, format!("unknown block codec {codec}"))),
    };
    if n.len() != len {
        return Err(damaged(format!("decompressed to {} bytes, {len} claimed", n.len())));
    }
    Ok(n)
}

#[cfg(test)]
mod tests;
