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
//! --list-variants`), so a new variant is run without being registered here,
//! and so do the conflicts between variants. Compatible variants share one
//! Core (`CORE_VARIANT=a,b,c`): [`groups`] packs them into as few catalogue
//! passes as the conflicts allow, since each pass costs a whole catalogue.

use std::path::Path;
use std::process::Command;

use crate::binaries::Binaries;
use crate::config::RunConfig;
use crate::error::{HarnessError, Result};

/// The variable that selects a variant.
pub const ENV: &str = "CORE_VARIANT";
/// The flag refcore answers with its variants, one per line.
pub const LIST_FLAG: &str = "--list-variants";

/// One honest variant as the Core lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariantSpec {
    /// Its `CORE_VARIANT` name.
    pub name: String,
    /// The variants it cannot share a Core with.
    pub conflicts: Vec<String>,
}

/// The variants of the Core binary `bin`, in its listing order.
pub fn list(bin: &Path) -> Result<Vec<VariantSpec>> {
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
    Ok(parse_listing(&String::from_utf8_lossy(&out.stdout)))
}

/// Parses `--list-variants`: `name<TAB>conflicting,names` per line (a line
/// with no tab: no conflicts).
pub fn parse_listing(text: &str) -> Vec<VariantSpec> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let (name, conflicts) = line.split_once('\t').unwrap_or((line, ""));
            VariantSpec {
                name: name.trim().to_owned(),
                conflicts: conflicts
                    .split(',')
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(str::to_owned)
                    .collect(),
            }
        })
        .collect()
}

/// The variants packed into Core passes: each in the first group where it
/// conflicts with no member (either side may declare it), in listing order,
/// so the same listing always gives the same groups.
pub fn groups(variants: &[VariantSpec]) -> Vec<Vec<String>> {
    let clash = |a: &str, b: &str| {
        variants.iter().any(|v| {
            (v.name == a && v.conflicts.iter().any(|c| c == b))
                || (v.name == b && v.conflicts.iter().any(|c| c == a))
        })
    };
    let mut groups: Vec<Vec<String>> = Vec::new();
    for v in variants {
        match groups
            .iter_mut()
            .find(|g| g.iter().all(|m| !clash(m, &v.name)))
        {
            Some(group) => group.push(v.name.clone()),
            None => groups.push(vec![v.name.clone()]),
        }
    }
    groups
}

/// One Core pass: the faults build of the Core with `variants` set
/// (joined by commas), the default adapter, the first selected backend, all
/// the run's stacks (passes run one at a time: within one pass a trial
/// waiting out a clock lends its slot to the next, which two passes of one
/// stack each cannot).
pub fn config(clean: &RunConfig, bins: &Binaries, variants: &[String]) -> RunConfig {
    RunConfig {
        backends: clean.backends.iter().take(1).copied().collect(),
        core_bin: Some(bins.core.clone()),
        keep: false,
        core_env: [
            clean.core_env.clone(),
            vec![(ENV.to_owned(), variants.join(","))],
        ]
        .concat(),
        ..clean.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compatible_variants_share_a_pass_and_conflicting_ones_do_not() {
        // `c` conflicts with `a` (declared on one side only), `d` with
        // everything, `e` with nothing.
        let listing = "a\t\nb\nc\ta, d\nd\ta,b,c,e\n\ne\t\n";
        let specs = parse_listing(listing);
        assert_eq!(specs[2].name, "c");
        assert_eq!(specs[2].conflicts, ["a", "d"]);
        assert_eq!(
            groups(&specs),
            [vec!["a", "b", "e"], vec!["c"], vec!["d"]],
            "greedy, in listing order"
        );
    }
}
