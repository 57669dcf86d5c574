//! siftdb's filters against the peer crates, interleaved round by round.
//!
//! Criterion (`benches/filters.rs`) times one function after another, so a
//! change in the host's load between two functions lands on one side of a
//! ratio. This program instead alternates ours and the peer's within each
//! round, in one process, and keeps each side's best round: the ratio of
//! two minima taken over the same stretch of time. docs/measurements.md
//! keeps the runs of both, each entry with its command.
//!
//! No crate offers a Ribbon filter to compare with, so Ribbon at 7 bits/key
//! runs beside siftdb's own BinaryFuse8 instead (issue 38's bars: build at
//! most 2x, queries at most 1.5x), in the same rounds.
//!
//! Run: `cargo bench --bench peers` (about three minutes on a 2-core VM).

use std::any::Any;
use std::hint::black_box;
use std::time::Instant;

use siftdb::filter::{BinaryFuse8, BinaryFuse16, Filter, Ribbon, Xor8, Xor16};
use xorf::Filter as _;

mod common;
use common::{QuerySet, keys};

/// Keys in the sets, and how many rounds the builds get at each size.
/// (Eight at 10^7 since 2026-12-03: with four, one slow round on a noisy host
/// decided the 10^7 build ratio.)
const SIZES: [(usize, usize); 2] = [(1_000_000, 15), (10_000_000, 8)];
const QUERY_ROUNDS: usize = 40;
const PROBES: usize = 1 << 16;

/// Seconds of the fastest of the calls made so far.
#[derive(Default)]
struct Best(Option<f64>);

impl Best {
    fn time<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = black_box(f());
        let secs = start.elapsed().as_secs_f64();
        self.0 = Some(self.0.map_or(secs, |b: f64| b.min(secs)));
        out
    }

    fn secs(&self) -> f64 {
        self.0.unwrap_or(f64::NAN)
    }
}

fn report(what: &str, unit: &str, scale: f64, ours: &Best, peer: &Best, peer_name: &str) {
    println!(
        "{what:<34} siftdb {:>9.2} {unit}  {peer_name} {:>9.2} {unit}  ratio {:.3}",
        ours.secs() * scale,
        peer.secs() * scale,
        ours.secs() / peer.secs()
    );
}

fn count(probes: &[u64], contains: impl Fn(u64) -> bool) -> usize {
    probes.chunks(1024).map(|c| c.iter().filter(|&&h| contains(black_box(h))).count()).sum()
}

fn main() {
    for (n, rounds) in SIZES {
        let present = keys(0, n);
        let mut b: [Best; 9] = Default::default();
        // Each build's best comes from both places in its pair: a build
        // that follows a larger one's freed memory ran 40% slower at 10^7
        // keys (fuse8, first in its pair, after the previous round's
        // Ribbon: 735 ms against 526 for xorf's; second, 496 against 518).
        let builds: [&dyn Fn() -> Box<dyn Any>; 9] = [
            &|| Box::new(BinaryFuse8::build(&present).expect("builds")),
            &|| Box::new(xorf::BinaryFuse8::try_from(&present).expect("builds")),
            &|| Box::new(Xor8::build(&present).expect("builds")),
            &|| Box::new(xorf::Xor8::from(&present)),
            &|| Box::new(BinaryFuse16::build(&present).expect("builds")),
            &|| Box::new(xorf::BinaryFuse16::try_from(&present).expect("builds")),
            &|| Box::new(Xor16::build(&present).expect("builds")),
            &|| Box::new(xorf::Xor16::from(&present)),
            &|| Box::new(Ribbon::build(&present, 7.0).expect("builds")),
        ];
        for round in 0..rounds {
            for pair in 0..4 {
                let (first, second) =
                    if round % 2 == 0 { (2 * pair, 2 * pair + 1) } else { (2 * pair + 1, 2 * pair) };
                b[first].time(builds[first]);
                b[second].time(builds[second]);
            }
            b[8].time(builds[8]);
        }
        let ms = 1e3;
        report(&format!("build {n}, BinaryFuse8"), "ms", ms, &b[0], &b[1], "xorf");
        report(&format!("build {n}, Xor8"), "ms", ms, &b[2], &b[3], "xorf");
        report(&format!("build {n}, BinaryFuse16"), "ms", ms, &b[4], &b[5], "xorf");
        report(&format!("build {n}, Xor16"), "ms", ms, &b[6], &b[7], "xorf");
        report(&format!("build {n}, Ribbon 7 vs fuse8"), "ms", ms, &b[8], &b[0], "fuse8");
        let ribbon7 = Ribbon::build(&present, 7.0).expect("builds");
        let (fuse16, xorf_fuse16) = (
            BinaryFuse16::build(&present).expect("builds"),
            xorf::BinaryFuse16::try_from(&present).expect("builds"),
        );
        let (xor16, xorf_xor16) = (Xor16::build(&present).expect("builds"), xorf::Xor16::from(&present));

        let QuerySet { fuse8, xorf_fuse8, xor8, xorf_xor8, blocked, fastbloom } = QuerySet::new(&present);
        let absent = keys(1 << 40, PROBES);
        let hits: Vec<u64> = present.iter().step_by(7).take(PROBES).copied().collect();
        for (name, probes) in [("absent", &absent), ("present", &hits)] {
            let mut best: [Best; 11] = Default::default();
            // Ours and the peer's side by side, in pairs (Ribbon alone),
            // each pair's order swapped every other round as the builds'
            // is, so that neither side always follows the other's pass
            // over the cache.
            let queries: [&dyn Fn() -> usize; 11] = [
                &|| count(probes, |h| fuse8.contains(h)),
                &|| count(probes, |h| xorf_fuse8.contains(&h)),
                &|| count(probes, |h| xor8.contains(h)),
                &|| count(probes, |h| xorf_xor8.contains(&h)),
                &|| count(probes, |h| blocked.contains(h)),
                &|| count(probes, |h| fastbloom.contains_hash(h)),
                &|| count(probes, |h| ribbon7.contains(h)),
                &|| count(probes, |h| fuse16.contains(h)),
                &|| count(probes, |h| xorf_fuse16.contains(&h)),
                &|| count(probes, |h| xor16.contains(h)),
                &|| count(probes, |h| xorf_xor16.contains(&h)),
            ];
            for round in 0..QUERY_ROUNDS {
                best[6].time(queries[6]);
                for (ours, peer) in [(7, 8), (9, 10), (0, 1), (2, 3), (4, 5)] {
                    let (first, second) = if round % 2 == 0 { (ours, peer) } else { (peer, ours) };
                    best[first].time(queries[first]);
                    best[second].time(queries[second]);
                }
            }
            let ns = 1e9 / PROBES as f64;
            report(&format!("{name} {n}, BinaryFuse8"), "ns", ns, &best[0], &best[1], "xorf");
            report(&format!("{name} {n}, Xor8"), "ns", ns, &best[2], &best[3], "xorf");
            report(&format!("{name} {n}, BinaryFuse16"), "ns", ns, &best[7], &best[8], "xorf");
            report(&format!("{name} {n}, Xor16"), "ns", ns, &best[9], &best[10], "xorf");
            report(&format!("{name} {n}, Ribbon 7 vs fuse8"), "ns", ns, &best[6], &best[0], "fuse8");
            report(
                &format!("{name} {n}, BlockedBloom 10 bits/key"),
                "ns",
                ns,
                &best[4],
                &best[5],
                "fastbloom",
            );
        }
    }
}
