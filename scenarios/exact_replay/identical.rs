//! Family 16 (spec §10, seed 003): exact replay — what "identical" means.
//! A replay is compared with the stored input, decoded: member order,
//! whitespace and escapes do not matter, text and number types do; a human's
//! later edit of the Issue changes nothing for the key; a deleted token
//! blocks the replay until a new one is used. (Lost access, a lost response
//! and the adapter's key rule are in `access.rs`.)
//!
//! "Nothing written" is a [`Watch`] ledger read through the APIs with the
//! fixture's own token: every Issue of alice/lab (title and body included),
//! the grant and the key's readback.

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT, Watch, submit_ok};
use super::replay_checks::{BODY, TITLE, active, expect_native_replay, issue_text};

/// A JSON string literal with every character written as a `\u` escape
/// (UTF-16 code units, so an emoji is a surrogate pair).
fn escaped(text: &str) -> String {
    let units: String = text.encode_utf16().map(|u| format!("\\u{u:04x}")).collect();
    format!("\"{units}\"")
}

/// A JSON string literal as a JSON writer spells it (`é`, not `\u00e9`).
fn plain(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

/// The submit body's six members as `(name, JSON text)`, in the contract's
/// order, string values spelled by `spell`.
fn members(
    proposal: &Proposal,
    issue: &NewIssue,
    spell: fn(&str) -> String,
) -> Vec<(&'static str, String)> {
    vec![
        ("proposal_schema", spell(&proposal.schema)),
        ("proposal_version", proposal.version.to_string()),
        ("proposal_digest", spell(&proposal.digest)),
        ("request_key", spell(&issue.request_key)),
        ("title", spell(&issue.title)),
        ("body", spell(&issue.body)),
    ]
}

/// Writes members as a JSON object with `sep` around every token.
fn object(members: &[(&str, String)], sep: &str) -> String {
    let inner: Vec<String> = members
        .iter()
        .map(|(name, value)| format!("{sep}\"{name}\"{sep}:{sep}{value}{sep}"))
        .collect();
    format!("{{{}}}", inner.join(","))
}

/// A replay whose JSON differs only in member order, whitespace and `\u`
/// escapes answers 200 with the stored receipt, while a differently
/// normalised title is 409.
#[scenario(ExactReplay, parity, clauses = ["S10.decoded", "S10.text-exact", "S10.numbers"])]
async fn exact_replay_decoded_json(ctx: &mut Ctx) -> Outcome {
    // Sent natively, as the adapter always writes the same way; there is
    // still one Issue. The title in another Unicode normal form is 409, and
    // `1.0` for `proposal_version` is 422, both writing nothing.
    let bot = ctx.bot(LAB_BOT).await?;
    let (grant, proposal) = active(ctx, &bot, "exact replay: decoded JSON").await?;
    ctx.step("lab-bot submits through its adapter");
    let submission = NewIssue::new(TITLE, BODY);
    let receipt = submit_ok(ctx, &bot, &grant, &proposal, &submission, 201).await?;
    let watch = Watch::new(LAB_BOT, LAB)
        .grant(&grant)
        .key(&grant, &submission.request_key);
    let before = watch.take(ctx).await?;

    let native = ctx.native(LAB_BOT)?;
    let contract_order = members(&proposal, &submission, plain);
    let mut reversed = contract_order.clone();
    reversed.reverse();
    let mut all_escaped = members(&proposal, &submission, escaped);
    all_escaped.rotate_left(2);
    let variants = [
        ("members in reverse order", object(&reversed, "")),
        (
            "whitespace (spaces, tabs, CR LF) around every token",
            object(&contract_order, " \t\r\n "),
        ),
        (
            "every character of every string as a \\u escape",
            object(&members(&proposal, &submission, escaped), ""),
        ),
        (
            "other order, whitespace and \\u escapes at once",
            object(&all_escaped, "\n  "),
        ),
    ];
    let mut seen = Vec::new();
    for (what, raw) in variants {
        ctx.step(&format!("lab-bot replays natively with {what}"));
        let answer = native.submit_raw(&grant, &raw).await?;
        expect_native_replay(ctx, what, &answer, &receipt)?;
        watch
            .expect_unchanged(ctx, &format!("after the replay with {what}"), &before)
            .await?;
        seen.push(answer.status);
    }

    ctx.step("the same key with the title's é decomposed (e + U+0301) is another text: 409");
    let decomposed = NewIssue {
        title: TITLE.replace('é', "e\u{301}"),
        ..submission.clone()
    };
    let answer = native.submit(&grant, &proposal, &decomposed).await?;
    flows::expect_native_error(ctx, "another normal form", &answer, 409)?;
    watch
        .expect_unchanged(ctx, "after the other normal form", &before)
        .await?;
    seen.push(answer.status);

    ctx.step("the identical replay with proposal_version 1.0 (a float, not the integer 1)");
    let float =
        object(&contract_order, "").replace("\"proposal_version\":1,", "\"proposal_version\":1.0,");
    ctx.expect(
        "the body carries 1.0",
        float.contains("\"proposal_version\":1.0,"),
        &float,
    )?;
    let answer = native.submit_raw(&grant, &float).await?;
    flows::expect_native_error(ctx, "proposal_version 1.0", &answer, 422)?;
    watch
        .expect_unchanged(ctx, "after proposal_version 1.0", &before)
        .await?;
    seen.push(answer.status);
    ctx.observe("statuses", &seen);
    Ok(())
}

/// After alice edits the submitted Issue, the identical replay still answers
/// 200 with the stored receipt and keeps her edit, while a replay of her text
/// is 409.
#[scenario(ExactReplay, parity, extensions = ["issue-edit"], clauses = ["S10.stored-input"])]
async fn exact_replay_after_human_edit(ctx: &mut Ctx) -> Outcome {
    // alice edits the title and body; the identical replay goes through the
    // adapter and natively. The replay carrying her edited text under the
    // same key writes nothing.
    let bot = ctx.bot(LAB_BOT).await?;
    let (grant, proposal) = active(ctx, &bot, "exact replay: human edit").await?;
    ctx.step("lab-bot submits through its adapter");
    let submission = NewIssue::new(TITLE, BODY);
    let receipt = submit_ok(ctx, &bot, &grant, &proposal, &submission, 201).await?;
    let index = receipt.issue.index;

    ctx.step("alice edits the Issue's title and body");
    let edited = NewIssue {
        title: format!("{TITLE} (edited by alice)"),
        body: format!("{BODY}alice's note.\n"),
        ..submission.clone()
    };
    let alice = ctx.human("alice")?;
    let answer = alice
        .edit_issue(LAB, index, Some(&edited.title), Some(&edited.body))
        .await?;
    ctx.expect(
        "the edit succeeds (200, or 201 as Forgejo answers)",
        matches!(answer.status, 200 | 201),
        &answer.status.to_string(),
    )?;
    let alices = (edited.title.clone(), edited.body.clone());
    ctx.expect_eq(
        "the Issue holds alice's edit",
        issue_text(ctx, index).await?,
        alices.clone(),
    )?;

    ctx.step("lab-bot replays the identical submission through its adapter");
    let replay = submit_ok(ctx, &bot, &grant, &proposal, &submission, 200).await?;
    flows::expect_same_receipt(ctx, "the stored receipt", &replay, &receipt)?;
    ctx.expect_eq(
        "the replay did not rewrite alice's edit",
        issue_text(ctx, index).await?,
        alices.clone(),
    )?;

    ctx.step("lab-bot replays it natively");
    let native = ctx.native(LAB_BOT)?;
    let answer = native.submit(&grant, &proposal, &submission).await?;
    expect_native_replay(ctx, "the native replay", &answer, &receipt)?;
    ctx.expect_eq(
        "alice's edit is still there",
        issue_text(ctx, index).await?,
        alices,
    )?;

    ctx.step("lab-bot sends alice's edited text under the same key");
    let watch = Watch::new(LAB_BOT, LAB)
        .grant(&grant)
        .key(&grant, &submission.request_key);
    let before = watch.take(ctx).await?;
    let reply = bot.submit(&grant, &proposal, &edited).await?;
    flows::expect_tool_refusal(ctx, "alice's text under the key", &reply, "conflict", 409)?;
    let answer = native.submit(&grant, &proposal, &edited).await?;
    flows::expect_native_error(ctx, "alice's text under the key, natively", &answer, 409)?;
    watch
        .expect_unchanged(ctx, "after the edited text was refused", &before)
        .await?;
    ctx.expect_eq("one Issue", flows::issue_count(ctx, LAB).await?, 1)?;
    ctx.observe(
        "edit, replays, edited text",
        &(reply.error_code(), answer.status),
    );
    Ok(())
}

/// Once the bot's token is deleted, the identical replay is 401 and writes
/// nothing; with a new token it answers 200 with the same receipt again.
#[scenario(ExactReplay, parity, extensions = ["token-delete"], clauses = ["S10.blocked", "S10.restored"])]
async fn exact_replay_token_deleted(ctx: &mut Ctx) -> Outcome {
    // 401 natively, and `unauthenticated` through an adapter holding the
    // deleted token.
    ctx.step("lab-bot gets a token of its own for this work");
    let token = ctx.tokens().mint_bot_token(LAB_BOT).await?;
    let bot = ctx.bot_builder(LAB_BOT).token(&token).start().await?;
    let native = ctx.native_with_token(&token)?;
    let (grant, proposal) = active(ctx, &bot, "exact replay: deleted token").await?;

    ctx.step("lab-bot submits through its adapter, then replays natively: 200");
    let submission = NewIssue::new(TITLE, BODY);
    let receipt = submit_ok(ctx, &bot, &grant, &proposal, &submission, 201).await?;
    let answer = native.submit(&grant, &proposal, &submission).await?;
    expect_native_replay(ctx, "the replay with the token", &answer, &receipt)?;
    let watch = Watch::new(LAB_BOT, LAB)
        .grant(&grant)
        .key(&grant, &submission.request_key);
    let before = watch.take(ctx).await?;

    ctx.step("the token is deleted; lab-bot replays identically");
    ctx.tokens().delete_bot_token(&token).await?;
    let answer = native.submit(&grant, &proposal, &submission).await?;
    flows::expect_native_error(ctx, "the native replay with a deleted token", &answer, 401)?;
    let reply = bot.submit(&grant, &proposal, &submission).await?;
    flows::expect_tool_refusal(
        ctx,
        "the adapter's replay with a deleted token",
        &reply,
        "unauthenticated",
        401,
    )?;
    watch
        .expect_unchanged(ctx, "after the replays with a deleted token", &before)
        .await?;
    let denied = (answer.status, reply.error_code().map(str::to_owned));

    ctx.step("lab-bot gets a new token; the identical replay answers 200 again");
    let renewed = ctx.tokens().mint_bot_token(LAB_BOT).await?;
    let answer = ctx
        .native_with_token(&renewed)?
        .submit(&grant, &proposal, &submission)
        .await?;
    expect_native_replay(ctx, "the native replay with a new token", &answer, &receipt)?;
    let bot = ctx.bot_builder(LAB_BOT).token(&renewed).start().await?;
    let replay = submit_ok(ctx, &bot, &grant, &proposal, &submission, 200).await?;
    flows::expect_same_receipt(
        ctx,
        "the adapter's replay with a new token",
        &replay,
        &receipt,
    )?;
    watch
        .expect_unchanged(ctx, "after the replays with a new token", &before)
        .await?;
    ctx.observe("deleted token, then a new one", &(denied, answer.status));
    Ok(())
}

/// The `issue-edit` extension lets only the Issue's poster or a repository
/// admin edit it, and a refused edit changes nothing.
#[scenario(ExactReplay, parity, extensions = ["issue-edit"], clauses = ["S5.extensions"])]
async fn issue_edit_by_poster_or_admin_only(ctx: &mut Ctx) -> Outcome {
    // Spec §5: on an Issue the site admin posted in alice/lab, wendy (a
    // writer), rita (a reader) and mallory (a stranger) are refused (403, or
    // 404 where the repository is invisible); alice, the owner, edits it.
    ctx.step("the site admin opens an ordinary Issue in alice/lab");
    let answer = (ctx.setup())
        .call(
            "POST",
            &core_api::issues(LAB),
            Some(json!({"title": "Posted", "body": "as posted"})),
        )
        .await?;
    ctx.expect_status("the ordinary Issue", answer.status, 201)?;
    let index = answer.issue()?.index;
    let watch = Watch::new(LAB_BOT, LAB);
    let before = watch.take(ctx).await?;
    for (who, refused) in [("wendy", &[403][..]), ("rita", &[403]), ("mallory", &[404])] {
        ctx.step(&format!("{who} edits the Issue through the API"));
        let edit = ctx
            .human(who)?
            .edit_issue(LAB, index, Some("Edited"), Some(&format!("by {who}")))
            .await?;
        ctx.expect(
            &format!("{who}'s edit is refused with {refused:?}"),
            refused.contains(&edit.status),
            &edit.status.to_string(),
        )?;
        ctx.observe(&format!("{who}'s edit"), &edit.status);
    }
    watch
        .expect_unchanged(ctx, "after the refused edits", &before)
        .await?;
    ctx.step("alice, the owner, edits it");
    let edit = ctx
        .human("alice")?
        .edit_issue(LAB, index, Some("Edited"), None)
        .await?;
    ctx.expect(
        "alice's edit succeeds",
        (200..300).contains(&edit.status),
        &edit.status.to_string(),
    )?;
    let now = ctx.setup().issue(LAB, index).await?.issue()?;
    ctx.expect_eq(
        "the title is alice's, the body as posted",
        (now.title.as_str(), now.body.as_str()),
        ("Edited", "as posted"),
    )
}
