//! Family 12, authority (issue #27 §3, native half): the authority matrix
//! of the setup surface (spec §5), every route a gate can call with a
//! caller other than the fixtures' site admin — collaborators `PUT` and
//! `DELETE`, the ordinary Issue `POST` ("any writer"), Issue `GET`, Issue
//! `DELETE` ("repo or site admin"), the Issue move ("site admin"), the
//! admin user and repository routes, token minting ("Basic auth of that
//! user, or admin") — called by the classes of `native_matrix.rs`.
//!
//! The answers come from [`expect`]: 401 before anything; a private
//! repository invisible (404) to a user without permission (§1); 403 for a
//! token without any `write:` scope on a write route (whatever scope a
//! Core asks there, it is a write one), or for a permission too weak to
//! act (§3 statuses). Every refusal is sent at once and writes nothing:
//! the Issues of both repositories, the collaborators (mallory still
//! cannot read, rita still can), no user, repository or token made; then
//! the rightful callers do each write, and exactly that is written.

use grantgate_engine::prelude::*;

use super::callers::{Caller, FIXTURE, FULL, Permission, READS, UNRELATED, USER_FULL, Who, holds};
use crate::support::flows::{LAB, LAB_BOT, Watch};
use crate::support::tables::{Table, at_once};

/// The second private repository of alice, where Issues are moved to.
const ANNEX: &str = "alice/annex";

/// The §5 routes a caller other than the fixtures may call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    CollaboratorPut,
    CollaboratorDelete,
    IssueCreate,
    IssueRead,
    IssueDelete,
    IssueMove,
    AdminUser,
    AdminRepo,
    TokenMint,
}

impl Route {
    const ALL: [Route; 9] = [
        Route::CollaboratorPut,
        Route::CollaboratorDelete,
        Route::IssueCreate,
        Route::IssueRead,
        Route::IssueDelete,
        Route::IssueMove,
        Route::AdminUser,
        Route::AdminRepo,
        Route::TokenMint,
    ];

    /// The statuses of success: the setup client's own, since §5 names
    /// none but 201 for a token.
    fn success(self) -> &'static [u16] {
        match self {
            Route::CollaboratorPut => &[200, 201, 204],
            Route::CollaboratorDelete | Route::IssueDelete => &[200, 204],
            Route::IssueRead => &[200],
            Route::IssueMove => &[200, 201],
            _ => &[201],
        }
    }
}

/// The statuses spec §1, §3 and §5 allow for `route` called by `who`
/// holding `scopes`; `None` where the spec leaves the answer open for that
/// caller (the case is then not part of the refusals).
fn expect(route: Route, who: Who, scopes: &[&str]) -> Option<&'static [u16]> {
    if who == Who::Anonymous {
        // No credential on a private repository: §3 "401 no credential",
        // or as invisible as to any user without permission (§1).
        return Some(if route == Route::IssueRead {
            &[401, 404]
        } else {
            &[401]
        });
    }
    let perm = who.permission();
    let writes = scopes.iter().any(|s| s.starts_with("write:"));
    let admin = who == Who::SiteAdmin;
    Some(match route {
        // §5 names no scope for reading an Issue: only a token with both
        // read scopes a Core could ask for is asked.
        Route::IssueRead if perm == Permission::None => &[404],
        Route::IssueRead if holds(scopes, "read:issue") && holds(scopes, "read:repository") => {
            &[200]
        }
        Route::IssueRead => return None,
        // "Basic auth of that user, or admin": another user's token has
        // no permission to act (403), or is not the Basic auth the route
        // asks for (401, as Forgejo answers a token there).
        Route::TokenMint if admin && holds(scopes, "write:admin") => route.success(),
        Route::TokenMint => &[401, 403],
        // Site-admin routes: a user who is no site admin may get 403 (no
        // permission to act) or 404 (§3 lets a Core hide what a caller may
        // not see); the site admin without `write:admin` gets 403.
        Route::IssueMove | Route::AdminUser | Route::AdminRepo if admin => {
            match holds(scopes, "write:admin") {
                true => route.success(),
                false => &[403],
            }
        }
        Route::IssueMove | Route::AdminUser | Route::AdminRepo => &[403, 404],
        // Repository routes on the private alice/lab.
        _ if perm == Permission::None && writes => &[404],
        // Invisible and no write scope: which refusal comes first is open.
        _ if perm == Permission::None => &[403, 404],
        _ if !writes => &[403],
        Route::IssueCreate if perm >= Permission::Write => route.success(),
        Route::IssueDelete if perm == Permission::Admin => route.success(),
        // §5 names no caller of the collaborator routes but the site admin
        // the fixtures use; Forgejo also lets a repository admin: either.
        Route::CollaboratorPut | Route::CollaboratorDelete if admin => route.success(),
        Route::CollaboratorPut | Route::CollaboratorDelete if perm == Permission::Admin => {
            return None;
        }
        _ => &[403],
    })
}

