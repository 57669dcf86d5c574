//! `siftdb sst layout`: the file as a list of byte regions.

use std::path::Path;

use serde_json::{Value, json};
use siftdb::table::BlockHandle;
use siftdb::table::format::{BLOCK_TRAILER_LEN, FOOTER_LEN, FORMAT_VERSION_ALIGNED};

use super::open::open_table;
use crate::Outcome;
use crate::output;

struct Region {
    offset: u64,
    size: u64,
    kind: &'static str,
    block: Option<usize>,
}

fn block_regions(out: &mut Vec<Region>, h: BlockHandle, kind: &'static str, block: Option<usize>) {
    out.push(Region { offset: h.offset, size: u64::from(h.size), kind, block });
    out.push(Region {
        offset: h.offset + u64::from(h.size),
        size: BLOCK_TRAILER_LEN as u64,
        kind: "trailer",
        block,
    });
}

/// Runs `sst layout`. Gaps or overlaps between regions are shown as
/// regions of kind `gap` / `overlap` and are a problem (exit 1).
///
/// # Errors
/// A one-line message if the file is not a readable table.
pub fn run(path: &Path, as_json: bool) -> Result<Outcome, String> {
    let table = open_table(path)?;
    let f = table.footer();
    let mut regions = Vec::new();
    for (i, h) in table.data_block_handles().map_err(|e| e.to_string())?.into_iter().enumerate() {
        block_regions(&mut regions, h, "data", Some(i));
    }
    block_regions(&mut regions, f.index, "index", None);
    if !f.filter.is_null() {
        block_regions(&mut regions, f.filter, "filter", None);
    }
    if let Some(h) = table.properties().range_del_block {
        block_regions(&mut regions, h, "range_del", None);
    }
    if let Some(h) = table.properties().range_filter_block {
        block_regions(&mut regions, h, "range_filter", None);
    }
    block_regions(&mut regions, f.properties, "properties", None);
    let file_size = table.file_size();
    regions.push(Region {
        offset: file_size.saturating_sub(FOOTER_LEN as u64),
        size: FOOTER_LEN as u64,
        kind: "footer",
        block: None,
    });
    // Mark what does not tile: the file should be covered exactly once.
    let mut tiled = Vec::with_capacity(regions.len());
    let mut cursor = 0u64;
    let mut anomalies = 0usize;
    for r in regions {
        // Format 4 pads before the filter block so its array is aligned
        // (fewer than 64 zero bytes, checked at open): part of the file.
        let padding =
            r.kind == "filter" && f.version >= FORMAT_VERSION_ALIGNED && r.offset - cursor.min(r.offset) < 64;
        if r.offset > cursor && padding {
            tiled.push(Region { offset: cursor, size: r.offset - cursor, kind: "padding", block: None });
        } else if r.offset > cursor {
            tiled.push(Region { offset: cursor, size: r.offset - cursor, kind: "gap", block: None });
            anomalies += 1;
        } else if r.offset < cursor {
            tiled.push(Region { offset: r.offset, size: cursor - r.offset, kind: "overlap", block: None });
            anomalies += 1;
        }
        cursor = cursor.max(r.offset + r.size);
        tiled.push(r);
    }
    let label = |r: &Region| match (r.kind, r.block) {
        ("data", Some(i)) => format!("data block {i}"),
        ("trailer", Some(i)) => format!("  trailer of data block {i}"),
        ("trailer", None) => "  trailer".to_string(),
        (k, _) => k.to_string(),
    };
    if as_json {
        let list: Vec<Value> = tiled
            .iter()
            .map(|r| json!({ "offset": r.offset, "size": r.size, "kind": r.kind, "block": r.block }))
            .collect();
        output::print_json(&json!({
            "path": path.display().to_string(),
            "file_size": file_size,
            "anomalies": anomalies,
            "regions": list,
        }));
    } else {
        let rows: Vec<Vec<String>> = tiled
            .iter()
            .map(|r| {
                vec![r.offset.to_string(), (r.offset + r.size).to_string(), r.size.to_string(), label(r)]
            })
            .collect();
        print!("{}", output::table(&["offset", "end", "size", "region"], &rows));
        println!("{file_size} bytes, {anomalies} gap(s) or overlap(s)");
    }
    Ok(if anomalies == 0 { Outcome::Clean } else { Outcome::ProblemsFound })
}
