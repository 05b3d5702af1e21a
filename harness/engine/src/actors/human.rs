//! A human at a browser: a cookie jar of their own, pages parsed as HTML,
//! forms submitted as a browser submits them, redirects followed like a
//! browser and recorded.
//!
//! With `--browser chromium` the same human sits at headless Chromium
//! ([`crate::browser`]); the human's moves go through one surface, the HTTP
//! level's or the browser's (`surface.rs`), and never ask which. In the
//! browser, pages are opened and forms submitted by clicking
//! their buttons in the browser, which keeps the cookies. The few moves a
//! browser has no way to make (a request with extra headers, an answer read
//! before its redirect is followed) are made at the HTTP level with the
//! browser's own cookies, copied to the jar and back, as a person with the
//! browser's developer tools would.

use std::sync::Arc;

use reqwest_cookie_store::CookieStoreMutex;

use super::consent::ConsentRedirect;
use super::http::{Answer, exchange};
use super::page::{Form, Page};
use super::surface::{Chromium, Http, Surface, User};
use crate::browser::Tab;
use crate::core_api::{self, Decision, fields};
use crate::journal::Journal;
use crate::views::GrantRef;
use crate::vocab::{Abort, Step};

/// A browser follows at most this many redirects, as real ones do.
const MAX_REDIRECTS: usize = 10;

/// A browser's cookie jar that also holds a cookie of another application
/// of the same host, one set before the Core's and one after (cookies are
/// shared by every port of a host): the `Cookie` header carries the Core's
/// among others, in the order RFC 6265 §5.4 gives (older first).
struct AmongOthers(Arc<CookieStoreMutex>);

/// The other application's cookies, older and newer than the Core's.
const OTHER_COOKIES: [&str; 2] = ["gg_other_before=1", "gg_other_after=1"];

impl reqwest::cookie::CookieStore for AmongOthers {
    fn set_cookies(
        &self,
        headers: &mut dyn Iterator<Item = &reqwest::header::HeaderValue>,
        url: &url::Url,
    ) {
        self.0.set_cookies(headers, url);
    }

    fn cookies(&self, url: &url::Url) -> Option<reqwest::header::HeaderValue> {
        let core = self.0.cookies(url);
        let core = core.as_ref().and_then(|v| v.to_str().ok()).unwrap_or("");
        let [before, after] = OTHER_COOKIES;
        let all = match core {
            "" => format!("{before}; {after}"),
            core => format!("{before}; {core}; {after}"),
        };
        reqwest::header::HeaderValue::from_str(&all).ok()
    }
}

/// One human with one browser. Cloning shares the browser (and its cookies).
#[derive(Clone)]
pub struct Human {
    /// The login.
    pub login: String,
    password: String,
    base: url::Url,
    client: reqwest::Client,
    cookies: Arc<CookieStoreMutex>,
    journal: Journal,
    /// Where this human's moves land: the HTTP level or a real browser.
    surface: Arc<dyn Surface>,
}

