//! The page variants together (#47): refcore's own pages (the login page and
//! its failure, the signed-in home page, a grant page with both decision
//! forms, the consent page, a stale decision's 409 page and a 404 page),
//! each run through the page edits of a group of variants exactly as the
//! layers of one Core apply them ([`layered_of`], [`page`]), and every
//! member's own change asserted on the result. A variant that silently did
//! nothing in a group would make its self-test pass prove less than it
//! says; these tests refuse that for every group the self-test forms (read
//! with the harness's own packing from [`super::listing`]) and for every
//! two page variants that do not conflict.

use axum::body::to_bytes;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use scraper::{ElementRef, Html, Selector};

use super::catalogue::{ALL, Variant, conflict, layered_of, parse};
use super::pages::split_word;
use super::rewrite::{EDITS_PAGES, page};
use crate::db::oauth::AppRow;
use crate::db::repos::RepoRow;
use crate::domain::grant::{Grant, GrantState};
use crate::domain::json::UserRef;
use crate::domain::oauth::{Request, granted_scopes};
use crate::error::{AppError, PageError};
use crate::service::oauth::Authorization;
use crate::web::{grants, html, login, oauth};

const PUBLIC: &str = "http://core.test:3000";
const CSRF: &str = "csrf-of-the-session";
const DECOY: &str = "decoy-not-a-field-value";

/// One of refcore's pages, as its handler writes it.
struct Page {
    name: &'static str,
    status: StatusCode,
    html: String,
    /// Whether the browser reading it is signed in (markup's logout form).
    signed_in: bool,
}

async fn error_page(err: AppError) -> String {
    let body = PageError(err).into_response().into_body();
    let bytes = to_bytes(body, usize::MAX).await.expect("error page");
    String::from_utf8(bytes.to_vec()).expect("utf-8")
}

async fn pages() -> Vec<Page> {
    let alice = UserRef {
        id: 1,
        login: "alice".into(),
    };
    let repo = RepoRow {
        id: 1,
        owner_id: 1,
        owner_login: "alice".into(),
        name: "lab".into(),
        private: false,
    };
    let grant = Grant {
        id: 7,
        repo_id: 1,
        repo_owner: "alice".into(),
        repo_name: "lab".into(),
        agent: UserRef {
            id: 2,
            login: "agent-bot".into(),
        },
        prepared_by: alice.clone(),
        approved_by: None,
        state: GrantState::AwaitingHuman,
        state_revision: 2,
        task: "the task\nwith <markup> & class=\"x\"".into(),
        summary: "the summary".into(),
        digest: "sha256:0123abcd".into(),
        created_at: "2026-12-07T01:00:00Z".into(),
        updated_at: "2026-12-07T01:01:00Z".into(),
        confirmed_at: Some("2026-12-07T01:01:00Z".into()),
        approved_at: None,
        revoked_at: None,
        envelope: None,
    };
    let authz = Authorization {
        app: AppRow {
            id: 1,
            client_id: "0b6c3a52-0000-4000-8000-000000000001".into(),
            owner_id: 1,
            name: "Notes app".into(),
            redirect_uris: vec!["http://127.0.0.1:9/callback".into()],
            created_at: "2026-12-07T01:00:00Z".into(),
        },
        request: Request {
            redirect_uri: "http://127.0.0.1:9/callback".into(),
            state: Some("st".into()),
            code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into(),
            code_challenge_method: "S256",
            scope: Some("read:repository".into()),
            scopes: granted_scopes(Some("read:repository")).expect("scope"),
        },
    };
    let page = |title: &str, user: Option<&str>, body: &str| html::page(title, user, body).0;
    vec![
        Page {
            name: "login",
            status: StatusCode::OK,
            html: page("Sign in", None, &login::login_form(CSRF, None, Some("/x"))),
            signed_in: false,
        },
        Page {
            name: "failed login",
            status: StatusCode::UNAUTHORIZED,
            html: page(
                "Sign in",
                None,
                &login::login_form(CSRF, Some(login::LOGIN_FAILED), None),
            ),
            signed_in: false,
        },
        Page {
            name: "home",
            status: StatusCode::OK,
            html: page("Home", Some("alice"), &login::home_body("alice", CSRF)),
            signed_in: true,
        },
        Page {
            name: "grant",
            status: StatusCode::OK,
            html: page(
                "Agent work grant #7",
                Some("alice"),
                &grants::show_body(&repo, &grant, &[], CSRF),
            ),
            signed_in: true,
        },
        Page {
            name: "consent",
            status: StatusCode::OK,
            html: page(
                "Authorize Notes app",
                Some("alice"),
                &oauth::consent_form(&authz, "alice", CSRF),
            ),
            signed_in: true,
        },
        Page {
            name: "stale decision",
            status: StatusCode::CONFLICT,
            html: error_page(crate::service::human::stale()).await,
            signed_in: true,
        },
        Page {
            name: "not found",
            status: StatusCode::NOT_FOUND,
            html: error_page(AppError::NotFound).await,
            signed_in: true,
        },
    ]
}

