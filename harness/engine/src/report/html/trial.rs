//! One trial's section: claim, verdict, reproduce command, parity table,
//! steps with their assertions (a diff for each mismatch) and exchanges, and
//! logs. A trial that did not pass is shown whole, its failing step marked
//! and its failing exchange open; a passing trial is shown in brief (bodies
//! and logs cut short: `report.json` keeps everything).

use std::fmt::Write;

use super::exchange::{exchange, path};
use super::shared::SharedSteps;
use super::values::{diff, readable};
use super::{Budget, anchor, esc, status_class, text};
use crate::report::model::{
    AssertionRecord, Comparison, Exchange, Phases, RunReport, ScenarioResult,
};
use crate::vocab::Verdict;

/// Characters of an assertion value shown for a passing trial.
const BRIEF_VALUE: usize = 100;

/// Renders one result as a `<section>` whose class is its status (the
/// status filters select on it).
pub(super) fn result(h: &mut String, report: &RunReport, r: &ScenarioResult, shared: &SharedSteps) {
    let status = status_class(&r.verdict);
    let budget = match r.verdict {
        Verdict::Passed => Budget::Brief,
        _ => Budget::Full,
    };
    let _ = write!(
        h,
        "<section class=\"trial st-{status}\" id=\"{a}\"><h3><span class=\"tag {status}\">{label}</span> {name}</h3>\
         <p><em>{claim}</em></p><p class=\"meta\">{dur} ms{phases}; stack start-up {st}; core {cv}; database {dv}</p>",
        a = anchor(&r.name),
        label = r.verdict.label(),
        name = esc(&r.name),
        claim = esc(&r.claim),
        dur = r.duration_ms,
        phases = r.phases.as_ref().map(phases).unwrap_or_default(),
        st = r
            .stack_startup_ms
            .map(|s| format!("{s} ms"))
            .unwrap_or_else(|| "—".into()),
        cv = esc(r.core_version.as_deref().unwrap_or("—")),
        dv = esc(r.database_version.as_deref().unwrap_or("—")),
    );
    if let Verdict::Failed { message }
    | Verdict::Errored { message }
    | Verdict::NotApplicable { message }
    | Verdict::NotRun { message } = &r.verdict
    {
        let _ = write!(h, "<pre class=\"message {status}\">{}</pre>", text(message));
    }
    let _ = write!(
        h,
        "<p>reproduce: <code>{}</code></p>",
        esc(&report.reproduce(r))
    );
    if let Some(c) = &r.comparison {
        match budget {
            Budget::Brief => comparison_lines(h, c),
            Budget::Full => comparison(h, c),
        }
    }
    steps(h, r, shared, budget);
    pictures(h, r);
    match budget {
        Budget::Brief => log_sizes(h, r),
        Budget::Full => {
            log(h, "Core log", &r.core_log);
            for l in &r.adapter_logs {
                log(h, &l.name, &l.text);
            }
        }
    }
    h.push_str("</section>");
}

/// The real browser's page trail: each page's URL and title, linked to its
/// screenshot when one was kept.
fn pictures(h: &mut String, r: &ScenarioResult) {
    if r.pictures.is_empty() {
        return;
    }
    h.push_str("<details class=\"pictures\"><summary>browser pages</summary><ol>");
    for p in &r.pictures {
        let page = format!("{} — {} ({})", p.url, p.title, p.actor);
        let mark = if p.failed { "failed: " } else { "" };
        match &p.file {
            Some(file) => {
                let _ = write!(
                    h,
                    "<li>{mark}<a href=\"{}\">{}</a></li>",
                    esc(file),
                    esc(&page)
                );
            }
            None => {
                let _ = write!(h, "<li>{mark}{}</li>", esc(&page));
            }
        }
    }
    h.push_str("</ol></details>");
}

