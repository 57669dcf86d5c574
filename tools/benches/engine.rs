//! siftdb beside fjall on db_bench's workloads, in one process: the same
//! driver as `siftdb bench engine` (`siftdb_cli::workloads`), the same
//! seeded keys and operations, rounds alternating between the engines so
//! that a noisy neighbour hurts both alike; each workload's median round,
//! its range, and the ratio siftdb / fjall.
//!
//! Both engines run their defaults (siftdb: the default filter policy,
//! `sync: false`; fjall 3: its default keyspace, Bloom filters at 10
//! bits/key below level 0, no fsync per write), 16-byte keys in random
//! order, except for compression: `ENGINE_COMPRESSION` (default `none`)
//! sets siftdb's policy (the library's grammar) and fjall's codec on every
//! level: `none` for `none`, LZ4 (fjall's only codec, feature `lz4`) for
//! anything else. Each round fills fresh stores and (unless `ENGINE_UNSETTLED`) settles them
//! (siftdb: `flush` + `compact`; fjall: `rotate_memtable_and_wait` +
//! `major_compact`) before the reads.
//!
//! Write amplification is counted the same way for both: the bytes the
//! process handed to `write(2)` (Linux `/proc/self/io` `wchar`: WAL or
//! journal, tables, manifests alike) per byte of keys and values put, from
//! the store's open to the end of the fill, and again to the end of the
//! settle (not comparable: fjall's is a major compaction, which rewrites
//! everything once more; siftdb's compacts until each level is within its
//! target). siftdb also prints its own count, tables only.
//!
//! Run: `cargo bench -p siftdb-cli --bench engine`. Environment:
//! `ENGINE_KEYS` (default 1,000,000), `ENGINE_OPS` (operations per read
//! workload; default the keys, at most 10^6), `ENGINE_ROUNDS` (3),
//! `ENGINE_THREADS` (reader threads, 1), `ENGINE_VALUE_BYTES` (100),
//! `ENGINE_WORKLOADS` (comma-separated; default all), `ENGINE_DIR` (where
//! the stores go; default a temp dir), `ENGINE_COMPRESSION` (above),
//! `ENGINE_KEY_FORMAT` (`hex`, the default, or `dbbench`: db_bench's key
//! layout), `ENGINE_VALUE_COMPRESSIBILITY` (the fraction of each value that repeats,
//! as `siftdb bench engine --value-compressibility`; default 0.5),
//! `ENGINE_UNSETTLED=1` (reads run on the store as the load left it, as
//! `--unsettled`), `ENGINE_HOT_MILLIS` (scanhot's overwrites; default 5,000).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use siftdb_cli::engine::{Engine, Shape, Siftdb, Written, process_write_bytes as wchar};
use siftdb_cli::keys::KeyFormat;
use siftdb_cli::summary::{Summary, summarize};
use siftdb_cli::workloads::{Config, Round, Workload, round};

/// fjall under test: one keyspace with the default options.
struct Fjall {
    db: fjall::Database,
    ks: fjall::Keyspace,
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl Fjall {
    fn open(dir: &Path, codec: fjall::CompressionType) -> Result<Self, String> {
        let db = fjall::Database::builder(dir).open().map_err(err)?;
        let policy = fjall::config::CompressionPolicy::all(codec);
        let opts = || fjall::KeyspaceCreateOptions::default().data_block_compression_policy(policy.clone());
        let ks = db.keyspace("bench", opts).map_err(err)?;
        Ok(Fjall { db, ks })
    }
}

impl Engine for Fjall {
    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        self.ks.insert(key, value).map_err(err)
    }

    fn put_many(&self, pairs: &[([u8; 16], Vec<u8>)]) -> Result<(), String> {
        let mut batch = self.db.batch();
        for (k, v) in pairs {
            batch.insert(&self.ks, k.as_slice(), v.as_slice());
        }
        batch.commit().map_err(err)
    }

    fn get(&self, key: &[u8]) -> Result<Option<usize>, String> {
        self.ks.get(key).map(|v| v.map(|v| v.len())).map_err(err)
    }

    fn seek(&self, key: &[u8], n: usize) -> Result<usize, String> {
        let mut read = 0;
        for guard in self.ks.range(key..).take(n) {
            let (_, v) = guard.into_inner().map_err(err)?;
            std::hint::black_box(v);
            read += 1;
        }
        Ok(read)
    }

    fn settle(&self) -> Result<(), String> {
        self.ks.rotate_memtable_and_wait().map_err(err)?;
        self.ks.major_compact().map_err(err)
    }

