//! `siftdb`: inspect tables and databases, and measure what filters save.
//!
//! Exit codes: 0 when all is well; 1 when a check found a problem (damage
//! that `sst verify` finds is 1 wherever it is, the footer included), or
//! `db get` found no such key; 2 for a usage error, or a file or database
//! that could not be opened (missing, unreadable, not what the command
//! expects, or written by a newer siftdb).

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]
#![warn(missing_docs)]

mod bench_engine;
mod bench_filters;
mod bench_ingest;
mod bench_open;
mod bytes_arg;
mod db;
mod numbers;
mod output;
mod policy_arg;
mod readamp;
mod sst;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// siftdb: an LSM key-value store whose tables carry validated membership filters.
#[derive(Debug, Parser)]
#[command(name = "siftdb", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Benchmarks: filters on their own, or read amplification per filter policy.
    ///
    /// With no subcommand: the read-amplification benchmark, every filter
    /// policy against a no-filter baseline.
    #[command(args_conflicts_with_subcommands = true)]
    Bench {
        #[command(subcommand)]
        which: Option<BenchCommand>,
        #[command(flatten)]
        readamp: Box<readamp::Args>,
    },
    /// Inspect, check and use a database directory.
    Db {
        #[command(subcommand)]
        which: db::Command,
    },
    /// Inspect and check one table file (read-only).
    Sst {
        #[command(subcommand)]
        which: sst::Command,
    },
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// Every filter structure side by side: space, false-positive rate, build and query speed.
    Filters(bench_filters::Args),
    /// db_bench's workloads on siftdb (fill, read, read missing, seek, overwrite, read while
    /// writing): op/s, latency percentiles, write amplification, the tree's shape.
    // Boxed: its many flags would make every command as large as it.
    Engine(Box<bench_engine::Args>),
    /// Bulk loading: N keys as T tables built in parallel and one ingest, against fillrandom
    /// of the same keys, each to a settled store.
    Ingest(bench_ingest::Args),
    /// What opening an existing database costs: open time and the anonymous memory (RssAnon)
    /// the open adds, against the filters' bytes, each round a fresh process.
    Open(bench_open::Args),
}

/// How a command ended, mapped to the documented exit codes.
pub enum Outcome {
    /// Everything checked out (exit 0).
    Clean,
    /// A check found problems (exit 1).
    ProblemsFound,
    /// What was asked for is not there, e.g. `db get` of a missing key
    /// (exit 1, as `git config` does).
    NotFound,
}

/// Says why the command failed: one line on stderr, and with `--json` the
/// same as a JSON document on stdout, `{"error": …, "kind": …}` (`usage`
/// for a bad command line, `failed` for one that could not be carried out),
/// so a script reading stdout never gets nothing. The exit code is 2.
fn fail(json: bool, kind: &str, message: &str) -> ExitCode {
    eprintln!("siftdb: {message}");
    if json {
        output::print_json(&serde_json::json!({ "error": message, "kind": kind }));
    }
    ExitCode::from(2)
}

/// Clap's rendered error as one line: the message, the items it lists,
/// its tips and the usage line, joined. Its closing pointer to `--help` is
/// dropped: the usage line already says what the command takes.
fn usage_message(rendered: &str) -> String {
    let mut out = String::new();
    for raw in rendered.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with("For more information") {
            continue;
        }
        let line = line.strip_prefix("error: ").unwrap_or(line);
        // Clap indents the items of a list ("  <KEY>") under a line ending in ':'.
        let item = raw.starts_with(' ') && !line.starts_with("tip:");
        let sep = if out.is_empty() {
            ""
        } else if out.ends_with(':') {
            " "
        } else if item {
            ", "
        } else {
            "; "
        };
        out.push_str(sep);
        out.push_str(line);
    }
    out
}

fn main() -> ExitCode {
    output::exit_quietly_on_broken_pipe();
    // Every command's JSON switch is spelled `--json`, so its presence says
    // how to report even a command line that does not parse.
    let json = std::env::args().any(|a| a == "--json");
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // A bad value (a number out of range, a policy that does not parse)
        // names the flag and the problem on one line, like every other
        // usage error this tool reports itself; with `--json` every usage
        // error is a document, so scripts never parse clap's layout.
        Err(e) if e.kind() == clap::error::ErrorKind::ValueValidation || (json && e.use_stderr()) => {
            return fail(json, "usage", &usage_message(&e.render().to_string()));
        }
        Err(e) => e.exit(),
    };
    let result = match cli.command {
        Command::Bench { which: Some(BenchCommand::Filters(args)), .. } => bench_filters::run(&args),
        Command::Bench { which: Some(BenchCommand::Engine(args)), .. } => bench_engine::run(&args),
        Command::Bench { which: Some(BenchCommand::Ingest(args)), .. } => bench_ingest::run(&args),
        Command::Bench { which: Some(BenchCommand::Open(args)), .. } => bench_open::run(&args),
        Command::Bench { which: None, readamp } => readamp::run(&readamp),
        Command::Sst { which } => sst::run(&which),
        Command::Db { which } => db::run(&which),
    };
    match result {
        Ok(Outcome::Clean) => ExitCode::SUCCESS,
        Ok(Outcome::ProblemsFound | Outcome::NotFound) => ExitCode::from(1),
        Err(message) => fail(json, "failed", &message),
    }
}
