//! Family 7: boundaries — wrong bot, missing scope, unattributed ordinary activity, independent grants.

use serde_json::{Value, json};

use crate::actors::http::Answer;
use crate::actors::{GrantRef, Submission};
use crate::ctx::Ctx;
use crate::runner::catalogue::Scenario;
use crate::runner::outcome::{Outcome, Step};
use crate::scenarios::flows;

/// This family's scenarios, in catalogue order.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            id: "wrong_bot_gets_not_found",
            family: "7 boundaries",
            claim: "Another bot with write access to the same repository gets 404 (`not_found` \
                    through its adapter) on every route of lab-bot's grants — the same answer as \
                    for a grant that does not exist — never sees them in its list, and changes \
                    nothing.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(wrong_bot_gets_not_found(ctx)),
        },
        Scenario {
            id: "missing_scope_is_forbidden",
            family: "7 boundaries",
            claim: "The grant's own bot with a token lacking `read:repository` gets 403 on every \
                    grant route, and with a token lacking `write:issue` gets 403 on confirm and \
                    submit (natively and `forbidden` through the adapter) while reading still \
                    works; nothing changes.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(missing_scope_is_forbidden(ctx)),
        },
        Scenario {
            id: "ordinary_issue_is_unattributed",
            family: "7 boundaries",
            claim: "Issues a bot opens through `create_issue` or the native Issue API carry \
                    `agent_work_grant: null` and no grant marker on their page, even while that \
                    bot holds an active grant on the repository.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(ordinary_issue_is_unattributed(ctx)),
        },
        Scenario {
            id: "independent_grants_do_not_interfere",
            family: "7 boundaries",
            claim: "Two active grants for the same bot and repository keep their submissions \
                    apart — the same request key in each creates two Issues, each read back under \
                    its own grant — and withdrawing one leaves the other active and usable.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(independent_grants_do_not_interfere(ctx)),
        },
    ]
}

