//! `siftdb sst fpr`: the filter's false-positive rate, measured on random
//! keys the table does not hold, beside the rate theory predicts.

use std::path::PathBuf;

use serde_json::json;
use siftdb::table::{FilterAnswer, FilterStatus, Table};

use super::info::{fmt_rate, status_name};
use super::open::{open_table, problem_json};
use crate::Outcome;
use crate::output;

/// Arguments of `sst fpr`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The table file.
    file: PathBuf,
    /// Absent keys to probe (1 to 10^8).
    #[arg(long, default_value_t = 100_000, value_parser = crate::numbers::count(1, crate::numbers::MAX_PROBES))]
    probes: u64,
    /// Seed of the random key generator (same seed, same keys).
    #[arg(long, default_value_t = 0x5eed)]
    seed: u64,
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
}

/// splitmix64: a tiny, well-mixed generator; enough for probe keys.
pub fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Whether the table holds any version of `key`, found by reading data
/// (never trusting the filter).
///
/// # Errors
/// `Corruption` if a data block on the way is damaged.
fn holds(table: &Table, key: &[u8]) -> siftdb::Result<bool> {
    let mut it = table.iter();
    it.seek(key)?;
    match it.next() {
        Some(Ok(e)) => Ok(e.user_key.as_ref() == key),
        Some(Err(e)) => Err(e),
        None => Ok(false),
    }
}

/// The 95% Wilson score interval for `hits` successes in `n` trials.
#[expect(clippy::cast_precision_loss, reason = "probe counts are far below 2^52")]
fn wilson(hits: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (n, p, z) = (n as f64, hits as f64 / n as f64, 1.96_f64);
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Runs `sst fpr`. A filter dropped as corrupt, or a damaged data block
/// met while checking that probe keys are absent, is a problem (exit 1);
/// the measurement up to that point is still shown.
///
/// # Errors
/// A one-line message if the file is not a readable table.
pub fn run(a: &Args) -> Result<Outcome, String> {
    let table = open_table(&a.file)?;
    let details = table.filter_details();
    let dropped = match &details.status {
        FilterStatus::Dropped(why) => Some(why.clone()),
        _ => None,
    };
    let usable = details.status == FilterStatus::Loaded;
    let mut state = a.seed;
    let (mut probed, mut positives, mut skipped_present) = (0u64, 0u64, 0u64);
    let mut error = None;
    let max_attempts = a.probes.saturating_mul(4).max(1000);
    let mut attempts = 0u64;
    while usable && probed < a.probes && attempts < max_attempts {
        attempts += 1;
        let mut key = [0u8; 16];
        key[..8].copy_from_slice(&next(&mut state).to_le_bytes());
        key[8..].copy_from_slice(&next(&mut state).to_le_bytes());
        match holds(&table, &key) {
            Ok(true) => {
                skipped_present += 1;
                continue;
            }
            Ok(false) => {}
            Err(e) => {
                error = Some(problem_json(&a.file, &e));
                break;
            }
        }
        probed += 1;
        if table.filter_answer(&key) == FilterAnswer::MayContain {
            positives += 1;
        }
    }
    #[expect(clippy::cast_precision_loss, reason = "probe counts are far below 2^52")]
    let measured = if probed == 0 { None } else { Some(positives as f64 / probed as f64) };
    let (lo, hi) = wilson(positives, probed);
    let ratio = match (measured, details.theoretical_fpr) {
        (Some(m), Some(t)) if t > 0.0 => Some(m / t),
        _ => None,
    };
    let doc = json!({
        "path": a.file.display().to_string(),
        "filter_kind": details.kind.map_or_else(|| table.properties().filter_kind.clone(), |k| k.to_string()),
        "filter_status": status_name(&details.status),
        "filter_usable": usable,
        "dropped_reason": dropped,
        "bits_per_key": details.bits_per_key,
        "probes": probed,
        "seed": a.seed,
        "skipped_present": skipped_present,
        "false_positives": positives,
        "measured_fpr": measured,
        "ci95_low": measured.map(|_| lo),
        "ci95_high": measured.map(|_| hi),
        "theoretical_fpr": details.theoretical_fpr,
        "measured_over_theoretical": ratio,
        "error": error,
    });
    if a.json {
        output::print_json(&doc);
    } else {
        println!("table            {}", a.file.display());
        println!(
            "filter           {} ({:.3} bits/key)",
            doc["filter_kind"].as_str().unwrap_or("-"),
            details.bits_per_key
        );
        let unmeasured = "                 nothing to measure: every lookup reads the index and a data block";
        match &details.status {
            FilterStatus::Dropped(why) => {
                println!("DROPPED          the filter block is corrupt and was not loaded ({why})");
                println!("{unmeasured}");
            }
            FilterStatus::None => {
                println!("no filter        the table was written without one\n{unmeasured}")
            }
            FilterStatus::Unknown => {
                println!("unknown filter   a kind or version this build cannot read\n{unmeasured}");
            }
            FilterStatus::Loaded => {
                println!(
                    "probes           {probed} absent keys (seed {}, {skipped_present} present keys skipped)",
                    a.seed
                );
                println!("false positives  {positives}");
                match measured {
                    Some(m) => println!(
                        "measured FPR     {} (95% CI {} .. {})",
                        fmt_rate(Some(m)),
                        fmt_rate(Some(lo)),
                        fmt_rate(Some(hi))
                    ),
                    None => println!("measured FPR     - (no absent key was probed)"),
                }
            }
        }
        println!("theoretical FPR  {}", fmt_rate(details.theoretical_fpr));
        if let Some(r) = ratio {
            println!("measured/theory  {r:.3}");
        }
        if let Some(e) = &error {
            println!("problem          {}", e["what"].as_str().unwrap_or_default());
        }
    }
    Ok(if dropped.is_some() || error.is_some() { Outcome::ProblemsFound } else { Outcome::Clean })
}
