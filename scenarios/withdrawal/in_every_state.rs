//! Family 6: withdrawal — a withdrawn grant blocks confirm and submit while
//! its receipts still read back.

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT};

const TASK: &str = "Sort the backlog";

/// A grant withdrawn before its bot confirmed is revoked for good: confirm
/// and submit are 409 and write nothing, and its page offers no form.
#[scenario(Withdrawal, parity, clauses = ["S4.withdraw", "S3.withdrawn", "S2.states", "S3.list.state"])]
async fn withdrawn_while_awaiting_agent(ctx: &mut Ctx) -> Outcome {
    // Withdrawn through the browser form. 409 natively and `conflict` through
    // the adapter; the list shows the grant only under `revoked` and `all`.
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    ctx.step("alice prepares a grant for lab-bot");
    let (grant, _) = alice.prepare_grant(LAB, LAB_BOT, TASK, "summary").await?;
    let proposal = bot.read_proposal(&grant).await?;
    let w = Withdrawn::new(ctx, alice, bot, grant, proposal)?;
    w.withdraw_and_check(ctx, 2, None).await
}

/// A grant withdrawn after its bot confirmed, before approval, is revoked for
/// good: confirm and submit are 409 and write nothing, and its page offers no
/// form.
#[scenario(Withdrawal, parity, clauses = ["S4.withdraw", "S3.withdrawn", "S2.states"])]
async fn withdrawn_while_awaiting_human(ctx: &mut Ctx) -> Outcome {
    // Withdrawn through the browser form; the list shows the grant only under
    // `revoked` and `all`.
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    ctx.step("alice prepares a grant for lab-bot, which confirms it");
    let (grant, _) = alice.prepare_grant(LAB, LAB_BOT, TASK, "summary").await?;
    let proposal = bot.read_proposal(&grant).await?;
    let confirmed = bot.confirm(&grant, &proposal).await?;
    ctx.expect_tool_ok("lab-bot confirms", &confirmed)?;
    ctx.expect_eq(
        "state after confirm",
        confirmed.grant()?.state,
        state::AWAITING_HUMAN.to_owned(),
    )?;
    let w = Withdrawn::new(ctx, alice, bot, grant, proposal)?;
    w.withdraw_and_check(ctx, 3, None).await
}

/// An active grant, once withdrawn, refuses confirm, submissions and replays
/// with 409, while its earlier submission still reads back with the same
/// receipt.
#[scenario(Withdrawal, parity, clauses = ["S4.withdraw", "S3.withdrawn", "S3.submit.active"])]
async fn withdrawn_while_active(ctx: &mut Ctx) -> Outcome {
    // Withdrawn through the browser form; nothing is written; the readback
    // answers 200; the list shows the grant only under `revoked` and `all`.
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let (grant, proposal) = flows::active_grant(ctx, &alice, &bot, LAB, TASK).await?;
    ctx.step("lab-bot submits an Issue while the grant is active");
    let earlier = NewIssue::new("Backlog: close stale items", "Items older than a year.");
    let created = bot.submit(&grant, &proposal, &earlier).await?;
    ctx.expect_tool_ok("submit succeeds", &created)?;
    ctx.expect_eq("native status", created.native_status(), Some(201))?;
    let receipt = created.submitted()?.receipt;
    let w = Withdrawn::new(ctx, alice, bot, grant, proposal)?;
    w.withdraw_and_check(ctx, 4, Some((&earlier, &receipt)))
        .await
}

/// A grant about to be withdrawn, and who acts on it.
struct Withdrawn {
    alice: Human,
    bot: Bot,
    native: NativeClient,
    grant: GrantRef,
    proposal: Proposal,
}

impl Withdrawn {
    fn new(
        ctx: &Ctx,
        alice: Human,
        bot: Bot,
        grant: GrantRef,
        proposal: Proposal,
    ) -> Step<Withdrawn> {
        Ok(Withdrawn {
            native: ctx.native(LAB_BOT)?,
            alice,
            bot,
            grant,
            proposal,
        })
    }

