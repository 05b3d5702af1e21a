//! `index.html`: a self-contained page an auditor can read offline and act
//! on. No scripts, no external resources. In reading order:
//!
//! 1. the gate's verdict as a banner, then every failure with its diff and
//!    a link to its trial, then the known failures a baseline waived and
//!    its stale or expired entries (`--expected-failures`), apart;
//! 2. contents by family, the run's timeline (`timeline.rs`) and time per
//!    family, the environment and the scenario × backend matrix;
//! 3. the setup steps every trial shares, shown once (`shared.rs`);
//! 4. every trial by family (`trial.rs`), behind CSS-only status filters
//!    (radio inputs and `:checked ~` selectors). Values read as JSON or
//!    text, not Rust (`values.rs`).
//!
//! A passing trial is shown in brief (bodies and logs cut short) so that a
//! full run's page stays small; `report.json` keeps everything.

mod exchange;
mod shared;
mod timeline;
mod trial;
mod values;

#[cfg(test)]
mod browser_test;

use std::fmt::Write;

use super::gate::Gate;
use super::model::RunReport;
use crate::secrets::SecretRegistry;
use crate::vocab::Verdict;

const STYLE: &str = include_str!("style.css");

/// How much of a trial's transcript the page shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Budget {
    /// Everything the model holds.
    Full,
    /// Bodies and logs cut short (a passing trial).
    Brief,
}

/// Renders the report as one HTML page, redacted.
pub fn render(report: &RunReport, secrets: &SecretRegistry) -> String {
    let mut h = String::new();
    let c = report.counts();
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>grantgate run {id}</title><style>{STYLE}</style></head><body>\
         <h1>grantgate run {id}</h1>",
        id = esc(&report.run_id),
    );
    let (class, headline, detail) = gate_verdict(report);
    let _ = write!(
        h,
        "<div class=\"banner {class}\" id=\"verdict\">{}<small>{}</small></div>\
         <p>Started {start}, took {dur:.1} s. <strong>{p} passed, {f} failed{w}, {e} errored, {n} not applicable{r}.</strong></p>",
        esc(&headline),
        esc(&detail),
        start = esc(&report.started_at),
        dur = report.duration_ms as f64 / 1000.0,
        p = c.passed,
        f = c.failed,
        w = match c.waived {
            0 => String::new(),
            n => format!(", {n} known failure(s) waived"),
        },
        e = c.errored,
        n = c.not_applicable,
        r = match c.not_run {
            0 => String::new(),
            n => format!(", {n} not run"),
        },
    );
    failures(&mut h, report);
    known_failures(&mut h, report);
    let families = families(report);
    contents(&mut h, report, &families);
    timeline::timeline(&mut h, report);
    timeline::family_durations(&mut h, report, &families);
    environment(&mut h, report);
    matrix(&mut h, report, &families);
    coverage(&mut h, report);
    let shared = shared::SharedSteps::find(report);
    shared.render(&mut h);
    trials(&mut h, report, &families, &shared);
    h.push_str("</body></html>\n");
    // One block per line, so that a diff of two reports (or of a snapshot)
    // is readable. Safe: every text inside is escaped, so these closing
    // tags only ever occur as markup.
    for tag in [
        "</h1>",
        "</h2>",
        "</h3>",
        "</p>",
        "</table>",
        "</tr>",
        "</li>",
        "</details>",
        "</pre>",
        "</section>",
        "</div>",
    ] {
        h = h.replace(tag, &format!("{tag}\n"));
    }
    secrets.redact(&h)
}

/// The gate's verdict as a banner: class, headline and detail. The verdict
/// is the model's ([`RunReport::gate`]); the page only words it.
fn gate_verdict(report: &RunReport) -> (&'static str, String, String) {
    let c = report.counts();
    let total = report.results.len();
    let gate = report.gate();
    let (class, detail) = match &gate {
        Gate::Passed => (
            "passed",
            format!("all {total} trials of the catalogue passed"),
        ),
        Gate::Failed => (
            "failed",
            format!(
                "{} failed (the Core broke the contract), {} errored (the harness or environment broke), of {total} trials",
                c.failed, c.errored
            ),
        ),
        Gate::Partial { .. } => (
            "partial",
            format!("{} of {total} trials passed; not the whole gate", c.passed),
        ),
        Gate::Waived { .. } => (
            "partial",
            format!(
                "{} of {total} trials passed; every failure is a known one (below)",
                c.passed
            ),
        ),
    };
    (class, gate.banner(), detail)
}