    fn shape(&self) -> Shape {
        let l0 = self.ks.l0_table_count() as u64;
        Shape { l0_tables: l0, tables: self.ks.table_count() as u64, ..Shape::default() }
    }

    fn written(&self) -> Option<Written> {
        None
    }

    fn close(self) -> Result<(), String> {
        Ok(())
    }
}

/// What one fill cost on disk: user bytes put, and the bytes written from
/// the store's open to the fill's end and to the settle's end.
#[derive(Debug, Clone, Copy)]
struct DiskWrites {
    user: u64,
    to_fill_end: u64,
    to_settle_end: u64,
}

/// An engine whose user bytes and process-wide write bytes are counted
/// alike, whatever engine it wraps; each settle of the `fillrandom` store
/// that follows puts is logged.
struct Counted<E> {
    inner: E,
    fill: bool,
    opened_at: u64,
    user: AtomicU64,
    log: Arc<Mutex<Vec<DiskWrites>>>,
}

impl<E: Engine> Counted<E> {
    fn open(path: &Path, inner: E, log: &Arc<Mutex<Vec<DiskWrites>>>) -> Self {
        Counted {
            inner,
            fill: path.ends_with("fillrandom"),
            opened_at: wchar().unwrap_or(0),
            user: AtomicU64::new(0),
            log: Arc::clone(log),
        }
    }
}

impl<E: Engine> Engine for Counted<E> {
    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        self.user.fetch_add((key.len() + value.len()) as u64, Ordering::Relaxed);
        self.inner.put(key, value)
    }

    fn put_many(&self, pairs: &[([u8; 16], Vec<u8>)]) -> Result<(), String> {
        let bytes: usize = pairs.iter().map(|(k, v)| k.len() + v.len()).sum();
        self.user.fetch_add(bytes as u64, Ordering::Relaxed);
        self.inner.put_many(pairs)
    }

    fn get(&self, key: &[u8]) -> Result<Option<usize>, String> {
        self.inner.get(key)
    }

    fn seek(&self, key: &[u8], n: usize) -> Result<usize, String> {
        self.inner.seek(key, n)
    }

    fn delete_range(&self, start: &[u8], end: &[u8]) -> Result<(), String> {
        self.inner.delete_range(start, end)
    }

    fn settle(&self) -> Result<(), String> {
        let fill_end = wchar();
        self.inner.settle()?;
        let user = self.user.swap(0, Ordering::Relaxed);
        if let (true, Some(a), Some(b)) = (self.fill && user > 0, fill_end, wchar()) {
            let since = |x: u64| x.saturating_sub(self.opened_at);
            let w = DiskWrites { user, to_fill_end: since(a), to_settle_end: since(b) };
            self.log.lock().map_err(err)?.push(w);
        }
        Ok(())
    }

    fn shape(&self) -> Shape {
        self.inner.shape()
    }

    fn written(&self) -> Option<Written> {
        self.inner.written()
    }

    fn close(self) -> Result<(), String> {
        self.inner.close()
    }
}

/// The median over rounds of the first fill's bytes per user byte, to the
/// fill's end and to the settle's end.
#[expect(clippy::cast_precision_loss, reason = "ratios for display")]
fn disk_amplification(log: &[DiskWrites]) -> Option<(f64, f64)> {
    let fill = log.iter().map(|w| w.to_fill_end as f64 / w.user as f64).collect();
    let settle = log.iter().map(|w| w.to_settle_end as f64 / w.user as f64).collect();
    Some((siftdb_cli::summary::median(fill)?, siftdb_cli::summary::median(settle)?))
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.replace('_', "").parse().ok()).unwrap_or(default)
}

fn row(s: &Summary) -> String {
    format!(
        "{:>10.0} ({:>8.0}-{:>8.0}, {:>5.1}%)",
        s.ops_per_sec,
        s.min_ops_per_sec,
        s.max_ops_per_sec,
        100.0 * s.spread()
    )
}

