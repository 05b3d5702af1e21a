//! Family 9: adapter faults, through the fault proxy between the adapter and
//! the Core. The proxy counts every request, so "exactly one POST" is
//! counted, not assumed; what the Core holds afterwards is read natively.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::flows::{active_grant, issue_count};
use crate::actors::{Bot, GrantRef, Proposal, Submission, ToolReply};
use crate::ctx::Ctx;
use crate::proxy::{Canned, Fault};
use crate::runner::catalogue::Scenario;
use crate::runner::outcome::{Abort, Outcome, Step};

/// This family's scenarios, in catalogue order.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            id: "redirect_refused",
            family: "9 adapter faults",
            claim: "A 301, 302, 303, 307 or 308 answer is never followed: a GET tool reports \
                    `upstream_error` and a POST tool `delivery_uncertain` with the redirect's \
                    status, and the redirect target, same origin or another, is never contacted.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(redirect_refused(ctx)),
        },
        Scenario {
            id: "lost_response_then_readback",
            family: "9 adapter faults",
            claim: "When the Core commits a submission but its answer is lost, the adapter reports \
                    `delivery_uncertain` after exactly one POST, the same-key readback finds the \
                    committed submission and its one Issue, and an identical replay answers 200 \
                    with still one Issue.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(lost_response_then_readback(ctx)),
        },
        Scenario {
            id: "timeout_is_uncertain",
            family: "9 adapter faults",
            claim: "An answer held past the adapter's upstream timeout makes a submit \
                    `delivery_uncertain` after exactly one POST and a readback `upstream_error`, \
                    within the timeout, and the committed submission is then found by same-key \
                    readback.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(timeout_is_uncertain(ctx)),
        },
        Scenario {
            id: "malformed_success_publishes_no_receipt",
            family: "9 adapter faults",
            claim: "A submit whose 201 body is malformed (cut JSON, HTML, a JSON array, a grant \
                    without its submission) is \
                    `delivery_uncertain` with no receipt after exactly one POST, a malformed \
                    readback is `malformed_response` with no receipt, and a clean readback then \
                    finds each committed submission.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(malformed_success_publishes_no_receipt(ctx)),
        },
        Scenario {
            id: "inconsistent_success_publishes_no_receipt",
            family: "9 adapter faults",
            claim: "A well-formed success body for another request key, another grant, another \
                    repository, another submitter or another Issue repository publishes no \
                    receipt: submit is `delivery_uncertain` after exactly one POST, readback is \
                    `malformed_response`.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(inconsistent_success_publishes_no_receipt(ctx)),
        },
        Scenario {
            id: "upstream_body_never_echoed",
            family: "9 adapter faults",
            claim: "An upstream error whose body and `Location` carry a marker and a credential \
                    keeps its native meaning (400 `bad_request` … 422 `unprocessable`, 5xx \
                    uncertain) while neither the marker nor the credential reaches the MCP \
                    result or the adapter's log.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(upstream_body_never_echoed(ctx)),
        },
        Scenario {
            id: "strict_inputs_refused_before_upstream",
            family: "9 adapter faults",
            claim: "IDs and pages given as strings, floats or booleans, and a submit without a \
                    request key, are refused as `invalid_input` naming the field, with not one \
                    request reaching the Core and nothing written (spec §6 strict inputs; the \
                    adapter never invents a key).",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(strict_inputs_refused_before_upstream(ctx)),
        },
    ]
}

const REPO: &str = "alice/lab";
/// The submit route of any grant of alice/lab, as the proxy matches it.
const SUBMIT: &str = "/api/v1/repos/alice/lab/agent-work-grants/*/issues";
/// The grant route.
const GRANT: &str = "/api/v1/repos/alice/lab/agent-work-grants/*";
/// The submission readback route.
const READBACK: &str = "/api/v1/repos/alice/lab/agent-work-grants/*/submissions/*";
/// A path no Core serves: a redirect's same-origin target.
const TARGET: &str = "/redirect-target/never-here";
const TITLE: &str = "Flaky test: lab::sync_timeout";
const BODY: &str = "Observed 3 failures in 20 runs.\n";

