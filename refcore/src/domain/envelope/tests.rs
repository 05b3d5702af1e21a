//! Unit tests of the envelope grammar, the path-pattern rules and the
//! digest, including a property test over reorderings.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde_json::json;

use super::*;

fn envelope(paths: Value, min: Value, max: Value) -> Value {
    json!({"version": "1", "allowed_paths": paths,
           "commit_count": {"min": min, "max": max}, "publish": false})
}

fn ok(text: &str) -> Envelope {
    match parse(Some(text)) {
        Ok(Some(e)) => e,
        other => panic!("{text} should be valid: {other:?}"),
    }
}

fn refused(value: &Value) -> String {
    match from_value(value) {
        Err(AppError::Unprocessable(m)) => m,
        other => panic!("{value} should be refused: {other:?}"),
    }
}

/// The JCS texts below were written out by hand (sorted members, sorted
/// paths, no whitespace, UTF-8 as is) and hashed with Python's hashlib.
#[test]
fn digest_matches_hand_computed_vectors() {
    let e = ok(r#"{"version":"1","allowed_paths":["docs/","README.md"],
                   "commit_count":{"min":1,"max":1},"publish":false}"#);
    assert_eq!(e.allowed_paths, ["README.md", "docs/"]);
    assert_eq!(
        e.digest,
        "af2e7c8275c9ba8c8f78485067f9608e21b20204e738d64767d7dcbdac918599"
    );
    let stored = e.stored();
    assert_eq!(
        stored.canonical,
        r#"{"allowed_paths":["README.md","docs/"],"commit_count":{"max":1,"min":1},"publish":false,"version":"1"}"#
    );
    assert_eq!(stored.path_count, 2);
    assert_eq!(stored.patterns(), ["README.md", "docs/"]);
    let e = ok(r#"{"publish":false,"commit_count":{"max":32,"min":2},
                   "allowed_paths":["été/","src/","Zeta/**/*.md"],"version":"1"}"#);
    assert_eq!(
        e.digest,
        "87d02a7c4fbcecf78d5c317172059e905c13c0d2ac9e7553efecb950b2605005"
    );
}

#[test]
fn absent_or_empty_is_no_envelope() {
    assert_eq!(parse(None).unwrap(), None);
    assert_eq!(parse(Some("")).unwrap(), None);
    assert!(parse(Some(" ")).is_err());
    assert!(parse(Some("null")).is_err());
}

#[test]
fn every_rule_of_the_grammar_is_enforced() {
    let good = envelope(json!(["src/"]), json!(1), json!(1));
    assert!(from_value(&good).is_ok());
    let mut cases: Vec<(Value, &str)> = Vec::new();
    let with = |member: &str, v: Value| {
        let mut e = good.clone();
        e[member] = v;
        e
    };
    let without = |member: &str| {
        let mut e = good.clone();
        e.as_object_mut().unwrap().remove(member);
        e
    };
    for member in MEMBERS {
        cases.push((without(member), "must have the member"));
    }
    cases.push((with("extra", json!(1)), "unknown member"));
    cases.push((with("version", json!(1)), "version"));
    cases.push((with("version", json!("2")), "version"));
    cases.push((with("publish", json!(true)), "publish"));
    cases.push((with("publish", json!("false")), "publish"));
    cases.push((with("publish", json!(null)), "publish"));
    cases.push((with("allowed_paths", json!([])), "must not be empty"));
    cases.push((with("allowed_paths", json!("src/")), "array"));
    cases.push((with("allowed_paths", json!([1])), "must be a string"));
    cases.push((with("allowed_paths", json!(["a", "a"])), "unique"));
    cases.push((with("commit_count", json!([1, 1])), "object"));
    cases.push((with("commit_count", json!({"min": 1})), "member max"));
    cases.push((
        with("commit_count", json!({"min": 1, "max": 1, "x": 0})),
        "unknown member",
    ));
    for (min, max, rule) in [
        (json!(0), json!(1), "at least 1"),
        (json!(1), json!(33), "at most 32"),
        (json!(3), json!(2), "must not exceed"),
        (json!(1.5), json!(2), "integer"),
        (json!(1.0), json!(2), "integer"),
        (json!("1"), json!(2), "integer"),
        (json!(1), json!(true), "integer"),
        (json!(-1), json!(2), "at least 1"),
        (json!(1), json!(u64::MAX), "at most 32"),
    ] {
        cases.push((envelope(json!(["src/"]), min, max), rule));
    }
    for (value, rule) in cases {
        let message = refused(&value);
        assert!(message.contains(rule), "{value}: {message} lacks {rule}");
        assert!(message.starts_with("repository_grant: "), "{message}");
    }
    assert!(from_value(&json!([1])).is_err());
    assert!(from_value(&envelope(json!(["a"]), json!(32), json!(32))).is_ok());
    assert!(from_value(&envelope(json!(["a"]), json!(1), json!(32))).is_ok());
}

