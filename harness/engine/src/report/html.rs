//! `index.html`: a self-contained page an auditor can read offline. No
//! scripts, no external resources: the scenario × backend matrix, then every
//! result with its claim, steps, assertions, transcripts and logs, the details
//! folded with `<details>`.

use std::fmt::Write;

use super::model::{Comparison, Exchange, RunReport, ScenarioResult};
use crate::secrets::SecretRegistry;
use crate::vocab::Verdict;

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}\
.passed{background:#dff5df}.failed{background:#fbdada}.errored{background:#fde9c4}\
pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap;word-break:break-all;max-height:40em;overflow:auto}\
details{margin:.3em 0}summary{cursor:pointer}h2{border-top:2px solid #ddd;padding-top:.6em}.ok{color:#176317}.bad{color:#a00}";

/// Renders the report as one HTML page, redacted.
pub fn render(report: &RunReport, secrets: &SecretRegistry) -> String {
    let mut h = String::new();
    let c = report.counts();
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>grantgate run {id}</title><style>{STYLE}</style></head><body>\
         <h1>grantgate run {id}</h1><p>Started {start}, took {dur} ms. \
         <strong>{p} passed, {f} failed, {e} errored.</strong></p>",
        id = esc(&report.run_id),
        start = esc(&report.started_at),
        dur = report.duration_ms,
        p = c.passed,
        f = c.failed,
        e = c.errored
    );
    environment(&mut h, report);
    matrix(&mut h, report);
    // Results are grouped as the catalogue groups them: by family, families
    // in the order they first occur (the catalogue's), parity last.
    for family in families(report) {
        let _ = write!(h, "<h2>{}</h2>", esc(family));
        for r in report.results.iter().filter(|r| r.family == family) {
            result(&mut h, r);
        }
    }
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
    ] {
        h = h.replace(tag, &format!("{tag}\n"));
    }
    secrets.redact(&h)
}

