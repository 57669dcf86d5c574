//! The crate's layering holds itself: every `crate::` path in `src/` names a
//! module of a lower layer than the one it is written in (or its own), as
//! drawn in DESIGN.md, "Layers and data flow". Adding `use crate::db::…` under
//! `src/compaction/` fails here, naming the file and the line.

use std::fs;
use std::path::{Path, PathBuf};

/// Layers, top first. A module may use modules of lower layers only.
/// `error` stands beside them all: every layer returns `crate::Error`, and
/// the error wraps the filter's build error.
const LAYERS: &[&[&str]] = &[
    &["db"],
    &["compaction"],
    &["merge", "sink"],
    &["sources"],
    &["tree", "options", "recovery"],
    &["policy"],
    &["manifest"],
    &["table", "memtable"],
    &["batch", "prefix"],
    &["filter", "wal"],
    &["frame"],
    &["codec", "key", "fs"],
];

/// Items the crate root re-exports, and the module each comes from.
const ROOT_ITEMS: &[(&str, &str)] = &[
    ("Error", "error"),
    ("Result", "error"),
    ("WriteBatch", "batch"),
    ("BatchOp", "batch"),
    ("FilterKind", "filter"),
    ("PrefixExtractor", "prefix"),
    ("MAX_FIXED_PREFIX", "prefix"),
    ("ValueKind", "key"),
    ("FilterPolicy", "policy"),
    ("RecoveryMode", "wal"),
    ("Options", "options"),
    ("MAX_KEY_BYTES", "options"),
    ("MAX_VALUE_BYTES", "options"),
    ("Db", "db"),
    ("DbIter", "db"),
    ("KeyRange", "db"),
    ("LevelStats", "db"),
    ("Snapshot", "db"),
    ("Stats", "db"),
    ("TableInfo", "db"),
    ("TableRecord", "table"),
];

/// The layer of `module`, 0 at the top; `None` for `error` (beside all).
fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The modules a line names through `crate::`: `crate::x::…`, `crate::Item`
/// (a root re-export) and `crate::{A, b::C}`. Comments are skipped.
fn named(line: &str) -> Vec<String> {
    let code = line.trim_start();
    if code.starts_with("//") {
        return Vec::new();
    }
    let code = code.split(" // ").next().unwrap_or(code);
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // e.g. `some_crate::`
        }
        let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            group[..end].split(',').map(str::trim).filter(|s| !s.is_empty()).collect()
        } else {
            vec![rest]
        };
        for name in names {
            let head: String = name.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if head.is_empty() || head == "self" {
                continue;
            }
            let module = ROOT_ITEMS
                .iter()
                .find(|(item, _)| *item == head)
                .map_or(head.clone(), |(_, m)| (*m).to_string());
            out.push(module);
        }
    }
    out
}

/// Every violation in `source`, written in module `module`.
fn violations(module: &str, file: &str, source: &str) -> Vec<String> {
    let Some(own) = layer(module) else { return Vec::new() };
    let mut out = Vec::new();
    for (i, line) in source.lines().enumerate() {
        for used in named(line) {
            if used == module || used == "error" {
                continue;
            }
            match layer(&used) {
                Some(l) if l > own => {}
                Some(_) => out.push(format!(
                    "{file}:{}: `{module}` uses `{used}`, which sits above it or beside it",
                    i + 1
                )),
                None => out.push(format!("{file}:{}: `{module}` uses `{used}`, which no layer lists", i + 1)),
            }
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_module_uses_only_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut problems = Vec::new();
    let mut modules = std::collections::BTreeSet::new();
    for path in &files {
        let rel = path.strip_prefix(&src).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" {
            continue;
        }
        assert!(
            layer(&module).is_some() || module == "error",
            "src/{module} is in no layer: add it to LAYERS here and to the drawing in DESIGN.md"
        );
        modules.insert(module.clone());
        problems.extend(violations(&module, &rel.display().to_string(), &fs::read_to_string(path).unwrap()));
    }
    assert!(problems.is_empty(), "layering broken:\n{}", problems.join("\n"));
    // Every layer's modules exist, so the list cannot drift from the tree.
    for module in LAYERS.iter().flat_map(|l| l.iter()) {
        assert!(modules.contains(*module), "LAYERS lists `{module}`, which src/ does not have");
    }
}

/// The check catches what it is for: compaction reaching up into the
/// database, a table reaching into the tree, a grouped or root import.
#[test]
fn a_forbidden_import_fails() {
    let bad = violations("compaction", "compaction/executor.rs", "use crate::db::DbInner;\n");
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(bad[0].contains("compaction/executor.rs:1") && bad[0].contains("`db`"), "{bad:?}");
    assert_eq!(violations("table", "table/reader.rs", "    let t: crate::tree::TableFile;").len(), 1);
    assert_eq!(violations("filter", "filter/bloom.rs", "use crate::{Error, Db};").len(), 1);
    assert_eq!(violations("sources", "sources.rs", "use crate::{merge::Merge, key::SeqNo};").len(), 1);
    assert_eq!(violations("memtable", "memtable/mod.rs", "use crate::{Error, Result, WriteBatch};").len(), 0);
    // Comments may mention anything; other crates' paths are not ours.
    assert!(violations("wal", "wal/format.rs", "    /// A [`crate::manifest::VersionEdit`].").is_empty());
    assert!(violations("table", "table/mod.rs", "use other_crate::db::Thing;").is_empty());
    // A module of one layer may not use another of the same layer.
    assert_eq!(violations("merge", "merge.rs", "use crate::sink::TableSink;").len(), 1);
}
