//! Seeded keys and values shared by the benchmarks.
//!
//! Key `i` is the 16 hex digits of a bijective mix of `seed + i`: keys are
//! distinct, of one length, spread evenly over the key space, and `i < n`
//! versus `i ≥ n` splits them into present and absent halves drawn from the
//! same distribution, so absent keys fall inside the tables' key ranges and
//! only a filter (never a range check) can skip a table for them.

/// SplitMix64: a tiny, well-mixed, seedable generator (Steele et al.).
#[derive(Debug, Clone)]
pub struct SplitMix(u64);

impl SplitMix {
    /// A generator started at `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// A uniform value in `0..n` by multiply-shift (n ≥ 1).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A uniform value in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// SplitMix64's finaliser: a bijection of `u64` that scatters nearby inputs.
#[must_use]
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Zipfian ranks of `0..n` with skew `theta` (YCSB's generator, after Gray
/// et al., "Quickly generating billion-record synthetic databases", 1994):
/// rank `r` comes up in proportion to `1 / (r + 1)^theta`, so with YCSB's
/// 0.99 over 10^6 keys the hottest key takes ~7% of the draws.
#[derive(Debug, Clone)]
pub struct Zipf {
    n: u64,
    theta: f64,
    alpha: f64,
    zeta_n: f64,
    eta: f64,
}

impl Zipf {
    /// The distribution over `0..n` (n ≥ 1) with skew `theta` in (0, 1);
    /// O(n) to set up (the normalising sum).
    #[must_use]
    pub fn new(n: u64, theta: f64) -> Self {
        let n = n.max(1);
        let zeta = |count: u64| (1..=count).map(|i| 1.0 / (i as f64).powf(theta)).sum::<f64>();
        let zeta_n = zeta(n);
        let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta(2.min(n)) / zeta_n);
        Zipf { n, theta, alpha: 1.0 / (1.0 - theta), zeta_n, eta }
    }

    /// How many ranks it draws from.
    #[must_use]
    pub fn n(&self) -> u64 {
        self.n
    }

    /// One draw: rank 0 is the hottest.
    pub fn rank(&self, rng: &mut SplitMix) -> u64 {
        let u = rng.unit();
        let uz = u * self.zeta_n;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 1;
        }
        let r = self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha);
        (r as u64).min(self.n - 1)
    }
}

/// Key number `i` of the benchmark's key space.
#[must_use]
pub fn key(seed: u64, i: u64) -> [u8; 16] {
    hex16(mix(seed.wrapping_add(i).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed.rotate_left(17)))
}

/// How the engine benchmark turns key numbers into keys.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum KeyFormat {
    /// [`key`]: 16 hex digits of a mix of the number, spread over the key
    /// space; sequential numbers ([`hex16`]) for `fillseq`.
    #[default]
    Hex,
    /// db_bench's 16-byte keys, so that siftdb's figures and `RocksDB`'s
    /// are of the same bytes: the number's 8 bytes big-endian, then eight
    /// ASCII `'0'`s. Numbers `n..2n` (the absent half) are `i - n`'s key
    /// with a last byte of `'1'`: inside the tables' key range, absent.
    DbBench,
}

impl KeyFormat {
    /// The format named `s` (`hex` or `dbbench`).
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        [KeyFormat::Hex, KeyFormat::DbBench].into_iter().find(|f| f.name() == s)
    }

    /// Its name on the command line and in reports.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            KeyFormat::Hex => "hex",
            KeyFormat::DbBench => "dbbench",
        }
    }

    /// Key number `i` of a key space of `n` present keys (`i ≥ n` absent).
    #[must_use]
    pub fn key(self, seed: u64, n: u64, i: u64) -> [u8; 16] {
        match self {
            KeyFormat::Hex => key(seed, i),
            KeyFormat::DbBench => {
                let (number, last) = if i < n { (i, b'0') } else { (i - n, b'1') };
                let mut out = [b'0'; 16];
                out[..8].copy_from_slice(&number.to_be_bytes());
                out[15] = last;
                out
            }
        }
    }

    /// Key number `i` of `fillseq`, which writes keys in ascending order.
    #[must_use]
    pub fn sequential(self, i: u64) -> [u8; 16] {
        match self {
            KeyFormat::Hex => hex16(i),
            KeyFormat::DbBench => self.key(0, u64::MAX, i),
        }
    }
}

