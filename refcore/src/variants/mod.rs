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
//! A faults build (`--features faults`) reads `CORE_VARIANT` once at start.
//! Every variant is one response-rewriting layer ([`wrap`], in `rewrite`)
//! around the unchanged application, so no handler knows about them. A
//! default build has no variants: a set `CORE_VARIANT` refuses to start, and
//! [`wrap`] returns the router untouched.

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

/// The variable that selects a variant.
pub const ENV: &str = "CORE_VARIANT";

/// The flag that prints the variants and exits.
pub const LIST_FLAG: &str = "--list-variants";

/// Reads `raw` (the value of `CORE_VARIANT`; empty counts as unset) once, at
/// start; `fault_set` says whether `CORE_FAULT` names a fault. A faults build
/// activates the named variant, or refuses an unknown name (listing the valid
/// ones) or a fault set too; a default build refuses any name.
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

/// What `refcore --list-variants` prints: one name per line. `None` in a
/// default build, which has no variants.
pub fn listing() -> Option<String> {
    #[cfg(feature = "faults")]
    {
        Some(
            catalogue::ALL
                .iter()
                .map(|(_, n)| format!("{n}\n"))
                .collect(),
        )
    }
    #[cfg(not(feature = "faults"))]
    {
        None
    }
}

/// `router` with the active variant's rewriting layer; unchanged without one
/// (always, in a default build).
pub fn wrap(router: Router<AppState>, state: &AppState) -> Router<AppState> {
    #[cfg(feature = "faults")]
    if catalogue::ACTIVE.get().is_some() {
        let layer = rewrite::Layer {
            state: state.clone(),
            app: router.clone().with_state(state.clone()),
        };
        return router.layer(axum::middleware::from_fn_with_state(
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

    pub static ACTIVE: OnceLock<Variant> = OnceLock::new();

    pub(super) fn parse(name: &str) -> Result<Variant, VariantError> {
        ALL.iter()
            .find(|(_, n)| *n == name)
            .map(|(v, _)| *v)
            .ok_or_else(|| VariantError::Unknown {
                name: name.chars().take(60).collect(),
                valid: ALL.map(|(_, n)| n).join(", "),
            })
    }

    pub(super) fn activate(name: &str) -> Result<(), VariantError> {
        let variant = parse(name)?;
        let _ = ACTIVE.set(variant);
        tracing::warn!(
            variant = name,
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
    fn a_fault_and_a_variant_are_refused_together() {
        let err = init(Some("markup"), true).unwrap_err().to_string();
        assert!(err.contains("both set"), "{err}");
    }
}