impl Human {
    /// A human with a fresh browser pointed at the Core `base`.
    pub(crate) fn new(login: &str, password: &str, base: &str, journal: Journal) -> Step<Self> {
        let cookies = Arc::new(CookieStoreMutex::default());
        let client = reqwest::Client::builder()
            .cookie_provider(Arc::new(AmongOthers(cookies.clone())))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| Abort::errored(format!("browser for {login}: {e}")))?;
        let base =
            url::Url::parse(base).map_err(|e| Abort::errored(format!("core url {base}: {e}")))?;
        Ok(Human {
            login: login.to_owned(),
            password: password.to_owned(),
            base,
            client,
            cookies,
            journal,
            surface: Arc::new(Http),
        })
    }

    /// The same human at a real browser of its own.
    pub(crate) fn in_browser(mut self, tab: Arc<Tab>) -> Self {
        self.surface = Arc::new(Chromium(tab));
        self
    }

    /// This human's real browser, if any (`--browser chromium`).
    pub fn tab(&self) -> Option<&Arc<Tab>> {
        self.surface.tab()
    }

    /// Adds the page the real browser shows now to the trial's page trail,
    /// with a screenshot: at the end of a trial, and `failed` where a
    /// browser step or the trial failed (at the HTTP level, nothing).
    pub(crate) async fn picture(&self, failed: bool) {
        self.surface.picture(self, failed).await
    }

    /// Text as this human's browser submits it in a form: a real browser
    /// sends every line break of a field as CRLF (the HTML standard's form
    /// encoding), so the Core receives — and must keep whole — that text.
    /// HTTP-level browsers send the text as it is.
    pub fn as_submitted(&self, text: &str) -> String {
        self.surface.as_submitted(text)
    }

    /// The real browser, or the error a browser-only move makes without one.
    fn real(&self) -> Step<&Arc<Tab>> {
        self.surface
            .tab()
            .ok_or_else(|| Abort::errored("this move needs a real browser (`--browser chromium`)"))
    }

    /// The names of every cookie the real browser holds for any site.
    pub async fn cookie_names(&self) -> Step<Vec<String>> {
        let cookies = self.real()?.cookies().await?;
        Ok(cookies
            .iter()
            .filter_map(|c| c["name"].as_str().map(str::to_owned))
            .collect())
    }

    /// The names of the cookies the current page's scripts read in
    /// `document.cookie` (values are not returned: they are credentials).
    pub async fn script_cookie_names(&self) -> Step<Vec<String>> {
        let seen = self
            .real()?
            .script(
                "return document.cookie.split(';').map(c => c.split('=')[0].trim()).filter(n => n);",
                vec![],
            )
            .await?;
        Ok(seen
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect())
    }

    /// Drops the cookie `name` from the real browser; returns every cookie
    /// it held before, for [`restore_cookies`](Self::restore_cookies).
    pub async fn drop_cookie(&self, name: &str) -> Step<BrowserCookies> {
        let tab = self.real()?;
        let _turn = tab.hold().await;
        let all = tab.cookies().await?;
        let kept = all.iter().filter(|c| c["name"] != name).cloned();
        tab.set_cookies(kept.map(settable).collect()).await?;
        Ok(BrowserCookies(all))
    }

    /// Every cookie the real browser holds now, for
    /// [`restore_cookies`](Self::restore_cookies).
    pub async fn save_cookies(&self) -> Step<BrowserCookies> {
        Ok(BrowserCookies(self.real()?.cookies().await?))
    }

    /// Puts back the cookies [`drop_cookie`](Self::drop_cookie) saw.
    pub async fn restore_cookies(&self, cookies: BrowserCookies) -> Step<()> {
        let tab = self.real()?;
        let _turn = tab.hold().await;
        tab.set_cookies(cookies.0.into_iter().map(settable).collect())
            .await
    }

    /// A hostile page on another site (served by the harness) that posts
    /// `form` — its method, action and exact fields — as soon as it loads,
    /// opened in the real browser. Returns the Core's page the browser ends
    /// on. The browser decides which cookies go with the post.
    pub async fn cross_site_post(&self, form: &Form) -> Step<Page> {
        let tab = self.real()?;
        let inputs: String = form
            .fields
            .iter()
            .map(|(n, v)| {
                format!(
                    "<input type=hidden name=\"{}\" value=\"{}\">",
                    crate::browser::attr_escape(n),
                    crate::browser::attr_escape(v)
                )
            })
            .collect();
        let html = format!(
            "<!DOCTYPE html><title>another site</title><form method=\"{}\" action=\"{}\">{inputs}</form>\
             <script>document.forms[0].submit()</script>",
            crate::browser::attr_escape(&form.method),
            crate::browser::attr_escape(form.action.as_str()),
        );
        let site = crate::browser::CrossSite::serve(&self.base, html).await?;
        let shown = tab.follow_to(&site.url, &form.action.origin()).await;
        super::surface::shown(tab, self, "cross-site POST", shown).await
    }

    /// One request at the HTTP level with this human's cookies (in a real
    /// browser, the browser's: see [`Surface::exchange`]).
    async fn exchange(&self, request: reqwest::Request) -> Step<Answer> {
        self.surface.exchange(self, request).await
    }

    /// [`exchange`](Self::exchange) with the jar as it is.
    async fn exchange_in_jar(&self, request: reqwest::Request) -> Step<Answer> {
        let answer = exchange(&self.client, &self.journal, &self.login, request).await?;
        self.register_cookies();
        Ok(answer)
    }

    /// Opens a page by path (`/alice/lab/...`), following redirects.
    pub async fn open(&self, path: &str) -> Step<Page> {
        let url = self
            .base
            .join(path)
            .map_err(|e| Abort::errored(format!("path {path}: {e}")))?;
        self.surface.open(self, &url).await
    }

    /// Opens an absolute URL following redirects only while they stay on
    /// the Core's origin: an answer that redirects anywhere else ends the
    /// walk unfollowed, with that target last in `redirects` and the
    /// answer's status as `status` (a consent refusal must not send the
    /// browser to a client, spec §9).
    pub async fn open_on_core(&self, url: &url::Url) -> Step<Page> {
        self.walk("GET", url.clone(), Vec::new(), &[], true, false)
            .await
    }

    /// Submits a form exactly as filled, following redirects.
    pub async fn submit(&self, form: &Form) -> Step<Page> {
        self.surface.submit(self, form).await
    }

    /// Submits a form with extra request headers (e.g. the CSRF token as
    /// `X-Csrf-Token` instead of a field), from this browser's session.
    pub async fn submit_with_headers(&self, form: &Form, headers: &[(&str, &str)]) -> Step<Page> {
        self.navigate(
            &form.method,
            form.action.clone(),
            form.fields.clone(),
            headers,
        )
        .await
    }

    /// Logs in through the login form: its own `_csrf`, `user_name` and
    /// `password`. Returns the page the browser lands on; a person already
    /// signed in whom the Core sends away from the login page stays so.
    pub async fn login(&self) -> Step<Page> {
        let page = self.open(core_api::LOGIN).await?;
        // A person already signed in is signed in: a Core may send them from
        // the login page elsewhere (Forgejo: to `redirect_to`, else `/`).
        if page.first_redirect().is_some() && page.form_with_field(fields::USER_NAME).is_err() {
            return Ok(page);
        }
        self.submit(&self.filled_login(&page)?).await
    }

    /// Posts the login form (its own `_csrf`, this human's login and
    /// password) and returns that POST's own answer, its redirect not
    /// followed: the status, `Location` and `Set-Cookie` headers the Core
    /// answers a login with. The browser is signed in afterwards, as after
    /// [`login`](Self::login).
    pub async fn login_answer(&self) -> Step<Answer> {
        let form = self.login_form().await?;
        let request = self
            .client
            .post(form.action.clone())
            .form(&form.fields)
            .build()
            .map_err(|e| Abort::errored(format!("login request: {e}")))?;
        self.exchange(request).await
    }

    /// The login form, filled in with this human's login and password but
    /// not submitted: to tamper with before [`submit`](Self::submit) (a login
    /// without its `_csrf`, a bot trying to sign in).
    pub async fn login_form(&self) -> Step<Form> {
        self.login_form_at(core_api::LOGIN).await
    }

    /// The login form of the page at `path` (e.g. `/user/login?redirect_to=…`),
    /// filled in with this human's login and password but not submitted.
    pub async fn login_form_at(&self, path: &str) -> Step<Form> {
        self.filled_login(&self.open(path).await?)
    }

    /// The login form of `page`, filled in with this human's credentials.
    fn filled_login(&self, page: &Page) -> Step<Form> {
        let mut form = page.form_with_field(fields::USER_NAME)?;
        form.set(fields::USER_NAME, &self.login)
            .set(fields::PASSWORD, &self.password.clone());
        Ok(form)
    }

    /// The session's `_csrf`: the first found in a form of the pages at
    /// `paths`, opened in order. Spec §4 lets it be taken from any form of
    /// any of the session's pages, so the caller names pages the contract
    /// gives forms (a grant page, a new-grant page of a repository this
    /// person administers); none holding one is the Core's failure.
    pub async fn session_csrf(&self, paths: &[&str]) -> Step<String> {
        for path in paths {
            if let Some(csrf) = self.open(path).await?.csrf_values().into_iter().next() {
                return Ok(csrf);
            }
        }
        Err(Abort::failed(format!(
            "no form on {} carries a _csrf",
            paths.join(", ")
        )))
    }

    /// Logs out: `POST /user/logout` (spec §4) with the Core's own logout
    /// form when one of the pages at `paths` holds one, else with the
    /// session's `_csrf` from any form of those pages: no page has to carry
    /// a logout form.
    pub async fn logout(&self, paths: &[&str]) -> Step<Page> {
        let logout = self.url(core_api::LOGOUT)?;
        let mut csrf = None;
        for path in paths {
            let page = self.open(path).await?;
            if let Ok(form) = page.form_to(logout.path()) {
                return self.submit(&form).await;
            }
            csrf = csrf.or_else(|| page.csrf_values().into_iter().next());
        }
        let csrf = csrf.ok_or_else(|| {
            Abort::failed(format!(
                "no logout form and no _csrf on {}",
                paths.join(", ")
            ))
        })?;
        let form = Form::new("POST", logout, vec![(fields::CSRF.into(), csrf)]);
        self.submit(&form).await
    }

    /// The absolute URL of `path` on this browser's Core (for a hand-built
    /// [`Form`], e.g. a GET with extra headers).
    pub fn url(&self, path: &str) -> Step<url::Url> {
        self.base
            .join(path)
            .map_err(|e| Abort::errored(format!("path {path}: {e}")))
    }

    /// The new-grant form of `repo` (`owner/name`), filled in for `agent`
    /// but not submitted.
    pub async fn prepare_form(
        &self,
        repo: &str,
        agent: &str,
        task: &str,
        summary: &str,
    ) -> Step<Form> {
        let page = self.open(&core_api::new_grant_page(repo)).await?;
        let mut form = page.form_with_field(fields::TASK)?;
        form.set(fields::AGENT, agent)
            .set(fields::TASK, task)
            .set(fields::SUMMARY, summary);
        Ok(form)
    }

    /// Prepares a grant through the "new grant" form of `owner/repo` and
    /// returns it, read off the URL the browser lands on.
    pub async fn prepare_grant(
        &self,
        repo: &str,
        agent: &str,
        task: &str,
        summary: &str,
    ) -> Step<(GrantRef, Page)> {
        let (owner, name) = core_api::split_repo(repo)?;
        let form = self.prepare_form(repo, agent, task, summary).await?;
        let landed = self.submit(&form).await?;
        let id = core_api::grant_id_of_page(&landed.url).ok_or_else(|| {
            Abort::failed(format!(
                "preparing a grant landed on {} (status {}), not on a grant page",
                landed.url, landed.status
            ))
        })?;
        Ok((
            GrantRef {
                owner: owner.to_owned(),
                repo: name.to_owned(),
                id,
            },
            landed,
        ))
    }

    /// Prepares a grant as [`prepare_grant`](Self::prepare_grant) does, with
    /// `envelope` typed into the form's `repository_grant` field (spec §8).
    /// Returns the page the browser lands on, whatever it is: a grant page
    /// after a 303, or the Core's refusal.
    pub async fn prepare_grant_with_envelope(
        &self,
        repo: &str,
        agent: &str,
        task: &str,
        summary: &str,
        envelope: &str,
    ) -> Step<(Option<GrantRef>, Page)> {
        let (owner, name) = core_api::split_repo(repo)?;
        let mut form = self.prepare_form(repo, agent, task, summary).await?;
        form.set(fields::REPOSITORY_GRANT, envelope);
        let landed = self.submit(&form).await?;
        let grant = core_api::grant_id_of_page(&landed.url)
            .filter(|_| landed.status == 200)
            .map(|id| GrantRef {
                owner: owner.to_owned(),
                repo: name.to_owned(),
                id,
            });
        Ok((grant, landed))
    }

    /// Opens the grant's page.
    pub async fn grant_page(&self, grant: &GrantRef) -> Step<Page> {
        self.open(&core_api::grant_page(grant)).await
    }

    /// Approves the grant with the approve form on its page (its hidden
    /// `_csrf` and `state_revision` as the page has them).
    pub async fn approve(&self, grant: &GrantRef) -> Step<Page> {
        self.decide(grant, Decision::Approve).await
    }

    /// Withdraws the grant with the withdraw form on its page.
    pub async fn withdraw(&self, grant: &GrantRef) -> Step<Page> {
        self.decide(grant, Decision::Withdraw).await
    }

    /// Submits the approve or withdraw form of the grant's page as it is.
    pub async fn decide(&self, grant: &GrantRef, decision: Decision) -> Step<Page> {
        let form = self.decision_form(grant, decision).await?;
        self.submit(&form).await
    }

    /// The approve or withdraw form of a grant, to tamper with before
    /// submitting (stale revision, foreign CSRF, ...).
    pub async fn decision_form(&self, grant: &GrantRef, decision: Decision) -> Step<Form> {
        let page = self.grant_page(grant).await?;
        let action = self.url(&core_api::decision(grant, decision))?;
        page.form_to(action.path())
    }

    /// Opens an Issue's page (`repo` is `owner/name`).
    pub async fn issue_page(&self, repo: &str, index: i64) -> Step<Page> {
        self.open(&core_api::issue_page(repo, index)).await
    }

    /// Edits Issue `index` of `repo` (`owner/name`) through the API with this
    /// human's own credential (Basic `login:password`, spec §1), changing
    /// only the members given: the `issue-edit` setup extension, `PATCH
    /// …/issues/{index}`. Sent without the browser's cookies, so only that
    /// credential speaks. Returns the answer, whatever its status.
    pub async fn edit_issue(
        &self,
        repo: &str,
        index: i64,
        title: Option<&str>,
        body: Option<&str>,
    ) -> Step<Answer> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| Abort::errored(format!("API client for {}: {e}", self.login)))?;
        let url = self.url(&core_api::issue(repo, index))?;
        let request = client
            .patch(url)
            .basic_auth(&self.login, Some(&self.password))
            .json(&core_api::issue_edit_body(title, body))
            .build()
            .map_err(|e| Abort::errored(format!("issue edit request: {e}")))?;
        if let Some(encoded) = request
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Basic "))
        {
            self.journal.secrets().register(encoded);
        }
        exchange(&client, &self.journal, &self.login, request).await
    }

    /// Opens an absolute URL (on any origin, as a browser does: a consent
    /// URL, an adapter's callback), following redirects.
    pub async fn open_url(&self, url: &url::Url) -> Step<Page> {
        self.surface.open(self, url).await
    }

    /// Opens a consent URL (spec §9) and, when the Core first asks this
    /// browser to sign in, signs in through the login form it shows and
    /// expects to be brought back. Returns the page it ends on: the
    /// consent page, or the Core's refusal.
    pub async fn authorize(&self, url: &url::Url) -> Step<Page> {
        let page = self.open_url(url).await?;
        let grant_path = core_api::oauth::GRANT;
        if page.has_form_to(grant_path) || page.form_with_field(fields::USER_NAME).is_err() {
            return Ok(page);
        }
        self.submit(&self.filled_login(&page)?).await
    }

    /// The consent form (action `/login/oauth/grant`) of the page a consent
    /// URL leads to, signed in first if needed, with the button clicked that
    /// sends `granted=true` (consents) or `granted=false` (refuses), not
    /// submitted: one form with both buttons, or one form per decision,
    /// whatever sends that decision. A page without it is the Core's failure.
    pub async fn consent_form(&self, url: &url::Url, granted: bool) -> Step<Form> {
        let page = self.authorize(url).await?;
        page.form_sending(
            core_api::oauth::GRANT,
            core_api::oauth::GRANTED,
            if granted { "true" } else { "false" },
        )
    }

    /// Submits a consent form (from [`consent_form`](Self::consent_form))
    /// and returns where the Core redirects, not followed: the
    /// `redirect_uri` with `code` and `state`, or with `error`. Its code is
    /// registered as a secret. No redirect is the Core's failure.
    pub async fn decide_consent(&self, form: &Form) -> Step<ConsentRedirect> {
        let answer = self.send(form).await?;
        let location = answer.header("location");
        match (answer.status, location) {
            (301 | 302 | 303 | 307 | 308, Some(location)) => {
                let target = form
                    .action
                    .join(&location)
                    .map_err(|e| Abort::failed(format!("the consent decision's redirect: {e}")))?;
                super::consent::register_url_secrets(self.journal.secrets(), target.as_str());
                Ok(ConsentRedirect::new(answer.status, target))
            }
            (status, _) => Err(Abort::failed(format!(
                "the consent decision answered {status} without a redirect"
            ))),
        }
    }

    /// Consents (or refuses) at a consent URL as a person does: signs in if
    /// asked, submits the consent form, and follows the Core's redirect to
    /// the adapter's callback. Returns the redirect and the callback's page.
    pub async fn consent(&self, url: &url::Url, granted: bool) -> Step<(ConsentRedirect, Page)> {
        let form = self.consent_form(url, granted).await?;
        let redirect = self.decide_consent(&form).await?;
        let page = self.open_url(redirect.url()).await?;
        Ok((redirect, page))
    }

    /// Sends a form once and returns the answer, its redirect not followed.
    pub async fn send(&self, form: &Form) -> Step<Answer> {
        self.send_with_headers(form, &[]).await
    }

    /// Sends a form once with extra request headers (e.g. the CSRF token as
    /// `X-Csrf-Token`), its redirect not followed: for a form whose redirect
    /// leaves the Core (the consent decision's, to its `redirect_uri`).
    pub async fn send_with_headers(&self, form: &Form, headers: &[(&str, &str)]) -> Step<Answer> {
        let mut request = match form.method.as_str() {
            "GET" => {
                let mut u = form.action.clone();
                u.query_pairs_mut().extend_pairs(form.fields.iter());
                self.client.get(u)
            }
            _ => self.client.post(form.action.clone()).form(&form.fields),
        };
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request
            .build()
            .map_err(|e| Abort::errored(format!("form request: {e}")))?;
        self.exchange(request).await
    }

    /// Follows a browser navigation: redirects with 301/302/303 become GETs
    /// without a body, 307/308 keep method and body.
    async fn navigate(
        &self,
        method: &str,
        url: url::Url,
        fields: Vec<(String, String)>,
        headers: &[(&str, &str)],
    ) -> Step<Page> {
        self.walk(method, url, fields, headers, false, false).await
    }

    /// [`navigate`](Self::navigate); with `core_only`, a redirect off the
    /// Core's origin is not followed (see [`open_on_core`](Self::open_on_core));
    /// with `in_jar`, every request goes with the jar as it is, whatever the
    /// surface (whose browser the caller holds still).
    async fn walk(
        &self,
        method: &str,
        mut url: url::Url,
        mut fields: Vec<(String, String)>,
        headers: &[(&str, &str)],
        core_only: bool,
        in_jar: bool,
    ) -> Step<Page> {
        let mut method = method.to_ascii_uppercase();
        let mut redirects = Vec::new();
        loop {
            let mut req = match method.as_str() {
                "GET" => {
                    let mut u = url.clone();
                    if !fields.is_empty() {
                        u.query_pairs_mut().extend_pairs(fields.iter());
                    }
                    self.client.get(u)
                }
                _ => self.client.request(
                    method
                        .parse()
                        .map_err(|_| Abort::failed(format!("form method {method}")))?,
                    url.clone(),
                ),
            };
            if method != "GET" {
                req = req.form(&fields);
            }
            for (name, value) in headers {
                req = req.header(*name, *value);
            }
            let request = req
                .build()
                .map_err(|e| Abort::errored(format!("request to {url}: {e}")))?;
            let answer = if in_jar {
                self.exchange_in_jar(request).await?
            } else {
                self.exchange(request).await?
            };
            let location = answer.header("location");
            match (answer.status, location) {
                (301 | 302 | 303 | 307 | 308, Some(location)) => {
                    if redirects.len() >= MAX_REDIRECTS {
                        return Err(Abort::failed(format!(
                            "more than {MAX_REDIRECTS} redirects from {url}"
                        )));
                    }
                    let next = url.join(&location).map_err(|e| {
                        Abort::failed(format!("redirect to `{location}` from {url}: {e}"))
                    })?;
                    redirects.push((answer.status, next.clone()));
                    if core_only && next.origin() != self.base.origin() {
                        let (page, _) = Page::read(answer, url, redirects).await?;
                        return Ok(page);
                    }
                    url = next;
                    if !matches!(answer.status, 307 | 308) {
                        method = "GET".into();
                        fields.clear();
                    }
                }
                _ => {
                    let (page, csrf_values) = Page::read(answer, url, redirects).await?;
                    for csrf in csrf_values {
                        self.journal.secrets().register(&csrf);
                    }
                    return Ok(page);
                }
            }
        }
    }

    /// Session cookies are credentials: every value the jar holds is
    /// registered as a secret.
    fn register_cookies(&self) {
        let store = self.cookies.lock().unwrap_or_else(|e| e.into_inner());
        for cookie in store.iter_any() {
            self.journal.secrets().register(cookie.value());
        }
    }
}

