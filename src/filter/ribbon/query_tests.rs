//! Every query path the CPU offers (early stop, baseline, AVX2, AVX-512,
//! batches) gives the same answers, and says which ran.

use super::parity::Baseline;
use super::*;
use crate::filter::codec_tests::hashes as random_hashes;
use bytes::Bytes;

/// Every way this CPU can answer a query for the key whose remixed hash is
/// `mixed`: stopping early or not, with the baseline fold, and (where the
/// CPU has them) with AVX2's and AVX-512's. The paths that answered are
/// added to `ran`.
fn answers(f: &Ribbon, mixed: u64, ran: &mut std::collections::BTreeSet<&'static str>) -> Vec<bool> {
    let all =
        vec![f.contains_mixed::<true, _>(mixed, Baseline), f.contains_mixed::<false, _>(mixed, Baseline)];
    ran.insert("baseline");
    #[cfg(target_arch = "x86_64")]
    let mut all = all;
    #[cfg(target_arch = "x86_64")]
    if let Some(avx2) = super::parity::Avx2::detect() {
        // SAFETY: `avx2` proves the CPU has AVX2.
        all.push(unsafe { f.on_avx2(super::query::One(mixed), avx2) });
        all.push(f.contains_mixed::<false, _>(mixed, avx2));
        ran.insert("avx2");
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(avx512) = super::parity::Avx512::detect() {
        // SAFETY: `avx512` proves the CPU has its features.
        all.push(unsafe { f.on_avx512(super::query::One(mixed), avx512) });
        all.push(f.contains_mixed::<false, _>(mixed, avx512));
        ran.insert("avx512");
    }
    all
}

/// The wide paths this CPU has, by its own feature flags (not by the
/// `detect` functions the paths are chosen with).
fn wide_paths_this_cpu_has() -> Vec<&'static str> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        let avx2 = has!("avx2");
        let avx512 = avx2 && has!("avx512f") && has!("avx512vpopcntdq");
        [("avx2", avx2), ("avx512", avx512)].into_iter().filter(|&(_, on)| on).map(|(p, _)| p).collect()
    }
    #[cfg(not(target_arch = "x86_64"))]
    Vec::new()
}

/// Says which query paths `ran` and fails if a wide path the CPU has is
/// not among them: a skipped path would pass silently.
fn every_path_this_cpu_has_ran(ran: &std::collections::BTreeSet<&'static str>) {
    eprintln!("ribbon query paths checked: {ran:?} (the CPU has wide paths {:?})", wide_paths_this_cpu_has());
    for path in wide_paths_this_cpu_has() {
        assert!(ran.contains(path), "the CPU has {path} but its path was not checked: {ran:?}");
    }
}

/// A query that stops after its first columns disagree answers exactly as
/// one that computes them all, and the AVX folds exactly as the baseline,
/// at every column count (fewer than the two checked first included) and
/// with bumped keys present.
#[test]
fn stopping_early_never_changes_an_answer() {
    let mut ran = std::collections::BTreeSet::new();
    for (n, bits) in [(1000usize, 1.0), (1000, 1.7), (5000, 2.0), (20_000, 7.0), (20_000, 6.5), (3000, 19.3)]
    {
        let hashes = random_hashes(n as u64 + 60, n);
        let f = Ribbon::build(&hashes, bits).unwrap();
        for &h in random_hashes(61, 50_000).iter().chain(&hashes) {
            let all = answers(&f, super::layout::remix(h, f.seed()), &mut ran);
            assert!(all.iter().all(|&a| a == all[0]), "n = {n}, {bits} bits/key: {all:?}");
        }
    }
    // 1040 keys in 1024 slots: some keys are bumped (within the limit), and
    // found through the bumped set.
    let keys = random_hashes(62, 1040);
    let f = Ribbon::build_with(&keys, MAX_ATTEMPTS, |_, _| RibbonLayout::new(8, 3, 8)).unwrap();
    assert!(f.bumped_keys() > 0);
    for &h in random_hashes(63, 20_000).iter().chain(&keys) {
        let all = answers(&f, super::layout::remix(h, f.seed()), &mut ran);
        assert!(all.iter().all(|&a| a == all[0]), "{all:?}");
    }
    every_path_this_cpu_has_ran(&ran);
}

