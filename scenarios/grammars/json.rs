//! Family 19, malformed JSON on every JSON route (spec §3 statuses: 400
//! malformed JSON, 422 well-formed but of the wrong JSON type): the grant
//! routes as the agent, with each grant in the state its route takes, and
//! every setup route of §5 as the site admin.

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT, Watch, active_grant};
use crate::support::tables::Table;

/// Bodies that are no JSON text (RFC 8259): 400.
const BROKEN: [(&str, &str); 4] = [
    ("an unclosed object", r#"{"title": "t""#),
    ("a trailing comma", r#"{"title": "t",}"#),
    ("single quotes", "{'title': 't'}"),
    ("nothing", ""),
];

/// JSON texts of another top-level type than the object each route takes:
/// 422.
const WRONG_TYPE: [(&str, &str); 4] = [
    ("an array", "[]"),
    ("a string", r#""{}""#),
    ("a number", "1"),
    ("null", "null"),
];

/// The members of a confirm or submit body as an array, in the order the
/// contract names them (a reader that takes a struct from a sequence would
/// accept it).
fn positional(route: &str, p: &Proposal) -> Option<String> {
    let triple = json!([p.schema, p.version, p.digest]);
    match route {
        "confirm" => Some(triple.to_string()),
        "submit" => {
            let mut members = triple.as_array().cloned().unwrap_or_default();
            let key = NewIssue::new("a title", "a body").request_key;
            members.extend([json!(key), json!("a title"), json!("a body")]);
            Some(Value::Array(members).to_string())
        }
        _ => None,
    }
}

/// Every JSON route refuses a body that is no JSON with 400 and one of
/// another top-level type with 422, each with an error body, writing nothing.
#[scenario(Grammars, parity, clauses = ["S3.statuses", "S3.error-body", "S5.setup.users", "S5.setup.repos", "S5.setup.tokens", "S5.setup.collaborators", "S5.setup.issues", "S5.setup.issue-move", "S9.register"])]
async fn malformed_json_on_every_route(ctx: &mut Ctx) -> Outcome {
    // The routes: confirm (a grant awaiting its agent) and submit (an active
    // grant) as lab-bot; make a user, a repository, a token, a collaborator,
    // an Issue, move an Issue and register an OAuth application as the site
    // admin.
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let (active, _) = active_grant(ctx, &alice, &bot, LAB, "an active grant").await?;
    ctx.step("alice prepares a grant awaiting lab-bot; the site admin opens an Issue");
    let (pending, _) = alice
        .prepare_grant(LAB, LAB_BOT, "a grant awaiting lab-bot", "summary")
        .await?;
    let issue = ctx
        .setup()
        .call(
            "POST",
            &core_api::issues(LAB),
            Some(json!({"title": "an Issue", "body": "b"})),
        )
        .await?
        .issue()?;
    let watch = Watch::new(LAB_BOT, LAB).grant(&active).grant(&pending);
    let before = watch.take(ctx).await?;

    let native = ctx.native(LAB_BOT)?;
    let proposal = bot.read_proposal(&pending).await?;
    let routes: [(&str, &str, String); 9] = [
        ("confirm", "POST", core_api::confirm(&pending)),
        ("submit", "POST", core_api::submit(&active)),
        ("make a user", "POST", core_api::ADMIN_USERS.to_owned()),
        ("make a repository", "POST", core_api::admin_repos("alice")),
        ("mint a token", "POST", core_api::tokens("alice")),
        (
            "add a collaborator",
            "PUT",
            core_api::collaborator(LAB, "mallory"),
        ),
        ("open an Issue", "POST", core_api::issues(LAB)),
        ("move an Issue", "POST", core_api::move_issue(issue.id)),
        (
            "register an OAuth application",
            "POST",
            oauth::APPLICATIONS.to_owned(),
        ),
    ];
    let mut table = Table::new("malformed JSON", "every JSON route");
    ctx.step("every route gets every malformed body");
    for (route, method, path) in &routes {
        // No body at all may mean the default permission (as in Forgejo).
        let bodies = (BROKEN.iter())
            .filter(|(_, b)| !(b.is_empty() && *method == "PUT"))
            .map(|(w, b)| (w.to_string(), b.to_string(), 400))
            .chain(
                WRONG_TYPE
                    .iter()
                    .map(|(w, b)| (w.to_string(), b.to_string(), 422)),
            )
            .chain(
                positional(route, &proposal).map(|b| ("the members in an array".into(), b, 422)),
            );
        for (what, body, status) in bodies {
            let (method, body) = (*method, body.as_str());
            let answer = if route.starts_with("confirm") || route.starts_with("submit") {
                native.call_raw(method, path, body).await?
            } else {
                ctx.setup().call_raw(method, path, body).await?
            };
            let ok = answer.status == status && answer.error().is_ok();
            table.check(&format!("{route} × {what}"), ok, answer.status.to_string());
        }
    }
    let cases = table.finish(ctx)?;

    ctx.step("nothing was written");
    watch
        .expect_unchanged(ctx, "after the malformed bodies", &before)
        .await?;
    ctx.expect_eq(
        "alice/lab holds the one Issue the site admin opened",
        flows::issue_count(ctx, LAB).await?,
        1,
    )?;
    ctx.observe("cases", &cases);
    Ok(())
}
