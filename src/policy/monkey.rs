//! Monkey's allocation of filter memory across LSM levels.
//!
//! Dayan, Athanassoulis and Idreos (SIGMOD 2017) observe that a point lookup
//! for an absent key probes one filter per sorted run, so the expected number
//! of wasted data-block reads is the *sum* of the runs' false-positive rates.
//! Giving every level the same bits per key (and so the same rate) is not
//! what minimises that sum: bits spent on a small level protect few keys.
//!
//! With the Bloom memory model `bits(N, p) = N · ln(1/p) / (ln 2)²`, the
//! Lagrangian of "minimise Σ pᵢ subject to Σ bits(Nᵢ, pᵢ) = M" gives
//! `pᵢ = λ · Nᵢ`: each level's rate is proportional to its size, capped at 1
//! (a level whose optimal rate reaches 1 gets no filter at all). λ is found by
//! bisection on the memory constraint, which is monotone in λ
//! ([`monkey_rates`], the paper's formula).
//!
//! Real filters do not follow that model: a binary fuse filter offers one
//! rate at a cost that depends on the table's key count (13 bits/key at 250
//! keys, 9.0 at 10^6), blocked Bloom pays ~1 bit/key more than the model at
//! 1% and rounds to 64-byte blocks, and every table's filter block carries
//! headers. [`monkey_plan`] therefore solves the same Lagrangian on the real
//! cost curves: for a multiplier μ each level takes the option (no filter,
//! blocked Bloom at any bits/key, xor or binary fuse, Ribbon at a whole
//! number of columns: `ribbon.rs`) minimising
//! `runs · (p + μ · N · bits_per_key)`, μ is bisected until the real bits fit
//! the budget, and what a jump between options leaves unspent is shared out
//! to the Bloom and Ribbon levels, so the plan spends the budget to within
//! 0.01 bits/key.

use std::collections::HashMap;
use std::sync::OnceLock;

use parking_lot::Mutex;

use super::LevelFilter;
use super::cost::expected_blocked_bloom_bits;
use crate::filter::{BlockedBloom, FilterKind};
use ribbon::{ribbon_bits_for, ribbon_choice};
use rivals::{TIE, UNIFORM_SLACK, mix_in_slack, static_options, uniform_plans};
use spread::spread;

mod ribbon;
mod rivals;
mod spread;

const LN2_SQUARED: f64 = std::f64::consts::LN_2 * std::f64::consts::LN_2;

/// Bits a Bloom-model filter needs per key for false-positive rate `p`.
#[must_use]
pub fn model_bits_per_key(p: f64) -> f64 {
    if p >= 1.0 { 0.0 } else { (1.0 / p).ln() / LN2_SQUARED }
}

/// The false-positive rate a Bloom-model filter reaches with `bits_per_key`.
#[must_use]
pub fn model_fpr(bits_per_key: f64) -> f64 {
    (-bits_per_key * LN2_SQUARED).exp()
}

