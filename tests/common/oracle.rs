//! The check a crash test makes after recovery (issue 72, step 1): the
//! database equals the model at one point between the last acknowledged
//! batch and the last issued one. Every batch is whole or absent, every
//! value byte-exact, and nothing deleted comes back: the whole contents
//! are compared, not just the keys a test wrote last, and read three ways
//! (a forward scan, a reverse scan, a get of every key), since each takes
//! its own path through filters and tombstones.
//!
//! Across cycles the model is what the previous recovery was found to
//! equal: a batch issued but not acknowledged before a kill may have
//! landed, and once a reopen has shown it, it stays.

use std::collections::BTreeMap;

use std::path::Path;

use siftdb::{Db, TableWriter, WriteBatch};

/// One write of a batch.
#[allow(dead_code, reason = "each crash test makes the kinds of write its workload needs")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    /// Every key in `[start, end)`.
    DeleteRange(Vec<u8>, Vec<u8>),
}

/// A database's contents: every live key and its value.
pub type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// `writes` as the `WriteBatch` a child commits.
#[allow(dead_code, reason = "not every crash test builds its batches here")]
pub fn batch(writes: &[Write]) -> WriteBatch {
    let mut b = WriteBatch::new();
    for w in writes {
        match w {
            Write::Put(k, v) => b.put(k, v),
            Write::Delete(k) => b.delete(k),
            Write::DeleteRange(start, end) => b.delete_range(start, end),
        }
    }
    b
}

/// Installs `writes` (puts and deletes, in key order) as one ingest: a
/// table built at `path` with the database's options, then `Db::ingest`.
#[allow(dead_code, reason = "only the loops that ingest need it")]
pub fn ingest(db: &Db, path: &Path, writes: &[Write]) -> siftdb::Result<()> {
    let mut table = TableWriter::create(path, db.options())?;
    for w in writes {
        match w {
            Write::Put(k, v) => table.add(k, v)?,
            Write::Delete(k) => table.delete(k)?,
            Write::DeleteRange(..) => unreachable!("an ingested table holds no range tombstones"),
        }
    }
    table.finish()?;
    db.ingest([path]).map(drop)
}

/// Applies one batch to the model.
pub fn apply(model: &mut Model, writes: &[Write]) {
    for w in writes {
        match w {
            Write::Put(k, v) => {
                model.insert(k.clone(), v.clone());
            }
            Write::Delete(k) => {
                model.remove(k);
            }
            Write::DeleteRange(start, end) => {
                let doomed: Vec<Vec<u8>> =
                    model.range(start.clone()..end.clone()).map(|(k, _)| k.clone()).collect();
                for k in doomed {
                    model.remove(&k);
                }
            }
        }
    }
}

/// Everything `db` holds, read by one forward scan.
pub fn contents(db: &Db) -> Model {
    db.iter().map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap()).collect()
}

/// Checks `db`, just recovered, against `base` with every `acked` batch
/// applied and then none, one, or more of `in_flight` (issued in that
/// order, not acknowledged), and returns the model it equals: the next
/// cycle's base. Panics with the first difference from the acknowledged
/// state otherwise.
#[allow(dead_code, reason = "the multi-writer crash loop checks subsets instead")]
pub fn check(db: &Db, base: &Model, acked: &[Vec<Write>], in_flight: &[Vec<Write>], what: &str) -> Model {
    check_prefix(db, base, acked, in_flight, what).0
}

/// [`check`], also saying how many of `in_flight` the database holds (the
/// most, where several prefixes leave the same contents).
#[allow(dead_code, reason = "only the tests that count lost writes ask")]
pub fn check_prefix(
    db: &Db,
    base: &Model,
    acked: &[Vec<Write>],
    in_flight: &[Vec<Write>],
    what: &str,
) -> (Model, usize) {
    verdict(db, base, acked, in_flight, what, |got, acknowledged| {
        let mut want = acknowledged.clone();
        let mut landed = (got == &want).then_some(0);
        for (i, b) in in_flight.iter().enumerate() {
            apply(&mut want, b);
            if got == &want {
                landed = Some(i + 1);
            }
        }
        landed
    })
}