/// Every failed or errored trial, first: its message, its failed
/// assertions with their diffs, and a link to the whole trial.
fn failures(h: &mut String, report: &RunReport) {
    let broken: Vec<_> = report
        .results
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Failed { .. } | Verdict::Errored { .. }))
        .filter(|r| report.waiver(&r.name).is_none())
        .collect();
    if broken.is_empty() {
        return;
    }
    let _ = write!(
        h,
        "<section id=\"failures\"><h2>Failures ({})</h2>",
        broken.len()
    );
    for r in broken {
        let status = status_class(&r.verdict);
        let message = match &r.verdict {
            Verdict::Failed { message } | Verdict::Errored { message } => message.as_str(),
            _ => "",
        };
        let _ = write!(
            h,
            "<div class=\"failure {status}\"><h3><a href=\"#{a}\">{name}</a> — {label}</h3><pre>{msg}</pre>",
            a = anchor(&r.name),
            name = esc(&r.name),
            label = r.verdict.label(),
            msg = esc(message),
        );
        if let Some(step) = trial::failing_step(r).map(|i| &r.steps[i]) {
            let failed: Vec<_> = step
                .assertions
                .iter()
                .filter(|a| !a.passed)
                .cloned()
                .collect();
            let _ = write!(h, "<p>in step <strong>{}</strong></p>", esc(&step.name));
            trial::assertions(h, &failed, Budget::Full);
        }
        let _ = write!(
            h,
            "<p>reproduce: <code>{}</code></p></div>",
            esc(&report.reproduce(r))
        );
    }
    h.push_str("</section>");
}

/// The baseline's part (`--expected-failures`), apart from the failures:
/// each stale or expired entry (they fail the gate), then each waived
/// failure with its step, its reason and a link to its trial.
fn known_failures(h: &mut String, report: &RunReport) {
    let Some(b) = &report.baseline else {
        return;
    };
    let problems = report.baseline_problems();
    if !problems.is_empty() {
        let _ = write!(
            h,
            "<section id=\"baseline-problems\"><h2>Baseline entries that fail the gate ({})</h2><ul>",
            problems.len()
        );
        for why in problems {
            let _ = write!(h, "<li class=\"failed\">{}</li>", esc(why));
        }
        h.push_str("</ul></section>");
    }
    let _ = write!(
        h,
        "<section id=\"waived\"><h2>Known failures, waived ({})</h2>\
         <p>By {file} ({digest}, {n} entries, judged on {today}). A waived failure is still a failure of the contract.</p>",
        b.waived.len(),
        file = esc(&b.file),
        digest = esc(&b.digest),
        n = b.entries.len(),
        today = esc(&b.today),
    );
    if !b.waived.is_empty() {
        h.push_str(
            "<table><tr><th>trial</th><th>step</th><th>reason</th><th>expires</th><th>failure</th></tr>",
        );
        for w in &b.waived {
            let message = (report.results.iter())
                .find(|r| r.name == w.trial)
                .and_then(|r| r.verdict.message())
                .unwrap_or_default();
            let _ = write!(
                h,
                "<tr><td><a href=\"#{a}\">{t}</a></td><td>{step}</td><td>{reason}</td><td>{exp}</td><td><pre>{msg}</pre></td></tr>",
                a = anchor(&w.trial),
                t = esc(&w.trial),
                step = esc(w.check.as_deref().unwrap_or("")),
                reason = esc(&w.reason),
                exp = esc(b.entries[w.entry].expires.as_deref().unwrap_or("never")),
                msg = esc(message),
            );
        }
        h.push_str("</table>");
    }
    h.push_str("</section>");
}

