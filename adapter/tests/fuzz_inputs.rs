//! The adapter's input handling, fuzzed (spec §6): for every tool, arguments
//! built from a valid call and then mutated — any JSON value in any field,
//! fields removed, unknown fields, huge strings, deep nesting, near-valid
//! strings — never panic, and a call the rules refuse (`invalid_input`)
//! makes no upstream request. No call makes more than one.
//!
//! The tools run in process (`tools::dispatch`) against the scriptable
//! loopback upstream, which counts every request it receives.
//!
//! The suite runs 10,000 cases; outside CI, a million:
//!
//! ```sh
//! AWG_FUZZ_CASES=1000000 cargo test --release -p awg-mcp --test fuzz_inputs -- --nocapture
//! ```
//!
//! Invalid UTF-8 escapes (`"\ud800"`) cannot be held in a parsed value; they
//! are refused where the JSON-RPC text is parsed, which the test at the end
//! drives through the real binary.

mod support;

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use awg_mcp::config::{CoreOrigin, Credential};
use awg_mcp::tools::{self, Ctx};
use awg_mcp::upstream::Upstream;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Map, Value, json};
use support::*;

/// The loopback upstream and the runtime it lives in, shared by every case.
struct World {
    runtime: tokio::runtime::Runtime,
    upstream: ScriptedUpstream,
    ctx: Ctx,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let upstream = runtime.block_on(ScriptedUpstream::start());
        let origin = CoreOrigin::parse(&upstream.origin()).unwrap();
        let ctx = Ctx {
            upstream: Upstream::new(origin, Duration::from_secs(5)).unwrap(),
            credential: Ok(Credential::Token("fuzz-token".into())),
            consent: None,
        };
        World {
            runtime,
            upstream,
            ctx,
        }
    })
}

/// Every tool with its input properties, from `tools/list` itself, so a
/// new tool or field is fuzzed without touching this file.
fn tool_fields() -> Vec<(String, Vec<String>)> {
    tools::definitions()
        .into_iter()
        .map(|t| {
            let fields = t
                .input_schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            (t.name.to_string(), fields)
        })
        .collect()
}

/// A value the rules accept for `field`.
fn valid(field: &str) -> Value {
    match field {
        "owner" => json!("alice"),
        "repo" => json!("lab"),
        "grant_id" | "index" | "page" => json!(17),
        "proposal_schema" => json!("agent_work_grant.v1"),
        "proposal_version" => json!(1),
        "proposal_digest" => json!(DIGEST),
        "request_key" => json!(KEY),
        "title" => json!("a title"),
        "body" => json!("a body"),
        "state" => json!("active"),
        other => panic!("fuzz_inputs: add a valid value for the new field `{other}`"),
    }
}

/// Any JSON value: scalars of every kind (strings with control characters,
/// NULs, non-ASCII), then arrays and objects of them.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        Just(json!(0)),
        Just(json!(-1)),
        Just(json!(1.0)),
        Just(json!(i64::MAX)),
        Just(json!(u64::MAX)),
        ".{0,40}".prop_map(Value::from),
        "[a-z0-9._%/ -]{0,12}".prop_map(Value::from),
        "\\PC{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(".{0,8}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// One change to a valid call.
#[derive(Debug, Clone)]
enum Mutation {
    /// Replace field `n` (modulo the tool's field count) with a value.
    Set(usize, Value),
    /// Remove field `n`.
    Remove(usize),
    /// Add a field the schema does not name.
    Unknown(String, Value),
    /// Field `n` becomes a string of `len` copies of `c`.
    Huge(usize, char, usize),
    /// Field `n` becomes arrays or objects nested `depth` deep.
    Deep(usize, bool, usize),
    /// Field `n` keeps its valid text with one character changed at `at`.
    Tweak(usize, usize, char),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), any_json()).prop_map(|(n, v)| Mutation::Set(n, v)),
        2 => any::<usize>().prop_map(Mutation::Remove),
        2 => ("[a-z_]{1,16}|.{0,8}", any_json()).prop_map(|(k, v)| Mutation::Unknown(k, v)),
        1 => (any::<usize>(), any::<char>(), 1_000usize..100_000)
            .prop_map(|(n, c, len)| Mutation::Huge(n, c, len)),
        1 => (any::<usize>(), any::<bool>(), 1usize..1_000)
            .prop_map(|(n, arrays, depth)| Mutation::Deep(n, arrays, depth)),
        3 => (any::<usize>(), any::<usize>(), any::<char>())
            .prop_map(|(n, at, c)| Mutation::Tweak(n, at, c)),
    ]
}

