//! Humans in headless Chromium (`grantgate run --browser chromium`): one
//! `chromedriver` per run ([`Driver`]), one WebDriver session — its own
//! Chromium process and profile — per human browser ([`Tab`]), driven with
//! `fantoccini`; wiped and reused by a later trial's human once its trial
//! ends. [`CrossSite`] serves the page of another site a browser visits.
//!
//! What the browser does itself: it renders the page (its text is the DOM's
//! `innerText`), keeps cookies as Chromium does (`HttpOnly`, `SameSite`),
//! follows redirects, and submits a form when its submit button is clicked.
//! Status codes and redirects, which WebDriver does not expose, are read from
//! Chromium's own network log (`goog:loggingPrefs`).
//!
//! No browser process outlives a run: chromedriver is a tied child in its
//! own process group (killed with the harness, by teardown or an
//! interrupt), Chromium is started through `setpriv --pdeathsig KILL` so it
//! dies with chromedriver (and only while that chromedriver lives), and
//! every profile lies in a `grantgate-stack-`
//! directory, which the next run's sweep clears with any process still
//! naming it ([`crate::sweep`]).

mod cross_site;
mod driver;
mod scripts;
mod tab;

pub use cross_site::{CrossSite, attr_escape};
pub use driver::{Driver, INSTALL, installed};
pub use tab::{Shown, Tab};

/// Which browser humans use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum BrowserKind {
    /// HTTP-level: reqwest, a cookie jar and an HTML parser.
    #[default]
    Http,
    /// Headless Chromium through chromedriver.
    Chromium,
}
