//! Publishing a whole file atomically.

use std::io;
use std::path::Path;

use super::FileSystem;

/// Publishes `bytes` as `dir/name`: writes `dir/name.tmp`, fsyncs it,
/// renames it over `dir/name`, then fsyncs `dir`. A crash at any point
/// leaves either the old file or the new one, never a mix.
///
/// # Errors
/// The first failing operation's error; a leftover temp file is removed on a
/// best-effort basis.
pub fn write_file_atomic(fs: &dyn FileSystem, dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    let result = (|| {
        let mut f = fs.create(&tmp)?;
        f.write_all(bytes)?;
        f.sync()?;
        drop(f);
        fs.rename(&tmp, &dir.join(name))?;
        fs.sync_dir(dir)
    })();
    if result.is_err() && fs.exists(&tmp) {
        // Best effort: the temp name is never read as real data, so a
        // leftover is harmless, merely untidy.
        let _ = fs.remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::StdFs;

    #[test]
    fn replaces_content_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        write_file_atomic(&StdFs, dir.path(), "CURRENT", b"one").unwrap();
        write_file_atomic(&StdFs, dir.path(), "CURRENT", b"two").unwrap();
        assert_eq!(std::fs::read(dir.path().join("CURRENT")).unwrap(), b"two");
        let names: Vec<_> = StdFs.list_dir(dir.path()).unwrap();
        assert_eq!(names, vec![dir.path().join("CURRENT")]);
    }
}
