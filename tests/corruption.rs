//! Corruption sweep: every single-bit flip and every truncation of small
//! real fixtures of each on-disk file kind.
//!
//! Pass rule (issue 8):
//! - a bit flip ends in a typed `Error::Corruption` — anywhere, the last
//!   record of a log and `CURRENT` included — except in a table's filter
//!   block (or a standalone filter), where correct answers are accepted;
//! - a truncation ends in `Corruption` or in exactly the records before the
//!   cut (the log's complete records: a prefix of the acknowledged writes,
//!   as a torn write at the tail leaves).
//!
//! A panic, a wrong value, or a silently missing record fails the test.
//! Trial counts are printed and checked against the fixture sizes.

#[path = "common/fuzz_seeds.rs"]
mod fuzz_seeds;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use siftdb::ValueKind;
use siftdb::filter::{CountingBloom, CuckooFilter, Filter, FilterCodec, FilterKind, hash_key};
use siftdb::fs::StdFs;
use siftdb::manifest::{VersionEdit, VersionSet, replay};
use siftdb::table::{BlockHandle, Entry, Footer, Table};
use siftdb::wal::{FrameReader, HEADER_LEN, RecordType, RecoveryMode};
use siftdb::{Error, WriteBatch};

/// One way to damage a fixture.
#[derive(Debug, Clone, Copy)]
enum Damage {
    Flip { byte: usize, bit: u8 },
    Truncate { len: usize },
}

impl Damage {
    fn apply(self, bytes: &[u8]) -> Vec<u8> {
        match self {
            Damage::Flip { byte, bit } => {
                let mut v = bytes.to_vec();
                v[byte] ^= 1 << bit;
                v
            }
            Damage::Truncate { len } => bytes[..len].to_vec(),
        }
    }
    /// The first offset the damage touches.
    fn offset(self) -> usize {
        match self {
            Damage::Flip { byte, .. } => byte,
            Damage::Truncate { len } => len,
        }
    }
}

/// Judges one damaged fixture: `Ok(true)` typed corruption, `Ok(false)` a
/// correct accepted outcome, `Err` a wrong one.
type Judge<'a> = dyn Fn(Damage, &[u8]) -> Result<bool, String> + 'a;

/// Tallies a sweep; `run` panics at the end if any trial failed.
#[derive(Default)]
struct Sweep {
    trials: usize,
    corruption: usize,
    accepted: usize,
    panics: usize,
    failures: Vec<String>,
    /// Flip one bit per byte instead of all eight (for costly trials).
    one_bit_per_byte: bool,
}

impl Sweep {
    /// Every flip of every bit, then every strict truncation. `judge` returns
    /// `Ok(true)` for a typed corruption, `Ok(false)` for an accepted
    /// correct outcome, `Err` for a wrong one.
    fn run(&mut self, name: &str, bytes: &[u8], judge: &Judge) {
        self.run_range(name, bytes, 0..bytes.len(), judge);
    }

    /// As [`Sweep::run`], for flips of the bytes in `range` and truncations
    /// to the lengths in `range` only.
    fn run_range(&mut self, name: &str, bytes: &[u8], range: std::ops::Range<usize>, judge: &Judge) {
        let bits: &[u8] = if self.one_bit_per_byte { &[0] } else { &[0, 1, 2, 3, 4, 5, 6, 7] };
        let flips = range.clone().flat_map(|byte| {
            // Sampled sweeps flip bit (byte % 8): every offset, every bit position.
            let rotate = if self.one_bit_per_byte { (byte % 8) as u8 } else { 0 };
            bits.iter().map(move |&bit| Damage::Flip { byte, bit: bit + rotate })
        });
        let cuts = range.map(|len| Damage::Truncate { len });
        for damage in flips.chain(cuts) {
            self.trials += 1;
            let damaged = damage.apply(bytes);
            match catch_unwind(AssertUnwindSafe(|| judge(damage, &damaged))) {
                Ok(Ok(true)) => self.corruption += 1,
                Ok(Ok(false)) => self.accepted += 1,
                Ok(Err(why)) => self.failures.push(format!("{name} {damage:?}: {why}")),
                Err(_) => self.panics += 1,
            }
        }
    }

