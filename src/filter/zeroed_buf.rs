//! Zero-filled scratch arrays for filter construction, on huge pages when
//! they are large.
//!
//! Peeling a binary fuse or xor filter for n keys touches ~25·n bytes of
//! freshly allocated scratch. On 4 KiB pages a fifth of the build went to
//! the kernel's page-fault path (one trap per page, `perf record`, 10^6
//! keys), and the xor filter's random cell accesses miss the TLB. A large
//! buffer is therefore an anonymous mapping advised `MADV_HUGEPAGE`: where
//! transparent huge pages are enabled as `madvise` (a common default) or
//! `always`, it faults in 2 MiB at a time. Elsewhere, and for small
//! buffers, it is a plain `Vec`. Measured in docs/filters.md, "Huge pages for
//! construction scratch".

use std::ops::{Deref, DerefMut};

/// Integers, for which every bit pattern (all zeros included) is a value.
///
/// # Safety
/// Implement only for types with no invalid bit patterns and an alignment
/// no larger than a page.
pub(crate) unsafe trait Plain: Copy + Default {}
// SAFETY: primitive integers have no invalid bit patterns.
unsafe impl Plain for u8 {}
// SAFETY: as above.
unsafe impl Plain for u32 {}
// SAFETY: as above.
unsafe impl Plain for u64 {}
// SAFETY: as above.
unsafe impl Plain for usize {}

/// Buffers of at least this many bytes are mapped; below it, the heap's
/// own free lists serve them better than a system call would.
const MAP_THRESHOLD: usize = 2 << 20;

/// The huge page size the mapping's length is rounded up to: Linux aligns
/// an anonymous mapping to a huge page boundary only when its length is a
/// multiple of one.
const HUGE_PAGE: usize = 2 << 20;

/// A zero-filled `[T]` of fixed length.
pub(crate) struct ZeroedBuf<T: Plain> {
    storage: Storage<T>,
}

enum Storage<T> {
    Heap(Vec<T>),
    #[cfg(target_os = "linux")]
    Mapped {
        map: memmap2::MmapMut,
        len: usize,
    },
}

impl<T: Plain> ZeroedBuf<T> {
    /// `len` zeros.
    pub(crate) fn new(len: usize) -> Self {
        #[cfg(target_os = "linux")]
        if let Some(map) = map_huge(len.saturating_mul(std::mem::size_of::<T>())) {
            return ZeroedBuf { storage: Storage::Mapped { map, len } };
        }
        ZeroedBuf { storage: Storage::Heap(vec![T::default(); len]) }
    }

    /// Whether the buffer is an advised mapping rather than heap memory.
    #[cfg(test)]
    fn is_mapped(&self) -> bool {
        !matches!(self.storage, Storage::Heap(_))
    }
}

/// An anonymous mapping of at least `bytes`, advised to use huge pages;
/// `None` when `bytes` is small or the mapping fails (the caller then uses
/// the heap, and a real shortage aborts there as any allocation does).
///
/// Rounding up costs up to one huge page per buffer for as long as the
/// build runs (a buffer of 2 MiB + 8 bytes faults in 4 MiB).
#[cfg(target_os = "linux")]
fn map_huge(bytes: usize) -> Option<memmap2::MmapMut> {
    if bytes < MAP_THRESHOLD {
        return None;
    }
    let map = memmap2::MmapMut::map_anon(bytes.checked_next_multiple_of(HUGE_PAGE)?).ok()?;
    // Only a hint: a kernel without transparent huge pages refuses it, and
    // the mapping still works on small pages. (Miri, which checks the typed
    // views below, has no `madvise`.)
    if !cfg!(miri) {
        let _ = map.advise(memmap2::Advice::HugePage);
    }
    Some(map)
}

impl<T: Plain> Deref for ZeroedBuf<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match &self.storage {
            Storage::Heap(v) => v,
            #[cfg(target_os = "linux")]
            // SAFETY: the mapping is page-aligned (enough for any `Plain`
            // type), at least `len · size_of::<T>()` bytes long, and was
            // zero-filled by the kernel; every bit pattern is a valid `T`.
            // The borrow of `self` keeps the mapping alive and unaliased.
            Storage::Mapped { map, len } => unsafe {
                std::slice::from_raw_parts(map.as_ptr().cast::<T>(), *len)
            },
        }
    }
}

impl<T: Plain> DerefMut for ZeroedBuf<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.storage {
            Storage::Heap(v) => v,
            #[cfg(target_os = "linux")]
            // SAFETY: as in `deref`; the exclusive borrow of `self` makes
            // this the only reference into the mapping.
            Storage::Mapped { map, len } => unsafe {
                std::slice::from_raw_parts_mut(map.as_mut_ptr().cast::<T>(), *len)
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_buffers_are_heap_and_zero() {
        let b = ZeroedBuf::<u64>::new(1000);
        assert!(!b.is_mapped());
        assert_eq!(b.len(), 1000);
        assert!(b.iter().all(|&x| x == 0));
        assert!(ZeroedBuf::<u8>::new(0).is_empty());
    }

    /// Every `STRIDE`th element: Miri runs the whole suite's element loops
    /// ~10^4 times slower, so there it checks a sample.
    const STRIDE: usize = if cfg!(miri) { 4099 } else { 1 };

    #[test]
    fn large_buffers_are_zero_writable_and_exactly_sized() {
        for len in [MAP_THRESHOLD / 8, MAP_THRESHOLD / 8 + 1, 3 * HUGE_PAGE / 8 - 1] {
            let mut b = ZeroedBuf::<u64>::new(len);
            #[cfg(target_os = "linux")]
            assert!(b.is_mapped(), "{len}");
            assert_eq!(b.len(), len);
            assert!(b.iter().step_by(STRIDE).all(|&x| x == 0));
            b[len - 1] = u64::MAX;
            b[0] = 7;
            assert_eq!((b[0], b[len - 1]), (7, u64::MAX));
            for x in b.iter_mut().step_by(STRIDE) {
                *x = 3;
            }
            assert!(b.iter().step_by(STRIDE).all(|&x| x == 3));
        }
        let mut bytes = ZeroedBuf::<u8>::new(MAP_THRESHOLD + 5);
        assert!(bytes.iter().step_by(STRIDE).all(|&b| b == 0));
        bytes[MAP_THRESHOLD + 4] = 1;
        assert_eq!((bytes[MAP_THRESHOLD + 3], bytes[MAP_THRESHOLD + 4]), (0, 1));
    }
}
