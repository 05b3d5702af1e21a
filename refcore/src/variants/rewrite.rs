//! The one layer every variant lives in: it sees each request before the
//! application and each response after it, and changes only what the active
//! variant allows a Core to choose.

use axum::body::{Body, to_bytes};
use axum::extract::{FromRequestParts, Request, State};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE, COOKIE, LINK, LOCATION, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::catalogue::{ACTIVE, Variant};
use super::{markup, pages};
use crate::state::AppState;
use crate::web::session::{COOKIE_NAME, Session};

/// The session cookie's name under `cookie-name`.
pub const VARIANT_COOKIE: &str = "v_sid";

/// The middleware: applies the active variant to one exchange.
pub async fn rewrite(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let Some(&variant) = ACTIVE.get() else {
        return next.run(request).await;
    };
    let path = request.uri().path().to_string();
    let is_api = path.starts_with("/api/");
    let (mut parts, body) = request.into_parts();
    if variant == Variant::CookieName {
        cookie_in(&mut parts.headers);
    }
    // The nav bar's logout form needs the signed-in session's `_csrf`.
    let mut logout_csrf = None;
    if variant == Variant::Markup
        && !is_api
        && let Ok(session) = Session::from_request_parts(&mut parts, &state).await
        && session.user.is_some()
    {
        logout_csrf = Some(session.csrf(&state));
    }
    let mut response = next.run(Request::from_parts(parts, body)).await;
    let status = response.status();
    let headers = response.headers_mut();
    match variant {
        Variant::CookieName => cookie_out(headers),
        Variant::LinkStyle => {
            if let Some(v) = headers.get(LINK).and_then(|v| v.to_str().ok())
                && let Ok(v) = HeaderValue::from_str(&restyle_link(v))
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
                Some(markup::reword_error_page(html, &|original| {
                    reworded(status, original, true)
                }))
            })
            .await;
        }
        Variant::Markup if !is_api => {
            return map_body(response, "text/html", |html| {
                Some(markup::restyle(
                    html,
                    &state.public_url,
                    logout_csrf.as_deref(),
                ))
            })
            .await;
        }
        Variant::InlineMarkup
        | Variant::FormOwner
        | Variant::ConsentTwoForms
        | Variant::FormControls
        | Variant::BaseRelative
            if !is_api =>
        {
            let page = match variant {
                Variant::InlineMarkup => pages::inline_markup,
                Variant::FormOwner => pages::form_owner,
                Variant::ConsentTwoForms => pages::consent_two_forms,
                Variant::BaseRelative => pages::base_relative,
                Variant::FormControls => pages::form_controls,
                _ => return response,
            };
            return map_body(response, "text/html", |html| Some(page(html))).await;
        }
        _ => {}
    }
    response
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

/// `link-style`: relations in the order last, first, prev, next; `next` and
/// `prev` as unquoted tokens with no space before `rel` (RFC 8288 allows
/// both). Parameters other than `rel` do not occur in refcore's `Link`.
pub fn restyle_link(value: &str) -> String {
    let links: Vec<(&str, &str)> = value
        .split(", ")
        .filter_map(|part| {
            let (url, params) = part.strip_prefix('<')?.split_once('>')?;
            let rel = params.trim_start_matches(';').trim().strip_prefix("rel=")?;
            Some((rel.trim_matches('"'), url))
        })
        .collect();
    ["last", "first", "prev", "next"]
        .iter()
        .filter_map(|want| links.iter().find(|(rel, _)| rel == want))
        .map(|(rel, url)| match *rel {
            "prev" | "next" => format!("<{url}>;rel={rel}"),
            _ => format!("<{url}>; rel=\"{rel}\""),
        })
        .collect::<Vec<_>>()
        .join(", ")
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

/// `cookie-name`, outbound: every cookie refcore sets gets the variant's name,
/// attributes (`HttpOnly`, `SameSite=Lax`, …) unchanged.
fn cookie_out(headers: &mut HeaderMap) {
    let renamed: Vec<HeaderValue> = headers
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| {
            let rest = v.strip_prefix(COOKIE_NAME)?.strip_prefix('=')?;
            HeaderValue::from_str(&format!("{VARIANT_COOKIE}={rest}")).ok()
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
    fn link_is_reordered_with_unquoted_tokens() {
        let link = "<http://x/l?page=2&limit=30>; rel=\"next\", <http://x/l?page=1&limit=30>; \
                    rel=\"first\", <http://x/l?page=2&limit=30>; rel=\"last\"";
        assert_eq!(
            restyle_link(link),
            "<http://x/l?page=2&limit=30>; rel=\"last\", <http://x/l?page=1&limit=30>; \
             rel=\"first\", <http://x/l?page=2&limit=30>;rel=next"
        );
    }

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
        cookie_out(&mut h);
        assert_eq!(h[SET_COOKIE], "v_sid=abc; Path=/; HttpOnly; SameSite=Lax");
    }
}
