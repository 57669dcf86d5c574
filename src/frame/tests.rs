use std::io;

use super::*;
use crate::Error;
use crate::fs::{FileSystem, StdFs, WritableFile};

const MODES: [RecoveryMode; 2] = [RecoveryMode::AbsoluteConsistency, RecoveryMode::PointInTime];

fn three_records() -> (Vec<u8>, Vec<Vec<u8>>, Vec<usize>) {
    let payloads: Vec<Vec<u8>> = vec![b"first".to_vec(), Vec::new(), b"third record, longer".to_vec()];
    let mut log = Vec::new();
    let mut ends = Vec::new();
    for p in &payloads {
        log.extend(encode_record(RecordType::Batch, p).unwrap());
        ends.push(log.len());
    }
    (log, payloads, ends)
}

/// Reads the whole log, returning the payloads, the reader's verdict and valid length.
fn read(log: &[u8], mode: RecoveryMode) -> (Vec<Vec<u8>>, Result<Option<LogEnd>, Error>, u64) {
    let mut reader = FrameReader::new(log, RecordType::Batch, mode);
    let mut got = Vec::new();
    for r in reader.by_ref() {
        match r {
            Ok(rec) => got.push(rec.payload.to_vec()),
            Err(e) => return (got, Err(e), reader.valid_len()),
        }
    }
    let end = reader.end().cloned();
    (got, Ok(end), reader.valid_len())
}

#[test]
fn writer_round_trips_through_the_file_system() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000001.log");
    let mut w = FrameWriter::new(StdFs.create(&path).unwrap(), RecordType::Batch);
    let (_, payloads, ends) = three_records();
    let mut offsets = Vec::new();
    for p in &payloads {
        offsets.push(w.append(p).unwrap());
    }
    w.sync().unwrap();
    assert_eq!(offsets, vec![0, ends[0] as u64, ends[1] as u64]);
    assert_eq!(w.len(), ends[2] as u64);

    // Appending after reopening continues at the end.
    drop(w);
    let mut w = FrameWriter::new(StdFs.open_append(&path).unwrap(), RecordType::Batch);
    assert_eq!(w.append(b"fourth").unwrap(), ends[2] as u64);
    w.sync().unwrap();

    let bytes = StdFs.read(&path).unwrap();
    let (got, end, valid) = read(&bytes, RecoveryMode::AbsoluteConsistency);
    let mut want = payloads.clone();
    want.push(b"fourth".to_vec());
    assert_eq!(got, want);
    assert_eq!(end.unwrap(), Some(LogEnd::Clean));
    assert_eq!(valid, bytes.len() as u64);
}

#[test]
fn empty_log_is_clean() {
    for mode in MODES {
        let (got, end, valid) = read(&[], mode);
        assert!(got.is_empty());
        assert_eq!(end.unwrap(), Some(LogEnd::Clean));
        assert_eq!(valid, 0);
    }
}

#[test]
fn every_truncation_yields_exactly_the_complete_records() {
    let (log, payloads, ends) = three_records();
    for mode in MODES {
        for cut in 0..=log.len() {
            let complete = ends.iter().filter(|&&e| e <= cut).count();
            let valid = if complete == 0 { 0 } else { ends[complete - 1] };
            let (got, end, valid_len) = read(&log[..cut], mode);
            assert_eq!(got, payloads[..complete], "cut at {cut}");
            assert_eq!(valid_len, valid as u64, "cut at {cut}");
            let want_end = if cut == valid {
                LogEnd::Clean
            } else {
                LogEnd::TornTail { at: valid as u64, dropped: (cut - valid) as u64 }
            };
            assert_eq!(end.unwrap(), Some(want_end), "cut at {cut}");
        }
    }
}

#[test]
fn zero_filled_and_cut_short_tails_are_torn() {
    let (log, payloads, ends) = three_records();
    // Zeros after the last complete record, a header announcing more bytes
    // than remain, a record cut short (with or without zeros that still do
    // not complete it).
    let cases: Vec<(usize, Vec<u8>)> = vec![
        (ends[2], vec![0; 1]),
        (ends[2], vec![0; 9]),
        (ends[2], vec![0; 4096]),
        (ends[2], vec![0xa5; 17]),
        (ends[2] - 3, vec![]),
        (ends[2] - 3, vec![0; 2]),
        (ends[1] + 4, vec![]),
        (ends[1] + 4, vec![0; 4]),
    ];
    for (cut, tail) in cases {
        let mut damaged = log[..cut].to_vec();
        damaged.extend_from_slice(&tail);
        let complete = ends.iter().filter(|&&e| e <= cut).count();
        for mode in MODES {
            let (got, end, valid) = read(&damaged, mode);
            assert_eq!(got, payloads[..complete], "cut {cut} tail {tail:?}");
            assert_eq!(valid, ends[complete - 1] as u64);
            assert!(matches!(end.unwrap(), Some(LogEnd::TornTail { .. })), "cut {cut} tail {tail:?}");
        }
    }
}

