//! Family 8: access loss mid-flow — denied, omitted from the list, nothing
//! written, restored access reads back.
//!
//! "Nothing written" is a [`Watch`] ledger read through the APIs: taken while
//! lab-bot still has access, and again once access is restored, after every
//! refused call was made without it.

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT, Ledger, Watch};

/// Removed from a private repository's collaborators, a bot gets 404 on every
/// grant route and writes nothing; restored, it reads the same back.
#[scenario(AccessLoss, parity, clauses = ["S3.access-loss", "S3.recheck", "S1.private-invisible", "S5.setup.collaborators"])]
async fn collaborator_removed_mid_flow(ctx: &mut Ctx) -> Outcome {
    // The adapter says `not_found` for the 404, and the list omits the
    // grants.
    let f = mid_flow(ctx, LAB).await?;
    let before = f.watch.take(ctx).await?;

    ctx.step("alice removes lab-bot from the collaborators of the private alice/lab");
    ctx.setup().remove_collaborator(LAB, LAB_BOT).await?;
    let seen = all_routes_refused(ctx, &f, 404, "not_found").await?;
    ctx.observe("statuses without access", &seen);
    list_omits(ctx, &f).await?;

    ctx.step("alice makes lab-bot a write collaborator again; nothing was written meanwhile");
    ctx.setup().add_collaborator(LAB, LAB_BOT, "write").await?;
    f.watch
        .expect_unchanged(ctx, "after the calls without access", &before)
        .await?;
    readback_is_back(ctx, &f).await
}

/// A public repository's reader reads its grants but cannot act (403); made
/// private, the repository hides them (404) and nothing is written.
#[scenario(AccessLoss, parity, extensions = ["repo-visibility"], clauses = ["S3.access-loss", "S1.private-invisible", "S3.recheck"])]
async fn repository_made_private_mid_flow(ctx: &mut Ctx) -> Outcome {
    // Confirm and submit are 403 while public; once private every grant route
    // is 404 and the list omits the grants; made public again, the same
    // readback comes back.
    let (f, before) = open_mid_flow(ctx).await?;

    removed_from_public(ctx, &f).await?;

    ctx.step("alice makes alice/open private");
    set_private(ctx, "alice/open", true).await?;
    let seen = all_routes_refused(ctx, &f, 404, "not_found").await?;
    ctx.observe("statuses once private", &seen);
    list_omits(ctx, &f).await?;

    ctx.step("alice makes alice/open public again; nothing was written meanwhile");
    set_private(ctx, "alice/open", false).await?;
    f.watch
        .expect_unchanged(ctx, "after the calls without access", &before)
        .await?;
    readback_is_back(ctx, &f).await
}

/// A bot demoted to reader keeps reading its grants and receipts but gets 403
/// on confirm and submit: a grant never lends a permission.
#[scenario(AccessLoss, parity, clauses = ["S3.permission-to-act", "S3.access-loss", "S3.recheck", "S5.setup.collaborators"])]
async fn demoted_to_reader_mid_flow(ctx: &mut Ctx) -> Outcome {
    // Demoted to a reader of a public repository, then removed from its
    // collaborators (a reader still, the repository being public): 403
    // natively and through the adapter; nothing is written, and write
    // permission brings the same readback back.
    let (f, before) = open_mid_flow(ctx).await?;

    ctx.step("alice makes lab-bot a read collaborator of alice/open");
    ctx.setup()
        .add_collaborator("alice/open", LAB_BOT, "read")
        .await?;
    reads_but_cannot_act(ctx, &f).await?;

    removed_from_public(ctx, &f).await?;

    ctx.step("alice makes lab-bot a write collaborator again; nothing was written meanwhile");
    ctx.setup()
        .add_collaborator("alice/open", LAB_BOT, "write")
        .await?;
    f.watch
        .expect_unchanged(ctx, "after the calls without write permission", &before)
        .await?;
    readback_is_back(ctx, &f).await
}

/// [`mid_flow`] on a public repository alice/open where lab-bot may write,
/// with the ledger taken then.
async fn open_mid_flow(ctx: &mut Ctx) -> Step<(MidFlow, Ledger)> {
    ctx.step("alice has a public repository alice/open where lab-bot may write");
    ctx.setup().create_repo("alice", "open", false).await?;
    ctx.setup()
        .add_collaborator("alice/open", LAB_BOT, "write")
        .await?;
    let f = mid_flow(ctx, "alice/open").await?;
    let before = f.watch.take(ctx).await?;
    Ok((f, before))
}

