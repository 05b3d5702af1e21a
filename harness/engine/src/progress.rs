//! The terminal display: one line per result on stdout (so `grantgate run >
//! log` keeps them), a live progress bar on stderr when that is a TTY, and at
//! the end a summary of every trial that did not pass with the command that
//! reproduces it, then the gate's verdict. Colour follows `--color` and
//! `NO_COLOR`. Under GitHub Actions each failure is also an annotation and
//! the summary goes to the job's step summary.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};

use indicatif::{ProgressBar, ProgressStyle};

use crate::report::gate::Gate;
use crate::report::model::RunReport;
use crate::runner::events::{Event, EventSink};
use crate::vocab::Verdict;

/// When to colour: `--color auto|always|never`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// When stdout is a terminal and `NO_COLOR` is not set.
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl ColorChoice {
    /// Whether to colour stdout now.
    pub fn enabled(self) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stdout().is_terminal()
            }
        }
    }
}

/// `text` in an ANSI colour when `on`.
fn paint(text: &str, code: u8, on: bool) -> String {
    if on {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

/// The verdict's tag, padded and coloured.
fn tag(verdict: &Verdict, color: bool) -> String {
    let (text, code) = match verdict {
        Verdict::Passed => ("PASS   ", 32),
        Verdict::Failed { .. } => ("FAIL   ", 31),
        Verdict::Errored { .. } => ("ERROR  ", 33),
        Verdict::NotApplicable { .. } => ("N/A    ", 36),
        Verdict::NotRun { .. } => ("NOT RUN", 36),
    };
    paint(text, code, color)
}

/// Builds the event sink that prints results to stdout and a progress bar
/// to stderr (only when stderr is a terminal).
pub fn sink(color: bool) -> EventSink {
    let tty = std::io::stderr().is_terminal();
    let bar: Arc<Mutex<Option<ProgressBar>>> = Arc::new(Mutex::new(None));
    Arc::new(move |event| {
        let mut bar = bar.lock().unwrap_or_else(|e| e.into_inner());
        handle(event, tty, color, &mut bar);
    })
}

/// Prints a line on stdout without tearing the progress bar.
fn println_above(bar: &Option<ProgressBar>, line: String) {
    match bar {
        Some(b) => b.suspend(|| println!("{line}")),
        None => println!("{line}"),
    }
}

fn handle(event: Event, tty: bool, color: bool, bar: &mut Option<ProgressBar>) {
    match event {
        Event::RunStarted {
            run_id,
            total,
            jobs,
        } => {
            println!("grantgate run {run_id}: {total} trial(s), {jobs} at a time");
            if tty {
                let b = ProgressBar::new(total as u64);
                b.set_style(
                    ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
                *bar = Some(b);
            }
        }
        Event::TrialStarted { name } => {
            if let Some(b) = bar {
                b.set_message(name);
            }
        }
        Event::StackReady { name, startup } => {
            if let Some(b) = bar {
                b.set_message(format!("{name} (stack up in {} ms)", startup.as_millis()));
            }
        }
        Event::TrialFinished { result } => {
            let tag = tag(&result.verdict, color);
            let line = match result.verdict.message() {
                None => format!("{tag} {} ({} ms)", result.name, result.duration_ms),
                Some(message) => format!(
                    "{tag} {} ({} ms): {message}",
                    result.name, result.duration_ms
                ),
            };
            println_above(bar, line);
            if let Some(b) = bar {
                b.inc(1);
            }
        }
        Event::StackKept { name, how } => println_above(bar, format!("KEPT    {name}: {how}")),
        Event::Interrupted => {
            println_above(bar, "interrupted: tearing down stacks".to_owned());
        }
        Event::RunStopped { why } => println_above(bar, format!("STOPPED {why}")),
        Event::RunFinished { counts, duration } => {
            if let Some(b) = bar.take() {
                b.finish_and_clear();
            }
            let mut na = match counts.not_applicable {
                0 => String::new(),
                n => format!(", {n} not applicable"),
            };
            if counts.not_run > 0 {
                na.push_str(&format!(", {} not run", counts.not_run));
            }
            let waived = match counts.waived {
                0 => String::new(),
                n => format!(" ({n} known, waived)"),
            };
            println!(
                "{} passed, {} failed{waived}, {} errored{na} in {:.1} s",
                counts.passed,
                counts.failed + counts.waived,
                counts.errored,
                duration.as_secs_f64()
            );
            match crate::actors::mcp_schema::validated() {
                0 => {}
                n => println!("{n} MCP messages between bots and awg-mcp held to MCP's schema"),
            }
        }
    }
}

/// The end of a run on the terminal: every trial that did not pass, with
/// its reason, the command that reproduces it and its place in the report,
/// then the gate's banner.
pub fn summary(report: &RunReport, color: bool) -> String {
    let mut out = String::new();
    let not_passed: Vec<_> = report
        .results
        .iter()
        .filter(|r| r.verdict != Verdict::Passed && report.waiver(&r.name).is_none())
        // The trials a stopped run did not start are counted in its reason.
        .filter(|r| {
            !r.verdict
                .message()
                .is_some_and(|m| m.starts_with(crate::runner::run::NOT_STARTED))
        })
        .collect();
    if !not_passed.is_empty() {
        out.push_str(&format!("\n{} trial(s) did not pass:\n", not_passed.len()));
        for r in not_passed {
            out.push_str(&format!(
                "  {} {}\n      {}\n      reproduce: {}\n      report: {}/index.html#{}\n",
                tag(&r.verdict, color),
                r.name,
                r.verdict.message().unwrap_or_default(),
                report.reproduce(r),
                report.run_id,
                crate::report::html::anchor(&r.name)
            ));
        }
    }
    out.push_str(&known_failures(report, color));
    if let Some(why) = &report.stopped {
        out.push_str(&format!("\n{why}\n"));
    }
    let gate = report.gate();
    let code = match gate {
        Gate::Passed => 32,
        Gate::Failed => 31,
        Gate::Partial { .. } | Gate::Waived { .. } => 33,
    };
    out.push_str(&paint(&gate.banner(), code, color));
    out.push('\n');
    out
}

/// The baseline's part of the summary (`--expected-failures`), apart from
/// the trials that did not pass: each waived failure with its step and
/// reason, then each stale or expired entry (they fail the gate).
fn known_failures(report: &RunReport, color: bool) -> String {
    let Some(b) = &report.baseline else {
        return String::new();
    };
    let mut out = String::new();
    if !b.waived.is_empty() {
        out.push_str(&format!(
            "\n{} known failure(s) waived by {}:\n",
            b.waived.len(),
            b.file
        ));
        for w in &b.waived {
            let step = w
                .check
                .as_deref()
                .map(|s| format!(" (step `{s}`)"))
                .unwrap_or_default();
            out.push_str(&format!(
                "  {} {}{step}\n      reason: {}\n",
                paint("WAIVED ", 33, color),
                w.trial,
                w.reason
            ));
        }
    }
    let problems = report.baseline_problems();
    if !problems.is_empty() {
        out.push_str(&format!(
            "\n{} entry(ies) of {} fail the gate:\n",
            problems.len(),
            b.file
        ));
        for why in problems {
            out.push_str(&format!("  {} {why}\n", paint("BASELINE", 31, color)));
        }
    }
    out
}

/// Under GitHub Actions (`GITHUB_ACTIONS=true`): one `::error` annotation
/// per trial that failed or errored, and the verdict with a table of those
/// trials appended to `$GITHUB_STEP_SUMMARY`.
pub fn github(report: &RunReport) {
    if std::env::var("GITHUB_ACTIONS").as_deref() != Ok("true") {
        return;
    }
    let escape = |s: &str| {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    };
    let mut table = String::new();
    for r in &report.results {
        if let Verdict::Failed { message } | Verdict::Errored { message } = &r.verdict {
            if report.waiver(&r.name).is_some() {
                continue;
            }
            println!(
                "::error title=grantgate {}::{}%0Areproduce: {}",
                escape(&r.name),
                escape(message),
                escape(&report.reproduce(r))
            );
            table.push_str(&format!(
                "| `{}` | {} | {} |\n",
                r.name,
                r.verdict.label(),
                message.replace('|', "\\|").replace('\n', " ")
            ));
        }
    }
    if let Ok(path) = std::env::var("GITHUB_STEP_SUMMARY") {
        let c = report.counts();
        for why in report.baseline_problems() {
            println!("::error title=grantgate baseline::{}", escape(why));
        }
        let mut md = format!(
            "## grantgate: {}\n\n{} passed, {} failed, {} waived, {} errored, {} not applicable, {} not run\n\n",
            report.gate().banner(),
            c.passed,
            c.failed,
            c.waived,
            c.errored,
            c.not_applicable,
            c.not_run
        );
        if !table.is_empty() {
            md.push_str("| trial | verdict | why |\n|---|---|---|\n");
            md.push_str(&table);
        }
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
        {
            let _ = f.write_all(md.as_bytes());
        }
    }
}
