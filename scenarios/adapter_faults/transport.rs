//! Family 9: adapter faults, through the fault proxy between the adapter and
//! the Core — redirects, lost answers and timeouts. (Malformed,
//! inconsistent and marked answers, and strict inputs, are in
//! `success_answers.rs`, the same family.)
//!
//! The proxy counts every request, so "exactly one POST" is counted, not
//! assumed; what the Core holds afterwards is read natively.

use std::time::{Duration, Instant};

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT};
use crate::support::proxied::{
    BODY, CONFIRM, GRANT, READBACK, SUBMIT, TITLE, expect_committed, expect_no_receipt,
    expect_still_active, proxied_active_grant,
};

/// A path no Core serves: a redirect's same-origin target.
const TARGET: &str = "/redirect-target/never-here";
/// A redirect answer (301, 302, 303, 307, 308) is never followed: its target,
/// same origin or not, is never contacted.
#[scenario(AdapterFaults, parity, clauses = ["S6.no-redirects"])]
async fn redirect_refused(ctx: &mut Ctx) -> Outcome {
    // A GET tool reports `upstream_error` and a POST tool
    // `delivery_uncertain`, with the redirect's status.
    let (bot, grant, proposal) = proxied_active_grant(ctx, "Redirects are refused").await?;
    let proxy = ctx.proxy().await?;
    // Another origin, a second loopback listener in front of the same Core:
    // an adapter that follows redirects anywhere would show up here.
    let decoy = FaultProxy::start(ctx.core_url())
        .await
        .map_err(|e| Abort::errored(format!("decoy listener: {e}")))?;
    let mut seen = Vec::new();
    let mut keys = Vec::new();
    for status in [301u16, 302, 303, 307, 308] {
        ctx.step(&format!(
            "the Core's answer to a grant read is replaced by a {status} redirect"
        ));
        let gets = proxy.count("GET", GRANT);
        let same_origin = format!("{}{TARGET}", proxy.url());
        proxy.inject(
            "GET",
            GRANT,
            Fault::Respond(Canned::redirect(status, &same_origin)),
        );
        let read = bot.get_grant(&grant).await?;
        let what = format!("GET answered {status}");
        expect_no_receipt(ctx, &what, &read, "upstream_error", Some(status.into()))?;
        ctx.expect_eq(
            "exactly one grant read reached the proxy",
            proxy.count("GET", GRANT),
            gets + 1,
        )?;

        ctx.step(&format!(
            "a submit is answered by a {status} redirect to another origin"
        ));
        let posts = proxy.count("POST", SUBMIT);
        let elsewhere = format!("{}{TARGET}", decoy.url());
        proxy.inject(
            "POST",
            SUBMIT,
            Fault::Respond(Canned::redirect(status, &elsewhere)),
        );
        let submission = NewIssue::new(TITLE, BODY);
        let submit = bot.submit(&grant, &proposal, &submission).await?;
        let what = format!("POST answered {status}");
        expect_no_receipt(
            ctx,
            &what,
            &submit,
            "delivery_uncertain",
            Some(status.into()),
        )?;
        ctx.expect_eq(
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
    ctx.expect_eq(
        "Issues in alice/lab",
        flows::issue_count(ctx, LAB).await?,
        0,
    )?;
    let native = ctx.native(LAB_BOT)?;
    for key in &keys {
        let answer = native.submission(&grant, key).await?;
        ctx.expect_status("native readback of a redirected submit", answer.status, 404)?;
    }
    expect_still_active(ctx, &grant).await?;
    ctx.observe("redirect refusals", &seen);
    Ok(())
}

/// A committed submission whose answer is lost is `delivery_uncertain` after
/// one POST, found by same-key readback, and replayed identically without a
/// second Issue.
#[scenario(AdapterFaults, parity, clauses = ["S6.uncertain", "S6.post-once"])]
async fn lost_response_then_readback(ctx: &mut Ctx) -> Outcome {
    // The identical replay answers 200 with still one Issue. A confirmation
    // whose answer is lost is `delivery_uncertain` after one POST too, and
    // committed.
    let (bot, grant, proposal) = proxied_active_grant(ctx, "Lost answers reconcile").await?;
    let proxy = ctx.proxy().await?;

    ctx.step("the Core commits lab-bot's submission, but the answer is lost");
    proxy.inject("POST", SUBMIT, Fault::DropResponse);
    let submission = NewIssue::new(TITLE, BODY);
    let lost = bot.submit(&grant, &proposal, &submission).await?;
    expect_no_receipt(ctx, "the lost submit", &lost, "delivery_uncertain", None)?;
    ctx.expect_eq(
        "exactly one POST reached the proxy",
        proxy.count("POST", SUBMIT),
        1,
    )?;
    ctx.expect_eq("the drop fault was used", proxy.pending_faults(), 0)?;

    ctx.step("lab-bot reads back the same key and finds the committed submission");
    let back = expect_committed(ctx, &bot, &grant, &submission).await?;
    ctx.expect_eq(
        "Issues in alice/lab",
        flows::issue_count(ctx, LAB).await?,
        1,
    )?;
    ctx.observe("the readback", &back.raw);

    ctx.step("an identical replay answers 200 with the same receipt, still one Issue");
    let replay = bot.submit(&grant, &proposal, &submission).await?;
    ctx.expect_eq("replay native status", replay.native_status(), Some(200))?;
    let replayed = replay.submitted()?.receipt;
    ctx.expect_eq("the replay's Issue", &replayed.issue, &back.issue)?;
    ctx.expect_eq(
        "Issues in alice/lab",
        flows::issue_count(ctx, LAB).await?,
        1,
    )?;
    ctx.expect_eq(
        "two POSTs in all reached the proxy",
        proxy.count("POST", SUBMIT),
        2,
    )?;
    ctx.observe("the replay", &replayed.raw);

    ctx.step("the Core commits lab-bot's confirmation of a second grant, but the answer is lost");
    let alice = ctx.human("alice")?;
    let (second, _) = alice
        .prepare_grant(LAB, LAB_BOT, "a second grant", "summary")
        .await?;
    let second_proposal = bot.read_proposal(&second).await?;
    let confirms = proxy.count("POST", CONFIRM);
    proxy.inject("POST", CONFIRM, Fault::DropResponse);
    let lost = bot.confirm(&second, &second_proposal).await?;
    expect_no_receipt(ctx, "the lost confirm", &lost, "delivery_uncertain", None)?;
    ctx.expect_eq(
        "exactly one more confirm POST reached the proxy",
        proxy.count("POST", CONFIRM),
        confirms + 1,
    )?;
    let read = bot.get_grant(&second).await?;
    ctx.expect_eq(
        "the confirmation was committed: the grant awaits the human",
        read.grant()?.state.as_str(),
        state::AWAITING_HUMAN,
    )?;
    Ok(())
}

/// The adapter's upstream timeout in this scenario: short, so the trial stays
/// fast, and far below the proxy's hold.
const SHORT_TIMEOUT: Duration = Duration::from_millis(400);
/// How long the proxy holds the answer back.
const HOLD: Duration = Duration::from_millis(1500);

/// An answer held past the adapter's upstream timeout makes a submit
/// `delivery_uncertain` and a readback `upstream_error`, within that timeout.
#[scenario(AdapterFaults, parity, clauses = ["S6.timeout", "S6.uncertain", "S6.post-once"])]
async fn timeout_is_uncertain(ctx: &mut Ctx) -> Outcome {
    // The submit makes exactly one POST, and the committed submission is then
    // found by same-key readback.
    let (bot, grant, proposal) = proxied_active_grant(ctx, "Timeouts are uncertain").await?;
    let proxy = ctx.proxy().await?;
    // A second adapter of the same bot with a short upstream timeout: only
    // the faulted calls go through it, so a slow machine cannot time out the
    // flow that sets the grant up.
    let hasty = ctx
        .bot_builder(LAB_BOT)
        .via_proxy()
        .upstream_timeout(SHORT_TIMEOUT)
        .start()
        .await?;

    ctx.step("the Core commits the submission; its answer is held past the adapter's timeout");
    proxy.inject("POST", SUBMIT, Fault::Delay(HOLD));
    let submission = NewIssue::new(TITLE, BODY);
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
    ctx.expect_eq(
        "exactly one POST reached the proxy",
        proxy.count("POST", SUBMIT),
        1,
    )?;

    ctx.step("a readback held past the timeout is an upstream error");
    let gets = proxy.count("GET", READBACK);
    proxy.inject("GET", READBACK, Fault::Delay(HOLD));
    let read = hasty.submission(&grant, &submission.request_key).await?;
    expect_no_receipt(ctx, "the timed-out readback", &read, "upstream_error", None)?;
    ctx.expect_eq(
        "exactly one readback reached the proxy",
        proxy.count("GET", READBACK),
        gets + 1,
    )?;
    ctx.expect_eq("every fault was used", proxy.pending_faults(), 0)?;

    ctx.step("the same-key readback finds the committed submission; one Issue, one POST");
    let back = expect_committed(ctx, &bot, &grant, &submission).await?;
    ctx.expect_eq(
        "Issues in alice/lab",
        flows::issue_count(ctx, LAB).await?,
        1,
    )?;
    ctx.expect_eq("still exactly one POST", proxy.count("POST", SUBMIT), 1)?;
    ctx.observe(
        "the results",
        &json!({"submit": held.error_code(), "readback": read.error_code()}),
    );
    ctx.observe("the readback", &back.raw);
    Ok(())
}
