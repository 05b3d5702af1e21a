//! The acceptance catalogue: every claim grantgate proves about a Core, one
//! async function each, registered in
//! [`catalogue()`](crate::scenarios::catalogue) with the spec §7 family it
//! belongs to. Every scenario runs on every backend, on a fresh stack.
//!
//! To add one: write `pub async fn name(ctx: &mut Ctx) -> Outcome` in the
//! family's file, then add a
//! [`Scenario`](crate::runner::catalogue::Scenario) line below.

pub mod flows;
pub mod lifecycle;

use crate::runner::catalogue::Scenario;

/// Every scenario, in the order reports list them.
pub fn catalogue() -> Vec<Scenario> {
    let mut all = vec![Scenario {
        id: "full_lifecycle",
        family: "3 full lifecycle",
        claim: "A grant prepared and approved through the browser, confirmed with the exact proposal \
                triple and submitted through the adapter, creates exactly one Issue whose full body, \
                poster and grant marker read back identically through the adapter, the native API \
                and the HTML page.",
        fixture: "lab",
        core_env: &[],
        parity: true,
        run: |ctx| Box::pin(lifecycle::full_lifecycle(ctx)),
    }];
    all.extend(crate::runner::selftest::scenarios());
    all
}