/// alice prepares and approves a grant for lab-bot, whose adapter reaches the
/// Core through the fault proxy; nothing is faulted yet.
async fn proxied_active_grant(ctx: &mut Ctx, task: &str) -> Step<(Bot, GrantRef, Proposal)> {
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let bot = ctx.bot_via_proxy("lab-bot").await?;
    let (grant, proposal) = active_grant(ctx, &alice, &bot, REPO, task).await?;
    Ok((bot, grant, proposal))
}

/// Checks a refused tool call: `code`, `native_status`, and no receipt (no
/// structured content, no `grant` or `submission` in the error).
fn expect_no_receipt(
    ctx: &Ctx,
    what: &str,
    reply: &ToolReply,
    code: &str,
    native_status: Option<i64>,
) -> Step<()> {
    ctx.expect_tool_error(what, reply, code)?;
    ctx.expect_eq(
        &format!("{what}: native_status"),
        reply.native_status(),
        native_status,
    )?;
    let leaked = reply.structured.is_some()
        || reply
            .error
            .as_ref()
            .is_some_and(|e| e.get("submission").is_some() || e.get("grant").is_some());
    ctx.expect(
        &format!("{what}: no receipt published"),
        !leaked,
        &reply.text,
    )
}

/// Checks the proxy's count of `method` requests on `pattern`.
fn expect_count(ctx: &Ctx, what: &str, actual: usize, expected: usize) -> Step<()> {
    ctx.expect_eq(what, actual, expected)
}

/// Reads the submission back cleanly through the adapter and checks that it
/// is the committed one: the key, `submitted`, an Issue of the repository.
async fn expect_committed(
    ctx: &Ctx,
    bot: &Bot,
    grant: &GrantRef,
    submission: &Submission,
) -> Step<Value> {
    let back = bot.submission(grant, &submission.request_key).await?;
    let back = ctx.expect_tool_ok("the same-key readback succeeds", &back)?;
    ctx.expect_eq(
        "readback native status",
        back["native_status"].as_i64(),
        Some(200),
    )?;
    let s = &back["submission"];
    ctx.expect_eq(
        "the receipt's request key",
        s["request_key"].as_str(),
        Some(submission.request_key.as_str()),
    )?;
    ctx.expect_eq(
        "the receipt's grant",
        s["grant_id"].as_i64(),
        Some(grant.id),
    )?;
    ctx.expect_eq(
        "the receipt's status",
        s["status"].as_str(),
        Some("submitted"),
    )?;
    let index = s["issue"]["index"]
        .as_i64()
        .ok_or_else(|| Abort::failed(format!("the receipt names no Issue: {s}")))?;
    let issue = ctx.setup().issue(REPO, index).await?;
    ctx.expect_status("the receipt's Issue exists natively", issue.status, 200)?;
    let issue = issue.json()?;
    ctx.expect_eq(
        "its title",
        issue["title"].as_str(),
        Some(submission.title.as_str()),
    )?;
    ctx.expect_eq(
        "its poster",
        issue["user"]["login"].as_str(),
        Some("lab-bot"),
    )?;
    ctx.expect_eq(
        "its grant binding",
        &issue["agent_work_grant"],
        &json!({"grant_id": grant.id, "request_key": submission.request_key}),
    )?;
    Ok(back)
}

/// The native readback of a key through lab-bot's own direct line: 404 when
/// nothing was committed.
async fn native_readback_status(ctx: &Ctx, grant: &GrantRef, key: &str) -> Step<u16> {
    Ok(ctx.native("lab-bot")?.submission(grant, key).await?.status)
}

