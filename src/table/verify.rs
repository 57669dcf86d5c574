//! A full check of one table file, for the inspection tool and for
//! database verification: everything [`super::Table::open`] trusts or
//! checks lazily, checked now.
//!
//! Unlike opening, verification keeps going after a problem so one run
//! reports every damaged block, each with its file offset:
//!
//! - every block's trailer (type and crc32), data blocks included;
//! - the regions tile the file: data blocks, index, filter, properties,
//!   footer, with no gap or overlap;
//! - internal keys strictly ascending within and across data blocks, and
//!   each index key equal to the last key of its data block;
//! - the filter answers "may contain" for every distinct user key (a false
//!   negative would make the table lose data), and, in a table written with
//!   a prefix extractor, for every distinct prefix (a false negative would
//!   make a prefix scan skip the table);
//! - the properties block agrees with the contents (entries, tombstones,
//!   distinct keys, key range, sequence range, block counts and sizes).
//!
//! Only a file that is not a table at all (no valid footer, unreadable)
//! is an `Err`; everything else is a [`Problem`] in the report.

use std::path::Path;

use bytes::Bytes;

use super::block::Block;
use super::filter_block::TableFilter;
use super::format::{BlockHandle, BlockType, FOOTER_LEN, Footer, read_block};
use super::index::Index;
use super::internal_key::{ValueKind, compare_internal_keys, parse_internal_key};
use super::properties::TableProperties;
use crate::filter::hash_key;
use crate::prefix::PrefixExtractor;
use crate::fs::FileSystem;
use crate::{Error, Result};

/// One thing wrong with a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// File offset of the damaged or inconsistent bytes.
    pub offset: u64,
    /// What is wrong, in words.
    pub what: String,
}

/// The outcome of [`verify_table`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Blocks whose trailer was checked (data, index, filter, properties).
    pub blocks_checked: u64,
    /// Entries read from data blocks.
    pub entries_checked: u64,
    /// Distinct user keys probed against the filter.
    pub keys_probed: u64,
    /// Distinct prefixes probed against the filter (tables written with a
    /// prefix extractor this build knows).
    pub prefixes_probed: u64,
    /// Data blocks that could not be read in full (bad checksum or
    /// malformed contents). When any is, the contents are incomplete and
    /// are not compared with the properties or the filter's key count.
    pub unreadable_data_blocks: u64,
    /// Whether the properties (and the filter header's key count) were
    /// compared with the contents: only when the index, the properties
    /// and every data block could be read.
    pub properties_compared: bool,
    /// Everything found wrong, in file order of discovery.
    pub problems: Vec<Problem>,
}

impl VerifyReport {
    /// Whether no problem was found.
    #[must_use]
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }

    fn problem(&mut self, offset: u64, what: impl Into<String>) {
        self.problems.push(Problem { offset, what: what.into() });
    }

    fn error(&mut self, fallback_offset: u64, e: &Error) {
        match e {
            Error::Corruption { offset, what, .. } => self.problem(*offset, what.clone()),
            other => self.problem(fallback_offset, other.to_string()),
        }
    }
}

/// What the data blocks actually hold, to compare with the properties.
#[derive(Debug, Default)]
struct Tally {
    entries: u64,
    tombstones: u64,
    distinct: u64,
    prefixes: u64,
    smallest: Option<Vec<u8>>,
    largest: Option<Vec<u8>>,
    min_seq: Option<u64>,
    max_seq: u64,
    data_bytes: u64,
}

/// Reads `path` through `fs` (never writing it) and checks everything
/// listed in the module docs.
///
/// # Errors
/// `Io` if the file cannot be read; `Corruption` (naming the file) if it
/// has no valid table footer, so is not a table or is truncated.
pub fn verify_table(fs: &dyn FileSystem, path: &Path) -> Result<VerifyReport> {
    let file = Bytes::from(fs.read(path)?);
    let footer = Footer::decode(&file).map_err(|e| e.at_file(path, 0))?;
    Ok(verify_bytes(&file, &footer))
}

