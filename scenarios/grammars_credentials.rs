//! Family 19, credentials (issue #27 §2): the `Authorization` grammar of
//! spec §1 — `token T`, `Bearer T`, Basic `login:token` or `login:password`,
//! the scheme case-insensitive (RFC 9110 §11.1) — generated as valid and
//! invalid classes and sent to every route that takes a credential: the
//! five grant routes (§3), the ordinary Issue routes and a site-admin setup
//! route (§5). The answers are §3's: 401 for no or a bad credential, 404
//! for a grant route called by another user, 403 for a good credential
//! without the permission to act; nothing is written on a refusal.

use grantgate_engine::prelude::*;

use crate::flows::{self, LAB, LAB_BOT, Watch};
use crate::grammars::{Table, at_once};

/// This file's scenarios, in catalogue order.
pub fn scenarios() -> Vec<Scenario> {
    vec![credential_grammar()]
}

/// The bot that is not the grant's agent (fixture `lab`).
const OTHER_BOT: &str = "other-bot";

/// `text` with its first character replaced by another of the same kind.
fn changed(text: &str) -> String {
    let first = if text.starts_with('0') { "1" } else { "0" };
    format!("{first}{}", text.get(1..).unwrap_or_default())
}

/// A well-formed token nobody was given: 40 hex digits from fresh v4 keys.
fn made_up() -> String {
    let hex = || NewIssue::new("", "").request_key.replace('-', "");
    format!("{}{}", hex(), hex())[..40].to_owned()
}

/// The valid classes: every form spec §1 accepts, the scheme in another
/// case too.
fn valid(c: &Credentials) -> Vec<(String, Option<String>)> {
    let (login, token, password) = (&c.login, &c.token, &c.password);
    [
        ("token T", format!("token {token}")),
        ("Bearer T", format!("Bearer {token}")),
        ("bearer T (scheme case)", format!("bearer {token}")),
        ("Basic login:token", basic(&format!("{login}:{token}"))),
        (
            "Basic login:password",
            basic(&format!("{login}:{password}")),
        ),
    ]
    .into_iter()
    .map(|(case, value)| (case.to_owned(), Some(value)))
    .collect()
}

/// The invalid classes, generated from the bot's own secrets: none, empty,
/// a scheme alone or unknown, scheme and token run together, the bare
/// token, Basic that is no base64 or has no colon or an empty password, a
/// made-up token, the token with one character changed in each form, a
/// wrong password, an unknown login.
fn invalid(c: &Credentials) -> Vec<(String, Option<String>)> {
    let (login, token) = (&c.login, &c.token);
    let near = changed(token);
    let fake = made_up();
    let mut cases = vec![("no Authorization".to_owned(), None)];
    cases.extend(
        [
            ("empty value", String::new()),
            ("scheme token alone", "token".to_owned()),
            ("scheme Bearer alone", "Bearer".to_owned()),
            ("unknown scheme", format!("Digest {token}")),
            ("no space after token", format!("token{token}")),
            ("no space after Bearer", format!("Bearer{token}")),
            ("bare token", token.clone()),
            ("Basic not base64", format!("Basic !{token}!")),
            ("Basic without a colon", basic(&format!("{login}{token}"))),
            ("Basic empty password", basic(&format!("{login}:"))),
            ("made-up token", format!("token {fake}")),
            ("made-up Bearer", format!("Bearer {fake}")),
            ("token one character changed", format!("token {near}")),
            ("Bearer one character changed", format!("Bearer {near}")),
            (
                "Basic login:token one character changed",
                basic(&format!("{login}:{near}")),
            ),
            (
                "Basic wrong password",
                basic(&format!("{login}:{}", made_up())),
            ),
            (
                "Basic unknown login with a password",
                basic(&format!("no-such-login-gg:{}", made_up())),
            ),
        ]
        .into_iter()
        .map(|(case, value)| (case.to_owned(), Some(value))),
    );
    cases
}

/// How a route answers a class of caller.
#[derive(Clone, Copy, PartialEq)]
enum Caller {
    /// The bot's own valid credential.
    Own,
    /// No or a bad credential: 401 everywhere.
    Bad,
    /// Another bot's valid credential.
    Other,
}

