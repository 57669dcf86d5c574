//! What the data blocks hold, counted as they are read, and its comparison
//! with what the properties block says they hold.

use super::{VerifyReport, show};
use crate::table::format::Footer;
use crate::table::internal_key::ValueKind;
use crate::table::properties::TableProperties;
use crate::range_del::RangeDels;

/// What the data blocks actually hold, to compare with the properties.
#[derive(Debug, Default)]
pub(super) struct Tally {
    pub(super) entries: u64,
    pub(super) tombstones: u64,
    pub(super) distinct: u64,
    pub(super) prefixes: u64,
    pub(super) smallest: Option<Vec<u8>>,
    pub(super) largest: Option<Vec<u8>>,
    pub(super) min_seq: Option<u64>,
    pub(super) max_seq: u64,
    pub(super) data_bytes: u64,
    /// Data blocks' contents uncompressed, plus trailers.
    pub(super) data_raw_bytes: u64,
    pub(super) compressed_blocks: u64,
    pub(super) range_tombstones: u64,
}

impl Tally {
    pub(super) fn add(&mut self, user: &[u8], seq: u64, kind: ValueKind, new_user: bool) {
        self.entries += 1;
        if kind == ValueKind::Tombstone {
            self.tombstones += 1;
        }
        if new_user {
            self.distinct += 1;
            if self.smallest.is_none() {
                self.smallest = Some(user.to_vec());
            }
            self.largest = Some(user.to_vec());
        }
        self.min_seq = Some(self.min_seq.map_or(seq, |m| m.min(seq)));
        self.max_seq = self.max_seq.max(seq);
    }

    /// Widens the key and sequence ranges to the range tombstones', as the
    /// builder widens the properties'.
    pub(super) fn cover(&mut self, dels: &RangeDels) {
        self.range_tombstones = dels.len() as u64;
        if let Some(lo) = dels.smallest()
            && self.smallest.as_deref().is_none_or(|k| lo < k)
        {
            self.smallest = Some(lo.to_vec());
        }
        if let Some(hi) = dels.largest()
            && self.largest.as_deref().is_none_or(|k| hi > k)
        {
            self.largest = Some(hi.to_vec());
        }
        for t in dels.tombstones() {
            self.min_seq = Some(self.min_seq.map_or(t.seq, |m| m.min(t.seq)));
            self.max_seq = self.max_seq.max(t.seq);
        }
    }
}

/// `prefixes_counted`: the tally counted prefixes (the extractor is known),
/// so the properties' prefix count is compared too.
pub(super) fn check_properties(
    p: &TableProperties,
    (t, prefixes_counted): (&Tally, bool),
    blocks: u64,
    footer: &Footer,
    report: &mut VerifyReport,
) {
    let at = footer.properties.offset;
    let mut differ = |name: &str, stored: String, actual: String| {
        if stored != actual {
            report.problem(at, format!("properties: {name} is {stored}, contents say {actual}"));
        }
    };
    differ("entries", p.entries.to_string(), t.entries.to_string());
    differ("tombstones", p.tombstones.to_string(), t.tombstones.to_string());
    differ("distinct keys", p.distinct_keys.to_string(), t.distinct.to_string());
    differ("range tombstones", p.range_tombstones.to_string(), t.range_tombstones.to_string());
    if prefixes_counted {
        differ("distinct prefixes", p.distinct_prefixes.to_string(), t.prefixes.to_string());
    }
    let key = |k: &Option<Vec<u8>>| k.as_deref().map_or_else(|| "none".to_string(), show);
    differ("smallest key", key(&p.smallest_key), key(&t.smallest));
    differ("largest key", key(&p.largest_key), key(&t.largest));
    differ("min seq", p.min_seq.to_string(), t.min_seq.unwrap_or(0).to_string());
    differ("max seq", p.max_seq.to_string(), t.max_seq.to_string());
    differ("data blocks", p.data_blocks.to_string(), blocks.to_string());
    differ("data bytes", p.data_bytes.to_string(), t.data_bytes.to_string());
    differ("index bytes", p.index_bytes.to_string(), footer.index.size_with_trailer().to_string());
    let filter_bytes = if footer.filter.is_null() { 0 } else { footer.filter.size_with_trailer() };
    differ("filter bytes", p.filter_bytes.to_string(), filter_bytes.to_string());
    if p.compression.is_some() {
        differ("uncompressed data bytes", p.data_raw_bytes.to_string(), t.data_raw_bytes.to_string());
        differ("compressed data blocks", p.compressed_data_blocks.to_string(), t.compressed_blocks.to_string());
    } else if t.compressed_blocks > 0 {
        differ("compression", "none".into(), format!("{} compressed data blocks", t.compressed_blocks));
    }
}
