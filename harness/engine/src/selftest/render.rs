//! The self-test's report files, each a pure function of the
//! [`KillMatrix`] and the secret registry, like the run report's writers:
//! `killmatrix.json`, `index.html` (the matrix, survivors first in red) and
//! `junit.xml` (one test case per fault: killed passes, survived fails).

use std::fmt::Write;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::matrix::{Cell, KillMatrix};
use crate::report::html::esc;
use crate::secrets::SecretRegistry;

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}\
.killed{background:#dff5df}.survived{background:#fbdada;font-weight:bold}.errored{background:#fde9c4}\
code{font-size:90%}ul{margin:0;padding-left:1.2em}";

/// `killmatrix.json`: the matrix as pretty JSON, redacted.
pub fn json(matrix: &KillMatrix, secrets: &SecretRegistry) -> String {
    let text = serde_json::to_string_pretty(matrix).expect("the kill matrix always serialises");
    secrets.redact(&text)
}

/// `index.html`: the clean pass, then one row per fault with the trials
/// that killed it; survivors are highlighted.
pub fn html(matrix: &KillMatrix, secrets: &SecretRegistry) -> String {
    let mut h = String::new();
    let survivors = matrix.survivors();
    let c = matrix.clean.counts;
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>grantgate selftest {id}</title>\
         <style>{STYLE}</style></head><body><h1>grantgate selftest {id}</h1>\
         <p>Started {start}, took {secs} s. <strong>Faults caught {killed}/{total} ({surv} survived); \
         honest variants passed {vp}/{vt} (in {vpasses} Core passes).</strong> \
         Clean pass: {p} passed, {f} failed, {e} errored{clean_note}.</p>",
        id = esc(&matrix.run_id),
        start = esc(&matrix.started_at),
        secs = matrix.duration_ms / 1000,
        killed = matrix.faults.len() - survivors.len(),
        total = matrix.faults.len(),
        surv = survivors.len(),
        vp = matrix.variants.len() - matrix.refused_variants().len(),
        vt = matrix.variants.len(),
        vpasses = matrix.variant_passes(),
        p = c.passed,
        f = c.failed,
        e = c.errored,
        clean_note = if matrix.clean_is_green() {
            ""
        } else {
            " — the self-test fails"
        },
    );
    h.push_str("<p>The clean pass is the catalogue on the default build (its full report is <a href=\"../index.html\">one level up</a>). \
                A fault is killed by a trial that failed under it and passed cleanly; an errored trial is never a kill.</p>");
    if !matrix.clean.not_passed.is_empty() {
        h.push_str("<h2>Clean trials that did not pass</h2>");
        cells(&mut h, &matrix.clean.not_passed);
    }
    h.push_str(
        "<h2>Kill matrix</h2><table><tr><th>fault</th><th>program</th><th>what it breaks</th>\
         <th>backends</th><th>trials run</th><th>failed (kills)</th><th>errored / failed cleanly too</th><th>time</th></tr>",
    );
    for f in &matrix.faults {
        let class = if f.killed() { "killed" } else { "survived" };
        let _ = write!(
            h,
            "<tr class=\"{class}\" id=\"{name}\"><td><code>{name}</code><br>{verdict}</td><td>{prog}</td><td>{desc}<br><code>{repro}</code></td>\
             <td>{backends}</td><td>{run}</td><td>",
            name = esc(&f.name),
            verdict = if f.killed() { "killed" } else { "SURVIVED" },
            prog = f.program.name(),
            desc = esc(&f.description),
            repro = esc(&f.reproduce),
            backends = esc(&f.backends.join(", ")),
            run = if f.cut_short() {
                format!(
                    "{} of {} (stopped at its first kill)",
                    f.trials_run, f.trials_selected
                )
            } else {
                f.trials_run.to_string()
            },
        );
        cells(&mut h, &f.killed_by);
        h.push_str("</td><td>");
        cells(&mut h, &f.errored);
        cells(&mut h, &f.failed_without_clean_pass);
        let _ = write!(h, "</td><td>{} s</td></tr>", f.duration_ms / 1000);
    }
    h.push_str("</table>");
    h.push_str(
        "<h2>Honest variants</h2><p>Cores that differ from refcore only where the contract leaves room: \
         the gate must let each through, every trial passing. Compatible variants share one Core; \
         a shared Core that is refused is run again as each of its variants alone.</p>\
         <table><tr><th>variant</th><th>trials run</th><th>trials that refused it</th><th>time</th><th>judged with</th></tr>",
    );
    for v in &matrix.variants {
        let _ = write!(
            h,
            "<tr class=\"{class}\" id=\"variant-{name}\"><td><code>{name}</code><br>{verdict}<br><code>{repro}</code></td><td>{run}</td><td>",
            class = if v.passed() { "killed" } else { "survived" },
            name = esc(&v.name),
            verdict = if v.passed() { "passed" } else { "REFUSED" },
            repro = esc(&v.reproduce),
            run = v.trials_run,
        );
        cells(&mut h, &v.not_passed);
        let with: Vec<&str> = (v.pass.iter())
            .filter(|n| **n != v.name)
            .map(String::as_str)
            .collect();
        let _ = write!(
            h,
            "</td><td>{} s</td><td>{}</td></tr>",
            v.duration_ms / 1000,
            if with.is_empty() {
                "alone".to_owned()
            } else {
                esc(&with.join(", "))
            }
        );
    }
    h.push_str("</table>");
    if !matrix.compositions.is_empty() {
        h.push_str(
            "<h2>Shared Cores that were refused</h2><p>Each refusing trial names the variants \
             that it refused alone too: whose change it read. None: it refused only their \
             combination, which is as honest a Core as each.</p>\
             <table><tr><th>variants together</th><th>trials run</th><th>trials that refused it, and what they read</th><th>time</th></tr>",
        );
        for c in &matrix.compositions {
            let _ = write!(
                h,
                "<tr class=\"survived\"><td><code>{}</code><br>REFUSED<br><code>{}</code></td><td>{}</td><td><ul>",
                esc(&c.variants.join(",")),
                esc(&c.reproduce),
                c.trials_run
            );
            for b in &c.not_passed {
                let _ = write!(
                    h,
                    "<li><code>{}</code>: {} <strong>read: {}</strong></li>",
                    esc(&b.cell.trial),
                    esc(&b.cell.message),
                    esc(&read(&b.read))
                );
            }
            let _ = write!(h, "</ul></td><td>{} s</td></tr>", c.duration_ms / 1000);
        }
        h.push_str("</table>");
    }
    h.push_str("</body></html>\n");
    for tag in ["</h1>", "</h2>", "</p>", "</table>", "</tr>", "</ul>"] {
        h = h.replace(tag, &format!("{tag}\n"));
    }
    secrets.redact(&h)
}

