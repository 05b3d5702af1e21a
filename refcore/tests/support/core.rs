//! A refcore child process on a real database, over loopback HTTP.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use grantgate_engine::postgres::PgCluster;

/// The site admin every test stack is started with.
pub const ADMIN: &str = "root";
/// Its password.
pub const ADMIN_PASSWORD: &str = "root-password-for-tests";
/// The secret key of test stacks.
pub const SECRET: &str = "refcore-test-secret-key-0123456789";

/// Which database a stack runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A SQLite file in a temporary directory.
    Sqlite,
    /// A fresh database on the run's ephemeral cluster.
    Postgres,
}

impl Backend {
    /// The name `/api/v1/version` reports and tests are prefixed with.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

static DB_COUNTER: AtomicU32 = AtomicU32::new(0);

/// Where a stack's data lives; creates a fresh, empty database each call.
pub struct DbPlace {
    /// The `CORE_DATABASE_URL`.
    pub url: String,
    _dir: Option<tempfile::TempDir>,
}

/// Creates a fresh database for `backend`.
pub async fn fresh_database(backend: Backend, pg: Option<&PgCluster>) -> Result<DbPlace, String> {
    match backend {
        Backend::Sqlite => {
            let dir = tempfile::Builder::new()
                .prefix("refcore-test-")
                .tempdir()
                .map_err(|e| format!("tempdir: {e}"))?;
            let url = format!("sqlite://{}", dir.path().join("core.db").display());
            Ok(DbPlace {
                url,
                _dir: Some(dir),
            })
        }
        Backend::Postgres => {
            let pg = pg.ok_or("postgres backend without a cluster")?;
            let n = DB_COUNTER.fetch_add(1, Ordering::SeqCst);
            let name = format!("refcore_{}_{n}", std::process::id());
            let url = pg
                .create_database(&name)
                .await
                .map_err(|e| format!("create database {name}: {e}"))?;
            Ok(DbPlace { url, _dir: None })
        }
    }
}

/// A running refcore. Dropping it sends SIGTERM and waits.
pub struct Core {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// Which backend it runs on.
    pub backend: Backend,
    child: Option<Child>,
    /// Its stderr log file, for failure messages.
    pub log: PathBuf,
    _logdir: tempfile::TempDir,
}

/// Starts `refcore` on `db_url` with the test admin and secret plus `extra`
/// environment, and waits for its `core listening on` line.
pub fn start(backend: Backend, db_url: &str, extra: &[(&str, &str)]) -> Result<Core, String> {
    let logdir = tempfile::Builder::new()
        .prefix("refcore-log-")
        .tempdir()
        .map_err(|e| format!("tempdir: {e}"))?;
    let log = logdir.path().join("stderr.log");
    let stderr = std::fs::File::create(&log).map_err(|e| format!("log file: {e}"))?;
    let mut command = Command::new(env!("CARGO_BIN_EXE_refcore"));
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("CORE_LISTEN", "127.0.0.1:0")
        .env("CORE_DATABASE_URL", db_url)
        .env("CORE_SECRET_KEY", SECRET)
        .env("CORE_ADMIN_USER", ADMIN)
        .env("CORE_ADMIN_PASSWORD", ADMIN_PASSWORD)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr);
    for (k, v) in extra {
        command.env(k, v);
    }
    let mut child = command.spawn().map_err(|e| format!("spawn refcore: {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        if let Some(Ok(line)) = lines.next() {
            let _ = tx.send(line);
        }
        // Keep draining so the child never blocks on a full pipe.
        for _ in lines {}
    });
    let line = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(line) => line,
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            let logged = std::fs::read_to_string(&log).unwrap_or_default();
            return Err(format!(
                "refcore did not print its listening line; stderr:\n{logged}"
            ));
        }
    };
    let url = line
        .strip_prefix("core listening on ")
        .ok_or_else(|| format!("unexpected first stdout line {line:?}"))?
        .to_string();
    Ok(Core {
        url,
        backend,
        child: Some(child),
        log,
        _logdir: logdir,
    })
}

impl Core {
    /// Sends SIGTERM and waits up to `limit` for the exit status.
    pub fn terminate(&mut self, limit: Duration) -> Result<std::process::ExitStatus, String> {
        let mut child = self.child.take().ok_or("already stopped")?;
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM)
            .map_err(|e| format!("SIGTERM: {e}"))?;
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = child.try_wait().map_err(|e| format!("wait: {e}"))? {
                return Ok(status);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("refcore did not exit within {limit:?} of SIGTERM"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The stderr written so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Core {
    fn drop(&mut self) {
        if self.child.is_some() {
            let _ = self.terminate(Duration::from_secs(10));
        }
    }
}
