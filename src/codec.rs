//! Little-endian encoding helpers shared by every on-disk format.
//!
//! [`Reader`] turns every short read into `Error::Corruption` with the
//! offset at which the data ran out, so decoders never index out of bounds
//! and never panic. [`seal`] and [`unseal`] append and check a trailing
//! crc32, for formats that protect their own body. [`iso8601_utc`] is how
//! a time stored as seconds since the Unix epoch reads to a person.

use crate::{Error, Result};

/// A bounds-checked little-endian cursor over a byte slice.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A cursor at the start of `buf`.
    #[must_use]
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Bytes consumed so far.
    #[must_use]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left.
    #[must_use]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Takes the next `n` bytes.
    ///
    /// # Errors
    /// `Corruption` if fewer than `n` bytes remain.
    #[inline]
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(Error::corruption(
                self.pos as u64,
                format!("truncated: needed {n} bytes, {} left", self.remaining()),
            ));
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.bytes(N)?);
        Ok(out)
    }

    /// Reads a `u8`.
    ///
    /// # Errors
    /// `Corruption` on a short read.
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    /// Reads a little-endian `u16`.
    ///
    /// # Errors
    /// `Corruption` on a short read.
    pub fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    /// Reads a little-endian `u32`.
    ///
    /// # Errors
    /// `Corruption` on a short read.
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    /// Reads a little-endian `u64`.
    ///
    /// # Errors
    /// `Corruption` on a short read.
    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// Reads a little-endian `f64`.
    ///
    /// # Errors
    /// `Corruption` on a short read.
    pub fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_le_bytes(self.array()?))
    }

    /// Reads an LEB128 varint of at most 64 bits.
    ///
    /// # Errors
    /// `Corruption` on a short read or an overlong encoding.
    #[inline]
    pub fn varint(&mut self) -> Result<u64> {
        // Lengths under 128 are one byte: most keys' and values' in blocks
        // and batches, read inline without the loop.
        if let Some(&byte) = self.buf.get(self.pos)
            && byte < 0x80
        {
            self.pos += 1;
            return Ok(u64::from(byte));
        }
        self.varint_long()
    }

    #[cold]
    fn varint_long(&mut self) -> Result<u64> {
        let start = self.pos;
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.u8()?;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                if shift == 63 && byte > 1 {
                    break;
                }
                return Ok(value);
            }
        }
        Err(Error::corruption(start as u64, "varint longer than 64 bits"))
    }

    /// Reads a varint length, then that many bytes.
    ///
    /// # Errors
    /// `Corruption` on a short read.
    #[inline]
    pub fn length_prefixed(&mut self) -> Result<&'a [u8]> {
        let at = self.pos;
        let len = usize::try_from(self.varint()?)
            .map_err(|_| Error::corruption(at as u64, "length does not fit in memory"))?;
        self.bytes(len)
    }

    /// Checks that every byte was consumed.
    ///
    /// # Errors
    /// `Corruption` naming the first unread byte.
    pub fn finish(&self) -> Result<()> {
        if self.remaining() == 0 {
            Ok(())
        } else {
            Err(Error::corruption(self.pos as u64, format!("{} unexpected trailing bytes", self.remaining())))
        }
    }
}

/// Appends an LEB128 varint.
#[expect(clippy::cast_possible_truncation, reason = "the low seven bits go out first, by design")]
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a varint length and then `bytes`.
pub fn put_length_prefixed(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Appends a crc32 of `body` to it.
#[must_use]
pub fn seal(mut body: Vec<u8>) -> Vec<u8> {
    let crc = crc32fast::hash(&body);
    body.extend_from_slice(&crc.to_le_bytes());
    body
}

/// Checks the trailing crc32 written by [`seal`] and returns the body.
///
/// # Errors
/// `Corruption` if the buffer is shorter than a crc or the crc mismatches.
pub fn unseal(bytes: &[u8]) -> Result<&[u8]> {
    let Some(body_len) = bytes.len().checked_sub(4) else {
        return Err(Error::corruption(0, format!("{} bytes is too short to hold a checksum", bytes.len())));
    };
    let (body, crc) = bytes.split_at(body_len);
    let stored = u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]);
    let actual = crc32fast::hash(body);
    if stored == actual {
        Ok(body)
    } else {
        Err(Error::corruption(
            body_len as u64,
            format!("checksum mismatch: stored {stored:#010x}, computed {actual:#010x}"),
        ))
    }
}

/// `secs` since the UNIX epoch as an ISO-8601 UTC date and time
/// (`2026-12-04T06:47:20Z`), by the proleptic Gregorian calendar
/// (Hinnant's `civil_from_days`).
#[must_use]
pub fn iso8601_utc(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2);
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_every_width() {
        for v in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX - 1, u64::MAX] {
            let mut buf = Vec::new();
            put_varint(&mut buf, v);
            let mut r = Reader::new(&buf);
            assert_eq!(r.varint().unwrap(), v);
            r.finish().unwrap();
        }
    }

    #[test]
    fn overlong_and_truncated_varints_are_corruption() {
        assert!(Reader::new(&[0xff; 11]).varint().unwrap_err().is_corruption());
        assert!(Reader::new(&[0x80, 0x80]).varint().unwrap_err().is_corruption());
        let mut over = vec![0xff; 9];
        over.push(0x02);
        assert!(Reader::new(&over).varint().unwrap_err().is_corruption());
    }

    #[test]
    fn seal_detects_every_flipped_byte_and_every_truncation() {
        let sealed = seal(b"filter body".to_vec());
        assert_eq!(unseal(&sealed).unwrap(), b"filter body");
        for i in 0..sealed.len() {
            let mut bad = sealed.clone();
            bad[i] ^= 0x40;
            assert!(unseal(&bad).unwrap_err().is_corruption(), "flip at {i}");
        }
        for len in 0..sealed.len() {
            assert!(unseal(&sealed[..len]).is_err(), "truncated to {len}");
        }
    }

    #[test]
    fn short_reads_report_their_offset() {
        let mut r = Reader::new(&[1, 2, 3]);
        assert_eq!(r.u16().unwrap(), 0x0201);
        match r.u32() {
            Err(Error::Corruption { offset: 2, .. }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn dates_match_known_instants() {
        assert_eq!(iso8601_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601_utc(951_782_400), "2000-02-29T00:00:00Z"); // a 400-year leap day
        assert_eq!(iso8601_utc(1_796_366_840), "2026-12-04T06:47:20Z");
        assert_eq!(iso8601_utc(4_102_444_799), "2099-12-31T23:59:59Z");
        assert_eq!(iso8601_utc(4_107_542_400), "2100-03-01T00:00:00Z"); // 2100 is not leap
    }
}
