//! Family 2: pagination of the grant list, through the adapter and natively.

use crate::runner::catalogue::Scenario;

/// This family's scenarios, in catalogue order.
pub fn scenarios() -> Vec<Scenario> {
    vec![]
}
