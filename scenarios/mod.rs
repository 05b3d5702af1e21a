//! The acceptance catalogue: every claim grantgate proves about a Core, one
//! async function each, registered in
//! [`catalogue()`](crate::scenarios::catalogue) with the spec §7 family it
//! belongs to. Every scenario runs on every backend, on a fresh stack.
//!
//! One file per family of spec §7. To add a scenario: write
//! `pub async fn name(ctx: &mut Ctx) -> Outcome` in the family's file and add
//! its [`Scenario`](crate::runner::catalogue::Scenario) entry to that file's
//! `scenarios()`.

pub mod access_loss;
pub mod adapter_faults;
pub mod boundaries;
pub mod browser;
pub mod flows;
pub mod lifecycle;
pub mod pagination;
pub mod privilege;
pub mod replay;
pub mod tombstones;
pub mod withdrawal;

use crate::runner::catalogue::Scenario;

/// Every scenario, in the order of spec §7 (backend parity, line 11, is the
/// engine's `parity::` trial over every scenario marked `parity`).
pub fn catalogue() -> Vec<Scenario> {
    [
        browser::scenarios(),
        pagination::scenarios(),
        lifecycle::scenarios(),
        replay::scenarios(),
        tombstones::scenarios(),
        withdrawal::scenarios(),
        boundaries::scenarios(),
        access_loss::scenarios(),
        adapter_faults::scenarios(),
        privilege::scenarios(),
        crate::runner::probes::scenarios(),
    ]
    .concat()
}
