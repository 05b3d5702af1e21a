//! Family 3: the full lifecycle through the adapter.

use serde_json::json;

use crate::actors::grant::expected_digest;
use crate::actors::{GrantRef, Human, Proposal, Submission};
use crate::ctx::Ctx;
use crate::runner::catalogue::Scenario;
use crate::runner::outcome::{Abort, Outcome, Step};
use crate::scenarios::browser::native_state;
use crate::scenarios::replay::changed_triples;

/// This family's scenarios, in catalogue order.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            id: "full_lifecycle",
            family: "3 full lifecycle",
            claim: "A grant prepared and approved through the browser, confirmed with the exact proposal \
                triple and submitted through the adapter, creates exactly one Issue whose full body, \
                poster and grant marker read back identically through the adapter, the native API \
                and the HTML page.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(full_lifecycle(ctx)),
        },
        Scenario {
            id: "confirm_changed_triple_conflict",
            family: "3 full lifecycle",
            claim: "A confirmation whose proposal schema, version or digest differs from the \
                    grant's (whose digest the harness recomputes) answers 409 natively — the \
                    adapter refuses the first two itself and the digest with conflict — and \
                    changes nothing, while the exact triple confirms.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(confirm_changed_triple_conflict(ctx)),
        },
        Scenario {
            id: "confirm_twice_conflict",
            family: "3 full lifecycle",
            claim: "A second confirmation, identical to the first, answers 409 through the adapter \
                    and natively and changes nothing, before and after approval.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(confirm_twice_conflict(ctx)),
        },
        Scenario {
            id: "large_body_read_back",
            family: "3 full lifecycle",
            claim: "An Issue body of the maximal 262,144 bytes — multi-byte text, CRLF, markup — \
                    submitted through the adapter reads back byte for byte, posted by the bot and \
                    bound to the grant, through the adapter, the native API and the HTML page.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(large_body_read_back(ctx)),
        },
        Scenario {
            id: "nul_refused_on_every_backend",
            family: "3 full lifecycle",
            claim: "A title or body holding NUL (U+0000) is refused with 422, natively and through \
                    the adapter (`unprocessable`), on every backend, and nothing is written: no \
                    Issue, no submission under its key.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(nul_refused_on_every_backend(ctx)),
        },
    ]
}

/// Task text with the characters that break careless code: quotes, angle
/// brackets, an ampersand, a tab, non-ASCII, an emoji and a trailing space.
const TASK: &str = "Triage the flaky \"lab\" tests <ci> & report each one\tseparately — café 🧪 ";
const SUMMARY: &str = "Open one Issue per flaky test.\nNo code changes.";
const TITLE: &str = "Flaky test: lab::sync_timeout — «intermittent»";
/// The Issue body must survive byte for byte: CRLF and lone CR, HTML that
/// must not be interpreted, trailing spaces, blank lines, non-ASCII.
const BODY: &str = "Observed 3 failures in 20 runs.\r\n\r\nSteps:\r\n  1. run `cargo test`\r\n  2. <b>see</b> &amp; wait\rlone CR \n\n\ttabbed   \nÜnïcødé ✓ 🚀\n";