/// Each redirect status, on a GET tool and a POST tool, is refused; neither
/// the same-origin target nor another origin's is ever contacted.
pub async fn redirect_refused(ctx: &mut Ctx) -> Outcome {
    let (bot, grant, proposal) = proxied_active_grant(ctx, "Redirects are refused").await?;
    let proxy = ctx.proxy().await?;
    // Another origin, a second loopback listener in front of the same Core:
    // an adapter that follows redirects anywhere would show up here.
    let decoy = crate::proxy::FaultProxy::start(ctx.core_url())
        .await
        .map_err(|e| Abort::errored(format!("decoy listener: {e}")))?;
    let mut seen = Vec::new();
    let mut keys = Vec::new();
    for status in [301u16, 302, 303, 307, 308] {
        ctx.step(&format!(
            "the Core's answer to a grant read is replaced by a {status} redirect"
        ));
        let gets = proxy.count("GET", GRANT);
        proxy.inject(
            "GET",
            GRANT,
            Fault::Respond(Canned::redirect(
                status,
                &format!("{}{TARGET}", proxy.url()),
            )),
        );
        let read = bot.get_grant(&grant).await?;
        expect_no_receipt(
            ctx,
            &format!("GET answered {status}"),
            &read,
            "upstream_error",
            Some(status.into()),
        )?;
        expect_count(
            ctx,
            "exactly one grant read reached the proxy",
            proxy.count("GET", GRANT),
            gets + 1,
        )?;

        ctx.step(&format!(
            "a submit is answered by a {status} redirect to another origin"
        ));
        let posts = proxy.count("POST", SUBMIT);
        proxy.inject(
            "POST",
            SUBMIT,
            Fault::Respond(Canned::redirect(
                status,
                &format!("{}{TARGET}", decoy.url()),
            )),
        );
        let submission = Submission::new(TITLE, BODY);
        let submit = bot.submit(&grant, &proposal, &submission).await?;
        expect_no_receipt(
            ctx,
            &format!("POST answered {status}"),
            &submit,
            "delivery_uncertain",
            Some(status.into()),
        )?;
        expect_count(
            ctx,
            "exactly one POST reached the proxy",
            proxy.count("POST", SUBMIT),
            posts + 1,
        )?;
        seen.push(json!({"status": status, "get": read.error_code(), "post": submit.error_code()}));
        keys.push(submission.request_key);
    }

    ctx.step("no redirect target was ever contacted");
    let followed: Vec<String> = proxy
        .requests()
        .into_iter()
        .filter(|(_, path)| path.starts_with("/redirect-target"))
        .map(|(m, p)| format!("{m} {p}"))
        .collect();
    ctx.expect(
        "the same-origin target saw nothing",
        followed.is_empty(),
        &format!("{followed:?}"),
    )?;
    ctx.expect(
        "the other origin saw nothing",
        decoy.requests().is_empty(),
        &format!("{:?}", decoy.requests()),
    )?;
    ctx.expect_eq("every fault was used", proxy.pending_faults(), 0)?;

    ctx.step("the Core holds nothing: no Issue, no submission for any key, the grant still active");
    ctx.expect_eq("Issues in alice/lab", issue_count(ctx, REPO).await?, 0)?;
    for key in &keys {
        ctx.expect_status(
            "native readback of a redirected submit",
            native_readback_status(ctx, &grant, key).await?,
            404,
        )?;
    }
    let native = ctx.native("lab-bot")?.get_grant(&grant).await?;
    ctx.expect_status("native grant read", native.status, 200)?;
    ctx.expect_eq(
        "grant state",
        native.json()?["state"].as_str(),
        Some("active"),
    )?;
    ctx.observe("redirect refusals", &seen);
    Ok(())
}

/// The Core commits; the answer is lost; the adapter says so without a
/// hidden retry, and the same key reconciles.
pub async fn lost_response_then_readback(ctx: &mut Ctx) -> Outcome {
    let (bot, grant, proposal) = proxied_active_grant(ctx, "Lost answers reconcile").await?;
    let proxy = ctx.proxy().await?;

    ctx.step("the Core commits lab-bot's submission, but the answer is lost");
    proxy.inject("POST", SUBMIT, Fault::DropResponse);
    let submission = Submission::new(TITLE, BODY);
    let lost = bot.submit(&grant, &proposal, &submission).await?;
    expect_no_receipt(ctx, "the lost submit", &lost, "delivery_uncertain", None)?;
    expect_count(
        ctx,
        "exactly one POST reached the proxy",
        proxy.count("POST", SUBMIT),
        1,
    )?;
    ctx.expect_eq("the drop fault was used", proxy.pending_faults(), 0)?;

    ctx.step("lab-bot reads back the same key and finds the committed submission");
    let back = expect_committed(ctx, &bot, &grant, &submission).await?;
    ctx.expect_eq("Issues in alice/lab", issue_count(ctx, REPO).await?, 1)?;
    ctx.observe("the readback", &back);

    ctx.step("an identical replay answers 200 with the same receipt, still one Issue");
    let replay = bot.submit(&grant, &proposal, &submission).await?;
    let replay = ctx.expect_tool_ok("the identical replay succeeds", &replay)?;
    ctx.expect_eq(
        "replay native status",
        replay["native_status"].as_i64(),
        Some(200),
    )?;
    ctx.expect_eq(
        "the replay's Issue",
        &replay["submission"]["issue"],
        &back["submission"]["issue"],
    )?;
    ctx.expect_eq("Issues in alice/lab", issue_count(ctx, REPO).await?, 1)?;
    expect_count(
        ctx,
        "two POSTs in all reached the proxy",
        proxy.count("POST", SUBMIT),
        2,
    )?;
    ctx.observe("the replay", &replay);
    Ok(())
}