    fn finish(self, kind: &str, expected_trials: usize) {
        eprintln!(
            "{kind}: {} trials: {} corruption, {} accepted correct, {} wrong, {} panics",
            self.trials,
            self.corruption,
            self.accepted,
            self.failures.len(),
            self.panics
        );
        assert_eq!(self.panics, 0, "{kind}: trials panicked");
        assert!(self.failures.is_empty(), "{kind}: wrong outcomes:\n{}", self.failures.join("\n"));
        assert_eq!(self.trials, expected_trials, "{kind}: trial count");
    }
}

/// Bit flips plus truncations for fixtures of these sizes.
fn trials_for(sizes: &[usize]) -> usize {
    sizes.iter().map(|n| n * 9).sum()
}

fn corruption_or<T>(
    r: Result<T, Error>,
    accept: impl FnOnce(T) -> Result<(), String>,
) -> Result<bool, String> {
    match r {
        Err(e) if e.is_corruption() => Ok(true),
        Err(e) => Err(format!("non-corruption error {e}")),
        Ok(v) => accept(v).map(|()| false),
    }
}

/// Where each record of a log starts, and where the whole log ends.
fn record_starts(log: &[u8], kind: RecordType) -> Vec<usize> {
    let reader = FrameReader::new(log, kind, RecoveryMode::AbsoluteConsistency);
    reader.map(|r| usize::try_from(r.unwrap().offset).unwrap()).collect()
}

/// How many whole records a log may legitimately yield after `damage`, and
/// whether yielding them without an error is allowed:
/// - truncation: exactly those ending at or before the cut (a torn tail);
/// - a flip: none without an error — the records before the damaged one
///   only where recovery may stop there (PointInTime). Every record is
///   complete, so a flip in the last one is corruption too.
fn allowed_prefix(starts: &[usize], total: usize, damage: Damage) -> (usize, bool) {
    let damaged = starts.iter().rposition(|&s| s <= damage.offset()).unwrap_or(0);
    let ends = |i: usize| starts.get(i + 1).copied().unwrap_or(total);
    match damage {
        Damage::Truncate { len } => ((0..starts.len()).filter(|&i| ends(i) <= len).count(), true),
        Damage::Flip { .. } => (damaged, false),
    }
}

#[test]
fn wal_sweep() {
    let batches = fuzz_seeds::sample_batches();
    let log = fuzz_seeds::wal_bytes(&batches);
    let starts = record_starts(&log, RecordType::Batch);
    assert_eq!(starts.len(), batches.len());
    let mut sweep = Sweep::default();
    for mode in [RecoveryMode::AbsoluteConsistency, RecoveryMode::PointInTime] {
        sweep.run(&format!("wal {mode:?}"), &log, &|damage, bytes| {
            let (prefix, tail_ok) = allowed_prefix(&starts, log.len(), damage);
            let mut reader = FrameReader::new(bytes, RecordType::Batch, mode);
            let mut got = Vec::new();
            for record in reader.by_ref() {
                match record {
                    Ok(r) => got.push(WriteBatch::decode(r.payload).map_err(|e| format!("payload: {e}"))?),
                    Err(e) if e.is_corruption() => {
                        if mode == RecoveryMode::PointInTime {
                            return Err("PointInTime returned an error".into());
                        }
                        return Ok(true);
                    }
                    Err(e) => return Err(format!("non-corruption error {e}")),
                }
            }
            for (i, b) in got.iter().enumerate() {
                if *b != batches[i] {
                    return Err(format!("record {i} decoded to a wrong batch"));
                }
            }
            let stop_ok = mode == RecoveryMode::PointInTime;
            if got.len() == prefix && (tail_ok || stop_ok) {
                Ok(false)
            } else {
                Err(format!("recovered {} records, allowed {prefix} (torn tail: {tail_ok})", got.len()))
            }
        });
    }
    sweep.finish("wal", 2 * trials_for(&[log.len()]));
}

