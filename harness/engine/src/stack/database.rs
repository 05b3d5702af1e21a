//! Databases for stacks: each stack gets its own, and loses it at teardown.
//!
//! - SQLite: a file in the stack's own directory.
//! - The run's ephemeral PostgreSQL cluster (or, with `--runtime docker`, the
//!   run's one PostgreSQL container): a template database is created
//!   once per run and cloned per stack (`CREATE DATABASE x TEMPLATE t`), so
//!   every stack starts from the same empty state. Clones are made ahead
//!   and dropped in the background ([`ClusterPool`]), off the trials' path.
//! - An existing server (`--postgres-url`): a uniquely named database per
//!   stack, created and dropped by the harness.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use sqlx::Connection;
use tokio::task::JoinSet;

use super::SnapshotDb;
use crate::error::{HarnessError, Result};
use crate::postgres::PgCluster;

/// The template every per-stack database on the ephemeral cluster clones.
const TEMPLATE: &str = "grantgate_template";

/// How many clones of each template the cluster keeps ready.
const AHEAD: usize = 2;

/// Where stacks get their databases from.
pub enum DatabaseProvider {
    /// A SQLite file per stack.
    Sqlite,
    /// A clone of a template database on the run's own cluster.
    Cluster(Arc<ClusterPool>),
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

/// The run's cluster as a source of databases. A clone takes tens of
/// milliseconds of PostgreSQL's time (and its drop as many), which a trial
/// would otherwise wait for: a lease takes a clone made ahead when one is
/// ready, and its release drops it and makes the next, in the background.
/// [`DatabaseProvider::settle`] waits for that work at the end of a run;
/// clones still unused go with the cluster.
pub struct ClusterPool {
    /// The server, shared by every PostgreSQL stack of the run.
    cluster: PoolServer,
    /// Serialises clones: PostgreSQL refuses to clone a template that
    /// another clone is reading.
    clone_lock: tokio::sync::Mutex<()>,
    /// Unique prefix of this run's databases.
    prefix: String,
    /// Counter for database names.
    next: AtomicUsize,
    /// Clones made ahead, by template.
    ready: Mutex<HashMap<String, Vec<String>>>,
    /// Clones being made ahead and databases being dropped.
    background: Mutex<JoinSet<()>>,
}

/// The server a [`ClusterPool`] clones on.
enum PoolServer {
    /// The run's ephemeral cluster on the host.
    Cluster(Arc<PgCluster>),
    /// A server reached at this URL (its path names the maintenance
    /// database): the Docker runtime's database container, published on
    /// loopback.
    Url(url::Url),
}

impl PoolServer {
    fn url(&self, name: &str) -> String {
        match self {
            PoolServer::Cluster(c) => c.url(name),
            PoolServer::Url(u) => {
                let mut u = u.clone();
                u.set_path(&format!("/{name}"));
                u.to_string()
            }
        }
    }

    async fn version(&self) -> String {
        let version = match self {
            PoolServer::Cluster(c) => c.version().await.map_err(|e| e.to_string()),
            PoolServer::Url(u) => async {
                let mut conn = sqlx::PgConnection::connect(u.as_str()).await?;
                let (v,): (String,) = sqlx::query_as("SELECT version()")
                    .fetch_one(&mut conn)
                    .await?;
                Ok::<_, sqlx::Error>(v)
            }
            .await
            .map_err(|e| e.to_string()),
        };
        version.unwrap_or_else(|e| format!("unknown ({e})"))
    }
}

impl ClusterPool {
    /// A database cloned from `template` now.
    async fn clone_of(&self, template: &str) -> Result<String> {
        let _guard = self.clone_lock.lock().await;
        self.clone_locked(template).await
    }

    async fn clone_locked(&self, template: &str) -> Result<String> {
        let name = format!(
            "{}_{}",
            self.prefix,
            self.next.fetch_add(1, Ordering::SeqCst)
        );
        execute(
            &self.cluster.url("postgres"),
            format!("CREATE DATABASE \"{name}\" TEMPLATE \"{template}\""),
        )
        .await
        .map_err(crate::postgres::PgError::from)?;
        Ok(name)
    }

    fn take_ready(&self, template: &str) -> Option<String> {
        lock(&self.ready).get_mut(template)?.pop()
    }

    /// Tops the clones of `template` up to [`AHEAD`], in the background. A
    /// clone that fails here is not reported: the next lease then clones in
    /// the foreground and reports the failure as its trial's.
    fn make_ahead(self: &Arc<Self>, template: &str) {
        let pool = self.clone();
        let template = template.to_owned();
        self.in_background(async move {
            loop {
                // One clone per turn of the lock: a lease that finds none
                // ready waits for one clone at most.
                let _guard = pool.clone_lock.lock().await;
                let ready = lock(&pool.ready).get(&template).map_or(0, Vec::len);
                if ready >= AHEAD {
                    return;
                }
                let Ok(name) = pool.clone_locked(&template).await else {
                    return;
                };
                lock(&pool.ready)
                    .entry(template.clone())
                    .or_default()
                    .push(name);
            }
        });
    }

    fn drop_later(self: &Arc<Self>, name: String) {
        let url = self.cluster.url("postgres");
        self.in_background(async move {
            let _ = execute(&url, drop_sql(&name)).await;
        });
    }

