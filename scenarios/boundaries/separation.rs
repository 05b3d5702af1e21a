//! Family 7: boundaries, second half — ordinary activity is never attributed
//! to a grant, and two grants of one bot keep their submissions apart.
//!
//! Attribution is read where the contract puts it: the Issue's
//! `agent_work_grant` through the native API, and "via agent work grant #N"
//! as text on the Issue's page.

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT};

/// Issues a bot opens through `create_issue` or the native Issue API are
/// unattributed, even while it holds an active grant on the repository.
#[scenario(Boundaries, parity, clauses = ["S1.issue.marker-core-only", "S5.setup.issues", "S6.tools.public"])]
async fn ordinary_issue_is_unattributed(ctx: &mut Ctx) -> Outcome {
    // Unattributed: `agent_work_grant: null`, and no grant marker on the
    // Issue's page.
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let native = ctx.native(LAB_BOT)?;
    // The bot holds an active grant here: an attributing Core has a grant
    // to (wrongly) attach.
    let (grant, proposal) = flows::active_grant(ctx, &alice, &bot, LAB, "Label old Issues").await?;

    ctx.step("lab-bot opens an Issue with the ordinary `create_issue` tool");
    let reply = bot
        .call(
            "create_issue",
            json!({"owner": "alice", "repo": "lab", "title": "Ordinary via MCP", "body": "plain"}),
        )
        .await?;
    let structured = ctx.expect_tool_ok("create_issue succeeds", &reply)?;
    ctx.expect_eq("native status", reply.native_status(), Some(201))?;
    let issue = structured
        .get("issue")
        .ok_or_else(|| Abort::failed(format!("create_issue returned no `issue`: {structured}")))?;
    let via_tool = Issue::from_json(issue)?;
    ctx.expect_eq(
        "the tool's Issue is unattributed",
        via_tool.agent_work_grant.clone(),
        None,
    )?;

    ctx.step("lab-bot opens an Issue through the native Issue API");
    let answer = native
        .call(
            "POST",
            &core_api::issues(LAB),
            Some(&json!({"title": "Ordinary via API", "body": "plain"})),
        )
        .await?;
    ctx.expect_status("native create", answer.status, 201)?;
    let via_api = answer.issue()?;

    ctx.step("lab-bot submits one Issue through its grant, for contrast");
    let submission = NewIssue::new("Through the grant", "attributed");
    let created = bot.submit(&grant, &proposal, &submission).await?;
    let via_grant = created.submitted()?.receipt.issue.index;

    ctx.step("the native API shows only the grant's Issue attributed, each posted by lab-bot");
    let bound = GrantMarker {
        grant_id: grant.id,
        request_key: submission.request_key.clone(),
    };
    let cases = [
        ("create_issue", via_tool.index, None),
        ("native create", via_api.index, None),
        ("grant submission", via_grant, Some(bound)),
    ];
    let mut seen = Vec::new();
    for (what, index, marker) in &cases {
        let answer = ctx.setup().issue(LAB, *index).await?;
        ctx.expect_status(&format!("{what}: read"), answer.status, 200)?;
        let issue = answer.issue()?;
        ctx.expect_eq(
            &format!("{what}: poster"),
            issue.user.login.as_str(),
            LAB_BOT,
        )?;
        ctx.expect_eq(
            &format!("{what}: agent_work_grant"),
            &issue.agent_work_grant,
            marker,
        )?;
        let attributed = issue.agent_work_grant.as_ref().map(|m| m.grant_id);
        seen.push(json!({"what": what, "index": index, "grant": attributed}));
    }

    ctx.step("alice's Issue pages show the grant marker only on the grant's Issue");
    let expected_marker = format!("via agent work grant #{}", grant.id);
    for (what, index, marker) in &cases {
        let page = alice.issue_page(LAB, *index).await?;
        ctx.expect_status(&format!("{what}: page"), page.status, 200)?;
        ctx.expect_eq(
            &format!("{what}: the page shows \"{expected_marker}\""),
            page.shows(&expected_marker),
            marker.is_some(),
        )?;
        ctx.expect_eq(
            &format!("{what}: the page mentions a grant at all"),
            page.shows("via agent work grant"),
            marker.is_some(),
        )?;
    }
    let page = alice.grant_page(&grant).await?;
    ctx.expect_status("the grant page", page.status, 200)?;
    ctx.expect(
        "the grant page shows the submission's key",
        page.shows(&submission.request_key),
        &page.text(),
    )?;
    ctx.expect_eq(
        "alice/lab holds three Issues",
        flows::issue_count(ctx, LAB).await?,
        3,
    )?;
    ctx.observe("attribution per Issue", &seen);
    Ok(())
}

