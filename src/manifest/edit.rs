//! A `VersionEdit`: one change to the set of live tables and counters,
//! appended to the manifest as one log record.
//!
//! The encoding is a list of tagged fields sealed with a crc32, so new
//! fields can be added under new tags, and an edit is self-checking even
//! outside its log frame (e.g. when shown by an inspection tool).
//!
//! ```text
//!   +---------+---------+-----+---------------+
//!   | field   | field   | ... | crc32 u32 LE  |   crc over all fields
//!   +---------+---------+-----+---------------+
//!   field = varint tag, then:
//!     1 next file number   varint
//!     2 last sequence      varint
//!     3 log number         varint
//!     4 hash salt          u64 LE
//!     5 add table          level u8, file number varint, file size varint,
//!                          smallest key (varint len + bytes),
//!                          largest key (varint len + bytes),
//!                          min seq varint, max seq varint, entries varint,
//!                          filter kind (varint len + UTF-8, e.g. "fuse8",
//!                          "blocked-bloom:10"), filter bytes varint
//!     6 remove table       level u8, file number varint
//!     7 filter policy      varint len + UTF-8, in `FilterPolicy`'s grammar
//!                          (e.g. "monkey:10+skip-last"); the latest wins
//!     8 replaced policy    varint len + UTF-8: the policy in use before the
//!                          latest change, which older tables may still carry
//!     9 format version     varint: the database format version
//!                          (DB_FORMAT_VERSION); written first in the first
//!                          edit of every manifest, absent means 1
//!    10 write totals       user bytes varint, flush bytes varint,
//!                          compaction bytes varint: the running totals over
//!                          the database's life after this edit; the latest
//!                          wins (format version 3)
//!    11 synced WAL end     log number varint, length varint: that WAL was
//!                          fsynced through this length (at close, at
//!                          rotation, at `Db::sync`); repeated, one per log
//!                          (format version 4; written now only for a
//!                          record carried over from a format-4 database)
//!    12 synced WAL end     log number varint, length varint, last sequence
//!                          varint: as 11, with the largest sequence number
//!                          written when it was synced, so that a recovery
//!                          that loses the log's tail can count the synced
//!                          writes lost (format version 5)
//!    13 lost writes        log number varint, synced length varint,
//!                          found length varint, writes lost + 1 varint
//!                          (0: unknown), recovered at varint (seconds
//!                          since the Unix epoch): a point-in-time recovery
//!                          that lost synced writes; repeated, one per
//!                          recovery, carried into every later manifest
//!                          (format version 7)
//!    14 filter memory      varint: the most bytes of filter the planner
//!                          spends over the live tables
//!                          (`Options::filter_memory_bytes`); the latest
//!                          wins, absent means no budget (format version 10)
//!    15 compaction         varint len + UTF-8: the strategy the database
//!                          was last opened with, in `Compaction`'s
//!                          grammar ("leveled", "fifo:max_bytes=N,ttl=Ss");
//!                          the latest wins; for inspection only, since
//!                          each open runs the one it is given (format
//!                          version 11)
//!    16 FIFO drops         tables varint, entries varint, bytes varint:
//!                          the running totals of what FIFO compaction
//!                          dropped, after this edit; the latest wins
//!                          (format version 11)
//! ```
//!
//! A format version above [`DB_FORMAT_VERSION`] is [`Error::Unsupported`],
//! found before any field the newer format added, because tag 9 comes first.
//!
//! Tags 1-4, 7-10 and 14-16 appear at most once; 5, 6, 11, 12 and 13 repeat per edit. An unknown tag is `Corruption`: an older
//! build must not silently ignore a field whose meaning it does not know.

use crate::codec::{Reader, put_length_prefixed, put_varint, seal, unseal};
use crate::filter::FilterKind;
pub use crate::table::TableRecord;
use crate::key::{MAX_SEQ, SeqNo};
use crate::{Error, Result};

pub use super::records::{DropTotals, LostWrites, WalEnd, WriteTotals};
use super::version::NUM_LEVELS;

const TAG_NEXT_FILE: u64 = 1;
const TAG_LAST_SEQ: u64 = 2;
const TAG_LOG_NUMBER: u64 = 3;
const TAG_HASH_SALT: u64 = 4;
const TAG_ADD_TABLE: u64 = 5;
const TAG_REMOVE_TABLE: u64 = 6;
const TAG_FILTER_POLICY: u64 = 7;
const TAG_REPLACED_POLICY: u64 = 8;
const TAG_FORMAT_VERSION: u64 = 9;
const TAG_WRITE_TOTALS: u64 = 10;
const TAG_WAL_END_V4: u64 = 11;
const TAG_WAL_END: u64 = 12;
const TAG_LOST_WRITES: u64 = 13;
const TAG_FILTER_MEMORY: u64 = 14;
const TAG_COMPACTION: u64 = 15;
const TAG_FIFO_DROPPED: u64 = 16;