/// Damage in a complete last record, or a cut-short record padded to full
/// length by non-torn bytes, is not what an interrupted append leaves: it
/// is corruption (point-in-time recovery stops there).
fn assert_last_record_refused(bad: &[u8], payloads: &[Vec<u8>], ends: &[usize], case: &str) {
    let (got, verdict, valid) = read(bad, RecoveryMode::AbsoluteConsistency);
    assert_eq!(got, payloads[..2], "{case}");
    assert_eq!(valid, ends[1] as u64, "{case}");
    match verdict {
        Err(Error::Corruption { offset, what, .. }) => {
            assert_eq!(offset, ends[1] as u64, "{case}");
            assert!(what.contains("complete last record"), "{case}: {what}");
        }
        other => panic!("{case}: {other:?}"),
    }
    let (got, verdict, _) = read(bad, RecoveryMode::PointInTime);
    assert_eq!(got, payloads[..2], "{case}");
    assert!(matches!(verdict.unwrap(), Some(LogEnd::Stopped { at, .. }) if at == ends[1] as u64), "{case}");
}

/// Regression: a bit flip anywhere in the last record (length field
/// included) was taken for a torn write and the record silently dropped.
#[test]
fn every_flip_in_the_last_record_is_corruption() {
    let (log, payloads, ends) = three_records();
    for i in ends[1]..ends[2] {
        for bit in 0..8 {
            let mut bad = log.clone();
            bad[i] ^= 1 << bit;
            assert_last_record_refused(&bad, &payloads, &ends, &format!("flip of bit {bit} at {i}"));
        }
    }
    let mut padded = log[..ends[2] - 3].to_vec();
    padded.extend_from_slice(&[0; 9]);
    assert_last_record_refused(&padded, &payloads, &ends, "cut short, then zero-padded past its length");
}

/// A power loss after the file's size reached the disk but before its last
/// sectors did: a long last record reads back as zeros from a sector
/// boundary on. Torn (never acknowledged as durable), not corruption.
#[test]
fn a_last_record_zeroed_from_a_sector_boundary_is_torn() {
    let first = vec![0x11u8; 100];
    let big = vec![0x5au8; 3000];
    let mut log = encode_record(RecordType::Batch, &first).unwrap();
    let start = log.len();
    log.extend(encode_record(RecordType::Batch, &big).unwrap());
    for boundary in [512, 1024, 2048] {
        let mut lost = log.clone();
        lost[boundary..].fill(0);
        for mode in MODES {
            let (got, end, valid) = read(&lost, mode);
            assert_eq!(got, vec![first.clone()], "boundary {boundary}");
            assert_eq!(valid, start as u64);
            assert!(matches!(end.unwrap(), Some(LogEnd::TornTail { .. })), "boundary {boundary}");
        }
    }
    // Zeros that start off a boundary and do not reach the next one are not
    // a lost sector: a complete last record with zeroed bytes is damage.
    let mut damaged = log.clone();
    let len = damaged.len();
    damaged[len - 20..].fill(0);
    assert!(len - 20 > 3072 && len < 3584, "the zeros must not reach a boundary");
    let (_, verdict, _) = read(&damaged, RecoveryMode::AbsoluteConsistency);
    assert!(verdict.unwrap_err().is_corruption());
}

#[test]
fn mid_log_damage_is_corruption_or_a_point_in_time_prefix() {
    let (log, payloads, ends) = three_records();
    let starts = [0, ends[0], ends[1]];
    for i in 0..ends[1] {
        let record = starts.iter().rposition(|&s| s <= i).unwrap();
        for bit in [0x01, 0x80] {
            let mut bad = log.clone();
            bad[i] ^= bit;
            let (got, verdict, valid) = read(&bad, RecoveryMode::AbsoluteConsistency);
            assert_eq!(got, payloads[..record], "flip at {i}");
            assert_eq!(valid, starts[record] as u64);
            match verdict {
                Err(Error::Corruption { offset, .. }) => assert_eq!(offset, starts[record] as u64),
                other => panic!("flip at {i}: {other:?}"),
            }

            let (got, verdict, valid) = read(&bad, RecoveryMode::PointInTime);
            assert_eq!(got, payloads[..record], "flip at {i}");
            assert_eq!(valid, starts[record] as u64);
            match verdict.unwrap() {
                Some(LogEnd::Stopped { at, .. }) => assert_eq!(at, starts[record] as u64),
                other => panic!("flip at {i}: {other:?}"),
            }
        }
    }
}

#[test]
fn a_valid_record_of_the_wrong_type_is_corruption_even_at_the_tail() {
    let (mut log, payloads, ends) = three_records();
    log.extend(encode_record(RecordType::Edit, b"edit").unwrap());
    let (got, verdict, _) = read(&log, RecoveryMode::AbsoluteConsistency);
    assert_eq!(got, payloads);
    match verdict {
        Err(Error::Corruption { offset, .. }) => assert_eq!(offset, ends[2] as u64),
        other => panic!("{other:?}"),
    }
    let (got, verdict, _) = read(&log, RecoveryMode::PointInTime);
    assert_eq!(got, payloads);
    assert!(matches!(verdict.unwrap(), Some(LogEnd::Stopped { .. })));
}

