//! The properties block: what a table holds, for the engine and the
//! inspection tool.
//!
//! A sequence of tagged fields, so fields can be added without a format
//! change; a reader skips tags it does not know:
//!
//! ```text
//! +-------------+----------------+--------------+-------------+-----
//! | tag: varint | len: varint    | value (len)  | tag: varint | ...
//! +-------------+----------------+--------------+-------------+-----
//! ```
//!
//! | tag | field | value encoding |
//! |---|---|---|
//! | 1 | entries | varint |
//! | 2 | distinct user keys | varint |
//! | 3 | tombstones | varint |
//! | 4 | smallest user key, or range tombstone start if smaller | raw bytes (absent in an empty table) |
//! | 5 | largest user key, or range tombstone bound if larger (`range_del::inclusive_end`) | raw bytes (absent in an empty table) |
//! | 6 | min seq | varint |
//! | 7 | max seq | varint |
//! | 8 | data bytes (blocks + trailers) | varint |
//! | 9 | index bytes | varint |
//! | 10 | filter bytes | varint |
//! | 11 | filter kind actually used | UTF-8, as `FilterKind` displays |
//! | 12 | (retired: the filter's bits per key, which the kinds in 11 and 17 and the filter block's header carry; skipped when read) | f64 LE |
//! | 13 | filter fallback reason | UTF-8 (absent if none) |
//! | 14 | level at creation | varint |
//! | 15 | creation time, unix seconds | varint |
//! | 16 | data blocks | varint |
//! | 17 | filter kind requested | UTF-8 |
//! | 18 | prefix extractor the filter's prefix entries come from (absent: none) | UTF-8, as `PrefixExtractor` names it |
//! | 19 | distinct prefixes in the filter (beside the distinct user keys) | varint |
//! | 20 | the range-tombstone block (absent: none; present exactly in format version 2) | block handle (12 bytes) |
//! | 21 | range tombstones in that block | varint |
//!
//! Tags 22–25 are written only by a table written with compression (with
//! or without compressed blocks), so one without is byte for byte as before:
//!
//! | tag | field | value encoding |
//! |---|---|---|
//! | 22 | largest uncompressed data or index block: the bound decompression checks | varint |
//! | 23 | compression the table was written with | UTF-8, as `Compression` displays |
//! | 24 | data bytes uncompressed (contents + trailers; tag 8 is as stored) | varint |
//! | 25 | data blocks stored compressed | varint |
//!
//! Tags 26–28 are written only by a table with a range filter (format
//! version 5, [`range_filter_block`](super::range_filter_block)), and 29
//! by one whose range filter was not built as asked (beside a fallback's
//! block, or alone when none could be built):
//!
//! | tag | field | value encoding |
//! |---|---|---|
//! | 26 | the range-filter block | block handle (12 bytes) |
//! | 27 | non-empty buckets in it | varint |
//! | 28 | its point filter's kind as built | UTF-8, as `FilterKind` displays |
//! | 29 | why the requested kind was not built (absent if it was) | UTF-8 |

use super::format::BlockHandle;
use crate::codec::{Reader, put_length_prefixed, put_varint};
use crate::{Error, Result};

