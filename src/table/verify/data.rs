//! The walk over every data block: each block's checksum and contents, the
//! order of its keys, its index key, and a filter probe for every distinct
//! key and prefix, tallying what it reads.

use bytes::Bytes;

use super::tally::Tally;
use super::{VerifyReport, shift, show};
use crate::table::block::Block;
use crate::table::filter_block::TableFilter;
use crate::table::format::{BLOCK_TRAILER_LEN, BlockType, read_block_decoded};
use crate::table::index::Index;
use crate::table::internal_key::{compare_internal_keys, parse_internal_key};
use crate::filter::hash_key;
use crate::key_image::KeyImage;
use crate::prefix::PrefixExtractor;
use crate::table::range_filter_block::TableRangeFilter;

/// Probes a distinct user key in the point filter and, if there is one
/// over the built-in image, the range filter: a "no" is a false negative.
fn probe_key(
    user: &[u8],
    (filter, ranges): (Option<&TableFilter>, Option<&TableRangeFilter>),
    at: u64,
    report: &mut VerifyReport,
) {
    if let Some(f) = filter {
        report.keys_probed += 1;
        if !f.may_contain(hash_key(f.seed(), user)) {
            report.problem(at, format!("filter false negative for key {}", show(user)));
        }
    }
    if let Some(r) = ranges {
        let x = KeyImage::first_bytes().image(user);
        report.range_keys_probed += 1;
        if !r.may_intersect(x, x) {
            report.problem(at, format!("range filter false negative for key {}", show(user)));
        }
    }
}

/// Checks every data block the index names; `index_at` is where the data
/// must end.
pub(super) fn check_data(
    file: &Bytes,
    index: &Index,
    (filter, extractor, ranges): (Option<&TableFilter>, Option<PrefixExtractor>, Option<&TableRangeFilter>),
    (index_at, block_limit): (u64, Option<usize>),
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
        let block = match read_block_decoded(file, handle, BlockType::Data, block_limit)
            .and_then(|b| Block::new(b).map_err(|e| shift(e, handle.offset)))
        {
            Ok(b) => {
                tally.data_raw_bytes += (b.size_bytes() + BLOCK_TRAILER_LEN) as u64;
                // The block was read, so its trailer exists and its crc held.
                let trailer_at = usize::try_from(handle.offset).unwrap_or(usize::MAX) + handle.size as usize;
                if file.get(trailer_at).is_some_and(|t| t >> 4 != 0) {
                    tally.compressed_blocks += 1;
                }
                b
            }
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
                    if new_user {
                        probe_key(user, (filter, ranges), at, report);
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
