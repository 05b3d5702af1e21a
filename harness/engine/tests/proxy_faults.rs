//! Each fault of the fault proxy does what it says, against a tiny real
//! upstream on loopback that counts what reaches it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::routing::{get, post};
use grantgate_engine::proxy::{Canned, Fault, FaultProxy, MALFORMED_JSON};

/// A loopback upstream answering JSON, counting the requests that reach it.
async fn upstream() -> (String, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let (h1, h2) = (hits.clone(), hits.clone());
    let app = Router::new()
        .route(
            "/api/v1/things/{id}",
            get(move || {
                let h = h1.clone();
                async move {
                    h.fetch_add(1, Ordering::SeqCst);
                    axum::Json(serde_json::json!({"id": 7, "ok": true}))
                }
            }),
        )
        .route(
            "/api/v1/things/{id}/issues",
            post(move |body: String| {
                let h = h2.clone();
                async move {
                    h.fetch_add(1, Ordering::SeqCst);
                    (http::StatusCode::CREATED, body)
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, hits)
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

#[tokio::test]
async fn pass_forwards_the_request_and_returns_the_answer_untouched() {
    let (up, hits) = upstream().await;
    let proxy = FaultProxy::start(&up).await.unwrap();
    let resp = client()
        .post(format!("{}/api/v1/things/3/issues", proxy.url()))
        .body("{\"title\":\"t\"}")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    assert_eq!(resp.text().await.unwrap(), "{\"title\":\"t\"}");
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn drop_response_forwards_then_closes_without_an_answer() {
    let (up, hits) = upstream().await;
    let proxy = FaultProxy::start(&up).await.unwrap();
    proxy.inject("POST", "/api/v1/things/*/issues", Fault::DropResponse);
    let result = client()
        .post(format!("{}/api/v1/things/3/issues", proxy.url()))
        .body("x")
        .send()
        .await;
    assert!(result.is_err(), "expected a lost response, got {result:?}");
    assert_eq!(
        hits.load(Ordering::SeqCst),
        1,
        "the upstream must have acted"
    );
    assert_eq!(proxy.pending_faults(), 0);
}

#[tokio::test]
async fn malformed_json_replaces_the_body_and_keeps_the_status() {
    let (up, hits) = upstream().await;
    let proxy = FaultProxy::start(&up).await.unwrap();
    proxy.inject("GET", "/api/v1/things/*", Fault::MalformedJson);
    let resp = client()
        .get(format!("{}/api/v1/things/3", proxy.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let body = resp.text().await.unwrap();
    assert_eq!(body, MALFORMED_JSON);
    assert!(serde_json::from_str::<serde_json::Value>(&body).is_err());
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn replace_body_sends_the_given_bytes() {
    let (up, _) = upstream().await;
    let proxy = FaultProxy::start(&up).await.unwrap();
    proxy.inject(
        "GET",
        "/api/v1/things/*",
        Fault::ReplaceBody("{\"id\":8}".into()),
    );
    let resp = client()
        .get(format!("{}/api/v1/things/3", proxy.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.text().await.unwrap(), "{\"id\":8}");
}

#[tokio::test]
async fn status_replaces_only_the_status() {
    let (up, hits) = upstream().await;
    let proxy = FaultProxy::start(&up).await.unwrap();
    proxy.inject("GET", "/api/v1/things/*", Fault::Status(500));
    let resp = client()
        .get(format!("{}/api/v1/things/3", proxy.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 500);
    assert_eq!(resp.text().await.unwrap(), "{\"id\":7,\"ok\":true}");
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn redirect_answers_302_without_reaching_the_upstream() {
    let (up, hits) = upstream().await;
    let proxy = FaultProxy::start(&up).await.unwrap();
    proxy.inject(
        "GET",
        "/api/v1/things/*",
        Fault::Redirect("http://evil.test/x".into()),
    );
    let resp = client()
        .get(format!("{}/api/v1/things/3", proxy.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 302);
    assert_eq!(resp.headers()["location"], "http://evil.test/x");
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn delay_holds_the_answer_past_a_client_timeout() {
    let (up, hits) = upstream().await;
    let proxy = FaultProxy::start(&up).await.unwrap();
    proxy.inject(
        "GET",
        "/api/v1/things/*",
        Fault::Delay(Duration::from_secs(2)),
    );
    let started = std::time::Instant::now();
    let result = client()
        .get(format!("{}/api/v1/things/3", proxy.url()))
        .timeout(Duration::from_millis(300))
        .send()
        .await;
    assert!(result.unwrap_err().is_timeout());
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(
        hits.load(Ordering::SeqCst),
        1,
        "the upstream got the request"
    );
}

#[tokio::test]
async fn faults_apply_once_in_order_and_requests_are_counted() {
    let (up, hits) = upstream().await;
    let proxy = FaultProxy::start(&up).await.unwrap();
    proxy.inject("GET", "/api/v1/things/*", Fault::Status(503));
    let c = client();
    let url = format!("{}/api/v1/things/3", proxy.url());
    assert_eq!(c.get(&url).send().await.unwrap().status(), 503);
    assert_eq!(c.get(&url).send().await.unwrap().status(), 200);
    c.post(format!("{}/api/v1/things/4/issues", proxy.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(proxy.count("GET", "/api/v1/things/*"), 2);
    assert_eq!(proxy.count("POST", "/api/v1/things/*/issues"), 1);
    assert_eq!(proxy.count("POST", "/api/v1/things/*"), 0);
    assert_eq!(proxy.count("GET", "/api/v1/things/3"), 2);
    assert_eq!(hits.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn every_request_is_captured_whole_even_when_not_forwarded() {
    let (up, hits) = upstream().await;
    let proxy = FaultProxy::start(&up).await.unwrap();
    proxy.inject(
        "POST",
        "/api/v1/things/*/issues",
        Fault::Redirect("/elsewhere".into()),
    );
    client()
        .post(format!("{}/api/v1/things/5/issues?x=1", proxy.url()))
        .header("authorization", "token abc-captured-123")
        .body("body-captured-456")
        .send()
        .await
        .unwrap();
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    let captured = proxy.captured();
    assert_eq!(captured.len(), 1);
    assert_eq!(captured[0].method, "POST");
    assert_eq!(captured[0].path_and_query, "/api/v1/things/5/issues?x=1");
    assert!(captured[0].contains(b"abc-captured-123"));
    assert!(captured[0].contains(b"body-captured-456"));
    assert!(!captured[0].contains(b"never-sent"));
}

#[tokio::test]
async fn respond_answers_the_canned_status_headers_and_body_without_reaching_the_upstream() {
    let (up, hits) = upstream().await;
    let proxy = FaultProxy::start(&up).await.unwrap();
    proxy.inject(
        "POST",
        "/api/v1/things/*/issues",
        Fault::Respond(Canned::redirect(308, "/elsewhere")),
    );
    proxy.inject(
        "POST",
        "/api/v1/things/*/issues",
        Fault::Respond(Canned {
            status: 409,
            headers: vec![("x-marker".into(), "m1".into())],
            body: "{\"message\":\"m1\"}".into(),
        }),
    );
    let send = || {
        client()
            .post(format!("{}/api/v1/things/3/issues", proxy.url()))
            .body("{}")
            .send()
    };
    let first = send().await.unwrap();
    assert_eq!(first.status(), 308);
    assert_eq!(first.headers()["location"], "/elsewhere");
    let second = send().await.unwrap();
    assert_eq!(second.status(), 409);
    assert_eq!(second.headers()["x-marker"], "m1");
    assert_eq!(second.text().await.unwrap(), "{\"message\":\"m1\"}");
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    assert_eq!(proxy.count("POST", "/api/v1/things/*/issues"), 2);
}

#[tokio::test]
async fn clamp_limit_lowers_only_the_limit_the_upstream_sees() {
    let app = Router::new().route(
        "/api/v1/list",
        get(|uri: http::Uri| async move { uri.query().unwrap_or_default().to_owned() }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let proxy = FaultProxy::start(&up).await.unwrap();
    proxy.inject("GET", "/api/v1/list", Fault::ClampLimit(10));
    proxy.inject("GET", "/api/v1/list", Fault::ClampLimit(10));
    let get = |query: &'static str| {
        let url = format!("{}/api/v1/list?{query}", proxy.url());
        async move {
            client()
                .get(url)
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap()
        }
    };
    assert_eq!(
        get("page=2&limit=30&state=all").await,
        "page=2&limit=10&state=all"
    );
    assert_eq!(get("limit=5&page=1").await, "limit=5&page=1");
    assert_eq!(
        get("page=1&limit=30").await,
        "page=1&limit=30",
        "one request per fault"
    );
    assert_eq!(proxy.pending_faults(), 0);
}

/// A Core's answer over the body limit costs the proxy its limit, not what
/// the Core sends: the adapter gets the first bytes, then the answer breaks
/// off. (Twice the limit stands for an endless answer: a test that failed
/// by reading one without end would take the machine's memory with it.)
#[tokio::test]
async fn an_answer_over_the_limit_is_read_up_to_it_then_cut_off() {
    let limit = grantgate_engine::limits::body_limit();
    let chunk = bytes::Bytes::from(vec![b'0'; 64 * 1024]);
    let chunks = 2 * limit / chunk.len();
    let app = Router::new().route(
        "/api/v1/agent-work-grants",
        get(move || {
            let chunk = chunk.clone();
            let body = futures::stream::iter(
                (0..chunks).map(move |_| Ok::<_, std::io::Error>(chunk.clone())),
            );
            async move { axum::body::Body::from_stream(body) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let proxy = FaultProxy::start(&up).await.unwrap();
    let mut resp = client()
        .get(format!("{}/api/v1/agent-work-grants", proxy.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let mut bytes = 0;
    let broke_off = loop {
        match resp.chunk().await {
            Ok(Some(c)) => bytes += c.len(),
            Ok(None) => break false,
            Err(_) => break true,
        }
    };
    // Bytes still in flight when the connection breaks may be lost.
    assert!(
        broke_off && bytes > 0 && bytes <= limit,
        "{bytes} bytes, broke off: {broke_off}"
    );
}