/// The step list of a trial: per step its checks and its exchanges.
fn steps(h: &mut String, r: &ScenarioResult, shared: &SharedSteps, budget: Budget) {
    let failing = failing_step(r);
    h.push_str("<ol class=\"steps\">");
    for (i, step) in r.steps.iter().enumerate() {
        let is_failing = failing == Some(i);
        let class = if is_failing {
            " class=\"failing-step\""
        } else {
            ""
        };
        let _ = write!(h, "<li{class}><strong>{}</strong>", esc(&step.name));
        assertions(h, &step.assertions, budget);
        match shared.anchor_of(step).filter(|_| !is_failing) {
            Some(a) => {
                let _ = write!(
                    h,
                    "<p class=\"ref\">{} setup requests, as in <a href=\"#{a}\">shared setup</a>.</p>",
                    step.exchanges.len()
                );
            }
            None if budget == Budget::Brief => exchange_lines(h, &step.exchanges),
            None => {
                let last = step.exchanges.len().saturating_sub(1);
                for (j, ex) in step.exchanges.iter().enumerate() {
                    exchange(h, ex, is_failing && j == last);
                }
            }
        }
        h.push_str("</li>");
    }
    h.push_str("</ol>");
}

/// The step a trial that did not pass broke in: the first with a failed
/// assertion, else the last (where the journal stood when it stopped).
pub(super) fn failing_step(r: &ScenarioResult) -> Option<usize> {
    r.failing_step_index()
}

/// The assertion table; each failed assertion gets a diff row under it. A
/// held assertion whose values are equal shows the value once.
pub(super) fn assertions(h: &mut String, list: &[AssertionRecord], budget: Budget) {
    if list.is_empty() {
        return;
    }
    if budget == Budget::Brief {
        return assertion_lines(h, list);
    }
    h.push_str(
        "<table class=\"checks\"><tr><th></th><th>check</th><th>expected</th><th>actual</th></tr>",
    );
    for a in list {
        let (expected, actual) = (readable(&a.expected), readable(&a.actual));
        let (c, m) = if a.passed {
            ("ok", "✔")
        } else {
            ("bad", "✘")
        };
        let _ = write!(h, "<tr class=\"{c}\"><td>{m}</td><td>{}</td>", esc(&a.what));
        if a.passed && same(&expected, &actual) {
            let _ = write!(
                h,
                "<td colspan=\"2\" class=\"same\">{}</td></tr>",
                value(&expected)
            );
        } else {
            let _ = write!(
                h,
                "<td>{}</td><td>{}</td></tr>",
                value(&expected),
                value(&actual)
            );
        }
        if !a.passed {
            let _ = write!(
                h,
                "<tr class=\"bad\"><td></td><td>diff</td><td colspan=\"2\">{}</td></tr>",
                diff(&expected, &actual)
            );
        }
    }
    h.push_str("</table>");
}

/// Whether two shown values say the same, a JSON string and its text alike
/// (`sqlite` expected, `"sqlite"` observed).
fn same(expected: &str, actual: &str) -> bool {
    let unquoted = |v: &str| match serde_json::from_str::<serde_json::Value>(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => v.to_owned(),
    };
    expected == actual || unquoted(expected) == unquoted(actual)
}

/// A passing trial's assertions, one line each, long values cut short.
fn assertion_lines(h: &mut String, list: &[AssertionRecord]) {
    h.push_str("<pre class=\"checklist\">");
    for a in list {
        let (expected, actual) = (readable(&a.expected), readable(&a.actual));
        let mark = if a.passed { '✔' } else { '✘' };
        let line = match same(&expected, &actual) {
            true => format!("{mark} {}: {}\n", a.what, cut(&expected, BRIEF_VALUE)),
            false => format!(
                "{mark} {}: expected {}, got {}\n",
                a.what,
                cut(&expected, BRIEF_VALUE),
                cut(&actual, BRIEF_VALUE)
            ),
        };
        h.push_str(&text(&line));
    }
    h.push_str("</pre>");
}

