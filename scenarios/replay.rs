//! Family 4: replay — same key and payload, changed payload, distinct keys, keys scoped to the grant.

use crate::runner::catalogue::Scenario;

/// This family's scenarios, in catalogue order.
pub fn scenarios() -> Vec<Scenario> {
    vec![]
}
