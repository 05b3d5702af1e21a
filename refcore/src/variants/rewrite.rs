//! The layer every variant lives in: it sees each request before the
//! application and each response after it, and changes only what its variant
//! allows a Core to choose. One such layer per active variant.

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{FromRequestParts, Request, State};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE, COOKIE, LINK, LOCATION, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::catalogue::Variant;
use super::{flow, link, markup, pages};
use crate::state::AppState;
use crate::web::session::{COOKIE_NAME, Session};

/// The session cookie's name under `cookie-name`.
pub const VARIANT_COOKIE: &str = "v_sid";

/// What the layer holds: refcore's state, its variant, and refcore inside
/// the layer, for the variants that answer with another page than the one
/// asked for.
#[derive(Clone)]
pub struct Layer {
    /// The application's state (sessions, public URL).
    pub state: AppState,
    /// The application with the layers inside this one (none, alone).
    pub app: Router,
    /// The variant this layer applies.
    pub variant: Variant,
}

/// `extra-cookies`: a cookie that is not the session's, on every page,
/// neither `HttpOnly` nor `SameSite` (spec §4 speaks of the session cookie
/// only).
const LANG_COOKIE: &str = "lang=en-GB; Path=/; Max-Age=31536000";

/// `extra-cookies`: a cookie the login answer clears, as Gitea clears its
/// `redirect_to`.
const CLEARED_COOKIE: &str = "redirect_to=; Path=/; Max-Age=0";

