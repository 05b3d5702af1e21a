//! The grant list read page by page: grants prepared through the form,
//! one adapter page, and every grant read exactly once.

use grantgate_engine::prelude::*;

use crate::support::flows::{LAB, LAB_BOT};

/// alice logs in and prepares `n` grants for lab-bot and one for other-bot,
/// through one new-grant form sent again with each task, as a person sends
/// a form kept open; returns lab-bot's grant ids in preparation order.
pub(crate) async fn prepared(ctx: &mut Ctx, n: usize) -> Step<Vec<i64>> {
    let alice = ctx.human("alice")?;
    ctx.step(&format!(
        "alice logs in and prepares {n} grants for lab-bot and one for other-bot through the form"
    ));
    alice.login().await?;
    let form = alice.prepare_form(LAB, LAB_BOT, "", "summary").await?;
    let prepare = async |agent: &str, task: &str| -> Step<i64> {
        let mut form = form.clone();
        form.set(fields::AGENT, agent).set(fields::TASK, task);
        let landed = alice.submit(&form).await?;
        core_api::grant_id_of_page(&landed.url).ok_or_else(|| {
            Abort::failed(format!(
                "preparing grant `{task}` landed on {} (status {}), not on a grant page",
                landed.url, landed.status
            ))
        })
    };
    let mut ids = Vec::with_capacity(n);
    for i in 1..=n {
        ids.push(prepare(LAB_BOT, &format!("task {i} of {n}")).await?);
    }
    prepare("other-bot", "other task").await?;
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
