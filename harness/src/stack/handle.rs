//! The handle of a running stack: its URL, its admin credential (for the
//! setup client only), and its teardown or `--keep`.

use std::path::PathBuf;
use std::time::Duration;

use super::{Backend, DatabaseLease};
use crate::child::{ManagedChild, SharedLog};

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