/// Two active grants for the same bot and repository keep their submissions
/// apart, and withdrawing one leaves the other active and usable.
#[scenario(Boundaries, parity, clauses = ["S3.replay.scope", "S4.withdraw"])]
async fn independent_grants_do_not_interfere(ctx: &mut Ctx) -> Outcome {
    // The same request key in each grant creates two Issues, each read back
    // under its own grant.
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let native = ctx.native(LAB_BOT)?;
    let (first, first_p) = flows::active_grant(ctx, &alice, &bot, LAB, "Label old Issues").await?;
    let (second, second_p) =
        flows::active_grant(ctx, &alice, &bot, LAB, "Close duplicates").await?;
    ctx.expect("two distinct grants", first.id != second.id, "")?;

    ctx.step("lab-bot submits with the same request key to both grants");
    let shared = NewIssue::new("Same key, same text", "Both grants get one.");
    let one = bot.submit(&first, &first_p, &shared).await?;
    let two = bot.submit(&second, &second_p, &shared).await?;
    ctx.expect_eq(
        "both are new (201, 201)",
        (one.native_status(), two.native_status()),
        (Some(201), Some(201)),
    )?;
    let (issue_one, issue_two) = (
        one.submitted()?.receipt.issue,
        two.submitted()?.receipt.issue,
    );
    ctx.expect(
        "two distinct Issues",
        issue_one.id != issue_two.id,
        &format!("{} / {}", json_text(&issue_one), json_text(&issue_two)),
    )?;
    ctx.expect_eq(
        "alice/lab holds two Issues",
        flows::issue_count(ctx, LAB).await?,
        2,
    )?;

    ctx.step("each readback of the shared key names its own grant and Issue");
    for (grant, issue) in [(&first, &issue_one), (&second, &issue_two)] {
        let answer = native.submission(grant, &shared.request_key).await?;
        let what = format!("readback under grant {}", grant.id);
        ctx.expect_status(&what, answer.status, 200)?;
        let back = answer.submitted()?;
        ctx.expect_eq(
            &format!("{what}: its grant"),
            (back.grant.id, back.receipt.grant_id),
            (grant.id, grant.id),
        )?;
        ctx.expect_eq(&format!("{what}: its Issue"), &back.receipt.issue, issue)?;
    }

    ctx.step("a key used only in the second grant is unknown to the first");
    let only_second = NewIssue::new("Only in the second", "one grant only");
    let created = bot.submit(&second, &second_p, &only_second).await?;
    ctx.expect_eq(
        "submit to the second grant",
        created.native_status(),
        Some(201),
    )?;
    let answer = native.submission(&first, &only_second.request_key).await?;
    flows::expect_native_error(ctx, "readback under the first grant", &answer, 404)?;
    let reply = bot.submission(&first, &only_second.request_key).await?;
    flows::expect_tool_refusal(
        ctx,
        "readback through the adapter",
        &reply,
        "not_found",
        404,
    )?;
    // Each grant page lists its own receipts, by request key.
    let first_page = alice.grant_page(&first).await?;
    let second_page = alice.grant_page(&second).await?;
    ctx.expect_eq(
        "keys shown on the first grant's page (shared, only-second)",
        (
            first_page.shows(&shared.request_key),
            first_page.shows(&only_second.request_key),
        ),
        (true, false),
    )?;
    ctx.expect_eq(
        "keys shown on the second grant's page (shared, only-second)",
        (
            second_page.shows(&shared.request_key),
            second_page.shows(&only_second.request_key),
        ),
        (true, true),
    )?;

    ctx.step("alice withdraws the first grant; the second stays active and usable");
    let page = alice.withdraw(&first).await?;
    ctx.expect_status("the page after withdrawing", page.status, 200)?;
    let states = (
        flows::native_status(ctx, LAB_BOT, &first).await?,
        flows::native_status(ctx, LAB_BOT, &second).await?,
    );
    ctx.expect_eq(
        "(state, revision) of the first and second grant",
        states.clone(),
        (
            (state::REVOKED.to_owned(), 4),
            (state::ACTIVE.to_owned(), 3),
        ),
    )?;
    let refused = bot
        .submit(&first, &first_p, &NewIssue::new("Late", "refused"))
        .await?;
    flows::expect_tool_refusal(
        ctx,
        "submit to the withdrawn grant",
        &refused,
        "conflict",
        409,
    )?;
    let later = NewIssue::new("After the other was withdrawn", "still fine");
    let accepted = bot.submit(&second, &second_p, &later).await?;
    ctx.expect_eq(
        "submit to the second grant",
        accepted.native_status(),
        Some(201),
    )?;
    let replay = bot.submit(&second, &second_p, &shared).await?;
    ctx.expect_eq(
        "the replay of the shared key is the second grant's receipt (200)",
        (replay.native_status(), replay.submitted()?.receipt.issue),
        (Some(200), issue_two),
    )?;
    let answer = native.list_grants("").await?;
    ctx.expect_status("the default list", answer.status, 200)?;
    let ids: Vec<i64> = answer.grants()?.iter().map(|g| g.id).collect();
    ctx.expect_eq(
        "the default list holds only the second grant",
        ids.clone(),
        vec![second.id],
    )?;
    ctx.expect_eq(
        "alice/lab holds four Issues",
        flows::issue_count(ctx, LAB).await?,
        4,
    )?;
    ctx.observe("states after withdrawing the first", &states);
    ctx.observe("default list", &ids);
    Ok(())
}
