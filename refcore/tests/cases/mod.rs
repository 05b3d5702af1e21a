//! The trials, one file per family. Each returns `Err(message)` on failure.

use crate::TestFn;

mod auth;
mod bad_input;
mod browser;
mod concurrency;
mod envelope;
mod exact_replay;
mod faults;
mod grants;
mod lifecycle;
mod meta;
mod oauth;
mod pages;
mod receipts;
mod variants;

/// Boxes an `async fn(Arc<Env>) -> TestResult` into a [`TestFn`].
macro_rules! trial {
    ($path:path) => {
        (stringify!($path), (|env| Box::pin($path(env))) as TestFn)
    };
}

/// Every trial, named `family::test`.
pub fn all() -> Vec<(&'static str, TestFn)> {
    let mut list: Vec<(&'static str, TestFn)> = vec![
        trial!(meta::version_and_health),
        trial!(meta::openapi_every_operation_is_routed),
        trial!(meta::unknown_api_routes_are_json),
        trial!(meta::launch_contract),
        trial!(meta::measurements),
        trial!(auth::credential_forms),
        trial!(auth::scopes_are_enforced),
        trial!(auth::setup_surface_is_guarded),
        trial!(lifecycle::full_lifecycle),
        trial!(lifecycle::confirm_rules),
        trial!(receipts::replay_and_conflict),
        trial!(receipts::tombstones),
        trial!(receipts::withdrawal),
        trial!(grants::only_the_agent_sees_a_grant),
        trial!(grants::list_pages_and_filters),
        trial!(grants::list_pages_skip_unreadable_repositories),
        trial!(grants::access_loss),
        trial!(grants::ordinary_issues_are_unattributed),
        trial!(bad_input::json_bodies),
        trial!(bad_input::text_values),
        trial!(bad_input::queries_and_paths),
        trial!(browser::login_and_session),
        trial!(browser::csrf_refusals),
        trial!(browser::csrf_expiry),
        trial!(pages::stale_revision),
        trial!(pages::page_access),
        trial!(pages::issue_page),
        trial!(concurrency::twenty_identical_submissions),
        trial!(concurrency::twenty_approvals),
        trial!(envelope::envelope_lifecycle),
        trial!(exact_replay::decoded_json),
        trial!(exact_replay::issue_edit),
        trial!(exact_replay::token_delete),
        trial!(oauth::register_application),
        trial!(oauth::authorize_refusals),
        trial!(oauth::login_then_consent),
        trial!(oauth::login_redirect_guard),
        trial!(oauth::longest_request_comes_back),
        trial!(oauth::full_flow),
        trial!(oauth::deny),
        trial!(oauth::redirect_uri_with_query),
        trial!(oauth::consent_csrf_and_recheck),
        trial!(oauth::token_endpoint_rules),
        trial!(oauth::scopes),
        trial!(oauth::concurrent_exchange),
        trial!(oauth::expiry),
    ];
    #[cfg(not(feature = "faults"))]
    list.extend([
        trial!(faults::default_build_refuses_a_fault),
        trial!(variants::default_build_refuses_a_variant),
        trial!(variants::default_build_refuses_a_hostile_mode),
    ]);
    #[cfg(feature = "faults")]
    list.extend([
        trial!(faults::unknown_fault_is_refused),
        trial!(faults::replay_answers_201),
        trial!(faults::nul_accepted_on_sqlite_only),
        trial!(faults::stale_revision_accepted),
        trial!(faults::list_shows_invisible_grants),
        trial!(faults::oauth_skips_pkce),
        trial!(faults::oauth_code_reusable),
        trial!(faults::oauth_redirect_prefix_match),
        trial!(faults::oauth_plain_accepted),
        trial!(faults::oauth_code_never_expires),
        trial!(faults::oauth_code_any_client),
        trial!(faults::oauth_consent_skips_csrf),
        trial!(faults::oauth_token_all_scopes),
        trial!(faults::oauth_login_open_redirect),
        trial!(variants::oauth_pages),
        trial!(variants::variant_refusals),
        trial!(variants::composed),
        trial!(variants::hostile_refusal),
        trial!(variants::markup),
        trial!(variants::extra_members),
        trial!(variants::reworded_errors),
        trial!(variants::link_style),
        trial!(variants::absolute_redirects),
        trial!(variants::pretty_json),
        trial!(variants::cookie_name),
        trial!(variants::decision_answers),
        trial!(variants::logout_page),
        trial!(variants::home_dashboard),
        trial!(variants::login_200),
        trial!(variants::stale_wording),
        trial!(variants::link_extra),
        trial!(variants::extra_cookies),
        trial!(variants::signin_in_place),
        trial!(variants::page_variants),
    ]);
    list.into_iter()
        .map(|(name, f)| (name.trim_start_matches("cases::"), f))
        .collect()
}
