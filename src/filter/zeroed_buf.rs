//! Zero-filled arrays for filters and their construction, on huge pages
//! when they are large.
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
//!
//! The filters keep their own arrays here too (xor and binary fuse
//! fingerprints, Ribbon's solution, blocked Bloom's blocks), for queries:
//! an xor or fuse query reads three cells on three different small pages,
//! and on huge pages those reads stop missing the TLB (`BinaryFuse16` queries,
//! against the same filter on the heap: 8–17% faster at 10^6 keys, 2.26 MB;
//! against xorf, 0.98 → 0.83 at 10^7; docs/measurements.md).
//! Only whole huge pages of the buffer are advised; the part past the last
//! one is advised against them, so a long-lived array holds no more memory
//! than its length rounded to a small page.
//!
//! A filter decoded from a table's mapping instead views its array there
//! ([`ZeroedBuf::view`]): no copy at open and no heap, and the kernel may
//! drop a cold filter's clean pages under memory pressure (issue 66).

use std::ops::{Deref, DerefMut};

use bytes::Bytes;

/// Integers, for which every bit pattern (all zeros included) is a value.
///
/// Public only in name (the module is private), so that the sealed
/// [`super::Fingerprint`] can require it.
///
/// # Safety
/// Implement only for types with no invalid bit patterns and an alignment
/// no larger than a page.
pub unsafe trait Plain: Copy + Default {}
// SAFETY: primitive integers have no invalid bit patterns.
unsafe impl Plain for u8 {}
// SAFETY: as above.
unsafe impl Plain for u16 {}
// SAFETY: as above.
unsafe impl Plain for u32 {}
// SAFETY: as above.
unsafe impl Plain for u64 {}
// SAFETY: as above (alignment 16).
unsafe impl Plain for u128 {}
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
pub(crate) struct ZeroedBuf<T> {
    storage: Storage<T>,
}

enum Storage<T> {
    Heap(Vec<T>),
    #[cfg(target_os = "linux")]
    Mapped {
        map: memmap2::MmapMut,
        len: usize,
    },
    /// Bytes the filter was decoded from, checked by [`ZeroedBuf::view`]
    /// to be aligned for `T` and a whole number of them. Little-endian
    /// targets only: the encodings are little-endian.
    #[cfg(target_endian = "little")]
    Shared(Bytes),
}

/// What a buffer is for, which decides its last, partial huge page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lifetime {
    /// Scratch for one build: the last huge page is whole too. Faulting in
    /// the tail on small pages would cost up to 512 traps a buffer, and the
    /// memory is given back when the build ends.
    Scratch,
    /// A filter's array, kept as long as the filter: only whole huge pages,
    /// so that it holds its length rounded to a small page.
    Kept,
}

impl<T: Plain> ZeroedBuf<T> {
    /// `len` zeros, as scratch for a build (the mapping's last huge page
    /// whole, see [`Lifetime::Scratch`]).
    pub(crate) fn new(len: usize) -> Self {
        Self::with_lifetime(len, Lifetime::Scratch)
    }

    /// `len` zeros for a filter to keep (see [`Lifetime::Kept`]).
    pub(crate) fn kept(len: usize) -> Self {
        Self::with_lifetime(len, Lifetime::Kept)
    }

    /// As [`ZeroedBuf::kept`], or `None` where the allocator refuses `len`
    /// items: for sizes that come from users, which must get an error and
    /// not an abort.
    pub(crate) fn try_kept(len: usize) -> Option<Self> {
        Self::try_with_lifetime(len, Lifetime::Kept)
    }

    fn with_lifetime(len: usize, lifetime: Lifetime) -> Self {
        // A refusal is retried as a `Vec`, whose own allocation error then
        // aborts as any other allocation does.
        Self::try_with_lifetime(len, lifetime)
            .unwrap_or_else(|| ZeroedBuf { storage: Storage::Heap(vec![T::default(); len]) })
    }

