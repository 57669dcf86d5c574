//! A hint that starts loading a cache line without waiting for it.
//!
//! A lookup that misses probes one filter per level, each at a random
//! place in memory far larger than the cache: every probe is a cache miss.
//! Issued one after the other, the misses queue; started together, they
//! overlap, and the lookup pays about one memory latency instead of one
//! per level ([`super::Filter::prefetch`]). `RocksDB` prefetches its blocked
//! Bloom line the same way before a batch of probes (`MultiGet`).

/// Asks the CPU to start loading the cache line holding `*at` into every
/// cache level. Returns at once; no answer depends on it.
#[inline(always)]
#[cfg_attr(
    not(target_arch = "x86_64"),
    expect(clippy::inline_always, reason = "a no-op here; a single hint instruction on x86-64")
)]
pub(crate) fn line<T>(at: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is a hint: it never faults, whatever the address,
    // and changes no memory and no architectural state. `at` is a live
    // reference anyway. Measured to pay: docs/measurements.md, "Filters
    // prefetched together".
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(at).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}