/// The adapter's upstream timeout in this scenario: short, so the trial stays
/// fast, and far below the proxy's hold.
const SHORT_TIMEOUT: Duration = Duration::from_millis(400);
/// How long the proxy holds the answer back.
const HOLD: Duration = Duration::from_millis(1500);

/// An answer held past the timeout is uncertain (POST) or an upstream error
/// (GET), after one request each, and the committed submission reconciles.
pub async fn timeout_is_uncertain(ctx: &mut Ctx) -> Outcome {
    let (bot, grant, proposal) = proxied_active_grant(ctx, "Timeouts are uncertain").await?;
    let proxy = ctx.proxy().await?;
    // A second adapter of the same bot with a short upstream timeout: only
    // the faulted calls go through it, so a slow machine cannot time out the
    // flow that sets the grant up.
    let hasty = ctx
        .bot_via_proxy_with_timeout("lab-bot", SHORT_TIMEOUT)
        .await?;

    ctx.step("the Core commits the submission; its answer is held past the adapter's timeout");
    proxy.inject("POST", SUBMIT, Fault::Delay(HOLD));
    let submission = Submission::new(TITLE, BODY);
    let started = Instant::now();
    let held = hasty.submit(&grant, &proposal, &submission).await?;
    let waited = started.elapsed();
    expect_no_receipt(
        ctx,
        "the timed-out submit",
        &held,
        "delivery_uncertain",
        None,
    )?;
    ctx.expect(
        "the adapter gave up at its timeout, before the answer came",
        waited < HOLD,
        &format!("{waited:?} (timeout {SHORT_TIMEOUT:?}, hold {HOLD:?})"),
    )?;
    expect_count(
        ctx,
        "exactly one POST reached the proxy",
        proxy.count("POST", SUBMIT),
        1,
    )?;

    ctx.step("a readback held past the timeout is an upstream error");
    let gets = proxy.count("GET", READBACK);
    proxy.inject("GET", READBACK, Fault::Delay(HOLD));
    let read = hasty.submission(&grant, &submission.request_key).await?;
    expect_no_receipt(ctx, "the timed-out readback", &read, "upstream_error", None)?;
    expect_count(
        ctx,
        "exactly one readback reached the proxy",
        proxy.count("GET", READBACK),
        gets + 1,
    )?;
    ctx.expect_eq("every fault was used", proxy.pending_faults(), 0)?;

    ctx.step("the same-key readback finds the committed submission; one Issue, one POST");
    let back = expect_committed(ctx, &bot, &grant, &submission).await?;
    ctx.expect_eq("Issues in alice/lab", issue_count(ctx, REPO).await?, 1)?;
    expect_count(
        ctx,
        "still exactly one POST",
        proxy.count("POST", SUBMIT),
        1,
    )?;
    ctx.observe(
        "the results",
        &json!({"submit": held.error_code(), "readback": read.error_code()}),
    );
    ctx.observe("the readback", &back);
    Ok(())
}

