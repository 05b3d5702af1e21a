//! Family 19, continued: the grammars of timestamps (spec §2, §3 "RFC
//! 3339") and of an Issue's title and body (§2 text, §3 Submit), as
//! generated tables on the native API and through the adapter.

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT};
use crate::support::tables::{Table, at_once};

/// A grant's five timestamp members (spec §2), read from the object as the
/// Core sent it: `created_at` and `updated_at` always RFC 3339, the other
/// three `null` or RFC 3339; any other value is recorded in `wrong`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamps {
    created: Option<OffsetDateTime>,
    updated: Option<OffsetDateTime>,
    confirmed: Option<OffsetDateTime>,
    approved: Option<OffsetDateTime>,
    revoked: Option<OffsetDateTime>,
}

impl Stamps {
    /// The five values as JSON, RFC 3339 or `null`, for a report.
    fn json(&self) -> String {
        let show = |t: Option<OffsetDateTime>| t.and_then(|t| t.format(&Rfc3339).ok());
        json!({
            "created_at": show(self.created), "updated_at": show(self.updated),
            "confirmed_at": show(self.confirmed), "approved_at": show(self.approved),
            "revoked_at": show(self.revoked),
        })
        .to_string()
    }
}

/// Reads one timestamp member of `object`: `Ok(None)` for `null` when
/// `nullable`, else RFC 3339 or a description of what is there.
fn stamp(object: &Value, name: &str, nullable: bool) -> Result<Option<OffsetDateTime>, String> {
    match object.get(name) {
        Some(Value::Null) if nullable => Ok(None),
        Some(Value::String(text)) => rfc3339(text)
            .map(Some)
            .ok_or_else(|| format!("{name} = {text:?} is not RFC 3339")),
        Some(other) => Err(format!("{name} = {other} is not an RFC 3339 string")),
        None => Err(format!("{name} is missing")),
    }
}

/// `t` to the whole second: events are compared so, as a Core may keep
/// some members finer than others.
fn second(t: OffsetDateTime) -> OffsetDateTime {
    t.replace_nanosecond(0).unwrap_or(t)
}

/// Reads and checks a grant's timestamps: every member RFC 3339 (or `null`
/// where the spec allows), each event set exactly when its state says it
/// happened, `updated_at` ≥ `created_at`, and the events in the order the
/// states allow (created ≤ confirmed ≤ approved, each ≤ revoked).
fn grant_stamps(table: &mut Table, case: &str, grant: &Value) -> Option<Stamps> {
    let mut wrong = Vec::new();
    let mut read = |name: &str, nullable: bool| {
        stamp(grant, name, nullable).unwrap_or_else(|e| {
            wrong.push(e);
            None
        })
    };
    let stamps = Stamps {
        created: read("created_at", false),
        updated: read("updated_at", false),
        confirmed: read("confirmed_at", true),
        approved: read("approved_at", true),
        revoked: read("revoked_at", true),
    };
    let state = grant["state"].as_str().unwrap_or_default();
    // Which events a grant in `state` has seen: revoked grants may have been
    // withdrawn before or after confirmation or approval.
    let (confirmed, approved) = match state {
        state::AWAITING_AGENT => (Some(false), Some(false)),
        state::AWAITING_HUMAN => (Some(true), Some(false)),
        state::ACTIVE => (Some(true), Some(true)),
        _ => (None, None),
    };
    let revoked = state == state::REVOKED;
    for (name, set, expected) in [
        ("confirmed_at", stamps.confirmed.is_some(), confirmed),
        ("approved_at", stamps.approved.is_some(), approved),
        ("revoked_at", stamps.revoked.is_some(), Some(revoked)),
    ] {
        if expected.is_some_and(|e| e != set) && !wrong.iter().any(|w| w.starts_with(name)) {
            wrong.push(format!(
                "{name} {} while {state}",
                if set { "set" } else { "null" }
            ));
        }
    }
    if revoked && stamps.approved.is_some() && stamps.confirmed.is_none() {
        wrong.push("approved_at set without confirmed_at".into());
    }
    let order = [
        ("created_at", stamps.created),
        ("confirmed_at", stamps.confirmed),
        ("approved_at", stamps.approved),
        ("revoked_at", stamps.revoked),
    ];
    let present: Vec<_> = order
        .iter()
        .filter_map(|(n, t)| t.map(|t| (n, second(t))))
        .collect();
    for pair in present.windows(2) {
        if pair[0].1 > pair[1].1 {
            wrong.push(format!("{} after {}", pair[0].0, pair[1].0));
        }
    }
    if let (Some(created), Some(updated)) = (stamps.created, stamps.updated)
        && second(updated) < second(created)
    {
        wrong.push("updated_at before created_at".into());
    }
    table.check(
        case,
        wrong.is_empty(),
        if wrong.is_empty() {
            "consistent".to_owned()
        } else {
            wrong.join(", ")
        },
    );
    Some(stamps)
}