/// Contents: the page's sections, and each family with its counts.
fn contents(h: &mut String, report: &RunReport, families: &[&str]) {
    h.push_str(
        "<nav class=\"toc\"><h2>Contents</h2><p><a href=\"#timeline\">timeline</a> · \
         <a href=\"#durations\">time per family</a> · <a href=\"#environment\">environment</a> · \
         <a href=\"#matrix\">matrix</a> · <a href=\"#shared\">shared setup</a> · <a href=\"#trials\">trials</a></p><ul>",
    );
    for (i, family) in families.iter().enumerate() {
        let of: Vec<_> = report
            .results
            .iter()
            .filter(|r| r.family == *family)
            .collect();
        let bad = of
            .iter()
            .filter(|r| matches!(r.verdict, Verdict::Failed { .. } | Verdict::Errored { .. }))
            .count();
        let _ = write!(
            h,
            "<li><a href=\"#family-{}\">{}</a> — {} trials{}</li>",
            i + 1,
            esc(family),
            of.len(),
            if bad > 0 {
                format!(", <strong class=\"tag failed\">{bad} not passed</strong>")
            } else {
                String::new()
            }
        );
    }
    h.push_str("</ul></nav>");
}

/// The trials by family, behind the status filters. The radio inputs come
/// first so that `:checked ~ .trials` can hide what is not selected.
fn trials(h: &mut String, report: &RunReport, families: &[&str], shared: &shared::SharedSteps) {
    let c = report.counts();
    let _ = write!(
        h,
        "<h2 id=\"trials\">Trials</h2><div class=\"results\">\
         <input type=\"radio\" name=\"status\" id=\"f-all\" checked>\
         <input type=\"radio\" name=\"status\" id=\"f-failed\">\
         <input type=\"radio\" name=\"status\" id=\"f-errored\">\
         <input type=\"radio\" name=\"status\" id=\"f-passed\">\
         <input type=\"radio\" name=\"status\" id=\"f-na\">\
         <div class=\"filters\">show: <label for=\"f-all\">all ({})</label><label for=\"f-failed\">failed ({})</label><label for=\"f-errored\">errored ({})</label><label for=\"f-passed\">passed ({})</label><label for=\"f-na\">not applicable ({})</label></div>\
         <div class=\"trials\">",
        report.results.len(),
        c.failed,
        c.errored,
        c.passed,
        c.not_applicable
    );
    for (i, family) in families.iter().enumerate() {
        let _ = write!(
            h,
            "<div class=\"family\"><h2 id=\"family-{}\">{}</h2>",
            i + 1,
            esc(family)
        );
        for r in report.results.iter().filter(|r| r.family == *family) {
            trial::result(h, report, r, shared);
        }
        h.push_str("</div>");
    }
    h.push_str("</div></div>");
}

fn environment(h: &mut String, report: &RunReport) {
    let env = &report.environment;
    h.push_str("<h2 id=\"environment\">Environment</h2><table>");
    for (k, v) in [
        ("harness version", &env.harness_version),
        ("git revision", &env.git_revision),
        ("core binary", &env.core_binary),
        ("adapter binary", &env.adapter_binary),
        ("browser", &env.browser),
    ] {
        let _ = write!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    }
    for b in &env.backends {
        let _ = write!(
            h,
            "<tr><th>{} core version</th><td>{}</td></tr><tr><th>{} database</th><td>{}</td></tr>",
            esc(&b.backend),
            esc(&b.core_version),
            esc(&b.backend),
            esc(&b.database_version)
        );
    }
    h.push_str("</table>");
}

/// The families of the results, in the order they first occur (the
/// catalogue's), parity last.
fn families(report: &RunReport) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for r in &report.results {
        if !out.contains(&r.family.as_str()) {
            out.push(&r.family);
        }
    }
    out
}

