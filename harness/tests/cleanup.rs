//! Cleanup of the engine itself: after a scenario panics and after Ctrl-C
//! (SIGINT) mid-run, no process, directory, database, container or network
//! of the run remains; after SIGKILL, no process remains and the next run
//! sweeps the directories.
//!
//! Each test runs the real `grantgate` binary with the engine's hidden
//! self-test scenarios (`GRANTGATE_ENGINE_SCENARIOS=1`) and a private TMPDIR,
//! so that everything the run creates lives under one path we can look for:
//! in the filesystem, and in every process's command line, environment and
//! working directory. Databases on an existing server are checked by name;
//! containers and networks of `--runtime docker` by their run label.
//!
//! The Docker tests need a Docker engine and the images of
//! `scripts/build-images`; without them they fail, saying so.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use grantgate_engine::postgres::PgCluster;

/// A private TMPDIR that the `postgres` user can traverse (the ephemeral
/// cluster's server runs as that user).
fn private_tmp() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("gg-cleanup-test-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// The Core and adapter, built once for all tests (the runs below then skip
/// their own build step).
fn binaries() -> &'static grantgate_engine::binaries::Binaries {
    static BINARIES: std::sync::OnceLock<grantgate_engine::binaries::Binaries> =
        std::sync::OnceLock::new();
    BINARIES.get_or_init(|| {
        grantgate_engine::binaries::locate(None, None).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// Where the stacks of a test run come from.
#[derive(Clone, Copy)]
enum Via<'a> {
    /// Process runtime with the run's ephemeral cluster.
    Cluster,
    /// Process runtime with databases on an existing server.
    Server(&'a str),
    /// Docker runtime: Core and PostgreSQL containers.
    Docker,
}

fn grantgate(tmp: &Path, filter: &str, via: Via) -> Command {
    let bins = binaries();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_grantgate"));
    cmd.args(["run", "--filter", filter, "--jobs", "2", "--report-dir"])
        .arg(tmp.join("reports"))
        .arg("--core-bin")
        .arg(&bins.core)
        .arg("--adapter-bin")
        .arg(&bins.adapter)
        .env("GRANTGATE_NO_BUILD", "1")
        .env("TMPDIR", tmp)
        .env("GRANTGATE_ENGINE_SCENARIOS", "1")
        .env_remove("GRANTGATE_POSTGRES_URL");
    match via {
        Via::Cluster => {}
        Via::Server(url) => {
            cmd.args(["--postgres-url", url]);
        }
        Via::Docker => {
            docker::require_engine_and_images();
            cmd.args(["--runtime", "docker"]);
        }
    }
    cmd
}

/// Processes whose command line, environment or working directory mention
/// `needle`, other than ourselves.
fn processes_mentioning(needle: &str) -> Vec<String> {
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if !pid.chars().all(|c| c.is_ascii_digit()) || pid == me {
            continue;
        }
        let base = entry.path();
        let cmdline = std::fs::read(base.join("cmdline")).unwrap_or_default();
        let environ = std::fs::read(base.join("environ")).unwrap_or_default();
        let cwd = std::fs::read_link(base.join("cwd")).unwrap_or_default();
        let text = |b: &[u8]| String::from_utf8_lossy(b).replace('\0', " ");
        if text(&cmdline).contains(needle)
            || text(&environ).contains(needle)
            || cwd.to_string_lossy().contains(needle)
        {
            found.push(format!("{pid}: {}", text(&cmdline)));
        }
    }
    found
}

/// Asserts nothing of the run remains: no process mentions the TMPDIR and
/// nothing but the reports is left in it.
fn assert_nothing_left(tmp: &Path) {
    let needle = tmp.to_string_lossy().into_owned();
    // Teardown is synchronous before exit, but the kernel may take a moment
    // to reap killed processes; poll briefly rather than sleep blindly.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut procs = processes_mentioning(&needle);
    while !procs.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        procs = processes_mentioning(&needle);
    }
    assert!(procs.is_empty(), "processes left behind: {procs:#?}");
    let left: Vec<String> = std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "reports")
        .collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}

