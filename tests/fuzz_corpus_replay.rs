//! Replays the committed fuzz corpus through the fuzz targets' checks, so
//! plain `cargo test` re-runs every input the fuzzers ever saved, without
//! cargo-fuzz or a nightly toolchain.
//!
//! Regenerate the seeds (real encodings of every format) with
//! `SIFTDB_WRITE_FUZZ_SEEDS=1 cargo test --test fuzz_corpus_replay`.

#[path = "common/fuzz_checks.rs"]
mod fuzz_checks;
#[path = "common/fuzz_seeds.rs"]
mod fuzz_seeds;

use std::path::PathBuf;

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz").join("corpus")
}

fn check_for(target: &str) -> fuzz_checks::Check {
    fuzz_checks::TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .map(|(_, check)| *check)
        .unwrap_or_else(|| panic!("no check for target {target}"))
}

/// Real encodings must decode (else the check or the format is broken), and
/// must not be lost from the corpus.
#[test]
fn seeds_decode_and_are_committed() {
    let write = std::env::var_os("SIFTDB_WRITE_FUZZ_SEEDS").is_some();
    for (target, name, bytes) in fuzz_seeds::seeds() {
        // A WAL seed that is a manifest is valid framing of another type:
        // the check reads it both ways, so only require it not to panic.
        let decoded = check_for(target)(&bytes);
        if !(target == "wal_reader" && name == "torn_tail") {
            assert!(decoded, "real {target} encoding {name} does not decode cleanly");
        }
        let path = corpus_dir().join(target).join(format!("seed-{name}"));
        if write {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &bytes).unwrap();
        } else {
            assert!(path.exists(), "{} missing: run with SIFTDB_WRITE_FUZZ_SEEDS=1", path.display());
        }
    }
}

#[test]
fn every_target_has_a_corpus_and_replays_without_panic() {
    let mut files = 0;
    for (target, check) in fuzz_checks::TARGETS {
        let dir = corpus_dir().join(target);
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let mut n = 0;
        for entry in entries {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            let result = std::panic::catch_unwind(|| check(&bytes));
            assert!(result.is_ok(), "{target}: {} panicked", path.display());
            n += 1;
        }
        assert!(n > 0, "{target} has an empty corpus");
        files += n;
    }
    eprintln!("replayed {files} corpus files over {} targets", fuzz_checks::TARGETS.len());
}
