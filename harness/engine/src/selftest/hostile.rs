//! The hostile pass (`grantgate selftest --hostile`): the gate against
//! Cores broken badly on purpose (`refcore`'s `CORE_HOSTILE` modes,
//! `docs/faults.md` "Hostile Cores"), each run as a child `grantgate run`
//! so that what it costs is measured from outside, as a CI would see it.
//!
//! Each run must end in GATE FAILED (exit 1), within its time bound, with a
//! report that parses and stays small, a harness that stays small in
//! memory, and nothing left running or on disk. A bound crossed fails the
//! pass.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::binaries::Binaries;

/// What kind of broken a hostile Core is, which sets its time bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// No stack of it ever becomes usable: the run must end within
    /// [`UNUSABLE_BOUND`].
    Unusable,
    /// Its stacks start, and its answers misbehave: the run must take at
    /// most twice a normal run of the same selection.
    Misbehaving,
    /// Its stacks start, then it stops answering (or answers a byte a
    /// second): it meets the whole catalogue, which the run must stop on
    /// its own within [`UNUSABLE_BOUND`].
    Unanswering,
}

/// An unusable Core's run ends within this.
pub const UNUSABLE_BOUND: Duration = Duration::from_secs(180);

/// The harness's peak resident memory must stay under this.
pub const RSS_BOUND_KB: u64 = 500 * 1024;

/// A run's report directory must stay under this.
pub const REPORT_BOUND: u64 = 20 * 1024 * 1024;

/// A normal run counts as at least this long when doubled for the bound of
/// a misbehaving Core: a run of a few trials is mostly start-up noise.
pub const NORMAL_RUN_FLOOR: Duration = Duration::from_secs(10);

/// One hostile Core: its `CORE_HOSTILE` name, its kind, the trials it is
/// run against (those that meet its misbehaviour) and the exit codes it may
/// end with.
#[derive(Debug, Clone, Copy)]
pub struct Hostile {
    /// The `CORE_HOSTILE` name.
    pub name: &'static str,
    /// Which time bound applies.
    pub kind: Kind,
    /// The `--filter` of its run.
    pub filter: &'static str,
    /// The exit codes accepted: GATE FAILED (1), except for `log-flood`,
    /// which breaks no rule of the contract (a noisy Core is gated on what
    /// it answers), so GATE PASSED's 0 is right for it too; its bounds are
    /// what it tests.
    pub exits: &'static [i32],
}

const FAILED: &[i32] = &[1];

/// Every hostile Core the pass runs; `refcore --list-hostile` must list
/// exactly these.
pub const CATALOGUE: &[Hostile] = &[
    misbehaving("deep-json-error", "replay"),
    misbehaving("deep-html", "browser"),
    misbehaving("every-issue-exists", "replay"),
    misbehaving("huge-list", "list"),
    misbehaving("endless-list", "list"),
    misbehaving("huge-headers", "browser"),
    misbehaving("many-cookies", "browser"),
    misbehaving("huge-link", "list"),
    misbehaving("invalid-utf8-json", "replay"),
    misbehaving("invalid-utf8-html", "browser"),
    misbehaving("huge-csrf", "browser"),
    misbehaving("ignores-sigterm", "browser"),
    unanswering("never-answers"),
    unanswering("drip-list"),
    Hostile {
        name: "log-flood",
        kind: Kind::Misbehaving,
        filter: "browser",
        exits: &[0, 1],
    },
    unusable("500-everywhere"),
    unusable("no-newline"),
    unusable("never-listens"),
    unusable("exits-after-listening"),
    unusable("other-port"),
    unusable("not-http"),
    unusable("daemonizes"),
];

const fn misbehaving(name: &'static str, filter: &'static str) -> Hostile {
    Hostile {
        name,
        kind: Kind::Misbehaving,
        filter,
        exits: FAILED,
    }
}

/// An unusable Core meets the whole catalogue: the run must stop on its
/// own ("Core unusable") well within [`UNUSABLE_BOUND`], not by running out.
const fn unusable(name: &'static str) -> Hostile {
    Hostile {
        name,
        kind: Kind::Unusable,
        filter: "",
        exits: FAILED,
    }
}

