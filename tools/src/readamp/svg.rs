//! A self-contained SVG chart of the benchmark: one panel per metric and
//! workload, a labelled bar per policy. Hand-written, so no plotting
//! dependency.
//!
//! The headline, absent-key blocks per lookup, spans three orders of
//! magnitude between no filter (~2) and a good one (~0.005): on a linear
//! axis the filters' bars were invisible. Those panels use a log axis, and
//! every bar carries its value, so no bar needs reading off an axis.

use std::fmt::Write as _;

/// Which way a panel's metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// Fewer is better (blocks read).
    Lower,
    /// More is better (lookups per second).
    Higher,
}

/// One panel: a metric on one workload, a value per policy.
pub struct Panel {
    /// What is shown, e.g. "absent keys: data blocks read per lookup".
    pub title: String,
    /// Which way is better (said in the title).
    pub better: Better,
    /// A log axis (for values spanning orders of magnitude).
    pub log: bool,
    /// `values[p]`: policy `p` (`None` where not measured).
    pub values: Vec<Option<f64>>,
}

const COLORS: [&str; 8] =
    ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948", "#9c755f"];
const PANEL_W: f64 = 420.0;
const PANEL_H: f64 = 240.0;
const MARGIN_L: f64 = 70.0;
const MARGIN_T: f64 = 70.0;
const MARGIN_B: f64 = 100.0;
/// The least height a bar is drawn with, so a zero or tiny value still shows.
pub const MIN_BAR_H: f64 = 2.0;

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

/// A value as a bar label or tick: enough digits to tell 0.0076 from 0.0085.
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
        // Two significant digits.
        let digits = (-v.abs().log10()).ceil() as usize + 1;
        format!("{v:.digits$}")
    }
}

/// An axis tick: [`label`] without trailing zeros ("0.001", "1", "2.5M").
fn tick_label(v: f64) -> String {
    let l = label(v);
    let (number, unit) = l.split_at(l.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(l.len()));
    let number =
        if number.contains('.') { number.trim_end_matches('0').trim_end_matches('.') } else { number };
    format!("{number}{unit}")
}

/// Maps a value to a bar height in `[0, PANEL_H]`, and gives the axis ticks.
struct Axis {
    log: bool,
    lo: f64,
    hi: f64,
}

impl Axis {
    fn new(log: bool, values: &[f64]) -> Self {
        if log {
            let positive: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
            let min = positive.iter().copied().fold(f64::INFINITY, f64::min);
            let max = positive.iter().copied().fold(0.0, f64::max);
            if positive.is_empty() {
                return Axis { log, lo: -1.0, hi: 0.0 };
            }
            // Half a decade below the least value, so its bar shows.
            let lo = (min.log10() - 0.5).floor();
            let hi = max.log10().ceil().max(lo + 1.0);
            Axis { log, lo, hi }
        } else {
            Axis { log, lo: 0.0, hi: nice_ceiling(values.iter().copied().fold(0.0, f64::max)) }
        }
    }

    fn height(&self, v: f64) -> f64 {
        let frac = if self.log {
            if v <= 0.0 { 0.0 } else { (v.log10() - self.lo) / (self.hi - self.lo) }
        } else {
            v / self.hi
        };
        (PANEL_H * frac.clamp(0.0, 1.0)).max(MIN_BAR_H)
    }

    fn ticks(&self) -> Vec<f64> {
        if self.log {
            // Whole decades only: `lo` and `hi` are integers.
            #[expect(clippy::cast_possible_truncation, reason = "decades of a chart axis")]
            (self.lo as i32..=self.hi as i32).map(|e| 10f64.powi(e)).collect()
        } else {
            // A top of 5·10^k in steps of 10^k, else in quarters.
            let mantissa = self.hi / 10f64.powf(self.hi.log10().floor());
            let steps = if (mantissa - 5.0).abs() < 1e-9 { 5 } else { 4 };
            (0..=steps).map(|t| self.hi * f64::from(t) / f64::from(steps)).collect()
        }
    }
}

