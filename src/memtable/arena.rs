//! Where a memtable's versions live, and the 16-byte key the set orders
//! them by.
//!
//! Each version is laid out once, front to back, in a chunk of
//! [`Arena::CHUNK`] bytes (a version larger than that gets a chunk of its
//! own size):
//!
//! ```text
//! 0        8         10          14      18        18+K      18+K+V
//! +--------+---------+-----------+-------+---------+---------+
//! | seq<<8 | key len | value len | chunk |   key   |  value  |
//! | | kind | u16 LE  |  u32 LE   | u32 LE|  K bytes| V bytes |
//! +--------+---------+-----------+-------+---------+---------+
//! ```
//!
//! `chunk` is the chunk's index in its arena, where a reader finds the
//! handle to slice the key and value from. The set holds only a
//! [`MemKey`]: the key's first eight bytes inline and a pointer to the
//! version. At 16 bytes (the arena's first form held a 32-byte `Bytes`
//! slice and the sequence number beside the prefix, 48 bytes), a B-tree
//! node holds the same eleven keys in a third of the memory, and a 64 MiB
//! memtable about a fifth more versions: fewer flushes, fewer level-0
//! merges, less written per byte (docs/measurements.md).
//!
//! # Why `unsafe`, and why it is sound
//!
//! A key that points into its chunk cannot be a safe reference (the set's
//! order has no room for a lifetime, and a `Bytes` is the 32 bytes this
//! saves), so the chunks are raw allocations and the keys raw pointers.
//! What makes every dereference sound:
//!
//! - A chunk is written only by the one writer, under the memtable's write
//!   lock, only in its unused tail, and only through its allocation's raw
//!   pointer; no reference to its unwritten bytes is ever made.
//! - A version is written whole before its key enters the set, and never
//!   written again. Readers reach it only through the set, under the read
//!   lock, so the lock orders the writes before every read.
//! - Chunks are freed only when the arena drops, with the memtable that
//!   owns the set; `MemKey` is not `Clone`, so no key outlives the set it
//!   sits in (bounds kept across read locks copy the key's bytes).
//! - A chunk the writer has moved past is sealed: it becomes a `Bytes`
//!   over exactly its written bytes, and values are handed out as slices
//!   of it (a refcount bump, and the chunk stays alive while a caller holds
//!   one). A value in the chunk still being written is copied instead.

use std::alloc::{Layout, alloc, dealloc, handle_alloc_error};
use std::ptr::NonNull;

use bytes::Bytes;

use super::{KeyRef, key_prefix};
use crate::key::{SeqNo, ValueKind};

/// Bytes before the key in a version (see the module's diagram).
pub(super) const HEADER: usize = 18;

/// One raw allocation of `cap` bytes, freed on drop.
#[derive(Debug)]
struct Alloc {
    ptr: NonNull<u8>,
    cap: usize,
}

// SAFETY: `Alloc` owns its allocation outright (no other handle frees it),
// and the arena writes to it only under the memtable's write lock: moving
// or sharing the owner between threads is as safe as for a `Vec<u8>`.
unsafe impl Send for Alloc {}
// SAFETY: as above; shared access only reads bytes written before the
// readers' lock was taken.
unsafe impl Sync for Alloc {}

impl Alloc {
    fn layout(cap: usize) -> Layout {
        // `cap` is at most a chunk or one version (< 64 MiB + 64 KiB).
        Layout::from_size_align(cap.max(1), 8).unwrap_or_else(|_| handle_alloc_error(Layout::new::<u64>()))
    }

    fn new(cap: usize) -> Self {
        let layout = Self::layout(cap);
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc(layout) };
        let Some(ptr) = NonNull::new(ptr) else { handle_alloc_error(layout) };
        Alloc { ptr, cap }
    }
}

impl Drop for Alloc {
    fn drop(&mut self) {
        // SAFETY: allocated in `Alloc::new` with this layout, freed once.
        unsafe { dealloc(self.ptr.as_ptr(), Self::layout(self.cap)) }
    }
}

/// A chunk the writer has moved past: its written bytes, owned by the
/// `Bytes` every value of it is sliced from.
#[derive(Debug)]
struct Sealed {
    alloc: Alloc,
    len: usize,
}

