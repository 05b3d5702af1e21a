//! Family 4: replay — same key and payload, changed payload, distinct keys,
//! keys scoped to the grant.
//!
//! The witness that nothing was written is the repository's Issue list, read
//! natively by the site admin and counted item by item, together with the
//! stored receipt read back through the adapter and the Issue itself read
//! natively: after a refused replay all three are what the first submission
//! made.

use serde_json::{Value, json};

use crate::actors::{Bot, GrantRef, Proposal, Submission};
use crate::ctx::Ctx;
use crate::runner::catalogue::Scenario;
use crate::runner::outcome::{Abort, Outcome, Step};
use crate::scenarios::flows;

/// This family's scenarios, in catalogue order.
pub fn scenarios() -> Vec<Scenario> {
    let entry = |id, claim, run| Scenario {
        id,
        family: "4 replay",
        claim,
        fixture: "lab",
        core_env: &[],
        parity: true,
        run,
    };
    vec![
        entry(
            "replay_same_payload_one_issue",
            "The same request key with the same triple, title and body answers 200 with the \
             stored receipt, through the adapter and natively, and the repository still holds \
             one Issue.",
            |ctx| Box::pin(replay_same_payload_one_issue(ctx)),
        ),
        entry(
            "replay_changed_title_conflict",
            "The same request key with a changed title (even by one trailing space or a letter's \
             case) answers 409 and writes nothing: one Issue, the stored receipt and title.",
            |ctx| Box::pin(replay_changed_title_conflict(ctx)),
        ),
        entry(
            "replay_changed_body_conflict",
            "The same request key with a changed body (CRLF made LF, a trailing space, other \
             text, empty) answers 409 and writes nothing: one Issue, the stored receipt and body.",
            |ctx| Box::pin(replay_changed_body_conflict(ctx)),
        ),
        entry(
            "replay_changed_triple_conflict",
            "The same request key with a changed proposal schema, version or digest answers 409 \
             natively (the adapter refuses the first two itself, the digest with conflict) and \
             writes nothing.",
            |ctx| Box::pin(replay_changed_triple_conflict(ctx)),
        ),
        entry(
            "replay_distinct_keys_distinct_issues",
            "Two submissions with distinct request keys and identical title and body create two \
             distinct Issues, each read back under its own key.",
            |ctx| Box::pin(replay_distinct_keys_distinct_issues(ctx)),
        ),
        entry(
            "replay_key_scoped_to_grant",
            "The same request key used in a second grant is a new submission there: a second \
             Issue bound to that grant, while each grant's key still reads back and replays its \
             own Issue.",
            |ctx| Box::pin(replay_key_scoped_to_grant(ctx)),
        ),
    ]
}

const REPO: &str = "alice/lab";
const AGENT: &str = "lab-bot";
const TITLE: &str = "Replayed: «flaky» sync test";
const BODY: &str = "First line.\r\nSecond line — ünïcødé 🚀\r\n\r\n  indented\n";

/// How many Issues alice/lab holds, counted item by item through the native
/// Issue list as the site admin sees it.
pub async fn issue_count(ctx: &Ctx, repo: &str) -> Step<usize> {
    let answer = ctx
        .setup()
        .call(
            "GET",
            &format!("/api/v1/repos/{repo}/issues?page=1&limit=50"),
            None,
        )
        .await?;
    ctx.expect_status("listing the Issues natively", answer.status, 200)?;
    answer
        .json()?
        .as_array()
        .map(Vec::len)
        .ok_or_else(|| Abort::failed(format!("{} is not a JSON array", answer.url)))
}

/// Signs alice in and gives lab-bot an active grant on alice/lab.
async fn active(ctx: &mut Ctx, task: &str) -> Step<(Bot, GrantRef, Proposal)> {
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let bot = ctx.bot(AGENT).await?;
    let (grant, proposal) = flows::active_grant(ctx, &alice, &bot, REPO, task).await?;
    Ok((bot, grant, proposal))
}

