//! The runtime abstraction: what a stack is asked to be ([`StackSpec`]), on
//! which [`Backend`], and the [`Runtime`] trait every way of launching a Core
//! implements (a local process, or a container).

use std::future::Future;
use std::pin::Pin;

use super::{Backend, Stack};
use crate::error::Result;

/// What one stack should be.
#[derive(Debug, Clone)]
pub struct StackSpec {
    /// A short name for directories, databases and messages (the trial name).
    pub name: String,
    /// The backend.
    pub backend: Backend,
    /// Extra `CORE_*` variables, e.g. `CORE_CSRF_TTL_SECS` for a stack that
    /// tests expired CSRF tokens.
    pub extra_env: Vec<(String, String)>,
    /// Start from a fixture snapshot: the admin and
    /// secret key it was made with, and the database to copy. `None`: a new
    /// admin, a new key and an empty database.
    pub seed: Option<Seed>,
}

/// What a stack started from a fixture snapshot reuses.
#[derive(Clone)]
pub struct Seed {
    /// The snapshot's site admin (the Core created it on first start).
    pub admin: super::AdminCredential,
    /// The snapshot's `CORE_SECRET_KEY`: what it signed or hashed stays valid.
    pub secret_key: String,
    /// The database to copy; `None` while the snapshot itself is being made.
    pub database: Option<SnapshotDb>,
}

impl std::fmt::Debug for Seed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Seed({:?}, [redacted])", self.database)
    }
}

/// A fixture snapshot's database, which each stack gets a copy of.
#[derive(Debug, Clone)]
pub enum SnapshotDb {
    /// A SQLite file, copied into the stack's directory.
    SqliteFile(std::path::PathBuf),
    /// A PostgreSQL database, cloned with `CREATE DATABASE … TEMPLATE`.
    Postgres(String),
}

/// How a run launches its Cores (`grantgate run --runtime`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, clap::ValueEnum)]
pub enum RuntimeKind {
    /// A local Core binary per stack, databases from the host.
    #[default]
    Process,
    /// A Core container image per stack, on the run's network, with the
    /// run's PostgreSQL container beside them.
    Docker,
}

/// A boxed future, so that runtimes can be trait objects.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Something that can launch a Core stack: the process runtime or the
/// Docker runtime.
pub trait Runtime: Send + Sync {
    /// Starts a fresh stack and waits until it is healthy.
    fn start(&self, spec: StackSpec) -> BoxFuture<'_, Result<Stack>>;

    /// A one-line description of the Core this runtime launches.
    fn describe(&self) -> String;

    /// The database version behind `backend`, for the report's environment.
    fn database_version(&self, backend: Backend) -> BoxFuture<'_, String>;

    /// Waits for teardown work still under way in the background.
    fn settle(&self) -> BoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }
}