/// `v` as 16 lowercase hex digits, most significant first: ascending `v`
/// gives ascending keys.
#[must_use]
pub fn hex16(v: u64) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (j, byte) in out.iter_mut().enumerate() {
        let nibble = ((v >> (60 - 4 * j)) & 0xf) as u8;
        *byte = if nibble < 10 { b'0' + nibble } else { b'a' + nibble - 10 };
    }
    out
}

/// The value stored for key `i`: `len` bytes derived from `i`, so a reader
/// can check it got the right one.
#[must_use]
pub fn value(i: u64, len: usize) -> Vec<u8> {
    let mut rng = SplitMix::new(i ^ 0x5EED);
    (0..len).map(|_| b'a' + (rng.next_u64() % 26) as u8).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_distinct_and_fixed_length() {
        let mut seen = std::collections::HashSet::new();
        for i in 0..100_000 {
            assert!(seen.insert(key(7, i)), "duplicate key at {i}");
        }
        assert_ne!(key(7, 0), key(8, 0));
    }

    #[test]
    fn db_bench_keys_are_its_layout_and_absent_ones_fall_between() {
        let f = KeyFormat::DbBench;
        assert_eq!(&f.key(1, 1 << 20, 0x0102), b"\0\0\0\0\0\0\x01\x0200000000");
        assert_eq!(f.key(1, 10, 3), f.sequential(3));
        // Absent key 10 + 3 sorts after present key 3 and before key 4.
        assert!(f.key(1, 10, 3) < f.key(1, 10, 13) && f.key(1, 10, 13) < f.key(1, 10, 4));
        assert_eq!(KeyFormat::Hex.key(7, 10, 3), key(7, 3));
        for format in [KeyFormat::Hex, KeyFormat::DbBench] {
            assert_eq!(KeyFormat::parse(format.name()), Some(format));
        }
        assert_eq!(KeyFormat::parse("binary"), None);
    }

    #[test]
    fn zipf_draws_follow_the_power_law() {
        let (n, theta, draws) = (10_000u64, 0.99, 400_000);
        let z = Zipf::new(n, theta);
        let mut rng = SplitMix::new(3);
        let mut counts = vec![0u64; n as usize];
        for _ in 0..draws {
            counts[z.rank(&mut rng) as usize] += 1;
        }
        let zeta: f64 = (1..=n).map(|i| 1.0 / (i as f64).powf(theta)).sum();
        // The head ranks are exact in the generator; rank 9 (an
        // approximated one) and the head's total within a few percent.
        for r in [0usize, 1, 9] {
            let expected = draws as f64 / ((r + 1) as f64).powf(theta) / zeta;
            let got = counts[r] as f64;
            assert!((got - expected).abs() < 0.1 * expected, "rank {r}: {got} draws, expected {expected:.0}");
        }
        let head: u64 = counts[..100].iter().sum();
        let expected: f64 = (1..=100).map(|i| draws as f64 / (i as f64).powf(theta) / zeta).sum();
        assert!((head as f64 - expected).abs() < 0.05 * expected, "top 100: {head}, expected {expected:.0}");
        assert!(counts[n as usize / 2..].iter().sum::<u64>() > 0, "the tail is never drawn");
    }

    #[test]
    fn hex_keys_sort_as_their_numbers() {
        assert_eq!(&hex16(0xab), b"00000000000000ab");
        assert!(hex16(9) < hex16(10) && hex16(0xff) < hex16(0x100) && hex16(u64::MAX - 1) < hex16(u64::MAX));
    }
}
