//! The grant list read page by page: grants prepared through the form,
//! one adapter page, and every grant read exactly once.

use grantgate_engine::prelude::*;

use crate::support::flows::{LAB, LAB_BOT};

/// alice logs in and prepares `n` grants for lab-bot and one for other-bot,
/// through the form; returns lab-bot's grant ids in preparation order.
pub(crate) async fn prepared(ctx: &mut Ctx, n: usize) -> Step<Vec<i64>> {
    let alice = ctx.human("alice")?;
    ctx.step(&format!(
        "alice logs in and prepares {n} grants for lab-bot and one for other-bot through the form"
    ));
    alice.login().await?;
    let mut ids = Vec::with_capacity(n);
    for i in 1..=n {
        let (grant, _) = alice
            .prepare_grant(LAB, LAB_BOT, &format!("task {i} of {n}"), "summary")
            .await?;
        ids.push(grant.id);
    }
    alice
        .prepare_grant(LAB, "other-bot", "other task", "summary")
        .await?;
    Ok(ids)
}

/// Reads one page through the adapter; anything but a success is a failure,
/// and no page may claim to be a snapshot.
pub(crate) async fn tool_page(
    ctx: &Ctx,
    bot: &Bot,
    page: i64,
    state: Option<&str>,
) -> Step<GrantListPage> {
    let reply = bot.list_grants(Some(page), state).await?;
    ctx.expect_tool_ok(&format!("list_agent_work_grants page {page}"), &reply)?;
    let list = reply.list()?;
    ctx.expect_eq("the adapter never claims a snapshot", list.snapshot, false)?;
    Ok(list)
}

/// Checks that `read` holds each of `expected` exactly once, in ascending
/// order.
pub(crate) fn expect_exactly(ctx: &Ctx, what: &str, read: &[i64], expected: &[i64]) -> Step<()> {
    let mut want = expected.to_vec();
    want.sort_unstable();
    ctx.expect_eq(
        &format!("{what}: every grant exactly once, ascending ids"),
        read,
        want.as_slice(),
    )
}
