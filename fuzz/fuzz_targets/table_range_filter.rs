//! Fuzz target `table_range_filter`: the body is `check_table_range_filter` in tests/common/fuzz_checks.rs,
//! shared with the corpus replay test (tests/fuzz_corpus_replay.rs).
#![no_main]

#[path = "../../tests/common/fuzz_checks.rs"]
mod fuzz_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    fuzz_checks::check_table_range_filter(data);
});