/// Checks a `{grant, submission}` answer: the grant's timestamps, and the
/// submission's `created_at` RFC 3339, not before the grant's approval.
fn receipt_stamps(table: &mut Table, case: &str, pair: &Value) -> Option<OffsetDateTime> {
    let grant = grant_stamps(table, &format!("{case}: grant"), &pair["grant"]);
    let created = stamp(&pair["submission"], "created_at", false);
    let early = match (&created, grant.and_then(|g| g.approved)) {
        (Ok(Some(at)), Some(approved)) => second(*at) < second(approved),
        _ => false,
    };
    let got = match &created {
        Err(e) => e.clone(),
        Ok(_) if early => "created_at before the grant's approval".into(),
        Ok(_) => "RFC 3339".into(),
    };
    table.check(
        &format!("{case}: submission"),
        created.is_ok() && !early,
        got,
    );
    created.ok().flatten()
}

/// Every timestamp member is strict RFC 3339 on every surface that shows it,
/// and consistent through a grant's life.
#[scenario(Grammars, parity, clauses = ["S2.grant.timestamps", "S2.grant.members", "S3.submission.members"])]
async fn timestamp_grammar(ctx: &mut Ctx) -> Outcome {
    // The grant's `created_at` and `updated_at` always (`updated_at` ≥
    // `created_at`); `confirmed_at`, `approved_at` and `revoked_at` `null`
    // until their event and set from it on, in the order of the events, and a
    // grant withdrawn before confirmation never gains `confirmed_at`; a
    // receipt's `created_at` not before the approval and the same on every
    // readback and replay. Read natively (get, list, confirm, submit,
    // readback, replay) and through the adapter (get, list, submit,
    // readback).
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in and prepares two grants for lab-bot");
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let native = ctx.native(LAB_BOT)?;
    let (grant, _) = alice
        .prepare_grant(LAB, LAB_BOT, "Timestamps", "summary")
        .await?;
    let (early, _) = alice
        .prepare_grant(LAB, LAB_BOT, "Withdrawn early", "summary")
        .await?;
    let mut natively = Table::new("timestamps", "native grant routes");
    let mut adapter = Table::new("timestamps", "adapter tools");
    let mut fixed = Table::new("timestamps", "a grant's life");
    let read = |answer: &Answer| answer.json().unwrap_or(Value::Null);

    let mut seen: Vec<(String, Stamps)> = Vec::new();
    let mut watch = |table: &mut Table, case: &str, grant: &Value| {
        if let Some(stamps) = grant_stamps(table, case, grant) {
            seen.push((case.to_owned(), stamps));
        }
    };
    for (case, g) in [
        ("awaiting_agent", &grant),
        ("early, awaiting_agent", &early),
    ] {
        let answer = native.get_grant(g).await?;
        watch(&mut natively, &format!("get {case}"), &read(&answer));
        let reply = bot.get_grant(g).await?;
        let structured = reply.structured.clone().unwrap_or_default();
        watch(&mut adapter, &format!("get {case}"), &structured["grant"]);
    }

    ctx.step("lab-bot confirms, alice approves, lab-bot submits and reads back");
    let proposal = bot.read_proposal(&grant).await?;
    let answer = native.confirm(&grant, &proposal).await?;
    ctx.expect_status("confirm", answer.status, 200)?;
    watch(&mut natively, "confirm answer", &read(&answer));
    let answer = native.get_grant(&grant).await?;
    watch(&mut natively, "get awaiting_human", &read(&answer));
    let page = alice.approve(&grant).await?;
    ctx.expect_status("approving", page.status, 200)?;
    let answer = native.get_grant(&grant).await?;
    watch(&mut natively, "get active", &read(&answer));

    let first = NewIssue::new("Timestamped", "native");
    let answer = native.submit(&grant, &proposal, &first).await?;
    ctx.expect_status("native submit", answer.status, 201)?;
    let submitted = receipt_stamps(&mut natively, "submit", &read(&answer));
    let replayed = native.submit(&grant, &proposal, &first).await?;
    ctx.expect_status("native replay", replayed.status, 200)?;
    let replay_at = receipt_stamps(&mut natively, "replay", &read(&replayed));
    let back = native.submission(&grant, &first.request_key).await?;
    let back_at = receipt_stamps(&mut natively, "readback", &read(&back));
    fixed.check(
        "the receipt's created_at on submit, replay and readback",
        submitted.is_some() && replay_at == submitted && back_at == submitted,
        "compared",
    );
    let second = NewIssue::new("Timestamped", "adapter");
    let reply = bot.submit(&grant, &proposal, &second).await?;
    ctx.expect_tool_ok("adapter submit", &reply)?;
    let via_adapter = reply.structured.clone().unwrap_or_default();
    receipt_stamps(&mut adapter, "submit", &via_adapter);
    let reply = bot.submission(&grant, &first.request_key).await?;
    let adapter_at = receipt_stamps(
        &mut adapter,
        "readback",
        &reply.structured.clone().unwrap_or_default(),
    );
    fixed.check(
        "the receipt's created_at through the adapter",
        adapter_at == submitted,
        "compared",
    );

    ctx.step("alice withdraws both grants; lab-bot reads them, one by one and listed");
    for g in [&grant, &early] {
        let page = alice.withdraw(g).await?;
        ctx.expect_status("withdrawing", page.status, 200)?;
    }
    for (case, g) in [("revoked", &grant), ("early, revoked", &early)] {
        let answer = native.get_grant(g).await?;
        watch(&mut natively, &format!("get {case}"), &read(&answer));
        let reply = bot.get_grant(g).await?;
        let structured = reply.structured.clone().unwrap_or_default();
        watch(&mut adapter, &format!("get {case}"), &structured["grant"]);
    }
    let answer = native.list_grants("state=all").await?;
    for (i, g) in read(&answer).as_array().into_iter().flatten().enumerate() {
        watch(&mut natively, &format!("list item {i}"), g);
    }
    let reply = bot.list_grants(Some(1), Some("all")).await?;
    let listed = reply.structured.clone().unwrap_or_default();
    for (i, g) in listed["grants"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        watch(&mut adapter, &format!("list item {i}"), g);
    }

    // Once set, an event's time and the creation time never move.
    let of = |case: &str| seen.iter().find(|(c, _)| c == case).map(|(_, s)| *s);
    let life = [
        "get awaiting_agent",
        "confirm answer",
        "get awaiting_human",
        "get active",
        "get revoked",
    ];
    let states: Vec<Stamps> = life.iter().filter_map(|c| of(c)).collect();
    fixed.check(
        "every stage of the grant read",
        states.len() == life.len(),
        format!("{} of {}", states.len(), life.len()),
    );
    for pair in states.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let kept = a.created == b.created
            && (a.confirmed.is_none() || a.confirmed == b.confirmed)
            && (a.approved.is_none() || a.approved == b.approved);
        let got = if kept {
            "kept".to_owned()
        } else {
            format!("{} then {}", a.json(), b.json())
        };
        fixed.check(
            "created_at, confirmed_at and approved_at keep their values",
            kept,
            got,
        );
    }
    let early_life = (of("early, awaiting_agent"), of("early, revoked"));
    if let (Some(before), Some(after)) = early_life {
        let ok = after.created == before.created
            && after.confirmed.is_none()
            && after.approved.is_none()
            && after.revoked.is_some();
        let got = if ok {
            "only revoked_at".to_owned()
        } else {
            after.json()
        };
        fixed.check(
            "a grant withdrawn before confirmation: only revoked_at set",
            ok,
            got,
        );
    }
    let cases = natively.finish(ctx)? + adapter.finish(ctx)? + fixed.finish(ctx)?;
    ctx.observe("cases", &cases);
    Ok(())
}