/// Submits through the adapter and expects success with `native_status`;
/// returns the receipt.
async fn submit_ok(
    ctx: &Ctx,
    bot: &Bot,
    grant: &GrantRef,
    proposal: &Proposal,
    submission: &Submission,
    native_status: i64,
) -> Step<Value> {
    let reply = bot.submit(grant, proposal, submission).await?;
    let s = ctx.expect_tool_ok("submit succeeds", &reply)?;
    ctx.expect_eq(
        "native status",
        s["native_status"].as_i64(),
        Some(native_status),
    )?;
    let receipt = s["submission"].clone();
    ctx.expect_eq(
        "the receipt names this grant and key",
        (
            receipt["grant_id"].as_i64(),
            receipt["request_key"].as_str(),
        ),
        (Some(grant.id), Some(submission.request_key.as_str())),
    )?;
    ctx.expect(
        "the receipt names an Issue",
        receipt["issue"]["id"].as_i64().is_some() && receipt["issue"]["index"].as_i64().is_some(),
        &receipt["issue"].to_string(),
    )?;
    Ok(receipt)
}

/// Reads the Issue of `receipt` natively and checks its title, body and
/// grant binding.
async fn expect_issue(
    ctx: &Ctx,
    what: &str,
    receipt: &Value,
    submission: &Submission,
) -> Step<Value> {
    let index = receipt["issue"]["index"].as_i64().unwrap_or_default();
    let answer = ctx.native(AGENT)?.issue(REPO, index).await?;
    ctx.expect_status(
        &format!("{what}: the Issue reads natively"),
        answer.status,
        200,
    )?;
    let issue = answer.json()?;
    ctx.expect_eq(
        &format!("{what}: the Issue is the receipt's, with the submitted title and body"),
        (
            &issue["id"],
            issue["title"].as_str(),
            issue["body"].as_str(),
        ),
        (
            &receipt["issue"]["id"],
            Some(submission.title.as_str()),
            Some(submission.body.as_str()),
        ),
    )?;
    ctx.expect_eq(
        &format!("{what}: the Issue is bound to the grant and key"),
        &issue["agent_work_grant"],
        &json!({"grant_id": receipt["grant_id"], "request_key": submission.request_key}),
    )?;
    Ok(issue)
}

/// After a refused replay: one Issue, the stored receipt, the stored Issue.
async fn expect_nothing_written(
    ctx: &Ctx,
    bot: &Bot,
    grant: &GrantRef,
    original: &Submission,
    receipt: &Value,
) -> Step<()> {
    ctx.expect_eq(
        "the repository still holds one Issue",
        issue_count(ctx, REPO).await?,
        1,
    )?;
    let back = bot.submission(grant, &original.request_key).await?;
    let back = ctx.expect_tool_ok("the key reads back", &back)?;
    ctx.expect_eq(
        "the stored receipt's Issue is unchanged",
        &back["submission"]["issue"],
        &receipt["issue"],
    )?;
    expect_issue(ctx, "after the refusal", receipt, original).await?;
    Ok(())
}

/// Same key, same payload: 200, the stored receipt, one Issue.
pub async fn replay_same_payload_one_issue(ctx: &mut Ctx) -> Outcome {
    let (bot, grant, proposal) = active(ctx, "replay task").await?;

    ctx.step("lab-bot submits an Issue");
    let submission = Submission::new(TITLE, BODY);
    let receipt = submit_ok(ctx, &bot, &grant, &proposal, &submission, 201).await?;
    ctx.expect_eq("one Issue", issue_count(ctx, REPO).await?, 1)?;
    ctx.observe("first submission", &receipt);

    ctx.step("lab-bot sends the identical submission again through the adapter");
    let replay = submit_ok(ctx, &bot, &grant, &proposal, &submission, 200).await?;
    ctx.expect_eq("the same receipt", &replay, &receipt)?;
    ctx.expect_eq("still one Issue", issue_count(ctx, REPO).await?, 1)?;
    ctx.observe("adapter replay", &replay);

    ctx.step("lab-bot sends it once more, natively");
    let answer = ctx
        .native(AGENT)?
        .submit(&grant, &proposal, &submission)
        .await?;
    ctx.expect_status("a native replay answers 200", answer.status, 200)?;
    ctx.expect_eq(
        "the same receipt natively",
        &answer.json()?["submission"],
        &receipt,
    )?;
    ctx.expect_eq("still one Issue", issue_count(ctx, REPO).await?, 1)?;

    ctx.step("the key reads back the one Issue");
    expect_nothing_written(ctx, &bot, &grant, &submission, &receipt).await?;
    Ok(())
}

