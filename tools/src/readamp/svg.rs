//! The benchmark's SVG chart, drawn with `plotters` (SVG backend only).
//!
//! Why `plotters` rather than the hand-written SVG it replaced: it owns the
//! axes, log ticks and text anchoring we had been re-deriving, and it costs
//! little (docs/measurements.md, 2026-12-06): a clean release build of the
//! CLI took 169.5 s with it and 169.7 s without, since its four crates
//! (about 11 s of CPU) build beside `siftdb`, which holds the critical path;
//! the stripped binary grows by 176 kB (3.08 to 3.26 MB).
//!
//! The chart answers the benchmark's question first: what a filter's memory
//! buys on absent keys. That panel puts bits per key against data blocks read
//! per absent lookup on a log axis, since no filter (~2) and a good one
//! (~0.005) are three decades apart; the no-filter baseline is a line, the
//! default policy is ringed. Bar panels follow; one whose bars would all be
//! equal (present keys read one block whatever the filter) says so in a line.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Which way a panel's metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// Fewer is better (blocks read).
    Lower,
    /// More is better (lookups per second).
    Higher,
}

/// A policy as the chart shows it.
pub struct Policy {
    /// Its name as given, e.g. "monkey:10".
    pub name: String,
    /// Filter memory over all levels, in bits per key.
    pub bits_per_key: f64,
    /// The no-filter baseline: a line on the memory panel, not a point.
    pub baseline: bool,
    /// The engine's default policy: ringed and named so.
    pub default: bool,
}

/// One bar panel: a metric on one workload, a value per policy.
pub struct Panel {
    /// What is shown, e.g. "uniform keys: lookups per second".
    pub title: String,
    /// Which way is better (said in the title).
    pub better: Better,
    /// A log axis (for values spanning orders of magnitude).
    pub log: bool,
    /// `values[p]`: policy `p` (`None` where not measured).
    pub values: Vec<Option<f64>>,
}

/// What the chart holds.
pub struct Chart {
    /// The heading.
    pub title: String,
    /// The policies, in the run's order.
    pub policies: Vec<Policy>,
    /// Data blocks read per absent lookup, per policy (the memory panel;
    /// `None` without an absent workload).
    pub absent_blocks: Option<Vec<Option<f64>>>,
    /// The bar panels, in order.
    pub panels: Vec<Panel>,
}

/// Tableau 10: ten hues told apart also in print and by most colour-blind readers.
const PALETTE: [(u8, u8, u8); 10] = [
    (0x4e, 0x79, 0xa7),
    (0xf2, 0x8e, 0x2b),
    (0xe1, 0x57, 0x59),
    (0x76, 0xb7, 0xb2),
    (0x59, 0xa1, 0x4f),
    (0xed, 0xc9, 0x48),
    (0xb0, 0x7a, 0xa1),
    (0xff, 0x9d, 0xa7),
    (0x9c, 0x75, 0x5f),
    (0x79, 0x70, 0x6e),
];

/// Policy `p`'s colour: the palette, then hues a golden angle apart, so no
/// two policies share one however many are run.
#[must_use]
pub fn color(p: usize) -> RGBColor {
    if let Some(&(r, g, b)) = PALETTE.get(p) {
        return RGBColor(r, g, b);
    }
    let hue = (p as f64 * 137.508).rem_euclid(360.0) / 360.0;
    let (r, g, b) = HSLColor(hue, 0.55, 0.45).rgb();
    RGBColor(r, g, b)
}

const WIDTH: u32 = 1000;
const TITLE_H: u32 = 50;
const MEMORY_H: u32 = 440;
const LINE_H: u32 = 22;
const BAR_ROW_H: u32 = 34;
const FONT: &str = "sans-serif";
/// Bars whose values are all within this share of each other collapse to a line.
pub const EQUAL_WITHIN: f64 = 0.005;