/// `page` through the page edits of `group`, layer by layer as one Core
/// with those variants applies them.
fn compose(group: &[Variant], page_: &Page) -> String {
    let csrf = page_.signed_in.then_some(CSRF);
    layered_of(group)
        .into_iter()
        .fold(page_.html.clone(), |html, variant| {
            page(variant, page_.status, &html, PUBLIC, csrf).unwrap_or(html)
        })
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap_or_else(|e| panic!("selector {s}: {e:?}"))
}

fn in_template(e: &ElementRef<'_>) -> bool {
    e.ancestors()
        .filter_map(ElementRef::wrap)
        .any(|a| a.value().name() == "template")
}

/// The elements matching `s` that are part of the document a browser shows
/// and submits (not in a `<template>`).
fn live<'a>(doc: &'a Html, s: &str) -> Vec<ElementRef<'a>> {
    doc.select(&sel(s)).filter(|e| !in_template(e)).collect()
}

/// The text a browser renders (template contents left out), words whole.
fn text(doc: &Html) -> String {
    doc.root_element()
        .descendants()
        .filter_map(|n| n.value().as_text().map(|t| (n, t)))
        .filter(|(n, _)| {
            !n.ancestors()
                .filter_map(ElementRef::wrap)
                .any(|a| matches!(a.value().name(), "template" | "title"))
        })
        .map(|(_, t)| t.to_string())
        .collect()
}

fn attr<'a>(e: &ElementRef<'a>, name: &str) -> &'a str {
    e.value().attr(name).unwrap_or_default()
}

