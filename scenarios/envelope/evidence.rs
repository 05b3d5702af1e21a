//! Family 17 (spec §7.16, §8): the repository grant envelope — parsed, bounded
//! evidence only, fail-closed. A human may attach an envelope when preparing
//! a grant; the grant then shows `{digest, path_count}` (the digest
//! recomputed here: paths sorted by byte order, JCS, SHA-256), never the
//! patterns, and no submission to it is ever accepted. Without one the
//! grant is `repository_grant: null` and works exactly as before. (Invalid
//! envelopes and "never synthesised" are in `refusals.rs`.)

use grantgate_engine::prelude::*;

use crate::support::envelopes::{envelope, typed};
use crate::support::flows::{self, LAB, LAB_BOT, Watch};

/// alice prepares a grant for lab-bot with `envelope` typed into the form;
/// the Core must answer 303 to the new grant's page.
async fn prepare_enveloped(ctx: &Ctx, alice: &Human, task: &str, envelope: &str) -> Step<GrantRef> {
    let (grant, page) = alice
        .prepare_grant_with_envelope(LAB, LAB_BOT, task, "summary", envelope)
        .await?;
    ctx.expect_eq(
        "preparing with a valid envelope redirects with 303",
        page.first_redirect().map(|(status, _)| status),
        Some(303),
    )?;
    grant.ok_or_else(|| {
        Abort::failed(format!(
            "preparing with a valid envelope landed on {} (status {}), not on a grant page",
            page.url, page.status
        ))
    })
}

/// The envelope evidence of `grant` as its agent reads it natively.
async fn evidence(ctx: &Ctx, grant: &GrantRef) -> Step<Option<EnvelopeEvidence>> {
    let answer = ctx.native(LAB_BOT)?.get_grant(grant).await?;
    ctx.expect_status("lab-bot reads the grant natively", answer.status, 200)?;
    Ok(answer.grant()?.envelope()?.cloned())
}

/// Without an envelope, the grant's `repository_grant` is `null`, natively
/// and through the adapter, and the grant works exactly as before.
#[scenario(Envelope, parity, clauses = ["S8.absent"])]
async fn no_envelope_is_null(ctx: &mut Ctx) -> Outcome {
    // Without: the field left empty, or not sent at all. As before: confirm,
    // approve, submit 201.
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let (grant, proposal) = flows::active_grant(ctx, &alice, &bot, LAB, "No envelope.").await?;
    ctx.step("the grant, prepared with the field empty, has repository_grant null");
    ctx.expect_eq("natively", evidence(ctx, &grant).await?, None)?;
    let through_adapter = bot.get_grant(&grant).await?.grant()?;
    ctx.expect_eq("through the adapter", through_adapter.envelope()?, None)?;

    ctx.step("lab-bot submits as before");
    let reply = bot
        .submit(
            &grant,
            &proposal,
            &NewIssue::new("Plain grant", "Works as before.\n"),
        )
        .await?;
    ctx.expect_tool_ok("the submission", &reply)?;
    ctx.expect_eq("native status", reply.native_status(), Some(201))?;
    ctx.expect_eq("one Issue", flows::issue_count(ctx, LAB).await?, 1)?;

    ctx.step("alice prepares a grant whose form carries no repository_grant field at all");
    let mut form = alice
        .prepare_form(LAB, LAB_BOT, "No field.", "summary")
        .await?;
    form.remove(fields::REPOSITORY_GRANT);
    let landed = alice.submit(&form).await?;
    let id = core_api::grant_id_of_page(&landed.url)
        .filter(|_| landed.status == 200)
        .ok_or_else(|| {
            Abort::failed(format!(
                "preparing without the field landed on {} (status {})",
                landed.url, landed.status
            ))
        })?;
    let bare = GrantRef {
        id,
        ..grant.clone()
    };
    ctx.expect_eq("repository_grant", evidence(ctx, &bare).await?, None)?;
    ctx.observe("no envelope: submit status", &reply.native_status());
    Ok(())
}

