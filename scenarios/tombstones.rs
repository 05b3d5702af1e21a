//! Family 5: tombstones — deleted and moved Issues keep their receipts and spend their keys.

use crate::runner::catalogue::Scenario;

/// This family's scenarios, in catalogue order.
pub fn scenarios() -> Vec<Scenario> {
    vec![]
}
