//! Who sees a grant, the agent's list, and access loss.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::check;
use crate::support::TestResult;
use crate::support::client::Auth;
use crate::support::world::{Env, World, key, submission, triple, unique};

fn ids(v: Value) -> Vec<i64> {
    v.as_array()
        .map(|a| a.iter().filter_map(|g| g["id"].as_i64()).collect())
        .unwrap_or_default()
}

/// Grant routes answer 404 to anyone but the grant's agent, for a missing
/// grant, and for a grant addressed through another repository.
pub async fn only_the_agent_sees_a_grant(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let (id, digest) = w.active_grant().await?;
    let k = key();
    w.api
        .post(
            &format!("{}/issues", w.grant_path(id)),
            &w.bot_auth,
            &submission(&digest, &k, "t", "b"),
        )
        .await?
        .expect(201, "submit")?;
    // Another bot with write access on the same repository.
    let other = format!("other-bot-{}", unique());
    w.user(&other, "bot", "pw-other-1").await?;
    w.collaborator(&other, "write").await?;
    let other_auth = Auth::Token(w.token(&other, &["read:repository", "write:issue"]).await?);
    // The owner (a human with admin permission) is not the agent either.
    let owner_auth = Auth::Token(
        w.token(&w.owner, &["read:repository", "write:issue"])
            .await?,
    );
    for (who, auth) in [("other bot", &other_auth), ("owner", &owner_auth)] {
        w.api
            .get(&w.grant_path(id), auth)
            .await?
            .expect(404, &format!("{who} get"))?;
        w.api
            .post(
                &format!("{}/confirm", w.grant_path(id)),
                auth,
                &triple(&digest),
            )
            .await?
            .expect(404, &format!("{who} confirm"))?;
        w.api
            .post(
                &format!("{}/issues", w.grant_path(id)),
                auth,
                &submission(&digest, &key(), "t", "b"),
            )
            .await?
            .expect(404, &format!("{who} submit"))?;
        w.api
            .get(&format!("{}/submissions/{k}", w.grant_path(id)), auth)
            .await?
            .expect(404, &format!("{who} readback"))?;
        check!(
            !ids(w
                .api
                .get("/api/v1/agent-work-grants?state=all", auth)
                .await?
                .expect(200, "list")?
                .json())
            .contains(&id),
            "{who} lists the grant"
        );
    }
    w.api
        .get(&w.grant_path(id + 100_000), &w.bot_auth)
        .await?
        .expect(404, "missing grant")?;
    let elsewhere = format!("side-{}", unique());
    w.create_repo(&w.owner, &elsewhere, false).await?;
    w.api
        .get(
            &format!(
                "/api/v1/repos/{}/{elsewhere}/agent-work-grants/{id}",
                w.owner
            ),
            &w.bot_auth,
        )
        .await?
        .expect(404, "grant through another repository")?;
    w.api
        .get(
            &format!("/api/v1/repos/nobody-{}/x/agent-work-grants/{id}", unique()),
            &w.bot_auth,
        )
        .await?
        .expect(404, "missing repository")?;
    // No credential at all is 401, a wrong one too.
    w.api
        .get(&w.grant_path(id), &Auth::None)
        .await?
        .expect(401, "anonymous get")?;
    w.api
        .get("/api/v1/agent-work-grants", &Auth::None)
        .await?
        .expect(401, "anonymous list")?;
    w.api
        .get(&w.grant_path(id), &Auth::Token("f".repeat(40)))
        .await?
        .expect(401, "bad token")?;
    Ok(())
}

