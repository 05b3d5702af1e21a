//! Family 6: withdrawal from every non-final state.

use crate::runner::catalogue::Scenario;

/// This family's scenarios, in catalogue order.
pub fn scenarios() -> Vec<Scenario> {
    vec![]
}
