//! Stacks: one Core plus its own database, started fresh for one scenario and
//! always torn down.
//!
//! A [`Runtime`] knows how to launch a Core (as a local process today, as a
//! container later); a [`DatabaseProvider`] hands each stack its own database
//! (a SQLite file, a clone of a template database on the run's ephemeral
//! PostgreSQL cluster, or a fresh database on an existing server). The
//! [`Stack`] handle is what scenarios see: a base URL and the setup credential
//! (which only the setup client may read).

pub mod database;
pub mod process;

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use database::{DatabaseLease, DatabaseProvider};
pub use process::ProcessRuntime;

use crate::child::{ManagedChild, SharedLog};
use crate::error::Result;

/// A database backend the Core runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// A SQLite file in the stack's directory.
    Sqlite,
    /// A PostgreSQL database of its own.
    Postgres,
}

impl Backend {
    /// Every backend, in the order trials are listed.
    pub const ALL: [Backend; 2] = [Backend::Sqlite, Backend::Postgres];

    /// The lowercase name used in trial names and reports.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

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
}

/// The site-admin credential of one stack. Only the setup client reads it;
/// it is registered as a secret the moment it is minted.
#[derive(Clone)]
pub struct AdminCredential {
    /// The admin's login.
    pub user: String,
    /// The admin's password.
    pub(crate) password: String,
}

impl std::fmt::Debug for AdminCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AdminCredential({}, [redacted])", self.user)
    }
}

/// How long a Core may take from launch to a healthy `/api/healthz`.
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// A running stack. Tear it down with [`Stack::teardown`]; dropping it kills
/// the Core and removes its files as a last resort (panics, Ctrl-C).
pub struct Stack {
    /// The Core's origin, e.g. `http://127.0.0.1:41234`.
    pub base_url: String,
    /// The backend.
    pub backend: Backend,
    /// Time from launch to healthy.
    pub startup: Duration,
    pub(crate) admin: AdminCredential,
    pub(crate) core: ManagedChild,
    pub(crate) dir: Option<tempfile::TempDir>,
    pub(crate) database: Option<DatabaseLease>,
}

impl Stack {
    /// The Core's captured stdout and stderr.
    pub fn core_log(&self) -> SharedLog {
        self.core.log()
    }

    /// Stops the Core, drops its database and deletes its directory.
    pub async fn teardown(mut self) {
        self.core.stop(Duration::from_secs(5)).await;
        if let Some(db) = self.database.take() {
            db.release().await;
        }
        self.dir.take();
    }

    /// Keeps the stack running after the harness exits (`--keep`) and says
    /// how to reach it.
    pub fn keep(mut self) -> KeptStack {
        self.core.detach();
        let dir = self
            .dir
            .take()
            .map(|d| d.keep())
            .unwrap_or_else(|| PathBuf::from("-"));
        // The admin password is a secret: it goes into a file only root can
        // read inside the kept directory, never onto the terminal.
        let credentials = dir.join("admin-credentials");
        let _ = std::fs::write(
            &credentials,
            format!(
                "user={}\npassword={}\n",
                self.admin.user, self.admin.password
            ),
        );
        let _ = std::fs::set_permissions(
            &credentials,
            std::os::unix::fs::PermissionsExt::from_mode(0o600),
        );
        let database_url = self.database.take().map(|db| db.keep()).unwrap_or_default();
        KeptStack {
            core_url: self.base_url.clone(),
            database_url,
            dir,
            pid: self.core.pid(),
            admin_user: self.admin.user.clone(),
        }
    }
}

/// Where a kept stack lives.
#[derive(Debug, Clone)]
pub struct KeptStack {
    /// The Core's origin.
    pub core_url: String,
    /// The database URL (SQLite path or PostgreSQL URL).
    pub database_url: String,
    /// The stack's directory.
    pub dir: PathBuf,
    /// The Core's process id (its process group).
    pub pid: Option<i32>,
    /// The admin's login (the password is a secret and not printed).
    pub admin_user: String,
}

impl std::fmt::Display for KeptStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "kept stack: core {} | database {} | dir {} (admin login in admin-credentials) | stop with `kill -TERM -{}`",
            self.core_url,
            self.database_url,
            self.dir.display(),
            self.pid
                .map(|p| p.to_string())
                .unwrap_or_else(|| "?".into())
        )
    }
}

/// A boxed future, so that runtimes can be trait objects.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Something that can launch a Core stack: the process runtime now, a
/// container runtime later.
pub trait Runtime: Send + Sync {
    /// Starts a fresh stack and waits until it is healthy.
    fn start(&self, spec: StackSpec) -> BoxFuture<'_, Result<Stack>>;

    /// A one-line description of the Core this runtime launches.
    fn describe(&self) -> String;
}
