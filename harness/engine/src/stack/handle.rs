//! The handle of a running stack: its URL, its admin credential (for the
//! setup client only), and its teardown or `--keep`, whichever runtime
//! launched it.

use std::path::PathBuf;
use std::time::Duration;

use super::container::ContainerStack;
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

/// What runs a stack's Core.
#[allow(
    clippy::large_enum_variant,
    reason = "one per running stack; boxing either variant gains nothing"
)]
pub(crate) enum CoreRun {
    /// A local child process (the process runtime).
    Process(ManagedChild),
    /// A Core container, with its database container and network when it
    /// has them (the Docker runtime).
    Containers(ContainerStack),
}

/// A running stack. Tear it down with [`Stack::teardown`]; dropping it kills
/// the Core (or removes its containers) and its files as a last resort
/// (panics, Ctrl-C).
pub struct Stack {
    /// The Core's origin, e.g. `http://127.0.0.1:41234`.
    pub base_url: String,
    /// The backend.
    pub backend: Backend,
    /// Time from launch to healthy.
    pub startup: Duration,
    pub(crate) admin: AdminCredential,
    pub(crate) core: CoreRun,
    pub(crate) dir: Option<tempfile::TempDir>,
    pub(crate) database: Option<DatabaseLease>,
}

impl Stack {
    /// The Core's captured stdout and stderr (and, for containers, the
    /// database container's output too).
    pub fn core_log(&self) -> SharedLog {
        match &self.core {
            CoreRun::Process(child) => child.log(),
            CoreRun::Containers(stack) => stack.log(),
        }
    }

    /// Resolves when the Core process exits, with its status; never for a
    /// container stack (its engine reports a dead Core as a refused
    /// connection).
    pub fn core_exited(&self) -> futures::future::BoxFuture<'static, String> {
        match &self.core {
            CoreRun::Process(child) => Box::pin(child.exited()),
            CoreRun::Containers(_) => Box::pin(std::future::pending()),
        }
    }

    /// Why the Core process is gone (`status` from [`Stack::core_exited`]),
    /// with its last output lines.
    pub async fn core_exit_report(&mut self, status: &str) -> String {
        match &mut self.core {
            CoreRun::Process(child) => child.exit_report(status).await,
            CoreRun::Containers(_) => format!("the Core exited ({status})"),
        }
    }

    /// The URL of the database the harness handed this Core, as the
    /// harness reaches it (for a container, through its mount or the
    /// database container's published port).
    pub fn database_url(&self) -> Option<&str> {
        self.database.as_ref().map(|d| d.url.as_str())
    }

    /// Stops the Core but keeps its database and directory: what a fixture
    /// snapshot is made of. The database is dropped (and the directory
    /// deleted) when the returned values are.
    pub(crate) async fn stop_keeping_database(
        mut self,
    ) -> (Option<DatabaseLease>, Option<tempfile::TempDir>) {
        match &mut self.core {
            CoreRun::Process(child) => {
                child.stop(crate::limits::SIGTERM_GRACE).await;
            }
            CoreRun::Containers(stack) => stack.stop().await,
        }
        (self.database.take(), self.dir.take())
    }

    /// Stops the Core (SIGTERM, then SIGKILL after `grace`), drops its
    /// database and deletes its directory. Returns whether the Core stopped
    /// within `grace` (a container's engine keeps its own grace: true).
    pub async fn teardown(mut self, grace: Duration) -> bool {
        let clean = match &mut self.core {
            CoreRun::Process(child) => {
                let clean = child.stop(grace).await;
                if let Some(dir) = &self.dir {
                    let url = self.database.as_ref().map(|d| d.url.clone());
                    end_left_behind(dir.path().to_owned(), url.unwrap_or_default()).await;
                }
                clean
            }
            CoreRun::Containers(stack) => {
                stack.teardown().await;
                true
            }
        };
        if let Some(db) = self.database.take() {
            db.release().await;
        }
        self.dir.take();
        clean
    }

    /// Keeps the stack running after the harness exits (`--keep`) and says
    /// how to reach it.
    pub fn keep(mut self) -> KeptStack {
        let (stop, container_database) = match &mut self.core {
            CoreRun::Process(child) => {
                child.detach();
                let pid = child.pid().map(|p| p.to_string());
                (
                    format!("kill -TERM -{}", pid.as_deref().unwrap_or("?")),
                    None,
                )
            }
            CoreRun::Containers(stack) => (stack.keep(), Some(stack.database())),
        };
        let dir = self
            .dir
            .take()
            .map(|d| d.keep())
            .unwrap_or_else(|| PathBuf::from("-"));
        // No later run may sweep it as a dead run's leftover.
        crate::sweep::mark_kept(&dir);
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
        let database_url = match container_database {
            Some(described) => described,
            None => self.database.take().map(|db| db.keep()).unwrap_or_default(),
        };
        KeptStack {
            core_url: self.base_url.clone(),
            database_url,
            dir,
            stop,
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
    /// The command that stops the Core (and its containers and network).
    pub stop: String,
    /// The admin's login (the password is a secret and not printed).
    pub admin_user: String,
}

impl std::fmt::Display for KeptStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "kept stack: core {} | database {} | dir {} (admin login in admin-credentials) | stop with `{}`",
            self.core_url,
            self.database_url,
            self.dir.display(),
            self.stop
        )
    }
}

/// Ends every process still naming a stack's directory or database URL
/// (a daemon its Core left outside its process group, and that daemon's
/// own children), off the async workers.
pub(super) async fn end_left_behind(dir: PathBuf, database_url: String) {
    let _ = tokio::task::spawn_blocking(move || {
        crate::lifeline::end_naming(&[dir], &[database_url.as_str()])
    })
    .await;
}
