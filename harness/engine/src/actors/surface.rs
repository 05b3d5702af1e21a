//! Where a human's moves land: the HTTP level ([`Http`]: reqwest, a cookie
//! jar and an HTML parser) or a real browser ([`Chromium`], `--browser
//! chromium`). A human opens, submits and exchanges through its surface
//! without asking which it is; the surface sees the human only as a
//! [`User`].

use std::sync::Arc;

use futures::future::BoxFuture;
use reqwest_cookie_store::CookieStoreMutex;

use super::http::Answer;
use super::page::{Form, Page};
use crate::browser::{Shown, Tab};
use crate::journal::Journal;
use crate::vocab::Step;

/// How long a picture of a browser whose navigation failed may take.
const SPOILED_PICTURE: std::time::Duration = std::time::Duration::from_secs(2);

/// What a surface needs of the human who uses it.
pub(super) trait User: Sync {
    /// The login, which names the human's exchanges and pictures.
    fn login(&self) -> &str;
    /// The trial's journal.
    fn journal(&self) -> &Journal;
    /// The Core's origin.
    fn base(&self) -> &url::Url;
    /// The human's cookie jar (the HTTP level's).
    fn jar(&self) -> &CookieStoreMutex;
    /// A navigation at the HTTP level with the jar as it is, following
    /// redirects.
    fn navigate<'a>(
        &'a self,
        method: &'a str,
        url: url::Url,
        fields: Vec<(String, String)>,
    ) -> BoxFuture<'a, Step<Page>>;
    /// One request with the jar as it is, its cookies registered as secrets.
    fn exchange_in_jar(&self, request: reqwest::Request) -> BoxFuture<'_, Step<Answer>>;
}

/// One way for a human to use the Core's pages.
pub(super) trait Surface: Send + Sync {
    /// Opens `url` as typing it into the address bar does, following
    /// redirects.
    fn open<'a>(&'a self, human: &'a dyn User, url: &'a url::Url) -> BoxFuture<'a, Step<Page>>;

    /// Submits `form` as a person does, following redirects.
    fn submit<'a>(&'a self, human: &'a dyn User, form: &'a Form) -> BoxFuture<'a, Step<Page>>;

    /// One request at the HTTP level with this human's cookies.
    fn exchange<'a>(
        &'a self,
        human: &'a dyn User,
        request: reqwest::Request,
    ) -> BoxFuture<'a, Step<Answer>>;

    /// Text as this surface submits it in a form field.
    fn as_submitted(&self, text: &str) -> String;

    /// Adds the page shown now to the trial's page trail, with a
    /// screenshot (`failed` where a step or the trial failed).
    fn picture<'a>(&'a self, human: &'a dyn User, failed: bool) -> BoxFuture<'a, ()>;

    /// The real browser, if this is one.
    fn tab(&self) -> Option<&Arc<Tab>>;
}

/// The HTTP level: the human's own client, jar and redirect walk.
pub(super) struct Http;

impl Surface for Http {
    fn open<'a>(&'a self, human: &'a dyn User, url: &'a url::Url) -> BoxFuture<'a, Step<Page>> {
        human.navigate("GET", url.clone(), Vec::new())
    }

    fn submit<'a>(&'a self, human: &'a dyn User, form: &'a Form) -> BoxFuture<'a, Step<Page>> {
        human.navigate(&form.method, form.action.clone(), form.fields.clone())
    }

    fn exchange<'a>(
        &'a self,
        human: &'a dyn User,
        request: reqwest::Request,
    ) -> BoxFuture<'a, Step<Answer>> {
        human.exchange_in_jar(request)
    }

    /// HTTP-level browsers send the text as it is.
    fn as_submitted(&self, text: &str) -> String {
        text.to_owned()
    }

    /// An HTTP-level browser shows no picture.
    fn picture<'a>(&'a self, _: &'a dyn User, _: bool) -> BoxFuture<'a, ()> {
        Box::pin(std::future::ready(()))
    }

    fn tab(&self) -> Option<&Arc<Tab>> {
        None
    }
}

