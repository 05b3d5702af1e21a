//! Pages and forms as a browser sees them: HTML parsed with `scraper`, its
//! text read as a browser renders it (`text`), its forms found by what they
//! send and filled as the HTML standard submits them (`forms`).

mod forms;
mod text;

use scraper::{Html, Selector};

use crate::limits;
use crate::vocab::{Abort, Step};

/// A page the browser ended up on after following redirects.
#[derive(Debug, Clone)]
pub struct Page {
    /// Status of the final answer.
    pub status: u16,
    /// URL of the final answer.
    pub url: url::Url,
    /// The HTML.
    pub html: String,
    /// Every redirect followed on the way, as `(status, target)`: the
    /// `Location` resolved against the request URL, so a relative and an
    /// absolute redirect to the same place read the same.
    pub redirects: Vec<(u16, url::Url)>,
    /// In a real browser: the page's `innerText` as the browser rendered it.
    pub(crate) inner_text: Option<String>,
    /// In a real browser: which document of the browser this is, so that
    /// its forms are submitted by clicking their buttons.
    pub(crate) doc: Option<u64>,
}

impl Page {
    /// The page of a final answer, with the values of its `_csrf` inputs.
    /// The HTML is checked before html5ever sees it (strict UTF-8, at most
    /// [`limits::HTML_LIMIT`] bytes, nested at most [`limits::HTML_DEPTH`]
    /// deep) and parsed off the async workers within
    /// [`limits::HTML_PARSE_TIMEOUT`]: a hostile page fails its trial by
    /// name instead of stalling the run. Every later parse of the page is
    /// of HTML that passed these checks.
    pub(crate) async fn read(
        answer: super::http::Answer,
        url: url::Url,
        redirects: Vec<(u16, url::Url)>,
    ) -> Step<(Page, Vec<String>)> {
        answer.text()?;
        let (status, html) = (answer.status, answer.body);
        Self::checked(Page {
            status,
            url,
            html,
            redirects,
            inner_text: None,
            doc: None,
        })
        .await
    }

    /// The page a real browser shows, checked and parsed as
    /// [`read`](Self::read) does, with the values of its `_csrf` inputs.
    pub(crate) async fn from_browser(shown: crate::browser::Shown) -> Step<(Page, Vec<String>)> {
        Self::checked(Page {
            status: shown.status,
            url: shown.url,
            html: shown.html,
            redirects: shown.redirects,
            inner_text: Some(shown.text),
            doc: Some(shown.doc),
        })
        .await
    }

    /// [`read`](Self::read)'s checks and parse.
    async fn checked(page: Page) -> Step<(Page, Vec<String>)> {
        let (status, url) = (page.status, page.url.clone());
        let html = &page.html;
        if html.len() > limits::HTML_LIMIT {
            return Err(Abort::failed(format!(
                "{url} answered {status} with a page of {} bytes, over the harness's limit of {}",
                html.len(),
                limits::HTML_LIMIT
            )));
        }
        let depth = limits::html_depth(html);
        if depth > limits::HTML_DEPTH {
            return Err(Abort::failed(format!(
                "{url} answered {status} with a page whose elements nest {depth} deep, over the harness's limit of {}",
                limits::HTML_DEPTH
            )));
        }
        let parse = tokio::task::spawn_blocking(move || {
            let csrf = page.csrf_secrets();
            (page, csrf)
        });
        match tokio::time::timeout(limits::HTML_PARSE_TIMEOUT, parse).await {
            Ok(Ok(read)) => Ok(read),
            Ok(Err(e)) => Err(Abort::errored(format!("parsing a page: {e}"))),
            Err(_) => Err(Abort::failed(format!(
                "a page of {status} could not be parsed within {:?}",
                limits::HTML_PARSE_TIMEOUT
            ))),
        }
    }

