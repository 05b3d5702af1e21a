//! Variants of how the browser surface answers where spec §4 leaves the
//! choice to the Core: the redirect after approve, withdraw and logout (302
//! or 303, or 200 with the resulting page), where logging out is offered,
//! what `GET /` does for a signed-in person, the status of a failed login,
//! and the wording of a stale-revision page.

use axum::Router;
use axum::body::Body;
use axum::http::header::{COOKIE, LOCATION, SET_COOKIE};
use axum::http::{HeaderValue, Method, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use tower::ServiceExt;

use crate::web::html::{self, hidden};

/// Whether a request is one of the form POSTs whose success §4 lets the Core
/// answer with any redirect or a 200 page: approve, withdraw, logout.
pub fn is_open_form_post(method: &Method, path: &str) -> bool {
    method == Method::POST
        && (path == "/user/logout"
            || (path.contains("/agent-work-grants/")
                && (path.ends_with("/approve") || path.ends_with("/withdraw"))))
}

/// Whether a request is the consent decision (spec §9), which the Core
/// answers with a redirect of its choice, 302 or 303.
pub fn is_consent_decision(method: &Method, path: &str) -> bool {
    method == Method::POST && path == crate::web::oauth::GRANT_PATH
}

/// `no-extensions`: whether a request is one of the test extensions' routes
/// (spec §5): `PATCH` of a repository or an Issue, `DELETE` of a token.
pub fn is_extension_route(method: &Method, path: &str) -> bool {
    let segments: Vec<&str> = path.split('/').collect();
    matches!(
        (method, segments.as_slice()),
        (
            &Method::PATCH,
            ["", "api", "v1", "repos", _, _] | ["", "api", "v1", "repos", _, _, "issues", _]
        ) | (&Method::DELETE, ["", "api", "v1", "users", _, "tokens", _])
    )
}

/// `login-redirect`: where the login page sends a signed-in person: the
/// local path its `redirect_to` names, else `/`.
pub fn redirect_to(query: &str) -> String {
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == "redirect_to")
        .map(|(_, v)| v.into_owned())
        .filter(|to| to.starts_with('/') && !to.starts_with("//") && !to.contains('\\'))
        .unwrap_or_else(|| "/".to_owned())
}

/// `redirect-302`: a 303 answer becomes 302; withdraw redirects to the grant
/// list instead of the grant's page (§4 names no target).
pub fn redirect_302(path: &str, response: &mut Response) {
    if response.status() != StatusCode::SEE_OTHER {
        return;
    }
    *response.status_mut() = StatusCode::FOUND;
    if let Some(list) = path
        .strip_suffix("/withdraw")
        .and_then(|p| p.rsplit_once('/'))
        && let Ok(v) = HeaderValue::from_str(list.0)
    {
        response.headers_mut().insert(LOCATION, v);
    }
}

/// `post-200` and `signin-in-place`: instead of a 303, the page it pointed
/// at, answered at once with 200 (read from `app`, refcore without
/// variants, as the browser would after following the redirect). The
/// answer's cookies are kept; a request that ends the session (logout clears
/// the cookie) reads the page without it.
pub async fn in_place(app: &Router, cookie: Option<HeaderValue>, response: Response) -> Response {
    let location = response
        .headers()
        .get(LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let Some(location) = location.filter(|_| response.status() == StatusCode::SEE_OTHER) else {
        return response;
    };
    let set_cookies: Vec<HeaderValue> = response
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .cloned()
        .collect();
    let mut request = Request::get(location.as_str());
    if let Some(cookie) = cookie.filter(|_| set_cookies.is_empty()) {
        request = request.header(COOKIE, cookie);
    }
    let Ok(request) = request.body(Body::empty()) else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let Ok(mut page) = app.clone().oneshot(request).await;
    *page.status_mut() = StatusCode::OK;
    for cookie in set_cookies {
        page.headers_mut().append(SET_COOKIE, cookie);
    }
    page
}

/// `logout-page`, the page behind the "Sign out" link (`GET /user/logout`):
/// a confirmation whose form posts `/user/logout`. Signed out, the login page.
pub fn logout_confirmation(csrf: Option<&str>, login: Option<&str>) -> Response {
    let Some(csrf) = csrf else {
        return (StatusCode::SEE_OTHER, [(LOCATION, "/user/login")]).into_response();
    };
    let body = format!(
        "<h1>Sign out</h1>\n<p>Do you want to sign out?</p>\n\
         <form method=\"post\" action=\"/user/logout\">{}<button type=\"submit\">Yes, sign out</button></form>",
        hidden("_csrf", csrf)
    );
    html::page("Sign out", login, &body).into_response()
}

/// `logout-page` on every page: the home page's logout form becomes a link
/// to the confirmation page.
pub fn logout_link(html: &str) -> Option<String> {
    let open = "<form method=\"post\" action=\"/user/logout\"";
    let start = html.find(open)?;
    let end = start + html[start..].find("</form>")? + "</form>".len();
    let mut out = html.to_string();
    out.replace_range(start..end, "<a href=\"/user/logout\">Sign out</a>");
    Some(out)
}

/// `signin-in-place`: whether a response sends a signed-out browser to the
/// login page.
pub fn to_login(response: &Response) -> bool {
    response.status() == StatusCode::SEE_OTHER
        && response
            .headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|l| l == "/user/login" || l.starts_with("/user/login?"))
}

