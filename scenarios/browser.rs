//! Family 1: the browser surface — login, the real forms, CSRF and stale-revision refusals.

use crate::runner::catalogue::Scenario;

/// This family's scenarios, in catalogue order.
pub fn scenarios() -> Vec<Scenario> {
    vec![]
}
