//! The connection pool, embedded migrations and the per-backend differences:
//! how a write transaction begins and how a row is locked.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyPool, Connection, Transaction};

use crate::config::{Backend, Config};
use crate::error::StartError;

/// The shared handle every request uses.
#[derive(Clone, Debug)]
pub struct Db {
    pool: AnyPool,
    backend: Backend,
}

/// The current time as RFC 3339 in UTC with whole seconds, the one format
/// every stored timestamp uses.
pub fn now() -> String {
    let now = time::OffsetDateTime::now_utc();
    let now = now.replace_nanosecond(0).unwrap_or(now);
    now.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// Seconds since the Unix epoch: the clock of every expiry (sessions,
/// `_csrf`, OAuth codes and tokens), stored and compared as integers.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Whether a database error is a UNIQUE constraint violation.
pub fn is_unique_violation(err: &sqlx::Error) -> bool {
    matches!(err, sqlx::Error::Database(db) if db.is_unique_violation())
}

/// The migrations of one backend, compiled into the binary.
#[derive(Debug)]
struct Embedded(Backend);

const SQLITE_MIGRATIONS: [(i64, &str, &str); 4] = [
    (
        1,
        "init",
        include_str!("../../migrations/sqlite/0001_init.sql"),
    ),
    (
        2,
        "repository grant",
        include_str!("../../migrations/sqlite/0002_repository_grant.sql"),
    ),
    (
        3,
        "oauth",
        include_str!("../../migrations/sqlite/0003_oauth.sql"),
    ),
    (
        4,
        "agent list index",
        include_str!("../../migrations/sqlite/0004_agent_list_index.sql"),
    ),
];
const POSTGRES_MIGRATIONS: [(i64, &str, &str); 4] = [
    (
        1,
        "init",
        include_str!("../../migrations/postgres/0001_init.sql"),
    ),
    (
        2,
        "repository grant",
        include_str!("../../migrations/postgres/0002_repository_grant.sql"),
    ),
    (
        3,
        "oauth",
        include_str!("../../migrations/postgres/0003_oauth.sql"),
    ),
    (
        4,
        "agent list index",
        include_str!("../../migrations/postgres/0004_agent_list_index.sql"),
    ),
];

type BoxDynError = Box<dyn std::error::Error + Send + Sync>;

impl<'s> MigrationSource<'s> for Embedded {
    fn resolve(
        self,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<Migration>, BoxDynError>> + Send + 's>> {
        let list = match self.0 {
            Backend::Sqlite => &SQLITE_MIGRATIONS,
            Backend::Postgres => &POSTGRES_MIGRATIONS,
        };
        let migrations = list
            .iter()
            .map(|(version, description, sql)| {
                Migration::new(
                    *version,
                    Cow::Borrowed(*description),
                    MigrationType::Simple,
                    Cow::Borrowed(*sql),
                    false,
                )
            })
            .collect();
        Box::pin(async move { Ok(migrations) })
    }
}

impl Db {
    /// Connects, switches SQLite to WAL, and runs the embedded migrations.
    pub async fn connect(config: &Config) -> Result<Self, StartError> {
        sqlx::any::install_default_drivers();
        let backend = config.backend;
        let db_err = |source| StartError::Database {
            backend: backend.name(),
            source,
        };
        let options: AnyConnectOptions = config.database_url.parse().map_err(db_err)?;
        let pool = match backend {
            Backend::Sqlite => {
                // WAL is a property of the file: set it once, before the pool
                // opens more connections, so no connection ever races for it.
                let mut first = sqlx::AnyConnection::connect_with(&options)
                    .await
                    .map_err(db_err)?;
                sqlx::raw_sql("PRAGMA journal_mode = WAL")
                    .execute(&mut first)
                    .await
                    .map_err(db_err)?;
                first.close().await.map_err(db_err)?;
                AnyPoolOptions::new()
                    .max_connections(4)
                    .acquire_timeout(Duration::from_secs(30))
                    .after_connect(|conn, _meta| {
                        Box::pin(async move {
                            use sqlx::Executor;
                            conn.execute(
                                "PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON; \
                                 PRAGMA synchronous = NORMAL",
                            )
                            .await?;
                            Ok(())
                        })
                    })
                    .connect_with(options)
                    .await
                    .map_err(db_err)?
            }
            Backend::Postgres => AnyPoolOptions::new()
                .max_connections(16)
                .acquire_timeout(Duration::from_secs(30))
                .connect_with(options)
                .await
                .map_err(db_err)?,
        };
        let migrator = Migrator::new(Embedded(backend)).await?;
        migrator.run(&pool).await?;
        Ok(Db { pool, backend })
    }

    /// Which backend this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// A connection for reads.
    pub async fn conn(&self) -> Result<PoolConnection<Any>, sqlx::Error> {
        self.pool.acquire().await
    }

    /// Begins a transaction that will write. On SQLite it takes the write
    /// lock at once (`BEGIN IMMEDIATE`), so two writers queue on the busy
    /// timeout instead of failing when a reader upgrades; PostgreSQL uses row
    /// locks ([`Db::for_update`]) and compare-and-swap updates instead.
    pub async fn begin_write(&self) -> Result<Transaction<'static, Any>, sqlx::Error> {
        match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await,
            Backend::Postgres => self.pool.begin().await,
        }
    }

    /// The row-lock suffix for a `SELECT` inside a write transaction. SQLite
    /// has no row locks and needs none: its write lock is already held.
    pub fn for_update(&self) -> &'static str {
        match self.backend {
            Backend::Sqlite => "",
            Backend::Postgres => " FOR UPDATE",
        }
    }

    /// Whether the database answers a trivial query.
    pub async fn ping(&self) -> bool {
        sqlx::query("SELECT 1").execute(&self.pool).await.is_ok()
    }

    /// Waits for every connection to close.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

#[cfg(test)]
mod tests {
    use sqlx::{Connection, Executor};

    use super::Db;
    use crate::config::Config;

    /// On SQLite, [`Db::begin_write`] holds the write lock from its `BEGIN`,
    /// before the transaction reads anything: a second writer cannot begin
    /// until the first ends. The OAuth code exchange relies on it, so two
    /// exchanges of one code cannot both find it unspent.
    #[tokio::test]
    async fn sqlite_write_transaction_locks_before_it_reads() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let url = format!("sqlite://{}", dir.path().join("lock.db").display());
        let config = Config::from_lookup(|name| match name {
            "CORE_DATABASE_URL" => Some(url.clone()),
            "CORE_SECRET_KEY" => Some("a test key of 32 bytes, at least".into()),
            _ => None,
        })
        .expect("config");
        let db = Db::connect(&config).await.expect("database");
        let mut other = sqlx::AnyConnection::connect(&config.database_url)
            .await
            .expect("second connection");
        other
            .execute("PRAGMA busy_timeout = 0")
            .await
            .expect("no waiting");
        let held = db.begin_write().await.expect("first writer");
        let second = other.execute("BEGIN IMMEDIATE").await;
        assert!(
            second
                .as_ref()
                .is_err_and(|e| e.to_string().contains("locked")),
            "a second writer began beside the first: {second:?}"
        );
        held.rollback().await.expect("rollback");
        other
            .execute("BEGIN IMMEDIATE")
            .await
            .expect("the lock is free once the first writer ends");
        other.execute("ROLLBACK").await.expect("rollback");
    }
}