fn replay_state(edits: &[VersionEdit]) -> VersionSet {
    let mut state = VersionSet::default();
    for e in edits {
        state.apply(e).unwrap();
    }
    state
}

#[test]
fn manifest_sweep() {
    let edits = fuzz_seeds::sample_edits();
    let log = fuzz_seeds::manifest_bytes(&edits);
    let starts = record_starts(&log, RecordType::Edit);
    let mut sweep = Sweep::default();
    sweep.run("manifest", &log, &|damage, bytes| {
        let (prefix, tail_ok) = allowed_prefix(&starts, log.len(), damage);
        corruption_or(replay(bytes), |r| {
            if !tail_ok || r.edits != prefix {
                return Err(format!("replayed {} edits, allowed {prefix} (torn tail: {tail_ok})", r.edits));
            }
            if r.state != replay_state(&edits[..prefix]) {
                return Err("replayed a wrong state".into());
            }
            Ok(())
        })
    });
    let edit = edits[1].encode();
    sweep.run("version edit", &edit, &|_, bytes| {
        corruption_or(VersionEdit::decode(bytes), |_| Err("a damaged sealed edit decoded".into()))
    });
    sweep.finish("manifest", trials_for(&[log.len(), edit.len()]));
}

#[test]
fn current_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let fs = siftdb::fs::StdFs;
    let original = siftdb::manifest::current_contents(1).into_bytes();
    let mut sweep = Sweep::default();
    // Regression: CURRENT had no checksum, so a digit flipped into another
    // digit named another manifest (one a crash left behind would open as
    // an older state). Every damage is now corruption.
    sweep.run("CURRENT", &original, &|_, bytes| {
        std::fs::write(dir.path().join("CURRENT"), bytes).unwrap();
        corruption_or(siftdb::manifest::read_current(&fs, dir.path()), |n| {
            Err(format!("damaged CURRENT parsed as {n}"))
        })
    });
    sweep.finish("CURRENT", trials_for(&[original.len()]));
}

macro_rules! filter_sweep {
    ($sweep:ident, $hashes:ident, $sizes:ident, $ty:ty, $bytes:expr) => {{
        let bytes = $bytes;
        $sizes.push(bytes.len());
        $sweep.run(stringify!($ty), &bytes, &|_, damaged| {
            corruption_or(<$ty>::decode(damaged), |f| {
                if $hashes.iter().all(|&h| f.contains(h)) {
                    Ok(())
                } else {
                    Err("a damaged filter decoded and lost a key".into())
                }
            })
        });
    }};
}

#[test]
fn filter_sweep() {
    let hashes: Vec<u64> = (0..20).map(|i: u32| hash_key(3, &i.to_le_bytes())).collect();
    let mut counting = CountingBloom::new(hashes.len(), 10.0);
    let mut cuckoo = CuckooFilter::new(hashes.len(), 12).unwrap();
    for &h in &hashes {
        counting.insert(h);
        cuckoo.insert(h).unwrap();
    }
    let mut sweep = Sweep::default();
    let mut sizes = Vec::new();
    filter_sweep!(sweep, hashes, sizes, CountingBloom, counting.encode());
    filter_sweep!(sweep, hashes, sizes, CuckooFilter, cuckoo.encode());
    // Every table kind, through the registry (new kinds join by themselves).
    for &kind in FilterKind::ALL {
        let bytes = kind.build(&hashes).unwrap().encode();
        sizes.push(bytes.len());
        sweep.run(&kind.to_string(), &bytes, &|_, damaged| {
            corruption_or(kind.decode(damaged), |f| {
                if hashes.iter().all(|&h| f.contains(h)) {
                    Ok(())
                } else {
                    Err("a damaged filter decoded and lost a key".into())
                }
            })
        });
    }
    sweep.finish("filters", trials_for(&sizes));
}