/// The middleware: applies the layer's variant to one exchange.
pub async fn rewrite(State(layer): State<Layer>, request: Request, next: Next) -> Response {
    let variant = layer.variant;
    let state = &layer.state;
    let path = request.uri().path().to_string();
    let method = request.method().clone();
    let is_api = path.starts_with("/api/");
    let (mut parts, body) = request.into_parts();
    if variant == Variant::CookieName {
        cookie_in(&mut parts.headers);
    }
    let cookie = parts.headers.get(COOKIE).cloned();
    // The nav bar's logout form, and the logout confirmation page, need the
    // signed-in session's `_csrf`; the dashboard needs to know who is in.
    let mut session_csrf = None;
    let mut login = None;
    if matches!(
        variant,
        Variant::Markup | Variant::LogoutPage | Variant::HomeDashboard | Variant::LoginRedirect
    ) && !is_api
        && let Ok(session) = Session::from_request_parts(&mut parts, state).await
        && let Some(user) = &session.user
    {
        session_csrf = Some(session.csrf(state));
        login = Some(user.login.clone());
    }
    match variant {
        Variant::LogoutPage if method == Method::GET && path == "/user/logout" => {
            return flow::logout_confirmation(session_csrf.as_deref(), login.as_deref());
        }
        Variant::HomeDashboard if method == Method::GET && path == "/" && login.is_some() => {
            return (StatusCode::SEE_OTHER, [(LOCATION, flow::DASHBOARD)]).into_response();
        }
        Variant::HomeDashboard if method == Method::GET && path == flow::DASHBOARD => {
            return flow::dashboard(&layer.app, cookie, login.is_some()).await;
        }
        Variant::LoginRedirect
            if method == Method::GET && path == "/user/login" && login.is_some() =>
        {
            let to = flow::redirect_to(parts.uri.query().unwrap_or_default());
            return (StatusCode::SEE_OTHER, [(LOCATION, to)]).into_response();
        }
        Variant::NoExtensions if flow::is_extension_route(&method, &path) => {
            let body = json!({"message": "not found", "url": path});
            return (StatusCode::NOT_FOUND, axum::Json(body)).into_response();
        }
        _ => {}
    }
    let self_url = format!(
        "{}{}",
        state.public_url,
        parts.uri.path_and_query().map_or("", |p| p.as_str())
    );
    let mut response = next.run(Request::from_parts(parts, body)).await;
    let status = response.status();
    let open_post = flow::is_open_form_post(&method, &path);
    match variant {
        Variant::RedirectFound if open_post || flow::is_consent_decision(&method, &path) => {
            flow::redirect_302(&path, &mut response)
        }
        Variant::List422
            if path == "/api/v1/agent-work-grants" && status == StatusCode::BAD_REQUEST =>
        {
            *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
        }
        Variant::Post200 if open_post => {
            return flow::in_place(&layer.app, cookie, response).await;
        }
        Variant::SigninInPlace if method == Method::GET && !is_api && flow::to_login(&response) => {
            return flow::in_place(&layer.app, cookie, response).await;
        }
        Variant::LoginOk
            if method == Method::POST
                && path == "/user/login"
                && status == StatusCode::UNAUTHORIZED =>
        {
            *response.status_mut() = StatusCode::OK;
        }
        Variant::ExtraCookies if !is_api => {
            let headers = response.headers_mut();
            headers.append(SET_COOKIE, HeaderValue::from_static(LANG_COOKIE));
            if method == Method::POST && path == "/user/login" {
                headers.append(SET_COOKIE, HeaderValue::from_static(CLEARED_COOKIE));
            }
        }
        Variant::LinkExtra => {
            if let Some(v) = response.headers().get(LINK).and_then(|v| v.to_str().ok()) {
                let lines = link::extra(v, &self_url);
                let headers = response.headers_mut();
                headers.remove(LINK);
                for line in lines {
                    if let Ok(v) = HeaderValue::from_str(&line) {
                        headers.append(LINK, v);
                    }
                }
                let page = response_page(&self_url);
                headers.insert("x-page", HeaderValue::from(page));
                headers.insert("x-per-page-max", HeaderValue::from_static("50"));
            }
        }
        _ => {}
    }
    let headers = response.headers_mut();
    match variant {
        Variant::CookieName => cookie_out(headers),
        Variant::LinkForgejo => {
            let value = headers.get(LINK).and_then(|v| v.to_str().ok());
            match value.map(link::forgejo) {
                Some(Some(v)) => {
                    if let Ok(v) = HeaderValue::from_str(&v) {
                        headers.insert(LINK, v);
                    }
                }
                Some(None) => {
                    headers.remove(LINK);
                }
                None => {}
            }
        }
        Variant::NoExtensions if path == "/api/v1/version" => {
            return map_body(response, "application/json", |text| {
                let mut value: Value = serde_json::from_str(text).ok()?;
                value.as_object_mut()?.remove("extensions");
                serde_json::to_string(&value).ok()
            })
            .await;
        }
        Variant::LinkStyle => {
            if let Some(v) = headers.get(LINK).and_then(|v| v.to_str().ok())
                && let Ok(v) = HeaderValue::from_str(&link::restyle(v))
            {
                headers.insert(LINK, v);
            }
        }
        Variant::AbsoluteRedirects => {
            if status.is_redirection()
                && let Some(loc) = headers.get(LOCATION).and_then(|v| v.to_str().ok())
                && loc.starts_with('/')
                && !loc.starts_with("//")
                && let Ok(v) = HeaderValue::from_str(&format!("{}{loc}", state.public_url))
            {
                headers.insert(LOCATION, v);
            }
        }
        Variant::ExtraMembers if path != "/api/v1/openapi.json" => {
            return map_body(response, "application/json", |text| {
                let mut value: Value = serde_json::from_str(text).ok()?;
                add_members(&mut value);
                serde_json::to_string(&value).ok()
            })
            .await;
        }
        Variant::TimestampsOffset => {
            return map_body(response, "application/json", |text| {
                let mut value: Value = serde_json::from_str(text).ok()?;
                offset_timestamps(&mut value);
                serde_json::to_string(&value).ok()
            })
            .await;
        }
        Variant::PrettyJson => {
            return map_body(response, "application/json", |text| {
                let value: Value = serde_json::from_str(text).ok()?;
                let mut out = String::new();
                pretty_reversed(&value, 0, &mut out);
                Some(out)
            })
            .await;
        }
        Variant::RewordedErrors if status.is_client_error() || status.is_server_error() => {
            let json = map_body(response, "application/json", |text| {
                let mut value: Value = serde_json::from_str(text).ok()?;
                let original = value.get("message")?.as_str()?.to_string();
                value["message"] = json!(reworded(status, &original, false));
                serde_json::to_string(&value).ok()
            })
            .await;
            return map_body(json, "text/html", |html| {
                page(variant, status, html, &state.public_url, None)
            })
            .await;
        }
        _ if !is_api && EDITS_PAGES.contains(&variant) => {
            return map_body(response, "text/html", |html| {
                page(
                    variant,
                    status,
                    html,
                    &state.public_url,
                    session_csrf.as_deref(),
                )
            })
            .await;
        }
        _ => {}
    }
    response
}

/// The variants that edit pages (the HTML of answers), each in [`page`].
pub(super) const EDITS_PAGES: [Variant; 10] = [
    Variant::Markup,
    Variant::RewordedErrors,
    Variant::LogoutPage,
    Variant::StaleWording,
    Variant::InlineMarkup,
    Variant::FormOwner,
    Variant::ConsentTwoForms,
    Variant::FormControls,
    Variant::BaseRelative,
    Variant::TemplateForms,
];