#[derive(Debug)]
struct FailingFile {
    writes_left: usize,
}

impl WritableFile for FailingFile {
    fn write_all(&mut self, _buf: &[u8]) -> io::Result<()> {
        if self.writes_left == 0 {
            return Err(io::Error::other("injected"));
        }
        self.writes_left -= 1;
        Ok(())
    }
    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn len(&self) -> u64 {
        0
    }
}

#[test]
fn a_failed_write_makes_the_writer_refuse_further_work() {
    let mut w = FrameWriter::new(Box::new(FailingFile { writes_left: 1 }), RecordType::Batch);
    w.append(b"ok").unwrap();
    assert!(matches!(w.append(b"fails"), Err(Error::Io(_))));
    assert!(matches!(w.append(b"refused"), Err(Error::WritesDisabled(_))));
    assert!(matches!(w.sync(), Err(Error::WritesDisabled(_))));
}

#[test]
fn damaged_megabyte_tails_are_classified_within_the_scan_budget() {
    let (log, payloads, _) = three_records();
    // A torn large record whose payload is full of plausible headers (known
    // type, small length): every offset costs a crc.
    let plausible = [0, 0, 0, 0, 0x00, 0x01, 0x00, 0x00, 1].repeat(1 << 17);
    let mut torn_plausible = encode_record(RecordType::Batch, &plausible).unwrap();
    torn_plausible.truncate(torn_plausible.len() - 1);
    for tail in [vec![0u8; 1 << 20], torn_plausible] {
        let mut damaged = log.clone();
        damaged.extend_from_slice(&tail);
        // The scan's work is bounded by its checksum budget (the next test
        // shows the budget running out); here it must not run out, or a
        // natural torn tail would be refused instead of dropped.
        let (got, end, _) = read(&damaged, RecoveryMode::AbsoluteConsistency);
        assert_eq!(got, payloads);
        assert!(matches!(end.unwrap(), Some(LogEnd::TornTail { .. })));
    }
}

#[test]
fn a_tail_crafted_to_exhaust_the_scan_is_refused_not_dropped() {
    let (log, payloads, ends) = three_records();
    // Headers claiming half-megabyte records at every 9th byte: quadratic
    // crc work if unbounded. The reader gives up and treats it as mid-log.
    let crafted = [0, 0, 0, 0, 0x00, 0x00, 0x08, 0x00, 1].repeat(8 << 17);
    let mut torn = encode_record(RecordType::Batch, &crafted).unwrap();
    torn.truncate(torn.len() - 1);
    let mut damaged = log.clone();
    damaged.extend_from_slice(&torn);
    let (got, verdict, _) = read(&damaged, RecoveryMode::AbsoluteConsistency);
    assert_eq!(got, payloads);
    match verdict {
        Err(Error::Corruption { offset, what, .. }) => {
            assert_eq!(offset, ends[2] as u64);
            assert!(what.contains("budget"), "{what}");
        }
        other => panic!("{other:?}"),
    }
    let (got, verdict, valid) = read(&damaged, RecoveryMode::PointInTime);
    assert_eq!((got, valid), (payloads, ends[2] as u64));
    assert!(matches!(verdict.unwrap(), Some(LogEnd::Stopped { .. })));
}

proptest::proptest! {
    #[test]
    fn arbitrary_tails_never_panic_and_keep_the_intact_prefix(
        bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
        valid_prefix in 0usize..3,
    ) {
        let (log, payloads, ends) = three_records();
        let keep = if valid_prefix == 0 { 0 } else { ends[valid_prefix - 1] };
        let mut input = log[..keep].to_vec();
        input.extend_from_slice(&bytes);
        for mode in MODES {
            let mut reader = FrameReader::new(&input, RecordType::Batch, mode);
            let mut got = Vec::new();
            for r in reader.by_ref() {
                match r {
                    Ok(rec) => got.push(rec.payload.to_vec()),
                    Err(e) => proptest::prop_assert!(e.is_corruption()),
                }
            }
            proptest::prop_assert!(reader.valid_len() <= input.len() as u64);
            // The intact prefix always comes back whole, whatever follows it.
            proptest::prop_assert!(got.len() >= valid_prefix);
            proptest::prop_assert_eq!(&got[..valid_prefix], &payloads[..valid_prefix]);
        }
    }
}

/// The writer reuses one frame buffer: a record written after a longer one
/// (or after one too large to keep the buffer for) carries nothing of it.
#[test]
fn the_reused_frame_buffer_carries_nothing_over() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000001.log");
    let mut w = FrameWriter::new(StdFs.create(&path).unwrap(), RecordType::Batch);
    let huge = vec![7u8; (1 << 20) + 1];
    let payloads: [&[u8]; 4] = [b"a longer first payload", b"short", &huge, b"x"];
    let mut want = Vec::new();
    for p in payloads {
        w.append_with(|out| out.extend_from_slice(p)).unwrap();
        want.extend(encode_record(RecordType::Batch, p).unwrap());
    }
    w.sync().unwrap();
    assert_eq!(StdFs.read(&path).unwrap(), want);
}