/// A grant goes the whole way: browser login and preparation, confirmation
/// with the exact triple, browser approval, submission, and readback through
/// the adapter, the native API and the HTML page.
pub async fn full_lifecycle(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;

    ctx.step("alice logs in through the login form with its CSRF token");
    let home = alice.login().await?;
    ctx.expect_eq(
        "login answers 303",
        home.redirects.first().map(|(s, _)| *s),
        Some(303),
    )?;
    ctx.expect_eq("login lands on /", home.url.path(), "/")?;
    ctx.expect_status("home page status", home.status, 200)?;

    ctx.step("alice prepares a grant for lab-bot through the form");
    let (grant, page) = alice
        .prepare_grant("alice/lab", "lab-bot", TASK, SUMMARY)
        .await?;
    ctx.expect_eq(
        "preparing answers 303 to the grant page",
        page.redirects.first().map(|(s, _)| *s),
        Some(303),
    )?;
    ctx.expect_status("grant page status", page.status, 200)?;

    let bot = ctx.bot("lab-bot").await?;
    ctx.step("lab-bot reads the grant through its adapter");
    let read = bot.get_grant(&grant).await?;
    let read = ctx.expect_tool_ok("get_agent_work_grant succeeds", &read)?;
    let g = &read["grant"];
    ctx.expect_eq("state", g["state"].as_str(), Some("awaiting_agent"))?;
    ctx.expect_eq("state_revision", g["state_revision"].as_i64(), Some(1))?;
    ctx.expect_eq("task kept whole", g["task"].as_str(), Some(TASK))?;
    ctx.expect_eq("summary kept whole", g["summary"].as_str(), Some(SUMMARY))?;
    ctx.expect_eq("agent", g["agent"]["login"].as_str(), Some("lab-bot"))?;
    ctx.expect_eq(
        "prepared by",
        g["prepared_by"]["login"].as_str(),
        Some("alice"),
    )?;
    ctx.expect_eq("not approved yet", &g["approved_by"], &json!(null))?;
    ctx.observe("the grant as the agent reads it", g);
    let proposal = Proposal::of_grant(g)?;
    ctx.expect_eq(
        "proposal schema and version",
        (proposal.schema.as_str(), proposal.version),
        ("agent_work_grant.v1", 1),
    )?;
    ctx.expect_eq(
        "digest is SHA-256 of the JCS proposal",
        proposal.digest.clone(),
        expected_digest(g)?,
    )?;

    ctx.step("lab-bot confirms with the exact proposal triple");
    let confirmed = bot.confirm(&grant, &proposal).await?;
    let confirmed = ctx.expect_tool_ok("confirm succeeds", &confirmed)?;
    ctx.expect_eq(
        "native status",
        confirmed["native_status"].as_i64(),
        Some(200),
    )?;
    ctx.expect_eq(
        "state after confirm",
        confirmed["grant"]["state"].as_str(),
        Some("awaiting_human"),
    )?;
    ctx.expect_eq(
        "state_revision after confirm",
        confirmed["grant"]["state_revision"].as_i64(),
        Some(2),
    )?;
    ctx.observe("the confirm result", &confirmed);

    ctx.step("alice approves through the approve form on the grant page");
    let approved = alice.approve(&grant).await?;
    ctx.expect_status("page after approving", approved.status, 200)?;
    ctx.observe("the approve redirects", &approved.redirects);

    ctx.step("lab-bot sees the grant active, approved by alice");
    let active = bot.get_grant(&grant).await?;
    let active = ctx.expect_tool_ok("get_agent_work_grant succeeds", &active)?;
    ctx.expect_eq("state", active["grant"]["state"].as_str(), Some("active"))?;
    ctx.expect_eq(
        "approved by",
        active["grant"]["approved_by"]["login"].as_str(),
        Some("alice"),
    )?;
    ctx.expect_eq(
        "state_revision",
        active["grant"]["state_revision"].as_i64(),
        Some(3),
    )?;
    ctx.observe("the active grant", &active);

    ctx.step("lab-bot submits an Issue through the grant");
    let submission = Submission::new(TITLE, BODY);
    let submitted = bot.submit(&grant, &proposal, &submission).await?;
    let submitted = ctx.expect_tool_ok("submit succeeds", &submitted)?;
    ctx.expect_eq(
        "native status",
        submitted["native_status"].as_i64(),
        Some(201),
    )?;
    let s = &submitted["submission"];
    ctx.expect_eq("grant id", s["grant_id"].as_i64(), Some(grant.id))?;
    ctx.expect_eq(
        "request key",
        s["request_key"].as_str(),
        Some(submission.request_key.as_str()),
    )?;
    ctx.expect_eq("status", s["status"].as_str(), Some("submitted"))?;
    ctx.expect_eq(
        "review state",
        s["review_state"].as_str(),
        Some("awaiting_review"),
    )?;
    ctx.expect_eq(
        "submitted by",
        s["submitted_by"]["login"].as_str(),
        Some("lab-bot"),
    )?;
    ctx.observe("the submit result", &submitted);
    let issue = s["issue"].clone();
    let index = issue["index"].as_i64();
    ctx.expect(
        "the receipt names an Issue index",
        index.is_some(),
        &issue.to_string(),
    )?;
    let index = index.unwrap_or_default();

    ctx.step("lab-bot reads the submission back through the adapter");
    let back = bot.submission(&grant, &submission.request_key).await?;
    let back = ctx.expect_tool_ok("get_agent_work_submission succeeds", &back)?;
    ctx.expect_eq("native status", back["native_status"].as_i64(), Some(200))?;
    ctx.expect_eq("same Issue", &back["submission"]["issue"], &issue)?;
    ctx.expect_eq(
        "status",
        back["submission"]["status"].as_str(),
        Some("submitted"),
    )?;
    ctx.observe("the submission read back", &back);

    ctx.step("the native API shows the Issue whole, posted by lab-bot, bound to the grant");
    let native = ctx.setup().issue("alice/lab", index).await?;
    ctx.expect_status("issue read", native.status, 200)?;
    let native = native.json()?;
    ctx.expect_eq("issue id", &native["id"], &issue["id"])?;
    ctx.expect_eq("title", native["title"].as_str(), Some(TITLE))?;
    ctx.expect_eq("body byte for byte", native["body"].as_str(), Some(BODY))?;
    ctx.expect_eq("poster", native["user"]["login"].as_str(), Some("lab-bot"))?;
    ctx.expect_eq(
        "grant binding",
        &native["agent_work_grant"],
        &json!({"grant_id": grant.id, "request_key": submission.request_key}),
    )?;
    ctx.observe("the Issue through the native API", &native);

    ctx.step("alice reads the Issue page: poster, whole body, grant marker");
    let (page, view) = alice.issue_page("alice", "lab", index).await?;
    ctx.expect_status("issue page status", page.status, 200)?;
    ctx.expect(
        "the poster is lab-bot",
        view.poster
            .as_deref()
            .is_some_and(|p| p.contains("lab-bot")),
        &format!("{:?}", view.poster),
    )?;
    ctx.expect_eq("body byte for byte", view.body.as_deref(), Some(BODY))?;
    ctx.expect_eq(
        "grant marker",
        view.grant_marker.as_deref().map(str::trim),
        Some(format!("via agent work grant #{}", grant.id).as_str()),
    )?;
    ctx.observe(
        "the Issue page",
        &json!({"poster": view.poster, "body": view.body, "marker": view.grant_marker}),
    );
    Ok(())
}

