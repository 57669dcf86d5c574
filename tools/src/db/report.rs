//! JSON and words for what recovery would replay and lose, shared by
//! `db info`, `db verify` and `db recover`.

use serde_json::{Value, json};
use siftdb::recovery::{LogInfo, RecoveryReport};
use siftdb::wal::LogEnd;

/// How a log or manifest ended, as a word.
#[must_use]
pub fn end_name(end: Option<&LogEnd>) -> &'static str {
    match end {
        Some(LogEnd::Clean) => "clean",
        Some(LogEnd::TornTail { .. }) => "torn_tail",
        Some(LogEnd::Stopped { .. }) => "stopped",
        None => "damaged",
    }
}

/// Bytes a torn tail dropped (0 for any other end).
#[must_use]
pub fn torn_bytes(end: Option<&LogEnd>) -> u64 {
    match end {
        Some(LogEnd::TornTail { dropped, .. }) => *dropped,
        _ => 0,
    }
}

/// How many synced writes a cut loses, in words ("an unknown number" for
/// a log whose end was recorded without its sequence number).
#[must_use]
pub fn lost_text(lost: Option<u64>) -> String {
    lost.map_or_else(|| "an unknown number of".to_owned(), |n| n.to_string())
}

/// The JSON object for what recovery would replay and lose, shared with
/// `db verify`.
#[must_use]
pub fn recovery_json(r: &RecoveryReport) -> Value {
    json!({
        "logs_replayed": r.logs_replayed,
        "ops_replayed": r.ops_replayed,
        "torn_bytes": r.torn_bytes,
        "cut": r.cut.as_ref().map(|c| json!({
            "number": c.number,
            "path": c.path.display().to_string(),
            "recorded_len": c.recorded.len,
            "recorded_last_seq": c.recorded.last_seq,
            "found_len": c.found,
            "size": c.size,
        })),
        "synced_writes_lost": r.synced_writes_lost,
    })
}

/// The JSON object for one log, shared with `db verify`.
#[must_use]
pub fn log_json(l: &LogInfo) -> Value {
    json!({
        "number": l.number,
        "path": l.path.display().to_string(),
        "size": l.size,
        "live": l.live,
        "records": l.records,
        "ops": l.ops,
        "last_seq": l.last_seq,
        "valid_len": l.valid_len,
        "missing": l.missing,
        "recorded_synced_len": l.recorded_end.map(|e| e.len),
        "recorded_synced_seq": l.recorded_end.and_then(|e| e.last_seq),
        "end": end_name(l.end.as_ref()),
        "torn_bytes": torn_bytes(l.end.as_ref()),
        "error": l.error.as_ref().map(ToString::to_string),
    })
}

/// The JSON object for a loss the manifest recorded: a point-in-time
/// recovery, by this open or an earlier one, that lost synced writes.
#[must_use]
pub fn lost_writes_json(l: &siftdb::manifest::LostWrites) -> Value {
    json!({
        "log_number": l.log_number,
        "synced_len": l.synced_len,
        "found_len": l.found_len,
        "writes_lost": l.writes_lost,
        "recovered_at": l.recovered_at,
        "text": l.to_string(),
    })
}
