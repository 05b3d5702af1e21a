//! A cookie-holding browser: real form posts, `_csrf` read from the HTML.

use std::time::Duration;

use scraper::{Html, Selector};

use super::client::Resp;

/// One human's browser.
#[derive(Clone)]
pub struct Browser {
    http: reqwest::Client,
    /// Base URL.
    pub base: String,
}

/// The value of the first hidden `input[name=NAME]` in `html` (not a decoy
/// of `form-controls`).
pub fn input_value(html: &str, name: &str) -> Option<String> {
    let doc = Html::parse_document(html);
    let sel = Selector::parse(&format!("input[type=hidden][name=\"{name}\"]")).ok()?;
    doc.select(&sel)
        .next()
        .and_then(|e| e.value().attr("value"))
        .map(str::to_string)
}

/// The text of the first element matching `css`.
pub fn text_of(html: &str, css: &str) -> Option<String> {
    let doc = Html::parse_document(html);
    let sel = Selector::parse(css).ok()?;
    doc.select(&sel).next().map(|e| e.text().collect())
}

/// Whether any element matches `css`.
pub fn has(html: &str, css: &str) -> bool {
    let doc = Html::parse_document(html);
    Selector::parse(css)
        .map(|sel| doc.select(&sel).next().is_some())
        .unwrap_or(false)
}

impl Browser {
    /// A fresh browser with an empty cookie jar.
    pub fn new(base: &str) -> Self {
        let http = reqwest::Client::builder()
            .cookie_store(true)
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(60))
            .build()
            .expect("reqwest client");
        Browser {
            http,
            base: base.to_string(),
        }
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> Result<Resp, String> {
        Resp::read(
            self.http.get(format!("{}{path}", self.base)),
            &format!("GET {path}"),
        )
        .await
    }

    /// `GET path` with extra headers (e.g. a bot's `Authorization`).
    pub async fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> Result<Resp, String> {
        let mut req = self.http.get(format!("{}{path}", self.base));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        Resp::read(req, &format!("GET {path}")).await
    }

    /// Posts a form.
    pub async fn post_form(&self, path: &str, fields: &[(&str, &str)]) -> Result<Resp, String> {
        self.post_form_with(path, fields, &[]).await
    }

    /// Posts a form with extra headers.
    pub async fn post_form_with(
        &self,
        path: &str,
        fields: &[(&str, &str)],
        headers: &[(&str, &str)],
    ) -> Result<Resp, String> {
        let mut req = self.http.post(format!("{}{path}", self.base)).form(fields);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        Resp::read(req, &format!("POST {path}")).await
    }

    /// Loads the login page and signs in; returns the login POST response.
    pub async fn login(&self, user: &str, password: &str) -> Result<Resp, String> {
        let (_, resp) = self.login_via("/user/login", user, password, None).await?;
        Ok(resp)
    }

    /// Loads the login page at `login_path` (e.g. `/user/login?redirect_to=…`,
    /// the authorize page's detour) and signs in, posting the `redirect_to`
    /// its form carries, or `redirect_to` instead when given (a value the
    /// form may have dropped). Returns the login page and the POST's answer.
    pub async fn login_via(
        &self,
        login_path: &str,
        user: &str,
        password: &str,
        redirect_to: Option<&str>,
    ) -> Result<(Resp, Resp), String> {
        let page = self.get(login_path).await?.expect(200, "login page")?;
        let csrf = input_value(&page.text, "_csrf").ok_or("login page has no _csrf")?;
        let carried = input_value(&page.text, "redirect_to");
        let mut form = vec![
            ("_csrf", csrf.as_str()),
            ("user_name", user),
            ("password", password),
        ];
        if let Some(to) = redirect_to.or(carried.as_deref()) {
            form.push(("redirect_to", to));
        }
        let resp = self.post_form("/user/login", &form).await?;
        Ok((page, resp))
    }

    /// Loads `path` and returns it with the `_csrf` of its first form.
    pub async fn csrf_from(&self, path: &str) -> Result<(Resp, String), String> {
        let page = self.get(path).await?.expect(200, path)?;
        let csrf =
            input_value(&page.text, "_csrf").ok_or_else(|| format!("{path} has no _csrf"))?;
        Ok((page, csrf))
    }
}
