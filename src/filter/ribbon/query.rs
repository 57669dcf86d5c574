//! A Ribbon query, and the CPU paths it runs on.
//!
//! A query is one code path generic over its [`Fold`] (`parity/`): the
//! baseline, AVX2 or AVX-512. The crate is built for baseline x86-64, so
//! the wider paths are functions compiled with `#[target_feature]`, and
//! such a function inlines only into one built for the same features:
//! [`Ribbon::dispatch`] checks the CPU (cached flags) and calls the body
//! of the work (one query, a batch, the build's validation) compiled for
//! the best fold it has. A single query pays that call; a batch or a
//! validation pays it once (docs/measurements.md, "Ribbon: AVX2 where the
//! CPU has it", has the cost).

use super::layout::{self, WIDTH};
use super::parity::{self, Baseline, Fold, Widest};
#[cfg(target_arch = "x86_64")]
use super::parity::{Avx2, Avx512};
use super::{BuildError, Ribbon, remix};

/// Work on one filter, compiled for each [`Fold`].
pub(super) trait Work {
    /// What the work gives back.
    type Out;
    /// Does the work, folding with `fold`.
    fn run<F: Fold>(self, filter: &Ribbon, fold: F) -> Self::Out;
}

/// The query of the key whose remixed hash this is.
pub(super) struct One(pub u64);

impl Work for One {
    type Out = bool;

    #[inline]
    fn run<F: Fold>(self, filter: &Ribbon, fold: F) -> bool {
        filter.contains_mixed::<true, _>(self.0, fold)
    }
}

/// [`Filter::contains_batch`](super::super::Filter::contains_batch): an
/// answer for each of `hashes` (not remixed), appended to `out`.
pub(super) struct Batch<'a> {
    pub hashes: &'a [u64],
    pub out: &'a mut Vec<bool>,
}

impl Work for Batch<'_> {
    type Out = ();

    #[inline]
    fn run<F: Fold>(self, filter: &Ribbon, fold: F) {
        // A plain loop, not `extend(map(..))`: an iterator adapter's body is
        // a function of its own, built for baseline x86-64, into which the
        // wide fold would not inline.
        self.out.reserve(self.hashes.len());
        for &h in self.hashes {
            self.out.push(filter.contains_mixed::<true, _>(remix(h, filter.seed), fold));
        }
    }
}

/// `ValidationFailed` naming the input hash of the first of these remixed
/// inputs the filter rejects. Every input's remixed hash is among them, so
/// this checks every input; walking them sorted, in start order, streams
/// through the solution instead of jumping (about 6% off the build at 10^6
/// keys, against the input order).
pub(super) struct Validate<'a>(pub &'a [u64]);

impl Work for Validate<'_> {
    type Out = Result<(), BuildError>;

    #[inline]
    fn run<F: Fold>(self, filter: &Ribbon, fold: F) -> Self::Out {
        // A plain loop, as in `Batch`.
        for &h in self.0 {
            if !filter.contains_mixed::<false, _>(h, fold) {
                return Err(BuildError::ValidationFailed { hash: super::super::peel::unmix(h, filter.seed) });
            }
        }
        Ok(())
    }
}

impl Ribbon {
    /// The widest instructions a Ribbon query uses on this CPU, checked at
    /// run time: `"avx512"` (with its population count), `"avx2"`, `"sse2"`
    /// (baseline x86-64) or `"portable"` (elsewhere). Query times differ
    /// by the path (docs/measurements.md, "Ribbon: AVX2 where the CPU has
    /// it"), so the benchmarks print it beside their figures.
    ///
    /// ```
    /// use siftdb::filter::Ribbon;
    /// println!("Ribbon queries here use {}", Ribbon::simd());
    /// ```
    #[must_use]
    pub fn simd() -> &'static str {
        match parity::widest() {
            #[cfg(target_arch = "x86_64")]
            Widest::Avx512(_) => "avx512",
            #[cfg(target_arch = "x86_64")]
            Widest::Avx2(_) => "avx2",
            Widest::Baseline if cfg!(target_arch = "x86_64") => "sse2",
            Widest::Baseline => "portable",
        }
    }

    /// Runs `work` with the best fold this CPU has.
    #[inline]
    pub(super) fn dispatch<W: Work>(&self, work: W) -> W::Out {
        match parity::widest() {
            // SAFETY: `avx512` proves the CPU has the features `on_avx512`
            // is compiled for.
            #[cfg(target_arch = "x86_64")]
            Widest::Avx512(avx512) => unsafe { self.on_avx512(work, avx512) },
            // SAFETY: `avx2` proves the CPU has AVX2.
            #[cfg(target_arch = "x86_64")]
            Widest::Avx2(avx2) => unsafe { self.on_avx2(work, avx2) },
            Widest::Baseline => work.run(self, Baseline),
        }
    }

    /// `work` compiled for AVX-512.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vpopcntdq,avx2")]
    pub(super) fn on_avx512<W: Work>(&self, work: W, avx512: Avx512) -> W::Out {
        work.run(self, avx512)
    }

    /// `work` compiled for AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub(super) fn on_avx2<W: Work>(&self, work: W, avx2: Avx2) -> W::Out {
        work.run(self, avx2)
    }

    /// Checks the filter against every remixed input (see [`Validate`]).
    pub(super) fn validate_mixed(&self, mixed: &[u64]) -> Result<(), BuildError> {
        self.dispatch(Validate(mixed))
    }

    /// [`Filter::contains`](super::super::Filter::contains) of the key
    /// whose remixed hash is `h` (`STOP_EARLY`: see [`found`]).
    #[expect(
        clippy::inline_always,
        reason = "with #[inline], two of three `bench filters` runs at 10^6 keys measured 37 ns a query against 29"
    )]
    #[inline(always)]
    pub(super) fn contains_mixed<const STOP_EARLY: bool, F: Fold>(&self, h: u64, fold: F) -> bool {
        let e = self.layout.equation(h);
        let block = e.start / WIDTH;
        let columns = self.layout.columns(block);
        let first = self.layout.first_word(block);
        let next = first + columns as usize;
        let words: &[u128] = &self.words;
        let found = if next + PAD <= words.len() {
            // SAFETY: checked just above.
            unsafe { found::<STOP_EARLY, F>(words, first, next, &e, columns, fold) }
        } else {
            // A solution read in place from its table ends with the file's
            // next bytes, not `PAD` words of padding: a query in its last
            // few blocks reads a zero-padded copy of its two windows.
            let mut padded = [0u128; 2 * PAD];
            let have = &words[first.min(words.len())..words.len().min(first + padded.len())];
            padded[..have.len()].copy_from_slice(have);
            // SAFETY: `columns + PAD ≤ 2 · PAD = padded.len()`.
            unsafe { found::<STOP_EARLY, F>(&padded, 0, columns as usize, &e, columns, fold) }
        };
        found == e.result || self.bumped.contains(block, h)
    }
}

