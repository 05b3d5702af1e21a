//! Family 12, authority (issue #27 §3, native half): the authority matrix
//! of the native API. Every grant route of spec §3 is called by every class
//! of caller — anonymous, the agent with a token lacking each scope the
//! route needs (and with `write:repository`, which §1 says implies
//! `read:repository`), another bot, a reader, a writer, the repository's
//! owner, the site admin and a stranger, each with a token of their own —
//! on a grant in each state. The §5 setup routes are in
//! `setup_matrix.rs`; the caller classes in `callers.rs`.
//!
//! The expected answer comes from [`expect`], a function of the spec's
//! rules: 401 before anything, 403 for a missing scope, 404 for every
//! authenticated user but the agent (§3 "for the grant's agent only"), and
//! for the agent the state rules of confirm and submit. Every refusal is
//! sent at once with the others, and nothing is written: each grant's
//! state, revision and timestamps as the agent reads them, the Issues, the
//! agent's grant total stay as they were, and no key refused on the active
//! grant reads back.

use grantgate_engine::prelude::*;

use super::callers::{Caller, FIXTURE, FULL, READS, UNRELATED, USER_FULL, Who, holds};
use crate::support::flows::{self, LAB, LAB_BOT, Watch};
use crate::support::tables::{Table, at_once};

/// The five grant routes of spec §3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    List,
    Get,
    Confirm,
    Submit,
    Readback,
}

impl Route {
    const ALL: [Route; 5] = [
        Route::List,
        Route::Get,
        Route::Confirm,
        Route::Submit,
        Route::Readback,
    ];

    /// The scopes of §3's table.
    fn needs(self) -> &'static [&'static str] {
        match self {
            Route::Confirm | Route::Submit => &["read:repository", "write:issue"],
            _ => &["read:repository"],
        }
    }

    /// Whether the route writes when it succeeds.
    fn writes(self) -> bool {
        matches!(self, Route::Confirm | Route::Submit)
    }
}

/// The statuses spec §3 allows for `route` called by `who` holding
/// `scopes` on a grant of lab-bot in `state` (for the list: a list the
/// caller may read at all).
fn expect(route: Route, who: Who, scopes: &[&str], state: &str) -> &'static [u16] {
    if who == Who::Anonymous {
        return &[401];
    }
    let lacking = !route.needs().iter().all(|n| holds(scopes, n));
    match (who, lacking, route) {
        (Who::Agent, true, _) | (_, true, Route::List) => &[403],
        (Who::Agent, false, Route::Confirm) if state == state::AWAITING_AGENT => &[200],
        (Who::Agent, false, Route::Submit) if state == state::ACTIVE => &[201],
        (Who::Agent, false, Route::Confirm | Route::Submit) => &[409],
        (Who::Agent, false, _) | (_, false, Route::List) => &[200],
        // Another user without the scope: §3 gives 403 for the scope and
        // 404 for a grant that is not theirs, and does not say which check
        // comes first.
        (_, true, _) => &[403, 404],
        (_, false, _) => &[404],
    }
}

/// One grant of lab-bot in a known state, with what calls on it need.
struct Held {
    state: &'static str,
    grant: GrantRef,
    proposal: Proposal,
    /// The receipt it holds (active and revoked grants).
    receipt: Option<NewIssue>,
}

/// Five grants of lab-bot in `alice/lab`: two awaiting it (one for each
/// token of the agent that confirms), one awaiting a human, one active and
/// one revoked after a submission, the last two each with one receipt.
struct Grants {
    held: Vec<Held>,
}

