//! The process runtime: launches a Core binary through the launch contract
//! (spec §5): `CORE_*` environment, the `core listening on` line, then
//! `/api/healthz`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::handle::{CoreRun, end_left_behind};
use super::{AdminCredential, Backend, BoxFuture, DatabaseProvider, Runtime, Stack, StackSpec};
use crate::child::{ManagedChild, SharedLog, tail};
use crate::error::{HarnessError, Result};
use crate::secrets::SecretRegistry;

/// The admin login every stack is created with; the password is minted per
/// stack and registered as a secret.
pub const ADMIN_USER: &str = "gg-admin";

/// Launches Cores as local child processes.
pub struct ProcessRuntime {
    core_bin: PathBuf,
    providers: HashMap<Backend, Arc<DatabaseProvider>>,
    secrets: SecretRegistry,
    /// Each backend's database version, asked once per run.
    versions: tokio::sync::Mutex<HashMap<Backend, String>>,
}

impl ProcessRuntime {
    /// A runtime launching `core_bin`, with a database provider per backend
    /// it may be asked for.
    pub fn new(
        core_bin: PathBuf,
        providers: HashMap<Backend, Arc<DatabaseProvider>>,
        secrets: SecretRegistry,
    ) -> Self {
        ProcessRuntime {
            core_bin,
            providers,
            secrets,
            versions: Default::default(),
        }
    }

    /// A new site admin for a stack (or a snapshot), its password a secret.
    pub fn new_admin(&self) -> AdminCredential {
        AdminCredential {
            user: ADMIN_USER.to_owned(),
            password: self.secrets.mint("gg-admin-pw"),
        }
    }

    async fn launch(&self, spec: StackSpec) -> Result<Stack> {
        let provider = self.providers.get(&spec.backend).ok_or_else(|| {
            HarnessError::Config(format!("no database provider for {}", spec.backend))
        })?;
        let safe_name: String = spec
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let dir = crate::sweep::owned_tempdir(&format!("grantgate-stack-{safe_name}-"))
            .map_err(|e| HarnessError::io(crate::sweep::scratch_root(), e))?;
        let (admin, secret_key, from) = match spec.seed {
            Some(seed) => (seed.admin, seed.secret_key, seed.database),
            None => (self.new_admin(), self.secrets.mint("gg-core-key"), None),
        };
        let database = provider.lease(dir.path(), from.as_ref()).await?;
        let mut env = vec![
            ("PATH".to_owned(), std::env::var("PATH").unwrap_or_default()),
            ("CORE_DATABASE_URL".to_owned(), database.url.clone()),
            ("CORE_SECRET_KEY".to_owned(), secret_key),
            ("CORE_ADMIN_USER".to_owned(), admin.user.clone()),
            ("CORE_ADMIN_PASSWORD".to_owned(), admin.password.clone()),
        ];
        env.extend(public_url(&spec.name)?);
        if let Ok(filter) = std::env::var("GRANTGATE_CORE_LOG") {
            env.push(("RUST_LOG".to_owned(), filter));
        }
        env.extend(spec.extra_env.iter().cloned());
        let started = Instant::now();
        let mut core = ManagedChild::spawn(
            &format!("core of {}", spec.name),
            &self.core_bin,
            &[],
            &env,
            dir.path(),
        )?;
        let base_url = match ready(&mut core).await {
            Ok(url) => url,
            Err(e) => {
                // What it left running outside its group goes with it.
                drop(core);
                end_left_behind(dir.path().to_owned(), database.url.clone()).await;
                return Err(e);
            }
        };
        Ok(Stack {
            base_url,
            backend: spec.backend,
            startup: started.elapsed(),
            admin,
            core: CoreRun::Process(core),
            dir: Some(dir),
            database: Some(database),
        })
    }
}

/// The start of the line a Core prints once bound (spec §5); the rest is
/// its URL.
pub(super) const LISTENING: &str = "core listening on";

/// Waits for `core`'s listening line, then for it to be healthy; its URL.
async fn ready(core: &mut ManagedChild) -> Result<String> {
    let base_url = core
        .wait_for_line(LISTENING, crate::limits::launch_step_timeout())
        .await
        .map_err(|e| HarnessError::LaunchContract(e.to_string()))?
        .trim_end_matches('/')
        .to_owned();
    // A Core that exits now is reported as such, not as the refused
    // connections (or whatever took its port) that follow.
    let (exited, log) = (core.exited(), core.log());
    tokio::select! {
        healthy = wait_healthy(&base_url, &log, crate::limits::launch_step_timeout()) => {
            healthy.map_err(|e| HarnessError::LaunchContract(e.to_string()))?;
        }
        status = exited => {
            let report = core.exit_report(&status).await;
            return Err(HarnessError::LaunchContract(format!(
                "after printing `{LISTENING}`, the {report}"
            )));
        }
    }
    Ok(base_url)
}

/// `CORE_LISTEN` and `CORE_PUBLIC_URL` for the stack `name`. Spec §5 lets
/// the public URL be absent (the bound address), or set with or without a
/// trailing `/`: each stack gets one of the three, chosen by its name, so
/// every run meets all three on a third of its stacks each and a trial is
/// reproduced with the same one. (The Docker runtime's Cores share the
/// host's network, so they are launched the same way.)
pub(super) fn public_url(name: &str) -> Result<Vec<(String, String)>> {
    let form = name
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(b.into()))
        % 3;
    if form == 0 {
        return Ok(vec![("CORE_LISTEN".to_owned(), "127.0.0.1:0".to_owned())]);
    }
    let port = crate::ports::unassigned_loopback_port()
        .map_err(|e| HarnessError::process("core", format!("choosing its port: {e}")))?;
    let slash = if form == 2 { "/" } else { "" };
    Ok(vec![
        ("CORE_LISTEN".to_owned(), format!("127.0.0.1:{port}")),
        (
            "CORE_PUBLIC_URL".to_owned(),
            format!("http://127.0.0.1:{port}{slash}"),
        ),
    ])
}

impl Runtime for ProcessRuntime {
    fn start(&self, spec: StackSpec) -> BoxFuture<'_, Result<Stack>> {
        Box::pin(self.launch(spec))
    }

    fn describe(&self) -> String {
        self.core_bin.display().to_string()
    }

    fn database_version(&self, backend: Backend) -> BoxFuture<'_, String> {
        Box::pin(async move {
            let mut versions = self.versions.lock().await;
            if let Some(v) = versions.get(&backend) {
                return v.clone();
            }
            let v = match self.providers.get(&backend) {
                Some(p) => p.version().await,
                None => "unknown".into(),
            };
            versions.insert(backend, v.clone());
            v
        })
    }
}

/// Polls `/api/healthz` until it answers 200; `log` is the Core's output,
/// whose tail explains most failures.
pub(super) async fn wait_healthy(base_url: &str, log: &SharedLog, timeout: Duration) -> Result<()> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| HarnessError::Config(format!("http client: {e}")))?;
    let url = format!("{base_url}/api/healthz");
    let deadline = Instant::now() + timeout;
    let mut last = String::from("no answer");
    while Instant::now() < deadline {
        match client.get(&url).send().await {
            Ok(r) if r.status() == 200 => return Ok(()),
            Ok(r) => last = format!("status {}", r.status().as_u16()),
            Err(e) => last = crate::actors::http::transport_cause(&e),
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    Err(HarnessError::process(
        "core",
        format!(
            "{url} not healthy within {timeout:?} (last: {last}); core output:\n{}",
            tail(&log.text())
        ),
    ))
}
