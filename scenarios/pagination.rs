//! Family 2: pagination of the grant list, through the adapter and natively.
//!
//! The grants are prepared the honest way, through alice's new-grant form,
//! one after the other. Every list is read twice: through the bot's adapter
//! (`{grants, page, has_more, next_page}`) and natively with the bot's own
//! token, where `X-Total-Count` and the RFC 8288 `Link` must agree with what
//! the pages actually hold. Another bot's grant is always present, so "for
//! one bot" is checked too.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::actors::http::Answer;
use crate::actors::{Bot, GrantRef, Human, ToolReply};
use crate::ctx::Ctx;
use crate::runner::catalogue::Scenario;
use crate::runner::outcome::{Abort, Outcome, Step};

/// This family's scenarios, in catalogue order.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            id: "list_31_pending_30_plus_1",
            family: "2 pagination",
            claim: "31 pending grants for one bot read as 30 + 1 through the adapter (has_more \
                    false at the end) and natively, where X-Total-Count and Link agree with the \
                    pages, ids ascend, and every grant appears exactly once.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(list_31_pending_30_plus_1(ctx)),
        },
        Scenario {
            id: "list_clamped_width_continues",
            family: "2 pagination",
            claim: "Asked for 100 grants of 51, the Core clamps the page to 50 and its Link still \
                    leads to the one left, with totals that agree; the adapter reads the same 51 \
                    as 30 + 21.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(list_clamped_width_continues(ctx)),
        },
        Scenario {
            id: "list_state_filters",
            family: "2 pagination",
            claim: "Every state filter lists exactly the bot's grants in that state (absent: every \
                    non-revoked state; all: every state), revoked grants only under revoked and \
                    all, and an unknown state is 400 natively and invalid_input at the adapter.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(list_state_filters(ctx)),
        },
    ]
}

const REPO: &str = "alice/lab";
const AGENT: &str = "lab-bot";

/// alice (signed in) prepares `n` grants for `agent` through the form and
/// returns their ids in preparation order.
async fn prepare_many(alice: &Human, agent: &str, n: usize) -> Step<Vec<i64>> {
    let mut ids = Vec::with_capacity(n);
    for i in 1..=n {
        let (grant, _) = alice
            .prepare_grant(REPO, agent, &format!("task {i} of {n}"), "summary")
            .await?;
        ids.push(grant.id);
    }
    Ok(ids)
}

/// alice logs in and prepares `n` grants for lab-bot and one for other-bot.
async fn prepared(ctx: &mut Ctx, n: usize) -> Step<Vec<i64>> {
    let alice = ctx.human("alice")?;
    ctx.step(&format!(
        "alice logs in and prepares {n} grants for lab-bot and one for other-bot through the form"
    ));
    alice.login().await?;
    let ids = prepare_many(&alice, AGENT, n).await?;
    prepare_many(&alice, "other-bot", 1).await?;
    Ok(ids)
}

/// One page as the adapter returned it.
struct ToolPage {
    ids: Vec<i64>,
    page: Option<i64>,
    has_more: Option<bool>,
    next_page: Value,
}

/// Reads one page through the adapter; anything but a success is a failure.
async fn tool_page(ctx: &Ctx, bot: &Bot, page: i64, state: Option<&str>) -> Step<ToolPage> {
    let reply = bot.list_grants(Some(page), state).await?;
    let s = ctx.expect_tool_ok(&format!("list_agent_work_grants page {page}"), &reply)?;
    ctx.expect_eq(
        "the adapter never claims a snapshot",
        &s["snapshot"],
        &Value::Bool(false),
    )?;
    Ok(ToolPage {
        ids: tool_ids(&reply),
        page: s["page"].as_i64(),
        has_more: s["has_more"].as_bool(),
        next_page: s["next_page"].clone(),
    })
}

/// The grant ids of a successful list result.
fn tool_ids(reply: &ToolReply) -> Vec<i64> {
    reply
        .structured
        .as_ref()
        .and_then(|s| s["grants"].as_array())
        .map(|a| a.iter().filter_map(|g| g["id"].as_i64()).collect())
        .unwrap_or_default()
}

/// The grant ids of a native list answer.
fn native_ids(answer: &Answer) -> Step<Vec<i64>> {
    let body = answer.json()?;
    let items = body
        .as_array()
        .ok_or_else(|| Abort::failed(format!("{} is not a JSON array", answer.url)))?;
    Ok(items.iter().filter_map(|g| g["id"].as_i64()).collect())
}