/// alice logs in and prepares a grant for lab-bot; returns it with its
/// proposal as lab-bot reads it, its digest recomputed by the harness.
async fn prepared(ctx: &mut Ctx, alice: &Human) -> Step<(GrantRef, Proposal)> {
    ctx.step("alice logs in and prepares a grant for lab-bot; lab-bot reads it");
    alice.login().await?;
    let (grant, _) = alice
        .prepare_grant("alice/lab", "lab-bot", TASK, SUMMARY)
        .await?;
    let bot = ctx.bot("lab-bot").await?;
    let read = bot.get_grant(&grant).await?;
    let read = ctx.expect_tool_ok("get_agent_work_grant succeeds", &read)?;
    let proposal = Proposal::of_grant(&read["grant"])?;
    ctx.expect_eq(
        "the digest is SHA-256 of the JCS proposal",
        proposal.digest.clone(),
        expected_digest(&read["grant"])?,
    )?;
    Ok((grant, proposal))
}

/// Checks that the grant is still `(state, revision)`, natively.
async fn expect_state(ctx: &Ctx, what: &str, grant: &GrantRef, state: &str, rev: i64) -> Step<()> {
    let now = native_state(ctx, "lab-bot", grant).await?;
    ctx.expect_eq(
        &format!("{what}: state and state_revision"),
        (now.0.as_str(), now.1),
        (state, rev),
    )
}