/// A value as a label or tick: enough digits to tell 0.0076 from 0.0085.
#[must_use]
pub fn label(v: f64) -> String {
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

/// A "nice" axis maximum: 1, 2 or 5 times a power of ten, at or above `max`.
fn nice_ceiling(max: f64) -> f64 {
    if !max.is_finite() || max <= 0.0 {
        return 1.0;
    }
    let base = 10f64.powf(max.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * base).find(|v| *v >= max * 0.999).unwrap_or(10.0 * base)
}

/// A log axis's range in whole decades, half a decade below the least value.
fn decades(values: &[f64]) -> (f64, f64) {
    let positive: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
    if positive.is_empty() {
        return (0.1, 1.0);
    }
    let min = positive.iter().copied().fold(f64::INFINITY, f64::min);
    let max = positive.iter().copied().fold(0.0, f64::max);
    let lo = (min.log10() - 0.5).floor();
    let hi = max.log10().ceil().max(lo + 1.0);
    (10f64.powf(lo), 10f64.powf(hi))
}

/// The measured values when they are all within [`EQUAL_WITHIN`] of each
/// other (the least and the most), else `None`.
#[must_use]
pub fn all_equal(values: &[Option<f64>]) -> Option<(f64, f64)> {
    let measured: Vec<f64> = values.iter().flatten().copied().collect();
    let min = measured.iter().copied().fold(f64::INFINITY, f64::min);
    let max = measured.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (!measured.is_empty() && max - min <= EQUAL_WITHIN * max.abs()).then_some((min, max))
}

/// A title's font size: 18 px, smaller when the text would overrun `width`
/// (about 0.55 em per character in a sans-serif face).
fn fitting_size(text: &str, width: f64) -> f64 {
    let chars = text.chars().count().max(1) as f64;
    (width / (0.55 * chars)).min(18.0)
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
type Fail = DrawingAreaErrorKind<std::io::Error>;

/// Renders the chart as an SVG document.
///
/// # Errors
/// Only if plotters fails to lay out the document (it writes to memory).
pub fn render(chart: &Chart) -> Result<String, String> {
    let bars: Vec<&Panel> = chart.panels.iter().filter(|p| all_equal(&p.values).is_none()).collect();
    let lines: Vec<&Panel> = chart.panels.iter().filter(|p| all_equal(&p.values).is_some()).collect();
    let bar_h = 90 + BAR_ROW_H * chart.policies.len() as u32;
    let memory_h = if chart.absent_blocks.is_some() { MEMORY_H } else { 0 };
    let lines_h = if lines.is_empty() { 0 } else { 10 + LINE_H * lines.len() as u32 };
    let height = TITLE_H + memory_h + lines_h + bar_h * bars.len().div_ceil(2) as u32;
    let mut out = String::new();
    draw(chart, &bars, &lines, (height, memory_h, lines_h, bar_h), &mut out).map_err(|e| e.to_string())?;
    Ok(out)
}

fn draw(
    chart: &Chart,
    bars: &[&Panel],
    lines: &[&Panel],
    (height, memory_h, lines_h, bar_h): (u32, u32, u32, u32),
    out: &mut String,
) -> Result<(), Fail> {
    let root = SVGBackend::with_string(out, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let (title, rest) = root.split_vertically(TITLE_H);
    let size = fitting_size(&chart.title, f64::from(WIDTH) - 20.0);
    title.draw(&Text::new(
        chart.title.clone(),
        (10, 16),
        (FONT, size).into_font().style(FontStyle::Bold).color(&BLACK),
    ))?;
    let (memory, rest) = rest.split_vertically(memory_h);
    if let Some(blocks) = &chart.absent_blocks {
        memory_panel(&memory, &chart.policies, blocks)?;
    }
    let (text, rest) = rest.split_vertically(lines_h);
    for (i, panel) in lines.iter().enumerate() {
        let Some((min, max)) = all_equal(&panel.values) else { continue };
        let same =
            if label(min) == label(max) { label(max) } else { format!("{} to {}", label(min), label(max)) };
        let line =
            format!("{}: {same} for every policy (all within {:.1}%)", panel.title, EQUAL_WITHIN * 100.0);
        let y = 10 + LINE_H as i32 * i as i32;
        text.draw(&Text::new(line, (20, y), (FONT, 14).into_font().color(&BLACK)))?;
    }
    let rows = bars.len().div_ceil(2);
    if rows > 0 {
        let cells = rest.split_evenly((rows, 2));
        for (panel, cell) in bars.iter().zip(&cells) {
            bar_panel(cell, &chart.policies, panel, bar_h)?;
        }
    }
    root.present()?;
    Ok(())
}

/// A canvas pixel (what `backend_coord` gives) in `area`'s own coordinates.
fn local(area: &Area, (x, y): (i32, i32)) -> (i32, i32) {
    let (bx, by) = area.get_base_pixel();
    (x - bx, y - by)
}

/// Bits per key against blocks per absent lookup, a labelled point per policy.
fn memory_panel(area: &Area, policies: &[Policy], blocks: &[Option<f64>]) -> Result<(), Fail> {
    let measured: Vec<f64> = blocks.iter().flatten().copied().collect();
    let (lo, hi) = decades(&measured);
    let max_bits = policies.iter().map(|p| p.bits_per_key).fold(0.0, f64::max);
    let mut chart = ChartBuilder::on(area)
        .caption(
            "absent keys: what filter memory buys (lower is better)",
            (FONT, 16).into_font().style(FontStyle::Bold),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..(max_bits * 1.25).max(1.0), (lo..hi).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("filter memory (bits per key)")
        .y_desc("data blocks read per absent lookup (log scale)")
        .y_label_formatter(&|v| tick_label(*v))
        .x_label_formatter(&|v| tick_label(*v))
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 13))
        .light_line_style(TRANSPARENT)
        .draw()?;
    let font = (FONT, 12).into_font();
    let x_end = (max_bits * 1.25).max(1.0);
    // The points first, so no label covers another policy's point.
    let mut placed: Vec<(i32, i32, i32, i32)> = policies
        .iter()
        .zip(blocks)
        .filter(|(p, v)| !p.baseline && v.is_some())
        .map(|(p, v)| {
            let (x, y) = local(area, chart.backend_coord(&(p.bits_per_key, v.unwrap_or(lo).max(lo))));
            (x - 7, y - 7, 14, 14)
        })
        .collect();
    for (p, policy) in policies.iter().enumerate() {
        let Some(v) = blocks.get(p).copied().flatten() else { continue };
        let y = v.max(lo);
        let c = color(p);
        if policy.baseline {
            chart.draw_series(DashedLineSeries::new([(0.0, y), (x_end, y)], 8, 5, c.stroke_width(2)))?;
            let text = format!("{}: no filter, {} blocks", policy.name, label(v));
            let (px, py) = local(area, chart.backend_coord(&(x_end, y)));
            area.draw(&Text::new(
                text,
                (px - 4, py - 6),
                font.color(&c).pos(Pos::new(HPos::Right, VPos::Bottom)),
            ))?;
            continue;
        }
        let at = (policy.bits_per_key, y);
        chart.draw_series([Circle::new(at, 6, c.filled())])?;
        let mut text = format!("{} {}", policy.name, label(v));
        if policy.default {
            chart.draw_series([Circle::new(at, 11, BLACK.stroke_width(2))])?;
            text = format!("{} (default) {}", policy.name, label(v));
        }
        let (px, py) = local(area, chart.backend_coord(&at));
        let ((x0, y0), anchor) = place(&mut placed, (px, py), &text);
        area.draw(&Text::new(text, (x0, y0), font.color(&BLACK).pos(anchor)))?;
    }
    Ok(())
}

/// Where a point's label goes: right of it, else left, else stepped down,
/// so labels of policies near the same memory do not overprint.
fn place(placed: &mut Vec<(i32, i32, i32, i32)>, (px, py): (i32, i32), text: &str) -> ((i32, i32), Pos) {
    let w = 7 * text.chars().count() as i32;
    let h = 14;
    let boxes = |dy: i32| {
        [
            ((px + 14, py + dy), Pos::new(HPos::Left, VPos::Center), (px + 14, py + dy - h / 2, w, h)),
            ((px - 14, py + dy), Pos::new(HPos::Right, VPos::Center), (px - 14 - w, py + dy - h / 2, w, h)),
        ]
    };
    let overlaps = |a: (i32, i32, i32, i32), b: &(i32, i32, i32, i32)| {
        a.0 < b.0 + b.2 && b.0 < a.0 + a.2 && a.1 < b.1 + b.3 && b.1 < a.1 + a.3
    };
    for dy in [0, 14, -14, 28, -28, 42, -42] {
        for (at, pos, rect) in boxes(dy) {
            if !placed.iter().any(|b| overlaps(rect, b)) {
                placed.push(rect);
                return (at, pos);
            }
        }
    }
    let (at, pos, rect) = boxes(0)[0];
    placed.push(rect);
    (at, pos)
}

/// A horizontal bar per policy, named on the left with its bits per key
/// beneath, its value at the bar's end.
fn bar_panel(area: &Area, policies: &[Policy], panel: &Panel, bar_h: u32) -> Result<(), Fail> {
    let measured: Vec<f64> = panel.values.iter().flatten().copied().collect();
    let way = match panel.better {
        Better::Lower => "lower is better",
        Better::Higher => "higher is better",
    };
    let scale = if panel.log { ", log scale" } else { "" };
    let n = policies.len() as f64;
    let (area, _) = area.split_vertically(bar_h);
    let caption = format!("{} ({way}{scale})", panel.title);
    let size = fitting_size(&caption, f64::from(WIDTH) / 2.0 - 20.0).min(14.0);
    let row_y = |p: usize| n - p as f64 - 0.5;
    // One drawing routine over either axis kind: the x range is all that differs.
    macro_rules! bars {
        ($x:expr, $floor:expr) => {{
            let mut chart = ChartBuilder::on(&area)
                .caption(caption.clone(), (FONT, size).into_font().style(FontStyle::Bold))
                .margin(12)
                .margin_right(45)
                .x_label_area_size(30)
                .y_label_area_size(120)
                .build_cartesian_2d($x, 0f64..n)?;
            chart
                .configure_mesh()
                .disable_y_mesh()
                .y_labels(0)
                .x_labels(5)
                .x_label_formatter(&|v| tick_label(*v))
                .light_line_style(TRANSPARENT)
                .label_style((FONT, 11))
                .draw()?;
            for (p, policy) in policies.iter().enumerate() {
                let y = row_y(p);
                let (lx, ly) = local(&area, chart.backend_coord(&($floor, y)));
                let name = (FONT, 12).into_font().color(&BLACK).pos(Pos::new(HPos::Right, VPos::Bottom));
                let bits = (FONT, 10)
                    .into_font()
                    .color(&RGBColor(0x55, 0x55, 0x55))
                    .pos(Pos::new(HPos::Right, VPos::Top));
                area.draw(&Text::new(policy.name.clone(), (lx - 8, ly + 1), name))?;
                area.draw(&Text::new(
                    format!("{:.1} bits/key", policy.bits_per_key),
                    (lx - 8, ly + 2),
                    bits,
                ))?;
                let Some(v) = panel.values.get(p).copied().flatten() else { continue };
                let end = v.max($floor);
                chart.draw_series([Rectangle::new(
                    [($floor, y - 0.35), (end, y + 0.35)],
                    color(p).filled(),
                )])?;
                let (vx, vy) = local(&area, chart.backend_coord(&(end, y)));
                let style = (FONT, 10).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
                area.draw(&Text::new(label(v), (vx + 3, vy), style))?;
            }
        }};
    }
    if panel.log {
        let (lo, hi) = decades(&measured);
        bars!((lo..hi).log_scale(), lo);
    } else {
        let hi = nice_ceiling(measured.iter().copied().fold(0.0, f64::max));
        bars!(0f64..hi, 0.0);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
