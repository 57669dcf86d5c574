//! The crate's layering holds itself: every `crate::` path in `src/` names a
//! module of a lower layer than the one it is written in (or its own), as
//! drawn in DESIGN.md, "Layers and data flow". Adding `use crate::db::…` under
//! `src/compaction/` fails here, naming the file and the line.

#[path = "common/source_files.rs"]
mod source_files;

use std::fs;
use std::path::Path;

use source_files::rust_files;

/// Layers, top first. A module may use modules of lower layers only.
/// `error` stands beside them all: every layer returns `crate::Error`, and
/// the error wraps the filter's build error.
const LAYERS: &[&[&str]] = &[
    &["db"],
    &["compaction"],
    &["merge", "sink", "table_writer", "planner"],
    &["sources"],
    &["tree", "options", "recovery"],
    &["policy"],
    &["manifest"],
    &["table", "memtable"],
    &["batch", "prefix", "range_del", "key_image"],
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
    ("KeyImage", "key_image"),
    ("RangeFilterPolicy", "key_image"),
    ("FIRST_BYTES_IMAGE", "key_image"),
    ("ValueKind", "key"),
    ("FilterPolicy", "policy"),
    ("CompressionPolicy", "policy"),
    ("Compression", "table"),
    ("RecoveryMode", "wal"),
    ("Options", "options"),
    ("MAX_KEY_BYTES", "options"),
    ("MAX_VALUE_BYTES", "options"),
    ("Compaction", "options"),
    ("Clock", "options"),
    ("SystemClock", "options"),
    ("CompactionFilter", "options"),
    ("Decision", "options"),
    ("Db", "db"),
    ("DbIter", "db"),
    ("KeyRange", "db"),
    ("LevelStats", "db"),
    ("Snapshot", "db"),
    ("Stats", "db"),
    ("TableInfo", "db"),
    ("TableRecord", "table"),
    ("TableWriter", "table_writer"),
    ("TableWritten", "table_writer"),
];

/// The layer of `module`, 0 at the top; `None` for `error` (beside all).
fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The source without its comments, and the line each byte of it came
/// from (1-based): paths are followed across lines, so a `use crate::{`
/// group spread over many lines is read whole.
fn code_of(source: &str) -> (String, Vec<usize>) {
    let (mut code, mut lines) = (String::new(), Vec::new());
    for (i, line) in source.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//") {
            continue;
        }
        let kept = line.split(" // ").next().unwrap_or(line);
        code.push_str(kept);
        code.push('\n');
        lines.resize(code.len(), i + 1);
    }
    (code, lines)
}

/// The heads of a path group's items: `{A, b::C, d::{E, F}}` gives A, b, d.
fn group_heads(group: &str) -> Vec<String> {
    let (mut out, mut depth, mut item) = (Vec::new(), 0, String::new());
    for c in group.chars() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => out.push(std::mem::take(&mut item)),
            _ => {}
        }
        if depth == 0 && c != ',' {
            item.push(c);
        }
    }
    out.push(item);
    out.iter()
        .map(|s| s.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>())
        .filter(|h| !h.is_empty() && h != "self")
        .collect()
}

/// The top-level modules `code`, written in the module at `path` (its
/// module path, `["db", "open"]` for `src/db/open/mod.rs`), names through
/// `crate::` or `super::` paths, with the byte offset of each: root
/// re-exports count as their modules, and a `super::` that stays inside
/// the file's own top-level module names nothing.
fn named(code: &str, path: &[String]) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(found) =
        ["crate::", "super::"].iter().filter_map(|p| code[at..].find(p).map(|i| at + i)).min()
    {
        at = found;
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            at += "crate::".len(); // another crate's path, or a segment already read
            continue;
        }
        let start = at;
        let mut rest = &code[at..];
        let crate_level = if let Some(r) = rest.strip_prefix("crate::") {
            rest = r;
            true
        } else {
            let mut ups = 0;
            while let Some(r) = rest.strip_prefix("super::") {
                rest = r;
                ups += 1;
            }
            let inline = inline_mods(code).iter().filter(|r| r.contains(&start)).count();
            ups >= path.len() + inline
        };
        at = code.len() - rest.len();
        if !crate_level {
            continue; // inside the file's own top-level module
        }
        let heads = match rest.strip_prefix('{') {
            Some(group) => group_heads(group),
            None => {
                group_heads(rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or(""))
            }
        };
        for head in heads {
            let module = ROOT_ITEMS
                .iter()
                .find(|(item, _)| *item == head)
                .map_or(head.clone(), |(_, m)| (*m).to_string());
            out.push((module, start));
        }
    }
    out
}