fn main() -> Result<(), String> {
    let keys = env("ENGINE_KEYS", 1_000_000);
    let workloads = match std::env::var("ENGINE_WORKLOADS") {
        Ok(list) => list
            .split(',')
            .map(|n| Workload::parse(n.trim()).ok_or(format!("unknown workload {n}")))
            .collect::<Result<_, _>>()?,
        // fjall is not driven through range deletes.
        Err(_) => Workload::ALL.into_iter().filter(|w| *w != Workload::DeleteRange).collect(),
    };
    let compression: siftdb::CompressionPolicy =
        std::env::var("ENGINE_COMPRESSION").as_deref().unwrap_or("none").parse().map_err(err)?;
    let fjall_codec = if compression == siftdb::CompressionPolicy::uniform(siftdb::Compression::None) {
        fjall::CompressionType::None
    } else {
        fjall::CompressionType::Lz4
    };
    let value_compressibility = std::env::var("ENGINE_VALUE_COMPRESSIBILITY")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|f| (0.0..=1.0).contains(f))
        .unwrap_or(0.5);
    let cfg = Config {
        keys,
        value_bytes: env("ENGINE_VALUE_BYTES", 100) as usize,
        value_compressibility,
        ops: env("ENGINE_OPS", keys.min(1_000_000)),
        threads: env("ENGINE_THREADS", 1) as usize,
        nexts: 10,
        seed: 42,
        key_format: std::env::var("ENGINE_KEY_FORMAT")
            .ok()
            .and_then(|f| KeyFormat::parse(&f))
            .unwrap_or_default(),
        workloads,
        unsettled: env("ENGINE_UNSETTLED", 0) != 0,
        hot_writes: std::time::Duration::from_millis(env("ENGINE_HOT_MILLIS", 5000)),
        progress: false,
    };
    let rounds = env("ENGINE_ROUNDS", 3) as usize;
    let tmp = tempfile::tempdir().map_err(err)?;
    let root = std::env::var_os("ENGINE_DIR").map_or_else(|| tmp.path().to_path_buf(), Into::into);
    println!(
        "engine: {} keys, {}-byte values ({} compressible), {} ops per read workload, {} reader thread(s), {rounds} rounds alternating; compression: siftdb {compression}, fjall {fjall_codec}",
        cfg.keys, cfg.value_bytes, cfg.value_compressibility, cfg.ops, cfg.threads
    );
    let sift_opts = siftdb::Options { compression, ..siftdb::Options::default() };
    let (mut sift, mut fj): (Vec<Round>, Vec<Round>) = (Vec::new(), Vec::new());
    let (sift_disk, fj_disk) = (Arc::new(Mutex::new(Vec::new())), Arc::new(Mutex::new(Vec::new())));
    for r in 0..rounds {
        let s = round(&cfg, &root.join("siftdb"), &|p: &Path| {
            Ok(Counted::open(p, Siftdb::open(p, &sift_opts)?, &sift_disk))
        })?;
        let f = round(&cfg, &root.join("fjall"), &|p: &Path| {
            Ok(Counted::open(p, Fjall::open(p, fjall_codec)?, &fj_disk))
        })?;
        let mib =
            |b: Option<u64>| b.map_or_else(|| "?".to_owned(), |b| format!("{:.1} MiB", b as f64 / 1048576.0));
        println!(
            "round {}: reads began with {} tables ({} in L0) in siftdb, {} ({} in L0) in fjall; on disk siftdb {}, fjall {}",
            r + 1,
            s.shape.tables,
            s.shape.l0_tables,
            f.shape.tables,
            f.shape.l0_tables,
            mib(s.shape.disk_bytes),
            mib(f.shape.disk_bytes)
        );
        sift.push(s);
        fj.push(f);
    }
    println!(
        "{:<17} {:<40} {:<40} siftdb/fjall",
        "workload", "siftdb op/s (range, spread)", "fjall op/s (range, spread)"
    );
    for (s, f) in summarize(&sift).iter().zip(summarize(&fj).iter()) {
        let wa = s.write_amplification.map_or_else(String::new, |w| format!("  (siftdb write amp {w:.2})"));
        println!(
            "{:<17} {:<40} {:<40} {:.2}x{wa}",
            s.workload.name(),
            row(s),
            row(f),
            s.ops_per_sec / f.ops_per_sec
        );
    }
    let (sd, fd) = (sift_disk.lock().map_err(err)?.clone(), fj_disk.lock().map_err(err)?.clone());
    if let (Some((s_fill, s_settle)), Some((f_fill, f_settle))) =
        (disk_amplification(&sd), disk_amplification(&fd))
    {
        println!(
            "fillrandom bytes written per user byte (write(2) bytes, WAL or journal included; median): \
             to the fill's end siftdb {s_fill:.2}, fjall {f_fill:.2} ({:.2}x); to the settle's end siftdb {s_settle:.2}, fjall {f_settle:.2}",
            s_fill / f_fill
        );
    }
    println!("per round, op/s (siftdb / fjall):");
    for w in &cfg.workloads {
        let rates = |rounds: &[Round]| -> Vec<String> {
            rounds
                .iter()
                .filter_map(|r| r.phases.iter().find(|p| p.workload == *w))
                .map(|p| format!("{:.0}", p.ops_per_sec()))
                .collect()
        };
        println!("  {:<17} {} / {}", w.name(), rates(&sift).join(" "), rates(&fj).join(" "));
    }
    Ok(())
}