fn nested(arrays: bool, depth: usize) -> Value {
    let mut value = json!(1);
    for _ in 0..depth {
        value = if arrays {
            Value::Array(vec![value])
        } else {
            json!({ "a": value })
        };
    }
    value
}

/// Applies `mutations` to a valid call of a tool with `fields`.
fn build(fields: &[String], optional_kept: &[bool], mutations: &[Mutation]) -> Map<String, Value> {
    let mut args = Map::new();
    for (i, f) in fields.iter().enumerate() {
        if optional_kept.get(i).copied().unwrap_or(true) {
            args.insert(f.clone(), valid(f));
        }
    }
    let pick = |n: usize| (!fields.is_empty()).then(|| fields[n % fields.len()].clone());
    for m in mutations {
        match m.clone() {
            Mutation::Set(n, v) => {
                if let Some(f) = pick(n) {
                    args.insert(f, v);
                }
            }
            Mutation::Remove(n) => {
                if let Some(f) = pick(n) {
                    args.remove(&f);
                }
            }
            Mutation::Unknown(k, v) => {
                if !fields.contains(&k) {
                    args.insert(k, v);
                }
            }
            Mutation::Huge(n, c, len) => {
                if let Some(f) = pick(n) {
                    args.insert(f, Value::String(std::iter::repeat_n(c, len).collect()));
                }
            }
            Mutation::Deep(n, arrays, depth) => {
                if let Some(f) = pick(n) {
                    args.insert(f, nested(arrays, depth));
                }
            }
            Mutation::Tweak(n, at, c) => {
                if let Some(f) = pick(n) {
                    let mut text: Vec<char> = match valid(&f) {
                        Value::String(s) => s.chars().collect(),
                        other => other.to_string().chars().collect(),
                    };
                    if !text.is_empty() {
                        let i = at % (text.len() + 1);
                        if i == text.len() {
                            text.push(c);
                        } else {
                            text[i] = c;
                        }
                    }
                    args.insert(f, Value::String(text.into_iter().collect()));
                }
            }
        }
    }
    args
}

/// Outcomes over a whole run, printed at the end.
#[derive(Default)]
struct Tally {
    cases: AtomicUsize,
    refused: AtomicUsize,
    forwarded: AtomicUsize,
    no_args: AtomicUsize,
    /// Time spent in forwarded calls, in microseconds.
    forwarded_us: AtomicUsize,
}

/// One case: call the tool, then check the upstream's count.
fn check_case(
    tool: &str,
    args: Option<Map<String, Value>>,
    tally: &Tally,
) -> Result<(), TestCaseError> {
    let w = world();
    let before = w.upstream.count();
    let started = std::time::Instant::now();
    let result = w
        .runtime
        .block_on(tools::dispatch(tool, args.as_ref(), &w.ctx));
    let requests = w.upstream.count() - before;
    tally.cases.fetch_add(1, Ordering::Relaxed);
    let Some(result) = result else {
        prop_assert_eq!(requests, 0, "unknown tool {} reached the upstream", tool);
        return Ok(());
    };
    prop_assert!(
        requests <= 1,
        "{} made {} upstream requests",
        tool,
        requests
    );
    let code = (result.is_error == Some(true))
        .then(|| {
            result.content.first().and_then(|c| {
                let text = &c.as_text()?.text;
                serde_json::from_str::<Value>(text).ok()?["code"]
                    .as_str()
                    .map(str::to_owned)
            })
        })
        .flatten();
    if code.as_deref() == Some("invalid_input") {
        tally.refused.fetch_add(1, Ordering::Relaxed);
        prop_assert_eq!(
            requests,
            0,
            "{} refused its input but made an upstream request",
            tool
        );
    } else {
        tally.forwarded.fetch_add(1, Ordering::Relaxed);
        tally
            .forwarded_us
            .fetch_add(started.elapsed().as_micros() as usize, Ordering::Relaxed);
    }
    Ok(())
}

