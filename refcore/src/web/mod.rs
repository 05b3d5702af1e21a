//! The browser surface of spec §4: server-rendered HTML that works without
//! JavaScript. Humans sign in with a session cookie; every state-changing
//! form carries a `_csrf` token bound to that session.
//!
//! - [`html`]: escaping and the page layout.
//! - [`session`]: the session cookie and who is signed in.
//! - [`csrf`]: signed, expiring, session-bound form tokens.
//! - [`login`]: sign in, sign out and the home page.
//! - [`grants`]: list, prepare, show, approve and withdraw.
//! - [`issues`]: the Issue page with its poster and grant attribution.
//! - [`oauth`]: the authorize page and the consent form (spec §9).
//! - [`edges`]: the points of those rules a faults build may bend.

pub mod csrf;
pub(crate) mod edges;
pub mod grants;
pub mod html;
pub mod issues;
pub mod login;
pub mod oauth;
pub mod session;