    /// alice withdraws through the form; then every claim of the family
    /// about a revoked grant. `revision` is the state revision withdrawal
    /// leads to; `earlier` is a submission made before, with its receipt.
    async fn withdraw_and_check(
        &self,
        ctx: &Ctx,
        revision: i64,
        earlier: Option<(&NewIssue, &Receipt)>,
    ) -> Outcome {
        let (alice, bot, native, grant, proposal) = (
            &self.alice,
            &self.bot,
            &self.native,
            &self.grant,
            &self.proposal,
        );
        ctx.step("alice withdraws the grant through the withdraw form");
        let page = alice.withdraw(grant).await?;
        ctx.expect_status("the page after withdrawing", page.status, 200)?;

        ctx.step("the grant page shows it revoked, with neither approve nor withdraw form");
        let page = alice.grant_page(grant).await?;
        ctx.expect_status("the grant page", page.status, 200)?;
        ctx.expect(
            "the page shows `revoked`",
            page.shows(state::REVOKED),
            &page.text(),
        )?;
        let forms = (
            page.has_form_to(&core_api::decision(grant, Decision::Approve)),
            page.has_form_to(&core_api::decision(grant, Decision::Withdraw)),
        );
        ctx.expect_eq(
            "forms on the page (approve, withdraw)",
            forms,
            (false, false),
        )?;
        ctx.observe(
            "the revoked grant's page offers (approve, withdraw)",
            &forms,
        );

        ctx.step("lab-bot reads the grant revoked, natively and through the adapter");
        let read = bot.get_grant(grant).await?;
        ctx.expect_tool_ok("get_agent_work_grant succeeds", &read)?;
        let g = read.grant()?;
        ctx.expect_eq(
            "state and revision through the adapter",
            g.status(),
            (state::REVOKED.to_owned(), revision),
        )?;
        ctx.expect(
            "revoked_at is set",
            g.revoked_at.is_some(),
            &json_text(&g.revoked_at),
        )?;
        ctx.expect_eq(
            "native state and revision",
            flows::native_status(ctx, LAB_BOT, grant).await?,
            (state::REVOKED.to_owned(), revision),
        )?;
        ctx.observe("the revoked grant", &g.raw);

        let fresh = NewIssue::new("After withdrawal", "Must not be created.");
        let mut watch = flows::Watch::new(LAB_BOT, &grant.full_name())
            .grant(grant)
            .key(grant, &fresh.request_key);
        if let Some((earlier, _)) = earlier {
            watch = watch.key(grant, &earlier.request_key);
        }
        let before = watch.take(ctx).await?;

        ctx.step("confirm is refused with 409, natively and through the adapter");
        let answer = native.confirm(grant, proposal).await?;
        flows::expect_native_error(ctx, "native confirm", &answer, 409)?;
        let reply = bot.confirm(grant, proposal).await?;
        flows::expect_tool_refusal(ctx, "confirm through the adapter", &reply, "conflict", 409)?;

        ctx.step("a new submission is refused with 409, natively and through the adapter");
        let answer = native.submit(grant, proposal, &fresh).await?;
        flows::expect_native_error(ctx, "native submit", &answer, 409)?;
        let reply = bot.submit(grant, proposal, &fresh).await?;
        flows::expect_tool_refusal(ctx, "submit through the adapter", &reply, "conflict", 409)?;

        if let Some((earlier, _)) = earlier {
            ctx.step("an identical replay of the earlier submission is refused with 409 too");
            let answer = native.submit(grant, proposal, earlier).await?;
            flows::expect_native_error(ctx, "native replay", &answer, 409)?;
            let reply = bot.submit(grant, proposal, earlier).await?;
            flows::expect_tool_refusal(ctx, "replay through the adapter", &reply, "conflict", 409)?;
        }

        ctx.step("nothing was written: same Issues, same state and revision, same receipts");
        watch
            .expect_unchanged(ctx, "after the refusals", &before)
            .await?;
        ctx.expect_eq(
            "native state and revision",
            flows::native_status(ctx, LAB_BOT, grant).await?,
            (state::REVOKED.to_owned(), revision),
        )?;
        ctx.observe("the ledger after the refusals", &before.receipts);

        if let Some((earlier, receipt)) = earlier {
            self.expect_earlier_reads_back(ctx, earlier, receipt)
                .await?;
        }
        self.expect_listed_only_as_revoked(ctx).await
    }

    /// The submission made before withdrawal still reads back with its
    /// receipt, natively, through the adapter and on alice's grant page.
    async fn expect_earlier_reads_back(
        &self,
        ctx: &Ctx,
        earlier: &NewIssue,
        receipt: &Receipt,
    ) -> Step<()> {
        ctx.step("the earlier submission still reads back with its receipt");
        let answer = self
            .native
            .submission(&self.grant, &earlier.request_key)
            .await?;
        ctx.expect_status("native readback", answer.status, 200)?;
        let back = answer.submitted()?;
        flows::expect_same_receipt(ctx, "the same receipt", &back.receipt, receipt)?;
        ctx.expect_eq(
            "the readback names the revoked grant",
            back.grant.state.as_str(),
            state::REVOKED,
        )?;
        let reply = self
            .bot
            .submission(&self.grant, &earlier.request_key)
            .await?;
        ctx.expect_tool_ok("readback through the adapter succeeds", &reply)?;
        ctx.expect_eq("native status", reply.native_status(), Some(200))?;
        let through_adapter = reply.submitted()?.receipt;
        flows::expect_same_receipt(
            ctx,
            "the same receipt through the adapter",
            &through_adapter,
            receipt,
        )?;
        ctx.observe("the readback after withdrawal", &through_adapter.raw);
        let page = self.alice.grant_page(&self.grant).await?;
        ctx.expect(
            "the grant page still lists the receipt: its key and `submitted`",
            page.shows(&earlier.request_key) && page.shows("submitted"),
            &page.text(),
        )
    }

    /// The grant is listed, natively and through the adapter, only under
    /// `state=revoked` and `state=all`.
    async fn expect_listed_only_as_revoked(&self, ctx: &Ctx) -> Outcome {
        ctx.step("the list shows the grant only under `revoked` and `all`");
        let mut seen = Vec::new();
        for filter in flows::LIST_FILTERS {
            let expected = matches!(filter, Some(state::REVOKED | "all"));
            let label = filter.unwrap_or("(default)");
            let query = filter.map(|s| format!("state={s}")).unwrap_or_default();
            let answer = self.native.list_grants(&query).await?;
            ctx.expect_status(&format!("native list {label}"), answer.status, 200)?;
            let listed = answer.grants()?.iter().any(|g| g.id == self.grant.id);
            ctx.expect_eq(&format!("native list {label} holds it"), listed, expected)?;
            let reply = self.bot.list_grants(None, filter).await?;
            ctx.expect_tool_ok(&format!("adapter list {label}"), &reply)?;
            let listed_too = reply.list()?.ids().contains(&self.grant.id);
            ctx.expect_eq(
                &format!("adapter list {label} holds it"),
                listed_too,
                expected,
            )?;
            seen.push((label, listed, listed_too));
        }
        ctx.observe("list membership per state (native, adapter)", &seen);
        Ok(())
    }
}
