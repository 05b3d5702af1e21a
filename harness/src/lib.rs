//! grantgate: the end-to-end acceptance harness for agent-work-grant Cores.

pub mod postgres;
