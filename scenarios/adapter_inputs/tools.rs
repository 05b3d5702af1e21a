//! Family 14: the adapter's whole input rule, second part — the four public
//! tools answer as the native API does and are never attributed, a lost
//! confirm answer is settled by reading the grant back, and a Core that
//! clamps the page under the adapter's 30 still yields every grant once.

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT};
use crate::support::grant_list::{expect_exactly, prepared, tool_page};
use crate::support::proxied::{TITLE, expect_no_receipt};

/// The confirm route of any grant of alice/lab, as the proxy matches it.
const CONFIRM: &str = "/api/v1/repos/alice/lab/agent-work-grants/*/confirm";
/// The native grant list, as the proxy matches it.
const LIST: &str = "/api/v1/agent-work-grants";
/// The page width of the clamping Core the proxy plays.
const CLAMPED: u32 = 10;

/// An Issue's members the contract names, to compare two answers about it.
fn members(
    i: &Issue,
) -> (
    i64,
    i64,
    &str,
    &str,
    &UserRef,
    &str,
    i64,
    Option<&GrantMarker>,
) {
    (
        i.id,
        i.index,
        &i.title,
        &i.body,
        &i.user,
        &i.html_url,
        i.repository_id,
        i.agent_work_grant.as_ref(),
    )
}

/// While lab-bot holds an active grant, the adapter's public tools answer as
/// the native API does, and `create_issue` opens an unattributed Issue.
#[scenario(AdapterInputs, parity, clauses = ["S6.tools.public", "S1.issue.marker-core-only"])]
async fn public_tools_answer_natively(ctx: &mut Ctx) -> Outcome {
    // With one submission made: `create_issue` opens an ordinary Issue (201)
    // with no marker natively and no "via agent work grant" on its page;
    // `get_issue`, `list_issues` and `get_repository` answer exactly what the
    // native API answers lab-bot (the submission keeps its marker, the
    // ordinary Issue has none).
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let (grant, proposal) =
        flows::active_grant(ctx, &alice, &bot, LAB, "Public tools stay ordinary").await?;
    ctx.step("lab-bot submits once through the grant");
    let submitted = bot
        .submit(
            &grant,
            &proposal,
            &NewIssue::new(TITLE, "Through the grant.\n"),
        )
        .await?;
    ctx.expect_eq("the submission", submitted.native_status(), Some(201))?;

    ctx.step("lab-bot opens an ordinary Issue with create_issue");
    let body = "Ordinary activity, not a grant submission.\n\n".repeat(40) + "é – ✓\n";
    let (owner, repo) = (&grant.owner, &grant.repo);
    let created = bot
        .call(
            "create_issue",
            json!({"owner": owner, "repo": repo, "title": "An ordinary Issue", "body": body}),
        )
        .await?;
    ctx.expect_tool_ok("create_issue", &created)?;
    ctx.expect_eq(
        "create_issue native_status",
        created.native_status(),
        Some(201),
    )?;
    let made = created.issue()?;
    ctx.expect_eq("its poster", made.user.login.as_str(), LAB_BOT)?;
    ctx.expect_eq("its body, whole", made.body.as_str(), body.as_str())?;
    ctx.expect_eq(
        "the tool's answer carries no marker",
        &made.agent_work_grant,
        &None,
    )?;
    let native = ctx.native(LAB_BOT)?;
    let answer = native.issue(LAB, made.index).await?;
    ctx.expect_status("the Issue read natively", answer.status, 200)?;
    let stored = answer.issue()?;
    ctx.expect_eq(
        "the Issue as created = as stored",
        members(&made),
        members(&stored),
    )?;
    ctx.expect_eq("no marker natively", &stored.agent_work_grant, &None)?;
    let page = alice.issue_page(LAB, made.index).await?;
    ctx.expect_status("alice opens its page", page.status, 200)?;
    ctx.expect(
        "its page does not say \"via agent work grant\"",
        !page.shows("via agent work grant"),
        &page.text(),
    )?;

    ctx.step("get_issue answers each Issue as the native API does");
    let listed = ctx.setup().issues(LAB).await?;
    ctx.expect_eq("Issues in alice/lab", listed.len(), 2)?;
    for issue in &listed {
        let reply = bot
            .call(
                "get_issue",
                json!({"owner": owner, "repo": repo, "index": issue.index}),
            )
            .await?;
        let what = format!("get_issue {}", issue.index);
        ctx.expect_eq(
            &format!("{what} native_status"),
            reply.native_status(),
            Some(200),
        )?;
        let read = native.issue(LAB, issue.index).await?.issue()?;
        ctx.expect_eq(&what, members(&reply.issue()?), members(&read))?;
    }

    ctx.step("list_issues answers the native list");
    let reply = bot
        .call("list_issues", json!({"owner": owner, "repo": repo}))
        .await?;
    ctx.expect_tool_ok("list_issues", &reply)?;
    let tool_list = reply.issues()?;
    ctx.expect_eq(
        "list_issues = the native list",
        tool_list.iter().map(members).collect::<Vec<_>>(),
        listed.iter().map(members).collect::<Vec<_>>(),
    )?;
    let markers: Vec<Option<i64>> = tool_list
        .iter()
        .map(|i| i.agent_work_grant.as_ref().map(|m| m.grant_id))
        .collect();
    ctx.expect_eq(
        "only the submission is attributed",
        markers.clone(),
        vec![Some(grant.id), None],
    )?;

    ctx.step("get_repository answers the native repository");
    let reply = bot
        .call("get_repository", json!({"owner": owner, "repo": repo}))
        .await?;
    ctx.expect_eq(
        "get_repository native_status",
        reply.native_status(),
        Some(200),
    )?;
    let tool_repo = reply.repository()?;
    let answer = native.call("GET", &core_api::repository(LAB), None).await?;
    ctx.expect_status("the repository read natively", answer.status, 200)?;
    ctx.expect_eq("get_repository = native", tool_repo, answer.repository()?)?;
    ctx.observe("markers", &markers);
    ctx.observe("ordinary Issue", &(made.index, made.title, made.body.len()));
    Ok(())
}

