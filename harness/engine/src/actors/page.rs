//! Pages and forms as a browser sees them: HTML parsed with `scraper`, forms
//! found by selector and filled the way a browser fills them (every hidden
//! input, the form's own `_csrf`, its action and method).

use scraper::{ElementRef, Html, Selector};

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
        if html.len() > limits::HTML_LIMIT {
            return Err(Abort::failed(format!(
                "{url} answered {status} with a page of {} bytes, over the harness's limit of {}",
                html.len(),
                limits::HTML_LIMIT
            )));
        }
        let depth = limits::html_depth(&html);
        if depth > limits::HTML_DEPTH {
            return Err(Abort::failed(format!(
                "{url} answered {status} with a page whose elements nest {depth} deep, over the harness's limit of {}",
                limits::HTML_DEPTH
            )));
        }
        let parse = tokio::task::spawn_blocking(move || {
            let page = Page {
                status,
                url,
                html,
                redirects,
            };
            let csrf = page.csrf_values();
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

    /// The first form matching `selector` (a CSS selector such as
    /// `form[action$="/approve"]`), with its fields as a browser would send
    /// them. Missing form = contract failure: the page lacks what the spec
    /// says it holds.
    pub(crate) fn form(&self, selector: &str) -> Step<Form> {
        let doc = Html::parse_document(&self.html);
        let sel = parse_selector(selector)?;
        let form = doc.select(&sel).next().ok_or_else(|| {
            Abort::failed(format!(
                "{} (status {}) has no form matching `{selector}`",
                self.url, self.status
            ))
        })?;
        Form::from_element(form, &self.url)
    }

    /// The first form that has a field named `field` (the login form has
    /// `user_name`, the new-grant form `task`): forms are found by what the
    /// contract names, never by markup.
    pub fn form_with_field(&self, field: &str) -> Step<Form> {
        self.form(&format!("form:has([name=\"{field}\"])"))
    }

    /// The first form whose `action`, resolved against the page, has the
    /// path `path` (e.g. a grant's `/approve`), whatever its markup.
    pub fn form_to(&self, path: &str) -> Step<Form> {
        self.forms_to(path).into_iter().next().ok_or_else(|| {
            Abort::failed(format!(
                "{} (status {}) has no form whose action is {path}",
                self.url, self.status
            ))
        })
    }

    /// Whether the page holds a form whose action has the path `path`.
    pub fn has_form_to(&self, path: &str) -> bool {
        !self.forms_to(path).is_empty()
    }

    fn forms_to(&self, path: &str) -> Vec<Form> {
        let doc = Html::parse_document(&self.html);
        let sel = Selector::parse("form").expect("static selector");
        doc.select(&sel)
            .filter_map(|f| Form::from_element(f, &self.url).ok())
            .filter(|f| f.action.path() == path)
            .collect()
    }

    /// Everything a person reads on the page: its text nodes outside
    /// `<script>` and `<style>`, with runs of whitespace as one space.
    pub fn text(&self) -> String {
        let doc = Html::parse_document(&self.html);
        let mut words = String::new();
        for node in doc.root_element().descendants() {
            if let Some(text) = node.value().as_text() {
                let hidden = node.ancestors().any(|a| {
                    a.value()
                        .as_element()
                        .is_some_and(|e| matches!(e.name(), "script" | "style"))
                });
                if !hidden {
                    words.push(' ');
                    words.push_str(text);
                }
            }
        }
        normalise(&words)
    }

    /// Whether a person reads `needle` on the page (whitespace runs compared
    /// as one space, so line breaks in markup do not matter; nothing else is
    /// loosened).
    pub fn shows(&self, needle: &str) -> bool {
        self.text().contains(&normalise(needle))
    }

    /// The first redirect followed, as `(status, absolute target)`.
    pub fn first_redirect(&self) -> Option<(u16, url::Url)> {
        self.redirects.first().cloned()
    }

    /// The values of every hidden `_csrf` input on the page, so the caller can
    /// register them as secrets.
    pub fn csrf_values(&self) -> Vec<String> {
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

fn parse_selector(selector: &str) -> Step<Selector> {
    Selector::parse(selector)
        .map_err(|e| Abort::errored(format!("bad CSS selector `{selector}`: {e}")))
}

/// A filled-in form, ready to submit.
#[derive(Debug, Clone)]
pub struct Form {
    /// `GET` or `POST`, from the form's `method`.
    pub method: String,
    /// The absolute action URL (relative actions resolved against the page).
    pub action: url::Url,
    /// Fields in document order, as `(name, value)`.
    pub fields: Vec<(String, String)>,
    /// Every named submit button, as `(name, value)`: the first is in
    /// `fields` (the one a plain submit clicks); [`Form::click`] picks another.
    submitters: Vec<(String, String)>,
}

impl Form {
    /// A form a scenario writes itself (no page, no submit buttons).
    pub fn new(method: &str, action: url::Url, fields: Vec<(String, String)>) -> Form {
        Form {
            method: method.to_owned(),
            action,
            fields,
            submitters: Vec::new(),
        }
    }

    fn from_element(form: ElementRef<'_>, page: &url::Url) -> Step<Form> {
        let method = form
            .value()
            .attr("method")
            .unwrap_or("get")
            .to_ascii_uppercase();
        let action = match form.value().attr("action") {
            Some(a) if !a.is_empty() => page
                .join(a)
                .map_err(|e| Abort::failed(format!("form action `{a}` on {page}: {e}")))?,
            _ => page.clone(),
        };
        let mut fields = Vec::new();
        let mut submitters = Vec::new();
        let sel = Selector::parse("input, textarea, select, button").expect("static selector");
        for el in form.select(&sel) {
            let v = el.value();
            let Some(name) = v.attr("name") else { continue };
            if v.attr("disabled").is_some() {
                continue;
            }
            match v.name() {
                "textarea" => fields.push((name.to_owned(), el.text().collect())),
                "select" => {
                    let opt = Selector::parse("option").expect("static selector");
                    let options: Vec<ElementRef<'_>> = el.select(&opt).collect();
                    let chosen = options
                        .iter()
                        .find(|o| o.value().attr("selected").is_some())
                        .or(options.first());
                    if let Some(o) = chosen {
                        let value = o
                            .value()
                            .attr("value")
                            .map(str::to_owned)
                            .unwrap_or_else(|| o.text().collect());
                        fields.push((name.to_owned(), value));
                    }
                }
                tag => {
                    let kind =
                        v.attr("type")
                            .unwrap_or(if tag == "button" { "submit" } else { "text" });
                    let value = v.attr("value").unwrap_or("").to_owned();
                    match kind.to_ascii_lowercase().as_str() {
                        // A browser sends the one submit button that was
                        // clicked; we click the first.
                        "submit" | "image" => {
                            if submitters.is_empty() {
                                fields.push((name.to_owned(), value.clone()));
                            }
                            submitters.push((name.to_owned(), value));
                        }
                        "reset" | "button" | "file" => {}
                        "checkbox" | "radio" => {
                            if v.attr("checked").is_some() {
                                let value = if value.is_empty() { "on".into() } else { value };
                                fields.push((name.to_owned(), value));
                            }
                        }
                        _ => fields.push((name.to_owned(), value)),
                    }
                }
            }
        }
        Ok(Form {
            method,
            action,
            fields,
            submitters,
        })
    }

    /// Clicks the submit button `name=value` instead of the first one, as a
    /// person choosing between buttons does. A form without that button is
    /// the page's failure.
    pub fn click(&mut self, name: &str, value: &str) -> Step<&mut Self> {
        if !self.submitters.iter().any(|(n, v)| n == name && v == value) {
            return Err(Abort::failed(format!(
                "the form to {} has no submit button {name}={value}",
                self.action.path()
            )));
        }
        if let Some((first, first_value)) = self.submitters.first().cloned()
            && let Some(i) = self
                .fields
                .iter()
                .position(|(n, v)| *n == first && *v == first_value)
        {
            self.fields.remove(i);
        }
        self.fields.push((name.to_owned(), value.to_owned()));
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

    fn page() -> Page {
        Page {
            status: 200,
            url: "http://127.0.0.1:9/alice/lab/agent-work-grants/3"
                .parse()
                .unwrap(),
            html: HTML.into(),
            redirects: vec![],
        }
    }

    #[test]
    fn a_form_is_filled_the_way_a_browser_fills_it() {
        let form = page().form("form[action$=\"/approve\"]").unwrap();
        assert_eq!(form.method, "POST");
        assert_eq!(
            form.action.as_str(),
            "http://127.0.0.1:9/alice/lab/agent-work-grants/3/approve"
        );
        let names: Vec<&str> = form.fields.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["_csrf", "state_revision", "task", "agent", "go"]);
        assert_eq!(form.field("_csrf"), Some("tok+en/="));
        assert_eq!(form.field("task"), Some("line one\nline two"));
        assert_eq!(form.field("agent"), Some("b"));
        assert_eq!(page().csrf_values(), ["tok+en/="]);
    }

    #[test]
    fn clicking_a_button_sends_it_instead_of_the_first() {
        let mut form = page().form("form").unwrap();
        form.click("other", "no").unwrap();
        assert_eq!(form.field("go"), None);
        assert_eq!(form.field("other"), Some("no"));
        let err = form.click("granted", "true").unwrap_err();
        assert!(matches!(err, Abort::Failed(m) if m.contains("no submit button granted=true")));
    }

    #[test]
    fn a_missing_form_is_a_contract_failure() {
        let err = page().form("form[action$=\"/withdraw\"]").unwrap_err();
        assert!(matches!(err, Abort::Failed(m) if m.contains("no form matching")));
    }

    #[test]
    fn set_and_remove_change_the_fields() {
        let mut form = page().form("form").unwrap();
        form.set("state_revision", "1")
            .remove("_csrf")
            .set("extra", "v");
        assert_eq!(form.field("state_revision"), Some("1"));
        assert_eq!(form.field("_csrf"), None);
        assert_eq!(form.field("extra"), Some("v"));
    }
}