async fn run_databases(cluster: &PgCluster) -> Vec<String> {
    cluster.databases("gg_").await.unwrap()
}

fn report_json(tmp: &Path) -> serde_json::Value {
    let reports = tmp.join("reports");
    let run = std::fs::read_dir(&reports)
        .unwrap()
        .flatten()
        .next()
        .expect("a report directory");
    serde_json::from_slice(&std::fs::read(run.path().join("report.json")).unwrap()).unwrap()
}

fn check_panic_run(tmp: &Path, via: Via) {
    let out = grantgate(tmp, "engine_panics", via).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "errored trials exit 2\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let report = report_json(tmp);
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "both backends ran: {stdout}");
    for r in results {
        assert_eq!(r["verdict"]["verdict"], "errored", "{r}");
        let message = r["verdict"]["message"].as_str().unwrap();
        assert!(message.contains("panicked"), "{message}");
        assert!(message.contains("deliberate panic"), "{message}");
    }
    assert_nothing_left(tmp);
    if let Via::Docker = via {
        // The stacks really were containers: their output is in the report.
        for r in results {
            let log = r["core_log"].as_str().unwrap();
            assert!(log.contains("core stdout: core listening on"), "{log}");
        }
        docker::assert_nothing_labelled(report["run_id"].as_str().unwrap());
    }
}

#[test]
fn a_panicking_scenario_leaves_nothing_behind_with_the_ephemeral_cluster() {
    let tmp = private_tmp();
    check_panic_run(tmp.path(), Via::Cluster);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_panicking_scenario_drops_its_database_on_an_existing_server() {
    let server = PgCluster::start().unwrap();
    let tmp = private_tmp();
    let url = server.url("postgres");
    let path = tmp.path().to_owned();
    tokio::task::spawn_blocking(move || check_panic_run(&path, Via::Server(&url)))
        .await
        .unwrap();
    assert_eq!(run_databases(&server).await, Vec::<String>::new());
}

/// Starts a hanging run and waits until both trials hang inside their
/// scenario (stack, fixtures and an adapter up).
fn start_hanging_run(tmp: &Path, via: Via) -> std::process::Child {
    let mut child = grantgate(tmp, "engine_hangs", via)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut hanging = 0;
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while hanging < 2 {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                if line.contains("grantgate-probe: hanging") {
                    hanging += 1;
                }
                seen.push(line);
            }
            Err(_) => {
                let _ = child.kill();
                panic!("the run never reached its hanging scenarios: {seen:#?}");
            }
        }
    }
    child
}

