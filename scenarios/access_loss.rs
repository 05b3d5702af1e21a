//! Family 8: access loss mid-flow — denied, omitted from the list, nothing written, restored access reads back.

use serde_json::{Value, json};

use crate::actors::{Bot, GrantRef, Human, NativeClient, Proposal, Submission};
use crate::ctx::Ctx;
use crate::runner::catalogue::Scenario;
use crate::runner::outcome::{Outcome, Step};
use crate::scenarios::flows;

/// This family's scenarios, in catalogue order.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            id: "collaborator_removed_mid_flow",
            family: "8 access loss",
            claim: "Once the bot is removed from a private repository's collaborators, every grant \
                    route answers 404 (`not_found` through the adapter), the list omits its \
                    grants, nothing is written, and restoring the collaborator brings the same \
                    readback back.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(collaborator_removed_mid_flow(ctx)),
        },
        Scenario {
            id: "repository_made_private_mid_flow",
            family: "8 access loss",
            claim: "A bot that only reads a public repository may read its grants but gets 403 on \
                    confirm and submit; once the repository is made private it gets 404 on every \
                    grant route and the list omits the grants; nothing is written, and making it \
                    public again brings the same readback back.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(repository_made_private_mid_flow(ctx)),
        },
        Scenario {
            id: "token_scope_reduced_mid_flow",
            family: "8 access loss",
            claim: "A bot whose adapter switches to a token without `write:issue` gets `forbidden` \
                    (403) on confirm, submit and replay but still reads; without \
                    `read:repository` every grant tool is 403; nothing is written, and the full \
                    token brings the same readback back.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(token_scope_reduced_mid_flow(ctx)),
        },
    ]
}

/// Where a scenario stands when access is lost: an active grant with one
/// submission, and a second grant still waiting for the bot.
struct MidFlow {
    alice: Human,
    bot: Bot,
    native: NativeClient,
    active: GrantRef,
    proposal: Proposal,
    earlier: Submission,
    receipt: Value,
    pending: GrantRef,
    pending_proposal: Proposal,
}

impl MidFlow {
    fn repo(&self) -> String {
        format!("{}/{}", self.active.owner, self.active.repo)
    }

    fn grants(&self) -> [&GrantRef; 2] {
        [&self.active, &self.pending]
    }
}

/// alice and lab-bot get as far as an active grant with one submission and
/// a second grant awaiting the bot, on `repo`.
async fn mid_flow(ctx: &mut Ctx, repo: &str) -> Step<MidFlow> {
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let bot = ctx.bot("lab-bot").await?;
    let native = ctx.native("lab-bot")?;
    let (active, proposal) =
        flows::active_grant(ctx, &alice, &bot, repo, "Triage the crash reports").await?;
    ctx.step("lab-bot submits an Issue; alice prepares a second grant for lab-bot");
    let earlier = Submission::new("Crash in parser on empty input", "Stack trace attached.");
    let created = bot.submit(&active, &proposal, &earlier).await?;
    let created = ctx.expect_tool_ok("lab-bot submits", &created)?;
    ctx.expect_eq(
        "native status",
        created["native_status"].as_i64(),
        Some(201),
    )?;
    let receipt = created["submission"].clone();
    let (pending, _) = alice
        .prepare_grant(repo, "lab-bot", "Close duplicate crashes", "summary")
        .await?;
    let pending_proposal = bot.read_proposal(&pending).await?;
    Ok(MidFlow {
        alice,
        bot,
        native,
        active,
        proposal,
        earlier,
        receipt,
        pending,
        pending_proposal,
    })
}

/// lab-bot loses its collaborator seat on the private alice/lab.
pub async fn collaborator_removed_mid_flow(ctx: &mut Ctx) -> Outcome {
    let f = mid_flow(ctx, "alice/lab").await?;
    let before = flows::ledger(ctx, &f.alice, &f.repo(), &f.grants()).await?;

    ctx.step("alice removes lab-bot from the collaborators of the private alice/lab");
    ctx.setup()
        .remove_collaborator("alice/lab", "lab-bot")
        .await?;

    let seen = all_routes_refused(ctx, &f, 404, "not_found").await?;
    ctx.observe("statuses without access", &seen);
    list_omits(ctx, &f).await?;

    ctx.step("nothing was written");
    let after = flows::ledger(ctx, &f.alice, &f.repo(), &f.grants()).await?;
    ctx.expect_eq("the ledger is unchanged", &after, &before)?;
    ctx.observe("the ledger", &after);

    ctx.step("alice makes lab-bot a write collaborator again");
    ctx.setup()
        .add_collaborator("alice/lab", "lab-bot", "write")
        .await?;
    readback_is_back(ctx, &f).await
}