/// The database format this build writes and the newest it reads.
///
/// - 1: manifests without tag 9 (builds before the filter policy was
///   stored).
/// - 2: the filter policy records (tags 7 and 8) and this tag.
/// - 3: the write totals (tag 10).
/// - 4: the synced ends of the WALs (tag 11).
/// - 5: the synced ends with their last sequence numbers (tag 12).
/// - 6: tables may carry Ribbon filters (`ribbon:B` in tag 5). Each filter
///   kind names the version that introduced it (`FilterKind::first_db_format`),
///   so that a build that does not know a kind's name refuses the database
///   as newer instead of calling it corrupt.
/// - 7: the synced writes a point-in-time recovery lost (tag 13).
/// - 8: range deletes (a WAL batch op an older build reads as damage).
/// - 9: ingested tables: a table record whose `min_seq == max_seq` gives
///   every entry of the file that number, whatever the file holds (an
///   older build would read an ingested file's placeholder numbers).
/// - 10: the filter memory budget (tag 14), which an older build would
///   read as an unknown tag and so as damage.
/// - 11: the compaction strategy (tag 15) and what FIFO dropped (tag 16).
///
/// Every change to what a manifest, WAL or `CURRENT` holds that an older
/// build would misread bumps it (DESIGN.md, "Format versions").
pub const DB_FORMAT_VERSION: u32 = 11;

/// A change to the database's version: tables added and removed, and new
/// values for the counters. Fields left `None` keep their old values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VersionEdit {
    /// Tables added, with their level.
    pub added: Vec<(u8, TableRecord)>,
    /// Tables removed, as (level, file number).
    pub removed: Vec<(u8, u64)>,
    /// The next unused file number.
    pub next_file_number: Option<u64>,
    /// The largest sequence number of any write the tables hold.
    pub last_seq: Option<SeqNo>,
    /// The oldest WAL still needed: logs numbered below it are flushed.
    pub log_number: Option<u64>,
    /// The salt of the key hash every table's filter uses.
    pub hash_salt: Option<u64>,
    /// The filter policy the database writes tables with, in
    /// `FilterPolicy`'s grammar (kept as text: the manifest checks framing,
    /// the database parses it).
    pub filter_policy: Option<String>,
    /// The policy `filter_policy` replaced, when it last changed.
    pub replaced_policy: Option<String>,
    /// The database format version, in the first edit of a manifest.
    pub format_version: Option<u32>,
    /// The filter memory budget in bytes, when set (`Options::filter_memory_bytes`).
    pub filter_memory_bytes: Option<u64>,
    /// The write totals after this edit (flushes and compactions set them).
    pub write_totals: Option<WriteTotals>,
    /// The compaction strategy the database was opened with, as text.
    pub compaction: Option<String>,
    /// What FIFO compaction dropped over the database's life, after this
    /// edit (the edits that drop tables set it).
    pub fifo_dropped: Option<DropTotals>,
    /// (log number, end): each WAL named was fsynced through that end.
    pub wal_ends: Vec<(u64, WalEnd)>,
    /// Synced writes point-in-time recoveries lost, oldest first.
    pub lost_writes: Vec<LostWrites>,
}