/// other-bot, a write collaborator on alice/lab, probes lab-bot's grants.
pub async fn wrong_bot_gets_not_found(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let lab_bot = ctx.bot("lab-bot").await?;
    let (active, proposal) =
        flows::active_grant(ctx, &alice, &lab_bot, "alice/lab", "Label old Issues").await?;
    ctx.step("lab-bot submits an Issue; alice prepares a second grant for lab-bot");
    let earlier = Submission::new("Label: needs-triage", "Applies to 12 Issues.");
    let created = lab_bot.submit(&active, &proposal, &earlier).await?;
    ctx.expect_tool_ok("lab-bot submits", &created)?;
    let (pending, _) = alice
        .prepare_grant("alice/lab", "lab-bot", "Close duplicates", "summary")
        .await?;
    let pending_proposal = lab_bot.read_proposal(&pending).await?;
    let nowhere = GrantRef {
        id: pending.id + 1000,
        ..pending.clone()
    };
    let before = flows::ledger(ctx, &alice, "alice/lab", &[&active, &pending]).await?;

    ctx.step("other-bot calls every grant route natively: 404, like a grant that does not exist");
    let other = ctx.native("other-bot")?;
    let fresh = Submission::new("Not yours", "Must not be created.");
    let mut statuses = Vec::new();
    let pairs: [(&str, Answer, Answer); 4] = [
        (
            "get",
            other.get_grant(&active).await?,
            other.get_grant(&nowhere).await?,
        ),
        (
            "confirm",
            other.confirm(&pending, &pending_proposal).await?,
            other.confirm(&nowhere, &pending_proposal).await?,
        ),
        (
            "submit",
            other.submit(&active, &proposal, &fresh).await?,
            other.submit(&nowhere, &proposal, &fresh).await?,
        ),
        (
            "readback",
            other.submission(&active, &earlier.request_key).await?,
            other.submission(&nowhere, &earlier.request_key).await?,
        ),
    ];
    for (route, theirs, missing) in &pairs {
        flows::expect_native_error(ctx, &format!("other-bot {route}"), theirs, 404)?;
        flows::expect_native_error(ctx, &format!("nonexistent grant {route}"), missing, 404)?;
        ctx.expect_eq(
            &format!("{route}: the refusal leaks nothing (same body as for no grant)"),
            without_url(theirs)?,
            without_url(missing)?,
        )?;
        statuses.push(json!({"route": route, "status": theirs.status}));
    }
    ctx.observe("other-bot's native statuses", &statuses);

    ctx.step("other-bot's list never holds lab-bot's grants");
    let answer = other.list_grants("state=all").await?;
    ctx.expect_status("other-bot's native list", answer.status, 200)?;
    let ids = flows::listed_ids(&answer)?;
    ctx.expect(
        "neither grant is listed",
        !ids.contains(&active.id) && !ids.contains(&pending.id),
        &format!("{ids:?}"),
    )?;

    ctx.step("other-bot's adapter gets `not_found` on every grant tool");
    let other_bot = ctx.bot("other-bot").await?;
    let replies = [
        ("get", other_bot.get_grant(&active).await?),
        (
            "confirm",
            other_bot.confirm(&pending, &pending_proposal).await?,
        ),
        (
            "submit",
            other_bot.submit(&active, &proposal, &fresh).await?,
        ),
        (
            "readback",
            other_bot.submission(&active, &earlier.request_key).await?,
        ),
    ];
    for (tool, reply) in &replies {
        flows::expect_tool_refusal(ctx, &format!("other-bot {tool}"), reply, "not_found", 404)?;
    }
    let listed = other_bot.list_grants(None, Some("all")).await?;
    ctx.expect_tool_ok("other-bot's adapter list", &listed)?;
    let ids = flows::tool_listed_ids(&listed);
    ctx.expect(
        "neither grant is listed through the adapter",
        !ids.contains(&active.id) && !ids.contains(&pending.id),
        &format!("{ids:?}"),
    )?;

    ctx.step("nothing changed: same Issues, states, revisions and receipts");
    let after = flows::ledger(ctx, &alice, "alice/lab", &[&active, &pending]).await?;
    ctx.expect_eq("the ledger is unchanged", &after, &before)?;
    let mine = lab_bot.get_grant(&pending).await?;
    let mine = ctx.expect_tool_ok("lab-bot still reads its pending grant", &mine)?;
    ctx.expect_eq(
        "still awaiting lab-bot",
        (
            mine["grant"]["state"].as_str(),
            mine["grant"]["state_revision"].as_i64(),
        ),
        (Some("awaiting_agent"), Some(1)),
    )?;
    ctx.observe("the ledger", &after);
    Ok(())
}

