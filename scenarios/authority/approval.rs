//! Family 12: authority. Preparing is not approval and a bot's confirmation
//! is not approval: a submission to a grant that is not yet `active` is 409
//! natively and `conflict` through the adapter, and an approve posted before
//! the bot confirmed is 409. Only a repository admin reaches the grant
//! pages: a write collaborator, a reader and a stranger, each signed in with
//! a session and `_csrf` of their own, get 404 for every page and form.
//!
//! Every refusal is witnessed through the APIs (the grant's state and
//! revision as its agent reads it, the repository's Issues, the watched
//! request keys, the agent's grant count), and each scenario ends with the
//! rightful move succeeding, so the refusal came from the rule under test.

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT, Watch};
use crate::support::forms::{awaiting_human, expect_accepted, expect_refused, offers};
use crate::support::witnesses::{Unchanged, expect_grant};

/// Submits `issue` natively and then (under another key) through the
/// adapter, expecting 409 and `conflict` each time.
async fn expect_submit_conflict(
    ctx: &Ctx,
    bot: &Bot,
    grant: &GrantRef,
    proposal: &Proposal,
    native: &NewIssue,
    adapter: &NewIssue,
    state_name: &str,
) -> Step<()> {
    let answer = ctx.native(LAB_BOT)?.submit(grant, proposal, native).await?;
    flows::expect_native_error(ctx, &format!("native submit on {state_name}"), &answer, 409)?;
    ctx.observe(&format!("native submit on {state_name}"), &answer.status);
    let reply = bot.submit(grant, proposal, adapter).await?;
    flows::expect_tool_refusal(
        ctx,
        &format!("adapter submit on {state_name}"),
        &reply,
        "conflict",
        409,
    )?;
    ctx.observe(
        &format!("adapter submit on {state_name}"),
        &reply.error_code(),
    );
    Ok(())
}

/// A submission before the human's approval is 409 and writes nothing,
/// whether the grant awaits its agent or the human; once approved, it is
/// accepted.
#[scenario(Authority, parity, clauses = ["S4.not-approval", "S3.submit.active"])]
async fn submit_refused_before_approval(ctx: &mut Ctx) -> Outcome {
    // 409 natively and `conflict` through the adapter: no Issue, no receipt
    // under its key, the grant's state and revision unchanged.
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in and prepares a grant for lab-bot");
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let (grant, _) = alice.prepare_grant(LAB, LAB_BOT, "task", "summary").await?;
    let proposal = bot.read_proposal(&grant).await?;
    let native = NewIssue::new("Prepared is not approved", "body");
    let adapter = NewIssue::new("Prepared is not approved", "body");
    let watch = Watch::new(LAB_BOT, LAB)
        .grant(&grant)
        .key(&grant, &native.request_key)
        .key(&grant, &adapter.request_key);

    ctx.step("lab-bot submits to the grant awaiting its agent");
    let before = watch.take(ctx).await?;
    expect_submit_conflict(
        ctx,
        &bot,
        &grant,
        &proposal,
        &native,
        &adapter,
        state::AWAITING_AGENT,
    )
    .await?;
    watch
        .expect_unchanged(ctx, "after submitting to awaiting_agent", &before)
        .await?;
    expect_grant(ctx, "still", &grant, state::AWAITING_AGENT, 1).await?;

    ctx.step("lab-bot confirms, then submits to the grant awaiting the human");
    let confirmed = bot.confirm(&grant, &proposal).await?;
    ctx.expect_tool_ok("lab-bot confirms", &confirmed)?;
    let before = watch.take(ctx).await?;
    expect_submit_conflict(
        ctx,
        &bot,
        &grant,
        &proposal,
        &native,
        &adapter,
        state::AWAITING_HUMAN,
    )
    .await?;
    watch
        .expect_unchanged(ctx, "after submitting to awaiting_human", &before)
        .await?;
    expect_grant(ctx, "still", &grant, state::AWAITING_HUMAN, 2).await?;
    ctx.expect_eq(
        "no Issue in alice/lab",
        flows::issue_count(ctx, LAB).await?,
        0,
    )?;

    ctx.step("alice approves; the same submission is now accepted");
    let approved = alice.approve(&grant).await?;
    expect_accepted(ctx, "approving", &approved)?;
    let reply = bot.submit(&grant, &proposal, &adapter).await?;
    ctx.expect_tool_ok("the submission after approval", &reply)?;
    ctx.expect_eq("native status", reply.native_status(), Some(201))?;
    ctx.expect_eq(
        "one Issue in alice/lab",
        flows::issue_count(ctx, LAB).await?,
        1,
    )?;
    Ok(())
}

