//! The faults that only change what a surface sends (a header, a status,
//! markup): one response-rewriting layer around the unchanged application,
//! like the honest variants' (`crate::variants`), so no handler knows about
//! them. Each rewrite names the fault it serves. The layer also puts
//! `replay-served-from-cache`'s response cache in front of submit.

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::http::header::{CACHE_CONTROL, CONTENT_LENGTH, LINK, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};

use super::{Fault, active, replay_cache};
use crate::api::pagination;
use crate::extract::Params;
use crate::state::AppState;
use crate::web::session::COOKIE_NAME;

/// The faults this layer applies.
const FAULTS: [Fault; 16] = [
    Fault::ReplayServedFromCache,
    Fault::SessionCookieNotHttpOnly,
    Fault::SessionCookieNoSameSite,
    Fault::TokenAnswerCacheable,
    Fault::ReplayAnswers201,
    Fault::TotalCountWrong,
    Fault::LinkMissing,
    Fault::LinkWrong,
    Fault::LinkLastOvercounts,
    Fault::LinkLastPastFullPage,
    Fault::LinkForgetsState,
    Fault::ClampWithoutContinuation,
    Fault::DecisionButtonOutsideForm,
    Fault::DecisionButtonCovered,
    Fault::StateWordInTitleOnly,
    Fault::PageShowsActiveAsAwaiting,
];

/// `router` with the layer when one of its faults is active.
pub(crate) fn wrap(router: Router<AppState>) -> Router<AppState> {
    if FAULTS.into_iter().any(active) {
        return router.layer(middleware::from_fn(bend));
    }
    router
}

/// What the request was, as far as a rewrite needs to know.
enum Route {
    /// `GET /api/v1/agent-work-grants`, with its query.
    List(Option<String>),
    /// `POST …/agent-work-grants/{id}/issues` (submit).
    Submit,
    /// `POST /login/oauth/access_token`.
    Token,
    /// `GET /{owner}/{repo}/agent-work-grants/{id}`.
    GrantPage,
    Other,
}

fn route(request: &Request) -> Route {
    let uri = request.uri();
    let segments: Vec<&str> = uri.path().split('/').skip(1).collect();
    match (request.method(), segments.as_slice()) {
        (&Method::GET, ["api", "v1", "agent-work-grants"]) => {
            Route::List(uri.query().map(str::to_owned))
        }
        (&Method::POST, ["api", "v1", "repos", _, _, "agent-work-grants", _, "issues"]) => {
            Route::Submit
        }
        (&Method::POST, ["login", "oauth", "access_token"]) => Route::Token,
        // (Only a grant's page holds the markup its rewrites look for.)
        (&Method::GET, [_, _, "agent-work-grants", _]) => Route::GrantPage,
        _ => Route::Other,
    }
}

/// The middleware: the answer to `request`, bent by the active fault.
async fn bend(request: Request, next: Next) -> Response {
    let route = route(&request);
    if matches!(route, Route::Submit) && active(Fault::ReplayServedFromCache) {
        return replay_cache::serve(request, next).await;
    }
    let mut response = next.run(request).await;
    session_cookie(response.headers_mut());
    match route {
        // `token-answer-cacheable`.
        Route::Token
            if active(Fault::TokenAnswerCacheable) && response.status() == StatusCode::OK =>
        {
            response
                .headers_mut()
                .insert(CACHE_CONTROL, HeaderValue::from_static("private"));
        }
        // `replay-answers-201`: a replay's 200 becomes a creation's 201.
        Route::Submit if active(Fault::ReplayAnswers201) && response.status() == StatusCode::OK => {
            *response.status_mut() = StatusCode::CREATED;
        }
        Route::List(query) if response.status() == StatusCode::OK => {
            return list(response, query.as_deref()).await;
        }
        Route::GrantPage if response.status() == StatusCode::OK => {
            return grant_page(response).await;
        }
        _ => {}
    }
    response
}

/// `session-cookie-not-httponly`, `session-cookie-no-samesite`: the
/// session cookie's attribute left out.
fn session_cookie(headers: &mut HeaderMap) {
    let drop = if active(Fault::SessionCookieNotHttpOnly) {
        "; HttpOnly"
    } else if active(Fault::SessionCookieNoSameSite) {
        "; SameSite=Lax"
    } else {
        return;
    };
    let prefix = format!("{COOKIE_NAME}=");
    let cookies: Vec<HeaderValue> = headers
        .get_all(SET_COOKIE)
        .iter()
        .map(|v| match v.to_str() {
            Ok(text) if text.starts_with(&prefix) => {
                HeaderValue::from_str(&text.replacen(drop, "", 1)).unwrap_or_else(|_| v.clone())
            }
            _ => v.clone(),
        })
        .collect();
    headers.remove(SET_COOKIE);
    for cookie in cookies {
        headers.append(SET_COOKIE, cookie);
    }
}

