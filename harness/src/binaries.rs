//! Finding the programs a run needs: the Core (`refcore` unless `--core-bin`
//! names another) and the adapter (`awg-mcp`).
//!
//! By default both sit next to the harness executable, in the same cargo
//! target directory (`target/debug/`, or its parent when the harness runs as a
//! test from `target/debug/deps/`). When the harness runs under cargo
//! (`cargo run`, `cargo test`: `CARGO` is set) it asks cargo to build them,
//! which is a quick no-op when they are fresh; otherwise a missing binary is a
//! configuration error that says which command builds it.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{HarnessError, Result};

/// The command that builds both default binaries.
pub const BUILD_COMMAND: &str = "cargo build -p refcore -p awg-mcp";

/// The directory holding the harness's own executable (with `deps/`
/// stripped for test executables).
pub fn target_profile_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let mut dir = exe.parent()?.to_owned();
    if dir.file_name().is_some_and(|n| n == "deps") {
        dir = dir.parent()?.to_owned();
    }
    Some(dir)
}

/// The Core and adapter binaries for a run.
#[derive(Debug, Clone)]
pub struct Binaries {
    /// The Core.
    pub core: PathBuf,
    /// The adapter.
    pub adapter: PathBuf,
}

/// Resolves both binaries: explicit paths must exist; defaults are built by
/// cargo when running under cargo, then looked up next to the harness.
pub fn locate(core: Option<&Path>, adapter: Option<&Path>) -> Result<Binaries> {
    let dir = target_profile_dir();
    let need_build: Vec<&str> = [("refcore", core.is_none()), ("awg-mcp", adapter.is_none())]
        .iter()
        .filter(|(_, default)| *default)
        .map(|(n, _)| *n)
        .collect();
    if !need_build.is_empty()
        && let Some(dir) = &dir
    {
        build_under_cargo(dir, &need_build)?;
    }
    Ok(Binaries {
        core: resolve("Core binary (refcore)", core, dir.as_deref(), "refcore")?,
        adapter: resolve(
            "adapter binary (awg-mcp)",
            adapter,
            dir.as_deref(),
            "awg-mcp",
        )?,
    })
}

fn resolve(what: &str, explicit: Option<&Path>, dir: Option<&Path>, name: &str) -> Result<PathBuf> {
    let path = match explicit {
        Some(p) => p.to_owned(),
        None => dir
            .map(|d| d.join(name))
            .unwrap_or_else(|| PathBuf::from(name)),
    };
    if path.is_file() {
        return Ok(path);
    }
    let fix = if explicit.is_some() {
        "give the path of an existing executable".to_owned()
    } else {
        format!("build it with `{BUILD_COMMAND}` (or `cargo test --workspace`)")
    };
    Err(HarnessError::MissingBinary {
        what: what.to_owned(),
        path,
        fix,
    })
}

/// Under cargo, builds the default binaries into the harness's own target
/// directory and profile. Skipped outside cargo and when
/// `GRANTGATE_NO_BUILD=1`.
fn build_under_cargo(profile_dir: &Path, packages: &[&str]) -> Result<()> {
    let Some(cargo) = std::env::var_os("CARGO") else {
        return Ok(());
    };
    if std::env::var("GRANTGATE_NO_BUILD").as_deref() == Ok("1") {
        return Ok(());
    }
    let Some(target_dir) = profile_dir.parent() else {
        return Ok(());
    };
    let profile = profile_dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("debug");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(|p| p.join("Cargo.toml"));
    let Some(manifest) = manifest.filter(|m| m.is_file()) else {
        return Ok(());
    };
    let mut cmd = Command::new(cargo);
    // Not quiet: on a fresh checkout this build takes minutes, and cargo's
    // own progress says why nothing else happens meanwhile.
    eprintln!(
        "grantgate: cargo build {}",
        packages
            .iter()
            .map(|p| format!("-p {p}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    cmd.arg("build")
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--target-dir")
        .arg(target_dir);
    match profile {
        "debug" => {}
        "release" => {
            cmd.arg("--release");
        }
        other => {
            cmd.args(["--profile", other]);
        }
    }
    for p in packages {
        cmd.args(["-p", p]);
    }
    let status = cmd.status().map_err(|e| {
        HarnessError::Config(format!("cannot run cargo to build {packages:?}: {e}"))
    })?;
    if !status.success() {
        return Err(HarnessError::Config(format!(
            "`cargo build {}` failed; fix the build, then run again",
            packages
                .iter()
                .map(|p| format!("-p {p}"))
                .collect::<Vec<_>>()
                .join(" ")
        )));
    }
    Ok(())
}