/// Each element of the triple, changed alone, is refused; the exact triple
/// confirms.
pub async fn confirm_changed_triple_conflict(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;
    let (grant, proposal) = prepared(ctx, &alice).await?;
    let bot = ctx.bot("lab-bot").await?;
    let native = ctx.native("lab-bot")?;

    for (element, changed) in changed_triples(&proposal) {
        ctx.step(&format!("lab-bot confirms with another {element}"));
        let answer = native.confirm(&grant, &changed).await?;
        ctx.expect_status(
            &format!("another {element}: refused natively"),
            answer.status,
            409,
        )?;
        expect_state(
            ctx,
            &format!("another {element}"),
            &grant,
            "awaiting_agent",
            1,
        )
        .await?;
        let reply = bot.confirm(&grant, &changed).await?;
        if element == "digest" {
            ctx.expect_tool_error("another digest: refused", &reply, "conflict")?;
            ctx.expect_eq(
                "another digest: native status",
                reply.native_status(),
                Some(409),
            )?;
        } else {
            ctx.expect_tool_error(
                &format!("another {element}: refused by the adapter itself"),
                &reply,
                "invalid_input",
            )?;
        }
        expect_state(
            ctx,
            &format!("another {element}"),
            &grant,
            "awaiting_agent",
            1,
        )
        .await?;
        ctx.observe(element, &(answer.status, reply.error_code()));
    }

    ctx.step("lab-bot confirms with the exact triple");
    let confirmed = bot.confirm(&grant, &proposal).await?;
    let confirmed = ctx.expect_tool_ok("confirm succeeds", &confirmed)?;
    ctx.expect_eq(
        "confirmed",
        (
            confirmed["native_status"].as_i64(),
            confirmed["grant"]["state"].as_str(),
        ),
        (Some(200), Some("awaiting_human")),
    )?;
    expect_state(ctx, "after confirming", &grant, "awaiting_human", 2).await?;
    Ok(())
}

/// Confirming twice is a conflict, before and after approval.
pub async fn confirm_twice_conflict(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;
    let (grant, proposal) = prepared(ctx, &alice).await?;
    let bot = ctx.bot("lab-bot").await?;
    let native = ctx.native("lab-bot")?;

    ctx.step("lab-bot confirms with the exact triple");
    let confirmed = bot.confirm(&grant, &proposal).await?;
    ctx.expect_tool_ok("the first confirmation succeeds", &confirmed)?;
    expect_state(ctx, "after confirming", &grant, "awaiting_human", 2).await?;

    for (when, state, rev) in [
        ("awaiting approval", "awaiting_human", 2),
        ("after approval", "active", 3),
    ] {
        if state == "active" {
            ctx.step("alice approves the grant");
            let page = alice.approve(&grant).await?;
            ctx.expect_status("approving", page.status, 200)?;
            expect_state(ctx, "after approving", &grant, state, rev).await?;
        }
        ctx.step(&format!("lab-bot confirms again, {when}"));
        let again = bot.confirm(&grant, &proposal).await?;
        ctx.expect_tool_error(&format!("{when}: refused"), &again, "conflict")?;
        ctx.expect_eq(
            &format!("{when}: native status"),
            again.native_status(),
            Some(409),
        )?;
        let answer = native.confirm(&grant, &proposal).await?;
        ctx.expect_status(&format!("{when}: refused natively"), answer.status, 409)?;
        expect_state(ctx, when, &grant, state, rev).await?;
        ctx.observe(when, &(again.error_code(), answer.status));
    }
    Ok(())
}

/// The maximal body: 262,144 bytes of multi-byte text, CRLF and markup.
fn large_body() -> String {
    const MAX: usize = 262_144;
    const LINE: &str = "Zeile ünïcødé — 🚀 <b>&amp;</b>\t\"quoted\"  \r\n";
    let mut body = String::with_capacity(MAX);
    while body.len() + LINE.len() <= MAX - 2 {
        body.push_str(LINE);
    }
    while body.len() < MAX - 2 {
        body.push('x');
    }
    body.push_str("\r\n");
    body
}

