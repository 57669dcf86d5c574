//! The Ribbon filter against its contract: no false negatives, the rate
//! and space its layout predicts, round trips, damage.

use super::bumped::Bumped;
use super::layout::MARGIN;
use super::*;
use crate::filter::codec_tests::{all_corruption, hashes as random_hashes, resealed, round_trip_and_sweep};
use crate::filter::static_tests::hex;

/// The measured false-positive rate over `probes` hashes no key has.
#[expect(clippy::cast_precision_loss, reason = "counts far below 2^52")]
fn measured_fpr(f: &Ribbon, stream: u64, probes: usize) -> f64 {
    random_hashes(stream, probes).iter().filter(|&&h| f.contains(h)).count() as f64 / probes as f64
}

/// Bits of the whole encoding per key.
#[expect(clippy::cast_precision_loss, reason = "sizes far below 2^52")]
fn bits_per_key(f: &Ribbon) -> f64 {
    (f.encode().len() * 8) as f64 / f.keys() as f64
}

#[test]
fn no_false_negatives_at_every_small_size() {
    for n in [0usize, 1, 2, 3, 5, 10, 127, 128, 129, 1000, 10_000, 100_000] {
        for bits in [1.0, 6.5, 7.0, 16.0, 32.0] {
            let hashes = random_hashes(n as u64 + 1, n);
            let f = Ribbon::build(&hashes, bits).unwrap();
            assert_eq!(f.keys(), n);
            assert!(hashes.iter().all(|&h| f.contains(h)), "n = {n}, {bits} bits/key");
        }
    }
}

#[test]
fn duplicates_are_removed() {
    let distinct = random_hashes(7, 5000);
    let twice: Vec<u64> = distinct.iter().flat_map(|&h| [h, h]).collect();
    let f = Ribbon::build(&twice, 8.0).unwrap();
    assert_eq!(f.keys(), 5000);
    assert_eq!(f.encode().len(), Ribbon::build(&distinct, 8.0).unwrap().encode().len());
    assert!(distinct.iter().all(|&h| f.contains(h)));
    let same = Ribbon::build(&[0xdead_beef; 1000], 8.0).unwrap();
    assert_eq!(same.keys(), 1);
    assert!(same.contains(0xdead_beef));
}

/// The bars on space: bits per key, all metadata counted, against
/// the bound `log2(1/ε)` for the measured rate ε over 10^6 absent keys.
#[test]
fn space_is_within_five_percent_of_the_bound_at_100k_keys_and_twelve_at_10k() {
    for (n, bar) in [(100_000usize, 1.05), (10_000, 1.12)] {
        for bits in [7.0, 10.0, 6.5] {
            let f = Ribbon::build(&random_hashes(11, n), bits).unwrap();
            let fpr = measured_fpr(&f, 12, 1_000_000);
            let ratio = bits_per_key(&f) / -fpr.log2();
            assert!(
                ratio <= bar,
                "n = {n}, {bits} bits/key: {:.3} bits/key at ε = {fpr}: {ratio:.4}",
                bits_per_key(&f)
            );
        }
    }
}

#[test]
fn seven_bits_per_key_is_under_one_percent() {
    let f = Ribbon::build(&random_hashes(21, 200_000), 7.0).unwrap();
    let fpr = measured_fpr(&f, 22, 1_000_000);
    assert!(fpr <= 0.010, "{fpr}");
    assert!((bits_per_key(&f) - 7.0).abs() < 0.05, "{}", bits_per_key(&f));
}

