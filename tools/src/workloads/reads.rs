//! The read workloads' threads: each draws its keys, asks the engine (one
//! key a call, or a batch of keys a call for `multiget*`/`multimissing*`),
//! and checks every answer.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::{Config, Phase, TICK, Values, Workload, bar};
use crate::engine::Engine;
use crate::keys::{SplitMix, Zipf};
use crate::latency::Histogram;

/// What one reader thread does per operation: the key number it draws and
/// how the answer is checked.
#[derive(Debug, Clone, Copy)]
pub(super) enum Read<'a> {
    Present,
    Missing,
    Seek,
    /// A seek as `Seek`, or every 20th operation a put of a random key
    /// with its own value (the value's length stays what reads check).
    SeekMix {
        values: &'a Values,
    },
    /// A seek as `Seek`, to a key drawn from `zipf`.
    ZipfSeek {
        zipf: &'a Zipf,
    },
    /// One of `ids`, none of which may be found: `what` they are, for the
    /// error. Gets compared with each other draw from lists alike, so the
    /// draw's cache miss is not what tells them apart.
    Absent {
        ids: &'a [u64],
        what: &'static str,
    },
    /// `size` keys a call ([`Engine::multi_get`]), present or never
    /// written; each key is an operation, timed as its share of its batch.
    Batch {
        size: usize,
        missing: bool,
    },
}

/// `ops` reads shared by `cfg.threads` threads; `stop` is raised when the
/// last reader finishes (the `readwhilewriting` writer watches it).
pub(super) fn reads<E: Engine>(
    cfg: &Config,
    e: &E,
    workload: Workload,
    read: Read<'_>,
    stop: &AtomicBool,
) -> Result<Phase, String> {
    let n = cfg.keys;
    let threads = cfg.threads.max(1);
    let per_thread = cfg.ops.div_ceil(threads as u64);
    let progress = bar(cfg, per_thread * threads as u64, workload.name());
    let start = Instant::now();
    let results: Vec<Result<Histogram, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let progress = progress.clone();
                s.spawn(move || -> Result<Histogram, String> {
                    let mut rng = SplitMix::new(cfg.seed ^ workload.stream() << 32 ^ t as u64);
                    let mut latency = Histogram::new();
                    let mut batch: Vec<[u8; 16]> = Vec::new();
                    let mut answers = Vec::new();
                    for op in 0..per_thread {
                        if let Read::Batch { size, missing } = read {
                            if op % size as u64 == 0 {
                                let draw = |_| cfg.key(if missing { n + rng.below(n) } else { rng.below(n) });
                                batch.clear();
                                batch.extend((0..size.min((per_thread - op) as usize)).map(draw));
                                let t = Instant::now();
                                e.multi_get(&batch, &mut answers)?;
                                let share = t.elapsed().as_nanos() as u64 / batch.len() as u64;
                                check_batch(cfg, &batch, &answers, missing)?;
                                for _ in &batch {
                                    latency.record(share);
                                }
                            }
                            if op % TICK == TICK - 1 {
                                progress.inc(TICK);
                            }
                            continue;
                        }
                        let i = match read {
                            Read::Present | Read::Seek | Read::SeekMix { .. } | Read::Batch { .. } => {
                                rng.below(n)
                            }
                            Read::ZipfSeek { zipf } => zipf.rank(&mut rng),
                            Read::Missing => n + rng.below(n),
                            Read::Absent { ids, .. } => ids[rng.below(ids.len() as u64) as usize],
                        };
                        let k = cfg.key(i);
                        let t = Instant::now();
                        match read {
                            Read::Present => match e.get(&k)? {
                                Some(len) if len == cfg.value_bytes => {}
                                got => return Err(wrong(&k, "present", got)),
                            },
                            Read::Missing => {
                                if let got @ Some(_) = e.get(&k)? {
                                    return Err(wrong(&k, "never written", got));
                                }
                            }
                            Read::Absent { what, .. } => {
                                if let got @ Some(_) = e.get(&k)? {
                                    return Err(wrong(&k, what, got));
                                }
                            }
                            Read::SeekMix { values } if op % 20 == 19 => e.put(&k, values.get(i ^ 0xACE))?,
                            Read::Seek | Read::SeekMix { .. } | Read::ZipfSeek { .. } => {
                                if e.seek(&k, cfg.nexts.max(1))? == 0 {
                                    return Err(wrong(&k, "present (seek found nothing)", None));
                                }
                            }
                            Read::Batch { .. } => {}
                        }
                        latency.record(t.elapsed().as_nanos() as u64);
                        if op % TICK == TICK - 1 {
                            progress.inc(TICK);
                        }
                    }
                    Ok(latency)
                })
            })
            .collect();
        let results = handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("reader panicked".into())));
        let results: Vec<_> = results.collect();
        stop.store(true, Ordering::Release);
        results
    });
    let elapsed = start.elapsed();
    progress.finish_and_clear();
    let mut latency = Histogram::new();
    for r in results {
        latency.merge(&r?);
    }
    Ok(Phase::timed(workload, latency.count(), elapsed, latency))
}

fn wrong(key: &[u8], expected: &str, got: Option<usize>) -> String {
    let got = got.map_or_else(|| "nothing".to_string(), |len| format!("a {len}-byte value"));
    format!("wrong answer: key {} is {expected}, but the engine returned {got}", String::from_utf8_lossy(key))
}

/// Checks a batch's answers as the single reads are checked.
fn check_batch(
    cfg: &Config,
    keys: &[[u8; 16]],
    answers: &[Option<usize>],
    missing: bool,
) -> Result<(), String> {
    if answers.len() != keys.len() {
        return Err(format!("wrong answer: {} answers for a batch of {} keys", answers.len(), keys.len()));
    }
    for (k, &got) in keys.iter().zip(answers) {
        match (missing, got) {
            (true, None) => {}
            (false, Some(len)) if len == cfg.value_bytes => {}
            (true, _) => return Err(wrong(k, "never written", got)),
            (false, _) => return Err(wrong(k, "present", got)),
        }
    }
    Ok(())
}
