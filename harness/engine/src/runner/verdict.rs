//! A trial's verdict, decided once: the trial's phases only report what they
//! found ([`Facts`]), and [`decide`] turns that into passed, failed, errored
//! or not applicable. Failed is the Core's fault, errored the harness's or
//! the environment's; the table below is where that line is drawn.

use std::time::Duration;

use crate::vocab::{Abort, Verdict};

/// The verdict's message of a trial ended by SIGINT or SIGTERM.
pub const INTERRUPTED: &str = "interrupted (SIGINT or SIGTERM) before it ended";

/// How a trial's scenario ended, or why it never ran.
#[derive(Debug)]
pub enum Ending {
    /// The stack did not start; `contract` when that broke the launch
    /// contract (a Core not up within the deadline, say), not the harness.
    NoStack { contract: bool, error: String },
    /// SIGINT or SIGTERM ended it.
    Interrupted,
    /// `--trial-timeout` passed in `step`; `last` names the last request
    /// the Core answered.
    Deadline {
        timeout: Duration,
        step: String,
        last: String,
    },
    /// The Core process exited in `step`: why, with its last output.
    CoreExited { step: String, report: String },
    /// The scenario panicked in `step`.
    Panicked { step: String, message: String },
    /// The scenario's task ended otherwise.
    Abnormal(String),
    /// The Core lacks what the scenario needs: which, and how to declare it.
    NotApplicable(String),
    /// The scenario ran to its end.
    Passed,
    /// The scenario stopped at its first broken expectation, in `step`.
    Aborted { step: String, abort: Abort },
}

/// What a trial's phases found, in the order they found it.
#[derive(Debug)]
pub struct Facts {
    /// How the scenario ended.
    pub ending: Ending,
    /// The check of the database the Core was handed, when it broke (it runs
    /// only while the trial passes).
    pub data: Option<Abort>,
    /// The SIGTERM grace the Core outlived (once per run, see `trial`).
    pub sigterm: Option<Duration>,
    /// A secret the registry refused, in words: the trial fails with it,
    /// and its records are left out of the report.
    pub refused: Option<String>,
}

impl Facts {
    /// What is known once the scenario ended.
    pub fn ended(ending: Ending) -> Facts {
        Facts {
            ending,
            data: None,
            sigterm: None,
            refused: None,
        }
    }

    /// Whether the trial passes so far: what the database check and
    /// `--keep` ask before the rest is known.
    pub fn passing(&self) -> bool {
        matches!(self.ending, Ending::Passed) && self.data.is_none() && self.sigterm.is_none()
    }
}

/// The trial's verdict. Every message is passed through `redact` but a
/// refused secret's, which names no value.
pub fn decide(facts: Facts, redact: impl Fn(&str) -> String) -> Verdict {
    if let Some(refused) = facts.refused {
        return Verdict::Failed {
            message: format!(
                "{refused}; this trial's transcript, logs and observations are left out of \
                 the report, which must hold no secret the harness could not redact"
            ),
        };
    }
    let mut verdict = ended(facts.ending);
    if verdict == Verdict::Passed
        && let Some(abort) = facts.data
    {
        verdict = abort.into_verdict();
    }
    if let Some(grace) = facts.sigterm {
        verdict = and_sigterm_ignored(verdict, grace);
    }
    match verdict {
        Verdict::Failed { message } => Verdict::Failed {
            message: redact(&message),
        },
        Verdict::Errored { message } => Verdict::Errored {
            message: redact(&message),
        },
        v @ (Verdict::Passed | Verdict::NotApplicable { .. } | Verdict::NotRun { .. }) => v,
    }
}

/// The verdict of the scenario's end alone.
fn ended(ending: Ending) -> Verdict {
    match ending {
        Ending::NoStack { contract, error } => {
            let message = format!("stack did not start: {error}");
            match contract {
                true => Verdict::Failed { message },
                false => Verdict::Errored { message },
            }
        }
        Ending::Interrupted => Verdict::Errored {
            message: INTERRUPTED.into(),
        },
        Ending::Deadline {
            timeout,
            step,
            last,
        } => Verdict::Failed {
            message: format!(
                "the trial deadline ({} s, --trial-timeout) passed in step `{step}`; {last}",
                timeout.as_secs()
            ),
        },
        Ending::CoreExited { step, report } => Verdict::Failed {
            message: format!("step `{step}`: the {report}"),
        },
        Ending::Panicked { step, message } => Verdict::Errored {
            message: format!("scenario panicked in step `{step}`: {message}"),
        },
        Ending::Abnormal(why) => Verdict::Errored {
            message: format!("scenario task ended abnormally: {why}"),
        },
        Ending::NotApplicable(message) => Verdict::NotApplicable { message },
        Ending::Passed => Verdict::Passed,
        Ending::Aborted { step, abort } => match abort {
            Abort::Failed(message) => Verdict::Failed {
                message: format!("step `{step}`: {message}"),
            },
            Abort::Errored(message) => Verdict::Errored {
                message: format!("step `{step}`: {message}"),
            },
        },
    }
}