/// The rate the layout predicts (2^−r per block, weighted by its starts)
/// is what the filter delivers, at whole and fractional widths.
#[test]
fn the_theoretical_rate_is_the_measured_one() {
    let probes = 400_000;
    for bits in [1.0, 2.5, 5.0, 6.5, 7.0, 9.3, 12.0] {
        let f = Ribbon::build(&random_hashes(31, 20_000), bits).unwrap();
        let theory = f.theoretical_fpr();
        let measured = measured_fpr(&f, 32, probes);
        #[expect(clippy::cast_precision_loss, reason = "a count")]
        let sigma = (theory * (1.0 - theory) / probes as f64).sqrt();
        assert!((measured - theory).abs() <= 5.0 * sigma + 1e-5, "{bits} bits/key: {measured} vs {theory}");
        // And the formula by hand: lower columns and lower + 1, mixed.
        let l = f.layout();
        let lo = (-f64::from(l.lower)).exp2();
        assert!(theory <= lo && theory >= lo / 2.0, "{theory} outside [{}, {lo}]", lo / 2.0);
    }
    // Fractional widths interpolate: more bits, a lower rate.
    let rates: Vec<f64> = [6.0, 6.25, 6.5, 6.75, 7.0]
        .iter()
        .map(|&b| Ribbon::build(&random_hashes(33, 50_000), b).unwrap().theoretical_fpr())
        .collect();
    assert!(rates.windows(2).all(|w| w[1] < w[0]), "{rates:?}");
}

#[test]
fn build_for_fpr_keeps_a_column_at_least() {
    for fpr in [1.0, 0.9, 0.5, f64::NAN] {
        let f = Ribbon::build_for_fpr(&random_hashes(43, 5000), fpr).unwrap();
        assert!((f.theoretical_fpr() - 0.5).abs() < 1e-9, "{fpr}: {}", f.theoretical_fpr());
        assert!(Ribbon::decode(&f.encode()).is_ok());
    }
}

#[test]
fn build_for_fpr_meets_its_target() {
    for target in [0.1, 0.01, 0.005, 0.001, 0.0001] {
        let f = Ribbon::build_for_fpr(&random_hashes(41, 50_000), target).unwrap();
        let theory = f.theoretical_fpr();
        assert!((theory - target).abs() <= target * 0.03, "target {target}: theory {theory}");
        let measured = measured_fpr(&f, 42, 1_000_000);
        assert!(measured <= target * 1.15 + 1e-5, "target {target}: measured {measured}");
    }
}

#[test]
fn sizing_follows_the_overhead_model() {
    for n in [1usize, 127, 1000, 100_000, 1_000_000] {
        let blocks = RibbonLayout::blocks_for(n).unwrap();
        #[expect(clippy::cast_precision_loss, reason = "counts")]
        let wanted = n as f64 * (1.0 + MARGIN);
        assert!(
            f64::from(blocks) * 128.0 >= wanted && f64::from(blocks - 1) * 128.0 < wanted.max(1.0),
            "n = {n}"
        );
    }
    assert_eq!(Ribbon::encoded_len(MAX_KEYS + 1, 7.0), None);
    for (n, bits) in [(0, 7.0), (1000, 6.5), (100_000, 10.0)] {
        let f = Ribbon::build(&random_hashes(3, n), bits).unwrap();
        assert_eq!(Ribbon::encoded_len(n, bits), Some(f.encode().len()), "n = {n}");
    }
}

#[test]
fn banding_and_validation_failures_are_reported() {
    // One 128-slot block cannot hold 1000 keys: every seed contradicts.
    let hashes = random_hashes(51, 1000);
    let cramped = |_, _| RibbonLayout::new(1, 7, 1);
    assert_eq!(
        Ribbon::build_with(&hashes, 3, cramped).unwrap_err(),
        BuildError::BandingFailed { attempts: 3, keys: 1000 }
    );
    let mut f = Ribbon::build(&hashes, 7.0).unwrap();
    f.damage_for(hashes[500]);
    assert!(!f.contains(hashes[500]), "the damage reaches the key's pivot bit");
    let mut mixed: Vec<u64> = hashes.iter().map(|&h| super::layout::remix(h, f.seed())).collect();
    mixed.sort_unstable();
    // The first rejected in start order, reported as the input hash.
    let first =
        mixed.iter().map(|&h| crate::filter::peel::unmix(h, f.seed())).find(|&h| !f.contains(h)).unwrap();
    assert!(hashes.contains(&first));
    assert_eq!(f.validate_mixed(&mixed), Err(BuildError::ValidationFailed { hash: first }));
}

