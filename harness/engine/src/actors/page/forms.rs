//! Forms as the HTML standard submits them ("form submission" and
//! "constructing the entry list"): a form owns the controls it is the form
//! owner of, a browser sends each enabled, named, submittable one (checkboxes
//! and radios only when checked, a select's selected options, a textarea's
//! text) and only the clicked submit button, whose `formaction` and
//! `formmethod` override the form's. Not modelled: scripts, what a person
//! typed, `enctype` (every form is sent urlencoded).

use std::collections::HashMap;

use scraper::{ElementRef, Html};

use super::Form;

/// One submit button of a form: what clicking it adds and where it sends.
#[derive(Debug, Clone)]
pub(crate) struct Submitter {
    /// Its own entries: `name=value` (an image button `name.x`, `name.y`),
    /// none when it has no name.
    pub entry: Vec<(String, String)>,
    pub action: url::Url,
    pub method: String,
}

/// Every form of `doc`, once per enabled submit button (once without one
/// when it has none), in document order; forms with `method="dialog"` or an
/// action that is no URL are not submitted by a browser and are left out.
pub(super) fn submissions(doc: &Html, page: &url::Url) -> Vec<Form> {
    let elements = outside_templates(doc);
    // An id names the first element that has it.
    let mut ids: HashMap<&str, ElementRef<'_>> = HashMap::new();
    for e in &elements {
        if let Some(id) = e.value().attr("id") {
            ids.entry(id).or_insert(*e);
        }
    }
    let base = elements
        .iter()
        .find(|e| e.value().name() == "base" && e.value().attr("href").is_some())
        .and_then(|e| page.join(e.value().attr("href")?).ok())
        .unwrap_or_else(|| page.clone());
    let mut out = Vec::new();
    for (index, form) in elements
        .iter()
        .filter(|e| e.value().name() == "form")
        .enumerate()
    {
        let controls: Vec<ElementRef<'_>> = elements
            .iter()
            .filter(|e| owner(e, &ids).is_some_and(|o| o.id() == form.id()))
            .copied()
            .collect();
        let fields = entry_list(&controls);
        let form_method = method(form.value().attr("method"));
        let form_action = form.value().attr("action");
        let buttons: Vec<ElementRef<'_>> = controls
            .iter()
            .filter(|c| is_submit_button(c) && !disabled(c))
            .copied()
            .collect();
        let submitters: Vec<Option<Submitter>> = buttons
            .iter()
            .map(|b| {
                let v = b.value();
                Some(Submitter {
                    entry: submitter_entry(b),
                    action: action(v.attr("formaction").or(form_action), &base, page)?,
                    method: v
                        .attr("formmethod")
                        .map_or(form_method, |m| method(Some(m)))
                        .to_owned(),
                })
            })
            .collect();
        // A button whose action is no URL cannot submit; the others keep
        // their place.
        let clickable: Vec<Submitter> = submitters.iter().flatten().cloned().collect();
        if buttons.is_empty() {
            if let Some(action) = action(form_action, &base, page)
                && form_method != "DIALOG"
            {
                out.push(Form {
                    method: form_method.to_owned(),
                    action,
                    fields: fields.clone(),
                    submitters: Vec::new(),
                    clicked: None,
                    dom: Some((0, index)),
                });
            }
            continue;
        }
        for (i, s) in clickable.iter().enumerate() {
            if s.method == "DIALOG" {
                continue;
            }
            let mut fields = fields.clone();
            fields.extend(s.entry.iter().cloned());
            out.push(Form {
                method: s.method.to_owned(),
                action: s.action.clone(),
                fields,
                submitters: clickable.clone(),
                clicked: Some(i),
                dom: Some((0, index)),
            });
        }
    }
    out
}

