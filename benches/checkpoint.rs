//! What a checkpoint's flush costs against the alternative it replaces
//! (issue 63): a memtable holding `N` bytes of fresh writes is either
//! flushed by `Db::checkpoint` (a table written and fsynced, then every
//! table linked, a manifest, `CURRENT`), or left alone while the copy links
//! the same tables and copies the WAL that holds those writes (bytes
//! copied, then fsynced).
//!
//! Quick run: `cargo bench --bench checkpoint -- --warm-up-time 1 --measurement-time 5`

use std::cell::RefCell;
use std::fs::{self, File};
use std::path::{Path, PathBuf};

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use siftdb::{Db, Options, WriteBatch};

const VALUE_BYTES: usize = 100;
/// Memtable contents per checkpoint, in bytes of keys and values.
const SIZES: [usize; 2] = [4 << 20, 16 << 20];

/// Values of random bytes: LZ4 cannot shrink them, so the flushed table
/// is as big as the WAL it stands for and neither side is flattered.
struct Values(u64);

impl Values {
    fn next(&mut self) -> Vec<u8> {
        (0..VALUE_BYTES)
            .map(|_| {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                self.0 as u8
            })
            .collect()
    }
}

/// A source with two tables already, and a counter for fresh keys.
struct Source {
    db: Db,
    dir: PathBuf,
    next_key: u64,
    values: Values,
}

impl Source {
    fn new(dir: &Path) -> Self {
        // No background compaction: each variant's timing is its own work.
        let opts = Options { auto_compaction: false, ..Options::default() };
        let db = Db::open(dir, opts).unwrap();
        let mut s = Source { db, dir: dir.to_path_buf(), next_key: 0, values: Values(0x5EED) };
        for _ in 0..2 {
            s.fill(4 << 20);
            s.db.flush().unwrap();
        }
        s
    }

    /// Writes `bytes` of fresh keys and values into an empty memtable and a
    /// fresh WAL (the flush first rotates the WAL).
    fn fill(&mut self, bytes: usize) {
        self.db.flush().unwrap();
        let mut written = 0;
        while written < bytes {
            let mut batch = WriteBatch::new();
            for _ in 0..100 {
                let key = format!("key{:012}", self.next_key);
                self.next_key += 1;
                written += key.len() + VALUE_BYTES;
                batch.put(key, self.values.next());
            }
            self.db.write(batch).unwrap();
        }
    }

    fn files(&self, ext: &str) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = fs::read_dir(&self.dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == ext))
            .collect();
        out.sort();
        out
    }
}

/// The alternative to a flush: the tables linked, the WAL copied and
/// fsynced, the directory fsynced. It leaves out the manifest and `CURRENT`
/// a real copy would also need, so it is a lower bound of that design.
fn link_and_copy_wal(src: &Source, dst: &Path) {
    fs::create_dir(dst).unwrap();
    for table in src.files("sst") {
        fs::hard_link(&table, dst.join(table.file_name().unwrap())).unwrap();
    }
    for log in src.files("log") {
        let to = dst.join(log.file_name().unwrap());
        fs::copy(&log, &to).unwrap();
        File::open(&to).unwrap().sync_all().unwrap();
    }
    File::open(dst).unwrap().sync_all().unwrap();
}

fn bench_checkpoint(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let src = RefCell::new(Source::new(&tmp.path().join("db")));
    let mut g = c.benchmark_group("checkpoint");
    g.sample_size(10);
    let mut copy_no = 0u64;
    for bytes in SIZES {
        g.throughput(Throughput::Bytes(bytes as u64));
        let mib = bytes >> 20;
        src.borrow_mut().fill(bytes);
        let wal: u64 = src.borrow().files("log").iter().map(|p| fs::metadata(p).unwrap().len()).sum();
        eprintln!("{mib} MiB memtable: the WAL(s) to copy hold {wal} bytes");
        // Each variant starts from a memtable of `bytes` fresh writes; the
        // copy of the previous iteration is removed outside the timing.
        let mut fresh_dst = |src: &mut Source| {
            let old = tmp.path().join(format!("copy{copy_no}"));
            let _ = fs::remove_dir_all(&old);
            copy_no += 1;
            src.fill(bytes);
            tmp.path().join(format!("copy{copy_no}"))
        };
        g.bench_function(BenchmarkId::new("flush_and_link", mib), |b| {
            b.iter_batched(
                || fresh_dst(&mut src.borrow_mut()),
                |dst| src.borrow().db.checkpoint(&dst).unwrap(),
                BatchSize::PerIteration,
            );
        });
        g.bench_function(BenchmarkId::new("link_and_copy_wal", mib), |b| {
            b.iter_batched(
                || fresh_dst(&mut src.borrow_mut()),
                |dst| link_and_copy_wal(&src.borrow(), &dst),
                BatchSize::PerIteration,
            );
        });
    }
    g.finish();
}

criterion_group!(benches, bench_checkpoint);
criterion_main!(benches);
