//! What the engine benchmark asks of a key-value store: the handful of
//! calls db_bench's workloads make, so that siftdb and its peers run the
//! very same driver ([`crate::workloads`]) in one process.

use std::path::Path;

/// The tree's shape when the reads began.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shape {
    /// Tables in level 0, each of which a miss probes.
    pub l0_tables: u64,
    /// Tables in the whole tree.
    pub tables: u64,
    /// Tables per level, level 0 first; empty when the engine does not say.
    pub per_level: Vec<u64>,
    /// Bytes of the filters the tables carry, when the engine says.
    pub filter_bytes: Option<u64>,
    /// Bytes of the store's files on disk (the driver measures them).
    pub disk_bytes: Option<u64>,
    /// Growth of the process's anonymous memory (resident, not file-backed:
    /// heap, not mapped tables) from before the store was opened; the
    /// driver measures it, on Linux.
    pub heap_bytes: Option<u64>,
    /// What each level was written since the store opened, level 0 first
    /// (siftdb's `LevelStats`); empty when the engine does not say.
    pub writes_by_level: Vec<LevelWrites>,
    /// Microseconds writes waited on flushes and compactions since the
    /// store opened (siftdb's `Stats::write_stall_micros`), when it says.
    pub write_stall_micros: Option<u64>,
}

/// What flushes and compactions wrote to one level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LevelWrites {
    /// Flushes (level 0), merges and refreshes that wrote to it.
    pub jobs: u64,
    /// Bytes of the level above merged into it.
    pub merged_in: u64,
    /// Bytes of its own tables rewritten.
    pub rewritten: u64,
    /// Bytes written to it.
    pub written: u64,
    /// Bytes of tables moved into it as they were.
    pub moved_in: u64,
}

/// Bytes an engine wrote, for write amplification.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Written {
    /// Key and value bytes the application handed over.
    pub user: u64,
    /// Table bytes written by flushes and compactions.
    pub tables: u64,
    /// Bytes the whole process has handed to `write(2)` so far (Linux's
    /// `/proc/self/io` `wchar`: WAL, tables, manifest alike); `None`
    /// elsewhere.
    pub process: Option<u64>,
}

impl Written {
    /// Table bytes per user byte since `earlier`; `None` with no user bytes.
    #[must_use]
    pub fn amplification_since(&self, earlier: &Written) -> Option<f64> {
        let user = self.user.saturating_sub(earlier.user);
        (user > 0).then(|| self.tables.saturating_sub(earlier.tables) as f64 / user as f64)
    }

    /// Bytes handed to `write(2)` per user byte since `earlier` (WAL and
    /// manifest included, as every engine is counted); `None` with no user
    /// bytes or no process count.
    #[must_use]
    pub fn process_amplification_since(&self, earlier: &Written) -> Option<f64> {
        let user = self.user.saturating_sub(earlier.user);
        let bytes = self.process?.saturating_sub(earlier.process?);
        (user > 0).then(|| bytes as f64 / user as f64)
    }
}

/// Bytes this process has handed to `write(2)` so far: Linux's
/// `/proc/self/io` `wchar`; `None` where there is none.
#[must_use]
pub fn process_write_bytes() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    io.lines().find_map(|l| l.strip_prefix("wchar:")).and_then(|v| v.trim().parse().ok())
}

/// A key-value store under test. Errors are one line of text: the
/// benchmark stops on the first.
/// The driver opens fresh stores through a closure the caller gives it, so
/// each engine is configured as its benchmark chooses.
pub trait Engine: Sync {
    /// Stores `value` under `key`, one write, without fsync.
    ///
    /// # Errors
    /// The engine's error.
    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String>;

    /// Stores many pairs at once, as an untimed load does.
    ///
    /// # Errors
    /// The engine's error.
    fn put_many(&self, pairs: &[([u8; 16], Vec<u8>)]) -> Result<(), String>;

    /// The length of the value stored under `key`, if any.
    ///
    /// # Errors
    /// The engine's error.
    fn get(&self, key: &[u8]) -> Result<Option<usize>, String>;

    /// The length of the value under each of `keys`, in order, into `out`
    /// (cleared first): a batched read. By default a loop of
    /// [`Engine::get`]; an engine with a batched read overrides it.
    ///
    /// # Errors
    /// The engine's error.
    fn multi_get(&self, keys: &[[u8; 16]], out: &mut Vec<Option<usize>>) -> Result<(), String> {
        out.clear();
        for k in keys {
            out.push(self.get(k)?);
        }
        Ok(())
    }

    /// Seeks to the first key at or after `key` and reads up to `n` pairs,
    /// values included; returns how many it read.
    ///
    /// # Errors
    /// The engine's error.
    fn seek(&self, key: &[u8], n: usize) -> Result<usize, String>;