/// 31 pending grants: page 1 has 30, page 2 has 1; clamping to 50; totals,
/// `Link` relations and state filters.
pub async fn list_pages_and_filters(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let mut made = Vec::new();
    for i in 0..31 {
        made.push(w.prepare(&format!("task {i}"), "s").await?);
    }
    let first = w
        .api
        .get("/api/v1/agent-work-grants", &w.bot_auth)
        .await?
        .expect(200, "page 1")?;
    check!(
        first.header("x-total-count").as_deref() == Some("31"),
        "total {:?}",
        first.header("x-total-count")
    );
    let page1 = ids(first.json());
    check!(page1 == made[..30], "page 1 ids {page1:?}");
    let link = first.header("link").ok_or("no Link")?;
    let next = format!(
        "<{}/api/v1/agent-work-grants?page=2&limit=30>; rel=\"next\"",
        w.base
    );
    check!(link.contains(&next), "Link lacks next: {link}");
    check!(
        link.contains("rel=\"last\"")
            && link.contains("rel=\"first\"")
            && !link.contains("rel=\"prev\""),
        "Link relations: {link}"
    );
    let second = w
        .api
        .get("/api/v1/agent-work-grants?page=2", &w.bot_auth)
        .await?
        .expect(200, "page 2")?;
    check!(ids(second.json()) == made[30..], "page 2");
    let link2 = second.header("link").unwrap_or_default();
    check!(
        link2.contains("rel=\"prev\"") && !link2.contains("rel=\"next\""),
        "page 2 Link: {link2}"
    );
    let beyond = w
        .api
        .get("/api/v1/agent-work-grants?page=3", &w.bot_auth)
        .await?
        .expect(200, "page 3")?;
    check!(
        ids(beyond.json()).is_empty(),
        "page beyond the end not empty"
    );
    // Clamped: asking 100 gets 50 at most, and the headers still continue.
    let clamped = w
        .api
        .get("/api/v1/agent-work-grants?limit=100", &w.bot_auth)
        .await?
        .expect(200, "limit 100")?;
    check!(
        ids(clamped.json()).len() == 31,
        "limit 100 gave a different count"
    );
    let small = w
        .api
        .get("/api/v1/agent-work-grants?limit=10&page=4", &w.bot_auth)
        .await?
        .expect(200, "limit 10 page 4")?;
    check!(ids(small.json()) == made[30..], "limit 10 page 4");
    // Filters.
    w.confirm(made[0]).await?;
    let human = ids(w
        .api
        .get(
            "/api/v1/agent-work-grants?state=awaiting_human",
            &w.bot_auth,
        )
        .await?
        .expect(200, "filter")?
        .json());
    check!(human == vec![made[0]], "awaiting_human filter {human:?}");
    let agent = w
        .api
        .get(
            "/api/v1/agent-work-grants?state=awaiting_agent&limit=50",
            &w.bot_auth,
        )
        .await?
        .expect(200, "filter 2")?;
    check!(
        agent.header("x-total-count").as_deref() == Some("30"),
        "awaiting_agent total"
    );
    let active = ids(w
        .api
        .get("/api/v1/agent-work-grants?state=active", &w.bot_auth)
        .await?
        .expect(200, "filter 3")?
        .json());
    check!(active.is_empty(), "active filter {active:?}");
    // Clamp check with more than 50 grants is covered by the limit arithmetic:
    let fifty = w
        .api
        .get("/api/v1/agent-work-grants?limit=50", &w.bot_auth)
        .await?
        .expect(200, "limit 50")?;
    check!(
        fifty
            .header("link")
            .unwrap_or_default()
            .contains("limit=50"),
        "limit 50 link"
    );
    let over = w
        .api
        .get("/api/v1/agent-work-grants?limit=51", &w.bot_auth)
        .await?
        .expect(200, "limit 51")?;
    check!(
        over.header("link")
            .unwrap_or_default()
            .contains("limit=50>"),
        "limit 51 not clamped to 50 in Link"
    );
    Ok(())
}