/// Malformed success bodies publish no receipt, on submit and on readback.
pub async fn malformed_success_publishes_no_receipt(ctx: &mut Ctx) -> Outcome {
    let (bot, grant, proposal) = proxied_active_grant(ctx, "Malformed answers").await?;
    let proxy = ctx.proxy().await?;
    // A success body may be JSON and still malformed: the grant alone,
    // its receipt missing.
    let native = ctx.native("lab-bot")?.get_grant(&grant).await?;
    ctx.expect_status("native grant read", native.status, 200)?;
    let grant_alone = json!({ "grant": native.json()? }).to_string();
    let bodies: [(&str, Fault); 4] = [
        ("JSON cut mid-object", Fault::MalformedJson),
        (
            "an HTML page",
            Fault::ReplaceBody("<html><body>OK</body></html>".into()),
        ),
        ("a JSON array", Fault::ReplaceBody("[]".into())),
        (
            "the grant without a submission",
            Fault::ReplaceBody(grant_alone.into()),
        ),
    ];
    let mut submitted = Vec::new();
    for (n, (what, fault)) in bodies.into_iter().enumerate() {
        ctx.step(&format!(
            "the Core's 201 answer to a submit is replaced by {what}"
        ));
        proxy.inject("POST", SUBMIT, fault);
        let submission = Submission::new(TITLE, BODY);
        let reply = bot.submit(&grant, &proposal, &submission).await?;
        expect_no_receipt(
            ctx,
            &format!("submit answered with {what}"),
            &reply,
            "delivery_uncertain",
            Some(201),
        )?;
        expect_count(
            ctx,
            "one more POST reached the proxy",
            proxy.count("POST", SUBMIT),
            n + 1,
        )?;
        submitted.push(submission);
    }

    ctx.step("a readback whose 200 body is malformed publishes no receipt either");
    proxy.inject("GET", READBACK, Fault::MalformedJson);
    let read = bot.submission(&grant, &submitted[0].request_key).await?;
    expect_no_receipt(
        ctx,
        "malformed readback",
        &read,
        "malformed_response",
        Some(200),
    )?;
    ctx.expect_eq("every fault was used", proxy.pending_faults(), 0)?;

    ctx.step("clean readbacks find every committed submission: one Issue each");
    for submission in &submitted {
        expect_committed(ctx, &bot, &grant, submission).await?;
    }
    ctx.expect_eq("Issues in alice/lab", issue_count(ctx, REPO).await?, 4)?;
    expect_count(ctx, "no hidden POST", proxy.count("POST", SUBMIT), 4)?;
    ctx.observe("the readback error", &read.error);
    Ok(())
}

/// Consistent-looking success bodies that belong elsewhere publish no
/// receipt.
pub async fn inconsistent_success_publishes_no_receipt(ctx: &mut Ctx) -> Outcome {
    let (bot, grant, proposal) = proxied_active_grant(ctx, "Inconsistent answers").await?;
    let proxy = ctx.proxy().await?;

    ctx.step("a clean submission gives the shape of a true answer");
    let first = Submission::new(TITLE, BODY);
    let ok = bot.submit(&grant, &proposal, &first).await?;
    ctx.expect_tool_ok("the clean submit succeeds", &ok)?;
    let truth = ctx
        .native("lab-bot")?
        .submission(&grant, &first.request_key)
        .await?;
    ctx.expect_status("native readback", truth.status, 200)?;
    let truth = truth.json()?;

    // Each body is the true answer with one thing in it belonging elsewhere;
    // everything else (the key included) is what the bot sent.
    type Change = fn(&mut Value, i64, &str);
    fn own_key(v: &mut Value, key: &str) {
        v["submission"]["request_key"] = json!(key);
    }
    let changes: [(&str, Change); 5] = [
        // The true receipt of the first submission, under its own key.
        ("another request key", |_, _, _| {}),
        ("another grant", |v, id, key| {
            own_key(v, key);
            v["grant"]["id"] = json!(id + 1000);
            v["submission"]["grant_id"] = json!(id + 1000);
        }),
        ("another repository", |v, _, key| {
            own_key(v, key);
            v["grant"]["repository"]["name"] = json!("elsewhere");
            v["grant"]["repository"]["full_name"] = json!("alice/elsewhere");
        }),
        ("another submitter", |v, _, key| {
            own_key(v, key);
            v["submission"]["submitted_by"] = json!({"id": 424242, "login": "other-bot"});
        }),
        ("an Issue of another repository", |v, _, key| {
            own_key(v, key);
            let repo = v["submission"]["issue"]["repository_id"]
                .as_i64()
                .unwrap_or(0);
            v["submission"]["issue"]["repository_id"] = json!(repo + 1000);
        }),
    ];
    let mut submitted = Vec::new();
    for (what, change) in changes {
        ctx.step(&format!(
            "a submit's 201 answer is replaced by one for {what}"
        ));
        let submission = Submission::new(TITLE, BODY);
        let mut body = truth.clone();
        change(&mut body, grant.id, &submission.request_key);
        let posts = proxy.count("POST", SUBMIT);
        proxy.inject("POST", SUBMIT, Fault::ReplaceBody(body.to_string().into()));
        let reply = bot.submit(&grant, &proposal, &submission).await?;
        expect_no_receipt(
            ctx,
            &format!("submit answered for {what}"),
            &reply,
            "delivery_uncertain",
            Some(201),
        )?;
        expect_count(
            ctx,
            "exactly one more POST reached the proxy",
            proxy.count("POST", SUBMIT),
            posts + 1,
        )?;
        submitted.push(submission);
    }

    ctx.step("a readback answered with another key's receipt publishes no receipt");
    proxy.inject(
        "GET",
        READBACK,
        Fault::ReplaceBody(truth.to_string().into()),
    );
    let read = bot.submission(&grant, &submitted[1].request_key).await?;
    expect_no_receipt(
        ctx,
        "inconsistent readback",
        &read,
        "malformed_response",
        Some(200),
    )?;
    ctx.expect_eq("every fault was used", proxy.pending_faults(), 0)?;

    ctx.step("clean readbacks find every committed submission: one Issue each");
    for submission in &submitted {
        expect_committed(ctx, &bot, &grant, submission).await?;
    }
    ctx.expect_eq("Issues in alice/lab", issue_count(ctx, REPO).await?, 6)?;
    ctx.observe("the readback error", &read.error);
    Ok(())
}

