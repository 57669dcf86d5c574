use super::*;

/// `SplitMix64`'s finaliser, for spread test keys.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[test]
fn the_bucket_width_follows_the_median_gap() {
    assert_eq!(RangeLayout::for_images(&[]), None);
    assert_eq!(RangeLayout::for_images(&[5, 5]), Some(RangeLayout { shift: 0, min: 5, max: 5 }));
    // Dense ids: single values.
    let dense: Vec<u64> = (100..1100).collect();
    assert_eq!(RangeLayout::for_images(&dense).unwrap().shift, 0);
    // A gap of 1,000: buckets of 8 (the middle of 1 and 2^9).
    let thousands: Vec<u64> = (0..1000u64).map(|i| i * 1000).collect();
    assert_eq!(RangeLayout::for_images(&thousands).unwrap().shift, 3);
    // A gap of 2^20: buckets of 2^10.
    let sparse: Vec<u64> = (0..1000u64).map(|i| i << 20).collect();
    assert_eq!(RangeLayout::for_images(&sparse).unwrap().shift, 10);
    // Duplicates do not narrow the buckets.
    let doubled: Vec<u64> = (0..1000u64).flat_map(|i| [i << 20, i << 20]).collect();
    assert_eq!(RangeLayout::for_images(&doubled).unwrap().shift, 10);
    // The whole 64-bit span.
    let wide = [0, u64::MAX];
    assert_eq!(RangeLayout::for_images(&wide).unwrap().shift, u8::try_from(63 - SPARSITY_BITS).unwrap());
    // Two clusters 2^50 apart, ids 2^20 apart within each: the median gap,
    // not the mean (about 2^40), sets the buckets.
    let clustered: Vec<u64> = (0..2000u64).map(|i| (i / 1000) << 50 | (i % 1000) << 20).collect();
    assert_eq!(RangeLayout::for_images(&clustered).unwrap().shift, 10);
}

#[test]
fn probes_are_clamped_to_the_set_and_capped() {
    let l = RangeLayout { shift: 4, min: 100, max: 10_000 };
    assert_eq!(l.probe(0, 99), RangeProbe::Empty);
    assert_eq!(l.probe(10_001, u64::MAX), RangeProbe::Empty);
    assert_eq!(l.probe(50, 40), RangeProbe::Empty);
    assert_eq!(l.probe(0, u64::MAX), RangeProbe::TooWide);
    assert_eq!(l.probe(0, 100), RangeProbe::Buckets(6..=6));
    assert_eq!(l.probe(160, 175), RangeProbe::Buckets(10..=10));
    assert_eq!(l.probe(160, 176), RangeProbe::Buckets(10..=11));
    let widest = (MAX_RANGE_PROBES << 4) - 1;
    assert_eq!(l.probe(160, 160 + widest), RangeProbe::Buckets(10..=10 + MAX_RANGE_PROBES - 1));
    assert_eq!(l.probe(160, 160 + widest + 1), RangeProbe::TooWide);
    assert_eq!(RangeLayout::EMPTY.probe(0, u64::MAX), RangeProbe::Empty);
}

/// Every image in the set, and every range around one, answers "maybe",
/// for every kind that builds; the empty set answers "empty".
#[test]
fn no_range_holding_an_image_is_called_empty() {
    let kinds = [
        FilterKind::Bloom { bits_per_key: 10.0 },
        FilterKind::BlockedBloom { bits_per_key: 10.0 },
        FilterKind::Xor8,
        FilterKind::BinaryFuse16,
        FilterKind::Ribbon { bits_per_key: 7.0 },
    ];
    let sets: [Vec<u64>; 3] = [
        (0..3000u64).map(mix).collect(),
        (0..3000u64).map(|i| i * 3).collect(),
        (0..3000u64).map(|i| (mix(i) >> 40) << 20 | i).collect(),
    ];
    for kind in kinds {
        for images in &sets {
            let f = RangeFilter::build(kind, 9, images).unwrap();
            for &x in images {
                assert!(f.may_intersect(x, x), "{kind}: {x}");
                assert!(f.may_intersect(x.saturating_sub(7), x.saturating_add(300)), "{kind}: around {x}");
            }
        }
        let empty = RangeFilter::build(kind, 9, &[]).unwrap();
        assert!(!empty.may_intersect(0, u64::MAX));
    }
}

