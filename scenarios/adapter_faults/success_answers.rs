//! Family 9: adapter faults, second part — malformed and inconsistent
//! success answers publish no receipt. (Marked error answers and strict
//! inputs are in `error_answers.rs`, the same family.)
//!
//! Each faulted answer is made at the proxy from the Core's own answer, so
//! the Core really committed what the adapter was told about (or not).

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT};
use crate::support::proxied::{
    BODY, CONFIRM, GRANT, READBACK, SUBMIT, TITLE, expect_committed, expect_no_receipt,
    proxied_active_grant,
};

/// A malformed 201 to a submit is `delivery_uncertain` and a malformed
/// readback `malformed_response`, neither publishing a receipt; a clean
/// readback then finds the submission.
#[scenario(AdapterFaults, parity, clauses = ["S6.results.consistent", "S6.uncertain"])]
async fn malformed_success_publishes_no_receipt(ctx: &mut Ctx) -> Outcome {
    // Malformed: cut JSON, HTML, a JSON array, a grant without its
    // submission. The submit makes exactly one POST; the clean readback finds
    // each committed submission.
    let (bot, grant, proposal) = proxied_active_grant(ctx, "Malformed answers").await?;
    let proxy = ctx.proxy().await?;
    // A success body may be JSON and still malformed: the grant alone, its
    // receipt missing.
    let native = ctx.native(LAB_BOT)?.get_grant(&grant).await?;
    ctx.expect_status("native grant read", native.status, 200)?;
    let grant_alone = json!({ "grant": native.grant()?.raw }).to_string();
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
        let submission = NewIssue::new(TITLE, BODY);
        let reply = bot.submit(&grant, &proposal, &submission).await?;
        let what = format!("submit answered with {what}");
        expect_no_receipt(ctx, &what, &reply, "delivery_uncertain", Some(201))?;
        ctx.expect_eq(
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

    expect_all_committed(ctx, &bot, &grant, &submitted, 4).await?;
    ctx.expect_eq("no hidden POST", proxy.count("POST", SUBMIT), 4)?;
    ctx.observe("the readback error", &read.error);
    Ok(())
}

/// A well-formed success that does not answer the submission sent publishes
/// no receipt: submit is `delivery_uncertain` after one POST, readback
/// `malformed_response`.
#[scenario(AdapterFaults, parity, clauses = ["S6.results.consistent"])]
async fn inconsistent_success_publishes_no_receipt(ctx: &mut Ctx) -> Outcome {
    // Not the submission sent: another request key, grant, repository,
    // submitter or Issue repository; a grant of another proposal than the
    // triple sent; or a grant no Core can hold (`state_revision` 0, since §2
    // starts it at 1; a digest not in lowercase hex).
    let (bot, grant, proposal) = proxied_active_grant(ctx, "Inconsistent answers").await?;
    let proxy = ctx.proxy().await?;

    ctx.step("a clean submission gives the shape of a true answer");
    let first = NewIssue::new(TITLE, BODY);
    let ok = bot.submit(&grant, &proposal, &first).await?;
    ctx.expect_eq("the clean submit succeeds", ok.native_status(), Some(201))?;
    let answer = ctx
        .native(LAB_BOT)?
        .submission(&grant, &first.request_key)
        .await?;
    ctx.expect_status("native readback", answer.status, 200)?;
    let truth = answer.json()?;
    let issue_repo = answer.submitted()?.receipt.issue.repository_id;

    // Each body is the true answer with one thing in it belonging elsewhere;
    // everything else (the key included) is what the bot sent. The first is
    // the true receipt of the first submission, under its own key.
    let elsewhere = grant.id + 1000;
    let cases: [(&str, Vec<(&str, Value)>); 7] = [
        ("another request key", vec![]),
        (
            "another grant",
            vec![
                ("/grant/id", json!(elsewhere)),
                ("/submission/grant_id", json!(elsewhere)),
            ],
        ),
        (
            "another repository",
            vec![
                ("/grant/repository/name", json!("elsewhere")),
                ("/grant/repository/full_name", json!("alice/elsewhere")),
            ],
        ),
        (
            "another submitter",
            vec![(
                "/submission/submitted_by",
                json!({"id": 424242, "login": "other-bot"}),
            )],
        ),
        (
            "an Issue of another repository",
            vec![("/submission/issue/repository_id", json!(issue_repo + 1000))],
        ),
        (
            "a grant at state_revision 0",
            vec![("/grant/state_revision", json!(0))],
        ),
        (
            "a grant of another proposal",
            vec![("/grant/proposal/digest", json!("0".repeat(64)))],
        ),
    ];
    let mut submitted = Vec::new();
    for (n, (what, edits)) in cases.into_iter().enumerate() {
        ctx.step(&format!(
            "a submit's 201 answer is replaced by one for {what}"
        ));
        let submission = NewIssue::new(TITLE, BODY);
        let mut body = truth.clone();
        if n > 0 {
            set(
                &mut body,
                "/submission/request_key",
                json!(submission.request_key),
            )?;
        }
        for (pointer, value) in edits {
            set(&mut body, pointer, value)?;
        }
        let posts = proxy.count("POST", SUBMIT);
        proxy.inject("POST", SUBMIT, Fault::ReplaceBody(body.to_string().into()));
        let reply = bot.submit(&grant, &proposal, &submission).await?;
        let what = format!("submit answered for {what}");
        expect_no_receipt(ctx, &what, &reply, "delivery_uncertain", Some(201))?;
        ctx.expect_eq(
            "exactly one more POST reached the proxy",
            proxy.count("POST", SUBMIT),
            posts + 1,
        )?;
        submitted.push(submission);
    }

    ctx.step("a readback answered with another key's receipt publishes no receipt");
    let other_key = Fault::ReplaceBody(truth.to_string().into());
    proxy.inject("GET", READBACK, other_key);
    let read = bot.submission(&grant, &submitted[1].request_key).await?;
    expect_no_receipt(
        ctx,
        "inconsistent readback",
        &read,
        "malformed_response",
        Some(200),
    )?;

    ctx.step("a readback whose grant's digest is in upper case publishes no receipt");
    let mut upper = truth.clone();
    let digest = truth["grant"]["proposal"]["digest"].as_str().unwrap_or("");
    set(
        &mut upper,
        "/grant/proposal/digest",
        json!(digest.to_uppercase()),
    )?;
    proxy.inject(
        "GET",
        READBACK,
        Fault::ReplaceBody(upper.to_string().into()),
    );
    let upper = bot.submission(&grant, &first.request_key).await?;
    let what = "a readback with an upper-case digest";
    expect_no_receipt(ctx, what, &upper, "malformed_response", Some(200))?;
    ctx.expect_eq("every fault was used", proxy.pending_faults(), 0)?;

    expect_all_committed(ctx, &bot, &grant, &submitted, 8).await?;
    ctx.observe("the readback error", &read.error);
    Ok(())
}

/// Sets the member at a JSON `pointer` of a faulted body; the member must
/// exist (the body is the Core's true answer, already read as the contract
/// says).
fn set(body: &mut Value, pointer: &str, value: Value) -> Step<()> {
    match body.pointer_mut(pointer) {
        Some(slot) => {
            *slot = value;
            Ok(())
        }
        None => Err(Abort::failed(format!(
            "the true answer has no {pointer}: {body}"
        ))),
    }
}

/// Clean readbacks find every committed submission, each its one Issue, and
/// alice/lab holds `issues` Issues in all: the faulted answers hid no write
/// and made none.
async fn expect_all_committed(
    ctx: &Ctx,
    bot: &Bot,
    grant: &GrantRef,
    submitted: &[NewIssue],
    issues: usize,
) -> Step<()> {
    ctx.step("clean readbacks find every committed submission: one Issue each");
    for submission in submitted {
        expect_committed(ctx, bot, grant, submission).await?;
    }
    ctx.expect_eq(
        "Issues in alice/lab",
        flows::issue_count(ctx, LAB).await?,
        issues,
    )
}

/// The single-grant tools check a 200 against the request, as submit and
/// readback do: another grant, or one in another repository, publishes
/// nothing.
#[scenario(AdapterFaults, parity, clauses = ["S6.results.consistent", "S6.uncertain"])]
async fn inconsistent_grant_answers_publish_nothing(ctx: &mut Ctx) -> Outcome {
    // Spec §6: `get_agent_work_grant` is then `malformed_response`, and
    // `confirm_agent_work_grant` (a write, answered at the proxy without
    // reaching the Core) `delivery_uncertain`.
    let (bot, grant, proposal) = proxied_active_grant(ctx, "Inconsistent grants").await?;
    let proxy = ctx.proxy().await?;
    let truth = ctx.native(LAB_BOT)?.get_grant(&grant).await?.json()?;
    let cases: [(&str, Vec<(&str, Value)>); 2] = [
        ("another grant", vec![("/id", json!(grant.id + 1000))]),
        (
            "another repository",
            vec![
                ("/repository/name", json!("elsewhere")),
                ("/repository/full_name", json!("alice/elsewhere")),
            ],
        ),
    ];
    for (what, edits) in cases {
        let mut body = truth.clone();
        for (pointer, value) in edits {
            set(&mut body, pointer, value)?;
        }
        ctx.step(&format!(
            "the grant's answers are replaced by one for {what}"
        ));
        proxy.inject("GET", GRANT, Fault::ReplaceBody(body.to_string().into()));
        let read = bot.get_grant(&grant).await?;
        let case = format!("get_agent_work_grant answered for {what}");
        expect_no_receipt(ctx, &case, &read, "malformed_response", Some(200))?;
        let canned = Canned {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string().into(),
        };
        proxy.inject("POST", CONFIRM, Fault::Respond(canned));
        let confirmed = bot.confirm(&grant, &proposal).await?;
        let case = format!("confirm_agent_work_grant answered for {what}");
        expect_no_receipt(ctx, &case, &confirmed, "delivery_uncertain", Some(200))?;
        ctx.observe(what, &(read.error_code(), confirmed.error_code()));
    }
    ctx.expect_eq("every fault was used", proxy.pending_faults(), 0)?;
    let now = flows::native_status(ctx, LAB_BOT, &grant).await?;
    ctx.expect_eq("the grant is as it was", now, (state::ACTIVE.to_owned(), 3))
}