/// A committed confirmation whose answer is lost is `delivery_uncertain`; the
/// grant reads back confirmed, and the same confirmation again is 409 with
/// nothing changed.
#[scenario(AdapterInputs, parity, clauses = ["S6.uncertain", "S6.post-once"])]
async fn lost_confirm_settled_by_readback(ctx: &mut Ctx) -> Outcome {
    // Exactly one POST; the readback shows `awaiting_human` (revision 2); the
    // second confirmation is `conflict`.
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in and prepares a grant for lab-bot");
    alice.login().await?;
    let (grant, _) = alice
        .prepare_grant(LAB, LAB_BOT, "Lost confirmations settle", "summary")
        .await?;
    let bot = ctx.bot_builder(LAB_BOT).via_proxy().start().await?;
    let proxy = ctx.proxy().await?;
    let proposal = bot.read_proposal(&grant).await?;

    ctx.step("the Core commits lab-bot's confirmation, but the answer is lost");
    proxy.inject("POST", CONFIRM, Fault::DropResponse);
    let lost = bot.confirm(&grant, &proposal).await?;
    expect_no_receipt(ctx, "the lost confirm", &lost, "delivery_uncertain", None)?;
    ctx.expect_eq("exactly one confirm POST", proxy.count("POST", CONFIRM), 1)?;
    ctx.expect_eq("the drop fault was used", proxy.pending_faults(), 0)?;

    ctx.step("lab-bot reads the grant back: the confirmation took");
    let back = bot.get_grant(&grant).await?;
    ctx.expect_eq("readback native_status", back.native_status(), Some(200))?;
    let read = back.grant()?;
    let now = (read.state.as_str(), read.state_revision);
    ctx.expect_eq("the grant read back", now, (state::AWAITING_HUMAN, 2))?;
    ctx.expect("it has a confirmed_at", read.confirmed_at.is_some(), "null")?;

    ctx.step("the identical confirmation again is 409, and nothing changes");
    let again = bot.confirm(&grant, &proposal).await?;
    expect_no_receipt(ctx, "the repeated confirm", &again, "conflict", Some(409))?;
    ctx.expect_eq("two confirm POSTs in all", proxy.count("POST", CONFIRM), 2)?;
    let (state_now, revision) = flows::native_status(ctx, LAB_BOT, &grant).await?;
    let want = (state::AWAITING_HUMAN.to_owned(), 2);
    ctx.expect_eq("the grant natively", (state_now, revision), want)?;
    ctx.observe("results", &json!([lost.error_code(), again.error_code()]));
    Ok(())
}