/// A Core that stops answering meets the whole catalogue: the run must stop
/// on its own ("Core stopped answering") within [`UNUSABLE_BOUND`].
const fn unanswering(name: &'static str) -> Hostile {
    Hostile {
        name,
        kind: Kind::Unanswering,
        filter: "",
        exits: FAILED,
    }
}

/// What one child run measured.
#[derive(Debug, Clone, Serialize)]
pub struct Measured {
    /// The hostile mode (`none` for a normal run).
    pub name: String,
    /// The `--filter` it ran with.
    pub filter: String,
    /// Exit code (`None`: killed by a signal).
    pub exit: Option<i32>,
    /// Wall time, start to exit.
    pub wall_ms: u64,
    /// The harness's peak resident memory (`VmHWM`), KiB.
    pub peak_rss_kb: u64,
    /// Bytes under the run's report directory.
    pub report_bytes: u64,
    /// Whether `report.json` and `junit.xml` exist and `report.json` parses.
    pub report_valid: bool,
    /// Processes still running from the run, after a two-second grace.
    pub leftover_processes: usize,
    /// Entries left in the run's private scratch directory.
    pub leftover_files: usize,
}

/// One row of the pass: what was measured and which bounds it crossed.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The hostile Core's kind.
    pub kind: Kind,
    /// The measurements.
    pub measured: Measured,
    /// The time bound that applied, ms.
    pub wall_bound_ms: u64,
    /// Every bound crossed, in words (empty: the row passed).
    pub crossed: Vec<String>,
}

/// Judges `m` for `hostile`, a normal run of its selection having taken
/// `normal`.
pub fn judge(hostile: &Hostile, m: Measured, normal: Duration) -> Row {
    let wall_bound = bound(hostile, normal);
    let mut crossed = Vec::new();
    if !m.exit.is_some_and(|c| hostile.exits.contains(&c)) {
        crossed.push(format!("exit {:?}, expected {:?}", m.exit, hostile.exits));
    }
    if m.wall_ms > wall_bound.as_millis() as u64 {
        crossed.push(format!(
            "wall {} ms over {} ms",
            m.wall_ms,
            wall_bound.as_millis()
        ));
    }
    if m.peak_rss_kb > RSS_BOUND_KB {
        crossed.push(format!(
            "peak RSS {} KiB over {RSS_BOUND_KB} KiB",
            m.peak_rss_kb
        ));
    }
    if m.report_bytes > REPORT_BOUND {
        crossed.push(format!(
            "report {} bytes over {REPORT_BOUND}",
            m.report_bytes
        ));
    }
    if !m.report_valid {
        crossed.push("no valid report.json and junit.xml".into());
    }
    if m.leftover_processes + m.leftover_files > 0 {
        crossed.push(format!(
            "left {} process(es) and {} scratch entr(ies)",
            m.leftover_processes, m.leftover_files
        ));
    }
    Row {
        kind: hostile.kind,
        measured: m,
        wall_bound_ms: wall_bound.as_millis() as u64,
        crossed,
    }
}

/// The wall-time bound of `hostile`, a normal run of its selection having
/// taken `normal`.
pub fn bound(hostile: &Hostile, normal: Duration) -> Duration {
    match hostile.kind {
        Kind::Unusable | Kind::Unanswering => UNUSABLE_BOUND,
        Kind::Misbehaving => normal.max(NORMAL_RUN_FLOOR) * 2,
    }
}