/// Grants in a repository the agent can no longer read leave the list's
/// pages and its total, wherever they fall between the visible ones, and
/// come back with access.
pub async fn list_pages_skip_unreadable_repositories(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let other = format!("side-{}", unique());
    w.create_repo(&w.owner, &other, true).await?;
    w.collaborator_in(&other, &w.bot, "write").await?;
    let (mut here, mut there) = (Vec::new(), Vec::new());
    for i in 0..3 {
        here.push(w.prepare(&format!("here {i}"), "s").await?);
        there.push(
            w.prepare_in(&other, &w.bot, &format!("there {i}"), "s")
                .await?,
        );
    }
    let w = &w;
    let page = |n: i64| async move {
        let path = format!("/api/v1/agent-work-grants?page={n}&limit=2");
        w.api.get(&path, &w.bot_auth).await?.expect(200, "list")
    };
    let first = page(1).await?;
    check!(
        first.header("x-total-count").as_deref() == Some("6"),
        "total with both repositories {:?}",
        first.header("x-total-count")
    );
    check!(ids(first.json()) == [here[0], there[0]], "both, page 1");
    w.remove_collaborator_in(&other, &w.bot).await?;
    let first = page(1).await?;
    check!(
        first.header("x-total-count").as_deref() == Some("3"),
        "total without the unreadable repository {:?}",
        first.header("x-total-count")
    );
    check!(
        ids(first.json()) == here[..2],
        "page 1 {:?}",
        ids(first.json())
    );
    let link = first.header("link").unwrap_or_default();
    check!(
        link.contains("page=2&limit=2>; rel=\"next\"")
            && link.contains("page=2&limit=2>; rel=\"last\""),
        "page 1 Link: {link}"
    );
    let second = page(2).await?;
    check!(
        ids(second.json()) == here[2..],
        "page 2 {:?}",
        ids(second.json())
    );
    check!(ids(page(3).await?.json()).is_empty(), "page 3 not empty");
    w.set_private(&other, false).await?;
    let all = w
        .api
        .get("/api/v1/agent-work-grants?limit=50", &w.bot_auth)
        .await?
        .expect(200, "list after access comes back")?;
    let mut every: Vec<i64> = here.iter().chain(&there).copied().collect();
    every.sort_unstable();
    check!(
        ids(all.json()) == every,
        "public again {:?}",
        ids(all.json())
    );
    Ok(())
}

/// Collaborator removed, repository made private, scope reduced: each
/// route answers as the new permissions say and nothing is written.
pub async fn access_loss(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let (id, digest) = w.active_grant().await?;
    let k = key();
    let path = format!("{}/issues", w.grant_path(id));
    w.api
        .post(&path, &w.bot_auth, &submission(&digest, &k, "t", "b"))
        .await?
        .expect(201, "submit")?;

    // Scope reduced: a token without write:issue.
    let read_only = Auth::Token(w.token(&w.bot, &["read:repository"]).await?);
    w.api
        .get(&w.grant_path(id), &read_only)
        .await?
        .expect(200, "read with read scope")?;
    w.api
        .post(&path, &read_only, &submission(&digest, &key(), "t", "b"))
        .await?
        .expect(403, "submit without write:issue")?;
    let no_repo = Auth::Token(w.token(&w.bot, &["write:issue"]).await?);
    w.api
        .get(&w.grant_path(id), &no_repo)
        .await?
        .expect(403, "get without read:repository")?;
    w.api
        .get("/api/v1/agent-work-grants", &no_repo)
        .await?
        .expect(403, "list without read:repository")?;

    // Downgraded to read: can read, cannot write.
    w.collaborator(&w.bot, "read").await?;
    w.api
        .get(&w.grant_path(id), &w.bot_auth)
        .await?
        .expect(200, "read collaborator get")?;
    w.api
        .post(&path, &w.bot_auth, &submission(&digest, &key(), "t", "b"))
        .await?
        .expect(403, "read collaborator submit")?;
    w.api
        .post(
            &format!("{}/confirm", w.grant_path(id)),
            &w.bot_auth,
            &triple(&digest),
        )
        .await?
        .expect(403, "read collaborator confirm")?;

    // Removed from the private repository: invisible.
    w.remove_collaborator_in(&w.repo, &w.bot).await?;
    w.api
        .get(&w.grant_path(id), &w.bot_auth)
        .await?
        .expect(404, "removed get")?;
    w.api
        .post(&path, &w.bot_auth, &submission(&digest, &k, "t", "b"))
        .await?
        .expect(404, "removed replay")?;
    w.api
        .get(
            &format!("{}/submissions/{k}", w.grant_path(id)),
            &w.bot_auth,
        )
        .await?
        .expect(404, "removed readback")?;
    check!(
        !ids(w
            .api
            .get("/api/v1/agent-work-grants?state=all", &w.bot_auth)
            .await?
            .expect(200, "list")?
            .json())
        .contains(&id),
        "list shows an invisible grant"
    );
    check!(w.issue_count().await? == 1, "access loss wrote an Issue");

    // Public repository: readable again, but not writable without permission.
    w.set_private(&w.repo, false).await?;
    w.api
        .get(&w.grant_path(id), &w.bot_auth)
        .await?
        .expect(200, "public get")?;
    w.api
        .post(&path, &w.bot_auth, &submission(&digest, &key(), "t", "b"))
        .await?
        .expect(403, "public submit without write")?;
    // Made private again without the bot: gone.
    w.set_private(&w.repo, true).await?;
    w.api
        .get(&w.grant_path(id), &w.bot_auth)
        .await?
        .expect(404, "private again")?;
    Ok(())
}

