//! Public constructors check their numbers (issue 26): a Bloom-family
//! filter's bits per key, a size no allocator gives, Monkey's budget, and a
//! policy or table built from kinds whose fields were set in code. Each is
//! `InvalidArgument` naming the value, never an abort.

use siftdb::filter::{BlockedBloom, Bloom, CountingBloom, Filter, MAX_BITS_PER_KEY, MIN_BITS_PER_KEY};
use siftdb::table::{TableBuilder, TableOptions};
use siftdb::{Db, Error, FilterKind, FilterPolicy, Options};

const BAD_BITS: [f64; 7] = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e15, 0.0, 0.5, 64.5];

fn invalid<T: std::fmt::Debug>(r: Result<T, Error>, what: &str) -> String {
    match r {
        Err(Error::InvalidArgument(m)) => m,
        other => panic!("{what}: expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn bloom_family_constructors_check_bits_per_key() {
    for b in BAD_BITS {
        let m = invalid(Bloom::try_new(1000, b), "Bloom");
        assert!(m.contains("from 1 to 64"), "{m}");
        invalid(BlockedBloom::try_new(1000, b), "BlockedBloom");
        invalid(CountingBloom::try_new(1000, b), "CountingBloom");
    }
    for b in [MIN_BITS_PER_KEY, 7.5, MAX_BITS_PER_KEY] {
        let mut f = BlockedBloom::try_new(100, b).unwrap();
        f.insert(42);
        assert!(f.contains(42));
        assert!(Bloom::try_new(100, b).is_ok() && CountingBloom::try_new(100, b).is_ok());
    }
}

#[test]
fn a_size_no_allocator_gives_is_an_error() {
    let m = invalid(Bloom::try_new(usize::MAX / 2, MAX_BITS_PER_KEY), "Bloom");
    assert!(m.contains("cannot allocate"), "{m}");
    invalid(BlockedBloom::try_new(usize::MAX / 2, MAX_BITS_PER_KEY), "BlockedBloom");
    invalid(CountingBloom::try_new(usize::MAX / 2, MAX_BITS_PER_KEY), "CountingBloom");
}

#[test]
fn monkey_checks_its_budget() {
    for b in [f64::NAN, f64::INFINITY, 0.0, -1.0, 64.5, 1e15] {
        invalid(FilterPolicy::monkey(b), "monkey");
    }
    assert!(FilterPolicy::monkey(0.5).is_ok() && FilterPolicy::monkey(64.0).is_ok());
}

#[test]
fn kinds_built_in_code_are_checked_where_they_are_used() {
    let bad = FilterKind::BlockedBloom { bits_per_key: f64::INFINITY };
    let dir = tempfile::tempdir().unwrap();
    for policy in [FilterPolicy::uniform(bad), FilterPolicy::per_level(vec![FilterKind::Xor8, bad])] {
        invalid(policy.validate(), "validate");
        let opts = Options { filter_policy: Some(policy), ..Options::default() };
        let m = invalid(Db::open(dir.path().join("db"), opts), "Db::open");
        assert!(m.contains("filter_policy"), "{m}");
        assert!(!dir.path().join("db").exists(), "a refused open created the database");
    }
    let opts =
        TableOptions { filter: FilterKind::Bloom { bits_per_key: f64::NAN }, ..TableOptions::default() };
    invalid(TableBuilder::create(dir.path().join("t.sst"), opts), "TableBuilder");
    assert!(!dir.path().join("t.sst").exists());
}

#[test]
fn max_levels_has_one_limit() {
    // `Options::validate` accepted up to 64 while `open` refused past 7.
    for bad in [0, 1, 8, 64] {
        let o = Options { max_levels: bad, ..Options::default() };
        let m = invalid(o.validate(), "validate");
        assert!(m.contains("from 2 to 7"), "{m}");
    }
    for good in [2, 7] {
        Options { max_levels: good, ..Options::default() }.validate().unwrap();
    }
}
