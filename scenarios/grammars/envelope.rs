//! Family 19, continued: the repository grant envelope (spec §8) as
//! generated classes at every edge of each rule (issue #27 §2), beyond the
//! one-per-rule table of `envelope/refusals.rs`: counts at 0, 1, 32, 33
//! and of every JSON type, `version` spellings, unknown and missing
//! members at both levels, each refused path form in several places of a
//! pattern and of the array, `.git` in all eight letter cases, and valid
//! patterns with `*`, `**` and a trailing `/`. Every invalid envelope is a
//! 422 page and creates no grant; every valid one creates a grant whose
//! evidence has the right `path_count` and the harness's own digest, the
//! same whatever the order of its paths.

use grantgate_engine::prelude::*;

use crate::support::envelopes::envelope;
use crate::support::flows::{self, LAB, LAB_BOT};
use crate::support::tables::Table;

/// The eight letter cases of `.git`.
fn git_spellings() -> Vec<String> {
    (0..8)
        .map(|mask| {
            ".git"
                .chars()
                .enumerate()
                .map(|(i, c)| {
                    if i > 0 && mask & (1 << (i - 1)) != 0 {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    }
                })
                .collect()
        })
        .collect()
}

/// `segment` at the start, inside, at the end and as a subtree of a pattern.
fn in_positions(segment: &str) -> Vec<(String, String)> {
    vec![
        ("first".into(), format!("{segment}/a")),
        ("inside".into(), format!("a/{segment}/b")),
        ("last".into(), format!("a/{segment}")),
        ("as a subtree".into(), format!("a/{segment}/")),
    ]
}

/// A valid envelope with one member (`commit_count.x` inside) set to
/// `value`, or removed for `None`.
fn changed(base: &Value, member: &str, value: Option<Value>) -> Value {
    let mut e = base.clone();
    let (object, name) = match member.strip_prefix("commit_count.") {
        Some(inner) => (e.get_mut("commit_count"), inner),
        None => (Some(&mut e), member),
    };
    if let Some(Value::Object(object)) = object {
        match value {
            Some(v) => object.insert(name.to_owned(), v),
            None => object.remove(name),
        };
    }
    e
}

