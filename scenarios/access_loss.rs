//! Family 8: access lost mid-flow — collaborator removed, repository hidden, scope reduced.

use crate::runner::catalogue::Scenario;

/// This family's scenarios, in catalogue order.
pub fn scenarios() -> Vec<Scenario> {
    vec![]
}