/// A real browser: pages opened and forms submitted by clicking their
/// buttons in it, which keeps the cookies. The few moves a browser has no
/// way to make (a request with extra headers, an answer read before its
/// redirect is followed) are made at the HTTP level with the browser's own
/// cookies, copied to the jar and back, as a person with the browser's
/// developer tools would.
pub(super) struct Chromium(pub(super) Arc<Tab>);

impl Surface for Chromium {
    fn open<'a>(&'a self, human: &'a dyn User, url: &'a url::Url) -> BoxFuture<'a, Step<Page>> {
        Box::pin(async move { shown(&self.0, human, "GET", self.0.goto(url).await).await })
    }

    /// Submits `form` in the real browser ([`Tab::submit`]); a GET form is
    /// a navigation to its URL. A form the browser does not show (from an
    /// older page, or built by hand) is an edit of the page, not a button a
    /// person clicks: it goes at the HTTP level with the browser's cookies,
    /// as the moves a browser cannot make do, unless a value holds a line
    /// break (the browser's own form encoding sends that).
    fn submit<'a>(&'a self, human: &'a dyn User, form: &'a Form) -> BoxFuture<'a, Step<Page>> {
        Box::pin(async move {
            if form.method == "GET" && form.dom.is_none() {
                let mut url = form.action.clone();
                if !form.fields.is_empty() {
                    url.query_pairs_mut().extend_pairs(form.fields.iter());
                }
                return self.open(human, &url).await;
            }
            let shown = self
                .0
                .submit(
                    form.dom,
                    form.button(),
                    &form.method,
                    &form.action,
                    &form.fields,
                )
                .await
                .transpose();
            match shown {
                Some(shown) => self::shown(&self.0, human, "click", shown).await,
                None => self.edit(human, form).await,
            }
        })
    }

    /// The request with the browser's cookies ([`Chromium::in_jar`]).
    fn exchange<'a>(
        &'a self,
        human: &'a dyn User,
        request: reqwest::Request,
    ) -> BoxFuture<'a, Step<Answer>> {
        Box::pin(self.in_jar(human, human.exchange_in_jar(request)))
    }

    /// A real browser sends every line break of a field as CRLF (the HTML
    /// standard's form encoding), so the Core receives — and must keep
    /// whole — that text.
    fn as_submitted(&self, text: &str) -> String {
        text.replace("\r\n", "\n")
            .replace('\r', "\n")
            .replace('\n', "\r\n")
    }

    fn picture<'a>(&'a self, human: &'a dyn User, failed: bool) -> BoxFuture<'a, ()> {
        Box::pin(picture(&self.0, human, failed))
    }

    fn tab(&self) -> Option<&Arc<Tab>> {
        Some(&self.0)
    }
}

impl Chromium {
    /// Sends an edit of the page at the HTTP level, redirects followed,
    /// with the browser's cookies ([`Chromium::in_jar`]).
    async fn edit(&self, human: &dyn User, form: &Form) -> Step<Page> {
        let edited = form.fields.clone();
        let walk = human.navigate(&form.method, form.action.clone(), edited);
        self.in_jar(human, walk).await
    }

    /// Runs `go`, a move at the HTTP level, with the browser's cookies
    /// copied to the jar before it and back after it (when its answers
    /// changed them), while the browser does nothing else: a navigation
    /// between the copies would go without the session, or undo what the
    /// answers set.
    async fn in_jar<T>(&self, human: &dyn User, go: BoxFuture<'_, Step<T>>) -> Step<T> {
        let _turn = self.0.hold().await;
        self.jar_from_browser(human).await?;
        let before = jar_cookies(human);
        let done = go.await;
        if jar_cookies(human) != before {
            self.browser_from_jar(human).await?;
        }
        done
    }

