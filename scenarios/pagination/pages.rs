//! Family 2: pagination of the grant list, through the adapter and natively.
//!
//! The grants are prepared the honest way, through alice's new-grant form,
//! one after the other. Every list is read twice: through the bot's adapter
//! (`{grants, page, has_more, next_page}`) and natively with the bot's own
//! token, where `X-Total-Count` and the RFC 8288 `Link` must agree with what
//! the pages actually hold. `Link` is read as the RFC allows it to be written
//! (one field line or several, any order, `rel` quoted or not, several
//! relations in one `rel`, other relations and parameters ignored) and its
//! targets are compared by their path and query values, never as strings.
//! Another bot's grant is always present, so "for one bot" is checked too.

use std::collections::BTreeMap;

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT};
use crate::support::grant_list::{expect_exactly, prepared, tool_page};

/// The path every `Link` target of the grant list names.
const LIST_PATH: &str = "/api/v1/agent-work-grants";

/// Checks an adapter page: how many grants, its page number, `has_more` and
/// `next_page`.
fn expect_tool_page(
    ctx: &Ctx,
    what: &str,
    list: &GrantListPage,
    expected: (usize, i64, bool, Option<i64>),
) -> Step<()> {
    ctx.expect_eq(
        &format!("{what}: grants, page, has_more, next_page"),
        (list.grants.len(), list.page, list.has_more, list.next_page),
        expected,
    )
}

/// A native page read with the bot's token: its status must be 200, its body
/// an array of grants.
fn native_ids(ctx: &Ctx, what: &str, answer: &Answer) -> Step<Vec<i64>> {
    ctx.expect_status(what, answer.status, 200)?;
    Ok(answer.grants()?.iter().map(|g| g.id).collect())
}

/// The relations spec §3 gives the grant list's `Link`; any other (`self`,
/// …) may be present and means nothing here.
const PAGE_RELS: [&str; 4] = ["first", "prev", "next", "last"];

/// Checks the `Link` of page `page` of `last` (spec §3): `next` whenever a
/// later page exists, `prev` and `first` on every page after the first,
/// `last` on every page before the last; `first` and `prev` on the first
/// page and `last` on the last may be left out (as Forgejo does) or sent,
/// pointing there. Each target is the grant list at the page width.
fn expect_links(
    ctx: &Ctx,
    what: &str,
    answer: &Answer,
    (page, last): (i64, i64),
    width: i64,
) -> Step<Links> {
    let links = answer.links()?;
    let number = |rel: &str, name: &str| -> Option<i64> { links.query(rel, name)?.parse().ok() };
    let expected = [
        ("first", page > 1, Some(1)),
        ("prev", page > 1, Some((page - 1).max(1))),
        ("next", page < last, (page < last).then_some(page + 1)),
        ("last", page < last, Some(last)),
    ];
    let mut seen = BTreeMap::new();
    let mut want = BTreeMap::new();
    for (rel, required, target) in expected {
        let present = links.get(rel).is_some();
        seen.insert(rel, present.then(|| number(rel, "page")));
        // An optional relation is expected as it came: absent, or pointing right.
        want.insert(rel, (required || present).then_some(target));
    }
    ctx.expect_eq(&format!("{what}: Link rels and their pages"), seen, want)?;
    for rel in PAGE_RELS.into_iter().filter(|rel| links.get(rel).is_some()) {
        let path = links.get(rel).map(|u| u.path().to_owned());
        ctx.expect_eq(
            &format!("{what}: Link {rel} names the grant list with the page width"),
            (path.as_deref(), number(rel, "limit")),
            (Some(LIST_PATH), Some(width)),
        )?;
    }
    Ok(links)
}

