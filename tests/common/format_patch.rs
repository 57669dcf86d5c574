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
