//! The report's opening lines: for each workload, the policy to pick at the
//! filter memory the default policy spends, where the default stands among
//! the policies at that memory, and, when spending more buys a real gain,
//! what each extra bit per key buys.
//!
//! Two policies that read nearly as many blocks have not beaten each other:
//! a difference within [`TIE_ERRORS`] standard errors ([`Contender::standard_error`])
//! is a tie, and the line says so rather than crowning either. And a policy
//! that reads fewer blocks with more memory has not beaten the others like
//! for like, so the pick is made among policies within [`EQUAL_MEMORY`] of
//! the default's bits per key, and more memory is judged on its own line.

pub mod detail;

use serde_json::{Value, json};

/// Bits per key within this fraction of each other count as equal memory.
pub const EQUAL_MEMORY: f64 = 0.05;

/// Means closer than this many standard errors of their difference are a tie.
pub const TIE_ERRORS: f64 = 3.0;

/// The share of `baseline`'s reads that `blocks` (per lookup) saves, as a
/// percentage with the precision its size needs ("99.62%", "43.1%"). A
/// share that would print as "100.00%" while `read`, the blocks read over
/// the run, is not 0 prints as "all but `read`" instead: the reads left are
/// the figure that still differs.
#[must_use]
pub fn saved(blocks: f64, read: u64, baseline: f64) -> Option<String> {
    (baseline > 0.0).then(|| {
        let pct = (1.0 - blocks / baseline) * 100.0;
        let s = if pct.abs() >= 99.0 { format!("{pct:.2}%") } else { format!("{pct:.1}%") };
        if s == "100.00%" && read > 0 { format!("all but {read}") } else { s }
    })
}

/// A policy's counts on one workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Contender {
    /// The policy's name.
    pub name: String,
    /// Data blocks read over the run.
    pub read: u64,
    /// Lookups run.
    pub lookups: u64,
    /// Lookups of present keys.
    pub present: u64,
    /// Σ (share of the lookups on key k)²: 1/lookups when no key repeats.
    pub repeat_weight: f64,
    /// Filter bits per key over the tree.
    pub bits_per_key: f64,
}

impl Contender {
    /// Data blocks read per lookup.
    #[must_use]
    pub fn mean(&self) -> f64 {
        self.read as f64 / self.lookups.max(1) as f64
    }

    /// The standard error of [`Contender::mean`], from the counts alone.
    ///
    /// Every policy runs the same lookup sequence, so the present keys, and
    /// the one block each is found in, are the same for all of them and
    /// cancel in a comparison; what varies is the wasted reads, `read −
    /// present`. Each is a filter's false positive (or a read of a table
    /// without a filter): a sum of independent yes/no events, whose variance
    /// Σ p(1 − p) is at most its mean Σ p, so the wasted count is taken as
    /// Poisson with variance equal to the count observed (an overestimate
    /// for reads that were certain). A key asked again repeats its outcome
    /// (a filter's answer is fixed once built), so over the lookups the
    /// variance of the mean is Σ_k w_k² · (wasted / lookups), with w_k the
    /// key's share of the lookups (`repeat_weight`): wasted / lookups² when
    /// no key repeats. The standard error is its square root.
    #[must_use]
    pub fn standard_error(&self) -> f64 {
        let wasted = self.read.saturating_sub(self.present) as f64;
        (self.repeat_weight * wasted / self.lookups.max(1) as f64).sqrt()
    }

    /// Whether `self` and `other` read as many blocks within [`TIE_ERRORS`]
    /// standard errors of their difference (the errors are independent:
    /// different filters).
    #[must_use]
    pub fn ties(&self, other: &Contender) -> bool {
        let error = self.standard_error().hypot(other.standard_error());
        (self.mean() - other.mean()).abs() <= TIE_ERRORS * error
    }

    /// Whether `self` reads fewer blocks than `other` beyond a tie.
    #[must_use]
    pub fn beats(&self, other: &Contender) -> bool {
        self.mean() < other.mean() && !self.ties(other)
    }
}

/// What more memory buys over the pick.
#[derive(Debug, Clone, PartialEq)]
pub struct Upgrade {
    /// The policy spending more.
    pub name: String,
    /// Its bits per key.
    pub bits_per_key: f64,
    /// Its data blocks per lookup.
    pub blocks_per_lookup: f64,
    /// Blocks per lookup it saves over the pick, per extra bit per key.
    pub blocks_per_extra_bit: f64,
}

/// The verdict on one workload ([`judge`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The workload's name.
    pub workload: String,
    /// The policy to pick at the default's memory.
    pub pick: Contender,
    /// The other policies at that memory whose reads tie the pick's.
    pub ties: Vec<String>,
    /// The default policy's counts, when it ran.
    pub default: Option<Contender>,
    /// The default's place at its memory: 1 + the policies there that read
    /// fewer blocks beyond a tie (0 when the default did not run).
    pub default_rank: usize,
    /// Policies within [`EQUAL_MEMORY`] of the default's bits per key (all
    /// of them without a default).
    pub compared: usize,
    /// The no-filter baseline's blocks per lookup, when it ran.
    pub baseline: Option<f64>,
    /// The policy with more memory that saves the most blocks per extra
    /// bit, among those that read fewer blocks than the pick beyond a tie.
    pub upgrade: Option<Upgrade>,
}