/// Same key, one changed element: every variant 409, nothing written.
async fn changed_payload(ctx: &mut Ctx, variants: &[(&str, Submission)]) -> Outcome {
    let (bot, grant, proposal) = active(ctx, "replay task").await?;
    ctx.step("lab-bot submits an Issue");
    let original = Submission::new(TITLE, BODY);
    let receipt = submit_ok(ctx, &bot, &grant, &proposal, &original, 201).await?;

    for (what, changed) in variants {
        ctx.step(&format!("lab-bot replays the key with {what}"));
        let changed = Submission {
            request_key: original.request_key.clone(),
            ..changed.clone()
        };
        let reply = bot.submit(&grant, &proposal, &changed).await?;
        ctx.expect_tool_error(&format!("{what}: refused"), &reply, "conflict")?;
        ctx.expect_eq(
            &format!("{what}: native status"),
            reply.native_status(),
            Some(409),
        )?;
        let answer = ctx
            .native(AGENT)?
            .submit(&grant, &proposal, &changed)
            .await?;
        ctx.expect_status(&format!("{what}: refused natively"), answer.status, 409)?;
        expect_nothing_written(ctx, &bot, &grant, &original, &receipt).await?;
        ctx.observe(what, &(reply.error_code(), answer.status));
    }
    Ok(())
}

/// Same key, changed title.
pub async fn replay_changed_title_conflict(ctx: &mut Ctx) -> Outcome {
    changed_payload(
        ctx,
        &[
            (
                "a trailing space in the title",
                Submission::new(&format!("{TITLE} "), BODY),
            ),
            (
                "a letter's case changed in the title",
                Submission::new(&TITLE.replace("Replayed", "replayed"), BODY),
            ),
            ("another title", Submission::new("Another title", BODY)),
        ],
    )
    .await
}

/// Same key, changed body.
pub async fn replay_changed_body_conflict(ctx: &mut Ctx) -> Outcome {
    changed_payload(
        ctx,
        &[
            (
                "the body's CRLF made LF",
                Submission::new(TITLE, &BODY.replace("\r\n", "\n")),
            ),
            (
                "a trailing space in the body",
                Submission::new(TITLE, &format!("{BODY} ")),
            ),
            ("another body", Submission::new(TITLE, "Another body.")),
            ("an empty body", Submission::new(TITLE, "")),
        ],
    )
    .await
}

/// Same key, changed triple.
pub async fn replay_changed_triple_conflict(ctx: &mut Ctx) -> Outcome {
    let (bot, grant, proposal) = active(ctx, "replay task").await?;
    ctx.step("lab-bot submits an Issue");
    let original = Submission::new(TITLE, BODY);
    let receipt = submit_ok(ctx, &bot, &grant, &proposal, &original, 201).await?;

    for (element, changed) in changed_triples(&proposal) {
        ctx.step(&format!("lab-bot replays the key with another {element}"));
        let answer = ctx
            .native(AGENT)?
            .submit(&grant, &changed, &original)
            .await?;
        ctx.expect_status(
            &format!("another {element}: refused natively"),
            answer.status,
            409,
        )?;
        let reply = bot.submit(&grant, &changed, &original).await?;
        let code = if element == "digest" {
            "conflict"
        } else {
            "invalid_input"
        };
        ctx.expect_tool_error(
            &format!("another {element}: refused by the adapter"),
            &reply,
            code,
        )?;
        expect_nothing_written(ctx, &bot, &grant, &original, &receipt).await?;
        ctx.observe(element, &(answer.status, reply.error_code()));
    }

    ctx.step("the unchanged replay still answers 200");
    let replay = submit_ok(ctx, &bot, &grant, &proposal, &original, 200).await?;
    ctx.expect_eq("the same receipt", &replay, &receipt)?;
    Ok(())
}

