//! `siftdb bench open DIR`: what opening an existing database costs, in
//! time and in the anonymous memory (`RssAnon`) the open adds (issue 66:
//! filters read in place from the tables' mappings should add little of
//! it, at most 0.3 of their bytes).
//!
//! Each round is a fresh process, this same executable run again with a
//! hidden `--child` flag: a process that has opened the database before
//! keeps pages its allocator freed, and would hide what the next open
//! takes. The child reads `RssAnon` from /proc/self/status, opens the
//! database read-only, reads it again, and prints one JSON line with the
//! open's wall time and the database's filter bytes; the parent gathers
//! the lines and reports each round and the medians. The tables' pages
//! come from the page cache as the machine has it: a first round may read
//! them from disk, and its time shows it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::{Value, json};
use siftdb::{Db, Options};
use siftdb_cli::summary::median;
use siftdb_cli::workloads::anonymous_resident_bytes;

use crate::Outcome;
use crate::numbers;
use crate::output;
use crate::readamp::Machine;

/// Options of `siftdb bench open`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The database directory (opened read-only: nothing is written).
    dir: PathBuf,
    /// Rounds, each a fresh process opening the database (1 to 99); the
    /// figures are the medians.
    #[arg(long, default_value_t = 5, value_parser = numbers::count_usize(1, 99))]
    rounds: usize,
    /// One JSON document on stdout.
    #[arg(long)]
    json: bool,
    /// Be one round: open, measure, print one JSON line (what the parent
    /// runs in each fresh process).
    #[arg(long, hide = true)]
    child: bool,
}

/// One round, as its child process reported it.
struct Round {
    open_seconds: f64,
    rss_before: Option<u64>,
    rss_added: Option<u64>,
    filter_bytes: u64,
    heap: (u64, u64),
    tables: u64,
}

impl Round {
    /// `RssAnon` added over filter bytes; `None` without either.
    #[expect(clippy::cast_precision_loss, reason = "a ratio for display")]
    fn ratio(&self) -> Option<f64> {
        let added = self.rss_added?;
        (self.filter_bytes > 0).then(|| added as f64 / self.filter_bytes as f64)
    }

    fn to_json(&self) -> Value {
        json!({
            "open_seconds": self.open_seconds,
            "rss_anon_before_bytes": self.rss_before,
            "rss_anon_added_bytes": self.rss_added,
            "filter_bytes": self.filter_bytes,
            "rss_anon_per_filter_byte": self.ratio(),
            "heap_bytes": { "filters": self.heap.0, "indexes": self.heap.1 },
            "tables": self.tables,
        })
    }

    fn from_json(v: &Value) -> Option<Round> {
        Some(Round {
            open_seconds: v["open_seconds"].as_f64()?,
            rss_before: v["rss_anon_before_bytes"].as_u64(),
            rss_added: v["rss_anon_added_bytes"].as_u64(),
            filter_bytes: v["filter_bytes"].as_u64()?,
            heap: (v["heap_bytes"]["filters"].as_u64()?, v["heap_bytes"]["indexes"].as_u64()?),
            tables: v["tables"].as_u64()?,
        })
    }
}

/// Runs `siftdb bench open`, or one round of it with `--child`.
///
/// # Errors
/// A one-line message if the database cannot be opened (a round's own
/// message), or a round's process cannot be run or says nothing readable.
pub fn run(args: &Args) -> Result<Outcome, String> {
    if args.child {
        let round = child(&args.dir)?;
        println!("{}", round.to_json());
        return Ok(Outcome::Clean);
    }
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let load_start = Machine::load_average();
    let mut rounds = Vec::with_capacity(args.rounds);
    for r in 0..args.rounds {
        if !args.json {
            eprintln!("round {} of {}", r + 1, args.rounds);
        }
        rounds.push(spawn_round(&args.dir)?);
    }
    let machine = Machine {
        cores,
        load_start,
        load_end: Machine::load_average(),
        ribbon_simd: siftdb::filter::Ribbon::simd(),
    };
    report(args, &rounds, &machine);
    Ok(Outcome::Clean)
}

