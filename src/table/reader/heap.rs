//! What an open table holds on the heap, beyond its mapping (issue 66):
//! the page cache holds a mapped table's bytes once for every process and
//! gives clean pages back under pressure, while a heap copy is the
//! process's own until the table closes. A user running many databases in
//! one process sizes it by these.
//!
//! Neither figure counts the table's fixed record (its path, properties,
//! counters and the handles of its blocks: some hundreds of bytes a table,
//! whatever its size).

use super::Table;

impl Table {
    /// Heap bytes the table's filter holds: its decoded size
    /// ([`crate::filter::Filter::size_bytes`]: arrays and the structs
    /// holding them) less the array it reads in place from the mapping
    /// ([`Table::filter_in_place`]). A copied filter (an older format, or a
    /// kind still copied) counts whole; one read in place counts its
    /// descriptor (tens of bytes) and any part it still copies. A table
    /// without a filter, with one dropped as corrupt, or with a kind this
    /// build cannot read, counts 0. A range filter's point filter counts
    /// the same way, added in.
    #[must_use]
    pub fn filter_heap_bytes(&self) -> u64 {
        let file = &self.inner.file;
        let points = self.inner.filter.as_ref().map_or(0, |f| f.heap_bytes(file));
        let ranges = self.range_filter().and_then(|r| r.points()).map_or(0, |f| f.heap_bytes(file));
        (points + ranges) as u64
    }

    /// Heap bytes the table's index holds: its block's contents when they
    /// were decompressed into a buffer of their own, 0 when the index is a
    /// view of the mapping (a raw index block, which the writer keeps
    /// unless compressing it pays).
    #[must_use]
    pub fn index_heap_bytes(&self) -> u64 {
        let contents = self.inner.index.contents();
        if within(&self.inner.file, contents) { 0 } else { contents.len() as u64 }
    }
}

/// Whether `part` lies inside `whole`'s bytes.
fn within(whole: &[u8], part: &[u8]) -> bool {
    let (start, end) = (whole.as_ptr() as usize, whole.as_ptr() as usize + whole.len());
    let at = part.as_ptr() as usize;
    at >= start && at + part.len() <= end
}
