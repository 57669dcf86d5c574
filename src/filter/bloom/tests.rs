//! Tests of `bloom`.

use super::*;
use crate::filter::codec_tests::{all_corruption, resealed, round_trip_and_sweep};
use crate::filter::hash_key;

/// `n` distinct hashes from `hash_key` under `seed`.
pub(crate) fn hashes(seed: u64, n: usize) -> Vec<u64> {
    (0..n as u64).map(|i| hash_key(seed, &i.to_le_bytes())).collect()
}

/// Fraction of `probes` absent hashes a filter accepts.
pub(crate) fn measured_fpr(f: &impl Filter, probes: usize) -> f64 {
    let hits = hashes(0xabad_1dea, probes).into_iter().filter(|&h| f.contains(h)).count();
    hits as f64 / probes as f64
}

#[test]
fn params_for_fpr_follow_the_formula() {
    let p = BloomParams::for_fpr(1_000_000, 0.01).unwrap();
    let bpk = p.bits as f64 / 1e6;
    assert!((bpk - 9.585).abs() < 0.001, "{bpk}");
    assert_eq!(p.k, 7);
    let p = BloomParams::for_fpr(1000, 0.001).unwrap();
    assert_eq!(p.k, 10); // log2(1000) = 9.97
    assert!((p.bits as f64 / 1000.0 - 14.378).abs() < 0.01);
    for bad in [0.0, 1.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
        assert!(matches!(BloomParams::for_fpr(10, bad), Err(Error::InvalidArgument(_))), "{bad}");
    }
    assert!(matches!(BloomParams::for_fpr(0, 0.01), Err(Error::InvalidArgument(_))));
}

#[test]
fn constructor_sizes_and_probe_counts() {
    let f = Bloom::new(1000, 10.0);
    assert_eq!((f.num_bits(), f.num_probes()), (10_000, 7));
    assert_eq!(Bloom::new(0, 10.0).num_bits(), 64);
    assert_eq!(Bloom::new(10, f64::NAN).num_probes(), 1);
    assert_eq!(Bloom::new(10, 100.0).num_probes(), 30);
    assert_eq!(Bloom::new(3, 9.5).num_bits(), 64);
    assert_eq!(Bloom::new(100, 9.25).num_bits(), 925);
}

#[test]
fn no_false_negatives_small_and_duplicate_sets() {
    for n in [0, 1, 2, 100] {
        let mut f = Bloom::new(n, 10.0);
        let hs = hashes(n as u64, n);
        for &h in &hs {
            f.insert(h);
            f.insert(h);
        }
        assert!(hs.iter().all(|&h| f.contains(h)));
        assert_eq!(f.keys_inserted(), 2 * n as u64);
    }
    let empty = Bloom::new(10, 10.0);
    assert!(!hashes(9, 1000).into_iter().any(|h| empty.contains(h)));
    assert!(empty.theoretical_fpr().abs() < f64::EPSILON);
}

#[test]
fn million_keys_no_false_negatives_and_fpr_matches_theory() {
    let n = 1_000_000;
    let hs = hashes(1, n);
    let f = filled(Bloom::new(n, 10.0), &hs, Bloom::insert);
    assert!(hs.iter().all(|&h| f.contains(h)));
    let theory = f.theoretical_fpr();
    assert!((theory - 0.008_19).abs() < 0.000_05, "{theory}");
    let measured = measured_fpr(&f, 1_000_000);
    assert!((measured / theory - 1.0).abs() < 0.10, "measured {measured} theory {theory}");
}

#[test]
fn odd_sizes_and_few_bits_track_theory() {
    // 6.3 bits/key over a bit count that is not a multiple of 64.
    let f = filled(Bloom::new(50_001, 6.3), &hashes(2, 50_001), Bloom::insert);
    let (theory, measured) = (f.theoretical_fpr(), measured_fpr(&f, 1_000_000));
    assert!((measured / theory - 1.0).abs() < 0.10, "measured {measured} theory {theory}");
}

#[test]
fn round_trip_and_corruption_sweep() {
    let hs = hashes(3, 20);
    let f = filled(Bloom::new(20, 8.0), &hs, Bloom::insert);
    let g: Bloom = round_trip_and_sweep(&f.encode(), &hs);
    assert_eq!((g.num_bits(), g.num_probes(), g.keys_inserted()), (160, 6, 20));
}

#[test]
fn decode_rejects_sealed_but_invalid_headers() {
    let f = Bloom::new(10, 10.0);
    let enc = f.encode();
    let body = |edit: &dyn Fn(&mut Vec<u8>)| resealed(&enc, edit);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("k = 0", body(&|b| b[6] = 0)),
        ("k = 31", body(&|b| b[6] = 31)),
        ("kind", body(&|b| b[5] = 2)),
        ("version", body(&|b| b[4] = 9)),
        ("huge size", body(&|b| b[8..16].copy_from_slice(&u64::MAX.to_le_bytes()))),
        ("size too small", body(&|b| b[8..16].copy_from_slice(&64u64.to_le_bytes()))),
        ("bit past the end", body(&|b| *b.last_mut().unwrap() = 0x80)),
        ("trailing byte", body(&|b| b.push(0))),
    ];
    all_corruption::<Bloom>(cases);
}
