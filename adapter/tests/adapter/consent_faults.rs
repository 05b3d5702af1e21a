//! Each consent-mode fault (`docs/faults.md`, family 18) really breaks its
//! rule of spec §9, seen from outside: in the authorize URL, at the fake
//! authorization server's token endpoint, in a tool result, or on disk. So
//! does `adapter-follows-redirect`, whose client the token POST shares.
#![cfg(feature = "faults")]

use crate::support::{oauth::*, *};
use rmcp::model::ElicitationAction;

async fn faulty(core: &FakeCore, fault: &str, extra: &[&str]) -> HttpAdapter {
    start_consent(core, &[("AWG_FAULT", fault)], extra, None).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_unbound_hands_the_token_to_another_session() {
    let core = FakeCore::start().await;
    let adapter = faulty(&core, "consent-state-unbound", &[]).await;
    let (alice, bob) = (adapter.connect(None).await, adapter.connect(None).await);
    auth_required_url(&call(&bob, "get_repository", repo_args()).await);
    let url = auth_required_url(&call(&alice, "get_repository", repo_args()).await);
    assert_eq!(callback(&adapter, &core.consent(&url).await).await.0, 200);
    // The honest adapter answers Bob auth_required again.
    ok(&call(&bob, "get_repository", repo_args()).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_reusable_exchanges_a_replay_again() {
    let core = FakeCore::start().await;
    let adapter = faulty(&core, "consent-state-reusable", &[]).await;
    let client = adapter.connect(None).await;
    let url = auth_required_url(&call(&client, "get_repository", repo_args()).await);
    let query = core.consent(&url).await;
    assert_eq!(callback(&adapter, &query).await.0, 200);
    callback(&adapter, &query).await;
    assert_eq!(
        core.token_posts(),
        2,
        "the honest adapter refuses the replay unexchanged"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_never_expires_exchanges_after_the_timeout() {
    let core = FakeCore::start().await;
    let adapter = faulty(&core, "consent-state-never-expires", &SHORT_TIMEOUT).await;
    let client = adapter.connect(None).await;
    let url = auth_required_url(&call(&client, "get_repository", repo_args()).await);
    let query = core.consent(&url).await;
    outlive_short_timeout().await;
    // Minting another state clears expired ones: the fault keeps this one there too.
    auth_required_url(&call(&client, "get_repository", repo_args()).await);
    assert_eq!(callback(&adapter, &query).await.0, 200);
    assert_eq!(
        core.token_posts(),
        1,
        "the honest adapter refuses an expired state"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_before_exchange_runs_the_call_without_a_token() {
    let core = FakeCore::start().await;
    let adapter = faulty(&core, "consent-resume-before-exchange", &[]).await;
    let (client, mut urls) = accepting_client(&adapter).await;
    let parked = call_in_background(client.peer(), "get_repository", repo_args());
    let query = core.consent(&next_url(&mut urls).await).await;
    core.token_mode(TokenMode::Status(500));
    assert_eq!(callback(&adapter, &query).await.0, 502);
    let result = finished(parked).await;
    // The honest adapter ends it `consent_failed`: the exchange failed, so
    // no token was stored, and the call resumed early finds none.
    expect_error(&result, "unauthenticated", None);
    assert_eq!(core.token_posts(), 1);
    assert!(core.api_auth().is_empty(), "nothing ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_verifier_repeats_the_challenge() {
    let core = FakeCore::start().await;
    let adapter = faulty(&core, "consent-shared-verifier", &[]).await;
    let (one, two) = (adapter.connect(None).await, adapter.connect(None).await);
    let a = auth_required_url(&call(&one, "get_repository", repo_args()).await);
    let b = auth_required_url(&call(&two, "get_repository", repo_args()).await);
    assert_eq!(
        Authorize::parse(&a).get("code_challenge"),
        Authorize::parse(&b).get("code_challenge")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_challenge_is_visible_in_the_url() {
    let core = FakeCore::start().await;
    let adapter = faulty(&core, "consent-plain-challenge", &[]).await;
    let client = adapter.connect(None).await;
    let url = auth_required_url(&call(&client, "get_repository", repo_args()).await);
    assert_eq!(Authorize::parse(&url).get("code_challenge_method"), "plain");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirect_from_host_ignores_the_public_url() {
    let core = FakeCore::start().await;
    let adapter = faulty(&core, "consent-redirect-from-host", &[]).await;
    let client = adapter.connect(None).await;
    let url = auth_required_url(&call(&client, "get_repository", repo_args()).await);
    let redirect = Authorize::parse(&url).get("redirect_uri").to_owned();
    assert_ne!(redirect, REDIRECT_URI);
    assert!(redirect.starts_with("http://127.0.0.1:"), "{redirect}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_on_disk_leaves_a_file() {
    let core = FakeCore::start().await;
    let dir = tempfile::tempdir().unwrap();
    let adapter = start_consent(
        &core,
        &[("AWG_FAULT", "consent-token-on-disk")],
        &[],
        Some(dir.path()),
    )
    .await;
    let client = adapter.connect(None).await;
    let url = auth_required_url(&call(&client, "get_repository", repo_args()).await);
    assert_eq!(callback(&adapter, &core.consent(&url).await).await.0, 200);
    let token = std::fs::read_to_string(dir.path().join("awg-mcp-token")).unwrap();
    assert_eq!(token, core.issued_tokens()[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follows_redirect_reaches_the_token_post() {
    let core = FakeCore::start().await;
    let adapter = faulty(&core, "adapter-follows-redirect", &[]).await;
    let client = adapter.connect(None).await;
    let url = auth_required_url(&call(&client, "get_repository", repo_args()).await);
    let query = core.consent(&url).await;
    core.token_mode(TokenMode::Redirect);
    // The honest adapter answers 502 and sends nothing to the Location.
    assert_eq!(callback(&adapter, &query).await.0, 200);
    assert_eq!(core.moved_requests(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_end_forgets_nothing_exchanges_an_ended_sessions_state() {
    let core = FakeCore::start().await;
    let adapter = faulty(&core, "consent-session-end-forgets-nothing", &[]).await;
    let client = adapter.connect(None).await;
    let url = auth_required_url(&call(&client, "get_repository", repo_args()).await);
    let query = core.consent(&url).await;
    client.cancel().await.unwrap();
    // The honest adapter answers 400 and exchanges nothing.
    assert_eq!(callback(&adapter, &query).await.0, 200);
    assert_eq!(core.token_posts(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignores_bearer_parks_a_call_that_carries_one() {
    let core = FakeCore::start().await;
    let adapter = faulty(&core, "consent-ignores-bearer", &[]).await;
    let (handler, mut urls) = Eliciting::new(ElicitationAction::Accept);
    let with_bearer = adapter
        .connect_handler(Some("caller-bearer"), handler)
        .await;
    let parked = call_in_background(with_bearer.peer(), "get_repository", repo_args());
    // The honest adapter answers at once with the bearer: no state, no URL.
    assert!(!state_of(&next_url(&mut urls).await).is_empty());
    assert!(still_parked(&parked).await);
    assert!(core.api_auth().is_empty(), "the bearer was never used");
    assert_eq!(core.token_posts(), 0);
}