/// A valid envelope's grant shows `{digest, path_count}` with the harness's
/// own digest, whatever the order of its paths, natively and through the
/// adapter.
#[scenario(Envelope, parity, clauses = ["S8.grammar", "S8.digest", "S8.digest.order", "S8.evidence", "S8.counts"])]
async fn envelope_evidence_and_digest(ctx: &mut Ctx) -> Outcome {
    // The envelope is accepted (303); the harness's digest: paths sorted by
    // byte order, JCS, SHA-256. The same paths in another order (and other
    // member order and whitespace) give the same digest; other paths or
    // bounds give another one; `max` 32 and `min` = `max` are accepted.
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let paths = ["src/", "docs/**/*.md", "README.md", "tests/*.rs", "Été/"];
    let first = envelope(&paths, 1, 32);
    let want = envelope_digest(&first)?;

    ctx.step("alice prepares a grant with an envelope whose paths are not sorted");
    let grant = prepare_enveloped(ctx, &alice, "Enveloped.", &typed(&first)).await?;
    let seen = evidence(ctx, &grant).await?;
    let expected = EnvelopeEvidence {
        digest: want.clone(),
        path_count: paths.len() as i64,
    };
    ctx.expect_eq(
        "natively: {digest, path_count}, digest recomputed by the harness",
        seen.as_ref(),
        Some(&expected),
    )?;
    let through_adapter = bot.get_grant(&grant).await?.grant()?;
    ctx.expect_eq(
        "through the adapter",
        through_adapter.envelope()?,
        Some(&expected),
    )?;

    ctx.step("the same paths in another order, members reordered, whitespace added");
    let mut reversed = paths;
    reversed.reverse();
    let text = format!(
        "{{ \"publish\" : false,\n \"commit_count\": {{\"max\": 32, \"min\": 1}},\n \
         \"allowed_paths\": {},\n \"version\": \"1\" }}",
        json!(reversed)
    );
    let again = prepare_enveloped(ctx, &alice, "Enveloped again.", &text).await?;
    ctx.expect_eq(
        "the same digest and count",
        evidence(ctx, &again).await?.as_ref(),
        Some(&expected),
    )?;

    ctx.step("other paths or other bounds give another digest");
    for (what, other) in [
        ("one path fewer", envelope(&paths[1..], 1, 32)),
        ("min = max = 1", envelope(&paths, 1, 1)),
    ] {
        let grant = prepare_enveloped(ctx, &alice, what, &typed(&other)).await?;
        let seen = evidence(ctx, &grant).await?;
        let digest = envelope_digest(&other)?;
        ctx.expect_eq(
            &format!("{what}: the harness's digest and count"),
            seen.as_ref().map(|e| (e.digest.as_str(), e.path_count)),
            Some((digest.as_str(), other_count(&other))),
        )?;
        ctx.expect(
            &format!("{what}: a digest other than the first envelope's"),
            digest != want,
            &digest,
        )?;
    }
    ctx.observe(
        "first envelope: digest, path count",
        &seen.map(|e| (e.digest, e.path_count)),
    );
    Ok(())
}

fn other_count(envelope: &Value) -> i64 {
    envelope
        .get("allowed_paths")
        .and_then(Value::as_array)
        .map_or(0, |a| a.len() as i64)
}

/// A grant with an envelope fails closed: confirmed and approved as usual, it
/// refuses every submission with 409 and writes nothing, and can still be
/// withdrawn.
#[scenario(Envelope, parity, clauses = ["S8.fail-closed"])]
async fn enveloped_grant_fails_closed(ctx: &mut Ctx) -> Outcome {
    // 409 natively and `conflict` through the adapter; no Issue is created
    // and neither key reads back (404).
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let grant = prepare_enveloped(
        ctx,
        &alice,
        "Fail closed.",
        &typed(&envelope(&["src/"], 1, 1)),
    )
    .await?;

    ctx.step("lab-bot confirms and alice approves, as usual");
    let proposal = bot.read_proposal(&grant).await?;
    ctx.expect_tool_ok("the agent confirms", &bot.confirm(&grant, &proposal).await?)?;
    let page = alice.approve(&grant).await?;
    ctx.expect_status("approving", page.status, 200)?;
    ctx.expect_eq(
        "the grant is active",
        flows::native_status(ctx, LAB_BOT, &grant).await?.0,
        state::ACTIVE.to_owned(),
    )?;

    let native_issue = NewIssue::new("Enveloped", "Must not be written.\n");
    let adapter_issue = NewIssue::new("Enveloped", "Must not be written.\n");
    let watch = Watch::new(LAB_BOT, LAB)
        .grant(&grant)
        .key(&grant, &native_issue.request_key)
        .key(&grant, &adapter_issue.request_key);
    let before = watch.take(ctx).await?;

    ctx.step("lab-bot submits natively and through the adapter");
    let answer = ctx
        .native(LAB_BOT)?
        .submit(&grant, &proposal, &native_issue)
        .await?;
    flows::expect_native_error(ctx, "native submit", &answer, 409)?;
    let reply = bot.submit(&grant, &proposal, &adapter_issue).await?;
    flows::expect_tool_refusal(ctx, "adapter submit", &reply, "conflict", 409)?;
    watch
        .expect_unchanged(ctx, "after both submissions", &before)
        .await?;
    ctx.expect_eq("no Issue", flows::issue_count(ctx, LAB).await?, 0)?;
    for (what, key) in [
        ("native", &native_issue.request_key),
        ("adapter", &adapter_issue.request_key),
    ] {
        let back = ctx.native(LAB_BOT)?.submission(&grant, key).await?;
        ctx.expect_status(&format!("{what} key reads back 404"), back.status, 404)?;
    }

    ctx.step("alice withdraws the grant, as usual");
    alice.withdraw(&grant).await?;
    ctx.expect_eq(
        "the grant is revoked",
        flows::native_status(ctx, LAB_BOT, &grant).await?.0,
        state::REVOKED.to_owned(),
    )?;
    ctx.observe(
        "fail-closed: native, adapter",
        &(answer.status, reply.error_code()),
    );
    Ok(())
}