/// Statistics about one table, stored in its properties block.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TableProperties {
    /// Entries (versions and tombstones).
    pub entries: u64,
    /// Distinct user keys.
    pub distinct_keys: u64,
    /// Tombstone entries.
    pub tombstones: u64,
    /// Smallest user key, or the smallest start of a range tombstone if
    /// that is smaller (`None` for an empty table).
    pub smallest_key: Option<Vec<u8>>,
    /// Largest user key, or the largest key a range tombstone may cover
    /// ([`crate::range_del::inclusive_end`]) if that is larger (`None` for
    /// an empty table).
    pub largest_key: Option<Vec<u8>>,
    /// Smallest sequence number of an entry or range tombstone (0 for an
    /// empty table).
    pub min_seq: u64,
    /// Largest sequence number of an entry or range tombstone (0 for an
    /// empty table).
    pub max_seq: u64,
    /// Bytes of data blocks, trailers included.
    pub data_bytes: u64,
    /// Bytes of the index block, trailer included.
    pub index_bytes: u64,
    /// Bytes of the filter block, trailer included (0 without a filter).
    pub filter_bytes: u64,
    /// Number of data blocks.
    pub data_blocks: u64,
    /// The filter kind actually written, as `FilterKind` displays it.
    pub filter_kind: String,
    /// The filter kind the options asked for.
    pub filter_requested: String,
    /// Why the requested filter was not used, if it was not.
    pub filter_fallback_reason: Option<String>,
    /// LSM level the table was written for.
    pub level: u32,
    /// Creation time, seconds since the Unix epoch.
    pub created_unix_secs: u64,
    /// The name of the prefix extractor whose prefixes the filter also
    /// holds ([`crate::PrefixExtractor::name`]); `None` if it holds whole
    /// keys only.
    pub prefix_extractor: Option<String>,
    /// Distinct prefixes in the filter, beside [`TableProperties::distinct_keys`].
    pub distinct_prefixes: u64,
    /// The range-tombstone block, if the table has range tombstones.
    pub range_del_block: Option<BlockHandle>,
    /// Range tombstones in that block (as written, not fragments).
    pub range_tombstones: u64,
    /// The compression the table was written with, as
    /// [`Compression`](super::Compression) displays it; `None` for a table
    /// written without (or before compression existed).
    pub compression: Option<String>,
    /// The largest data or index block's uncompressed contents: the most a
    /// compressed block may claim. 0 when `compression` is `None`.
    pub max_block_bytes: u64,
    /// Bytes of data blocks as if stored raw, trailers included (equal to
    /// [`TableProperties::data_bytes`] when nothing compressed; 0 when
    /// `compression` is `None`).
    pub data_raw_bytes: u64,
    /// Data blocks stored compressed (the others saved less than 1/8).
    pub compressed_data_blocks: u64,
    /// The range-filter block, if the table has one (format version 5).
    pub range_filter_block: Option<BlockHandle>,
    /// Non-empty buckets the range filter holds.
    pub range_filter_buckets: u64,
    /// The range filter's point-filter kind as built.
    pub range_filter_kind: String,
    /// Why the range filter's requested kind was not built, if it was not.
    pub range_filter_fallback_reason: Option<String>,
}

fn put_field(out: &mut Vec<u8>, tag: u64, value: &[u8]) {
    put_varint(out, tag);
    put_length_prefixed(out, value);
}

fn put_u64_field(out: &mut Vec<u8>, tag: u64, v: u64) {
    let mut buf = Vec::with_capacity(10);
    put_varint(&mut buf, v);
    put_field(out, tag, &buf);
}

impl TableProperties {
    /// The codec [`compression`](Self::compression) names
    /// ([`Compression::None`](super::Compression::None) for none, or for a
    /// name this build does not parse).
    #[must_use]
    pub fn codec(&self) -> super::Compression {
        self.compression.as_deref().and_then(|c| c.parse().ok()).unwrap_or_default()
    }