impl AsRef<[u8]> for Sealed {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: the first `len` bytes were written before the chunk was
        // sealed, and a sealed chunk is never written again.
        unsafe { std::slice::from_raw_parts(self.alloc.ptr.as_ptr(), self.len) }
    }
}

#[derive(Debug)]
enum Slot {
    /// Being written: its first `Arena::used` bytes hold versions.
    Open(Alloc),
    Sealed(Bytes),
}

/// The chunks of one memtable, in the order they were started.
#[derive(Debug, Default)]
pub(super) struct Arena {
    slots: Vec<Slot>,
    /// Bytes written to the last slot, when it is open.
    used: usize,
}

impl Arena {
    /// Chunk size: small beside a 64 MiB memtable, so the last chunk wastes
    /// little, and a value a reader keeps holds at most this much alive.
    pub(super) const CHUNK: usize = 32 << 10;

    /// Lays out a version (see the module's diagram) and returns its key.
    /// The caller holds the memtable's write lock and puts the key in the
    /// set.
    pub(super) fn alloc(&mut self, user_key: &[u8], seq: SeqNo, kind: ValueKind, value: &[u8]) -> MemKey {
        let need = HEADER + user_key.len() + value.len();
        let room = match self.slots.last() {
            Some(Slot::Open(a)) => a.cap - self.used,
            _ => 0,
        };
        if need > room {
            self.seal_last();
            self.slots.push(Slot::Open(Alloc::new(need.max(Self::CHUNK))));
            self.used = 0;
        }
        let chunk = self.slots.len() - 1;
        let Some(Slot::Open(a)) = self.slots.last() else { unreachable!("a slot was just opened") };
        // Keys are at most `MAX_KEY_BYTES` (65,535) and values
        // `MAX_VALUE_BYTES` (64 MiB): the batch checked both. A memtable
        // never holds 2^32 chunks (that is 128 TiB).
        let mut header = [0u8; HEADER];
        header[..8].copy_from_slice(&(seq << 8 | u64::from(kind.as_u8())).to_le_bytes());
        header[8..10].copy_from_slice(&u16::try_from(user_key.len()).unwrap_or(u16::MAX).to_le_bytes());
        header[10..14].copy_from_slice(&u32::try_from(value.len()).unwrap_or(u32::MAX).to_le_bytes());
        header[14..].copy_from_slice(&u32::try_from(chunk).unwrap_or(u32::MAX).to_le_bytes());
        // SAFETY: `[used, used + need)` lies inside the allocation (`need <=
        // room`), nothing has read it or made a reference to it, and the
        // three sources are other memory.
        let at = unsafe {
            let at = a.ptr.as_ptr().add(self.used);
            at.copy_from_nonoverlapping(header.as_ptr(), HEADER);
            at.add(HEADER).copy_from_nonoverlapping(user_key.as_ptr(), user_key.len());
            at.add(HEADER + user_key.len()).copy_from_nonoverlapping(value.as_ptr(), value.len());
            NonNull::new_unchecked(at)
        };
        self.used += need;
        if self.used == a.cap {
            // A version of its own size, or one that filled the chunk
            // exactly: nothing more fits, so its values can be sliced now.
            self.seal_last();
        }
        MemKey { prefix: key_prefix(user_key), at }
    }

    /// Turns the open chunk, if any, into a `Bytes` over its written bytes.
    fn seal_last(&mut self) {
        let Some(slot) = self.slots.last_mut() else { return };
        if let Slot::Open(_) = slot {
            let Slot::Open(alloc) = std::mem::replace(slot, Slot::Sealed(Bytes::new())) else { return };
            *slot = Slot::Sealed(Bytes::from_owner(Sealed { alloc, len: self.used }));
        }
    }

    /// Slices of version `key`'s chunk, one per `(start, len)` in `parts`
    /// (each within the version), as `Bytes`: slices of a sealed chunk,
    /// copies from the open one.
    fn bytes<const N: usize>(&self, key: &MemKey, parts: [(*const u8, usize); N]) -> [Bytes; N] {
        match self.slots.get(key.chunk()) {
            Some(Slot::Sealed(chunk)) => parts.map(|(at, len)| {
                let from = at as usize - chunk.as_ptr() as usize;
                chunk.slice(from..from + len)
            }),
            // SAFETY: each part lies within the version `key` points to.
            _ => parts.map(|(at, len)| Bytes::copy_from_slice(unsafe { std::slice::from_raw_parts(at, len) })),
        }
    }

