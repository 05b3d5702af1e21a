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
