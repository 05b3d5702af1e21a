//! `--runtime docker` refuses to start without what it needs, with exit 2
//! and the command that fixes it: no Docker engine, a missing image, or a
//! flag that belongs to the process runtime. None of these starts a stack.

use std::process::{Command, Output};

fn grantgate(args: &[&str], env: &[(&str, &str)]) -> Output {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_grantgate"));
    cmd.args(["run", "--runtime", "docker", "--filter", "full_lifecycle"])
        .arg("--report-dir")
        .arg(tmp.path())
        .args(args)
        .env_remove("GRANTGATE_POSTGRES_URL")
        .envs(env.iter().copied());
    cmd.output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn no_docker_engine_exits_2_saying_how_to_get_one() {
    let out = grantgate(&[], &[("DOCKER_HOST", "unix:///nonexistent/docker.sock")]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no Docker engine answers at unix:///nonexistent/docker.sock"),
        "{err}"
    );
    assert!(err.contains("DOCKER_HOST"), "{err}");
}

#[test]
fn a_missing_core_image_exits_2_naming_the_build_command() {
    let out = grantgate(&["--core-image", "grantgate/refcore:no-such-tag"], &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("image grantgate/refcore:no-such-tag is not in the local Docker engine"),
        "{err}"
    );
    assert!(err.contains("scripts/build-images"), "{err}");
}

#[test]
fn a_missing_postgres_image_exits_2_but_only_when_postgres_runs() {
    let out = grantgate(&["--postgres-image", "grantgate/postgres:no-such-tag"], &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("grantgate/postgres:no-such-tag"), "{err}");
    assert!(err.contains("--postgres-image"), "{err}");
}

#[test]
fn postgres_url_is_refused_with_the_docker_runtime() {
    let out = grantgate(&["--postgres-url", "postgres://u:p@127.0.0.1:1/x"], &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--postgres-url is for --runtime process"),
        "{err}"
    );
}
