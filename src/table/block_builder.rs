//! Builds a sorted block with prefix-compressed keys and restart points.
//!
//! ```text
//! +---------+---------+-----+-----------+-----------+-----+---------------+
//! | entry 0 | entry 1 | ... | restart 0 | restart 1 | ... | restart count |
//! +---------+---------+-----+-----------+-----------+-----+---------------+
//!                              u32 LE each: offset of a restart entry   u32 LE
//!
//! entry:
//! +----------------+------------------+-----------------+-------------+-------+
//! | shared: varint | unshared: varint | value len: varint | key suffix | value |
//! +----------------+------------------+-----------------+-------------+-------+
//! ```
//!
//! Each key stores only the bytes it does not share with the previous key.
//! Every `restart_interval`-th entry (16 for data blocks, 1 for the index)
//! stores its key whole (`shared` = 0) and its offset goes in the restart
//! array, so a reader binary-searches the restarts and scans at most one
//! interval.

use crate::codec::put_varint;

/// Accumulates sorted entries into one block.
#[derive(Debug)]
pub struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    since_restart: usize,
    restart_interval: usize,
    last_key: Vec<u8>,
    entries: usize,
}

impl BlockBuilder {
    /// A builder that starts a restart point every `restart_interval` entries
    /// (at least 1).
    #[must_use]
    pub fn new(restart_interval: usize) -> Self {
        BlockBuilder {
            buf: Vec::new(),
            restarts: Vec::new(),
            since_restart: 0,
            restart_interval: restart_interval.max(1),
            last_key: Vec::new(),
            entries: 0,
        }
    }

    /// Appends an entry. Keys must arrive in sorted order; the caller checks.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "blocks are capped far below 4 GiB by the table builder"
    )]
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        let shared = if self.since_restart == 0 || self.since_restart >= self.restart_interval {
            self.restarts.push(self.buf.len() as u32);
            self.since_restart = 0;
            0
        } else {
            self.last_key.iter().zip(key).take_while(|(a, b)| a == b).count()
        };
        let suffix = key.get(shared..).unwrap_or_default();
        put_varint(&mut self.buf, shared as u64);
        put_varint(&mut self.buf, suffix.len() as u64);
        put_varint(&mut self.buf, value.len() as u64);
        self.buf.extend_from_slice(suffix);
        self.buf.extend_from_slice(value);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(suffix);
        self.since_restart += 1;
        self.entries += 1;
    }

    /// The block's size if finished now.
    #[must_use]
    pub fn estimated_size(&self) -> usize {
        self.buf.len() + 4 * self.restarts.len() + 4
    }

    /// Whether no entry was added since the last reset.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// The last key added.
    #[must_use]
    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    /// Returns the finished block and resets the builder for the next one.
    #[expect(clippy::cast_possible_truncation, reason = "restart counts are bounded by the block size")]
    pub fn finish(&mut self) -> Vec<u8> {
        let mut out = std::mem::take(&mut self.buf);
        for r in &self.restarts {
            out.extend_from_slice(&r.to_le_bytes());
        }
        out.extend_from_slice(&(self.restarts.len() as u32).to_le_bytes());
        self.restarts.clear();
        self.since_restart = 0;
        self.last_key.clear();
        self.entries = 0;
        out
    }
}
