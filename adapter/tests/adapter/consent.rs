//! Consent mode (spec §9) end to end: the real `awg-mcp` over Streamable
//! HTTP, rmcp clients with and without URL-mode elicitation, and a loopback
//! fake authorization server that counts token POSTs and checks each
//! verifier against its challenge.

use std::time::{Duration, Instant};

use crate::support::{oauth::*, *};
use rmcp::model::ElicitationAction;
use serde_json::json;

/// Checks an authorize URL against the spec and returns its parameters.
fn check_authorize_url(core: &FakeCore, url: &str) -> Authorize {
    let authorize = Authorize::parse(url);
    assert_eq!(
        authorize.base,
        format!("{}/login/oauth/authorize", core.origin()),
        "{url}"
    );
    assert_eq!(authorize.get("response_type"), "code");
    assert_eq!(authorize.get("client_id"), CLIENT_ID);
    assert_eq!(authorize.get("redirect_uri"), REDIRECT_URI);
    assert_eq!(authorize.get("code_challenge_method"), "S256");
    assert_eq!(authorize.get("code_challenge").len(), 43);
    assert_eq!(authorize.get("scope"), "read:repository write:issue");
    assert!(
        url.contains("&scope=read%3Arepository%20write%3Aissue"),
        "{url}"
    );
    let state = authorize.get("state");
    assert!(
        state.len() >= 22
            && state
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
        "a state of at least 128 bits, base64url: {state}"
    );
    authorize
}

