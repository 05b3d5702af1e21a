//! The terminal display: one line per result, a live progress bar on a TTY,
//! plain lines otherwise. It only consumes runner events.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};

use indicatif::{ProgressBar, ProgressStyle};

use crate::runner::events::{Event, EventSink};
use crate::vocab::Verdict;

/// Builds the event sink that prints progress to stderr (results to stdout).
pub fn sink() -> EventSink {
    let tty = std::io::stderr().is_terminal();
    let bar: Arc<Mutex<Option<ProgressBar>>> = Arc::new(Mutex::new(None));
    Arc::new(move |event| {
        let mut bar = bar.lock().unwrap_or_else(|e| e.into_inner());
        handle(event, tty, &mut bar);
    })
}

fn println_above(bar: &Option<ProgressBar>, line: String) {
    match bar {
        Some(b) => b.println(line),
        None => println!("{line}"),
    }
}

fn handle(event: Event, tty: bool, bar: &mut Option<ProgressBar>) {
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
            let line = match &result.verdict {
                Verdict::Passed => format!("PASS    {} ({} ms)", result.name, result.duration_ms),
                Verdict::Failed { message } => {
                    format!(
                        "FAIL    {} ({} ms): {message}",
                        result.name, result.duration_ms
                    )
                }
                Verdict::Errored { message } => {
                    format!(
                        "ERROR   {} ({} ms): {message}",
                        result.name, result.duration_ms
                    )
                }
                Verdict::NotApplicable { message } => {
                    format!("N/A     {}: {message}", result.name)
                }
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
        Event::RunFinished { counts, duration } => {
            if let Some(b) = bar.take() {
                b.finish_and_clear();
            }
            println!(
                "{} passed, {} failed, {} errored in {:.1} s",
                counts.passed,
                counts.failed,
                counts.errored,
                duration.as_secs_f64()
            );
        }
    }
}