/// `verdict`, and a Core that outlived its SIGTERM grace (spec §5: a Core
/// stops cleanly on SIGTERM): a contract failure of its own, added to any
/// other.
fn and_sigterm_ignored(verdict: Verdict, grace: Duration) -> Verdict {
    let broken = format!(
        "the Core did not stop within {} s of SIGTERM and was killed (spec §5: a Core \
         stops cleanly on SIGTERM); later stacks of this run are killed at once",
        grace.as_secs()
    );
    match verdict {
        Verdict::Failed { message } => Verdict::Failed {
            message: format!("{message}; and {broken}"),
        },
        Verdict::Errored { message } => Verdict::Errored {
            message: format!("{message}; and {broken}"),
        },
        _ => Verdict::Failed { message: broken },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(facts: Facts) -> Verdict {
        decide(facts, str::to_owned)
    }

    fn failed(message: &str) -> Verdict {
        Verdict::Failed {
            message: message.into(),
        }
    }

    fn errored(message: &str) -> Verdict {
        Verdict::Errored {
            message: message.into(),
        }
    }

    fn step(s: &str) -> String {
        s.to_owned()
    }

    #[test]
    fn each_ending_of_the_scenario_has_its_verdict() {
        let table = [
            (Ending::Passed, Verdict::Passed),
            (
                Ending::Aborted {
                    step: step("submit"),
                    abort: Abort::Failed("want 409, got 200".into()),
                },
                failed("step `submit`: want 409, got 200"),
            ),
            (
                Ending::Aborted {
                    step: step("start the adapter"),
                    abort: Abort::Errored("no such file".into()),
                },
                errored("step `start the adapter`: no such file"),
            ),
            (
                Ending::NotApplicable("needs x-ext".into()),
                Verdict::NotApplicable {
                    message: "needs x-ext".into(),
                },
            ),
            (
                Ending::NoStack {
                    contract: true,
                    error: "not up".into(),
                },
                failed("stack did not start: not up"),
            ),
            (
                Ending::NoStack {
                    contract: false,
                    error: "no port".into(),
                },
                errored("stack did not start: no port"),
            ),
            (Ending::Interrupted, errored(INTERRUPTED)),
            (
                Ending::Deadline {
                    timeout: Duration::from_secs(90),
                    step: step("wait"),
                    last: "no request was answered".into(),
                },
                failed(
                    "the trial deadline (90 s, --trial-timeout) passed in step `wait`; \
                     no request was answered",
                ),
            ),
            (
                Ending::CoreExited {
                    step: step("login"),
                    report: "Core exited (signal 9)".into(),
                },
                failed("step `login`: the Core exited (signal 9)"),
            ),
            (
                Ending::Panicked {
                    step: step("login"),
                    message: "boom".into(),
                },
                errored("scenario panicked in step `login`: boom"),
            ),
            (
                Ending::Abnormal("cancelled".into()),
                errored("scenario task ended abnormally: cancelled"),
            ),
        ];
        for (ending, want) in table {
            let seen = format!("{ending:?}");
            assert_eq!(plain(Facts::ended(ending)), want, "{seen}");
        }
    }

    #[test]
    fn the_database_check_decides_only_a_passing_scenario() {
        let data = || Some(Abort::Failed("no rows".into()));
        let passed = Facts {
            data: data(),
            ..Facts::ended(Ending::Passed)
        };
        assert!(!passed.passing());
        assert_eq!(plain(passed), failed("no rows"));
        let not_applicable = Facts {
            data: data(),
            ..Facts::ended(Ending::NotApplicable("x".into()))
        };
        assert!(matches!(
            plain(not_applicable),
            Verdict::NotApplicable { .. }
        ));
    }

    #[test]
    fn a_core_ignoring_sigterm_fails_a_passing_trial_and_adds_to_a_broken_one() {
        let grace = Some(Duration::from_secs(5));
        let passed = plain(Facts {
            sigterm: grace,
            ..Facts::ended(Ending::Passed)
        });
        let Verdict::Failed { message } = passed else {
            panic!("{passed:?}")
        };
        assert!(
            message.starts_with("the Core did not stop within 5 s"),
            "{message}"
        );
        let errored = plain(Facts {
            sigterm: grace,
            ..Facts::ended(Ending::Interrupted)
        });
        let Verdict::Errored { message } = errored else {
            panic!("{errored:?}")
        };
        assert!(
            message.starts_with(&format!("{INTERRUPTED}; and the Core")),
            "{message}"
        );
        let not_applicable = plain(Facts {
            sigterm: grace,
            ..Facts::ended(Ending::NotApplicable("x".into()))
        });
        assert!(matches!(not_applicable, Verdict::Failed { .. }));
    }

    #[test]
    fn a_refused_secret_fails_the_trial_whatever_else_happened_and_messages_are_redacted() {
        let redact = |s: &str| s.replace("s3cret", "[redacted]");
        let leaked = Facts::ended(Ending::Aborted {
            step: step("read"),
            abort: Abort::Failed("saw s3cret".into()),
        });
        assert_eq!(
            decide(leaked, redact),
            failed("step `read`: saw [redacted]")
        );
        let refused = Facts {
            refused: Some("a secret over the limit".into()),
            ..Facts::ended(Ending::Passed)
        };
        let Verdict::Failed { message } = decide(refused, redact) else {
            panic!("not failed")
        };
        assert!(message.starts_with("a secret over the limit; this trial's transcript"));
    }
}
