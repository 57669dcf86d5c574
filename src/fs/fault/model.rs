//! The durability model behind [`super::FaultFs`]: what a live process sees
//! next to what a disk would still hold after a power loss.
//!
//! Files are inodes, so a rename moves the same content to a new name and a
//! handle keeps writing to its file wherever it is linked. Each inode holds
//! two byte strings: `live` (everything written) and `durable` (what the last
//! `sync` covered). Each tracked path holds two directory entries: `live`
//! (what the name points at now) and `durable` (what it pointed at when its
//! directory was last synced). A crash keeps only the durable halves.
//!
//! The model is pure: it touches no files. [`super::FaultFs`] mirrors every
//! change on the real directory and applies the result of [`Model::crash`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// An inode number, private to the model.
pub(super) type Ino = u64;

/// One file's content, live and durable.
#[derive(Debug, Default)]
struct Inode {
    live: Vec<u8>,
    durable: Vec<u8>,
}

/// What one name points at, now and as of its directory's last sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    live: Option<Ino>,
    durable: Option<Ino>,
}

/// How much of its unsynced writes a file keeps across a crash.
#[derive(Debug)]
pub(super) enum Tails<'a> {
    /// None: every file is cut back to its synced content.
    Drop,
    /// A random amount, drawn from the generator.
    Torn(&'a mut XorShift),
}

/// The model of one simulated disk.
#[derive(Debug, Default)]
pub(super) struct Model {
    inodes: BTreeMap<Ino, Inode>,
    next_ino: Ino,
    /// Only names the process touched; every other file on disk is taken as
    /// durable and unchanged.
    entries: BTreeMap<PathBuf, Entry>,
}

impl Model {
    /// Whether the model holds an entry for `path` (possibly an absent one).
    pub(super) fn is_tracked(&self, path: &Path) -> bool {
        self.entries.contains_key(path)
    }

    /// The inode `path` names now, if any.
    pub(super) fn live(&self, path: &Path) -> Option<Ino> {
        self.entries.get(path).and_then(|e| e.live)
    }

    /// Starts tracking `path`, which holds `content` on disk (`None`: absent).
    /// A file found on disk is taken as durable: it predates the simulation or
    /// survived the last crash.
    pub(super) fn track(&mut self, path: &Path, content: Option<Vec<u8>>) -> Option<Ino> {
        let ino = content.map(|bytes| self.new_inode(Inode { live: bytes.clone(), durable: bytes }));
        self.entries.insert(path.to_path_buf(), Entry { live: ino, durable: ino });
        ino
    }

    fn new_inode(&mut self, inode: Inode) -> Ino {
        let ino = self.next_ino;
        self.next_ino += 1;
        self.inodes.insert(ino, inode);
        ino
    }

    fn entry(&mut self, path: &Path) -> &mut Entry {
        self.entries.entry(path.to_path_buf()).or_insert(Entry { live: None, durable: None })
    }

    /// `path` was created or truncated to zero for writing. An existing file
    /// keeps its inode (`O_TRUNC`), so its old content stays durable until a
    /// sync says otherwise.
    pub(super) fn create(&mut self, path: &Path) -> Ino {
        if let Some(ino) = self.entry(path).live
            && let Some(inode) = self.inodes.get_mut(&ino)
        {
            inode.live.clear();
            return ino;
        }
        let ino = self.new_inode(Inode::default());
        self.entry(path).live = Some(ino);
        ino
    }

    /// `bytes` were written at `at` (`None`: at the end, `O_APPEND`). A
    /// handle from `create` writes at its own cursor, so a second handle to
    /// the same file overwrites, or leaves a hole of zeros, as the OS does.
    pub(super) fn write(&mut self, ino: Ino, at: Option<usize>, bytes: &[u8]) {
        let Some(inode) = self.inodes.get_mut(&ino) else { return };
        let at = at.unwrap_or(inode.live.len());
        let end = at.saturating_add(bytes.len());
        if inode.live.len() < end {
            inode.live.resize(end, 0);
        }
        if let Some(dst) = inode.live.get_mut(at..end) {
            dst.copy_from_slice(bytes);
        }
    }

