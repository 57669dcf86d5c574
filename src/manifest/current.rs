//! The `CURRENT` file: the name of the live manifest.
//!
//! ```text
//!   +---------------------------+-----+----------------------+----+
//!   | "MANIFEST-" digits (UTF-8)| ' ' | crc32 of the name as | \n |
//!   |                           |     | 8 lowercase hex      |    |
//!   +---------------------------+-----+----------------------+----+
//! ```
//!
//! It is replaced atomically ([`crate::fs::write_file_atomic`]), so a reader
//! sees the old name or the new one. Anything else — a missing newline, a
//! name that is not a canonical manifest name, a checksum that does not
//! match — is `Corruption`. The checksum matters because a damaged digit
//! could otherwise name another manifest that exists (an older one a crash
//! left behind), and the database would silently open an older state.

use std::path::Path;

use crate::fs::{FileSystem, write_file_atomic};
use crate::{Error, Result};

use super::filename::{CURRENT, FileKind, manifest_file_name, parse_file_name};

/// Points `dir/CURRENT` at `MANIFEST-{number}`, durably.
///
/// # Errors
/// `Io` from the file system.
pub fn set_current(fs: &dyn FileSystem, dir: &Path, manifest_number: u64) -> Result<()> {
    let contents = current_contents(manifest_number);
    write_file_atomic(fs, dir, CURRENT, contents.as_bytes())?;
    Ok(())
}

/// The bytes of a `CURRENT` file naming `MANIFEST-{manifest_number}`.
#[must_use]
pub fn current_contents(manifest_number: u64) -> String {
    let name = manifest_file_name(manifest_number);
    format!("{name} {:08x}\n", crc32fast::hash(name.as_bytes()))
}

/// Reads `dir/CURRENT` and returns the live manifest's number.
///
/// # Errors
/// `Io` if it cannot be read (including when it does not exist: the caller
/// decides whether that means "new database"); `Corruption` naming the file
/// if its contents are not one manifest name, its checksum and a newline.
pub fn read_current(fs: &dyn FileSystem, dir: &Path) -> Result<u64> {
    let path = dir.join(CURRENT);
    let bytes = fs.read(&path)?;
    parse_current(&bytes).map_err(|e| e.at_file(&path, 0))
}

fn parse_current(bytes: &[u8]) -> Result<u64> {
    let Some(line) = bytes.strip_suffix(b"\n") else {
        return Err(Error::corruption(bytes.len() as u64, "CURRENT does not end with a newline"));
    };
    let line = std::str::from_utf8(line)
        .map_err(|e| Error::corruption(e.valid_up_to() as u64, "CURRENT is not UTF-8"))?;
    let Some((name, crc)) = line.split_once(' ') else {
        return Err(Error::corruption(0, "CURRENT has no checksum"));
    };
    let canonical = crc.len() == 8 && crc.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if !canonical || u32::from_str_radix(crc, 16).ok() != Some(crc32fast::hash(name.as_bytes())) {
        return Err(Error::corruption(name.len() as u64 + 1, "CURRENT checksum mismatch"));
    }
    match parse_file_name(name) {
        Some((FileKind::Manifest, number)) => Ok(number),
        _ => Err(Error::corruption(0, format!("CURRENT names {name:?}, not a manifest"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::StdFs;

    #[test]
    fn round_trip_and_replace() {
        let dir = tempfile::tempdir().unwrap();
        set_current(&StdFs, dir.path(), 3).unwrap();
        let want = format!("MANIFEST-000003 {:08x}\n", crc32fast::hash(b"MANIFEST-000003"));
        assert_eq!(std::fs::read(dir.path().join("CURRENT")).unwrap(), want.as_bytes());
        assert_eq!(read_current(&StdFs, dir.path()).unwrap(), 3);
        set_current(&StdFs, dir.path(), 12_345_678).unwrap();
        assert_eq!(read_current(&StdFs, dir.path()).unwrap(), 12_345_678);
    }

    #[test]
    fn garbage_is_corruption_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(read_current(&StdFs, dir.path()), Err(Error::Io(_))));
        let good = current_contents(7).into_bytes();
        let good = good.as_slice();
        let mut cases: Vec<Vec<u8>> = (0..good.len()).map(|n| good[..n].to_vec()).collect();
        cases.extend([
            [good, b"\n"].concat(),
            b"MANIFEST-000007\n".to_vec(),
            current_contents(7).replace('\n', "\r\n").into_bytes(),
            format!("000007.log {:08x}\n", crc32fast::hash(b"000007.log")).into_bytes(),
            format!("MANIFEST-7 {:08x}\n", crc32fast::hash(b"MANIFEST-7")).into_bytes(),
            vec![0xff, 0xfe, b'\n'],
        ]);
        // Every bit flip is caught, a digit turned into another digit included.
        for i in 0..good.len() {
            for bit in 0..8 {
                let mut flipped = good.to_vec();
                flipped[i] ^= 1 << bit;
                cases.push(flipped);
            }
        }
        for case in cases {
            std::fs::write(dir.path().join("CURRENT"), &case).unwrap();
            match read_current(&StdFs, dir.path()) {
                Err(Error::Corruption { file: Some(f), .. }) => assert!(f.ends_with("CURRENT")),
                other => panic!("{:?}: {other:?}", String::from_utf8_lossy(&case)),
            }
        }
    }
}