/// An approve posted while the grant awaits its agent is 409 and changes
/// nothing; once the agent confirmed, approving works.
#[scenario(Authority, parity, clauses = ["S4.not-approval", "S4.approve"])]
async fn approve_refused_before_confirmation(ctx: &mut Ctx) -> Outcome {
    // The refused approve carries the grant's current `state_revision` and
    // the session's own `_csrf`, so only the state refuses it.
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in and prepares a grant for lab-bot");
    alice.login().await?;
    let (grant, _) = alice.prepare_grant(LAB, LAB_BOT, "task", "summary").await?;
    let (_, revision) = flows::native_status(ctx, LAB_BOT, &grant).await?;
    let unchanged = Unchanged::take(ctx, &grant).await?;

    ctx.step("alice posts an approve form for the unconfirmed grant");
    let page = alice.grant_page(&grant).await?;
    // The page need not offer an approve form yet; a person can still post
    // one, so build it from the action and field names of spec §4.
    let form = if offers(&alice, &page, &grant, Decision::Approve)? {
        alice.decision_form(&grant, Decision::Approve).await?
    } else {
        let csrf = page.csrf_values().into_iter().next().ok_or_else(|| {
            Abort::failed(
                "the grant page of an unconfirmed grant offers no _csrf (no withdraw form)",
            )
        })?;
        Form::new(
            "POST",
            alice.url(&core_api::decision(&grant, Decision::Approve))?,
            vec![
                (fields::CSRF.into(), csrf),
                (fields::STATE_REVISION.into(), revision.to_string()),
            ],
        )
    };
    ctx.expect_eq(
        "the form carries the current revision",
        form.field(fields::STATE_REVISION),
        Some(revision.to_string().as_str()),
    )?;
    let refused = alice.submit(&form).await?;
    expect_refused(ctx, "approve before confirmation", &refused, 409)?;
    unchanged
        .expect(ctx, "after the approve before confirmation")
        .await?;
    expect_grant(ctx, "still", &grant, state::AWAITING_AGENT, 1).await?;
    ctx.observe("approve at awaiting_agent", &refused.status);

    ctx.step("lab-bot confirms; alice's approve form now works");
    let bot = ctx.bot(LAB_BOT).await?;
    let proposal = bot.read_proposal(&grant).await?;
    let confirmed = bot.confirm(&grant, &proposal).await?;
    ctx.expect_tool_ok("lab-bot confirms", &confirmed)?;
    let approved = alice.approve(&grant).await?;
    expect_accepted(ctx, "approving", &approved)?;
    expect_grant(ctx, "after approving", &grant, state::ACTIVE, 3).await?;
    Ok(())
}

/// A write collaborator of alice/lab gets 404 for every grant page and form,
/// and changes nothing.
#[scenario(Authority, parity, clauses = ["S4.admin-only"])]
async fn write_collaborator_gets_404(ctx: &mut Ctx) -> Outcome {
    // Signed in with a session and `_csrf` of their own: the grant list,
    // new-grant and grant pages, and prepare, approve and withdraw.
    outsider_gets_404(ctx, "wendy", "a write collaborator").await
}

/// A read collaborator of alice/lab gets 404 for every grant page and form,
/// and changes nothing.
#[scenario(Authority, parity, clauses = ["S4.admin-only"])]
async fn read_collaborator_gets_404(ctx: &mut Ctx) -> Outcome {
    // Signed in with a session and `_csrf` of their own: the grant list,
    // new-grant and grant pages, and prepare, approve and withdraw.
    outsider_gets_404(ctx, "rita", "a read collaborator").await
}

