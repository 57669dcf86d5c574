//! `siftdb sst info`: everything about a table that does not need a scan.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};
use siftdb::range_del::RangeTombstone;
use siftdb::table::format::{BLOCK_TRAILER_LEN, FOOTER_LEN, TABLE_MAGIC};
use siftdb::table::{BlockHandle, FilterStatus, Table, TableProperties};

use super::filter_params::filter_params;
use super::open::open_table;
use crate::Outcome;
use crate::bytes_arg::show;
use crate::output;

/// `none`, `loaded`, `unknown` or `dropped`.
#[must_use]
pub fn status_name(status: &FilterStatus) -> &'static str {
    match status {
        FilterStatus::None => "none",
        FilterStatus::Loaded => "loaded",
        FilterStatus::Unknown => "unknown",
        FilterStatus::Dropped(_) => "dropped",
    }
}

/// The `filter` object shared by `sst info` and `db info`.
#[must_use]
pub fn filter_json(table: &Table) -> Value {
    let d = table.filter_details();
    let status = status_name(&d.status);
    let dropped_reason = match &d.status {
        FilterStatus::Dropped(why) => Some(why.clone()),
        _ => None,
    };
    let params = if d.status == FilterStatus::Loaded { filter_params(table.path()) } else { None };
    json!({
        "status": status,
        "kind": d.kind.map(|k| k.to_string()).unwrap_or_else(|| table.properties().filter_kind.clone()),
        "requested": d.requested,
        "fell_back": d.fallback_reason.is_some(),
        "fallback_reason": d.fallback_reason,
        "dropped_as_corrupt": matches!(d.status, FilterStatus::Dropped(_)),
        "dropped_reason": dropped_reason,
        "hash_seed": d.header.map(|h| h.seed),
        "header_version": d.header.map(|h| h.version),
        "header_kind_tag": d.header.map(|h| h.tag),
        "keys": d.header.map(|h| h.keys),
        "bits_per_key_parameter": d.header.map(|h| h.bits_per_key),
        "bytes": d.block_bytes,
        "bits_per_key": d.bits_per_key,
        "theoretical_fpr": d.theoretical_fpr,
        "prefix_extractor": table.properties().prefix_extractor,
        "distinct_prefixes": table.properties().distinct_prefixes,
        "params": params,
    })
}

/// Range tombstones listed one by one in `sst info`'s text; the rest are
/// counted (the JSON lists them all).
const SHOWN_RANGE_TOMBSTONES: usize = 10;

/// The JSON object of one range tombstone, keys as the tool prints keys
/// elsewhere; shared by `sst info` and `sst scan`.
#[must_use]
pub fn range_tombstone_json(t: &RangeTombstone, hex: bool) -> Value {
    json!({ "start": show(&t.start, hex), "end": show(&t.end, hex), "seq": t.seq })
}

/// `[start, end) @seq`.
#[must_use]
pub fn range_tombstone_line(t: &RangeTombstone, hex: bool) -> String {
    format!("[{}, {}) @{}", show(&t.start, hex), show(&t.end, hex), t.seq)
}

fn handle_json(h: BlockHandle) -> Value {
    json!({ "offset": h.offset, "size": h.size, "size_with_trailer": h.size_with_trailer() })
}

/// The codec, and the data blocks' bytes raw and as stored. A table
/// written without compression stores its data raw.
fn compression_json(p: &TableProperties) -> Value {
    let raw = if p.compression.is_some() { p.data_raw_bytes } else { p.data_bytes };
    #[expect(clippy::cast_precision_loss, reason = "a ratio for display")]
    let ratio = if p.data_bytes == 0 { 1.0 } else { raw as f64 / p.data_bytes as f64 };
    json!({
        "codec": p.compression.as_deref().unwrap_or("none"),
        "data_blocks_compressed": p.compressed_data_blocks,
        "data_raw_bytes": raw,
        "data_stored_bytes": p.data_bytes,
        "ratio": (ratio * 1000.0).round() / 1000.0,
        "max_block_bytes": (p.compression.is_some()).then_some(p.max_block_bytes),
    })
}