/// One round, in this process: what the open adds and how long it takes.
fn child(dir: &Path) -> Result<Round, String> {
    let before = anonymous_resident_bytes();
    let start = Instant::now();
    let db = Db::open_read_only(dir, Options::default()).map_err(|e| crate::db::describe(dir, &e))?;
    let open_seconds = start.elapsed().as_secs_f64();
    let after = anonymous_resident_bytes();
    let stats = db.stats();
    db.close().map_err(|e| crate::db::describe(dir, &e))?;
    Ok(Round {
        open_seconds,
        rss_before: before,
        // Freed pages a later allocation reuses can make the second reading
        // the smaller; the open then added nothing.
        rss_added: before.zip(after).map(|(b, a)| a.saturating_sub(b)),
        filter_bytes: stats.filter_bytes(),
        heap: stats.heap_bytes(),
        tables: stats.levels.iter().map(|l| l.tables).sum(),
    })
}

/// Runs this executable as one round's child and reads its line.
fn spawn_round(dir: &Path) -> Result<Round, String> {
    let exe = std::env::current_exe().map_err(|e| format!("bench open: this executable: {e}"))?;
    let out = Command::new(&exe)
        .args(["bench", "open", "--child"])
        .arg(dir)
        .output()
        .map_err(|e| format!("bench open: running {}: {e}", exe.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let why = stderr.lines().last().unwrap_or("no message").trim_start_matches("siftdb: ");
        return Err(why.to_string());
    }
    let line = stdout.lines().rfind(|l| !l.trim().is_empty()).unwrap_or_default();
    serde_json::from_str::<Value>(line)
        .ok()
        .as_ref()
        .and_then(Round::from_json)
        .ok_or_else(|| format!("bench open: a round printed {line:?}, not its figures"))
}

fn report(args: &Args, rounds: &[Round], machine: &Machine) {
    let med = |f: &dyn Fn(&Round) -> Option<f64>| median(rounds.iter().filter_map(f).collect());
    let open = med(&|r| Some(r.open_seconds));
    #[expect(clippy::cast_precision_loss, reason = "byte counts summarised as medians")]
    #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "a median of byte counts")]
    let added = med(&|r| r.rss_added.map(|b| b as f64)).map(|b| b.round() as u64);
    let ratio = med(&Round::ratio);
    let last = rounds.last();
    let filter_bytes = last.map_or(0, |r| r.filter_bytes);
    let heap = last.map_or((0, 0), |r| r.heap);
    let tables = last.map_or(0, |r| r.tables);
    if args.json {
        output::print_json(&json!({
            "path": args.dir.display().to_string(),
            "rounds": rounds.len(),
            "tables": tables,
            "filter_bytes": filter_bytes,
            "heap_bytes": { "filters": heap.0, "indexes": heap.1 },
            "open_seconds": open,
            "rss_anon_added_bytes": added,
            "rss_anon_per_filter_byte": ratio,
            "per_round": rounds.iter().map(Round::to_json).collect::<Vec<_>>(),
            "machine": {
                "cores": machine.cores,
                "load_average_start": machine.load_start,
                "load_average_end": machine.load_end,
                "times_unreliable": machine.overloaded().is_some(),
            },
        }));
        return;
    }
    let bytes = |b: Option<u64>| b.map_or_else(|| "-".to_string(), |b| b.to_string());
    let share = |r: Option<f64>| r.map_or_else(|| "-".to_string(), |r| format!("{r:.3}"));
    println!(
        "{}: {}, {} bytes of filters (heap held once open: filters {}, indexes {}); {}, each a fresh process opening it read-only",
        args.dir.display(),
        output::count(tables, "table", "tables"),
        filter_bytes,
        heap.0,
        heap.1,
        output::count(rounds.len() as u64, "round", "rounds"),
    );
    let mut rows: Vec<Vec<String>> = rounds
        .iter()
        .enumerate()
        .map(|(i, r)| {
            vec![
                (i + 1).to_string(),
                format!("{:.2}", r.open_seconds * 1e3),
                bytes(r.rss_added),
                bytes(Some(r.filter_bytes)),
                share(r.ratio()),
            ]
        })
        .collect();
    rows.push(vec![
        "median".into(),
        open.map_or_else(|| "-".into(), |s| format!("{:.2}", s * 1e3)),
        bytes(added),
        filter_bytes.to_string(),
        share(ratio),
    ]);
    print!(
        "{}",
        output::table(&["round", "open ms", "RssAnon added", "filter bytes", "added / filter bytes"], &rows)
    );
    let load = |l: Option<f64>| l.map_or_else(|| "unknown".to_string(), |v| format!("{v:.2}"));
    println!(
        "machine: {} cores, load average {} at start and {} at end{}",
        machine.cores,
        load(machine.load_start),
        load(machine.load_end),
        if machine.overloaded().is_some() {
            " (busier than its cores: times are not the code's alone)"
        } else {
            ""
        }
    );
}