    fn try_with_lifetime(len: usize, lifetime: Lifetime) -> Option<Self> {
        #[cfg(target_os = "linux")]
        if let Some(map) = map_huge(len.saturating_mul(std::mem::size_of::<T>()), lifetime) {
            return Some(ZeroedBuf { storage: Storage::Mapped { map, len } });
        }
        let _ = lifetime;
        let mut v = Vec::new();
        v.try_reserve_exact(len).ok()?;
        v.resize(len, T::default());
        Some(ZeroedBuf { storage: Storage::Heap(v) })
    }

    /// A copy of `items` to keep, on huge pages when large.
    pub(crate) fn from_slice(items: &[T]) -> Self {
        let mut buf = Self::kept(items.len());
        buf.copy_from_slice(items);
        buf
    }

    /// `part` of `shared` viewed in place as `[T]`, without a copy, when it
    /// lies inside `shared`, starts aligned for `T` and holds a whole number
    /// of them, on a little-endian target; else `None`, and the caller
    /// copies (an old table, a misaligned block, a big-endian target).
    pub(crate) fn view(shared: &Bytes, part: &[u8]) -> Option<Self> {
        let size = std::mem::size_of::<T>();
        let start = (part.as_ptr() as usize).checked_sub(shared.as_ptr() as usize)?;
        let fits = start.checked_add(part.len()).is_some_and(|end| end <= shared.len());
        let aligned = part.as_ptr().align_offset(std::mem::align_of::<T>()) == 0;
        if !(fits && aligned && size > 0 && part.len().is_multiple_of(size)) {
            return None;
        }
        #[cfg(target_endian = "little")]
        return Some(ZeroedBuf { storage: Storage::Shared(shared.slice(start..start + part.len())) });
        #[cfg(not(target_endian = "little"))]
        None
    }

    /// The bytes this buffer views in place, if it is such a view.
    pub(crate) fn shared(&self) -> Option<&[u8]> {
        match &self.storage {
            #[cfg(target_endian = "little")]
            Storage::Shared(b) => Some(b),
            _ => None,
        }
    }

    /// Whether the buffer is an advised mapping rather than heap memory.
    #[cfg(test)]
    pub(crate) fn is_mapped(&self) -> bool {
        !matches!(self.storage, Storage::Heap(_))
    }
}

/// An anonymous mapping of at least `bytes`, advised to use huge pages;
/// `None` when `bytes` is small or the mapping fails (the caller then uses
/// the heap, and a real shortage aborts there as any allocation does).
///
/// The mapping's length is rounded up to a huge page so that the kernel
/// aligns it. For scratch the whole mapping is advised: a buffer of
/// 2 MiB + 8 bytes faults in 4 MiB while the build runs. A kept buffer
/// advises only its whole huge pages and the rest against them (else, with
/// huge pages `always` on, touching its tail would fault in a whole 2 MiB),
/// so the rounding is address space only.
#[cfg(target_os = "linux")]
fn map_huge(bytes: usize, lifetime: Lifetime) -> Option<memmap2::MmapMut> {
    if bytes < MAP_THRESHOLD {
        return None;
    }
    let mapped = bytes.checked_next_multiple_of(HUGE_PAGE)?;
    let map = memmap2::MmapMut::map_anon(mapped).ok()?;
    let huge = match lifetime {
        Lifetime::Scratch => mapped,
        Lifetime::Kept => bytes / HUGE_PAGE * HUGE_PAGE,
    };
    // Only hints: a kernel without transparent huge pages refuses them, and
    // the mapping still works on small pages. (Miri, which checks the typed
    // views below, has no `madvise`.)
    if !cfg!(miri) {
        let _ = map.advise_range(memmap2::Advice::HugePage, 0, huge);
        if huge < mapped {
            let _ = map.advise_range(memmap2::Advice::NoHugePage, huge, mapped - huge);
        }
    }
    Some(map)
}

impl<T: Plain> Clone for ZeroedBuf<T> {
    fn clone(&self) -> Self {
        match &self.storage {
            #[cfg(target_endian = "little")]
            Storage::Shared(b) => ZeroedBuf { storage: Storage::Shared(b.clone()) },
            _ => Self::from_slice(self),
        }
    }
}

