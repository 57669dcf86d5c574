//! `TableWriter`: a bulk load's table holds what was given, at sequence
//! number 0, with the filter and salt the options give, and refuses what a
//! table cannot hold without leaving a file behind.

use std::path::Path;

use siftdb::filter::FilterKind;
use siftdb::fs::StdFs;
use siftdb::table::{FilterAnswer, Table};
use siftdb::{Error, FilterPolicy, MAX_KEY_BYTES, MAX_VALUE_BYTES, Options, TableWriter, ValueKind};

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// Every third key a deletion, the rest values.
fn is_deletion(i: u32) -> bool {
    i % 3 == 1
}

fn value(i: u32) -> Vec<u8> {
    format!("value of {i}").into_bytes()
}

fn opts_with(policy: FilterPolicy, salt: Option<u64>) -> Options {
    Options { filter_policy: Some(policy), hash_salt: salt, block_bytes: 256, ..Options::default() }
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn invalid_message(e: Error) -> String {
    match e {
        Error::InvalidArgument(m) => m,
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn a_written_table_holds_exactly_its_entries_at_seq_0_with_the_options_salt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("load.sst");
    let n = 2_000;
    let opts = opts_with(FilterPolicy::uniform(FilterKind::BinaryFuse8), Some(0xfeed_f00d));
    let mut w = TableWriter::create(&path, &opts).unwrap();
    for i in 0..n {
        if is_deletion(i) { w.delete(key(i)).unwrap() } else { w.add(key(i), value(i)).unwrap() }
    }
    assert_eq!(w.entries(), u64::from(n));
    let written = w.finish().unwrap();

    let table = Table::open(&StdFs, &path).unwrap();
    let entries: Vec<_> = table.iter().map(Result::unwrap).collect();
    assert_eq!(entries.len(), n as usize);
    for (i, e) in (0..n).zip(&entries) {
        assert_eq!(&e.user_key[..], &key(i)[..]);
        assert_eq!(e.seq, 0, "key {i}");
        if is_deletion(i) {
            assert_eq!((e.kind, &e.value[..]), (ValueKind::Tombstone, &b""[..]), "key {i}");
        } else {
            assert_eq!((e.kind, &e.value[..]), (ValueKind::Value, &value(i)[..]), "key {i}");
        }
        assert_eq!(table.filter_answer(&key(i)), FilterAnswer::MayContain, "key {i}");
    }
    let props = table.properties();
    assert!(props.data_blocks > 1, "small blocks: the table spans many");
    assert!(props.range_del_block.is_none());
    assert_eq!((props.min_seq, props.max_seq), (0, 0));
    assert_eq!(props.level, u32::try_from(opts.max_levels - 1).unwrap());
    let details = table.filter_details();
    assert_eq!(details.header.unwrap().seed, 0xfeed_f00d);
    assert_eq!(details.kind, Some(FilterKind::BinaryFuse8));

    // The figures `finish` gave are the file's.
    assert_eq!(written.path, path);
    assert_eq!(written.file_bytes, std::fs::metadata(&path).unwrap().len());
    assert_eq!(written.file_bytes, table.file_size());
    assert_eq!((written.smallest, written.largest), (key(0), key(n - 1)));
    assert_eq!(written.entries, u64::from(n));
    assert_eq!(written.deletions, u64::from((0..n).filter(|&i| is_deletion(i)).count() as u32));
    assert_eq!(written.filter, FilterKind::BinaryFuse8);
    assert_eq!(written.filter_bytes, props.filter_bytes);
    assert_eq!(written.salt, 0xfeed_f00d);
    assert_eq!(files_in(dir.path()), ["load.sst"]);
}

#[test]
fn without_a_salt_the_filter_is_built_with_salt_0() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let mut w =
        TableWriter::create(&path, &opts_with(FilterPolicy::uniform(FilterKind::Xor8), None)).unwrap();
    w.add("a", "1").unwrap();
    assert_eq!(w.finish().unwrap().salt, 0);
    assert_eq!(Table::open(&StdFs, &path).unwrap().filter_details().header.unwrap().seed, 0);
}

#[test]
fn keys_out_of_order_or_repeated_are_refused_naming_both_and_the_writer_stays_usable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let mut w = TableWriter::create(&path, &Options::default()).unwrap();
    w.add("b", "1").unwrap();
    let m = invalid_message(w.add("a", "2").unwrap_err());
    assert!(m.contains("\"a\" after \"b\""), "{m}");
    // The same key again, as a value or as a deletion (which would sort
    // after the value at one sequence number): refused too.
    let m = invalid_message(w.add("b", "3").unwrap_err());
    assert!(m.contains("\"b\" after \"b\""), "{m}");
    assert!(w.delete("b").is_err());
    assert_eq!(w.entries(), 1);
    w.delete("c").unwrap();
    // A long binary key is shown escaped and cut short.
    let long = [vec![0xff; 1_000], b"\n".to_vec()].concat();
    w.add(&long, "x").unwrap();
    let m = invalid_message(w.add("d", "4").unwrap_err());
    assert!(m.contains("\\xff") && m.contains("(1001 bytes)") && m.len() < 300, "{m}");
    let written = w.finish().unwrap();
    assert_eq!((written.entries, written.deletions), (3, 1));
    let table = Table::open(&StdFs, &path).unwrap();
    let keys: Vec<Vec<u8>> = table.iter().map(|e| e.unwrap().user_key.to_vec()).collect();
    assert_eq!(keys, [b"b".to_vec(), b"c".to_vec(), long]);
}