/// A value: inline code, or preformatted when it spans lines.
fn value(v: &str) -> String {
    match v.contains('\n') {
        true => format!("<pre>{}</pre>", text(v)),
        false => format!("<code>{}</code>", text(v)),
    }
}

/// A passing parity result: each observation once, with the value every
/// backend agreed on.
fn comparison_lines(h: &mut String, c: &Comparison) {
    let _ = writeln!(
        h,
        "<pre class=\"checklist\">every backend ({}) observed alike:",
        esc(&c.backends.join(", "))
    );
    for row in &c.rows {
        let v = row
            .values
            .iter()
            .flatten()
            .next()
            .map(String::as_str)
            .unwrap_or("(nothing)");
        let line = format!(
            "{} {}: {}\n",
            if row.agree { '✔' } else { '✘' },
            row.observation,
            cut(v, BRIEF_VALUE)
        );
        h.push_str(&text(&line));
    }
    h.push_str("</pre>");
}

/// A parity result's table: observation → value per backend → agree?
fn comparison(h: &mut String, c: &Comparison) {
    h.push_str("<div class=\"wide\"><table class=\"comparison\"><tr><th>observation</th>");
    for b in &c.backends {
        let _ = write!(h, "<th>{}</th>", esc(b));
    }
    h.push_str("<th>agree?</th></tr>");
    for row in &c.rows {
        let _ = write!(
            h,
            "<tr class=\"{}\"><td>{}</td>",
            if row.agree { "ok" } else { "bad" },
            esc(&row.observation)
        );
        for v in &row.values {
            match v {
                Some(v) => {
                    let _ = write!(h, "<td><code>{}</code></td>", esc(v));
                }
                None => h.push_str("<td>(nothing)</td>"),
            }
        }
        let _ = write!(
            h,
            "<td>{}</td></tr>",
            if row.agree { "✔ agree" } else { "✘ differ" }
        );
    }
    h.push_str("</table></div>");
}

/// A passing trial's exchanges, one line each (headers and bodies are in
/// `report.json`).
fn exchange_lines(h: &mut String, exchanges: &[Exchange]) {
    if exchanges.is_empty() {
        return;
    }
    h.push_str("<pre class=\"exlist\">");
    for ex in exchanges {
        let status = match ex.kind.as_str() {
            "http" => format!(" → {}", ex.status),
            _ => String::new(),
        };
        let line = format!("{}: {} {}{status}\n", ex.actor, ex.method, path(&ex.target));
        h.push_str(&text(&line));
    }
    h.push_str("</pre>");
}

/// `v` cut to `max` characters, saying how long it was.
fn cut(v: &str, max: usize) -> String {
    match v.char_indices().nth(max) {
        Some((i, _)) => format!(
            "{}… ({} bytes in all; whole in report.json)",
            &v[..i],
            v.len()
        ),
        None => v.to_owned(),
    }
}

/// A process log, folded.
fn log(h: &mut String, name: &str, log: &str) {
    let _ = write!(
        h,
        "<details><summary>{}</summary><pre>{}</pre></details>",
        esc(name),
        text(log)
    );
}

/// A passing trial's logs, by size only (`report.json` holds them).
fn log_sizes(h: &mut String, r: &ScenarioResult) {
    let mut sizes = vec![format!("Core log {} lines", r.core_log.lines().count())];
    for l in &r.adapter_logs {
        sizes.push(format!("{} {} lines", esc(&l.name), l.text.lines().count()));
    }
    let _ = write!(
        h,
        "<p class=\"ref\">Logs in report.json: {}.</p>",
        sizes.join(", ")
    );
}

/// Where a trial's time went, in milliseconds: ` (fixtures 5, stack 21,
/// scenario 383 of which waited 0, data check 4, teardown 6)`.
fn phases(p: &Phases) -> String {
    format!(
        " (fixtures {}, stack {}, scenario {} of which waited {}, data check {}, teardown {})",
        p.fixtures_ms, p.stack_ms, p.scenario_ms, p.waited_ms, p.checks_ms, p.teardown_ms
    )
}
