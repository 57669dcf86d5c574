//! Tests shared by the xor and binary fuse filters, written once against
//! [`StaticFilter`] and run for all four types from their own modules.

use std::fmt::Debug;

use super::fingerprint::Fingerprint;
use super::three_wise::{Geometry, ThreeWise};
use super::{BuildError, FilterCodec};

/// What the shared tests need from a static filter, including test-only
/// ways into its build.
pub(super) trait StaticFilter: FilterCodec + Debug + PartialEq + Clone {
    const BITS: u32;
    fn build(hashes: &[u64]) -> Result<Self, BuildError>;
    /// Peels with `attempts` seeds on an array of 3 cells shared by every
    /// key, which cannot peel more than one distinct key.
    fn build_cramped(hashes: &[u64], attempts: u32) -> Result<Self, BuildError>;
    fn validate(&self, hashes: &[u64]) -> Result<(), BuildError>;
    /// The build's validation walk over `hashes` (read from the end).
    fn first_rejected(&self, hashes: &[u64]) -> Option<u64>;
    /// Inverts the fingerprint in the first cell of `hash`.
    fn damage_first_cell_of(&mut self, hash: u64);
    fn distinct_keys(&self) -> usize;
    /// The hashes validation walks after a build of `hashes` (`None`: the
    /// peel could not show they are the input, and it walks the input).
    fn peeled_hashes(hashes: &[u64]) -> Option<Vec<u64>>;
    /// Whether the fingerprints are a mapping advised onto huge pages.
    fn on_huge_pages(&self) -> bool;
}

impl<F: Fingerprint, L: Geometry> StaticFilter for ThreeWise<F, L> {
    const BITS: u32 = F::BITS;
    fn build(hashes: &[u64]) -> Result<Self, BuildError> {
        ThreeWise::build(hashes)
    }
    fn build_cramped(hashes: &[u64], attempts: u32) -> Result<Self, BuildError> {
        ThreeWise::build_with(hashes, attempts, |_| Ok(L::cramped()))
    }
    fn validate(&self, hashes: &[u64]) -> Result<(), BuildError> {
        ThreeWise::validate(self, hashes.iter().copied())
    }
    fn first_rejected(&self, hashes: &[u64]) -> Option<u64> {
        self.first_rejected_of(hashes)
    }
    fn damage_first_cell_of(&mut self, hash: u64) {
        ThreeWise::damage_first_cell_of(self, hash);
    }
    fn distinct_keys(&self) -> usize {
        self.keys()
    }
    fn peeled_hashes(hashes: &[u64]) -> Option<Vec<u64>> {
        let built = super::peel::construct::<F, _>(hashes, super::peel::MAX_ATTEMPTS, L::for_keys).unwrap();
        built.peeled.map(|p| p.mixed().iter().rev().map(|&h| super::peel::unmix(h, built.seed)).collect())
    }
    fn on_huge_pages(&self) -> bool {
        self.fingerprints.is_mapped()
    }
}

/// Lower-case hex of `bytes`, for golden encodings.
pub(super) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The bytes of lower-case hex written by [`hex`].
pub(super) fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex")).collect()
}

/// Deterministic pseudo-random hashes (splitmix64).
pub(super) use super::codec_tests::hashes as random_hashes;

pub(super) fn no_false_negatives_at_every_small_size<T: StaticFilter>() {
    for n in [0usize, 1, 2, 3, 4, 5, 7, 10, 31, 100, 1000, 10_000, 100_000] {
        let hashes = random_hashes(n as u64 + 1, n);
        let f = T::build(&hashes).unwrap();
        assert_eq!(f.distinct_keys(), n);
        assert!(hashes.iter().all(|&h| f.contains(h)), "n = {n}");
    }
}

pub(super) fn duplicates_are_removed<T: StaticFilter>() {
    let distinct = random_hashes(7, 5000);
    let twice: Vec<u64> = distinct.iter().flat_map(|&h| [h, h]).collect();
    let f = T::build(&twice).unwrap();
    assert_eq!(f.distinct_keys(), 5000);
    assert!(distinct.iter().all(|&h| f.contains(h)));

    for copies in [2, 3, 100, 10_000] {
        let same = vec![0xdead_beef_u64; copies];
        let f = T::build(&same).unwrap();
        assert_eq!(f.distinct_keys(), 1, "{copies} copies");
        assert!(f.contains(0xdead_beef));
    }

    // Zero is an ordinary hash, duplicated or not.
    let f = T::build(&[0, 0, 1]).unwrap();
    assert_eq!(f.distinct_keys(), 2);
    assert!(f.contains(0) && f.contains(1));
}