impl Grants {
    async fn new(ctx: &mut Ctx) -> Step<Grants> {
        ctx.step("alice prepares five grants for lab-bot and takes them to each state");
        let alice = ctx.human("alice")?;
        alice.login().await?;
        let native = ctx.native(LAB_BOT)?;
        let ctx: &Ctx = ctx;
        let states = [
            state::AWAITING_AGENT,
            state::AWAITING_AGENT,
            state::AWAITING_HUMAN,
            state::ACTIVE,
            state::REVOKED,
        ];
        // Each grant is taken to its state on its own, all five at once.
        let make = |n: usize, state: &'static str| {
            let (alice, native) = (&alice, &native);
            async move {
                let (grant, _) = alice
                    .prepare_grant(LAB, LAB_BOT, &format!("Matrix {n}"), "summary")
                    .await?;
                let proposal = native.get_grant(&grant).await?.grant()?.proposal;
                let mut receipt = None;
                if state != state::AWAITING_AGENT {
                    let answer = native.confirm(&grant, &proposal).await?;
                    ctx.expect_status("lab-bot confirms", answer.status, 200)?;
                }
                if matches!(state, state::ACTIVE | state::REVOKED) {
                    let page = alice.approve(&grant).await?;
                    ctx.expect_status("alice approves", page.status, 200)?;
                    let issue = NewIssue::new(&format!("Matrix {n}"), "the receipt callers read");
                    let answer = native.submit(&grant, &proposal, &issue).await?;
                    ctx.expect_status("lab-bot submits", answer.status, 201)?;
                    receipt = Some(issue);
                }
                if state == state::REVOKED {
                    let page = alice.withdraw(&grant).await?;
                    ctx.expect_status("alice withdraws", page.status, 200)?;
                }
                let now = native.get_grant(&grant).await?.grant()?.state;
                ctx.expect_eq("the grant's state", now.as_str(), state)?;
                Ok(Held {
                    state,
                    grant,
                    proposal,
                    receipt,
                })
            }
        };
        let held = join_all(states.into_iter().enumerate().map(|(n, s)| make(n, s)))
            .await
            .into_iter()
            .collect::<Step<Vec<Held>>>()?;
        Ok(Grants { held })
    }

    /// The grants a caller meets: the first grant awaiting the agent, or
    /// for `slot` 1 the second, so two tokens of the agent each confirm one.
    fn for_slot(&self, slot: usize) -> impl Iterator<Item = &Held> {
        let other = if slot == 1 { 0 } else { 1 };
        (self.held.iter().enumerate())
            .filter(move |(i, _)| *i != other)
            .map(|(_, h)| h)
    }

    /// The ids of lab-bot's grants a list with `filter` must show: §3, no
    /// `state` means every state but `revoked`.
    fn listed(&self, filter: Option<&str>, confirmed: bool) -> Vec<i64> {
        (self.held.iter().enumerate())
            .filter(|(i, h)| {
                let state = if confirmed && *i < 2 {
                    state::AWAITING_HUMAN
                } else {
                    h.state
                };
                match filter {
                    None => state != state::REVOKED,
                    Some("all") => true,
                    Some(f) => f == state,
                }
            })
            .map(|(_, h)| h.grant.id)
            .collect()
    }

    /// What the agent reads of each grant: the members a write changes.
    async fn snapshot(&self, ctx: &Ctx) -> Step<Vec<Value>> {
        let native = ctx.native(LAB_BOT)?;
        let answers = at_once(self.held.iter().map(|h| native.get_grant(&h.grant))).await?;
        let mut seen = Vec::new();
        for answer in answers {
            ctx.expect_status("lab-bot reads its grant", answer.status, 200)?;
            let g = answer.grant()?;
            let raw = &g.raw;
            seen.push(json!({
                "id": g.id, "state": g.state, "state_revision": g.state_revision,
                "approved_by": raw["approved_by"], "updated_at": raw["updated_at"],
                "confirmed_at": raw["confirmed_at"], "approved_at": raw["approved_at"],
                "revoked_at": raw["revoked_at"],
            }));
        }
        Ok(seen)
    }
}

/// One call of the matrix: who, which route on which grant, the request,
/// and what the spec allows.
struct Call<'a> {
    case: String,
    caller: &'a Caller,
    route: Route,
    method: &'static str,
    path: String,
    body: Option<Value>,
    allowed: &'static [u16],
    /// For a list: the ids of lab-bot's grants it must show exactly.
    listed: Option<Vec<i64>>,
    /// For a submit: the grant and the key it sends.
    key: Option<(GrantRef, String)>,
}

