//! Built-in faults for the harness's self-test (issue #7, `docs/faults.md`).
//!
//! A faults build (`--features faults`) reads `CORE_FAULT` once at start and
//! then breaks exactly one rule of the contract, on purpose, so the harness
//! can prove its catalogue catches that broken release. The rules do not
//! know: each asks its area's edges (`domain::edges`, `service::edges`,
//! `auth::edges`, `db::edges`, `web::edges`, `api::edges`), whose defaults
//! are the contract, and the modules below bend the one edge the active
//! fault names; faults that only change what a surface sends rewrite the
//! answer (`answers`). The faults themselves (names, where each is active,
//! what it breaks, what catches it) are data in the `fault-catalogue`
//! crate, shared with awg-mcp.
//!
//! A default build has no fault names at all: it compiles none of these
//! modules, does not link the catalogue, and a set `CORE_FAULT` refuses to
//! start, so nobody believes a fault is active when it is not.

use crate::config::Backend;
use crate::error::FaultError;

/// The variable that selects a fault.
pub const ENV: &str = "CORE_FAULT";

/// `fault!(Name)`: whether the fault `Name` is active in this process (the
/// modules below only: they exist in a faults build alone).
#[cfg(feature = "faults")]
macro_rules! fault {
    ($name:ident) => {
        $crate::faults::active($crate::faults::Fault::$name)
    };
}

#[cfg(feature = "faults")]
pub use fault_catalogue::refcore::{Fault, active};

#[cfg(feature = "faults")]
pub(crate) mod answers;
#[cfg(feature = "faults")]
pub(crate) mod api;
#[cfg(feature = "faults")]
mod auth;
#[cfg(feature = "faults")]
mod db;
#[cfg(feature = "faults")]
pub(crate) mod domain;
#[cfg(feature = "faults")]
mod replay_cache;
#[cfg(feature = "faults")]
mod service;
#[cfg(feature = "faults")]
pub(crate) mod web;

/// The edges the service's rules answer with (`service::edges`): honest in
/// a default build; in a faults build bent by the active fault, if it is
/// one of the service's (`faults/service.rs`).
#[cfg(feature = "faults")]
pub(crate) type ServiceEdges = service::Bent;
/// The edges the service's rules answer with: honest (a default build).
#[cfg(not(feature = "faults"))]
pub(crate) type ServiceEdges = crate::service::edges::Honest;

/// The edges API authentication answers with (`auth::edges`), as above
/// (`faults/auth.rs`).
#[cfg(feature = "faults")]
pub(crate) type AuthEdges = auth::Bent;
/// The edges API authentication answers with: honest (a default build).
#[cfg(not(feature = "faults"))]
pub(crate) type AuthEdges = crate::auth::edges::Honest;

/// The edges storage answers with (`db::edges`), as above (`faults/db.rs`).
#[cfg(feature = "faults")]
pub(crate) type DbEdges = db::Bent;
/// The edges storage answers with: honest (a default build).
#[cfg(not(feature = "faults"))]
pub(crate) type DbEdges = crate::db::edges::Honest;

/// Reads `raw` (the value of `CORE_FAULT`; empty counts as unset) once, at
/// start. A faults build activates the named fault (unless it is active on
/// another backend only), or refuses an unknown name listing the valid
/// ones; a default build refuses any name.
pub fn init(raw: Option<&str>, backend: Backend) -> Result<(), FaultError> {
    let Some(name) = raw.filter(|n| !n.is_empty()) else {
        return Ok(());
    };
    #[cfg(feature = "faults")]
    {
        use fault_catalogue::refcore::{ALL, activate};
        let spec = fault_catalogue::find(ALL, name).ok_or_else(|| FaultError::Unknown {
            name: name.chars().take(60).collect(),
            valid: fault_catalogue::names(ALL),
        })?;
        if !spec.active_on.includes(backend.name()) {
            tracing::warn!(
                fault = name,
                "built-in fault selected, inactive on this backend"
            );
            return Ok(());
        }
        activate(spec.fault);
        tracing::warn!(
            fault = name,
            "built-in fault ACTIVE: this Core breaks the contract on purpose"
        );
        Ok(())
    }
    #[cfg(not(feature = "faults"))]
    {
        let _ = (name, backend);
        Err(FaultError::NotAFaultsBuild)
    }
}

/// The flag that prints the fault catalogue and exits.
pub const LIST_FLAG: &str = "--list-faults";

/// What `refcore --list-faults` prints, so the harness's self-test finds the
/// faults in the binary itself (`fault_catalogue::listing`). `None` in a
/// default build, which has no faults.
pub fn listing() -> Option<String> {
    #[cfg(feature = "faults")]
    {
        Some(fault_catalogue::listing(fault_catalogue::refcore::ALL))
    }
    #[cfg(not(feature = "faults"))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_or_empty_is_no_fault() {
        assert!(init(None, Backend::Sqlite).is_ok());
        assert!(init(Some(""), Backend::Sqlite).is_ok());
    }

    #[cfg(not(feature = "faults"))]
    #[test]
    fn a_default_build_refuses_any_name() {
        let err = init(Some("replay-answers-201"), Backend::Sqlite).unwrap_err();
        assert!(
            err.to_string().contains("without the `faults` feature"),
            "{err}"
        );
    }

    #[cfg(feature = "faults")]
    #[test]
    fn an_unknown_name_is_refused_with_every_valid_one() {
        let err = init(Some("replay-answers-202"), Backend::Sqlite)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("replay-answers-201") && err.contains("nul-accepted-on-sqlite"),
            "{err}"
        );
    }

    #[test]
    fn the_listing_names_every_fault_and_where_it_is_active() {
        #[cfg(feature = "faults")]
        {
            let listing = listing().unwrap();
            assert_eq!(listing.lines().count(), fault_catalogue::refcore::ALL.len());
            assert!(
                listing.contains("nul-accepted-on-sqlite\tsqlite\n"),
                "{listing}"
            );
            assert!(listing.contains("replay-answers-201\tany\n"), "{listing}");
        }
        #[cfg(not(feature = "faults"))]
        assert_eq!(listing(), None);
    }
}
