//! Exact replay (spec §10): replays compared with the stored input, decoded;
//! the Issue edit and token deletion of the setup surface, and what they do
//! to a replay.

use std::sync::Arc;

use reqwest::Method;
use serde_json::{Value, json};

use crate::check;
use crate::support::TestResult;
use crate::support::client::{Auth, Resp};
use crate::support::world::{Env, World, key, submission, unique};

const TITLE: &str = "Exact: «café» \"q\" \\ 🚀";
const BODY: &str = "é\r\n\t🚀 \\u00e9 literal\n";

/// Every character of a string as a `\u` escape.
fn escaped(text: &str) -> String {
    let units: String = text.encode_utf16().map(|u| format!("\\u{u:04x}")).collect();
    format!("\"{units}\"")
}

/// `members` (name, JSON text) as an object, `sep` around every token.
fn object(members: &[(&str, String)], sep: &str) -> Vec<u8> {
    let inner: Vec<String> = members
        .iter()
        .map(|(n, v)| format!("{sep}\"{n}\"{sep}:{sep}{v}{sep}"))
        .collect();
    format!("{{{}}}", inner.join(",")).into_bytes()
}

async fn post_raw(w: &World, path: &str, auth: &Auth, body: Vec<u8>) -> Result<Resp, String> {
    w.api
        .raw(Method::POST, path, auth, Some("application/json"), body)
        .await
}

fn issue_path(w: &World, index: i64) -> String {
    format!("/api/v1/repos/{}/{}/issues/{index}", w.owner, w.repo)
}

async fn edit(w: &World, index: i64, auth: &Auth, body: &Value) -> Result<Resp, String> {
    w.api
        .call(Method::PATCH, &issue_path(w, index), auth, Some(body))
        .await
}

async fn issue(w: &World, index: i64) -> Result<Value, String> {
    Ok(w.api
        .get(&issue_path(w, index), &w.admin)
        .await?
        .expect(200, "read issue")?
        .json())
}

/// Member order, whitespace and `\u` escapes do not matter; another Unicode
/// normal form is 409; `1.0` and `"1"` for `proposal_version` are 422.
pub async fn decoded_json(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let (id, digest) = w.active_grant().await?;
    let path = format!("{}/issues", w.grant_path(id));
    let k = key();
    let first = w
        .api
        .post(&path, &w.bot_auth, &submission(&digest, &k, TITLE, BODY))
        .await?
        .expect(201, "first")?
        .json();
    let plain = |s: &str| Value::String(s.into()).to_string();
    let members = |spell: &dyn Fn(&str) -> String| {
        vec![
            ("proposal_schema", spell("agent_work_grant.v1")),
            ("proposal_version", "1".to_string()),
            ("proposal_digest", spell(&digest)),
            ("request_key", spell(&k)),
            ("title", spell(TITLE)),
            ("body", spell(BODY)),
        ]
    };
    let mut reversed = members(&plain);
    reversed.reverse();
    let mut rotated = members(&escaped);
    rotated.rotate_left(3);
    for (what, raw) in [
        ("reversed", object(&reversed, "")),
        ("whitespace", object(&members(&plain), " \t\r\n")),
        ("escaped", object(&members(&escaped), "")),
        ("all at once", object(&rotated, "\n ")),
    ] {
        let again = post_raw(&w, &path, &w.bot_auth, raw)
            .await?
            .expect(200, what)?
            .json();
        check!(
            again["submission"] == first["submission"],
            "{what}: another receipt"
        );
    }
    let nfd = TITLE.replace('é', "e\u{301}");
    w.api
        .post(&path, &w.bot_auth, &submission(&digest, &k, &nfd, BODY))
        .await?
        .expect(409, "another normal form")?;
    let float = String::from_utf8(object(&members(&plain), ""))
        .map_err(|e| e.to_string())?
        .replace("\"proposal_version\":1,", "\"proposal_version\":1.0,");
    check!(float.contains(":1.0,"), "no float in {float}");
    post_raw(&w, &path, &w.bot_auth, float.into_bytes())
        .await?
        .expect(422, "proposal_version 1.0")?;
    let mut text = submission(&digest, &k, TITLE, BODY);
    text["proposal_version"] = json!("1");
    w.api
        .post(&path, &w.bot_auth, &text)
        .await?
        .expect(422, "proposal_version \"1\"")?;
    check!(w.issue_count().await? == 1, "a replay wrote an Issue");
    Ok(())
}

