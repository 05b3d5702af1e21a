//! The Docker runtime: each stack is a Core container from `--core-image`,
//! configured through the same launch contract as a Core binary (spec §5),
//! started by testcontainers. Nothing is pulled: every image must be in the
//! local engine.
//!
//! What a run shares, as the process runtime shares its cluster: for
//! PostgreSQL one database container from `--postgres-image`, on a network
//! of the run's own, started on first use. Each stack still gets its own
//! database on it (a clone of a template, [`DatabaseProvider`]) and its own
//! Core container; a SQLite stack's file lives in its own host directory,
//! mounted at `/data`, so that fixture snapshots are copied as with the
//! process runtime.
//!
//! Why a Core container shares the host's network: it is then launched as
//! a Core binary is (`CORE_LISTEN` on a loopback port, `CORE_PUBLIC_URL`
//! absent, set or set with a trailing `/`; its URL from its `core listening
//! on` line), and its start costs no network namespace, bridge port or
//! port proxy: a healthy Core in about half the time (0.33 s against 0.74 s
//! on this project's machine). It reaches the run's database through that
//! container's port, published on the host's loopback.
//!
//! Why the harness polls `/api/healthz` itself, after testcontainers saw
//! `core listening on`: it polls the very URL scenarios use.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use testcontainers::core::{IntoContainerPort, Mount, WaitFor};
use testcontainers::runners::AsyncRunner;
use testcontainers::{ContainerAsync, GenericImage, ImageExt, TestcontainersError};

use super::container::{ContainerStack, KeptStacks, Removals, log_into};
use super::docker_api::{
    DockerApi, OWNER_LABEL, RUN_LABEL, STACK_LABEL, owner_token, split_reference,
};
use super::handle::CoreRun;
use super::process::{ADMIN_USER, LISTENING, public_url, wait_healthy};
use super::{
    AdminCredential, Backend, BoxFuture, DatabaseProvider, Runtime, STARTUP_TIMEOUT, Stack,
    StackSpec,
};
use crate::child::{SharedLog, tail};
use crate::error::{HarnessError, Result};
use crate::secrets::SecretRegistry;

/// How much of a Core's output is searched for that line: what a Core
/// prints before it is bounded, like everything read from a Core.
const LISTENING_WITHIN: u64 = 1 << 20;
/// Where a SQLite stack's host directory is mounted in the Core container.
const DATA_DIR: &str = "/data";
/// What the PostgreSQL image logs once clients can connect.
const POSTGRES_READY: &str = "database system is ready to accept connections";
/// The run's PostgreSQL keeps its cluster in memory: every stack's clone and
/// every write would otherwise go through the engine's storage driver
/// (fuse-overlayfs on this project's machine). An empty data directory makes
/// the image's entrypoint run initdb, once a run. A path of its own, open to
/// the image's user: a tmpfs over the image's data directory keeps that
/// directory's root-only mode.
const POSTGRES_TMPFS: &str = "/grantgate-pgdata";
const POSTGRES_PGDATA: &str = "/grantgate-pgdata/pgdata";
/// The run's PostgreSQL serves every PostgreSQL stack of the run at once
/// (each Core with its own pool), so it admits more than the default 100.
const POSTGRES_MAX_CONNECTIONS: &str = "max_connections=400";

/// An image the run uses: the reference given and the id it resolved to.
struct ImageRef {
    reference: String,
    id: String,
}

/// The run's PostgreSQL container and the databases it hands out.
struct SharedPostgres {
    container: Option<Container>,
    name: String,
    /// Its port on the host's loopback, where Cores and the harness reach it.
    port: u16,
    password: String,
    provider: DatabaseProvider,
}

/// Launches Cores as containers.
pub struct DockerRuntime {
    api: DockerApi,
    core_image: ImageRef,
    postgres_image: Option<ImageRef>,
    run_id: String,
    owner: String,
    secrets: SecretRegistry,
    next: AtomicUsize,
    /// The run's network (the database container's).
    network: String,
    /// `grantgate.stack` of what the run shares: its network and database.
    shared_id: String,
    postgres: tokio::sync::OnceCell<SharedPostgres>,
    /// What the run's database container prints.
    db_log: SharedLog,
    postgres_version: Mutex<Option<String>>,
    kept: KeptStacks,
    removals: Removals,
}