/// Every token POST carried a 43-character verifier whose S256 is a challenge we saw.
fn check_verifiers(core: &FakeCore, challenges: &[&str]) {
    for form in core.token_forms() {
        let verifier = &form["code_verifier"];
        assert_eq!(verifier.len(), 43, "{verifier:?}");
        assert!(challenges.contains(&s256(verifier).as_str()));
        assert_eq!(form["grant_type"], "authorization_code");
        assert_eq!(form["client_id"], CLIENT_ID);
        assert_eq!(form["redirect_uri"], REDIRECT_URI);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicitation_parks_the_call_and_the_callback_resumes_it() {
    let core = FakeCore::start().await;
    let adapter = start_consent(&core, &[], &[], None).await;
    let (client, mut urls) = accepting_client(&adapter).await;
    let parked = call_in_background(client.peer(), "get_repository", repo_args());
    let url = next_url(&mut urls).await;
    let authorize = check_authorize_url(&core, &url);
    assert!(
        still_parked(&parked).await,
        "the call must wait for consent"
    );
    assert_eq!(core.token_posts(), 0);
    assert!(core.api_auth().is_empty(), "nothing runs before consent");

    let query = core.consent(&url).await;
    let (status, page) = callback(&adapter, &query).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("close this window"), "{page}");
    let value = ok(&finished(parked).await);
    assert_eq!(value["repository"]["full_name"], "alice/lab");
    assert_eq!(core.token_posts(), 1, "exactly one token POST");
    check_verifiers(&core, &[authorize.get("code_challenge")]);
    let token = core.issued_tokens()[0].clone();
    assert_eq!(core.api_auth(), vec![format!("token {token}")]);

    // The session keeps its token: the next call runs at once, no new consent.
    ok(&call(&client, "get_repository", repo_args()).await);
    assert!(urls.try_recv().is_err(), "no second elicitation");
    assert_eq!(core.token_posts(), 1);
    assert_eq!(core.api_auth().len(), 2);
    // The callback's page and the logs carry no secret.
    let stderr = adapter.stderr();
    for secret in [token.as_str(), authorize.get("state"), &query] {
        assert!(!page.contains(secret) && !stderr.contains(secret));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_elicitation_auth_required_then_the_next_call_succeeds() {
    let core = FakeCore::start().await;
    let adapter = start_consent(&core, &[], &[], None).await;
    let client = adapter.connect(None).await;
    let first = auth_required_url(&call(&client, "get_repository", repo_args()).await);
    let second = auth_required_url(&call(&client, "get_repository", repo_args()).await);
    let (a, b) = (
        check_authorize_url(&core, &first),
        check_authorize_url(&core, &second),
    );
    assert_ne!(a.get("state"), b.get("state"), "a state per call");
    assert_ne!(
        a.get("code_challenge"),
        b.get("code_challenge"),
        "a fresh verifier per state"
    );
    assert!(core.api_auth().is_empty() && core.token_posts() == 0);

    let query = core.consent(&first).await;
    let (status, page) = callback(&adapter, &query).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(core.token_posts(), 1);
    check_verifiers(&core, &[a.get("code_challenge")]);
    let value = ok(&call(&client, "get_repository", repo_args()).await);
    assert_eq!(value["repository"]["full_name"], "alice/lab");
    let token = core.issued_tokens()[0].clone();
    assert_eq!(core.api_auth(), vec![format!("token {token}")]);
}

/// One raw GET of the callback with a chosen `Host`; returns the status.
async fn raw_callback(adapter: &HttpAdapter, host: &str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = adapter.origin().trim_start_matches("http://").to_owned();
    let mut socket = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "GET /mcp/oauth/callback?code=c&state=s HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    socket.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer);
    answer.split(' ').nth(1).unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_callbacks_exchange_nothing() {
    let core = FakeCore::start().await;
    let adapter = start_consent(&core, &[], &[], None).await;
    let client = adapter.connect(None).await;
    let url = auth_required_url(&call(&client, "get_repository", repo_args()).await);
    let query = core.consent(&url).await;
    let state = state_of(&url);
    let code = code_of(&query).to_owned();
    let mut altered = state.clone();
    let last = altered.pop().unwrap();
    altered.push(if last == 'A' { 'B' } else { 'A' });
    let unknown = "Q".repeat(43);
    for bad in [
        String::new(),
        format!("code={code}"),
        format!("code={code}&state="),
        format!("code={code}&state={unknown}"),
        format!("code={code}&state={altered}"),
        format!("code={code}&state={}", &state[..state.len() - 1]),
        format!("code={code}&state={state}x"),
    ] {
        let (status, page) = callback(&adapter, &bad).await;
        assert_eq!(status, 400, "{bad}: {page}");
        assert!(page.contains("<html"), "a small HTML page");
        assert!(!page.contains(&code) && !page.contains(&state));
    }
    assert_eq!(core.token_posts(), 0, "nothing exchanged");
    assert_eq!(
        raw_callback(&adapter, "evil.example").await,
        403,
        "Host guard"
    );

    // The real state was not spent by the refused ones; it is spent by its use.
    assert_eq!(callback(&adapter, &query).await.0, 200);
    assert_eq!(core.token_posts(), 1);
    let (status, _) = callback(&adapter, &query).await;
    assert_eq!(status, 400, "a replayed state");
    assert_eq!(core.token_posts(), 1, "a replay exchanges nothing");
    ok(&call(&client, "get_repository", repo_args()).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_states_and_ended_sessions_are_refused() {
    let core = FakeCore::start().await;
    let adapter = start_consent(&core, &[], &SHORT_TIMEOUT, None).await;
    let client = adapter.connect(None).await;
    let url = auth_required_url(&call(&client, "get_repository", repo_args()).await);
    let query = core.consent(&url).await;
    outlive_short_timeout().await;
    let (status, page) = callback(&adapter, &query).await;
    assert_eq!(status, 400, "expired: {page}");
    assert_eq!(core.token_posts(), 0);

    // A state whose MCP session ended (the client's DELETE) is dead at once.
    let other = adapter.connect(None).await;
    let url = auth_required_url(&call(&other, "get_repository", repo_args()).await);
    let query = core.consent(&url).await;
    other.cancel().await.unwrap();
    let (status, page) = callback(&adapter, &query).await;
    assert_eq!(status, 400, "session ended: {page}");
    assert_eq!(core.token_posts(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declining_is_consent_denied_and_exchanges_nothing() {
    let core = FakeCore::start().await;
    let adapter = start_consent(&core, &[], &[], None).await;
    // Declined at the Core: the callback carries error=access_denied.
    let (client, mut urls) = accepting_client(&adapter).await;
    let parked = call_in_background(client.peer(), "get_repository", repo_args());
    let url = next_url(&mut urls).await;
    let state = state_of(&url);
    let denial = format!("error=access_denied&state={state}");
    let (status, page) = callback(&adapter, &denial).await;
    assert_eq!(status, 200, "{page}");
    let result = finished(parked).await;
    expect_error(&result, "consent_denied", None);
    assert_eq!(callback(&adapter, &denial).await.0, 400, "spent");
    let query = core.consent(&url).await;
    assert_eq!(callback(&adapter, &query).await.0, 400, "spent");

    // Declined in the client: the elicitation answer is decline (or cancel).
    for action in [ElicitationAction::Decline, ElicitationAction::Cancel] {
        let (handler, mut urls) = Eliciting::new(action);
        let client = adapter.connect_handler(None, handler).await;
        let result = call(&client, "get_repository", repo_args()).await;
        expect_error(&result, "consent_denied", None);
        let url = next_url(&mut urls).await;
        let query = core.consent(&url).await;
        assert_eq!(
            callback(&adapter, &query).await.0,
            400,
            "the state is withdrawn"
        );
    }
    assert_eq!(core.token_posts(), 0);
    assert!(core.api_auth().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_is_consent_denied_and_withdraws_its_state() {
    let core = FakeCore::start().await;
    let adapter = start_consent(&core, &[], &[], None).await;
    let (client, mut urls) = accepting_client(&adapter).await;
    let parked = call_in_background(client.peer(), "get_repository", repo_args());
    let url = next_url(&mut urls).await;
    // Dropping rmcp's pending call sends `notifications/cancelled`.
    parked.abort();
    // rmcp sends no answer to a cancelled request: the code shows in the log.
    let line = wait_for_log(&adapter, "tool failed").await;
    assert!(
        line.contains("code=ConsentDenied"),
        "a cancel is no timeout: {line}"
    );
    let query = core.consent(&url).await;
    assert_eq!(
        callback(&adapter, &query).await.0,
        400,
        "the state is withdrawn"
    );
    assert_eq!(core.token_posts(), 0);
    assert!(core.api_auth().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_exchange_is_consent_failed_after_exactly_one_post() {
    let core = FakeCore::start().await;
    let adapter = start_consent(&core, &[], &[], None).await;
    let (client, mut urls) = accepting_client(&adapter).await;
    let cases = [
        (TokenMode::Honest, "bogus-code", 400),
        (TokenMode::Status(500), "", 502),
        (TokenMode::Status(302), "", 502),
        (TokenMode::Malformed, "", 502),
        (TokenMode::Status(401), "", 502),
    ];
    for (round, (mode, code, page_status)) in cases.into_iter().enumerate() {
        core.token_mode(TokenMode::Honest);
        let parked = call_in_background(client.peer(), "get_repository", repo_args());
        let url = next_url(&mut urls).await;
        let mut query = core.consent(&url).await;
        if !code.is_empty() {
            let state = state_of(&url);
            query = format!("code={code}&state={state}");
        }
        core.token_mode(mode);
        let (status, page) = callback(&adapter, &query).await;
        assert_eq!(status, page_status, "{mode:?}: {page}");
        let result = finished(parked).await;
        expect_error(&result, "consent_failed", None);
        assert_eq!(core.token_posts(), round + 1, "{mode:?}: exactly one POST");
        assert_eq!(callback(&adapter, &query).await.0, 400, "spent");
        assert_eq!(core.token_posts(), round + 1, "no retry, no second POST");
    }
    assert!(core.api_auth().is_empty(), "a failed call is never resumed");
    // A callback whose state is valid but without a code fails the call too, with no POST.
    core.token_mode(TokenMode::Honest);
    let parked = call_in_background(client.peer(), "get_repository", repo_args());
    let state = state_of(&next_url(&mut urls).await);
    assert_eq!(callback(&adapter, &format!("state={state}")).await.0, 400);
    let result = finished(parked).await;
    expect_error(&result, "consent_failed", None);
    assert_eq!(core.token_posts(), cases.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirected_token_post_is_not_followed() {
    let core = FakeCore::start().await;
    let adapter = start_consent(&core, &[], &[], None).await;
    let (client, mut urls) = accepting_client(&adapter).await;
    let parked = call_in_background(client.peer(), "get_repository", repo_args());
    let query = core.consent(&next_url(&mut urls).await).await;
    core.token_mode(TokenMode::Redirect);
    let (status, page) = callback(&adapter, &query).await;
    assert_eq!(status, 502, "{page}");
    expect_error(&finished(parked).await, "consent_failed", None);
    assert_eq!(core.token_posts(), 1);
    assert_eq!(core.moved_requests(), 0, "the Location got no request");
    assert!(core.api_auth().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_consent_before_the_deadline_is_consent_timeout() {
    let core = FakeCore::start().await;
    let adapter = start_consent(&core, &[], &SHORT_TIMEOUT, None).await;
    let (client, mut urls) = accepting_client(&adapter).await;
    let started = Instant::now();
    let result = call(&client, "get_repository", repo_args()).await;
    let waited = started.elapsed();
    expect_error(&result, "consent_timeout", None);
    assert!(
        waited >= Duration::from_millis(900) && waited < WAIT,
        "{waited:?}"
    );
    let url = next_url(&mut urls).await;
    let query = core.consent(&url).await;
    assert_eq!(callback(&adapter, &query).await.0, 400, "the state expired");
    assert_eq!(core.token_posts(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_state_alone_decides_which_session_a_callback_serves() {
    let core = FakeCore::start().await;
    let adapter = start_consent(&core, &[], &[], None).await;
    let (alice, mut alice_urls) = Eliciting::new(ElicitationAction::Accept);
    let (bob, mut bob_urls) = Eliciting::new(ElicitationAction::Accept);
    let alice = adapter.connect_handler(None, alice).await;
    let bob = adapter.connect_handler(None, bob).await;
    let alice_call = call_in_background(alice.peer(), "get_repository", repo_args());
    let alice_url = next_url(&mut alice_urls).await;
    let bob_call = call_in_background(bob.peer(), "get_repository", repo_args());
    let bob_url = next_url(&mut bob_urls).await;

    // Alice's code delivered with Bob's state: Bob's verifier does not match
    // Alice's challenge, so the one exchange fails and only Bob's call ends.
    let alice_query = core.consent(&alice_url).await;
    let alice_code = code_of(&alice_query);
    let bob_state = state_of(&bob_url);
    let (status, _) = callback(&adapter, &format!("code={alice_code}&state={bob_state}")).await;
    assert_eq!(status, 400);
    assert_eq!(core.token_posts(), 1);
    let result = finished(bob_call).await;
    expect_error(&result, "consent_failed", None);
    assert!(still_parked(&alice_call).await, "Alice's call stays parked");

    // Alice consents again (her state is unspent); only her call resumes.
    let query = core.consent(&alice_url).await;
    assert_eq!(callback(&adapter, &query).await.0, 200);
    ok(&finished(alice_call).await);
    assert_eq!(core.token_posts(), 2);
    // Bob has no token: his next call asks for consent again.
    let bob_again = call_in_background(bob.peer(), "get_repository", repo_args());
    next_url(&mut bob_urls).await;
    assert_eq!(
        core.api_auth().len(),
        1,
        "only Alice's call reached the API"
    );
    bob_again.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consented_token_serves_only_its_own_session() {
    let core = FakeCore::start().await;
    let adapter = start_consent(&core, &[], &[], None).await;
    let alice = adapter.connect(None).await;
    let bob = adapter.connect(None).await;
    auth_required_url(&call(&bob, "get_repository", repo_args()).await);
    let url = auth_required_url(&call(&alice, "get_repository", repo_args()).await);
    let query = core.consent(&url).await;
    assert_eq!(callback(&adapter, &query).await.0, 200);
    ok(&call(&alice, "get_repository", repo_args()).await);
    auth_required_url(&call(&bob, "get_repository", repo_args()).await);
    assert_eq!(core.api_auth().len(), 1);
    // That a session's end drops its token is not visible from outside (the
    // ended session can make no more calls): see the unit tests in store.rs.
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bearer_wins_and_invalid_input_mints_nothing() {
    let core = FakeCore::start().await;
    let adapter = start_consent(&core, &[], &[], None).await;
    let (handler, mut urls) = Eliciting::new(ElicitationAction::Accept);
    let with_bearer = adapter
        .connect_handler(Some("caller-bearer"), handler)
        .await;
    ok(&call(&with_bearer, "get_repository", repo_args()).await);
    assert_eq!(core.api_auth(), vec!["token caller-bearer".to_owned()]);

    let (handler, mut more_urls) = Eliciting::new(ElicitationAction::Accept);
    let without = adapter.connect_handler(None, handler).await;
    let result = call(&without, "get_repository", json!({"owner": "alice"})).await;
    expect_error(&result, "invalid_input", None);
    let result = call(
        &without,
        "get_issue",
        json!({"owner": "alice", "repo": "lab", "index": "1"}),
    )
    .await;
    expect_error(&result, "invalid_input", None);
    tokio::time::sleep(SETTLE).await;
    assert!(urls.try_recv().is_err() && more_urls.try_recv().is_err());
    assert_eq!(core.token_posts(), 0);
    assert_eq!(core.api_auth().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_never_reaches_the_disk_or_the_logs() {
    let core = FakeCore::start().await;
    let dir = tempfile::tempdir().unwrap();
    let adapter = start_consent(
        &core,
        &[("AWG_LOG", "awg_mcp=trace,rmcp=info")],
        &[],
        Some(dir.path()),
    )
    .await;
    let client = adapter.connect(None).await;
    let url = auth_required_url(&call(&client, "get_repository", repo_args()).await);
    let query = core.consent(&url).await;
    assert_eq!(callback(&adapter, &query).await.0, 200);
    ok(&call(&client, "get_repository", repo_args()).await);
    let token = core.issued_tokens()[0].clone();
    let verifier = core.token_forms()[0]["code_verifier"].clone();
    let state = state_of(&url);
    let code = core.token_forms()[0]["code"].clone();
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "files in the working directory: {left:?}");
    let stderr = adapter.stderr();
    assert!(stderr.contains("consent"), "the flow is logged: {stderr}");
    for secret in [&token, &verifier, &state, &code] {
        assert!(!stderr.contains(secret.as_str()), "a secret in the logs");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consent_mode_needs_http_both_flags_and_no_process_credential() {
    let core = "http://127.0.0.1:9";
    let http = ["--transport", "http", "--core-url", core];
    let with = |extra: &[&'static str]| {
        let mut args = http.to_vec();
        args.extend_from_slice(extra);
        args
    };
    let id = ["--oauth-client-id", CLIENT_ID];
    let public = ["--public-url", PUBLIC_URL];
    let stderr = start_error(&with(&id), &[]).await;
    assert!(stderr.contains("--public-url"), "{stderr}");
    let stderr = start_error(&with(&public), &[]).await;
    assert!(stderr.contains("--oauth-client-id"), "{stderr}");
    let both = [id, public].concat();
    let stderr = start_error(&with(&both), &[("AWG_TOKEN", "process-token-77")]).await;
    assert!(stderr.contains("process credential"), "{stderr}");
    assert!(!stderr.contains("process-token-77"));
    let mut stdio = vec!["--core-url", core];
    stdio.extend_from_slice(&both);
    let stderr = start_error(&stdio, &[]).await;
    assert!(stderr.contains("--transport http"), "{stderr}");
    for (public_url, problem) in [
        ("https://awg.example/mcp", "a path is not allowed"),
        ("https://awg.example", "--allow-remote"),
    ] {
        let stderr = start_error(
            &with(&["--oauth-client-id", CLIENT_ID, "--public-url", public_url]),
            &[],
        )
        .await;
        assert!(
            stderr.contains("--public-url") && stderr.contains(problem),
            "{stderr}"
        );
    }
    let stderr = start_error(
        &with(&[&both[..], &["--consent-timeout-secs", "0"]].concat()),
        &[],
    )
    .await;
    assert!(stderr.contains("consent-timeout-secs"), "{stderr}");
    // The environment works as well as the flags.
    let stderr = start_error(&http, &[("AWG_OAUTH_CLIENT_ID", CLIENT_ID)]).await;
    assert!(stderr.contains("--public-url"), "{stderr}");
}
