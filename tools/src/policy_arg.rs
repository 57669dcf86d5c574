//! `--policy` and `--policies` as clap parses them, so that a policy that
//! does not parse is a usage error (exit 2, `"kind": "usage"`) on every
//! command that takes one, with clap naming the flag and the value once.

use siftdb::{Error, FilterPolicy};

/// Parses one policy in the library's grammar ([`FilterPolicy`]'s `FromStr`).
///
/// # Errors
/// What is wrong with it, and the accepted forms.
pub fn parse(s: &str) -> Result<FilterPolicy, String> {
    s.parse::<FilterPolicy>().map_err(|e| why(s, &e))
}

/// The library's message without what clap's own line already says: clap
/// writes "invalid value 'X' for '--policy <POLICY>': ", so "invalid
/// argument: policy 'X': " would name the value a second time.
pub fn why(s: &str, e: &Error) -> String {
    match e {
        Error::InvalidArgument(msg) => msg.strip_prefix(&format!("policy '{s}': ")).unwrap_or(msg).to_owned(),
        other => other.to_string(),
    }
}