/// `caller`'s list with `state` `filter` (`None`: absent); `confirmed`
/// whether both grants that awaited the agent await a human by then.
fn list_call<'a>(
    grants: &Grants,
    caller: &'a Caller,
    filter: Option<&str>,
    confirmed: bool,
) -> Call<'a> {
    let mine = caller.who == Who::Agent;
    Call {
        case: format!(
            "{}: list state={}",
            caller.label,
            filter.unwrap_or("(none)")
        ),
        caller,
        route: Route::List,
        method: "GET",
        path: core_api::grant_list(&filter.map(|f| format!("state={f}")).unwrap_or_default()),
        body: None,
        allowed: expect(Route::List, caller.who, caller.scopes, ""),
        listed: Some(match mine {
            true => grants.listed(filter, confirmed),
            false => Vec::new(),
        }),
        key: None,
    }
}

/// Every call of `caller` on every route and grant. `slot` picks the grant
/// awaiting the agent ([`Grants::for_slot`]); `filters` are the list's
/// `state` values (`None`: absent).
fn calls<'a>(
    grants: &'a Grants,
    caller: &'a Caller,
    slot: usize,
    filters: &[Option<&str>],
) -> Vec<Call<'a>> {
    let mut out: Vec<Call> = (filters.iter())
        .map(|f| list_call(grants, caller, *f, false))
        .collect();
    for held in grants.for_slot(slot) {
        for route in Route::ALL.into_iter().filter(|r| *r != Route::List) {
            let (method, path, body, key) = match route {
                Route::Get => ("GET", core_api::grant(&held.grant), None, None),
                Route::Confirm => (
                    "POST",
                    core_api::confirm(&held.grant),
                    Some(core_api::confirm_body(&held.proposal)),
                    None,
                ),
                // The agent replays a revoked grant's receipt exactly:
                // §3 "replays included" are 409 there.
                Route::Submit => {
                    let issue = match (&held.receipt, held.state, caller.who) {
                        (Some(r), state::REVOKED, Who::Agent) if sufficient(caller, route) => {
                            r.clone()
                        }
                        _ => NewIssue::new("Matrix refused", "never written"),
                    };
                    let body = core_api::submit_body(&held.proposal, &issue);
                    let key = Some((held.grant.clone(), issue.request_key));
                    ("POST", core_api::submit(&held.grant), Some(body), key)
                }
                _ => match &held.receipt {
                    Some(r) => (
                        "GET",
                        core_api::submission(&held.grant, &r.request_key),
                        None,
                        None,
                    ),
                    None => continue,
                },
            };
            out.push(Call {
                case: format!("{}: {route:?} on {}", caller.label, held.state),
                caller,
                route,
                method,
                path,
                body,
                allowed: expect(route, caller.who, caller.scopes, held.state),
                listed: None,
                key,
            });
        }
    }
    out
}

/// Whether `caller`'s token holds every scope `route` needs.
fn sufficient(caller: &Caller, route: Route) -> bool {
    route.needs().iter().all(|n| holds(caller.scopes, n))
}

