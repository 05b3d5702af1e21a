//! Fixture snapshots: each fixture world (users, tokens, repositories,
//! collaborators) is made once per backend per run through the Core's own
//! setup API, on a stack of its own; then every trial gets its own copy of
//! that database (SQLite: the file; PostgreSQL: `CREATE DATABASE … TEMPLATE`)
//! and its own freshly started Core on it. Trials stay isolated and the gate
//! stays Core-agnostic (the harness copies only the database it handed
//! over), but a trial no longer pays for hashing every fixture password.
//!
//! If a snapshot cannot be made (the Core refuses a fixture, names another
//! contract, …), trials fall back to making their fixtures themselves, so
//! each trial reports the Core's failure as its own.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::{Mutex, OnceCell};

use super::identity;
use crate::actors::setup::SetupClient;
use crate::fixtures::{Applied, Fixture};
use crate::journal::Journal;
use crate::secrets::SecretRegistry;
use crate::stack::process::ADMIN_USER;
use crate::stack::{AdminCredential, Backend, DatabaseLease, Runtime, Seed, SnapshotDb, StackSpec};

/// One fixture world on one backend, ready to copy.
pub struct Snapshot {
    /// What each stack started from it reuses.
    pub seed: Seed,
    /// The admin token the setup client minted while making it.
    pub admin_token: String,
    /// The fixture's credentials.
    pub applied: Applied,
    // Held so the database and its directory live as long as the run.
    _database: Option<DatabaseLease>,
    _dir: Option<tempfile::TempDir>,
}

/// A snapshot made once, or `None` when it could not be made.
type Once = Arc<OnceCell<Option<Arc<Snapshot>>>>;

/// The run's snapshots, made on first use, by backend and fixture name,
/// with what making one takes.
pub struct Snapshots {
    cells: Mutex<HashMap<(Backend, &'static str), Once>>,
    runtime: Arc<dyn Runtime>,
    secrets: SecretRegistry,
    /// The run's `--core-env`, which a snapshot's Core runs with too.
    core_env: Vec<(String, String)>,
    /// The run's `--trial-timeout`, which bounds making one.
    timeout: std::time::Duration,
}

impl Snapshots {
    /// No snapshot yet; each is made on `runtime` when first asked for.
    pub fn new(
        runtime: Arc<dyn Runtime>,
        secrets: SecretRegistry,
        core_env: Vec<(String, String)>,
        timeout: std::time::Duration,
    ) -> Snapshots {
        Snapshots {
            cells: Default::default(),
            runtime,
            secrets,
            core_env,
            timeout,
        }
    }

    /// The snapshot of `fixture` on `backend`, made once per run; `None`
    /// when it could not be made (trials then make their own fixtures).
    pub async fn get(&self, backend: Backend, fixture: &'static str) -> Option<Arc<Snapshot>> {
        let cell = self
            .cells
            .lock()
            .await
            .entry((backend, fixture))
            .or_default()
            .clone();
        cell.get_or_init(|| async {
            match self.make(backend, fixture).await {
                Ok(s) => Some(Arc::new(s)),
                Err(e) => {
                    eprintln!(
                        "grantgate: no {fixture} snapshot on {backend} ({}); each trial makes its own fixtures",
                        self.secrets.redact(&e)
                    );
                    None
                }
            }
        })
        .await
        .clone()
    }

    async fn make(&self, backend: Backend, fixture: &'static str) -> Result<Snapshot, String> {
        let seed = Seed {
            admin: AdminCredential {
                user: ADMIN_USER.to_owned(),
                password: self.secrets.mint("gg-admin-pw"),
            },
            secret_key: self.secrets.mint("gg-core-key"),
            database: None,
        };
        let spec = StackSpec {
            name: format!("{backend}-snapshot-{fixture}"),
            backend,
            extra_env: self.core_env.clone(),
            seed: Some(seed.clone()),
        };
        let stack = self.runtime.start(spec).await.map_err(|e| e.to_string())?;
        let journal = Journal::new(self.secrets.clone());
        // Bounded as a trial is: a Core slow at every setup request must not
        // hold every trial waiting for this snapshot.
        let timeout = self.timeout;
        let made = tokio::time::timeout(timeout, async {
            let setup = SetupClient::connect(&stack.base_url, &seed.admin, journal.clone()).await?;
            let version = setup.version().await?;
            identity::expect_contract_and_backend(&journal, &version, backend)?;
            let applied = Fixture::named(fixture)?.apply(&setup).await?;
            Ok::<_, crate::vocab::Abort>((setup.token().to_owned(), applied))
        })
        .await;
        let (database, dir) = stack.stop_keeping_database().await;
        let (admin_token, applied) = made
            .map_err(|_| format!("not made within {} s", timeout.as_secs()))?
            .map_err(|a| a.to_string())?;
        let copy = match (backend, &database, &dir) {
            (Backend::Sqlite, _, Some(dir)) => SnapshotDb::SqliteFile(dir.path().join("core.db")),
            (Backend::Postgres, Some(db), _) => {
                SnapshotDb::Postgres(db.name().ok_or("no database name")?)
            }
            _ => return Err("the snapshot stack kept no database".into()),
        };
        Ok(Snapshot {
            seed: Seed {
                database: Some(copy),
                ..seed
            },
            admin_token,
            applied,
            _database: database,
            _dir: dir,
        })
    }
}
