//! Tests of `blocked_bloom`.

use super::*;
use crate::filter::bloom::tests::{hashes, measured_fpr};
use crate::filter::codec_tests::{all_corruption, resealed, round_trip_and_sweep};

#[test]
fn formula_matches_the_reference_script() {
    // Figures from /work/shared/reference/filter_fpr_theory.py (an
    // independent Python evaluation of the same sum).
    for (bpk, k, pct) in [(8.0, 5, 2.312), (10.0, 7, 0.957), (12.0, 8, 0.407), (16.0, 10, 0.082)] {
        let (best_k, fpr) = optimal_probes(bpk);
        assert_eq!(best_k, k, "bpk {bpk}");
        assert!((fpr * 100.0 - pct).abs() < 0.001, "bpk {bpk}: {fpr}");
    }
    // k = bpk/2 is close to, but worse than, the optimum.
    let half = blocked_fpr(10.0, 5);
    assert!(half > 0.0103 && half < 0.0105, "{half}");
    assert!(blocked_fpr(-1.0, 3) >= 1.0 && blocked_fpr(f64::NAN, 3) >= 1.0);
    // Absurdly few bits per key must answer at once, not sum 10^12 terms.
    assert!(BlockedBloom::fpr_for_bits_per_key(1e-12) >= 1.0);
    assert!(BlockedBloom::fpr_for_bits_per_key(0.1) > 0.9999);
    // One block (the least) for 10 keys is 51 real bits per key, and the
    // probes are chosen for those.
    assert_eq!(BlockedBloom::new(10, 1e-9).num_probes(), optimal_probes(51.2).0);
    assert!(BlockedBloom::fpr_for_bits_per_key(f64::INFINITY).abs() < f64::EPSILON);
}

#[test]
fn early_stopping_scan_finds_the_global_minimum() {
    for tenth in 3..=400 {
        let bpk = f64::from(tenth) / 10.0;
        let full =
            (1..=MAX_PROBES).map(|k| (blocked_fpr(bpk, k), k)).min_by(|a, b| a.0.total_cmp(&b.0)).unwrap();
        assert_eq!(optimal_probes(bpk).0, full.1, "bpk {bpk}");
    }
}

#[test]
fn bits_per_key_for_fpr_inverts_the_rate() {
    for eps in [0.05, 0.01, 0.0039, 0.001, 1e-6] {
        let bpk = BlockedBloom::bits_per_key_for_fpr(eps);
        let back = BlockedBloom::fpr_for_bits_per_key(bpk);
        assert!((back / eps - 1.0).abs() < 1e-3, "eps {eps}: bpk {bpk} -> {back}");
    }
    // The reference script: 1% needs 9.9 bits/key, 0.1% 15.49.
    assert!((BlockedBloom::bits_per_key_for_fpr(0.01) - 9.9).abs() < 0.01);
    assert!((BlockedBloom::bits_per_key_for_fpr(0.001) - 15.49).abs() < 0.01);
    assert!(BlockedBloom::bits_per_key_for_fpr(1.0).abs() < f64::EPSILON);
    assert!((BlockedBloom::bits_per_key_for_fpr(0.0) - MAX_BITS_PER_KEY).abs() < f64::EPSILON);
    assert!((BlockedBloom::bits_per_key_for_fpr(f64::NAN) - MAX_BITS_PER_KEY).abs() < f64::EPSILON);
}

#[test]
fn sizes_follow_fractional_bits_per_key() {
    assert_eq!(BlockedBloom::new(0, 10.0).num_blocks(), 1);
    assert_eq!(BlockedBloom::new(1000, 10.0).num_blocks(), 20); // 10000 / 512 = 19.5
    assert_eq!(BlockedBloom::new(1024, 9.5).num_blocks(), 19);
    assert_eq!(BlockedBloom::new(1024, 9.75).num_blocks(), 20); // 19.5 blocks
    assert_eq!(BlockedBloom::new(10, f64::NAN).num_blocks(), 1);
    assert_eq!(std::mem::align_of::<Block>(), 64);
    assert_eq!(std::mem::size_of::<Block>(), 64);
}

#[test]
fn no_false_negatives_small_and_duplicate_sets() {
    for n in [0, 1, 2, 1000] {
        let mut f = BlockedBloom::new(n, 10.0);
        let hs = hashes(n as u64 + 10, n);
        for &h in &hs {
            f.insert(h);
            f.insert(h);
        }
        assert!(hs.iter().all(|&h| f.contains(h)));
    }
    let empty = BlockedBloom::new(100, 10.0);
    assert!(!hashes(9, 1000).into_iter().any(|h| empty.contains(h)));
}