/// What the spec says of one text case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// 201, and the Issue reads back with exactly the text sent.
    Accepted,
    /// 422 natively, `unprocessable` through the adapter, nothing written.
    Refused,
    /// The spec leaves it open: either, the same on both surfaces.
    Either,
}

/// Submits every case natively and, under another key, through the
/// adapter, and checks each answer against `expect`: an accepted Issue
/// reads back whole, a refused one writes nothing (no Issue, no receipt).
async fn text_table(
    ctx: &mut Ctx,
    grammar: &str,
    cases: Vec<(String, String, String, Expect)>,
) -> Step<usize> {
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let (grant, proposal) = flows::active_grant(ctx, &alice, &bot, LAB, grammar).await?;
    let native = ctx.native(LAB_BOT)?;
    let mut natively = Table::new(grammar, "native submit");
    let mut adapter = Table::new(grammar, "adapter submit");
    let mut accepted = 0;
    let mut refused_keys = Vec::new();
    ctx.step(&format!(
        "lab-bot submits {} {grammar} cases, natively and through the adapter",
        cases.len()
    ));
    for (case, title, body, expect) in &cases {
        let issue = NewIssue::new(title, body);
        let answer = native.submit(&grant, &proposal, &issue).await?;
        let native_ok = match (expect, answer.status) {
            (Expect::Accepted | Expect::Either, 201) => Some(true),
            (Expect::Refused | Expect::Either, 422) if answer.error().is_ok() => Some(false),
            _ => None,
        };
        let native_whole = match (native_ok, answer.submitted()) {
            (Some(true), Ok(s)) => {
                reads_back_whole(&native, s.receipt.issue.index, title, body).await?
            }
            _ => true,
        };
        natively.check(
            case,
            native_ok.is_some() && native_whole,
            format!(
                "{}{}",
                answer.status,
                if native_whole {
                    ""
                } else {
                    ", not read back whole"
                }
            ),
        );
        let again = NewIssue::new(title, body);
        let reply = bot.submit(&grant, &proposal, &again).await?;
        let adapter_ok = match (reply.error_code(), reply.native_status()) {
            (None, Some(201)) if !reply.is_error => Some(true),
            (Some("unprocessable"), Some(422)) => Some(false),
            _ => None,
        };
        let adapter_whole = match (adapter_ok, reply.submitted()) {
            (Some(true), Ok(s)) => {
                reads_back_whole(&native, s.receipt.issue.index, title, body).await?
            }
            _ => true,
        };
        // An open case must get the same answer on both surfaces.
        let agrees = match expect {
            Expect::Either => adapter_ok.is_some() && adapter_ok == native_ok,
            Expect::Accepted => adapter_ok == Some(true),
            Expect::Refused => adapter_ok == Some(false),
        };
        adapter.check(
            case,
            agrees && adapter_whole,
            format!(
                "{} {}{}",
                reply.error_code().unwrap_or("ok"),
                json_text(&reply.native_status()),
                if adapter_whole {
                    ""
                } else {
                    ", not read back whole"
                }
            ),
        );
        for (ok, key) in [
            (native_ok, &issue.request_key),
            (adapter_ok, &again.request_key),
        ] {
            match ok {
                Some(true) => accepted += 1,
                _ => refused_keys.push(key.clone()),
            }
        }
    }
    let cases = natively.finish(ctx)? + adapter.finish(ctx)?;

    ctx.step("nothing was written for a refused case");
    ctx.expect_eq(
        "Issues in alice/lab: one per accepted case",
        flows::issue_count(ctx, LAB).await?,
        accepted,
    )?;
    let native = &native;
    let answers = at_once(
        refused_keys
            .iter()
            .map(|key| native.submission(&grant, key)),
    )
    .await?;
    let written: Vec<u16> = answers
        .iter()
        .map(|a| a.status)
        .filter(|s| *s != 404)
        .collect();
    ctx.expect(
        "no refused case's key reads back (404 each)",
        written.is_empty(),
        &format!("{written:?}"),
    )?;
    Ok(cases)
}