fn verify_bytes(file: &Bytes, footer: &Footer) -> VerifyReport {
    let mut report = VerifyReport::default();
    check_tiling(file.len() as u64, footer, &mut report);

    report.blocks_checked += 1;
    let index = match read_block(file, footer.index, BlockType::Index)
        .and_then(|b| Index::new(b).map_err(|e| shift(e, footer.index.offset)))
    {
        Ok(i) => Some(i),
        Err(e) => {
            report.error(footer.index.offset, &e);
            None
        }
    };
    report.blocks_checked += 1;
    let props = match read_block(file, footer.properties, BlockType::Properties)
        .and_then(|b| TableProperties::decode(&b).map_err(|e| shift(e, footer.properties.offset)))
    {
        Ok(p) => Some(p),
        Err(e) => {
            report.error(footer.properties.offset, &e);
            None
        }
    };
    let filter = if footer.filter.is_null() {
        None
    } else {
        report.blocks_checked += 1;
        match read_block(file, footer.filter, BlockType::Filter)
            .and_then(|b| TableFilter::decode(&b).map_err(|e| shift(e, footer.filter.offset)))
        {
            Ok(f) => Some(f),
            Err(e) => {
                report.error(footer.filter.offset, &e);
                None
            }
        }
    };

    let Some(index) = index else {
        report.problem(footer.index.offset, "data blocks not checked: the index block is unreadable");
        return report;
    };
    let extractor = props.as_ref().and_then(|p| p.prefix_extractor.as_deref()).and_then(|n| n.parse().ok());
    let tally = check_data(file, &index, (filter.as_ref(), extractor), footer.index.offset, &mut report);
    // Counts taken from a partial read would only restate the damage as
    // property mismatches, so they are compared only when complete.
    if let Some(p) = &props
        && report.unreadable_data_blocks == 0
    {
        report.properties_compared = true;
        check_properties(p, (&tally, extractor.is_some()), index.len() as u64, footer, &mut report);
        // The filter holds the keys and the prefixes (counted from the data
        // when the extractor is known, else as the properties say).
        let prefixes = if extractor.is_some() { tally.prefixes } else { p.distinct_prefixes };
        let entries = tally.distinct.saturating_add(prefixes);
        if let Some(f) = &filter
            && f.header().keys != entries
        {
            report.problem(
                footer.filter.offset,
                format!(
                    "filter header says {} keys, data holds {} keys and {prefixes} prefixes",
                    f.header().keys,
                    tally.distinct
                ),
            );
        }
    }
    report
}

fn shift(e: Error, base: u64) -> Error {
    match e {
        Error::Corruption { file, offset, what } => {
            Error::Corruption { file, offset: offset.saturating_add(base), what }
        }
        other => other,
    }
}

/// Index, filter, properties and footer must follow one another exactly.
fn check_tiling(file_len: u64, footer: &Footer, report: &mut VerifyReport) {
    let end = |h: BlockHandle| h.offset.saturating_add(h.size_with_trailer());
    let mut regions = vec![("index", footer.index)];
    if !footer.filter.is_null() {
        regions.push(("filter", footer.filter));
    }
    regions.push(("properties", footer.properties));
    for pair in regions.windows(2) {
        if let [(a, ha), (b, hb)] = pair
            && end(*ha) != hb.offset
        {
            report.problem(
                hb.offset,
                format!("{b} block at {} does not follow the {a} block (ends {})", hb.offset, end(*ha)),
            );
        }
    }
    let footer_at = file_len.saturating_sub(FOOTER_LEN as u64);
    if end(footer.properties) != footer_at {
        report.problem(
            end(footer.properties),
            format!("properties block ends at {}, footer starts at {footer_at}", end(footer.properties)),
        );
    }
}

