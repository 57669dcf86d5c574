//! The house keeps its size: no source file of the library or the CLI
//! passes 500 lines, and DESIGN.md stays readable in one sitting (800
//! lines). A file that grows past its bar is split by concern (inline tests
//! go to a sibling `tests.rs`); details leave DESIGN.md for `docs/` or the
//! module that owns them. The failure names every file over its bar.

#[path = "common/source_files.rs"]
mod source_files;

use std::fs;
use std::path::{Path, PathBuf};

use source_files::rust_files;

const MAX_SOURCE_LINES: usize = 500;
const MAX_DESIGN_LINES: usize = 800;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn lines(path: &Path) -> usize {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().count()
}

#[test]
fn no_source_file_passes_500_lines() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    rust_files(&root().join("tools").join("src"), &mut files);
    assert!(files.len() > 50, "found only {} source files: is the walk broken?", files.len());
    files.sort();
    let over: Vec<String> = files
        .iter()
        .map(|f| (f, lines(f)))
        .filter(|(_, n)| *n > MAX_SOURCE_LINES)
        .map(|(f, n)| format!("{} ({n} lines)", f.strip_prefix(root()).unwrap_or(f).display()))
        .collect();
    assert!(over.is_empty(), "over {MAX_SOURCE_LINES} lines, split by concern: {}", over.join(", "));
}

#[test]
fn design_doc_stays_within_800_lines() {
    let n = lines(&root().join("DESIGN.md"));
    assert!(
        n <= MAX_DESIGN_LINES,
        "DESIGN.md has {n} lines (at most {MAX_DESIGN_LINES}): move details to docs/ or to the module that owns them"
    );
}
