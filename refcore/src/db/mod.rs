//! Storage: one code base over SQLite and PostgreSQL through the sqlx `Any`
//! driver. Every SQL statement lives in this module's files (but the few
//! only a fault runs, in `crate::faults`); the few differences between the
//! backends are named in [`pool`], and the rules a query's text carries in
//! [`edges`].
//!
//! - [`pool`]: connecting, migrations, write transactions, dialect bits.
//! - [`users`], [`repos`], [`issues`], [`grants`], [`submissions`],
//!   [`sessions`], [`oauth`]: the queries of one table family each.

pub mod edges;
pub mod grants;
pub mod issues;
pub mod oauth;
pub mod pool;
pub mod repos;
pub mod sessions;
pub mod submissions;
pub mod users;

pub use pool::{Db, is_unique_violation, now, unix_now};