/// 31 pending grants read as 30 + 1, through the adapter and natively, each
/// exactly once and in ascending ids, with `X-Total-Count` and `Link`
/// agreeing.
#[scenario(Pagination, parity, clauses = ["S3.route.list", "S3.list.page", "S3.list.order", "S3.list.headers", "S3.list.link-list", "S3.list.no-user-scope", "S6.list", "S6.list.continuation"])]
async fn list_31_pending_30_plus_1(ctx: &mut Ctx) -> Outcome {
    // One bot's grants. The adapter's `has_more` is false at the end;
    // natively as 30 + 1, 4 per page, and one page of 31, `X-Total-Count` and
    // `Link` agreeing with the pages.
    let ids = prepared(ctx, 31).await?;
    let bot = ctx.bot(LAB_BOT).await?;

    ctx.step("lab-bot lists its grants through the adapter, page 1 then page 2");
    let first = tool_page(ctx, &bot, 1, None).await?;
    expect_tool_page(ctx, "page 1", &first, (30, 1, true, Some(2)))?;
    let second = tool_page(ctx, &bot, 2, None).await?;
    expect_tool_page(ctx, "page 2", &second, (1, 2, false, None))?;
    let read = [first.ids(), second.ids()].concat();
    expect_exactly(ctx, "through the adapter", &read, &ids)?;
    ctx.observe("adapter pages", &(first.grants.len(), second.grants.len()));

    ctx.step("lab-bot lists its grants natively, 30 per page");
    let native = ctx.native(LAB_BOT)?;
    let p1 = native.list_grants("page=1&limit=30").await?;
    let ids1 = native_ids(ctx, "page 1", &p1)?;
    ctx.expect_eq("page 1 holds 30", ids1.len(), 30)?;
    ctx.expect_eq("page 1: X-Total-Count", p1.total_count()?, 31)?;
    expect_links(ctx, "page 1", &p1, (1, 2), 30)?;
    let p2 = native.list_grants("page=2&limit=30").await?;
    let ids2 = native_ids(ctx, "page 2", &p2)?;
    ctx.expect_eq("page 2 holds 1", ids2.len(), 1)?;
    ctx.expect_eq("page 2: X-Total-Count", p2.total_count()?, 31)?;
    expect_links(ctx, "page 2", &p2, (2, 2), 30)?;
    let read = [ids1.as_slice(), ids2.as_slice()].concat();
    expect_exactly(ctx, "natively", &read, &ids)?;
    ctx.observe("native pages", &(ids1.len(), ids2.len()));

    // At a width that does not divide 31 by one less than a page, `last`
    // is 31 / 4 rounded up: 8, whose page holds the 3 left.
    ctx.step("lab-bot lists natively 4 per page: the first and the last of 8 pages");
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    let p1 = native.list_grants("page=1&limit=4").await?;
    ctx.expect_eq(
        "4 per page, page 1",
        native_ids(ctx, "4 per page, page 1", &p1)?,
        sorted[..4].to_vec(),
    )?;
    expect_links(ctx, "4 per page, page 1", &p1, (1, 8), 4)?;
    let p8 = native.list_grants("page=8&limit=4").await?;
    ctx.expect_eq(
        "4 per page, page 8",
        native_ids(ctx, "4 per page, page 8", &p8)?,
        sorted[28..].to_vec(),
    )?;
    expect_links(ctx, "4 per page, page 8", &p8, (8, 8), 4)?;
    ctx.observe("4 per page", &(p1.status, p8.status));

    // At a width the total fills exactly there is one page: nothing is next.
    ctx.step("lab-bot lists natively 31 per page: one page, no next");
    let only = native.list_grants("page=1&limit=31").await?;
    ctx.expect_eq(
        "31 per page, page 1",
        native_ids(ctx, "31 per page, page 1", &only)?,
        sorted.clone(),
    )?;
    expect_links(ctx, "31 per page, the only page", &only, (1, 1), 31)?;
    Ok(())
}

