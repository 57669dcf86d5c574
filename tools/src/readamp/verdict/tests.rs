//! Tests of the short verdict, on synthetic counts.

use super::*;

/// `read` blocks in 100,000 lookups of absent keys, at `bits_per_key`.
fn c(name: &str, read: u64, bits_per_key: f64) -> Contender {
    Contender { name: name.into(), read, lookups: 100_000, present: 0, repeat_weight: 1e-5, bits_per_key }
}

#[test]
fn the_standard_error_is_poisson_on_the_wasted_reads() {
    // 400 wasted reads in 100,000 lookups: sqrt(400) / 100,000.
    assert!((c("a", 400, 10.0).standard_error() - 20.0 / 1e5).abs() < 1e-15);
    // Present keys' own reads are certain and do not count.
    let present = Contender { present: 50_000, read: 50_400, ..c("a", 0, 10.0) };
    assert!((present.standard_error() - 20.0 / 1e5).abs() < 1e-15);
    // A key asked again repeats its answer: Σ w² of 0.07 (Zipf's hottest
    // key) widens the error to sqrt(0.07 · 400 / 100,000).
    let zipf = Contender { repeat_weight: 0.07, ..c("a", 400, 10.0) };
    assert!((zipf.standard_error() - (0.07f64 * 400.0 / 1e5).sqrt()).abs() < 1e-15);
}

#[test]
fn equal_reads_are_a_tie_not_a_win() {
    // The report that asked for this: xor16 "read the fewest" with fuse16
    // at exactly as many. At the default's memory here: ribbon:10 reads
    // what monkey:10 reads, and 3 standard errors either side is a tie too.
    let v = judge(
        "uniform",
        Some(2.0),
        &[c("ribbon:10", 63_200, 10.0), c("monkey:10", 63_200, 10.1), c("fuse8", 64_500, 9.9)],
        Some("monkey:10"),
    )
    .unwrap();
    assert_eq!(v.pick.name, "monkey:10");
    assert_eq!(v.ties, vec!["ribbon:10".to_string()]);
    assert_eq!(v.default_standing(), "the pick");
    let lines = v.lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(
        lines[0],
        "uniform: keep monkey:10 (the default): 0.6320 blocks/lookup, 68.4% saved; ties ribbon:10."
    );
    // 3 errors of the difference, sqrt(63,200 + 63,950) ≈ 357, is about 1,069 blocks:
    // fuse8 with 750 more reads still ties, with 1,100 more it does not.
    assert!(c("fuse8", 63_950, 9.9).ties(&c("m", 63_200, 10.0)));
    assert!(c("m", 63_200, 10.0).beats(&c("fuse8", 64_300, 9.9)));
}

#[test]
fn a_policy_that_reads_fewer_beyond_the_errors_is_picked_and_the_default_ranked() {
    let v = judge(
        "absent",
        Some(2.0),
        &[c("fuse8", 200, 9.92), c("monkey:10", 400, 10.0), c("bloom:10", 900, 10.0), c("xor16", 2, 20.1)],
        Some("monkey:10"),
    )
    .unwrap();
    assert_eq!(v.pick.name, "fuse8");
    assert!(v.ties.is_empty(), "{:?}", v.ties);
    assert_eq!((v.default_rank, v.compared), (2, 3));
    assert_eq!(v.default_standing(), "2nd of 3 (0.00400)");
    assert_eq!(v.memory(), "monkey:10's 10.00 bits/key ±5%");
    let lines = v.lines();
    assert_eq!(
        lines[0],
        "absent: pick fuse8: 0.00200 blocks/lookup, 99.90% saved; the default monkey:10 is 2nd of 3 (0.00400)."
    );
    // xor16 spends twice the memory: not the pick, but its gain is real,
    // (0.0020 − 0.00002) / (20.1 − 9.92) = 0.000194 blocks per extra bit.
    assert_eq!(
        lines[1],
        "absent, more memory: xor16 at 20.10 bits/key reads 0.0000200 blocks/lookup, 0.000194 fewer per extra \
         bit/key."
    );
    let json = v.to_json();
    assert_eq!(json["pick"]["policy"], "fuse8");
    assert_eq!(json["default"]["policy"], "monkey:10");
    assert_eq!(json["default_rank"], 2);
    assert_eq!(json["more_memory"]["policy"], "xor16");
}

#[test]
fn more_memory_that_only_ties_buys_nothing() {
    let v = judge("absent", None, &[c("monkey:10", 400, 10.0), c("xor16", 380, 20.0)], Some("monkey:10"))
        .unwrap();
    assert_eq!(v.upgrade, None);
    assert_eq!(v.lines().len(), 1);
    assert!(v.lines()[0].ends_with("no other policy spends that memory."), "{:?}", v.lines());
}

#[test]
fn without_the_default_every_policy_is_compared() {
    let v =
        judge("absent", None, &[c("bloom:10", 900, 10.0), c("xor16", 2, 20.1)], Some("monkey:10")).unwrap();
    assert_eq!(v.pick.name, "xor16");
    assert_eq!(v.default_standing(), "not run");
    assert!(v.memory().contains("(the default policy did not run)"), "{}", v.memory());
    assert_eq!(judge("absent", None, &[], Some("monkey:10")), None);
}

#[test]
fn savings_keep_the_digits_that_differ_and_never_round_a_read_away() {
    assert_eq!(saved(0.0076, 760, 2.0).as_deref(), Some("99.62%"));
    assert_eq!(saved(1.14, 114, 2.0).as_deref(), Some("43.0%"));
    assert_eq!(saved(1.0, 1, 0.0), None);
    // 7 blocks in 100,000 lookups against 2 a lookup would print 100.00%.
    assert_eq!(saved(0.00007, 7, 2.0).as_deref(), Some("all but 7"));
    assert_eq!(saved(0.0, 0, 2.0).as_deref(), Some("100.00%"));
    let v = judge("absent", Some(2.0), &[c("xor16", 7, 20.0)], Some("xor16")).unwrap();
    assert!(v.lines()[0].contains("0.0000700 blocks/lookup, all but 7 saved"), "{:?}", v.lines());
}

#[test]
fn ordinals_read_as_english() {
    let got: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22].into_iter().map(ordinal).collect();
    assert_eq!(got, ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd"]);
}