/// `PATCH …/issues/{index}`: the poster or a repository admin edits title
/// and/or body (201, as Forgejo); others are refused; text rules hold. A
/// replay afterwards compares with the stored input and leaves the edit.
pub async fn issue_edit(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let (id, digest) = w.active_grant().await?;
    let path = format!("{}/issues", w.grant_path(id));
    let k = key();
    let made = w
        .api
        .post(&path, &w.bot_auth, &submission(&digest, &k, TITLE, BODY))
        .await?
        .expect(201, "submit")?
        .json();
    let index = made["submission"]["issue"]["index"]
        .as_i64()
        .ok_or("index")?;
    let owner = Auth::Basic(w.owner.clone(), w.owner_password.clone());
    let edited = edit(&w, index, &owner, &json!({"title": "Edited"}))
        .await?
        .expect(201, "owner edits the title")?
        .json();
    check!(
        edited["title"] == "Edited" && edited["body"] == BODY,
        "title-only edit {edited}"
    );
    check!(
        edited["agent_work_grant"]["request_key"] == k.as_str(),
        "the edit lost the binding {edited}"
    );
    edit(&w, index, &owner, &json!({"body": "Edited body"}))
        .await?
        .expect(201, "owner edits the body")?;
    // Others: a write collaborator who is not the poster, a stranger, a token
    // without write:issue; invalid text.
    let n = unique();
    let (writer, stranger) = (format!("w-{n}"), format!("s-{n}"));
    w.user(&writer, "individual", "pw-writer-1").await?;
    w.user(&stranger, "individual", "pw-stranger-1").await?;
    w.collaborator(&writer, "write").await?;
    let change = json!({"title": "Hijacked"});
    edit(
        &w,
        index,
        &Auth::Basic(writer, "pw-writer-1".into()),
        &change,
    )
    .await?
    .expect(403, "writer who is not the poster")?;
    edit(
        &w,
        index,
        &Auth::Basic(stranger, "pw-stranger-1".into()),
        &change,
    )
    .await?
    .expect(404, "stranger")?;
    let reader = Auth::Token(w.token(&w.owner, &["read:issue"]).await?);
    edit(&w, index, &reader, &change)
        .await?
        .expect(403, "no write:issue")?;
    for (what, body) in [
        ("blank title", json!({"title": " "})),
        ("long title", json!({"title": "x".repeat(256)})),
        ("NUL", json!({"body": "a\u{0}b"})),
        ("unknown member", json!({"state": "closed"})),
        ("wrong type", json!({"title": 1})),
    ] {
        edit(&w, index, &owner, &body).await?.expect(422, what)?;
    }
    edit(&w, index + 1000, &owner, &change)
        .await?
        .expect(404, "missing issue")?;
    edit(&w, index, &Auth::None, &change)
        .await?
        .expect(401, "anonymous")?;
    // The poster edits its own ordinary Issue.
    let own = w
        .api
        .post(
            &format!("/api/v1/repos/{}/{}/issues", w.owner, w.repo),
            &w.bot_auth,
            &json!({"title": "Ordinary"}),
        )
        .await?
        .expect(201, "ordinary issue")?
        .json();
    let own_index = own["index"].as_i64().ok_or("own index")?;
    edit(&w, own_index, &w.bot_auth, &json!({"title": "Mine"}))
        .await?
        .expect(201, "poster edits its own issue")?;
    // Replay after the edit: the stored input decides; the edit stays.
    let before = issue(&w, index).await?;
    let replay = w
        .api
        .post(&path, &w.bot_auth, &submission(&digest, &k, TITLE, BODY))
        .await?
        .expect(200, "identical replay after the edit")?
        .json();
    check!(
        replay["submission"] == made["submission"],
        "replay after edit answered another receipt"
    );
    let after = issue(&w, index).await?;
    check!(
        after["title"] == "Edited" && after["body"] == "Edited body" && after == before,
        "the replay rewrote the edit: {after}"
    );
    w.api
        .post(
            &path,
            &w.bot_auth,
            &submission(&digest, &k, "Edited", "Edited body"),
        )
        .await?
        .expect(409, "the edited text under the key")?;
    check!(
        issue(&w, index).await? == before,
        "the 409 changed the Issue"
    );
    check!(w.issue_count().await? == 2, "Issues written");
    Ok(())
}

/// `DELETE /users/{login}/tokens/{id}`: the user with its password or a
/// site admin; another user's token id is 404; a deleted token's replay is
/// 401, a new token's 200.
pub async fn token_delete(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let (id, digest) = w.active_grant().await?;
    let path = format!("{}/issues", w.grant_path(id));
    let mint = |name: String| {
        let w = &w;
        async move {
            let minted = w
                .api
                .post(
                    &format!("/api/v1/users/{}/tokens", w.bot),
                    &w.admin,
                    &json!({"name": name, "scopes": ["read:repository", "write:issue"]}),
                )
                .await?
                .expect(201, "mint")?
                .json();
            let id = minted["id"].as_i64().ok_or("token id")?;
            let secret = minted["sha1"].as_str().ok_or("sha1")?.to_string();
            Ok::<_, String>((id, Auth::Token(secret)))
        }
    };
    let (token_id, token) = mint(format!("t-{}", unique())).await?;
    let k = key();
    let body = submission(&digest, &k, TITLE, BODY);
    let made = w
        .api
        .post(&path, &token, &body)
        .await?
        .expect(201, "submit")?
        .json();
    let delete_path = format!("/api/v1/users/{}/tokens/{token_id}", w.bot);
    let owner = Auth::Basic(w.owner.clone(), w.owner_password.clone());
    w.api
        .call(Method::DELETE, &delete_path, &owner, None)
        .await?
        .expect(403, "another user deletes the bot's token")?;
    w.api
        .call(Method::DELETE, &delete_path, &token, None)
        .await?
        .expect(403, "a token deletes itself (password needed)")?;
    w.api
        .call(
            Method::DELETE,
            &format!("/api/v1/users/{}/tokens/{token_id}", w.owner),
            &owner,
            None,
        )
        .await?
        .expect(404, "the id under another user")?;
    w.api
        .call(
            Method::DELETE,
            &delete_path,
            &Auth::Basic(w.bot.clone(), "bot-password-1".into()),
            None,
        )
        .await?
        .expect(204, "the bot deletes its token with its password")?;
    w.api
        .call(Method::DELETE, &delete_path, &w.admin, None)
        .await?
        .expect(404, "deleted twice")?;
    w.api
        .post(&path, &token, &body)
        .await?
        .expect(401, "replay with the deleted token")?;
    let (_, renewed) = mint(format!("t-{}", unique())).await?;
    let again = w
        .api
        .post(&path, &renewed, &body)
        .await?
        .expect(200, "replay with a new token")?
        .json();
    check!(
        again["submission"] == made["submission"],
        "a new token's replay answered another receipt"
    );
    check!(w.issue_count().await? == 1, "Issues written");
    Ok(())
}