impl User for Human {
    fn login(&self) -> &str {
        &self.login
    }

    fn journal(&self) -> &Journal {
        &self.journal
    }

    fn base(&self) -> &url::Url {
        &self.base
    }

    fn jar(&self) -> &CookieStoreMutex {
        &self.cookies
    }

    fn navigate<'a>(
        &'a self,
        method: &'a str,
        url: url::Url,
        fields: Vec<(String, String)>,
    ) -> futures::future::BoxFuture<'a, Step<Page>> {
        Box::pin(self.walk(method, url, fields, &[], false, true))
    }

    fn exchange_in_jar(
        &self,
        request: reqwest::Request,
    ) -> futures::future::BoxFuture<'_, Step<Answer>> {
        Box::pin(Human::exchange_in_jar(self, request))
    }
}

/// Every cookie a real browser held, as [`Human::drop_cookie`] saw them.
/// No `Debug`: values are credentials.
pub struct BrowserCookies(Vec<serde_json::Value>);

/// A cookie as DevTools reads it, in the form `Network.setCookies` takes.
fn settable(mut c: serde_json::Value) -> serde_json::Value {
    if let Some(o) = c.as_object_mut() {
        o.retain(|k, _| {
            matches!(
                k.as_str(),
                "name"
                    | "value"
                    | "domain"
                    | "path"
                    | "secure"
                    | "httpOnly"
                    | "sameSite"
                    | "expires"
            )
        });
        if o.get("expires")
            .and_then(|e| e.as_f64())
            .is_some_and(|e| e < 0.0)
        {
            o.remove("expires");
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::http::{HeaderMap, StatusCode, header};
    use axum::response::{Html, IntoResponse};
    use axum::routing::{get, post};

    /// A tiny site with a login form, a session cookie, and a 307 redirect.
    async fn site() -> String {
        let app = Router::new()
            .route(
                "/user/login",
                get(|| async {
                    (
                        [(header::SET_COOKIE, "sid=session-before-login-1; Path=/")],
                        Html(
                            "<form method=post action=/user/login>\
                             <input type=hidden name=_csrf value=csrf-value-0123>\
                             <input name=user_name><input type=password name=password>\
                             <button>Sign in</button></form>",
                        ),
                    )
                })
                .post(|headers: HeaderMap, body: String| async move {
                    let cookie = headers
                        .get(header::COOKIE)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("");
                    if !cookie
                        .split("; ")
                        .any(|c| c == "sid=session-before-login-1")
                        || !body.contains("_csrf=csrf-value-0123")
                    {
                        return (StatusCode::BAD_REQUEST, "no session or csrf").into_response();
                    }
                    (
                        StatusCode::SEE_OTHER,
                        [
                            (header::LOCATION, "/"),
                            (header::SET_COOKIE, "sid=session-after-login-2; Path=/"),
                        ],
                    )
                        .into_response()
                }),
            )
            .route(
                "/",
                get(|headers: HeaderMap| async move {
                    let cookie = headers
                        .get(header::COOKIE)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_owned();
                    Html(format!("<p>home, cookie {cookie}</p>"))
                }),
            )
            .route(
                "/keep",
                post(|| async {
                    (
                        StatusCode::TEMPORARY_REDIRECT,
                        [(header::LOCATION, "/echo")],
                    )
                }),
            )
            .route("/echo", post(|body: String| async move { body }))
            .route(
                "/csrf-header",
                post(|headers: HeaderMap| async move {
                    let got = headers
                        .get("x-csrf-token")
                        .is_some_and(|v| v == "hdr-csrf-987654");
                    if got { "header seen" } else { "no header" }
                }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        url
    }

    #[tokio::test]
    async fn login_uses_the_form_and_cookie_follows_303_and_records_everything_redacted() {
        let base = site().await;
        let secrets = crate::secrets::SecretRegistry::new();
        let password = secrets.mint("pw");
        let journal = Journal::new(secrets);
        let alice = Human::new("alice", &password, &base, journal.clone()).unwrap();
        let home = alice.login().await.unwrap();
        assert_eq!(home.status, 200);
        assert_eq!(home.url.path(), "/");
        assert_eq!(
            home.redirects,
            vec![(303, format!("{base}/").parse().unwrap())]
        );
        assert!(
            home.html.contains("sid=session-after-login-2"),
            "the new cookie is sent"
        );
        let steps = journal.steps();
        let exchanges: Vec<_> = steps.iter().flat_map(|s| &s.exchanges).collect();
        assert_eq!(exchanges.len(), 3);
        assert_eq!(
            exchanges[1].request_body,
            "_csrf=[redacted]&user_name=alice&password=[redacted]"
        );
        assert_eq!(
            exchanges[2].response_body,
            "<p>home, cookie gg_other_before=1; sid=[redacted]; gg_other_after=1</p>",
            "the Core's cookie is sent among another application's, older first"
        );
        let all = serde_json::to_string(&steps).unwrap();
        for secret in [
            "csrf-value-0123",
            "session-before-login-1",
            "session-after-login-2",
            &password,
        ] {
            assert!(!all.contains(secret), "{secret} leaked into the journal");
        }
    }

    /// A real browser's move at the HTTP level (its cookies copied to the
    /// jar and back) and a navigation at once: the navigation waits, so
    /// the copy back does not undo the cookie it set.
    #[tokio::test]
    async fn a_move_at_the_http_level_does_not_undo_a_navigation_of_its_browser() {
        let app = Router::new()
            .route(
                "/slow",
                post(|| async {
                    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                    "late"
                }),
            )
            .route(
                "/mark",
                get(|| async { ([(header::SET_COOKIE, "mark=1; Path=/")], "marked") }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let driver = crate::browser::Driver::start().await.unwrap();
        let tab = Arc::new(crate::browser::Tab::new(driver.clone()));
        let journal = Journal::new(crate::secrets::SecretRegistry::new());
        let dan = Human::new("dan", "irrelevant-pw", &base, journal)
            .unwrap()
            .in_browser(tab.clone());
        dan.open("/").await.unwrap();
        let form = Form::new("POST", format!("{base}/slow").parse().unwrap(), vec![]);
        let mark = async {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            dan.open("/mark").await
        };
        let (sent, marked) = tokio::join!(dan.send(&form), mark);
        assert_eq!(sent.unwrap().status, 200);
        assert_eq!(marked.unwrap().status, 200);
        let cookies = tab.cookies().await.unwrap();
        let names: Vec<&str> = cookies.iter().filter_map(|c| c["name"].as_str()).collect();
        assert_eq!(names, ["mark"]);
        drop(dan);
        driver.stop().await;
    }

    #[tokio::test]
    async fn a_307_redirect_keeps_method_and_body() {
        let base = site().await;
        let journal = Journal::new(crate::secrets::SecretRegistry::new());
        let bob = Human::new("bob", "irrelevant-pw", &base, journal).unwrap();
        let form = Form::new(
            "POST",
            format!("{base}/keep").parse().unwrap(),
            vec![("a".into(), "b c".into())],
        );
        let page = bob.submit(&form).await.unwrap();
        assert_eq!(
            page.redirects,
            vec![(307, format!("{base}/echo").parse().unwrap())]
        );
        assert_eq!(page.html, "a=b+c");
    }

    #[tokio::test]
    async fn extra_headers_are_sent_and_kept_out_of_the_transcript() {
        let base = site().await;
        let secrets = crate::secrets::SecretRegistry::new();
        let journal = Journal::new(secrets);
        let carol = Human::new("carol", "irrelevant-pw", &base, journal.clone()).unwrap();
        let form = Form::new(
            "POST",
            format!("{base}/csrf-header").parse().unwrap(),
            vec![],
        );
        let page = carol
            .submit_with_headers(&form, &[("X-Csrf-Token", "hdr-csrf-987654")])
            .await
            .unwrap();
        assert_eq!(page.html, "header seen");
        let all = serde_json::to_string(&journal.steps()).unwrap();
        assert!(!all.contains("hdr-csrf-987654"), "{all}");
    }
}