impl<T: Plain + std::fmt::Debug> std::fmt::Debug for ZeroedBuf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Plain + PartialEq> PartialEq for ZeroedBuf<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Plain + Eq> Eq for ZeroedBuf<T> {}

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
            #[cfg(target_endian = "little")]
            // SAFETY: `view` checked that the bytes start aligned for `T`
            // and hold `len / size_of::<T>()` whole `T`s (a `Plain` size is
            // never 0), and every bit pattern is a valid `T`, read as
            // little-endian on a little-endian target. `Bytes` is immutable
            // and its owner (a read-only map of a table, which siftdb never
            // writes once published) lives as long as this borrow of `self`.
            Storage::Shared(b) => unsafe {
                std::slice::from_raw_parts(b.as_ptr().cast::<T>(), b.len() / std::mem::size_of::<T>())
            },
        }
    }
}

impl<T: Plain> DerefMut for ZeroedBuf<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // A view of read-only bytes is copied before its first write.
        if self.shared().is_some() {
            *self = Self::from_slice(self);
        }
        match &mut self.storage {
            Storage::Heap(v) => v,
            #[cfg(target_os = "linux")]
            // SAFETY: as in `deref`; the exclusive borrow of `self` makes
            // this the only reference into the mapping.
            Storage::Mapped { map, len } => unsafe {
                std::slice::from_raw_parts_mut(map.as_mut_ptr().cast::<T>(), *len)
            },
            #[cfg(target_endian = "little")]
            Storage::Shared(_) => unreachable!("copied above"),
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

    #[test]
    fn copies_compare_and_clone_by_contents() {
        for len in [10, MAP_THRESHOLD / 2 + 3] {
            let items: Vec<u16> = (0..len).map(|i| u16::try_from(i % 65_521).unwrap_or(0)).collect();
            let a = ZeroedBuf::from_slice(&items);
            assert_eq!(&*a, &items[..]);
            let mut b = a.clone();
            assert!(b == a && b.is_mapped() == a.is_mapped());
            b[len - 1] ^= 1;
            assert!(b != a, "a clone is a copy");
            assert_eq!(a[len - 1], items[len - 1]);
        }
        assert_eq!(format!("{:?}", ZeroedBuf::from_slice(&[1u8, 2])), "[1, 2]");
    }

    /// Kilobytes resident in the mappings that overlap `[start, end)`, from
    /// `/proc/self/smaps` (a range `madvise`d in parts is several mappings).
    #[cfg(all(target_os = "linux", not(miri)))]
    fn resident_kb(start: usize, end: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
        let (mut total, mut inside) = (0, false);
        for line in smaps.lines() {
            let range = line.split_whitespace().next().and_then(|r| r.split_once('-'));
            let bounds = range.and_then(|(a, b)| {
                Some((usize::from_str_radix(a, 16).ok()?, usize::from_str_radix(b, 16).ok()?))
            });
            if let Some((a, b)) = bounds.filter(|_| line.contains(' ')) {
                inside = a < end && start < b;
            } else if inside && let Some(kb) = line.strip_prefix("Rss:") {
                total += kb.trim().trim_end_matches("kB").trim().parse::<u64>().expect("Rss in kB");
            }
        }
        total
    }

    /// For a kept buffer the rounding up to a whole huge page is address
    /// space only: one small page past a huge page, written end to end, it
    /// holds that much memory. (Advising the whole rounded mapping, as
    /// scratch does, writing its last byte faults in a second huge page:
    /// 4 MiB held.)
    #[test]
    #[cfg(all(target_os = "linux", not(miri)))]
    fn a_buffer_holds_its_length_not_its_mapping() {
        let len = HUGE_PAGE + 4096;
        let mut b = ZeroedBuf::<u8>::kept(len);
        assert!(b.is_mapped());
        b.fill(1);
        let start = b.as_ptr() as usize;
        let held = resident_kb(start, start + len);
        assert!(held <= (len as u64 / 1024) + 4, "{held} kB resident for a {len}-byte buffer");
        assert!(held >= len as u64 / 1024, "{held} kB: smaps not read right");
    }
}
