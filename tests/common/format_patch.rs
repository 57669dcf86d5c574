//! Rewrites a file to declare another format version, checksums
//! recomputed: what a newer build would write. Shared by the library's and
//! the CLI's format-version tests.

#![allow(dead_code, reason = "each test file uses a part")]

use std::path::{Path, PathBuf};

use siftdb::codec::{seal, unseal};
use siftdb::fs::StdFs;
use siftdb::manifest::{manifest_file_name, read_current};
use siftdb::wal::{HEADER_LEN, RecordType, encode_record};

/// Declares table format `version` in the footer (bytes 36..40), its crc
/// (of bytes 0..44) recomputed.
pub fn set_table_version(path: &Path, version: u32) {
    let mut b = std::fs::read(path).unwrap();
    let f = b.len() - 56;
    b[f + 36..f + 40].copy_from_slice(&version.to_le_bytes());
    let crc = crc32fast::hash(&b[f..f + 44]);
    b[f + 44..f + 48].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(path, b).unwrap();
}

/// Declares database format `version` in the live manifest's first edit
/// (its first field, tag 9), both checksums recomputed; the manifest's path.
pub fn set_db_version(dir: &Path, version: u8) -> PathBuf {
    let path = dir.join(manifest_file_name(read_current(&StdFs, dir).unwrap()));
    let bytes = std::fs::read(&path).unwrap();
    let len = u32::from_le_bytes(bytes[4..8].try_into().unwrap()) as usize;
    let first_end = HEADER_LEN + len;
    let mut body = unseal(&bytes[HEADER_LEN..first_end]).unwrap().to_vec();
    assert_eq!(body[0], 9, "the format version is not the first field");
    body[1] = version;
    let mut out = encode_record(RecordType::Edit, &seal(body)).unwrap();
    out.extend_from_slice(&bytes[first_end..]);
    std::fs::write(&path, out).unwrap();
    path
}

/// Renames filter kind `from` to `to` everywhere in the live manifest (the
/// stored policy and every table record of that kind, in every edit;
/// checksums recomputed): tables of a kind this build has never heard of,
/// as a newer build would record them. For a small manifest, whose records
/// each fit one frame.
pub fn set_kind_name(dir: &Path, from: &str, to: &str) {
    let path = dir.join(manifest_file_name(read_current(&StdFs, dir).unwrap()));
    let bytes = std::fs::read(&path).unwrap();
    let prefixed = |name: &str| [&[u8::try_from(name.len()).unwrap()][..], name.as_bytes()].concat();
    let (old, new) = (prefixed(from), prefixed(to));
    let (mut out, mut at, mut renamed) = (Vec::new(), 0, 0);
    while at < bytes.len() {
        let len = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        let body = unseal(&bytes[at + HEADER_LEN..at + HEADER_LEN + len]).unwrap().to_vec();
        let mut edited = Vec::new();
        let mut rest = &body[..];
        while let Some(i) = rest.windows(old.len()).position(|w| w == old) {
            edited.extend_from_slice(&rest[..i]);
            edited.extend_from_slice(&new);
            rest = &rest[i + old.len()..];
            renamed += 1;
        }
        edited.extend_from_slice(rest);
        out.extend_from_slice(&encode_record(RecordType::Edit, &seal(edited)).unwrap());
        at += HEADER_LEN + len;
    }
    assert!(renamed > 0, "no kind {from}");
    std::fs::write(&path, out).unwrap();
}

/// Sets the filter-block tag of table `path` to `tag`, the block's crc
/// recomputed: a filter of a kind this build does not know.
pub fn set_filter_tag(path: &Path, tag: u8) {
    let mut b = std::fs::read(path).unwrap();
    let f = b.len() - 56;
    let at = usize::try_from(u64::from_le_bytes(b[f + 12..f + 20].try_into().unwrap())).unwrap();
    let size = u32::from_le_bytes(b[f + 20..f + 24].try_into().unwrap()) as usize;
    b[at] = tag;
    let crc = crc32fast::hash(&b[at..=at + size]);
    b[at + size + 1..at + size + 5].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(path, b).unwrap();
}

/// A copy of `tests/fixtures/NAME` (files another build wrote) in a new
/// temporary directory: the directory guard and the copy's path.
pub fn fixture_copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    std::fs::create_dir(&dir).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    let src = if src.is_dir() {
        src
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(name)
    };
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    (tmp, dir)
}

/// Rewrites a format-4 table without range tombstones as format 3 wrote
/// it: the zeros that aligned its filter block removed, the filter and
/// properties handles moved down with their blocks, the footer's crc
/// recomputed. (No block's checksum covers its offset.)
pub fn as_table_version_3(path: &Path) {
    let b = std::fs::read(path).unwrap();
    let f = b.len() - 56;
    let footer = |at: usize| u64::from_le_bytes(b[f + at..f + at + 8].try_into().unwrap());
    let size = |at: usize| u64::from(u32::from_le_bytes(b[f + at + 8..f + at + 12].try_into().unwrap()));
    let (index_end, filter_at, props_at) = (footer(0) + size(0) + 5, footer(12), footer(24));
    assert_eq!(u32::from_le_bytes(b[f + 36..f + 40].try_into().unwrap()), 4, "not a format-4 table");
    let pad = usize::try_from(filter_at - index_end).unwrap();
    let mut out = b[..index_end as usize].to_vec();
    out.extend_from_slice(&b[filter_at as usize..]);
    let f = out.len() - 56;
    out[f + 12..f + 20].copy_from_slice(&(filter_at - pad as u64).to_le_bytes());
    out[f + 24..f + 32].copy_from_slice(&(props_at - pad as u64).to_le_bytes());
    std::fs::write(path, out).unwrap();
    set_table_version(path, 3);
}
