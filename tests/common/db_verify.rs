//! What `siftdb db verify` checks, through the library, for tests that must
//! end with a clean database: the manifest replays, every table it names
//! exists with the recorded size, passes `verify_table` and matches its
//! manifest record, and every log recovery replays does so under strict
//! recovery (the scan `Db::open` uses).

use std::path::Path;

use siftdb::fs::StdFs;
use siftdb::table::{Table, verify_table};

/// Every problem `db verify` would report for `dir` (empty when clean),
/// and the deepest level holding a table.
pub fn db_problems(dir: &Path) -> (Vec<String>, Option<usize>) {
    let i = match siftdb::recovery::inspect_db(&StdFs, dir) {
        Ok(i) => i,
        Err(e) => return (vec![format!("manifest: {e}")], None),
    };
    // What stops opening, as the scan that opening uses finds it.
    let mut problems: Vec<String> =
        i.policy_error.iter().chain(i.chain_error.iter()).map(ToString::to_string).collect();
    let last_seq = i.manifest.state.last_seq;
    for t in &i.tables {
        let (r, path) = (&t.record, t.path.display());
        if t.actual_size != Some(r.file_size) {
            problems.push(format!("{path}: size {:?}, the manifest says {}", t.actual_size, r.file_size));
            continue;
        }
        if r.max_seq > last_seq {
            problems.push(format!("{path}: max seq {} beyond the manifest's {last_seq}", r.max_seq));
        }
        match verify_table(&StdFs, &t.path) {
            Ok(report) => problems.extend(report.problems.iter().map(|p| format!("{path}: {p:?}"))),
            Err(e) => problems.push(format!("{path}: {e}")),
        }
        match Table::open_path(&t.path) {
            Ok(table) => {
                let p = table.properties();
                // An ingested table's file holds 0 throughout, and its record
                // the one number every entry reads at (format 9).
                let ingested = r.min_seq == r.max_seq && (p.min_seq, p.max_seq) == (0, 0);
                let same = p.entries == r.entries
                    && p.smallest_key.as_deref() == Some(&r.smallest[..])
                    && p.largest_key.as_deref() == Some(&r.largest[..])
                    && (ingested || (p.min_seq, p.max_seq) == (r.min_seq, r.max_seq));
                if !same {
                    problems.push(format!("{path}: properties {p:?} differ from the manifest's {r:?}"));
                }
            }
            Err(e) => problems.push(format!("{path}: {e}")),
        }
    }
    for l in i.logs.iter().filter(|l| l.replayed) {
        if let Some(e) = &l.error {
            problems.push(format!("{}: unreadable under strict recovery: {e}", l.path.display()));
        }
    }
    (problems, i.tables.iter().map(|t| t.level).max())
}
