//! A human's forms and pages, read as spec §4 writes them: the new-grant
//! form, a refused or accepted POST, the decision forms a grant page
//! offers, a form's `_csrf`, a page that asks to sign in, and forms written
//! by hand from the field names.

use grantgate_engine::prelude::*;

use crate::support::flows::{LAB, LAB_BOT};
use crate::support::witnesses::expect_grant;

/// The new-grant form of alice/lab, filled for lab-bot.
pub(crate) async fn prepare_form(human: &Human, task: &str) -> Step<Form> {
    human.prepare_form(LAB, LAB_BOT, task, "summary").await
}

/// Checks a refused POST: the final answer is `status` with no redirect.
pub(crate) fn expect_refused(ctx: &Ctx, what: &str, page: &Page, status: u16) -> Step<()> {
    ctx.expect_eq(
        &format!("{what}: refused with {status}, no redirect"),
        (page.status, page.redirects.len()),
        (status, 0),
    )
}

/// Checks a preparation that worked: 303 to the new grant's page (spec §4),
/// which opens.
pub(crate) fn expect_lands_on_grant(
    ctx: &Ctx,
    what: &str,
    page: &Page,
    grant: &GrantRef,
) -> Step<()> {
    ctx.expect_eq(
        &format!("{what}: 303 to the grant's page, which opens"),
        (
            page.first_redirect()
                .map(|(status, to)| (status, to.path().to_owned())),
            page.status,
        ),
        (Some((303, core_api::grant_page(grant))), 200),
    )
}

/// Whether `page` asks to sign in (holds the login form): what a Core shows
/// a signed-out browser is its own (a redirect, or the login form in place
/// with any status), so a page asking to sign in is never the page asked
/// for.
pub(crate) fn asks_sign_in(page: &Page) -> bool {
    page.form_with_field(fields::USER_NAME).is_ok()
}

/// Whether a form POST whose answer spec §4 leaves to the Core (approve,
/// withdraw, logout) was accepted: a 302 or 303 redirect, or no redirect,
/// ending on a 200 page. Where it leads is the Core's own; what it did is
/// read from the API.
pub(crate) fn accepted(page: &Page) -> bool {
    matches!(page.first_redirect(), None | Some((302 | 303, _))) && page.status == 200
}

/// Checks that such a form POST was accepted (see [`accepted`]).
pub(crate) fn expect_accepted(ctx: &Ctx, what: &str, page: &Page) -> Step<()> {
    ctx.expect(
        &format!("{what}: accepted (a 302 or 303 redirect, or 200 with the resulting page)"),
        accepted(page),
        &page.arrival(),
    )
}

/// alice prepares a grant and lab-bot confirms it: `awaiting_human`, rev 2.
pub(crate) async fn awaiting_human(ctx: &mut Ctx, alice: &Human, task: &str) -> Step<GrantRef> {
    ctx.step("alice prepares a grant for lab-bot, which confirms it");
    let (grant, _) = alice.prepare_grant(LAB, LAB_BOT, task, "summary").await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let proposal = bot.read_proposal(&grant).await?;
    let confirmed = bot.confirm(&grant, &proposal).await?;
    ctx.expect_tool_ok("lab-bot confirms", &confirmed)?;
    expect_grant(ctx, "after confirming", &grant, state::AWAITING_HUMAN, 2).await?;
    Ok(grant)
}

/// The `_csrf` a form carries; a form without one breaks spec §4.
pub(crate) fn csrf_of(form: &Form) -> Step<String> {
    form.field(fields::CSRF)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| Abort::failed(format!("the form posting to {} has no _csrf", form.action)))
}

/// Whether `page` holds the grant's approve or withdraw form, found by action.
pub(crate) fn offers(
    human: &Human,
    page: &Page,
    grant: &GrantRef,
    decision: Decision,
) -> Step<bool> {
    let action = human.url(&core_api::decision(grant, decision))?;
    Ok(page.has_form_to(action.path()))
}

/// Whether `human` is signed in: the new-grant page of `repo`, a
/// repository it administers, holds the new-grant form.
pub(crate) async fn signed_in(human: &Human, repo: &str) -> Step<bool> {
    let page = human.open(&core_api::new_grant_page(repo)).await?;
    Ok(page.form_with_field(fields::TASK).is_ok())
}

/// How a page or form answered, without anything backend-specific (no ids,
/// no paths): its redirects' statuses and the final status.
pub(crate) fn seen(page: &Page) -> String {
    let hops: String = page
        .redirects
        .iter()
        .map(|(s, _)| format!("{s} → "))
        .collect();
    format!(
        "{hops}{}{}",
        page.status,
        if asks_sign_in(page) {
            " (asks to sign in)"
        } else {
            ""
        }
    )
}

/// A POST the scenario writes from the field names of spec §4: `_csrf`
/// first, then `rest`.
pub(crate) fn hand_form(
    human: &Human,
    path: &str,
    csrf: &str,
    rest: &[(&str, String)],
) -> Step<Form> {
    let mut fields = vec![(fields::CSRF.to_owned(), csrf.to_owned())];
    fields.extend(rest.iter().map(|(n, v)| ((*n).to_owned(), v.clone())));
    Ok(Form::new("POST", human.url(path)?, fields))
}

/// Whether `page` is the page at `path` itself, opened without a redirect
/// and not asking to sign in.
pub(crate) fn opened(page: &Page, path: &str) -> bool {
    page.status == 200
        && page.redirects.is_empty()
        && page.url.path() == path
        && !asks_sign_in(page)
}
