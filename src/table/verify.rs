//! A full check of one table file, for the inspection tool and for
//! database verification: everything [`super::Table::open`] trusts or
//! checks lazily, checked now.
//!
//! Unlike opening, verification keeps going after a problem so one run
//! reports every damaged block, each with its file offset:
//!
//! - every block's trailer (type and crc32), data blocks included, and
//!   every compressed block decompresses to the length it claims, within
//!   the table's bound;
//! - the regions tile the file: data blocks, index, filter, range
//!   tombstones, properties, footer, with no gap or overlap but the
//!   zeros that align a format-4 filter block;
//! - the range-tombstone block decodes (ranges not empty, sequence numbers
//!   in range), and the format version agrees with its presence;
//! - the range-filter block decodes, the format version agrees with its
//!   presence, its bucket count with the properties', and, built over the
//!   built-in image, it answers "maybe" for every distinct user key's image
//!   (a false negative would make a range scan skip the table);
//! - internal keys strictly ascending within and across data blocks, and
//!   each index key equal to the last key of its data block;
//! - the filter answers "may contain" for every distinct user key (a false
//!   negative would make the table lose data), and, in a table written with
//!   a prefix extractor, for every distinct prefix (a false negative would
//!   make a prefix scan skip the table);
//! - the properties block agrees with the contents (entries, tombstones,
//!   distinct keys, range tombstones, key range and sequence range (both
//!   widened by the range tombstones), block counts and sizes).
//!
//! Only a file that is not a table at all (no valid footer, unreadable)
//! is an `Err`; everything else is a [`Problem`] in the report.

mod data;
mod report;
mod tally;

pub use report::{Problem, VerifyReport};

use std::path::Path;

use bytes::Bytes;

use super::filter_block::TableFilter;
use super::format::{
    BlockHandle, BlockType, FOOTER_LEN, Footer, check_filter_padding, check_range_del_version,
    check_range_filter_version, read_block, read_block_decoded,
};
use super::index::Index;
use super::properties::TableProperties;
use super::range_del_block;
use super::range_filter_block::TableRangeFilter;
use crate::key_image::FIRST_BYTES_IMAGE;
use crate::fs::FileSystem;
use crate::range_del::RangeDels;
use crate::{Error, Result};
use data::check_data;
use tally::check_properties;

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
    // Without the properties' bound, the bound any table may claim.
    let block_limit = super::reader::block_limit(footer, props.as_ref().unwrap_or(&TableProperties::default()));
    report.blocks_checked += 1;
    let index = match read_block_decoded(file, footer.index, BlockType::Index, block_limit)
        .and_then(|b| Index::new(b).map_err(|e| shift(e, footer.index.offset)))
    {
        Ok(i) => Some(i),
        Err(e) => {
            report.error(footer.index.offset, &e);
            None
        }
    };
    let range_del = props.as_ref().and_then(|p| p.range_del_block);
    let range_filter = props.as_ref().and_then(|p| p.range_filter_block);
    check_tiling(file, footer, (range_del, range_filter), &mut report);
    let ranges = check_range_filter(file, footer, props.as_ref(), &mut report);
    let dels = check_range_dels(file, footer, props.as_ref(), &mut report);
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
    let mut tally = check_data(
        file,
        &index,
        (filter.as_ref(), extractor, ranges.as_ref().filter(|r| r.image() == FIRST_BYTES_IMAGE)),
        (footer.index.offset, block_limit),
        &mut report,
    );
    // Counts taken from a partial read would only restate the damage as
    // property mismatches, so they are compared only when complete.
    if let Some(p) = &props
        && report.unreadable_data_blocks == 0
        && let Some(dels) = dels
    {
        tally.cover(&dels);
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

/// The range tombstones, empty for a table without; `None` if the block
/// (or the properties naming it) could not be read, so the properties'
/// bounds cannot be compared.
fn check_range_dels(
    file: &Bytes,
    footer: &Footer,
    props: Option<&TableProperties>,
    report: &mut VerifyReport,
) -> Option<RangeDels> {
    let p = props?;
    let version_at = file.len().saturating_sub(FOOTER_LEN) as u64 + 36;
    if let Err(e) = check_range_del_version(footer.version, p.range_del_block.is_some(), version_at) {
        report.error(version_at, &e);
    }
    let Some(h) = p.range_del_block else {
        return Some(RangeDels::default());
    };
    report.blocks_checked += 1;
    match read_block(file, h, BlockType::RangeDel)
        .and_then(|b| range_del_block::decode(&b).map_err(|e| shift(e, h.offset)))
    {
        Ok(dels) => {
            report.range_tombstones_checked = dels.len() as u64;
            Some(dels)
        }
        Err(e) => {
            report.error(h.offset, &e);
            None
        }
    }
}

/// The range filter, decoded, if the table has one that decodes; its
/// version agreement and bucket count checked.
fn check_range_filter(
    file: &Bytes,
    footer: &Footer,
    props: Option<&TableProperties>,
    report: &mut VerifyReport,
) -> Option<TableRangeFilter> {
    let p = props?;
    let version_at = file.len().saturating_sub(FOOTER_LEN) as u64 + 36;
    if let Err(e) = check_range_filter_version(footer.version, p.range_filter_block.is_some(), version_at) {
        report.error(version_at, &e);
    }
    let h = p.range_filter_block?;
    report.blocks_checked += 1;
    let decoded = read_block(file, h, BlockType::RangeFilter)
        .and_then(|b| TableRangeFilter::decode(&b).map_err(|e| shift(e, h.offset)));
    match decoded {
        Ok(r) => {
            let buckets = r.points().map(|f| f.header().keys);
            if buckets.is_some_and(|b| b != p.range_filter_buckets) {
                report.problem(
                    h.offset,
                    format!("range filter holds {buckets:?} buckets, the properties say {}", p.range_filter_buckets),
                );
            }
            Some(r)
        }
        Err(e) => {
            report.error(h.offset, &e);
            None
        }
    }
}

/// Index, filter, range tombstones, properties and footer must follow one
/// another exactly.
fn check_tiling(
    file: &[u8],
    footer: &Footer,
    (range_del, range_filter): (Option<BlockHandle>, Option<BlockHandle>),
    report: &mut VerifyReport,
) {
    let file_len = file.len() as u64;
    let end = |h: BlockHandle| h.offset.saturating_add(h.size_with_trailer());
    // The zeros a format-4 writer puts before the filter block to align it.
    let padding = |a: &str, b: &str| a == "index" && b == "filter" && check_filter_padding(file, footer).is_ok();
    let mut regions = vec![("index", footer.index)];
    if !footer.filter.is_null() {
        regions.push(("filter", footer.filter));
    }
    if let Some(h) = range_del {
        regions.push(("range-tombstone", h));
    }
    if let Some(h) = range_filter {
        regions.push(("range-filter", h));
    }
    regions.push(("properties", footer.properties));
    for pair in regions.windows(2) {
        if let [(a, ha), (b, hb)] = pair
            && end(*ha) != hb.offset
            && !padding(a, b)
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

/// Bytes as text with non-printable bytes escaped (`\x00`).
fn show(bytes: &[u8]) -> String {
    format!("\"{}\"", bytes.escape_ascii())
}

#[cfg(test)]
mod tests;