/// lab-bot removed from alice/open's collaborators: the repository being
/// public, it is still a reader.
async fn removed_from_public(ctx: &Ctx, f: &MidFlow) -> Step<()> {
    ctx.step("alice removes lab-bot from the collaborators: it still reads the public repository");
    ctx.setup()
        .remove_collaborator("alice/open", LAB_BOT)
        .await?;
    reads_but_cannot_act(ctx, f).await
}

/// A reader of the repository (spec §3): get, readback and list answer as
/// before; confirm, submit and an identical replay are 403, natively and
/// through the adapter.
async fn reads_but_cannot_act(ctx: &Ctx, f: &MidFlow) -> Step<()> {
    let answer = f.native.get_grant(&f.active).await?;
    ctx.expect_status("native get", answer.status, 200)?;
    let answer = f
        .native
        .submission(&f.active, &f.earlier.request_key)
        .await?;
    ctx.expect_status("native readback", answer.status, 200)?;
    ctx.expect_eq(
        "the same receipt",
        receipt_members(&answer.submitted()?.receipt),
        receipt_members(&f.receipt),
    )?;
    let answer = f.native.list_grants("").await?;
    ctx.expect_status("native list", answer.status, 200)?;
    let ids = ids_of(&answer)?;
    ctx.expect(
        "both grants still listed",
        ids.contains(&f.active.id) && ids.contains(&f.pending.id),
        &format!("{ids:?}"),
    )?;
    let fresh = &f.fresh;
    let answer = f.native.confirm(&f.pending, &f.pending_proposal).await?;
    flows::expect_native_error(ctx, "native confirm", &answer, 403)?;
    let answer = f.native.submit(&f.active, &f.proposal, fresh).await?;
    flows::expect_native_error(ctx, "native submit", &answer, 403)?;
    let answer = f.native.submit(&f.active, &f.proposal, &f.earlier).await?;
    flows::expect_native_error(ctx, "native identical replay", &answer, 403)?;
    let reply = f.bot.submit(&f.active, &f.proposal, fresh).await?;
    flows::expect_tool_refusal(ctx, "submit through the adapter", &reply, "forbidden", 403)?;
    let reply = f.bot.confirm(&f.pending, &f.pending_proposal).await?;
    flows::expect_tool_refusal(ctx, "confirm through the adapter", &reply, "forbidden", 403)?;
    let reply = f.bot.submission(&f.active, &f.earlier.request_key).await?;
    ctx.expect_tool_ok("readback through the adapter", &reply)?;
    Ok(())
}

/// A bot whose token loses a scope is refused (403) what that scope allows,
/// keeps the rest, and writes nothing.
#[scenario(AccessLoss, parity, clauses = ["S3.access-loss", "S3.recheck"])]
async fn token_scope_reduced_mid_flow(ctx: &mut Ctx) -> Outcome {
    // Without `write:issue` the adapter gets `forbidden` (403) on confirm,
    // submit and replay but still reads; without `read:repository` every
    // grant tool is 403; the full token brings the same readback back.
    // A token's scopes never change, so "reduced" is a new token with fewer.
    let f = mid_flow(ctx, LAB).await?;
    let before = f.watch.take(ctx).await?;
    let fresh = &f.fresh;
    let mut seen = Vec::new();

    ctx.step("lab-bot's adapter holds a token with `read:repository` only");
    let narrow = ctx
        .bot_builder(LAB_BOT)
        .scopes(&["read:repository"])
        .start()
        .await?;
    let refusals = [
        (
            "confirm",
            narrow.confirm(&f.pending, &f.pending_proposal).await?,
        ),
        (
            "submit",
            narrow.submit(&f.active, &f.proposal, fresh).await?,
        ),
        (
            "replay",
            narrow.submit(&f.active, &f.proposal, &f.earlier).await?,
        ),
    ];
    for (tool, reply) in &refusals {
        let what = format!("{tool} without write:issue");
        flows::expect_tool_refusal(ctx, &what, reply, "forbidden", 403)?;
        seen.push(json!({"scopes": "read:repository", "tool": tool, "code": reply.error_code()}));
    }
    let grant = narrow.get_grant(&f.active).await?.grant()?;
    ctx.expect_eq(
        "get still works: the grant is active",
        grant.state,
        state::ACTIVE.to_owned(),
    )?;
    let back = narrow.submission(&f.active, &f.earlier.request_key).await?;
    ctx.expect_eq(
        "readback still works: the same receipt",
        receipt_members(&back.submitted()?.receipt),
        receipt_members(&f.receipt),
    )?;
    let ids = narrow.list_grants(None, None).await?.list()?.ids();
    ctx.expect(
        "list still works: both grants listed",
        ids.contains(&f.active.id) && ids.contains(&f.pending.id),
        &format!("{ids:?}"),
    )?;

    ctx.step("lab-bot's adapter holds a token with `write:issue` only: every grant tool is 403");
    let blind = ctx
        .bot_builder(LAB_BOT)
        .scopes(&["write:issue"])
        .start()
        .await?;
    let key = &f.earlier.request_key;
    let refusals = [
        ("list", blind.list_grants(None, None).await?),
        ("get", blind.get_grant(&f.active).await?),
        (
            "confirm",
            blind.confirm(&f.pending, &f.pending_proposal).await?,
        ),
        ("submit", blind.submit(&f.active, &f.proposal, fresh).await?),
        ("readback", blind.submission(&f.active, key).await?),
    ];
    for (tool, reply) in &refusals {
        let what = format!("{tool} without read:repository");
        flows::expect_tool_refusal(ctx, &what, reply, "forbidden", 403)?;
        seen.push(json!({"scopes": "write:issue", "tool": tool, "code": reply.error_code()}));
    }
    ctx.observe("adapter results per token and tool", &seen);

    ctx.step("nothing was written");
    f.watch
        .expect_unchanged(ctx, "after the narrow tokens' calls", &before)
        .await?;
    readback_is_back(ctx, &f).await?;

    ctx.step("with its full token again, lab-bot confirms the waiting grant");
    let reply = f.bot.confirm(&f.pending, &f.pending_proposal).await?;
    ctx.expect_eq(
        "state after confirm",
        reply.grant()?.state,
        state::AWAITING_HUMAN.to_owned(),
    )
}

