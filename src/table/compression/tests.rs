use super::*;

fn compressible(n: usize) -> Vec<u8> {
    (0..n).map(|i| b"abcdefgh"[i % 8] ^ u8::from(i % 97 == 0)).collect()
}

fn noise(n: usize) -> Vec<u8> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()[0]
        })
        .collect()
}

const CODECS: [Compression; 3] = [Compression::Lz4, Compression::Zstd { level: 1 }, Compression::Zstd { level: 19 }];

#[test]
fn names_round_trip_and_levels_are_checked() {
    for c in [Compression::None, Compression::Lz4, Compression::Zstd { level: 3 }, Compression::Zstd { level: 22 }] {
        assert_eq!(c.to_string().parse::<Compression>().unwrap(), c);
    }
    assert_eq!("zstd".parse::<Compression>().unwrap(), Compression::Zstd { level: ZSTD_DEFAULT_LEVEL });
    for bad in ["zstd:0", "zstd:23", "zstd:-1", "zstd:", "zstd:x", "lz5", "", "LZ4"] {
        assert!(matches!(bad.parse::<Compression>(), Err(Error::InvalidArgument(_))), "{bad}");
    }
    assert!(Compression::Zstd { level: 40 }.validate().is_err());
    assert!(BlockCompressor::new(Compression::Zstd { level: 0 }).is_err());
}

#[test]
fn each_codec_round_trips_and_incompressible_blocks_stay_raw() {
    for c in CODECS {
        let mut z = BlockCompressor::new(c).unwrap();
        let raw = compressible(4096);
        let (stored, codec) = z.compress(&raw);
        assert_eq!(codec, c.codec());
        assert!(stored.len() < raw.len() / 2, "{c}: {} bytes", stored.len());
        let stored = stored.to_vec();
        assert_eq!(decompress_block(codec, &stored, raw.len()).unwrap(), raw);

        let raw = noise(4096);
        let (stored, codec) = z.compress(&raw);
        assert_eq!((codec, stored), (CODEC_RAW, &raw[..]), "{c}");
        // An empty block saves nothing either.
        assert_eq!(z.compress(&[]).1, CODEC_RAW);
    }
    let mut none = BlockCompressor::new(Compression::None).unwrap();
    assert_eq!(none.compress(&compressible(4096)).1, CODEC_RAW);
}

#[test]
fn saving_less_than_an_eighth_is_stored_raw() {
    // Half noise, half runs: saves about half, which passes; then mostly
    // noise with a short run, which saves a little but not 1/8.
    for c in CODECS {
        let mut z = BlockCompressor::new(c).unwrap();
        let mut half = noise(2048);
        half.extend(compressible(2048));
        assert_eq!(z.compress(&half).1, c.codec(), "{c}");
        let mut little = noise(4096 - 300);
        little.extend(vec![0u8; 300]);
        assert_eq!(z.compress(&little).1, CODEC_RAW, "{c}");
    }
}

#[test]
fn a_claimed_length_over_the_limit_is_refused_before_allocating() {
    for c in CODECS {
        let mut z = BlockCompressor::new(c).unwrap();
        let raw = compressible(4096);
        let stored = z.compress(&raw).0.to_vec();
        let e = decompress_block(c.codec(), &stored, 4095).unwrap_err();
        assert!(e.is_corruption() && e.to_string().contains("claims 4096"), "{e}");
        // A claim of u64::MAX, or past any table's bound, is refused too.
        let mut huge = Vec::new();
        put_varint(&mut huge, u64::MAX);
        huge.extend_from_slice(&stored[2..]);
        assert!(decompress_block(c.codec(), &huge, usize::MAX).unwrap_err().is_corruption());
        let mut big = Vec::new();
        put_varint(&mut big, MAX_UNCOMPRESSED_BLOCK as u64 + 1);
        big.extend_from_slice(&stored[2..]);
        assert!(decompress_block(c.codec(), &big, usize::MAX).unwrap_err().is_corruption());
    }
}

#[test]
fn a_wrong_length_truncation_or_damage_is_corruption_never_a_panic() {
    for c in CODECS {
        let mut z = BlockCompressor::new(c).unwrap();
        let raw = compressible(4096);
        let stored = z.compress(&raw).0.to_vec();
        // Claims one byte more, or one less, than the payload holds.
        for claim in [4095u64, 4097] {
            let mut bad = Vec::new();
            put_varint(&mut bad, claim);
            bad.extend_from_slice(&stored[2..]);
            assert!(decompress_block(c.codec(), &bad, 8192).unwrap_err().is_corruption(), "{c} {claim}");
        }
        for len in 0..stored.len() {
            assert!(decompress_block(c.codec(), &stored[..len], 8192).unwrap_err().is_corruption(), "{c} {len}");
        }
        for i in 0..stored.len() {
            for bit in [0x01, 0x80] {
                let mut bad = stored.clone();
                bad[i] ^= bit;
                match decompress_block(c.codec(), &bad, 8192) {
                    Ok(out) => assert_eq!(out.len() as u64, Reader::new(&bad).varint().unwrap()),
                    Err(e) => assert!(e.is_corruption(), "{c} at {i}: {e}"),
                }
            }
        }
    }
    for codec in [CODEC_RAW, 3, 15] {
        assert!(decompress_block(codec, &[4, 1, 2, 3, 4], 8).unwrap_err().is_corruption());
    }
}