/// Monkey-optimal per-level false-positive rates.
///
/// `level_keys[i]` is the (expected) number of keys at level `i`; the budget
/// is `bits_per_key` averaged over all of them. Levels with no keys get a rate
/// of 1 (no filter). The result minimises the sum of rates for that budget.
///
/// ```
/// use siftdb::policy::monkey_rates;
/// let rates = monkey_rates(&[1.0, 10.0, 100.0, 1000.0], 10.0);
/// // Rates grow with level size: the biggest level gets the loosest filter.
/// assert!(rates.windows(2).all(|w| w[0] < w[1]));
/// ```
#[must_use]
pub fn monkey_rates(level_keys: &[f64], bits_per_key: f64) -> Vec<f64> {
    let total: f64 = level_keys.iter().filter(|n| n.is_finite() && **n > 0.0).sum();
    if total <= 0.0 || !bits_per_key.is_finite() || bits_per_key <= 0.0 {
        return vec![1.0; level_keys.len()];
    }
    let budget = bits_per_key * total;
    let rates_for = |lambda: f64| -> Vec<f64> {
        level_keys.iter().map(|&n| if n > 0.0 { (lambda * n).min(1.0) } else { 1.0 }).collect()
    };
    let memory = |rates: &[f64]| -> f64 {
        level_keys
            .iter()
            .zip(rates)
            .map(|(&n, &p)| if n > 0.0 { n * model_bits_per_key(p) } else { 0.0 })
            .sum()
    };
    // Memory falls as λ grows; bisect in log space between "every level at
    // rate ~0" and "every level at rate 1".
    let (mut lo, mut hi) = (1e-300_f64.ln(), 0.0_f64);
    for _ in 0..200 {
        let mid = f64::midpoint(lo, hi);
        if memory(&rates_for(mid.exp())) > budget {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    rates_for(hi.exp())
}

/// One level as [`monkey_plan`] sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelModel {
    /// Keys in one sorted run of the level (a level ≥ 1 is one run; each
    /// level-0 table is a run of its own).
    pub run_keys: f64,
    /// Runs an absent-key lookup probes at this level (1 below level 0).
    pub runs: f64,
    /// Distinct keys per table, which the filter's real size depends on.
    pub table_keys: f64,
}

impl LevelModel {
    /// Keys in the whole level.
    #[must_use]
    pub fn keys(&self) -> f64 {
        self.run_keys * self.runs
    }
}

/// Blocked-Bloom bits/key the solver considers: 1 to 48 in steps of 1/20
/// (48 bits/key is a rate of ~10^-10; nothing stronger is worth asking for).
const BLOOM_MIN_BITS: f64 = 1.0;
const BLOOM_MAX_BITS: f64 = 48.0;
const BLOOM_STEP: f64 = 0.05;
const BLOOM_STEPS: u32 = 940;

/// The blocked-Bloom rate at each grid point (computed once, ~0.1 s).
fn bloom_grid() -> &'static [f64] {
    static GRID: OnceLock<Vec<f64>> = OnceLock::new();
    GRID.get_or_init(|| {
        (0..=BLOOM_STEPS)
            .map(|j| BlockedBloom::fpr_for_bits_per_key(BLOOM_MIN_BITS + f64::from(j) * BLOOM_STEP))
            .collect()
    })
}

/// The blocked-Bloom rate at `b` bits/key read off the grid, interpolated
/// in `ln p` (about linear in the bits/key) between its points. The exact
/// rate is a sum over block loads, ~100 µs a call; the solver asks for
/// thousands of candidates, so it searches on this and [`exact_rates`]
/// prices only the plan it settles on.
fn grid_fpr(b: f64) -> f64 {
    let grid = bloom_grid();
    let x = (b.clamp(BLOOM_MIN_BITS, BLOOM_MAX_BITS) - BLOOM_MIN_BITS) / BLOOM_STEP;
    #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "a grid index in range")]
    let i = (x.floor() as usize).min(grid.len() - 2);
    #[expect(clippy::cast_precision_loss, reason = "a grid index")]
    let t = x - i as f64;
    let (lo, hi) = (grid[i].ln(), grid[i + 1].ln());
    (lo + (hi - lo) * t).exp()
}

/// The exact blocked-Bloom rate at `b` bits/key, remembered: plans repeat
/// the same hundredths from one flush or compaction to the next.
fn exact_bloom_fpr(b: f64) -> f64 {
    static MEMO: OnceLock<Mutex<HashMap<u64, f64>>> = OnceLock::new();
    let memo = MEMO.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(&p) = memo.lock().get(&b.to_bits()) {
        return p;
    }
    let p = BlockedBloom::fpr_for_bits_per_key(b);
    let mut m = memo.lock();
    // A bound keeps a long-lived process from growing it without end;
    // clearing costs only recomputation.
    if m.len() > 100_000 {
        m.clear();
    }
    m.insert(b.to_bits(), p);
    p
}

/// Replaces the grid rates of the plan's blocked-Bloom levels by exact ones.
fn exact_rates(plan: &mut [LevelFilter]) {
    for c in plan {
        *c = exact(*c);
    }
}