impl VersionEdit {
    /// Encodes the edit as a manifest record payload.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        // First, so that a reader meets it before any field it cannot know.
        if let Some(v) = self.format_version {
            put_varint(&mut out, TAG_FORMAT_VERSION);
            put_varint(&mut out, u64::from(v));
        }
        let scalars = [
            (TAG_NEXT_FILE, self.next_file_number),
            (TAG_LAST_SEQ, self.last_seq),
            (TAG_LOG_NUMBER, self.log_number),
        ];
        for (tag, value) in scalars {
            if let Some(v) = value {
                put_varint(&mut out, tag);
                put_varint(&mut out, v);
            }
        }
        if let Some(salt) = self.hash_salt {
            put_varint(&mut out, TAG_HASH_SALT);
            out.extend_from_slice(&salt.to_le_bytes());
        }
        for (tag, text) in
            [(TAG_FILTER_POLICY, &self.filter_policy), (TAG_REPLACED_POLICY, &self.replaced_policy)]
        {
            if let Some(text) = text {
                put_varint(&mut out, tag);
                put_length_prefixed(&mut out, text.as_bytes());
            }
        }
        if let Some(bytes) = self.filter_memory_bytes {
            put_varint(&mut out, TAG_FILTER_MEMORY);
            put_varint(&mut out, bytes);
        }
        if let Some(w) = self.write_totals {
            put_varint(&mut out, TAG_WRITE_TOTALS);
            for v in [w.user_bytes, w.flush_bytes, w.compaction_bytes] {
                put_varint(&mut out, v);
            }
        }
        if let Some(text) = &self.compaction {
            put_varint(&mut out, TAG_COMPACTION);
            put_length_prefixed(&mut out, text.as_bytes());
        }
        if let Some(d) = self.fifo_dropped {
            put_varint(&mut out, TAG_FIFO_DROPPED);
            for v in [d.tables, d.entries, d.bytes] {
                put_varint(&mut out, v);
            }
        }
        for &(number, end) in &self.wal_ends {
            // A record carried over from format 4 keeps its tag: it never
            // said its sequence, and none is invented for it.
            put_varint(&mut out, if end.last_seq.is_some() { TAG_WAL_END } else { TAG_WAL_END_V4 });
            put_varint(&mut out, number);
            put_varint(&mut out, end.len);
            if let Some(seq) = end.last_seq {
                put_varint(&mut out, seq);
            }
        }
        for l in &self.lost_writes {
            put_varint(&mut out, TAG_LOST_WRITES);
            let lost = l.writes_lost.map_or(0, |n| n.saturating_add(1));
            for v in [l.log_number, l.synced_len, l.found_len, lost, l.recovered_at] {
                put_varint(&mut out, v);
            }
        }
        for (level, t) in &self.added {
            put_varint(&mut out, TAG_ADD_TABLE);
            out.push(*level);
            put_varint(&mut out, t.file_number);
            put_varint(&mut out, t.file_size);
            put_length_prefixed(&mut out, &t.smallest);
            put_length_prefixed(&mut out, &t.largest);
            put_varint(&mut out, t.min_seq);
            put_varint(&mut out, t.max_seq);
            put_varint(&mut out, t.entries);
            put_length_prefixed(&mut out, t.filter.to_string().as_bytes());
            put_varint(&mut out, t.filter_bytes);
        }
        for (level, number) in &self.removed {
            put_varint(&mut out, TAG_REMOVE_TABLE);
            out.push(*level);
            put_varint(&mut out, *number);
        }
        seal(out)
    }

    /// Decodes an edit written by [`VersionEdit::encode`].
    ///
    /// # Errors
    /// `Corruption` (offsets relative to `bytes`) for a checksum mismatch,
    /// truncation, an unknown or repeated tag, a level out of range, or a
    /// table whose key or sequence range is inverted.
    pub fn decode(bytes: &[u8]) -> Result<VersionEdit> {
        let body = unseal(bytes)?;
        let mut r = Reader::new(body);
        let mut edit = VersionEdit::default();
        while r.remaining() > 0 {
            let at = r.position() as u64;
            let tag = r.varint()?;
            let once = |slot: &mut Option<u64>, v: u64| {
                if slot.replace(v).is_some() {
                    return Err(Error::corruption(at, format!("edit field {tag} appears twice")));
                }
                Ok(())
            };
            match tag {
                TAG_NEXT_FILE => once(&mut edit.next_file_number, r.varint()?)?,
                TAG_LAST_SEQ => {
                    let seq = r.varint()?;
                    check_seq(seq, at)?;
                    once(&mut edit.last_seq, seq)?;
                }
                TAG_LOG_NUMBER => once(&mut edit.log_number, r.varint()?)?,
                TAG_FILTER_MEMORY => once(&mut edit.filter_memory_bytes, r.varint()?)?,
                TAG_HASH_SALT => once(&mut edit.hash_salt, r.u64()?)?,
                TAG_ADD_TABLE => edit.added.push(decode_table(&mut r, at)?),
                TAG_REMOVE_TABLE => edit.removed.push((level(&mut r)?, r.varint()?)),
                TAG_FILTER_POLICY | TAG_REPLACED_POLICY | TAG_COMPACTION => {
                    let (slot, what) = match tag {
                        TAG_FILTER_POLICY => (&mut edit.filter_policy, "filter policy"),
                        TAG_REPLACED_POLICY => (&mut edit.replaced_policy, "filter policy"),
                        _ => (&mut edit.compaction, "compaction strategy"),
                    };
                    let text = std::str::from_utf8(r.length_prefixed()?)
                        .map_err(|_| Error::corruption(at, format!("{what} is not UTF-8")))?;
                    if slot.replace(text.to_owned()).is_some() {
                        return Err(Error::corruption(at, format!("edit field {tag} appears twice")));
                    }
                }
                TAG_FORMAT_VERSION => {
                    let v = r.varint()?;
                    let v = u32::try_from(v).ok().filter(|&v| v >= 1).ok_or_else(|| {
                        Error::corruption(at, format!("database format version {v} is impossible"))
                    })?;
                    if v > DB_FORMAT_VERSION {
                        return Err(Error::Unsupported {
                            file: None,
                            format: "database",
                            found: v,
                            supported: DB_FORMAT_VERSION,
                        });
                    }
                    if edit.format_version.replace(v).is_some() {
                        return Err(Error::corruption(at, format!("edit field {tag} appears twice")));
                    }
                }
                TAG_WRITE_TOTALS => {
                    let totals = WriteTotals {
                        user_bytes: r.varint()?,
                        flush_bytes: r.varint()?,
                        compaction_bytes: r.varint()?,
                    };
                    if edit.write_totals.replace(totals).is_some() {
                        return Err(Error::corruption(at, format!("edit field {tag} appears twice")));
                    }
                }
                TAG_FIFO_DROPPED => {
                    let d = DropTotals { tables: r.varint()?, entries: r.varint()?, bytes: r.varint()? };
                    if edit.fifo_dropped.replace(d).is_some() {
                        return Err(Error::corruption(at, format!("edit field {tag} appears twice")));
                    }
                }
                TAG_WAL_END_V4 => {
                    edit.wal_ends.push((r.varint()?, WalEnd { len: r.varint()?, last_seq: None }));
                }
                TAG_WAL_END => {
                    let (number, len, seq) = (r.varint()?, r.varint()?, r.varint()?);
                    check_seq(seq, at)?;
                    edit.wal_ends.push((number, WalEnd { len, last_seq: Some(seq) }));
                }
                TAG_LOST_WRITES => {
                    let (log_number, synced_len, found_len) = (r.varint()?, r.varint()?, r.varint()?);
                    let writes_lost = r.varint()?.checked_sub(1);
                    let recovered_at = r.varint()?;
                    if found_len >= synced_len {
                        return Err(Error::corruption(
                            at,
                            format!("lost writes of WAL {log_number}: found {found_len} of {synced_len} bytes"),
                        ));
                    }
                    edit.lost_writes.push(LostWrites {
                        log_number,
                        synced_len,
                        found_len,
                        writes_lost,
                        recovered_at,
                    });
                }
                other => return Err(Error::corruption(at, format!("unknown edit field tag {other}"))),
            }
        }
        Ok(edit)
    }
}