/// Runs `sst info`.
///
/// # Errors
/// A one-line message if the file is not a readable table.
pub fn run(path: &Path, hex: bool, as_json: bool) -> Result<Outcome, String> {
    let table = open_table(path)?;
    let p = table.properties();
    let f = table.footer();
    let file_size = table.file_size();
    let key = |k: &Option<Vec<u8>>| k.as_deref().map(|k| show(k, hex));
    let filter_bytes = if f.filter.is_null() { 0 } else { f.filter.size_with_trailer() };
    let tombstones = table.range_dels().map(|d| d.tombstones()).unwrap_or_default();
    let range_del_bytes = p.range_del_block.map_or(0, |h| h.size_with_trailer());
    let range_filter_bytes = p.range_filter_block.map_or(0, |h| h.size_with_trailer());
    let doc = json!({
        "path": path.display().to_string(),
        "file_size": file_size,
        "format_version": f.version,
        "footer": {
            "offset": file_size.saturating_sub(FOOTER_LEN as u64),
            "size": FOOTER_LEN,
            "magic": format!("{TABLE_MAGIC:#018x}"),
            "index": handle_json(f.index),
            "filter": if f.filter.is_null() { Value::Null } else { handle_json(f.filter) },
            "properties": handle_json(f.properties),
        },
        "blocks": {
            "trailer_bytes": BLOCK_TRAILER_LEN,
            "data": { "count": p.data_blocks, "bytes": p.data_bytes },
            "index": { "count": 1, "bytes": f.index.size_with_trailer() },
            "filter": { "count": u8::from(!f.filter.is_null()), "bytes": filter_bytes },
            "range_del": { "count": u8::from(p.range_del_block.is_some()), "bytes": range_del_bytes },
            "range_filter": { "count": u8::from(p.range_filter_block.is_some()), "bytes": range_filter_bytes },
            "properties": { "count": 1, "bytes": f.properties.size_with_trailer() },
        },
        "compression": compression_json(p),
        "entries": p.entries,
        "tombstones": p.tombstones,
        "distinct_keys": p.distinct_keys,
        "range_del_block": p.range_del_block.map(handle_json),
        "range_tombstone_count": tombstones.len(),
        "range_tombstones": tombstones.iter().map(|t| range_tombstone_json(t, hex)).collect::<Vec<_>>(),
        "smallest_key": key(&p.smallest_key),
        "largest_key": key(&p.largest_key),
        "min_seq": p.min_seq,
        "max_seq": p.max_seq,
        "level": p.level,
        "created_unix_secs": p.created_unix_secs,
        "created_utc": output::iso8601_utc(p.created_unix_secs),
        "filter": filter_json(&table),
        "range_filter": super::range_filter::range_filter_json(&table),
    });
    if as_json {
        output::print_json(&doc);
    } else {
        print!("{}", render(&doc));
    }
    // A filter dropped as corrupt is damage worth an exit status: the table
    // still answers correctly, but every lookup (or scan) now costs a read.
    let dropped = table.filter_dropped() || table.range_filter_dropped().is_some();
    Ok(if dropped { Outcome::ProblemsFound } else { Outcome::Clean })
}

/// The field of `doc` at `path` as report text: a string as it is, a
/// missing or null field as `-`, anything else as JSON.
pub(super) fn text_at(doc: &Value, path: &str) -> String {
    match doc.pointer(path) {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Null) | None => "-".to_string(),
        Some(other) => other.to_string(),
    }
}

