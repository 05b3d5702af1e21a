//! Family 19, continued: the `owner`/`repo` segments of the native grant
//! routes (spec §3), the Core's side of what `segment_grammar` proves for
//! the adapter (issue #27 §2). A grant is reached only under its own
//! repository: an unknown owner or repository, another repository the bot
//! can see, and segments that decode to something else are 404 (400 or
//! 422 for a segment the Core finds malformed), never the grant.
//!
//! The spec does not say whether owner and repository names are
//! case-sensitive (Forgejo's are not): a case-changed or percent-encoded
//! spelling of `alice/lab` may serve the grant (200 with that very grant)
//! or be 404, never another repository's grant.

use grantgate_engine::prelude::*;

use crate::support::flows::{LAB, LAB_BOT, Watch};
use crate::support::tables::Table;

/// A second repository of alice's where lab-bot is a write collaborator.
const OTHER: &str = "alice/other";

/// The native grant routes under `owner/repo` for grant `id`: `(route,
/// method, path, body)`.
fn routes(
    owner: &str,
    repo: &str,
    id: i64,
    proposal: &Proposal,
    issue: &NewIssue,
) -> Vec<(&'static str, &'static str, String, Option<Value>)> {
    let base = format!("/api/v1/repos/{owner}/{repo}/agent-work-grants/{id}");
    vec![
        ("get", "GET", base.clone(), None),
        (
            "confirm",
            "POST",
            format!("{base}/confirm"),
            Some(core_api::confirm_body(proposal)),
        ),
        (
            "submit",
            "POST",
            format!("{base}/issues"),
            Some(core_api::submit_body(proposal, issue)),
        ),
        (
            "readback",
            "GET",
            format!("{base}/submissions/{}", issue.request_key),
            None,
        ),
    ]
}

/// A native grant route never serves lab-bot's grant under an owner or
/// repository that is not its own, and nothing is written.
#[scenario(Grammars, parity, clauses = ["S3.statuses", "S3.route.get", "S3.route.confirm", "S3.route.submit", "S3.route.readback"])]
async fn native_segment_grammar(ctx: &mut Ctx) -> Outcome {
    // For lab-bot's grant in `alice/lab` (awaiting its confirmation, so a
    // wrongly served confirm would show): an unknown owner, an unknown
    // repository, `alice/other` (visible to lab-bot, holding a grant of its
    // own), encoded slashes, a space and NUL, on get, confirm, submit and
    // readback, are 404 (400 or 422 for a malformed segment); `alice/other`'s
    // grant id under `alice/lab` is 404 too. Case-changed and percent-encoded
    // spellings of `alice/lab` on get and readback are 200 with that very
    // grant, or 404.
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in; alice/other is made with lab-bot as a writer");
    alice.login().await?;
    ctx.setup().create_repo("alice", "other", true).await?;
    ctx.setup()
        .add_collaborator(OTHER, LAB_BOT, "write")
        .await?;
    ctx.step("alice prepares a grant for lab-bot in each repository");
    let (grant, _) = alice
        .prepare_grant(LAB, LAB_BOT, "Segments.", "summary")
        .await?;
    let (theirs, _) = alice
        .prepare_grant(OTHER, LAB_BOT, "Other.", "summary")
        .await?;
    let native = ctx.native(LAB_BOT)?;
    let answer = native.get_grant(&grant).await?;
    ctx.expect_status("lab-bot reads its grant", answer.status, 200)?;
    let mine = answer.grant()?;
    let proposal = mine.proposal.clone();
    let issue = NewIssue::new("Segments", "segments");
    let watch = Watch::new(LAB_BOT, LAB)
        .grant(&grant)
        .key(&grant, &issue.request_key);
    let before = watch.take(ctx).await?;
    let other_before = native.get_grant(&theirs).await?.grant()?.status();

    // (case, owner, repo, id, may it be this grant)
    let mut calls: Vec<(String, String, String, i64, bool)> = Vec::new();
    let never = [
        ("an unknown owner", "grantgate-nobody", "lab"),
        ("an unknown repository", "alice", "grantgate-none"),
        ("another repository", "alice", "other"),
        ("owner and repo swapped", "lab", "alice"),
        ("an encoded slash in owner", "alice%2Flab", "x"),
        ("an encoded slash after repo", "alice", "lab%2F"),
        ("a space after repo", "alice", "lab%20"),
        ("a NUL after repo", "alice", "lab%00"),
        ("repo with .git", "alice", "lab.git.x"),
    ];
    for (case, owner, repo) in never {
        calls.push((case.into(), owner.into(), repo.into(), grant.id, false));
    }
    calls.push((
        "alice/other's grant under alice/lab".into(),
        "alice".into(),
        "lab".into(),
        theirs.id,
        false,
    ));
    let spellings = [
        ("owner in another case", "Alice", "lab"),
        ("repo in another case", "alice", "LAB"),
        ("both in another case", "ALICE", "Lab"),
        ("a letter of repo percent-encoded", "alice", "%6Cab"),
        ("a letter of owner percent-encoded", "%61lice", "lab"),
    ];
    for (case, owner, repo) in spellings {
        calls.push((case.into(), owner.into(), repo.into(), grant.id, true));
    }
    let requests: Vec<(String, &str, String, Option<Value>, bool)> = calls
        .iter()
        .flat_map(|(case, owner, repo, id, same)| {
            routes(owner, repo, *id, &proposal, &issue)
                .into_iter()
                // A spelling that may be the grant itself is only read: a
                // Core serving it would rightly confirm.
                .filter(move |(route, ..)| !same || matches!(*route, "get" | "readback"))
                .map(move |(route, method, path, body)| {
                    (format!("{route}: {case}"), method, path, body, *same)
                })
        })
        .collect();
    ctx.step(&format!(
        "lab-bot sends {} requests at once",
        requests.len()
    ));
    let native = &native;
    let answers = join_all(
        requests
            .iter()
            .map(|(_, method, path, body, _)| native.call(method, path, body.as_ref())),
    )
    .await
    .into_iter()
    .collect::<Step<Vec<Answer>>>()?;
    let mut table = Table::new("owner and repo segments", "native grant routes");
    for ((case, _, path, _, same), answer) in requests.iter().zip(&answers) {
        if *same && answer.status == 200 {
            // Served: it must be this grant of alice/lab, and readback
            // of a key never used stays 404 anyway.
            let this = answer
                .grant()
                .is_ok_and(|g| g.id == grant.id && g.repository.id == mine.repository.id);
            table.check(
                case,
                this && !path.contains("/submissions/"),
                "200".to_owned(),
            );
            continue;
        }
        table.status(case, answer, &[400, 404, 422]);
    }
    let cases = table.finish(ctx)?;
    ctx.step("nothing was written");
    watch
        .expect_unchanged(ctx, "after every segment", &before)
        .await?;
    ctx.expect_eq(
        "alice/other's grant",
        native.get_grant(&theirs).await?.grant()?.status(),
        other_before,
    )?;
    ctx.observe("cases", &cases);
    Ok(())
}
