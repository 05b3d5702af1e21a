//! Databases for stacks: each stack gets its own, and loses it at teardown.
//!
//! - SQLite: a file in the stack's own directory.
//! - The run's ephemeral PostgreSQL cluster: a template database is created
//!   once per run and cloned per stack (`CREATE DATABASE x TEMPLATE t`), so
//!   every stack starts from the same empty state.
//! - An existing server (`--postgres-url`): a uniquely named database per
//!   stack, created and dropped by the harness.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use sqlx::Connection;

use super::SnapshotDb;
use crate::error::{HarnessError, Result};
use crate::postgres::PgCluster;

/// The template every per-stack database on the ephemeral cluster clones.
const TEMPLATE: &str = "grantgate_template";

/// Where stacks get their databases from.
pub enum DatabaseProvider {
    /// A SQLite file per stack.
    Sqlite,
    /// A clone of the template database on the run's own cluster.
    Cluster {
        /// The cluster, shared by every PostgreSQL stack of the run.
        cluster: Arc<PgCluster>,
        /// Serialises clones: PostgreSQL refuses to clone a template that
        /// another clone is reading.
        clone_lock: tokio::sync::Mutex<()>,
        /// Unique prefix of this run's databases.
        prefix: String,
        /// Counter for database names.
        next: AtomicUsize,
    },
    /// A fresh database per stack on a server someone else runs.
    Server {
        /// URL of a maintenance database with CREATEDB rights.
        admin_url: url::Url,
        /// Unique prefix of this run's databases.
        prefix: String,
        /// Counter for database names.
        next: AtomicUsize,
    },
}

impl DatabaseProvider {
    /// A provider on the run's ephemeral cluster; creates the template.
    pub async fn cluster(cluster: Arc<PgCluster>, run_id: &str) -> Result<Self> {
        cluster.create_database(TEMPLATE).await?;
        Ok(DatabaseProvider::Cluster {
            cluster,
            clone_lock: tokio::sync::Mutex::new(()),
            prefix: db_prefix(run_id),
            next: AtomicUsize::new(1),
        })
    }

    /// A provider on an existing server; checks that it answers.
    pub async fn server(url: &str, run_id: &str) -> Result<Self> {
        let admin_url = url::Url::parse(url)
            .map_err(|e| HarnessError::Config(format!("--postgres-url: {e}")))?;
        let mut conn = connect(&admin_url).await?;
        sqlx::raw_sql("SELECT 1")
            .execute(&mut conn)
            .await
            .map_err(|e| server_err(&admin_url, e))?;
        Ok(DatabaseProvider::Server {
            admin_url,
            prefix: db_prefix(run_id),
            next: AtomicUsize::new(1),
        })
    }

    /// Gives a stack its own database, empty or a copy of `from` (a fixture
    /// snapshot); `dir` is the stack's directory.
    pub async fn lease(&self, dir: &Path, from: Option<&SnapshotDb>) -> Result<DatabaseLease> {
        let template = match from {
            Some(SnapshotDb::Postgres(name)) => Some(name.as_str()),
            _ => None,
        };
        match self {
            DatabaseProvider::Sqlite => {
                let file = dir.join("core.db");
                if let Some(SnapshotDb::SqliteFile(source)) = from {
                    copy_sqlite(source, &file)?;
                }
                Ok(DatabaseLease {
                    url: format!("sqlite://{}", file.display()),
                    owner: None,
                })
            }
            DatabaseProvider::Cluster {
                cluster,
                clone_lock,
                prefix,
                next,
            } => {
                let name = format!("{prefix}_{}", next.fetch_add(1, Ordering::SeqCst));
                let _guard = clone_lock.lock().await;
                execute(
                    &cluster.url("postgres"),
                    format!(
                        "CREATE DATABASE \"{name}\" TEMPLATE \"{}\"",
                        template.unwrap_or(TEMPLATE)
                    ),
                )
                .await
                .map_err(crate::postgres::PgError::from)?;
                Ok(DatabaseLease {
                    url: cluster.url(&name),
                    owner: Some(Owner::Cluster(cluster.clone(), name)),
                })
            }
            DatabaseProvider::Server {
                admin_url,
                prefix,
                next,
            } => {
                let name = format!("{prefix}_{}", next.fetch_add(1, Ordering::SeqCst));
                let sql = match template {
                    Some(t) => format!("CREATE DATABASE \"{name}\" TEMPLATE \"{t}\""),
                    None => format!("CREATE DATABASE \"{name}\""),
                };
                execute(admin_url.as_str(), sql)
                    .await
                    .map_err(|e| server_err(admin_url, e))?;
                let mut url = admin_url.clone();
                url.set_path(&format!("/{name}"));
                Ok(DatabaseLease {
                    url: url.to_string(),
                    owner: Some(Owner::Server(admin_url.clone(), name)),
                })
            }
        }
    }

