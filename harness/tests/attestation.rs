//! Release evidence end to end: `grantgate run --attest` signs the verdict
//! of a passing (partial) and a failing run; `grantgate verify` accepts both
//! and refuses a changed file, another key and another subject; and an
//! independent implementation — securesystemslib's DSSE and Ed25519, from
//! PyPI, in a venv of this test's own — verifies the same envelopes, so the
//! format is the standard's and not only what this project thinks it is.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// securesystemslib's side: `keygen DIR` writes an Ed25519 key pair as
/// PKCS#8 and SPKI PEM; `verify ENVELOPE PUBLIC` checks the envelope with
/// securesystemslib's `Envelope.verify` and prints the statement's result.
const PYTHON: &str = r#"
import base64, hashlib, json, sys
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from securesystemslib.dsse import Envelope
from securesystemslib.signer import SSlibKey

if sys.argv[1] == "keygen":
    key = Ed25519PrivateKey.generate()
    open(sys.argv[2] + "/key.pem", "wb").write(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    open(sys.argv[2] + "/key.pub", "wb").write(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
else:
    public = serialization.load_pem_public_key(open(sys.argv[3], "rb").read())
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    # The keyid grantgate documents: hex SHA-256 of the raw public key.
    key = SSlibKey(hashlib.sha256(raw).hexdigest(), "ed25519", "ed25519", {"public": raw.hex()})
    envelope = Envelope.from_dict(json.load(open(sys.argv[2])))
    envelope.verify([key], 1)
    statement = json.loads(envelope.payload)
    print(statement["predicateType"], statement["predicate"]["result"])
"#;

/// A venv with securesystemslib, made once per target directory. A missing
/// Python or an unreachable PyPI fails the test: the independent check is
/// the point of it.
fn python() -> PathBuf {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("attest-venv");
    let py = venv.join("bin/python");
    if !venv.join("ready").exists() {
        let ok = |c: &mut Command| {
            let out = c.output().expect("python3 runs");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        ok(Command::new("python3").args(["-m", "venv"]).arg(&venv));
        ok(Command::new(&py).args([
            "-m",
            "pip",
            "install",
            "-q",
            "-r",
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/attest-requirements.txt"),
        ]));
        std::fs::write(venv.join("ready"), "").unwrap();
    }
    py
}

fn python_check(args: &[&Path]) -> Output {
    Command::new(python())
        .arg("-c")
        .arg(PYTHON)
        .args(args)
        .output()
        .unwrap()
}

fn grantgate(args: &[&str], tmp: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_grantgate"))
        .args(args)
        .env("TMPDIR", tmp)
        .env_remove("GRANTGATE_SIGN_KEY")
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs one trial with `--attest` and returns the attestation's path.
fn attested_run(tmp: &Path, name: &str, core: Option<&Path>, key: &Path) -> (Output, PathBuf) {
    let reports = tmp.join(name);
    let mut args = vec![
        "run",
        "--backend",
        "sqlite",
        "--exact",
        "sqlite::session_cookie_httponly_lax",
        "--attest",
        "--sign-key",
        key.to_str().unwrap(),
        "--report-dir",
        reports.to_str().unwrap(),
    ];
    if let Some(core) = core {
        args.extend(["--core-bin", core.to_str().unwrap()]);
    }
    let out = grantgate(&args, tmp);
    let path = reports.join("latest").join("attestation.intoto.json");
    (out, path)
}

#[test]
fn attestations_of_a_passing_and_a_failing_run_verify_here_and_independently() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let keys = tmp.join("keys");
    let other = tmp.join("other");
    for dir in [&keys, &other] {
        std::fs::create_dir(dir).unwrap();
        let out = python_check(&[Path::new("keygen"), dir]);
        assert!(out.status.success(), "{}", text(&out));
    }
    let (key, public) = (keys.join("key.pem"), keys.join("key.pub"));

    // A missing key is a configuration error before anything runs.
    let out = grantgate(&["run", "--attest", "--exact", "sqlite::x"], tmp);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("signing key"), "{}", text(&out));

    let (out, passing) = attested_run(tmp, "passing", None, &key);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let broken = tmp.join("broken-core");
    std::fs::write(&broken, "#!/bin/sh\nexit 3\n").unwrap();
    std::fs::set_permissions(&broken, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (out, failing) = attested_run(tmp, "failing", Some(&broken), &key);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));

    let pem = std::fs::read_to_string(&key).unwrap();
    for (path, result) in [(&passing, "WARNED"), (&failing, "FAILED")] {
        let bytes = std::fs::read(path).unwrap();
        let body = pem.lines().nth(1).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(body),
            "the key leaked"
        );

        let out = grantgate(
            &[
                "verify",
                path.to_str().unwrap(),
                "--key",
                public.to_str().unwrap(),
            ],
            tmp,
        );
        assert!(out.status.success(), "{}", text(&out));
        assert!(
            text(&out).contains(&format!("verified: {result}")),
            "{}",
            text(&out)
        );

        let out = python_check(&[Path::new("verify"), path, &public]);
        assert!(out.status.success(), "{}", text(&out));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            format!("https://in-toto.io/attestation/test-result/v0.1 {result}")
        );
    }

    // The subject is the Core that was gated: the broken script by its
    // digest; `--expect-result PASSED` refuses the failing run.
    let digest = {
        use sha2::{Digest, Sha256};
        hex::encode(Sha256::digest(std::fs::read(&broken).unwrap()))
    };
    let verify = |extra: &[&str], key: &Path| {
        let mut args = vec![
            "verify",
            failing.to_str().unwrap(),
            "--key",
            key.to_str().unwrap(),
        ];
        args.extend(extra);
        grantgate(&args, tmp)
    };
    let out = verify(&["--subject-digest", &format!("sha256:{digest}")], &public);
    assert!(out.status.success(), "{}", text(&out));
    let out = verify(&["--subject-digest", &"0".repeat(64)], &public);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("no subject"), "{}", text(&out));
    let out = verify(&["--expect-result", "PASSED"], &public);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let out = verify(&[], &other.join("key.pub"));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("does not verify"), "{}", text(&out));

    // One changed character of the payload: both implementations refuse.
    let mut envelope: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&failing).unwrap()).unwrap();
    let payload = envelope["payload"].as_str().unwrap().to_owned();
    let at = payload.len() / 2;
    let swapped = if &payload[at..=at] == "A" { "B" } else { "A" };
    envelope["payload"] = format!("{}{swapped}{}", &payload[..at], &payload[at + 1..]).into();
    let tampered = tmp.join("tampered.json");
    std::fs::write(&tampered, serde_json::to_vec(&envelope).unwrap()).unwrap();
    let out = grantgate(
        &[
            "verify",
            tampered.to_str().unwrap(),
            "--key",
            public.to_str().unwrap(),
        ],
        tmp,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let out = python_check(&[Path::new("verify"), &tampered, &public]);
    assert!(
        !out.status.success(),
        "securesystemslib accepted a changed payload"
    );
}