/// Whether Issue `index` of the lab reads back with exactly `title` and `body`.
async fn reads_back_whole(
    native: &NativeClient,
    index: i64,
    title: &str,
    body: &str,
) -> Step<bool> {
    let back = native.issue(LAB, index).await?.issue()?;
    Ok(back.title == title && back.body == body)
}

/// `n` characters cycling through `unit`'s characters.
fn chars_of(unit: &str, n: usize) -> String {
    unit.chars().cycle().take(n).collect()
}

/// ASCII whitespace every reading of "blank" counts: space, tab, LF, CR.
const BLANK: [char; 4] = [' ', '\t', '\n', '\r'];
/// Other Unicode `White_Space` characters: whether a title of only these
/// is blank, the spec leaves open.
const OTHER_SPACE: [char; 19] = [
    '\u{b}', '\u{c}', '\u{85}', '\u{a0}', '\u{1680}', '\u{2000}', '\u{2001}', '\u{2002}',
    '\u{2003}', '\u{2004}', '\u{2005}', '\u{2006}', '\u{2007}', '\u{2008}', '\u{2009}', '\u{200a}',
    '\u{2028}', '\u{202f}', '\u{3000}',
];
/// Character classes a Core could miscount: one to four UTF-8 bytes (the
/// four-byte one two UTF-16 units), a combining mark (two characters, one
/// grapheme) and a ZWJ sequence.
const UNITS: [(&str, &str); 6] = [
    ("ASCII", "a"),
    ("2-byte", "é"),
    ("3-byte", "€"),
    ("4-byte", "🚀"),
    ("combining", "e\u{301}"),
    ("ZWJ", "👩\u{200d}👩"),
];