/// Runs `grantgate run` (this executable) against the faults build `bins`
/// with `CORE_HOSTILE=name` (none for `None`), on `backend`, `filter`ed,
/// reports under `dir/<name>`, and measures it. `stop` is polled: when it
/// says so, or when the run has taken `cap`, the child is interrupted
/// (SIGINT), and killed ten seconds later, so the pass itself is bounded.
#[allow(clippy::too_many_arguments)]
pub fn measure(
    bins: &Binaries,
    name: Option<&str>,
    filter: &str,
    backend: &str,
    jobs: usize,
    dir: &Path,
    cap: Duration,
    stop: &dyn Fn() -> bool,
) -> std::io::Result<Measured> {
    let label = name.unwrap_or("none");
    let report_dir = dir.join(label);
    let scratch = tempfile::Builder::new()
        .prefix("grantgate-hostile-")
        .tempdir()?;
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.args([
        "run",
        "--color",
        "never",
        "--backend",
        backend,
        "--filter",
        filter,
    ])
    .arg("--jobs")
    .arg(jobs.to_string())
    .arg("--core-bin")
    .arg(&bins.core)
    .arg("--adapter-bin")
    .arg(&bins.adapter)
    .arg("--report-dir")
    .arg(&report_dir)
    .env("TMPDIR", scratch.path())
    .env("GRANTGATE_SCRATCH", scratch.path())
    .env("GRANTGATE_NO_BUILD", "1")
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    if let Some(name) = name {
        cmd.arg("--core-env").arg(format!("CORE_HOSTILE={name}"));
    }
    let started = Instant::now();
    let mut child = cmd.spawn()?;
    let pid = child.id();
    let mut peak_rss_kb = 0;
    let mut interrupted: Option<Instant> = None;
    let status = loop {
        peak_rss_kb = peak_rss_kb.max(vm_hwm_kb(pid).unwrap_or(0));
        if let Some(status) = child.try_wait()? {
            break status;
        }
        let pid = nix::unistd::Pid::from_raw(pid as i32);
        match interrupted {
            None if stop() || started.elapsed() > cap => {
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
                interrupted = Some(Instant::now());
            }
            Some(at) if at.elapsed() > Duration::from_secs(10) => {
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            }
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let wall_ms = started.elapsed().as_millis() as u64;
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut leftover_processes = processes_in(scratch.path());
    while leftover_processes > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        leftover_processes = processes_in(scratch.path());
    }
    let leftover_files = std::fs::read_dir(scratch.path())?.count();
    let run_dir = newest_run(&report_dir);
    let report_valid = run_dir.as_ref().is_some_and(|d| {
        d.join("junit.xml").is_file()
            && std::fs::read(d.join("report.json"))
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .is_some()
    });
    Ok(Measured {
        name: label.to_owned(),
        filter: filter.to_owned(),
        exit: status.code(),
        wall_ms,
        peak_rss_kb,
        report_bytes: run_dir.as_deref().map_or(0, dir_bytes),
        report_valid,
        leftover_processes,
        leftover_files,
    })
}

/// `VmHWM` of `pid`: its peak resident set so far (monotonic, so the last
/// read before it exits is its peak to within one poll).
fn vm_hwm_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Live processes whose environment or working directory names `dir` (every
/// child of the run inherits its `TMPDIR` or works under it).
fn processes_in(dir: &Path) -> usize {
    let needle = dir.to_string_lossy().into_owned();
    let me = std::process::id().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.bytes().all(|b| b.is_ascii_digit()) && name != me
        })
        .filter(|e| {
            let p = e.path();
            let zombie = std::fs::read_to_string(p.join("stat"))
                .map(|s| {
                    s.rsplit(')')
                        .next()
                        .is_some_and(|r| r.trim_start().starts_with('Z'))
                })
                .unwrap_or(true);
            let environ = std::fs::read(p.join("environ")).unwrap_or_default();
            let cwd = std::fs::read_link(p.join("cwd")).unwrap_or_default();
            !zombie && (String::from_utf8_lossy(&environ).contains(&needle) || cwd.starts_with(dir))
        })
        .count()
}

