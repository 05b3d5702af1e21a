//! Family 10: privilege separation — the adapter never holds the setup credential or another bot's token.

use crate::runner::catalogue::Scenario;

/// This family's scenarios, in catalogue order.
pub fn scenarios() -> Vec<Scenario> {
    vec![]
}