/// Starts a hanging run, sends SIGINT once both trials hang, and expects
/// exit code 130.
fn check_sigint_run(tmp: &Path, via: Via) {
    let mut child = start_hanging_run(tmp, via);
    // Mid-run, the stacks exist: the check below would fail if teardown did
    // nothing.
    assert!(
        !processes_mentioning(&tmp.to_string_lossy()).is_empty(),
        "expected running stacks before SIGINT"
    );
    let docker_run = match via {
        Via::Docker => Some(docker::run_of_owner(child.id())),
        _ => None,
    };
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        // Honoured within seconds whatever the trials do (runner/signals.rs).
        if started.elapsed() > Duration::from_secs(3) {
            let _ = child.kill();
            panic!("grantgate did not exit within 3 s of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(130), "interrupted runs exit 130");
    let report = report_json(tmp);
    for r in report["results"].as_array().unwrap() {
        assert_eq!(r["verdict"]["verdict"], "errored", "{r}");
    }
    assert_nothing_left(tmp);
    if let Some(run) = docker_run {
        assert_eq!(report["run_id"].as_str(), Some(run.as_str()));
        docker::assert_nothing_labelled(&run);
    }
}

/// A CI runner killing a job on timeout: SIGKILL, so no teardown runs. The
/// children (Cores, adapters, the cluster's server) die with the harness;
/// its directories stay until the next run, which sweeps them first. A run
/// started while another is live leaves the live one alone.
#[test]
fn sigkill_mid_run_leaves_nothing_once_the_next_run_starts() {
    let tmp = private_tmp();
    let tmp = tmp.path();
    let needle = tmp.to_string_lossy().into_owned();
    let mut killed = start_hanging_run(tmp, Via::Cluster);
    let live_processes = processes_mentioning(&needle);
    assert!(
        live_processes.iter().any(|p| p.contains("postgres")),
        "expected the run's cluster among {live_processes:#?}"
    );
    let stacks = |tmp: &Path| -> Vec<String> {
        std::fs::read_dir(tmp)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("grantgate-"))
            .collect()
    };
    let dirs = stacks(tmp);
    assert!(dirs.len() >= 3, "expected stacks and a cluster: {dirs:?}");

    // Another run meanwhile, in the same temp dir: it must not touch the
    // live run's directories or processes.
    let out = grantgate(tmp, "engine_fails", Via::Cluster)
        .args(["--backend", "sqlite"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    for dir in &dirs {
        assert!(tmp.join(dir).exists(), "a live run's {dir} was swept");
    }
    assert!(killed.try_wait().unwrap().is_none(), "the live run died");

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(killed.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    killed.wait().unwrap();
    // Every child was tied to the harness: the kernel takes them down.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut procs = processes_mentioning(&needle);
    while !procs.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        procs = processes_mentioning(&needle);
    }
    assert!(
        procs.is_empty(),
        "children outlived the harness: {procs:#?}"
    );
    // Nothing ran a teardown: the directories are still there.
    assert!(
        !stacks(tmp).is_empty(),
        "nothing left to sweep proves nothing"
    );

    // The next run sweeps them before it starts anything.
    let out = grantgate(tmp, "engine_fails", Via::Cluster)
        .args(["--backend", "sqlite"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("left by dead runs"), "{stderr}");
    assert_nothing_left(tmp);
}

#[test]
fn sigint_mid_run_leaves_nothing_behind_with_the_ephemeral_cluster() {
    let tmp = private_tmp();
    check_sigint_run(tmp.path(), Via::Cluster);
}

#[tokio::test(flavor = "multi_thread")]
async fn sigint_mid_run_drops_the_databases_on_an_existing_server() {
    let server = PgCluster::start().unwrap();
    let tmp = private_tmp();
    let url = server.url("postgres");
    let path = tmp.path().to_owned();
    tokio::task::spawn_blocking(move || check_sigint_run(&path, Via::Server(&url)))
        .await
        .unwrap();
    assert_eq!(run_databases(&server).await, Vec::<String>::new());
}

#[test]
fn a_panicking_scenario_leaves_no_container_or_network_with_docker() {
    let tmp = private_tmp();
    check_panic_run(tmp.path(), Via::Docker);
}

#[test]
fn sigint_mid_run_leaves_no_container_or_network_with_docker() {
    let tmp = private_tmp();
    check_sigint_run(tmp.path(), Via::Docker);
}

/// SIGKILL with the Docker runtime: no teardown runs, so the run's
/// containers (its shared PostgreSQL container among them) and network stay
/// until the next Docker run starts, which removes them as a dead owner's.
#[test]
fn sigkill_mid_run_leaves_no_container_or_network_once_the_next_docker_run_starts() {
    let tmp = private_tmp();
    let tmp = tmp.path();
    let mut killed = start_hanging_run(tmp, Via::Docker);
    let run = docker::run_of_owner(killed.id());
    let names = docker::names_labelled(&run);
    assert!(
        names.iter().any(|n| n.ends_with("-db")),
        "expected the run's database container among {names:?}"
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(killed.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    killed.wait().unwrap();
    // Nothing ran a teardown: the containers are still there.
    assert!(
        !docker::names_labelled(&run).is_empty(),
        "nothing left to sweep proves nothing"
    );
    let out = grantgate(tmp, "engine_fails", Via::Docker)
        .args(["--backend", "sqlite"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    docker::assert_nothing_labelled(&run);
}

/// Looking at the Docker engine through its own CLI, independently of the
/// harness's client.
mod docker {
    use std::process::Command;

    /// The images `grantgate run --runtime docker` uses by default.
    const IMAGES: [&str; 2] = ["grantgate/refcore:latest", "grantgate/postgres:15"];

    fn docker(args: &[&str]) -> String {
        let out = Command::new("docker")
            .args(args)
            .output()
            .unwrap_or_else(|e| {
                panic!("cannot run `docker` ({e}): these tests need the Docker CLI and engine")
            });
        assert!(
            out.status.success(),
            "`docker {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Fails loudly, with the fix, when no engine answers or an image is
    /// missing: a missing Docker is never a skipped test.
    pub fn require_engine_and_images() {
        let info = Command::new("docker")
            .args(["info", "--format", "{{.ServerVersion}}"])
            .output();
        match info {
            Ok(o) if o.status.success() => {}
            Ok(o) => panic!(
                "no Docker engine answers (`docker info`: {}); start dockerd, then run \
                 scripts/build-images",
                String::from_utf8_lossy(&o.stderr).trim()
            ),
            Err(e) => panic!("no Docker CLI ({e}); install Docker, then run scripts/build-images"),
        }
        for image in IMAGES {
            let found = Command::new("docker")
                .args(["image", "inspect", "--format", "{{.Id}}", image])
                .output()
                .is_ok_and(|o| o.status.success());
            assert!(
                found,
                "image {image} is missing: build it with scripts/build-images"
            );
        }
    }

    /// The run id on the containers the harness with process id `pid` has
    /// running now; panics if it has none (the check after SIGINT would then
    /// prove nothing).
    pub fn run_of_owner(pid: u32) -> String {
        let listed = docker(&[
            "ps",
            "-a",
            "--filter",
            "label=grantgate.run",
            "--format",
            "{{.Label \"grantgate.owner\"}} {{.Label \"grantgate.run\"}}",
        ]);
        listed
            .lines()
            .find_map(|l| {
                let (owner, run) = l.split_once(' ')?;
                (owner.split(':').next() == Some(pid.to_string().as_str())).then(|| run.to_owned())
            })
            .unwrap_or_else(|| panic!("no container of grantgate (pid {pid}) is running: {listed}"))
    }

    /// The names of the run's containers, running or not.
    pub fn names_labelled(run_id: &str) -> Vec<String> {
        let filter = format!("label=grantgate.run={run_id}");
        docker(&["ps", "-a", "--filter", &filter, "--format", "{{.Names}}"])
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Asserts that no container, volume-holding or not, and no network of
    /// the run remains.
    pub fn assert_nothing_labelled(run_id: &str) {
        let filter = format!("label=grantgate.run={run_id}");
        let containers = docker(&["ps", "-a", "-q", "--filter", &filter]);
        assert_eq!(containers.trim(), "", "containers left by run {run_id}");
        let networks = docker(&["network", "ls", "-q", "--filter", &filter]);
        assert_eq!(networks.trim(), "", "networks left by run {run_id}");
    }
}

/// With `--browser chromium`, no chromedriver or Chromium outlives a run:
/// not one that ends, not one killed with SIGKILL mid-trial (chromedriver
/// is tied to the harness, each Chromium to chromedriver), and the next run
/// sweeps the profiles.
#[test]
fn no_browser_outlives_a_run_or_a_sigkill() {
    let tmp = private_tmp();
    let tmp = tmp.path();
    let needle = tmp.to_string_lossy().into_owned();
    let browsers = || -> Vec<String> {
        processes_mentioning(&needle)
            .into_iter()
            .filter(|p| p.contains("chrom"))
            .collect()
    };
    let run = || {
        let mut cmd = grantgate(tmp, "real_browser_reads_text", Via::Cluster);
        cmd.args(["--backend", "sqlite", "--browser", "chromium"]);
        cmd
    };
    let out = run().output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_nothing_left(tmp);

    let mut killed = run()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while browsers().iter().all(|p| !p.contains("user-data-dir")) {
        assert!(Instant::now() < deadline, "no Chromium started");
        std::thread::sleep(Duration::from_millis(50));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(killed.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    killed.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut left = browsers();
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        left = browsers();
    }
    assert!(left.is_empty(), "browsers outlived the harness: {left:#?}");
    let out = run().output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_nothing_left(tmp);
}