/// The newest `<run-id>` directory under `dir` (not `latest`).
fn newest_run(dir: &Path) -> Option<PathBuf> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| e.file_name() != "latest" && e.path().is_dir())
        .map(|e| e.path())
        .collect();
    runs.sort();
    runs.pop()
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// The whole pass: for each selected hostile Core (all of [`CATALOGUE`]
/// when `only` is empty), one measured run, judged against a normal run of
/// its selection (measured once per selection, with no hostile mode).
/// Writes `hostile.json` into `dir` and hands each row to `on_row` as it
/// is judged. `Ok(None)`: interrupted.
pub fn run_pass(
    bins: &Binaries,
    only: &[String],
    backend: &str,
    jobs: usize,
    dir: &Path,
    stop: &dyn Fn() -> bool,
    on_row: &dyn Fn(&Row),
) -> std::io::Result<Option<Vec<Row>>> {
    std::fs::create_dir_all(dir)?;
    let selected: Vec<&Hostile> = CATALOGUE
        .iter()
        .filter(|h| only.is_empty() || only.iter().any(|o| o == h.name))
        .collect();
    let mut normals: Vec<Measured> = Vec::new();
    let mut rows = Vec::new();
    for hostile in selected {
        let normal = match hostile.kind {
            Kind::Unusable | Kind::Unanswering => Duration::ZERO,
            Kind::Misbehaving => {
                if !normals.iter().any(|n| n.filter == hostile.filter) {
                    let normal_dir = dir.join(format!("normal-{}", hostile.filter));
                    normals.push(measure(
                        bins,
                        None,
                        hostile.filter,
                        backend,
                        jobs,
                        &normal_dir,
                        UNUSABLE_BOUND,
                        stop,
                    )?);
                }
                let n = normals.iter().find(|n| n.filter == hostile.filter);
                Duration::from_millis(n.map_or(0, |n| n.wall_ms))
            }
        };
        if stop() {
            return Ok(None);
        }
        // A run is cut off a little after its bound: it failed it anyway.
        let cap = bound(hostile, normal) + Duration::from_secs(30);
        let m = measure(
            bins,
            Some(hostile.name),
            hostile.filter,
            backend,
            jobs,
            dir,
            cap,
            stop,
        )?;
        let row = judge(hostile, m, normal);
        on_row(&row);
        rows.push(row);
        if stop() {
            return Ok(None);
        }
    }
    let json = serde_json::json!({ "normal_runs": normals, "rows": rows });
    std::fs::write(dir.join("hostile.json"), serde_json::to_vec_pretty(&json)?)?;
    Ok(Some(rows))
}

/// The rows as a table for the terminal.
pub fn table(rows: &[Row]) -> String {
    let mut out = format!(
        "{:<22} {:<11} {:>4} {:>9} {:>9} {:>10} {:>6}  {}\n",
        "hostile Core", "kind", "exit", "wall s", "RSS MiB", "report KiB", "left", "verdict"
    );
    for r in rows {
        let m = &r.measured;
        let kind = match r.kind {
            Kind::Unusable => "unusable",
            Kind::Misbehaving => "misbehaving",
            Kind::Unanswering => "unanswering",
        };
        let exit = m.exit.map_or("sig".to_owned(), |c| c.to_string());
        let verdict = if r.crossed.is_empty() {
            "ok".to_owned()
        } else {
            format!("CROSSED: {}", r.crossed.join("; "))
        };
        out.push_str(&format!(
            "{:<22} {:<11} {:>4} {:>9.1} {:>9.1} {:>10} {:>6}  {verdict}\n",
            m.name,
            kind,
            exit,
            m.wall_ms as f64 / 1000.0,
            m.peak_rss_kb as f64 / 1024.0,
            m.report_bytes / 1024,
            m.leftover_processes + m.leftover_files,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(exit: Option<i32>, wall_ms: u64) -> Measured {
        Measured {
            name: "x".into(),
            filter: "f".into(),
            exit,
            wall_ms,
            peak_rss_kb: 100 * 1024,
            report_bytes: 1 << 20,
            report_valid: true,
            leftover_processes: 0,
            leftover_files: 0,
        }
    }

    #[test]
    fn every_bound_is_judged() {
        let h = CATALOGUE[0];
        let normal = Duration::from_secs(20);
        assert!(
            judge(&h, measured(Some(1), 39_000), normal)
                .crossed
                .is_empty()
        );
        assert_eq!(judge(&h, measured(Some(0), 1), normal).crossed.len(), 1);
        assert_eq!(judge(&h, measured(None, 41_000), normal).crossed.len(), 2);
        let mut m = measured(Some(1), 1);
        (
            m.peak_rss_kb,
            m.report_bytes,
            m.report_valid,
            m.leftover_files,
        ) = (RSS_BOUND_KB + 1, REPORT_BOUND + 1, false, 1);
        assert_eq!(judge(&h, m, normal).crossed.len(), 4);
        let unusable = CATALOGUE.iter().find(|h| h.kind == Kind::Unusable).unwrap();
        assert!(
            judge(unusable, measured(Some(1), 179_000), normal)
                .crossed
                .is_empty()
        );
        assert!(
            !judge(unusable, measured(Some(1), 181_000), normal)
                .crossed
                .is_empty()
        );
    }
}