/// `c` with its exact rate, if blocked Bloom.
fn exact(mut c: LevelFilter) -> LevelFilter {
    if let FilterKind::BlockedBloom { bits_per_key } = c.kind {
        c.target_fpr = exact_bloom_fpr(bits_per_key);
    }
    c
}

fn bloom_choice(bits_per_key: f64, table_keys: f64) -> LevelFilter {
    let b = bits_per_key.clamp(BLOOM_MIN_BITS, BLOOM_MAX_BITS);
    LevelFilter {
        kind: FilterKind::BlockedBloom { bits_per_key: b },
        target_fpr: grid_fpr(b),
        bits_per_key: expected_blocked_bloom_bits(b, table_keys),
        mix: None,
    }
}

/// The blocked-Bloom bits/key parameter (a hundredth below) whose expected
/// real cost is `real_bits` per key, if at least the 1 bit/key minimum.
fn bloom_bits_for(real_bits: f64, table_keys: f64) -> Option<f64> {
    // Past one block the cost is b plus a fixed per-key overhead; the
    // check covers the one-block case, where it is flat.
    let offset = expected_blocked_bloom_bits(BLOOM_MAX_BITS, table_keys) - BLOOM_MAX_BITS;
    let b = ((real_bits - offset) * 100.0).floor() / 100.0;
    (b >= BLOOM_MIN_BITS && expected_blocked_bloom_bits(b, table_keys) <= real_bits)
        .then_some(b.min(BLOOM_MAX_BITS))
}

/// The blocked-Bloom filter on the grid minimising `p + weight · bits` for
/// tables of `table_keys` keys. Past one block the cost is affine in the
/// bits/key and the rate convex, so the optimum is where the rate's fall
/// per step drops below the step's cost (a binary search); within one block
/// (tiny tables) more bits are free, so the top of that block competes too.
fn best_bloom(table_keys: f64, weight: f64) -> LevelFilter {
    let grid = bloom_grid();
    let step_cost = weight * BLOOM_STEP;
    let (mut lo, mut hi) = (0usize, grid.len() - 1);
    while lo < hi {
        let mid = usize::midpoint(lo, hi);
        if grid[mid] - grid[mid + 1] > step_cost { lo = mid + 1 } else { hi = mid }
    }
    #[expect(clippy::cast_precision_loss, reason = "a grid index")]
    let b = BLOOM_MIN_BITS + lo as f64 * BLOOM_STEP;
    let affine = LevelFilter {
        kind: FilterKind::BlockedBloom { bits_per_key: b },
        target_fpr: grid[lo],
        bits_per_key: expected_blocked_bloom_bits(b, table_keys),
        mix: None,
    };
    let flat_top = (256.0 / table_keys.max(1.0)).min(BLOOM_MAX_BITS);
    if flat_top <= b {
        return affine;
    }
    let top = bloom_choice(flat_top, table_keys);
    let score = |c: &LevelFilter| c.target_fpr + weight * c.bits_per_key;
    if score(&top) < score(&affine) { top } else { affine }
}

/// The option minimising `p + weight · bits_per_key` at one level; a
/// filter of some kind when `must_filter`.
fn best_option(statics: &[LevelFilter], table_keys: f64, weight: f64, must_filter: bool) -> LevelFilter {
    let score = |c: &LevelFilter| c.target_fpr + weight * c.bits_per_key;
    std::iter::once(LevelFilter::NONE)
        .filter(|_| !must_filter)
        .chain(statics.iter().copied())
        .chain(std::iter::once(best_bloom(table_keys, weight)))
        .min_by(|a, b| score(a).total_cmp(&score(b)))
        .unwrap_or(LevelFilter::NONE)
}