/// lab-bot reads the public alice/open only as anyone may; then alice/open
/// turns private.
pub async fn repository_made_private_mid_flow(ctx: &mut Ctx) -> Outcome {
    ctx.step("alice has a public repository alice/open where lab-bot may write");
    ctx.setup().create_repo("alice", "open", false).await?;
    ctx.setup()
        .add_collaborator("alice/open", "lab-bot", "write")
        .await?;
    let f = mid_flow(ctx, "alice/open").await?;
    let before = flows::ledger(ctx, &f.alice, &f.repo(), &f.grants()).await?;

    ctx.step("alice removes lab-bot from the collaborators: it still reads the public repository");
    ctx.setup()
        .remove_collaborator("alice/open", "lab-bot")
        .await?;
    let answer = f.native.get_grant(&f.active).await?;
    ctx.expect_status("native get", answer.status, 200)?;
    let answer = f
        .native
        .submission(&f.active, &f.earlier.request_key)
        .await?;
    ctx.expect_status("native readback", answer.status, 200)?;
    ctx.expect_eq(
        "the same receipt",
        &answer.json()?["submission"],
        &f.receipt,
    )?;
    let answer = f.native.list_grants("").await?;
    let ids = flows::listed_ids(&answer)?;
    ctx.expect(
        "both grants still listed",
        ids.contains(&f.active.id) && ids.contains(&f.pending.id),
        &format!("{ids:?}"),
    )?;

    ctx.step("without write permission, confirm and submit are 403");
    let fresh = Submission::new("Read-only probe", "Must not be created.");
    let answer = f.native.confirm(&f.pending, &f.pending_proposal).await?;
    flows::expect_native_error(ctx, "native confirm", &answer, 403)?;
    let answer = f.native.submit(&f.active, &f.proposal, &fresh).await?;
    flows::expect_native_error(ctx, "native submit", &answer, 403)?;
    let reply = f.bot.submit(&f.active, &f.proposal, &fresh).await?;
    flows::expect_tool_refusal(ctx, "submit through the adapter", &reply, "forbidden", 403)?;
    let reply = f.bot.confirm(&f.pending, &f.pending_proposal).await?;
    flows::expect_tool_refusal(ctx, "confirm through the adapter", &reply, "forbidden", 403)?;

    ctx.step("alice makes alice/open private");
    set_private(ctx, "alice/open", true).await?;
    let seen = all_routes_refused(ctx, &f, 404, "not_found").await?;
    ctx.observe("statuses once private", &seen);
    list_omits(ctx, &f).await?;

    ctx.step("nothing was written");
    let after = flows::ledger(ctx, &f.alice, &f.repo(), &f.grants()).await?;
    ctx.expect_eq("the ledger is unchanged", &after, &before)?;
    ctx.observe("the ledger", &after);

    ctx.step("alice makes alice/open public again");
    set_private(ctx, "alice/open", false).await?;
    readback_is_back(ctx, &f).await
}

/// lab-bot's adapter runs with narrower tokens mid-flow (a token's scopes
/// never change, so "reduced" is a new token with fewer scopes).
pub async fn token_scope_reduced_mid_flow(ctx: &mut Ctx) -> Outcome {
    let f = mid_flow(ctx, "alice/lab").await?;
    let before = flows::ledger(ctx, &f.alice, &f.repo(), &f.grants()).await?;
    let fresh = Submission::new("Scope probe", "Must not be created.");
    let mut seen = Vec::new();

    ctx.step("lab-bot's adapter holds a token with `read:repository` only");
    let narrow = ctx.bot_with_scopes("lab-bot", &["read:repository"]).await?;
    let refusals = [
        (
            "confirm",
            narrow.confirm(&f.pending, &f.pending_proposal).await?,
        ),
        (
            "submit",
            narrow.submit(&f.active, &f.proposal, &fresh).await?,
        ),
        (
            "replay",
            narrow.submit(&f.active, &f.proposal, &f.earlier).await?,
        ),
    ];
    for (tool, reply) in &refusals {
        flows::expect_tool_refusal(
            ctx,
            &format!("{tool} without write:issue"),
            reply,
            "forbidden",
            403,
        )?;
        seen.push(json!({"scopes": "read:repository", "tool": tool, "code": reply.error_code()}));
    }
    let reply = narrow.get_grant(&f.active).await?;
    let reply = ctx.expect_tool_ok("get still works", &reply)?;
    ctx.expect_eq(
        "the grant is still active",
        reply["grant"]["state"].as_str(),
        Some("active"),
    )?;
    let reply = narrow.submission(&f.active, &f.earlier.request_key).await?;
    let reply = ctx.expect_tool_ok("readback still works", &reply)?;
    ctx.expect_eq("the same receipt", &reply["submission"], &f.receipt)?;
    let reply = narrow.list_grants(None, None).await?;
    ctx.expect_tool_ok("list still works", &reply)?;
    let ids = flows::tool_listed_ids(&reply);
    ctx.expect(
        "both grants listed",
        ids.contains(&f.active.id) && ids.contains(&f.pending.id),
        &format!("{ids:?}"),
    )?;

    ctx.step("lab-bot's adapter holds a token with `write:issue` only: every grant tool is 403");
    let blind = ctx.bot_with_scopes("lab-bot", &["write:issue"]).await?;
    let refusals = [
        ("list", blind.list_grants(None, None).await?),
        ("get", blind.get_grant(&f.active).await?),
        (
            "confirm",
            blind.confirm(&f.pending, &f.pending_proposal).await?,
        ),
        (
            "submit",
            blind.submit(&f.active, &f.proposal, &fresh).await?,
        ),
        (
            "readback",
            blind.submission(&f.active, &f.earlier.request_key).await?,
        ),
    ];
    for (tool, reply) in &refusals {
        flows::expect_tool_refusal(
            ctx,
            &format!("{tool} without read:repository"),
            reply,
            "forbidden",
            403,
        )?;
        seen.push(json!({"scopes": "write:issue", "tool": tool, "code": reply.error_code()}));
    }
    ctx.observe("adapter results per token and tool", &seen);

    ctx.step("nothing was written");
    let after = flows::ledger(ctx, &f.alice, &f.repo(), &f.grants()).await?;
    ctx.expect_eq("the ledger is unchanged", &after, &before)?;
    ctx.observe("the ledger", &after);

    readback_is_back(ctx, &f).await?;
    ctx.step("with its full token again, lab-bot confirms the waiting grant");
    let reply = f.bot.confirm(&f.pending, &f.pending_proposal).await?;
    let reply = ctx.expect_tool_ok("confirm with the full token", &reply)?;
    ctx.expect_eq(
        "state after confirm",
        reply["grant"]["state"].as_str(),
        Some("awaiting_human"),
    )?;
    Ok(())
}