/// The proposal with one element changed at a time: schema, version, digest.
pub fn changed_triples(proposal: &Proposal) -> Vec<(&'static str, Proposal)> {
    let mut digest = proposal.digest.clone();
    let last = if digest.ends_with('0') { "1" } else { "0" };
    digest.replace_range(digest.len() - 1.., last);
    vec![
        (
            "schema",
            Proposal {
                schema: "agent_work_grant.v2".into(),
                ..proposal.clone()
            },
        ),
        (
            "version",
            Proposal {
                version: 2,
                ..proposal.clone()
            },
        ),
        (
            "digest",
            Proposal {
                digest,
                ..proposal.clone()
            },
        ),
    ]
}

/// Distinct keys with identical text: distinct Issues.
pub async fn replay_distinct_keys_distinct_issues(ctx: &mut Ctx) -> Outcome {
    let (bot, grant, proposal) = active(ctx, "replay task").await?;

    ctx.step("lab-bot submits the same title and body under two keys");
    let one = Submission::new(TITLE, BODY);
    let two = Submission::new(TITLE, BODY);
    let first = submit_ok(ctx, &bot, &grant, &proposal, &one, 201).await?;
    let second = submit_ok(ctx, &bot, &grant, &proposal, &two, 201).await?;
    ctx.expect(
        "two distinct Issues",
        first["issue"]["id"] != second["issue"]["id"]
            && first["issue"]["index"] != second["issue"]["index"],
        &format!("{} and {}", first["issue"], second["issue"]),
    )?;
    ctx.expect_eq("two Issues", issue_count(ctx, REPO).await?, 2)?;

    ctx.step("each key reads back its own Issue");
    for (submission, receipt) in [(&one, &first), (&two, &second)] {
        let back = bot.submission(&grant, &submission.request_key).await?;
        let back = ctx.expect_tool_ok("the key reads back", &back)?;
        ctx.expect_eq(
            "its own Issue",
            &back["submission"]["issue"],
            &receipt["issue"],
        )?;
        expect_issue(ctx, "each Issue", receipt, submission).await?;
    }
    ctx.observe("two submissions", &(&first, &second));
    Ok(())
}

/// The same key in another grant is independent.
pub async fn replay_key_scoped_to_grant(ctx: &mut Ctx) -> Outcome {
    let (bot, first_grant, first_proposal) = active(ctx, "first task").await?;
    let alice = ctx.human("alice")?;
    let (second_grant, second_proposal) =
        flows::active_grant(ctx, &alice, &bot, REPO, "second task").await?;

    ctx.step("lab-bot submits under one key in the first grant");
    let in_first = Submission::new(TITLE, BODY);
    let first = submit_ok(ctx, &bot, &first_grant, &first_proposal, &in_first, 201).await?;

    ctx.step("lab-bot submits under the same key in the second grant");
    let in_second = Submission {
        request_key: in_first.request_key.clone(),
        title: TITLE.into(),
        body: BODY.into(),
    };
    let second = submit_ok(ctx, &bot, &second_grant, &second_proposal, &in_second, 201).await?;
    ctx.expect(
        "a second, distinct Issue",
        first["issue"]["id"] != second["issue"]["id"],
        &format!("{} and {}", first["issue"], second["issue"]),
    )?;
    ctx.expect_eq("two Issues", issue_count(ctx, REPO).await?, 2)?;

    ctx.step("each grant's key reads back and replays its own Issue");
    for (grant, proposal, submission, receipt) in [
        (&first_grant, &first_proposal, &in_first, &first),
        (&second_grant, &second_proposal, &in_second, &second),
    ] {
        let back = bot.submission(grant, &submission.request_key).await?;
        let back = ctx.expect_tool_ok("the key reads back in its grant", &back)?;
        ctx.expect_eq(
            "its own Issue",
            &back["submission"]["issue"],
            &receipt["issue"],
        )?;
        expect_issue(ctx, &format!("grant {}", grant.id), receipt, submission).await?;
        let replay = submit_ok(ctx, &bot, grant, proposal, submission, 200).await?;
        ctx.expect_eq("the replay is its own receipt", &replay, receipt)?;
    }
    ctx.expect_eq("still two Issues", issue_count(ctx, REPO).await?, 2)?;
    ctx.observe("two grants, one key", &(&first, &second));
    Ok(())
}