impl DockerRuntime {
    /// Connects to the engine, checks that the images exist (the PostgreSQL
    /// one only when a backend needs it), removes what dead harnesses left
    /// behind, and creates the run's network.
    pub async fn connect(
        core_image: &str,
        postgres_image: Option<&str>,
        run_id: &str,
        secrets: SecretRegistry,
    ) -> Result<Self> {
        let api = DockerApi::connect().await?;
        let core_image = ImageRef {
            reference: core_image.to_owned(),
            id: api.require_image(core_image, "--core-image").await?,
        };
        let postgres_image = match postgres_image {
            Some(reference) => Some(ImageRef {
                reference: reference.to_owned(),
                id: api.require_image(reference, "--postgres-image").await?,
            }),
            None => None,
        };
        api.sweep_dead_owners().await;
        let runtime = DockerRuntime {
            api,
            core_image,
            postgres_image,
            run_id: run_id.to_owned(),
            owner: owner_token(),
            secrets,
            next: AtomicUsize::new(1),
            network: format!("gg-{}", run_tail(run_id)),
            shared_id: format!("{run_id}-shared"),
            postgres: Default::default(),
            db_log: SharedLog::default(),
            postgres_version: Mutex::new(None),
            kept: KeptStacks::default(),
            removals: Removals::default(),
        };
        runtime
            .api
            .create_network(&runtime.network, &runtime.labels(&runtime.shared_id))
            .await?;
        Ok(runtime)
    }

    /// The labels of an object of this run: `stack` is a stack's id, or
    /// `shared_id` for what the whole run uses.
    fn labels(&self, stack: &str) -> HashMap<String, String> {
        HashMap::from([
            (RUN_LABEL.to_owned(), self.run_id.clone()),
            (STACK_LABEL.to_owned(), stack.to_owned()),
            (OWNER_LABEL.to_owned(), self.owner.clone()),
        ])
    }

    async fn launch(&self, spec: StackSpec) -> Result<Stack> {
        let n = self.next.fetch_add(1, Ordering::SeqCst);
        let stack_id = format!("{}-{n}", self.run_id);
        let core_name = format!("{}-{n}-core", self.network);
        let labels = self.labels(&stack_id);
        // The stack's directory holds what the host side needs: the
        // adapters' working directory, a SQLite Core's database and, with
        // --keep, the admin login.
        let dir = crate::sweep::owned_tempdir(&format!("grantgate-stack-gg-{n}-"))
            .map_err(|e| HarnessError::io(crate::sweep::scratch_root(), e))?;
        let (admin, secret_key, from) = match spec.seed.clone() {
            Some(seed) => (seed.admin, seed.secret_key, seed.database),
            None => (
                AdminCredential {
                    user: ADMIN_USER.to_owned(),
                    password: self.secrets.mint("gg-admin-pw"),
                },
                self.secrets.mint("gg-core-key"),
                None,
            ),
        };
        let started = Instant::now();
        let (lease, database_url, described) = match spec.backend {
            Backend::Sqlite => {
                let lease = DatabaseProvider::Sqlite
                    .lease(dir.path(), from.as_ref())
                    .await?;
                open_to_any_user(dir.path())?;
                let described = format!(
                    "sqlite://{DATA_DIR}/core.db in container {core_name}, mounted from {}",
                    dir.path().display()
                );
                (lease, format!("sqlite://{DATA_DIR}/core.db"), described)
            }
            Backend::Postgres => {
                let pg = self.shared_postgres().await?;
                let lease = pg.provider.lease(dir.path(), from.as_ref()).await?;
                let db = lease.name().unwrap_or_default();
                let url = format!("postgres://core:{}@127.0.0.1:{}/{db}", pg.password, pg.port);
                let described = format!(
                    "postgres://core@127.0.0.1:{}/{db}, container {} (password in the Core container's env)",
                    pg.port, pg.name
                );
                (lease, url, described)
            }
        };
        let mounted = (spec.backend == Backend::Sqlite).then(|| dir.path());
        let log = SharedLog::default();
        let core = CoreContainer {
            name: &core_name,
            labels: &labels,
            database_url,
            secret_key,
            admin: &admin,
            mounted,
        };
        let (core, base_url) = match self.core(&spec, core, &log).await {
            Ok(r) => r,
            Err(e) => {
                // Whatever got created goes now (testcontainers removes a
                // container whose wait failed).
                self.api.remove_labelled(STACK_LABEL, &stack_id, &[]).await;
                lease.release().await;
                return Err(e);
            }
        };
        Ok(Stack {
            base_url,
            backend: spec.backend,
            startup: started.elapsed(),
            admin,
            core: CoreRun::Containers(ContainerStack {
                api: self.api.clone(),
                stack_id,
                shared_id: self.shared_id.clone(),
                network: self.network.clone(),
                database_container: (spec.backend == Backend::Postgres)
                    .then(|| self.postgres.get().map(|p| p.name.clone()))
                    .flatten(),
                core_name,
                core: Some(core),
                database: described,
                log,
                kept: self.kept.clone(),
                removals: self.removals.clone(),
            }),
            dir: Some(dir),
            database: Some(lease),
        })
    }