/// A maximal body survives the whole way, with the bot as its poster.
pub async fn large_body_read_back(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let bot = ctx.bot("lab-bot").await?;
    let (grant, proposal) =
        crate::scenarios::flows::active_grant(ctx, &alice, &bot, "alice/lab", TASK).await?;
    let body = large_body();
    ctx.expect_eq("the body is the maximal size", body.len(), 262_144)?;

    ctx.step("lab-bot submits an Issue with the maximal body");
    let submission = Submission::new(TITLE, &body);
    let submitted = bot.submit(&grant, &proposal, &submission).await?;
    let submitted = ctx.expect_tool_ok("submit succeeds", &submitted)?;
    ctx.expect_eq(
        "native status",
        submitted["native_status"].as_i64(),
        Some(201),
    )?;
    ctx.expect_eq(
        "submitted by",
        submitted["submission"]["submitted_by"]["login"].as_str(),
        Some("lab-bot"),
    )?;
    let issue = submitted["submission"]["issue"].clone();
    let index = issue["index"]
        .as_i64()
        .ok_or_else(|| Abort::failed(format!("the receipt names no Issue index: {issue}")))?;

    ctx.step("lab-bot reads the submission back through the adapter");
    let back = bot.submission(&grant, &submission.request_key).await?;
    let back = ctx.expect_tool_ok("get_agent_work_submission succeeds", &back)?;
    ctx.expect_eq("same Issue", &back["submission"]["issue"], &issue)?;

    ctx.step("the native API shows the whole body, posted by lab-bot, bound to the grant");
    let native = ctx.native("lab-bot")?.issue("alice/lab", index).await?;
    ctx.expect_status("issue read", native.status, 200)?;
    let native = native.json()?;
    ctx.expect_eq("issue id", &native["id"], &issue["id"])?;
    ctx.expect_eq("title", native["title"].as_str(), Some(TITLE))?;
    ctx.expect(
        "body byte for byte",
        native["body"].as_str() == Some(body.as_str()),
        &format!(
            "{} bytes back of {}",
            native["body"].as_str().map(str::len).unwrap_or_default(),
            body.len()
        ),
    )?;
    ctx.expect_eq("poster", native["user"]["login"].as_str(), Some("lab-bot"))?;
    ctx.expect_eq(
        "grant binding",
        &native["agent_work_grant"],
        &json!({"grant_id": grant.id, "request_key": submission.request_key}),
    )?;

    ctx.step("alice reads the Issue page: poster, whole body, grant marker");
    let (page, view) = alice.issue_page("alice", "lab", index).await?;
    ctx.expect_status("issue page status", page.status, 200)?;
    ctx.expect(
        "the poster is lab-bot",
        view.poster
            .as_deref()
            .is_some_and(|p| p.contains("lab-bot")),
        &format!("{:?}", view.poster),
    )?;
    ctx.expect(
        "body byte for byte on the page",
        view.body.as_deref() == Some(body.as_str()),
        &format!(
            "{} bytes on the page of {}",
            view.body.as_deref().map(str::len).unwrap_or_default(),
            body.len()
        ),
    )?;
    ctx.expect_eq(
        "grant marker",
        view.grant_marker.as_deref().map(str::trim),
        Some(format!("via agent work grant #{}", grant.id).as_str()),
    )?;
    ctx.observe(
        "the large Issue",
        &json!({
            "bytes": native["body"].as_str().map(str::len),
            "page_bytes": view.body.as_deref().map(str::len),
            "poster": native["user"]["login"],
            "binding": native["agent_work_grant"],
        }),
    );
    Ok(())
}

/// Spec §2: NUL is refused with 422 on every backend, so SQLite (which
/// could store it) and PostgreSQL (which cannot) behave the same.
pub async fn nul_refused_on_every_backend(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let bot = ctx.bot("lab-bot").await?;
    let (grant, proposal) =
        crate::scenarios::flows::active_grant(ctx, &alice, &bot, "alice/lab", TASK).await?;
    let before = crate::scenarios::flows::issue_count(ctx, "alice/lab").await?;

    ctx.step("lab-bot submits a title holding NUL natively");
    let native = ctx.native("lab-bot")?;
    let in_title = Submission::new("Flaky\u{0}test", BODY);
    let answer = native.submit(&grant, &proposal, &in_title).await?;
    ctx.observe("native answer to NUL in the title", &answer.status);
    ctx.expect_status("NUL in the title", answer.status, 422)?;

    ctx.step("lab-bot submits a body holding NUL through the adapter");
    let in_body = Submission::new(TITLE, "before\u{0}after");
    let reply = bot.submit(&grant, &proposal, &in_body).await?;
    ctx.observe("adapter error for NUL in the body", &reply.error_code());
    ctx.expect_tool_error("NUL in the body", &reply, "unprocessable")?;

    ctx.step("nothing was written");
    let after = crate::scenarios::flows::issue_count(ctx, "alice/lab").await?;
    ctx.observe("Issues written", &(after - before));
    ctx.expect_eq("Issues in alice/lab", after, before)?;
    for key in [&in_title.request_key, &in_body.request_key] {
        let back = native.submission(&grant, key).await?;
        ctx.expect_status("no submission under the key", back.status, 404)?;
    }
    Ok(())
}