    /// Copies the browser's cookies into the jar (before an HTTP-level move).
    async fn jar_from_browser(&self, human: &dyn User) -> Step<()> {
        let cookies = self.0.cookies().await?;
        let mut store = human.jar().lock().unwrap_or_else(|e| e.into_inner());
        store.clear();
        for c in cookies {
            let (Some(name), Some(value), Some(domain)) = (
                c["name"].as_str(),
                c["value"].as_str(),
                c["domain"].as_str(),
            ) else {
                continue;
            };
            let path = c["path"].as_str().unwrap_or("/").to_owned();
            let mut raw = cookie_store::RawCookie::build((name.to_owned(), value.to_owned()))
                .path(path.clone())
                .http_only(c["httpOnly"].as_bool().unwrap_or(false))
                .build();
            let host = domain.trim_start_matches('.');
            if domain.starts_with('.') {
                raw.set_domain(host.to_owned());
            }
            if let Ok(url) = url::Url::parse(&format!("{}://{host}{path}", human.base().scheme())) {
                let _ = store.insert_raw(&raw, &url);
            }
        }
        Ok(())
    }

    /// Copies the jar's cookies into the browser (after an HTTP-level move).
    async fn browser_from_jar(&self, human: &dyn User) -> Step<()> {
        let cookies: Vec<serde_json::Value> = {
            let store = human.jar().lock().unwrap_or_else(|e| e.into_inner());
            store
                .iter_unexpired()
                .map(|c| {
                    let mut v = serde_json::json!({
                        "name": c.name(),
                        "value": c.value(),
                        "url": human.base().as_str(),
                        "path": c.path().unwrap_or("/"),
                        "httpOnly": c.http_only().unwrap_or(false),
                    });
                    if let Some(same_site) = c.same_site() {
                        v["sameSite"] = same_site.to_string().into();
                    }
                    v
                })
                .collect()
        };
        self.0.set_cookies(cookies).await
    }
}

/// The jar's cookies, to tell whether answers changed them.
fn jar_cookies(human: &dyn User) -> Vec<String> {
    let store = human.jar().lock().unwrap_or_else(|e| e.into_inner());
    let mut all: Vec<String> = store.iter_unexpired().map(|c| c.to_string()).collect();
    all.sort();
    all
}

/// Adds the page `tab` shows now to the trial's page trail, with a
/// screenshot. A browser that cannot say what it shows adds nothing.
async fn picture(tab: &Tab, human: &dyn User, failed: bool) {
    let picture = async {
        let place = tab
            .script("return [location.href, document.title];", vec![])
            .await
            .ok()?;
        Some(crate::vocab::Picture {
            actor: human.login().to_owned(),
            url: place[0].as_str().unwrap_or("").to_owned(),
            title: place[1].as_str().unwrap_or("").to_owned(),
            failed,
            png: tab.screenshot().await.ok(),
            ..Default::default()
        })
    };
    // A browser whose page never ended loading answers each command
    // only after a page load's timeout: it gets a few seconds, once.
    let picture = if tab.spoiled() {
        if !tab.last_picture() {
            return;
        }
        tokio::time::timeout(SPOILED_PICTURE, picture)
            .await
            .ok()
            .flatten()
    } else {
        picture.await
    };
    if let Some(picture) = picture {
        human.journal().picture(picture);
    }
}

/// A page the real browser `tab` shows, recorded and its secrets
/// registered.
pub(super) async fn shown(
    tab: &Tab,
    human: &dyn User,
    how: &str,
    shown: Step<Shown>,
) -> Step<Page> {
    let shown = match shown {
        Ok(shown) => shown,
        Err(abort) => {
            picture(tab, human, true).await;
            return Err(abort);
        }
    };
    for cookie in &shown.cookies {
        human.journal().secrets().register(cookie);
    }
    human.journal().exchange(crate::vocab::Exchange {
        actor: human.login().to_owned(),
        kind: "browser".into(),
        method: how.to_owned(),
        target: shown.url.to_string(),
        status: shown.status,
        response_body: format!("{}\n{}", shown.title, shown.text),
        elapsed_ms: shown.elapsed_ms,
        ..Default::default()
    });
    // The page trail, without a screenshot: taking one per page would
    // double a browser trial's time.
    human.journal().picture(crate::vocab::Picture {
        actor: human.login().to_owned(),
        url: shown.url.to_string(),
        title: shown.title.clone(),
        ..Default::default()
    });
    let (page, csrf) = Page::from_browser(shown).await?;
    for csrf in csrf {
        human.journal().secrets().register(&csrf);
    }
    Ok(page)
}