/// `contains` has a copy per common k and tests probes in pairs; for
/// every k it must answer exactly as the definition (all k bits set).
#[test]
fn every_probe_count_answers_as_the_definition() {
    let present = hashes(21, 3000);
    let absent = hashes(22, 3000);
    for k in 1..=MAX_PROBES {
        let mut f = BlockedBloom::new(present.len(), 6.0);
        f.k = k;
        for &h in &present {
            f.insert(h);
        }
        let definition = |h: u64| {
            let block = f.block_of(h).unwrap();
            PROBE_MULTIPLIERS.iter().take(k as usize).all(|&m| {
                let pos = lo32(h).wrapping_mul(m) >> 23;
                block.0[(pos >> 6) as usize] & (1 << (pos & 63)) != 0
            })
        };
        assert!(present.iter().all(|&h| f.contains(h)), "k={k}: a present key answered absent");
        let positives = absent.iter().filter(|&&h| f.contains(h)).count();
        assert!(absent.iter().all(|&h| f.contains(h) == definition(h)), "k={k}");
        // Both answers occur, so the comparison is not vacuous.
        assert!(0 < positives && positives < absent.len(), "k={k}: {positives}");
    }
}

#[test]
fn million_keys_at_10_bits_meet_the_fpr_target() {
    let n = 1_000_000;
    let hs = hashes(4, n);
    let f = filled(BlockedBloom::new(n, 10.0), &hs, BlockedBloom::insert);
    assert!(hs.iter().all(|&h| f.contains(h)));
    let theory = f.theoretical_fpr();
    // 1953.125 blocks round up to 1954: slightly more than 10 bits/key.
    assert!(theory < 0.00957 && theory > 0.0095, "{theory}");
    let measured = measured_fpr(&f, 2_000_000);
    assert!(measured <= 0.0098, "measured {measured}");
    assert!((measured / theory - 1.0).abs() < 0.10, "measured {measured} theory {theory}");
}

#[test]
fn fpr_tracks_theory_across_bits_per_key() {
    for bpk in [6.0, 8.0, 13.3, 16.0] {
        let n = 200_000;
        let f = filled(BlockedBloom::new(n, bpk), &hashes(5, n), BlockedBloom::insert);
        let (theory, measured) = (f.theoretical_fpr(), measured_fpr(&f, 1_000_000));
        assert!((measured / theory - 1.0).abs() < 0.10, "bpk {bpk}: measured {measured} theory {theory}");
    }
}

#[test]
fn round_trip_and_corruption_sweep() {
    let hs = hashes(6, 60);
    let f = filled(BlockedBloom::new(60, 10.0), &hs, BlockedBloom::insert);
    let enc = f.encode();
    assert_eq!(enc.len(), HEADER_LEN + 2 * 64 + 4);
    let g: BlockedBloom = round_trip_and_sweep(&enc, &hs);
    // Two blocks hold 17 bits per key, not 10: the probes are for those.
    assert_eq!((g.num_blocks(), g.num_probes(), g.keys_inserted()), (2, optimal_probes(1024.0 / 60.0).0, 60));
    assert!(g.num_probes() > optimal_probes(10.0).0);
}

#[test]
fn decode_rejects_sealed_but_invalid_headers() {
    let f = BlockedBloom::new(100, 10.0);
    let enc = f.encode();
    let body = |edit: &dyn Fn(&mut Vec<u8>)| resealed(&enc, edit);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("k = 0", body(&|b| b[6] = 0)),
        ("k = 200", body(&|b| b[6] = 200)),
        ("kind", body(&|b| b[5] = 1)),
        (
            "zero blocks",
            body(&|b| {
                b.truncate(HEADER_LEN);
                b[8..16].copy_from_slice(&0u64.to_le_bytes());
            }),
        ),
        ("huge block count", body(&|b| b[8..16].copy_from_slice(&(u64::MAX / 2).to_le_bytes()))),
        ("partial block", body(&|b| b.push(0))),
    ];
    all_corruption::<BlockedBloom>(cases);
    // A key count no filter could hold is not corruption, but theory must
    // still answer quickly.
    let crowded =
        BlockedBloom::decode(&body(&|b| b[16..24].copy_from_slice(&u64::MAX.to_le_bytes()))).unwrap();
    assert!(crowded.theoretical_fpr() >= 1.0);
}

/// Blocks of more than a huge page are kept on huge pages, built, decoded
/// or cloned, and behave as heap ones.
#[test]
fn large_filters_live_on_huge_pages() {
    let keys = hashes(5, 200_000);
    // 40,000 blocks: 2.56 MB.
    let mut f = BlockedBloom::with_blocks(40_000, keys.len());
    for &k in &keys {
        f.insert(k);
    }
    assert!(keys.iter().all(|&k| f.contains(k)));
    let back = BlockedBloom::decode(&f.encode()).unwrap();
    assert!(back.blocks == f.blocks && keys.iter().all(|&k| back.contains(k)));
    let mut copy = f.clone();
    copy.insert(hashes(6, 1)[0]);
    assert!(copy.blocks != f.blocks, "a clone shares no blocks with its original");
    #[cfg(target_os = "linux")]
    assert!(f.blocks.is_mapped() && back.blocks.is_mapped() && copy.blocks.is_mapped());
    assert!(!BlockedBloom::new(1000, 10.0).blocks.is_mapped());
    assert!(
        BlockedBloom::try_new(1 << 20, 20.0).unwrap().blocks.is_mapped() || cfg!(not(target_os = "linux"))
    );
}