/// A signed-in stranger with no permission on alice/lab gets 404 for every
/// grant page and form, and changes nothing.
#[scenario(Authority, parity, clauses = ["S4.admin-only"])]
async fn stranger_gets_404(ctx: &mut Ctx) -> Outcome {
    // With a session and `_csrf` of their own: the grant list, new-grant and
    // grant pages, and prepare, approve and withdraw.
    outsider_gets_404(ctx, "mallory", "a stranger").await
}

/// The steps of the three scenarios above, for `login` (`who` says what
/// they are to alice/lab).
async fn outsider_gets_404(ctx: &mut Ctx, login: &str, who: &str) -> Outcome {
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in; she prepares a grant for lab-bot, which confirms it");
    alice.login().await?;
    let grant = awaiting_human(ctx, &alice, "task").await?;
    let (_, revision) = flows::native_status(ctx, LAB_BOT, &grant).await?;
    let unchanged = Unchanged::take(ctx, &grant).await?;

    ctx.step(&format!("{login} ({who}) logs in through the login form"));
    let person = ctx.human(login)?;
    let home = person.login().await?;
    ctx.expect_eq(
        &format!("{login}'s login answers 303 to /"),
        home.first_redirect()
            .map(|(status, to)| (status, to.path().to_owned())),
        Some((303, "/".to_owned())),
    )?;
    // Their own `_csrf`, from a form of their own session (spec §4: any
    // form of any page): the new-grant page of a repository they administer.
    let own = format!("{login}/own");
    ctx.setup().create_repo(login, "own", true).await?;
    let csrf = person
        .session_csrf(&[&core_api::new_grant_page(&own)])
        .await?;

    ctx.step(&format!("{login} opens the grant pages of alice/lab"));
    for path in [
        core_api::grants_page(LAB),
        core_api::new_grant_page(LAB),
        core_api::grant_page(&grant),
    ] {
        let page = person.open(&path).await?;
        expect_refused(ctx, &format!("{login} opens {path}"), &page, 404)?;
        ctx.observe(&format!("{who} opens {path}"), &page.status);
    }

    ctx.step(&format!(
        "{login} posts prepare, approve and withdraw with their own _csrf"
    ));
    let prepare = Form::new(
        "POST",
        person.url(&core_api::grants_page(LAB))?,
        vec![
            (fields::CSRF.into(), csrf.clone()),
            (fields::AGENT.into(), LAB_BOT.into()),
            (fields::TASK.into(), format!("task by {login}")),
            (fields::SUMMARY.into(), "summary".into()),
        ],
    );
    let decision = |d: Decision| -> Step<Form> {
        Ok(Form::new(
            "POST",
            person.url(&core_api::decision(&grant, d))?,
            vec![
                (fields::CSRF.into(), csrf.clone()),
                (fields::STATE_REVISION.into(), revision.to_string()),
            ],
        ))
    };
    for (action, form) in [
        ("prepare", prepare),
        ("approve", decision(Decision::Approve)?),
        ("withdraw", decision(Decision::Withdraw)?),
    ] {
        let answer = person.submit(&form).await?;
        expect_refused(ctx, &format!("{login} posts {action}"), &answer, 404)?;
        unchanged
            .expect(ctx, &format!("after {login}'s {action}"))
            .await?;
        ctx.observe(&format!("{who} posts {action}"), &answer.status);
    }

    ctx.step(&format!(
        "{login}'s _csrf was valid: their logout with it is accepted"
    ));
    let logout = Form::new(
        "POST",
        person.url(core_api::LOGOUT)?,
        vec![(fields::CSRF.into(), csrf)],
    );
    let out = person.submit(&logout).await?;
    expect_accepted(ctx, &format!("{login}'s logout with the same _csrf"), &out)?;

    ctx.step("alice, the admin, still approves through the form");
    let approved = alice.approve(&grant).await?;
    expect_accepted(ctx, "approving", &approved)?;
    expect_grant(ctx, "after approving", &grant, state::ACTIVE, 3).await?;
    Ok(())
}
