//! Rendering reports for people (aligned tables) and scripts (JSON).

/// Renders rows as a left-aligned text table with a header and a rule.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(cell.chars().count());
            }
        }
    }
    let line = |cells: Vec<&str>| -> String {
        let mut s = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let w = widths.get(i).copied().unwrap_or(0);
            if i > 0 {
                s.push_str("  ");
            }
            s.push_str(cell);
            if i + 1 < cells.len() {
                s.push_str(&" ".repeat(w.saturating_sub(cell.chars().count())));
            }
        }
        s.push('\n');
        s
    };
    let mut out = line(header.to_vec());
    out.push_str(&line(
        widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().iter().map(String::as_str).collect(),
    ));
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

/// `n` and its noun, singular for one: `1 table`, `4 tables`.
#[must_use]
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Prints a JSON value as one pretty document on stdout.
pub fn print_json(value: &serde_json::Value) {
    match serde_json::to_string_pretty(value) {
        Ok(s) => println!("{s}"),
        Err(e) => eprintln!("siftdb: could not render JSON: {e}"),
    }
}

/// Makes a closed stdout (`siftdb sst scan t.sst | head`) end the process
/// quietly with exit 0, as `ripgrep` and most command-line tools do, instead
/// of the panic `println!` raises on a broken pipe.
pub fn exit_quietly_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_line_up() {
        let t = super::table(&["a", "long"], &[vec!["xyz".into(), "1".into()]]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines, ["a    long", "---  ----", "xyz  1"]);
    }
}

/// An output file written whole when a long run ends: a temporary file
/// beside it is created at once (so an unwritable place fails before the
/// run) and renamed over it by [`PendingFile::publish`]. A run that fails
/// first leaves the earlier file as it was; the temporary is removed.
#[derive(Debug)]
pub struct PendingFile {
    path: std::path::PathBuf,
    tmp: Option<std::path::PathBuf>,
}

impl PendingFile {
    /// Creates the temporary beside `path`.
    ///
    /// # Errors
    /// One line naming `path` if the temporary cannot be created there.
    pub fn create(path: &std::path::Path) -> Result<Self, String> {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, b"").map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(PendingFile { path: path.to_path_buf(), tmp: Some(tmp) })
    }

    /// Writes `contents` to the temporary and renames it over the file.
    ///
    /// # Errors
    /// One line naming the file if the write or the rename fails.
    pub fn publish(mut self, contents: &[u8]) -> Result<(), String> {
        let Some(tmp) = self.tmp.take() else { return Ok(()) };
        let done = std::fs::write(&tmp, contents).and_then(|()| std::fs::rename(&tmp, &self.path));
        if done.is_err() {
            std::fs::remove_file(&tmp).ok();
        }
        done.map_err(|e| format!("{}: {e}", self.path.display()))
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            std::fs::remove_file(tmp).ok();
        }
    }
}

pub use siftdb::codec::iso8601_utc;

/// `text` broken between words into lines of at most `width` characters
/// (a longer word stands alone), the first starting with `first` and the
/// rest with `rest`; each line ends in a newline.
#[must_use]
pub fn wrap(text: &str, width: usize, first: &str, rest: &str) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line = rest.to_string();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    if !empty {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod wrap_tests {
    use super::wrap;

    #[test]
    fn lines_fit_and_keep_every_word() {
        let text =
            "absent: fuse8 reads the fewest data blocks (99.70% fewer than no filter) at 10.61 bits/key";
        let w = wrap(text, 40, "  ", "    ");
        assert!(w.lines().all(|l| l.chars().count() <= 40), "{w}");
        assert!(w.starts_with("  absent:") && w.lines().skip(1).all(|l| l.starts_with("    ")), "{w}");
        assert_eq!(w.split_whitespace().collect::<Vec<_>>(), text.split_whitespace().collect::<Vec<_>>());
    }
}

/// Removes a benchmark's default temp directory when the run ends, however
/// it ends.
pub struct RemoveOnDrop(pub std::path::PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        // Best effort: a leftover temp dir is untidy, not harmful.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A benchmark's working directory: `dir` if given (it must be empty or
/// absent), else a temp directory named for `name` and the process,
/// removed when the returned guard drops. Created either way.
///
/// # Errors
/// A one-line message if `dir` holds anything or cannot be created.
pub fn bench_dir(
    dir: Option<&std::path::Path>,
    name: &str,
) -> Result<(std::path::PathBuf, Option<RemoveOnDrop>), String> {
    let (root, cleanup) = match dir {
        Some(dir) if std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some()) => {
            return Err(format!(
                "{}: exists and is not empty; choose an empty or new directory",
                dir.display()
            ));
        }
        Some(dir) => (dir.to_path_buf(), None),
        None => {
            let dir = std::env::temp_dir().join(format!("siftdb-bench-{name}-{}", std::process::id()));
            (dir.clone(), Some(RemoveOnDrop(dir)))
        }
    };
    std::fs::create_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    Ok((root, cleanup))
}
