//! Concurrency claims: twenty identical submissions make one Issue; twenty
//! approvals with one revision make one approval.

use std::sync::Arc;

use futures::future::join_all;

use crate::check;
use crate::support::TestResult;
use crate::support::browser::input_value;
use crate::support::world::{Env, World, key, submission};

/// 20 concurrent identical submissions: one 201, nineteen 200 replays of
/// the same receipt, exactly one Issue.
pub async fn twenty_identical_submissions(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let (id, digest) = w.active_grant().await?;
    let path = format!("{}/issues", w.grant_path(id));
    let body = submission(&digest, &key(), "Once", "only once");
    let calls = (0..20).map(|_| w.api.post(&path, &w.bot_auth, &body));
    let results = join_all(calls).await;
    let mut created = 0;
    let mut replayed = 0;
    let mut issue_ids = Vec::new();
    for r in results {
        let r = r?;
        match r.status {
            201 => created += 1,
            200 => replayed += 1,
            other => {
                return Err(format!(
                    "concurrent submission answered {other}: {}",
                    r.text
                ));
            }
        }
        issue_ids.push(r.json()["submission"]["issue"]["id"].clone());
    }
    check!(
        created == 1 && replayed == 19,
        "created {created}, replayed {replayed}"
    );
    check!(
        issue_ids.windows(2).all(|p| p[0] == p[1]),
        "answers name different Issues: {issue_ids:?}"
    );
    check!(
        w.issue_count().await? == 1,
        "{} Issues",
        w.issue_count().await?
    );
    // Twenty distinct keys at once: twenty Issues with distinct indexes.
    let bodies: Vec<_> = (0..20)
        .map(|i| submission(&digest, &key(), &format!("n{i}"), "x"))
        .collect();
    let results = join_all(bodies.iter().map(|b| w.api.post(&path, &w.bot_auth, b))).await;
    let mut indexes = Vec::new();
    for r in results {
        let r = r?.expect(201, "distinct concurrent submission")?;
        indexes.push(
            r.json()["submission"]["issue"]["index"]
                .as_i64()
                .unwrap_or(-1),
        );
    }
    indexes.sort();
    indexes.dedup();
    check!(indexes.len() == 20, "indexes collided: {indexes:?}");
    check!(
        w.issue_count().await? == 21,
        "Issue count after distinct keys"
    );
    Ok(())
}

/// 20 concurrent approvals with the same revision: one 303, nineteen 409,
/// and the revision moved by exactly one.
pub async fn twenty_approvals(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let id = w.prepare("t", "s").await?;
    w.confirm(id).await?;
    let path = format!("{}/{id}", w.pages());
    let (page, csrf) = w.browser.csrf_from(&path).await?;
    let rev = input_value(&page.text, "state_revision").ok_or("no revision")?;
    let approve = format!("{path}/approve");
    let fields = [("_csrf", csrf.as_str()), ("state_revision", rev.as_str())];
    let results = join_all((0..20).map(|_| w.browser.post_form(&approve, &fields))).await;
    let mut ok = 0;
    let mut conflict = 0;
    for r in results {
        let r = r?;
        match r.status {
            303 => ok += 1,
            409 => conflict += 1,
            other => return Err(format!("concurrent approval answered {other}: {}", r.text)),
        }
    }
    check!(
        ok == 1 && conflict == 19,
        "approved {ok}, conflicts {conflict}"
    );
    let grant = w.grant(id).await?;
    check!(
        grant["state"] == "active" && grant["state_revision"] == 3,
        "after the race: {grant}"
    );
    // Same for withdrawal racing itself.
    let (page, csrf) = w.browser.csrf_from(&path).await?;
    let rev = input_value(&page.text, "state_revision").ok_or("no revision")?;
    let withdraw = format!("{path}/withdraw");
    let fields = [("_csrf", csrf.as_str()), ("state_revision", rev.as_str())];
    let results = join_all((0..20).map(|_| w.browser.post_form(&withdraw, &fields))).await;
    let statuses: Vec<u16> = results
        .into_iter()
        .map(|r| r.map(|r| r.status))
        .collect::<Result<_, _>>()?;
    check!(
        statuses.iter().filter(|s| **s == 303).count() == 1
            && statuses.iter().filter(|s| **s == 409).count() == 19,
        "withdraw race {statuses:?}"
    );
    check!(
        w.grant(id).await?["state_revision"] == 4,
        "revision after withdraw race"
    );
    Ok(())
}