    /// Starts the Core container and waits until it is healthy at the URL
    /// of its `core listening on` line.
    async fn core(
        &self,
        spec: &StackSpec,
        c: CoreContainer<'_>,
        log: &SharedLog,
    ) -> Result<(Container, String)> {
        let (name, tag) = split_reference(&self.core_image.reference);
        let mut request = GenericImage::new(name, tag)
            .with_wait_for(WaitFor::message_on_stdout(LISTENING))
            .with_network("host")
            .with_container_name(c.name)
            .with_labels(c.labels.clone())
            .with_startup_timeout(STARTUP_TIMEOUT)
            .with_log_consumer(log_into(log.clone(), "core"))
            .with_env_var("CORE_DATABASE_URL", c.database_url)
            .with_env_var("CORE_SECRET_KEY", c.secret_key)
            .with_env_var("CORE_ADMIN_USER", &c.admin.user)
            .with_env_var("CORE_ADMIN_PASSWORD", &c.admin.password);
        if let Some(dir) = c.mounted {
            request = request.with_mount(Mount::bind_mount(dir.display().to_string(), DATA_DIR));
        }
        for (key, value) in public_url(&spec.name)? {
            request = request.with_env_var(key, value);
        }
        if let Ok(filter) = std::env::var("GRANTGATE_CORE_LOG") {
            request = request.with_env_var("RUST_LOG", filter);
        }
        for (key, value) in &spec.extra_env {
            request = request.with_env_var(key, value);
        }
        let core = request.start().await.map_err(|e| match e {
            TestcontainersError::WaitContainer(wait) => HarnessError::LaunchContract(format!(
                "core container {} never printed `{LISTENING}` ({wait}); its output:\n{}",
                c.name,
                tail(&log.text())
            )),
            other => HarnessError::Docker(format!("starting core container {}: {other}", c.name)),
        })?;
        let base_url = listening_url(&core).await.ok_or_else(|| {
            HarnessError::LaunchContract(format!(
                "core container {} printed `{LISTENING}` but no line starting with it; its output:\n{}",
                c.name,
                tail(&log.text())
            ))
        })?;
        wait_healthy(&base_url, log, STARTUP_TIMEOUT)
            .await
            .map_err(|e| HarnessError::LaunchContract(e.to_string()))?;
        Ok((core, base_url))
    }

    /// The run's PostgreSQL container, started by the first PostgreSQL
    /// stack that needs it (a failed start is tried again by the next).
    async fn shared_postgres(&self) -> Result<&SharedPostgres> {
        self.postgres
            .get_or_try_init(|| self.start_postgres())
            .await
    }

