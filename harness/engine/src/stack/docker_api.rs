//! What the Docker runtime asks of the engine directly, beside what
//! testcontainers does for it: is an engine there, does an image exist,
//! labelled networks, and removing everything a run (or a dead run) left.
//!
//! Why labels: a container or network is found again by what it says about
//! itself, whatever path was interrupted (a panic, Ctrl-C in the middle of a
//! start, a killed harness). Every object carries the run's id, the stack's
//! id, and the harness's process id with its start time, so a later run can
//! tell leftovers of a dead harness from the objects of one still running.

use std::collections::HashMap;
use std::time::Duration;

use testcontainers::bollard::Docker;
use testcontainers::bollard::errors::Error as BollardError;
use testcontainers::bollard::models::NetworkCreateRequest;
use testcontainers::bollard::query_parameters::{
    ListContainersOptionsBuilder, ListNetworksOptionsBuilder, RemoveContainerOptionsBuilder,
};

use crate::error::{HarnessError, Result};
use crate::sweep::owner_alive;
pub use crate::sweep::owner_token;

/// The label every container and network of a run carries: the run id.
pub const RUN_LABEL: &str = "grantgate.run";
/// The label naming the stack inside the run.
pub const STACK_LABEL: &str = "grantgate.stack";
/// The label naming the harness process: `<pid>:<start time in ticks>`.
pub const OWNER_LABEL: &str = "grantgate.owner";

/// The command that builds the images grantgate runs by default.
pub const BUILD_IMAGES: &str = "scripts/build-images";

/// A connection to the Docker engine (`DOCKER_HOST`, else the local socket).
#[derive(Clone)]
pub struct DockerApi {
    docker: Docker,
}

impl DockerApi {
    /// Connects and pings the engine; no engine is an environment error
    /// that says how to get one.
    pub async fn connect() -> Result<Self> {
        let host =
            std::env::var("DOCKER_HOST").unwrap_or_else(|_| "unix:///var/run/docker.sock".into());
        let unreachable = |why: String| {
            HarnessError::Docker(format!(
                "no Docker engine answers at {host} ({why}); start one (`dockerd`, or \
                 `systemctl start docker`) or point DOCKER_HOST at it"
            ))
        };
        let docker = Docker::connect_with_defaults().map_err(|e| unreachable(e.to_string()))?;
        match tokio::time::timeout(Duration::from_secs(10), docker.ping()).await {
            Ok(Ok(_)) => Ok(DockerApi { docker }),
            Ok(Err(e)) => Err(unreachable(e.to_string())),
            Err(_) => Err(unreachable("no answer within 10 s".into())),
        }
    }

    /// The id of a local image; a missing one is an environment error naming
    /// the command that builds it (nothing is ever pulled).
    pub async fn require_image(&self, reference: &str, flag: &str) -> Result<String> {
        match self.docker.inspect_image(reference).await {
            Ok(image) => Ok(image.id.unwrap_or_else(|| "unknown id".into())),
            Err(BollardError::DockerResponseServerError {
                status_code: 404, ..
            }) => Err(HarnessError::Docker(format!(
                "image {reference} is not in the local Docker engine; build it with \
                 `{BUILD_IMAGES}` (or name another image with {flag})"
            ))),
            Err(e) => Err(HarnessError::Docker(format!(
                "inspecting image {reference}: {e}"
            ))),
        }
    }

    /// Creates a bridge network carrying `labels`.
    pub async fn create_network(&self, name: &str, labels: &HashMap<String, String>) -> Result<()> {
        let request = NetworkCreateRequest {
            name: name.to_owned(),
            driver: Some("bridge".into()),
            labels: Some(labels.clone()),
            ..Default::default()
        };
        self.docker
            .create_network(request)
            .await
            .map(|_| ())
            .map_err(|e| HarnessError::Docker(format!("creating network {name}: {e}")))
    }