    /// The version's user key and value, sharing its chunk once sealed.
    pub(super) fn key_value(&self, key: &MemKey) -> (Bytes, Bytes) {
        let k = key.user_key();
        let [k, v] = self.bytes(key, [(k.as_ptr(), k.len()), key.value_at()]);
        (k, v)
    }

    /// The version's value, sharing its chunk once sealed.
    pub(super) fn value(&self, key: &MemKey) -> Bytes {
        let [v] = self.bytes(key, [key.value_at()]);
        v
    }

    /// Chunks started, sealed or not.
    #[cfg(test)]
    pub(super) fn chunks(&self) -> usize {
        self.slots.len()
    }
}

/// A version as the set orders it: 16 bytes, so a B-tree node holds eleven
/// in three cache lines.
#[derive(Debug)]
pub(crate) struct MemKey {
    /// The key's first eight bytes: most comparisons in the set end here,
    /// without following `at` (see [`key_prefix`]).
    prefix: u64,
    /// The version's first byte, in its arena.
    at: NonNull<u8>,
}

// SAFETY: a `MemKey` only reads the version it points to, which is never
// written again once the key exists, and lives in an arena owned by the
// same memtable as the set holding the key (see the module docs).
unsafe impl Send for MemKey {}
// SAFETY: as above: shared keys only read immutable bytes.
unsafe impl Sync for MemKey {}

impl MemKey {
    /// The version's header.
    #[inline]
    fn header(&self) -> &[u8; HEADER] {
        // SAFETY: `at` points at a whole version (module docs), which
        // starts with its header.
        unsafe { &*self.at.as_ptr().cast::<[u8; HEADER]>() }
    }

    #[inline]
    fn seq_kind(&self) -> u64 {
        let h = self.header();
        u64::from_le_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]])
    }

    #[inline]
    fn key_len(&self) -> usize {
        let h = self.header();
        usize::from(u16::from_le_bytes([h[8], h[9]]))
    }

    fn chunk(&self) -> usize {
        let h = self.header();
        u32::from_le_bytes([h[14], h[15], h[16], h[17]]) as usize
    }

    /// Where the value starts, and its length.
    fn value_at(&self) -> (*const u8, usize) {
        let h = self.header();
        let len = u32::from_le_bytes([h[10], h[11], h[12], h[13]]) as usize;
        // SAFETY: the value follows the header and key inside the version.
        (unsafe { self.at.as_ptr().add(HEADER + self.key_len()) }, len)
    }

    /// Starts loading the version's first cache line (see `MemtableRange`).
    #[inline]
    pub(crate) fn prefetch(&self) {
        crate::filter::prefetch::line(self.header());
    }

    /// The sequence number.
    #[inline]
    pub(crate) fn seq(&self) -> SeqNo {
        self.seq_kind() >> 8
    }

    pub(crate) fn kind(&self) -> ValueKind {
        if self.header()[0] == ValueKind::Tombstone.as_u8() { ValueKind::Tombstone } else { ValueKind::Value }
    }

    /// The user key, borrowed from the arena.
    #[inline]
    pub(crate) fn user_key(&self) -> &[u8] {
        // SAFETY: the key follows the header inside the version, which
        // outlives `self` (module docs).
        unsafe { std::slice::from_raw_parts(self.at.as_ptr().add(HEADER), self.key_len()) }
    }

    /// The value, borrowed from the arena.
    #[cfg(test)]
    pub(crate) fn value_slice(&self) -> &[u8] {
        let (at, len) = self.value_at();
        // SAFETY: as for `user_key`.
        unsafe { std::slice::from_raw_parts(at, len) }
    }

    /// The version's first byte (tests check the layout with it).
    #[cfg(test)]
    pub(crate) fn addr(&self) -> usize {
        self.at.as_ptr() as usize
    }
}

impl KeyRef for MemKey {
    #[inline]
    fn prefix(&self) -> u64 {
        self.prefix
    }

    #[inline]
    fn key(&self) -> &[u8] {
        self.user_key()
    }

    #[inline]
    fn seq(&self) -> SeqNo {
        MemKey::seq(self)
    }
}