#[test]
fn round_trips_and_survives_damage() {
    for (n, bits) in [(0usize, 7.0), (1, 1.0), (40, 6.5), (300, 16.0), (2000, 32.0)] {
        let keys = random_hashes(61 + n as u64, n);
        let f = Ribbon::build(&keys, bits).unwrap();
        let back: Ribbon = round_trip_and_sweep(&f.encode(), &keys);
        assert_eq!(back, f);
        let probes = random_hashes(62, 10_000);
        assert!(probes.iter().all(|&h| back.contains(h) == f.contains(h)));
    }
}

#[test]
fn impossible_geometry_is_corruption() {
    let keys = random_hashes(71, 300);
    let enc = Ribbon::build(&keys, 7.0).unwrap().encode();
    let set = |at: usize, bytes: &'static [u8]| {
        move |b: &mut Vec<u8>| b[at..at + bytes.len()].copy_from_slice(bytes)
    };
    all_corruption::<Ribbon>(vec![
        ("no blocks", resealed(&enc, &set(14, &[0, 0, 0, 0]))),
        // 2^32 − 1 blocks of no columns: no words to read, but a bumped
        // key's block bits would take 512 MiB.
        (
            "no columns in 2^32 blocks",
            resealed(&enc, &|b: &mut Vec<u8>| {
                b[14..18].copy_from_slice(&u32::MAX.to_le_bytes());
                b[18] = 0;
                b[19..23].copy_from_slice(&u32::MAX.to_le_bytes());
                let words_end = b.len() - 4;
                b.drain(23..words_end);
            }),
        ),
        ("33 columns", resealed(&enc, &set(18, &[33]))),
        ("32 columns below 33", resealed(&enc, &set(18, &[32]))),
        ("upper start past the blocks", resealed(&enc, &set(19, &[9, 0, 0, 0]))),
        ("more keys than slots", resealed(&enc, &set(10, &[0, 2, 0, 0]))),
        ("a word short", resealed(&enc, &|b: &mut Vec<u8>| b.truncate(b.len() - 16))),
        ("a word long", resealed(&enc, &|b: &mut Vec<u8>| b.extend_from_slice(&[0; 16]))),
        ("version 3", resealed(&enc, &set(1, &[3]))),
        ("version 0", resealed(&enc, &set(1, &[0]))),
        (
            "one bumped key, no hash",
            resealed(&enc, &|b: &mut Vec<u8>| {
                let at = b.len() - 4;
                b[at] = 1;
            }),
        ),
        (
            "a bumped key too many",
            resealed(&enc, &|b: &mut Vec<u8>| {
                let at = b.len() - 4;
                b[at] = 65;
                b.extend_from_slice(&[0; 8 * 65]);
            }),
        ),
        ("no bumped count", resealed(&enc, &|b: &mut Vec<u8>| b.truncate(b.len() - 4))),
        ("kind of fuse8", resealed(&enc, &set(0, &[0x21]))),
    ]);
    assert!(crate::filter::BinaryFuse8::decode(&enc).unwrap_err().is_corruption());
}

#[test]
fn golden_bytes() {
    let f = Ribbon::build(&[1, 2, 3], 7.0).unwrap();
    let enc = f.encode();
    // Three keys: one block; 7 / (1 + overhead) → 7 columns after
    // rounding; 7 words, no bumped key.
    assert_eq!((f.layout().blocks, f.layout().lower, f.layout().upper_start), (1, 7, 1));
    assert_eq!(enc.len(), 23 + 7 * 16 + 4 + 4);
    assert_eq!(&enc[..2], &[0x31, 2]);
    assert_eq!(&enc[enc.len() - 8..enc.len() - 4], &[0, 0, 0, 0]);
    assert_eq!(&enc[2..10], &f.seed().to_le_bytes());
    assert_eq!(&enc[10..23], &[3, 0, 0, 0, 1, 0, 0, 0, 7, 1, 0, 0, 0]);
    assert_eq!(hex(&enc[..23]), "3102ed5e6e6f6262697203000000010000000701000000");
}