fn class_tokens(doc: &Html, attribute: &str) -> Vec<String> {
    doc.select(&sel(&format!("[{attribute}]")))
        .flat_map(|e| {
            attr(&e, attribute)
                .split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

fn name_of(variant: Variant) -> &'static str {
    ALL.iter()
        .find(|(v, _)| *v == variant)
        .map_or("?", |(_, n)| n)
}

/// What is wrong with `out` (`page` through `group`) as `variant`'s change:
/// empty when its signature change is there. A page the variant does not
/// touch (a consent split on a login page) has nothing to check.
fn signature(variant: Variant, group: &[Variant], page_: &Page, out: &str) -> Vec<String> {
    let doc = Html::parse_document(out);
    let original = Html::parse_document(&page_.html);
    let mut wrong = Vec::new();
    let mut need = |ok: bool, what: &str| {
        if !ok {
            wrong.push(what.to_owned());
        }
    };
    let forms = live(&doc, "form");
    let name = page_.name;
    match variant {
        Variant::Markup => {
            // Every class and id of refcore's renamed, where the element
            // that has it is still there without markup (form-controls
            // merges the withdraw form away).
            let without: Vec<Variant> = group
                .iter()
                .copied()
                .filter(|v| *v != Variant::Markup)
                .collect();
            let kept = Html::parse_document(&compose(&without, page_));
            for attribute in ["class", "id"] {
                let now = class_tokens(&doc, attribute);
                let kept = class_tokens(&kept, attribute);
                for token in class_tokens(&original, attribute) {
                    need(
                        !now.contains(&token)
                            && (!kept.contains(&token) || now.contains(&format!("v-{token}"))),
                        &format!("refcore's {attribute} {token} not renamed v-{token}"),
                    );
                }
            }
            need(
                !live(
                    &doc,
                    "div.v-shell main#v-content section.v-panel div.v-panel-body",
                )
                .is_empty(),
                "no wrapper elements",
            );
            need(
                !live(
                    &doc,
                    &format!("nav.v-topbar form[method=get][action=\"{PUBLIC}/explore\"]"),
                )
                .is_empty()
                    && !live(&doc, "input[name=q]").is_empty(),
                "no nav search form",
            );
            if page_.signed_in {
                need(
                    !live(&doc, &format!("form[action=\"{PUBLIC}/user/logout\"]")).is_empty(),
                    "no nav logout form",
                );
            }
            need(
                forms.iter().all(|f| attr(f, "action").starts_with(PUBLIC)),
                "a form action not absolute on the public URL",
            );
        }
        Variant::InlineMarkup => {
            need(
                !live(&doc, "h1 span.w").is_empty() && out.contains("<wbr>"),
                "the heading's words not split",
            );
            let without: Vec<Variant> = group
                .iter()
                .copied()
                .filter(|v| *v != Variant::InlineMarkup)
                .collect();
            let read = text(&Html::parse_document(&compose(&without, page_)));
            need(
                text(&doc) == read,
                "a browser reads other words than without inline-markup",
            );
            // Words of refcore's and of the other variants (markup's nav,
            // form-controls' decoys, the consent's buttons, reworded pages),
            // each split wherever a browser reads it.
            let words = [
                "Sign",
                "Search",
                "Help",
                "Remember",
                "Approve",
                "Withdraw",
                "Authorize",
                "Deny",
                "awaiting_human",
                "modified",
                "Sorry:",
                "sorry",
            ];
            for word in words {
                if read.split_whitespace().any(|w| w == word) {
                    need(
                        out.contains(&split_word(word)),
                        &format!("{word} not split by markup"),
                    );
                }
            }
            if name == "grant" {
                need(!out.contains(">awaiting_human<"), "state word whole");
            }
        }
        Variant::FormOwner if !forms.is_empty() => {
            let all_forms: Vec<_> = doc.select(&sel("form")).collect();
            let ids: Vec<&str> = all_forms.iter().map(|f| attr(f, "id")).collect();
            need(
                all_forms
                    .iter()
                    .all(|f| !attr(f, "id").is_empty() && f.children().next().is_none()),
                "a form not left empty with an id",
            );
            need(
                doc.select(&sel("input, button, select, textarea"))
                    .all(|c| ids.contains(&attr(&c, "form"))),
                "a control not joined to its form by form=",
            );
        }
        Variant::ConsentTwoForms if name == "consent" => {
            let consent: Vec<_> = forms
                .iter()
                .filter(|f| attr(f, "action").ends_with("login/oauth/grant"))
                .collect();
            need(consent.len() == 2, "the consent decision not two forms");
            need(
                live(&doc, "input[type=hidden][name=granted][value=true]").len() == 1
                    && live(&doc, "button[name=granted][value=false]").len() == 1
                    && live(&doc, "button[name=granted][value=true]").is_empty()
                    && live(&doc, "input[type=hidden][name=client_id]").len() == 2,
                "not one form per decision with the same hidden fields",
            );
        }
        Variant::FormControls if !forms.is_empty() => {
            need(
                !live(&doc, &format!("input[type=text][disabled][value={DECOY}]")).is_empty()
                    && !live(&doc, &format!("input[type=checkbox][value={DECOY}]")).is_empty()
                    && !live(&doc, "button[type=button]").is_empty()
                    && !live(&doc, "input[type=reset]").is_empty()
                    && !live(&doc, "input[type=checkbox][name=x_remember][checked]").is_empty(),
                "no decoy controls",
            );
            need(
                live(&doc, "button[type=submit]").is_empty()
                    && out.contains("method=\"POST\"")
                    && !out.contains("method=\"post\""),
                "a submit button with type, or a lower-case post",
            );
            if name == "grant" {
                need(
                    !forms
                        .iter()
                        .any(|f| attr(f, "action").ends_with("/withdraw"))
                        && live(&doc, "button[formaction$=\"/7/withdraw\"]").len() == 1,
                    "the decisions not one form with Withdraw by formaction",
                );
            }
        }
        Variant::BaseRelative => {
            need(
                live(&doc, "head > base[href=\"/\"]").len() == 1,
                "no <base href=\"/\">",
            );
            let absolute = |v: &str| v.starts_with('/') || v.starts_with("http");
            need(
                !forms.iter().any(|f| absolute(attr(f, "action")))
                    && !live(&doc, "[formaction]")
                        .iter()
                        .any(|b| absolute(attr(b, "formaction")))
                    && !live(&doc, "a[href]")
                        .iter()
                        .any(|a| absolute(attr(a, "href"))),
                "an action, formaction or link not relative",
            );
            if name == "grant" {
                need(
                    !live(
                        &doc,
                        "form[action=\"alice/lab/agent-work-grants/7/approve\"]",
                    )
                    .is_empty(),
                    "the approve action not relative",
                );
            }
        }
        Variant::TemplateForms if !forms.is_empty() => {
            let template = out
                .split_once("<template>")
                .and_then(|(_, t)| t.split_once("</template>"))
                .map(|(t, _)| t)
                .unwrap_or_default();
            need(
                out.contains("<body><template>"),
                "no <template> first in the body",
            );
            need(
                template.matches("<form").count() == forms.len(),
                "the template not a copy of every form",
            );
            need(
                template.contains("value=\"{{csrf}}\"") && !template.contains(CSRF),
                "a _csrf in the template not a placeholder",
            );
            need(
                !live(&doc, &format!("input[name=_csrf][value={CSRF}]")).is_empty(),
                "the page's own _csrf lost",
            );
        }
        Variant::LogoutPage => {
            need(
                !forms
                    .iter()
                    .any(|f| attr(f, "action").ends_with("user/logout")),
                "a logout form left",
            );
            if name == "home" {
                need(
                    !live(&doc, "a[href$=\"user/logout\"]").is_empty(),
                    "no Sign out link",
                );
            }
        }
        Variant::RewordedErrors if page_.status.is_client_error() => {
            let said = text(&doc);
            need(
                said.contains("Sorry") && !said.contains(login::LOGIN_FAILED),
                "not reworded",
            );
            if name != "failed login" {
                need(
                    said.contains("We are sorry") && !said.contains("Not Found"),
                    "error heading not reworded",
                );
            }
            if page_.status == StatusCode::CONFLICT {
                need(
                    said.contains("grant was changed") && !said.contains("since this page"),
                    "a 409 page not saying the grant changed in other words",
                );
            }
        }
        Variant::StaleWording if page_.status == StatusCode::CONFLICT => {
            let said = text(&doc);
            need(
                said.contains("modified by someone else") && !said.contains("changed"),
                "stale page still says changed",
            );
        }
        _ => {}
    }
    wrong
        .into_iter()
        .map(|w| format!("{} on the {name} page: {w}", name_of(variant)))
        .collect()
}

/// Every page through `group`, each member's signature asserted.
async fn assert_composes(group: &[Variant]) {
    let mut wrong = Vec::new();
    for page_ in pages().await {
        let out = compose(group, &page_);
        for &variant in group {
            wrong.extend(signature(variant, group, &page_, &out));
        }
    }
    let names: Vec<&str> = group.iter().map(|v| name_of(*v)).collect();
    assert!(
        wrong.is_empty(),
        "group {}:\n{}",
        names.join(","),
        wrong.join("\n")
    );
}

#[tokio::test]
async fn each_page_variant_alone_makes_its_change() {
    for variant in EDITS_PAGES {
        assert_composes(&[variant]).await;
    }
}

#[tokio::test]
async fn every_group_the_self_test_forms_makes_each_members_change() {
    use grantgate_engine::selftest::variants::{groups, parse_listing};
    let listing = super::listing().expect("a faults build lists its variants");
    let groups = groups(&parse_listing(&listing));
    // The floor the other conflicts allow: no-extensions alone, and the
    // three link-* variants each in a group of its own.
    assert_eq!(groups.len(), 4, "{groups:?}");
    for group in &groups {
        let group: Vec<Variant> = group
            .iter()
            .map(|n| parse(n).expect("listed name"))
            .collect();
        assert_composes(&group).await;
    }
}

#[tokio::test]
async fn any_two_page_variants_that_do_not_conflict_compose() {
    for (i, &a) in EDITS_PAGES.iter().enumerate() {
        for &b in &EDITS_PAGES[i + 1..] {
            if conflict(a, b).is_none() {
                assert_composes(&[a, b]).await;
            }
        }
    }
}