/// Whether `statuses` are a refusal (no success among them).
fn refusal(statuses: &[u16]) -> bool {
    statuses.iter().all(|s| *s >= 400)
}

/// An Issue a route acts on: its index in its repository and global id.
#[derive(Debug, Clone, Copy)]
struct Target {
    index: i64,
    id: i64,
}

/// What the routes act on: an ordinary Issue of alice/lab, the password of
/// every user the admin route is asked to make, and alice/annex.
struct World {
    target: Target,
    password: String,
}

impl World {
    async fn new(ctx: &Ctx) -> Step<World> {
        ctx.step("the site admin makes alice/annex and an ordinary Issue in alice/lab");
        ctx.setup().create_repo("alice", "annex", true).await?;
        let target = issue(ctx, "the Issue every caller aims at").await?;
        let password = format!("pw-{}", NewIssue::new("", "").request_key);
        ctx.register_secret(&password);
        Ok(World { target, password })
    }

    /// `route` as sent for call number `n`: method, path, body.
    fn request(
        &self,
        route: Route,
        n: usize,
        target: Target,
    ) -> (&'static str, String, Option<Value>) {
        match route {
            Route::CollaboratorPut => (
                "PUT",
                core_api::collaborator(LAB, "mallory"),
                Some(json!({"permission": "read"})),
            ),
            Route::CollaboratorDelete => ("DELETE", core_api::collaborator(LAB, "rita"), None),
            Route::IssueCreate => (
                "POST",
                core_api::issues(LAB),
                Some(json!({"title": format!("Matrix ordinary {n}"), "body": "ordinary"})),
            ),
            Route::IssueRead => ("GET", core_api::issue(LAB, target.index), None),
            Route::IssueDelete => ("DELETE", core_api::issue(LAB, target.index), None),
            Route::IssueMove => (
                "POST",
                core_api::move_issue(target.id),
                Some(json!({"owner": "alice", "repo": "annex"})),
            ),
            Route::AdminUser => ("POST", "/api/v1/admin/users".into(), Some(self.user(n))),
            Route::AdminRepo => (
                "POST",
                core_api::admin_repos("alice"),
                Some(json!({"name": format!("matrix-repo-{n}"), "private": true})),
            ),
            // For rita: another user's token, or her own (not the Basic
            // auth the route asks for).
            Route::TokenMint => (
                "POST",
                core_api::tokens("rita"),
                Some(json!({"name": format!("matrix-{n}"), "scopes": ["read:user"]})),
            ),
        }
    }

    /// The user the admin route is asked to make in call `n`.
    fn user(&self, n: usize) -> Value {
        json!({
            "login": format!("matrix-user-{n}"),
            "email": format!("matrix-user-{n}@example.invalid"),
            "password": self.password,
            "type": "individual",
        })
    }
}

/// Makes an ordinary Issue in alice/lab through the setup surface.
async fn issue(ctx: &Ctx, title: &str) -> Step<Target> {
    let body = json!({"title": title, "body": "ordinary"});
    let answer = ctx
        .setup()
        .call("POST", &core_api::issues(LAB), Some(body))
        .await?;
    ctx.expect_status("the site admin opens an ordinary Issue", answer.status, 201)?;
    let issue = answer.issue()?;
    Ok(Target {
        index: issue.index,
        id: issue.id,
    })
}

/// Registers the secret of any token answer (a refused mint must carry
/// none; if a Core mints anyway, the report still shows no secret).
fn register_minted(ctx: &Ctx, answer: &Answer) {
    if let Ok(json) = answer.json()
        && let Some(secret) = json.get("sha1").and_then(Value::as_str)
    {
        ctx.register_secret(secret);
    }
}