/// Every generated title class is accepted whole or refused with 422 as spec
/// §3 and §2 say, natively and through the adapter, and a refusal writes
/// nothing.
#[scenario(Grammars, parity, clauses = ["S3.submit.title", "S2.text.whole", "S2.text.nul"])]
async fn title_grammar(ctx: &mut Ctx) -> Outcome {
    // Spec §3 Submit: 1–255 characters, not blank; §2 no NUL, kept whole.
    // Refused: empty and every one- and two-character string of space, tab,
    // LF and CR (and long runs of them); 256 characters; NUL anywhere. A
    // title of only other Unicode whitespace may be either, the same on both
    // surfaces. Accepted and read back whole: text with whitespace around it,
    // `0`, other control characters, one character, and 255 characters of
    // each class (one to four bytes, combining marks, ZWJ sequences).
    let case = |what: String, title: String, expect| (what, title, "body".to_owned(), expect);
    let mut cases = vec![case("empty".into(), String::new(), Expect::Refused)];
    for a in BLANK {
        cases.push(case(format!("{a:?}"), a.to_string(), Expect::Refused));
        for b in BLANK {
            cases.push(case(
                format!("{a:?}{b:?}"),
                format!("{a}{b}"),
                Expect::Refused,
            ));
        }
    }
    cases.push(case(
        "255 blanks".into(),
        chars_of(" \t\r\n", 255),
        Expect::Refused,
    ));
    cases.push(case("256 spaces".into(), " ".repeat(256), Expect::Refused));
    for c in OTHER_SPACE {
        cases.push(case(
            format!("only {c:?}"),
            format!("{c}{c}"),
            Expect::Either,
        ));
    }
    let spaces: String = OTHER_SPACE.iter().collect();
    let between = format!("{spaces}x{spaces}");
    cases.push(case(
        "x between every other space".into(),
        between,
        Expect::Accepted,
    ));
    for (what, title) in [
        ("spaces around", " x "),
        ("tab and newlines around", "\t x \r\n"),
        ("0", "0"),
        ("controls", "x\u{1}\u{1b}\u{7f}\u{9f}y"),
    ] {
        cases.push(case(what.into(), title.into(), Expect::Accepted));
    }
    for (what, unit) in UNITS {
        for (n, expect) in [(255, Expect::Accepted), (256, Expect::Refused)] {
            cases.push(case(
                format!("{n} {what} characters"),
                chars_of(unit, n),
                expect,
            ));
        }
    }
    cases.push(case("one character".into(), "a".into(), Expect::Accepted));
    cases.push(case(
        "one 4-byte character".into(),
        "🚀".into(),
        Expect::Accepted,
    ));
    for (what, title) in [
        ("NUL", "\0"),
        ("NUL first", "\0x"),
        ("NUL inside", "x\0y"),
        ("NUL last", "x\0"),
    ] {
        cases.push(case(what.into(), title.into(), Expect::Refused));
    }
    let n = text_table(ctx, "titles", cases).await?;
    ctx.observe("cases", &n);
    Ok(())
}

