//! Family 20: seeded random sequences of every actor's operations,
//! compared with a model of the contract and shrunk on a difference.

pub(crate) mod model;
pub(crate) mod reads;
pub(crate) mod run;
pub(crate) mod sequences;

pub use sequences::{Budget, CASES, STEPS, configure};