/// How `caller`'s read of the target Issue answers now.
async fn reads(caller: &Caller, world: &World) -> Step<u16> {
    Ok(caller
        .client
        .call("GET", &core_api::issue(LAB, world.target.index), None)
        .await?
        .status)
}

/// The nine routes of the setup surface (spec §5) refuse each of 12 callers
/// what §5 denies it, writing nothing, and let each rightful caller write
/// once.
#[scenario(Authority, parity, clauses = ["S5.setup.collaborators", "S5.setup.issues", "S5.setup.issue-read", "S5.setup.issue-delete", "S5.setup.issue-move", "S5.setup.users", "S5.setup.repos", "S5.setup.tokens", "S1.private-invisible", "S3.statuses", "S3.error-body"])]
async fn setup_route_authority_matrix(ctx: &mut Ctx) -> Outcome {
    // Callers: anonymous; lab-bot and other-bot with their fixture tokens;
    // rita (reader), wendy (writer), alice (owner) and mallory (stranger)
    // with every scope; the site admin with every scope; alice with only
    // `read:` scopes and with only `read:user`; the site admin with only
    // `read:` scopes; and mallory's Basic `login:password` on the token
    // route.
    //
    // Every refusal is sent at once: 401 without a credential (404 also for
    // an Issue read), 404 for mallory on alice/lab, 403 for a reader creating
    // an Issue, a writer deleting one or changing a collaborator, any token
    // without a `write:` scope on a write route; 403 or 404 for anyone but
    // the site admin on its routes; 401 or 403 for a token minting a token
    // (another user's, or rita's own: the route asks for Basic), 403 for
    // another user's Basic. Then each rightful caller writes once: every
    // writer opens an Issue, alice and the site admin delete one, the site
    // admin moves one, makes a user and a repository, mints a token and adds
    // and removes a collaborator, mallory mints her own token with Basic.
    let world = World::new(ctx).await?;
    ctx.step("every caller gets a token of its own");
    let callers = Caller::all(
        ctx,
        &[
            (Who::Anonymous, &[]),
            (Who::Agent, FIXTURE),
            (Who::OtherBot, FIXTURE),
            (Who::Reader, USER_FULL),
            (Who::Writer, USER_FULL),
            (Who::Owner, USER_FULL),
            (Who::Stranger, USER_FULL),
            (Who::SiteAdmin, FULL),
            (Who::Owner, READS),
            (Who::Owner, UNRELATED),
            (Who::SiteAdmin, READS),
        ],
    )
    .await?;
    let by = |who: Who, scopes: &[&str]| {
        (callers.iter())
            .find(|c| c.who == who && c.scopes == scopes)
            .ok_or_else(|| Abort::errored(format!("no caller {who:?} with {scopes:?}")))
    };
    let (mallory, rita) = (by(Who::Stranger, USER_FULL)?, by(Who::Reader, USER_FULL)?);
    let own = ctx.tokens().mint_human_token("mallory", UNRELATED).await?;
    let password = ctx.tokens().authorizations("mallory", Some(&own), |c| {
        let value = basic(&format!("{}:{}", c.login, c.password));
        vec![("mallory's Basic login:password".into(), Some(value))]
    })?;
    let (label, value) = &password[0];
    let mallory_basic = mallory.client.with_authorization(label, value.as_deref());

    let lab = Watch::new(LAB_BOT, LAB);
    let annex = Watch::new(LAB_BOT, ANNEX);
    let before = (lab.take(ctx).await?, annex.take(ctx).await?);
    let mut calls: Vec<(String, &NativeClient, Route, Who, &[u16])> = Vec::new();
    for caller in &callers {
        for route in Route::ALL {
            match expect(route, caller.who, caller.scopes) {
                Some(allowed) if refusal(allowed) || route == Route::IssueRead => {
                    let case = format!("{}: {route:?}", caller.label);
                    calls.push((case, &caller.client, route, caller.who, allowed));
                }
                _ => {}
            }
        }
    }
    // Basic auth of another user: a good credential without the
    // permission to act.
    let case = format!("{label}: TokenMint for rita");
    calls.push((
        case,
        &mallory_basic,
        Route::TokenMint,
        Who::Stranger,
        &[403],
    ));
    ctx.step(&format!("{} refusals and reads at once", calls.len()));
    let answers = at_once(
        calls
            .iter()
            .enumerate()
            .map(|(n, (_, client, route, _, _))| {
                let (method, path, body) = world.request(*route, n, world.target);
                async move { client.call(method, &path, body.as_ref()).await }
            }),
    )
    .await?;
    let mut table = Table::new("setup routes", "refusals and reads");
    for ((case, _, _, _, allowed), answer) in calls.iter().zip(&answers) {
        register_minted(ctx, answer);
        table.status(case, answer, allowed);
    }
    let mut cases = table.finish(ctx)?;

    ctx.step("nothing was written: Issues, collaborators, users, repositories");
    let after = (lab.take(ctx).await?, annex.take(ctx).await?);
    ctx.expect_eq("the Issues of alice/lab and alice/annex", &after, &before)?;
    let seen = (reads(mallory, &world).await?, reads(rita, &world).await?);
    ctx.expect_eq(
        "mallory still cannot read alice/lab, rita still can (collaborators unchanged)",
        seen,
        (404, 200),
    )?;
    // A user is made with a password (hashed: slow), so the witness asks
    // the site admin for a token of each refused login instead: none may
    // be minted for a user that does not exist. Each refused repository
    // name is made now, which a Core refuses for a name it already has.
    let setup = ctx.setup();
    let made = at_once(
        calls
            .iter()
            .enumerate()
            .filter_map(|(n, (_, _, route, _, _))| {
                let (method, path, body) = match route {
                    Route::AdminUser => (
                        "POST",
                        core_api::tokens(&format!("matrix-user-{n}")),
                        Some(json!({"name": "matrix", "scopes": ["read:user"]})),
                    ),
                    Route::AdminRepo => world.request(*route, n, world.target),
                    _ => return None,
                };
                Some(async move { setup.call(method, &path, body).await })
            }),
    )
    .await?;
    for answer in &made {
        register_minted(ctx, answer);
    }
    let made: Vec<(&str, u16)> = (made.iter())
        .map(|a| match a.url.contains("/tokens") {
            true => ("token for the refused login", a.status),
            false => ("the refused repository", a.status),
        })
        .collect();
    ctx.expect(
        "no refused call made a user (no token for it: 4xx) or a repository (the site admin makes it now: 201)",
        made.iter().all(|(what, s)| match what.starts_with("token") {
            true => (400..500).contains(s),
            false => *s == 201,
        }),
        &format!("{made:?}"),
    )?;

    cases += rightful(ctx, &world, &callers, &mallory_basic, mallory).await?;
    ctx.observe("cases", &cases);
    Ok(())
}