    /// Encodes the properties block.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_u64_field(&mut out, 1, self.entries);
        put_u64_field(&mut out, 2, self.distinct_keys);
        put_u64_field(&mut out, 3, self.tombstones);
        if let Some(k) = &self.smallest_key {
            put_field(&mut out, 4, k);
        }
        if let Some(k) = &self.largest_key {
            put_field(&mut out, 5, k);
        }
        put_u64_field(&mut out, 6, self.min_seq);
        put_u64_field(&mut out, 7, self.max_seq);
        put_u64_field(&mut out, 8, self.data_bytes);
        put_u64_field(&mut out, 9, self.index_bytes);
        put_u64_field(&mut out, 10, self.filter_bytes);
        put_field(&mut out, 11, self.filter_kind.as_bytes());
        if let Some(r) = &self.filter_fallback_reason {
            put_field(&mut out, 13, r.as_bytes());
        }
        put_u64_field(&mut out, 14, u64::from(self.level));
        put_u64_field(&mut out, 15, self.created_unix_secs);
        put_u64_field(&mut out, 16, self.data_blocks);
        put_field(&mut out, 17, self.filter_requested.as_bytes());
        if let Some(e) = &self.prefix_extractor {
            put_field(&mut out, 18, e.as_bytes());
            put_u64_field(&mut out, 19, self.distinct_prefixes);
        }
        // Only tables with range tombstones carry these, so one without is
        // byte for byte what a build before range deletes wrote.
        if let Some(h) = &self.range_del_block {
            let mut buf = Vec::with_capacity(12);
            h.encode_to(&mut buf);
            put_field(&mut out, 20, &buf);
            put_u64_field(&mut out, 21, self.range_tombstones);
        }
        if let Some(c) = &self.compression {
            put_u64_field(&mut out, 22, self.max_block_bytes);
            put_field(&mut out, 23, c.as_bytes());
            put_u64_field(&mut out, 24, self.data_raw_bytes);
            put_u64_field(&mut out, 25, self.compressed_data_blocks);
        }
        if let Some(h) = &self.range_filter_block {
            let mut buf = Vec::with_capacity(12);
            h.encode_to(&mut buf);
            put_field(&mut out, 26, &buf);
            put_u64_field(&mut out, 27, self.range_filter_buckets);
            put_field(&mut out, 28, self.range_filter_kind.as_bytes());
        }
        if let Some(r) = &self.range_filter_fallback_reason {
            put_field(&mut out, 29, r.as_bytes());
        }
        out
    }

    /// Decodes a properties block; unknown tags are skipped.
    ///
    /// # Errors
    /// `Corruption` on a malformed field.
    pub fn decode(block: &[u8]) -> Result<Self> {
        let mut p = TableProperties::default();
        let mut r = Reader::new(block);
        while r.remaining() > 0 {
            let at = r.position() as u64;
            let tag = r.varint()?;
            let value = r.length_prefixed()?;
            let num = || -> Result<u64> {
                let mut vr = Reader::new(value);
                let v = vr.varint()?;
                vr.finish()?;
                Ok(v)
            };
            let text = || -> Result<String> {
                String::from_utf8(value.to_vec())
                    .map_err(|_| Error::corruption(at, format!("property {tag} is not UTF-8")))
            };
            let fix = |e: Error| match e {
                Error::Corruption { file: None, what, .. } => {
                    Error::corruption(at, format!("property {tag}: {what}"))
                }
                other => other,
            };
            match tag {
                1 => p.entries = num().map_err(fix)?,
                2 => p.distinct_keys = num().map_err(fix)?,
                3 => p.tombstones = num().map_err(fix)?,
                4 => p.smallest_key = Some(value.to_vec()),
                5 => p.largest_key = Some(value.to_vec()),
                6 => p.min_seq = num().map_err(fix)?,
                7 => p.max_seq = num().map_err(fix)?,
                8 => p.data_bytes = num().map_err(fix)?,
                9 => p.index_bytes = num().map_err(fix)?,
                10 => p.filter_bytes = num().map_err(fix)?,
                11 => p.filter_kind = text()?,
                13 => p.filter_fallback_reason = Some(text()?),
                14 => {
                    p.level = u32::try_from(num().map_err(fix)?)
                        .map_err(|_| Error::corruption(at, "level does not fit in u32"))?;
                }
                15 => p.created_unix_secs = num().map_err(fix)?,
                16 => p.data_blocks = num().map_err(fix)?,
                17 => p.filter_requested = text()?,
                18 => p.prefix_extractor = Some(text()?),
                19 => p.distinct_prefixes = num().map_err(fix)?,
                20 => p.range_del_block = Some(handle(value).map_err(fix)?),
                21 => p.range_tombstones = num().map_err(fix)?,
                22 => p.max_block_bytes = num().map_err(fix)?,
                23 => p.compression = Some(text()?),
                24 => p.data_raw_bytes = num().map_err(fix)?,
                25 => p.compressed_data_blocks = num().map_err(fix)?,
                26 => p.range_filter_block = Some(handle(value).map_err(fix)?),
                27 => p.range_filter_buckets = num().map_err(fix)?,
                28 => p.range_filter_kind = text()?,
                29 => p.range_filter_fallback_reason = Some(text()?),
                _ => {}
            }
        }
        Ok(p)
    }
}