/// Every invalid envelope, as `(case, JSON text)`.
fn invalid() -> Vec<(String, String)> {
    let base = envelope(&["src/"], 1, 32);
    let mut out: Vec<(String, String)> = Vec::new();
    let mut add = |case: String, e: Value| out.push((case, e.to_string()));
    // Counts: JSON integers with 1 <= min <= max <= 32 (S8.counts).
    let wrong_numbers = [
        json!(0),
        json!(-1),
        json!(33),
        json!(1.0),
        json!(32.0),
        json!(1.5),
        json!("1"),
        json!(null),
        json!(true),
        json!([1]),
        json!({}),
        json!(9_223_372_036_854_775_808u64),
    ];
    for member in ["min", "max"] {
        for v in &wrong_numbers {
            let e = changed(&base, &format!("commit_count.{member}"), Some(v.clone()));
            add(format!("{member} {v}"), e);
        }
    }
    add("min 2 > max 1".into(), envelope(&["src/"], 2, 1));
    add("min 32 > max 31".into(), envelope(&["src/"], 32, 31));
    add("min 33, max 33".into(), envelope(&["src/"], 33, 33));
    // version: the string "1" (S8.version).
    for v in [
        json!(1),
        json!(1.0),
        json!("01"),
        json!("1.0"),
        json!(" 1"),
        json!("1 "),
        json!("v1"),
        json!("2"),
        json!(""),
        json!(null),
        json!(["1"]),
    ] {
        add(format!("version {v}"), changed(&base, "version", Some(v)));
    }
    // publish: false (S8.publish).
    for v in [json!(true), json!("false"), json!(0), json!(null)] {
        add(format!("publish {v}"), changed(&base, "publish", Some(v)));
    }
    // Members: all four required, unknown ones refused, at both levels.
    for m in ["version", "allowed_paths", "commit_count", "publish"] {
        add(format!("no {m}"), changed(&base, m, None));
    }
    for m in ["min", "max"] {
        add(
            format!("no commit_count.{m}"),
            changed(&base, &format!("commit_count.{m}"), None),
        );
    }
    for (m, v) in [
        ("scope", json!("all")),
        ("Version", json!("1")),
        ("", json!(null)),
    ] {
        add(format!("unknown member {m:?}"), changed(&base, m, Some(v)));
        let inner = format!("commit_count.{m}");
        add(
            format!("unknown commit_count member {m:?}"),
            changed(&base, &inner, Some(json!(1))),
        );
    }
    let renamed = changed(
        &changed(&base, "commit_count.min", None),
        "commit_count.Min",
        Some(json!(1)),
    );
    add("commit_count.Min for min".into(), renamed);
    for v in [json!([1, 32]), json!(1), json!(null), json!("1..32")] {
        add(
            format!("commit_count {v}"),
            changed(&base, "commit_count", Some(v)),
        );
    }
    for v in [
        json!("src/"),
        json!({"src/": true}),
        json!(null),
        json!([]),
        json!([1]),
        json!([null]),
        json!([["src/"]]),
    ] {
        add(
            format!("allowed_paths {v}"),
            changed(&base, "allowed_paths", Some(v)),
        );
    }
    // Patterns (S8.paths.refused, S8.paths.git): each form inside a
    // pattern, and one of each as the first, middle and last of three.
    let mut patterns: Vec<(String, String)> = Vec::new();
    for segment in [".", ".."]
        .iter()
        .map(|s| s.to_string())
        .chain(git_spellings())
    {
        for (at, p) in in_positions(&segment) {
            patterns.push((format!("{segment:?} segment {at}"), p));
        }
        patterns.push((format!("{segment:?} alone"), segment.clone()));
    }
    for p in [
        "", "/", "/a", "/a/", "a\\b", "\\a", "a\\", "a//b", "a//", "a/b//c/", "./", "../",
    ] {
        patterns.push((format!("pattern {p:?}"), p.to_owned()));
    }
    for (case, p) in &patterns {
        add(case.clone(), envelope(&[p.as_str()], 1, 1));
    }
    for p in ["../x", "x/.Git/y", "a\\b", "", "/abs", "a//b"] {
        for (at, paths) in [
            ("first", [p, "docs/", "src/"]),
            ("middle", ["docs/", p, "src/"]),
            ("last", ["docs/", "src/", p]),
        ] {
            add(format!("{p:?} {at} of three"), envelope(&paths, 1, 1));
        }
    }
    // Unique patterns (S8.paths).
    for paths in [
        vec!["src/", "src/"],
        vec!["a", "b", "a"],
        vec!["x/*", "docs/", "x/*"],
        vec!["**", "**"],
    ] {
        add(format!("duplicates {paths:?}"), envelope(&paths, 1, 1));
    }
    // Not one JSON object.
    let text = base.to_string();
    for (case, t) in [
        ("an array", "[]".to_owned()),
        ("null", "null".to_owned()),
        ("a number", "1".to_owned()),
        ("a string", "\"src/\"".to_owned()),
        ("truncated", text[..text.len() - 1].to_owned()),
        ("two objects", format!("{text}{text}")),
        (
            "a trailing comma",
            format!("{},}}", &text[..text.len() - 1]),
        ),
    ] {
        out.push((format!("text: {case}"), t));
    }
    out
}

/// Every valid envelope, as `(case, envelope)`.
fn valid() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for (min, max) in [(1, 1), (1, 32), (32, 32), (16, 17), (2, 2)] {
        out.push((
            format!("counts {min}..{max}"),
            envelope(&["src/"], min, max),
        ));
    }
    let patterns: [&[&str]; 14] = [
        &["*"],
        &["**"],
        &["**/"],
        &["*/"],
        &["src/**/*.rs", "**/*.md"],
        &["a*b/c", "docs/"],
        &["README.md"],
        &[
            ".gitignore",
            ".github/workflows/",
            "a.git/",
            "git/",
            "x/.gitkeep",
        ],
        &["a/..b", ".x/", "x./y"],
        &["Été/", "a b/c", "x[1].txt"],
        &["b", "B", "a", "_", "Z", "é", "~"],
        &["src", "src/", "SRC/"],
        &["**/.gitattributes", "docs/**", "*.lock"],
        &["x"],
    ];
    for paths in patterns {
        out.push((format!("paths {paths:?}"), envelope(paths, 1, 3)));
    }
    let many: Vec<String> = (0..40).map(|i| format!("dir{i:02}/")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    out.push(("40 paths".into(), envelope(&many, 1, 32)));
    out
}

/// `envelope` with its paths reversed.
fn reversed(envelope: &Value) -> Value {
    let mut e = envelope.clone();
    if let Some(Value::Array(paths)) = e.get_mut("allowed_paths") {
        paths.reverse();
    }
    e
}