/// Each rightful caller writes once, and exactly that is written: every
/// writer opens an Issue (posted by them), alice and the site admin each
/// delete one, the site admin moves one to alice/annex, makes a user and a
/// repository and mints a token, mallory mints her own token with Basic,
/// and alice, then the site admin, add and remove mallory as a reader.
async fn rightful(
    ctx: &Ctx,
    world: &World,
    callers: &[Caller],
    mallory_basic: &NativeClient,
    mallory: &Caller,
) -> Step<usize> {
    ctx.step("the rightful callers write once each");
    let mut calls: Vec<(String, &NativeClient, Route, Who, Target)> = Vec::new();
    let mut gone = Vec::new();
    for caller in callers {
        for route in Route::ALL {
            let rightful = expect(route, caller.who, caller.scopes)
                .is_some_and(|a| !refusal(a) && route != Route::IssueRead);
            if !rightful || matches!(route, Route::CollaboratorPut | Route::CollaboratorDelete) {
                continue;
            }
            let target = match route {
                Route::IssueDelete | Route::IssueMove => {
                    let t = issue(ctx, &format!("{route:?} by {}", caller.label)).await?;
                    gone.push((route, t));
                    t
                }
                _ => world.target,
            };
            let case = format!("{}: {route:?}", caller.label);
            calls.push((case, &caller.client, route, caller.who, target));
        }
    }
    let case = "mallory's Basic login:password: TokenMint for herself".to_owned();
    calls.push((
        case,
        mallory_basic,
        Route::TokenMint,
        Who::Stranger,
        world.target,
    ));
    let answers = at_once(
        calls
            .iter()
            .enumerate()
            .map(|(n, (_, client, route, who, target))| {
                let (method, mut path, body) = world.request(*route, 5000 + n, *target);
                if *who == Who::Stranger {
                    path = core_api::tokens("mallory");
                }
                async move { client.call(method, &path, body.as_ref()).await }
            }),
    )
    .await?;
    let mut table = Table::new("setup routes", "rightful callers");
    let (mut made, mut posters_want) = (Vec::new(), Vec::new());
    for ((case, _, route, who, _), answer) in calls.iter().zip(&answers) {
        register_minted(ctx, answer);
        table.status(case, answer, route.success());
        if *route == Route::IssueCreate && answer.status == 201 {
            made.push(answer.issue()?.index);
            posters_want.push(who.login(ctx));
        }
    }
    for caller in [
        callers
            .iter()
            .find(|c| c.who == Who::Owner && c.scopes == USER_FULL),
        callers
            .iter()
            .find(|c| c.who == Who::SiteAdmin && c.scopes == FULL),
    ]
    .into_iter()
    .flatten()
    {
        collaborator(&mut table, caller, mallory, world).await?;
    }
    let cases = table.finish(ctx)?;

    // Each Issue read by its index: the deleted and moved ones leave gaps
    // an index scan would stop at.
    let reads = at_once(made.iter().map(|i| ctx.setup().issue(LAB, *i))).await?;
    let posters: Vec<(u16, Option<String>)> = (reads.iter())
        .map(|a| (a.status, a.issue().ok().map(|i| i.user.login)))
        .collect();
    let want: Vec<(u16, Option<String>)> = (posters_want.iter())
        .map(|l| (200, Some(l.clone())))
        .collect();
    ctx.expect_eq(
        "each ordinary Issue opened, read back with its poster",
        posters,
        want,
    )?;
    let reads = at_once(gone.iter().map(|(_, t)| ctx.setup().issue(LAB, t.index))).await?;
    let statuses: Vec<u16> = reads.iter().map(|a| a.status).collect();
    ctx.expect_eq(
        "each Issue deleted or moved is gone from alice/lab",
        statuses,
        vec![404; gone.len()],
    )?;
    let moved = gone.iter().filter(|(r, _)| *r == Route::IssueMove).count();
    ctx.expect_eq(
        "Issues in alice/annex: the one moved there",
        ctx.setup().issues(ANNEX).await?.len(),
        moved,
    )?;
    Ok(cases)
}

