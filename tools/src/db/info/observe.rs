//! `db info`'s probes: absent keys looked up, absent prefixes and short
//! ranges scanned through a read-only open, and what each level's filters
//! answered.

use std::collections::BTreeMap;

use serde_json::Value;
use siftdb::recovery::RecoveryScan;
use siftdb::{Options, PrefixExtractor};

use super::Args;
use super::ranges;
use crate::sst::open::problem_json;

/// What the probes saw, per level; or why they could not run.
pub(super) enum Observed {
    Levels(Vec<LevelSeen>),
    /// A lookup met damage: a problem found, `{offset, what}`.
    Damaged(Value),
}

/// One level's counters over the probes.
#[derive(Clone, Copy)]
pub(super) struct LevelSeen {
    pub(super) filter_probes: u64,
    pub(super) observed_fpr: Option<f64>,
    pub(super) prefix_probes: u64,
    pub(super) prefix_skipped: u64,
    pub(super) prefix_false_positives: u64,
    pub(super) range: [u64; 3],
}

/// The extractor most of the document's tables were written with, if this
/// build knows it.
pub(super) fn tables_extractor(doc: &Value) -> Option<PrefixExtractor> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for level in doc["levels"].as_array().into_iter().flatten() {
        for t in level["table_list"].as_array().into_iter().flatten() {
            if let Some(name) = t["prefix_extractor"].as_str() {
                *counts.entry(name).or_default() += 1;
            }
        }
    }
    counts.into_iter().max_by_key(|(_, n)| *n).and_then(|(name, _)| name.parse().ok())
}

/// A prefix of `e`'s near the prefix of `anchor` (one byte changed: the
/// last for a fixed length, the one before the delimiter for `up_to`), so
/// it falls inside real tables' key ranges and (almost surely) no key has
/// it; `None` if `anchor` has no prefix.
fn absent_prefix(e: &PrefixExtractor, anchor: &[u8], r: u8) -> Option<Vec<u8>> {
    let q = e.extract(anchor)?;
    (1..=2).find_map(|back| {
        let at = q.len().checked_sub(back)?;
        let mut p = q.to_vec();
        p[at] = r;
        (p != q && e.extract(&p) == Some(&p[..])).then_some(p)
    })
}

/// Looks up `n` keys that are (almost surely) absent through a read-only
/// [`Db`], and reads each level's filter counters. The keys are a table's
/// smallest key plus 8 random bytes, so they fall inside real tables' key
/// ranges and reach their filters, as an application's misses would.
pub(super) fn observe(
    i: &RecoveryScan,
    a: &Args,
    (extractor, ranges): (Option<PrefixExtractor>, bool),
) -> Result<Observed, String> {
    // The stored policy: a read-only open changes nothing either way. With
    // the tables' prefix extractor, or range filters, those scans are measured too.
    let opts = Options {
        prefix_extractor: extractor,
        range_filter: ranges.then(siftdb::RangeFilterPolicy::default),
        ..Options::default()
    };
    let bounds: Vec<(&[u8], &[u8])> =
        i.tables.iter().map(|t| (&t.record.smallest[..], &t.record.largest[..])).collect();
    let db = match super::super::open_for_reading(&a.dir, opts) {
        Ok(db) => db,
        Err(e) if e.is_corruption() => return Ok(Observed::Damaged(problem_json(&a.dir, &e))),
        Err(e) => return Err(super::super::describe(&a.dir, &e)),
    };
    let anchors: Vec<&[u8]> = i.tables.iter().map(|t| t.record.smallest.as_slice()).collect();
    let before = db.stats();
    let mut state = 0x0b5e_17ed;
    for _ in 0..a.probes {
        let r = crate::sst::fpr::next(&mut state);
        let Some(anchor) = anchors.get(usize::try_from(r % anchors.len().max(1) as u64).unwrap_or(0)) else {
            break;
        };
        let mut key = anchor.to_vec();
        key.extend_from_slice(&crate::sst::fpr::next(&mut state).to_be_bytes());
        let prefix = extractor.and_then(|e| absent_prefix(&e, anchor, key[key.len() - 1]));
        let scanned = match prefix {
            Some(p) => db.prefix(p).next().transpose().map(|_| ()),
            None => Ok(()),
        };
        let scanned = match bounds.get(usize::try_from(r % bounds.len().max(1) as u64).unwrap_or(0)) {
            Some(&b) if ranges => scanned.and(ranges::scan_within(&db, b, crate::sst::fpr::next(&mut state))),
            _ => scanned,
        };
        match db.get(&key).map(|_| ()).and(scanned) {
            Ok(()) => {}
            Err(e) if e.is_corruption() => return Ok(Observed::Damaged(problem_json(&a.dir, &e))),
            Err(e) => return Err(super::super::describe(&a.dir, &e)),
        }
    }
    let delta = db.stats().since(&before);
    Ok(Observed::Levels(
        delta
            .levels
            .iter()
            .map(|l| LevelSeen {
                filter_probes: l.filter_probes,
                observed_fpr: l.observed_fpr(),
                prefix_probes: l.prefix_probes,
                prefix_skipped: l.prefix_skipped,
                prefix_false_positives: l.prefix_false_positives,
                range: [l.range_probes, l.range_skipped, l.range_false_positives],
            })
            .collect(),
    ))
}