/// The grant list's paging headers, bent: `total-count-wrong` counts the
/// page's grants; `link-missing` sends no `Link`; the other `Link` faults
/// rebuild it ([`bent_link`]).
async fn list(response: Response, query: Option<&str>) -> Response {
    let (mut parts, body) = response.into_parts();
    if active(Fault::LinkMissing) {
        parts.headers.remove(LINK);
        return Response::from_parts(parts, body);
    }
    if active(Fault::TotalCountWrong) {
        let Ok(bytes) = to_bytes(body, usize::MAX).await else {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        let count = serde_json::from_slice::<Vec<serde_json::Value>>(&bytes).map_or(0, |g| g.len());
        parts.headers.insert("x-total-count", count.into());
        return Response::from_parts(parts, Body::from(bytes));
    }
    if let Some(link) = bent_link(&parts.headers, query) {
        parts.headers.insert(LINK, link);
    }
    Response::from_parts(parts, body)
}

/// The list's `Link` rebuilt from the honest one (its `first` URL holds the
/// list's URL, kept parameters and width), `X-Total-Count` and the
/// request's `page`: `link-forgets-state` keeps no parameter;
/// `clamp-without-continuation` writes the requested width, not the one
/// served; `link-wrong`, `link-last-overcounts` and
/// `link-last-past-full-page` compute the last page wrongly (and `next` and
/// `prev` from it).
fn bent_link(headers: &HeaderMap, query: Option<&str>) -> Option<HeaderValue> {
    let total: i64 = headers.get("x-total-count")?.to_str().ok()?.parse().ok()?;
    let link = headers.get(LINK)?.to_str().ok()?;
    let first = link
        .split(", ")
        .find_map(|l| l.strip_suffix(">; rel=\"first\""))?
        .strip_prefix('<')?;
    let (path, first_query) = first.split_once('?')?;
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(first_query.as_bytes())
        .into_owned()
        .collect();
    let limit: i64 = pairs.iter().find(|(k, _)| k == "limit")?.1.parse().ok()?;
    let mut keep: Vec<(&str, &str)> = pairs
        .iter()
        .filter(|(k, _)| k != "page" && k != "limit")
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let params = Params::from_query(query).ok()?;
    let page = params.positive("page").ok()?.unwrap_or(1);
    let (limit, last) = if active(Fault::LinkForgetsState) {
        keep.clear();
        (limit, pagination::last_page(total, limit))
    } else if active(Fault::ClampWithoutContinuation) {
        let asked = params.positive("limit").ok()?.unwrap_or(limit);
        (asked, pagination::last_page(total, asked))
    } else if active(Fault::LinkWrong) {
        (limit, total / limit)
    } else if active(Fault::LinkLastOvercounts) {
        (limit, (total + limit + 1) / limit)
    } else if active(Fault::LinkLastPastFullPage) {
        (limit, (total + limit) / limit)
    } else {
        return None;
    };
    let link = pagination::link(path, &keep, page, limit, last.max(1));
    HeaderValue::from_str(&link).ok()
}

/// The grant page's markup, bent: `decision-button-outside-form` closes a
/// decision form before its button; `decision-button-covered` lays a
/// transparent layer over the page after each; `state-word-in-title-only`
/// shows the state as a dot with the word in its `title`;
/// `page-shows-active-as-awaiting` shows `active` as `awaiting_human`.
async fn grant_page(response: Response) -> Response {
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = to_bytes(body, usize::MAX).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let mut page = String::from_utf8_lossy(&bytes).into_owned();
    for label in ["Approve", "Withdraw"] {
        let button = format!("<button type=\"submit\">{label}</button>");
        let honest = format!("{button}</form>\n");
        if active(Fault::DecisionButtonOutsideForm) {
            page = page.replace(&honest, &format!("</form>{button}\n"));
        } else if active(Fault::DecisionButtonCovered) {
            // Transparent: the page looks the same, but the layer takes every click.
            let veil = "<div style=\"position:fixed;inset:0;z-index:9\"></div>";
            page = page.replace(&honest, &format!("{button}</form>{veil}\n"));
        }
    }
    const STATE: &str = "<dd class=\"grant-state\">";
    if active(Fault::StateWordInTitleOnly)
        && let Some(at) = page.find(STATE).map(|at| at + STATE.len())
        && let Some(len) = page[at..].find("</dd>")
    {
        let word = page[at..at + len].to_owned();
        let dot = format!("<span title=\"{word}\">&#9679;</span>");
        page.replace_range(at..at + len, &dot);
    }
    if active(Fault::PageShowsActiveAsAwaiting) {
        page = page.replace(
            &format!("{STATE}active</dd>"),
            &format!("{STATE}awaiting_human</dd>"),
        );
    }
    parts.headers.remove(CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(page))
}