fn matrix(h: &mut String, report: &RunReport, families: &[&str]) {
    let mut backends: Vec<&str> = Vec::new();
    for r in &report.results {
        if !backends.contains(&r.backend.as_str()) {
            backends.push(&r.backend);
        }
    }
    h.push_str("<h2 id=\"matrix\">Matrix</h2><div class=\"wide\"><table><tr><th>scenario</th><th>claim</th>");
    for b in &backends {
        let _ = write!(h, "<th>{}</th>", esc(b));
    }
    h.push_str("</tr>");
    // Parity is a column of every scenario's own row, not a group of its
    // own: family 11 compares the other families' scenarios.
    let parity = crate::runner::parity::PARITY;
    for family in families {
        let of = || report.results.iter().filter(|r| r.family == *family);
        if of().all(|r| r.backend == parity) {
            continue;
        }
        let _ = write!(
            h,
            "<tr><th colspan=\"{}\">{}</th></tr>",
            backends.len() + 2,
            esc(family)
        );
        let mut scenarios: Vec<(&str, &str)> = Vec::new();
        for r in of() {
            if !scenarios.iter().any(|(id, _)| *id == r.scenario) {
                scenarios.push((&r.scenario, &r.claim));
            }
        }
        matrix_rows(h, report, &backends, &scenarios);
    }
    h.push_str("</table></div>");
}

fn matrix_rows(h: &mut String, report: &RunReport, backends: &[&str], scenarios: &[(&str, &str)]) {
    for (id, claim) in scenarios {
        let _ = write!(h, "<tr><td>{}</td><td>{}</td>", esc(id), esc(claim));
        for b in backends {
            match report
                .results
                .iter()
                .find(|r| r.scenario == *id && r.backend == *b)
            {
                Some(r) => {
                    let _ = write!(
                        h,
                        "<td class=\"{c}\"><a href=\"#{a}\">{l}</a></td>",
                        c = status_class(&r.verdict),
                        l = r.verdict.label(),
                        a = anchor(&r.name)
                    );
                }
                None => h.push_str("<td>—</td>"),
            }
        }
        h.push_str("</tr>");
    }
}

/// Contract coverage: a row per clause of the spec, with its verdict and
/// the trials that verify it.
fn coverage(h: &mut String, report: &RunReport) {
    use crate::clauses::Cover;
    let all = super::coverage::coverage(report);
    let count = |v: &str| all.iter().filter(|c| c.verdict == v).count();
    let _ = write!(
        h,
        "<h2 id=\"coverage\">Contract coverage</h2><p>{n} clauses of <code>docs/spec.md</code>: \
         {p} passed, {f} failed, {r} not run in this run, {o} covered otherwise.</p>\
         <details><summary>Every clause</summary><div class=\"wide\"><table>\
         <tr><th>clause</th><th>verdict</th><th>trials or reason</th></tr>",
        n = all.len(),
        p = count("passed"),
        f = count("failed"),
        r = count("not run"),
        o = count("n/a"),
    );
    for c in &all {
        let class = match c.verdict {
            "passed" => "passed",
            "failed" => "failed",
            _ => "na",
        };
        let detail = match &c.cover {
            Cover::Scenarios => (c.trials.iter())
                .map(|(name, v)| format!("<a href=\"#{}\">{}</a> {v}", anchor(name), esc(name)))
                .collect::<Vec<_>>()
                .join(", "),
            Cover::EveryTrial(why) => format!("every trial: {}", esc(why)),
            Cover::Freedom(why) => format!("a freedom of the Core: {}", esc(why)),
            Cover::NotObservable(why) => format!("not observable by a gate: {}", esc(why)),
        };
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"{class}\">{}</td><td>{detail}</td></tr>",
            esc(&c.id),
            c.verdict
        );
    }
    h.push_str("</table></div></details>");
}

/// The CSS class of a verdict (one word: `not applicable` and `not run`
/// are `na`, shown under one filter).
fn status_class(v: &Verdict) -> &'static str {
    match v {
        Verdict::Passed => "passed",
        Verdict::Failed { .. } => "failed",
        Verdict::Errored { .. } => "errored",
        Verdict::NotApplicable { .. } | Verdict::NotRun { .. } => "na",
    }
}

