//! Fuzz target `table_compressed_block`: the body is `check_table_compressed_block` in
//! tests/common/fuzz_checks.rs, shared with the corpus replay test (tests/fuzz_corpus_replay.rs).
#![no_main]

#[path = "../../tests/common/fuzz_checks.rs"]
mod fuzz_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    fuzz_checks::check_table_compressed_block(data);
});