    /// Every way to submit a form of the page, as the HTML standard builds
    /// it: each form once per enabled submit button that could be clicked
    /// (once without one when it has none), with the controls it owns (its
    /// descendants without a `form` attribute, and any element whose `form`
    /// names its `id`), the action and method that button gives it.
    pub fn submissions(&self) -> Vec<Form> {
        let mut forms = forms::submissions(&Html::parse_document(&self.html), &self.url);
        for form in &mut forms {
            form.dom = match (self.doc, form.dom) {
                (Some(doc), Some((_, index))) => Some((doc, index)),
                _ => None,
            };
        }
        forms
    }

    /// The form (and the submit button) that sends `name=value` to `path`:
    /// the button's own pair, or a control of the form holding that value
    /// (e.g. a consent page's one form with `granted=true|false` buttons, or
    /// two forms each with a hidden `granted`). Found by what it sends, never
    /// by position.
    pub fn form_sending(&self, path: &str, name: &str, value: &str) -> Step<Form> {
        self.submissions()
            .into_iter()
            .find(|f| f.posts_to(path) && f.sends(name, value))
            .ok_or_else(|| {
                Abort::failed(format!(
                    "{} (status {}) has no form posting to {path} that sends {name}={value}",
                    self.url, self.status
                ))
            })
    }

    /// A form that sends a field named `field` (the login form has
    /// `user_name`, the new-grant form `task`): forms are found by what the
    /// contract names, never by markup.
    pub fn form_with_field(&self, field: &str) -> Step<Form> {
        self.submissions()
            .into_iter()
            .find(|f| f.fields.iter().any(|(n, _)| n == field))
            .ok_or_else(|| {
                Abort::failed(format!(
                    "{} (status {}) has no form with a field named {field}",
                    self.url, self.status
                ))
            })
    }

    /// A form that posts to the path `path` (e.g. a grant's `/approve`;
    /// every form the contract names is a POST), its action resolved against
    /// the page, with the submit button that sends it there (a button's
    /// `formaction` and `formmethod` count), whatever its markup.
    pub fn form_to(&self, path: &str) -> Step<Form> {
        self.submissions()
            .into_iter()
            .find(|f| f.posts_to(path))
            .ok_or_else(|| {
                Abort::failed(format!(
                    "{} (status {}) has no form posting to {path}",
                    self.url, self.status
                ))
            })
    }

    /// Whether the page holds a form that posts to the path `path`.
    pub fn has_form_to(&self, path: &str) -> bool {
        self.submissions().iter().any(|f| f.posts_to(path))
    }

    /// Everything a person reads on the page, as a browser renders it
    /// (its `innerText`, as `page/text.rs` reads it), with runs of whitespace
    /// as one space.
    pub fn text(&self) -> String {
        if let Some(text) = &self.inner_text {
            return normalise(text);
        }
        normalise(&text::inner_text(&Html::parse_document(&self.html)))
    }

    /// Whether a person reads `needle` on the page (whitespace runs compared
    /// as one space, so line breaks in markup do not matter; nothing else is
    /// loosened).
    pub fn shows(&self, needle: &str) -> bool {
        self.text().contains(&normalise(needle))
    }

    /// How the page was reached, in words: `status 200 at /x after [[303,
    /// "/y"]]` (each redirect's status and target path, as JSON).
    pub fn arrival(&self) -> String {
        let trail: Vec<(u16, &str)> = (self.redirects.iter())
            .map(|(status, to)| (*status, to.path()))
            .collect();
        format!(
            "status {} at {} after {}",
            self.status,
            self.url.path(),
            crate::journal::json_text(&trail)
        )
    }

    /// The first redirect followed, as `(status, absolute target)`.
    pub fn first_redirect(&self) -> Option<(u16, url::Url)> {
        self.redirects.first().cloned()
    }

    /// The `_csrf` values the page's forms send (each once, in document
    /// order; a disabled or unchecked decoy is no value): what a hand-built
    /// form sends as the session's `_csrf`.
    pub fn csrf_values(&self) -> Vec<String> {
        let mut values: Vec<String> = Vec::new();
        for form in self.submissions() {
            for (name, value) in form.fields {
                if name == "_csrf" && !values.contains(&value) {
                    values.push(value);
                }
            }
        }
        values
    }

