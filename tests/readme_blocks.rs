//! Every Rust block in the README pastes into a fresh `main.rs` (issue 29):
//! no rustdoc-hidden lines (`# …`), a `fn main`, and only the crate's own
//! imports. The blocks themselves compile and run as doctests (`lib.rs`
//! includes the README as documentation).

#[test]
fn readme_rust_blocks_paste_as_they_are() {
    let readme = include_str!("../README.md");
    let mut blocks = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in readme.lines() {
        match (&mut current, line.trim_start()) {
            (None, "```rust") => current = Some(Vec::new()),
            (Some(_), "```") => blocks.push(current.take().unwrap()),
            (Some(block), _) => block.push(line),
            (None, _) => {}
        }
    }
    assert!(blocks.len() >= 2, "the README's Rust blocks were not found");
    for (i, block) in blocks.iter().enumerate() {
        for line in block {
            let t = line.trim_start();
            assert!(!(t.starts_with("# ") || t == "#"), "block {i} has a hidden doctest line: {line}");
        }
        assert!(block.iter().any(|l| l.contains("fn main(")), "block {i} has no fn main");
        for line in block.iter().filter(|l| l.trim_start().starts_with("use ")) {
            assert!(
                line.contains("siftdb::") || line.contains("std::"),
                "block {i} imports more than siftdb: {line}"
            );
        }
    }
}