#[test]
fn duplicate_member_names_and_malformed_text_are_refused() {
    let dup = r#"{"version":"1","version":"1","allowed_paths":["a"],
                  "commit_count":{"min":1,"max":1},"publish":false}"#;
    assert!(parse(Some(dup)).is_err());
    let dup_inner = r#"{"version":"1","allowed_paths":["a"],
                  "commit_count":{"min":1,"min":1,"max":1},"publish":false}"#;
    assert!(parse(Some(dup_inner)).is_err());
    assert!(parse(Some("{")).is_err());
    assert!(parse(Some(r#"{"version":"1"} trailing"#)).is_err());
    assert!(parse(Some("{\"version\":\"1\u{0}\"}")).is_err());
}

#[test]
fn pattern_rules() {
    for good in [
        "README.md",
        "docs/",
        "src/*.rs",
        "src/**/mod.rs",
        "**",
        "a/b/c/",
        ".github/workflows/",
        "x.git",
        ".gitignore",
        "a*b",
    ] {
        assert_eq!(check_pattern(good), Ok(()), "{good}");
    }
    for (bad, rule) in [
        ("", "empty"),
        ("/abs", "leading"),
        ("/", "leading"),
        ("a\\b", "backslash"),
        ("../x", ".."),
        ("a/../b", ".."),
        ("./a", "."),
        ("a/.", "."),
        ("a//b", "empty segment"),
        ("a//", "empty segment"),
        (".git", ".git"),
        (".git/", ".git"),
        ("x/.git/y", ".git"),
        ("x/.GIT/y", ".git"),
    ] {
        let err = check_pattern(bad).unwrap_err();
        assert!(err.contains(rule), "{bad}: {err}");
    }
}

#[test]
fn an_exact_path_grants_that_path_only() {
    assert!(grants("README.md", "README.md"));
    assert!(!grants("README.md", "README.md/x"));
    assert!(!grants("README.md", "docs/README.md"));
    assert!(!grants("docs/a.md", "docs/a.mdx"));
}

#[test]
fn a_trailing_slash_grants_the_subtree() {
    assert!(grants("docs/", "docs/a.md"));
    assert!(grants("docs/", "docs/deep/er/b.md"));
    assert!(!grants("docs/", "docs"));
    assert!(!grants("docs/", "docsx/a.md"));
    assert!(!grants("docs/", "src/docs/a.md"));
}

#[test]
fn a_star_stays_inside_one_segment() {
    assert!(grants("src/*.rs", "src/lib.rs"));
    assert!(grants("src/*.rs", "src/.rs"));
    assert!(!grants("src/*.rs", "src/a/lib.rs"));
    assert!(!grants("src/*.rs", "src/lib.rsx"));
    assert!(grants("*/Cargo.toml", "refcore/Cargo.toml"));
    assert!(!grants("*/Cargo.toml", "a/b/Cargo.toml"));
    assert!(grants("src/*/", "src/a/b/c.rs"));
    // `**` inside a larger segment is a plain `*`.
    assert!(grants("src/a**", "src/abc"));
    assert!(!grants("src/a**", "src/a/b"));
}

#[test]
fn a_double_star_spans_segments() {
    assert!(grants("src/**/mod.rs", "src/mod.rs"));
    assert!(grants("src/**/mod.rs", "src/a/mod.rs"));
    assert!(grants("src/**/mod.rs", "src/a/b/c/mod.rs"));
    assert!(!grants("src/**/mod.rs", "lib/a/mod.rs"));
    assert!(grants("**", "a/b/c"));
    assert!(grants("**/*.md", "x.md"));
    assert!(grants("**/*.md", "a/b/x.md"));
    assert!(!grants("**/*.md", "a/b/x.rs"));
}

#[test]
fn nothing_grants_git_metadata_or_traversal() {
    assert!(!grants("**", ".git/config"));
    assert!(!grants("**", "a/.git/HEAD"));
    assert!(!grants("**", "a/.Git/HEAD"));
    assert!(!grants("a/", "a/../b"));
    assert!(!grants("**", "a//b"));
    assert!(!grants("**", ""));
}

/// Property: for any valid set of paths, every reordering gives the same
/// digest and the same canonical text; a different set gives another digest.
#[test]
fn reordering_paths_never_changes_the_digest() {
    let alphabet: Vec<char> = "ab*Z.-_é/".chars().collect();
    let mut rng = StdRng::seed_from_u64(0x5eed_0001);
    let mut checked = 0;
    for _ in 0..400 {
        let n = rng.gen_range(1..=8);
        let mut paths: Vec<String> = (0..n)
            .map(|_| {
                let len = rng.gen_range(1..=10);
                (0..len)
                    .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
                    .collect()
            })
            .filter(|p: &String| check_pattern(p).is_ok())
            .collect();
        paths.sort();
        paths.dedup();
        if paths.is_empty() {
            continue;
        }
        let (min, max) = (rng.gen_range(1..=32), 32);
        let first = from_value(&envelope(json!(paths), json!(min), json!(max))).unwrap();
        for _ in 0..5 {
            let mut shuffled = paths.clone();
            shuffled.shuffle(&mut rng);
            let again = from_value(&envelope(json!(shuffled), json!(min), json!(max))).unwrap();
            assert_eq!(again.digest, first.digest, "{shuffled:?}");
            assert_eq!(again.stored(), first.stored());
        }
        if paths.len() > 1 {
            let fewer = from_value(&envelope(json!(paths[1..]), json!(min), json!(max))).unwrap();
            assert_ne!(fewer.digest, first.digest);
        }
        checked += 1;
    }
    assert!(checked > 300, "only {checked} cases were valid");
}
