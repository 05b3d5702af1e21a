//! Where the run's time went: an inline SVG of the trials on their job lanes
//! over time (stack start-up shaded), and per-family duration bars.

use std::fmt::Write;

use super::{anchor, esc, status_class};
use crate::report::model::RunReport;

/// Width of the timeline's drawing, in SVG units (it scales to the page).
const WIDTH: f64 = 1000.0;
/// Height of one job lane.
const LANE: f64 = 14.0;

/// The timeline: each trial is a bar on the first lane free when it started
/// (as many lanes as jobs ran at once), linked to its section.
pub(super) fn timeline(h: &mut String, report: &RunReport) {
    let mut timed: Vec<_> = report
        .results
        .iter()
        .filter_map(|r| r.started_ms.map(|s| (s, r)))
        .collect();
    h.push_str("<h2 id=\"timeline\">Timeline</h2>");
    if timed.is_empty() {
        h.push_str(
            "<p>This report has no trial start times (written before they were recorded).</p>",
        );
        return;
    }
    timed.sort_by_key(|(s, _)| *s);
    let end = timed
        .iter()
        .map(|(s, r)| s + r.duration_ms)
        .max()
        .unwrap_or(1)
        .max(report.duration_ms)
        .max(1) as f64;
    let mut lanes: Vec<u64> = Vec::new();
    let mut bars = String::new();
    for (start, r) in &timed {
        let lane = match lanes.iter().position(|free| free <= start) {
            Some(l) => l,
            None => {
                lanes.push(0);
                lanes.len() - 1
            }
        };
        lanes[lane] = start + r.duration_ms;
        let x = |ms: u64| ms_x(ms, end);
        let y = lane as f64 * LANE;
        let w = (r.duration_ms as f64 * WIDTH / end).max(1.0);
        let _ = write!(
            bars,
            "<a href=\"#{a}\"><title>{n}: {v}, {d} ms (stack start-up {s} ms)</title>\
             <rect class=\"{c}\" x=\"{x:.1}\" y=\"{y}\" width=\"{w:.1}\" height=\"{hh}\"/>",
            a = anchor(&r.name),
            n = esc(&r.name),
            v = r.verdict.label(),
            d = r.duration_ms,
            s = r.stack_startup_ms.unwrap_or(0),
            c = status_class(&r.verdict),
            x = x(*start),
            hh = LANE - 2.0,
        );
        if let Some(startup) = r.stack_startup_ms {
            let sw = (startup as f64 * WIDTH / end).min(w);
            let _ = write!(
                bars,
                "<rect class=\"startup\" x=\"{:.1}\" y=\"{y}\" width=\"{sw:.1}\" height=\"{}\"/>",
                x(*start),
                LANE - 2.0
            );
        }
        bars.push_str("</a>");
    }
    let height = lanes.len() as f64 * LANE + 16.0;
    let _ = write!(
        h,
        "<p>{n} trials on {l} job lanes over {s:.1} s; the darker start of each bar is its stack start-up. \
         Each bar links to its trial.</p><svg class=\"timeline\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" \
         aria-label=\"trials per job lane over time\">{bars}",
        n = timed.len(),
        l = lanes.len(),
        s = end / 1000.0,
    );
    // A tick every tenth of the run, labelled in seconds.
    for i in 0..10u64 {
        let ms = end as u64 * i / 10;
        let _ = write!(
            h,
            "<text x=\"{:.1}\" y=\"{}\">{:.0}s</text>",
            ms_x(ms, end),
            height - 3.0,
            ms as f64 / 1000.0
        );
    }
    h.push_str("</svg>");
}

/// An x coordinate, kept inside the drawing.
fn ms_x(ms: u64, end: f64) -> f64 {
    (ms as f64 * WIDTH / end).clamp(0.0, WIDTH - 1.0)
}

/// Per family: trials, total and longest trial time, as bars scaled to the
/// family that took longest.
pub(super) fn family_durations(h: &mut String, report: &RunReport, families: &[&str]) {
    let rows: Vec<(&str, usize, u64, u64)> = families
        .iter()
        .map(|f| {
            let in_family = report.results.iter().filter(|r| r.family == *f);
            let (n, total, max) = in_family.fold((0, 0, 0), |(n, t, m), r| {
                (n + 1, t + r.duration_ms, m.max(r.duration_ms))
            });
            (*f, n, total, max)
        })
        .collect();
    let longest = rows.iter().map(|r| r.2).max().unwrap_or(1).max(1);
    h.push_str(
        "<h2 id=\"durations\">Time per family</h2><table class=\"durations\">\
         <tr><th>family</th><th>trials</th><th>total</th><th>longest trial</th><th></th></tr>",
    );
    for (family, n, total, max) in rows {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{n}</td><td>{:.1} s</td><td>{:.1} s</td>\
             <td class=\"bar\"><span style=\"width:{:.1}%\"></span></td></tr>",
            esc(family),
            total as f64 / 1000.0,
            max as f64 / 1000.0,
            total as f64 * 100.0 / longest as f64
        );
    }
    h.push_str("</table>");
}