#[test]
fn keys_and_values_over_the_limits_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = TableWriter::create(dir.path().join("t.sst"), &Options::default()).unwrap();
    let m = invalid_message(w.add(vec![b'k'; MAX_KEY_BYTES + 1], "v").unwrap_err());
    assert!(m.contains("key of"), "{m}");
    assert!(w.delete(vec![b'k'; MAX_KEY_BYTES + 1]).is_err());
    let m = invalid_message(w.add("k", vec![0; MAX_VALUE_BYTES + 1]).unwrap_err());
    assert!(m.contains("value of"), "{m}");
    assert_eq!(w.entries(), 0);
    w.add(vec![b'k'; MAX_KEY_BYTES], "v").unwrap();
    assert_eq!(w.finish().unwrap().entries, 1);
}

#[test]
fn an_existing_path_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    std::fs::write(&path, b"not mine").unwrap();
    let m = invalid_message(TableWriter::create(&path, &Options::default()).unwrap_err());
    assert!(m.contains("exists"), "{m}");
    assert_eq!(std::fs::read(&path).unwrap(), b"not mine");
    assert_eq!(files_in(dir.path()), ["t.sst"]);
}

#[test]
fn a_path_taken_before_finish_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let mut w = TableWriter::create(&path, &Options::default()).unwrap();
    w.add("a", "1").unwrap();
    std::fs::write(&path, b"someone else's").unwrap();
    assert!(matches!(w.finish(), Err(Error::InvalidArgument(_))));
    assert_eq!(std::fs::read(&path).unwrap(), b"someone else's");
    assert_eq!(files_in(dir.path()), ["t.sst"]);
}

#[test]
fn an_empty_table_is_refused_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let w = TableWriter::create(dir.path().join("t.sst"), &Options::default()).unwrap();
    let m = invalid_message(w.finish().unwrap_err());
    assert!(m.contains("no entries"), "{m}");
    assert!(files_in(dir.path()).is_empty());
}

#[test]
fn dropping_an_unfinished_writer_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut w =
        TableWriter::create(dir.path().join("t.sst"), &opts_with(FilterPolicy::default(), None)).unwrap();
    for i in 0..500 {
        w.add(key(i), value(i)).unwrap();
    }
    assert!(!files_in(dir.path()).is_empty(), "the temp file exists while writing");
    drop(w);
    assert!(files_in(dir.path()).is_empty());
}

