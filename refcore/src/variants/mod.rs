//! Honest variants for the harness's self-test (`docs/faults.md`, "Honest
//! variants").
//!
//! The built-in faults ([`crate::faults`]) prove the harness stops broken
//! Cores. Variants prove the opposite half: that it lets through every
//! *honest* Core, not only one that answers byte for byte like refcore. Each
//! variant changes refcore's output only where the contract leaves room
//! (spec §7, last paragraph: other markup, other error texts, extra JSON
//! members, another `Link` order, absolute redirects are as honest as
//! refcore), so a correct gate must still pass every scenario against it.
//!
//! A faults build (`--features faults`) reads `CORE_VARIANT` once at start:
//! one name, or several joined by commas, so that one Core makes several
//! honest choices at once (the self-test runs compatible variants together,
//! which costs one catalogue pass instead of one each). Two variants that
//! rewrite the same thing, or where one reads what the other rewrites, are
//! declared to conflict ([`catalogue`]'s `CONFLICTS`) and refused together.
//! Every active variant is one response-rewriting layer ([`wrap`], in
//! `rewrite`) around the unchanged application, so no handler knows about
//! them. A default build has no variants: a set `CORE_VARIANT` refuses to
//! start, and [`wrap`] returns the router untouched.

use axum::Router;

use crate::error::VariantError;
use crate::state::AppState;

#[cfg(feature = "faults")]
mod flow;
#[cfg(feature = "faults")]
mod link;
#[cfg(feature = "faults")]
mod markup;
#[cfg(feature = "faults")]
mod pages;
#[cfg(feature = "faults")]
mod rewrite;
#[cfg(all(test, feature = "faults"))]
mod together;

/// The variable that selects a variant.
pub const ENV: &str = "CORE_VARIANT";

/// The flag that prints the variants and exits.
pub const LIST_FLAG: &str = "--list-variants";

/// Reads `raw` (the value of `CORE_VARIANT`: names joined by commas; empty
/// counts as unset) once, at start; `fault_set` says whether `CORE_FAULT`
/// names a fault. A faults build activates the named variants, or refuses an
/// unknown name (listing the valid ones), two that conflict (saying why) or a
/// fault set too; a default build refuses any name.
pub fn init(raw: Option<&str>, fault_set: bool) -> Result<(), VariantError> {
    let Some(name) = raw.filter(|n| !n.is_empty()) else {
        return Ok(());
    };
    #[cfg(feature = "faults")]
    {
        if fault_set {
            return Err(VariantError::WithFault);
        }
        catalogue::activate(name)
    }
    #[cfg(not(feature = "faults"))]
    {
        let _ = (name, fault_set);
        Err(VariantError::NotAFaultsBuild)
    }
}

/// What `refcore --list-variants` prints: one line per variant,
/// `name<TAB>the variants it conflicts with` (comma-separated, empty when
/// none), so the self-test reads which variants it may run together from the
/// binary itself. `None` in a default build, which has no variants.
pub fn listing() -> Option<String> {
    #[cfg(feature = "faults")]
    {
        Some(
            catalogue::ALL
                .iter()
                .map(|&(v, n)| {
                    let others: Vec<&str> = catalogue::ALL
                        .iter()
                        .filter(|&&(w, _)| catalogue::conflict(v, w).is_some())
                        .map(|(_, m)| *m)
                        .collect();
                    format!("{n}\t{}\n", others.join(","))
                })
                .collect(),
        )
    }
    #[cfg(not(feature = "faults"))]
    {
        None
    }
}

/// `router` with one rewriting layer per active variant, innermost first
/// (see `catalogue::layered` for the order); unchanged without one (always,
/// in a default build).
pub fn wrap(router: Router<AppState>, state: &AppState) -> Router<AppState> {
    #[allow(unused_mut, reason = "a default build adds no layer")]
    let mut router = router;
    #[cfg(feature = "faults")]
    for variant in catalogue::layered() {
        // The page a variant answers with instead of a redirect is read from
        // the application with the inner variants' layers, so every active
        // variant shapes it exactly once.
        let layer = rewrite::Layer {
            state: state.clone(),
            app: router.clone().with_state(state.clone()),
            variant,
        };
        router = router.layer(axum::middleware::from_fn_with_state(
            layer,
            rewrite::rewrite,
        ));
    }
    let _ = state;
    router
}

#[cfg(feature = "faults")]
mod catalogue {
    use std::sync::OnceLock;

