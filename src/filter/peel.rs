//! Building a 3-wise xor-style filter by hypergraph peeling.
//!
//! Xor and binary fuse filters differ only in how a key's remixed hash picks
//! its three cells (a [`Layout`]); construction is the same:
//!
//! 1. Remix every input hash with a seed ([`mix`]). For layouts whose first
//!    cell grows with the hash's top bits, bucket the remixed hashes by
//!    those bits (one pass, approximately sorted) so that the three cell
//!    updates of consecutive keys hit nearby memory.
//! 2. Add every key to its three cells. A cell keeps one byte (a 6-bit key
//!    count above the xor of the 2-bit positions, 0, 1 or 2, at which its
//!    keys reach it) and the xor of its keys' hashes. A cell with count 1
//!    therefore names its only key and where that key sits in it.
//! 3. Peel: repeatedly take a count-1 cell, push (key, position) on a stack
//!    and remove the key from its two other cells (`peel/walk.rs` chooses
//!    which count-1 cell comes next).
//! 4. If every key peeled, walk the stack backwards, giving each key's own
//!    cell the value that makes the xor of its three cells its fingerprint.
//!    Cells assigned later never belong to a key assigned earlier, so every
//!    key's equation still holds at the end.
//!
//! A stall (a 2-core in the hypergraph) or a cell counter overflowing means
//! the seed was unlucky, or the input holds duplicates (which never peel).
//! The first failure removes duplicates; every failure moves to the next
//! seed, up to a bound, after which [`BuildError::PeelingFailed`] is returned.

use super::BuildError;
use super::fingerprint::Fingerprint;
use super::zeroed_buf::ZeroedBuf;
use walk::Walk;

/// Seeds tried before a build gives up. At the default sizes a seed fails
/// rarely (small inputs most often, and they are cheap to retry), so 100
/// failures in a row mean a bug or an adversarial input, not bad luck.
pub(crate) const MAX_ATTEMPTS: u32 = 100;

/// The most distinct keys a filter accepts: cell indices are 32-bit, and
/// 1.23·2^31 + 32 cells still fit.
pub(crate) const MAX_KEYS: usize = 1 << 31;

/// How a remixed hash selects its three cells.
///
/// # Safety
/// Construction and queries index their cell arrays with the returned
/// indices without bounds checks (a measured ~10% on build and query), so
/// every index [`Layout::cells`] returns, for any input, must be below
/// [`Layout::cells_len`].
pub unsafe trait Layout {
    /// The three distinct cells of the key with remixed hash `mixed`; every
    /// index is below [`Layout::cells_len`].
    fn cells(&self, mixed: u64) -> [usize; 3];
    /// Number of cells.
    fn cells_len(&self) -> usize;
    /// Top bits of the remixed hash to bucket keys by before adding them (0:
    /// don't bucket, the layout has no locality to exploit).
    fn sort_bits(&self) -> u32;
    /// Whether a key's three cells lie near each other (binary fuse: yes;
    /// xor: no), which decides how peeling pushes cells on its queue. The
    /// same fact as `sort_bits() > 0`, as a constant so that the choice is
    /// made at compile time, outside the peel loop.
    const LOCAL: bool;
}

