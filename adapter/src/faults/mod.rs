//! Built-in faults for the harness's self-test (issue #7, `docs/faults.md`).
//!
//! A faults build (`--features faults`) reads `AWG_FAULT` once at start and
//! then breaks exactly one rule of spec §6 or §9, on purpose, so the harness can
//! prove its catalogue catches that broken adapter. Each hook is a
//! `fault!` test in `edges.rs`, which bends the edges of the adapter's
//! rules (`crate::edges`) that the fault names. The faults
//! themselves (names, what each breaks, what catches it) are data in the
//! `fault-catalogue` crate, shared with refcore.
//!
//! A default build has no fault names at all: it does not link the
//! catalogue, compiles no hook (every edge is honest), and a set
//! `AWG_FAULT` refuses to start, so nobody believes a fault is active when
//! it is not.

use crate::error::ConfigError;

/// The variable that selects a fault.
pub const ENV: &str = "AWG_FAULT";

/// `fault!(Name)`: whether the fault `Name` is active in this process.
#[cfg(feature = "faults")]
macro_rules! fault {
    ($name:ident) => {
        $crate::faults::active($crate::faults::Fault::$name)
    };
}

#[cfg(feature = "faults")]
pub use fault_catalogue::awg_mcp::{Fault, active};

#[cfg(feature = "faults")]
mod edges;

/// The edges the adapter's rules answer with (`crate::edges`): honest in a
/// default build; in a faults build bent by the active fault (`edges.rs`).
#[cfg(feature = "faults")]
pub(crate) type AdapterEdges = edges::Bent;
/// The edges the adapter's rules answer with: honest (a default build).
#[cfg(not(feature = "faults"))]
pub(crate) type AdapterEdges = crate::edges::Honest;

/// Reads `raw` (the value of `AWG_FAULT`; empty counts as unset) once, at
/// start. A faults build activates the named fault, or refuses an unknown
/// name listing the valid ones; a default build refuses any name.
pub fn init(raw: Option<&str>) -> Result<(), ConfigError> {
    let Some(name) = raw.filter(|n| !n.is_empty()) else {
        return Ok(());
    };
    #[cfg(feature = "faults")]
    {
        use fault_catalogue::awg_mcp::{ALL, activate};
        let spec = fault_catalogue::find(ALL, name).ok_or_else(|| ConfigError::UnknownFault {
            name: name.chars().take(60).collect(),
            valid: fault_catalogue::names(ALL),
        })?;
        activate(spec.fault);
        tracing::warn!(
            fault = name,
            "built-in fault ACTIVE: this adapter breaks the contract on purpose"
        );
        Ok(())
    }
    #[cfg(not(feature = "faults"))]
    {
        let _ = name;
        Err(ConfigError::NotAFaultsBuild)
    }
}

/// The flag that prints the fault catalogue and exits.
pub const LIST_FLAG: &str = "--list-faults";

/// What `awg-mcp --list-faults` prints, so the harness's self-test finds the
/// faults in the binary itself (`fault_catalogue::listing`: `name<TAB>any`,
/// as no adapter fault depends on the Core's backend). `None` in a default
/// build, which has no faults.
pub fn listing() -> Option<String> {
    #[cfg(feature = "faults")]
    {
        Some(fault_catalogue::listing(fault_catalogue::awg_mcp::ALL))
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
        assert!(init(None).is_ok());
        assert!(init(Some("")).is_ok());
    }

    #[cfg(not(feature = "faults"))]
    #[test]
    fn a_default_build_refuses_any_name() {
        let err = init(Some("adapter-retries-post")).unwrap_err();
        assert!(
            err.to_string().contains("without the `faults` feature"),
            "{err}"
        );
    }

    #[cfg(feature = "faults")]
    #[test]
    fn unknown_names_are_refused_and_invented_keys_are_canonical() {
        let err = init(Some("adapter-retries")).unwrap_err().to_string();
        assert!(err.contains("adapter-retries-post"), "{err}");
        let (one, two) = (edges::invented_key(), edges::invented_key());
        assert!(crate::validate::is_uuid_v4(&one), "{one}");
        assert_ne!(one, two);
    }

    #[test]
    fn the_listing_names_every_fault() {
        #[cfg(feature = "faults")]
        {
            let listing = listing().unwrap();
            assert_eq!(listing.lines().count(), fault_catalogue::awg_mcp::ALL.len());
            assert!(listing.contains("adapter-retries-post\tany\n"), "{listing}");
        }
        #[cfg(not(feature = "faults"))]
        assert_eq!(listing(), None);
    }
}