/// A solution of more than a huge page is kept on huge pages, from a build
/// and from a decode, and behaves as a heap one: every key, an equal
/// round trip, a deep clone.
#[test]
fn large_solutions_live_on_huge_pages() {
    // 10^6 keys at 20 bits/key: about 2.5 MB of solution words.
    let hashes = random_hashes(31, 1_000_000);
    let f = Ribbon::build(&hashes, 20.0).unwrap();
    assert!(hashes.iter().all(|&h| f.contains(h)));
    let back = Ribbon::decode(&f.encode()).unwrap();
    assert_eq!(back, f);
    let mut copy = f.clone();
    copy.words[0] ^= 1;
    assert_ne!(copy, f, "a clone shares no words with its original");
    #[cfg(target_os = "linux")]
    assert!(f.words.is_mapped() && back.words.is_mapped() && copy.words.is_mapped());
    assert!(!Ribbon::build(&hashes[..1000], 20.0).unwrap().words.is_mapped());
}

/// `contains_batch` answers as `contains` does, key by key, on every path
/// this CPU has (the one it picks, and the baseline's), and clears `out`
/// first.
#[test]
fn a_batch_answers_as_single_queries() {
    use super::query::{Batch, Work};
    for (n, bits) in [(20_000usize, 7.0), (20_000, 9.4), (3000, 19.3), (1, 7.0)] {
        let hashes = random_hashes(n as u64 + 70, n);
        let f = Ribbon::build(&hashes, bits).unwrap();
        let probes: Vec<u64> = hashes.iter().copied().chain(random_hashes(71, 20_000)).collect();
        let want: Vec<bool> = probes.iter().map(|&h| f.contains(h)).collect();
        let mut out = vec![true; 5];
        f.contains_batch(&probes, &mut out);
        assert_eq!(out, want, "n = {n}, {bits} bits/key");
        let mut out = vec![false; 3];
        out.clear();
        Batch { hashes: &probes, out: &mut out }.run(&f, Baseline);
        assert_eq!(out, want, "n = {n}, {bits} bits/key, baseline");
        assert!(want.iter().take(n).all(|&b| b));
    }
}

/// `encoded` in a buffer of its own whose solution starts 16-byte aligned,
/// ending where the encoding ends (nothing past it to read).
fn aligned(encoded: &[u8]) -> Bytes {
    let mut buf = Vec::with_capacity(encoded.len() + 16);
    let pad = (16 - (buf.as_ptr() as usize + HEADER_LEN) % 16) % 16;
    buf.resize(pad, 0);
    buf.extend_from_slice(encoded);
    let all = Bytes::from(buf);
    let shared = all.slice(pad..);
    assert_eq!((shared.as_ptr() as usize + HEADER_LEN) % 16, 0, "the buffer moved");
    shared
}

/// A solution read in place (issue 66), with nothing after it but the
/// encoding's last bytes, answers exactly as its copy on every path: the
/// queries in its last blocks read a padded copy of their windows instead
/// of the `MAX_COLUMNS` words a copy appends. Column counts from 1 to 20,
/// a filter of one key included.
#[test]
fn a_solution_read_in_place_answers_as_its_copy() {
    let mut ran = std::collections::BTreeSet::new();
    let filters: Vec<(Vec<u64>, Ribbon)> =
        [(1usize, 7.0), (60, 1.0), (1000, 1.7), (5000, 2.0), (20_000, 6.5), (3000, 19.3)]
            .into_iter()
            .map(|(n, bits)| {
                let keys = random_hashes(n as u64 + 80, n);
                let f = Ribbon::build(&keys, bits).unwrap();
                (keys, f)
            })
            .collect();
    for (keys, f) in &filters {
        let encoded = f.encode();
        let shared = aligned(&encoded);
        let view = Ribbon::decode_shared(&shared).unwrap();
        let words = view.in_place().expect("an aligned solution is read in place");
        assert_eq!(words.len(), 16 * f.layout.words(), "the view holds the solution and no padding");
        assert_eq!(words.as_ptr(), shared[HEADER_LEN..].as_ptr(), "inside the buffer, not a copy");
        assert_eq!(Ribbon::decode(&encoded).unwrap().in_place(), None);
        for &h in random_hashes(81, 40_000).iter().chain(keys) {
            let mixed = super::layout::remix(h, f.seed());
            let (here, there) = (answers(&view, mixed, &mut ran), answers(f, mixed, &mut ran));
            assert_eq!(here, there, "{} blocks, {} keys", f.layout.blocks, f.keys);
        }
        assert!(keys.iter().all(|&h| view.contains(h)));
    }
    every_path_this_cpu_has_ran(&ran);
    // Misaligned by one byte: copied, and the same filter.
    let encoded = filters[3].1.encode();
    let mut off = Vec::with_capacity(encoded.len() + 17);
    off.push(0);
    off.extend_from_slice(&aligned(&encoded));
    let off = Bytes::from(off).slice(1..);
    if !(off.as_ptr() as usize + HEADER_LEN).is_multiple_of(16) {
        let copied = Ribbon::decode_shared(&off).unwrap();
        assert_eq!((copied.in_place(), &copied), (None, &filters[3].1));
    }
}
