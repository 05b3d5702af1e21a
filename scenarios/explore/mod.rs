//! Family 20: seeded random sequences of every actor's operations,
//! compared with a model of the contract and shrunk on a difference.

files! { sequences, model, reads, run }

pub use sequences::{Budget, CASES, STEPS, configure};