fn cells(h: &mut String, cells: &[Cell]) {
    if cells.is_empty() {
        return;
    }
    h.push_str("<ul>");
    for c in cells {
        let _ = write!(
            h,
            "<li><code>{}</code>: {}</li>",
            esc(&c.trial),
            esc(&c.message)
        );
    }
    h.push_str("</ul>");
}

/// `junit.xml`: a `clean` suite with one case (every clean trial passed),
/// and a `faults` suite with one case per fault: killed passes, survived is
/// a failure.
pub fn junit(matrix: &KillMatrix, secrets: &SecretRegistry) -> String {
    let mut junit = Report::new(format!("grantgate selftest {}", matrix.run_id));
    junit.set_time(Duration::from_millis(matrix.duration_ms));
    let mut clean = TestSuite::new("clean");
    let status = if matrix.clean_is_green() {
        TestCaseStatus::success()
    } else {
        let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
        s.set_message(format!(
            "{} clean trial(s) did not pass",
            matrix.clean.not_passed.len()
        ));
        s
    };
    let mut case = TestCase::new("clean pass", status);
    case.set_classname("grantgate.selftest");
    case.set_time(Duration::from_millis(matrix.clean.duration_ms));
    case.set_system_out(list(&matrix.clean.not_passed));
    clean.add_test_case(case);
    junit.add_test_suite(clean);
    let mut suite = TestSuite::new("faults");
    for f in &matrix.faults {
        let status = if f.killed() {
            TestCaseStatus::success()
        } else {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_message(format!(
                "survived: no trial failed under it ({} ran, {} errored)",
                f.trials_run,
                f.errored.len()
            ));
            s.set_type("surviving fault");
            s
        };
        let mut case = TestCase::new(f.name.clone(), status);
        case.set_classname(format!("grantgate.selftest.{}", f.program.name()));
        case.set_time(Duration::from_millis(f.duration_ms));
        case.set_system_out(format!(
            "{}\nreproduce: {}\n{} of {} trials ran\nkilled by:\n{}",
            f.description,
            f.reproduce,
            f.trials_run,
            f.trials_selected,
            list(&f.killed_by)
        ));
        suite.add_test_case(case);
    }
    junit.add_test_suite(suite);
    let mut honest = TestSuite::new("honest-variants");
    for v in &matrix.variants {
        let status = if v.passed() {
            TestCaseStatus::success()
        } else {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_message(format!(
                "refused an honest Core: {} of {} trials did not pass",
                v.not_passed.len(),
                v.trials_run
            ));
            s.set_type("refused honest variant");
            s
        };
        let mut case = TestCase::new(v.name.clone(), status);
        case.set_classname("grantgate.selftest.variants");
        case.set_time(Duration::from_millis(v.duration_ms));
        case.set_system_out(format!(
            "judged with: {}\nreproduce: {}\nnot passed:\n{}",
            v.pass.join(","),
            v.reproduce,
            list(&v.not_passed)
        ));
        honest.add_test_case(case);
    }
    for c in &matrix.compositions {
        let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
        s.set_message(format!(
            "refused an honest Core of {} variants together: {} of {} trials did not pass",
            c.variants.len(),
            c.not_passed.len(),
            c.trials_run
        ));
        s.set_type("refused honest variants together");
        let mut case = TestCase::new(c.variants.join(","), s);
        case.set_classname("grantgate.selftest.variants");
        case.set_time(Duration::from_millis(c.duration_ms));
        let lines: String = (c.not_passed.iter())
            .map(|b| {
                format!(
                    "{}: {} (read: {})\n",
                    b.cell.trial,
                    b.cell.message,
                    read(&b.read)
                )
            })
            .collect();
        case.set_system_out(format!("reproduce: {}\nnot passed:\n{lines}", c.reproduce));
        honest.add_test_case(case);
    }
    junit.add_test_suite(honest);
    let xml = junit.to_string().expect("junit serialises");
    secrets.redact(&xml)
}

