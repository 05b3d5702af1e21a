//! Family 7: wrong bot, missing scopes, unattributed ordinary activity, independent grants.

use crate::runner::catalogue::Scenario;

/// This family's scenarios, in catalogue order.
pub fn scenarios() -> Vec<Scenario> {
    vec![]
}