/// Every element of `doc` in document order, but those inside a
/// `<template>`: its contents are no part of the document a browser shows
/// or submits (HTML standard, "The template element"). A walk of its own,
/// so a page nested however deep costs one visit per node.
fn outside_templates(doc: &Html) -> Vec<ElementRef<'_>> {
    let mut out = Vec::new();
    let mut stack = vec![doc.root_element()];
    while let Some(e) = stack.pop() {
        out.push(e);
        if e.value().name() == "template" {
            continue;
        }
        let children: Vec<ElementRef<'_>> = e.children().filter_map(ElementRef::wrap).collect();
        stack.extend(children.into_iter().rev());
    }
    out
}

/// The form owner of a listed form-associated element: the element its
/// `form` attribute names when that is a form (no owner otherwise), else its
/// nearest `form` ancestor.
fn owner<'a>(e: &ElementRef<'a>, ids: &HashMap<&str, ElementRef<'a>>) -> Option<ElementRef<'a>> {
    if !matches!(
        e.value().name(),
        "button" | "fieldset" | "input" | "object" | "output" | "select" | "textarea"
    ) {
        return None;
    }
    match e.value().attr("form") {
        Some(id) => ids.get(id).filter(|f| f.value().name() == "form").copied(),
        None => e
            .ancestors()
            .filter_map(ElementRef::wrap)
            .find(|a| a.value().name() == "form"),
    }
}

/// `GET`, `POST` or `DIALOG`: the method attribute's state (missing or
/// invalid is GET).
fn method(attr: Option<&str>) -> &'static str {
    match attr.map(str::to_ascii_lowercase).as_deref() {
        Some("post") => "POST",
        Some("dialog") => "DIALOG",
        _ => "GET",
    }
}

/// The action URL: missing or empty is the page's own URL; anything else
/// is resolved against the document's base URL.
fn action(attr: Option<&str>, base: &url::Url, page: &url::Url) -> Option<url::Url> {
    match attr.map(str::trim) {
        None | Some("") => Some(page.clone()),
        Some(a) => base.join(a).ok(),
    }
}

/// An input's type state: its `type`, ASCII-case-insensitive; missing or
/// unknown is text.
fn input_type(e: &ElementRef<'_>) -> String {
    const KNOWN: [&str; 22] = [
        "hidden",
        "text",
        "search",
        "tel",
        "url",
        "email",
        "password",
        "date",
        "month",
        "week",
        "time",
        "datetime-local",
        "number",
        "range",
        "color",
        "checkbox",
        "radio",
        "file",
        "submit",
        "image",
        "reset",
        "button",
    ];
    let t = e.value().attr("type").unwrap_or("").to_ascii_lowercase();
    if KNOWN.contains(&t.as_str()) {
        t
    } else {
        "text".into()
    }
}

fn is_submit_button(e: &ElementRef<'_>) -> bool {
    match e.value().name() {
        // A button's missing or invalid type is submit.
        "button" => !matches!(
            e.value()
                .attr("type")
                .map(str::to_ascii_lowercase)
                .as_deref(),
            Some("reset" | "button")
        ),
        "input" => matches!(input_type(e).as_str(), "submit" | "image"),
        _ => false,
    }
}

/// A control is disabled by its own `disabled`, or by a disabled
/// `fieldset` ancestor unless it is inside that fieldset's first `legend`.
fn disabled(e: &ElementRef<'_>) -> bool {
    if e.value().attr("disabled").is_some() {
        return true;
    }
    let mut child = **e;
    for ancestor in e.ancestors() {
        if let Some(fieldset) = ElementRef::wrap(ancestor)
            && fieldset.value().name() == "fieldset"
            && fieldset.value().attr("disabled").is_some()
        {
            let first_legend = fieldset
                .children()
                .filter_map(ElementRef::wrap)
                .find(|c| c.value().name() == "legend");
            if first_legend.is_none_or(|l| l.id() != child.id()) {
                return true;
            }
        }
        child = ancestor;
    }
    false
}

fn name_of<'a>(e: &ElementRef<'a>) -> Option<&'a str> {
    e.value().attr("name").filter(|n| !n.is_empty())
}

