//! An ephemeral PostgreSQL cluster: `initdb` into a temporary directory,
//! then `postgres` listening on a loopback port, torn down when dropped.
//!
//! The harness starts one per run and gives every stack its own database;
//! refcore's own tests use it the same way. As root, PostgreSQL refuses to run,
//! so the server processes run as the `postgres` user.
//!
//! Why the server is a direct child rather than daemonised by `pg_ctl`: a
//! direct child can be tied to the harness ([`crate::lifeline`]), so a
//! harness killed with SIGKILL takes its cluster down with it (SIGQUIT, an
//! immediate shutdown). Its directory carries an owner marker
//! ([`crate::sweep`]) so that the next run removes it.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sqlx::Connection;

/// What can go wrong while starting or using the ephemeral cluster.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    /// The server binaries are not installed where we look.
    #[error(
        "postgresql server binaries (initdb, postgres) not found: install them \
         (`apt-get install postgresql-15`) or set GRANTGATE_PG_BIN to their directory"
    )]
    NotInstalled,
    /// Running as root but there is no `postgres` user to drop privileges to.
    #[error(
        "running as root but no `postgres` user exists to run the server: \
         install the postgresql package, which creates it"
    )]
    NoPostgresUser,
    /// A command of the cluster's life cycle failed; `output` is its stderr.
    #[error("{command} failed: {output}")]
    Command {
        /// The command that failed.
        command: String,
        /// What it printed.
        output: String,
    },
    /// A filesystem step (temp dir, permissions) failed.
    #[error("postgres cluster directory {path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// An SQL statement against the cluster failed.
    #[error("postgres cluster sql: {0}")]
    Sql(#[from] sqlx::Error),
}

/// A running throw-away cluster. Dropping it stops the server and deletes
/// every file it wrote.
pub struct PgCluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    run_as: Option<(u32, u32)>,
    kept: bool,
    /// The postmaster, a child of the harness.
    server: Option<std::process::Child>,
}

/// How long the server may take to accept connections.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

impl PgCluster {
    /// Creates and starts a new cluster with trust authentication on
    /// 127.0.0.1 and a free port. Durability is switched off: the data is
    /// worthless once the run ends, and fsync would dominate the run time.
    pub fn start() -> Result<Self, PgError> {
        let bin = find_bin_dir()?;
        let run_as = if nix::unistd::geteuid().is_root() {
            let user = nix::unistd::User::from_name("postgres")
                .ok()
                .flatten()
                .ok_or(PgError::NoPostgresUser)?;
            Some((user.uid.as_raw(), user.gid.as_raw()))
        } else {
            None
        };
        let dir = crate::sweep::owned_tempdir("grantgate-pg-")
            .map_err(|source| io_err(&crate::sweep::scratch_root(), source))?;
        let mut cluster = PgCluster {
            dir,
            bin,
            port: crate::ports::unassigned_loopback_port()
                .map_err(|source| io_err(Path::new("127.0.0.1"), source))?,
            run_as,
            kept: false,
            server: None,
        };
        cluster.prepare_dirs()?;
        cluster.run(
            "initdb",
            &[
                "-D",
                &cluster.data_dir(),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
                "--no-instructions",
            ],
        )?;
        cluster.start_server()?;
        Ok(cluster)
    }

