//! Flows many scenarios start from, in domain words. A scenario whose subject
//! is what happens *after* a grant is active starts here; the full lifecycle
//! scenario spells every one of these steps out with its own assertions.

use crate::actors::{Bot, GrantRef, Human, Proposal};
use crate::ctx::Ctx;
use crate::runner::outcome::{Abort, Step};

/// `human` (already logged in) prepares a grant on `repo` for `bot`, the bot
/// confirms it with the exact triple, and the human approves it. Returns the
/// grant and its proposal, with the grant `active`.
pub async fn active_grant(
    ctx: &Ctx,
    human: &Human,
    bot: &Bot,
    repo: &str,
    task: &str,
) -> Step<(GrantRef, Proposal)> {
    ctx.step(&format!(
        "{} prepares a grant for {}, which confirms it, then {} approves it",
        human.login,
        bot.login(),
        human.login
    ));
    let (grant, _) = human
        .prepare_grant(repo, bot.login(), task, "summary")
        .await?;
    let proposal = bot.read_proposal(&grant).await?;
    let confirmed = bot.confirm(&grant, &proposal).await?;
    ctx.expect_tool_ok("the agent confirms", &confirmed)?;
    let page = human.approve(&grant).await?;
    ctx.expect_status("approving", page.status, 200)?;
    let state = bot.get_grant(&grant).await?;
    let state = state
        .grant()
        .and_then(|g| g["state"].as_str())
        .map(str::to_owned);
    if state.as_deref() != Some("active") {
        return Err(Abort::failed(format!(
            "grant {} is {state:?} after approval, not active",
            grant.id
        )));
    }
    Ok((grant, proposal))
}

/// How many Issues `repo` (`owner/name`) holds now, as the native Issue
/// list's `X-Total-Count` tells the setup client: the witness that a refused
/// or replayed call created nothing.
pub async fn issue_count(ctx: &Ctx, repo: &str) -> Step<i64> {
    let answer = ctx
        .setup()
        .call("GET", &format!("/api/v1/repos/{repo}/issues?limit=1"), None)
        .await?;
    if answer.status != 200 {
        return Err(Abort::failed(format!(
            "listing the Issues of {repo} answered {}",
            answer.status
        )));
    }
    answer
        .header("x-total-count")
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| {
            Abort::failed(format!(
                "the Issue list of {repo} has no numeric X-Total-Count"
            ))
        })
}

/// What a grant's page shows its human: state, state revision, how many
/// receipts, and which of the approve and withdraw forms it holds.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GrantPageView {
    /// Text of `.grant-state`, trimmed.
    pub state: Option<String>,
    /// Text of `.grant-state-revision`, trimmed.
    pub revision: Option<String>,
    /// Number of `tr.receipt` rows.
    pub receipts: usize,
    /// Whether the page holds the approve form.
    pub approve_form: bool,
    /// Whether the page holds the withdraw form.
    pub withdraw_form: bool,
}

/// Reads the grant's page in `human`'s browser. The human's view does not
/// depend on the bot's access, so it witnesses "nothing changed" even while
/// the bot is locked out.
pub async fn grant_page_view(ctx: &Ctx, human: &Human, grant: &GrantRef) -> Step<GrantPageView> {
    let page = human.grant_page(grant).await?;
    ctx.expect_status(
        &format!("{} opens the page of grant {}", human.login, grant.id),
        page.status,
        200,
    )?;
    let trimmed = |s: Option<String>| s.map(|s| s.trim().to_owned());
    let doc = scraper::Html::parse_document(&page.html);
    let receipts = scraper::Selector::parse("tr.receipt")
        .map(|sel| doc.select(&sel).count())
        .map_err(|e| Abort::errored(format!("receipt selector: {e}")))?;
    Ok(GrantPageView {
        state: trimmed(page.text(".grant-state")?),
        revision: trimmed(page.text(".grant-state-revision")?),
        receipts,
        approve_form: page.has(&format!("form[action$=\"/{}/approve\"]", grant.id))?,
        withdraw_form: page.has(&format!("form[action$=\"/{}/withdraw\"]", grant.id))?,
    })
}

/// What the Core holds about some grants and their repository: the
/// repository's Issue count and each grant's page. Taken before and after a
/// refused call, two equal ledgers show that nothing was written.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Ledger {
    /// Issues in the repository.
    pub issues: i64,
    /// Each grant's page, in the order asked.
    pub grants: Vec<GrantPageView>,
}

/// Reads the [`Ledger`] of `grants` in `repo` (`owner/name`).
pub async fn ledger(ctx: &Ctx, human: &Human, repo: &str, grants: &[&GrantRef]) -> Step<Ledger> {
    let issues = issue_count(ctx, repo).await?;
    let mut views = Vec::new();
    for grant in grants {
        views.push(grant_page_view(ctx, human, grant).await?);
    }
    Ok(Ledger {
        issues,
        grants: views,
    })
}

/// Checks a native refusal: the status, and the spec's error body
/// `{"message", "url"}` with a message.
pub fn expect_native_error(
    ctx: &Ctx,
    what: &str,
    answer: &crate::actors::http::Answer,
    status: u16,
) -> Step<()> {
    ctx.expect_status(what, answer.status, status)?;
    let body: serde_json::Value = serde_json::from_str(&answer.body).unwrap_or_default();
    ctx.expect(
        &format!("{what}: the error body carries a message"),
        body["message"].is_string(),
        &answer.body,
    )
}

/// Checks an adapter refusal: the tool error `code` and the native status
/// it carries.
pub fn expect_tool_refusal(
    ctx: &Ctx,
    what: &str,
    reply: &crate::actors::ToolReply,
    code: &str,
    native_status: i64,
) -> Step<()> {
    ctx.expect_tool_error(what, reply, code)?;
    ctx.expect_eq(
        &format!("{what}: native_status"),
        reply.native_status(),
        Some(native_status),
    )
}

/// The grant ids of a native list answer (a JSON array of grants).
pub fn listed_ids(answer: &crate::actors::http::Answer) -> Step<Vec<i64>> {
    let body = answer.json()?;
    let items = body.as_array().ok_or_else(|| {
        Abort::failed(format!(
            "{} answered {} with a list that is not a JSON array",
            answer.url, answer.status
        ))
    })?;
    Ok(items.iter().filter_map(|g| g["id"].as_i64()).collect())
}

/// The grant ids of a successful `list_agent_work_grants` result (empty for
/// an error result, which the caller checks separately).
pub fn tool_listed_ids(reply: &crate::actors::ToolReply) -> Vec<i64> {
    reply
        .structured
        .as_ref()
        .and_then(|s| s["grants"].as_array())
        .map(|a| a.iter().filter_map(|g| g["id"].as_i64()).collect())
        .unwrap_or_default()
}