    /// The file's content became durable.
    pub(super) fn sync(&mut self, ino: Ino) {
        if let Some(inode) = self.inodes.get_mut(&ino) {
            inode.durable.clone_from(&inode.live);
        }
    }

    /// The file was cut (or zero-extended) to `len` bytes and synced whole.
    pub(super) fn truncate(&mut self, ino: Ino, len: usize) {
        if let Some(inode) = self.inodes.get_mut(&ino) {
            inode.live.resize(len, 0);
            inode.durable.clone_from(&inode.live);
        }
    }

    /// The file `from` was renamed over `to` (directories go to
    /// [`Model::rename_dir`]).
    pub(super) fn rename(&mut self, from: &Path, to: &Path) {
        let Some(moved) = self.entry(from).live.take() else { return };
        self.entry(to).live = Some(moved);
    }

    /// The directory `from` was renamed over `to` (missing or empty), durably
    /// at once: every name under `from` moves under `to` with its live and
    /// durable entries, and whatever `to` once held (names removed but not
    /// yet dir-synced) went with the directory `to` replaced.
    pub(super) fn rename_dir(&mut self, from: &Path, to: &Path) {
        self.remove_dir(to);
        let under: Vec<PathBuf> =
            self.entries.keys().filter(|p| p.starts_with(from) && p.as_path() != from).cloned().collect();
        for old in under {
            if let (Some(entry), Ok(rest)) = (self.entries.remove(&old), old.strip_prefix(from)) {
                self.entries.insert(to.join(rest), entry);
            }
        }
    }

    /// The (empty) directory `dir` was removed, durably at once: the names
    /// once under it cannot come back.
    pub(super) fn remove_dir(&mut self, dir: &Path) {
        self.entries.retain(|p, _| !p.starts_with(dir) || p.as_path() == dir);
    }

    /// `path` was unlinked.
    pub(super) fn remove(&mut self, path: &Path) {
        self.entry(path).live = None;
    }

    /// The entries of `dir` became durable.
    pub(super) fn sync_dir(&mut self, dir: &Path) {
        for (path, entry) in &mut self.entries {
            if path.parent() == Some(dir) {
                entry.durable = entry.live;
            }
        }
        // An inode no name points at, live or durable, can never be seen
        // again: an open handle may still write to it, harmlessly.
        let linked: BTreeSet<Ino> =
            self.entries.values().flat_map(|e| [e.live, e.durable]).flatten().collect();
        self.inodes.retain(|ino, _| linked.contains(ino));
    }

    /// Simulates a power loss: returns, for every tracked path, what the disk
    /// holds there afterwards (`None`: no file), and forgets everything, as
    /// the disk now holds only durable state.
    pub(super) fn crash(&mut self, mut tails: Tails<'_>) -> Vec<(PathBuf, Option<Vec<u8>>)> {
        let survivors: BTreeSet<Ino> = self.entries.values().filter_map(|e| e.durable).collect();
        let mut contents = BTreeMap::new();
        for ino in survivors {
            if let Some(inode) = self.inodes.get(&ino) {
                let bytes = match &mut tails {
                    Tails::Drop => inode.durable.clone(),
                    Tails::Torn(rng) => torn(inode, rng),
                };
                contents.insert(ino, bytes);
            }
        }
        let out = std::mem::take(&mut self.entries)
            .into_iter()
            .map(|(path, e)| (path, e.durable.and_then(|ino| contents.get(&ino).cloned())))
            .collect();
        self.inodes.clear();
        out
    }
}

/// What a file may hold after a crash that tears its unsynced writes.
///
/// If the file only grew since its last sync, the blocks of the tail reach
/// the disk in any order but the size is written last (ext4's ordered mode,
/// XFS), so the file is its synced content plus some prefix of the tail. If it
/// was truncated by `create` since its last sync, the disk may hold the old
/// content (truncation never reached the journal) or any prefix of the new.
fn torn(inode: &Inode, rng: &mut XorShift) -> Vec<u8> {
    let keep_from = |from: usize, rng: &mut XorShift| {
        let extra = inode.live.len().saturating_sub(from);
        let kept = from.saturating_add(rng.at_most(extra));
        inode.live.iter().take(kept).copied().collect()
    };
    if inode.live.starts_with(&inode.durable) {
        keep_from(inode.durable.len(), rng)
    } else if rng.next() & 1 == 0 {
        inode.durable.clone()
    } else {
        keep_from(0, rng)
    }
}