/// Where a scenario stands when access is lost: an active grant with one
/// submission, a second grant still waiting for the bot, a submission the
/// bot will try without access, and the ledger watching all of it.
struct MidFlow {
    bot: Bot,
    native: NativeClient,
    active: GrantRef,
    proposal: Proposal,
    earlier: NewIssue,
    receipt: Receipt,
    pending: GrantRef,
    pending_proposal: Proposal,
    fresh: NewIssue,
    watch: Watch,
}

/// alice and lab-bot get as far as an active grant with one submission and
/// a second grant awaiting the bot, on `repo`.
async fn mid_flow(ctx: &mut Ctx, repo: &str) -> Step<MidFlow> {
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let native = ctx.native(LAB_BOT)?;
    let (active, proposal) =
        flows::active_grant(ctx, &alice, &bot, repo, "Triage the crash reports").await?;
    ctx.step("lab-bot submits an Issue; alice prepares a second grant for lab-bot");
    let earlier = NewIssue::new("Crash in parser on empty input", "Stack trace attached.");
    let created = bot.submit(&active, &proposal, &earlier).await?;
    ctx.expect_eq("lab-bot submits", created.native_status(), Some(201))?;
    let receipt = created.submitted()?.receipt;
    let (pending, _) = alice
        .prepare_grant(repo, LAB_BOT, "Close duplicate crashes", "summary")
        .await?;
    let pending_proposal = bot.read_proposal(&pending).await?;
    let fresh = NewIssue::new("Access probe", "Must not be created.");
    // The probe's key is watched too: its readback must stay 404.
    let watch = Watch::new(LAB_BOT, repo)
        .grant(&active)
        .grant(&pending)
        .key(&active, &earlier.request_key)
        .key(&active, &fresh.request_key);
    Ok(MidFlow {
        bot,
        native,
        active,
        proposal,
        earlier,
        receipt,
        pending,
        pending_proposal,
        fresh,
        watch,
    })
}

/// Every grant route of both grants, natively and through the adapter,
/// answers `status` / `code`. Returns what was seen, for parity.
async fn all_routes_refused(ctx: &Ctx, f: &MidFlow, status: u16, code: &str) -> Step<Vec<Value>> {
    ctx.step(&format!(
        "every grant route answers {status}, natively and through the adapter"
    ));
    let (n, key) = (&f.native, &f.earlier.request_key);
    let answers = [
        ("get active", n.get_grant(&f.active).await?),
        ("get pending", n.get_grant(&f.pending).await?),
        ("confirm", n.confirm(&f.pending, &f.pending_proposal).await?),
        ("submit", n.submit(&f.active, &f.proposal, &f.fresh).await?),
        (
            "replay",
            n.submit(&f.active, &f.proposal, &f.earlier).await?,
        ),
        ("readback", n.submission(&f.active, key).await?),
    ];
    let mut seen = Vec::new();
    for (route, answer) in &answers {
        flows::expect_native_error(ctx, &format!("native {route}"), answer, status)?;
        seen.push(json!({"native": route, "status": answer.status}));
    }
    let b = &f.bot;
    let replies = [
        ("get", b.get_grant(&f.active).await?),
        ("confirm", b.confirm(&f.pending, &f.pending_proposal).await?),
        ("submit", b.submit(&f.active, &f.proposal, &f.fresh).await?),
        ("readback", b.submission(&f.active, key).await?),
    ];
    for (tool, reply) in &replies {
        let what = format!("{tool} through the adapter");
        flows::expect_tool_refusal(ctx, &what, reply, code, i64::from(status))?;
        seen.push(json!({"tool": tool, "code": reply.error_code()}));
    }
    Ok(seen)
}