/// A Core that clamps the grant list to 10 per page still yields all 31
/// pending grants through the adapter, each once, whichever way its `Link` is
/// written.
#[scenario(AdapterInputs, parity, clauses = ["S6.list.continuation", "S6.list.no-follow", "S0.standards.link-case"])]
async fn clamped_pages_yield_every_grant(ctx: &mut Ctx) -> Outcome {
    // The proxy lowers the `limit` the adapter asks, so the Core's own items,
    // `X-Total-Count` and `Link` answer for 10: pages of 10 + 10 + 10 + 1,
    // each asked with `limit=30` as a fresh request. Continuation comes "from
    // `X-Total-Count` / `Link`": with `Link` stripped, at width 30 and at 10,
    // what the count settles must hold ([`walk_without_link`]); with `Link`
    // written another way RFC 8288 allows (empty list elements, a title that
    // reads like a link, upper-case relations, shared targets in one `rel`,
    // bare tokens) the pages are the same.
    let ids = prepared(ctx, 31).await?;
    let bot = ctx.bot_builder(LAB_BOT).via_proxy().start().await?;
    let proxy = ctx.proxy().await?;

    ctx.step("lab-bot pages through its grants while the Core clamps to 10");
    let shapes = clamped_walk(ctx, &bot, &proxy, &ids, Fault::ClampLimit(CLAMPED)).await?;

    ctx.step("every page was one fresh request to the list, asking limit=30");
    ctx.expect_eq("every clamp was used", proxy.pending_faults(), 0)?;
    let asked: Vec<String> = proxy
        .captured()
        .into_iter()
        .filter(|c| c.method == "GET" && c.path_and_query.starts_with(LIST))
        .map(|c| c.path_and_query)
        .collect();
    ctx.expect_eq("list requests", asked.len(), shapes.len())?;
    for (n, path) in asked.iter().enumerate() {
        let query: Vec<&str> = path
            .split_once('?')
            .map_or("", |(_, q)| q)
            .split('&')
            .collect();
        ctx.expect(
            &format!("request {} asks limit=30 and page {}", n + 1, n + 1),
            query.contains(&"limit=30") && query.contains(&format!("page={}", n + 1).as_str()),
            path,
        )?;
    }
    ctx.observe("pages", &shapes);

    ctx.step("lab-bot pages again, the Core writing Link another way RFC 8288 allows");
    clamped_walk(ctx, &bot, &proxy, &ids, Fault::RespellLink(Some(CLAMPED))).await?;

    let mut linkless = Vec::new();
    for width in [None, Some(CLAMPED)] {
        let at = width.map_or("30".into(), |w| w.to_string());
        ctx.step(&format!(
            "lab-bot pages again, the Core sending no Link, at width {at}"
        ));
        linkless.push(walk_without_link(ctx, &bot, &proxy, width, None, &ids).await?);
    }
    ctx.step("lab-bot confirms two grants and lists awaiting_human, the Core sending no Link");
    for &id in &ids[..2] {
        let grant = GrantRef {
            owner: "alice".into(),
            repo: "lab".into(),
            id,
        };
        let proposal = bot.read_proposal(&grant).await?;
        ctx.expect_tool_ok("confirm", &bot.confirm(&grant, &proposal).await?)?;
    }
    let state = Some(state::AWAITING_HUMAN);
    for width in [None, Some(1)] {
        linkless.push(walk_without_link(ctx, &bot, &proxy, width, state, &ids[..2]).await?);
    }
    // Full pages after the first: 60 grants end on page 2, 61 go on.
    let mut ids = ids;
    for more in [29, 1] {
        ids.extend(prepared(ctx, more).await?);
        ctx.step(&format!(
            "lab-bot pages through {} grants, the Core sending no Link",
            ids.len()
        ));
        linkless.push(walk_without_link(ctx, &bot, &proxy, None, None, &ids).await?);
    }
    ctx.observe("pages without Link", &linkless);
    Ok(())
}

