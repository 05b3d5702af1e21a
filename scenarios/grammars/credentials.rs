//! Family 19, credentials (issue #27 §2): the `Authorization` grammar of
//! spec §1 — `token T`, `Bearer T`, Basic `login:token` or `login:password`,
//! the scheme case-insensitive (RFC 9110 §11.1) — generated as valid and
//! invalid classes and sent to every route that takes a credential: the
//! five grant routes (§3), the ordinary Issue routes and a site-admin setup
//! route (§5). The answers are §3's: 401 for no or a bad credential, 404
//! for a grant route called by another user, 403 (or 404 on the admin route) for a good credential
//! without the permission to act; nothing is written on a refusal.

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT, Watch};
use crate::support::tables::{Table, at_once};

/// The bot that is not the grant's agent (fixture `lab`).
const OTHER_BOT: &str = "other-bot";

/// `text` (hex) with its first character replaced by another hex digit.
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
/// wrong password, an unknown login, NUL in the login or the password.
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
            // NUL reaches no database (PostgreSQL refuses it in text).
            ("Basic login with NUL", basic(&format!("{login}\0:{token}"))),
            (
                "Basic password with NUL",
                basic(&format!("{login}:{token}\0")),
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

/// The grant routes (§3), then the ordinary Issue routes and a site-admin
/// setup route (§5): every route that takes a credential.
const GRANT_ROUTES: [&str; 5] = ["list", "get", "confirm", "submit", "readback"];
const ROUTES: [&str; 8] = [
    "list",
    "get",
    "confirm",
    "submit",
    "readback",
    "GET issue",
    "POST issues",
    "POST admin/users",
];

/// What the routes act on: an active grant of lab-bot with one receipt
/// (and its Issue), a grant awaiting lab-bot's confirmation, and the
/// witness that a refusal writes nothing.
struct World {
    active: GrantRef,
    proposal: Proposal,
    pending: GrantRef,
    pending_proposal: Proposal,
    first: NewIssue,
    refused: NewIssue,
    index: i64,
    /// The password of every user the admin route is asked to make: a
    /// registered secret, though no such user may come to be.
    password: String,
    watch: Watch,
}

impl World {
    /// alice prepares both grants; lab-bot confirms one, alice approves it,
    /// and lab-bot submits one Issue through it.
    async fn new(ctx: &mut Ctx) -> Step<World> {
        let alice = ctx.human("alice")?;
        alice.login().await?;
        let bot = ctx.bot(LAB_BOT).await?;
        let (active, proposal) = flows::active_grant(ctx, &alice, &bot, LAB, "Credentials").await?;
        let (pending, _) = alice
            .prepare_grant(LAB, LAB_BOT, "Credentials, pending", "summary")
            .await?;
        let pending_proposal = bot.read_proposal(&pending).await?;
        let first = NewIssue::new("Credentials", "the receipt every caller reads");
        let answer = ctx
            .native(LAB_BOT)?
            .submit(&active, &proposal, &first)
            .await?;
        ctx.expect_status("lab-bot's first submission", answer.status, 201)?;
        let index = answer.json()?["submission"]["issue"]["index"]
            .as_i64()
            .unwrap_or(1);
        let refused = NewIssue::new("Refused", "never written");
        let watch = Watch::new(LAB_BOT, LAB)
            .grant(&active)
            .grant(&pending)
            .key(&active, &first.request_key)
            .key(&active, &refused.request_key);
        let password = made_up();
        ctx.register_secret(&password);
        Ok(World {
            active,
            proposal,
            pending,
            pending_proposal,
            first,
            refused,
            index,
            password,
            watch,
        })
    }

    /// Route `name` as `caller` sends it (method, path, body) and the status
    /// §3 gives; `n` makes a written title or login unique. The bot's own
    /// credential confirms the active grant (409: it is past
    /// `awaiting_agent`), so only a refused caller meets the pending one.
    fn route(
        &self,
        name: &str,
        caller: Caller,
        n: usize,
    ) -> (&'static str, String, Option<Value>, u16) {
        let own = caller == Caller::Own;
        let agent_only = if own { 200 } else { 404 };
        match name {
            "list" => ("GET", core_api::grant_list("state=all"), None, 200),
            "get" => ("GET", core_api::grant(&self.active), None, agent_only),
            "confirm" if own => (
                "POST",
                core_api::confirm(&self.active),
                Some(core_api::confirm_body(&self.proposal)),
                409,
            ),
            "confirm" => (
                "POST",
                core_api::confirm(&self.pending),
                Some(core_api::confirm_body(&self.pending_proposal)),
                404,
            ),
            "submit" => {
                let fresh = NewIssue::new(&format!("Credentials {n}"), "a valid form");
                let issue = if own { &fresh } else { &self.refused };
                (
                    "POST",
                    core_api::submit(&self.active),
                    Some(core_api::submit_body(&self.proposal, issue)),
                    if own { 201 } else { 404 },
                )
            }
            "readback" => (
                "GET",
                core_api::submission(&self.active, &self.first.request_key),
                None,
                agent_only,
            ),
            "GET issue" => ("GET", core_api::issue(LAB, self.index), None, 200),
            "POST issues" => (
                "POST",
                core_api::issues(LAB),
                Some(json!({"title": format!("Ordinary {n}"), "body": "a valid form"})),
                201,
            ),
            _ => (
                "POST",
                "/api/v1/admin/users".into(),
                Some(json!({
                    "login": format!("cred-user-{n}"),
                    "email": format!("cred-user-{n}@example.invalid"),
                    "password": self.password,
                    "type": "individual",
                })),
                403,
            ),
        }
    }

    /// The users the admin route was asked to make for the calls numbered
    /// `ns` were not made: the site admin makes each now, which a Core
    /// refuses for a login it already has.
    async fn expect_no_users(&self, ctx: &Ctx, ns: &[usize]) -> Step<()> {
        let mut made = Vec::new();
        for &n in ns {
            let (_, path, body, _) = self.route("POST admin/users", Caller::Own, n);
            made.push(ctx.setup().call("POST", &path, body).await?.status);
        }
        ctx.expect(
            "no refused call made a user (the site admin makes each of them now: 201)",
            made.iter().all(|s| *s == 201),
            &format!("{made:?}"),
        )
    }

    /// Sends each credential of `bad` to every route at once: each answer
    /// is 401 with an error body (with no credential at all, the private
    /// repository of an ordinary Issue route may instead be as invisible as
    /// to any user without permission, §1: 404), and nothing is written.
    async fn refused(
        &self,
        ctx: &Ctx,
        table: &str,
        bad: &[(String, Option<String>)],
    ) -> Step<usize> {
        let before = self.watch.take(ctx).await?;
        let issues = flows::issue_count(ctx, LAB).await?;
        let native = ctx.native(LAB_BOT)?;
        let mut calls = Vec::new();
        for (case, value) in bad {
            for name in ROUTES {
                let n = calls.len();
                calls.push((case, value, name, self.route(name, Caller::Bad, n)));
            }
        }
        let answers = at_once(
            calls
                .iter()
                .map(|(case, value, _, (method, path, body, _))| {
                    let client = native.with_authorization(case, value.as_deref());
                    async move { client.call(method, path, body.as_ref()).await }
                }),
        )
        .await?;
        let mut table = Table::new(table, "grant, Issue and admin routes");
        for ((case, value, name, _), answer) in calls.iter().zip(&answers) {
            let allowed: &[u16] = if value.is_none() && name.contains("issue") {
                &[401, 404]
            } else {
                &[401]
            };
            table.status(&format!("{name} with {case}"), answer, allowed);
        }
        let cases = table.finish(ctx)?;
        self.watch
            .expect_unchanged(ctx, "after the refused credentials", &before)
            .await?;
        ctx.expect_eq(
            "Issues in alice/lab after the refused credentials",
            flows::issue_count(ctx, LAB).await?,
            issues,
        )?;
        let admin: Vec<usize> = (0..calls.len())
            .filter(|&n| calls[n].2 == "POST admin/users")
            .collect();
        self.expect_no_users(ctx, &admin).await?;
        Ok(cases)
    }
}

/// Each valid form of lab-bot's credential is served on eight routes and each
/// invalid class is 401 with an error body, writing nothing.
#[scenario(Grammars, parity, clauses = ["S1.token.forms", "S0.standards.scheme-case", "S3.statuses", "S3.agent-only", "S3.error-body", "S5.setup.issues", "S5.setup.issue-read"])]
async fn credential_grammar(ctx: &mut Ctx) -> Outcome {
    // Valid forms on the five grant routes: list and get 200, confirm of an
    // active grant 409, submit 201, readback 200; `GET
    // /repos/{owner}/{repo}/issues/{index}` 200 and `POST
    // /repos/{owner}/{repo}/issues` 201; `POST /admin/users` 403 (a bot is no
    // site admin). Another bot's token gets 404 on each grant route of
    // lab-bot's grants and a list without them, and 403 on the admin route.
    let world = World::new(ctx).await?;
    let valid = ctx.tokens().authorizations(LAB_BOT, None, valid)?;
    let invalid = ctx.tokens().authorizations(LAB_BOT, None, invalid)?;
    let other = ctx.tokens().authorizations(OTHER_BOT, None, |c| {
        vec![(
            "another bot's token".into(),
            Some(format!("token {}", c.token)),
        )]
    })?;
    let mut n = 1000;

    ctx.step(&format!(
        "{} invalid credentials on {} routes, at once",
        invalid.len(),
        ROUTES.len()
    ));
    let mut cases = world.refused(ctx, "invalid credentials", &invalid).await?;

    ctx.step("another bot's token on lab-bot's grant routes and the admin route");
    let before = world.watch.take(ctx).await?;
    let mut table = Table::new("another bot's credential", "grant and admin routes");
    let (case, value) = &other[0];
    let client = ctx
        .native(LAB_BOT)?
        .with_authorization(case, value.as_deref());
    let mut admin = Vec::new();
    for name in GRANT_ROUTES.iter().chain(&["POST admin/users"]) {
        n += 1;
        if *name == "POST admin/users" {
            admin.push(n);
        }
        let (method, path, body, status) = world.route(name, Caller::Other, n);
        let answer = client.call(method, &path, body.as_ref()).await?;
        if *name == "list" {
            let theirs = answer.grants().map(|g| {
                g.iter()
                    .any(|g| g.id == world.active.id || g.id == world.pending.id)
            });
            let ok = answer.status == 200 && theirs == Ok(false);
            table.check(name, ok, answer.status.to_string());
        } else {
            table.status(name, &answer, allowed(name, &status));
        }
    }
    cases += table.finish(ctx)?;
    world
        .watch
        .expect_unchanged(ctx, "after another bot's calls", &before)
        .await?;

    ctx.step(&format!(
        "{} valid forms on {} routes",
        valid.len(),
        ROUTES.len()
    ));
    let issues = flows::issue_count(ctx, LAB).await?;
    let native = ctx.native(LAB_BOT)?;
    let mut table = Table::new("valid credentials", "grant, Issue and admin routes");
    for (case, value) in &valid {
        let client = native.with_authorization(case, value.as_deref());
        for name in ROUTES {
            n += 1;
            if name == "POST admin/users" {
                admin.push(n);
            }
            let (method, path, body, status) = world.route(name, Caller::Own, n);
            let answer = client.call(method, &path, body.as_ref()).await?;
            let case = format!("{name} with {case}");
            if name == "list" {
                let listed = answer
                    .grants()
                    .map(|g| g.iter().any(|g| g.id == world.active.id));
                let ok = answer.status == 200 && listed == Ok(true);
                table.check(&case, ok, answer.status.to_string());
            } else {
                table.status(&case, &answer, allowed(name, &status));
            }
        }
    }
    cases += table.finish(ctx)?;
    ctx.expect_eq(
        "Issues in alice/lab after the valid forms (one submission and one ordinary Issue each)",
        flows::issue_count(ctx, LAB).await?,
        issues + 2 * valid.len(),
    )?;
    world.expect_no_users(ctx, &admin).await?;
    ctx.observe("cases", &cases);
    Ok(())
}

/// A deleted token is no credential: every form that carries it is 401 with
/// an error body on every route of `credential_grammar`, and nothing is
/// written.
#[scenario(Grammars, parity, extensions = ["token-delete"], clauses = ["S1.token.forms", "S3.statuses", "S3.error-body"])]
async fn deleted_credential_grammar(ctx: &mut Ctx) -> Outcome {
    // lab-bot's token is deleted through the setup surface; the forms:
    // `token`, `Bearer`, `bearer`, Basic `login:token`.
    let world = World::new(ctx).await?;
    ctx.step("lab-bot gets a token of its own, which is then deleted");
    let token = ctx.tokens().mint_bot_token(LAB_BOT).await?;
    let forms = ctx.tokens().authorizations(LAB_BOT, Some(&token), |c| {
        valid(c)
            .into_iter()
            .filter(|(case, _)| case != "Basic login:password")
            .map(|(case, value)| (format!("deleted token as {case}"), value))
            .collect()
    })?;
    let native = ctx.native_with_token(&token)?;
    let answer = native.get_grant(&world.active).await?;
    ctx.expect_status("get with the token before its deletion", answer.status, 200)?;
    ctx.tokens().delete_bot_token(&token).await?;
    ctx.step(&format!(
        "{} forms of the deleted token on {} routes, at once",
        forms.len(),
        ROUTES.len()
    ));
    let cases = world.refused(ctx, "a deleted token", &forms).await?;
    ctx.observe("cases", &cases);
    Ok(())
}

/// The answers a route may give a good credential: `status`, but on the
/// site-admin route a user who is no admin may get 403 (no permission to
/// act) or 404 (§3 lets a Core hide what a caller may not see).
fn allowed<'a>(route: &str, status: &'a u16) -> &'a [u16] {
    match (route, *status) {
        ("POST admin/users", 403) => &[403, 404],
        _ => std::slice::from_ref(status),
    }
}