    /// The database's version, for the report's environment.
    pub async fn version(&self) -> String {
        match self {
            DatabaseProvider::Sqlite => sqlite_version().await,
            DatabaseProvider::Cluster { cluster, .. } => cluster
                .version()
                .await
                .unwrap_or_else(|e| format!("unknown ({e})")),
            DatabaseProvider::Server { admin_url, .. } => async {
                let mut conn = connect(admin_url).await.ok()?;
                let (v,): (String,) = sqlx::query_as("SELECT version()")
                    .fetch_one(&mut conn)
                    .await
                    .ok()?;
                Some(v)
            }
            .await
            .unwrap_or_else(|| "unknown".into()),
        }
    }
}

/// Copies a stopped Core's SQLite database (and its write-ahead log, if one
/// was left) to `to`.
fn copy_sqlite(from: &Path, to: &Path) -> Result<()> {
    std::fs::copy(from, to).map_err(|e| HarnessError::io(from, e))?;
    for suffix in ["-wal", "-shm"] {
        let side = PathBuf::from(format!("{}{suffix}", from.display()));
        if side.exists() {
            let target = PathBuf::from(format!("{}{suffix}", to.display()));
            std::fs::copy(&side, &target).map_err(|e| HarnessError::io(&side, e))?;
        }
    }
    Ok(())
}

/// The SQLite library version the harness links, which is what reads the
/// Core's file format; a Core's own library may differ.
async fn sqlite_version() -> String {
    let version = async {
        let mut conn = sqlx::SqliteConnection::connect("sqlite::memory:")
            .await
            .ok()?;
        let (v,): (String,) = sqlx::query_as("SELECT sqlite_version()")
            .fetch_one(&mut conn)
            .await
            .ok()?;
        Some(v)
    };
    match version.await {
        Some(v) => format!("SQLite {v} (harness library)"),
        None => "SQLite (version unknown)".into(),
    }
}

/// A database lent to one stack.
pub struct DatabaseLease {
    /// The URL given to the Core as `CORE_DATABASE_URL`.
    pub url: String,
    owner: Option<Owner>,
}

enum Owner {
    Cluster(Arc<PgCluster>, String),
    Server(url::Url, String),
}

impl DatabaseLease {
    /// Drops the database (a SQLite file goes with the stack's directory).
    pub async fn release(mut self) {
        if let Some(owner) = self.owner.take() {
            drop_owned(owner).await;
        }
    }

    /// The database's name on its server (PostgreSQL), to clone it.
    pub fn name(&self) -> Option<String> {
        match &self.owner {
            Some(Owner::Cluster(_, name) | Owner::Server(_, name)) => Some(name.clone()),
            None => None,
        }
    }

    /// Keeps the database for `--keep` and returns its URL.
    pub fn keep(mut self) -> String {
        self.owner.take();
        self.url.clone()
    }
}

impl Drop for DatabaseLease {
    fn drop(&mut self) {
        // Last resort after a panic: drop the database on a thread of its own,
        // since Drop cannot await. A cluster database also goes with the
        // cluster, but an existing server keeps whatever we leave.
        if let Some(owner) = self.owner.take() {
            let _ = std::thread::spawn(move || {
                if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    rt.block_on(drop_owned(owner));
                }
            })
            .join();
        }
    }
}

async fn drop_owned(owner: Owner) {
    match owner {
        Owner::Cluster(cluster, name) => {
            let _ = cluster.drop_database(&name).await;
        }
        Owner::Server(admin_url, name) => {
            let _ = execute(
                admin_url.as_str(),
                format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"),
            )
            .await;
        }
    }
}

/// Runs one statement on a one-connection pool. A pool rather than a bare
/// connection: its `&Pool` executor keeps the future `Send` for boxed
/// runtimes.
async fn execute(url: &str, sql: String) -> std::result::Result<(), sqlx::Error> {
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect(url)
        .await?;
    let result = sqlx::raw_sql(&sql).execute(&pool).await.map(|_| ());
    pool.close().await;
    result
}

async fn connect(url: &url::Url) -> Result<sqlx::PgConnection> {
    sqlx::PgConnection::connect(url.as_str())
        .await
        .map_err(|e| server_err(url, e))
}

fn server_err(url: &url::Url, source: sqlx::Error) -> HarnessError {
    let mut shown = url.clone();
    let _ = shown.set_password(None);
    HarnessError::PostgresServer {
        url: shown.to_string(),
        source,
    }
}

/// Database names of a run start with `gg_` and the random tail of its id,
/// so leftovers are easy to find and never collide between runs.
fn db_prefix(run_id: &str) -> String {
    let alnum: Vec<char> = run_id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    let tail: String = alnum[alnum.len().saturating_sub(8)..].iter().collect();
    format!("gg_{}", tail.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    #[test]
    fn database_names_use_the_random_part_of_the_run_id() {
        assert_eq!(super::db_prefix("20261130T101220Z-1fb0d5d8"), "gg_1fb0d5d8");
    }
}
