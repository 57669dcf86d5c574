//! The peel itself: taking keys out of count-1 cells until none is left.
//!
//! Which cell comes next changes nothing but the order keys are stacked in
//! (any order in which each key was alone in one of its cells when taken
//! assigns correctly), so the walk is chosen for the memory it touches:
//!
//! - **A stack** where a key's three cells lie near each other (binary
//!   fuse). A cell freed by the last key is taken next, while its lines
//!   are still cached, and the walk moves through the array like the keys'
//!   starts do.
//! - **A queue** where they are scattered over the whole array (xor). Past
//!   the cache every cell a key touches is a miss. With a stack the next
//!   cell is often the one the last key just freed, known only once that
//!   key's misses return, so the walk waits for one memory latency after
//!   another. A queue's next cells were found long before, so the CPU can
//!   work on many keys at once, and they can be asked for ahead of time:
//!   the cell [`LOOKAHEAD`] entries ahead, and, once that line is in, the
//!   cells of its key at half the distance. At 10^7 keys this took an Xor8
//!   build from 1.9 to 1.0 s (docs/measurements.md, "Xor builds: a queue
//!   for scattered cells").
//!
//! A queue is worse for binary fuse at table sizes, whose freed cells go
//! cold while they wait their turn: 2.9–3.0 ms against 2.6 at 10^5 keys,
//! 8.0–8.2 against 7.3–7.6 at 3·10^5. It is level at 10^6 and gains only
//! from a few million keys (5% at 10^7), a crossover the cache would
//! decide, so fuse keeps the stack.

use super::super::prefetch;
use super::{LOOKAHEAD, Layout, MOD3, prefetch_cells, ring};

/// The peel's arrays, as plain slices (see `Scratch::peel`).
///
/// Invariant (relied on by the unchecked cell accesses of `take`, and
/// checked by [`Walk::new`]): `count` and `xors` hold one entry per cell of
/// the layout walked.
pub(super) struct Walk<'a> {
    /// Per cell: key count << 2 | xor of the keys' positions.
    count: &'a mut [u8],
    /// Per cell: xor of the keys' remixed hashes.
    xors: &'a mut [u64],
    /// Cells that may have count 1, `queue[..live]` at the start; room for
    /// every cell and one more (each enters at most once: with count 1 at
    /// the start, or on its one 2 → 1 step; the one more takes a store
    /// past the live end).
    queue: &'a mut [u32],
    /// The stack of taken keys' remixed hashes, in the order taken.
    order: &'a mut [u64],
    /// Each taken key's position (0..3) in the cell it was taken from.
    position: &'a mut [u8],
}

/// The arrays [`Walk::new`] takes (the fields of [`Walk`]).
pub(super) struct Arrays<'a> {
    pub count: &'a mut [u8],
    pub xors: &'a mut [u64],
    pub queue: &'a mut [u32],
    pub order: &'a mut [u64],
    pub position: &'a mut [u8],
}

impl<'a> Walk<'a> {
    /// A walk over `layout`'s cells; `None` unless `count` and `xors` have
    /// an entry for every cell.
    pub(super) fn new<L: Layout>(layout: &L, arrays: Arrays<'a>) -> Option<Self> {
        let Arrays { count, xors, queue, order, position } = arrays;
        (count.len() == layout.cells_len() && xors.len() == layout.cells_len()).then_some(Walk {
            count,
            xors,
            queue,
            order,
            position,
        })
    }
}