/// The prepare form refuses each of about two hundred invalid envelopes (spec
/// §8) with a 422 page, and each of twenty valid ones creates a grant with
/// the harness's digest.
#[scenario(Grammars, parity, clauses = ["S8.invalid", "S8.grammar", "S8.version", "S8.paths", "S8.paths.refused", "S8.paths.git", "S8.counts", "S8.publish", "S8.digest", "S8.digest.order", "S8.evidence"])]
async fn envelope_grammar(ctx: &mut Ctx) -> Outcome {
    // Invalid: counts 0, -1, 33, `1.0`, `32.0`, `1.5`, `"1"`, null, true,
    // arrays, objects, 2^63 in `min` and `max`, min > max; `version` `1`,
    // `1.0`, `"01"`, `"1.0"`, padded, others; `publish` other than false;
    // each member missing; unknown members at both levels; wrong types; `.`,
    // `..` and `.git` in its eight letter cases first, inside, last and as a
    // subtree; empty patterns and segments, leading `/`, backslashes; bad
    // patterns first, middle and last of three; duplicates; texts that are
    // not one object. Each is a page with no redirect, and the agent's grant
    // total is unchanged.
    //
    // Valid: counts at their edges; `*`, `**`, trailing `/`; names that only
    // look like `.git` or `..`; byte-order traps; 40 paths. Each grant's
    // `repository_grant` is `{digest, path_count}`; the same paths reversed
    // give the same digest.
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let before = flows::grant_total(ctx, LAB_BOT).await?;
    let form = alice
        .prepare_form(LAB, LAB_BOT, "Envelope grammar.", "summary")
        .await?;
    let (alice, form) = (&alice, &form);
    let post = |text: String| {
        let mut f = form.clone();
        f.set(fields::REPOSITORY_GRANT, &text);
        async move { alice.submit(&f).await }
    };

    let bad = invalid();
    ctx.step(&format!(
        "alice prepares {} grants with invalid envelopes",
        bad.len()
    ));
    let pages = join_all(bad.iter().map(|(_, text)| post(text.clone())))
        .await
        .into_iter()
        .collect::<Step<Vec<Page>>>()?;
    let mut refused = Table::new("invalid envelopes", "the prepare form");
    for ((case, _), page) in bad.iter().zip(&pages) {
        let ok = page.status == 422 && page.redirects.is_empty();
        let got = match page.first_redirect() {
            Some((s, to)) => format!("{s} to {}", to.path()),
            None => page.status.to_string(),
        };
        refused.check(case, ok, got);
    }
    let mut cases = refused.finish(ctx)?;
    ctx.expect_eq(
        "the agent's grant total after the invalid envelopes",
        flows::grant_total(ctx, LAB_BOT).await?,
        before,
    )?;

    let good = valid();
    ctx.step(&format!(
        "alice prepares {} grants with valid envelopes, each in its order and reversed",
        good.len()
    ));
    let texts: Vec<String> = good
        .iter()
        .flat_map(|(_, e)| [e.to_string(), reversed(e).to_string()])
        .collect();
    let pages = join_all(texts.iter().map(|t| post(t.clone())))
        .await
        .into_iter()
        .collect::<Step<Vec<Page>>>()?;
    let ids: Vec<Option<i64>> = pages
        .iter()
        .map(|p| core_api::grant_id_of_page(&p.url).filter(|_| p.status == 200))
        .collect();
    let native = ctx.native(LAB_BOT)?;
    let native = &native;
    let read = join_all(ids.iter().map(|id| async move {
        match id {
            Some(id) => {
                let g = GrantRef {
                    owner: "alice".into(),
                    repo: "lab".into(),
                    id: *id,
                };
                native.get_grant(&g).await.map(Some)
            }
            None => Ok(None),
        }
    }))
    .await
    .into_iter()
    .collect::<Step<Vec<Option<Answer>>>>()?;
    let mut accepted = Table::new("valid envelopes", "the prepare form and the grant");
    for (i, (case, e)) in good.iter().enumerate() {
        let want = EnvelopeEvidence {
            digest: envelope_digest(e)?,
            path_count: e["allowed_paths"].as_array().map_or(0, Vec::len) as i64,
        };
        for (order, at) in [("given order", 2 * i), ("reversed", 2 * i + 1)] {
            let seen = read[at]
                .as_ref()
                .and_then(|a| a.grant().ok())
                .and_then(|g| g.envelope().ok().flatten().cloned());
            let got = match (&seen, &ids[at]) {
                (Some(s), _) => format!("{} paths, digest {}", s.path_count, &s.digest),
                (None, Some(_)) => "a grant without evidence".into(),
                (None, None) => format!("{} page", pages[at].status),
            };
            accepted.check(
                &format!("{case}, {order}"),
                seen.as_ref() == Some(&want),
                got,
            );
        }
    }
    cases += accepted.finish(ctx)?;
    ctx.observe("cases", &cases);
    Ok(())
}
