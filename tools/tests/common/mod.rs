//! Helpers the CLI tests share: run the `siftdb` binary, read its JSON,
//! and snapshot a directory to show a command wrote nothing.

#![allow(dead_code, reason = "each test file uses a part")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// Runs `siftdb ARGS` to completion.
pub fn siftdb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_siftdb")).args(args).output().unwrap()
}

/// Runs `siftdb ARGS`, expecting one JSON document on stdout: (exit code, document).
pub fn run_json(args: &[&str]) -> (i32, Value) {
    let out = siftdb(args);
    let text = String::from_utf8(out.stdout).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    (out.status.code().unwrap(), v)
}

/// A path as the `&str` argument of a command.
pub fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Every file of `dir` with its bytes, sorted by path.
pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.clone(), std::fs::read(p).unwrap()))
        .collect();
    v.sort();
    v
}

/// The files of `dir` whose extension is `ext`, sorted by name (for table
/// and log files, oldest first).
pub fn files_with_extension(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    files
}