/// An envelope's path patterns are evidence only: they appear in no native
/// answer, adapter result or log, and the grant shows only `{digest,
/// path_count}`.
#[scenario(Envelope, clauses = ["S8.no-patterns", "S8.evidence"])]
async fn envelope_patterns_never_exposed(ctx: &mut Ctx) -> Outcome {
    // Native answers: get, list, confirm, submit, readback; logs: the Core's
    // and the adapter's; the pattern is a marker. The admin's page may show
    // it; the marker is then registered as a secret, so the report scan
    // proves the report holds it nowhere either.
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let nonce = NewIssue::new("nonce", "nonce").request_key;
    let marker = format!("marker-{}/**/*.evidence", &nonce[..8]);
    let grant = prepare_enveloped(
        ctx,
        &alice,
        "Evidence only.",
        &typed(&envelope(&[&marker, "src/"], 1, 2)),
    )
    .await?;
    let native = ctx.native(LAB_BOT)?;
    let mut seen: Vec<(String, String)> = Vec::new();

    ctx.step("lab-bot reads, lists and confirms the grant natively and through the adapter");
    let got = native.get_grant(&grant).await?;
    ctx.expect_eq(
        "the evidence counts two paths",
        got.grant()?.envelope()?.map(|e| e.path_count),
        Some(2),
    )?;
    seen.push(("native get".into(), got.body.clone()));
    seen.push((
        "native list".into(),
        native.list_grants("state=all").await?.body,
    ));
    for reply in [
        bot.get_grant(&grant).await?,
        bot.list_grants(None, None).await?,
    ] {
        seen.push((format!("adapter {}", reply.tool), reply_text(&reply)));
    }
    let proposal = bot.read_proposal(&grant).await?;
    let confirmed = bot.confirm(&grant, &proposal).await?;
    ctx.expect_tool_ok("the agent confirms", &confirmed)?;
    seen.push(("adapter confirm".into(), reply_text(&confirmed)));
    alice.approve(&grant).await?;

    ctx.step("lab-bot submits (refused) and reads the key back");
    let issue = NewIssue::new("Evidence", "b");
    let submitted = native.submit(&grant, &proposal, &issue).await?;
    seen.push(("native submit".into(), submitted.body.clone()));
    let reply = bot
        .submit(&grant, &proposal, &NewIssue::new("E", "b"))
        .await?;
    seen.push(("adapter submit".into(), reply_text(&reply)));
    let back = native.submission(&grant, &issue.request_key).await?;
    seen.push(("native readback".into(), back.body));
    let back = bot.submission(&grant, &issue.request_key).await?;
    seen.push(("adapter readback".into(), reply_text(&back)));

    ctx.step("the marker is in no answer, result or log");
    seen.push(("the Core's log".into(), ctx.core_log()));
    seen.push(("the adapter's log".into(), bot.adapter_log()));
    for (what, text) in &seen {
        ctx.expect(
            &format!("{what} does not carry the marker pattern"),
            !text.contains(&marker),
            &format!("{} bytes searched", text.len()),
        )?;
    }
    // Checked above on the raw texts; from here on the report redacts it,
    // and the report scan fails the run if it is still found anywhere.
    ctx.register_secret(&marker);
    Ok(())
}

/// Everything a tool result carries, as text.
fn reply_text(reply: &ToolReply) -> String {
    format!(
        "{} {} {}",
        reply.text,
        reply
            .structured
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default(),
        reply
            .error
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default()
    )
}