/// `caller` adds mallory as a reader of alice/lab and removes her again;
/// mallory's own read of the target Issue follows each answer. For the
/// site admin both must succeed; alice may (Forgejo) or may not (§5 names
/// only the site admin), but her two answers must agree with what
/// mallory sees.
async fn collaborator(
    table: &mut Table,
    caller: &Caller,
    mallory: &Caller,
    world: &World,
) -> Step<()> {
    let put: &[u16] = match caller.who {
        Who::SiteAdmin => Route::CollaboratorPut.success(),
        _ => &[200, 201, 204, 403],
    };
    let (method, path, body) = world.request(Route::CollaboratorPut, 0, world.target);
    let answer = caller.client.call(method, &path, body.as_ref()).await?;
    table.status(
        &format!("{}: CollaboratorPut mallory read", caller.label),
        &answer,
        put,
    );
    let done = (200..300).contains(&answer.status);
    let seen = reads(mallory, world).await?;
    let want = if done { 200 } else { 404 };
    table.check(
        &format!("mallory reads after {}'s PUT", caller.label),
        seen == want,
        seen.to_string(),
    );
    let answer = caller
        .client
        .call("DELETE", &core_api::collaborator(LAB, "mallory"), None)
        .await?;
    let delete: &[u16] = if done {
        Route::CollaboratorDelete.success()
    } else {
        &[403]
    };
    table.status(
        &format!("{}: CollaboratorDelete mallory", caller.label),
        &answer,
        delete,
    );
    let seen = reads(mallory, world).await?;
    table.check(
        &format!("mallory reads after {}'s DELETE", caller.label),
        seen == 404,
        seen.to_string(),
    );
    Ok(())
}