    /// The value of every input named `_csrf`, sent or not, to register
    /// as secrets: none reaches a report, whichever a form sends.
    fn csrf_secrets(&self) -> Vec<String> {
        let doc = Html::parse_document(&self.html);
        let sel = Selector::parse("input[name=\"_csrf\"]").expect("static selector");
        doc.select(&sel)
            .filter_map(|e| e.value().attr("value").map(str::to_owned))
            .collect()
    }
}

/// Runs of whitespace as one space, trimmed.
fn normalise(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A filled-in form, ready to submit: its fields as a browser sends them
/// with one submit button clicked.
#[derive(Debug, Clone)]
pub struct Form {
    /// `GET` or `POST`: the clicked button's `formmethod`, else the form's
    /// `method`.
    pub method: String,
    /// The absolute action URL: the clicked button's `formaction`, else the
    /// form's `action`, resolved against the page (empty = the page's URL).
    pub action: url::Url,
    /// Fields in document order, as `(name, value)`, the clicked button's
    /// own pair last.
    pub fields: Vec<(String, String)>,
    /// Every submit button of the form that can be clicked.
    submitters: Vec<forms::Submitter>,
    /// The one clicked, if any (index into `submitters`).
    clicked: Option<usize>,
    /// In a real browser: the document it was read from and its place among
    /// that document's forms.
    pub(crate) dom: Option<(u64, usize)>,
}

impl Form {
    /// A form a scenario writes itself (no page, no submit buttons).
    pub fn new(method: &str, action: url::Url, fields: Vec<(String, String)>) -> Form {
        Form {
            method: method.to_owned(),
            action,
            fields,
            submitters: Vec::new(),
            clicked: None,
            dom: None,
        }
    }

    /// The submit button a browser clicks to send it (index among the
    /// form's clickable buttons), if it has one.
    pub(crate) fn button(&self) -> Option<usize> {
        self.clicked
    }

    /// Whether the form, submitted as it is, posts to the path `path`.
    pub fn posts_to(&self, path: &str) -> bool {
        self.method == "POST" && self.action.path() == path
    }

    /// Whether submitting the form as it is sends `name=value`.
    pub fn sends(&self, name: &str, value: &str) -> bool {
        self.fields.iter().any(|(n, v)| n == name && v == value)
    }

    /// Clicks the form's submit button `name=value` instead of the one
    /// clicked, as a person choosing between buttons does: only that
    /// button's pair is sent, with its `formaction` and `formmethod`. A form
    /// without that button is the page's failure.
    pub fn click(&mut self, name: &str, value: &str) -> Step<&mut Self> {
        let Some(i) = self
            .submitters
            .iter()
            .position(|s| s.entry.iter().any(|(n, v)| n == name && v == value))
        else {
            return Err(Abort::failed(format!(
                "the form to {} has no submit button {name}={value}",
                self.action.path()
            )));
        };
        if let Some(old) = self.clicked.map(|c| self.submitters[c].entry.clone()) {
            for pair in old {
                if let Some(at) = self.fields.iter().rposition(|f| *f == pair) {
                    self.fields.remove(at);
                }
            }
        }
        let chosen = &self.submitters[i];
        self.fields.extend(chosen.entry.iter().cloned());
        self.action = chosen.action.clone();
        self.method = chosen.method.clone();
        self.clicked = Some(i);
        Ok(self)
    }

    /// Sets a field (replacing every earlier value of that name), as typing
    /// into it would.
    pub fn set(&mut self, name: &str, value: &str) -> &mut Self {
        if let Some(i) = self.fields.iter().position(|(n, _)| n == name) {
            self.fields[i].1 = value.to_owned();
            let mut seen = false;
            self.fields.retain(|(n, _)| {
                if n != name {
                    return true;
                }
                let keep = !seen;
                seen = true;
                keep
            });
        } else {
            self.fields.push((name.to_owned(), value.to_owned()));
        }
        self
    }

    /// Removes a field entirely (e.g. to send a form without its `_csrf`).
    pub fn remove(&mut self, name: &str) -> &mut Self {
        self.fields.retain(|(n, _)| n != name);
        self
    }

    /// The value of a field, if present.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HTML: &str = r#"<html><body>
      <form method="post" action="/alice/lab/agent-work-grants/3/approve">
        <input type="hidden" name="_csrf" value="tok+en/=">
        <input type="hidden" name="state_revision" value="2">
        <input type="checkbox" name="unchecked">
        <input type="text" name="disabled" disabled value="x">
        <textarea name="task">line one
line two</textarea>
        <select name="agent"><option value="a">A</option><option value="b" selected>B</option></select>
        <button type="submit" name="go" value="yes">Approve</button>
        <button type="submit" name="other" value="no">Other</button>
      </form></body></html>"#;

    fn page_of(html: &str) -> Page {
        Page {
            status: 200,
            url: "http://127.0.0.1:9/alice/lab/agent-work-grants/3"
                .parse()
                .unwrap(),
            html: html.into(),
            redirects: vec![],
            inner_text: None,
            doc: None,
        }
    }

    fn page() -> Page {
        page_of(HTML)
    }

    fn names(form: &Form) -> Vec<&str> {
        form.fields.iter().map(|(n, _)| n.as_str()).collect()
    }

    #[test]
    fn a_form_is_filled_the_way_a_browser_fills_it() {
        let form = page()
            .form_to("/alice/lab/agent-work-grants/3/approve")
            .unwrap();
        assert_eq!(form.method, "POST");
        assert_eq!(
            form.action.as_str(),
            "http://127.0.0.1:9/alice/lab/agent-work-grants/3/approve"
        );
        assert_eq!(
            names(&form),
            ["_csrf", "state_revision", "task", "agent", "go"]
        );
        assert_eq!(form.field("_csrf"), Some("tok+en/="));
        assert_eq!(form.field("task"), Some("line one\nline two"));
        assert_eq!(form.field("agent"), Some("b"));
        assert_eq!(page().csrf_values(), ["tok+en/="]);
    }

    #[test]
    fn forms_inside_a_template_are_no_part_of_the_page() {
        let page = page_of(&format!(
            r#"<html><body><template id="copy">
              <form method="post" action="/alice/lab/agent-work-grants/3/approve">
                <input type="hidden" name="_csrf" value="PLACEHOLDER"><button>Approve</button>
              </form><input form="real" name="smuggled" value="x"></template>
              {}</body></html>"#,
            HTML.replace("<form ", r#"<form id="real" "#)
                .trim_start_matches("<html><body>")
                .trim_end_matches("</body></html>")
        ));
        let form = page
            .form_to("/alice/lab/agent-work-grants/3/approve")
            .unwrap();
        assert_eq!(form.field("_csrf"), Some("tok+en/="), "the rendered form's");
        assert_eq!(
            form.field("smuggled"),
            None,
            "a templated control owns nothing"
        );
        assert_eq!(page.csrf_values(), ["tok+en/="]);
    }

    #[test]
    fn clicking_a_button_sends_it_instead_of_the_first() {
        let mut form = page().form_with_field("task").unwrap();
        form.click("other", "no").unwrap();
        assert_eq!(form.field("go"), None);
        assert_eq!(form.field("other"), Some("no"));
        let err = form.click("granted", "true").unwrap_err();
        assert!(matches!(err, Abort::Failed(m) if m.contains("no submit button granted=true")));
    }

    #[test]
    fn a_missing_form_is_a_contract_failure() {
        let err = page()
            .form_to("/alice/lab/agent-work-grants/3/withdraw")
            .unwrap_err();
        assert!(matches!(err, Abort::Failed(m) if m.contains("no form posting to")));
        let err = page().form_with_field("user_name").unwrap_err();
        assert!(
            matches!(err, Abort::Failed(m) if m.contains("no form with a field named user_name"))
        );
    }

    #[test]
    fn set_and_remove_change_the_fields() {
        let mut form = page().form_with_field("task").unwrap();
        form.set("state_revision", "1")
            .remove("_csrf")
            .set("extra", "v");
        assert_eq!(form.field("state_revision"), Some("1"));
        assert_eq!(form.field("_csrf"), None);
        assert_eq!(form.field("extra"), Some("v"));
    }

    #[test]
    fn a_form_owns_controls_joined_by_its_id_and_not_those_sent_elsewhere() {
        let page = page_of(
            r#"<input form="f" type="hidden" name="_csrf" value="t">
            <form id="f" method="post" action="/a"><input name="mine" value="1">
              <input form="g" name="theirs" value="2"><input form="nowhere" name="lost" value="3"></form>
            <form id="g" method="post" action="/b"></form>
            <div id="h"></div><input form="h" name="no_form" value="4">
            <button form="f" name="go" value="yes">Go</button>"#,
        );
        let a = page.form_to("/a").unwrap();
        assert_eq!(
            a.fields,
            [
                ("_csrf".into(), "t".into()),
                ("mine".into(), "1".into()),
                ("go".into(), "yes".into())
            ]
        );
        let b = page.form_to("/b").unwrap();
        assert_eq!(names(&b), ["theirs"]);
        assert!(page.submissions().iter().all(|f| f.field("lost").is_none()));
        assert!(
            page.submissions()
                .iter()
                .all(|f| f.field("no_form").is_none())
        );
    }

    #[test]
    fn only_enabled_named_and_checked_controls_are_sent() {
        let page = page_of(
            r#"<form method="POST" action="/a">
              <input name="text" value="a&#10;b"><input type="TEXT" name="upper" value="u">
              <input type="bogus" name="unknown" value="k"><input value="unnamed"><input name="" value="e">
              <input type="checkbox" name="on" checked><input type="checkbox" name="cb" value="v" checked>
              <input type="checkbox" name="off" value="x"><input type="radio" name="r" value="1">
              <input type="radio" name="r" value="2" checked>
              <input type="reset" name="reset"><input type="button" name="btn" value="b">
              <button type="button" name="button" value="b">B</button><button type="reset" name="rb">R</button>
              <input name="dis" disabled value="d">
              <fieldset disabled><legend><input name="in_legend" value="l"></legend><input name="in_set" value="s"></fieldset>
              <datalist><input name="listed" value="l"></datalist>
              <select name="single"><option disabled>x</option><option>  first   enabled </option><option>z</option></select>
              <select name="multi" multiple><option selected value="1">a</option><option value="2">b</option><option selected value="3">c</option></select>
              <select name="none" multiple><option>a</option></select>
              <select name="two_selected"><option selected>a</option><option selected>b</option></select>
              <select name="off_opt"><optgroup disabled><option selected>g</option></optgroup></select>
              <textarea name="area">
kept</textarea><textarea name="dis_area" disabled>x</textarea>
            </form>"#,
        );
        let form = page.form_to("/a").unwrap();
        assert_eq!(form.method, "POST");
        let pairs: Vec<(&str, &str)> = form
            .fields
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("text", "ab"),
                ("upper", "u"),
                ("unknown", "k"),
                ("on", "on"),
                ("cb", "v"),
                ("r", "2"),
                ("in_legend", "l"),
                ("single", "first enabled"),
                ("multi", "1"),
                ("multi", "3"),
                ("two_selected", "b"),
                ("area", "kept"),
            ]
        );
    }

    #[test]
    fn the_clicked_submitter_alone_is_sent_with_its_own_action_and_method() {
        let page = page_of(
            r#"<base href="/base/"><form action="decide"><input type="hidden" name="_csrf" value="t">
              <button name="d" value="approve">Approve</button>
              <button name="d" value="withdraw" formaction="/g/withdraw" formmethod="post">Withdraw</button>
              <button name="d" value="off" disabled>Off</button>
              <input type="image" name="pic" src="x.png" formaction="" formmethod="POST">
              <input type="submit" value="Unnamed" formmethod="bogus" formaction="/g/plain">
            </form><form method="post"><input name="here" value="1"></form>"#,
        );
        let get_to = |path: &str| {
            page.submissions()
                .into_iter()
                .find(|f| f.action.path() == path)
                .unwrap()
        };
        let first = get_to("/base/decide");
        // Every form the contract names posts: a GET to the same path is not it.
        assert!(!page.has_form_to("/base/decide"));
        assert_eq!(
            (first.method.as_str(), first.field("d")),
            ("GET", Some("approve"))
        );
        let withdraw = page.form_to("/g/withdraw").unwrap();
        assert_eq!(withdraw.method, "POST");
        assert_eq!(names(&withdraw), ["_csrf", "d"]);
        assert_eq!(withdraw.field("d"), Some("withdraw"));
        let image = page
            .form_sending("/alice/lab/agent-work-grants/3", "pic.x", "0")
            .unwrap();
        assert_eq!(names(&image), ["_csrf", "pic.x", "pic.y"]);
        let plain = get_to("/g/plain");
        assert_eq!(
            (plain.method.as_str(), names(&plain)),
            ("GET", vec!["_csrf"])
        );
        assert!(
            page.submissions()
                .iter()
                .all(|f| f.field("d") != Some("off"))
        );
        // Clicking another button moves the form to that button's action.
        let mut form = first.clone();
        form.click("d", "withdraw").unwrap();
        assert_eq!(
            (form.action.path(), form.method.as_str()),
            ("/g/withdraw", "POST")
        );
        assert_eq!(form.fields.iter().filter(|(n, _)| n == "d").count(), 1);
        // No action: the page's own URL, with the page's query.
        let here = page.form_with_field("here").unwrap();
        assert_eq!(here.action, page.url);
        assert_eq!(here.method, "POST");
    }

    #[test]
    fn a_form_is_chosen_by_what_it_sends_not_by_position() {
        let page = page_of(
            r#"<form method="post" action="/login/oauth/grant"><input type="hidden" name="_csrf" value="t">
              <input type="hidden" name="granted" value="true"><button>Authorize</button></form>
            <form method="post" action="/login/oauth/grant"><input type="hidden" name="_csrf" value="t">
              <button name="granted" value="false">Deny</button></form>"#,
        );
        let deny = page
            .form_sending("/login/oauth/grant", "granted", "false")
            .unwrap();
        assert_eq!(names(&deny), ["_csrf", "granted"]);
        let allow = page
            .form_sending("/login/oauth/grant", "granted", "true")
            .unwrap();
        assert_eq!(allow.field("granted"), Some("true"));
        let err = page
            .form_sending("/login/oauth/grant", "granted", "maybe")
            .unwrap_err();
        assert!(
            matches!(err, Abort::Failed(m) if m.contains("no form posting to /login/oauth/grant that sends granted=maybe"))
        );
        let one = page_of(HTML);
        let other = one
            .form_sending("/alice/lab/agent-work-grants/3/approve", "other", "no")
            .unwrap();
        assert_eq!(other.field("go"), None);
    }

    #[test]
    fn text_is_read_as_rendered() {
        let page = page_of(
            "<head><title>T</title><style>p{}</style></head><body>\
             <dd>issue_<wbr>deleted</dd><p>9a14<span>f868</span>-<b>4ea0</b>&#95;x&amp;y</p>\
             <div>one</div><div>two</div>a<br>b<table><tr><td>c</td><td>d</td></tr></table>\
             <script>no</script><template>no</template><p hidden>no</p><input type=hidden value=no>\
             <textarea>no</textarea><details><summary>sum</summary>no</details>\
             <details open><summary>s</summary>yes</details>\
             <ul><li>l1</li><li>l2</li></ul>via <a href=/x>agent</a> work grant #<code>7</code></body>",
        );
        assert_eq!(
            page.text(),
            "issue_deleted 9a14f868-4ea0_x&y one two a b c d sum s yes l1 l2 via agent work grant #7"
        );
        assert!(page.shows("issue_deleted"));
        assert!(page.shows("via agent work grant #7"));
        assert!(!page.shows("no"));
    }
}

#[cfg(test)]
mod browser_test;
