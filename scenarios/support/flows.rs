//! Flows many scenarios start from, and the "nothing changed" witness, in
//! domain words. A scenario whose subject is what happens *after* a grant is
//! active starts from [`active_grant`]; the full lifecycle scenario spells
//! every one of its steps out with its own assertions.

use grantgate_engine::prelude::*;

/// The repository of the `lab` fixture.
pub const LAB: &str = "alice/lab";
/// The bot of the `lab` fixture.
pub const LAB_BOT: &str = "lab-bot";

/// `human` (already logged in) prepares a grant on `repo` for `bot`, the bot
/// confirms it with the exact triple, and the human approves it. Returns the
/// grant and its proposal, with the grant `active`.
pub async fn active_grant(
    ctx: &Ctx,
    human: &Human,
    bot: &Bot,
    repo: &str,
    task: &str,
) -> Step<(GrantRef, Proposal)> {
    ctx.step(&format!(
        "{} prepares a grant for {}, which confirms it, then {} approves it",
        human.login,
        bot.login(),
        human.login
    ));
    let (grant, _) = human
        .prepare_grant(repo, bot.login(), task, "summary")
        .await?;
    let proposal = bot.read_proposal(&grant).await?;
    let confirmed = bot.confirm(&grant, &proposal).await?;
    ctx.expect_tool_ok("the agent confirms", &confirmed)?;
    let page = human.approve(&grant).await?;
    ctx.expect_status("approving", page.status, 200)?;
    let state = bot.get_grant(&grant).await?.grant()?.state;
    if state != state::ACTIVE {
        return Err(Abort::failed(format!(
            "grant {} is {state} after approval, not active",
            grant.id
        )));
    }
    Ok((grant, proposal))
}

/// How many Issues `repo` (`owner/name`) holds now, read through the setup
/// surface: the witness that a refused or replayed call created nothing.
pub async fn issue_count(ctx: &Ctx, repo: &str) -> Step<usize> {
    Ok(ctx.setup().issues(repo).await?.len())
}

/// What the Core holds, read through its APIs only: every Issue of a
/// repository, and each watched grant's state, revision and receipts. Taken
/// before and after a refused call, two equal ledgers show that nothing was
/// written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ledger {
    /// `(index, poster, title, body, grant marker)` of every Issue.
    pub issues: Vec<(i64, String, String, String, Option<i64>)>,
    /// `(id, state, state_revision)` of each watched grant, as its agent
    /// reads it natively.
    pub grants: Vec<(i64, String, i64)>,
    /// `(key, readback status, receipt status)` of each watched key.
    pub receipts: Vec<(String, u16, Option<String>)>,
}

/// What a [`Ledger`] watches: one repository, some grants of one agent, some
/// request keys.
#[derive(Debug, Clone)]
pub struct Watch {
    agent: String,
    repo: String,
    grants: Vec<GrantRef>,
    keys: Vec<(GrantRef, String)>,
}

impl Watch {
    /// Watches the Issues of `repo` and, through `agent`'s own token, the
    /// grants and keys added next.
    pub fn new(agent: &str, repo: &str) -> Self {
        Watch {
            agent: agent.to_owned(),
            repo: repo.to_owned(),
            grants: Vec::new(),
            keys: Vec::new(),
        }
    }

    /// Also watches `grant`'s state and revision.
    pub fn grant(mut self, grant: &GrantRef) -> Self {
        self.grants.push(grant.clone());
        self
    }

    /// Also watches the readback of `key` in `grant`.
    pub fn key(mut self, grant: &GrantRef, key: &str) -> Self {
        self.keys.push((grant.clone(), key.to_owned()));
        self
    }