/// Judges one workload: `contenders` are the policies with a filter,
/// `default` the default policy's name when it ran, `baseline` the
/// no-filter policy's blocks per lookup. `None` when there is no contender.
///
/// The pick is the policy that reads the fewest blocks among those within
/// [`EQUAL_MEMORY`] of the default's bits per key; when the default ties
/// it, the default is the pick (switching would buy nothing measurable).
#[must_use]
pub fn judge(
    workload: &str,
    baseline: Option<f64>,
    contenders: &[Contender],
    default: Option<&str>,
) -> Option<Verdict> {
    let default = default.and_then(|d| contenders.iter().find(|c| c.name == d));
    let same_memory = |c: &&Contender| {
        default.is_none_or(|d| (c.bits_per_key - d.bits_per_key).abs() <= EQUAL_MEMORY * d.bits_per_key)
    };
    let band: Vec<&Contender> = contenders.iter().filter(same_memory).collect();
    let best = *band
        .iter()
        .min_by(|a, b| a.mean().total_cmp(&b.mean()).then(a.bits_per_key.total_cmp(&b.bits_per_key)))?;
    let pick = match default {
        Some(d) if d.ties(best) => d,
        _ => best,
    };
    let ties = band.iter().filter(|c| c.name != pick.name && c.ties(pick)).map(|c| c.name.clone()).collect();
    let upgrade = contenders
        .iter()
        .filter(|c| c.bits_per_key > pick.bits_per_key * (1.0 + EQUAL_MEMORY) && c.beats(pick))
        .map(|c| Upgrade {
            name: c.name.clone(),
            bits_per_key: c.bits_per_key,
            blocks_per_lookup: c.mean(),
            blocks_per_extra_bit: (pick.mean() - c.mean()) / (c.bits_per_key - pick.bits_per_key),
        })
        .max_by(|a, b| a.blocks_per_extra_bit.total_cmp(&b.blocks_per_extra_bit));
    Some(Verdict {
        workload: workload.to_string(),
        pick: pick.clone(),
        ties,
        default: default.cloned(),
        default_rank: default.map_or(0, |d| 1 + band.iter().filter(|c| c.beats(d)).count()),
        compared: band.len(),
        baseline,
        upgrade,
    })
}

/// Blocks per lookup with four decimals, or three significant digits
/// when that would print a small nonzero figure as zeros.
fn per_lookup(x: f64) -> String {
    let digits = if x > 0.0 { (2.0 - x.log10().floor()).clamp(4.0, 9.0) } else { 4.0 };
    #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "clamped to 4..=9")]
    let digits = digits as usize;
    format!("{x:.digits$}")
}

/// "1st", "2nd", "3rd", "4th"…
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

impl Verdict {
    /// The default's standing in words: "the pick", "ties the pick", "2nd
    /// of 5 (0.0041)" (its blocks per lookup) or "not run".
    #[must_use]
    pub fn default_standing(&self) -> String {
        match &self.default {
            None => "not run".into(),
            Some(d) if d.name == self.pick.name => "the pick".into(),
            Some(d) if self.ties.contains(&d.name) => "ties the pick".into(),
            Some(d) => {
                format!("{} of {} ({})", ordinal(self.default_rank), self.compared, per_lookup(d.mean()))
            }
        }
    }

    /// The memory the pick was made at: "monkey:10's 9.96 bits/key ±5%",
    /// or any memory without the default.
    #[must_use]
    pub fn memory(&self) -> String {
        match &self.default {
            Some(d) => format!("{}'s {:.2} bits/key ±5%", d.name, d.bits_per_key),
            None => "any memory (the default policy did not run)".into(),
        }
    }

    /// The verdict's lines: the pick and the default's standing, and, when
    /// more memory buys a real gain, what it buys.
    #[must_use]
    pub fn lines(&self) -> Vec<String> {
        let p = &self.pick;
        let is_default = self.default.as_ref().is_some_and(|d| d.name == p.name);
        let mut s = format!(
            "{}: {} {}{}: {} blocks/lookup",
            self.workload,
            if is_default { "keep" } else { "pick" },
            p.name,
            if is_default { " (the default)" } else { "" },
            per_lookup(p.mean())
        );
        if let Some(pct) = self.baseline.and_then(|b| saved(p.mean(), p.read, b)) {
            s.push_str(&format!(", {pct} saved"));
        }
        if !self.ties.is_empty() {
            s.push_str(&format!("; ties {}", self.ties.join(", ")));
        }
        match &self.default {
            Some(d) if !is_default => {
                s.push_str(&format!("; the default {} is {}", d.name, self.default_standing()));
            }
            Some(_) if self.compared == 1 => s.push_str("; no other policy spends that memory"),
            _ => {}
        }
        s.push('.');
        let mut out = vec![s];
        if let Some(u) = &self.upgrade {
            out.push(format!(
                "{}, more memory: {} at {:.2} bits/key reads {} blocks/lookup, {} fewer per extra bit/key.",
                self.workload,
                u.name,
                u.bits_per_key,
                per_lookup(u.blocks_per_lookup),
                per_lookup(u.blocks_per_extra_bit),
            ));
        }
        out
    }

    /// The verdict as a JSON object.
    #[must_use]
    pub fn to_json(&self) -> Value {
        let figures = |c: &Contender| {
            json!({
                "policy": c.name, "blocks_per_lookup": c.mean(), "standard_error": c.standard_error(),
                "bits_per_key": c.bits_per_key,
            })
        };
        json!({
            "workload": self.workload,
            "pick": figures(&self.pick),
            "ties": self.ties,
            "default": self.default.as_ref().map(figures),
            "default_rank": (self.default_rank > 0).then_some(self.default_rank),
            "default_standing": self.default_standing(),
            "compared": self.compared,
            "more_memory": self.upgrade.as_ref().map(|u| json!({
                "policy": u.name, "bits_per_key": u.bits_per_key, "blocks_per_lookup": u.blocks_per_lookup,
                "blocks_per_lookup_saved_per_extra_bit": u.blocks_per_extra_bit,
            })),
            "lines": self.lines(),
        })
    }
}

#[cfg(test)]
mod tests;