/// The id of a trial's section in `index.html`.
pub fn anchor(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// Escapes text for element content only (not attributes): `"` and `'` are
/// left as they are, which keeps JSON bodies short and readable in the
/// source.
fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes text for HTML element content and attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::tests::sample;

    #[test]
    fn the_page_is_self_contained_escaped_and_redacted() {
        let secrets = SecretRegistry::new();
        secrets.register("sekrit-value-1");
        let html = render(&sample(), &secrets);
        assert!(!html.contains("<script"), "no scripts");
        assert!(!html.contains("http://cdn"), "no external resources");
        assert!(!html.contains("sekrit-value-1"));
        assert!(html.contains("&lt;b&gt;t&lt;/b&gt;"), "bodies are escaped");
        assert!(
            html.contains(
                "<td class=\"failed\"><a href=\"#sqlite--full-lifecycle\">failed</a></td>"
            )
        );
        assert!(html.contains("<td class=\"errored\">"));
        assert!(html.contains("2 failed, 1 errored"));
        assert!(
            html.contains("<h2 id=\"family-1\">lifecycle</h2>")
                && html.contains("<h2 id=\"family-2\">11 backend parity</h2>"),
            "results are grouped by family"
        );
        assert!(
            html.contains("<th>observation</th><th>sqlite</th><th>postgres</th><th>agree?</th>"),
            "the parity comparison is a table per backend"
        );
        assert!(html.contains("<td>✘ differ</td>"));
        assert!(
            html.contains(
                "<td class=\"failed\"><a href=\"#parity--full-lifecycle\">failed</a></td></tr>"
            ),
            "parity is a column of the scenario's own row"
        );
        assert!(
            html.contains("y: &lt;b&gt;extra&lt;/b&gt;"),
            "observation names are escaped"
        );
    }

    #[test]
    fn verdict_and_failures_come_first_and_the_failing_exchange_is_open() {
        let html = render(&sample(), &SecretRegistry::new());
        let at = |s: &str| html.find(s).unwrap_or_else(|| panic!("no {s}"));
        assert!(html.contains("<div class=\"banner failed\" id=\"verdict\">GATE FAILED"));
        assert!(at("id=\"verdict\"") < at("id=\"failures\""));
        assert!(at("id=\"failures\"") < at("id=\"matrix\""));
        assert!(html.contains("<details class=\"ex failing\" open>"));
        assert!(
            html.contains("<del>201</del>") && html.contains("<ins>500</ins>"),
            "a diff per mismatch"
        );
        assert!(html.contains("<svg class=\"timeline\""), "a timeline");
    }

    #[test]
    fn the_banner_says_passed_failed_or_partial() {
        let mut report = sample();
        assert_eq!(gate_verdict(&report).0, "failed");
        for r in &mut report.results {
            r.verdict = Verdict::Passed;
        }
        report.invocation.catalogue_trials = report.results.len();
        assert_eq!(gate_verdict(&report).1, "GATE PASSED");
        report.invocation.catalogue_trials += 1;
        assert_eq!(gate_verdict(&report).0, "partial");
    }

    #[test]
    fn a_passing_trial_is_shown_in_brief_and_shared_setup_once() {
        let mut report = sample();
        let long = "x".repeat(5000);
        for r in &mut report.results {
            r.verdict = Verdict::Passed;
            let mut setup = r.steps.first().cloned().unwrap_or_default();
            setup.name = "set up fixtures".into();
            for ex in &mut setup.exchanges {
                ex.actor = "setup".into();
            }
            setup.assertions.clear();
            r.steps.insert(0, setup);
            for ex in r.steps.iter_mut().skip(1).flat_map(|s| &mut s.exchanges) {
                ex.response_body = long.clone();
            }
        }
        report.results[0].phases = Some(crate::report::model::Phases {
            fixtures_ms: 5,
            stack_ms: 21,
            scenario_ms: 383,
            waited_ms: 109,
            checks_ms: 4,
            teardown_ms: 6,
        });
        let html = render(&report, &SecretRegistry::new());
        assert!(
            !html.contains(&long),
            "a passing trial's bodies are left to report.json"
        );
        assert!(html.contains(
            " ms (fixtures 5, stack 21, scenario 383 of which waited 109, data check 4, teardown 6); stack start-up"
        ));
        assert!(html.contains(
            "<pre class=\"exlist\">lab-bot: tools/call submit_agent_work_proposal\n</pre>"
        ));
        assert_eq!(
            html.matches("as in <a href=\"#shared-1\">shared setup</a>")
                .count(),
            2,
            "the setup step is shown once and referred to by each trial"
        );
    }
}