/// Upstream error bodies and `Location` headers never reach the caller or
/// the log; the native meaning is kept.
pub async fn upstream_body_never_echoed(ctx: &mut Ctx) -> Outcome {
    let (bot, grant, proposal) = proxied_active_grant(ctx, "Bodies are never echoed").await?;
    let proxy = ctx.proxy().await?;
    let marker = format!("gg-marker-{}", uuid::Uuid::new_v4().simple());
    // Looks like a credential; registered so the report never shows it even
    // if an adapter leaks it.
    let credential = format!("ggfake{}", uuid::Uuid::new_v4().simple());
    ctx.setup().secrets().register(&credential);
    let canned = |status: u16| Canned {
        status,
        headers: vec![
            (
                "location".into(),
                format!("http://internal.invalid/{marker}?token={credential}"),
            ),
            (
                "x-upstream-debug".into(),
                format!("{marker} token {credential}"),
            ),
        ],
        body: json!({
            "message": format!("{marker}: denied for token {credential}"),
            "url": format!("http://internal.invalid/{marker}"),
        })
        .to_string()
        .into(),
    };
    let posts: [(u16, &str); 7] = [
        (400, "bad_request"),
        (401, "unauthenticated"),
        (403, "forbidden"),
        (404, "not_found"),
        (409, "conflict"),
        (422, "unprocessable"),
        (500, "delivery_uncertain"),
    ];
    let gets: [(u16, &str); 3] = [
        (404, "not_found"),
        (409, "conflict"),
        (503, "upstream_error"),
    ];
    let mut seen = Vec::new();
    for (status, code) in posts {
        ctx.step(&format!("a submit is answered {status} with a marked body"));
        proxy.inject("POST", SUBMIT, Fault::Respond(canned(status)));
        let reply = bot
            .submit(&grant, &proposal, &Submission::new(TITLE, BODY))
            .await?;
        expect_no_receipt(
            ctx,
            &format!("submit answered {status}"),
            &reply,
            code,
            Some(status.into()),
        )?;
        expect_unmarked(ctx, &reply, &marker, &credential)?;
        seen.push(json!({"tool": reply.tool, "status": status, "code": code}));
    }
    for (status, code) in gets {
        ctx.step(&format!(
            "a grant read is answered {status} with a marked body"
        ));
        proxy.inject("GET", GRANT, Fault::Respond(canned(status)));
        let reply = bot.get_grant(&grant).await?;
        expect_no_receipt(
            ctx,
            &format!("grant read answered {status}"),
            &reply,
            code,
            Some(status.into()),
        )?;
        expect_unmarked(ctx, &reply, &marker, &credential)?;
        seen.push(json!({"tool": reply.tool, "status": status, "code": code}));
    }
    ctx.expect_eq("every fault was used", proxy.pending_faults(), 0)?;
    expect_count(
        ctx,
        "one POST per submit",
        proxy.count("POST", SUBMIT),
        posts.len(),
    )?;

    ctx.step("the adapter's log holds neither the marker nor the credential");
    let log = bot.adapter_log();
    ctx.expect(
        "no marker in the adapter's log",
        !log.contains(&marker),
        "the marker is in the log",
    )?;
    ctx.expect(
        "no credential in the adapter's log",
        !log.contains(&credential),
        "the credential is in the log",
    )?;

    ctx.step("nothing reached the Core: no Issue, the grant still active");
    ctx.expect_eq("Issues in alice/lab", issue_count(ctx, REPO).await?, 0)?;
    let native = ctx.native("lab-bot")?.get_grant(&grant).await?;
    ctx.expect_status("native grant read", native.status, 200)?;
    ctx.expect_eq(
        "grant state",
        native.json()?["state"].as_str(),
        Some("active"),
    )?;
    ctx.observe("error codes kept", &seen);
    Ok(())
}

