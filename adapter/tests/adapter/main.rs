//! The adapter's behaviour, seen from outside: the real binary as a child
//! process, driven by rmcp clients against scripted upstreams and a real
//! refcore. One test binary, a module per concern (each was a binary of its
//! own: every one compiled and linked the same support and rmcp client code
//! again, about 4 s each). The input fuzzer stays apart
//! (`tests/fuzz_inputs.rs`): `scripts/test` runs it beside the others.

#[path = "../support/mod.rs"]
mod support;

mod consent;
mod consent_faults;
mod credentials;
mod delivery;
mod faults;
mod http_transport;
mod native_errors;
mod pagination;
mod refcore_flow;
mod text;
mod tools_list;
mod validation;