/// The newest entry of each key of the sample table, as `get` must return it.
fn expected_newest() -> Vec<(Vec<u8>, u64, Option<Vec<u8>>)> {
    let mut out: Vec<(Vec<u8>, u64, Option<Vec<u8>>)> = Vec::new();
    for (key, seq, kind, value) in fuzz_seeds::sample_table_entries() {
        if out.last().is_some_and(|(k, _, _)| *k == key) {
            continue; // entries are newest first within a key
        }
        out.push((key, seq, (kind == ValueKind::Value).then_some(value)));
    }
    out
}

/// Opens a damaged table and reads every key and every entry. Returns
/// whether any read reported corruption; `Err` for any wrong answer.
fn judge_table(path: &Path, bytes: &[u8], filter_region: bool) -> Result<bool, String> {
    std::fs::write(path, bytes).unwrap();
    let table = match Table::open(&StdFs, path) {
        Ok(t) => t,
        Err(e) if e.is_corruption() => return Ok(true),
        Err(e) => return Err(format!("open: non-corruption error {e}")),
    };
    if filter_region && !table.filter_dropped() {
        return Err("a damaged filter block was not dropped".into());
    }
    let mut corrupt = false;
    let mut saw = |e: Error, what: &str| -> Result<(), String> {
        if filter_region {
            return Err(format!("{what}: error with only the filter damaged: {e}"));
        }
        if e.is_corruption() {
            corrupt = true;
            Ok(())
        } else {
            Err(format!("{what}: non-corruption error {e}"))
        }
    };
    for (key, seq, value) in expected_newest() {
        match table.get(&key, u64::MAX) {
            Ok(lookup) => {
                let got = match lookup.entry {
                    Some(Entry::Value { seq, value }) => Some((seq, Some(value.to_vec()))),
                    Some(Entry::Tombstone { seq }) => Some((seq, None)),
                    None => None,
                };
                if got != Some((seq, value.clone())) {
                    return Err(format!("get {key:?}: {got:?}, want {:?}", (seq, value)));
                }
            }
            Err(e) => saw(e, "get")?,
        }
    }
    for absent in [b"key9999".as_slice(), b"", b"kez", b"key0003x"] {
        match table.get(absent, u64::MAX) {
            Ok(lookup) if lookup.entry.is_none() => {}
            Ok(lookup) => return Err(format!("absent {absent:?} found: {:?}", lookup.entry)),
            Err(e) => saw(e, "get absent")?,
        }
    }
    let want = fuzz_seeds::sample_table_entries();
    let mut n = 0;
    for entry in &table {
        match entry {
            Ok(e) => {
                let Some((key, seq, kind, value)) = want.get(n) else {
                    return Err("iteration yields extra entries".into());
                };
                if (&e.user_key[..], e.seq, e.kind, &e.value[..]) != (&key[..], *seq, *kind, &value[..]) {
                    return Err(format!("iteration entry {n} is wrong"));
                }
                n += 1;
            }
            Err(e) => {
                saw(e, "iterate")?;
                n = want.len(); // stopped loudly: not a silent loss
                break;
            }
        }
    }
    if n != want.len() {
        return Err(format!("iteration silently stopped after {n} of {} entries", want.len()));
    }
    Ok(corrupt)
}

#[test]
fn table_sweep() {
    // Each trial writes and maps a file: tmpfs keeps that cheap.
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.unwrap();
    let path = dir.path().join("000001.sst");
    let mut total = 0;
    let kinds = [FilterKind::BinaryFuse8, FilterKind::Bloom { bits_per_key: 10.0 }];
    for filter in kinds {
        let file = fuzz_seeds::sample_table(filter);
        let footer = Footer::decode(&file).unwrap();
        let block_end = |h: BlockHandle| usize::try_from(h.offset + h.size_with_trailer()).unwrap();
        let start = |h: BlockHandle| usize::try_from(h.offset).unwrap();
        // Format 4 pads before the filter block (zeros, checked at open).
        let regions = [
            ("data", 0, start(footer.index)),
            ("index", start(footer.index), block_end(footer.index)),
            ("padding", block_end(footer.index), start(footer.filter)),
            ("filter", start(footer.filter), block_end(footer.filter)),
            ("properties", start(footer.properties), block_end(footer.properties)),
            ("footer", file.len() - 56, file.len()),
        ];
        let covered: usize = regions.iter().map(|(_, a, b)| b - a).sum();
        assert_eq!(covered, file.len(), "regions tile the file");
        for (region, from, to) in regions {
            let mut sweep = Sweep::default();
            let judge = |damage: Damage, bytes: &[u8]| {
                judge_table(&path, bytes, region == "filter" && matches!(damage, Damage::Flip { .. }))
            };
            sweep.run_range(region, &file, from..to, &judge);
            sweep.finish(&format!("table {filter} {region}"), 9 * (to - from));
            total += 9 * (to - from);
        }
    }
    eprintln!("table: {total} trials in all");
    assert_eq!(total, kinds.iter().map(|&k| 9 * fuzz_seeds::sample_table(k).len()).sum::<usize>());
}