/// Every grant route of both grants, natively and through the adapter,
/// answers `status` / `code`. Returns what was seen, for parity.
async fn all_routes_refused(ctx: &Ctx, f: &MidFlow, status: u16, code: &str) -> Step<Vec<Value>> {
    ctx.step(&format!(
        "every grant route answers {status}, natively and through the adapter"
    ));
    let fresh = Submission::new("Access probe", "Must not be created.");
    let n = &f.native;
    let answers = [
        ("get active", n.get_grant(&f.active).await?),
        ("get pending", n.get_grant(&f.pending).await?),
        ("confirm", n.confirm(&f.pending, &f.pending_proposal).await?),
        ("submit", n.submit(&f.active, &f.proposal, &fresh).await?),
        (
            "replay",
            n.submit(&f.active, &f.proposal, &f.earlier).await?,
        ),
        (
            "readback",
            n.submission(&f.active, &f.earlier.request_key).await?,
        ),
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
        ("submit", b.submit(&f.active, &f.proposal, &fresh).await?),
        (
            "readback",
            b.submission(&f.active, &f.earlier.request_key).await?,
        ),
    ];
    for (tool, reply) in &replies {
        flows::expect_tool_refusal(
            ctx,
            &format!("{tool} through the adapter"),
            reply,
            code,
            i64::from(status),
        )?;
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
        let ids = flows::listed_ids(&answer)?;
        ctx.expect(
            &format!("native list `{query}` omits both grants"),
            !ids.contains(&f.active.id) && !ids.contains(&f.pending.id),
            &format!("{ids:?}"),
        )?;
        ctx.expect_eq(
            &format!("native list `{query}`: X-Total-Count"),
            answer.header("x-total-count").as_deref(),
            Some("0"),
        )?;
    }
    let reply = f.bot.list_grants(None, Some("all")).await?;
    ctx.expect_tool_ok("the adapter's list succeeds", &reply)?;
    let ids = flows::tool_listed_ids(&reply);
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
    let answer = f
        .native
        .submission(&f.active, &f.earlier.request_key)
        .await?;
    ctx.expect_status("native readback", answer.status, 200)?;
    ctx.expect_eq(
        "the same receipt",
        &answer.json()?["submission"],
        &f.receipt,
    )?;
    let reply = f.bot.submission(&f.active, &f.earlier.request_key).await?;
    let reply = ctx.expect_tool_ok("readback through the adapter", &reply)?;
    ctx.expect_eq(
        "the same receipt through the adapter",
        &reply["submission"],
        &f.receipt,
    )?;
    let answer = f.native.get_grant(&f.active).await?;
    ctx.expect_status("native get", answer.status, 200)?;
    let g = answer.json()?;
    ctx.expect_eq(
        "state and revision",
        (g["state"].as_str(), g["state_revision"].as_i64()),
        (Some("active"), Some(3)),
    )?;
    let answer = f.native.list_grants("").await?;
    let ids = flows::listed_ids(&answer)?;
    ctx.expect_eq(
        "both grants listed again",
        ids.clone(),
        vec![f.active.id, f.pending.id],
    )?;
    ctx.observe("the readback once access is back", &reply["submission"]);
    Ok(())
}

/// `PATCH /api/v1/repos/{repo}` `{"private": private}` through the setup client.
async fn set_private(ctx: &Ctx, repo: &str, private: bool) -> Step<()> {
    let answer = ctx
        .setup()
        .call(
            "PATCH",
            &format!("/api/v1/repos/{repo}"),
            Some(json!({ "private": private })),
        )
        .await?;
    ctx.expect_status(
        &format!("the setup surface sets private={private}"),
        answer.status,
        200,
    )?;
    ctx.expect_eq(
        "the repository's visibility",
        answer.json()?["private"].as_bool(),
        Some(private),
    )
}