/// A field holding one block handle and nothing else.
fn handle(value: &[u8]) -> Result<BlockHandle> {
    let mut vr = Reader::new(value);
    let h = BlockHandle::decode_from(&mut vr)?;
    vr.finish()?;
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> TableProperties {
        TableProperties {
            entries: 10,
            distinct_keys: 7,
            tombstones: 2,
            smallest_key: Some(b"a".to_vec()),
            largest_key: Some(b"zz".to_vec()),
            min_seq: 3,
            max_seq: 300,
            data_bytes: 4000,
            index_bytes: 40,
            filter_bytes: 99,
            data_blocks: 1,
            filter_kind: "blocked-bloom:9.84".into(),
            filter_requested: "xor8".into(),
            filter_fallback_reason: Some("xor8: injected build failure".into()),
            level: 2,
            created_unix_secs: 1_700_000_000,
            prefix_extractor: Some("up-to:0x3a".into()),
            distinct_prefixes: 3,
            range_del_block: Some(BlockHandle { offset: 4140, size: 33 }),
            range_tombstones: 2,
            compression: Some("zstd:3".into()),
            max_block_bytes: 4200,
            data_raw_bytes: 9000,
            compressed_data_blocks: 1,
            range_filter_block: Some(BlockHandle { offset: 4180, size: 700 }),
            range_filter_buckets: 6,
            range_filter_kind: "ribbon:10".into(),
            range_filter_fallback_reason: Some("ribbon: injected".into()),
        }
    }

    #[test]
    fn round_trips_and_skips_unknown_tags() {
        let p = sample();
        let mut enc = p.encode();
        assert_eq!(TableProperties::decode(&enc).unwrap(), p);
        put_field(&mut enc, 1000, b"a field from the future");
        assert_eq!(TableProperties::decode(&enc).unwrap(), p);
    }

    #[test]
    fn tables_without_a_prefix_extractor_round_trip() {
        let p = TableProperties { prefix_extractor: None, distinct_prefixes: 0, ..sample() };
        let enc = p.encode();
        assert_eq!(TableProperties::decode(&enc).unwrap(), p);
        assert!(enc.len() < sample().encode().len());
    }

    #[test]
    fn tables_without_range_tombstones_write_neither_tag() {
        let p = TableProperties { range_del_block: None, range_tombstones: 0, ..sample() };
        let enc = p.encode();
        assert_eq!(TableProperties::decode(&enc).unwrap(), p);
        let mut with = enc.clone();
        put_field(&mut with, 20, &[0; 12]);
        put_u64_field(&mut with, 21, 0);
        assert_eq!(sample().encode().len(), with.len());
        // A handle of the wrong length is damage, not a guess.
        let mut bad = enc;
        put_field(&mut bad, 20, &[0; 11]);
        assert!(TableProperties::decode(&bad).unwrap_err().is_corruption());
    }

    #[test]
    fn tables_without_a_range_filter_write_none_of_its_tags() {
        let none = TableProperties {
            range_filter_block: None,
            range_filter_buckets: 0,
            range_filter_kind: String::new(),
            range_filter_fallback_reason: None,
            ..sample()
        };
        let enc = none.encode();
        assert_eq!(TableProperties::decode(&enc).unwrap(), none.clone());
        let tags_26_to_29 = 2 + 12 + 2 + 1 + 2 + "ribbon:10".len() + 2 + "ribbon: injected".len();
        assert_eq!(sample().encode().len(), enc.len() + tags_26_to_29);
        let mut bad = enc;
        put_field(&mut bad, 26, &[0; 13]);
        assert!(TableProperties::decode(&bad).unwrap_err().is_corruption());
        // Why a table has none is kept without a block.
        let failed = TableProperties { range_filter_fallback_reason: Some("no filter".into()), ..none };
        assert_eq!(TableProperties::decode(&failed.encode()).unwrap(), failed);
    }

    #[test]
    fn tables_written_without_compression_write_none_of_its_tags() {
        let p = TableProperties {
            compression: None,
            max_block_bytes: 0,
            data_raw_bytes: 0,
            compressed_data_blocks: 0,
            ..sample()
        };
        let enc = p.encode();
        assert_eq!(TableProperties::decode(&enc).unwrap(), p);
        assert!(enc.len() < sample().encode().len());
    }

    #[test]
    fn tables_written_with_the_retired_bits_per_key_field_still_read() {
        let p = sample();
        let mut enc = p.encode();
        assert!(!enc.windows(8).any(|w| w == 9.84f64.to_le_bytes()), "field 12 is no longer written");
        put_field(&mut enc, 12, &9.84f64.to_le_bytes());
        assert_eq!(TableProperties::decode(&enc).unwrap(), p);
    }

    #[test]
    fn truncations_are_corruption_and_flips_never_panic() {
        let enc = sample().encode();
        for len in 0..enc.len() {
            // A cut exactly between fields decodes (the block crc guards
            // against that); anywhere else it must be Corruption.
            if let Err(e) = TableProperties::decode(&enc[..len]) {
                assert!(e.is_corruption());
            }
        }
        for i in 0..enc.len() {
            let mut bad = enc.clone();
            bad[i] ^= 0xa5;
            if let Err(e) = TableProperties::decode(&bad) {
                assert!(e.is_corruption());
            }
        }
    }
}