/// The byte ranges of the inline modules (`mod tests { … }`) in `code`,
/// matched by counting braces: each adds a level a `super::` climbs.
fn inline_mods(code: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = code[at..].find("mod ") {
        let open = at + i;
        at = open + 4;
        if code[..open].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name_end =
            code[at..].find(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(code.len(), |j| at + j);
        if name_end == at || !code[name_end..].trim_start().starts_with('{') {
            continue; // `mod x;`, a file of its own
        }
        let body = name_end + code[name_end..].find('{').unwrap_or(0);
        let mut depth = 0;
        let mut end = code.len();
        for (j, c) in code[body..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = body + j;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push(body..end);
    }
    out
}

/// The module path of `rel` (a path under `src/`): `db/open/mod.rs` is
/// `db::open`, `db/read.rs` is `db::read`, `wal.rs` is `wal`.
fn module_path(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel.trim_end_matches(".rs").split('/').map(str::to_owned).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// Every violation in `source`, the file `file` (its path under `src/`)
/// of top-level module `module`.
fn violations(module: &str, file: &str, source: &str) -> Vec<String> {
    let Some(own) = layer(module) else { return Vec::new() };
    let (code, lines) = code_of(source);
    let mut out = Vec::new();
    for (used, at) in named(&code, &module_path(file)) {
        if used == module || used == "error" {
            continue;
        }
        let line = lines.get(at).copied().unwrap_or(0);
        match layer(&used) {
            Some(l) if l > own => {}
            Some(_) => {
                out.push(format!(
                    "{file}:{line}: `{module}` uses `{used}`, which sits above it or beside it"
                ));
            }
            None => out.push(format!("{file}:{line}: `{module}` uses `{used}`, which no layer lists")),
        }
    }
    out
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
        let rel = rel.display().to_string().replace('\\', "/");
        problems.extend(violations(&module, &rel, &fs::read_to_string(path).unwrap()));
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
    // A group spread over lines is read whole, nested groups included, and
    // the line named is the path's.
    let multi = "use std::fmt;\nuse crate::{\n    Error,\n    db::{DbInner, Db},\n};\n";
    let bad = violations("table", "table/reader.rs", multi);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(bad[0].contains("table/reader.rs:2") && bad[0].contains("`db`"), "{bad:?}");
    // `super::` paths that leave the file's top-level module are crate paths.
    assert_eq!(violations("filter", "filter/bloom.rs", "use super::super::db::Db;").len(), 1);
    assert_eq!(violations("wal", "wal.rs", "use super::db::Db;").len(), 1);
    assert_eq!(violations("compaction", "compaction/mod.rs", "use super::db::Db;").len(), 1);
    // Inside the own module they are not.
    assert!(violations("filter", "filter/bloom.rs", "use super::{codec::X, kind::KindSpec};").is_empty());
    assert!(violations("db", "db/open/mod.rs", "use super::read::Y;").is_empty());
    // An inline module is one level deeper: its `super::super` is the
    // file's parent, not the crate.
    let inline =
        "use super::x;\nmod tests {\n    use super::super::block_builder::B;\n}\nuse super::super::db::Db;\n";
    let bad = violations("table", "table/block.rs", inline);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(bad[0].contains("table/block.rs:5"), "{bad:?}");
}

/// The layers DESIGN.md draws ("Layers and data flow"), top first: the
/// modules named (`name.rs` or `name/`) between its `▼` arrows.
fn drawn_layers(design: &str) -> Vec<Vec<String>> {
    let start = design.find("## Layers and data flow").expect("DESIGN.md has the section");
    let drawing = design[start..].split("```").nth(1).expect("the section draws the layers");
    let mut layers = vec![Vec::new()];
    for line in drawing.lines() {
        if line.trim_start().starts_with('▼') {
            layers.push(Vec::new());
            continue;
        }
        // A row names its modules first, then says what they do.
        for word in line.split_whitespace() {
            let name = word.strip_suffix(".rs").or_else(|| word.strip_suffix('/'));
            match name {
                Some(n) if !n.is_empty() && n.chars().all(|c| c.is_ascii_lowercase() || c == '_') => {
                    layers.last_mut().unwrap().push(n.to_string());
                }
                _ => break,
            }
        }
    }
    layers.retain(|l| !l.is_empty());
    layers
}

/// DESIGN.md's drawing and `LAYERS` name the same modules in the same
/// layers: the drawing is what a reader trusts, `LAYERS` what is checked.
#[test]
fn the_drawing_is_the_checked_list() {
    let design = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("DESIGN.md")).unwrap();
    let drawn = drawn_layers(&design);
    let listed: Vec<Vec<String>> =
        LAYERS.iter().map(|l| l.iter().map(|m| (*m).to_string()).collect()).collect();
    let sorted = |mut v: Vec<Vec<String>>| {
        v.iter_mut().for_each(|l| l.sort());
        v
    };
    assert_eq!(sorted(drawn), sorted(listed), "DESIGN.md's drawing (left) against LAYERS (right)");
    // The reading is no formality: a drawing missing a module, or with two
    // layers run together, differs.
    let merged = design.replacen("   ▼\n sources.rs", " sources.rs", 1);
    assert_ne!(drawn_layers(&merged).len(), LAYERS.len());
    let missing = design.replacen(" sink.rs ", " ", 1);
    assert_ne!(
        sorted(drawn_layers(&missing)),
        sorted(LAYERS.iter().map(|l| l.iter().map(|m| (*m).to_string()).collect()).collect())
    );
}