/// lab-bot with tokens that each lack one scope a route requires.
pub async fn missing_scope_is_forbidden(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let bot = ctx.bot("lab-bot").await?;
    let (active, proposal) =
        flows::active_grant(ctx, &alice, &bot, "alice/lab", "Label old Issues").await?;
    ctx.step("lab-bot submits an Issue; alice prepares a second grant for lab-bot");
    let earlier = Submission::new("Label: needs-triage", "Applies to 12 Issues.");
    let created = bot.submit(&active, &proposal, &earlier).await?;
    ctx.expect_tool_ok("lab-bot submits", &created)?;
    let (pending, _) = alice
        .prepare_grant("alice/lab", "lab-bot", "Close duplicates", "summary")
        .await?;
    let pending_proposal = bot.read_proposal(&pending).await?;
    let before = flows::ledger(ctx, &alice, "alice/lab", &[&active, &pending]).await?;
    let fresh = Submission::new("Scope probe", "Must not be created.");
    let mut seen = Vec::new();

    ctx.step("without `read:repository` (only `write:issue`), every grant route is 403");
    let no_read = ctx.native_with_scopes("lab-bot", &["write:issue"]).await?;
    let answers = [
        ("list", no_read.list_grants("").await?),
        ("get", no_read.get_grant(&active).await?),
        (
            "confirm",
            no_read.confirm(&pending, &pending_proposal).await?,
        ),
        ("submit", no_read.submit(&active, &proposal, &fresh).await?),
        (
            "readback",
            no_read.submission(&active, &earlier.request_key).await?,
        ),
    ];
    for (route, answer) in &answers {
        flows::expect_native_error(
            ctx,
            &format!("{route} without read:repository"),
            answer,
            403,
        )?;
        seen.push(json!({"scopes": "write:issue", "route": route, "status": answer.status}));
    }

    ctx.step("without `write:issue` (only `read:repository`), confirm and submit are 403");
    let no_write = ctx
        .native_with_scopes("lab-bot", &["read:repository"])
        .await?;
    let answer = no_write.confirm(&pending, &pending_proposal).await?;
    flows::expect_native_error(ctx, "confirm without write:issue", &answer, 403)?;
    seen.push(json!({"scopes": "read:repository", "route": "confirm", "status": answer.status}));
    let answer = no_write.submit(&active, &proposal, &fresh).await?;
    flows::expect_native_error(ctx, "submit without write:issue", &answer, 403)?;
    seen.push(json!({"scopes": "read:repository", "route": "submit", "status": answer.status}));

    ctx.step("with `read:repository` alone, reading still works");
    let answer = no_write.list_grants("").await?;
    ctx.expect_status("list", answer.status, 200)?;
    let ids = flows::listed_ids(&answer)?;
    ctx.expect(
        "both grants listed",
        ids.contains(&active.id) && ids.contains(&pending.id),
        &format!("{ids:?}"),
    )?;
    let answer = no_write.get_grant(&active).await?;
    ctx.expect_status("get", answer.status, 200)?;
    let answer = no_write.submission(&active, &earlier.request_key).await?;
    ctx.expect_status("readback", answer.status, 200)?;

    ctx.step(
        "through an adapter holding only `read:repository`: `forbidden` on confirm and submit",
    );
    let narrow = ctx.bot_with_scopes("lab-bot", &["read:repository"]).await?;
    let reply = narrow.confirm(&pending, &pending_proposal).await?;
    flows::expect_tool_refusal(ctx, "confirm through the adapter", &reply, "forbidden", 403)?;
    let reply = narrow.submit(&active, &proposal, &fresh).await?;
    flows::expect_tool_refusal(ctx, "submit through the adapter", &reply, "forbidden", 403)?;
    let reply = narrow.get_grant(&active).await?;
    ctx.expect_tool_ok("get through the adapter", &reply)?;
    ctx.observe("statuses per token and route", &seen);

    ctx.step("nothing changed: same Issues, states, revisions and receipts");
    let after = flows::ledger(ctx, &alice, "alice/lab", &[&active, &pending]).await?;
    ctx.expect_eq("the ledger is unchanged", &after, &before)?;
    ctx.observe("the ledger", &after);
    Ok(())
}

