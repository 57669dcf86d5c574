//! `siftdb bench` draws its chart by default, and the chart answers the
//! question: what each policy's filter memory buys on absent keys.

use std::process::Command;

/// The text of every `<text>` element, trimmed.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| Some(t.split_once('>')?.1.split("</text>").next()?.trim().to_string()))
        .collect()
}

/// The value of `attr` in every `tag` element.
fn attrs(svg: &str, tag: &str, attr: &str) -> Vec<String> {
    let (open, key) = (format!("<{tag} "), format!(" {attr}=\""));
    svg.split(open.as_str())
        .skip(1)
        .filter_map(|t| Some(t.split('>').next()?.split(key.as_str()).nth(1)?.split('"').next()?.to_string()))
        .collect()
}

#[test]
fn a_default_run_writes_its_chart_and_says_where() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("charts");
    let policies = ["none", "bloom:10", "fuse8", "xor16", "monkey:10"];
    let out = Command::new(env!("CARGO_BIN_EXE_siftdb"))
        .current_dir(tmp.path())
        .args(["bench", "--keys", "20000", "--lookups", "2000", "--workloads", "absent,uniform"])
        .args(["--policies", &policies.join(","), "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let chart = out_dir.join("siftdb-bench.svg");
    assert_eq!(
        stdout.lines().last().unwrap(),
        format!("siftdb bench: wrote chart {}", chart.display()),
        "{stdout}"
    );
    // Nothing else landed in the working directory.
    let names: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["charts"]);

    let svg = std::fs::read_to_string(&chart).unwrap();
    let texts = texts(&svg);
    let has = |want: &str| texts.iter().any(|t| t.starts_with(want));
    // The memory panel: its axes, the baseline as a line with its label,
    // one point label per filter policy, the default ringed and named.
    assert!(has("filter memory (bits per key)") && has("data blocks read per absent lookup"), "{texts:?}");
    assert!(has("none: no filter,"), "{texts:?}");
    for p in ["bloom:10 ", "fuse8 ", "xor16 ", "monkey:10 (default) "] {
        assert_eq!(texts.iter().filter(|t| t.starts_with(p)).count(), 1, "{p}: {texts:?}");
    }
    assert_eq!(attrs(&svg, "circle", "r").iter().filter(|r| *r == "11").count(), 1, "one ring");
    // The baseline: a dashed horizontal line, the only two-pixel stroke.
    let dashes: Vec<&str> =
        svg.split("<polyline ").skip(1).filter(|l| l.contains(r#"stroke-width="2""#)).collect();
    assert!(dashes.len() >= 10, "{} dashes", dashes.len());
    let ys: Vec<&str> = dashes
        .iter()
        .flat_map(|l| l.split("points=\"").nth(1).unwrap().split_whitespace().take(2))
        .map(|pt| pt.split(',').nth(1).unwrap())
        .collect();
    assert!(ys.iter().all(|y| *y == ys[0]), "not horizontal: {ys:?}");
    // Each policy's points and bars share one colour, and no two policies share one.
    let point_fills: Vec<String> =
        attrs(&svg, "circle", "fill").into_iter().filter(|f| f != "none").collect();
    assert_eq!(point_fills.len(), policies.len() - 1, "{point_fills:?}");
    let mut distinct = point_fills.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), point_fills.len(), "{point_fills:?}");
    let bar_fills = attrs(&svg, "rect", "fill");
    for f in &point_fills {
        assert!(bar_fills.contains(f), "{f}: no bar of this policy's colour");
    }
    // Then lookups per second, a bar per policy, each named with its bits/key.
    assert!(has("absent keys: lookups per second (higher is better)"), "{texts:?}");
    assert!(has("uniform keys: lookups per second"), "{texts:?}");
    for p in policies {
        assert!(texts.iter().filter(|t| *t == p).count() >= 2, "{p}: {texts:?}");
    }
    assert!(texts.iter().filter(|t| t.ends_with(" bits/key")).count() >= 2 * policies.len());
}

#[test]
fn svg_names_the_chart_and_json_keeps_stdout_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let chart = tmp.path().join("my.svg");
    let out = Command::new(env!("CARGO_BIN_EXE_siftdb"))
        .current_dir(tmp.path())
        .args(["bench", "--keys", "1000", "--lookups", "100", "--policies", "none,fuse8", "--json"])
        .args(["--workloads", "absent", "--svg"])
        .arg(&chart)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("stdout is one JSON document");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().last().unwrap(), format!("siftdb bench: wrote chart {}", chart.display()));
    assert!(std::fs::read_to_string(&chart).unwrap().contains("fuse8"));
    let names: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["my.svg"], "no default chart beside an explicit one");
}
