//! Shared test support: a scriptable upstream, the adapter as a real child
//! process with rmcp clients, and native JSON fixtures.
#![allow(dead_code)]

pub mod adapter;
pub mod fixtures;
pub mod upstream;

pub use adapter::*;
pub use fixtures::*;
pub use upstream::*;