/// What a clicked submit button adds.
fn submitter_entry(e: &ElementRef<'_>) -> Vec<(String, String)> {
    let value = e.value().attr("value").unwrap_or("").to_owned();
    let image = e.value().name() == "input" && input_type(e) == "image";
    match (name_of(e), image) {
        (Some(name), true) => vec![
            (format!("{name}.x"), "0".into()),
            (format!("{name}.y"), "0".into()),
        ],
        (None, true) => vec![("x".into(), "0".into()), ("y".into(), "0".into())],
        (Some(name), false) => vec![(name.to_owned(), value)],
        (None, false) => Vec::new(),
    }
}

/// The form's entries without any submit button, in document order.
fn entry_list(controls: &[ElementRef<'_>]) -> Vec<(String, String)> {
    let mut fields = Vec::new();
    for c in controls {
        let in_datalist = c
            .ancestors()
            .filter_map(ElementRef::wrap)
            .any(|a| a.value().name() == "datalist");
        let Some(name) = name_of(c) else { continue };
        if disabled(c) || in_datalist {
            continue;
        }
        let v = c.value();
        match v.name() {
            "input" => {
                let value = v.attr("value").unwrap_or("");
                match input_type(c).as_str() {
                    "submit" | "image" | "reset" | "button" => {}
                    "checkbox" | "radio" => {
                        if v.attr("checked").is_some() {
                            let value = if v.attr("value").is_some() {
                                value
                            } else {
                                "on"
                            };
                            fields.push((name.to_owned(), value.to_owned()));
                        }
                    }
                    // No file chosen: an empty file, sent urlencoded as its
                    // empty name.
                    "file" => fields.push((name.to_owned(), String::new())),
                    // The value sanitization of these types.
                    "text" | "search" | "tel" | "password" => {
                        fields.push((name.to_owned(), value.replace(['\r', '\n'], "")))
                    }
                    "url" | "email" => fields.push((
                        name.to_owned(),
                        value
                            .replace(['\r', '\n'], "")
                            .trim_matches([' ', '\t', '\x0c'])
                            .to_owned(),
                    )),
                    _ => fields.push((name.to_owned(), value.to_owned())),
                }
            }
            "select" => {
                for value in selected_options(c) {
                    fields.push((name.to_owned(), value));
                }
            }
            "textarea" => {
                let text: String = c.text().collect();
                fields.push((
                    name.to_owned(),
                    text.replace("\r\n", "\n").replace('\r', "\n"),
                ));
            }
            _ => {}
        }
    }
    fields
}

/// The values of a select's selected, enabled options: those marked
/// `selected` (a single select keeps the last), else for a single select
/// shown as a drop-down its first enabled option.
fn selected_options(select: &ElementRef<'_>) -> Vec<String> {
    let options: Vec<ElementRef<'_>> = select
        .descendants()
        .filter_map(ElementRef::wrap)
        .filter(|o| o.value().name() == "option")
        .collect();
    let option_disabled = |o: &ElementRef<'_>| {
        o.value().attr("disabled").is_some()
            || o.parent().and_then(ElementRef::wrap).is_some_and(|p| {
                p.value().name() == "optgroup" && p.value().attr("disabled").is_some()
            })
    };
    let multiple = select.value().attr("multiple").is_some();
    let size = select
        .value()
        .attr("size")
        .and_then(|s| s.trim().parse::<u32>().ok())
        .filter(|s| *s > 0)
        .unwrap_or(if multiple { 4 } else { 1 });
    let marked: Vec<&ElementRef<'_>> = options
        .iter()
        .filter(|o| o.value().attr("selected").is_some())
        .collect();
    let chosen: Vec<&ElementRef<'_>> = if multiple {
        marked
    } else if let Some(last) = marked.last() {
        vec![*last]
    } else if size == 1 {
        options
            .iter()
            .find(|o| !option_disabled(o))
            .into_iter()
            .collect()
    } else {
        Vec::new()
    };
    chosen
        .into_iter()
        .filter(|o| !option_disabled(o))
        .map(|o| match o.value().attr("value") {
            Some(v) => v.to_owned(),
            None => o
                .text()
                .collect::<String>()
                .split_ascii_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        })
        .collect()
}