/// Empty ranges placed at random meet the rate the module docs derive
/// (`2^-SPARSITY_BITS` for buckets that hold a key, `t·ε` for the probes),
/// well under Grafite's `ℓ / 2^(B-2)`; a range starting just past a key
/// answers "maybe" (its bucket holds the key).
#[test]
fn random_empty_ranges_meet_the_derived_rate() {
    let n = 20_000u64;
    let mut images: Vec<u64> = (0..n).map(mix).collect();
    images.sort_unstable();
    let kind = FilterKind::Ribbon { bits_per_key: 12.0 };
    let f = RangeFilter::build(kind, 3, &images).unwrap();
    let eps = kind.theoretical_fpr();
    let is_empty = |lo: u64, hi: u64| {
        let i = images.partition_point(|&x| x < lo);
        images.get(i).is_none_or(|&x| x > hi)
    };
    for len in [16u32, 256, 4096] {
        let (mut tried, mut maybe) = (0u32, 0u32);
        for q in 0..40_000u64 {
            let lo = mix(q ^ 0x5151_0000_0000_0000);
            let Some(hi) = lo.checked_add(u64::from(len) - 1) else { continue };
            if !is_empty(lo, hi) {
                continue;
            }
            tried += 1;
            maybe += u32::from(f.may_intersect(lo, hi));
        }
        let rate = f64::from(maybe) / f64::from(tried);
        let derived = 1.0 / f64::from(1u32 << SPARSITY_BITS) + 2.0 * eps;
        let grafite = f64::from(len) / 1024.0;
        assert!(rate < 2.0 * derived + 0.001, "ℓ={len}: {rate} vs derived {derived}");
        assert!(rate < grafite / 4.0, "ℓ={len}: {rate} vs Grafite's {grafite}");
    }
    let just_past = images.iter().filter(|&&x| x < u64::MAX - 20).take(1000);
    assert!(just_past.clone().all(|&x| f.may_intersect(x + 1, x + 16) || !is_empty(x + 1, x + 16)));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 200, ..Default::default() })]
    /// Any set (sparse, dense or clustered), any range: a range holding an
    /// image is never called empty, and one outside `[min, max]` always is.
    #[test]
    fn ranges_holding_an_image_are_never_empty(
        base in proptest::prelude::any::<u64>(),
        spread in 0u32..64,
        offsets in proptest::collection::vec(proptest::prelude::any::<u64>(), 1..400),
        queries in proptest::collection::vec((proptest::prelude::any::<u64>(), 0u32..64), 1..100),
    ) {
        let mask = if spread == 0 { 0 } else { u64::MAX >> (64 - spread) };
        let mut images: Vec<u64> = offsets.iter().map(|o| base.wrapping_add(o & mask)).collect();
        images.sort_unstable();
        let f = RangeFilter::build(FilterKind::BlockedBloom { bits_per_key: 8.0 }, 1, &images).unwrap();
        for &(lo, width) in &queries {
            let hi = lo.saturating_add(if width == 0 { 0 } else { u64::MAX >> (64 - width) });
            let i = images.partition_point(|&x| x < lo);
            if images.get(i).is_some_and(|&x| x <= hi) {
                proptest::prop_assert!(f.may_intersect(lo, hi), "{lo:#x}..={hi:#x}");
            }
            if hi < images[0] || lo > images[images.len() - 1] {
                proptest::prop_assert!(!f.may_intersect(lo, hi));
            }
        }
        // Ranges around the images themselves.
        for &x in images.iter().take(50) {
            proptest::prop_assert!(f.may_intersect(x.saturating_sub(3), x.saturating_add(1 << (spread / 2))));
        }
    }
}