/// Asked for 100 of 51 grants, the Core clamps the page to 50 and its `Link`
/// still leads to the one left, with totals that agree.
#[scenario(Pagination, parity, clauses = ["S3.list.clamp", "S3.list.headers", "S3.list.link-list", "S6.list.continuation"])]
async fn list_clamped_width_continues(ctx: &mut Ctx) -> Outcome {
    // The adapter reads the same 51 as 30 + 21.
    let ids = prepared(ctx, 51).await?;

    ctx.step("lab-bot asks natively for 100 grants per page");
    let native = ctx.native(LAB_BOT)?;
    let p1 = native.list_grants("page=1&limit=100").await?;
    let ids1 = native_ids(ctx, "page 1", &p1)?;
    ctx.expect_eq("the Core clamps the page to 50", ids1.len(), 50)?;
    ctx.expect_eq("X-Total-Count", p1.total_count()?, 51)?;
    let links = expect_links(ctx, "page 1 (clamped)", &p1, (1, 2), 50)?;

    ctx.step("lab-bot follows the Link rel=next natively");
    let next = links
        .get("next")
        .ok_or_else(|| Abort::failed("no Link rel=next"))?;
    // The target must be on the Core's own origin; it is then requested
    // by its path and query.
    let core = ctx.human("alice")?.url("/")?;
    ctx.expect_eq(
        "Link rel=next is on the Core's origin",
        next.origin().ascii_serialization(),
        core.origin().ascii_serialization(),
    )?;
    let path = match next.query() {
        Some(query) => format!("{}?{query}", next.path()),
        None => next.path().to_owned(),
    };
    let p2 = native.call("GET", &path, None).await?;
    let ids2 = native_ids(ctx, "the next page", &p2)?;
    ctx.expect_eq("X-Total-Count of the next page", p2.total_count()?, 51)?;
    expect_links(ctx, "the next page", &p2, (2, 2), 50)?;
    let read = [ids1.as_slice(), ids2.as_slice()].concat();
    expect_exactly(ctx, "natively at the clamped width", &read, &ids)?;
    ctx.observe("clamped pages", &(ids1.len(), ids2.len()));

    ctx.step("lab-bot lists the same grants through the adapter");
    let bot = ctx.bot(LAB_BOT).await?;
    let first = tool_page(ctx, &bot, 1, None).await?;
    expect_tool_page(ctx, "page 1", &first, (30, 1, true, Some(2)))?;
    let second = tool_page(ctx, &bot, 2, None).await?;
    expect_tool_page(ctx, "page 2", &second, (21, 2, false, None))?;
    let read = [first.ids(), second.ids()].concat();
    expect_exactly(ctx, "through the adapter", &read, &ids)?;
    ctx.observe("adapter pages", &(first.grants.len(), second.grants.len()));
    Ok(())
}