/// `HEADER_LEN` is the frame size the WAL fixtures assume; a change of
/// framing must revisit `allowed_prefix`.
#[test]
fn wal_header_is_what_the_sweep_assumes() {
    let log = fuzz_seeds::wal_bytes(&fuzz_seeds::sample_batches()[..1]);
    let payload = fuzz_seeds::sample_batches()[0].1.encode(1);
    assert_eq!(log.len(), HEADER_LEN + payload.len());
}

/// `(key, Some(value))` a put, `(key, None)` a delete.
type KeyOp = (Vec<u8>, Option<Vec<u8>>);

/// A closed database: 20 puts flushed to a table, then 5 puts and 2
/// deletes left in the WAL. Returns the ops in order and how many were
/// flushed.
fn small_db(dir: &Path) -> (Vec<KeyOp>, usize) {
    let opts = siftdb::Options { hash_salt: Some(9), auto_compaction: false, ..siftdb::Options::default() };
    let db = siftdb::Db::open(dir, opts).unwrap();
    let mut ops = Vec::new();
    for i in 0..20u32 {
        ops.push((format!("key{i:02}").into_bytes(), Some(format!("value{i}").into_bytes())));
    }
    for (k, v) in &ops {
        db.put(k, v.as_ref().unwrap()).unwrap();
    }
    db.flush().unwrap();
    let tail: Vec<KeyOp> = (20..25u32)
        .map(|i| (format!("key{i:02}").into_bytes(), Some(format!("value{i}").into_bytes())))
        .chain([(b"key03".to_vec(), None), (b"key21".to_vec(), None)])
        .collect();
    for (k, v) in &tail {
        match v {
            Some(v) => db.put(k, v).unwrap(),
            None => db.delete(k).unwrap(),
        }
    }
    db.close().unwrap();
    ops.extend(tail);
    (ops, 20)
}

