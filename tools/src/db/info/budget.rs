//! `db info --budget BYTES`: the plan a filter memory budget would give
//! this tree, level by level, computed from the shape `db info` reads and
//! writing nothing (the budget is stored only by an open that names it).

use serde_json::{Value, json};
use siftdb::FilterPolicy;
use siftdb::policy::TreeShape;

/// The plan `budget` would give `shape` under `policy`, as JSON (`null`
/// without a budget); an error for a policy a budget cannot move, as
/// `Db::open` refuses it.
pub fn plan(policy: &FilterPolicy, shape: &TreeShape, budget: Option<u64>) -> Result<Value, String> {
    let Some(bytes) = budget else { return Ok(Value::Null) };
    if !policy.is_budgeted() {
        return Err(format!(
            "--budget needs a monkey:B filter policy, not {policy} (give --policy monkey:B)"
        ));
    }
    let capped = shape.clone().with_filter_memory_bytes(Some(bytes));
    let plan = policy.plan(&capped);
    let mut total = 0.0;
    let levels: Vec<Value> = plan
        .iter()
        .zip(capped.level_keys())
        .enumerate()
        .map(|(level, (p, keys))| {
            // Level 0's flushes are on their way down and not charged.
            let filter_bytes = p.bits_per_key * keys / 8.0;
            if level > 0 {
                total += filter_bytes;
            }
            json!({
                "level": level,
                "keys": keys,
                "kind": p.kind.to_string(),
                "bits_per_key": p.bits_per_key,
                "target_fpr": p.target_fpr,
                "filter_bytes": filter_bytes,
            })
        })
        .collect();
    Ok(json!({ "budget_bytes": bytes, "filter_bytes": total, "levels": levels }))
}

/// The text form of [`plan`]'s document, if any.
pub fn print(plan: &Value) {
    if plan.is_null() {
        return;
    }
    println!(
        "\nbudget plan     {} bytes: levels 1+ take {:.0} (level 0's flushes on top)",
        plan["budget_bytes"],
        plan["filter_bytes"].as_f64().unwrap_or(0.0)
    );
    println!(
        "{:<6} {:>12} {:<22} {:>9} {:>12} {:>14}",
        "level", "keys", "kind", "bits/key", "target fpr", "filter bytes"
    );
    for l in plan["levels"].as_array().into_iter().flatten() {
        println!(
            "{:<6} {:>12.0} {:<22} {:>9.2} {:>12.6} {:>14.0}",
            l["level"],
            l["keys"].as_f64().unwrap_or(0.0),
            l["kind"].as_str().unwrap_or("?"),
            l["bits_per_key"].as_f64().unwrap_or(0.0),
            l["target_fpr"].as_f64().unwrap_or(1.0),
            l["filter_bytes"].as_f64().unwrap_or(0.0)
        );
    }
}