    /// Runs `task` in the background, forgetting the tasks already done.
    fn in_background(&self, task: impl Future<Output = ()> + Send + 'static) {
        let mut tasks = lock(&self.background);
        while tasks.try_join_next().is_some() {}
        tasks.spawn(task);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl DatabaseProvider {
    /// A provider on the run's ephemeral cluster; creates the template.
    pub async fn cluster(cluster: Arc<PgCluster>, run_id: &str) -> Result<Self> {
        cluster.create_database(TEMPLATE).await?;
        Ok(Self::pool(PoolServer::Cluster(cluster), run_id))
    }

    /// A provider on a PostgreSQL server of the run's own that the harness
    /// reaches at `admin_url` (a superuser on its maintenance database);
    /// creates the template.
    pub async fn container(admin_url: url::Url, run_id: &str) -> Result<Self> {
        execute(
            admin_url.as_str(),
            format!("CREATE DATABASE \"{TEMPLATE}\""),
        )
        .await
        .map_err(|e| server_err(&admin_url, e))?;
        Ok(Self::pool(PoolServer::Url(admin_url), run_id))
    }

    fn pool(cluster: PoolServer, run_id: &str) -> Self {
        DatabaseProvider::Cluster(Arc::new(ClusterPool {
            cluster,
            clone_lock: tokio::sync::Mutex::new(()),
            prefix: db_prefix(run_id),
            next: AtomicUsize::new(1),
            ready: Mutex::default(),
            background: Mutex::default(),
        }))
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
            DatabaseProvider::Cluster(pool) => {
                let template = template.unwrap_or(TEMPLATE);
                // A lease taken from the ready clones is replaced when it is
                // released, so that the next clone is not made while this
                // stack's Core starts.
                let name = match pool.take_ready(template) {
                    Some(name) => name,
                    None => {
                        let name = pool.clone_of(template).await?;
                        pool.make_ahead(template);
                        name
                    }
                };
                Ok(DatabaseLease {
                    url: pool.cluster.url(&name),
                    owner: Some(Owner::Cluster(pool.clone(), name, template.to_owned())),
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

    /// Waits for the clones and drops still running in the background.
    pub async fn settle(&self) {
        if let DatabaseProvider::Cluster(pool) = self {
            let mut background = std::mem::take(&mut *lock(&pool.background));
            while background.join_next().await.is_some() {}
        }
    }

    /// The database's version, for the report's environment.
    pub async fn version(&self) -> String {
        match self {
            DatabaseProvider::Sqlite => sqlite_version().await,
            DatabaseProvider::Cluster(pool) => pool.cluster.version().await,
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
    /// The pool, the database's name and the template it was cloned from.
    Cluster(Arc<ClusterPool>, String, String),
    Server(url::Url, String),
}

impl DatabaseLease {
    /// Drops the database (a SQLite file goes with the stack's directory);
    /// on the run's cluster, in the background.
    pub async fn release(mut self) {
        match self.owner.take() {
            Some(Owner::Cluster(pool, name, template)) => {
                pool.drop_later(name);
                pool.make_ahead(&template);
            }
            Some(owner) => drop_owned(owner).await,
            None => {}
        }
    }

    /// The database's name on its server (PostgreSQL), to clone it.
    pub fn name(&self) -> Option<String> {
        match &self.owner {
            Some(Owner::Cluster(_, name, _) | Owner::Server(_, name)) => Some(name.clone()),
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
        Owner::Cluster(pool, name, _) => {
            let _ = execute(&pool.cluster.url("postgres"), drop_sql(&name)).await;
        }
        Owner::Server(admin_url, name) => {
            let _ = execute(admin_url.as_str(), drop_sql(&name)).await;
        }
    }
}

fn drop_sql(name: &str) -> String {
    format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)")
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
    use super::*;

    async fn databases(cluster: &PgCluster) -> Vec<String> {
        cluster.databases("gg_").await.unwrap()
    }

    #[tokio::test]
    async fn cluster_leases_are_fresh_clones_made_ahead_and_dropped_after_release() {
        let cluster = Arc::new(PgCluster::start().expect("start the ephemeral cluster"));
        let provider = DatabaseProvider::cluster(cluster.clone(), "test-1a2b3c4d")
            .await
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let first = provider.lease(dir.path(), None).await.unwrap();
        let mut conn = sqlx::PgConnection::connect(&first.url).await.unwrap();
        sqlx::raw_sql("CREATE TABLE written (x int)")
            .execute(&mut conn)
            .await
            .unwrap();
        drop(conn);
        provider.settle().await;
        // The lease's own database, and AHEAD clones ready for the next.
        assert_eq!(databases(&cluster).await.len(), 1 + AHEAD);

        let second = provider.lease(dir.path(), None).await.unwrap();
        assert_ne!(first.url, second.url);
        let mut conn = sqlx::PgConnection::connect(&second.url).await.unwrap();
        let (tables,): (i64,) = sqlx::query_as(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'written'",
        )
        .fetch_one(&mut conn)
        .await
        .unwrap();
        assert_eq!(tables, 0, "a clone made ahead starts from the template");
        drop(conn);

        let (one, two) = (first.name().unwrap(), second.name().unwrap());
        first.release().await;
        second.release().await;
        provider.settle().await;
        let left = databases(&cluster).await;
        assert!(!left.contains(&one) && !left.contains(&two), "{left:?}");
        assert_eq!(left.len(), AHEAD);
    }

    #[test]
    fn database_names_use_the_random_part_of_the_run_id() {
        assert_eq!(super::db_prefix("20261130T101220Z-1fb0d5d8"), "gg_1fb0d5d8");
    }
}
