//! The encoded form of a [`CuckooFilter`].
//!
//! All integers little-endian; `s` is the stash length, `B` the packed
//! bucket bytes, `⌈num_buckets · 4 · f / 8⌉`.
//!
//! ```text
//! offset      size   field
//! 0           1      kind        0x43 ('C'): a cuckoo filter
//! 1           1      version     1
//! 2           1      f           fingerprint bits, 4..=16
//! 3           1      s           stash entries, 0..=4
//! 4           8      num_buckets power of two, 1..=2^32
//! 12          8      len         entries in buckets + stash
//! 20          10·s   stash       per entry: bucket u64 (< num_buckets), fingerprint u16 (1..2^f)
//! 20+10s      B      buckets     bucket b = bits [4fb, 4f(b+1)) of this LSB-first bit string;
//!                                slot j of a bucket = its bits [fj, f(j+1)); 0 = empty;
//!                                unused bits of the last byte are 0
//! 20+10s+B    4      crc32       of every byte before it (codec::seal)
//! ```
//!
//! Decoding checks the crc, then every field: a valid crc over a buffer that
//! violates any rule above (a writer bug, or a deliberate forgery) is still
//! `Corruption`, and `len` must equal the occupied slots plus `s`.

use super::buckets::Buckets;
use super::{CuckooFilter, StashEntry};
use crate::codec::{Reader, seal, unseal};
use crate::filter::FilterCodec;
use crate::{Error, Result};

/// First byte of an encoded cuckoo filter.
pub const KIND: u8 = b'C';
/// Format version written.
pub const VERSION: u8 = 1;
/// Bytes before the stash.
const HEADER_LEN: usize = 20;
/// Bytes per stash entry.
const STASH_ENTRY_LEN: usize = 10;

impl FilterCodec for CuckooFilter {
    /// Serialises the filter (see the format module for the layout).
    fn encode(&self) -> Vec<u8> {
        let data = self.buckets.data();
        let mut out = Vec::with_capacity(HEADER_LEN + STASH_ENTRY_LEN * self.stash.len() + data.len() + 4);
        out.push(KIND);
        out.push(VERSION);
        #[expect(clippy::cast_possible_truncation, reason = "f <= 16 and stash <= 4 by invariant")]
        {
            out.push(self.fingerprint_bits as u8);
            out.push(self.stash.len() as u8);
        }
        out.extend_from_slice(&(self.num_buckets() as u64).to_le_bytes());
        out.extend_from_slice(&(self.len as u64).to_le_bytes());
        for e in &self.stash {
            out.extend_from_slice(&(e.bucket as u64).to_le_bytes());
            out.extend_from_slice(&e.fp.to_le_bytes());
        }
        out.extend_from_slice(data);
        seal(out)
    }

    /// Parses an encoded filter.
    ///
    /// # Errors
    /// `Corruption`, with the offending offset, for bytes that are not a
    /// valid encoding: bad checksum, unknown kind or version, out-of-range
    /// fields, a length that disagrees with the buffer or with the contents.
    fn decode(bytes: &[u8]) -> Result<Self> {
        let body = unseal(bytes)?;
        let mut r = Reader::new(body);
        let kind = r.u8()?;
        if kind != KIND {
            return Err(Error::corruption(0, format!("not a cuckoo filter: kind byte {kind:#04x}")));
        }
        let version = r.u8()?;
        if version != VERSION {
            return Err(Error::corruption(1, format!("unsupported cuckoo filter version {version}")));
        }
        let f = u32::from(r.u8()?);
        if !(CuckooFilter::MIN_FINGERPRINT_BITS..=CuckooFilter::MAX_FINGERPRINT_BITS).contains(&f) {
            return Err(Error::corruption(2, format!("fingerprint width {f} outside 4..=16")));
        }
        let stash_len = usize::from(r.u8()?);
        if stash_len > CuckooFilter::STASH_CAPACITY {
            return Err(Error::corruption(
                3,
                format!("stash of {stash_len} exceeds {}", CuckooFilter::STASH_CAPACITY),
            ));
        }
        let raw_buckets = r.u64()?;
        let num_buckets = usize::try_from(raw_buckets)
            .ok()
            .filter(|&n| n.is_power_of_two() && n as u64 <= CuckooFilter::MAX_BUCKETS)
            .ok_or_else(|| {
                Error::corruption(4, format!("bucket count {raw_buckets} is not a power of two up to 2^32"))
            })?;
        let raw_len = r.u64()?;
        let data_len = Buckets::data_len(num_buckets, f)
            .ok_or_else(|| Error::corruption(4, "bucket count too large for memory"))?;
        // Check the buffer holds what the header promises before allocating.
        let expected = STASH_ENTRY_LEN * stash_len + data_len;
        if r.remaining() != expected {
            return Err(Error::corruption(
                r.position() as u64,
                format!("{} bytes follow the header, expected {expected}", r.remaining()),
            ));
        }
        let mut stash = Vec::with_capacity(stash_len);
        for _ in 0..stash_len {
            let at = r.position() as u64;
            let bucket = usize::try_from(r.u64()?).ok().filter(|&b| b < num_buckets);
            let fp = r.u16()?;
            match bucket {
                Some(bucket) if fp != 0 && u32::from(fp) < 1 << f => stash.push(StashEntry { bucket, fp }),
                _ => return Err(Error::corruption(at, "stash entry out of range")),
            }
        }
        let data_at = r.position() as u64;
        let data = r.bytes(data_len)?;
        r.finish()?;
        let used_bits = num_buckets * 4 * f as usize % 8;
        if let (true, Some(&last)) = (used_bits != 0, data.last())
            && last >> used_bits != 0
        {
            return Err(Error::corruption(data_at + data_len as u64 - 1, "nonzero padding bits"));
        }
        let buckets = Buckets::from_bytes(data, num_buckets, f);
        let len = buckets.count_occupied() + stash_len;
        if u64::try_from(len).ok() != Some(raw_len) {
            return Err(Error::corruption(12, format!("len {raw_len} but {len} entries are present")));
        }
        let mut filter = CuckooFilter::with_buckets(buckets, num_buckets, f);
        filter.len = len;
        filter.stash = stash;
        Ok(filter)
    }

    /// `None`: a cuckoo filter is sized by its capacity and fingerprint
    /// width ([`CuckooFilter::new`]), not by bits per key.
    fn encoded_len(_keys: usize, _bits_per_key: f64) -> Option<usize> {
        None
    }

    fn parameters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("fingerprint_bits", u64::from(self.fingerprint_bits())),
            ("buckets", self.num_buckets() as u64),
            ("capacity", self.capacity() as u64),
            ("keys", self.len() as u64),
            ("stash", self.stash.len() as u64),
        ]
    }
}