/// Past about 10^5 keys some rows contradict at a 2% margin: those keys
/// are bumped, held exactly, and still found; the build does not re-seed.
#[test]
fn contradicting_keys_are_bumped_and_still_found() {
    let keys = random_hashes(81, 1_000_000);
    let f = Ribbon::build(&keys, 7.0).unwrap();
    assert!(f.bumped_keys() > 0, "at 10^6 keys a 2% margin leaves some rows contradicting");
    assert!(f.bumped_keys() <= 1_000_000 / 500, "{}", f.bumped_keys());
    assert!(keys.iter().all(|&h| f.contains(h)));
    // They round-trip with the filter, and an encoding without them loses
    // them: each is found only through the bumped set.
    let back = Ribbon::decode(&f.encode()).unwrap();
    assert_eq!(back, f);
    let mut stripped = f.clone();
    stripped.bumped = Bumped::default();
    let missing = keys.iter().filter(|&&h| !stripped.contains(h)).count();
    assert!(missing > 0 && missing <= f.bumped_keys(), "{missing} of {}", f.bumped_keys());
    // The space bar holds at this size too.
    let fpr = measured_fpr(&f, 82, 1_000_000);
    assert!(bits_per_key(&f) / -fpr.log2() <= 1.05, "{} bits/key at {fpr}", bits_per_key(&f));
}

/// The format-1 encoding (no bumped section) still decodes.
#[test]
fn version_1_encodings_still_read() {
    let keys = random_hashes(83, 2000);
    let f = Ribbon::build(&keys, 8.0).unwrap();
    assert_eq!(f.bumped_keys(), 0);
    let v1 = resealed(&f.encode(), &|b: &mut Vec<u8>| {
        b[1] = 1;
        b.truncate(b.len() - 4);
    });
    let back = Ribbon::decode(&v1).unwrap();
    assert!(keys.iter().all(|&h| back.contains(h)));
    assert_eq!(back.encode(), f.encode(), "rewritten as version 2");
}

/// `remix_sorted` is the remixed hashes sorted and deduplicated, at every
/// bucket count (sizes below, at and past one bucket of 64).
#[test]
fn remix_sorted_sorts_and_deduplicates() {
    for n in [0usize, 1, 2, 63, 64, 65, 1000, 4096, 100_000] {
        let mut hashes = random_hashes(n as u64 + 40, n);
        hashes.extend_from_within(..n / 3);
        let seed = 0x5eed ^ n as u64;
        let mut expected: Vec<u64> = hashes.iter().map(|&h| super::layout::remix(h, seed)).collect();
        expected.sort_unstable();
        expected.dedup();
        assert_eq!(solve::remix_sorted(&hashes, seed), expected, "n = {n}");
    }
}

/// Solution bit `Z[slot][column]` in the interleaved words.
fn solution_bit(words: &[u128], layout: &RibbonLayout, slot: usize, column: usize) -> u32 {
    let block = u32::try_from(slot / 128).unwrap();
    u32::from(words[layout.first_word(block) + column] >> (slot % 128) & 1 == 1)
}

/// Rows whose low halves cancel: the pivot search falls through to the
/// high half (one row in 2^63 from random keys, so made by hand here),
/// and the solution still satisfies every row.
#[test]
fn a_pivot_in_the_high_half_is_found() {
    use super::layout::Equation;
    let layout = RibbonLayout::new(3, 2, 3).unwrap();
    let rows = [
        Equation { start: 5, coeff: 1 | 1 << 64 | 1 << 100, result: 0b01 },
        // XOR with the first leaves bits 64, 70 and 100: pivot 5 + 64.
        Equation { start: 5, coeff: 1 | 1 << 70, result: 0b10 },
        Equation { start: 69, coeff: 1 | 1 << 3, result: 0b11 },
    ];
    let mut banding = solve::Banding::new(layout.slots());
    assert!(rows.iter().all(|&e| banding.add(e)));
    let words = banding.solve(&layout);
    for e in rows {
        assert!(satisfies(&words, &layout, e), "{e:?}");
    }
}

/// Whether the solution `words` satisfies equation `e`, bit by bit.
fn satisfies(words: &[u128], layout: &RibbonLayout, e: super::layout::Equation) -> bool {
    let mut sum = 0;
    for j in 0..128 {
        if e.coeff >> j & 1 == 1 {
            for column in 0..layout.columns(e.start / 128) as usize {
                sum ^= solution_bit(words, layout, e.start as usize + j, column) << column;
            }
        }
    }
    sum == e.result
}