/// The largest body, in bytes (spec §3 Submit).
const MAX_BODY: usize = 262_144;

/// `bytes` bytes of `unit` repeated, topped up with ASCII `x`, then `tail`.
fn body_of(unit: &str, bytes: usize, tail: &str) -> String {
    let room = bytes - tail.len();
    let mut body = unit.repeat(room / unit.len());
    body.push_str(&"x".repeat(room - body.len()));
    body.push_str(tail);
    body
}

/// Every generated body class up to 262,144 bytes without NUL is accepted
/// whole, and every other is 422, natively and through the adapter, writing
/// nothing.
#[scenario(Grammars, parity, clauses = ["S3.submit.size", "S2.text.whole", "S2.text.nul"])]
async fn body_grammar(ctx: &mut Ctx) -> Outcome {
    // Spec §3 Submit: at most 262,144 bytes; §2 no NUL, kept whole. Accepted
    // and read back whole: empty, blank, every control character but NUL, and
    // 262,144 bytes of mixed one- to four-byte characters and of four-byte
    // ones (ending in a multi-byte one: fewer characters and UTF-16 units
    // than bytes). Refused: 262,145 bytes of each (fewer characters than
    // bytes), and NUL at the start, inside or at the end.
    let case = |what: String, body: String, expect| (what, "Body grammar".to_owned(), body, expect);
    let controls: String = ('\u{1}'..='\u{1f}')
        .chain(['\u{7f}', '\u{85}', '\u{2028}', '\u{feff}'])
        .collect();
    let mut cases = vec![
        case("empty".into(), String::new(), Expect::Accepted),
        case("blank".into(), " \t\r\n ".into(), Expect::Accepted),
        case("controls".into(), controls, Expect::Accepted),
    ];
    for (what, unit, tail) in [("1- to 4-byte", "Aé€🚀", "€"), ("4-byte", "🚀", "🚀")] {
        cases.push(case(
            format!("262,144 bytes of {what}"),
            body_of(unit, MAX_BODY, tail),
            Expect::Accepted,
        ));
        cases.push(case(
            format!("262,145 bytes of {what}"),
            body_of(unit, MAX_BODY + 1, tail),
            Expect::Refused,
        ));
    }
    for (what, body) in [
        ("NUL first", "\0body"),
        ("NUL inside", "bo\0dy"),
        ("NUL last", "body\0"),
        ("NUL only", "\0"),
    ] {
        cases.push(case(what.into(), body.into(), Expect::Refused));
    }
    let n = text_table(ctx, "bodies", cases).await?;
    ctx.observe("cases", &n);
    Ok(())
}