    use crate::error::VariantError;

    /// Every variant; `docs/faults.md` says what each changes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Variant {
        /// Other classes and ids, wrapper elements, a nav bar with extra forms.
        Markup,
        /// Extra members in every JSON object of every API answer.
        ExtraMembers,
        /// Other error texts, JSON and HTML.
        RewordedErrors,
        /// `Link` relations in another order, some with unquoted `rel`.
        LinkStyle,
        /// Absolute `Location`s on the public origin.
        AbsoluteRedirects,
        /// Pretty-printed JSON with members in reverse order.
        PrettyJson,
        /// Another session cookie name.
        CookieName,
        /// Approve, withdraw, logout and the consent decision answer 302
        /// (withdraw to the list).
        RedirectFound,
        /// Approve, withdraw and logout answer 200 with the resulting page.
        Post200,
        /// No logout form on any page: a link to a confirmation page.
        LogoutPage,
        /// `GET /` sends a signed-in person to `/dashboard`.
        HomeDashboard,
        /// A failed login answers 200 with the form again.
        LoginOk,
        /// A stale-revision page in words without "changed".
        StaleWording,
        /// `Link` over several field lines, with `self`, joined relations
        /// and extra parameters; extra paging headers.
        LinkExtra,
        /// Cookies besides the session's on pages and the login answer.
        ExtraCookies,
        /// Signed out, a page answers 200 with the login form in place.
        SigninInPlace,
        /// Inline elements and entities inside every word of page text.
        InlineMarkup,
        /// Form controls outside their forms, joined by `form="id"`.
        FormOwner,
        /// The consent decision as two forms, one per decision.
        ConsentTwoForms,
        /// Decoy controls a browser does not send, buttons without `type`,
        /// one decision form with `formaction`.
        FormControls,
        /// Form actions and links relative to a `<base href>`.
        BaseRelative,
        /// `Link` as Forgejo writes it: no `first`/`prev` on the first page,
        /// no `last` on the last, none on a single page.
        LinkForgejo,
        /// A `<template>` holding copies of the page's forms.
        TemplateForms,
        /// The login page sends a signed-in person on (to `redirect_to`,
        /// else `/`), as Forgejo does.
        LoginRedirect,
        /// The grant list refuses an unknown `state`, `page` or `limit` with
        /// 422 instead of 400.
        List422,
        /// No test extensions declared (`/api/v1/version` has no
        /// `extensions`), and their routes answer 404.
        NoExtensions,
        /// Every timestamp at another UTC offset, with microseconds.
        TimestampsOffset,
    }

    /// Every variant with its `CORE_VARIANT` name.
    pub const ALL: [(Variant, &str); 27] = [
        (Variant::Markup, "markup"),
        (Variant::ExtraMembers, "extra-members"),
        (Variant::RewordedErrors, "reworded-errors"),
        (Variant::LinkStyle, "link-style"),
        (Variant::AbsoluteRedirects, "absolute-redirects"),
        (Variant::PrettyJson, "pretty-json"),
        (Variant::CookieName, "cookie-name"),
        (Variant::RedirectFound, "redirect-302"),
        (Variant::Post200, "post-200"),
        (Variant::LogoutPage, "logout-page"),
        (Variant::HomeDashboard, "home-dashboard"),
        (Variant::LoginOk, "login-200"),
        (Variant::StaleWording, "stale-wording"),
        (Variant::LinkExtra, "link-extra"),
        (Variant::ExtraCookies, "extra-cookies"),
        (Variant::SigninInPlace, "signin-in-place"),
        (Variant::InlineMarkup, "inline-markup"),
        (Variant::FormOwner, "form-owner"),
        (Variant::ConsentTwoForms, "consent-two-forms"),
        (Variant::FormControls, "form-controls"),
        (Variant::BaseRelative, "base-relative"),
        (Variant::LinkForgejo, "link-forgejo"),
        (Variant::TemplateForms, "template-forms"),
        (Variant::LoginRedirect, "login-redirect"),
        (Variant::List422, "list-422"),
        (Variant::NoExtensions, "no-extensions"),
        (Variant::TimestampsOffset, "timestamps-offset"),
    ];

    /// Variants that cannot share a Core, as groups of which any two
    /// conflict, each with why. Two conflict when they rewrite the same
    /// thing differently, or when one rewrites what the other finds in
    /// refcore's own form (together, the second would silently do nothing).
    pub const CONFLICTS: &[(&[Variant], &str)] = &[
        (
            &[Variant::Markup, Variant::BaseRelative],
            "both choose how a form's action is written: markup absolute on the public URL, \
             base-relative relative to a `<base>`",
        ),
        (
            &[Variant::Markup, Variant::LogoutPage],
            "markup adds a logout form to every page, logout-page takes them all away",
        ),
        (
            &[Variant::Markup, Variant::RewordedErrors],
            "reworded-errors finds an error page's words by the classes markup renames",
        ),
        (
            &[Variant::Markup, Variant::StaleWording],
            "stale-wording finds a 409 page's words by the classes markup renames",
        ),
        (
            &[Variant::RewordedErrors, Variant::StaleWording],
            "both choose the words of a 409 page",
        ),
        (
            &[Variant::RedirectFound, Variant::Post200],
            "both choose the answer to approve, withdraw and logout",
        ),
        (
            &[Variant::LinkStyle, Variant::LinkExtra, Variant::LinkForgejo],
            "each rewrites `Link`, reading it as refcore writes it",
        ),
    ];

    /// Variants that run alone, with why: conflicting with every other.
    pub const ALONE: &[(Variant, &str)] = &[(
        Variant::NoExtensions,
        "the trials that need an extension are not applicable under it, so no other variant \
         would meet them",
    )];

    /// Layered outside every other variant, in this order (the last one
    /// outermost): `pretty-json` writes the layout of JSON the others
    /// re-serialise; `absolute-redirects` rewrites every `Location`, also
    /// those other variants set, while they read refcore's relative ones;
    /// `cookie-name` renames the request's cookie back before any variant
    /// reads the session, and every cookie any of them sets.
    const OUTERMOST: [Variant; 3] = [
        Variant::PrettyJson,
        Variant::AbsoluteRedirects,
        Variant::CookieName,
    ];

    /// Why `a` and `b` cannot share a Core; `None` when they can (a variant
    /// never conflicts with itself).
    pub fn conflict(a: Variant, b: Variant) -> Option<&'static str> {
        if a == b {
            return None;
        }
        let alone = ALONE.iter().find(|(v, _)| *v == a || *v == b);
        alone.map(|(_, why)| *why).or_else(|| {
            CONFLICTS
                .iter()
                .find(|(group, _)| group.contains(&a) && group.contains(&b))
                .map(|(_, why)| *why)
        })
    }

    /// The page variants that rewrite forms and words, layered in this
    /// order (innermost first) after every other variant but
    /// [`OUTERMOST`], so that each finds what it rewrites (they compose:
    /// `docs/faults.md`, "Variants together"). `markup` is not among them:
    /// it is the innermost layer of all (first in [`ALL`]), so it restyles
    /// refcore's own page and the others rewrite its output, which they read
    /// by what a browser reads (an action's path, not its spelling).
    const PAGE_ORDER: [Variant; 6] = [
        // Splits refcore's consent form by its two buttons, before any
        // other variant rewrites the buttons or moves them out.
        Variant::ConsentTwoForms,
        // Adds controls inside each form and merges the two decision forms
        // (found by their actions): before the forms are copied or emptied.
        Variant::FormControls,
        // Copies each form with its controls, before they are moved out.
        Variant::TemplateForms,
        // Writes relative every action and `formaction`, form-controls' too.
        Variant::BaseRelative,
        // Moves every control out of its form: after all that add or read
        // them.
        Variant::FormOwner,
        // Last: splits every word a person reads, other variants' words too.
        Variant::InlineMarkup,
    ];

    /// The active variants, innermost layer first (see [`layered_of`]).
    pub fn layered() -> Vec<Variant> {
        layered_of(ACTIVE.get().map(Vec::as_slice).unwrap_or_default())
    }

    /// `active` in layering order, innermost first: catalogue order, then
    /// [`PAGE_ORDER`], then [`OUTERMOST`].
    pub fn layered_of(active: &[Variant]) -> Vec<Variant> {
        let mut order: Vec<Variant> = ALL
            .iter()
            .map(|(v, _)| *v)
            .filter(|v| active.contains(v) && !OUTERMOST.contains(v) && !PAGE_ORDER.contains(v))
            .collect();
        order.extend(PAGE_ORDER.iter().filter(|v| active.contains(v)));
        order.extend(OUTERMOST.iter().filter(|v| active.contains(v)));
        order
    }

    pub static ACTIVE: OnceLock<Vec<Variant>> = OnceLock::new();

    fn name(variant: Variant) -> &'static str {
        ALL.iter()
            .find(|(v, _)| *v == variant)
            .map_or("?", |(_, n)| n)
    }

    /// Parses a comma-separated list (each name trimmed, repeats counted
    /// once), refusing an unknown name or two that conflict.
    pub(super) fn parse_list(raw: &str) -> Result<Vec<Variant>, VariantError> {
        let mut list: Vec<Variant> = Vec::new();
        for given in raw.split(',').map(str::trim) {
            let variant = parse(given)?;
            if let Some(&other) = list.iter().find(|&&o| conflict(o, variant).is_some()) {
                return Err(VariantError::Conflict {
                    first: name(other).to_owned(),
                    second: given.to_owned(),
                    why: conflict(other, variant).unwrap_or_default().to_owned(),
                });
            }
            if !list.contains(&variant) {
                list.push(variant);
            }
        }
        Ok(list)
    }

    pub(super) fn parse(name: &str) -> Result<Variant, VariantError> {
        ALL.iter()
            .find(|(_, n)| *n == name)
            .map(|(v, _)| *v)
            .ok_or_else(|| VariantError::Unknown {
                name: name.chars().take(60).collect(),
                valid: ALL.map(|(_, n)| n).join(", "),
            })
    }

    pub(super) fn activate(raw: &str) -> Result<(), VariantError> {
        let list = parse_list(raw)?;
        let names: Vec<&str> = list.iter().map(|v| name(*v)).collect();
        let _ = ACTIVE.set(list);
        tracing::warn!(
            variants = names.join(","),
            "honest variant ACTIVE: output differs from refcore's only where the contract leaves room"
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_or_empty_is_no_variant() {
        assert!(init(None, false).is_ok());
        assert!(init(Some(""), true).is_ok());
    }

    #[cfg(not(feature = "faults"))]
    #[test]
    fn a_default_build_refuses_any_name_and_has_no_listing() {
        let err = init(Some("markup"), false).unwrap_err();
        assert!(
            err.to_string().contains("without the `faults` feature"),
            "{err}"
        );
        assert_eq!(listing(), None);
    }

    #[cfg(feature = "faults")]
    #[test]
    fn names_parse_back_and_unknown_ones_list_the_valid() {
        for (variant, name) in catalogue::ALL {
            assert_eq!(catalogue::parse(name).unwrap(), variant);
        }
        let err = catalogue::parse("markdown").unwrap_err().to_string();
        assert!(
            err.contains("markup") && err.contains("cookie-name"),
            "{err}"
        );
        assert_eq!(listing().unwrap().lines().count(), catalogue::ALL.len());
    }

    #[cfg(feature = "faults")]
    #[test]
    fn lists_compose_unless_two_conflict() {
        use catalogue::{ALL, Variant, conflict, parse_list};
        let list = parse_list("extra-members, cookie-name,extra-members").unwrap();
        assert_eq!(list, [Variant::ExtraMembers, Variant::CookieName]);
        let err = parse_list("markup,link-style,base-relative")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("markup and base-relative") && err.contains("form's action"),
            "{err}"
        );
        // The page variants of #25 compose with each other and with markup.
        assert!(
            parse_list(
                "markup,inline-markup,form-owner,consent-two-forms,form-controls,template-forms"
            )
            .is_ok()
        );
        assert!(parse_list("link-style,no-extensions").is_err());
        assert!(parse_list("markup,nope").is_err());
        // Conflicts are symmetric, and the listing says them on both sides.
        let listing = listing().unwrap();
        for (a, an) in ALL {
            for (b, bn) in ALL {
                assert_eq!(conflict(a, b).is_some(), conflict(b, a).is_some());
                let line = listing.lines().find(|l| l.starts_with(&format!("{an}\t")));
                let said = line
                    .unwrap()
                    .split('\t')
                    .nth(1)
                    .unwrap()
                    .split(',')
                    .any(|n| n == bn);
                assert_eq!(said, conflict(a, b).is_some(), "{an} / {bn}");
            }
        }
    }

    #[cfg(feature = "faults")]
    #[test]
    fn a_fault_and_a_variant_are_refused_together() {
        let err = init(Some("markup"), true).unwrap_err().to_string();
        assert!(err.contains("both set"), "{err}");
    }
}
