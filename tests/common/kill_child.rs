//! The parent side of a SIGKILL crash loop: re-run this test binary as a
//! child that writes and prints `ack N` after each acknowledged write, let
//! it run, kill it, and collect what it acknowledged.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Which test of this binary is the child, and the environment variables
/// that tell it the database directory and the first number to write.
pub struct Child<'a> {
    pub test: &'a str,
    pub dir_env: &'a str,
    pub start_env: &'a str,
}

/// A kill delay in `base .. base + spread` ms, varying with the clock and
/// the cycle so kills land at different points of the child's work.
pub fn jitter(cycle: u64, base: u64, spread: u64) -> Duration {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().subsec_nanos();
    Duration::from_millis(base + (u64::from(nanos) ^ cycle.wrapping_mul(0x9e37_79b9)) % spread)
}

/// One cycle: starts the child on `dir`, waits for its first ack (so the
/// kill hits a child that is really writing, not one still starting up on
/// a loaded machine), sleeps `delay`, kills it, and returns its acks.
#[allow(dead_code, reason = "a test reading more than acks uses run_and_kill_lines")]
pub fn run_and_kill(child: &Child<'_>, dir: &Path, start: u64, delay: Duration) -> Vec<u64> {
    run_and_kill_lines(child, dir, start, delay).iter().filter_map(|l| ack(l)).collect()
}

fn ack(line: &str) -> Option<u64> {
    line.strip_prefix("ack ").and_then(|n| n.parse().ok())
}

/// [`run_and_kill`], returning every line the child printed, for a
/// child that reports more than its acks.
pub fn run_and_kill_lines(child: &Child<'_>, dir: &Path, start: u64, delay: Duration) -> Vec<String> {
    let mut process = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", child.test, "--nocapture"])
        .env(child.dir_env, dir)
        .env(child.start_env, start.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = process.stdout.take().unwrap();
    let (first_tx, first_rx) = mpsc::channel::<()>();
    let reader = thread::spawn(move || {
        let mut lines = Vec::new();
        let mut acked = false;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if !acked && ack(&line).is_some() {
                acked = true;
                let _ = first_tx.send(());
            }
            lines.push(line);
        }
        lines
    });
    let _ = first_rx.recv_timeout(Duration::from_secs(10));
    let t0 = Instant::now();
    thread::sleep(delay);
    process.kill().unwrap();
    process.wait().unwrap();
    let lines = reader.join().unwrap();
    assert!(t0.elapsed() < delay + Duration::from_secs(10), "the killed child's output never ended");
    lines
}
