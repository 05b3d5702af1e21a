//! The people of a scenario: each human at a browser of their own (a real
//! one under `--browser chromium`), a second browser, the site admin, and a
//! bot at the login form it must never get past.

use std::sync::Arc;

use super::stack::Ctx;
use crate::actors::human::Human;
use crate::vocab::{Abort, Step};

impl Ctx {
    /// The human with this login, with a browser of their own (the same
    /// browser every time within a scenario).
    pub fn human(&mut self, login: &str) -> Step<Human> {
        if let Some(h) = self.humans.get(login) {
            return Ok(h.clone());
        }
        let human = self.second_browser(login)?;
        self.humans.insert(login.to_owned(), human.clone());
        Ok(human)
    }

    /// `login` signing in with `password`, at a real browser of its own
    /// when the run has one.
    fn seated(&self, login: &str, password: &str) -> Step<Human> {
        let human = Human::new(login, password, &self.base_url, self.journal.clone())?;
        Ok(match &self.browser {
            Some(driver) => human.in_browser(Arc::new(crate::browser::Tab::new(driver.clone()))),
            None => human,
        })
    }

    /// A human with a second, separate browser (another session).
    pub fn second_browser(&self, login: &str) -> Step<Human> {
        let password = self
            .applied
            .passwords
            .get(login)
            .ok_or_else(|| Abort::errored(format!("no human `{login}` in the fixture")))?;
        self.seated(login, password)
    }

    /// The site admin (`CORE_ADMIN_USER`) with a fresh browser of its own,
    /// holding its password to sign in through the login form (spec §4 says
    /// "repo admin" only; whether a site admin is one is the Core's own). The
    /// password is a registered secret and goes only to the Core's login form.
    pub fn site_admin(&self) -> Step<Human> {
        let (login, password) = self.setup.admin_credential();
        self.seated(login, password)
    }

    /// A browser in a bot's hands, holding the bot's own login and fixture
    /// password: to prove that a bot never signs in through the login form
    /// (spec §1, §4). Nothing is signed in until the scenario tries.
    pub fn bot_browser(&self, login: &str) -> Step<Human> {
        let password = self
            .applied
            .bot_passwords
            .get(login)
            .ok_or_else(|| Abort::errored(format!("no bot `{login}` in the fixture")))?;
        self.seated(login, password)
    }
}