    /// Deletes every key `k` with `start <= k < end`, in one write.
    ///
    /// # Errors
    /// The engine's error; by default, that the benchmark does not drive
    /// this engine's range deletes.
    fn delete_range(&self, start: &[u8], end: &[u8]) -> Result<(), String> {
        let _ = (start, end);
        Err("range deletes are not driven on this engine".into())
    }

    /// Waits until background compaction has nothing due (levels within
    /// their targets, as `RocksDB`'s `waitforcompaction`), flushing
    /// nothing; a no-op for an engine that cannot tell.
    ///
    /// # Errors
    /// The engine's error.
    fn wait_idle(&self) -> Result<(), String> {
        Ok(())
    }

    /// Flushes the memtables and compacts until the tree is in its steady
    /// shape, as a long-running store would be between bursts.
    ///
    /// # Errors
    /// The engine's error.
    fn settle(&self) -> Result<(), String>;

    /// The tree's shape now.
    fn shape(&self) -> Shape;

    /// Bytes written so far, if the engine counts them.
    fn written(&self) -> Option<Written>;

    /// Closes the store, waiting for background work.
    ///
    /// # Errors
    /// The engine's error.
    fn close(self) -> Result<(), String>
    where
        Self: Sized;
}

/// siftdb under test.
#[derive(Debug)]
pub struct Siftdb(pub siftdb::Db);

impl Siftdb {
    /// Opens (creating) siftdb in `dir` with `opts` (the benchmarks pass the
    /// defaults, `sync: false` among them, with their own changes).
    ///
    /// # Errors
    /// Why the database could not be opened, naming `dir`.
    pub fn open(dir: &Path, opts: &siftdb::Options) -> Result<Self, String> {
        siftdb::Db::open(dir, opts.clone()).map(Siftdb).map_err(|e| format!("{}: {e}", dir.display()))
    }
}

impl Engine for Siftdb {
    #[inline]
    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        self.0.put(key, value).map_err(|e| e.to_string())
    }

    fn put_many(&self, pairs: &[([u8; 16], Vec<u8>)]) -> Result<(), String> {
        let mut batch = siftdb::WriteBatch::new();
        for (k, v) in pairs {
            batch.put(k, v);
        }
        self.0.write(batch).map_err(|e| e.to_string())
    }

    #[inline]
    fn get(&self, key: &[u8]) -> Result<Option<usize>, String> {
        self.0.get(key).map(|v| v.map(|v| v.len())).map_err(|e| e.to_string())
    }

    fn multi_get(&self, keys: &[[u8; 16]], out: &mut Vec<Option<usize>>) -> Result<(), String> {
        let values = self.0.multi_get(keys).map_err(|e| e.to_string())?;
        out.clear();
        out.extend(values.iter().map(|v| v.as_deref().map(<[u8]>::len)));
        Ok(())
    }

    fn wait_idle(&self) -> Result<(), String> {
        self.0.wait_for_background_work().map_err(|e| e.to_string())
    }

    fn seek(&self, key: &[u8], n: usize) -> Result<usize, String> {
        let mut read = 0;
        for item in self.0.range(key..).take(n) {
            let (_, v) = item.map_err(|e| e.to_string())?;
            std::hint::black_box(v);
            read += 1;
        }
        Ok(read)
    }

    fn delete_range(&self, start: &[u8], end: &[u8]) -> Result<(), String> {
        self.0.delete_range(start, end).map_err(|e| e.to_string())
    }

    fn settle(&self) -> Result<(), String> {
        // Nothing left running either: the disk bytes measured after are final.
        self.0
            .flush()
            .and_then(|()| self.0.compact())
            .and_then(|()| self.0.wait_for_background_work())
            .map_err(|e| e.to_string())
    }

    fn shape(&self) -> Shape {
        let stats = self.0.stats();
        let per_level: Vec<u64> = stats.levels.iter().map(|l| l.tables).collect();
        Shape {
            l0_tables: per_level.first().copied().unwrap_or(0),
            tables: per_level.iter().sum(),
            per_level,
            filter_bytes: Some(stats.levels.iter().map(|l| l.filter_bytes).sum()),
            writes_by_level: stats
                .levels
                .iter()
                .map(|l| LevelWrites {
                    jobs: l.write_jobs,
                    merged_in: l.bytes_merged_in,
                    rewritten: l.bytes_rewritten,
                    written: l.bytes_written,
                    moved_in: l.bytes_moved_in,
                })
                .collect(),
            write_stall_micros: Some(stats.write_stall_micros),
            ..Shape::default()
        }
    }

    fn written(&self) -> Option<Written> {
        let s = self.0.stats();
        Some(Written {
            user: s.user_bytes,
            tables: s.flush_bytes_written + s.compaction_bytes_written,
            process: process_write_bytes(),
        })
    }

    fn close(self) -> Result<(), String> {
        self.0.close().map_err(|e| e.to_string())
    }
}