fn cases() -> u32 {
    std::env::var("AWG_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}

#[test]
fn mutated_arguments_never_panic_and_refusals_never_reach_the_upstream() {
    let tools = tool_fields();
    assert_eq!(tools.len(), 9, "every tool is fuzzed");
    let names: Vec<String> = tools.iter().map(|(n, _)| n.clone()).collect();
    let by_name: BTreeMap<String, Vec<String>> = tools.into_iter().collect();
    let strategy = (
        // Now and then a tool name no tool has.
        prop_oneof![9 => prop::sample::select(names), 1 => ".{0,30}"],
        prop::collection::vec(any::<bool>(), 0..10),
        prop::collection::vec(mutation(), 0..4),
        // Now and then no arguments object at all.
        prop::bool::weighted(0.02),
    );
    let tally = Tally::default();
    let started = std::time::Instant::now();
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&strategy, |(tool, kept, mutations, absent)| {
        let fields = by_name.get(&tool).cloned().unwrap_or_default();
        let args = (!absent).then(|| build(&fields, &kept, &mutations));
        if absent {
            tally.no_args.fetch_add(1, Ordering::Relaxed);
        }
        check_case(&tool, args, &tally)
    });
    eprintln!(
        "fuzz_inputs: {} cases in {:.1} s: {} refused locally (0 upstream requests each), \
         {} forwarded or failed upstream ({:.1} s in those), {} without arguments; \
         upstream saw {} requests",
        tally.cases.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64(),
        tally.refused.load(Ordering::Relaxed),
        tally.forwarded.load(Ordering::Relaxed),
        tally.forwarded_us.load(Ordering::Relaxed) as f64 / 1e6,
        tally.no_args.load(Ordering::Relaxed),
        world().upstream.count(),
    );
    if let Err(e) = result {
        panic!("{e}");
    }
    // The mutations must reach both sides of the rules, or they prove little.
    assert!(tally.refused.load(Ordering::Relaxed) > 0);
    assert!(tally.forwarded.load(Ordering::Relaxed) > 0);
}

/// Invalid UTF-8 escapes reach the adapter only as JSON-RPC text: lone
/// surrogates (`\ud800`), truncated escapes, raw bytes that are not UTF-8.
/// Sent to the real binary over stdio, each such call is dropped or refused
/// without an upstream request, and the adapter keeps answering (a `ping`
/// after each one is answered).
#[test]
fn invalid_utf8_escapes_on_the_wire_never_reach_the_upstream() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let upstream = ScriptedUpstream::start().await;
        let mut child = tokio::process::Command::new(BIN)
            .args(["--core-url", &upstream.origin()])
            .env_clear()
            .env("AWG_TOKEN", "fuzz-token")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
"#;
        stdin.write_all(init).await.unwrap();
        lines.next_line().await.unwrap().expect("initialize answered");
        let bad: [&[u8]; 8] = [
            br"\ud800",
            br"\udfff",
            br"\ud800\u0041",
            br"\u12",
            br"\uZZZZ",
            b"\xff\xfe",
            b"\xc3\x28",
            b"\xed\xa0\x80",
        ];
        let tools = tool_fields();
        let mut id = 1u64;
        for (tool, fields) in &tools {
            for field in fields {
                for escape in bad {
                    let mut line = Vec::new();
                    line.extend_from_slice(
                        format!(
                            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"{field}":"a"#
                        )
                        .as_bytes(),
                    );
                    line.extend_from_slice(escape);
                    line.extend_from_slice(b"b\"}}}\n");
                    let ping = id + 1;
                    line.extend_from_slice(
                        format!("{{\"jsonrpc\":\"2.0\",\"id\":{ping},\"method\":\"ping\"}}\n")
                            .as_bytes(),
                    );
                    stdin.write_all(&line).await.unwrap();
                    loop {
                        let answer = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
                            .await
                            .expect("the adapter stopped answering")
                            .unwrap()
                            .expect("the adapter exited");
                        let answer: Value = serde_json::from_str(&answer).unwrap();
                        if answer["id"] == json!(ping) {
                            break;
                        }
                        assert!(
                            answer["error"].is_object() || answer["result"]["isError"] == json!(true),
                            "{tool}.{field}: an invalid escape was accepted: {answer}"
                        );
                    }
                    id += 2;
                }
            }
        }
        assert_eq!(upstream.count(), 0, "an invalid escape reached the upstream");
        eprintln!("fuzz_inputs: {} calls with invalid escapes, 0 upstream requests", id / 2);
    });
}