/// Builds 10^6 keys, checks every one, the space bound and the
/// false-positive rate on 2·10^6 absent hashes.
pub(super) fn million_keys<T: StaticFilter>(max_bits_per_key: f64, max_fpr_ratio: f64, min_fpr_ratio: f64) {
    let n = 1_000_000;
    let hashes = random_hashes(42, n);
    let f = T::build(&hashes).unwrap();
    assert!(hashes.iter().all(|&h| f.contains(h)));

    #[expect(clippy::cast_precision_loss, reason = "byte counts are far below 2^52")]
    let bits_per_key = (f.size_bytes() * 8) as f64 / n as f64;
    assert!(bits_per_key <= max_bits_per_key, "{bits_per_key} bits/key");

    let queries = 2_000_000;
    let absent = random_hashes(43, queries);
    let hits = absent.iter().filter(|&&h| f.contains(h)).count();
    #[expect(clippy::cast_precision_loss, reason = "counts are far below 2^52")]
    let ratio = hits as f64 / queries as f64 / f.theoretical_fpr();
    assert!((min_fpr_ratio..=max_fpr_ratio).contains(&ratio), "fpr {hits}/{queries}, ratio {ratio}");
    assert!((f.theoretical_fpr() - (-f64::from(T::BITS)).exp2()).abs() < 1e-15);
}

pub(super) fn peeling_failure_is_reported<T: StaticFilter>() {
    let hashes = random_hashes(9, 10);
    assert_eq!(
        T::build_cramped(&hashes, super::peel::MAX_ATTEMPTS).unwrap_err(),
        BuildError::PeelingFailed { attempts: super::peel::MAX_ATTEMPTS, keys: 10 }
    );
    let mut dup = hashes.clone();
    dup.extend_from_slice(&hashes[..4]);
    assert_eq!(T::build_cramped(&dup, 1).unwrap_err(), BuildError::PeelingFailed { attempts: 1, keys: 10 });
    assert_eq!(T::build_cramped(&dup, 0).unwrap_err(), BuildError::PeelingFailed { attempts: 0, keys: 10 });
    // One key always peels, even on three cells.
    assert!(T::build_cramped(&[5], 1).unwrap().contains(5));
    assert!(T::build_cramped(&[5, 5], 2).unwrap().contains(5));
}

pub(super) fn validation_failure_is_reported<T: StaticFilter>() {
    let hashes = random_hashes(11, 300);
    let mut f = T::build(&hashes).unwrap();
    f.validate(&hashes).unwrap();
    f.damage_first_cell_of(hashes[0]);
    assert_eq!(f.validate(&hashes).unwrap_err(), BuildError::ValidationFailed { hash: hashes[0] });

    // Damage a key in the middle and the last one: the report names the
    // first rejected hash in input order, which may be an earlier key
    // sharing the damaged cell.
    for victim in [77, 299] {
        let mut f = T::build(&hashes).unwrap();
        f.damage_first_cell_of(hashes[victim]);
        let Err(BuildError::ValidationFailed { hash }) = f.validate(&hashes) else {
            panic!("damage to key {victim} went unnoticed");
        };
        let first_rejected = hashes.iter().position(|&h| !f.contains(h)).unwrap();
        assert_eq!(hash, hashes[first_rejected]);
        assert!(first_rejected <= victim);
    }
}

/// The build's own walk (which asks for the cells of keys ahead of the
/// one it tests) finds damage anywhere: at either end of the walk and in
/// the middle, with keys ahead of the damage and without.
pub(super) fn build_walk_finds_damage<T: StaticFilter>() {
    let hashes = random_hashes(12, 2000);
    assert_eq!(T::build(&hashes).unwrap().first_rejected(&hashes), None);
    for victim in [0, 5, 1000, 1990, 1999] {
        let mut f = T::build(&hashes).unwrap();
        f.damage_first_cell_of(hashes[victim]);
        let last_rejected = hashes.iter().rposition(|&h| !f.contains(h)).unwrap();
        assert!(last_rejected >= victim);
        assert_eq!(f.first_rejected(&hashes), Some(hashes[last_rejected]), "victim {victim}");
    }
}