/// Renders `panels` in a grid of `columns`, each with a bar per entry of
/// `policies`, coloured by policy and labelled with its value.
pub fn render(title: &str, policies: &[String], panels: &[Panel], columns: usize) -> String {
    let columns = columns.clamp(1, panels.len().max(1));
    let rows = panels.len().div_ceil(columns).max(1);
    let cell_w = PANEL_W + MARGIN_L;
    let cell_h = MARGIN_T + PANEL_H + MARGIN_B;
    let width = MARGIN_L + columns as f64 * cell_w;
    let height = 40.0 + rows as f64 * cell_h + 30.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{MARGIN_L}" y="26" font-size="16" font-weight="bold">{}</text>"#,
        escape(title)
    );
    for (pi, panel) in panels.iter().enumerate() {
        let x0 = MARGIN_L + (pi % columns) as f64 * cell_w;
        let y0 = 40.0 + (pi / columns) as f64 * cell_h + MARGIN_T;
        let measured: Vec<f64> = panel.values.iter().flatten().copied().collect();
        let axis = Axis::new(panel.log, &measured);
        let way = match panel.better {
            Better::Lower => "lower is better",
            Better::Higher => "higher is better",
        };
        let scale = if panel.log { ", log scale" } else { "" };
        let _ = writeln!(
            s,
            r#"<text x="{x0}" y="{}" font-weight="bold">{}</text>"#,
            y0 - 30.0,
            escape(&panel.title)
        );
        let _ = writeln!(s, r##"<text x="{x0}" y="{}" fill="#555">({way}{scale})</text>"##, y0 - 14.0);
        for v in axis.ticks() {
            let y = y0 + PANEL_H - if v > 0.0 || !panel.log { axis.height(v) } else { 0.0 };
            let _ = writeln!(
                s,
                r##"<line x1="{x0}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
                x0 + PANEL_W,
                x0 - 6.0,
                y + 4.0,
                tick_label(v)
            );
        }
        let groups = policies.len().max(1) as f64;
        let group_w = PANEL_W / groups;
        let bar_w = group_w * 0.7;
        for (p, policy) in policies.iter().enumerate() {
            let gx = x0 + p as f64 * group_w + group_w * 0.15;
            if let Some(v) = panel.values.get(p).copied().flatten() {
                let h = axis.height(v);
                let top = y0 + PANEL_H - h;
                let _ = writeln!(
                    s,
                    r#"<rect class="bar" x="{gx:.1}" y="{top:.1}" width="{bar_w:.1}" height="{h:.1}" fill="{}"><title>{}: {}</title></rect>"#,
                    COLORS[p % COLORS.len()],
                    escape(policy),
                    label(v)
                );
                let _ = writeln!(
                    s,
                    r#"<text class="value" x="{:.1}" y="{:.1}" text-anchor="middle" font-size="10">{}</text>"#,
                    gx + bar_w / 2.0,
                    top - 4.0,
                    label(v)
                );
            }
            let lx = gx + bar_w / 2.0;
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
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether every tag opened is closed, in order (no XML crate needed
    /// for what this module writes: no comments, CDATA or entities beyond
    /// the escaped four).
    pub(crate) fn well_formed(svg: &str) -> bool {
        let mut open: Vec<&str> = Vec::new();
        let mut rest = svg;
        while let Some(i) = rest.find('<') {
            let Some(j) = rest[i..].find('>') else { return false };
            let tag = &rest[i + 1..i + j];
            rest = &rest[i + j + 1..];
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

    #[test]
    fn every_bar_is_visible_and_labelled_on_a_log_axis() {
        let panels = vec![Panel {
            title: "absent keys: blocks".into(),
            better: Better::Lower,
            log: true,
            values: vec![Some(2.4), Some(0.0076), Some(0.0), None, Some(0.0214)],
        }];
        let policies: Vec<String> =
            ["none", "monkey:10", "a&b", "missing", "bloom"].map(String::from).to_vec();
        let svg = render("t<1>", &policies, &panels, 1);
        assert!(well_formed(&svg), "{svg}");
        assert_eq!(svg.matches(r#"class="bar""#).count(), 4);
        assert_eq!(svg.matches(r#"class="value""#).count(), 4);
        for part in svg.split(r#"class="bar""#).skip(1) {
            let h: f64 = part.split("height=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
            assert!(h >= MIN_BAR_H, "{part}");
        }
        for v in ["0.0076", "2.40", ">0<", "0.021"] {
            assert!(svg.contains(v), "{v}: {svg}");
        }
        assert!(svg.contains("lower is better, log scale"));
        assert!(svg.contains("t&lt;1&gt;") && svg.contains("a&amp;b"));
        // The filter's bar is far taller than its 0.3% of the baseline would
        // be on a linear axis.
        let axis = Axis::new(true, &[2.4, 0.0076, 0.0214]);
        assert!(axis.height(0.0076) > PANEL_H / 10.0);
        assert!(axis.height(2.4) > axis.height(0.0214) && axis.height(0.0214) > axis.height(0.0076));
    }

    #[test]
    fn the_checker_catches_a_broken_document() {
        assert!(well_formed("<svg><g><rect/></g></svg>"));
        assert!(!well_formed("<svg><g></svg>"));
    }

    #[test]
    fn ticks_read_plainly() {
        assert_eq!(tick_label(10f64.powi(-3)), "0.001");
        assert_eq!(tick_label(1.0), "1");
        assert_eq!(tick_label(2_500_000.0), "2.5M");
        assert_eq!(tick_label(250_000.0), "250k");
        let axis = Axis::new(false, &[4.2e6]);
        let ticks: Vec<String> = axis.ticks().iter().map(|&v| tick_label(v)).collect();
        assert_eq!(ticks, ["0", "1M", "2M", "3M", "4M", "5M"]);
    }

    #[test]
    fn axis_tops_are_round() {
        assert!((nice_ceiling(0.73) - 1.0).abs() < 1e-12);
        assert!((nice_ceiling(3.2) - 5.0).abs() < 1e-12);
        assert!((nice_ceiling(120_000.0) - 200_000.0).abs() < 1e-6);
        assert!((nice_ceiling(0.0) - 1.0).abs() < 1e-12);
    }
}