    /// Starts the run's PostgreSQL container, published on a loopback port
    /// for the harness (which creates and drops the stacks' databases), and
    /// creates the template every stack's database is cloned from.
    async fn start_postgres(&self) -> Result<SharedPostgres> {
        let image = self.postgres_image.as_ref().ok_or_else(|| {
            HarnessError::Config("no --postgres-image was checked for this run".into())
        })?;
        let name = format!("{}-db", self.network);
        let password = self.secrets.mint("gg-db-pw");
        let port = crate::ports::unassigned_loopback_port()
            .map_err(|e| HarnessError::Docker(format!("picking a loopback port: {e}")))?;
        let (image_name, tag) = split_reference(&image.reference);
        let log = &self.db_log;
        let container = GenericImage::new(image_name, tag)
            .with_wait_for(WaitFor::message_on_stderr(POSTGRES_READY))
            .with_network(&self.network)
            .with_container_name(&name)
            .with_labels(self.labels(&self.shared_id))
            .with_mapped_port(port, 5432.tcp())
            .with_host_config_modifier(publish_on_loopback_only)
            .with_startup_timeout(STARTUP_TIMEOUT)
            .with_log_consumer(log_into(log.clone(), "db"))
            .with_env_var("POSTGRES_USER", "core")
            .with_env_var("POSTGRES_DB", "core")
            .with_env_var("POSTGRES_PASSWORD", &password)
            .with_env_var("PGDATA", POSTGRES_PGDATA)
            .with_mount(Mount::tmpfs_mount(POSTGRES_TMPFS).with_mode(0o1777))
            .with_cmd(["-c", POSTGRES_MAX_CONNECTIONS])
            .start()
            .await
            .map_err(|e| {
                HarnessError::Docker(format!(
                    "database container {name} did not become ready: {e}; its output:\n{}",
                    tail(&log.text())
                ))
            })?;
        *self
            .postgres_version
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = postgres_version_in(&log.text());
        let admin_url =
            url::Url::parse(&format!("postgres://core:{password}@127.0.0.1:{port}/core"))
                .map_err(|e| HarnessError::Config(format!("database URL: {e}")))?;
        reachable(&admin_url, &name).await?;
        let provider = DatabaseProvider::container(admin_url, &self.run_id).await?;
        Ok(SharedPostgres {
            container: Some(container),
            name,
            port,
            password,
            provider,
        })
    }
}

/// The launch of one Core container.
struct CoreContainer<'a> {
    name: &'a str,
    labels: &'a HashMap<String, String>,
    database_url: String,
    secret_key: String,
    admin: &'a AdminCredential,
    /// The stack's directory, mounted at [`DATA_DIR`] (SQLite stacks).
    mounted: Option<&'a Path>,
}

/// The run's tail: the random part of its id, which names its objects.
fn run_tail(run_id: &str) -> &str {
    &run_id[run_id.len().saturating_sub(8)..]
}

/// Lets the Core container's user, whatever its uid, write the stack's
/// directory and the database copied into it.
fn open_to_any_user(dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let open = |path: &Path, mode| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| HarnessError::io(path, e))
    };
    open(dir, 0o777)?;
    for entry in std::fs::read_dir(dir).map_err(|e| HarnessError::io(dir, e))? {
        let path = entry.map_err(|e| HarnessError::io(dir, e))?.path();
        if path.is_file() {
            open(&path, 0o666)?;
        }
    }
    Ok(())
}

/// Waits until the harness can log in to the database container through
/// its published port (the engine's proxy may lag the server's own
/// readiness). A connection attempt is the probe, never a sleep alone.
async fn reachable(url: &url::Url, name: &str) -> Result<()> {
    use sqlx::Connection;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match sqlx::PgConnection::connect(url.as_str()).await {
            Ok(conn) => {
                let _ = conn.close().await;
                return Ok(());
            }
            Err(e) if Instant::now() > deadline => {
                return Err(HarnessError::Docker(format!(
                    "database container {name} accepts no connection on its published port: {e}"
                )));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(25)).await,
        }
    }
}