/// Monkey on real filter costs: the filter of every level minimising the
/// summed false-positive rate of all runs, `Σ runs · p`, within
/// `budget_bits` of real filter bits over the whole of `levels`.
///
/// The budget is met to within 0.01 bits/key when some level uses blocked
/// Bloom (its bits/key is continuous); with only fixed-rate kinds chosen,
/// the plan may spend a little less.
///
/// ```
/// use siftdb::policy::{LevelModel, monkey_plan};
/// let levels: Vec<LevelModel> = [1e4, 1e5, 1e6, 1e7]
///     .iter()
///     .map(|&n| LevelModel { run_keys: n, runs: 1.0, table_keys: f64::min(n, 1e5) })
///     .collect();
/// let total: f64 = levels.iter().map(LevelModel::keys).sum();
/// let plan = monkey_plan(&levels, 10.0 * total);
/// let spent: f64 = plan.iter().zip(&levels).map(|(c, l)| c.bits_per_key * l.keys()).sum();
/// assert!((spent / total - 10.0).abs() < 0.01);
/// assert!(plan.windows(2).all(|w| w[0].target_fpr <= w[1].target_fpr));
/// ```
#[must_use]
pub fn monkey_plan(levels: &[LevelModel], budget_bits: f64) -> Vec<LevelFilter> {
    plan(levels, budget_bits, 0, 0)
}

/// [`monkey_plan`] for a tree whose level 0 (`levels[0]`) holds flushes on
/// their way down: its keys are counted again in the levels below, where
/// they will settle, so the budget is spent on levels 1 and deeper alone,
/// and level 0's tables take the filter a bit is worth at the same margin
/// (the plan's μ) on top of it. Right after `Db::compact`, with level 0
/// empty, the tree then spends exactly its budget.
#[must_use]
pub fn monkey_plan_settling(levels: &[LevelModel], budget_bits: f64) -> Vec<LevelFilter> {
    plan(levels, budget_bits, 1, 1)
}

/// [`monkey_plan`] for a live tree that is level 0 alone (a new database's
/// first flushes): level 0 is charged, as the only level, and is still the
/// flush level, which never takes Ribbon (see `plan`).
#[must_use]
pub fn monkey_plan_flushes_only(levels: &[LevelModel], budget_bits: f64) -> Vec<LevelFilter> {
    plan(levels, budget_bits, 0, 1)
}

/// Monkey's plan where the first `free` levels' filters are not charged to
/// the budget (their rates still count), and the first `flush` levels are
/// flushes, which never take Ribbon.
fn plan(levels: &[LevelModel], budget_bits: f64, free: usize, flush: usize) -> Vec<LevelFilter> {
    planned(levels, budget_bits, free, flush).chosen
}

/// What [`plan`] chose, with the plan of its own it had before comparing
/// it with the uniform plans (tests measure Monkey by that one: the chosen
/// plan is never worse than uniform by construction).
#[derive(Debug, Clone)]
#[cfg_attr(not(test), expect(dead_code, reason = "`own` and `fell_back` are read by the tests"))]
pub(crate) struct Planned {
    /// The plan before the uniform fallback.
    pub(crate) own: Vec<LevelFilter>,
    /// The plan returned: `own`, or the best uniform plan (mixed on top)
    /// when that one won.
    pub(crate) chosen: Vec<LevelFilter>,
    /// Whether the uniform fallback fired.
    pub(crate) fell_back: bool,
}

