//! The database format version a table's filter kind needs.
//!
//! The manifest names each table's filter kind as text ("ribbon:7"). A
//! build that does not know a name cannot tell it from damage, so every
//! kind carries the database format version that introduced it
//! ([`FilterKind::first_db_format`](crate::filter::FilterKind::first_db_format), in the registry of
//! `src/filter/kind.rs`), and an edit that adds a table of a kind newer
//! than the version the database records raises that version in the same
//! edit. Tag 9 is encoded first in every edit, so an older build meets
//! "format 7" before the name it does not know, and reports `Unsupported`.
//!
//! A build at the current version writes its version into every manifest
//! it starts, so today the raise happens only for a database whose
//! manifest an older build started and this build appends to without
//! rolling it (no such path exists yet); the check is here so that a
//! future lazy-upgrade path cannot forget it.

use super::VersionEdit;

/// The format version `edit` must record for a database that records
/// `recorded` (`None` means version 1): `Some(v)` when a table it adds has
/// a kind newer than both `recorded` and whatever version `edit` already
/// carries, `None` when nothing needs raising.
#[must_use]
pub fn raise_for_kinds(edit: &VersionEdit, recorded: Option<u32>) -> Option<u32> {
    let needed = edit.added.iter().map(|(_, t)| t.filter.first_db_format()).max()?;
    let have = recorded.unwrap_or(1).max(edit.format_version.unwrap_or(0));
    (needed > have).then_some(needed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::FilterKind;
    use crate::manifest::DB_FORMAT_VERSION;
    use crate::manifest::edit::tests::table;

    /// Every kind the registry knows, by name, with the database format
    /// version that introduced it. Append-only: a kind added to the
    /// registry without a row here fails `every_kind_names_its_version`,
    /// and a row's version never changes once released.
    const FIRST_FORMAT: &[(&str, u32)] = &[
        ("bloom", 1),
        ("blocked-bloom", 1),
        ("xor8", 1),
        ("xor16", 1),
        ("fuse8", 1),
        ("fuse16", 1),
        // Added while builds wrote format 5: builds at 5 without it exist.
        ("ribbon", 6),
    ];

    fn name(kind: FilterKind) -> String {
        kind.to_string().split(':').next().unwrap_or_default().to_owned()
    }

    #[test]
    fn every_kind_names_its_version() {
        let registry: Vec<(String, u32)> =
            FilterKind::ALL.iter().map(|k| (name(*k), k.first_db_format())).collect();
        let frozen: Vec<(String, u32)> = FIRST_FORMAT.iter().map(|&(n, v)| (n.to_owned(), v)).collect();
        assert_eq!(registry, frozen, "a kind was added or changed without its row in FIRST_FORMAT");
        for (n, v) in &registry {
            assert!((1..=DB_FORMAT_VERSION).contains(v), "{n}: version {v} is not one this build writes");
        }
        assert_eq!(FilterKind::None.first_db_format(), 1);
    }

    #[test]
    fn an_edit_adding_a_newer_kind_raises_the_version() {
        let mut old = table(1, b"a", b"b");
        old.filter = FilterKind::BinaryFuse8;
        let mut ribbon = table(2, b"c", b"d");
        ribbon.filter = FilterKind::Ribbon { bits_per_key: 7.0 };
        let only_old = VersionEdit { added: vec![(0, old.clone())], ..VersionEdit::default() };
        let with_ribbon = VersionEdit { added: vec![(0, old), (1, ribbon)], ..VersionEdit::default() };

        assert_eq!(raise_for_kinds(&only_old, Some(5)), None);
        assert_eq!(raise_for_kinds(&only_old, None), None);
        assert_eq!(raise_for_kinds(&with_ribbon, Some(5)), Some(6));
        assert_eq!(raise_for_kinds(&with_ribbon, None), Some(6));
        assert_eq!(raise_for_kinds(&with_ribbon, Some(6)), None);
        assert_eq!(raise_for_kinds(&VersionEdit::default(), Some(1)), None, "nothing added");
        let carries = VersionEdit { format_version: Some(6), ..with_ribbon };
        assert_eq!(raise_for_kinds(&carries, Some(5)), None, "the edit raises it already");
    }
}
