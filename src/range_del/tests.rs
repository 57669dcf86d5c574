use proptest::prelude::*;

use super::*;

fn t(start: &str, end: &str, seq: SeqNo) -> RangeTombstone {
    RangeTombstone::new(start.as_bytes().to_vec(), end.as_bytes().to_vec(), seq)
}

#[test]
fn the_module_example_fragments_as_drawn() {
    let dels = RangeDels::new([t("d", "h", 9), t("b", "f", 7)]);
    let drawn: Vec<(&[u8], &[u8], Vec<SeqNo>)> =
        dels.fragments.iter().map(|f| (f.start.as_ref(), f.end.as_ref(), f.seqs.clone())).collect();
    assert_eq!(
        drawn,
        [(&b"b"[..], &b"d"[..], vec![7]), (b"d", b"f", vec![9, 7]), (b"f", b"h", vec![9])]
    );
    assert_eq!(dels.covering(b"e", 8), Some(7), "a snapshot before 9 sees only 7");
    assert_eq!(dels.covering(b"e", 100), Some(9));
    assert_eq!(dels.covering(b"h", 100), None, "the end is not deleted");
    assert_eq!(dels.covering(b"a", 100), None);
    assert!(dels.deletes(b"c", 6, 100));
    assert!(!dels.deletes(b"c", 7, 100), "a tombstone hides only older versions");
    assert!(!dels.deletes(b"c", 1, 6), "nor anything from a snapshot before it");
}

#[test]
fn empty_ranges_and_duplicates_are_left_out() {
    let dels = RangeDels::new([t("b", "b", 1), t("c", "a", 2), t("a", "c", 3), t("a", "c", 3)]);
    assert_eq!(dels.tombstones(), [t("a", "c", 3)]);
    assert!(RangeDels::new([t("x", "x", 1)]).is_empty());
}

#[test]
fn bounds_cover_what_the_tombstones_cover() {
    let dels = RangeDels::new([t("m", "q", 1), t("c", "e\0", 2)]);
    assert_eq!(dels.smallest(), Some(&b"c"[..]));
    assert_eq!(dels.largest(), Some(&b"q"[..]), "no key sits just below q, so q itself bounds it");
    assert_eq!(inclusive_end(b"e\0"), b"e", "the key just below e\\0 is e");
    assert_eq!(inclusive_end(b""), b"");
    assert_eq!(successor(b"e").as_ref(), b"e\0");
}

#[test]
fn the_pieces_of_one_write_join_again() {
    let pieces = vec![t("m\0", "q", 4), t("c", "m\0", 4), t("d", "e", 5), t("q", "s", 4), t("x", "z", 4)];
    assert_eq!(coalesced(pieces), [t("c", "s", 4), t("d", "e", 5), t("x", "z", 4)]);
}

#[test]
fn clipping_keeps_only_the_part_within() {
    let whole = t("c", "p", 4);
    assert_eq!(whole.clipped(Some(b"e"), Some(b"g")), Some(t("e", "g", 4)));
    assert_eq!(whole.clipped(None, Some(b"g")), Some(t("c", "g", 4)));
    assert_eq!(whole.clipped(Some(b"a"), None), Some(whole.clone()));
    assert_eq!(whole.clipped(Some(b"p"), None), None);
    assert_eq!(whole.clipped(None, Some(b"c")), None);
}

#[test]
fn meeting_picks_the_tombstones_a_range_touches() {
    let dels = RangeDels::new([t("a", "c", 1), t("e", "g", 2), t("k", "m", 3)]);
    let met = |lo: Bound<&[u8]>, hi: Bound<&[u8]>| dels.meeting(lo, hi).map(|t| t.seq).collect::<Vec<_>>();
    assert_eq!(met(Bound::Included(b"c"), Bound::Excluded(b"k")), [2]);
    assert_eq!(met(Bound::Included(b"b"), Bound::Included(b"k")), [1, 2, 3]);
    assert_eq!(met(Bound::Unbounded, Bound::Unbounded), [1, 2, 3]);
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(0u8..4, 0..3)
}

proptest! {
    /// Fragments answer exactly what a walk over every tombstone answers.
    #[test]
    fn fragments_agree_with_every_tombstone(
        raw in prop::collection::vec((key(), key(), 1u64..20), 0..12),
        probes in prop::collection::vec((key(), 0u64..22), 1..40),
    ) {
        let tombstones: Vec<RangeTombstone> =
            raw.into_iter().map(|(s, e, seq)| RangeTombstone::new(s, e, seq)).collect();
        let dels = RangeDels::new(tombstones.clone());
        for pair in dels.fragments.windows(2) {
            prop_assert!(pair[0].end <= pair[1].start, "fragments overlap: {:?}", pair);
        }
        for (k, snapshot) in probes {
            let expected = tombstones.iter().filter(|t| t.contains(&k) && t.seq <= snapshot).map(|t| t.seq).max();
            prop_assert_eq!(dels.covering(&k, snapshot), expected, "key {:?} at {}", k, snapshot);
            if let Some(largest) = dels.largest() {
                prop_assert!(expected.is_none() || k.as_slice() <= largest);
            }
        }
    }
}
