//! Stacks: one Core plus its own database, started fresh for one scenario and
//! always torn down.
//!
//! A [`Runtime`] knows how to launch a Core (as a local process, or as a
//! container with `--runtime docker`); a [`DatabaseProvider`] hands each stack its own database
//! (a SQLite file, a clone of a template database on the run's ephemeral
//! PostgreSQL cluster, or a fresh database on an existing server). The
//! [`Stack`] handle is what scenarios see: a base URL and the setup credential
//! (which only the setup client may read).

pub mod backend;
mod container;
pub mod database;
pub mod docker;
pub mod docker_api;
pub mod handle;
pub mod process;
pub mod runtime;

pub use backend::Backend;
pub use database::{DatabaseLease, DatabaseProvider};
pub use docker::DockerRuntime;
pub use handle::{AdminCredential, KeptStack, STARTUP_TIMEOUT, Stack};
pub use process::ProcessRuntime;
pub use runtime::{BoxFuture, Runtime, RuntimeKind, Seed, SnapshotDb, StackSpec};