/// lab-bot holds an active grant on alice/lab and opens Issues the
/// ordinary way: none of them is attributed to the grant.
pub async fn ordinary_issue_is_unattributed(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let bot = ctx.bot("lab-bot").await?;
    let native = ctx.native("lab-bot")?;
    let (grant, proposal) =
        flows::active_grant(ctx, &alice, &bot, "alice/lab", "Label old Issues").await?;

    ctx.step("lab-bot opens an Issue with the ordinary `create_issue` tool");
    let reply = bot
        .call(
            "create_issue",
            json!({"owner": "alice", "repo": "lab", "title": "Ordinary via MCP", "body": "plain"}),
        )
        .await?;
    let reply = ctx.expect_tool_ok("create_issue succeeds", &reply)?;
    ctx.expect_eq("native status", reply["native_status"].as_i64(), Some(201))?;
    ctx.expect_eq(
        "the tool's Issue is unattributed",
        &reply["issue"]["agent_work_grant"],
        &Value::Null,
    )?;
    let via_tool = reply["issue"]["index"].as_i64().unwrap_or_default();

    ctx.step("lab-bot opens an Issue through the native Issue API");
    let answer = native
        .call(
            "POST",
            "/api/v1/repos/alice/lab/issues",
            Some(&json!({"title": "Ordinary via API", "body": "plain"})),
        )
        .await?;
    ctx.expect_status("native create", answer.status, 201)?;
    let via_api = answer.json()?["index"].as_i64().unwrap_or_default();

    ctx.step("lab-bot submits one Issue through its grant, for contrast");
    let submission = Submission::new("Through the grant", "attributed");
    let created = bot.submit(&grant, &proposal, &submission).await?;
    let created = ctx.expect_tool_ok("submit succeeds", &created)?;
    let via_grant = created["submission"]["issue"]["index"]
        .as_i64()
        .unwrap_or_default();

    ctx.step("the native API shows only the grant's Issue attributed, each posted by lab-bot");
    let mut seen = Vec::new();
    for (what, index, marker) in [
        ("create_issue", via_tool, Value::Null),
        ("native create", via_api, Value::Null),
        (
            "grant submission",
            via_grant,
            json!({"grant_id": grant.id, "request_key": submission.request_key}),
        ),
    ] {
        let answer = ctx.setup().issue("alice/lab", index).await?;
        ctx.expect_status(&format!("{what}: read"), answer.status, 200)?;
        let issue = answer.json()?;
        ctx.expect_eq(
            &format!("{what}: poster"),
            issue["user"]["login"].as_str(),
            Some("lab-bot"),
        )?;
        ctx.expect_eq(
            &format!("{what}: agent_work_grant"),
            &issue["agent_work_grant"],
            &marker,
        )?;
        seen.push(
            json!({"what": what, "index": index, "agent_work_grant": issue["agent_work_grant"]}),
        );
    }

    ctx.step("alice's Issue pages show the grant marker only on the grant's Issue");
    let expected_marker = format!("via agent work grant #{}", grant.id);
    for (what, index, marker) in [
        ("create_issue", via_tool, None),
        ("native create", via_api, None),
        (
            "grant submission",
            via_grant,
            Some(expected_marker.as_str()),
        ),
    ] {
        let (page, view) = alice.issue_page("alice", "lab", index).await?;
        ctx.expect_status(&format!("{what}: page"), page.status, 200)?;
        ctx.expect_eq(
            &format!("{what}: grant marker"),
            view.grant_marker.as_deref().map(str::trim),
            marker,
        )?;
        let says_grant = page.html.contains("via agent work grant");
        ctx.expect_eq(
            &format!("{what}: the page mentions a grant"),
            says_grant,
            marker.is_some(),
        )?;
    }
    let view = flows::grant_page_view(ctx, &alice, &grant).await?;
    ctx.expect_eq("the grant holds one receipt", view.receipts, 1)?;
    ctx.expect_eq(
        "alice/lab holds three Issues",
        flows::issue_count(ctx, "alice/lab").await?,
        3,
    )?;
    ctx.observe("attribution per Issue", &seen);
    Ok(())
}

