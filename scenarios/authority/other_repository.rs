//! Family 12, the URL's repository on the browser's pages and forms (spec
//! §3 "A grant is addressed only under its own repository", §4): a grant's
//! page, approve and withdraw under any other `{owner}/{repo}` — one the
//! caller administers, one it cannot see, one that does not exist — for
//! every human who administers something.

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT};
use crate::support::forms::accepted;
use crate::support::forms::{hand_form, seen};
use crate::support::tables::Table;
use crate::support::witnesses::Unchanged;

/// alice's grant is 404 under any repository but its own, whoever asks, and
/// changes nothing; under its own, an admin collaborator's approve works.
#[scenario(Authority, parity, clauses = ["S3.own-repository", "S4.page.grant", "S4.approve", "S4.withdraw", "S4.admin-only"])]
async fn grant_forms_under_another_repository(ctx: &mut Ctx) -> Outcome {
    // Asked on its page, approve and withdraw by the owner, an admin
    // collaborator, the site admin and a stranger, each with a `_csrf` of its
    // own session, under a repository it administers, one it cannot see and
    // one that does not exist. Under its own repository the admin
    // collaborator's approve records her as the approver.
    ctx.step(
        "alice and mallory get private repositories of their own; wendy administers alice/lab",
    );
    for (owner, name) in [("alice", "side"), ("mallory", "own"), ("wendy", "own")] {
        ctx.setup().create_repo(owner, name, true).await?;
    }
    ctx.setup().add_collaborator(LAB, "wendy", "admin").await?;

    ctx.step("alice prepares a grant for lab-bot, which confirms it");
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let (grant, _) = alice
        .prepare_grant(LAB, LAB_BOT, "a task", "summary")
        .await?;
    crate::support::flows::confirm(ctx, &grant).await?;

    // (caller, a repository it administers besides alice/lab, one it
    // cannot see): every one of them is another repository for the grant.
    let callers = [
        (
            "owner",
            ctx.human("alice")?,
            "alice/side",
            Some("mallory/own"),
        ),
        (
            "admin collaborator",
            ctx.human("wendy")?,
            "wendy/own",
            Some("mallory/own"),
        ),
        ("site admin", ctx.site_admin()?, "mallory/own", None),
        (
            "stranger",
            ctx.human("mallory")?,
            "mallory/own",
            Some("alice/side"),
        ),
    ];
    ctx.step("each caller signs in and takes a _csrf of its own session");
    let mut csrf = Vec::new();
    for (_, human, administered, _) in &callers {
        human.login().await?;
        csrf.push(
            human
                .session_csrf(&[&core_api::new_grant_page(administered)])
                .await?,
        );
    }

    let witness = Unchanged::take(ctx, &grant).await?;
    let mut table = Table::new("the grant under another repository", "its page and forms");
    ctx.step("every caller opens the grant and posts its forms under the other repositories");
    for ((label, human, administered, invisible), csrf) in callers.iter().zip(&csrf) {
        let elsewhere = [Some(*administered), *invisible, Some("alice/nowhere")];
        for repo in elsewhere.into_iter().flatten() {
            let (owner, name) = repo.split_once('/').unwrap_or((repo, ""));
            let moved = GrantRef {
                owner: owner.to_owned(),
                repo: name.to_owned(),
                id: grant.id,
            };
            let page = human.open(&core_api::grant_page(&moved)).await?;
            let what = format!("GET grant page under {repo} × {label}");
            table.check(&what, not_found(&page), seen(&page));
            for decision in [Decision::Approve, Decision::Withdraw] {
                let fields = [(fields::STATE_REVISION, "2".to_owned())];
                let form = hand_form(human, &core_api::decision(&moved, decision), csrf, &fields)?;
                let page = human.submit(&form).await?;
                let what = format!("POST {} under {repo} × {label}", decision.segment());
                table.check(&what, not_found(&page), seen(&page));
            }
        }
    }
    // The answers first, so a wrong one is named before what it changed.
    table.finish(ctx)?;
    witness
        .expect(ctx, "after the forms under other repositories")
        .await?;

    ctx.step("wendy, an admin collaborator, approves the grant under its own repository");
    let before = flows::native_grant(ctx, LAB_BOT, &grant).await?;
    let page = ctx.human("wendy")?.approve(&grant).await?;
    ctx.expect(
        "the approve form is accepted",
        accepted(&page),
        &seen(&page),
    )?;
    let after = flows::native_grant(ctx, LAB_BOT, &grant).await?;
    flows::expect_decided(
        ctx,
        "approved by wendy",
        (&before, &after),
        Decision::Approve,
        "wendy",
    )
}

/// Whether `page` is the 404 §1 gives what a caller may not see, at once.
fn not_found(page: &Page) -> bool {
    page.redirects.is_empty() && page.status == 404
}