/// The credential grammar on every route that takes one: each valid form
/// of lab-bot's credential is served on the five grant routes (list and
/// get 200, confirm of an active grant 409, submit 201, readback 200), on
/// `GET` and `POST /repos/{owner}/{repo}/issues` (200, 201), and refused
/// with 403 on `POST /admin/users` (a bot is no site admin); each invalid
/// class is 401 with an error body on all eight; another bot's token gets
/// 404 on each grant route of lab-bot's grants and a list without them,
/// and 403 on the admin route. Nothing is written for a refusal.
#[scenario(Grammars, parity, clauses = ["S1.token.forms", "S3.statuses", "S3.agent-only", "S3.error-body", "S5.setup.issues", "S5.setup.issue-read"])]
async fn credential_grammar(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let (active, proposal) = flows::active_grant(ctx, &alice, &bot, LAB, "Credentials").await?;
    let (pending, _) = alice
        .prepare_grant(LAB, LAB_BOT, "Credentials, pending", "summary")
        .await?;
    let pending_proposal = bot.read_proposal(&pending).await?;
    let native = ctx.native(LAB_BOT)?;
    let first = NewIssue::new("Credentials", "the receipt every caller reads");
    let answer = native.submit(&active, &proposal, &first).await?;
    ctx.expect_status("lab-bot's first submission", answer.status, 201)?;
    let index = answer.json()?["submission"]["issue"]["index"]
        .as_i64()
        .unwrap_or(1);

    let valid = ctx.authorizations(LAB_BOT, None, valid)?;
    let invalid = ctx.authorizations(LAB_BOT, None, invalid)?;
    let other = ctx.authorizations(OTHER_BOT, None, |c| {
        vec![(
            "another bot's token".into(),
            Some(format!("token {}", c.token)),
        )]
    })?;

    // The eight routes, each with what the caller sends and gets.
    let refused = NewIssue::new("Refused", "never written");
    let route =
        |name: &str, caller: Caller, n: usize| -> (String, &str, String, Option<Value>, u16) {
            let grant_path = |g: &GrantRef| core_api::grant(g);
            let confirm_grant = if caller == Caller::Own {
                &active
            } else {
                &pending
            };
            let confirm_proposal = if caller == Caller::Own {
                &proposal
            } else {
                &pending_proposal
            };
            let own_issue = NewIssue::new(&format!("Credentials {n}"), name);
            match name {
                "list" => (
                    "list".into(),
                    "GET",
                    core_api::grant_list("state=all"),
                    None,
                    200,
                ),
                "get" => (
                    "get".into(),
                    "GET",
                    grant_path(&active),
                    None,
                    if caller == Caller::Own { 200 } else { 404 },
                ),
                "confirm" => (
                    "confirm".into(),
                    "POST",
                    core_api::confirm(confirm_grant),
                    Some(core_api::confirm_body(confirm_proposal)),
                    match caller {
                        Caller::Own => 409,
                        _ => 404,
                    },
                ),
                "submit" => (
                    "submit".into(),
                    "POST",
                    core_api::submit(&active),
                    Some(core_api::submit_body(
                        &proposal,
                        if caller == Caller::Own {
                            &own_issue
                        } else {
                            &refused
                        },
                    )),
                    if caller == Caller::Own { 201 } else { 404 },
                ),
                "readback" => (
                    "readback".into(),
                    "GET",
                    core_api::submission(&active, &first.request_key),
                    None,
                    if caller == Caller::Own { 200 } else { 404 },
                ),
                "issue" => (
                    "GET issue".into(),
                    "GET",
                    core_api::issue(LAB, index),
                    None,
                    200,
                ),
                "new issue" => (
                    "POST issues".into(),
                    "POST",
                    core_api::issues(LAB),
                    Some(json!({"title": format!("Ordinary {n}"), "body": name})),
                    201,
                ),
                _ => (
                    "POST admin/users".into(),
                    "POST",
                    "/api/v1/admin/users".into(),
                    Some(json!({
                        "login": format!("cred-user-{n}"),
                        "email": format!("cred-user-{n}@example.invalid"),
                        "password": made_up(),
                        "type": "individual",
                    })),
                    403,
                ),
            }
        };
    let grant_routes = ["list", "get", "confirm", "submit", "readback"];
    let all_routes = [&grant_routes[..], &["issue", "new issue", "admin"]].concat();

    let watch = Watch::new(LAB_BOT, LAB)
        .grant(&active)
        .grant(&pending)
        .key(&active, &first.request_key)
        .key(&active, &refused.request_key);
    let before = watch.take(ctx).await?;
    let issues = flows::issue_count(ctx, LAB).await?;
    let mut cases = 0;
    let mut n = 0;

    ctx.step(&format!(
        "{} invalid credentials on {} routes, at once",
        invalid.len(),
        all_routes.len()
    ));
    let mut table = Table::new("invalid credentials", "grant, Issue and admin routes");
    let mut calls = Vec::new();
    for (case, value) in &invalid {
        for r in &all_routes {
            n += 1;
            calls.push((case, value, route(r, Caller::Bad, n)));
        }
    }
    let answers = at_once(
        calls
            .iter()
            .map(|(case, value, (_, method, path, body, _))| {
                let client = native.with_authorization(case, value.as_deref());
                async move { client.call(method, path, body.as_ref()).await }
            }),
    )
    .await?;
    for ((case, value, (name, ..)), answer) in calls.iter().zip(&answers) {
        // With no credential at all, the private repository of an ordinary
        // route is as invisible as to any user without permission (§1).
        let allowed: &[u16] = if value.is_none() && name.contains("issue") {
            &[401, 404]
        } else {
            &[401]
        };
        table.status(&format!("{name} with {case}"), answer, allowed);
    }
    cases += table.finish(ctx)?;

    ctx.step("another bot's token on lab-bot's grant routes and the admin route");
    let mut table = Table::new("another bot's credential", "grant and admin routes");
    let (case, value) = &other[0];
    let client = native.with_authorization(case, value.as_deref());
    for r in grant_routes.iter().chain(&["admin"]) {
        n += 1;
        let (name, method, path, body, status) = route(r, Caller::Other, n);
        let answer = client.call(method, &path, body.as_ref()).await?;
        if *r == "list" {
            let theirs = answer
                .grants()
                .map(|g| g.iter().any(|g| g.id == active.id || g.id == pending.id));
            table.check(
                &name,
                answer.status == 200 && theirs == Ok(false),
                answer.status.to_string(),
            );
        } else {
            table.status(&name, &answer, &[status]);
        }
    }
    cases += table.finish(ctx)?;

    ctx.step("nothing was written for a refusal");
    watch
        .expect_unchanged(ctx, "after the refused credentials", &before)
        .await?;
    ctx.expect_eq(
        "Issues in alice/lab after the refused credentials",
        flows::issue_count(ctx, LAB).await?,
        issues,
    )?;

    ctx.step(&format!(
        "{} valid forms on {} routes",
        valid.len(),
        all_routes.len()
    ));
    let mut table = Table::new("valid credentials", "grant, Issue and admin routes");
    for (case, value) in &valid {
        let client = native.with_authorization(case, value.as_deref());
        for r in &all_routes {
            n += 1;
            let (name, method, path, body, status) = route(r, Caller::Own, n);
            let answer = client.call(method, &path, body.as_ref()).await?;
            if *r == "list" {
                let listed = answer.grants().map(|g| g.iter().any(|g| g.id == active.id));
                table.check(
                    &format!("{name} with {case}"),
                    answer.status == 200 && listed == Ok(true),
                    answer.status.to_string(),
                );
            } else {
                table.status(&format!("{name} with {case}"), &answer, &[status]);
            }
        }
    }
    cases += table.finish(ctx)?;
    ctx.expect_eq(
        "Issues in alice/lab after the valid forms (one submission and one ordinary Issue each)",
        flows::issue_count(ctx, LAB).await?,
        issues + 2 * valid.len(),
    )?;
    ctx.observe("cases", &cases);
    Ok(())
}