fn environment(h: &mut String, report: &RunReport) {
    let env = &report.environment;
    h.push_str("<h2>Environment</h2><table>");
    for (k, v) in [
        ("harness version", &env.harness_version),
        ("git revision", &env.git_revision),
        ("core binary", &env.core_binary),
        ("adapter binary", &env.adapter_binary),
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

/// The families of the results, in the order they first occur.
fn families(report: &RunReport) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for r in &report.results {
        if !out.contains(&r.family.as_str()) {
            out.push(&r.family);
        }
    }
    out
}

fn matrix(h: &mut String, report: &RunReport) {
    let mut backends: Vec<&str> = Vec::new();
    for r in &report.results {
        if !backends.contains(&r.backend.as_str()) {
            backends.push(&r.backend);
        }
    }
    h.push_str("<h2>Matrix</h2><table><tr><th>scenario</th><th>claim</th>");
    for b in &backends {
        let _ = write!(h, "<th>{}</th>", esc(b));
    }
    h.push_str("</tr>");
    // Parity is a column of every scenario's own row, not a group of its
    // own: family 11 compares the other families' scenarios.
    let parity = crate::runner::parity::PARITY;
    for family in families(report) {
        if report
            .results
            .iter()
            .filter(|r| r.family == family)
            .all(|r| r.backend == parity)
        {
            continue;
        }
        let _ = write!(
            h,
            "<tr><th colspan=\"{}\">{}</th></tr>",
            backends.len() + 2,
            esc(family)
        );
        let mut scenarios: Vec<(&str, &str)> = Vec::new();
        for r in report.results.iter().filter(|r| r.family == family) {
            if !scenarios.iter().any(|(id, _)| *id == r.scenario) {
                scenarios.push((&r.scenario, &r.claim));
            }
        }
        matrix_rows(h, report, &backends, &scenarios);
    }
    h.push_str("</table>");
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
                        "<td class=\"{l}\"><a href=\"#{a}\">{l}</a></td>",
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

fn result(h: &mut String, r: &ScenarioResult) {
    let label = r.verdict.label();
    let _ = write!(
        h,
        "<h3 id=\"{a}\" class=\"{label}\">{name} — {label}</h3><p><em>{claim}</em></p>\
         <p>family {fam}; {dur} ms; stack start-up {st}; core {cv}; database {dv}</p>",
        a = anchor(&r.name),
        name = esc(&r.name),
        claim = esc(&r.claim),
        fam = esc(&r.family),
        dur = r.duration_ms,
        st = r
            .stack_startup_ms
            .map(|s| format!("{s} ms"))
            .unwrap_or_else(|| "—".into()),
        cv = esc(r.core_version.as_deref().unwrap_or("—")),
        dv = esc(r.database_version.as_deref().unwrap_or("—")),
    );
    if let Verdict::Failed { message } | Verdict::Errored { message } = &r.verdict {
        let _ = write!(h, "<pre class=\"{label}\">{}</pre>", esc(message));
    }
    let _ = write!(
        h,
        "<p>reproduce: <code>{}</code></p>",
        esc(&r.reproduce_command())
    );
    if let Some(c) = &r.comparison {
        comparison(h, c);
    }
    h.push_str("<ol>");
    for step in &r.steps {
        let _ = write!(h, "<li><strong>{}</strong>", esc(&step.name));
        if !step.assertions.is_empty() {
            h.push_str("<table><tr><th></th><th>check</th><th>expected</th><th>actual</th></tr>");
            for a in &step.assertions {
                let _ = write!(
                    h,
                    "<tr><td class=\"{c}\">{m}</td><td>{w}</td><td><code>{e}</code></td><td><code>{ac}</code></td></tr>",
                    c = if a.passed { "ok" } else { "bad" },
                    m = if a.passed { "✔" } else { "✘" },
                    w = esc(&a.what),
                    e = esc(&a.expected),
                    ac = esc(&a.actual)
                );
            }
            h.push_str("</table>");
        }
        for ex in &step.exchanges {
            exchange(h, ex);
        }
        h.push_str("</li>");
    }
    h.push_str("</ol>");
    let _ = write!(
        h,
        "<details><summary>Core log</summary><pre>{}</pre></details>",
        esc(&r.core_log)
    );
    for log in &r.adapter_logs {
        let _ = write!(
            h,
            "<details><summary>{}</summary><pre>{}</pre></details>",
            esc(&log.name),
            esc(&log.text)
        );
    }
}

/// A parity result's table: observation → value per backend → agree?
fn comparison(h: &mut String, c: &Comparison) {
    h.push_str("<table class=\"comparison\"><tr><th>observation</th>");
    for b in &c.backends {
        let _ = write!(h, "<th>{}</th>", esc(b));
    }
    h.push_str("<th>agree?</th></tr>");
    for row in &c.rows {
        let _ = write!(h, "<tr><td>{}</td>", esc(&row.observation));
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
            "<td class=\"{c}\">{m}</td></tr>",
            c = if row.agree { "ok" } else { "bad" },
            m = if row.agree { "✔ agree" } else { "✘ differ" }
        );
    }
    h.push_str("</table>");
}

fn exchange(h: &mut String, ex: &Exchange) {
    let status = if ex.kind == "http" {
        ex.status.to_string()
    } else {
        String::new()
    };
    let _ = write!(
        h,
        "<details><summary>{actor}: {method} {target} {status} ({ms} ms)</summary>",
        actor = esc(&ex.actor),
        method = esc(&ex.method),
        target = esc(&ex.target),
        ms = ex.elapsed_ms
    );
    let headers = |hs: &[(String, String)]| {
        hs.iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let _ = write!(
        h,
        "<p>request</p><pre>{}\n\n{}</pre><p>response</p><pre>{}\n\n{}</pre></details>",
        esc(&headers(&ex.request_headers)),
        esc(&ex.request_body),
        esc(&headers(&ex.response_headers)),
        esc(&ex.response_body)
    );
}

fn anchor(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
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
            html.contains("<h2>lifecycle</h2>") && html.contains("<h2>11 backend parity</h2>"),
            "results are grouped by family"
        );
        assert!(
            html.contains("<th>observation</th><th>sqlite</th><th>postgres</th><th>agree?</th>"),
            "the parity comparison is a table per backend"
        );
        assert!(html.contains("<td class=\"bad\">✘ differ</td>"));
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
}