/// Validation walks the peel stack, not the input; that is the same check
/// only if the stack yields every input hash exactly once. An input with
/// duplicates is peeled from a deduplicated copy, which the stack's
/// checksums cannot vouch for, so validation walks the input itself.
pub(super) fn validation_walks_exactly_the_input<T: StaticFilter>() {
    for n in [1usize, 2, 3, 1000, 100_000] {
        let mut hashes = random_hashes(n as u64 + 21, n);
        let walked = T::peeled_hashes(&hashes);
        // A first seed may fail (small n), which sends the build through
        // the deduplicated copy too; at these sizes and seeds it does not.
        let mut walked = walked.expect("the checksums of an untouched stack match");
        walked.sort_unstable();
        hashes.sort_unstable();
        assert_eq!(walked, hashes, "n = {n}");

        hashes.extend_from_within(..n.div_ceil(3));
        assert_eq!(T::peeled_hashes(&hashes), None, "n = {n} with duplicates");
    }
}

pub(super) fn round_trips<T: StaticFilter>() {
    for n in [0, 1, 2, 1000] {
        let hashes = random_hashes(13, n);
        let f = T::build(&hashes).unwrap();
        let back = T::decode(&f.encode()).unwrap();
        assert_eq!(back, f);
        assert_eq!(back.size_bytes(), f.size_bytes());
    }
}

/// A filter whose fingerprints take more than a huge page keeps them on
/// huge pages, from a build and from a decode alike, and behaves exactly
/// as a heap one: it holds every key, round-trips, and clones deeply.
pub(super) fn large_filters_live_on_huge_pages<T: StaticFilter>() {
    // Over 2 MiB of fingerprints for either width, under 3 MiB.
    let n = 2_300_000 * 8 / T::BITS as usize;
    let hashes = random_hashes(23, n);
    let f = T::build(&hashes).unwrap();
    assert!(hashes.iter().all(|&h| f.contains(h)));
    let back = T::decode(&f.encode()).unwrap();
    assert_eq!(back, f);
    let mut copy = f.clone();
    assert_eq!(copy, f);
    copy.damage_first_cell_of(hashes[0]);
    assert_ne!(copy, f, "a clone shares no cells with its original");
    assert!(f.contains(hashes[0]));
    #[cfg(target_os = "linux")]
    assert!(f.on_huge_pages() && back.on_huge_pages() && copy.on_huge_pages());
    let small = T::build(&hashes[..1000]).unwrap();
    assert!(!small.on_huge_pages() && !T::decode(&small.encode()).unwrap().on_huge_pages());
}

/// Flips every byte and truncates at every length: the result is
/// `Corruption` or a filter still holding every key, never a panic. Then
/// rewrites header bytes behind a valid crc, so that the parameter checks
/// (not the crc) must stop them, and queries whatever decodes.
pub(super) fn corruption_sweep<T: StaticFilter>() {
    let hashes = random_hashes(17, 25);
    let enc = T::build(&hashes).unwrap().encode();
    let _: T = super::codec_tests::round_trip_and_sweep(&enc, &hashes);
    let body = &enc[..enc.len() - 4];
    let probes = random_hashes(19, 200);
    for i in 0..body.len().min(24) {
        for value in [0u8, 1, 2, 3, 17, 18, 19, 0x7f, 0x80, 0xfe, 0xff] {
            let mut bad = body.to_vec();
            bad[i] = value;
            let resealed = crate::codec::seal(bad);
            match T::decode(&resealed) {
                Err(e) => assert!(e.is_corruption(), "byte {i} = {value}: {e}"),
                Ok(f) => {
                    // Wrong contents are possible (the crc vouched for them);
                    // an out-of-bounds query is not.
                    let _ = probes.iter().filter(|&&h| f.contains(h)).count();
                }
            }
        }
    }
}

/// Arbitrary inputs, many with heavy duplication (values drawn from 0..40),
/// build, contain every input hash and round-trip through the encoding.
pub(super) fn arbitrary_inputs<T: StaticFilter>() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let mut runner = TestRunner::new(Config { cases: 64, ..Config::default() });
    let inputs = proptest::collection::vec(prop_oneof![0u64..40, any::<u64>()], 0..400);
    runner
        .run(&inputs, |hashes| {
            let f = T::build(&hashes).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert!(hashes.iter().all(|&h| f.contains(h)));
            let mut distinct = hashes.clone();
            distinct.sort_unstable();
            distinct.dedup();
            prop_assert_eq!(f.distinct_keys(), distinct.len());
            prop_assert_eq!(T::decode(&f.encode()).unwrap(), f);
            Ok(())
        })
        .unwrap();
}
