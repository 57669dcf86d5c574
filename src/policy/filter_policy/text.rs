//! A policy's text: the one grammar the library, the manifest and every CLI
//! command share. [`Display`](fmt::Display) writes what
//! [`FromStr`] reads, so the manifest can store a policy as its text.

use std::fmt;
use std::str::FromStr;

use super::{FilterPolicy, MAX_MONKEY_BITS_PER_KEY, Rule};
use crate::filter::FilterKind;
use crate::{Error, Result};

impl fmt::Display for FilterPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.rule {
            Rule::PerLevel(kinds) if kinds.len() <= 1 => {
                write!(f, "{}", kinds.first().copied().unwrap_or(FilterKind::None))?;
            }
            Rule::PerLevel(kinds) => {
                let names: Vec<String> = kinds.iter().map(ToString::to_string).collect();
                write!(f, "per-level:{}", names.join(","))?;
            }
            Rule::Monkey { bits_per_key } => write!(f, "monkey:{bits_per_key}")?,
        }
        if self.skip_last_level {
            write!(f, "+skip-last")?;
        }
        Ok(())
    }
}

/// The forms [`FilterPolicy::from_str`] accepts, for error messages.
pub const POLICY_FORMS: &str = "default, a filter kind on every level (none, bloom:B, blocked-bloom:B, \
     xor8, xor16, fuse8, fuse16, ribbon:B with B <= 32), per-level:K0,K1,... (level 0 first, the last repeating), or \
     monkey:B (0 < B <= 64 bits per key), each optionally followed by +skip-last";

impl FromStr for FilterPolicy {
    type Err = Error;

    /// Parses the policy grammar shared by the library, the manifest and
    /// every CLI command: `default`, a filter kind applied on every level
    /// (`none`, `bloom:10`, `blocked-bloom:10`, `xor8`, `fuse8`, …),
    /// `per-level:<kind>,<kind>,…`, or `monkey:<bits per key>`; any of them
    /// may end in `+skip-last`. [`Display`](fmt::Display) writes the same
    /// grammar, so a policy round-trips through its text.
    ///
    /// ```
    /// use siftdb::FilterPolicy;
    /// let p: FilterPolicy = "monkey:10+skip-last".parse().unwrap();
    /// assert_eq!(p.to_string(), "monkey:10+skip-last");
    /// assert!("monkey:1000".parse::<FilterPolicy>().is_err());
    /// ```
    ///
    /// # Errors
    /// `InvalidArgument` saying what is wrong and naming every accepted form.
    fn from_str(s: &str) -> Result<Self> {
        let bad =
            |why: String| Error::InvalidArgument(format!("policy '{s}': {why}; expected {POLICY_FORMS}"));
        let (body, skip) = match s.trim().strip_suffix("+skip-last") {
            Some(body) => (body, true),
            None => (s.trim(), false),
        };
        // A kind's error lists the kinds, and so does POLICY_FORMS: the
        // message keeps the one list that also shows the other forms.
        let kind_error = |e: Error| match e {
            Error::InvalidArgument(msg) => {
                bad(msg.split_once(" (expected ").map_or(msg.as_str(), |(why, _)| why).to_string())
            }
            other => other,
        };
        let policy = if body == "default" {
            FilterPolicy::default()
        } else if let Some(bits) = body.strip_prefix("monkey:") {
            match bits.parse::<f64>().map(FilterPolicy::monkey) {
                Ok(Ok(p)) => p,
                _ => {
                    return Err(bad(format!(
                        "monkey takes bits per key above 0 and at most {MAX_MONKEY_BITS_PER_KEY}, got '{bits}'"
                    )));
                }
            }
        } else if let Some(spec) = body.strip_prefix("per-level:") {
            let kinds = spec.split(',').map(|k| k.trim().parse()).collect::<Result<Vec<FilterKind>>>();
            FilterPolicy::per_level(kinds.map_err(kind_error)?)
        } else if body.contains(',') {
            return Err(bad(format!("a list of kinds needs the prefix: per-level:{body}")));
        } else {
            FilterPolicy::uniform(body.parse().map_err(kind_error)?)
        };
        Ok(policy.with_skip_last_level(skip))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn kind() -> impl Strategy<Value = FilterKind> {
        let kinds: Vec<FilterKind> =
            std::iter::once(FilterKind::None).chain(FilterKind::ALL.iter().copied()).collect();
        (proptest::sample::select(kinds), 1.0f64..=64.0)
            .prop_map(|(k, b)| k.at_bits_per_key(b.min(k.max_bits_per_key().unwrap_or(b))))
    }

    fn policy() -> impl Strategy<Value = FilterPolicy> {
        let rule = prop_oneof![
            kind().prop_map(FilterPolicy::uniform),
            proptest::collection::vec(kind(), 0..6).prop_map(FilterPolicy::per_level),
            (1e-3f64..=64.0).prop_map(|b| FilterPolicy::monkey(b).unwrap()),
        ];
        (rule, any::<bool>()).prop_map(|(p, skip)| p.with_skip_last_level(skip))
    }

    proptest! {
        /// Every policy the grammar can express prints as text that parses
        /// back to the same policy (the manifest stores it as that text).
        #[test]
        fn every_policy_round_trips_through_its_text(p in policy()) {
            let text = p.to_string();
            let back: FilterPolicy = text.parse().map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
            prop_assert_eq!(back, p, "{}", text);
        }
    }

    #[test]
    fn an_empty_per_level_list_is_none() {
        let empty = FilterPolicy::per_level(vec![]);
        assert_eq!(empty, FilterPolicy::uniform(FilterKind::None));
        assert_eq!(empty.to_string().parse::<FilterPolicy>().unwrap(), empty);
    }

    #[test]
    fn policy_names_round_trip() {
        for name in
            ["none", "bloom:10", "fuse8", "monkey:10", "per-level:blocked-bloom:10,fuse8", "xor16+skip-last"]
        {
            let p: FilterPolicy = name.parse().unwrap();
            assert_eq!(p.to_string(), name);
        }
        assert_eq!("default".parse::<FilterPolicy>().unwrap(), FilterPolicy::default());
        let default_name = FilterPolicy::default().to_string();
        assert_eq!(default_name.parse::<FilterPolicy>().unwrap(), FilterPolicy::default());
        for bad in [
            "monkey:",
            "monkey:-1",
            "monkey:0",
            "monkey:1000",
            "monkey:NaN",
            "per-level:",
            "per-level:xor8,,fuse8",
            "blocked-bloom:10,fuse8",
            "bogus",
            "xor8+skip-last+skip-last",
        ] {
            match bad.parse::<FilterPolicy>() {
                Err(Error::InvalidArgument(msg)) => {
                    assert!(msg.contains(POLICY_FORMS), "{bad}: {msg}");
                    assert_eq!(msg.matches("blocked-bloom:B").count(), 1, "the kinds listed twice: {msg}");
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }
}