/// The URL of the Core's `core listening on` line (without a trailing
/// `/`), read back from its stdout once testcontainers has seen the line.
async fn listening_url(core: &Container) -> Option<String> {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    let mut lines = core.stdout(false).take(LISTENING_WITHIN).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some(url) = line.trim().strip_prefix(LISTENING) {
            return Some(url.trim().trim_end_matches('/').to_owned());
        }
    }
    None
}

/// A running container.
type Container = ContainerAsync<GenericImage>;

impl Runtime for DockerRuntime {
    fn start(&self, spec: StackSpec) -> BoxFuture<'_, Result<Stack>> {
        Box::pin(self.launch(spec))
    }

    fn describe(&self) -> String {
        format!("{} ({})", self.core_image.reference, self.core_image.id)
    }

    fn settle(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let mut removals =
                std::mem::take(&mut *self.removals.lock().unwrap_or_else(|e| e.into_inner()));
            while removals.join_next().await.is_some() {}
        })
    }

    fn database_version(&self, backend: Backend) -> BoxFuture<'_, String> {
        let text = match backend {
            Backend::Sqlite => format!(
                "SQLite inside {} (its version is not visible from outside)",
                self.core_image.reference
            ),
            Backend::Postgres => {
                let image = self
                    .postgres_image
                    .as_ref()
                    .map(|i| format!("{} ({})", i.reference, i.id))
                    .unwrap_or_else(|| "no image".into());
                match self
                    .postgres_version
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone()
                {
                    Some(v) => format!("{v} [{image}]"),
                    None => format!("unknown [{image}]"),
                }
            }
        };
        Box::pin(std::future::ready(text))
    }
}

impl Drop for DockerRuntime {
    /// The run's exit sweep: whatever still carries the run's label and is
    /// not a kept stack goes (a start interrupted by Ctrl-C can leave a
    /// container testcontainers never handed back). Drop cannot await, so a
    /// thread of its own does the work, with a client of its own.
    fn drop(&mut self) {
        // The sweep below removes the database container (unless a kept
        // stack needs it); its handle must not try again on a runtime that
        // is going away.
        if let Some(pg) = self.postgres.get_mut()
            && let Some(container) = pg.container.take()
        {
            std::mem::forget(container);
        }
        let run_id = self.run_id.clone();
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                if let Ok(api) = DockerApi::connect().await {
                    for what in api.remove_labelled(RUN_LABEL, &run_id, &kept).await {
                        eprintln!("warning: could not remove {what}");
                    }
                }
            });
        })
        .join();
    }
}

/// Publishes the database container's port on the loopback interface only:
/// it holds every stack's data and is nobody else's business.
fn publish_on_loopback_only(config: &mut testcontainers::bollard::models::HostConfig) {
    if let Some(bindings) = config.port_bindings.as_mut() {
        for binding in bindings.values_mut().flatten().flatten() {
            binding.host_ip = Some("127.0.0.1".into());
        }
    }
}

/// PostgreSQL's start-up line (`starting PostgreSQL 15.x (Debian …) on …`)
/// says what `SELECT version()` would.
fn postgres_version_in(log: &str) -> Option<String> {
    log.lines()
        .find_map(|l| l.split_once("starting ").map(|(_, v)| v))
        .filter(|v| v.starts_with("PostgreSQL"))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_postgres_version_comes_from_its_start_up_line() {
        let log = "db stderr: 2026-11-30 10:00:00 UTC [1] LOG:  starting PostgreSQL 15.14 (Debian 15.14-0+deb12u1) on x86_64-pc-linux-gnu, 64-bit\n";
        assert_eq!(
            postgres_version_in(log).as_deref(),
            Some("PostgreSQL 15.14 (Debian 15.14-0+deb12u1) on x86_64-pc-linux-gnu, 64-bit")
        );
        assert_eq!(postgres_version_in("db stderr: nothing\n"), None);
    }
}