fn check_data(
    file: &Bytes,
    index: &Index,
    (filter, extractor): (Option<&TableFilter>, Option<PrefixExtractor>),
    index_at: u64,
    report: &mut VerifyReport,
) -> Tally {
    let mut tally = Tally::default();
    let mut prev_key: Option<Vec<u8>> = None;
    let mut last_prefix: Option<Vec<u8>> = None;
    let mut data_end = 0u64;
    for i in 0..index.len() {
        let Ok((index_key, handle)) = index.entry(i) else { continue };
        data_end = handle.offset.saturating_add(handle.size_with_trailer());
        tally.data_bytes += handle.size_with_trailer();
        report.blocks_checked += 1;
        let block = match read_block(file, handle, BlockType::Data)
            .and_then(|b| Block::new(b).map_err(|e| shift(e, handle.offset)))
        {
            Ok(b) => b,
            Err(e) => {
                report.error(handle.offset, &e);
                report.unreadable_data_blocks += 1;
                // Keys after a damaged block are still compared to the
                // index key, the best bound we have for it.
                prev_key = Some(index_key.to_vec());
                continue;
            }
        };
        let at = handle.offset;
        let mut it = block.cursor();
        let mut step = it.seek_to_first();
        let mut last_in_block: Option<Vec<u8>> = None;
        while step.is_ok() && it.valid() {
            let key = it.key().to_vec();
            report.entries_checked += 1;
            match parse_internal_key(&key) {
                Ok((user, seq, kind)) => {
                    let new_user = match &prev_key {
                        Some(prev) => {
                            if compare_internal_keys(prev, &key).is_ok_and(std::cmp::Ordering::is_ge) {
                                report
                                    .problem(at, format!("data block {i}: key {} out of order", show(&key)));
                            }
                            parse_internal_key(prev).map_or(true, |(pu, _, _)| pu != user)
                        }
                        None => true,
                    };
                    tally.add(user, seq, kind, new_user);
                    if new_user && let Some(f) = filter {
                        report.keys_probed += 1;
                        if !f.may_contain(hash_key(f.seed(), user)) {
                            report.problem(at, format!("filter false negative for key {}", show(user)));
                        }
                    }
                    // As the builder counts them: a prefix differing from the last one.
                    if new_user
                        && let Some(q) = extractor.as_ref().and_then(|e| e.extract(user))
                        && last_prefix.as_deref() != Some(q)
                    {
                        tally.prefixes += 1;
                        last_prefix = Some(q.to_vec());
                        if let Some(f) = filter {
                            report.prefixes_probed += 1;
                            if !f.may_contain(PrefixExtractor::hash(f.seed(), q)) {
                                report.problem(at, format!("filter false negative for prefix {}", show(q)));
                            }
                        }
                    }
                }
                Err(e) => report.problem(at, format!("data block {i}: {e}")),
            }
            prev_key = Some(key.clone());
            last_in_block = Some(key);
            step = it.advance();
        }
        if let Err(e) = step {
            report.error(at, &shift(e, at));
            report.unreadable_data_blocks += 1;
        }
        match last_in_block {
            None => report.problem(at, format!("data block {i} is empty")),
            Some(last) if last != index_key => report.problem(
                at,
                format!(
                    "index key {} for data block {i} differs from its last key {}",
                    show(index_key),
                    show(&last)
                ),
            ),
            Some(_) => {}
        }
    }
    if data_end != index_at {
        report.problem(
            data_end,
            format!("data blocks end at {data_end}, the index block starts at {index_at}"),
        );
    }
    tally
}

