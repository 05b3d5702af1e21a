//! What both halves of the family use: texts JSON writers spell
//! differently, an active grant, a native replay's check and an Issue's
//! text as lab-bot reads it.

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT};

/// Text with what JSON writers spell differently: non-ASCII, an emoji (a
/// surrogate pair as `\u` escapes), quotes, a backslash, CR LF, a tab.
pub(crate) const TITLE: &str = "Exact: «café» \"quoted\" \\ 🚀";
pub(crate) const BODY: &str =
    "Line one — é\r\nLine two\t🚀\n\\u00e9 here is literal text, not an escape\n";

/// Signs alice in and gives `bot` an active grant on alice/lab; returns it
/// with its proposal.
pub(crate) async fn active(ctx: &mut Ctx, bot: &Bot, task: &str) -> Step<(GrantRef, Proposal)> {
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    flows::active_grant(ctx, &alice, bot, LAB, task).await
}

/// Checks a native replay: 200 and the stored receipt.
pub(crate) fn expect_native_replay(
    ctx: &Ctx,
    what: &str,
    answer: &Answer,
    receipt: &Receipt,
) -> Step<()> {
    ctx.expect_status(&format!("{what}: 200"), answer.status, 200)?;
    flows::expect_same_receipt(
        ctx,
        &format!("{what}: the stored receipt"),
        &answer.submitted()?.receipt,
        receipt,
    )
}

/// The Issue `index` of alice/lab as lab-bot reads it natively: `(title, body)`.
pub(crate) async fn issue_text(ctx: &Ctx, index: i64) -> Step<(String, String)> {
    let answer = ctx.native(LAB_BOT)?.issue(LAB, index).await?;
    ctx.expect_status("the Issue reads natively", answer.status, 200)?;
    let issue = answer.issue()?;
    Ok((issue.title, issue.body))
}
