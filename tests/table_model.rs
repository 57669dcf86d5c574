//! Property test: a table answers every lookup, seek and scan exactly as a
//! simple in-memory model does, for random keys, versions, block sizes and
//! restart intervals.

mod table_common;

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;
use siftdb::ValueKind;
use siftdb::fs::StdFs;
use siftdb::table::{Entry, FilterAnswer, Table, TableBuilder, TableOptions};
use table_common::kinds;

/// (user key, seq) -> (kind, value); iterated in internal-key order by
/// sorting on (key asc, seq desc).
type Model = BTreeMap<(Vec<u8>, std::cmp::Reverse<u64>), (ValueKind, Vec<u8>)>;

fn arb_model() -> impl Strategy<Value = Model> {
    let key = prop::collection::vec(prop::sample::select(vec![b'a', b'b', b'c', 0u8, 0xff]), 0..6);
    let entry = (key, 0u64..50, any::<bool>(), prop::collection::vec(any::<u8>(), 0..40));
    prop::collection::vec(entry, 0..200).prop_map(|entries| {
        entries
            .into_iter()
            .map(|(k, seq, tomb, v)| {
                let kind = if tomb { ValueKind::Tombstone } else { ValueKind::Value };
                ((k, std::cmp::Reverse(seq)), (kind, if tomb { Vec::new() } else { v }))
            })
            .collect()
    })
}

fn expected(model: &Model, key: &[u8], snap: u64) -> Option<Entry> {
    model.range((key.to_vec(), std::cmp::Reverse(snap))..).next().and_then(|((k, seq), (kind, v))| {
        (k == key).then(|| match kind {
            ValueKind::Value => Entry::Value { seq: seq.0, value: v.clone().into() },
            ValueKind::Tombstone => Entry::Tombstone { seq: seq.0 },
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn table_matches_model(
        model in arb_model(),
        block_bytes in 16usize..600,
        restart_interval in 1usize..20,
        probes in prop::collection::vec((prop::collection::vec(prop::sample::select(vec![b'a', b'b', b'c', 0u8, 0xff]), 0..6), 0u64..60), 40),
        kind_index in 0usize..16,
    ) {
        let all = kinds();
        let kind = all[kind_index % all.len()];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.sst");
        let opts = TableOptions { block_bytes, restart_interval, filter: kind, seed: 5, ..TableOptions::default() };
        let mut b = TableBuilder::new(Arc::new(StdFs), &path, opts).unwrap();
        for ((k, seq), (kind, v)) in &model {
            b.add(k, seq.0, *kind, v).unwrap();
        }
        b.finish().unwrap();
        let t = Table::open_path(&path).unwrap();

        for (k, snap) in &probes {
            let l = t.get(k, *snap).unwrap();
            prop_assert_eq!(l.entry.clone(), expected(&model, k, *snap));
            if model.keys().any(|(mk, _)| mk == k) {
                prop_assert_ne!(l.filter, FilterAnswer::Absent);
            }
        }
        // Every stored key at the newest snapshot.
        for (k, _) in model.keys() {
            prop_assert_eq!(t.get(k, u64::MAX).unwrap().entry, expected(&model, k, u64::MAX));
        }
        // A full scan is the model in order; a seek starts at the right place.
        let scanned: Vec<_> = t.iter().map(|e| {
            let e = e.unwrap();
            ((e.user_key.to_vec(), std::cmp::Reverse(e.seq)), (e.kind, e.value.to_vec()))
        }).collect();
        let want: Vec<_> = model.clone().into_iter().collect();
        prop_assert_eq!(&scanned, &want);
        for (k, snap) in probes.iter().take(10) {
            let mut it = t.iter();
            it.seek_internal(k, *snap).unwrap();
            let got = it.next().map(|e| { let e = e.unwrap(); (e.user_key.to_vec(), e.seq) });
            let want = model.range((k.clone(), std::cmp::Reverse(*snap))..).next().map(|((k, s), _)| (k.clone(), s.0));
            prop_assert_eq!(got, want);
        }
    }
}
