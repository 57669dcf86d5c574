//! The limits of every numeric flag, in one place: clap checks them while
//! parsing, so a bad number is one line naming the flag and its range
//! (exit 2), never an abort on a huge allocation later. README's command
//! reference lists the same ranges.

/// Keys a filter benchmark builds from: 10^8 keys is ~2.5 GB of build
/// scratch for a binary fuse filter, the most a 24 GiB machine runs
/// beside the other seven structures.
pub const MAX_FILTER_BENCH_KEYS: u64 = 100_000_000;
/// Absent keys probed by the filter benchmark and by `sst fpr` (the
/// benchmark keeps them in memory: 8 bytes each).
pub const MAX_PROBES: u64 = 100_000_000;
/// Keys `siftdb bench` loads into each policy's database (each ~116 bytes
/// on disk at the default value size).
pub const MAX_BENCH_KEYS: u64 = 1_000_000_000;
/// The fewest keys `siftdb bench` loads: below it no tree forms.
pub const MIN_BENCH_KEYS: u64 = 1000;
/// Lookups per workload (generated up front, 16 bytes each).
pub const MAX_LOOKUPS: u64 = 100_000_000;
/// Bytes per value in `siftdb bench` (every key gets one).
pub const MAX_VALUE_BYTES: u64 = 1 << 16;
/// Reader threads in `siftdb bench`.
pub const MAX_THREADS: u64 = 256;

/// `n` with thousands separators, as the help texts write limits.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A whole number from `min` to `max`, else the range in words.
fn whole(s: &str, min: u64, max: u64) -> Result<u64, String> {
    match s.trim().replace('_', "").parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(format!("must be a whole number from {} to {}", grouped(min), grouped(max))),
    }
}

/// An integer flag from `min` to `max`.
pub fn count(min: u64, max: u64) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    move |s| whole(s, min, max)
}

/// A `usize` flag from `min` to `max`.
pub fn count_usize(
    min: u64,
    max: u64,
) -> impl Fn(&str) -> Result<usize, String> + Clone + Send + Sync + 'static {
    move |s| whole(s, min, max).and_then(|n| usize::try_from(n).map_err(|e| e.to_string()))
}

/// `--limit`: at least 1 (omit the flag for no limit).
///
/// # Errors
/// What is accepted, when `s` is not a positive whole number.
pub fn limit(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err("must be a whole number of at least 1 (omit --limit for no limit)".into()),
    }
}

/// Bits per key of a Bloom-family filter, with the library's limits.
///
/// # Errors
/// The accepted range, when `s` is not a number in it (NaN and infinities
/// included).
pub fn bits_per_key(s: &str) -> Result<f64, String> {
    s.parse::<f64>().ok().and_then(|b| siftdb::filter::check_bits_per_key(b).ok()).ok_or_else(|| {
        format!(
            "must be a number from {} to {}",
            siftdb::filter::MIN_BITS_PER_KEY,
            siftdb::filter::MAX_BITS_PER_KEY
        )
    })
}

/// A fraction from 0 to 1.
///
/// # Errors
/// The accepted range, when `s` is not a number in it.
pub fn fraction(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err("must be a number from 0 to 1".into()),
    }
}
