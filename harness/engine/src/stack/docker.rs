//! The Docker runtime: each stack is a Core container from `--core-image`,
//! configured through the same launch contract as a Core binary (spec §5),
//! and for PostgreSQL a database container from `--postgres-image`, both on
//! a network private to the stack, started by testcontainers. Nothing is
//! pulled: every image must be in the local engine.
//!
//! Why a fixed host port: the Core needs `CORE_PUBLIC_URL` (base of
//! `html_url` and `Link`) at start, and it must be the URL the harness uses;
//! so a free loopback port is picked and port 3000 published on it.
//!
//! Why the harness polls `/api/healthz` itself, after testcontainers saw
//! `core listening on`: it polls the very URL scenarios use (testcontainers
//! would probe the bridge gateway when the harness runs in a container).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use testcontainers::core::{IntoContainerPort, WaitFor};
use testcontainers::runners::AsyncRunner;
use testcontainers::{ContainerAsync, GenericImage, ImageExt, TestcontainersError};

use super::container::{ContainerStack, KeptStacks, log_into};
use super::docker_api::{
    DockerApi, OWNER_LABEL, RUN_LABEL, STACK_LABEL, owner_token, split_reference,
};
use super::handle::CoreRun;
use super::process::{ADMIN_USER, wait_healthy};
use super::{AdminCredential, Backend, BoxFuture, Runtime, STARTUP_TIMEOUT, Stack, StackSpec};
use crate::child::{SharedLog, tail};
use crate::error::{HarnessError, Result};
use crate::secrets::SecretRegistry;

/// The Core's port inside its container.
const CORE_PORT: u16 = 3000;
/// What the PostgreSQL image logs once clients can connect.
const POSTGRES_READY: &str = "database system is ready to accept connections";

/// An image the run uses: the reference given and the id it resolved to.
struct ImageRef {
    reference: String,
    id: String,
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
    postgres_version: Mutex<Option<String>>,
    kept: KeptStacks,
}

