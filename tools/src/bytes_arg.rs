//! Keys and values on the command line and in output: read as UTF-8 text
//! (or hex with `--hex`), printed with non-printable bytes escaped.

use std::fmt::Write as _;

/// Parses a key or value argument: the UTF-8 bytes of `arg`, or with
/// `hex` its hexadecimal digits (an optional `0x` prefix is allowed).
///
/// # Errors
/// A message if `hex` is set and `arg` is not an even run of hex digits.
pub fn parse(arg: &str, hex: bool) -> Result<Vec<u8>, String> {
    if !hex {
        return Ok(arg.as_bytes().to_vec());
    }
    let digits = arg.strip_prefix("0x").unwrap_or(arg);
    if !digits.len().is_multiple_of(2) {
        return Err(format!("'{arg}' is not hex: odd number of digits"));
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| {
            digits
                .get(i..i + 2)
                .and_then(|d| u8::from_str_radix(d, 16).ok())
                .ok_or_else(|| format!("'{arg}' is not hex"))
        })
        .collect()
}

/// Renders bytes for output: lowercase hex with `hex`, else UTF-8 text
/// with control characters, backslash and invalid UTF-8 bytes escaped as
/// `\\`, `\xNN`.
#[must_use]
pub fn show(bytes: &[u8], hex: bool) -> String {
    let mut out = String::with_capacity(bytes.len() * if hex { 2 } else { 1 });
    if hex {
        for b in bytes {
            let _ = write!(out, "{b:02x}");
        }
        return out;
    }
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                c if c.is_control() => {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        let _ = write!(out, "\\x{b:02x}");
                    }
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_a_terminal_cannot_show() {
        assert_eq!(show(b"a\x00b\\\xff\n", false), "a\\x00b\\\\\\xff\\x0a");
        assert_eq!(show("héllo".as_bytes(), false), "héllo");
        assert_eq!(show(b"\x00\xab", true), "00ab");
    }

    #[test]
    fn hex_round_trips_and_rejects_garbage() {
        assert_eq!(parse("00ff10", true).unwrap(), [0, 0xff, 0x10]);
        assert_eq!(parse("0xAB", true).unwrap(), [0xab]);
        assert!(parse("abc", true).is_err());
        assert!(parse("zz", true).is_err());
        assert_eq!(parse("zz", false).unwrap(), b"zz");
    }
}