/// Remixes an input hash with the filter's seed (the murmur3 64-bit
/// finaliser of `hash + seed`), so that a new seed gives an independent
/// hypergraph.
#[inline]
#[must_use]
pub(crate) fn mix(hash: u64, seed: u64) -> u64 {
    let mut h = hash.wrapping_add(seed);
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The input hash `mix(hash, seed)` came from: each step of the finaliser
/// is invertible (a shift by 33 ≥ 32 undoes itself, and the odd constants
/// have inverses modulo 2^64).
#[inline]
#[must_use]
pub(crate) fn unmix(mixed: u64, seed: u64) -> u64 {
    let mut h = mixed ^ (mixed >> 33);
    h = h.wrapping_mul(0x9cb4_b2f8_1293_37db);
    h ^= h >> 33;
    h = h.wrapping_mul(0x4f74_430c_22a5_4005);
    h ^= h >> 33;
    h.wrapping_sub(seed)
}

/// Two checksums of a multiset of `u64`s: the wrapping sum and the xor.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Checksum(u64, u64);

impl Checksum {
    #[inline]
    fn add(&mut self, v: u64) {
        self.0 = self.0.wrapping_add(v);
        self.1 ^= v;
    }
}

/// The deterministic seed sequence (splitmix64), so a given input always
/// builds the same bytes.
struct Seeds(u64);

impl Seeds {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// A successfully peeled and assigned filter body.
pub(crate) struct Constructed<F, L> {
    /// The seed whose hypergraph peeled.
    pub seed: u64,
    /// The layout used, sized for `keys`.
    pub layout: L,
    /// One fingerprint per cell.
    pub fingerprints: ZeroedBuf<F>,
    /// Distinct keys.
    pub keys: usize,
    /// The keys in peel order, when they were shown to be exactly the
    /// caller's input.
    pub peeled: Option<Peeled>,
}

/// The input hashes in (reverse) peel order, recovered from the peel stack.
///
/// Validation walks this rather than the input: a binary fuse peel moves
/// through nearby cells, so consecutive checks hit cached lines, where the
/// input's order makes every check three misses (at 10^7 keys, a quarter
/// to a third of the build). It is the same check only if the stack holds
/// every input hash exactly once. The stack holds the remixed hashes,
/// recovered from the cells' xors, and the remix is a bijection; `place`
/// checksums the remixed inputs it lays out (wrapping sum and xor) and
/// `assign` the stack it reads. A stack whose checksums differ is not
/// offered, and neither is one built from the deduplicated copy of an
/// input that held duplicates (the checksums would vouch for the copy, not
/// for the caller's input): the caller then walks its input instead.
pub(crate) struct Peeled {
    stack: ZeroedBuf<u64>,
    keys: usize,
}

impl Peeled {
    /// Every input hash remixed under the filter's seed, once (given the
    /// checksums matched): what a query computes first, so validation skips
    /// an unmix and a remix per key (measured at 10^6 keys, a few percent of
    /// a fuse build). In stack order: peel order is from the end.
    pub fn mixed(&self) -> &[u64] {
        &self.stack[..self.keys]
    }
}

/// Peels and assigns a filter for `hashes`, trying up to `max_attempts`
/// seeds. `layout_for(n)` sizes the cell array for `n` distinct keys; it is
/// called again if duplicates are found and removed.
pub(crate) fn construct<F: Fingerprint, L: Layout>(
    hashes: &[u64],
    max_attempts: u32,
    layout_for: impl Fn(usize) -> Result<L, BuildError>,
) -> Result<Constructed<F, L>, BuildError> {
    let mut distinct: Option<Vec<u64>> = None;
    let mut layout = layout_for(hashes.len())?;
    let mut scratch = Scratch::new(hashes.len(), layout.cells_len());
    let mut seeds = Seeds(0x5173_7466_6462_0001);
    for _ in 0..max_attempts {
        let seed = seeds.next();
        let keys = distinct.as_deref().unwrap_or(hashes);
        if scratch.peel(keys, &layout, seed) {
            let (fingerprints, stacked) = scratch.assign(keys.len(), &layout);
            // Only a stack of the caller's own slice stands for the input.
            let peeled = (distinct.is_none() && stacked == scratch.placed)
                .then_some(Peeled { stack: scratch.order, keys: keys.len() });
            return Ok(Constructed { seed, layout, fingerprints, keys: keys.len(), peeled });
        }
        if distinct.is_none() {
            let d = dedup(hashes);
            if d.len() != hashes.len() {
                layout = layout_for(d.len())?;
                scratch = Scratch::new(d.len(), layout.cells_len());
            }
            distinct = Some(d);
        }
    }
    let keys = distinct.map_or_else(|| dedup(hashes).len(), |d| d.len());
    Err(BuildError::PeelingFailed { attempts: max_attempts, keys })
}

/// How many keys ahead the walks over an xor filter's scattered cells
/// (adding the keys, peeling, assignment, validation) ask for a key's
/// cells: enough misses in flight to cover a memory latency, few enough
/// that the lines are still cached when reached.
pub(crate) const LOOKAHEAD: usize = 16;

/// Starts loading a key's three cells of `fp` (a query's, or a walk's
/// ahead of itself: see [`LOOKAHEAD`]); `fp` is any per-cell array.
#[inline]
pub(crate) fn prefetch_cells<F>(fp: &[F], cells: [usize; 3]) {
    for c in cells {
        if let Some(cell) = fp.get(c) {
            super::prefetch::line(cell);
        }
    }
}

fn dedup(hashes: &[u64]) -> Vec<u64> {
    let mut d = hashes.to_vec();
    d.sort_unstable();
    d.dedup();
    d
}

/// `MOD3[i] == i % 3` for the positions (plus one or two) a peeled key can
/// report; 6 entries so a corrupt 2-bit position (3) cannot index past it.
const MOD3: [u8; 6] = [0, 1, 2, 0, 1, 2];

/// The position bits a key's cell `i` records.
const POSITION: [u8; 3] = [0, 1, 2];

/// A key's three cells followed by the first two again, so "the other two
/// cells after position p" are `ring[p + 1]` and `ring[p + 2]` with no `%`.
#[inline]
fn ring([a, b, c]: [usize; 3]) -> [usize; 6] {
    [a, b, c, a, b, c]
}

/// Work arrays, allocated once per build (large ones on huge pages, see
/// [`ZeroedBuf`]) and reused across seeds.
struct Scratch {
    /// Remixed hashes in insertion order; then the peel stack.
    order: ZeroedBuf<u64>,
    /// Checksum of the remixed hashes `place` laid out.
    placed: Checksum,
    /// Position (0..3) within its own cell of each stacked key.
    position: ZeroedBuf<u8>,
    /// Per cell: key count << 2 | xor of the keys' positions.
    count: ZeroedBuf<u8>,
    /// Per cell: xor of the keys' remixed hashes.
    xors: ZeroedBuf<u64>,
    /// Cells that may have count 1.
    queue: ZeroedBuf<u32>,
    /// Per bucket: next free slot in `order` (bucketing in `place`).
    bucket: Vec<usize>,
    /// Whether `count`, `xors` and `order` hold a previous attempt's state (fresh
    /// vectors are zero already; clearing them again costs ~2 ns/key).
    dirty: bool,
}

impl Scratch {
    fn new(keys: usize, cells: usize) -> Self {
        Scratch {
            // +1: the sentinel slot `place` reads past the last key.
            order: ZeroedBuf::new(keys + 1),
            placed: Checksum::default(),
            position: ZeroedBuf::new(keys),
            count: ZeroedBuf::new(cells),
            xors: ZeroedBuf::new(cells),
            // Each cell enters the queue at most once (at start with count 1,
            // or on its single 2 -> 1 transition); +1 absorbs the speculative
            // write past the live end.
            queue: ZeroedBuf::new(cells + 1),
            bucket: Vec::new(),
            dirty: false,
        }
    }

    /// Lays out the remixed hashes of `keys` in `order`, bucketed by top
    /// bits. False if this seed cannot be laid out (a remixed hash of 0,
    /// which the bucketing uses as "empty"): the caller tries the next seed.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "a hash shifted right by 64 - bits is a bucket index"
    )]
    fn place(&mut self, keys: &[u64], bits: u32, seed: u64) -> bool {
        let n = keys.len();
        let mut placed = Checksum::default();
        if bits == 0 {
            for (slot, &k) in self.order.iter_mut().zip(keys) {
                *slot = mix(k, seed);
                placed.add(*slot);
            }
            self.placed = placed;
            return true;
        }
        // One pass, as in the binary fuse reference code: bucket b starts at
        // its share b·n/2^bits of `order` and fills forward; a key whose
        // bucket's next slot is taken (by an earlier, fuller bucket) moves to
        // the next bucket. The order is only approximately sorted, which is
        // all the locality needs, and each key is remixed once instead of
        // twice as a counting sort would (measured at 10^6 keys, warm
        // buffers, four runs each: 2.6–4.0 ms, three of them ≤ 3.1, against
        // 4.0–4.3 ms; a build's best of 15 runs is ~45 ms).
        let buckets = 1usize << bits;
        let mask = buckets - 1;
        self.bucket.clear();
        self.bucket.extend((0..buckets).map(|b| ((b as u128 * n as u128) >> bits) as usize));
        // `order` is all zero here (fresh, or cleared by `peel` after a
        // failed seed) but for a nonzero sentinel past the end, so that a
        // bucket whose range is full and ends at `n` reads it as taken.
        self.order[n] = 1;
        for &k in keys {
            let h = mix(k, seed);
            if h == 0 {
                return false;
            }
            let mut b = (h >> (64 - bits)) as usize;
            // Fewer than n keys are placed, so a free slot exists and some
            // bucket's next slot is it; the walk is bounded all the same.
            let mut steps = 0;
            while self.order[self.bucket[b]] != 0 {
                b = (b + 1) & mask;
                steps += 1;
                if steps > buckets {
                    return false;
                }
            }
            self.order[self.bucket[b]] = h;
            self.bucket[b] += 1;
            placed.add(h);
        }
        self.placed = placed;
        true
    }

    /// Tries one seed; true when every key peeled (the stack is in `order`).
    #[expect(clippy::cast_possible_truncation, reason = "cell indices fit in u32 (MAX_KEYS)")]
    fn peel<L: Layout>(&mut self, keys: &[u64], layout: &L, seed: u64) -> bool {
        let n = keys.len();
        if self.dirty {
            self.count.fill(0);
            self.xors.fill(0);
            self.order.fill(0);
        }
        self.dirty = true;
        debug_assert_eq!(L::LOCAL, layout.sort_bits() > 0, "Layout::LOCAL disagrees with sort_bits");
        if !self.place(keys, layout.sort_bits(), seed) {
            return false;
        }

        // Plain slices, not the `Vec`s behind `self`: stores through one
        // `&mut self` field would otherwise make the compiler reload every
        // other field's pointer after each store (measured in the profile).
        let Scratch { order, position, count, xors, queue, .. } = self;
        let (order, position, count, xors, queue) =
            (&mut order[..], &mut position[..], &mut count[..], &mut xors[..], &mut queue[..]);
        if count.len() != layout.cells_len() || xors.len() != layout.cells_len() {
            // Unreachable (`construct` sizes both from this layout); checked
            // because the unchecked indexing below relies on it.
            return false;
        }
        let mut overflow = false;
        for i in 0..n {
            let h = order[i];
            // See `LOOKAHEAD`: the cells of a key added later (xor only: a
            // fuse's keys arrive bucketed, each near the last).
            if !L::LOCAL
                && let Some(&ahead) = order.get(i + LOOKAHEAD)
            {
                let cells = layout.cells(ahead);
                prefetch_cells(count, cells);
                prefetch_cells(xors, cells);
            }
            for (pos, cell) in layout.cells(h).into_iter().enumerate() {
                // SAFETY: `Layout` guarantees cell < cells_len, the length of
                // both arrays (checked above).
                let (cnt, xor) = unsafe { (count.get_unchecked_mut(cell), xors.get_unchecked_mut(cell)) };
                *cnt = cnt.wrapping_add(4) ^ POSITION[pos];
                *xor ^= h;
                // A 6-bit counter passing 63 wraps to 0 and could later pose
                // as count 1; catching the wrap as it happens keeps peeling exact.
                overflow |= *cnt < 4;
            }
        }
        if overflow {
            return false;
        }

        let mut live = 0usize;
        for (i, &c) in count.iter().enumerate() {
            queue[live] = i as u32;
            live += usize::from(c >> 2 == 1);
        }
        let arrays = walk::Arrays { count, xors, queue, order, position };
        Walk::new(layout, arrays).is_some_and(|mut walk| walk.run(layout, live) == n)
    }

    /// Assigns fingerprints in reverse peel order; also returns the
    /// checksum of the stacked hashes.
    fn assign<F: Fingerprint, L: Layout>(&self, n: usize, layout: &L) -> (ZeroedBuf<F>, Checksum) {
        let mut fp = ZeroedBuf::<F>::kept(layout.cells_len());
        let mut stacked = Checksum::default();
        let order = &self.order[..n];
        for (i, (&h, &pos)) in order.iter().zip(&self.position[..n]).enumerate().rev() {
            // See `LOOKAHEAD`: the cells of a key assigned later.
            if !L::LOCAL
                && let Some(&ahead) = i.checked_sub(LOOKAHEAD).and_then(|j| order.get(j))
            {
                prefetch_cells(&fp, layout.cells(ahead));
            }
            stacked.add(h);
            let cells = ring(layout.cells(h));
            let p = usize::from(pos);
            // SAFETY: the cells come from `Layout::cells`, below cells_len,
            // the length `fp` was allocated with.
            unsafe {
                let value =
                    F::from_hash(h) ^ *fp.get_unchecked(cells[p + 1]) ^ *fp.get_unchecked(cells[p + 2]);
                *fp.get_unchecked_mut(cells[p]) = value;
            }
        }
        (fp, stacked)
    }
}

#[cfg(test)]
mod tests;
mod walk;