/// The native answer's `X-Total-Count`.
fn total_count(ctx: &Ctx, answer: &Answer) -> Step<i64> {
    let total = answer
        .header("x-total-count")
        .and_then(|v| v.trim().parse::<i64>().ok());
    ctx.expect(
        "the answer carries a numeric X-Total-Count",
        total.is_some(),
        &format!("{:?}", answer.header("x-total-count")),
    )?;
    Ok(total.unwrap_or_default())
}

/// A `Link` target: the absolute URL and the query values that matter.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LinkTarget {
    url: String,
    path: String,
    page: Option<i64>,
    limit: Option<i64>,
    state: Option<String>,
}

/// Parses an RFC 8288 `Link` header into `rel → target`. Every target must
/// be an absolute URL (spec §3).
fn links(ctx: &Ctx, answer: &Answer) -> Step<BTreeMap<String, LinkTarget>> {
    let header = answer.header("link").unwrap_or_default();
    ctx.expect(
        "the answer carries a Link header",
        !header.trim().is_empty(),
        &format!("{:?}", answer.header("link")),
    )?;
    let mut out = BTreeMap::new();
    for part in header.split(',') {
        let part = part.trim();
        let (Some(open), Some(close)) = (part.find('<'), part.find('>')) else {
            return Err(Abort::failed(format!("Link entry without <url>: {part}")));
        };
        let target = &part[open + 1..close];
        let url = url::Url::parse(target)
            .map_err(|e| Abort::failed(format!("Link target `{target}` is not absolute: {e}")))?;
        let query: BTreeMap<String, String> = url.query_pairs().into_owned().collect();
        let number = |k: &str| query.get(k).and_then(|v| v.parse().ok());
        let target = LinkTarget {
            url: target.to_owned(),
            path: url.path().to_owned(),
            page: number("page"),
            limit: number("limit"),
            state: query.get("state").cloned(),
        };
        for param in part[close + 1..].split(';') {
            let param = param.trim();
            if let Some(rels) = param.strip_prefix("rel=") {
                for rel in rels.trim_matches('"').split_whitespace() {
                    out.insert(rel.to_owned(), target.clone());
                }
            }
        }
    }
    Ok(out)
}

/// Checks the `Link` of one page: which rels are present, and the page each
/// points at. `expected` maps rel → page (absent rels must be absent).
fn expect_links(
    ctx: &Ctx,
    what: &str,
    answer: &Answer,
    expected: &[(&str, i64)],
    width: i64,
) -> Step<BTreeMap<String, LinkTarget>> {
    let found = links(ctx, answer)?;
    let pages: BTreeMap<&str, Option<i64>> =
        found.iter().map(|(r, t)| (r.as_str(), t.page)).collect();
    let want: BTreeMap<&str, Option<i64>> = expected.iter().map(|(r, p)| (*r, Some(*p))).collect();
    ctx.expect_eq(&format!("{what}: Link rels and their pages"), pages, want)?;
    for (rel, target) in &found {
        ctx.expect_eq(
            &format!("{what}: Link {rel} names the grant list with the page width"),
            (target.path.as_str(), target.limit),
            ("/api/v1/agent-work-grants", Some(width)),
        )?;
    }
    Ok(found)
}

/// Checks that `read` holds each of `expected` exactly once, in ascending
/// order.
fn expect_exactly(ctx: &Ctx, what: &str, read: &[i64], expected: &[i64]) -> Step<()> {
    let mut want = expected.to_vec();
    want.sort_unstable();
    ctx.expect_eq(
        &format!("{what}: every grant exactly once, ascending ids"),
        read,
        want.as_slice(),
    )
}