/// A xorshift64* generator: enough to pick torn lengths reproducibly.
#[derive(Debug, Clone)]
pub(super) struct XorShift(u64);

impl XorShift {
    /// A generator for `seed`; every seed (zero included) gives a usable stream.
    pub(super) fn new(seed: u64) -> Self {
        XorShift((seed ^ 0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A uniform draw from `0..=max` (multiply-shift, no modulo bias worth
    /// caring about for test lengths).
    pub(super) fn at_most(&mut self, max: usize) -> usize {
        let span = u128::try_from(max).unwrap_or(u128::MAX).saturating_add(1);
        let draw = (u128::from(self.next()) * span) >> 64;
        usize::try_from(draw).unwrap_or(max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    fn state_of(out: &[(PathBuf, Option<Vec<u8>>)], path: &str) -> Option<Vec<u8>> {
        out.iter().find(|(q, _)| *q == p(path)).and_then(|(_, c)| c.clone())
    }

    #[test]
    fn synced_entry_and_content_survive_and_the_rest_is_dropped() {
        let mut m = Model::default();
        m.track(&p("d/a"), None);
        let a = m.create(&p("d/a"));
        m.write(a, None, b"synced");
        m.sync(a);
        m.write(a, None, b"+lost");
        m.sync_dir(&p("d"));
        m.track(&p("d/b"), None);
        let b = m.create(&p("d/b"));
        m.write(b, None, b"never linked durably");
        m.sync(b);
        let out = m.crash(Tails::Drop);
        assert_eq!(state_of(&out, "d/a"), Some(b"synced".to_vec()));
        assert_eq!(state_of(&out, "d/b"), None);
        assert!(m.entries.is_empty() && m.inodes.is_empty());
    }

    #[test]
    fn writes_at_a_cursor_overwrite_and_leave_holes_like_the_os() {
        let mut m = Model::default();
        let a = m.create(&p("d/a"));
        m.write(a, None, b"abcdef");
        m.write(a, Some(1), b"XY");
        m.write(a, Some(8), b"Z");
        m.sync(a);
        m.sync_dir(&p("d"));
        let out = m.crash(Tails::Drop);
        assert_eq!(state_of(&out, "d/a"), Some(b"aXYdef\0\0Z".to_vec()));
    }

    #[test]
    fn torn_tail_is_a_prefix_between_synced_and_written() {
        let mut rng = XorShift::new(7);
        let mut seen = BTreeSet::new();
        for _ in 0..200 {
            let inode = Inode { live: b"0123456789".to_vec(), durable: b"0123".to_vec() };
            let got = torn(&inode, &mut rng);
            assert!(got.len() >= 4 && got.len() <= 10);
            assert!(inode.live.starts_with(&got));
            seen.insert(got.len());
        }
        assert_eq!(seen.len(), 7, "every length from 4 to 10 should come up: {seen:?}");
    }

    #[test]
    fn torn_after_truncation_is_old_content_or_prefix_of_new() {
        let mut rng = XorShift::new(1);
        let (mut old, mut new) = (0, 0);
        for _ in 0..200 {
            let inode = Inode { live: b"new".to_vec(), durable: b"old!".to_vec() };
            let got = torn(&inode, &mut rng);
            if got == b"old!" {
                old += 1;
            } else {
                assert!(inode.live.starts_with(&got), "{got:?}");
                new += 1;
            }
        }
        assert!(old > 0 && new > 0);
    }

    #[test]
    fn at_most_stays_in_range_including_zero() {
        let mut rng = XorShift::new(0);
        assert!((0..100).all(|_| rng.at_most(0) == 0));
        assert!((0..1000).all(|_| rng.at_most(3) <= 3));
    }
}
