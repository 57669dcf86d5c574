//! The [`FilterCodec`] contract, checked once for every filter type:
//! encodings round-trip, and damaged bytes decode to `Corruption` or to a
//! filter that still holds every key, never a panic.

use super::{Filter, FilterCodec, FilterKind};

/// Decodes `encoded` (of a filter holding `keys`) back, checks that it
/// encodes to the same bytes and holds every key, then flips every byte
/// three ways and truncates at every length. Returns the decoded filter
/// for the caller's own checks of its parameters.
pub(super) fn round_trip_and_sweep<T: FilterCodec>(encoded: &[u8], keys: &[u64]) -> T {
    sweep(encoded, keys, T::decode, T::encode);
    T::decode(encoded).unwrap_or_else(|e| panic!("{e}"))
}

/// [`round_trip_and_sweep`] through any decoder, for the registry's
/// dynamic filters as for the concrete types.
fn sweep<F: Filter>(
    encoded: &[u8],
    keys: &[u64],
    decode: impl Fn(&[u8]) -> crate::Result<F>,
    encode: impl Fn(&F) -> Vec<u8>,
) {
    let Ok(back) = decode(encoded) else { panic!("the encoding does not decode") };
    assert_eq!(encode(&back), encoded, "decode then encode changed the bytes");
    assert!(keys.iter().all(|&h| back.contains(h)), "a key went missing in the round trip");
    for i in 0..encoded.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut bad = encoded.to_vec();
            bad[i] ^= flip;
            match decode(&bad) {
                Err(e) => assert!(e.is_corruption(), "byte {i}: {e}"),
                Ok(f) => {
                    // A prefetch of any hash stays in bounds on whatever decoded.
                    for &h in keys.iter().chain(&[0, u64::MAX, 0x9E37_79B9_7F4A_7C15]) {
                        f.prefetch(h);
                    }
                    assert!(keys.iter().all(|&h| f.contains(h)), "byte {i} decoded to a wrong filter");
                }
            }
        }
    }
    for len in 0..encoded.len() {
        assert!(decode(&encoded[..len]).err().is_some_and(|e| e.is_corruption()), "truncated to {len}");
    }
}

/// `encoded` with its body changed by `edit` and sealed again, so that the
/// crc holds and the decoder's own checks must catch the change.
pub(super) fn resealed(encoded: &[u8], edit: &dyn Fn(&mut Vec<u8>)) -> Vec<u8> {
    let mut body = encoded[..encoded.len() - 4].to_vec();
    edit(&mut body);
    crate::codec::seal(body)
}

/// Every `(what, bytes)` case decodes to `Corruption` as a `T`.
pub(super) fn all_corruption<T: FilterCodec>(cases: Vec<(&str, Vec<u8>)>) {
    for (what, bytes) in cases {
        assert!(T::decode(&bytes).err().is_some_and(|e| e.is_corruption()), "{what}");
    }
}

/// Splitmix64 hashes.
pub(super) fn hashes(stream: u64, n: usize) -> Vec<u64> {
    let mut state = stream.wrapping_mul(0x2545_f491_4f6c_dd1d);
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

#[test]
fn every_kind_round_trips_through_the_registry() {
    let keys = hashes(1, 2000);
    let absent = hashes(2, 200_000);
    for &kind in FilterKind::ALL {
        let f = kind.build(&keys).unwrap();
        assert_eq!(f.kind(), kind);
        let bytes = f.encode();
        assert_eq!(kind.encoded_len(keys.len()), Some(bytes.len()), "{kind}: encoded_len");
        let g = kind.decode(&bytes).unwrap();
        assert!(keys.iter().all(|&h| g.contains(h)), "{kind}: a present key reads absent");
        assert_eq!(g.parameters(), f.parameters(), "{kind}");
        // The kind's rate at full load is what its filters deliver: within
        // a third, or a few false positives where the rate is tiny.
        #[expect(clippy::cast_precision_loss, reason = "counts far below 2^52")]
        let measured = absent.iter().filter(|&&h| g.contains(h)).count() as f64 / absent.len() as f64;
        let theory = kind.theoretical_fpr();
        assert!(
            (measured - theory).abs() <= theory / 3.0 + 20.0 / 200_000.0,
            "{kind}: measured {measured}, theory {theory}"
        );
        // The tag and the name lead back to the kind.
        assert_eq!(
            kind.tag().and_then(|t| FilterKind::of_tag(t, kind.bits_per_key().unwrap_or(0.0))),
            Some(kind)
        );
        assert_eq!(kind.to_string().parse::<FilterKind>().unwrap(), kind);
    }
}

#[test]
fn tags_and_names_are_unique_and_unknown_tags_are_none() {
    let all = FilterKind::ALL;
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            assert_ne!(a.tag(), b.tag(), "{a} and {b} share a tag");
            assert_ne!(a.to_string(), b.to_string());
        }
    }
    for tag in 0..=u8::MAX {
        let known = all.iter().any(|k| k.tag() == Some(tag));
        assert_eq!(FilterKind::of_tag(tag, 10.0).is_some(), known, "tag {tag}");
    }
    assert_eq!(FilterKind::None.tag(), None);
    assert_eq!(FilterKind::None.encoded_len(1000), Some(0));
    assert_eq!(FilterKind::None.build(&[1, 2]).err(), Some(crate::filter::BuildError::NoFilter));
    assert!(FilterKind::None.decode(&[]).is_err());
}

#[test]
fn every_kind_survives_damage_through_the_registry() {
    let keys = hashes(3, 40);
    for &kind in FilterKind::ALL {
        let bytes = kind.build(&keys).unwrap().encode();
        sweep(&bytes, &keys, |b| kind.decode(b), super::AnyFilter::encode);
    }
}
