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
    // from_str_radix alone would take "+a" as a digit pair.
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("'{arg}' is not hex"));
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
/// with backslash as `\\`, control characters and invalid UTF-8 bytes as
/// `\xNN` (one per byte), and characters that print as nothing or change
/// how the text around them prints ([`is_invisible`]) as `\u{XXXX}`.
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
                c if is_invisible(c) => {
                    let _ = write!(out, "\\u{{{:04x}}}", u32::from(c));
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

/// Reads back what [`show`] prints without `hex`: `\\` is a backslash,
/// `\xNN` one byte, `\u{X…}` one character, and every other character is
/// itself. So the keys and values `sst scan` prints can be written again
/// (`sst write`), tabs, newlines and invalid UTF-8 included.
///
/// # Errors
/// A message naming the first backslash that starts none of these.
pub fn unescape(text: &str) -> Result<Vec<u8>, String> {
    let bad = |at: &str| {
        let shown: String = at.chars().take(8).collect();
        format!(
            r"'{shown}' is not an escape: write \\ for a backslash, \xNN for a byte, \u{{XXXX}} for a character"
        )
    };
    let hex_digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_hexdigit());
    let mut out = Vec::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('\\') {
        out.extend_from_slice(&rest.as_bytes()[..i]);
        let at = &rest[i..];
        let after = &at[1..];
        let used = if after.starts_with('\\') {
            out.push(b'\\');
            1
        } else if let Some(h) = after.strip_prefix('x') {
            let byte = h.get(..2).filter(|d| hex_digits(d)).and_then(|d| u8::from_str_radix(d, 16).ok());
            out.push(byte.ok_or_else(|| bad(at))?);
            3
        } else if let Some(h) = after.strip_prefix("u{") {
            let end = h.find('}').ok_or_else(|| bad(at))?;
            let c = Some(&h[..end])
                .filter(|d| hex_digits(d))
                .and_then(|d| u32::from_str_radix(d, 16).ok())
                .and_then(char::from_u32)
                .ok_or_else(|| bad(at))?;
            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            end + 3
        } else {
            return Err(bad(at));
        };
        rest = &after[used..];
    }
    out.extend_from_slice(rest.as_bytes());
    Ok(out)
}

/// Unicode format characters (general category Cf, Unicode 15.1), which
/// are invisible or reorder the text around them (zero-width space,
/// bidirectional overrides, the byte-order mark, …).
const FORMAT_CHARS: &[(u32, u32)] = &[
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
];

/// Whether `c` prints as nothing, as blank space other than U+0020, or
/// changes how the text around it prints: format characters (Cf), the
/// line and paragraph separators (U+2028, U+2029), space separators other
/// than the ASCII space (no-break and width-specific spaces), and the
/// Hangul fillers that render blank. Such a character in a key would make
/// two different keys look the same, or hide part of a line.
#[must_use]
pub fn is_invisible(c: char) -> bool {
    let u = u32::from(c);
    matches!(u, 0x2028 | 0x2029 | 0x00A0 | 0x1680 | 0x2000..=0x200A | 0x202F | 0x205F | 0x3000)
        || matches!(u, 0x115F | 0x1160 | 0x3164 | 0xFFA0)
        || FORMAT_CHARS.iter().any(|&(lo, hi)| (lo..=hi).contains(&u))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_arguments_take_hex_digits_only() {
        assert_eq!(parse("0x6b0A", true).unwrap(), vec![0x6b, 0x0a]);
        for bad in ["+6+b", "6+", "-1", " 6", "6g", "abc"] {
            assert!(parse(bad, true).is_err(), "{bad}");
        }
    }

    #[test]
    fn escapes_what_a_terminal_cannot_show() {
        assert_eq!(show(b"a\x00b\\\xff\n", false), "a\\x00b\\\\\\xff\\x0a");
        assert_eq!(show("héllo".as_bytes(), false), "héllo");
        assert_eq!(show(b"\x00\xab", true), "00ab");
    }

    #[test]
    fn escapes_invisible_and_reordering_characters() {
        assert_eq!(show("a\u{200b}b".as_bytes(), false), "a\\u{200b}b");
        assert_eq!(show("x\u{202e}y".as_bytes(), false), "x\\u{202e}y");
        assert_eq!(show("\u{feff}k".as_bytes(), false), "\\u{feff}k");
        assert_eq!(show("l\u{2028}p\u{2029}".as_bytes(), false), "l\\u{2028}p\\u{2029}");
        assert_eq!(show("soft\u{ad}hyphen".as_bytes(), false), "soft\\u{00ad}hyphen");
        assert_eq!(show("tag\u{e0041}".as_bytes(), false), "tag\\u{e0041}");
        assert_eq!(show("nb\u{a0}sp".as_bytes(), false), "nb\\u{00a0}sp");
        // Printable text stays as it is, wide and combining characters included.
        for s in ["日本語", "café", "e\u{301}", "😀", "Ωmega", "a b"] {
            assert_eq!(show(s.as_bytes(), false), s);
        }
        // A C1 control is still a control: escaped byte by byte.
        assert_eq!(show("\u{85}".as_bytes(), false), "\\xc2\\x85");
    }

    #[test]
    fn unescape_reads_back_what_show_prints() {
        let cases: [&[u8]; 7] = [
            b"plain",
            b"a\tb\nc",
            b"back\\slash\\",
            b"\x00\xff\xc2",
            "zw\u{200b}sp".as_bytes(),
            "caf\u{e9}".as_bytes(),
            b"",
        ];
        for bytes in cases {
            assert_eq!(unescape(&show(bytes, false)).unwrap(), bytes, "{}", show(bytes, false));
        }
        assert_eq!(unescape("\\u{1F600}").unwrap(), "\u{1F600}".as_bytes());
        for bad in ["\\", "a\\n", "\\x0", "\\xzz", "\\u{}", "\\u{d800}", "\\u{110000}", "\\u{41"] {
            let e = unescape(bad).unwrap_err();
            assert!(e.contains("is not an escape"), "{bad}: {e}");
        }
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