/// Sends `calls` at once and records each answer in `table`; a list that
/// answers 200 must show exactly the grants of lab-bot it names (by their
/// place in `grants`, so both backends observe the same).
async fn run(table: &mut Table, grants: &Grants, calls: &[Call<'_>]) -> Step<()> {
    let answers = at_once(
        calls
            .iter()
            .map(|c| c.caller.client.call(c.method, &c.path, c.body.as_ref())),
    )
    .await?;
    let place = |id: &i64| grants.held.iter().position(|h| h.grant.id == *id);
    for (call, answer) in calls.iter().zip(&answers) {
        match &call.listed {
            Some(want) if answer.status == 200 => {
                let shown: Option<Vec<usize>> = answer
                    .grants()
                    .ok()
                    .map(|g| g.iter().filter_map(|g| place(&g.id)).collect());
                // The order (ascending id) is not this matrix's rule, and
                // the grants were prepared at once: compare sets.
                let shown = shown.map(|mut s| {
                    s.sort_unstable();
                    s
                });
                let mut want: Vec<usize> = want.iter().filter_map(place).collect();
                want.sort_unstable();
                let ok = call.allowed.contains(&200) && shown.as_ref() == Some(&want);
                let got = match shown {
                    Some(s) => format!("200 listing {s:?}"),
                    None => "200 without a grant array".to_owned(),
                };
                table.check(&call.case, ok, got);
            }
            _ => table.status(&call.case, answer, call.allowed),
        }
    }
    Ok(())
}

/// Every grant and request key `calls` submitted.
fn keys(calls: &[Call<'_>]) -> Vec<(GrantRef, String)> {
    calls.iter().filter_map(|c| c.key.clone()).collect()
}

/// The five grant routes of spec §3 answer each of 14 callers on a grant in
/// each state as §3's authority rules say, and a refusal writes nothing.
#[scenario(Authority, parity, clauses = ["S3.agent-only", "S3.statuses", "S3.recheck", "S1.token.write-implies-read", "S1.private-invisible", "S3.route.list", "S3.route.get", "S3.route.confirm", "S3.route.submit", "S3.route.readback", "S3.list.state", "S3.confirm.state", "S3.submit.active", "S3.withdrawn", "S3.error-body"])]
async fn grant_route_authority_matrix(ctx: &mut Ctx) -> Outcome {
    // Callers: anonymous; lab-bot (the agent) with its fixture token, with
    // only `write:issue`, only `read:repository`, only `read:user`, only
    // `write:repository`, every `read:` scope, and `write:repository
    // write:issue`; other-bot with its fixture token and with only
    // `write:issue`; rita (reader) with every scope and with only
    // `read:user`; wendy (writer), alice (owner) and the site admin with
    // every scope; mallory (stranger) — on lab-bot's grants awaiting it,
    // awaiting a human, active and revoked.
    //
    // Anonymous is 401; a token lacking a scope of §3's table is 403 for the
    // agent (another user: 403 or 404); every other user is 404 on each grant
    // and lists none of lab-bot's grants; the agent reads every state, lists
    // by every `state` filter, confirms only `awaiting_agent` and submits
    // only to `active` (409 otherwise, a replay on the revoked grant
    // included). Every refusal is sent at once; then the agent's two
    // sufficient tokens confirm and submit, and exactly that is written.
    let grants = Grants::new(ctx).await?;
    ctx.step("every caller gets a token of its own");
    let refused = Caller::all(
        ctx,
        &[
            (Who::Anonymous, &[]),
            (Who::Agent, &["write:issue"]),
            (Who::Agent, &["read:repository"]),
            (Who::Agent, UNRELATED),
            (Who::Agent, &["write:repository"]),
            (Who::Agent, READS),
            (Who::OtherBot, FIXTURE),
            (Who::OtherBot, &["write:issue"]),
            (Who::Reader, USER_FULL),
            (Who::Reader, UNRELATED),
            (Who::Writer, USER_FULL),
            (Who::Owner, USER_FULL),
            (Who::SiteAdmin, FULL),
            (Who::Stranger, USER_FULL),
        ],
    )
    .await?;
    let agents = Caller::all(
        ctx,
        &[
            (Who::Agent, FIXTURE),
            (Who::Agent, &["write:repository", "write:issue"]),
        ],
    )
    .await?;
    let watch = Watch::new(LAB_BOT, LAB);
    let before = (
        grants.snapshot(ctx).await?,
        watch.take(ctx).await?,
        flows::grant_total(ctx, LAB_BOT).await?,
    );
    let every_filter = flows::LIST_FILTERS;

    let mut first: Vec<Call> = Vec::new();
    for caller in &refused {
        first.extend(calls(&grants, caller, 0, &[Some("all")]));
    }
    for (slot, caller) in agents.iter().enumerate() {
        let reads = calls(&grants, caller, slot, &every_filter);
        first.extend(reads.into_iter().filter(|c| !c.route.writes()));
    }
    ctx.step(&format!(
        "{} calls at once: every refused caller on every route and state, and the agent's reads",
        first.len()
    ));
    let mut table = Table::new("grant routes", "refusals and the agent's reads");
    run(&mut table, &grants, &first).await?;
    let mut cases = table.finish(ctx)?;

    ctx.step("nothing was written: grants, Issues, the agent's total, no refused key");
    let after = (
        grants.snapshot(ctx).await?,
        watch.take(ctx).await?,
        flows::grant_total(ctx, LAB_BOT).await?,
    );
    ctx.expect_eq(
        "after the refusals: each grant's state, revision, approver and timestamps, the Issues of alice/lab, lab-bot's grant total",
        &after,
        &before,
    )?;
    // A refused submission that was written anyway left an Issue (above);
    // the keys sent to the active grant, where one would land, must not
    // read back either.
    let sent: Vec<(GrantRef, String)> = (keys(&first).into_iter())
        .filter(|(g, _)| *g == grants.held[3].grant)
        .collect();
    expect_keys(ctx, &sent, 404, "no refused submission was stored").await?;

    ctx.step("the agent's two sufficient tokens confirm and submit on every state, at once");
    let second: Vec<Call> = (agents.iter().enumerate())
        .flat_map(|(slot, c)| calls(&grants, c, slot, &[]))
        .filter(|c| c.route.writes())
        .collect();
    let mut table = Table::new("grant routes", "the agent's writes");
    run(&mut table, &grants, &second).await?;
    cases += table.finish(ctx)?;
    let now = grants.snapshot(ctx).await?;
    let states: Vec<(&Value, &Value)> = now
        .iter()
        .map(|g| (&g["state"], &g["state_revision"]))
        .collect();
    let awaiting = (json!(state::AWAITING_HUMAN), json!(2));
    ctx.expect_eq(
        "each token confirmed its grant (awaiting_human, revision 2) and nothing else changed",
        (states[..2].to_vec(), &now[2..]),
        (vec![(&awaiting.0, &awaiting.1); 2], &before.0[2..]),
    )?;
    ctx.expect_eq(
        "Issues in alice/lab: one per submission to the active grant",
        flows::issue_count(ctx, LAB).await?,
        before.1.issues.len() + agents.len(),
    )?;
    let made: Vec<(GrantRef, String)> = (second.iter())
        .filter(|c| c.route == Route::Submit && c.allowed == [201])
        .filter_map(|c| c.key.clone())
        .collect();
    expect_keys(ctx, &made, 200, "each 201 left its receipt").await?;

    ctx.step("the agent lists by every `state` filter after the confirmations");
    let lists: Vec<Call> = (every_filter.iter())
        .map(|f| list_call(&grants, &agents[0], *f, true))
        .collect();
    let mut table = Table::new("grant routes", "the agent's lists after its confirmations");
    run(&mut table, &grants, &lists).await?;
    cases += table.finish(ctx)?;
    ctx.observe("cases", &cases);
    Ok(())
}

/// Reads each of `keys` in its grant as the agent, at once: every
/// readback answers `status`.
async fn expect_keys(ctx: &Ctx, keys: &[(GrantRef, String)], status: u16, what: &str) -> Step<()> {
    let native = ctx.native(LAB_BOT)?;
    let answers = at_once(keys.iter().map(|(g, k)| native.submission(g, k))).await?;
    let statuses: Vec<u16> = answers.iter().map(|a| a.status).collect();
    ctx.expect(
        &format!(
            "{what}: {} readbacks by lab-bot answer {status}",
            keys.len()
        ),
        statuses.iter().all(|s| *s == status),
        &format!("{statuses:?}"),
    )
}
