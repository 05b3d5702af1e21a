//! Version, health, OpenAPI, unknown routes, the launch contract of §5 and
//! the measured numbers (start-to-ready, submission latency).

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use crate::check;
use crate::support::TestResult;
use crate::support::client::{Api, Auth};
use crate::support::core;
use crate::support::world::{Env, World, key, submission, unique};

/// `/api/v1/version` names the contract and the backend; healthz is 200.
pub async fn version_and_health(env: Arc<Env>) -> TestResult {
    let api = Api::new(&env.core.url);
    let v = api
        .get("/api/v1/version", &Auth::None)
        .await?
        .expect(200, "version")?
        .json();
    check!(v["contract"] == "agent_work_grant.v1", "contract {v}");
    check!(v["database"] == env.backend.name(), "database {v}");
    check!(v["version"].is_string(), "version {v}");
    check!(
        v["extensions"]
            == serde_json::json!([
                "CORE_CSRF_TTL_SECS",
                "CORE_OAUTH_CODE_TTL_SECS",
                "repo-visibility",
                "issue-edit",
                "token-delete"
            ]),
        "extensions {v}"
    );
    api.get("/api/healthz", &Auth::None)
        .await?
        .expect(200, "healthz")?;
    Ok(())
}

/// Every operation of the served OpenAPI document is routed: asked without
/// credentials it answers neither 404 nor 405 (protected ones say 401).
pub async fn openapi_every_operation_is_routed(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let public = format!("pub-{}", unique());
    w.create_repo(&w.owner, &public, false).await?;
    w.api
        .post(
            &format!("/api/v1/repos/{}/{public}/issues", w.owner),
            &w.admin,
            &json!({"title": "t"}),
        )
        .await?
        .expect(201, "issue")?;
    let doc = w
        .api
        .get("/api/v1/openapi.json", &Auth::None)
        .await?
        .expect(200, "openapi")?
        .json();
    check!(
        doc["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3.1")),
        "not OpenAPI 3.1: {}",
        doc["openapi"]
    );
    let paths = doc["paths"].as_object().ok_or("no paths")?;
    let mut operations = 0;
    for (template, item) in paths {
        // A path item may name its own server: `/` for the routes outside
        // `/api` (the OAuth token endpoint).
        let prefix = match item["servers"][0]["url"].as_str() {
            Some("/") => "",
            _ => "/api",
        };
        let path = format!("{prefix}{template}")
            .replace("{owner}", &w.owner)
            .replace("{repo}", &public)
            .replace("{login}", &w.bot)
            .replace("{id}", "1")
            .replace("{index}", "1")
            .replace("{request_key}", &key());
        check!(!path.contains('{'), "unfilled parameter in {template}");
        for method in ["get", "post", "put", "patch", "delete"] {
            if item.get(method).is_none() {
                continue;
            }
            operations += 1;
            let m =
                Method::from_bytes(method.to_uppercase().as_bytes()).map_err(|e| e.to_string())?;
            let body = (method != "get" && method != "delete").then(|| json!({}));
            let resp = w.api.call(m, &path, &Auth::None, body.as_ref()).await?;
            check!(
                resp.status != 404 && resp.status != 405,
                "{method} {template} is not routed: {}",
                resp.status
            );
            check!(
                resp.status < 500,
                "{method} {template} answered {}",
                resp.status
            );
        }
    }
    check!(operations >= 20, "only {operations} operations documented");
    Ok(())
}

/// Unknown API routes are JSON 404s; API answers never redirect.
pub async fn unknown_api_routes_are_json(env: Arc<Env>) -> TestResult {
    let api = Api::new(&env.core.url);
    for path in ["/api/v1/nope", "/api/v2/version", "/api/v1/repos/a"] {
        let r = api.get(path, &Auth::None).await?;
        check!(
            r.status == 404 && r.json()["message"].is_string(),
            "{path}: {} {}",
            r.status,
            r.text
        );
    }
    let r = api
        .call(
            Method::POST,
            "/api/v1/version",
            &Auth::None,
            Some(&json!({})),
        )
        .await?;
    check!(
        r.status == 405 && r.json()["message"].is_string(),
        "POST version: {}",
        r.status
    );
    Ok(())
}

