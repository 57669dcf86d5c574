//! The `range_filter` object shared by `sst info` and `db info`, and its
//! lines in `sst info`'s text.

use std::fmt::Write as _;

use serde_json::{Value, json};
use siftdb::table::Table;

/// What a table's range filter is and whether it is usable: `status` is
/// `none` (written without one), `loaded`, `unknown` (a version or kind
/// this build does not read: every range is "maybe") or `dropped` (failed
/// its checksum or did not decode at open).
#[must_use]
pub fn range_filter_json(table: &Table) -> Value {
    let p = table.properties();
    let Some(h) = p.range_filter_block else {
        return json!({ "status": "none", "fallback_reason": p.range_filter_fallback_reason });
    };
    let bytes = u64::from(h.size) + 5;
    #[expect(clippy::cast_precision_loss, reason = "a ratio for display")]
    let bits_per_key = bytes as f64 * 8.0 / table.distinct_keys().max(1) as f64;
    let Some(f) = table.range_filter() else {
        return json!({
            "status": "dropped",
            "dropped_reason": table.range_filter_dropped(),
            "bytes": bytes,
            "kind": p.range_filter_kind,
        });
    };
    let points = f.points();
    let l = f.layout();
    json!({
        "status": if points.and_then(|p| p.kind()).is_some() { "loaded" } else { "unknown" },
        "version": f.version(),
        "image": f.image(),
        "kind": p.range_filter_kind,
        "fallback_reason": p.range_filter_fallback_reason,
        "buckets": p.range_filter_buckets,
        "bucket_shift": l.shift,
        "min_image": format!("{:#018x}", l.min),
        "max_image": format!("{:#018x}", l.max),
        "bytes": bytes,
        "bits_per_key": bits_per_key,
        "bucket_fpr": points.and_then(|p| p.theoretical_fpr()),
    })
}

/// The `range filter` section of `sst info`'s text, from its document.
pub fn render(doc: &Value, s: &mut String) {
    let v = |path: &str| super::info::text_at(doc, path);
    let _ = writeln!(s, "\nrange filter");
    let _ = writeln!(s, "  status           {}", v("/range_filter/status"));
    if let Some(Value::String(why)) = doc.pointer("/range_filter/fallback_reason") {
        let _ = writeln!(s, "  fallback reason  {why}");
    }
    match doc.pointer("/range_filter/status").and_then(Value::as_str) {
        Some("dropped") => {
            let _ = writeln!(s, "  DROPPED          {}", v("/range_filter/dropped_reason"));
        }
        Some("loaded" | "unknown") => {
            let _ = writeln!(s, "  image            {}", v("/range_filter/image"));
            let _ = writeln!(
                s,
                "  kind             {} over {} buckets of 2^{} images",
                v("/range_filter/kind"),
                v("/range_filter/buckets"),
                v("/range_filter/bucket_shift")
            );
            let _ = writeln!(
                s,
                "  images           {} .. {}",
                v("/range_filter/min_image"),
                v("/range_filter/max_image")
            );
            let bits = doc.pointer("/range_filter/bits_per_key").and_then(Value::as_f64).unwrap_or(0.0);
            let _ = writeln!(s, "  bytes            {} ({bits:.3} bits/key)", v("/range_filter/bytes"));
            let fpr = doc.pointer("/range_filter/bucket_fpr").and_then(Value::as_f64);
            let _ = writeln!(s, "  FPR per bucket   {}", super::info::fmt_rate(fpr));
        }
        _ => {}
    }
}
