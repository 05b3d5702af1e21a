//! The runner: discover trials, run them with bounded concurrency on fresh
//! stacks, emit events, return one report.

pub mod catalogue;
pub mod events;
pub mod identity;
pub mod parity;
mod play;
pub mod probes;
pub mod registry;
pub mod run;
pub mod schedule;
pub mod signals;
pub mod slots;
pub mod snapshot;
mod state;
mod trial;
mod verdict;

pub use crate::vocab::{Abort, Outcome, Step, Verdict};
pub use catalogue::{Scenario, Trial};
pub use run::Engine;
