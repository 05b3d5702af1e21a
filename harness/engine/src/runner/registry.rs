//! Where `#[scenario]` registers each scenario: a distributed slice
//! (linkme) that every `#[scenario]` in the linked crates adds one entry
//! to, so a scenario is written once, next to its claim, and never listed
//! by hand. The catalogue collects the slice and orders it.

use crate::runner::catalogue::Scenario;

/// One scenario as `#[scenario]` registers it: how to build its catalogue
/// entry, and where it is written, which orders it within its family.
#[derive(Debug, Clone, Copy)]
pub struct Registration {
    /// Builds the scenario's entry (the function `#[scenario]` writes).
    pub scenario: fn() -> Scenario,
    /// The module it is written in (`module_path!()`):
    /// `grantgate_scenarios::browser::forms`.
    pub module: &'static str,
    /// The line of its `#[scenario]` in that module's file.
    pub line: u32,
}

/// Every scenario registered by `#[scenario]`, in no particular order (the
/// linker's): the catalogue sorts it.
#[linkme::distributed_slice]
pub static SCENARIOS: [Registration];

/// Re-exported for the code `#[scenario]` writes, which names linkme
/// through the prelude (the crates it expands in need not depend on it).
#[doc(hidden)]
pub use linkme;