/// Checks that a tool result carries neither the marker nor the credential.
fn expect_unmarked(ctx: &Ctx, reply: &ToolReply, marker: &str, credential: &str) -> Step<()> {
    let text = format!(
        "{}{}",
        reply.text,
        reply
            .structured
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default()
    );
    ctx.expect(
        "the result does not echo the upstream body or Location",
        !text.contains(marker),
        &text,
    )?;
    ctx.expect(
        "the result does not echo the credential",
        !text.contains(credential),
        "the credential is in the result",
    )
}

/// Inputs of the wrong JSON type, and a submit without its key, never leave
/// the adapter.
pub async fn strict_inputs_refused_before_upstream(ctx: &mut Ctx) -> Outcome {
    let (bot, grant, proposal) = proxied_active_grant(ctx, "Strict inputs").await?;
    let proxy = ctx.proxy().await?;
    let before = proxy.requests().len();
    let triple = json!({
        "owner": grant.owner, "repo": grant.repo, "grant_id": grant.id,
        "proposal_schema": proposal.schema, "proposal_version": proposal.version,
        "proposal_digest": proposal.digest,
    });
    let with = |key: &str, value: Value| {
        let mut args = triple.clone();
        args[key] = value;
        args
    };
    let mut without_key = with("title", json!(TITLE));
    without_key["body"] = json!(BODY);
    let mut string_id_submit = without_key.clone();
    string_id_submit["request_key"] = json!(uuid::Uuid::new_v4().to_string());
    string_id_submit["grant_id"] = json!(grant.id.to_string());
    let cases: Vec<(&str, &str, Value, &str)> = vec![
        (
            "a grant id as a decimal string",
            "get_agent_work_grant",
            json!({"owner": grant.owner, "repo": grant.repo, "grant_id": grant.id.to_string()}),
            "grant_id",
        ),
        (
            "a grant id as a float",
            "get_agent_work_grant",
            json!({"owner": grant.owner, "repo": grant.repo, "grant_id": grant.id as f64}),
            "grant_id",
        ),
        (
            "a page as a decimal string",
            "list_agent_work_grants",
            json!({"page": "1"}),
            "page",
        ),
        (
            "a page as a boolean",
            "list_agent_work_grants",
            json!({"page": true}),
            "page",
        ),
        (
            "a submit with a string grant id",
            "submit_agent_work_proposal",
            string_id_submit,
            "grant_id",
        ),
        (
            "a submit without a request key",
            "submit_agent_work_proposal",
            without_key,
            "request_key",
        ),
    ];
    let mut seen = Vec::new();
    for (what, tool, args, field) in cases {
        ctx.step(&format!("lab-bot calls {tool} with {what}"));
        let reply = bot.call(tool, args).await?;
        expect_no_receipt(ctx, what, &reply, "invalid_input", None)?;
        ctx.expect_eq(
            &format!("{what}: the refused field"),
            reply.error.as_ref().and_then(|e| e["field"].as_str()),
            Some(field),
        )?;
        ctx.expect_eq(
            "no request reached the proxy",
            proxy.requests().len(),
            before,
        )?;
        seen.push(json!({"case": what, "code": reply.error_code(), "field": field}));
    }

    ctx.step("nothing was written: no Issue");
    ctx.expect_eq("Issues in alice/lab", issue_count(ctx, REPO).await?, 0)?;
    ctx.observe("refusals", &seen);
    Ok(())
}
