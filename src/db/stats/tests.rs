//! Tests of `stats`.

use std::sync::Arc;

use super::*;

#[test]
fn observed_fpr_excludes_true_positives() {
    let l = LevelStats {
        filter_probes: 110,
        filter_true_positives: 10,
        filter_false_positives: 2,
        ..LevelStats::default()
    };
    assert_eq!(l.observed_fpr(), Some(0.02));
    assert_eq!(LevelStats::default().observed_fpr(), None);
}

#[test]
fn display_lists_levels_with_tables_or_probes() {
    let c = Counters::new(3, Arc::default());
    bump(&c.read[0].levels[2].filter_negatives, 3);
    bump(&c.read[0].levels[2].filter_false_positives, 1);
    let mut s = c.snapshot();
    s.levels[0].tables = 2;
    s.levels[0].filter_kinds = vec![FilterKind::BinaryFuse8];
    let text = s.to_string();
    assert!(text.contains("\nL0 "), "{text}");
    assert!(!text.contains("\nL1 "), "{text}");
    assert!(text.contains("\nL2 ") && text.contains("0.25000"), "{text}");
    assert!(text.contains("fuse8"), "{text}");
}

#[test]
fn since_subtracts_counters_and_keeps_shape() {
    let c = Counters::new(2, Arc::default());
    bump(&c.read[0].gets, 5);
    bump(&c.read[0].levels[1].filter_negatives, 3);
    let before = c.snapshot();
    bump(&c.read[0].gets, 2);
    bump(&c.read[0].levels[1].filter_negatives, 3);
    bump(&c.read[0].levels[1].filter_true_positives, 1);
    let mut after = c.snapshot();
    after.levels[1].tables = 9;
    let d = after.since(&before);
    assert_eq!(d.gets, 2);
    assert_eq!(d.levels[1].filter_probes, 4);
    assert_eq!(d.levels[1].tables, 9);
}

#[test]
fn striped_read_counters_sum_exactly_across_threads() {
    let c = Arc::new(Counters::new(2, Arc::default()));
    let threads: Vec<_> = (0..20)
        .map(|_| {
            let c = Arc::clone(&c);
            std::thread::spawn(move || {
                for _ in 0..1000 {
                    let s = c.read_stripe();
                    bump(&s.gets, 1);
                    bump(&s.levels[1].filter_negatives, 2);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let s = c.snapshot();
    assert_eq!(s.gets, 20_000);
    assert_eq!((s.levels[1].filter_negatives, s.levels[1].filter_probes), (40_000, 40_000));
    // The threads wrote apart: more than one stripe holds counts.
    let used = c.read.iter().filter(|s| s.gets.load(std::sync::atomic::Ordering::Relaxed) > 0).count();
    assert!(used > 1, "{used} stripe(s) used by 20 threads");
}

/// The planner sizes a flush from `flushed_entries`: what the tables hold,
/// not the memtable's versions a flush drops.
#[test]
fn flushed_entries_count_the_table_not_the_memtable() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::Db::open(dir.path(), crate::Options::default()).unwrap();
    for i in 0..100 {
        db.put(b"hot", format!("v{i}")).unwrap();
    }
    db.put(b"cold", b"v").unwrap();
    db.flush().unwrap();
    let c = &db.inner.counters;
    assert_eq!(
        (
            c.flushes.load(std::sync::atomic::Ordering::Relaxed),
            c.flushed_entries.load(std::sync::atomic::Ordering::Relaxed)
        ),
        (1, 2)
    );
}