/// Neither grant is in the bot's list, whatever the state filter, natively
/// and through the adapter.
async fn list_omits(ctx: &Ctx, f: &MidFlow) -> Step<()> {
    ctx.step("the list omits both grants, natively and through the adapter");
    for query in ["", "state=all"] {
        let answer = f.native.list_grants(query).await?;
        ctx.expect_status(&format!("native list `{query}`"), answer.status, 200)?;
        let ids = ids_of(&answer)?;
        ctx.expect(
            &format!("native list `{query}` omits both grants"),
            !ids.contains(&f.active.id) && !ids.contains(&f.pending.id),
            &format!("{ids:?}"),
        )?;
        ctx.expect_eq(
            &format!("native list `{query}`: X-Total-Count"),
            answer.total_count()?,
            0,
        )?;
    }
    let ids = f.bot.list_grants(None, Some("all")).await?.list()?.ids();
    ctx.expect(
        "the adapter's list omits both grants",
        !ids.contains(&f.active.id) && !ids.contains(&f.pending.id),
        &format!("{ids:?}"),
    )
}

/// With access back, the bot reads the same receipt, sees the grant as it
/// was, and lists both grants again.
async fn readback_is_back(ctx: &Ctx, f: &MidFlow) -> Outcome {
    ctx.step("access is back: the same readback, the grant unchanged, both grants listed");
    let expected = receipt_members(&f.receipt);
    let answer = f
        .native
        .submission(&f.active, &f.earlier.request_key)
        .await?;
    ctx.expect_status("native readback", answer.status, 200)?;
    let native_receipt = answer.submitted()?.receipt;
    ctx.expect_eq(
        "the same receipt",
        receipt_members(&native_receipt),
        expected.clone(),
    )?;
    let reply = f.bot.submission(&f.active, &f.earlier.request_key).await?;
    let receipt = reply.submitted()?.receipt;
    ctx.expect_eq(
        "the same receipt through the adapter",
        receipt_members(&receipt),
        expected,
    )?;
    ctx.expect_eq(
        "state and revision",
        flows::native_status(ctx, LAB_BOT, &f.active).await?,
        (state::ACTIVE.to_owned(), 3),
    )?;
    let answer = f.native.list_grants("").await?;
    ctx.expect_status("native list", answer.status, 200)?;
    ctx.expect_eq(
        "both grants listed again",
        ids_of(&answer)?,
        vec![f.active.id, f.pending.id],
    )?;
    ctx.observe("the readback once access is back", &receipt.raw);
    Ok(())
}

/// A receipt's contract members (spec §3), to say "the same receipt"
/// without comparing members the contract does not name.
fn receipt_members(r: &Receipt) -> (i64, String, String, String, UserRef, IssueRef) {
    (
        r.grant_id,
        r.request_key.clone(),
        r.status.clone(),
        r.review_state.clone(),
        r.submitted_by.clone(),
        r.issue.clone(),
    )
}

/// The ids of a native list answer, in order.
fn ids_of(answer: &Answer) -> Step<Vec<i64>> {
    Ok(answer.grants()?.iter().map(|g| g.id).collect())
}

/// `PATCH /api/v1/repos/{repo}` `{"private": private}` through the setup
/// client (the `repo-visibility` setup extension).
async fn set_private(ctx: &Ctx, repo: &str, private: bool) -> Step<()> {
    let body = json!({ "private": private });
    let answer = ctx
        .setup()
        .call("PATCH", &format!("/api/v1/repos/{repo}"), Some(body))
        .await?;
    ctx.expect_status(
        &format!("the setup surface sets private={private}"),
        answer.status,
        200,
    )?;
    let visibility = answer.json()?.get("private").and_then(Value::as_bool);
    ctx.expect_eq("the repository's visibility", visibility, Some(private))
}
