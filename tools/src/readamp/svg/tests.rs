use super::*;

/// Whether every tag opened is closed, in order (no XML crate needed for
/// what plotters writes: no comments or CDATA).
fn well_formed(svg: &str) -> bool {
    let mut open: Vec<&str> = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find('<') {
        let Some(j) = rest[i..].find('>') else { return false };
        let tag = &rest[i + 1..i + j];
        rest = &rest[i + j + 1..];
        if tag.starts_with('?') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            if open.pop() != Some(name.trim()) {
                return false;
            }
        } else if !tag.ends_with('/') {
            open.push(tag.split_whitespace().next().unwrap_or(""));
        }
    }
    open.is_empty()
}

fn policy(name: &str, bits_per_key: f64) -> Policy {
    Policy { name: name.into(), bits_per_key, baseline: name == "none", default: name == "monkey:10" }
}

fn sample() -> Chart {
    Chart {
        title: "t<1>".into(),
        policies: vec![
            policy("none", 0.0),
            policy("bloom:10", 10.0),
            policy("monkey:10", 9.8),
            policy("a&b", 16.0),
        ],
        absent_blocks: Some(vec![Some(2.4), Some(0.0214), Some(0.0076), Some(0.0)]),
        panels: vec![
            Panel {
                title: "uniform keys: blocks".into(),
                better: Better::Lower,
                log: true,
                values: vec![Some(1.0); 4],
            },
            Panel {
                title: "uniform keys: lookups per second".into(),
                better: Better::Higher,
                log: false,
                values: vec![Some(200_000.0), Some(410_000.0), None, Some(390_000.0)],
            },
        ],
    }
}

#[test]
fn the_memory_panel_has_its_axes_points_baseline_and_default() {
    let svg = render(&sample()).unwrap();
    assert!(well_formed(&svg), "{svg}");
    for text in [
        "filter memory (bits per key)",
        "data blocks read per absent lookup (log scale)",
        "none: no filter, 2.40 blocks",
        "bloom:10 0.021",
        "monkey:10 (default) 0.0076",
        "a&amp;b 0",
        "t&lt;1&gt;",
    ] {
        assert!(svg.contains(text), "{text}: {svg}");
    }
    // The equal panel is one line of text, not bars; the other has three bars.
    assert!(svg.contains("uniform keys: blocks: 1.00 for every policy"), "{svg}");
    assert!(svg.contains("uniform keys: lookups per second (higher is better)"), "{svg}");
    assert_eq!(svg.matches("bits/key\n</text>").count(), 4, "{svg}");
}

#[test]
fn every_policy_has_its_own_colour() {
    let colours: Vec<String> = (0..40).map(|p| format!("{:?}", color(p).rgb())).collect();
    for (i, c) in colours.iter().enumerate() {
        assert!(!colours[..i].contains(c), "policy {i} repeats {c}");
    }
}

#[test]
fn near_equal_values_collapse_and_others_do_not() {
    assert_eq!(all_equal(&[Some(1.0), None, Some(1.004)]), Some((1.0, 1.004)));
    assert_eq!(all_equal(&[Some(1.0), Some(1.2)]), None);
    assert_eq!(all_equal(&[None]), None);
}

#[test]
fn a_long_title_shrinks_to_fit() {
    assert!((fitting_size("short", 980.0) - 18.0).abs() < 1e-9);
    let long = "x".repeat(200);
    assert!(fitting_size(&long, 980.0) * 0.55 * 200.0 <= 980.0 + 1e-9);
}

#[test]
fn labels_never_overprint_while_room_remains() {
    let mut placed = Vec::new();
    for _ in 0..6 {
        place(&mut placed, (300, 200), "blocked-bloom:10 0.0085");
    }
    for (i, a) in placed.iter().enumerate() {
        for b in &placed[..i] {
            let apart = a.0 >= b.0 + b.2 || b.0 >= a.0 + a.2 || a.1 >= b.1 + b.3 || b.1 >= a.1 + a.3;
            assert!(apart, "{a:?} overlaps {b:?}");
        }
    }
}

#[test]
fn ticks_read_plainly() {
    assert_eq!(tick_label(10f64.powi(-3)), "0.001");
    assert_eq!(tick_label(1.0), "1");
    assert_eq!(tick_label(2_500_000.0), "2.5M");
    assert_eq!(tick_label(250_000.0), "250k");
    assert!((nice_ceiling(3.2) - 5.0).abs() < 1e-12);
    assert!((nice_ceiling(0.0) - 1.0).abs() < 1e-12);
    assert_eq!(decades(&[2.4, 0.0076]), (0.001, 10.0));
}