/// Ordinary Issues — by the bot itself, through the public route — never
/// carry the grant attribution; the four public routes work.
pub async fn ordinary_issues_are_unattributed(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let (id, _) = w.active_grant().await?;
    let repo = w
        .api
        .get(
            &format!("/api/v1/repos/{}/{}", w.owner, w.repo),
            &w.bot_auth,
        )
        .await?
        .expect(200, "get repo")?
        .json();
    check!(
        repo["full_name"] == format!("{}/{}", w.owner, w.repo) && repo["private"] == true,
        "repo {repo}"
    );
    check!(
        repo["owner"]["login"] == w.owner.as_str() && repo["id"].is_i64(),
        "repo owner {repo}"
    );
    let made = w
        .api
        .post(
            &format!("/api/v1/repos/{}/{}/issues", w.owner, w.repo),
            &w.bot_auth,
            &json!({"title": "Plain", "body": "no grant"}),
        )
        .await?
        .expect(201, "ordinary issue")?
        .json();
    check!(
        made["agent_work_grant"].is_null(),
        "ordinary issue attributed: {made}"
    );
    check!(made["user"]["login"] == w.bot.as_str(), "poster");
    // Trying to smuggle the attribution in is an unknown field.
    w.api
        .post(
            &format!("/api/v1/repos/{}/{}/issues", w.owner, w.repo),
            &w.bot_auth,
            &json!({"title": "Sneaky", "body": "", "agent_work_grant": {"grant_id": id, "request_key": key()}}),
        )
        .await?
        .expect(422, "smuggled attribution")?;
    let list = w
        .api
        .get(
            &format!("/api/v1/repos/{}/{}/issues", w.owner, w.repo),
            &w.bot_auth,
        )
        .await?
        .expect(200, "list issues")?;
    check!(
        list.header("x-total-count").as_deref() == Some("1"),
        "issue total"
    );
    let index = made["index"].as_i64().ok_or("index")?;
    let got = w
        .api
        .get(
            &format!("/api/v1/repos/{}/{}/issues/{index}", w.owner, w.repo),
            &w.bot_auth,
        )
        .await?
        .expect(200, "get issue")?
        .json();
    check!(got["agent_work_grant"].is_null(), "read back attributed");
    let page = w
        .browser
        .get(&format!("/{}/{}/issues/{index}", w.owner, w.repo))
        .await?
        .expect(200, "issue page")?;
    check!(
        !crate::support::browser::has(&page.text, ".issue-grant"),
        "ordinary issue page shows a grant marker"
    );
    Ok(())
}
