//! `db info`'s range filters: what each table has, and short empty-range
//! scans measured per level when the tables' range filters use the
//! built-in image.

use serde_json::Value;
use siftdb::{Db, FIRST_BYTES_IMAGE, KeyImage};

/// The values each measured scan covers.
pub const SCAN_LENGTH: u64 = 256;

/// Whether most of the document's tables have a range filter over the
/// built-in image, the one a reader can recompute (a custom image is the
/// application's code).
pub fn tables_use_first_bytes(doc: &Value) -> bool {
    let (mut built_in, mut other) = (0usize, 0usize);
    for level in doc["levels"].as_array().into_iter().flatten() {
        for t in level["table_list"].as_array().into_iter().flatten() {
            match t["range_filter"]["image"].as_str() {
                Some(FIRST_BYTES_IMAGE) => built_in += 1,
                _ => other += 1,
            }
        }
    }
    built_in > 0 && built_in >= other
}

/// Scans [`SCAN_LENGTH`] image values placed at random (by `r`) within
/// the key range of the table `smallest..largest`: almost always empty
/// where keys are sparse, so each table's range filter is asked, and a
/// table opened for nothing counts a false positive.
///
/// # Errors
/// The scan's.
pub fn scan_within(db: &Db, (smallest, largest): (&[u8], &[u8]), r: u64) -> siftdb::Result<()> {
    let image = KeyImage::first_bytes();
    let (lo, hi) = (image.image(smallest), image.image(largest));
    let width = hi.saturating_sub(lo).saturating_sub(SCAN_LENGTH);
    if width == 0 {
        return Ok(());
    }
    let start = lo + r % width;
    let (a, b) = (start.to_be_bytes(), (start + SCAN_LENGTH).to_be_bytes());
    db.range(a.as_slice()..b.as_slice()).next().transpose().map(|_| ())
}
