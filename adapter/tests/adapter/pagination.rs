//! Pagination (spec §6): `limit=30`, one page per call, continuation from
//! `X-Total-Count` / `Link` even when the Core clamps, Link URLs never followed,
//! `snapshot: false`.

use crate::support::*;
use serde_json::{Value, json};

fn grants(ids: std::ops::RangeInclusive<i64>) -> Value {
    Value::Array(ids.map(|id| grant(id, "awaiting_agent")).collect())
}

fn link(origin: &str, rels: &[(&str, i64, i64)]) -> String {
    rels.iter()
        .map(|(rel, page, limit)| {
            format!("<{origin}/api/v1/agent-work-grants?limit={limit}&page={page}>; rel=\"{rel}\"")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn query_pairs(request: &Recorded) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> =
        url::form_urlencoded::parse(request.query.as_deref().unwrap_or("").as_bytes())
            .into_owned()
            .collect();
    pairs.sort();
    pairs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_one_grants_make_two_pages() {
    let upstream = ScriptedUpstream::start().await;
    let o = upstream.origin();
    upstream.script(
        "GET",
        LIST_PATH,
        Action::json(200, &grants(1..=30))
            .header("X-Total-Count", "31")
            .header("Link", &link(&o, &[("next", 2, 30), ("last", 2, 30)])),
    );
    upstream.script(
        "GET",
        LIST_PATH,
        Action::json(200, &grants(31..=31))
            .header("X-Total-Count", "31")
            .header("Link", &link(&o, &[("prev", 1, 30), ("first", 1, 30)])),
    );
    let adapter = HttpAdapter::start(&o, TOKEN_ENV, &[]).await;
    let client = adapter.connect(None).await;
    let first = ok(&call(&client, "list_agent_work_grants", json!({})).await);
    assert_eq!(first["grants"].as_array().unwrap().len(), 30);
    assert_eq!(
        (
            first["page"].clone(),
            first["has_more"].clone(),
            first["next_page"].clone(),
            first["snapshot"].clone()
        ),
        (json!(1), json!(true), json!(2), json!(false))
    );
    let second = ok(&call(
        &client,
        "list_agent_work_grants",
        json!({"page": first["next_page"]}),
    )
    .await);
    assert_eq!(second["grants"].as_array().unwrap().len(), 1);
    assert_eq!(second["has_more"], false);
    assert_eq!(second["next_page"], Value::Null);
    assert_eq!(second["snapshot"], false);
    let requests = upstream.requests();
    assert_eq!(requests.len(), 2);
    let pairs = |v: &[(&str, &str)]| {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        query_pairs(&requests[0]),
        pairs(&[("limit", "30"), ("page", "1")])
    );
    assert_eq!(
        query_pairs(&requests[1]),
        pairs(&[("limit", "30"), ("page", "2")])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clamped_core_still_continues_and_link_urls_are_never_followed() {
    let upstream = ScriptedUpstream::start().await;
    let elsewhere = ScriptedUpstream::start().await;
    // The Core clamps to 10 and its Link points at another origin: the adapter
    // learns only that page 2 exists, and asks page 2 itself on the fixed origin.
    upstream.script(
        "GET",
        LIST_PATH,
        Action::json(200, &grants(1..=10))
            .header("X-Total-Count", "25")
            .header(
                "Link",
                &link(&elsewhere.origin(), &[("next", 2, 10), ("last", 3, 10)]),
            ),
    );
    upstream.script(
        "GET",
        LIST_PATH,
        Action::json(200, &grants(11..=20)).header("X-Total-Count", "25"),
    );
    upstream.script(
        "GET",
        LIST_PATH,
        Action::json(200, &grants(21..=25))
            .header("X-Total-Count", "25")
            .header(
                "Link",
                &link(&elsewhere.origin(), &[("prev", 2, 10), ("first", 1, 10)]),
            ),
    );
    let adapter = HttpAdapter::start(&upstream.origin(), TOKEN_ENV, &[]).await;
    let client = adapter.connect(None).await;
    let mut page = json!(1);
    let mut seen = vec![];
    loop {
        let answer = ok(&call(
            &client,
            "list_agent_work_grants",
            json!({"page": page, "state": "all"}),
        )
        .await);
        seen.extend(
            answer["grants"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| g["id"].as_i64().unwrap()),
        );
        if answer["has_more"] == false {
            assert_eq!(answer["next_page"], Value::Null);
            break;
        }
        page = answer["next_page"].clone();
    }
    assert_eq!(seen, (1..=25).collect::<Vec<_>>());
    assert_eq!(elsewhere.count(), 0, "a Link URL was followed");
    for (i, request) in upstream.requests().iter().enumerate() {
        let pairs = query_pairs(request);
        assert!(pairs.contains(&("limit".into(), "30".into())), "{pairs:?}");
        assert!(
            pairs.contains(&("page".into(), (i + 1).to_string())),
            "{pairs:?}"
        );
        assert!(pairs.contains(&("state".into(), "all".into())), "{pairs:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contradictory_page_headers_are_malformed() {
    let upstream = ScriptedUpstream::start().await;
    let o = upstream.origin();
    let cases = [
        Action::json(200, &grants(1..=30))
            .header("X-Total-Count", "30")
            .header("Link", &link(&o, &[("next", 2, 30)])),
        Action::json(200, &grants(1..=30))
            .header("X-Total-Count", "31")
            .header("Link", &link(&o, &[("next", 5, 30)])),
        Action::json(200, &grants(1..=5)).header("X-Total-Count", "many"),
        Action::json(200, &grants(1..=5)),
        Action::json(200, &json!([grant(2, "active"), grant(1, "active")]))
            .header("X-Total-Count", "2"),
        Action::json(200, &json!({"grants": []})).header("X-Total-Count", "0"),
        Action::json(200, &json!([{"id": 1}])).header("X-Total-Count", "1"),
    ];
    let adapter = HttpAdapter::start(&o, TOKEN_ENV, &[]).await;
    let client = adapter.connect(None).await;
    for action in cases {
        upstream.script("GET", LIST_PATH, action);
        expect_error(
            &call(&client, "list_agent_work_grants", json!({})).await,
            "malformed_response",
            Some(200),
        );
    }
    // An empty last page is fine.
    upstream.script(
        "GET",
        LIST_PATH,
        Action::json(200, &json!([]))
            .header("X-Total-Count", "0")
            .header("Link", ""),
    );
    let answer = ok(&call(&client, "list_agent_work_grants", json!({})).await);
    assert_eq!(
        answer,
        json!({"grants": [], "page": 1, "has_more": false, "next_page": null, "snapshot": false})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_issues_pages_the_same_way() {
    let upstream = ScriptedUpstream::start().await;
    let issues = Value::Array((1..=30).map(|i| issue(i, "t", "b")).collect());
    let next = format!(
        "<{}/api/v1/repos/alice/lab/issues?page=2&limit=30>; rel=\"next\"",
        upstream.origin()
    );
    upstream.script(
        "GET",
        ISSUES_PATH,
        Action::json(200, &issues)
            .header("X-Total-Count", "45")
            .header("Link", &next),
    );
    let adapter = HttpAdapter::start(&upstream.origin(), TOKEN_ENV, &[]).await;
    let client = adapter.connect(None).await;
    let answer = ok(&call(
        &client,
        "list_issues",
        json!({"owner": "alice", "repo": "lab"}),
    )
    .await);
    assert_eq!(answer["issues"].as_array().unwrap().len(), 30);
    assert_eq!(
        (answer["has_more"].clone(), answer["next_page"].clone()),
        (json!(true), json!(2))
    );
    assert_eq!(answer["snapshot"], false);
    assert_eq!(
        upstream.requests()[0].query.as_deref(),
        Some("page=1&limit=30")
    );
}

/// `Link` is a list field (RFC 9110 §5.3, spec §3): a Core may split it over
/// several field lines, put `next` in a later one and add other relations.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn link_split_over_field_lines_still_continues() {
    let upstream = ScriptedUpstream::start().await;
    let o = upstream.origin();
    upstream.script(
        "GET",
        LIST_PATH,
        Action::json(200, &grants(1..=30))
            .header("X-Total-Count", "31")
            .header("Link", &link(&o, &[("self", 1, 30)]))
            .header("Link", &link(&o, &[("next", 2, 30), ("last", 2, 30)])),
    );
    let adapter = HttpAdapter::start(&o, TOKEN_ENV, &[]).await;
    let client = adapter.connect(None).await;
    let first = ok(&call(&client, "list_agent_work_grants", json!({})).await);
    assert_eq!(first["grants"].as_array().unwrap().len(), 30);
    assert_eq!(
        (first["has_more"].clone(), first["next_page"].clone()),
        (json!(true), json!(2))
    );
}