/// Text holding what a form's encoding and a page's markup give meaning
/// to (spec preamble: form text holding `+`, `&`, `%` or quotes).
const FORM_TEXT: &str = "a+b & c%20d=e \"q\" 'x' <b>not bold</b> &amp; ;#?/ 100%";

/// A grant's task and summary are kept whole as typed in the prepare form,
/// and NUL in either is a 422 page that prepares no grant.
#[scenario(Grammars, parity, clauses = ["S2.text.whole", "S2.text.nul", "S4.prepare", "S4.page.text", "S0.standards.form-text"])]
async fn grant_text_grammar(ctx: &mut Ctx) -> Outcome {
    // Spec §2: strict UTF-8 kept whole, no trimming or normalisation; NUL
    // refused with 422 on every backend. Generated: NUL at the start, inside
    // or at the end of either field; whitespace around the text, CRLF lines,
    // one- to four-byte and combining characters, and control characters
    // other than NUL, kept whole as the agent reads the grant natively and a
    // person on its page (form text with `+`, `&`, `%`, `=`, quotes and
    // markup among them).
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let native = ctx.native(LAB_BOT)?;
    let total = flows::grant_total(ctx, LAB_BOT).await?;
    let mut form = Table::new("task and summary", "prepare form");
    let mut prepared = 0;

    ctx.step("alice prepares grants with every text class in task and summary");
    for (case, text) in [
        ("spaces around", "  task  "),
        ("tabs and CRLF lines", "\tline one\r\n\r\nline two\r\n"),
        ("1- to 4-byte and combining", "Aé€🚀 e\u{301} 👩\u{200d}👩"),
        ("controls but NUL", "a\u{1}\u{1b}\u{7f}\u{85}\u{feff}b"),
        ("a form's own characters", FORM_TEXT),
        // A form sends every newline as CRLF (HTML standard, "convert to a
        // list of name-value pairs"): Chromium turns a typed LF into CRLF.
        ("a leading newline", "\r\nafter a newline"),
    ] {
        let summary = format!("summary: {text}");
        let (grant, landed) = alice.prepare_grant(LAB, LAB_BOT, text, &summary).await?;
        prepared += 1;
        let answer = native.get_grant(&grant).await?;
        let whole = answer
            .grant()
            .is_ok_and(|g| g.task == text && g.summary == summary);
        form.check(case, whole, if whole { "whole" } else { "changed" });
        // Controls render as nothing a person reads; the rest as written.
        if !text.contains('\u{1}') {
            let shown = landed.shows(text) && landed.shows(&summary);
            let seen = if shown { "shown" } else { "not shown as typed" };
            form.check(&format!("{case}, on the grant page"), shown, seen);
        }
    }

    ctx.step("alice prepares grants with NUL in task or summary");
    for field in ["task", "summary"] {
        for (at, text) in [
            ("first", "\0text"),
            ("inside", "te\0xt"),
            ("last", "text\0"),
        ] {
            let (task, summary) = if field == "task" {
                (text, "summary")
            } else {
                ("task", text)
            };
            let filled = alice.prepare_form(LAB, LAB_BOT, task, summary).await?;
            let page = alice.submit(&filled).await?;
            form.check(
                &format!("NUL {at} in the {field}"),
                page.status == 422,
                page.status.to_string(),
            );
        }
    }
    ctx.step("alice names a human, not a bot, as the agent (spec §2: the agent is a bot)");
    let filled = alice.prepare_form(LAB, "wendy", "task", "summary").await?;
    let page = alice.submit(&filled).await?;
    // How the Core refuses is its own; landing on a new grant's page is not.
    let made = core_api::grant_id_of_page(&page.url).is_some();
    form.check("a human as the agent", !made, page.arrival());
    let cases = form.finish(ctx)?;

    ctx.step("only the valid texts prepared grants");
    ctx.expect_eq(
        "lab-bot's grants, one more per valid text",
        flows::grant_total(ctx, LAB_BOT).await?,
        total + prepared,
    )?;
    ctx.observe("cases", &cases);
    Ok(())
}