/// The members a refusing trial read, in words.
fn read(members: &[String]) -> String {
    if members.is_empty() {
        "no variant alone, only their combination".to_owned()
    } else {
        members.join(", ")
    }
}

fn list(cells: &[Cell]) -> String {
    cells
        .iter()
        .map(|c| format!("{}: {}\n", c.trial, c.message))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selftest::matrix::tests::example;

    #[test]
    fn survivors_are_highlighted_and_kills_are_listed() {
        let page = html(&example(), &SecretRegistry::new());
        assert!(
            page.contains(
                "Faults caught 1/3 (2 survived); honest variants passed 3/4 (in 4 Core passes)"
            ),
            "{page}"
        );
        assert!(page.contains("<tr class=\"survived\" id=\"variant-pretty-json\">"));
        assert!(
            page.contains(
                "<code>sqlite::b</code>: reads a CSS class <strong>read: pretty-json</strong>"
            ),
            "{page}"
        );
        assert!(
            page.contains("<tr class=\"survived\" id=\"only-errored\">"),
            "{page}"
        );
        assert!(page.contains("<li><code>sqlite::c</code>: expected 1 issue, got 2</li>"));
    }

    #[test]
    fn junit_has_one_case_per_fault_and_survivors_fail() {
        let xml = junit(&example(), &SecretRegistry::new());
        assert!(
            xml.contains("<testsuite name=\"faults\" tests=\"3\""),
            "{xml}"
        );
        assert_eq!(xml.matches("survived: no trial failed").count(), 2, "{xml}");
    }

    #[test]
    fn every_format_is_redacted() {
        let secrets = SecretRegistry::new();
        secrets.register("expected 200, got 201");
        let m = example();
        for text in [json(&m, &secrets), html(&m, &secrets), junit(&m, &secrets)] {
            assert!(!text.contains("expected 200, got 201"));
            assert!(text.contains(crate::secrets::REDACTED));
        }
    }
}