/// Damages each file of a real database directory (one bit flip and one
/// truncation per offset) and reopens it. A flip must end in `Corruption`
/// (at open or on a read), except in a table's filter block, where every
/// read must be right. A truncation must end in `Corruption` or in exactly
/// the writes it left whole: for the WAL, the flushed writes plus the
/// records before the cut; for any other file, everything.
#[test]
fn db_files_sweep() {
    let shm = Path::new("/dev/shm");
    let tmp = || if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.unwrap();
    let pristine = tmp();
    let (ops, flushed) = small_db(pristine.path());
    let mut states = vec![std::collections::BTreeMap::new()];
    for (k, v) in &ops {
        let mut s = states.last().unwrap().clone();
        match v {
            Some(v) => s.insert(k.clone(), v.clone()),
            None => s.remove(k),
        };
        states.push(s);
    }
    let mut unflushed_only = std::collections::BTreeMap::new();
    for (k, v) in &ops[flushed..] {
        match v {
            Some(v) => unflushed_only.insert(k.clone(), v.clone()),
            None => unflushed_only.remove(k),
        };
    }
    let keys: Vec<Vec<u8>> = (0..26u32).map(|i| format!("key{i:02}").into_bytes()).collect();
    let files: Vec<PathBuf> = std::fs::read_dir(pristine.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n != "LOCK"))
        .collect();
    let mut total = 0;
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(file).unwrap();
        let is_wal = name.ends_with(".log");
        // Each trial copies and opens a whole database: one bit per byte.
        let mut sweep = Sweep { one_bit_per_byte: true, ..Sweep::default() };
        // One WAL record per unflushed write.
        let wal_ends: Vec<usize> = if is_wal {
            let starts = record_starts(&bytes, RecordType::Batch);
            assert_eq!(starts.len(), ops.len() - flushed, "{name}: one record per unflushed write");
            starts.iter().skip(1).copied().chain([bytes.len()]).collect()
        } else {
            Vec::new()
        };
        let filter_block = if name.ends_with(".sst") {
            let footer = Footer::decode(&bytes).unwrap();
            let at = usize::try_from(footer.filter.offset).unwrap();
            at..at + usize::try_from(footer.filter.size_with_trailer()).unwrap()
        } else {
            0..0
        };
        let judge = |damage: Damage, damaged: &[u8]| -> Result<bool, String> {
            let work = tmp();
            for f in &files {
                std::fs::copy(f, work.path().join(f.file_name().unwrap())).unwrap();
            }
            std::fs::write(work.path().join(&name), damaged).unwrap();
            let opts =
                siftdb::Options { hash_salt: Some(9), auto_compaction: false, ..siftdb::Options::default() };
            let db = match siftdb::Db::open(work.path(), opts) {
                Ok(db) => db,
                Err(e) if e.is_corruption() => return Ok(true),
                Err(e) => return Err(format!("open: non-corruption error {e}")),
            };
            let mut got = std::collections::BTreeMap::new();
            let mut corrupt = false;
            for k in &keys {
                match db.get(k) {
                    Ok(Some(v)) => drop(got.insert(k.clone(), v.to_vec())),
                    Ok(None) => {}
                    Err(e) if e.is_corruption() => corrupt = true,
                    Err(e) => return Err(format!("get: non-corruption error {e}")),
                }
            }
            // A batch reads the same blocks as the gets: the same values,
            // or the same typed error.
            match db.multi_get(&keys) {
                Err(e) if e.is_corruption() && corrupt => {}
                Ok(values) if !corrupt => {
                    if keys.iter().zip(&values).any(|(k, v)| v.as_deref() != got.get(k).map(Vec::as_slice)) {
                        return Err(format!("{name}: multi_get disagrees with get"));
                    }
                }
                other => {
                    return Err(format!(
                        "{name}: multi_get gave {other:?} where get found corruption: {corrupt}"
                    ));
                }
            }
            if corrupt {
                return Ok(true);
            }
            let want = match damage {
                Damage::Flip { byte, .. } if filter_block.contains(&byte) => ops.len(),
                Damage::Flip { .. } => return Err(format!("{name}: a bit flip opened without corruption")),
                // The database was closed cleanly, so the manifest records
                // the WAL synced to its end: any cut loses synced writes and
                // must be refused (issue 37), never opened as the records
                // before it.
                Damage::Truncate { len } if is_wal => {
                    return Err(format!(
                        "{name}: cut to {len} of {} bytes opened ({} whole records) instead of Corruption",
                        bytes.len(),
                        wal_ends.iter().filter(|&&e| e <= len).count()
                    ));
                }
                Damage::Truncate { .. } => ops.len(),
            };
            if states[want] == got {
                Ok(false)
            } else if got == unflushed_only {
                // Regression guard: damage in the manifest's last edit once
                // read as a torn tail, dropping the edit that named the
                // flushed table (whose WAL was already deleted).
                Err(format!("{name}: damage silently lost the flushed table"))
            } else {
                Err(format!("{name}: recovered state is not the {want} writes left whole"))
            }
        };
        sweep.run(&name, &bytes, &judge);
        sweep.finish(&format!("db file {name}"), 2 * bytes.len());
        total += 2 * bytes.len();
    }
    eprintln!("db files: {total} trials over {} files", files.len());
}
