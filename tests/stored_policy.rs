//! A stored policy this build cannot parse (issue 59): open, read-only
//! open and `Db` agree on one error, naming the manifest; behind a newer
//! database format it is `Unsupported`, as every unknown name is.

#[path = "common/format_patch.rs"]
mod format_patch;

use std::path::{Path, PathBuf};

use siftdb::manifest::{DB_FORMAT_VERSION, manifest_file_name, read_current};
use siftdb::{Db, Error, FilterKind, FilterPolicy, Options};

/// A database whose tables carry blocked-bloom:10 and whose stored policy
/// is `fuse8` (set by an open that wrote nothing), so the policy's text is
/// the one place `fuse8` is named; the live manifest's path.
fn db(dir: &Path) -> PathBuf {
    let with = |k| Options { filter_policy: Some(FilterPolicy::uniform(k)), ..Options::default() };
    let db = Db::open(dir, with(FilterKind::BlockedBloom { bits_per_key: 10.0 })).unwrap();
    db.put(b"a", b"1").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    Db::open(dir, with(FilterKind::BinaryFuse8)).unwrap().close().unwrap();
    dir.join(manifest_file_name(read_current(&siftdb::fs::StdFs, dir).unwrap()))
}

#[test]
fn an_unparsable_stored_policy_is_one_corruption_naming_the_manifest() {
    for bad in ["bogus", "ribbon9:7"] {
        let tmp = tempfile::tempdir().unwrap();
        let manifest = db(tmp.path());
        format_patch::set_kind_name(tmp.path(), "fuse8", bad);
        let errors: Vec<Error> = vec![
            Db::open(tmp.path(), Options::default()).unwrap_err(),
            Db::open_read_only(tmp.path(), Options::default()).unwrap_err(),
            // An explicit policy does not paper over the stored one.
            Db::open(
                tmp.path(),
                Options { filter_policy: Some(FilterPolicy::default()), ..Options::default() },
            )
            .unwrap_err(),
        ];
        for e in &errors {
            match e {
                Error::Corruption { file, what, .. } => {
                    assert_eq!(file.as_deref(), Some(manifest.as_path()), "{bad}: {e}");
                    assert!(what.starts_with("stored filter policy:") && what.contains(bad), "{bad}: {e}");
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
        assert!(errors.iter().all(|e| e.to_string() == errors[0].to_string()), "{bad}: {errors:?}");

        // Written by a newer build (a newer format first): not damage.
        format_patch::set_db_version(tmp.path(), u8::try_from(DB_FORMAT_VERSION + 1).unwrap());
        for e in [
            Db::open(tmp.path(), Options::default()).unwrap_err(),
            Db::open_read_only(tmp.path(), Options::default()).unwrap_err(),
        ] {
            assert!(matches!(e, Error::Unsupported { format: "database", .. }), "{bad}: {e:?}");
        }
    }
}
