//! Family 19: every grammar of the contract, as generated tables of valid
//! and invalid classes, run on every surface that accepts the value, with
//! the answer the spec gives (issue #27 §2). Each trial batches one
//! grammar's whole table on one stack; a wrong answer is collected, not
//! fatal, so the report lists every case a Core gets wrong at once.
//!
//! Where the spec leaves a status open (a malformed path segment: "not
//! found" or "invalid value"), every status it allows is accepted; never a
//! success. This file holds the tables and the request-key, digest and
//! number grammars; timestamps and text are in `text.rs`,
//! credentials in `credentials.rs`.

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT, Watch};
use crate::support::proxied::proxied_active_grant;
use crate::support::tables::{Table, at_once};

/// `text` as one URL path segment: every byte but RFC 3986's unreserved
/// ones percent-encoded, so a key holding `/`, `?`, a space or a newline
/// reaches the Core as exactly that segment.
pub(crate) fn segment(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `text` with the character at byte `at` (ASCII) replaced by `with`.
fn put(text: &str, at: usize, with: &str) -> String {
    format!("{}{with}{}", &text[..at], &text[at + 1..])
}

/// The hyphens of a canonical UUID, by byte offset.
const HYPHENS: [usize; 4] = [8, 13, 18, 23];
/// The version nibble (`4`) and the variant nibble (`8`–`b`).
const VERSION_AT: usize = 14;
const VARIANT_AT: usize = 19;

/// Valid request keys, generated from fresh random v4 keys: each variant
/// nibble `8`, `9`, `a`, `b`, and keys of only digits or only letters
/// around the fixed nibbles (spec §3 "canonical lowercase UUIDv4"); `shift`
/// starts those two elsewhere in their alphabet, so each call's differ.
fn valid_keys(shift: usize) -> Vec<(String, String)> {
    let fresh = || NewIssue::new("", "").request_key;
    let mut keys: Vec<(String, String)> = "89ab"
        .chars()
        .map(|v| {
            (
                format!("variant nibble {v}"),
                put(&fresh(), VARIANT_AT, &v.to_string()),
            )
        })
        .collect();
    let only = |digits: &str| -> String {
        let mut cycle = digits.chars().cycle().skip(shift);
        let hex: String = fresh()
            .chars()
            .enumerate()
            .map(|(i, c)| match i {
                _ if HYPHENS.contains(&i) || i == VERSION_AT => c,
                VARIANT_AT => '9',
                _ => cycle.next().unwrap_or('0'),
            })
            .collect();
        put(
            &hex,
            VARIANT_AT,
            if digits.starts_with('a') { "b" } else { "8" },
        )
    };
    keys.push(("only digits".into(), only("0123456789")));
    keys.push(("only letters".into(), only("abcdef")));
    keys
}

/// Every invalid class of a request key, generated from the valid `key`
/// (which starts with a letter, so case can differ): each
/// other version nibble, each variant nibble outside `8`–`b`, uppercase
/// whole or in one letter, each hyphen missing, replaced or moved, no
/// hyphens, braces, a `urn:uuid:` prefix, surrounding whitespace, one
/// character short or long, a non-hex character at every hex position, the
/// nil and max UUIDs, and empty.
fn invalid_keys(key: &str) -> Vec<(String, String)> {
    let mut bad = Vec::new();
    for v in "0123456789abcdef".chars().filter(|&c| c != '4') {
        bad.push((
            format!("version nibble {v}"),
            put(key, VERSION_AT, &v.to_string()),
        ));
    }
    for v in "01234567cdef".chars() {
        bad.push((
            format!("variant nibble {v}"),
            put(key, VARIANT_AT, &v.to_string()),
        ));
    }
    bad.push(("uppercase".into(), key.to_uppercase()));
    bad.push(("one letter uppercase".into(), put(key, 0, "A")));
    for at in HYPHENS {
        bad.push((
            format!("hyphen {at} missing"),
            format!("{}{}", &key[..at], &key[at + 1..]),
        ));
        bad.push((format!("hyphen {at} a digit"), put(key, at, "0")));
        let moved = format!("{}{}-{}", &key[..at], &key[at + 1..at + 2], &key[at + 2..]);
        bad.push((format!("hyphen {at} moved right"), moved));
    }
    bad.push(("no hyphens".into(), key.replace('-', "")));
    bad.push(("in braces".into(), format!("{{{key}}}")));
    bad.push(("urn:uuid: prefix".into(), format!("urn:uuid:{key}")));
    bad.push(("leading space".into(), format!(" {key}")));
    bad.push(("trailing newline".into(), format!("{key}\n")));
    bad.push(("one short".into(), key[..35].to_owned()));
    bad.push(("one long".into(), format!("{key}0")));
    // The first and last character of each group, each another non-hex one.
    let foreign = "gzGZ_é+ .x".chars();
    let ends = [0, 7, 9, 12, 15, 17, 20, 22, 24, 35];
    for (at, c) in ends.into_iter().zip(foreign) {
        bad.push((format!("{c:?} at {at}"), put(key, at, &c.to_string())));
    }
    bad.push((
        "nil UUID".into(),
        "00000000-0000-0000-0000-000000000000".into(),
    ));
    bad.push((
        "max UUID".into(),
        "ffffffff-ffff-ffff-ffff-ffffffffffff".into(),
    ));
    bad.push(("empty".into(), String::new()));
    bad
}

/// Every valid request-key class is accepted and read back, natively and
/// through the adapter; every invalid class is refused on both, writing
/// nothing.
#[scenario(Grammars, parity, clauses = ["S3.submit.request-key", "S3.route.readback", "S6.inputs.strict", "S3.statuses"])]
async fn request_key_grammar(ctx: &mut Ctx) -> Outcome {
    // Spec §3 Submit, §6 strict inputs; the classes are generated. Invalid:
    // 422 on native submit, never 200 on native readback (400, 404 or 422:
    // the spec leaves a malformed path segment open), and `invalid_input`
    // naming `request_key` on both adapter tools with not one request
    // reaching the Core.
    let (bot, grant, proposal) = proxied_active_grant(ctx, "Request keys").await?;
    let native = ctx.native(LAB_BOT)?;
    let valid = valid_keys(0);
    let mut submitted = Vec::new();

    ctx.step(&format!(
        "lab-bot submits {} valid keys, natively and through the adapter",
        valid.len()
    ));
    let mut native_submit = Table::new("valid request keys", "native submit");
    let mut adapter_submit = Table::new("valid request keys", "adapter submit");
    for (i, ((case, key), (_, other))) in valid.iter().zip(valid_keys(1)).enumerate() {
        let issue = NewIssue::new(&format!("Key class {i}"), case).with_key(key);
        let answer = native.submit(&grant, &proposal, &issue).await?;
        native_submit.status(case, &answer, &[201]);
        let again = NewIssue::new(&format!("Key class {i} (adapter)"), case).with_key(&other);
        let reply = bot.submit(&grant, &proposal, &again).await?;
        adapter_submit.tool_ok(case, &reply, Some(201));
        submitted.push(issue.request_key.clone());
        submitted.push(again.request_key.clone());
    }
    let mut cases = native_submit.finish(ctx)?;
    cases += adapter_submit.finish(ctx)?;

    ctx.step("each valid key reads back, natively and through the adapter");
    let mut readback = Table::new("valid request keys", "native and adapter readback");
    for key in &submitted {
        let answer = native.submission(&grant, key).await?;
        readback.status(&format!("native {key}"), &answer, &[200]);
        let reply = bot.submission(&grant, key).await?;
        readback.tool_ok(&format!("adapter {key}"), &reply, Some(200));
    }
    let readback_cases = readback.name_every_case("a valid key");
    cases += readback.finish(ctx)?;
    let issues = flows::issue_count(ctx, LAB).await?;

    // The keys with letters, submitted natively: its other spellings must
    // not read its receipt back.
    let letters = valid.iter().position(|(case, _)| case == "only letters");
    let base = letters
        .map(|i| submitted[2 * i].clone())
        .unwrap_or_default();
    let invalid = invalid_keys(&base);
    ctx.step(&format!(
        "lab-bot sends {} invalid keys to every surface",
        invalid.len()
    ));
    let mut native_submit = Table::new("invalid request keys", "native submit");
    let mut native_readback = Table::new("invalid request keys", "native readback");
    let (native, grant, proposal) = (&native, &grant, &proposal);
    let submits = at_once(invalid.iter().map(|(case, key)| async move {
        let issue = NewIssue::new("Invalid key", case).with_key(key);
        native.submit(grant, proposal, &issue).await
    }))
    .await?;
    let spelled: Vec<_> = invalid.iter().filter(|(_, key)| !key.is_empty()).collect();
    let readbacks = at_once(
        spelled
            .iter()
            .map(|(_, key)| async move { native.submission(grant, &segment(key)).await }),
    )
    .await?;
    for ((case, _), answer) in invalid.iter().zip(&submits) {
        native_submit.status(case, answer, &[422]);
    }
    for ((case, _), answer) in spelled.iter().zip(&readbacks) {
        native_readback.status(case, answer, &[400, 404, 422]);
    }
    let proxy = ctx.proxy().await?;
    let upstream = proxy.requests().len();
    let mut adapter_submit = Table::new("invalid request keys", "adapter submit");
    let mut adapter_readback = Table::new("invalid request keys", "adapter readback");
    for (case, key) in &invalid {
        let issue = NewIssue::new("Invalid key", case).with_key(key);
        let reply = bot.submit(grant, proposal, &issue).await?;
        adapter_submit.tool_error(case, &reply, "invalid_input", Some("request_key"));
        let reply = bot.submission(grant, key).await?;
        adapter_readback.tool_error(case, &reply, "invalid_input", Some("request_key"));
    }
    ctx.expect_eq(
        "no invalid key's call reached the Core through the adapter",
        proxy.requests().len(),
        upstream,
    )?;
    for table in [
        native_submit,
        native_readback,
        adapter_submit,
        adapter_readback,
    ] {
        cases += table.finish(ctx)?;
    }

    ctx.step("nothing was written for an invalid key");
    ctx.expect_eq(
        "Issues in alice/lab after the invalid keys",
        flows::issue_count(ctx, LAB).await?,
        issues,
    )?;
    ctx.observe("cases", &(cases, readback_cases));
    Ok(())
}

/// Every invalid class of a proposal digest, generated from the grant's
/// own: each non-hex lowercase letter (`g`–`z`) in turn at a position, each
/// hex letter in uppercase, the whole digest in uppercase, one digit short
/// and long, a non-ASCII digit, surrounding whitespace, and empty.
fn invalid_digests(digest: &str) -> Vec<(String, String)> {
    let mut bad = Vec::new();
    for (i, c) in ('g'..='z').enumerate() {
        let at = (i * 3) % 64;
        bad.push((format!("{c:?} at {at}"), put(digest, at, &c.to_string())));
    }
    for (i, c) in ('A'..='F').enumerate() {
        let at = 60 - i * 7;
        bad.push((format!("{c:?} at {at}"), put(digest, at, &c.to_string())));
    }
    bad.push(("uppercase".into(), digest.to_uppercase()));
    bad.push(("one short".into(), digest[..63].to_owned()));
    bad.push(("one long".into(), format!("{digest}0")));
    bad.push(("one short, one digit".into(), digest[1..].to_owned()));
    bad.push(("fullwidth digit".into(), put(digest, 10, "\u{ff10}")));
    bad.push(("trailing space".into(), format!("{digest} ")));
    bad.push(("empty".into(), String::new()));
    bad
}

/// Every invalid form of the grant's proposal digest is refused on confirm
/// and submit, natively and through the adapter, and the exact digest then
/// confirms and submits.
#[scenario(Grammars, parity, clauses = ["S2.digest", "S3.confirm.triple", "S3.submit.triple", "S6.inputs.strict"])]
async fn digest_grammar(ctx: &mut Ctx) -> Outcome {
    // Spec §3 Confirm and Submit, §6; the forms are generated. Native confirm
    // (while `awaiting_agent`) and submit (while `active`) refuse each
    // invalid form — uppercase included, which names the same bytes — with
    // 409 or 422 (a triple that differs, or an invalid value), and a
    // well-formed other digest with 409. Through the adapter each invalid
    // form is `invalid_input` naming `proposal_digest` with no request
    // reaching the Core. Nothing is written.
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in and prepares a grant for lab-bot");
    alice.login().await?;
    let bot = ctx.bot_builder(LAB_BOT).via_proxy().start().await?;
    let (grant, _) = alice
        .prepare_grant(LAB, LAB_BOT, "Digests", "summary")
        .await?;
    let native = ctx.native(LAB_BOT)?;
    let proposal = bot.read_proposal(&grant).await?;
    let invalid = invalid_digests(&proposal.digest);
    let zeros = "0".repeat(64);
    let other = if proposal.digest == zeros {
        "1".repeat(64)
    } else {
        zeros
    };
    let with = |digest: &str| Proposal {
        digest: digest.to_owned(),
        ..proposal.clone()
    };
    let watch = Watch::new(LAB_BOT, LAB).grant(&grant);
    let mut cases = 0;

    for (route, state) in [
        ("confirm", state::AWAITING_AGENT),
        ("submit", state::ACTIVE),
    ] {
        if route == "submit" {
            ctx.step("lab-bot confirms with the exact digest and alice approves");
            let answer = native.confirm(&grant, &proposal).await?;
            ctx.expect_status("the exact digest confirms", answer.status, 200)?;
            let page = alice.approve(&grant).await?;
            ctx.expect_status("approving", page.status, 200)?;
        }
        ctx.expect_eq(
            "the grant's state",
            flows::native_status(ctx, LAB_BOT, &grant).await?.0,
            state.to_owned(),
        )?;
        let before = watch.take(ctx).await?;
        ctx.step(&format!(
            "lab-bot sends {} digests to {route}",
            invalid.len() + 1
        ));
        let mut natively = Table::new("proposal digests", &format!("native {route}"));
        let mut adapter = Table::new("proposal digests", &format!("adapter {route}"));
        let proxy = ctx.proxy().await?;
        let upstream = proxy.requests().len();
        let (native, grant, with) = (&native, &grant, &with);
        let answers = at_once(invalid.iter().map(|(case, digest)| async move {
            if route == "confirm" {
                native.confirm(grant, &with(digest)).await
            } else {
                let issue = NewIssue::new("Digest", case);
                native.submit(grant, &with(digest), &issue).await
            }
        }))
        .await?;
        for ((case, digest), answer) in invalid.iter().zip(&answers) {
            natively.status(case, answer, &[409, 422]);
            let reply = if route == "confirm" {
                bot.confirm(grant, &with(digest)).await?
            } else {
                let issue = NewIssue::new("Digest", case);
                bot.submit(grant, &with(digest), &issue).await?
            };
            adapter.tool_error(case, &reply, "invalid_input", Some("proposal_digest"));
        }
        ctx.expect_eq(
            &format!("no invalid digest's {route} reached the Core through the adapter"),
            proxy.requests().len(),
            upstream,
        )?;
        let answer = if route == "confirm" {
            native.confirm(grant, &with(&other)).await?
        } else {
            let issue = NewIssue::new("Digest", "another digest");
            native.submit(grant, &with(&other), &issue).await?
        };
        natively.status("another well-formed digest", &answer, &[409]);
        cases += natively.finish(ctx)? + adapter.finish(ctx)?;
        watch
            .expect_unchanged(ctx, &format!("after the digests sent to {route}"), &before)
            .await?;
        ctx.expect_eq(
            "no Issue in alice/lab",
            flows::issue_count(ctx, LAB).await?,
            0,
        )?;
    }
    ctx.step("the exact digest submits");
    let answer = native
        .submit(&grant, &proposal, &NewIssue::new("Digest", "exact"))
        .await?;
    ctx.expect_status("the exact digest submits", answer.status, 201)?;
    ctx.observe("cases", &cases);
    Ok(())
}

/// `i64::MAX` and one more, as text.
const I64_MAX: &str = "9223372036854775807";
const I64_OVER: &str = "9223372036854775808";

/// Query numbers that are no page or limit (spec §3: `page` ≥ 1, `limit`
/// ≥ 1, a page number): 0, negative, a fraction, a word. (Past i64, `1.0`
/// or `1e3` the spec does not settle for a query, so they are left out.)
const BAD_QUERY_NUMBERS: [&str; 5] = ["0", "-1", "-9223372036854775808", "1.5", "abc"];

/// Queries with a `%` that starts no escape: at the end of a value or a
/// name, one hex digit short, no hex digits.
const MALFORMED_ESCAPES: [&str; 6] = [
    "page=%", "page=1%", "limit=%3", "state=%", "%=1", "page=%zz",
];

/// Grant ids in a path that name no grant (spec §1: a positive i64): also
/// past i64, exponents, hex and signs.
const BAD_IDS: [&str; 10] = [
    "0",
    "-1",
    "-9223372036854775808",
    I64_OVER,
    "1.5",
    "1e3",
    "abc",
    "0x10",
    "+",
    "1 ",
];

/// Numbers and states in the native list, grant paths and adapter inputs are
/// served when valid and refused when not, and nothing is written.
#[scenario(Grammars, parity, clauses = ["S3.list.page", "S3.list.state", "S6.inputs.strict", "S3.statuses"])]
async fn number_grammar(ctx: &mut Ctx) -> Outcome {
    // Spec §3 List, ids; §6 `page`, `state`, ids. Native list: `page` and
    // `limit` of 1, 2, 50, 51 and i64::MAX answer 200 and each invalid number
    // (0, negative, a fraction, a word) 400 or 422 (a malformed query or an
    // invalid value); each `state` name and `all` answer 200 with only grants
    // of that state, any other spelling 400 or 422; a `%` that starts no
    // escape is answered (200, 400 or 422), never with an error. A grant id
    // in a path that is not a positive i64 is never served (400, 404 or 422
    // on get, confirm, submit and readback) and i64::MAX is 404. Through the
    // adapter, `page` and `grant_id` of the wrong JSON type or out of
    // 1..=i64::MAX are `invalid_input` with no request reaching the Core,
    // while `page` i64::MAX is served.
    let (bot, grant, proposal) = proxied_active_grant(ctx, "Numbers").await?;
    let native = ctx.native(LAB_BOT)?;
    let issue = NewIssue::new("Numbers", "numbers");
    let watch = Watch::new(LAB_BOT, LAB)
        .grant(&grant)
        .key(&grant, &issue.request_key);
    let before = watch.take(ctx).await?;
    let mut cases = 0;

    ctx.step("lab-bot lists with every page, limit and state");
    let mut list = Table::new("page, limit and state", "native list");
    // (query, the state every listed grant has, or `None` for a refusal).
    let mut queries: Vec<(String, Option<&str>)> = Vec::new();
    for name in ["page", "limit"] {
        for n in ["1", "2", "50", "51", I64_MAX] {
            queries.push((format!("{name}={n}"), Some("all")));
        }
        for n in BAD_QUERY_NUMBERS {
            queries.push((format!("{name}={}", segment(n)), None));
        }
    }
    let states = [
        state::AWAITING_AGENT,
        state::AWAITING_HUMAN,
        state::ACTIVE,
        state::REVOKED,
        "all",
    ];
    for name in states {
        queries.push((format!("state={name}"), Some(name)));
    }
    for name in [
        "ACTIVE",
        "Active",
        "pending",
        "awaiting-agent",
        "active%20",
        "1",
    ] {
        queries.push((format!("state={name}"), None));
    }
    let native = &native;
    let answers = at_once(queries.iter().map(|(query, _)| native.list_grants(query))).await?;
    for ((query, listed), answer) in queries.iter().zip(&answers) {
        let Some(listed) = listed else {
            list.status(query, answer, &[400, 422]);
            continue;
        };
        let states: Vec<String> = answer
            .grants()
            .map(|g| g.into_iter().map(|g| g.state).collect())
            .unwrap_or_default();
        let ok = answer.status == 200
            && answer.grants().is_ok()
            && states.iter().all(|s| *listed == "all" || s == listed);
        list.check(query, ok, format!("{} {states:?}", answer.status));
    }
    // A `%` without two hex digits after it is malformed (RFC 3986
    // pct-encoded): 400, or a parser that keeps it literally or drops the
    // pair answers as for any other value; never an error or no answer.
    let answers = at_once(MALFORMED_ESCAPES.iter().map(|q| native.list_grants(q))).await?;
    for (query, answer) in MALFORMED_ESCAPES.iter().zip(&answers) {
        list.status(query, answer, &[200, 400, 422]);
    }
    cases += list.finish(ctx)?;

    ctx.step("lab-bot names grants by ids that are not positive i64 on every grant route");
    let mut ids = Table::new("grant ids", "native grant routes");
    let with_id = |id: &str| format!("/api/v1/repos/{LAB}/agent-work-grants/{}", segment(id));
    let routes = [
        ("get", "GET", "", None),
        (
            "confirm",
            "POST",
            "/confirm",
            Some(core_api::confirm_body(&proposal)),
        ),
        (
            "submit",
            "POST",
            "/issues",
            Some(core_api::submit_body(&proposal, &issue)),
        ),
        (
            "readback",
            "GET",
            &format!("/submissions/{}", issue.request_key),
            None,
        ),
    ];
    let calls: Vec<_> = routes
        .iter()
        .flat_map(|route| BAD_IDS.iter().chain(&[I64_MAX]).map(move |id| (route, *id)))
        .collect();
    let answers = at_once(calls.iter().map(|((_, method, tail, body), id)| {
        let path = format!("{}{tail}", with_id(id));
        async move { native.call(method, &path, body.as_ref()).await }
    }))
    .await?;
    for (((route, ..), id), answer) in calls.iter().zip(&answers) {
        let allowed: &[u16] = if *id == I64_MAX {
            &[404]
        } else {
            &[400, 404, 422]
        };
        ids.status(&format!("{route} {id}"), answer, allowed);
    }
    cases += ids.finish(ctx)?;

    ctx.step("lab-bot sends pages and grant ids of every JSON type through the adapter");
    let wrong_type = [
        ("0", json!(0)),
        ("-1", json!(-1)),
        ("2^63", json!(9_223_372_036_854_775_808u64)),
        ("1.5", json!(1.5)),
        ("1.0", json!(1.0)),
        ("\"1\"", json!("1")),
        ("true", json!(true)),
        ("null", json!(null)),
        ("[1]", json!([1])),
        ("{}", json!({})),
    ];
    let proxy = ctx.proxy().await?;
    let upstream = proxy.requests().len();
    let mut adapter = Table::new("page and grant_id", "adapter tools");
    for (case, value) in &wrong_type {
        let reply = bot
            .call("list_agent_work_grants", json!({"page": value}))
            .await?;
        adapter.tool_error(
            &format!("list page {case}"),
            &reply,
            "invalid_input",
            Some("page"),
        );
        let mut args = core_api::grant_args(&grant);
        args["grant_id"] = value.clone();
        let reply = bot.call("get_agent_work_grant", args).await?;
        adapter.tool_error(
            &format!("get grant_id {case}"),
            &reply,
            "invalid_input",
            Some("grant_id"),
        );
    }
    ctx.expect_eq(
        "no refused page or id reached the Core through the adapter",
        proxy.requests().len(),
        upstream,
    )?;
    let reply = bot
        .call("list_agent_work_grants", json!({"page": i64::MAX}))
        .await?;
    adapter.tool_ok("list page i64::MAX", &reply, None);
    let mut args = core_api::grant_args(&grant);
    args["grant_id"] = json!(i64::MAX);
    let reply = bot.call("get_agent_work_grant", args).await?;
    adapter.tool_error("get grant_id i64::MAX", &reply, "not_found", None);
    cases += adapter.finish(ctx)?;

    ctx.step("nothing was written");
    watch
        .expect_unchanged(ctx, "after every number", &before)
        .await?;
    ctx.observe("cases", &cases);
    Ok(())
}

/// `text` with every `%XX` decoded (other bytes as they are), as a server
/// reads one path segment.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
            Some(b) if bytes[i] == b'%' => {
                out.push(b);
                i += 3;
            }
            _ => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `owner` and `repo` values that are one path segment only when escaped,
/// or never: the dot segments and the empty one, encoded dots, an encoded
/// slash, the query and fragment marks, a space, a backslash (which URL
/// parsers may read as `/`), a percent sign.
const SEGMENTS: [&str; 11] = [
    ".", "..", "", "%2e%2e", "%2E.", "a%2Fb", "a?b", "a#b", "a b", "a\\b", "100%",
];

/// Each `owner` or `repo` value that is one path segment only when escaped is
/// refused by the adapter or sent as exactly that one segment, and nothing is
/// written.
#[scenario(Grammars, parity, clauses = ["S6.inputs.strict"])]
async fn segment_grammar(ctx: &mut Ctx) -> Outcome {
    // Spec §6: single path segments; in `owner` and in `repo` of the grant
    // tools. Refused: `invalid_input` naming the field, with no request
    // reaching the Core. Sent: the path the Core receives decodes back to the
    // value, and the answer is `not_found`.
    let (bot, grant, proposal) = proxied_active_grant(ctx, "Segments").await?;
    let issue = NewIssue::new("Segments", "segments");
    let watch = Watch::new(LAB_BOT, LAB)
        .grant(&grant)
        .key(&grant, &issue.request_key);
    let before = watch.take(ctx).await?;
    let proxy = ctx.proxy().await?;
    let mut table = Table::new("owner and repo", "adapter grant tools");
    ctx.step("lab-bot names the repository by segments that need escaping");
    for (tool, base) in [
        ("get_agent_work_grant", core_api::grant_args(&grant)),
        ("submit_agent_work_proposal", {
            let mut args = core_api::grant_args(&grant);
            if let (Some(args), Value::Object(body)) = (
                args.as_object_mut(),
                core_api::submit_body(&proposal, &issue),
            ) {
                args.extend(body);
            }
            args
        }),
    ] {
        for (field, at) in [("owner", 4), ("repo", 5)] {
            for value in SEGMENTS {
                let case = format!("{tool}: {field} {value:?}");
                let seen = proxy.captured().len();
                let mut args = base.clone();
                args[field] = json!(value);
                let reply = bot.call(tool, args).await?;
                let sent: Vec<String> = proxy.captured()[seen..]
                    .iter()
                    .map(|r| r.path_and_query.clone())
                    .collect();
                let refused = reply.error_code() == Some("invalid_input")
                    && reply.error_field() == Some(field)
                    && sent.is_empty();
                // Forwarded: one request, the value as its own segment.
                let path = |p: &String| p.split('?').next().unwrap_or_default().to_owned();
                let one_segment = sent.len() == 1
                    && path(&sent[0])
                        .split('/')
                        .nth(at)
                        .map(percent_decoded)
                        .as_deref()
                        == Some(value)
                    && reply.error_code() == Some("not_found");
                let got = match reply.error_code() {
                    Some("invalid_input") if refused => "invalid_input".to_owned(),
                    code => format!("{} via {sent:?}", code.unwrap_or("success")),
                };
                table.check(&case, refused || one_segment, got);
            }
        }
    }
    let cases = table.finish(ctx)?;
    ctx.step("nothing was written");
    watch
        .expect_unchanged(ctx, "after every segment", &before)
        .await?;
    ctx.observe("cases", &cases);
    Ok(())
}

/// Repository names tried longest first: the longest the Core takes is the
/// one the adapter must take too.
const NAME_LENGTHS: [usize; 4] = [100, 64, 40, 20];

/// The longest repository name the Core takes works through every adapter
/// tool: a grant there is confirmed and submitted, and everything reads back.
#[scenario(Grammars, parity, clauses = ["S6.inputs.strict", "S6.tools.grant", "S6.tools.public"])]
async fn longest_name_through_the_adapter(ctx: &mut Ctx) -> Outcome {
    // Names of 100, 64, 40 and 20 characters are tried. Spec §6:
    // `owner`/`repo` are single path segments, and an adapter has no length
    // of its own to impose. Read back: the repository, the Issue and the
    // receipt.
    ctx.step("alice gets the repository with the longest name the Core takes");
    let mut made = None;
    for len in NAME_LENGTHS {
        let name = format!("long-{}", "n".repeat(len - 5));
        let answer = (ctx.setup())
            .call(
                "POST",
                &core_api::admin_repos("alice"),
                Some(json!({"name": name, "private": true})),
            )
            .await?;
        if answer.status == 201 {
            made = Some(name);
            break;
        }
    }
    let Some(name) = made else {
        return Err(Abort::failed(format!(
            "the Core takes no repository name of {NAME_LENGTHS:?} characters"
        )));
    };
    ctx.observe("the longest name taken", &name.len());
    let repo = format!("alice/{name}");
    ctx.setup()
        .add_collaborator(&repo, LAB_BOT, "write")
        .await?;
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let (grant, proposal) = flows::active_grant(ctx, &alice, &bot, &repo, "A long name").await?;

    ctx.step("lab-bot submits through the grant and reads everything back by that name");
    let issue = NewIssue::new("Long name", "Through a long repository name.\n");
    let submitted = bot.submit(&grant, &proposal, &issue).await?;
    ctx.expect_tool_ok("submit_agent_work_proposal", &submitted)?;
    let back = bot.submission(&grant, &issue.request_key).await?;
    ctx.expect_tool_ok("get_agent_work_submission", &back)?;
    let args = json!({"owner": "alice", "repo": name});
    for (tool, args) in [
        ("get_repository", args.clone()),
        ("list_issues", args.clone()),
        (
            "get_issue",
            json!({"owner": "alice", "repo": name, "index": 1}),
        ),
    ] {
        let reply = bot.call(tool, args).await?;
        ctx.expect_tool_ok(tool, &reply)?;
    }
    Ok(())
}