/// Two active grants for lab-bot on alice/lab, used with the same key.
pub async fn independent_grants_do_not_interfere(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let bot = ctx.bot("lab-bot").await?;
    let native = ctx.native("lab-bot")?;
    let (first, first_p) =
        flows::active_grant(ctx, &alice, &bot, "alice/lab", "Label old Issues").await?;
    let (second, second_p) =
        flows::active_grant(ctx, &alice, &bot, "alice/lab", "Close duplicates").await?;
    ctx.expect("two distinct grants", first.id != second.id, "")?;

    ctx.step("lab-bot submits with the same request key to both grants");
    let shared = Submission::new("Same key, same text", "Both grants get one.");
    let one = bot.submit(&first, &first_p, &shared).await?;
    let one = ctx.expect_tool_ok("submit to the first grant", &one)?;
    let two = bot.submit(&second, &second_p, &shared).await?;
    let two = ctx.expect_tool_ok("submit to the second grant", &two)?;
    ctx.expect_eq(
        "both are new (201, 201)",
        (one["native_status"].as_i64(), two["native_status"].as_i64()),
        (Some(201), Some(201)),
    )?;
    let (issue_one, issue_two) = (
        one["submission"]["issue"].clone(),
        two["submission"]["issue"].clone(),
    );
    ctx.expect(
        "two distinct Issues",
        issue_one["id"].is_i64() && issue_one["id"] != issue_two["id"],
        &format!("{issue_one} / {issue_two}"),
    )?;
    ctx.expect_eq(
        "alice/lab holds two Issues",
        flows::issue_count(ctx, "alice/lab").await?,
        2,
    )?;

    ctx.step("each readback of the shared key names its own grant and Issue");
    for (grant, issue) in [(&first, &issue_one), (&second, &issue_two)] {
        let answer = native.submission(grant, &shared.request_key).await?;
        ctx.expect_status(
            &format!("readback under grant {}", grant.id),
            answer.status,
            200,
        )?;
        let body = answer.json()?;
        ctx.expect_eq(
            "the readback's grant",
            (
                body["grant"]["id"].as_i64(),
                body["submission"]["grant_id"].as_i64(),
            ),
            (Some(grant.id), Some(grant.id)),
        )?;
        ctx.expect_eq("the readback's Issue", &body["submission"]["issue"], issue)?;
    }

    ctx.step("a key used only in the second grant is unknown to the first");
    let only_second = Submission::new("Only in the second", "one grant only");
    let created = bot.submit(&second, &second_p, &only_second).await?;
    ctx.expect_tool_ok("submit to the second grant", &created)?;
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
    let views = (
        flows::grant_page_view(ctx, &alice, &first).await?.receipts,
        flows::grant_page_view(ctx, &alice, &second).await?.receipts,
    );
    ctx.expect_eq("receipts per grant page (first, second)", views, (1, 2))?;

    ctx.step("alice withdraws the first grant; the second stays active and usable");
    let page = alice.withdraw(&first).await?;
    ctx.expect_status("the page after withdrawing", page.status, 200)?;
    let states = (
        grant_state(&native.get_grant(&first).await?)?,
        grant_state(&native.get_grant(&second).await?)?,
    );
    ctx.expect_eq(
        "(state, revision) of the first and second grant",
        states.clone(),
        (
            (Some("revoked".to_owned()), Some(4)),
            (Some("active".to_owned()), Some(3)),
        ),
    )?;
    let refused = bot
        .submit(&first, &first_p, &Submission::new("Late", "refused"))
        .await?;
    flows::expect_tool_refusal(
        ctx,
        "submit to the withdrawn grant",
        &refused,
        "conflict",
        409,
    )?;
    let later = Submission::new("After the other was withdrawn", "still fine");
    let accepted = bot.submit(&second, &second_p, &later).await?;
    let accepted = ctx.expect_tool_ok("submit to the second grant", &accepted)?;
    ctx.expect_eq(
        "native status",
        accepted["native_status"].as_i64(),
        Some(201),
    )?;
    let replay = bot.submit(&second, &second_p, &shared).await?;
    let replay = ctx.expect_tool_ok("replay of the shared key in the second grant", &replay)?;
    ctx.expect_eq(
        "the replay is the second grant's receipt (200)",
        (
            replay["native_status"].as_i64(),
            &replay["submission"]["issue"],
        ),
        (Some(200), &issue_two),
    )?;
    let answer = native.list_grants("").await?;
    let ids = flows::listed_ids(&answer)?;
    ctx.expect_eq(
        "the default list holds only the second grant",
        ids.clone(),
        vec![second.id],
    )?;
    ctx.expect_eq(
        "alice/lab holds four Issues",
        flows::issue_count(ctx, "alice/lab").await?,
        4,
    )?;
    ctx.observe("states after withdrawing the first", &states);
    ctx.observe("default list", &ids);
    Ok(())
}

/// The error body without its `url` (which may name the request).
fn without_url(answer: &Answer) -> Step<Value> {
    let mut body = answer.json()?;
    if let Some(map) = body.as_object_mut() {
        map.remove("url");
    }
    Ok(body)
}

/// `(state, state_revision)` of a native grant answer.
fn grant_state(answer: &Answer) -> Step<(Option<String>, Option<i64>)> {
    let g = answer.json()?;
    Ok((
        g["state"].as_str().map(str::to_owned),
        g["state_revision"].as_i64(),
    ))
}
