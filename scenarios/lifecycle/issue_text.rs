//! The texts the family's grants and Issues carry — every character that
//! breaks careless code — and how an Issue's page must show them.

use grantgate_engine::prelude::*;

use crate::support::flows::{LAB, LAB_BOT};

/// Task text with the characters that break careless code: quotes, angle
/// brackets, an ampersand, a tab, non-ASCII, an emoji and a trailing space.
pub(crate) const TASK: &str =
    "Triage the flaky \"lab\" tests <ci> & report each one\tseparately — café 🧪 ";
pub(crate) const SUMMARY: &str = "Open one Issue per flaky test.\nNo code changes.";
pub(crate) const TITLE: &str = "Flaky test: lab::sync_timeout — «intermittent»";
/// The Issue body must survive byte for byte: CRLF and lone CR, HTML that
/// must not be interpreted, trailing spaces, blank lines, non-ASCII.
pub(crate) const BODY: &str = "Observed 3 failures in 20 runs.\r\n\r\nSteps:\r\n  1. run `cargo test`\r\n  2. <b>see</b> &amp; wait\rlone CR \n\n\ttabbed   \nÜnïcødé ✓ 🚀\n";

/// Whether the page reads "via agent work grant #N" for exactly this `N`
/// (not a longer number starting with the same digits).
pub(crate) fn shows_marker(page: &Page, grant_id: i64) -> bool {
    let text = page.text();
    let marker = format!("via agent work grant #{grant_id}");
    text.match_indices(&marker).any(|(at, m)| {
        !text[at + m.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    })
}

/// alice opens the Issue page and reads, as text, lab-bot as the poster, the
/// whole `body` and the grant marker. Returns what was seen, for parity.
pub(crate) async fn expect_issue_page(
    ctx: &Ctx,
    alice: &Human,
    grant: &GrantRef,
    index: i64,
    body: &str,
) -> Step<(bool, bool, bool)> {
    let page = alice.issue_page(LAB, index).await?;
    ctx.expect_status("issue page status", page.status, 200)?;
    let seen = (
        page.shows(LAB_BOT),
        page.shows(body),
        shows_marker(&page, grant.id),
    );
    ctx.expect(
        "the page shows the poster lab-bot",
        seen.0,
        "no `lab-bot` on the page",
    )?;
    ctx.expect(
        "the page shows the whole body",
        seen.1,
        &format!("{} characters of page text", page.text().len()),
    )?;
    ctx.expect(
        "the page shows the grant marker",
        seen.2,
        &format!("no `via agent work grant #{}` on the page", grant.id),
    )?;
    Ok(seen)
}
