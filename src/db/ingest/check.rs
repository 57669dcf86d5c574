//! What an ingest checks of each file before it touches the database.

use std::path::{Path, PathBuf};

use crate::fs::FileSystem;
use crate::table::Table;
use crate::table::verify::verify_table;
use crate::{Error, Result};

/// A file that passed every check, open.
pub(super) struct Checked {
    pub source: PathBuf,
    pub table: Table,
    pub smallest: Vec<u8>,
    pub largest: Vec<u8>,
    pub entries: u64,
    /// Its filter was built under another salt than the database's: the
    /// database hashes each key once, under its own salt, for every table,
    /// so the table is rewritten with a filter of that salt.
    pub needs_rebuild: bool,
}

/// Checks `path` whole: [`verify_table`] (every block's checksum, keys
/// ascending, the filter answering "may contain" for every key, the
/// properties against the contents), then what an ingest needs beyond a
/// sound table: entries, one version per key (they all get one sequence
/// number), no range tombstones.
///
/// # Errors
/// `Corruption` naming the file and offset of the first problem;
/// `InvalidArgument` for a sound table an ingest cannot take; `Io`.
pub(super) fn check_file(fs: &dyn FileSystem, path: &Path, salt: u64) -> Result<Checked> {
    let report = verify_table(fs, path).map_err(|e| e.at_file(path, 0))?;
    if let Some(p) = report.problems.first() {
        return Err(Error::corruption_in(
            path,
            p.offset,
            format!("not ingested: {} ({} problem(s) in all)", p.what, report.problems.len()),
        ));
    }
    let table = Table::open(fs, path).map_err(|e| e.at_file(path, 0))?;
    let p = table.properties();
    let refuse = |why: String| Err(Error::InvalidArgument(format!("ingest: {}: {why}", path.display())));
    if p.entries == 0 {
        return refuse("the table holds no entries".into());
    }
    if table.range_dels().is_some() || p.range_tombstones > 0 {
        return refuse(format!(
            "the table holds {} range tombstone(s), which ingest does not take",
            p.range_tombstones
        ));
    }
    if p.distinct_keys != p.entries {
        return refuse(format!(
            "the table holds {} entries for {} keys; an ingested table holds one version per key \
             (build it with TableWriter)",
            p.entries, p.distinct_keys
        ));
    }
    let (Some(smallest), Some(largest)) = (p.smallest_key.clone(), p.largest_key.clone()) else {
        return refuse("the table records no key range".into());
    };
    let needs_rebuild = table.filter_details().header.is_some_and(|h| h.seed != salt);
    Ok(Checked { source: path.to_path_buf(), entries: p.entries, table, smallest, largest, needs_rebuild })
}

/// `InvalidArgument` naming the first two of `files` whose key ranges
/// overlap (sorted by smallest key first).
pub(super) fn refuse_overlaps(files: &[Checked]) -> Result<()> {
    let mut order: Vec<&Checked> = files.iter().collect();
    order.sort_by(|a, b| a.smallest.cmp(&b.smallest));
    for pair in order.windows(2) {
        if let [a, b] = pair
            && b.smallest <= a.largest
        {
            return Err(Error::InvalidArgument(format!(
                "ingest: {} and {} overlap (keys {:?}..={:?} and {:?}..={:?}); ingest them separately, \
                 or allow overlap (IngestOptions::allow_overlap: later files win, at level 0)",
                a.source.display(),
                b.source.display(),
                String::from_utf8_lossy(&a.smallest),
                String::from_utf8_lossy(&a.largest),
                String::from_utf8_lossy(&b.smallest),
                String::from_utf8_lossy(&b.largest),
            )));
        }
    }
    Ok(())
}