/// The filter `create` picks for `policy`, and the one the table carries.
fn default_filter(policy: FilterPolicy) -> (FilterKind, Option<FilterKind>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let mut w = TableWriter::create(&path, &opts_with(policy, Some(7))).unwrap();
    for i in 0..300 {
        w.add(key(i), value(i)).unwrap();
    }
    let written = w.finish().unwrap();
    let table = Table::open(&StdFs, &path).unwrap();
    assert_eq!(table.filter_details().kind, Some(written.filter).filter(|k| *k != FilterKind::None));
    for i in 0..300 {
        assert_ne!(table.filter_answer(&key(i)), FilterAnswer::Absent, "key {i}");
    }
    (written.filter, table.filter_details().kind)
}

#[test]
fn the_default_filter_is_the_policys_for_the_last_level() {
    let fuse8 = FilterPolicy::uniform(FilterKind::BinaryFuse8);
    assert_eq!(default_filter(fuse8.clone()).0, FilterKind::BinaryFuse8);
    let per_level: FilterPolicy = "per-level:blocked-bloom:10,xor8,bloom:12".parse().unwrap();
    assert_eq!(default_filter(per_level).0, FilterKind::Bloom { bits_per_key: 12.0 });
    assert_eq!(
        default_filter(FilterPolicy::monkey(9.0).unwrap()).0,
        FilterKind::Ribbon { bits_per_key: 9.0 }
    );
    // No policy in the options: the default policy's (monkey:10).
    let dir = tempfile::tempdir().unwrap();
    let mut w = TableWriter::create(dir.path().join("t.sst"), &Options::default()).unwrap();
    assert_eq!(w.filter(), FilterKind::Ribbon { bits_per_key: 10.0 });
    w.add("a", "b").unwrap();
    assert_eq!(w.finish().unwrap().filter, FilterKind::Ribbon { bits_per_key: 10.0 });
    // A policy that skips the last level gives no filter.
    let (written, carried) = default_filter(fuse8.with_skip_last_level(true));
    assert_eq!((written, carried), (FilterKind::None, None));
}

#[test]
fn a_filter_the_caller_chose_overrides_the_policy() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let opts = opts_with(FilterPolicy::uniform(FilterKind::BinaryFuse8), Some(3));
    let chosen = FilterKind::BlockedBloom { bits_per_key: 12.0 };
    let mut w = TableWriter::create_with_filter(&path, &opts, chosen).unwrap();
    w.add("a", "1").unwrap();
    assert_eq!(w.finish().unwrap().filter, chosen);
    assert_eq!(Table::open(&StdFs, &path).unwrap().filter_details().kind, Some(chosen));
    // A parameter out of range is refused up front, leaving nothing.
    let bad = TableWriter::create_with_filter(
        dir.path().join("u.sst"),
        &opts,
        FilterKind::Bloom { bits_per_key: 0.0 },
    );
    assert!(matches!(bad, Err(Error::InvalidArgument(_))));
    assert_eq!(files_in(dir.path()), ["t.sst"]);
}

#[test]
fn a_filter_that_fails_to_build_falls_back_to_blocked_bloom() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let opts = Options {
        inject_filter_build_failure: true,
        ..opts_with(FilterPolicy::uniform(FilterKind::BinaryFuse8), Some(5))
    };
    let mut w = TableWriter::create(&path, &opts).unwrap();
    for i in 0..100 {
        w.add(key(i), value(i)).unwrap();
    }
    let written = w.finish().unwrap();
    assert!(matches!(written.filter, FilterKind::BlockedBloom { .. }), "{:?}", written.filter);
    let table = Table::open(&StdFs, &path).unwrap();
    assert!(table.filter_fell_back());
    for i in 0..100 {
        assert_eq!(table.filter_answer(&key(i)), FilterAnswer::MayContain, "key {i}");
    }
}

#[test]
fn bad_options_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options { block_bytes: 0, ..Options::default() };
    assert!(matches!(TableWriter::create(dir.path().join("t.sst"), &opts), Err(Error::InvalidArgument(_))));
    assert!(files_in(dir.path()).is_empty());
}