/// Banding two rows at a time, one from each half of the keys, holds as
/// many rows as banding one at a time (the system's rank, which no order
/// changes) and bumps exactly the rows its solution cannot satisfy: every
/// other row is satisfied. Sizes cover one lane empty, the lanes meeting
/// in a tight layout, and too many keys for the slots.
#[test]
fn two_rows_in_flight_band_as_one_at_a_time_does() {
    let tight = RibbonLayout::new(8, 3, 8).unwrap();
    for (n, layout) in [
        (1usize, RibbonLayout::new(1, 7, 1).unwrap()),
        (2, RibbonLayout::new(1, 7, 1).unwrap()),
        (3, RibbonLayout::new(1, 5, 0).unwrap()),
        (1000, tight),
        (1040, tight),
        (1100, tight),
        (2000, tight),
        (20_000, RibbonLayout::for_bits(20_000, RibbonLayout::blocks_for(20_000).unwrap(), 6.5).unwrap()),
    ] {
        let mixed = solve::remix_sorted(&random_hashes(n as u64 + 70, n), 71);
        let mut one = solve::Banding::new(layout.slots());
        let one_bumped = mixed.iter().filter(|&&h| !one.add(layout.equation(h))).count();
        let mut two = solve::Banding::new(layout.slots());
        let bumped = two.add_all(&layout, &mixed, usize::MAX).unwrap();
        assert_eq!(two.held(), one.held(), "n = {n}");
        assert!(bumped.windows(2).all(|w| w[0] < w[1]), "n = {n}: bumped keys sorted");
        let words = two.solve(&layout);
        for &h in &mixed {
            let held = bumped.binary_search(&h).is_err();
            assert_eq!(satisfies(&words, &layout, layout.equation(h)), held, "n = {n}, key {h:#x}");
        }
        if n > layout.slots() {
            // More keys than slots: some rows must contradict, either way.
            assert!(one_bumped > 0 && !bumped.is_empty(), "n = {n}");
            let mut again = solve::Banding::new(layout.slots());
            assert!(again.add_all(&layout, &mixed, bumped.len() - 1).is_none(), "n = {n}: over the limit");
        }
    }
}

/// Back substitution, compiled for `popcnt` (where the CPU has it, what
/// builds use) and for the baseline, solves the system: at every column
/// count from 1 to 32 and with a fractional mix, every held row's
/// coefficients dotted with each solution equal its result, and a filter
/// on the solution answers "present" for every inserted key (the bumped
/// ones through the bumped set).
#[test]
fn back_substitution_with_and_without_popcnt_satisfies_every_row() {
    for (i, columns) in (1..=32).map(f64::from).chain([6.5, 13.25]).enumerate() {
        let n = 3_000;
        let layout = RibbonLayout::with_columns(RibbonLayout::blocks_for(n).unwrap(), columns).unwrap();
        let hashes = random_hashes(i as u64 + 90, n);
        let mixed = solve::remix_sorted(&hashes, 91);
        let mut banding = solve::Banding::new(layout.slots());
        let bumped = banding.add_all(&layout, &mixed, usize::MAX).unwrap();
        let held: Vec<u64> = mixed.iter().copied().filter(|h| bumped.binary_search(h).is_err()).collect();
        assert!(held.len() > n * 99 / 100);
        for (how, words) in [("solve", banding.solve(&layout)), ("solve_any", banding.solve_any(&layout))] {
            for &h in &held {
                assert!(
                    satisfies(&words, &layout, layout.equation(h)),
                    "{how}, {columns} columns: key {h:#x}"
                );
            }
            let keys = u32::try_from(mixed.len()).unwrap();
            let f = Ribbon { seed: 91, keys, layout, words, bumped: Bumped::new(bumped.clone(), &layout) };
            assert!(hashes.iter().all(|&h| f.contains(h)), "{how}, {columns} columns: a key answered absent");
        }
    }
}