    /// Reads the ledger now. The agent must be able to read its grants: a
    /// scenario that takes access away restores it before reading.
    pub async fn take(&self, ctx: &Ctx) -> Step<Ledger> {
        let issues = ctx
            .setup()
            .issues(&self.repo)
            .await?
            .into_iter()
            .map(|i| {
                let marker = i.agent_work_grant.as_ref().map(|m| m.grant_id);
                (i.index, i.user.login, i.title, i.body, marker)
            })
            .collect();
        let native = ctx.native(&self.agent)?;
        let mut grants = Vec::new();
        for g in &self.grants {
            let answer = native.get_grant(g).await?;
            ctx.expect_status(
                &format!("{} reads grant {} natively", self.agent, g.id),
                answer.status,
                200,
            )?;
            let grant = answer.grant()?;
            grants.push((grant.id, grant.state, grant.state_revision));
        }
        let mut receipts = Vec::new();
        for (g, key) in &self.keys {
            let answer = native.submission(g, key).await?;
            let status = match answer.status {
                200 => Some(answer.submitted()?.receipt.status),
                _ => None,
            };
            receipts.push((key.clone(), answer.status, status));
        }
        Ok(Ledger {
            issues,
            grants,
            receipts,
        })
    }

    /// Reads the ledger again and checks it equals `before`.
    pub async fn expect_unchanged(&self, ctx: &Ctx, what: &str, before: &Ledger) -> Step<()> {
        let after = self.take(ctx).await?;
        ctx.expect_eq(
            &format!("{what}: nothing changed (Issues, grants, receipts)"),
            &after,
            before,
        )
    }
}

/// Checks a native refusal: the status, and the spec's error body with a
/// `message` (its wording is the Core's own).
pub fn expect_native_error(ctx: &Ctx, what: &str, answer: &Answer, status: u16) -> Step<()> {
    expect_native_error_of(ctx, what, answer, &[status])
}

/// [`expect_native_error`] where the contract allows any of `statuses`
/// (spec §3: an unknown list filter is 400 or 422, both conformant).
pub fn expect_native_error_of(
    ctx: &Ctx,
    what: &str,
    answer: &Answer,
    statuses: &[u16],
) -> Step<()> {
    ctx.expect(
        &format!("{what}: status {statuses:?}"),
        statuses.contains(&answer.status),
        &answer.status.to_string(),
    )?;
    let shape = answer.error();
    ctx.expect(
        &format!("{what}: the error body carries a message"),
        shape.is_ok(),
        &answer.body,
    )
}

/// Checks an adapter refusal: the tool error `code` and the native status
/// it carries.
pub fn expect_tool_refusal(
    ctx: &Ctx,
    what: &str,
    reply: &ToolReply,
    code: &str,
    native_status: i64,
) -> Step<()> {
    ctx.expect_tool_error(what, reply, code)?;
    ctx.expect_eq(
        &format!("{what}: native_status"),
        reply.native_status(),
        Some(native_status),
    )
}

/// The grant's `(state, state_revision)` as `agent` reads it natively now.
pub async fn native_status(ctx: &Ctx, agent: &str, grant: &GrantRef) -> Step<(String, i64)> {
    let answer = ctx.native(agent)?.get_grant(grant).await?;
    ctx.expect_status("the agent reads the grant natively", answer.status, 200)?;
    Ok(answer.grant()?.status())
}

/// The grant whole as `agent` reads it natively now.
pub async fn native_grant(ctx: &Ctx, agent: &str, grant: &GrantRef) -> Step<Grant> {
    let answer = ctx.native(agent)?.get_grant(grant).await?;
    ctx.expect_status("the agent reads the grant natively", answer.status, 200)?;
    answer.grant()
}

/// Checks that an accepted `decision` by the human `by` changed the grant
/// from `before` to `after` as spec §2 says, and nothing else: the state,
/// one more revision, approving records `by` as `approved_by` with an
/// `approved_at`, withdrawing stamps `revoked_at` and keeps who approved.
pub fn expect_decided(
    ctx: &Ctx,
    what: &str,
    (before, after): (&Grant, &Grant),
    decision: Decision,
    by: &str,
) -> Step<()> {
    let (b, a) = (&before.raw, &after.raw);
    let login = |v: &Value| v["login"].as_str().map(str::to_owned);
    let (state, approver, approved_at, revoked_at) = match decision {
        Decision::Approve => (state::ACTIVE, Some(by.to_owned()), true, false),
        Decision::Withdraw => (
            state::REVOKED,
            login(&b["approved_by"]),
            !b["approved_at"].is_null(),
            true,
        ),
    };
    ctx.expect_eq(
        &format!(
            "{what}: state, revision, who approved, which of approved_at and revoked_at are set"
        ),
        (
            after.status(),
            login(&a["approved_by"]),
            !a["approved_at"].is_null(),
            !a["revoked_at"].is_null(),
        ),
        (
            (state.to_owned(), before.state_revision + 1),
            approver,
            approved_at,
            revoked_at,
        ),
    )?;
    let kept = [
        "id",
        "repository",
        "agent",
        "prepared_by",
        "task",
        "summary",
        "proposal",
        "created_at",
        "confirmed_at",
    ];
    let changed: Vec<&str> = kept.into_iter().filter(|m| b[*m] != a[*m]).collect();
    ctx.expect_eq(
        &format!("{what}: members the decision must not change"),
        changed,
        vec![],
    )?;
    if decision == Decision::Withdraw {
        ctx.expect_eq(
            &format!("{what}: who approved and when, kept"),
            (&a["approved_by"], &a["approved_at"]),
            (&b["approved_by"], &b["approved_at"]),
        )?;
    }
    Ok(())
}