/// Pages through lab-bot's 31 grants (`ids`) with `fault` on every list
/// request, the Core clamping to 10: 10 + 10 + 10 + 1, each once. Returns
/// each page as `(grants, has_more, next_page)`.
async fn clamped_walk(
    ctx: &Ctx,
    bot: &Bot,
    proxy: &FaultProxy,
    ids: &[i64],
    fault: Fault,
) -> Step<Vec<(usize, bool, Option<i64>)>> {
    let mut read = Vec::new();
    let mut shapes = Vec::new();
    let mut page = 1;
    loop {
        proxy.inject("GET", LIST, fault.clone());
        let list = tool_page(ctx, bot, page, None).await?;
        ctx.expect_eq(&format!("page {page}: its number"), list.page, page)?;
        shapes.push((list.grants.len(), list.has_more, list.next_page));
        read.extend(list.ids());
        if !list.has_more || page >= 8 {
            break;
        }
        ctx.expect_eq(
            &format!("page {page}: next_page"),
            list.next_page,
            Some(page + 1),
        )?;
        page += 1;
    }
    ctx.expect_eq(
        "pages: (grants, has_more, next_page)",
        shapes.clone(),
        vec![
            (10, true, Some(2)),
            (10, true, Some(3)),
            (10, true, Some(4)),
            (1, false, None),
        ],
    )?;
    expect_exactly(ctx, "through the adapter at the clamped width", &read, ids)?;
    Ok(shapes)
}

/// Pages through lab-bot's grants (in `state`, which hold exactly `ids`)
/// while the proxy strips `Link` (and clamps to `width`). From `X-Total-Count`
/// alone a full page of a narrow Core and a short last page can look alike,
/// so only what the count settles is required of page `p` with `r` of `T`
/// grants: page 1 with `r < T` has more; `p * r >= T` or `r = 0` has none
/// (every page before was at least as wide); a page of the 30 asked is full
/// (a Core never answers more than asked), so it has more exactly when
/// `T > 30 p`; `next_page` is `p + 1` exactly when there is more. Following `has_more` yields every grant once, within
/// one page more than the Core holds. An adapter may also refuse a Link-less
/// answer as malformed (a tool error, nothing published): the Core broke
/// §3's headers. Returns each page as `(grants, has_more)`, or the error code.
async fn walk_without_link(
    ctx: &Ctx,
    bot: &Bot,
    proxy: &FaultProxy,
    width: Option<u32>,
    state: Option<&str>,
    ids: &[i64],
) -> Step<Vec<Value>> {
    let total = ids.len();
    let pages = total.div_ceil(width.map_or(30, |w| w as usize)) as i64 + 1;
    let total = total as i64;
    let mut shapes = Vec::new();
    let mut read = Vec::new();
    for page in 1..=pages {
        proxy.inject("GET", LIST, Fault::DropLink(width));
        let reply = bot.list_grants(Some(page), state).await?;
        if reply.is_error {
            shapes.push(json!(reply.error_code()));
            return Ok(shapes);
        }
        let list = reply.list()?;
        let what = format!("page {page} without Link");
        let r = list.grants.len() as i64;
        shapes.push(json!([r, list.has_more]));
        ctx.expect_eq(&format!("{what}: its number"), list.page, page)?;
        let next = list.has_more.then_some(page + 1);
        ctx.expect_eq(&format!("{what}: next_page"), list.next_page, next)?;
        if page == 1 && r < total {
            ctx.expect(
                &format!("{what}: {r} of {total}, more follow"),
                list.has_more,
                "has_more false",
            )?;
        }
        if r == 30 {
            let more = total > 30 * page;
            ctx.expect_eq(
                &format!("{what}: a full page, has_more"),
                list.has_more,
                more,
            )?;
        }
        if r == 0 || page * r >= total {
            ctx.expect(
                &format!("{what}: {r} of {total}, nothing follows"),
                !list.has_more,
                "has_more true",
            )?;
        }
        read.extend(list.ids());
        if !list.has_more {
            expect_exactly(ctx, "the pages without Link", &read, ids)?;
            return Ok(shapes);
        }
    }
    Err(Abort::failed(format!(
        "without Link, still has_more after {pages} pages of {total} grants: {}",
        json!(shapes)
    )))
}