impl DockerRuntime {
    /// Connects to the engine, checks that the images exist (the PostgreSQL
    /// one only when a backend needs it), and removes what dead harnesses
    /// left behind.
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
        Ok(DockerRuntime {
            api,
            core_image,
            postgres_image,
            run_id: run_id.to_owned(),
            owner: owner_token(),
            secrets,
            next: AtomicUsize::new(1),
            postgres_version: Mutex::new(None),
            kept: KeptStacks::default(),
        })
    }

    async fn launch(&self, spec: StackSpec) -> Result<Stack> {
        if spec.seed.is_some() {
            // Fixture snapshots copy a database the harness holds; a
            // container's database lives in its own container (later work).
            return Err(HarnessError::Config(
                "fixture snapshots are for the process runtime".into(),
            ));
        }
        let n = self.next.fetch_add(1, Ordering::SeqCst);
        let stack_id = format!("{}-{n}", self.run_id);
        let tail8 = &self.run_id[self.run_id.len().saturating_sub(8)..];
        let prefix = format!("gg-{tail8}-{n}");
        let labels = HashMap::from([
            (RUN_LABEL.to_owned(), self.run_id.clone()),
            (STACK_LABEL.to_owned(), stack_id.clone()),
            (OWNER_LABEL.to_owned(), self.owner.clone()),
        ]);
        // The stack's directory holds what the host side needs: the
        // adapters' working directory and, with --keep, the admin login.
        let dir = crate::sweep::owned_tempdir(&format!("grantgate-stack-{prefix}-"))
            .map_err(|e| HarnessError::io(crate::sweep::scratch_root(), e))?;
        let admin = AdminCredential {
            user: ADMIN_USER.to_owned(),
            password: self.secrets.mint("gg-admin-pw"),
        };
        let started = Instant::now();
        let log = SharedLog::default();
        self.api.create_network(&prefix, &labels).await?;
        let names = Names {
            network: prefix.clone(),
            core: format!("{prefix}-core"),
            database: format!("{prefix}-db"),
        };
        let running = self.containers(&spec, &names, &labels, &admin, &log).await;
        let (core, database, base_url) = match running {
            Ok(r) => r,
            Err(e) => {
                // Whatever got created (testcontainers removes a container
                // whose wait failed; the network is ours) goes now.
                self.api.remove_labelled(STACK_LABEL, &stack_id, &[]).await;
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
                network: names.network,
                backend: spec.backend,
                core_name: names.core,
                core: Some(core),
                database_name: database.is_some().then_some(names.database),
                database,
                log,
                kept: self.kept.clone(),
            }),
            dir: Some(dir),
            database: None,
        })
    }

    /// Starts the database container (PostgreSQL stacks) and the Core
    /// container, and waits until the Core is healthy at its public URL.
    async fn containers(
        &self,
        spec: &StackSpec,
        names: &Names,
        labels: &HashMap<String, String>,
        admin: &AdminCredential,
        log: &SharedLog,
    ) -> Result<(Container, Option<Container>, String)> {
        let (database, database_url) = match spec.backend {
            Backend::Sqlite => (None, "sqlite:///data/core.db".to_owned()),
            Backend::Postgres => {
                let password = self.secrets.mint("gg-db-pw");
                let db = self.postgres(names, labels, &password, log).await?;
                let url = format!("postgres://core:{password}@{}:5432/core", names.database);
                (Some(db), url)
            }
        };
        // Should another process take the port before the container does,
        // Docker refuses to start it and the trial errors.
        let port = crate::ports::unassigned_loopback_port()
            .map_err(|e| HarnessError::Docker(format!("picking a loopback port: {e}")))?;
        let base_url = format!("http://127.0.0.1:{port}");
        let (name, tag) = split_reference(&self.core_image.reference);
        let mut request = GenericImage::new(name, tag)
            .with_exposed_port(CORE_PORT.tcp())
            .with_wait_for(WaitFor::message_on_stdout("core listening on"))
            .with_network(&names.network)
            .with_container_name(&names.core)
            .with_labels(labels.clone())
            .with_mapped_port(port, CORE_PORT.tcp())
            .with_host_config_modifier(publish_on_loopback_only)
            .with_startup_timeout(STARTUP_TIMEOUT)
            .with_log_consumer(log_into(log.clone(), "core"))
            .with_env_var("CORE_LISTEN", format!("0.0.0.0:{CORE_PORT}"))
            .with_env_var("CORE_PUBLIC_URL", &base_url)
            .with_env_var("CORE_DATABASE_URL", database_url)
            .with_env_var("CORE_SECRET_KEY", self.secrets.mint("gg-core-key"))
            .with_env_var("CORE_ADMIN_USER", &admin.user)
            .with_env_var("CORE_ADMIN_PASSWORD", &admin.password);
        if let Ok(filter) = std::env::var("GRANTGATE_CORE_LOG") {
            request = request.with_env_var("RUST_LOG", filter);
        }
        for (key, value) in &spec.extra_env {
            request = request.with_env_var(key, value);
        }
        let core = request.start().await.map_err(|e| match e {
            TestcontainersError::WaitContainer(wait) => HarnessError::LaunchContract(format!(
                "core container {} never printed `core listening on` ({wait}); its output:\n{}",
                names.core,
                tail(&log.text())
            )),
            other => {
                HarnessError::Docker(format!("starting core container {}: {other}", names.core))
            }
        })?;
        wait_healthy(&base_url, log, STARTUP_TIMEOUT)
            .await
            .map_err(|e| HarnessError::LaunchContract(e.to_string()))?;
        Ok((core, database, base_url))
    }

    /// Starts the stack's PostgreSQL container and waits until it accepts
    /// connections. Its version is read from its start-up line, once a run.
    async fn postgres(
        &self,
        names: &Names,
        labels: &HashMap<String, String>,
        password: &str,
        log: &SharedLog,
    ) -> Result<Container> {
        let image = self.postgres_image.as_ref().ok_or_else(|| {
            HarnessError::Config("no --postgres-image was checked for this run".into())
        })?;
        let (name, tag) = split_reference(&image.reference);
        let db = GenericImage::new(name, tag)
            .with_wait_for(WaitFor::message_on_stderr(POSTGRES_READY))
            .with_network(&names.network)
            .with_container_name(&names.database)
            .with_labels(labels.clone())
            .with_host_config_modifier(publish_nothing)
            .with_startup_timeout(STARTUP_TIMEOUT)
            .with_log_consumer(log_into(log.clone(), "db"))
            .with_env_var("POSTGRES_USER", "core")
            .with_env_var("POSTGRES_DB", "core")
            .with_env_var("POSTGRES_PASSWORD", password)
            .start()
            .await
            .map_err(|e| {
                HarnessError::Docker(format!(
                    "database container {} did not become ready: {e}; its output:\n{}",
                    names.database,
                    tail(&log.text())
                ))
            })?;
        let mut version = self
            .postgres_version
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if version.is_none() {
            *version = postgres_version_in(&log.text());
        }
        Ok(db)
    }
}

/// A running container.
type Container = ContainerAsync<GenericImage>;

/// The names of one stack's network and containers.
struct Names {
    network: String,
    core: String,
    database: String,
}

impl Runtime for DockerRuntime {
    fn start(&self, spec: StackSpec) -> BoxFuture<'_, Result<Stack>> {
        Box::pin(self.launch(spec))
    }

    fn describe(&self) -> String {
        format!("{} ({})", self.core_image.reference, self.core_image.id)
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

/// Publishes the Core's port on the loopback interface only: a stack holds
/// an admin account and is nobody else's business.
fn publish_on_loopback_only(config: &mut testcontainers::bollard::models::HostConfig) {
    if let Some(bindings) = config.port_bindings.as_mut() {
        for binding in bindings.values_mut().flatten().flatten() {
            binding.host_ip = Some("127.0.0.1".into());
        }
    }
}

/// Publishes no port at all: the database is reached over the stack's
/// network only.
fn publish_nothing(config: &mut testcontainers::bollard::models::HostConfig) {
    config.publish_all_ports = Some(false);
    config.port_bindings = None;
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