/// Every `state` filter of the native list (spec §3): none (every
/// non-revoked state), each state's name, and `all`.
pub const LIST_FILTERS: [Option<&str>; 6] = [
    None,
    Some(state::AWAITING_AGENT),
    Some(state::AWAITING_HUMAN),
    Some(state::ACTIVE),
    Some(state::REVOKED),
    Some("all"),
];

/// How many grants `agent` has in any state (`state=all`), from the native
/// list's `X-Total-Count`: what a refused preparation must leave unchanged.
pub async fn grant_total(ctx: &Ctx, agent: &str) -> Step<i64> {
    let answer = ctx.native(agent)?.list_grants("state=all").await?;
    ctx.expect_status("the agent lists its grants natively", answer.status, 200)?;
    answer.total_count()
}

/// The proposal with one element changed at a time: `schema`, `version`,
/// `digest` (its last hex digit). Confirm and submit must refuse each.
pub fn changed_triples(proposal: &Proposal) -> Vec<(&'static str, Proposal)> {
    let mut digest = proposal.digest.clone();
    let last = if digest.ends_with('0') { "1" } else { "0" };
    digest.replace_range(digest.len().saturating_sub(1).., last);
    vec![
        (
            "schema",
            Proposal {
                schema: "agent_work_grant.v2".into(),
                ..proposal.clone()
            },
        ),
        (
            "version",
            Proposal {
                version: 2,
                ..proposal.clone()
            },
        ),
        (
            "digest",
            Proposal {
                digest,
                ..proposal.clone()
            },
        ),
    ]
}

/// Checks that `got` is the receipt `want` by every member the contract
/// names (grant, key, status, review state, submitter, Issue); extra members
/// and their order are the Core's own.
pub fn expect_same_receipt(ctx: &Ctx, what: &str, got: &Receipt, want: &Receipt) -> Step<()> {
    let members = |r: &Receipt| {
        (
            r.grant_id,
            r.request_key.clone(),
            r.status.clone(),
            r.review_state.clone(),
            r.submitted_by.clone(),
            r.issue.clone(),
        )
    };
    ctx.expect_eq(what, members(got), members(want))
}

/// Submits through the adapter and expects success with `native_status`;
/// returns the receipt, checked to name this grant and key.
pub async fn submit_ok(
    ctx: &Ctx,
    bot: &Bot,
    grant: &GrantRef,
    proposal: &Proposal,
    submission: &NewIssue,
    native_status: i64,
) -> Step<Receipt> {
    let reply = bot.submit(grant, proposal, submission).await?;
    ctx.expect_tool_ok("the submission succeeds", &reply)?;
    ctx.expect_eq("native status", reply.native_status(), Some(native_status))?;
    let receipt = reply.submitted()?.receipt;
    ctx.expect_eq(
        "the receipt names this grant and the caller's key",
        (receipt.grant_id, receipt.request_key.as_str()),
        (grant.id, submission.request_key.as_str()),
    )?;
    Ok(receipt)
}

/// lab-bot confirms `grant` natively with its own triple.
pub(crate) async fn confirm(ctx: &Ctx, grant: &GrantRef) -> Step<()> {
    let native = ctx.native(LAB_BOT)?;
    let proposal = native.get_grant(grant).await?.grant()?.proposal;
    let answer = native.confirm(grant, &proposal).await?;
    ctx.expect_status("lab-bot confirms natively", answer.status, 200)
}