/// What `variant` makes of a page's `html` (an answer with `status`;
/// `csrf` the signed-in session's `_csrf`, for markup's logout form), or
/// `None` when it leaves that page as it is. Every variant that edits pages
/// does it here and nowhere else, so a test composes them exactly as the
/// layers do.
pub fn page(
    variant: Variant,
    status: StatusCode,
    html: &str,
    public_url: &str,
    csrf: Option<&str>,
) -> Option<String> {
    let error = status.is_client_error() || status.is_server_error();
    match variant {
        Variant::Markup => Some(markup::restyle(html, public_url, csrf)),
        Variant::RewordedErrors if error => Some(markup::reword_error_page(html, &|original| {
            reworded(status, original, true)
        })),
        Variant::StaleWording if status == StatusCode::CONFLICT => {
            Some(markup::reword_error_page(html, &|_| {
                flow::STALE_WORDS.to_string()
            }))
        }
        Variant::LogoutPage => flow::logout_link(html),
        Variant::InlineMarkup => Some(pages::inline_markup(html)),
        Variant::FormOwner => Some(pages::form_owner(html)),
        Variant::ConsentTwoForms => Some(pages::consent_two_forms(html)),
        Variant::FormControls => Some(pages::form_controls(html)),
        Variant::BaseRelative => Some(pages::base_relative(html)),
        Variant::TemplateForms => Some(pages::template_forms(html)),
        _ => None,
    }
}

/// The `page` a list request asked for (1 when it names none).
fn response_page(url: &str) -> i64 {
    url.split_once('?')
        .into_iter()
        .flat_map(|(_, q)| q.split('&'))
        .find_map(|pair| pair.strip_prefix("page=")?.parse().ok())
        .unwrap_or(1)
}

/// Replaces the body of a `content_type` response by `f(body)`; leaves any
/// other response, or one `f` declines, as it was.
async fn map_body(
    response: Response,
    content_type: &str,
    f: impl FnOnce(&str) -> Option<String>,
) -> Response {
    let matches = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with(content_type));
    if !matches {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = to_bytes(body, usize::MAX).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let text = String::from_utf8_lossy(&bytes);
    let Some(new) = f(&text) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    parts.headers.remove(CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(new))
}

/// `extra-members`: two members the contract does not know, in every object
/// (never replacing one that is there).
pub fn add_members(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for member in map.values_mut() {
                add_members(member);
            }
            map.entry("x_variant").or_insert(json!(true));
            map.entry("x_variant_extra")
                .or_insert(json!({"nested": 1, "list": [1, "two"]}));
        }
        Value::Array(items) => items.iter_mut().for_each(add_members),
        _ => {}
    }
}

/// `timestamps-offset`: every `*_at` member that is an RFC 3339 timestamp,
/// the same instant written at UTC+05:30 with six fractional digits, as
/// another Core may write it (spec §2: RFC 3339, no offset or precision
/// named).
pub fn offset_timestamps(value: &mut Value) {
    use time::format_description::well_known::Rfc3339;
    const WRITTEN: &[time::format_description::FormatItem<'_>] = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6][offset_hour sign:mandatory]:[offset_minute]"
    );
    let offset = time::macros::offset!(+5:30);
    match value {
        Value::Object(map) => {
            for (name, member) in map.iter_mut() {
                let at = (member.as_str())
                    .filter(|_| name.ends_with("_at"))
                    .and_then(|s| time::OffsetDateTime::parse(s, &Rfc3339).ok());
                match at.and_then(|t| t.to_offset(offset).format(WRITTEN).ok()) {
                    Some(written) => *member = Value::String(written),
                    None => offset_timestamps(member),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(offset_timestamps),
        _ => {}
    }
}

/// `pretty-json`: indented, members in reverse byte order of their names.
pub fn pretty_reversed(value: &Value, depth: usize, out: &mut String) {
    let indent = |out: &mut String, d: usize| out.push_str(&"  ".repeat(d));
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push_str("{\n");
            for (i, (name, member)) in map.iter().rev().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(out, depth + 1);
                out.push_str(&Value::String(name.clone()).to_string());
                out.push_str(" : ");
                pretty_reversed(member, depth + 1, out);
            }
            out.push('\n');
            indent(out, depth);
            out.push('}');
        }
        Value::Array(items) if !items.is_empty() => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(out, depth + 1);
                pretty_reversed(item, depth + 1, out);
            }
            out.push('\n');
            indent(out, depth);
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// `reworded-errors`: other words for every error, by status. A 409 page
/// (the browser's only 409s are grant conflicts) still says the grant
/// changed; a 422 keeps the rule it broke, which the contract wants named.
pub fn reworded(status: StatusCode, original: &str, page: bool) -> String {
    match status.as_u16() {
        400 => "Sorry: that request could not be understood as sent.".into(),
        401 => "Sorry: we could not tell who you are.".into(),
        403 => "Sorry: you are not permitted to do this.".into(),
        404 => "Sorry: there is nothing to see at this address.".into(),
        405 => "Sorry: this address does not take that method.".into(),
        409 if page => "Sorry: this grant was changed by someone else, or its state no \
                        longer allows that. Nothing was saved; reload and decide again."
            .into(),
        409 => "Sorry: that clashes with what is already recorded.".into(),
        413 => "Sorry: that is more than we accept in one request.".into(),
        422 => format!("Sorry: one of the values is not acceptable (rule: {original})."),
        _ => "Sorry: something went wrong on our side.".into(),
    }
}

/// `cookie-name`, inbound: the variant's cookie is read as refcore's own; a
/// cookie with refcore's usual name is ignored, as another Core would.
fn cookie_in(headers: &mut HeaderMap) {
    let pairs: Vec<String> = headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| {
            let pair = pair.trim();
            let (name, value) = pair.split_once('=')?;
            match name {
                COOKIE_NAME => None,
                VARIANT_COOKIE => Some(format!("{COOKIE_NAME}={value}")),
                _ => Some(pair.to_string()),
            }
        })
        .collect();
    headers.remove(COOKIE);
    if let Ok(v) = HeaderValue::from_str(&pairs.join("; "))
        && !pairs.is_empty()
    {
        headers.insert(COOKIE, v);
    }
}