/// `home-dashboard`: where `GET /` sends a signed-in person.
pub const DASHBOARD: &str = "/dashboard";

/// `home-dashboard`: the dashboard, a page of its own holding what refcore's
/// home shows (read from `app` with the request's cookie); signed out, the
/// login page.
pub async fn dashboard(app: &Router, cookie: Option<HeaderValue>, signed_in: bool) -> Response {
    if !signed_in {
        return (StatusCode::SEE_OTHER, [(LOCATION, "/user/login")]).into_response();
    }
    let mut request = Request::get("/");
    if let Some(cookie) = cookie {
        request = request.header(COOKIE, cookie);
    }
    let Ok(request) = request.body(Body::empty()) else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let Ok(page) = app.clone().oneshot(request).await;
    page
}

/// `stale-wording`: a 409 page's message in other words that never say
/// "changed".
pub const STALE_WORDS: &str = "This grant was modified by someone else. Nothing was saved: \
                               reload the grant and decide again.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_open_form_posts_are_approve_withdraw_and_logout() {
        let p = Method::POST;
        assert!(is_open_form_post(&p, "/a/b/agent-work-grants/3/approve"));
        assert!(is_open_form_post(&p, "/a/b/agent-work-grants/3/withdraw"));
        assert!(is_open_form_post(&p, "/user/logout"));
        assert!(!is_open_form_post(&p, "/a/b/agent-work-grants"));
        assert!(!is_open_form_post(&p, "/user/login"));
        assert!(!is_open_form_post(&Method::GET, "/user/logout"));
    }

    #[test]
    fn login_redirect_goes_to_a_local_redirect_to_only() {
        assert_eq!(redirect_to("redirect_to=%2Fa%2Fb%3Fx%3D1"), "/a/b?x=1");
        assert_eq!(redirect_to("redirect_to=%2F%2Fevil.example"), "/");
        assert_eq!(redirect_to("redirect_to=http%3A%2F%2Fevil"), "/");
        assert_eq!(redirect_to(""), "/");
    }

    #[test]
    fn the_extension_routes_are_known_by_method_and_shape() {
        assert!(is_extension_route(&Method::PATCH, "/api/v1/repos/a/b"));
        assert!(is_extension_route(
            &Method::PATCH,
            "/api/v1/repos/a/b/issues/3"
        ));
        assert!(is_extension_route(
            &Method::DELETE,
            "/api/v1/users/u/tokens/9"
        ));
        assert!(!is_extension_route(&Method::GET, "/api/v1/repos/a/b"));
        assert!(!is_extension_route(&Method::POST, "/api/v1/users/u/tokens"));
    }

    #[test]
    fn withdraw_redirects_to_the_list_with_302() {
        let mut r = (
            StatusCode::SEE_OTHER,
            [(LOCATION, "/a/b/agent-work-grants/3")],
        )
            .into_response();
        redirect_302("/a/b/agent-work-grants/3/withdraw", &mut r);
        assert_eq!(r.status(), StatusCode::FOUND);
        assert_eq!(r.headers()[LOCATION], "/a/b/agent-work-grants");
    }

    #[test]
    fn the_logout_form_becomes_a_link() {
        let page = "<p>x</p><form method=\"post\" action=\"/user/logout\" class=\"logout\">\
                    <input type=\"hidden\" name=\"_csrf\" value=\"t\"><button>Sign out</button></form><p>y</p>";
        assert_eq!(
            logout_link(page).unwrap(),
            "<p>x</p><a href=\"/user/logout\">Sign out</a><p>y</p>"
        );
        assert_eq!(logout_link("<p>none</p>"), None);
    }
}
