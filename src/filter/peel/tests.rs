//! Tests of `peel`.

use super::*;

#[test]
fn seeds_differ_and_repeat_deterministically() {
    let (mut a, mut b) = (Seeds(1), Seeds(1));
    let xs: Vec<u64> = (0..4).map(|_| a.next()).collect();
    let ys: Vec<u64> = (0..4).map(|_| b.next()).collect();
    assert_eq!(xs, ys);
    assert!(xs.windows(2).all(|w| w[0] != w[1]));
}

/// A key whose remixed hash is 0 cannot be bucketed (0 marks a free
/// slot); the seed is skipped and the next one builds a sound filter.
#[test]
fn a_key_remixed_to_zero_moves_to_the_next_seed() {
    use crate::filter::{BinaryFuse8, Filter as _};
    let first_seed = Seeds(0x5173_7466_6462_0001).next();
    // mix(k, seed) is a bijection of k + seed that maps 0 to 0.
    let zero_key = first_seed.wrapping_neg();
    assert_eq!(mix(zero_key, first_seed), 0);
    let keys: Vec<u64> = std::iter::once(zero_key).chain((1..5000u64).map(|i| mix(i, 99))).collect();
    let f = BinaryFuse8::build(&keys).unwrap();
    assert_ne!(f.seed(), first_seed);
    assert!(keys.iter().all(|&k| f.contains(k)));
}

/// The one-pass bucketing keeps every key exactly once, and puts keys
/// in ascending bucket order but for the overflow of full buckets.
#[test]
fn place_is_a_permutation_nearly_sorted_by_top_bits() {
    for n in [0usize, 1, 2, 7, 1000, 65_537] {
        let keys: Vec<u64> = (0..n as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
        let mut s = Scratch::new(n, n + 32);
        assert!(s.place(&keys, 6, 42));
        let mut placed = s.order[..n].to_vec();
        let inversions = placed.windows(2).filter(|w| (w[0] >> 58) > (w[1] >> 58)).count();
        assert!(inversions <= n / 8 + 1, "n={n}: {inversions} out-of-order neighbours");
        placed.sort_unstable();
        let mut expected: Vec<u64> = keys.iter().map(|&k| mix(k, 42)).collect();
        expected.sort_unstable();
        assert_eq!(placed, expected, "n={n}");
    }
}

#[test]
fn unmix_inverts_mix() {
    let seeds = [0, 1, 0x5173_7466_6462_0001, u64::MAX];
    let values = [0, 1, u64::MAX, 1 << 63].into_iter().chain((0..1000u64).map(|i| mix(i, 3)));
    for x in values {
        for seed in seeds {
            assert_eq!(unmix(mix(x, seed), seed), x, "{x:#x} {seed:#x}");
        }
    }
}

/// Three blocks of `self.0` cells, chosen by three slices of the hash.
struct Thirds(usize);

// SAFETY: each index is `block · len + (bits % len)`, below 3·len.
unsafe impl Layout for Thirds {
    const LOCAL: bool = false;
    #[expect(clippy::cast_possible_truncation, reason = "a test layout of a few hundred cells")]
    fn cells(&self, mixed: u64) -> [usize; 3] {
        let len = self.0 as u64;
        [mixed % len, len + (mixed >> 21) % len, 2 * len + (mixed >> 42) % len].map(|c| c as usize)
    }
    fn cells_len(&self) -> usize {
        3 * self.0
    }
    fn sort_bits(&self) -> u32 {
        0
    }
}

/// A stack that differs from what `place` laid out by one bit no longer
/// matches its checksum, so validation would walk the input instead.
#[test]
fn a_damaged_stack_fails_its_checksum() {
    let keys: Vec<u64> = (0..1000u64).map(|i| mix(i, 5)).collect();
    let layout = Thirds(420);
    let mut s = Scratch::new(keys.len(), layout.cells_len());
    let seed = (1..50u64)
        .find(|&seed| s.peel(&keys, &layout, seed))
        .expect("some seed peels 1000 keys on 1260 cells");
    let (_, stacked) = s.assign::<u8, _>(keys.len(), &layout);
    assert_eq!(stacked, s.placed);
    let walked: std::collections::BTreeSet<u64> =
        s.order[..keys.len()].iter().map(|&h| unmix(h, seed)).collect();
    assert_eq!(walked, keys.iter().copied().collect());
    s.order[17] ^= 1 << 40;
    let (_, stacked) = s.assign::<u8, _>(keys.len(), &layout);
    assert_ne!(stacked, s.placed);
}

#[test]
fn mix_depends_on_the_seed_and_spreads_bits() {
    assert_ne!(mix(1, 0), mix(1, 1));
    // A one-bit input change flips about half the output bits.
    let flips = (0..64).map(|i| (mix(0, 7) ^ mix(1 << i, 7)).count_ones()).sum::<u32>();
    assert!((64 * 24..64 * 40).contains(&flips), "{flips}");
}
