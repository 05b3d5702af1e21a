//! Hostile Cores for the harness's self-test (`docs/faults.md`, "Hostile
//! Cores").
//!
//! Faults are plausible bugs; a hostile Core is a Core broken *badly*: one
//! that sends a 64 MiB list, JSON nested 100,000 deep, a page of 100,000
//! nested `<div>`s, never prints its listening line, or does not speak HTTP.
//! The gate must end every such run with GATE FAILED, within bounds, with a
//! report and nothing left running. A faults build reads `CORE_HOSTILE`
//! once at start; a default build refuses it. Each mode is either a
//! response layer around the unchanged application ([`wrap`], in `layer`)
//! or a process behaviour that replaces or accompanies the normal start
//! ([`run_instead`], in `process`).

use axum::Router;

use crate::state::AppState;

#[cfg(feature = "faults")]
mod layer;
#[cfg(feature = "faults")]
mod process;

/// The variable that selects a hostile mode.
pub const ENV: &str = "CORE_HOSTILE";

/// The flag that prints the hostile modes and exits.
pub const LIST_FLAG: &str = "--list-hostile";

/// Why `CORE_HOSTILE` stops the start.
#[derive(Debug, thiserror::Error)]
pub enum HostileError {
    /// A default build has no hostile modes.
    #[error(
        "CORE_HOSTILE is set but this refcore was built without the `faults` feature; \
         unset CORE_HOSTILE or use a faults build (docs/faults.md)"
    )]
    NotAFaultsBuild,
    /// The name is not in the list.
    #[error("CORE_HOSTILE={name:?} names no hostile mode; valid names: {valid}")]
    Unknown {
        /// The name given (cut to 60 characters).
        name: String,
        /// Every valid name, comma-separated.
        valid: String,
    },
}

/// Reads `raw` (the value of `CORE_HOSTILE`; empty counts as unset) once.
pub fn init(raw: Option<&str>) -> Result<(), HostileError> {
    let Some(name) = raw.filter(|n| !n.is_empty()) else {
        return Ok(());
    };
    #[cfg(feature = "faults")]
    {
        let mode = catalogue::ALL
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(m, _)| *m)
            .ok_or_else(|| HostileError::Unknown {
                name: name.chars().take(60).collect(),
                valid: catalogue::ALL.map(|(_, n)| n).join(", "),
            })?;
        let _ = catalogue::ACTIVE.set(mode);
        tracing::warn!(
            hostile = name,
            "HOSTILE mode ACTIVE: this Core misbehaves on purpose"
        );
        Ok(())
    }
    #[cfg(not(feature = "faults"))]
    {
        let _ = name;
        Err(HostileError::NotAFaultsBuild)
    }
}

/// What `refcore --list-hostile` prints: one name per line; `None` in a
/// default build.
pub fn listing() -> Option<String> {
    #[cfg(feature = "faults")]
    {
        Some(
            catalogue::ALL
                .iter()
                .map(|(_, n)| format!("{n}\n"))
                .collect(),
        )
    }
    #[cfg(not(feature = "faults"))]
    {
        None
    }
}

/// `router` with the active mode's response layer; unchanged without one.
pub fn wrap(router: Router<AppState>) -> Router<AppState> {
    #[cfg(feature = "faults")]
    if let Some(mode) = catalogue::ACTIVE.get()
        && mode.is_response_layer()
    {
        return router.layer(axum::middleware::from_fn(layer::misbehave));
    }
    router
}

/// Whether the Core must go on running after SIGTERM (`ignores-sigterm`):
/// it catches the signal and does nothing.
pub fn ignores_sigterm() -> bool {
    #[cfg(feature = "faults")]
    {
        catalogue::ACTIVE.get() == Some(&catalogue::Mode::IgnoresSigterm)
    }
    #[cfg(not(feature = "faults"))]
    {
        false
    }
}

/// The process behaviour of the active mode: `Some` when it replaces the
/// normal start (the future runs until the process is stopped), `None` to
/// start normally (a mode may have started something beside it, such as a
/// log flood).
pub fn run_instead(
    config: &mut crate::Config,
) -> Option<std::pin::Pin<Box<dyn Future<Output = ()>>>> {
    #[cfg(feature = "faults")]
    if let Some(mode) = catalogue::ACTIVE.get() {
        return process::run_instead(*mode, config);
    }
    let _ = config;
    None
}

#[cfg(feature = "faults")]
mod catalogue {
    use std::sync::OnceLock;

    /// Every hostile mode; `docs/faults.md` says what each does.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Mode {
        DeepJsonError,
        DeepHtml,
        EveryIssueExists,
        HugeList,
        EndlessList,
        HugeHeaders,
        ManyCookies,
        HugeLink,
        InvalidUtf8Json,
        InvalidUtf8Html,
        HugeCsrf,
        NeverAnswers,
        DripList,
        IgnoresSigterm,
        Status500,
        NoNewline,
        LogFlood,
        NeverListens,
        ExitsAfterListening,
        OtherPort,
        NotHttp,
        Daemonizes,
    }

    impl Mode {
        /// Whether the mode rewrites answers (else it is a process behaviour).
        pub fn is_response_layer(self) -> bool {
            !matches!(
                self,
                Mode::NoNewline
                    | Mode::LogFlood
                    | Mode::IgnoresSigterm
                    | Mode::Daemonizes
                    | Mode::NeverListens
                    | Mode::ExitsAfterListening
                    | Mode::OtherPort
                    | Mode::NotHttp
            )
        }
    }

    /// Every mode with its `CORE_HOSTILE` name.
    pub const ALL: [(Mode, &str); 22] = [
        (Mode::DeepJsonError, "deep-json-error"),
        (Mode::DeepHtml, "deep-html"),
        (Mode::EveryIssueExists, "every-issue-exists"),
        (Mode::HugeList, "huge-list"),
        (Mode::EndlessList, "endless-list"),
        (Mode::HugeHeaders, "huge-headers"),
        (Mode::ManyCookies, "many-cookies"),
        (Mode::HugeLink, "huge-link"),
        (Mode::InvalidUtf8Json, "invalid-utf8-json"),
        (Mode::InvalidUtf8Html, "invalid-utf8-html"),
        (Mode::HugeCsrf, "huge-csrf"),
        (Mode::NeverAnswers, "never-answers"),
        (Mode::DripList, "drip-list"),
        (Mode::IgnoresSigterm, "ignores-sigterm"),
        (Mode::Status500, "500-everywhere"),
        (Mode::NoNewline, "no-newline"),
        (Mode::LogFlood, "log-flood"),
        (Mode::NeverListens, "never-listens"),
        (Mode::ExitsAfterListening, "exits-after-listening"),
        (Mode::OtherPort, "other-port"),
        (Mode::NotHttp, "not-http"),
        (Mode::Daemonizes, "daemonizes"),
    ];

    pub static ACTIVE: OnceLock<Mode> = OnceLock::new();
}

#[cfg(feature = "faults")]
pub(crate) use catalogue::{ACTIVE, Mode};
