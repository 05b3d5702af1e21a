//! grantgate: the end-to-end acceptance harness for agent-work-grant Cores.
pub mod error;
pub mod journal;
pub mod postgres;
pub mod proxy;
pub mod report;
pub mod runner;
pub mod secrets;