fn check_seq(seq: SeqNo, at: u64) -> Result<()> {
    if seq > MAX_SEQ {
        return Err(Error::corruption(at, format!("sequence number {seq} exceeds 2^56 - 1")));
    }
    Ok(())
}

fn level(r: &mut Reader<'_>) -> Result<u8> {
    let at = r.position() as u64;
    let level = r.u8()?;
    if usize::from(level) >= NUM_LEVELS {
        return Err(Error::corruption(at, format!("level {level} out of range (0..{NUM_LEVELS})")));
    }
    Ok(level)
}

fn decode_table(r: &mut Reader<'_>, at: u64) -> Result<(u8, TableRecord)> {
    let level = level(r)?;
    let file_number = r.varint()?;
    let file_size = r.varint()?;
    let smallest = r.length_prefixed()?.to_vec();
    let largest = r.length_prefixed()?.to_vec();
    let min_seq = r.varint()?;
    let max_seq = r.varint()?;
    let entries = r.varint()?;
    let filter_at = r.position() as u64;
    let filter = std::str::from_utf8(r.length_prefixed()?)
        .ok()
        .and_then(|name| name.parse::<FilterKind>().ok())
        .ok_or_else(|| Error::corruption(filter_at, "unknown filter kind"))?;
    let filter_bytes = r.varint()?;
    check_seq(max_seq, at)?;
    if smallest > largest || min_seq > max_seq {
        return Err(Error::corruption(
            at,
            format!("table {file_number} has an inverted key or sequence range"),
        ));
    }
    let table = TableRecord {
        file_number,
        file_size,
        smallest,
        largest,
        min_seq,
        max_seq,
        entries,
        filter,
        filter_bytes,
    };
    Ok((level, table))
}

#[cfg(test)]
pub(crate) mod tests;
