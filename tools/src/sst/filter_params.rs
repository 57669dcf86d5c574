//! A table's filter in full: the parameters inside the filter's own
//! encoding, as the filter reports them ([`siftdb::filter::FilterCodec::parameters`]).

use std::path::Path;

use serde_json::{Map, Value};
use siftdb::filter::Filter;
use siftdb::table::filter_block::{FILTER_HEADER_LEN, TableFilter};
use siftdb::table::format::Footer;

/// The kind-specific parameters of the table's filter as JSON fields, or
/// `None` if there is no filter block or it cannot be decoded (which
/// [`siftdb::table::Table::filter_details`] already reports). Call it only
/// for a table whose filter loaded: opening checked the block's crc, so
/// the bytes are sliced here without checking it again.
#[must_use]
pub fn filter_params(path: &Path) -> Option<Value> {
    let file = std::fs::read(path).ok()?;
    let footer = Footer::decode(&file).ok()?;
    if footer.filter.is_null() {
        return None;
    }
    let start = usize::try_from(footer.filter.offset).ok()?;
    let block = file.get(start..start.checked_add(footer.filter.size as usize)?)?;
    let kind = TableFilter::decode(block).ok()?.kind()?;
    let body = block.get(FILTER_HEADER_LEN..)?;
    let filter = kind.decode(body).ok()?;
    let mut out: Map<String, Value> =
        filter.parameters().into_iter().map(|(name, v)| (name.to_owned(), Value::from(v))).collect();
    out.insert("encoded_bytes".to_owned(), Value::from(body.len()));
    out.insert("in_memory_bytes".to_owned(), Value::from(filter.size_bytes()));
    Some(Value::Object(out))
}