/// `cookie-name`, outbound: the session cookie gets the variant's name,
/// attributes (`HttpOnly`, `SameSite=Lax`, …) unchanged; other cookies (other
/// variants' own) are kept as they are.
fn cookie_out(headers: &mut HeaderMap) {
    let renamed: Vec<HeaderValue> = headers
        .get_all(SET_COOKIE)
        .iter()
        .map(|v| {
            let rest =
                (v.to_str().ok()).and_then(|s| s.strip_prefix(COOKIE_NAME)?.strip_prefix('='));
            rest.and_then(|rest| HeaderValue::from_str(&format!("{VARIANT_COOKIE}={rest}")).ok())
                .unwrap_or_else(|| v.clone())
        })
        .collect();
    if renamed.is_empty() {
        return;
    }
    headers.remove(SET_COOKIE);
    for v in renamed {
        headers.append(SET_COOKIE, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_members_reach_every_object_and_change_none() {
        let mut v = json!([{"id": 1, "agent": {"id": 9}, "approved_by": null}]);
        add_members(&mut v);
        assert_eq!(v[0]["id"], 1);
        assert_eq!(v[0]["x_variant"], true);
        assert_eq!(v[0]["agent"]["x_variant"], true);
        assert_eq!(v[0]["agent"]["id"], 9);
        assert_eq!(v[0]["approved_by"], Value::Null);
    }

    #[test]
    fn pretty_json_keeps_the_values() {
        let v = json!({"a": 1, "b": [true, {"c": "é\n"}], "d": {}, "e": []});
        let mut out = String::new();
        pretty_reversed(&v, 0, &mut out);
        assert!(
            out.find("\"e\"").unwrap() < out.find("\"a\"").unwrap(),
            "{out}"
        );
        assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), v);
    }

    #[test]
    fn cookies_are_renamed_both_ways() {
        let mut h = HeaderMap::new();
        h.insert(
            COOKIE,
            HeaderValue::from_static("a=1; v_sid=abc; refcore_session=old"),
        );
        cookie_in(&mut h);
        assert_eq!(h[COOKIE], "a=1; refcore_session=abc");
        let mut h = HeaderMap::new();
        h.insert(
            SET_COOKIE,
            HeaderValue::from_static("refcore_session=abc; Path=/; HttpOnly; SameSite=Lax"),
        );
        h.append(SET_COOKIE, HeaderValue::from_static(LANG_COOKIE));
        cookie_out(&mut h);
        let set: Vec<_> = h.get_all(SET_COOKIE).iter().collect();
        assert_eq!(
            set,
            ["v_sid=abc; Path=/; HttpOnly; SameSite=Lax", LANG_COOKIE]
        );
    }

    #[test]
    fn timestamps_are_the_same_instant_at_another_offset() {
        let mut v = json!({"created_at": "2026-12-05T19:52:00Z", "revoked_at": null,
            "issue": {"created_at": "2026-12-05T23:59:59Z"}, "task": "2026-12-05T19:52:00Z"});
        offset_timestamps(&mut v);
        assert_eq!(v["created_at"], "2026-12-06T01:22:00.000000+05:30");
        assert_eq!(v["issue"]["created_at"], "2026-12-06T05:29:59.000000+05:30");
        assert_eq!(v["revoked_at"], Value::Null);
        assert_eq!(v["task"], "2026-12-05T19:52:00Z", "only `*_at` members");
    }
}