/// Every state filter lists exactly the bot's grants in that state, keeps the
/// filter in its `Link`, and an unknown state is refused.
#[scenario(Pagination, parity, clauses = ["S3.list.state", "S3.list.page", "S3.list.link-filter", "S6.inputs.strict"])]
async fn list_state_filters(ctx: &mut Ctx) -> Outcome {
    // Without a filter the list holds every non-revoked state, with `all`
    // every state, so revoked grants appear only under `revoked` and `all`.
    // An unknown state is 400 or 422 natively and `invalid_input` at the
    // adapter.
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in and prepares six grants for lab-bot and one for other-bot");
    alice.login().await?;
    let mut grants = Vec::new();
    for i in 1..=6 {
        let (g, _) = alice
            .prepare_grant(LAB, LAB_BOT, &format!("task {i}"), "summary")
            .await?;
        grants.push(g);
    }
    let (foreign, _) = alice
        .prepare_grant(LAB, "other-bot", "other task", "summary")
        .await?;
    let [agent_a, agent_b, human, active, revoked_early, revoked_late] = grants
        .try_into()
        .map_err(|_| Abort::errored("six grants"))?;

    ctx.step("the grants are brought into every state");
    let bot = ctx.bot(LAB_BOT).await?;
    for g in [&human, &active, &revoked_late] {
        let proposal = bot.read_proposal(g).await?;
        let reply = bot.confirm(g, &proposal).await?;
        ctx.expect_tool_ok("lab-bot confirms", &reply)?;
    }
    for g in [&active, &revoked_late] {
        let page = alice.approve(g).await?;
        ctx.expect_status("approving", page.status, 200)?;
    }
    for g in [&revoked_early, &revoked_late] {
        let page = alice.withdraw(g).await?;
        ctx.expect_status("withdrawing", page.status, 200)?;
    }

    let ids = |gs: &[&GrantRef]| gs.iter().map(|g| g.id).collect::<Vec<i64>>();
    let every = [
        &agent_a,
        &agent_b,
        &human,
        &active,
        &revoked_early,
        &revoked_late,
    ];
    let cases: [(Option<&str>, Vec<i64>); 6] = [
        (None, ids(&every[..4])),
        (Some(state::AWAITING_AGENT), ids(&[&agent_a, &agent_b])),
        (Some(state::AWAITING_HUMAN), ids(&[&human])),
        (Some(state::ACTIVE), ids(&[&active])),
        (Some(state::REVOKED), ids(&[&revoked_early, &revoked_late])),
        (Some("all"), ids(&every)),
    ];
    let native = ctx.native(LAB_BOT)?;
    for (filter, expected) in &cases {
        let name = filter.unwrap_or("absent");
        ctx.step(&format!("lab-bot lists with state {name}"));
        let query = filter.map(|s| format!("state={s}")).unwrap_or_default();
        let answer = native.list_grants(&query).await?;
        ctx.expect_status(&format!("state {name} natively"), answer.status, 200)?;
        let listed = answer.grants()?;
        let read: Vec<i64> = listed.iter().map(|g| g.id).collect();
        expect_exactly(ctx, &format!("state {name} natively"), &read, expected)?;
        ctx.expect_eq(
            &format!("state {name}: X-Total-Count"),
            answer.total_count()?,
            expected.len() as i64,
        )?;
        let states: Vec<String> = listed.iter().map(|g| g.state.clone()).collect();
        ctx.expect_eq(
            &format!("state {name}: revoked grants shown only under revoked or all"),
            states.iter().any(|s| s == state::REVOKED),
            matches!(filter, Some("revoked" | "all")),
        )?;
        if let Some(s) = filter.filter(|s| *s != "all") {
            ctx.expect(
                &format!("state {name}: every grant listed is {s}"),
                states.iter().all(|x| x == s),
                &format!("{states:?}"),
            )?;
        }
        ctx.expect(
            &format!("state {name}: other-bot's grant is never listed"),
            !read.contains(&foreign.id),
            &format!("{read:?}"),
        )?;
        if let Some(s) = filter.filter(|_| expected.len() > 1) {
            let one = native.list_grants(&format!("{query}&limit=1")).await?;
            ctx.expect_status(&format!("state {name}, 1 per page"), one.status, 200)?;
            let next = one.links()?.query("next", "state");
            ctx.expect_eq(
                &format!("state {name}, 1 per page: Link next keeps the filter"),
                next.as_deref(),
                Some(s),
            )?;
        }
        let page = tool_page(ctx, &bot, 1, *filter).await?;
        let what = format!("state {name} through the adapter");
        expect_exactly(ctx, &what, &page.ids(), expected)?;
        ctx.expect_eq(&format!("{what}: nothing more"), page.has_more, false)?;
        ctx.observe(&format!("state {name}"), &states);
    }

    for bad in ["pending", "REVOKED", ""] {
        ctx.step(&format!("lab-bot lists with the unknown state {bad:?}"));
        let answer = native.list_grants(&format!("state={bad}")).await?;
        let what = format!("state {bad:?} natively");
        flows::expect_native_error_of(ctx, &what, &answer, &[400, 422])?;
        let reply = bot
            .call("list_agent_work_grants", json!({ "state": bad }))
            .await?;
        let what = format!("state {bad:?} through the adapter");
        ctx.expect_tool_error(&what, &reply, "invalid_input")?;
        ctx.expect_eq(
            "the refusal names the state input",
            reply.error_field(),
            Some("state"),
        )?;
        ctx.observe(
            &format!("state {bad:?}"),
            &(answer.status, reply.error_code()),
        );
    }
    Ok(())
}
