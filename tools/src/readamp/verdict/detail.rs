//! The verdict's long form, behind `--wide`: for each workload, every
//! policy's saving against no filter and its memory against the one that
//! read the fewest blocks. It ranks by the mean alone; the short verdict
//! (`super`) is the one that weighs sampling error and the default.
//!
//! Memory decides what a comparison means: a policy that reads fewer blocks
//! with more bits per key has not beaten the others like for like. Policies
//! whose bits per key are within [`EQUAL_MEMORY`] of the winner's compare as
//! equals; the others carry their memory difference, and when one of them
//! reads nearly as few blocks with less memory the line says so.

use super::{EQUAL_MEMORY, saved};

/// A policy's result on one workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Contender {
    /// The policy's name.
    pub name: String,
    /// Data blocks read per lookup.
    pub blocks: f64,
    /// Data blocks read over the run (what [`saved`] prints when its share
    /// would round to all).
    pub read: u64,
    /// Filter bits per key over the tree.
    pub bits_per_key: f64,
}

/// `b`'s memory against `a`'s, when they differ by more than
/// [`EQUAL_MEMORY`]: "+12% memory" or "-8% memory".
fn memory_note(b: f64, a: f64) -> Option<String> {
    if a <= 0.0 || (b / a - 1.0).abs() <= EQUAL_MEMORY {
        return None;
    }
    Some(format!("{:+.0}% memory", (b / a - 1.0) * 100.0))
}

/// One contender as the line names it: its saving (or blocks/lookup without
/// a baseline) and bits per key.
fn described(c: &Contender, baseline: Option<f64>) -> String {
    match baseline.and_then(|b| saved(c.blocks, c.read, b)) {
        Some(s) => format!("{} saves {s} at {:.2} bits/key", c.name, c.bits_per_key),
        None => format!("{} reads {:.4} blocks/lookup at {:.2} bits/key", c.name, c.blocks, c.bits_per_key),
    }
}

/// The verdict on one workload: `baseline` is the no-filter policy's blocks
/// per lookup (if it ran), `contenders` every other policy. `None` when
/// there is nothing to compare.
#[must_use]
pub fn line(workload: &str, baseline: Option<f64>, contenders: &[Contender]) -> Option<String> {
    let mut ranked: Vec<&Contender> = contenders.iter().collect();
    ranked.sort_by(|a, b| a.blocks.total_cmp(&b.blocks).then(a.bits_per_key.total_cmp(&b.bits_per_key)));
    let (best, rest) = ranked.split_first()?;
    let mut s = format!("{workload}: {} reads the fewest data blocks", best.name);
    match baseline.and_then(|b| saved(best.blocks, best.read, b)) {
        Some(pct) => {
            s.push_str(&format!(" (saves {pct} of no filter's reads) at {:.2} bits/key", best.bits_per_key))
        }
        None => s.push_str(&format!(" ({:.4} per lookup) at {:.2} bits/key", best.blocks, best.bits_per_key)),
    }
    if !rest.is_empty() {
        let others: Vec<String> = rest
            .iter()
            .map(|c| {
                let d = described(c, baseline);
                match memory_note(c.bits_per_key, best.bits_per_key) {
                    Some(m) => format!("{d} ({m})"),
                    None => d,
                }
            })
            .collect();
        s.push_str("; ");
        s.push_str(&others.join(", "));
    }
    // A cheaper policy close behind makes the win one of memory, not of
    // filtering: say which.
    let cheaper = rest
        .iter()
        .filter(|c| c.bits_per_key < best.bits_per_key * (1.0 - EQUAL_MEMORY))
        .min_by(|a, b| a.blocks.total_cmp(&b.blocks));
    match cheaper {
        Some(c) => s.push_str(&format!(
            ". Not like for like: {} spends {:.0}% more memory than {}.",
            best.name,
            (best.bits_per_key / c.bits_per_key - 1.0) * 100.0,
            c.name
        )),
        None => s.push('.'),
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(name: &str, blocks: f64, bits_per_key: f64) -> Contender {
        Contender { name: name.into(), blocks, read: 1, bits_per_key }
    }

    #[test]
    fn names_the_fewest_reads_with_savings_and_memory() {
        let l = line("absent", Some(2.0), &[c("fuse8", 0.0092, 9.92), c("monkey:10", 0.008, 10.0)]).unwrap();
        assert_eq!(
            l,
            "absent: monkey:10 reads the fewest data blocks (saves 99.60% of no filter's reads) at 10.00 bits/key; \
             fuse8 saves 99.54% at 9.92 bits/key."
        );
    }

    #[test]
    fn marks_unequal_memory_and_says_when_the_win_is_memory() {
        let l = line("absent", Some(2.0), &[c("xor16", 0.0001, 20.1), c("fuse8", 0.0092, 9.92)]).unwrap();
        assert!(l.starts_with("absent: xor16 reads the fewest"), "{l}");
        assert!(l.contains("fuse8 saves 99.54% at 9.92 bits/key (-51% memory)"), "{l}");
        assert!(l.ends_with("Not like for like: xor16 spends 103% more memory than fuse8."), "{l}");
    }

    #[test]
    fn without_a_baseline_it_gives_blocks_per_lookup() {
        let l = line("uniform", None, &[c("bloom:10", 1.02, 10.0)]).unwrap();
        assert_eq!(
            l,
            "uniform: bloom:10 reads the fewest data blocks (1.0200 per lookup) at 10.00 bits/key."
        );
        assert_eq!(line("absent", Some(1.0), &[]), None);
    }
}
