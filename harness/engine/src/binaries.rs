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

/// The command that builds both programs with their built-in faults
/// (`docs/faults.md`), into a target directory of their own so that the
/// default binaries are never replaced by faulty ones.
pub const FAULTS_BUILD_COMMAND: &str = "cargo build -p refcore -p awg-mcp \
    --features refcore/faults,awg-mcp/faults --target-dir target/faults";

/// The cargo arguments of [`FAULTS_BUILD_COMMAND`] besides the target dir.
const FAULTS_FEATURES: &str = "refcore/faults,awg-mcp/faults";

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
        build_under_cargo(dir, &need_build, None)?;
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

/// Resolves the faults builds of both programs for the self-test: explicit
/// paths must exist; by default they are `<target>/faults/<profile>/…`,
/// built there by cargo first when running under cargo. A missing one is a
/// configuration error naming [`FAULTS_BUILD_COMMAND`].
pub fn locate_faults(core: Option<&Path>, adapter: Option<&Path>) -> Result<Binaries> {
    let profile_dir = target_profile_dir();
    let faults_dir = profile_dir.as_deref().and_then(|d| {
        let target = d.parent()?;
        Some(target.join("faults").join(d.file_name()?))
    });
    if (core.is_none() || adapter.is_none())
        && let (Some(profile_dir), Some(faults_dir)) = (&profile_dir, &faults_dir)
        && let Some(faults_target) = faults_dir.parent()
    {
        build_under_cargo(
            profile_dir,
            &["refcore", "awg-mcp"],
            Some((faults_target, FAULTS_FEATURES)),
        )?;
    }
    let find = |what: &str, explicit: Option<&Path>, name: &str| {
        let path = explicit
            .map(absolute)
            .or_else(|| faults_dir.as_ref().map(|d| d.join(name)))
            .unwrap_or_else(|| PathBuf::from(name));
        if path.is_file() {
            Ok(path)
        } else {
            Err(HarnessError::MissingBinary {
                what: format!("{what} with the `faults` feature"),
                path,
                fix: format!(
                    "build it with `{FAULTS_BUILD_COMMAND}` and pass \
                     --core-bin target/faults/debug/refcore --adapter-bin target/faults/debug/awg-mcp"
                ),
            })
        }
    };
    Ok(Binaries {
        core: find("Core binary (refcore)", core, "refcore")?,
        adapter: find("adapter binary (awg-mcp)", adapter, "awg-mcp")?,
    })
}

fn resolve(what: &str, explicit: Option<&Path>, dir: Option<&Path>, name: &str) -> Result<PathBuf> {
    let path = match explicit {
        Some(p) => absolute(p),
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

/// `path` made absolute against the current directory (unchanged when that
/// cannot be read): a Core or adapter is started from its stack's own
/// directory.
pub(crate) fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

/// Under cargo, builds the default binaries into the harness's own target
/// directory and profile (or, with `faults`, into that other target
/// directory with those features). Skipped outside cargo and when
/// `GRANTGATE_NO_BUILD=1`.
fn build_under_cargo(
    profile_dir: &Path,
    packages: &[&str],
    faults: Option<(&Path, &str)>,
) -> Result<()> {
    let Some(cargo) = std::env::var_os("CARGO") else {
        return Ok(());
    };
    if std::env::var("GRANTGATE_NO_BUILD").as_deref() == Ok("1") {
        return Ok(());
    }
    let Some(own_target_dir) = profile_dir.parent() else {
        return Ok(());
    };
    let target_dir = faults.map_or(own_target_dir, |(dir, _)| dir);
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
    let features = faults
        .map(|(_, f)| format!(" --features {f}"))
        .unwrap_or_default();
    eprintln!(
        "grantgate: cargo build {}{features} --target-dir {}",
        packages
            .iter()
            .map(|p| format!("-p {p}"))
            .collect::<Vec<_>>()
            .join(" "),
        target_dir.display()
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
    if let Some((_, features)) = faults {
        cmd.args(["--features", features]);
        // The faults binaries go to their own target directory, so they never
        // replace the normal ones; their intermediate artifacts stay in ours,
        // so every dependency is compiled once (cargo's `build-dir`), not
        // twice. A build-dir set in the environment is left alone.
        if std::env::var_os("CARGO_BUILD_BUILD_DIR").is_none() {
            cmd.env("CARGO_BUILD_BUILD_DIR", own_target_dir);
        }
    }
    let status = cmd.status().map_err(|e| {
        HarnessError::Config(format!("cannot run cargo to build {packages:?}: {e}"))
    })?;
    if !status.success() {
        return Err(HarnessError::Config(format!(
            "`cargo build {}{features}` failed; fix the build, then run again",
            packages
                .iter()
                .map(|p| format!("-p {p}"))
                .collect::<Vec<_>>()
                .join(" ")
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Core and adapter given by relative paths are started from other
    /// directories (each stack's own): the self-test must hold them
    /// absolute, or every fault's pass errors and reads as a survivor.
    #[test]
    fn binaries_given_relative_are_held_absolute() {
        // Unit tests run in the crate's directory, where Cargo.toml is.
        let here = Path::new("Cargo.toml");
        for bins in [
            locate(Some(here), Some(here)).unwrap(),
            locate_faults(Some(here), Some(here)).unwrap(),
        ] {
            for path in [&bins.core, &bins.adapter] {
                assert!(path.is_absolute() && path.is_file(), "{path:?}");
            }
        }
    }
}