/// 31 pending grants: 30 + 1 through the adapter and natively.
pub async fn list_31_pending_30_plus_1(ctx: &mut Ctx) -> Outcome {
    let ids = prepared(ctx, 31).await?;
    let bot = ctx.bot(AGENT).await?;

    ctx.step("lab-bot lists its grants through the adapter, page 1 then page 2");
    let first = tool_page(ctx, &bot, 1, None).await?;
    ctx.expect_eq(
        "page 1: 30 grants, more to come, next page 2",
        (
            first.ids.len(),
            first.page,
            first.has_more,
            &first.next_page,
        ),
        (30, Some(1), Some(true), &Value::from(2)),
    )?;
    let second = tool_page(ctx, &bot, 2, None).await?;
    ctx.expect_eq(
        "page 2: 1 grant, nothing more",
        (
            second.ids.len(),
            second.page,
            second.has_more,
            &second.next_page,
        ),
        (1, Some(2), Some(false), &Value::Null),
    )?;
    let read: Vec<i64> = first.ids.iter().chain(&second.ids).copied().collect();
    expect_exactly(ctx, "through the adapter", &read, &ids)?;
    ctx.observe("adapter pages", &(first.ids.len(), second.ids.len()));

    ctx.step("lab-bot lists its grants natively, 30 per page");
    let native = ctx.native(AGENT)?;
    let p1 = native.list_grants("page=1&limit=30").await?;
    ctx.expect_status("page 1", p1.status, 200)?;
    let ids1 = native_ids(&p1)?;
    ctx.expect_eq("page 1 holds 30", ids1.len(), 30)?;
    ctx.expect_eq("page 1: X-Total-Count", total_count(ctx, &p1)?, 31)?;
    expect_links(
        ctx,
        "page 1",
        &p1,
        &[("first", 1), ("next", 2), ("last", 2)],
        30,
    )?;
    let p2 = native.list_grants("page=2&limit=30").await?;
    ctx.expect_status("page 2", p2.status, 200)?;
    let ids2 = native_ids(&p2)?;
    ctx.expect_eq("page 2 holds 1", ids2.len(), 1)?;
    ctx.expect_eq("page 2: X-Total-Count", total_count(ctx, &p2)?, 31)?;
    expect_links(
        ctx,
        "page 2",
        &p2,
        &[("first", 1), ("prev", 1), ("last", 2)],
        30,
    )?;
    let read: Vec<i64> = ids1.iter().chain(&ids2).copied().collect();
    expect_exactly(ctx, "natively", &read, &ids)?;
    ctx.observe("native pages", &(ids1.len(), ids2.len()));
    Ok(())
}

/// A clamped width: 100 asked, 50 given, and the Link still continues.
pub async fn list_clamped_width_continues(ctx: &mut Ctx) -> Outcome {
    let ids = prepared(ctx, 51).await?;

    ctx.step("lab-bot asks natively for 100 grants per page");
    let native = ctx.native(AGENT)?;
    let p1 = native.list_grants("page=1&limit=100").await?;
    ctx.expect_status("page 1", p1.status, 200)?;
    let ids1 = native_ids(&p1)?;
    ctx.expect_eq("the Core clamps the page to 50", ids1.len(), 50)?;
    ctx.expect_eq("X-Total-Count", total_count(ctx, &p1)?, 51)?;
    let found = expect_links(
        ctx,
        "page 1 (clamped)",
        &p1,
        &[("first", 1), ("next", 2), ("last", 2)],
        50,
    )?;

    ctx.step("lab-bot follows the Link rel=next natively");
    let next = found
        .get("next")
        .ok_or_else(|| Abort::failed("no Link rel=next"))?;
    let origin = ctx.core_url().trim_end_matches('/').to_owned();
    let path = next
        .url
        .strip_prefix(&origin)
        .ok_or_else(|| {
            Abort::failed(format!(
                "Link rel=next `{}` is not on the Core's origin {origin}",
                next.url
            ))
        })?
        .to_owned();
    let p2 = native.call("GET", &path, None).await?;
    ctx.expect_status("the next page", p2.status, 200)?;
    let ids2 = native_ids(&p2)?;
    ctx.expect_eq("X-Total-Count of the next page", total_count(ctx, &p2)?, 51)?;
    expect_links(
        ctx,
        "the next page",
        &p2,
        &[("first", 1), ("prev", 1), ("last", 2)],
        50,
    )?;
    let read: Vec<i64> = ids1.iter().chain(&ids2).copied().collect();
    expect_exactly(ctx, "natively at the clamped width", &read, &ids)?;
    ctx.observe("clamped pages", &(ids1.len(), ids2.len()));

    ctx.step("lab-bot lists the same grants through the adapter");
    let bot = ctx.bot(AGENT).await?;
    let first = tool_page(ctx, &bot, 1, None).await?;
    ctx.expect_eq(
        "page 1: 30 grants, next page 2",
        (first.ids.len(), first.has_more, &first.next_page),
        (30, Some(true), &Value::from(2)),
    )?;
    let second = tool_page(ctx, &bot, 2, None).await?;
    ctx.expect_eq(
        "page 2: 21 grants, nothing more",
        (second.ids.len(), second.has_more, &second.next_page),
        (21, Some(false), &Value::Null),
    )?;
    let read: Vec<i64> = first.ids.iter().chain(&second.ids).copied().collect();
    expect_exactly(ctx, "through the adapter", &read, &ids)?;
    ctx.observe("adapter pages", &(first.ids.len(), second.ids.len()));
    Ok(())
}

