//! Who is calling: API credentials (token, Bearer, Basic) and the secrets
//! behind them. Browser sessions live in [`crate::web::session`].

pub mod api;
pub mod edges;
pub mod secrets;

pub use api::{Caller, MaybeCaller};
