//! Honest variants: the other half of the self-test. A gate is judged by the
//! broken Cores it stops *and* the honest ones it lets through, so refcore's
//! faults build also carries variants (`CORE_VARIANT`, `docs/faults.md`)
//! that differ from refcore only where the contract leaves room: other
//! markup, extra JSON members, other error wording, another `Link` style,
//! absolute redirects, pretty JSON, another cookie name, markup inside words,
//! form controls joined by `form="id"` or that a browser does not send, the
//! consent decision as two forms, actions relative to a `<base>`. Every
//! trial must pass against each.
//!
//! As with faults, the list comes from the binary (`refcore
//! --list-variants`), so a new variant is run without being registered here.

use std::path::Path;
use std::process::Command;

use crate::binaries::Binaries;
use crate::config::RunConfig;
use crate::error::{HarnessError, Result};

/// The variable that selects a variant.
pub const ENV: &str = "CORE_VARIANT";
/// The flag refcore answers with its variants, one per line.
pub const LIST_FLAG: &str = "--list-variants";

/// The variants of the Core binary `bin`.
pub fn list(bin: &Path) -> Result<Vec<String>> {
    let out = Command::new(bin)
        .arg(LIST_FLAG)
        .env_remove(ENV)
        .output()
        .map_err(|e| HarnessError::io(bin, e))?;
    if !out.status.success() {
        return Err(HarnessError::Config(format!(
            "`{} {LIST_FLAG}` failed ({}): {}; the self-test needs a build with the `faults` \
             feature: `{}`",
            bin.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim(),
            crate::binaries::FAULTS_BUILD_COMMAND
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect())
}

/// One variant's run: the faults build of the Core with the variant set,
/// the default adapter, the first selected backend, all the run's stacks
/// (variants run one at a time: within one pass a trial waiting out a clock
/// lends its slot to the next, which two passes of one stack each cannot).
pub fn config(clean: &RunConfig, bins: &Binaries, variant: &str) -> RunConfig {
    RunConfig {
        backends: clean.backends.iter().take(1).copied().collect(),
        core_bin: Some(bins.core.clone()),
        keep: false,
        core_env: [
            clean.core_env.clone(),
            vec![(ENV.to_owned(), variant.to_owned())],
        ]
        .concat(),
        ..clean.clone()
    }
}
