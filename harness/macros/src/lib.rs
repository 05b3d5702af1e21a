//! `#[scenario(Family, ...)]`: registers an async scenario function as a
//! catalogue entry, with its claim taken from the function's doc comment, so
//! the claim an auditor reads and the code that proves it sit together.
//!
//! ```ignore
//! /// Preparing is not approval: a bot's submission waits for the human.
//! #[scenario(Authority, parity)]
//! async fn submit_waits_for_approval(ctx: &mut Ctx) -> Outcome { ... }
//! ```
//!
//! becomes a function `submit_waits_for_approval() -> Scenario`, registered
//! in the engine's distributed slice (`runner::registry::SCENARIOS`, through
//! the prelude) with the module and line it is written at: the catalogue
//! collects and orders the slice, so no list names it. Options after the
//! family:
//! `parity` (observations must agree across backends), `pristine` (a
//! freshly started Core whose fixtures the trial makes itself, instead of a
//! copy of the run's fixture snapshot), `fixture = "name"`
//! (default `lab`), `core_env = [("CORE_X", "v"), ...]` (launch extensions the
//! scenario needs), `extensions = ["name", ...]` (setup extensions it needs);
//! a Core that does not declare what a scenario needs gets *not applicable*.

use proc_macro::TokenStream;
use quote::quote;
use syn::punctuated::Punctuated;
use syn::{Expr, ItemFn, Lit, Meta, Token, parse_macro_input};

/// Turns `async fn name(ctx: &mut Ctx) -> Outcome` into `fn name() -> Scenario`
/// and registers it.
#[proc_macro_attribute]
pub fn scenario(args: TokenStream, item: TokenStream) -> TokenStream {
    let args = parse_macro_input!(args with Punctuated::<Meta, Token![,]>::parse_terminated);
    let func = parse_macro_input!(item as ItemFn);
    match expand(args, func) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn expand(
    args: Punctuated<Meta, Token![,]>,
    func: ItemFn,
) -> syn::Result<proc_macro2::TokenStream> {
    let mut family = None;
    let mut parity = false;
    let mut pristine = false;
    let mut fixture = quote!("lab");
    let mut core_env = quote!(&[]);
    let mut extensions = quote!(&[]);
    let mut clauses = quote!(&[]);
    for meta in args {
        match &meta {
            Meta::Path(p) if p.is_ident("parity") => parity = true,
            Meta::Path(p) if p.is_ident("pristine") => pristine = true,
            Meta::Path(p) if family.is_none() => family = Some(p.clone()),
            Meta::NameValue(nv) if nv.path.is_ident("fixture") => {
                let v = &nv.value;
                fixture = quote!(#v);
            }
            Meta::NameValue(nv) if nv.path.is_ident("core_env") => {
                let v = &nv.value;
                core_env = quote!(&#v);
            }
            Meta::NameValue(nv) if nv.path.is_ident("extensions") => {
                let v = &nv.value;
                extensions = quote!(&#v);
            }
            Meta::NameValue(nv) if nv.path.is_ident("clauses") => {
                let v = &nv.value;
                clauses = quote!(&#v);
            }
            _ => {
                return Err(syn::Error::new_spanned(
                    meta,
                    "expected a family, `parity`, `pristine`, `fixture = \"..\"`, `core_env = [..]`, `extensions = [..]` or `clauses = [..]`",
                ));
            }
        }
    }
    let family = family.ok_or_else(|| {
        syn::Error::new(
            proc_macro2::Span::call_site(),
            "#[scenario] needs its family first, e.g. #[scenario(Authority)]",
        )
    })?;
    if func.sig.asyncness.is_none() {
        return Err(syn::Error::new_spanned(
            func.sig.fn_token,
            "a scenario is an async fn",
        ));
    }
    let claim = doc_text(&func)?;
    let name = &func.sig.ident;
    let id = name.to_string();
    let vis = &func.vis;
    let docs: Vec<_> = func
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .collect();
    let registration = quote::format_ident!("__SCENARIO_{}", id.to_uppercase());
    let mut inner = func.clone();
    inner.vis = syn::Visibility::Inherited;
    Ok(quote! {
        #(#docs)*
        #vis fn #name() -> ::grantgate_engine::prelude::Scenario {
            #inner
            ::grantgate_engine::prelude::Scenario {
                id: #id,
                family: ::grantgate_engine::prelude::Family::#family,
                claim: #claim,
                fixture: #fixture,
                core_env: #core_env,
                extensions: #extensions,
                clauses: #clauses,
                pristine: #pristine,
                parity: #parity,
                run: |ctx| ::std::boxed::Box::pin(#name(ctx)),
            }
        }

        #[::grantgate_engine::prelude::__registry::linkme::distributed_slice(
            ::grantgate_engine::prelude::__registry::SCENARIOS
        )]
        #[linkme(crate = ::grantgate_engine::prelude::__registry::linkme)]
        static #registration: ::grantgate_engine::prelude::__registry::Registration =
            ::grantgate_engine::prelude::__registry::Registration {
                scenario: #name,
                module: ::core::module_path!(),
                line: ::core::line!(),
            };
    })
}

/// The doc comment as one paragraph: the scenario's claim. A scenario
/// without one is refused, since the claim is what the report shows.
fn doc_text(func: &ItemFn) -> syn::Result<String> {
    let mut lines = Vec::new();
    for attr in func.attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let Meta::NameValue(nv) = &attr.meta
            && let Expr::Lit(lit) = &nv.value
            && let Lit::Str(s) = &lit.lit
        {
            lines.push(s.value().trim().to_owned());
        }
    }
    let text = lines
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if text.is_empty() {
        return Err(syn::Error::new_spanned(
            &func.sig.ident,
            "a scenario needs a doc comment: its one-sentence claim",
        ));
    }
    Ok(text)
}