/// Every `state` filter, natively and through the adapter.
pub async fn list_state_filters(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in and prepares six grants for lab-bot and one for other-bot");
    alice.login().await?;
    let mut grants = Vec::new();
    for i in 1..=6 {
        let (g, _) = alice
            .prepare_grant(REPO, AGENT, &format!("task {i}"), "summary")
            .await?;
        grants.push(g);
    }
    let (foreign, _) = alice
        .prepare_grant(REPO, "other-bot", "other task", "summary")
        .await?;
    let [agent_a, agent_b, human, active, revoked_early, revoked_late] = grants
        .try_into()
        .map_err(|_| Abort::errored("six grants"))?;

    ctx.step("the grants are brought into every state");
    let bot = ctx.bot(AGENT).await?;
    for g in [&human, &active, &revoked_late] {
        confirm(ctx, &bot, g).await?;
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
    let cases: [(Option<&str>, Vec<i64>); 6] = [
        (None, ids(&[&agent_a, &agent_b, &human, &active])),
        (Some("awaiting_agent"), ids(&[&agent_a, &agent_b])),
        (Some("awaiting_human"), ids(&[&human])),
        (Some("active"), ids(&[&active])),
        (Some("revoked"), ids(&[&revoked_early, &revoked_late])),
        (
            Some("all"),
            ids(&[
                &agent_a,
                &agent_b,
                &human,
                &active,
                &revoked_early,
                &revoked_late,
            ]),
        ),
    ];
    let native = ctx.native(AGENT)?;
    for (state, expected) in &cases {
        let name = state.unwrap_or("absent");
        ctx.step(&format!("lab-bot lists with state {name}"));
        let query = state.map(|s| format!("state={s}")).unwrap_or_default();
        let answer = native.list_grants(&query).await?;
        ctx.expect_status(&format!("state {name} natively"), answer.status, 200)?;
        let read = native_ids(&answer)?;
        expect_exactly(ctx, &format!("state {name} natively"), &read, expected)?;
        ctx.expect_eq(
            &format!("state {name}: X-Total-Count"),
            total_count(ctx, &answer)?,
            expected.len() as i64,
        )?;
        let states = states_of(&answer.json()?);
        let revoked_shown = states.iter().any(|s| s == "revoked");
        ctx.expect_eq(
            &format!("state {name}: revoked grants shown only under revoked or all"),
            revoked_shown,
            matches!(state, Some("revoked" | "all")),
        )?;
        if let Some(s) = state.filter(|s| *s != "all") {
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
        let page = tool_page(ctx, &bot, 1, *state).await?;
        expect_exactly(
            ctx,
            &format!("state {name} through the adapter"),
            &page.ids,
            expected,
        )?;
        ctx.expect_eq(
            &format!("state {name} through the adapter: nothing more"),
            page.has_more,
            Some(false),
        )?;
        ctx.observe(&format!("state {name}"), &states);
    }

    for bad in ["pending", "REVOKED", ""] {
        ctx.step(&format!("lab-bot lists with the unknown state {bad:?}"));
        let answer = native.list_grants(&format!("state={bad}")).await?;
        ctx.expect_status(&format!("state {bad:?} natively"), answer.status, 400)?;
        let reply = bot
            .call(
                "list_agent_work_grants",
                serde_json::json!({ "state": bad }),
            )
            .await?;
        ctx.expect_tool_error(
            &format!("state {bad:?} through the adapter"),
            &reply,
            "invalid_input",
        )?;
        ctx.expect_eq(
            "the refusal names the state input",
            reply.error.as_ref().and_then(|e| e["field"].as_str()),
            Some("state"),
        )?;
        ctx.observe(
            &format!("state {bad:?}"),
            &(answer.status, reply.error_code()),
        );
    }
    Ok(())
}

/// lab-bot confirms `grant` through its adapter.
async fn confirm(ctx: &Ctx, bot: &Bot, grant: &GrantRef) -> Step<()> {
    let proposal = bot.read_proposal(grant).await?;
    let reply = bot.confirm(grant, &proposal).await?;
    ctx.expect_tool_ok("lab-bot confirms", &reply)?;
    Ok(())
}

/// The `state` of every grant in a native list body.
fn states_of(body: &Value) -> Vec<String> {
    body.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|g| g["state"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}