/// The text form of an `sst info` document.
fn render(doc: &Value) -> String {
    let mut s = String::new();
    let v = |path: &str| text_at(doc, path);
    let _ = writeln!(s, "table        {}", v("/path"));
    let _ = writeln!(s, "file size    {} bytes", v("/file_size"));
    let _ = writeln!(
        s,
        "footer       at offset {}, {} bytes, magic {}, format version {}",
        v("/footer/offset"),
        v("/footer/size"),
        v("/footer/magic"),
        v("/format_version")
    );
    for block in ["index", "filter", "properties"] {
        let handle = match doc.pointer(&format!("/footer/{block}")) {
            Some(Value::Null) | None => "none".to_string(),
            Some(_) => format!(
                "offset {}, size {} ({} with trailer)",
                v(&format!("/footer/{block}/offset")),
                v(&format!("/footer/{block}/size")),
                v(&format!("/footer/{block}/size_with_trailer"))
            ),
        };
        let _ = writeln!(s, "  {block:<11}{handle}");
    }
    // Not in the footer (its frame is frozen) but in the properties.
    if let Some(Value::Object(_)) = doc.pointer("/range_del_block") {
        let _ = writeln!(
            s,
            "  range_del  offset {}, size {} ({} with trailer; handle in the properties)",
            v("/range_del_block/offset"),
            v("/range_del_block/size"),
            v("/range_del_block/size_with_trailer")
        );
    }
    let _ = writeln!(
        s,
        "entries      {} ({} tombstones, {} distinct keys)",
        v("/entries"),
        v("/tombstones"),
        v("/distinct_keys")
    );
    let range_dels =
        doc.pointer("/range_tombstones").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let _ = writeln!(s, "range dels   {}", v("/range_tombstone_count"));
    for t in range_dels.iter().take(SHOWN_RANGE_TOMBSTONES) {
        let text = |k: &str| t[k].as_str().unwrap_or_default().to_owned();
        let _ = writeln!(s, "  [{}, {}) @{}", text("start"), text("end"), t["seq"]);
    }
    if let Some(more) = range_dels.len().checked_sub(SHOWN_RANGE_TOMBSTONES).filter(|&n| n > 0) {
        let _ = writeln!(s, "  … {more} more");
    }
    let _ = writeln!(
        s,
        "compression  {}: {} of {} data blocks compressed, {} bytes raw, {} stored, ratio {}",
        v("/compression/codec"),
        v("/compression/data_blocks_compressed"),
        v("/blocks/data/count"),
        v("/compression/data_raw_bytes"),
        v("/compression/data_stored_bytes"),
        v("/compression/ratio")
    );
    let _ = writeln!(s, "key range    {} .. {}", v("/smallest_key"), v("/largest_key"));
    let _ = writeln!(s, "seq          {} .. {}", v("/min_seq"), v("/max_seq"));
    let created = doc.pointer("/created_utc").and_then(Value::as_str).unwrap_or("?");
    let _ = writeln!(s, "level        {} (created {created})", v("/level"));
    let rows: Vec<Vec<String>> = ["data", "index", "filter", "range_del", "range_filter", "properties"]
        .iter()
        .map(|b| vec![(*b).to_string(), v(&format!("/blocks/{b}/count")), v(&format!("/blocks/{b}/bytes"))])
        .chain(std::iter::once(vec!["footer".into(), "1".into(), v("/footer/size")]))
        .collect();
    let _ = writeln!(s, "\nblocks (bytes include {}-byte trailers)", v("/blocks/trailer_bytes"));
    s.push_str(&output::table(&["block", "count", "bytes"], &rows));
    let _ = writeln!(s, "\nfilter");
    let _ = writeln!(s, "  status           {}", v("/filter/status"));
    let _ = writeln!(s, "  kind             {} (requested {})", v("/filter/kind"), v("/filter/requested"));
    if doc.pointer("/filter/fell_back") == Some(&Value::Bool(true)) {
        let _ = writeln!(s, "  fallback reason  {}", v("/filter/fallback_reason"));
    }
    if doc.pointer("/filter/dropped_as_corrupt") == Some(&Value::Bool(true)) {
        let _ = writeln!(s, "  DROPPED          {}", v("/filter/dropped_reason"));
    }
    let _ = writeln!(
        s,
        "  bytes            {} ({:.3} bits/key)",
        v("/filter/bytes"),
        doc.pointer("/filter/bits_per_key").and_then(Value::as_f64).unwrap_or(0.0)
    );
    let _ = writeln!(
        s,
        "  theoretical FPR  {}",
        fmt_rate(doc.pointer("/filter/theoretical_fpr").and_then(Value::as_f64))
    );
    let _ = writeln!(s, "  hash seed        {}", v("/filter/hash_seed"));
    let _ = writeln!(s, "  keys added       {}", v("/filter/keys"));
    match doc.pointer("/filter/prefix_extractor") {
        Some(Value::String(e)) => {
            let _ = writeln!(
                s,
                "  prefixes         {} (extractor {e}; counted in keys added)",
                v("/filter/distinct_prefixes")
            );
        }
        _ => {
            let _ = writeln!(s, "  prefixes         none (no prefix extractor)");
        }
    }
    if let Some(Value::Object(params)) = doc.pointer("/filter/params") {
        for (k, val) in params {
            // The filter's own count of keys, beside the header's `keys added`.
            let name = if k == "keys" { "keys encoded".to_owned() } else { k.replace('_', " ") };
            let _ = writeln!(s, "  {name:<16} {val}");
        }
    }
    super::range_filter::render(doc, &mut s);
    s
}

/// A rate as a percentage with enough digits for small values.
#[must_use]
pub fn fmt_rate(rate: Option<f64>) -> String {
    match rate {
        None => "-".to_string(),
        Some(r) => format!("{:.4}% ({r:.3e})", r * 100.0),
    }
}