/// [`check`] for writers on disjoint keys, each with at most one batch of
/// `in_flight` not acknowledged: since no two touch one key, any subset of
/// them may have landed, in any order, and the acknowledged batches of
/// different writers commute.
#[allow(dead_code, reason = "only the multi-writer crash loop needs it")]
pub fn check_subsets(
    db: &Db,
    base: &Model,
    acked: &[Vec<Write>],
    in_flight: &[Vec<Write>],
    what: &str,
) -> Model {
    assert!(in_flight.len() < 16, "{what}: 2^{} candidate states is too many", in_flight.len());
    let chosen = |subset: u32| {
        let batches = in_flight.iter().enumerate().filter(move |(i, _)| subset >> i & 1 == 1);
        batches.map(|(_, b)| b.clone()).collect::<Vec<_>>()
    };
    verdict(db, base, acked, in_flight, what, |got, acknowledged| {
        (0..1u32 << in_flight.len())
            .find(|&s| &replay(acknowledged, &chosen(s)) == got)
            .map(|s| s.count_ones() as usize)
    })
    .0
}

/// Reads `db`, finds how many of `in_flight` landed with `landed` (given
/// the contents and the acknowledged state; `None`: no allowed state),
/// checks the other two reads, and returns the contents, which the match
/// showed to be the model, with that count.
fn verdict(
    db: &Db,
    base: &Model,
    acked: &[Vec<Write>],
    in_flight: &[Vec<Write>],
    what: &str,
    landed: impl FnOnce(&Model, &Model) -> Option<usize>,
) -> (Model, usize) {
    let got = contents(db);
    let acknowledged = replay(base, acked);
    let Some(landed) = landed(&got, &acknowledged) else {
        panic!("{what}: recovered {}", first_difference(&got, &acknowledged));
    };
    confirm(db, &got, base, &acknowledged, acked.iter().chain(in_flight), what);
    (got, landed)
}

/// `base` with `batches` applied in order.
fn replay(base: &Model, batches: &[Vec<Write>]) -> Model {
    let mut model = base.clone();
    for b in batches {
        apply(&mut model, b);
    }
    model
}

/// Reads `db`, whose forward scan gave `got`, the other ways: a reverse
/// scan must give the same, and so must a get of every key any state names
/// or any of `batches` put, live or deleted, and a range scan of just that
/// key for one in five of them (the short scans a range filter may skip a
/// table for: a wrong "empty" would lose the key).
fn confirm<'a>(
    db: &Db,
    got: &Model,
    base: &Model,
    acknowledged: &Model,
    batches: impl Iterator<Item = &'a Vec<Write>>,
    what: &str,
) {
    let mut reverse: Vec<(Vec<u8>, Vec<u8>)> =
        db.iter().rev().map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap()).collect();
    reverse.reverse();
    assert!(
        reverse.iter().map(|(k, v)| (k, v)).eq(got.iter()),
        "{what}: a reverse scan differs from the forward one"
    );
    let put = batches.flatten().filter_map(|w| match w {
        Write::Put(k, _) => Some(k),
        _ => None,
    });
    for (i, k) in base.keys().chain(acknowledged.keys()).chain(put).enumerate() {
        let value = db.get(k).unwrap();
        assert_eq!(
            value.as_deref(),
            got.get(k).map(Vec::as_slice),
            "{what}: get {:?} disagrees with the scan",
            String::from_utf8_lossy(k)
        );
        if i % 5 == 0 {
            let short: Vec<_> =
                db.range(k.as_slice()..=k.as_slice()).map(|r| r.unwrap().1.to_vec()).collect();
            assert_eq!(
                short.first().map(Vec::as_slice),
                got.get(k).map(Vec::as_slice),
                "{what}: a range scan of just {:?} disagrees with the full scan",
                String::from_utf8_lossy(k)
            );
        }
    }
}

/// The smallest key on which `got` and `want` differ (they do differ).
fn first_difference(got: &Model, want: &Model) -> String {
    let show = |v: Option<&Vec<u8>>| {
        v.map_or_else(|| "absent".to_owned(), |v| format!("{:?}", String::from_utf8_lossy(v)))
    };
    let k = got
        .keys()
        .chain(want.keys())
        .filter(|k| got.get(*k) != want.get(*k))
        .min()
        .cloned()
        .unwrap_or_default();
    format!(
        "key {:?} as {}, but the acknowledged state (with or without the batches in flight) has it {}",
        String::from_utf8_lossy(&k),
        show(got.get(&k)),
        show(want.get(&k))
    )
}
