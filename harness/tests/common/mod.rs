//! What the harness's process-level tests share: the gate run as a child
//! in a temporary directory, its output as one text, and Ed25519 keys made
//! with `openssl`. Each test file uses some of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `grantgate args` with `tmp` as its TMPDIR, building nothing, and no
/// signing key, baseline or GitHub Actions setting from the caller's
/// environment.
pub fn grantgate(args: &[&str], tmp: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_grantgate"))
        .args(args)
        .env("TMPDIR", tmp)
        .env("GRANTGATE_NO_BUILD", "1")
        .env_remove("GRANTGATE_SIGN_KEY")
        .env_remove("GRANTGATE_EXPECTED_FAILURES")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap()
}

/// Standard output then standard error, for an assertion's message.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// An Ed25519 key pair made by `openssl` in `dir`: the private key's PEM
/// file and the public key's.
pub fn keypair(dir: &Path) -> (PathBuf, PathBuf) {
    let (key, public) = (dir.join("key.pem"), dir.join("key.pub"));
    let (k, p) = (key.to_str().unwrap(), public.to_str().unwrap());
    openssl(&["genpkey", "-algorithm", "ed25519", "-out", k]);
    openssl(&["pkey", "-in", k, "-pubout", "-out", p]);
    (key, public)
}

fn openssl(args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .output()
        .expect("openssl runs");
    assert!(out.status.success(), "{}", text(&out));
}