impl Walk<'_> {
    /// Takes keys until no count-1 cell is left; returns how many. Every key
    /// was taken if that is all of them.
    pub(super) fn run<L: Layout>(&mut self, layout: &L, live: usize) -> usize {
        if L::LOCAL { self.by_stack(layout, live) } else { self.by_queue(layout, live) }
    }

    fn by_stack<L: Layout>(&mut self, layout: &L, mut live: usize) -> usize {
        let mut stacked = 0;
        while live > 0 {
            live -= 1;
            let cell = self.queue[live] as usize;
            for (other, now_one) in self.take(layout, cell, &mut stacked).into_iter().flatten() {
                // Nearby cells are mostly cached, and a branch that
                // mispredicts costs more than the load it waits for: push
                // without one (the fuse build at 10^6 keys ~10% faster).
                self.queue[live] = other;
                live += usize::from(now_one);
            }
        }
        stacked
    }

    fn by_queue<L: Layout>(&mut self, layout: &L, live: usize) -> usize {
        let (mut head, mut tail, mut stacked) = (0, live, 0);
        while head < tail {
            // Entries past the tail are stale cell indices, and a prefetch
            // of one is only wasted.
            if let Some(&ahead) = self.queue.get(head + LOOKAHEAD) {
                let ahead = ahead as usize;
                if let (Some(count), Some(xor)) = (self.count.get(ahead), self.xors.get(ahead)) {
                    prefetch::line(count);
                    prefetch::line(xor);
                }
            }
            if let Some(&near) = self.queue.get(head + LOOKAHEAD / 2)
                && let Some(&h) = self.xors.get(near as usize)
            {
                let cells = layout.cells(h);
                prefetch_cells(self.count, cells);
                prefetch_cells(self.xors, cells);
            }
            let cell = self.queue[head] as usize;
            head += 1;
            for (other, now_one) in self.take(layout, cell, &mut stacked).into_iter().flatten() {
                // Far cells miss, and a branch lets the CPU run on past
                // the miss instead of waiting for it to know where the next
                // push goes.
                if now_one {
                    self.queue[tail] = other;
                    tail += 1;
                }
            }
        }
        stacked
    }

    /// If `cell` still holds one key, stacks it and removes it from its
    /// other two cells, and returns them, each with whether it now holds
    /// one key.
    #[inline]
    #[expect(clippy::cast_possible_truncation, reason = "cell indices fit in u32 (MAX_KEYS)")]
    fn take<L: Layout>(&mut self, layout: &L, cell: usize, stacked: &mut usize) -> Option<[(u32, bool); 2]> {
        if self.count[cell] >> 2 != 1 {
            return None;
        }
        let h = self.xors[cell];
        let pos = self.count[cell] & 3;
        self.order[*stacked] = h;
        self.position[*stacked] = pos;
        *stacked += 1;
        let cells = ring(layout.cells(h));
        let p = usize::from(pos);
        Some([1, 2].map(|step| {
            let other = cells[p + step];
            // SAFETY: `other` came from `Layout::cells`, so it is below
            // cells_len, the length of both arrays (`Walk::new` checked).
            let (cnt, xor) =
                unsafe { (self.count.get_unchecked_mut(other), self.xors.get_unchecked_mut(other)) };
            let now_one = *cnt >> 2 == 2;
            *cnt = cnt.wrapping_sub(4) ^ MOD3[p + step];
            *xor ^= h;
            (other as u32, now_one)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::static_tests::random_hashes;
    use crate::filter::three_wise::Geometry;
    use crate::filter::xor::XorLayout;

    /// A walk's arrays, owned: `cells` counts and xors, room for `keys`.
    struct Owned {
        count: Vec<u8>,
        xors: Vec<u64>,
        queue: Vec<u32>,
        order: Vec<u64>,
        position: Vec<u8>,
    }

    impl Owned {
        fn new(cells: usize, keys: usize) -> Self {
            Owned {
                count: vec![0; cells],
                xors: vec![0; cells],
                queue: vec![0; cells + 1],
                order: vec![0; keys],
                position: vec![0; keys],
            }
        }

        fn arrays(&mut self) -> Arrays<'_> {
            Arrays {
                count: &mut self.count,
                xors: &mut self.xors,
                queue: &mut self.queue,
                order: &mut self.order,
                position: &mut self.position,
            }
        }
    }

    /// The keys `hashes` taken by one walk of `layout`'s cells, in order.
    fn walk(layout: XorLayout, hashes: &[u64], by_queue: bool) -> Vec<u64> {
        let mut a = Owned::new(layout.cells_len(), hashes.len());
        for &h in hashes {
            for (pos, cell) in layout.cells(h).into_iter().enumerate() {
                a.count[cell] += 4;
                a.count[cell] ^= u8::try_from(pos).unwrap();
                a.xors[cell] ^= h;
            }
        }
        let mut live = 0;
        for (i, &c) in a.count.iter().enumerate() {
            a.queue[live] = u32::try_from(i).unwrap();
            live += usize::from(c >> 2 == 1);
        }
        let mut w = Walk::new(&layout, a.arrays()).unwrap();
        let taken = if by_queue { w.by_queue(&layout, live) } else { w.by_stack(&layout, live) };
        a.order.truncate(taken);
        a.order
    }

    /// The unchecked cell accesses stand on `Walk::new`'s check.
    #[test]
    fn a_walk_needs_an_entry_for_every_cell() {
        let layout = XorLayout::for_keys(100).unwrap();
        let cells = layout.cells_len();
        for (count_len, xors_len, ok) in
            [(cells, cells, true), (cells - 1, cells, false), (cells, cells - 1, false)]
        {
            let mut a = Owned::new(cells, 100);
            a.count.truncate(count_len);
            a.xors.truncate(xors_len);
            assert_eq!(Walk::new(&layout, a.arrays()).is_some(), ok, "{count_len} counts, {xors_len} xors");
        }
    }

    /// Which keys peel is the graph's (all but its 2-core), not the walk's:
    /// the queue must take exactly the keys the stack takes, each once,
    /// whether the graph peels whole or leaves a core.
    #[test]
    fn the_queue_takes_what_the_stack_takes() {
        let hashes = random_hashes(11, 10_000);
        for (sized_for, whole) in [(10_000, true), (8_200, false)] {
            let layout = XorLayout::for_keys(sized_for).unwrap();
            let mut by_stack = walk(layout, &hashes, false);
            let mut by_queue = walk(layout, &hashes, true);
            assert_ne!(by_stack, by_queue, "a different order");
            by_stack.sort_unstable();
            by_queue.sort_unstable();
            assert!(
                by_stack == by_queue,
                "the stack took {} keys, the queue {}",
                by_stack.len(),
                by_queue.len()
            );
            assert!(by_queue.windows(2).all(|w| w[0] < w[1]), "each key once");
            assert_eq!(
                by_queue.len() == hashes.len(),
                whole,
                "{} of {} at {sized_for}",
                by_queue.len(),
                hashes.len()
            );
        }
    }
}
