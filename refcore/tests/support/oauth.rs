//! The client side of delegated consent (spec §9), as an adapter would do
//! it: register a public client, build the authorize URL with a PKCE S256
//! pair, consent in a browser, exchange the code.

use base64::Engine;
use reqwest::Method;
use scraper::{Html, Selector};
use serde_json::json;
use sha2::{Digest, Sha256};

use super::browser::Browser;
use super::client::{Auth, Resp};
use super::world::{World, unique};

/// A PKCE pair.
#[derive(Debug, Clone)]
pub struct Pkce {
    /// 64 characters of the unreserved set.
    pub verifier: String,
    /// `BASE64URL-NOPAD(SHA256(verifier))`.
    pub challenge: String,
}

impl Pkce {
    /// A fresh random pair.
    pub fn new() -> Self {
        let verifier = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(Sha256::digest(verifier.as_bytes()));
        Pkce {
            verifier,
            challenge,
        }
    }
}

/// A registered public client.
#[derive(Debug, Clone)]
pub struct App {
    /// Its name.
    pub name: String,
    /// Its `client_id`.
    pub client_id: String,
    /// Its first redirect URI.
    pub redirect_uri: String,
    /// Every redirect URI it registered.
    pub redirect_uris: Vec<String>,
}

/// Registers a public client with `redirect_uris` as the site admin.
pub async fn register(w: &World, redirect_uris: &[&str]) -> Result<App, String> {
    let name = format!("awg-mcp {}", unique());
    let resp = w
        .api
        .post(
            "/api/v1/user/applications/oauth2",
            &w.admin,
            &json!({"name": name, "redirect_uris": redirect_uris,
                    "confidential_client": false}),
        )
        .await?
        .expect(201, "register application")?;
    let body = resp.json();
    Ok(App {
        name,
        client_id: body["client_id"]
            .as_str()
            .ok_or("no client_id")?
            .to_string(),
        redirect_uri: redirect_uris[0].to_string(),
        redirect_uris: redirect_uris.iter().map(|s| s.to_string()).collect(),
    })
}

/// A callback URI nobody listens on (the tests read `Location` only).
pub fn callback() -> String {
    format!("http://127.0.0.1:9/mcp/oauth/callback/{}", unique())
}

/// `/login/oauth/authorize?…` from `pairs` (`None` values are left out).
pub fn authorize_path(pairs: &[(&str, Option<&str>)]) -> String {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in pairs {
        if let Some(value) = value {
            query.append_pair(name, value);
        }
    }
    format!("/login/oauth/authorize?{}", query.finish())
}

/// The authorize path of a well-formed request by `app`.
pub fn request(app: &App, pkce: &Pkce, state: &str, scope: Option<&str>) -> String {
    authorize_path(&[
        ("response_type", Some("code")),
        ("client_id", Some(&app.client_id)),
        ("redirect_uri", Some(&app.redirect_uri)),
        ("state", Some(state)),
        ("code_challenge", Some(&pkce.challenge)),
        ("code_challenge_method", Some("S256")),
        ("scope", scope),
    ])
}

/// The consent form of a page: every named input of the form whose action
/// ends in `/login/oauth/grant` and its method, or `None` without one.
pub fn consent_fields(html: &str) -> Option<(String, Vec<(String, String)>)> {
    let doc = Html::parse_document(html);
    let form_sel = Selector::parse("form[action$=\"/login/oauth/grant\"]").ok()?;
    let input_sel = Selector::parse("input[name]").ok()?;
    let form = doc.select(&form_sel).next()?;
    let method = form
        .value()
        .attr("method")
        .unwrap_or("")
        .to_ascii_lowercase();
    let fields = form
        .select(&input_sel)
        .map(|i| {
            (
                i.value().attr("name").unwrap_or("").to_string(),
                i.value().attr("value").unwrap_or("").to_string(),
            )
        })
        .collect();
    Some((method, fields))
}

/// Whether the consent form has the two answers, `granted=true|false`.
pub fn has_both_answers(html: &str) -> bool {
    let doc = Html::parse_document(html);
    ["true", "false"].iter().all(|v| {
        Selector::parse(&format!(
            "form[action$=\"/login/oauth/grant\"] button[type=submit][name=granted][value={v}]"
        ))
        .is_ok_and(|sel| doc.select(&sel).next().is_some())
    })
}

/// Opens the authorize page in a signed-in `browser` (200) and answers the
/// consent form with `granted`; returns the grant POST's answer.
pub async fn consent(browser: &Browser, path: &str, granted: &str) -> Result<Resp, String> {
    let page = browser.get(path).await?.expect(200, "consent page")?;
    let (_, fields) = consent_fields(&page.text).ok_or("the page has no consent form")?;
    let mut form: Vec<(&str, &str)> = fields
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    form.push(("granted", granted));
    browser.post_form("/login/oauth/grant", &form).await
}

/// The query parameters of a `Location`.
pub fn location_params(location: &str) -> Vec<(String, String)> {
    url::Url::parse(location)
        .map(|u| u.query_pairs().into_owned().collect())
        .unwrap_or_default()
}

/// The value of `name` in a `Location`'s query.
pub fn location_param(location: &str, name: &str) -> Option<String> {
    location_params(location)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
}

/// Consents with `granted=true` and returns the code from the redirect.
pub async fn code_for(browser: &Browser, path: &str) -> Result<String, String> {
    let resp = consent(browser, path, "true").await?.expect(303, "grant")?;
    let location = resp.header("location").ok_or("grant: no Location")?;
    location_param(&location, "code").ok_or_else(|| "grant: no code in Location".to_string())
}

/// Posts the token request `fields` as a form, no credential.
pub async fn token_request(w: &World, fields: &[(&str, &str)]) -> Result<Resp, String> {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(fields)
        .finish();
    w.api
        .raw(
            Method::POST,
            "/login/oauth/access_token",
            &Auth::None,
            Some("application/x-www-form-urlencoded"),
            body.into_bytes(),
        )
        .await
}

/// Exchanges `code` for `app` with `verifier` at its redirect URI.
pub async fn exchange(w: &World, app: &App, code: &str, verifier: &str) -> Result<Resp, String> {
    token_request(
        w,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", &app.redirect_uri),
            ("client_id", &app.client_id),
            ("code_verifier", verifier),
        ],
    )
    .await
}

/// Registers a client and runs the whole flow as the world's owner with
/// `scope`; returns the app, the pair and the token answer.
pub async fn token_for(w: &World, scope: Option<&str>) -> Result<(App, Resp), String> {
    let app = register(w, &[&callback()]).await?;
    let pkce = Pkce::new();
    let code = code_for(&w.browser, &request(&app, &pkce, "st", scope)).await?;
    let resp = exchange(w, &app, &code, &pkce.verifier).await?;
    Ok((app, resp))
}

/// Whether a token answer is a 400 with this RFC 6749 `error`.
pub fn is_error(resp: &Resp, error: &str) -> bool {
    resp.status == 400 && resp.json()["error"] == error
}
