//! The `CURRENT` file: the name of the live manifest.
//!
//! ```text
//!   +---------------------------+----+
//!   | "MANIFEST-" digits (UTF-8)| \n |
//!   +---------------------------+----+
//! ```
//!
//! It is replaced atomically ([`crate::fs::write_file_atomic`]), so a reader
//! sees the old name or the new one. A missing newline means the file was not
//! written by siftdb (a torn write cannot happen through the rename), so it
//! is `Corruption`, as is any name that is not a canonical manifest name.

use std::path::Path;

use crate::fs::{FileSystem, write_file_atomic};
use crate::{Error, Result};

use super::filename::{CURRENT, FileKind, manifest_file_name, parse_file_name};

/// Points `dir/CURRENT` at `MANIFEST-{number}`, durably.
///
/// # Errors
/// `Io` from the file system.
pub fn set_current(fs: &dyn FileSystem, dir: &Path, manifest_number: u64) -> Result<()> {
    let contents = format!("{}\n", manifest_file_name(manifest_number));
    write_file_atomic(fs, dir, CURRENT, contents.as_bytes())?;
    Ok(())
}

/// Reads `dir/CURRENT` and returns the live manifest's number.
///
/// # Errors
/// `Io` if it cannot be read (including when it does not exist: the caller
/// decides whether that means "new database"); `Corruption` naming the file
/// if its contents are not one manifest name and a newline.
pub fn read_current(fs: &dyn FileSystem, dir: &Path) -> Result<u64> {
    let path = dir.join(CURRENT);
    let bytes = fs.read(&path)?;
    parse_current(&bytes).map_err(|e| e.at_file(&path, 0))
}

fn parse_current(bytes: &[u8]) -> Result<u64> {
    let Some(name) = bytes.strip_suffix(b"\n") else {
        return Err(Error::corruption(bytes.len() as u64, "CURRENT does not end with a newline"));
    };
    let name = std::str::from_utf8(name)
        .map_err(|e| Error::corruption(e.valid_up_to() as u64, "CURRENT is not UTF-8"))?;
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
        assert_eq!(std::fs::read(dir.path().join("CURRENT")).unwrap(), b"MANIFEST-000003\n");
        assert_eq!(read_current(&StdFs, dir.path()).unwrap(), 3);
        set_current(&StdFs, dir.path(), 12_345_678).unwrap();
        assert_eq!(read_current(&StdFs, dir.path()).unwrap(), 12_345_678);
    }

    #[test]
    fn garbage_is_corruption_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(read_current(&StdFs, dir.path()), Err(Error::Io(_))));
        let good = b"MANIFEST-000007\n";
        let mut cases: Vec<Vec<u8>> = (0..good.len()).map(|n| good[..n].to_vec()).collect();
        cases.extend([
            b"MANIFEST-000007\n\n".to_vec(),
            b"MANIFEST-000007\r\n".to_vec(),
            b"000007.log\n".to_vec(),
            b"MANIFEST-7\n".to_vec(),
            b"../MANIFEST-000007\n".to_vec(),
            vec![0xff, 0xfe, b'\n'],
        ]);
        // A flipped digit still names a manifest (CURRENT has no checksum;
        // opening the named file then fails); every other flip is caught.
        for i in (0..good.len()).filter(|&i| !good[i].is_ascii_digit()) {
            let mut flipped = good.to_vec();
            flipped[i] ^= 0x01;
            cases.push(flipped);
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
