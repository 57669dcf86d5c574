//! A self-contained SVG chart of the benchmark: grouped bars per policy,
//! one panel per metric. Hand-written, so no plotting dependency.

use std::fmt::Write as _;

/// One panel: a metric, and a value per (policy, series).
pub struct Panel {
    /// The panel's title, e.g. "data blocks read per lookup".
    pub title: String,
    /// `values[p][s]`: policy `p`, series `s` (`None` where not measured).
    pub values: Vec<Vec<Option<f64>>>,
}

const COLORS: [&str; 6] = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2"];
const PANEL_W: f64 = 560.0;
const PANEL_H: f64 = 300.0;
const MARGIN_L: f64 = 70.0;
const MARGIN_T: f64 = 60.0;
const MARGIN_B: f64 = 90.0;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A "nice" axis maximum: 1, 2 or 5 times a power of ten, at or above `max`.
fn nice_ceiling(max: f64) -> f64 {
    if !max.is_finite() || max <= 0.0 {
        return 1.0;
    }
    let exp = max.log10().floor();
    let base = 10f64.powf(exp);
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * base).find(|v| *v >= max * 0.999).unwrap_or(10.0 * base)
}

fn label(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v.abs() >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if v.abs() >= 10.0 {
        format!("{v:.0}")
    } else if v.abs() >= 0.1 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Renders `panels` side by side: `policies` along each x axis, one coloured
/// bar per entry of `series` (the workloads).
pub fn render(title: &str, policies: &[String], series: &[String], panels: &[Panel]) -> String {
    let width = MARGIN_L + panels.len() as f64 * (PANEL_W + MARGIN_L);
    let height = MARGIN_T + PANEL_H + MARGIN_B + 30.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="24" font-size="16" font-weight="bold">{}</text>"#,
        MARGIN_L,
        escape(title)
    );
    for (pi, panel) in panels.iter().enumerate() {
        let x0 = MARGIN_L + pi as f64 * (PANEL_W + MARGIN_L);
        let y0 = MARGIN_T;
        let max = panel.values.iter().flatten().flatten().copied().fold(0.0, f64::max);
        let top = nice_ceiling(max);
        let _ = writeln!(
            s,
            r#"<text x="{x0}" y="{}" font-weight="bold">{}</text>"#,
            y0 - 12.0,
            escape(&panel.title)
        );
        for t in 0..=4 {
            let v = top * f64::from(t) / 4.0;
            let y = y0 + PANEL_H - PANEL_H * f64::from(t) / 4.0;
            let _ = writeln!(
                s,
                r##"<line x1="{x0}" y1="{y}" x2="{}" y2="{y}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
                x0 + PANEL_W,
                x0 - 6.0,
                y + 4.0,
                label(v)
            );
        }
        let groups = policies.len().max(1) as f64;
        let group_w = PANEL_W / groups;
        let bar_w = (group_w * 0.8) / series.len().max(1) as f64;
        for (p, policy) in policies.iter().enumerate() {
            let gx = x0 + p as f64 * group_w + group_w * 0.1;
            for (si, series_name) in series.iter().enumerate() {
                let Some(v) = panel.values.get(p).and_then(|row| row.get(si)).copied().flatten() else {
                    continue;
                };
                let h = if top > 0.0 { PANEL_H * v / top } else { 0.0 };
                let x = gx + si as f64 * bar_w;
                let _ = writeln!(
                    s,
                    r#"<rect x="{x:.1}" y="{:.1}" width="{:.1}" height="{h:.1}" fill="{}"><title>{} / {}: {}</title></rect>"#,
                    y0 + PANEL_H - h,
                    (bar_w - 1.0).max(1.0),
                    COLORS[si % COLORS.len()],
                    escape(policy),
                    escape(series_name),
                    label(v)
                );
            }
            let lx = gx + group_w * 0.4;
            let ly = y0 + PANEL_H + 14.0;
            let _ = writeln!(
                s,
                r#"<text x="{lx:.1}" y="{ly:.1}" text-anchor="end" transform="rotate(-35 {lx:.1} {ly:.1})">{}</text>"#,
                escape(policy)
            );
        }
        let _ = writeln!(
            s,
            r##"<line x1="{x0}" y1="{}" x2="{}" y2="{}" stroke="#333"/>"##,
            y0 + PANEL_H,
            x0 + PANEL_W,
            y0 + PANEL_H
        );
    }
    let ly = height - 14.0;
    for (si, name) in series.iter().enumerate() {
        let lx = MARGIN_L + si as f64 * 120.0;
        let _ = writeln!(
            s,
            r#"<rect x="{lx}" y="{}" width="12" height="12" fill="{}"/><text x="{}" y="{ly}">{}</text>"#,
            ly - 10.0,
            COLORS[si % COLORS.len()],
            lx + 16.0,
            escape(name)
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_one_bar_per_measured_value_and_escapes_names() {
        let panels = vec![Panel {
            title: "blocks".into(),
            values: vec![vec![Some(2.0), None], vec![Some(0.01), Some(1.0)]],
        }];
        let svg =
            render("t<1>", &["none".into(), "a&b".into()], &["absent".into(), "uniform".into()], &panels);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<title>").count(), 3);
        assert!(svg.contains("t&lt;1&gt;") && svg.contains("a&amp;b"));
    }

    #[test]
    fn axis_tops_are_round() {
        assert!((nice_ceiling(0.73) - 1.0).abs() < 1e-12);
        assert!((nice_ceiling(3.2) - 5.0).abs() < 1e-12);
        assert!((nice_ceiling(120_000.0) - 200_000.0).abs() < 1e-6);
        assert!((nice_ceiling(0.0) - 1.0).abs() < 1e-12);
    }
}