    /// Removes every container and then every network whose labels match
    /// `label=value`, except those of the stacks in `spare`. Returns what it
    /// could not remove (empty when all went).
    pub async fn remove_labelled(&self, label: &str, value: &str, spare: &[String]) -> Vec<String> {
        let filter = HashMap::from([("label", vec![format!("{label}={value}")])]);
        let kept = |labels: &Option<HashMap<String, String>>| {
            labels
                .as_ref()
                .and_then(|l| l.get(STACK_LABEL))
                .is_some_and(|s| spare.contains(s))
        };
        let mut failed = Vec::new();
        let options = ListContainersOptionsBuilder::new()
            .all(true)
            .filters(&filter)
            .build();
        for c in self
            .docker
            .list_containers(Some(options))
            .await
            .unwrap_or_default()
        {
            let Some(id) = c.id.filter(|_| !kept(&c.labels)) else {
                continue;
            };
            let remove = RemoveContainerOptionsBuilder::new()
                .force(true)
                .v(true)
                .build();
            if let Err(e) = self.docker.remove_container(&id, Some(remove)).await
                && !is_gone(&e)
            {
                failed.push(format!("container {id}: {e}"));
            }
        }
        let options = ListNetworksOptionsBuilder::new().filters(&filter).build();
        for n in self
            .docker
            .list_networks(Some(options))
            .await
            .unwrap_or_default()
        {
            let Some(name) = n.name.filter(|_| !kept(&n.labels)) else {
                continue;
            };
            // The engine may release a just-removed container's endpoint a
            // moment after the removal returns (seen under load): a network
            // that still has one is asked again, for a bounded time.
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            loop {
                match self.docker.remove_network(&name).await {
                    Err(BollardError::DockerResponseServerError {
                        status_code: 403, ..
                    }) if std::time::Instant::now() < deadline => {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    Err(e) if !is_gone(&e) => {
                        failed.push(format!("network {name}: {e}"));
                        break;
                    }
                    _ => break,
                }
            }
        }
        failed
    }

    /// Removes what earlier harnesses left behind when they died without
    /// cleaning up (SIGKILL, a power cut): objects whose owner process no
    /// longer exists. Runs of live harnesses are never touched.
    pub async fn sweep_dead_owners(&self) {
        let filter = HashMap::from([("label", vec![OWNER_LABEL.to_owned()])]);
        let mut dead: Vec<String> = Vec::new();
        let mut note = |labels: Option<HashMap<String, String>>| {
            let Some(labels) = labels else { return };
            if let (Some(owner), Some(run)) = (labels.get(OWNER_LABEL), labels.get(RUN_LABEL))
                && !owner_alive(owner)
                && !dead.contains(run)
            {
                dead.push(run.clone());
            }
        };
        let options = ListContainersOptionsBuilder::new()
            .all(true)
            .filters(&filter)
            .build();
        for c in self
            .docker
            .list_containers(Some(options))
            .await
            .unwrap_or_default()
        {
            note(c.labels);
        }
        let options = ListNetworksOptionsBuilder::new().filters(&filter).build();
        for n in self
            .docker
            .list_networks(Some(options))
            .await
            .unwrap_or_default()
        {
            note(n.labels);
        }
        for run in dead {
            self.remove_labelled(RUN_LABEL, &run, &[]).await;
        }
    }
}

/// `name[:tag]` → (name, tag), as testcontainers wants an image; a
/// registry's `host:port` has no tag.
pub fn split_reference(reference: &str) -> (&str, &str) {
    match reference.rsplit_once(':') {
        Some((name, tag)) if !tag.contains('/') => (name, tag),
        _ => (reference, "latest"),
    }
}

/// A container or network someone else removed first is fine.
fn is_gone(e: &BollardError) -> bool {
    matches!(
        e,
        BollardError::DockerResponseServerError {
            status_code: 404,
            ..
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_references_split_into_name_and_tag() {
        assert_eq!(
            split_reference("grantgate/refcore:latest"),
            ("grantgate/refcore", "latest")
        );
        assert_eq!(
            split_reference("grantgate/refcore"),
            ("grantgate/refcore", "latest")
        );
        assert_eq!(
            split_reference("reg:5000/core"),
            ("reg:5000/core", "latest")
        );
        assert_eq!(
            split_reference("reg:5000/core:1.2"),
            ("reg:5000/core", "1.2")
        );
    }

    #[test]
    fn this_process_is_a_live_owner_and_a_made_up_one_is_not() {
        assert!(owner_alive(&owner_token()));
        let pid = std::process::id();
        assert!(!owner_alive(&format!("{pid}:1")));
        assert!(!owner_alive("not-a-pid:1"));
        assert!(!owner_alive("garbage"));
    }
}
