//! Shared test support: a scriptable upstream, the adapter as a real child
//! process with rmcp clients, native JSON fixtures, and a real refcore.
#![allow(dead_code)]

pub mod adapter;
pub mod fixtures;
pub mod oauth;
pub mod refcore;
pub mod upstream;

// Each test binary uses a different part of the support.
#[allow(unused_imports)]
pub use adapter::*;
#[allow(unused_imports)]
pub use fixtures::*;
#[allow(unused_imports)]
pub use upstream::*;
