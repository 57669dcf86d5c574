//! A table written with a prefix extractor: its filter holds every distinct
//! prefix beside the keys, every filter kind answers "may contain" for
//! every prefix it holds, and only the extractor it was written with may
//! probe them.

mod table_common;

use siftdb::PrefixExtractor;
use siftdb::ValueKind;
use siftdb::filter::FilterKind;
use siftdb::table::{FilterAnswer, Table, TableOptions};
use table_common::{Row, build_with, kinds, table_path};

/// `groups` groups `g000123:` of 1 to 9 keys each, and some keys with no
/// delimiter; sorted.
fn grouped_rows(groups: u64) -> (Vec<Row>, Vec<Vec<u8>>) {
    let mut rows = Vec::new();
    let mut prefixes = Vec::new();
    for g in 0..groups {
        let prefix = format!("g{:06}:", g * 2).into_bytes();
        for i in 0..(g % 9 + 1) {
            let key = [prefix.as_slice(), format!("{i:03}").as_bytes()].concat();
            rows.push(Row { key, seq: g * 10 + i + 1, kind: ValueKind::Value, value: b"v".to_vec() });
        }
        prefixes.push(prefix);
    }
    // Keys outside the extractor's domain add no prefix.
    for i in 0..5u64 {
        rows.push(Row {
            key: format!("nodelim{i}").into_bytes(),
            seq: 1,
            kind: ValueKind::Value,
            value: vec![],
        });
    }
    rows.sort_by(|a, b| a.key.cmp(&b.key));
    (rows, prefixes)
}

#[test]
fn every_kind_holds_every_prefix_and_rejects_most_absent_ones() {
    let dir = tempfile::tempdir().unwrap();
    let by_group = PrefixExtractor::up_to(b':');
    let (rows, prefixes) = grouped_rows(2000);
    let distinct_keys = rows.len() as u64;
    for (i, kind) in kinds().into_iter().enumerate() {
        let path = table_path(&dir, &format!("{i}.sst"));
        let opts = TableOptions {
            filter: kind,
            prefix_extractor: Some(by_group),
            seed: 7,
            ..TableOptions::default()
        };
        build_with(&path, opts, &rows);
        let t = Table::open_path(&path).unwrap();
        assert_eq!(t.properties().prefix_extractor.as_deref(), Some("up-to:0x3a"), "{kind}");
        assert_eq!(t.properties().distinct_prefixes, prefixes.len() as u64, "{kind}");
        assert_eq!(t.filter_keys(), distinct_keys + prefixes.len() as u64, "{kind}");
        assert_eq!(t.prefix_extractor(), Some(by_group));
        if kind == FilterKind::None {
            assert!(prefixes.iter().all(|q| t.prefix_answer(&by_group, q) == FilterAnswer::NoFilter));
            continue;
        }
        for q in &prefixes {
            assert_eq!(t.prefix_answer(&by_group, q), FilterAnswer::MayContain, "{kind}: {q:?}");
        }
        // Whole keys still answer as before.
        for r in &rows {
            assert_eq!(t.filter_answer(&r.key), FilterAnswer::MayContain, "{kind}");
        }
        // Odd groups are absent: at most a few percent pass at any kind's rate.
        let absent: Vec<Vec<u8>> = (0..2000u64).map(|g| format!("g{:06}:", g * 2 + 1).into_bytes()).collect();
        let passed =
            absent.iter().filter(|q| t.prefix_answer(&by_group, q) == FilterAnswer::MayContain).count();
        assert!(passed < 2000 / 20, "{kind}: {passed} of 2000 absent prefixes passed");
        // Another extractor never probes: its prefixes were not written.
        let other = PrefixExtractor::fixed(8);
        assert!(prefixes.iter().all(|q| t.prefix_answer(&other, &q[..7]) == FilterAnswer::NoFilter));
    }
}

#[test]
fn a_prefix_is_not_its_own_key() {
    // The key "ab:" and the prefix "ab:" are different filter entries: a
    // table holding the prefix only (from "ab:x") must not vouch for the key
    // beyond the false-positive rate, nor the reverse.
    let dir = tempfile::tempdir().unwrap();
    let e = PrefixExtractor::up_to(b':');
    let mut rows: Vec<Row> = (0..3000u64)
        .map(|i| Row {
            key: format!("k{i:05}:x").into_bytes(),
            seq: i + 1,
            kind: ValueKind::Value,
            value: vec![],
        })
        .collect();
    rows.sort_by(|a, b| a.key.cmp(&b.key));
    let path = table_path(&dir, "t.sst");
    let opts =
        TableOptions { filter: FilterKind::Xor16, prefix_extractor: Some(e), ..TableOptions::default() };
    build_with(&path, opts, &rows);
    let t = Table::open_path(&path).unwrap();
    let as_keys = (0..3000u64)
        .filter(|i| t.filter_answer(format!("k{i:05}:").as_bytes()) == FilterAnswer::MayContain)
        .count();
    assert!(as_keys < 5, "{as_keys} prefixes read as present keys");
    let as_prefixes = (0..3000u64)
        .filter(|i| t.prefix_answer(&e, format!("k{i:05}:").as_bytes()) == FilterAnswer::MayContain)
        .count();
    assert_eq!(as_prefixes, 3000);
}

#[test]
fn tables_without_an_extractor_are_never_skipped_by_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let (rows, _) = grouped_rows(100);
    let path = table_path(&dir, "t.sst");
    build_with(&path, TableOptions { filter: FilterKind::BinaryFuse8, ..TableOptions::default() }, &rows);
    let t = Table::open_path(&path).unwrap();
    assert_eq!(t.properties().prefix_extractor, None);
    assert_eq!(t.prefix_extractor(), None);
    assert_eq!(t.prefix_answer(&PrefixExtractor::up_to(b':'), b"zzz:"), FilterAnswer::NoFilter);
    assert_eq!(t.filter_keys(), rows.len() as u64);
}