/// §5: the listening line, migrations that survive a restart, SIGTERM exit
/// 0, refusal to start without a secret key, and no secret in the logs.
pub async fn launch_contract(env: Arc<Env>) -> TestResult {
    let place = core::fresh_database(env.backend, env.pg.as_deref()).await?;
    let mut first = core::start(env.backend, &place.url, &[])?;
    check!(
        first.url.starts_with("http://127.0.0.1:"),
        "listening line {}",
        first.url
    );
    let api = Api::new(&first.url);
    api.get("/api/healthz", &Auth::None)
        .await?
        .expect(200, "healthz")?;
    let admin_pw = Auth::Basic(core::ADMIN.into(), core::ADMIN_PASSWORD.into());
    let minted = api
        .post(
            &format!("/api/v1/users/{}/tokens", core::ADMIN),
            &admin_pw,
            &json!({"name": "keep", "scopes": ["all"]}),
        )
        .await?
        .expect(201, "mint")?
        .json();
    let token = minted["sha1"].as_str().ok_or("sha1")?.to_string();
    let status = first.terminate(Duration::from_secs(10))?;
    check!(status.success(), "SIGTERM exit status {status}");
    let log = first.stderr();
    for secret in [core::ADMIN_PASSWORD, core::SECRET, token.as_str()] {
        check!(!log.contains(secret), "a secret reached stderr");
    }
    // Restart on the same database: migrations are idempotent, data stays,
    // and the admin password is not reset by the environment.
    let second = core::start(
        env.backend,
        &place.url,
        &[("CORE_ADMIN_PASSWORD", "another-password-1")],
    )?;
    let api = Api::new(&second.url);
    api.get("/api/v1/version", &Auth::Token(token.clone()))
        .await?
        .expect(200, "old token after restart")?;
    api.get("/api/v1/agent-work-grants", &admin_pw)
        .await?
        .expect(200, "old admin password after restart")?;
    drop(second);
    // Missing or invalid configuration: a clear message and a non-zero exit.
    for (what, remove, set) in [
        ("no secret key", "CORE_SECRET_KEY", None),
        ("no database", "CORE_DATABASE_URL", None),
        (
            "bad database",
            "",
            Some(("CORE_DATABASE_URL", "mysql://nope")),
        ),
        ("bad listen", "", Some(("CORE_LISTEN", "not-an-address"))),
    ] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_refcore"));
        cmd.env_clear()
            .env("CORE_LISTEN", "127.0.0.1:0")
            .env("CORE_DATABASE_URL", &place.url)
            .env("CORE_SECRET_KEY", core::SECRET)
            .stdin(Stdio::null());
        if !remove.is_empty() {
            cmd.env_remove(remove);
        }
        if let Some((k, v)) = set {
            cmd.env(k, v);
        }
        let out = cmd.output().map_err(|e| format!("{what}: {e}"))?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        check!(!out.status.success(), "{what}: started anyway");
        check!(
            !String::from_utf8_lossy(&out.stdout).contains("core listening"),
            "{what}: printed the listening line"
        );
        let named = if remove.is_empty() {
            set.map(|s| s.0).unwrap_or_default()
        } else {
            remove
        };
        check!(
            stderr.contains(named),
            "{what}: message does not name {named}: {stderr}"
        );
        check!(
            !stderr.contains(core::SECRET),
            "{what}: secret in the message"
        );
    }
    Ok(())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Start-to-ready (spawn → healthz 200, p50 of five) and the median latency
/// of a new submission (thirty in a row), written to stderr and to
/// `target/tmp/refcore-measurements-<backend>.txt`.
pub async fn measurements(env: Arc<Env>) -> TestResult {
    let mut starts = Vec::new();
    for _ in 0..5 {
        let place = core::fresh_database(env.backend, env.pg.as_deref()).await?;
        let started = Instant::now();
        let core = core::start(env.backend, &place.url, &[])?;
        let api = Api::new(&core.url);
        loop {
            if api
                .get("/api/healthz", &Auth::None)
                .await
                .is_ok_and(|r| r.status == 200)
            {
                break;
            }
            check!(
                started.elapsed() < Duration::from_secs(30),
                "not ready after 30 s"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        starts.push(started.elapsed());
        drop(core);
    }
    let w = World::new(&env).await?;
    let (id, digest) = w.active_grant().await?;
    let path = format!("{}/issues", w.grant_path(id));
    let mut latencies = Vec::new();
    for i in 0..30 {
        let body: Value = submission(&digest, &key(), &format!("measure {i}"), "latency probe");
        let started = Instant::now();
        w.api
            .post(&path, &w.bot_auth, &body)
            .await?
            .expect(201, "submit")?;
        latencies.push(started.elapsed());
    }
    let ready = median(starts.clone());
    let submit = median(latencies);
    let report = format!(
        "refcore {}: start-to-ready p50 {:.1} ms (runs: {:?}); submission median {:.2} ms over 30\n",
        env.backend.name(),
        ready.as_secs_f64() * 1000.0,
        starts.iter().map(|d| d.as_millis()).collect::<Vec<_>>(),
        submit.as_secs_f64() * 1000.0
    );
    eprint!("{report}");
    let file = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("refcore-measurements-{}.txt", env.backend.name()));
    let _ = std::fs::write(file, &report);
    check!(ready < Duration::from_secs(10), "start-to-ready {ready:?}");
    check!(
        submit < Duration::from_millis(500),
        "submission median {submit:?}"
    );
    Ok(())
}