    /// Starts `postgres` as a child tied to the harness, its output in
    /// `server.log`, and waits until it accepts connections.
    fn start_server(&mut self) -> Result<(), PgError> {
        let log_path = self.dir.path().join("server.log");
        let log = std::fs::File::create(&log_path).map_err(|e| io_err(&log_path, e))?;
        let err_log = log.try_clone().map_err(|e| io_err(&log_path, e))?;
        let port = self.port.to_string();
        let socket_dir = self.socket_dir();
        let mut cmd = self.command("postgres");
        cmd.args(["-D", &self.data_dir(), "-p", &port, "-k", &socket_dir])
            .args(["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
            .args(["-c", "synchronous_commit=off", "-c", "full_page_writes=off"])
            .args(["-c", "max_connections=300"])
            // Every clone writes its whole database to the WAL; keep the WAL
            // small (it may live in memory, see `sweep::scratch_root`).
            .args(["-c", "max_wal_size=128MB", "-c", "min_wal_size=32MB"])
            .stdout(log)
            .stderr(err_log);
        // SIGQUIT is PostgreSQL's immediate shutdown: the postmaster takes
        // every backend down with it.
        crate::lifeline::tie(&mut cmd, nix::sys::signal::Signal::SIGQUIT);
        let program = self.bin.join("postgres");
        let server =
            crate::lifeline::spawn_tied(move || cmd.spawn()).map_err(|e| io_err(&program, e))?;
        let pid = server.id();
        self.server = Some(server);
        let pid_file = Path::new(&self.data_dir()).join("postmaster.pid");
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            // Line 8 of postmaster.pid is the server's status, `ready` once
            // it accepts connections (what `pg_ctl -w` waits for).
            let status = std::fs::read_to_string(&pid_file).unwrap_or_default();
            let mut lines = status.lines();
            if lines.next().map(str::trim) == Some(pid.to_string().as_str())
                && lines.nth(6).map(str::trim) == Some("ready")
            {
                return Ok(());
            }
            let exited = self
                .server
                .as_mut()
                .and_then(|s| s.try_wait().ok().flatten());
            if exited.is_some() || Instant::now() > deadline {
                let output = std::fs::read_to_string(&log_path).unwrap_or_default();
                return Err(PgError::Command {
                    command: match exited {
                        Some(status) => format!("postgres ({status})"),
                        None => format!("postgres (not ready within {READY_TIMEOUT:?})"),
                    },
                    output: output.trim().to_owned(),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The loopback port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of database `name` on this cluster (no password: trust auth).
    pub fn url(&self, name: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// Creates an empty database and returns its URL.
    pub async fn create_database(&self, name: &str) -> Result<String, PgError> {
        let mut conn = sqlx::PgConnection::connect(&self.url("postgres")).await?;
        sqlx::raw_sql(&format!("CREATE DATABASE \"{name}\""))
            .execute(&mut conn)
            .await?;
        Ok(self.url(name))
    }

    /// The names of this cluster's databases that start with `prefix`.
    pub async fn databases(&self, prefix: &str) -> Result<Vec<String>, PgError> {
        let mut conn = sqlx::PgConnection::connect(&self.url("postgres")).await?;
        let names: Vec<(String,)> = sqlx::query_as("SELECT datname FROM pg_database")
            .fetch_all(&mut conn)
            .await?;
        Ok(names
            .into_iter()
            .map(|(n,)| n)
            .filter(|n| n.starts_with(prefix))
            .collect())
    }

    /// Leaves the cluster running and its files in place after this value is
    /// dropped (the harness's `--keep`), and returns its directory.
    pub fn keep(&mut self) -> PathBuf {
        self.kept = true;
        self.dir.disable_cleanup(true);
        crate::sweep::mark_kept(self.dir.path());
        self.dir.path().to_owned()
    }

    /// The server's version string, e.g. `PostgreSQL 15.18 ...`.
    pub async fn version(&self) -> Result<String, PgError> {
        let mut conn = sqlx::PgConnection::connect(&self.url("postgres")).await?;
        let (v,): (String,) = sqlx::query_as("SELECT version()")
            .fetch_one(&mut conn)
            .await?;
        Ok(v)
    }

    fn data_dir(&self) -> String {
        self.dir.path().join("data").to_string_lossy().into_owned()
    }

    fn socket_dir(&self) -> String {
        self.dir.path().join("sock").to_string_lossy().into_owned()
    }

    /// The server user must own its data and socket directories and be able
    /// to reach them through the (root-owned) temp dir.
    fn prepare_dirs(&self) -> Result<(), PgError> {
        let top = self.dir.path();
        std::fs::set_permissions(top, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| io_err(top, e))?;
        for sub in ["data", "sock"] {
            let path = top.join(sub);
            std::fs::create_dir(&path).map_err(|e| io_err(&path, e))?;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| io_err(&path, e))?;
            if let Some((uid, gid)) = self.run_as {
                std::os::unix::fs::chown(&path, Some(uid), Some(gid))
                    .map_err(|e| io_err(&path, e))?;
            }
        }
        // The server works in this directory, as the server user.
        if let Some((uid, gid)) = self.run_as {
            std::os::unix::fs::chown(top, Some(uid), Some(gid)).map_err(|e| io_err(top, e))?;
        }
        Ok(())
    }

    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(self.bin.join(program));
        if let Some((uid, gid)) = self.run_as {
            cmd.uid(uid).gid(gid);
        }
        // The server must not inherit our terminal: Ctrl-C goes to the
        // harness, which then stops the cluster in order.
        cmd.process_group(0)
            .stdin(Stdio::null())
            .current_dir(self.dir.path());
        cmd
    }

    fn run(&self, program: &str, args: &[&str]) -> Result<(), PgError> {
        let mut cmd = self.command(program);
        cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
        crate::lifeline::tie(&mut cmd, nix::sys::signal::Signal::SIGKILL);
        let output = crate::lifeline::spawn_tied(move || cmd.spawn())
            .and_then(|child| child.wait_with_output())
            .map_err(|e| io_err(&self.bin.join(program), e))?;
        if output.status.success() {
            return Ok(());
        }
        let mut text = String::from_utf8_lossy(&output.stderr).into_owned();
        if let Ok(log) = std::fs::read_to_string(self.dir.path().join("server.log")) {
            text.push_str(&log);
        }
        Err(PgError::Command {
            command: program.to_owned(),
            output: text.trim().to_owned(),
        })
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let Some(mut server) = self.server.take() else {
            return;
        };
        if self.kept {
            // Not waited for: it runs on after the harness (`--keep`).
            std::mem::forget(server);
            return;
        }
        // Immediate shutdown (SIGQUIT): nothing in the cluster is worth a
        // checkpoint. SIGKILL if it does not go within ten seconds.
        if !matches!(server.try_wait(), Ok(None)) {
            return;
        }
        // Not reaped yet, so the pid is still the server's.
        let pid = nix::unistd::Pid::from_raw(server.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGQUIT);
        let deadline = Instant::now() + Duration::from_secs(10);
        while matches!(server.try_wait(), Ok(None)) {
            if Instant::now() > deadline {
                let _ = server.kill();
                let _ = server.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn io_err(path: &Path, source: std::io::Error) -> PgError {
    PgError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Finds the directory holding `initdb` and `postgres`: `GRANTGATE_PG_BIN`,
/// then Debian's versioned directories (newest first), then `PATH`.
fn find_bin_dir() -> Result<PathBuf, PgError> {
    let has_tools = |dir: &Path| dir.join("initdb").is_file() && dir.join("postgres").is_file();
    if let Some(dir) = std::env::var_os("GRANTGATE_PG_BIN") {
        let dir = PathBuf::from(dir);
        return if has_tools(&dir) {
            Ok(dir)
        } else {
            Err(PgError::NotInstalled)
        };
    }
    let mut versioned: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|d| has_tools(d))
        .collect();
    versioned.sort_by_key(|d| {
        d.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    if let Some(dir) = versioned.pop() {
        return Ok(dir);
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .find(|d| has_tools(d))
        .ok_or(PgError::NotInstalled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_cluster_serves_fresh_databases_and_leaves_nothing_behind() {
        let cluster = PgCluster::start().expect("start the ephemeral cluster");
        let dir = cluster.dir.path().to_owned();
        let url = cluster.create_database("gg_probe").await.unwrap();
        let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
        let (one,): (i32,) = sqlx::query_as("SELECT 1")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(one, 1);
        drop(conn);
        assert!(cluster.version().await.unwrap().starts_with("PostgreSQL"));
        assert_eq!(cluster.databases("gg_").await.unwrap(), ["gg_probe"]);
        let port = cluster.port();
        drop(cluster);
        assert!(!dir.exists(), "cluster directory {dir:?} was left behind");
        assert!(
            std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
            "server still listening on {port}"
        );
    }
}