impl Tally {
    fn add(&mut self, user: &[u8], seq: u64, kind: ValueKind, new_user: bool) {
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
}

/// `prefixes_counted`: the tally counted prefixes (the extractor is known),
/// so the properties' prefix count is compared too.
fn check_properties(
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
}

/// Bytes as text with non-printable bytes escaped (`\x00`).
fn show(bytes: &[u8]) -> String {
    format!("\"{}\"", bytes.escape_ascii())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::FilterKind;
    use crate::fs::StdFs;
    use crate::table::{TableBuilder, TableOptions};

    fn build(dir: &Path, filter: FilterKind) -> std::path::PathBuf {
        build_with(dir, TableOptions { block_bytes: 256, filter, ..TableOptions::default() })
    }

    fn build_with(dir: &Path, opts: TableOptions) -> std::path::PathBuf {
        let path = dir.join("000001.sst");
        let mut b = TableBuilder::create(&path, opts).unwrap();
        for i in 0..200u32 {
            let key = format!("key{i:05}");
            b.add(key.as_bytes(), u64::from(i) + 10, ValueKind::Value, b"value").unwrap();
            if i % 7 == 0 {
                b.add(key.as_bytes(), u64::from(i) + 1, ValueKind::Tombstone, b"").unwrap();
            }
        }
        b.finish().unwrap();
        path
    }

    #[test]
    fn a_fresh_table_is_clean() {
        let dir = tempfile::tempdir().unwrap();
        for kind in [FilterKind::None, FilterKind::BinaryFuse8, FilterKind::Bloom { bits_per_key: 10.0 }] {
            let path = build(dir.path(), kind);
            let r = verify_table(&StdFs, &path).unwrap();
            assert!(r.is_clean(), "{kind}: {:?}", r.problems);
            assert_eq!(r.entries_checked, 229);
            assert_eq!(r.keys_probed, if kind == FilterKind::None { 0 } else { 200 });
            std::fs::remove_file(&path).unwrap();
        }
    }

    /// A table whose filter holds prefixes too: its header counts keys and
    /// prefixes, and every prefix is probed (before, verification called
    /// every such table's key count wrong).
    #[test]
    fn a_table_with_prefixes_is_clean_and_its_prefixes_are_probed() {
        let dir = tempfile::tempdir().unwrap();
        for (extractor, prefixes) in [(PrefixExtractor::fixed(7), 20), (PrefixExtractor::up_to(b'9'), 20)] {
            let opts = TableOptions {
                block_bytes: 256,
                filter: FilterKind::BinaryFuse8,
                prefix_extractor: Some(extractor),
                ..TableOptions::default()
            };
            let path = build_with(dir.path(), opts);
            let r = verify_table(&StdFs, &path).unwrap();
            assert!(r.is_clean(), "{extractor}: {:?}", r.problems);
            assert!(r.properties_compared);
            assert_eq!((r.keys_probed, r.prefixes_probed), (200, prefixes), "{extractor}");
            std::fs::remove_file(&path).unwrap();
        }
    }

    #[test]
    fn every_flipped_byte_is_found_and_data_damage_names_its_block() {
        let dir = tempfile::tempdir().unwrap();
        let path = build(dir.path(), FilterKind::Xor8);
        let good = std::fs::read(&path).unwrap();
        let footer = Footer::decode(&good).unwrap();
        let index =
            Index::new(read_block(&Bytes::from(good.clone()), footer.index, BlockType::Index).unwrap())
                .unwrap();
        let blocks: Vec<BlockHandle> = (0..index.len()).map(|i| index.entry(i).unwrap().1).collect();
        let bad_path = dir.path().join("bad.sst");
        for i in (0..good.len()).step_by(3) {
            let mut bad = good.clone();
            bad[i] ^= 0x41;
            std::fs::write(&bad_path, &bad).unwrap();
            match verify_table(&StdFs, &bad_path) {
                Err(e) => assert!(e.is_corruption(), "flip at {i}: {e}"),
                Ok(r) => {
                    assert!(!r.is_clean(), "flip at {i} went unnoticed");
                    if let Some(h) = blocks
                        .iter()
                        .find(|h| (h.offset..h.offset + h.size_with_trailer()).contains(&(i as u64)))
                    {
                        assert!(
                            r.problems.iter().any(|p| p.offset == h.offset),
                            "flip at {i}: {:?}",
                            r.problems
                        );
                    }
                }
            }
        }
    }

    fn data_handles(bytes: &[u8]) -> (Footer, Vec<BlockHandle>) {
        let footer = Footer::decode(bytes).unwrap();
        let index =
            Index::new(read_block(&Bytes::copy_from_slice(bytes), footer.index, BlockType::Index).unwrap())
                .unwrap();
        (footer, (0..index.len()).map(|i| index.entry(i).unwrap().1).collect())
    }

    #[test]
    fn one_damaged_data_block_is_one_problem_and_skips_the_property_comparison() {
        let dir = tempfile::tempdir().unwrap();
        let path = build(dir.path(), FilterKind::BinaryFuse8);
        let clean = verify_table(&StdFs, &path).unwrap();
        assert!(clean.properties_compared && clean.unreadable_data_blocks == 0);
        let mut bytes = std::fs::read(&path).unwrap();
        let (_, blocks) = data_handles(&bytes);
        let h = blocks[2];
        bytes[usize::try_from(h.offset).unwrap() + 3] ^= 0x10;
        std::fs::write(&path, &bytes).unwrap();
        let r = verify_table(&StdFs, &path).unwrap();
        assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
        assert_eq!(r.problems[0].offset, h.offset);
        assert_eq!(r.unreadable_data_blocks, 1);
        assert!(!r.properties_compared);
    }

    #[test]
    fn an_unreadable_index_is_reported_at_its_own_offset() {
        let dir = tempfile::tempdir().unwrap();
        let path = build(dir.path(), FilterKind::BinaryFuse8);
        let mut bytes = std::fs::read(&path).unwrap();
        let (footer, _) = data_handles(&bytes);
        bytes[usize::try_from(footer.index.offset).unwrap() + 2] ^= 0x04;
        std::fs::write(&path, &bytes).unwrap();
        let r = verify_table(&StdFs, &path).unwrap();
        assert!(!r.problems.is_empty());
        assert!(r.problems.iter().all(|p| p.offset == footer.index.offset), "{:?}", r.problems);
        assert!(r.problems.iter().any(|p| p.what.contains("index block is unreadable")));
    }

    #[test]
    fn truncated_and_foreign_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = build(dir.path(), FilterKind::BinaryFuse8);
        let good = std::fs::read(&path).unwrap();
        let bad_path = dir.path().join("bad.sst");
        for len in [0, 10, good.len() / 2, good.len() - 1] {
            std::fs::write(&bad_path, &good[..len]).unwrap();
            assert!(verify_table(&StdFs, &bad_path).unwrap_err().is_corruption(), "len {len}");
        }
        assert!(matches!(verify_table(&StdFs, &dir.path().join("missing.sst")), Err(Error::Io(_))));
    }
}