/// [`plan`], with what it had before the uniform fallback.
#[expect(clippy::too_many_lines, reason = "one planner, step by step; the fallback's record tipped it over")]
pub(crate) fn planned(levels: &[LevelModel], budget_bits: f64, free: usize, flush: usize) -> Planned {
    let valid = |l: &LevelModel| l.keys().is_finite() && l.keys() > 0.0 && l.table_keys >= 1.0;
    let charged = |i: usize| i >= free;
    let total: f64 =
        levels.iter().enumerate().filter(|(i, l)| charged(*i) && valid(l)).map(|(_, l)| l.keys()).sum();
    if total <= 0.0 || !budget_bits.is_finite() || budget_bits <= 0.0 {
        let none = vec![LevelFilter::NONE; levels.len()];
        return Planned { own: none.clone(), chosen: none, fell_back: false };
    }
    let mut statics = static_options(levels);
    // Build time is not priced, with one exception: the flush level never
    // takes Ribbon (a level whose options hold no Ribbon corner is offered
    // none in any later step either). A flush sits on the write path
    // and its tables live until the next compaction, and there Ribbon's
    // build (179 ns/key at 15 bits/key and 3·10^5 keys, against blocked
    // Bloom's 16: `siftdb bench filters`, docs/measurements.md) would cost
    // a 64 MiB memtable about 0.1 s a flush for a rate the level's bits do
    // not pay for anyway. Below level 0 a table is built once per
    // compaction and read for as long as it lives, and the bytes decide.
    for s in statics.iter_mut().take(flush) {
        s.retain(|c| !matches!(c.kind, FilterKind::Ribbon { .. }));
    }
    let memory = |plan: &[LevelFilter]| -> f64 {
        plan.iter().zip(levels).skip(free).map(|(c, l)| c.bits_per_key * l.keys()).sum()
    };
    // Monkey's optimum leaves the biggest level bare when bits are scarce (a
    // level of 48% of the keys, at 2 bits/key: bare, it sums 1.37; all
    // filtered, ~1.6). A store that leaves most of its keys unfiltered at a
    // budget of 2 bits/key or more surprises its users more than those
    // false positives cost, so from 2 bits/key every level holding 5% of
    // the keys gets a filter, if the budget pays for the cheapest ones.
    let plan_with = |ln_mu: f64, force: bool| -> Vec<LevelFilter> {
        let mu = ln_mu.exp() / total;
        levels
            .iter()
            .zip(&statics)
            .enumerate()
            .map(|(i, (l, s))| {
                let must = force && charged(i) && l.keys() >= 0.05 * total;
                if valid(l) { best_option(s, l.table_keys, mu * l.run_keys, must) } else { LevelFilter::NONE }
            })
            .collect()
    };
    let force = budget_bits >= 2.0 * total && memory(&plan_with(30.0, true)) <= budget_bits;
    let plan_at = |ln_mu: f64| plan_with(ln_mu, force);
    // Memory falls as μ grows: at e^-40 every level takes its strongest
    // filter, at e^30 none.
    let (mut lo, mut hi) = (-40.0_f64, 30.0_f64);
    if memory(&plan_at(lo)) <= budget_bits {
        hi = lo;
    } else {
        for _ in 0..80 {
            let mid = f64::midpoint(lo, hi);
            if memory(&plan_at(mid)) > budget_bits {
                lo = mid;
            } else {
                hi = mid;
            }
        }
    }
    let mut plan = plan_at(hi);
    // The budget falls between two points of some level's hull (fuse8 and
    // fuse16 on a big level): the optimum mixes that level's two kinds.
    // Without this the slack went to the small Bloom levels: at 10^6 keys
    // levels 1 and 2 took 48 and 34 bits/key while fuse16 on half of level
    // 3 would have lowered the sum ten times more.
    let slack = budget_bits - memory(&plan);
    mix_in_slack(&mut plan, levels, &statics, slack, free, budget_bits);
    // The Lagrangian only reaches points on each level's convex hull; when
    // the budget falls in a gap (fuse8 on the big levels at 9.5 bits/key, a
    // budget of 10) it leaves bits unspent. Spend them greedily: the level
    // whose rate falls most by taking all that is left (blocked Bloom at
    // its bits plus the rest, or a stronger fixed kind that fits) takes it.
    for _ in 0..levels.len() {
        let slack = budget_bits - memory(&plan);
        let upgrade = plan
            .iter()
            .zip(levels)
            .zip(&statics)
            .enumerate()
            .filter(|(i, ((_, l), _))| charged(*i) && valid(l))
            .filter_map(|(i, ((current, l), s))| {
                let affordable = current.bits_per_key + slack / l.keys();
                let bloom_bits = bloom_bits_for(affordable, l.table_keys);
                let ribbon_bits = ribbon_bits_for(affordable, l.table_keys).filter(|_| offers_ribbon(s));
                let options = s
                    .iter()
                    .copied()
                    .chain(bloom_bits.map(|b| bloom_choice(b, l.table_keys)))
                    .chain(ribbon_bits.map(|b| ribbon_choice(b, l.table_keys)));
                options
                    .filter(|c| c.bits_per_key <= affordable && c.target_fpr < current.target_fpr)
                    .map(|c| ((current.target_fpr - c.target_fpr) * l.runs, i, c))
                    .max_by(|a, b| a.0.total_cmp(&b.0))
            })
            .max_by(|a, b| a.0.total_cmp(&b.0));
        match upgrade {
            Some((_, i, choice)) => plan[i] = choice,
            None => break,
        }
    }
    let slack = budget_bits - memory(&plan);
    spread(&mut plan, levels, free, slack);
    exact_rates(&mut plan);
    let slack = budget_bits - memory(&plan);
    mix_in_slack(&mut plan, levels, &statics, slack, free, budget_bits);
    // Every uniform plan within the budget is one Monkey may choose, so it
    // must never lose to one. The Lagrangian can (the hull steps above skip
    // plans, and the greedy spend is a heuristic): at 10^6 keys it once gave
    // 3.68% where xor8 everywhere gave 2.34% for fewer bytes. Levels the
    // budget does not pay for (level 0's flushes) keep this plan's filters
    // in every candidate: uniform on them would only make the comparison
    // unfair (a free strong filter there beat uniform xor8 by 0.0037 in the
    // model, on a level `Db::compact` leaves empty). Near a tie, within
    // `TIE`, the uniform plan wins, and what it leaves is spent by mixing on
    // top of it: a mixed level reaches its share only to whole tables, and
    // a mix over a weak kind can miss by much (a plan 0.04% ahead of uniform
    // xor8 on paper, with a level of blocked Bloom at 7.9 bits/key and xor8
    // tables, was built 3.1% behind it); a mix over the uniform kind can
    // only be better than that kind.
    let runs_fpr =
        |plan: &[LevelFilter]| -> f64 { plan.iter().zip(levels).map(|(c, l)| c.target_fpr * l.runs).sum() };
    // Priced at mean table sizes, a uniform plan within 1% of the budget may
    // cost no more than this plan once built: at the bench's 20,000 keys
    // Monkey's own tree took 10.10 bits/key for 1.64% where uniform xor8,
    // priced at 10.1, took 10.04 for 1.56%. It competes.
    let best_uniform = uniform_plans(levels, &valid, budget_bits, free)
        .into_iter()
        .map(|mut candidate| {
            candidate[..free].copy_from_slice(&plan[..free]);
            // A flush level keeps this plan's kind (uniform Ribbon would put
            // Ribbon there).
            for (i, s) in statics.iter().enumerate() {
                if !offers_ribbon(s) && matches!(candidate[i].kind, FilterKind::Ribbon { .. }) {
                    candidate[i] = plan[i];
                }
            }
            candidate
        })
        .filter(|candidate| memory(candidate) <= budget_bits * UNIFORM_SLACK)
        .min_by(|a, b| runs_fpr(a).total_cmp(&runs_fpr(b)));
    let own = plan.clone();
    let mut fell_back = false;
    if let Some(candidate) = best_uniform.filter(|c| runs_fpr(c) < runs_fpr(&plan) * TIE) {
        plan = candidate;
        fell_back = true;
        // What the uniform plan leaves goes to stronger tables on top of it,
        // which can only lower a level's rate, however the share is built.
        let slack = budget_bits - memory(&plan);
        mix_in_slack(&mut plan, levels, &statics, slack, free, budget_bits);
    }
    Planned { own, chosen: plan, fell_back }
}

/// Whether a level's options (`static_options`, less what `plan` keeps
/// off a flush level) offer Ribbon.
fn offers_ribbon(options: &[LevelFilter]) -> bool {
    options.iter().any(|c| matches!(c.kind, FilterKind::Ribbon { .. }))
}

#[cfg(test)]
mod tests;