/// Words a query may read past the next block's first word: eight from
/// each block whatever its columns (`MAX_COLUMNS` at the most).
pub(super) const PAD: usize = layout::MAX_COLUMNS as usize;

/// The result bits of the equation `e`, whose block's `columns` words start
/// at `words[first]` and whose next block's start at `words[next]`; with
/// `STOP_EARLY` it may stop after the first eight columns disagree
/// (queries; it matters above 8 columns), without it it computes every
/// column (validation, where every key is present and the early test would
/// be work for nothing).
///
/// # Safety
/// `next + PAD ≤ words.len()`, and `first + columns = next`.
#[expect(
    clippy::inline_always,
    reason = "with #[inline], two of three `bench filters` runs at 10^6 keys measured 37 ns a query against 29"
)]
#[inline(always)]
unsafe fn found<const STOP_EARLY: bool, F: Fold>(
    words: &[u128],
    first: usize,
    next: usize,
    e: &layout::Equation,
    columns: u32,
    fold: F,
) -> u32 {
    let offset = e.start % WIDTH;
    // The window is the rest of this block's word and the start of the
    // next block's; shifting the coefficients to meet them costs two
    // shifts a query instead of two a column.
    let window = fold.window(e.coeff, offset);
    // Eight words from each block whatever the columns: the lanes past
    // them read the next block's words or what follows the solution, and
    // are masked off. The reads are unchecked, and in bounds: `g` is 0 or a
    // multiple of 8 below `columns ≤ 32`, so `g + 8 ≤ 32 = PAD`, and the
    // caller keeps `PAD` words past `next`.
    let group = |g: usize| {
        // SAFETY: both reads end by `next + PAD ≤ words.len()` (above).
        unsafe { fold.eight(words_at(words, first + g), words_at(words, next + g), window) }
    };
    // Four columns, for a last group of four or fewer, which the
    // eight-wide fold would charge as much as a full group: present keys
    // at 9.4 bits/key (9 or 10 columns) measured 22.0–22.4 ns against
    // 24.8 (docs/measurements.md, "Ribbon: the last few columns four at
    // a time").
    let tail = |g: usize| {
        // SAFETY: as in `group`, with four words instead of eight.
        unsafe { fold.four(words_at(words, first + g), words_at(words, next + g), window) }
    };
    let mut found = group(0);
    found &= layout::mask(columns);
    // Above 8 columns, a query stops at the first group that disagrees.
    let mut g = 8;
    while g < columns {
        if STOP_EARLY && found != e.result & layout::mask(g) {
            break;
        }
        let left = columns - g;
        let more = if left <= 4 { tail(g as usize) } else { group(g as usize) };
        found |= (more & layout::mask(left)) << g;
        g += 8;
    }
    found
}

/// Solution words `at..at + N`, unchecked: the bounds checks were 13 of
/// the 172 instructions of a query at 7 bits/key (docs/measurements.md,
/// "Ribbon: AVX2 where the CPU has it").
///
/// # Safety
/// `at + N ≤ words.len()`.
#[inline]
unsafe fn words_at<const N: usize>(words: &[u128], at: usize) -> &[u128; N] {
    debug_assert!(at + N <= words.len(), "{at} + {N} words of {}", words.len());
    // SAFETY: the caller keeps `at..at + N` inside `words`, and an array of
    // `u128` has the alignment of one.
    unsafe { &*words.as_ptr().add(at).cast::<[u128; N]>() }
}
