//! Where the harness keeps its directories, and what dead runs left behind
//! there, removed before a run starts.
//!
//! A harness killed with SIGKILL runs no teardown. Its children die with it
//! ([`crate::lifeline`]), but its stack directories and its PostgreSQL
//! cluster's data directory stay in the scratch root ([`scratch_root`]). So
//! every directory the harness creates carries a marker naming its owner —
//! pid and process start time from `/proc/<pid>/stat`, so that a reused pid
//! is not taken for the owner — and every run first removes the
//! directories whose owner is gone, with any process still working in them.
//! A live run's directories are never touched; neither are stacks kept with
//! `--keep`.
//!
//! Directories without a marker come from harnesses older than the marker.
//! They may belong to such a harness still running, so they are swept only
//! once they are an hour old.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// The marker file in every directory the harness creates.
pub const MARKER: &str = ".grantgate-owner";

/// The marker's content for a stack kept with `--keep`: never swept.
const KEPT: &str = "kept";

/// Name prefixes of the directories the harness creates in the temp dir.
const PREFIXES: [&str; 2] = ["grantgate-stack-", "grantgate-pg-"];

/// Age after which a directory without a marker is taken as abandoned.
const UNMARKED_AGE: Duration = Duration::from_secs(3600);

/// What a sweep removed.
#[derive(Debug, Default)]
pub struct Swept {
    /// Directories removed.
    pub dirs: Vec<PathBuf>,
    /// Processes killed because they still worked in one of them.
    pub processes: Vec<i32>,
}

/// Free space `/dev/shm` must have to hold a run's directories.
const SHM_ROOM: u64 = 1 << 30;

/// Where stack directories and the PostgreSQL cluster go, decided once per
/// process: `GRANTGATE_SCRATCH`, else `TMPDIR` when it is set, else
/// `/dev/shm` when it is a writable memory filesystem with a gigabyte free,
/// else the temp dir. Their files are worthless once the run ends, and a
/// disk filesystem makes each trial pay for creating and removing hundreds
/// of them (a PostgreSQL clone is a few hundred files).
pub fn scratch_root() -> PathBuf {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        pick_scratch(
            std::env::var_os("GRANTGATE_SCRATCH"),
            std::env::var_os("TMPDIR").is_some(),
            shm_is_roomy,
        )
    })
    .clone()
}

const SHM: &str = "/dev/shm";

fn pick_scratch(
    explicit: Option<std::ffi::OsString>,
    tmpdir_set: bool,
    shm_is_roomy: impl FnOnce() -> bool,
) -> PathBuf {
    match explicit {
        Some(dir) => PathBuf::from(dir),
        None if !tmpdir_set && shm_is_roomy() => PathBuf::from(SHM),
        None => std::env::temp_dir(),
    }
}

fn shm_is_roomy() -> bool {
    use nix::sys::{statfs, statvfs};
    let shm = Path::new(SHM);
    let tmpfs = statfs::statfs(shm).is_ok_and(|f| f.filesystem_type() == statfs::TMPFS_MAGIC);
    let room = statvfs::statvfs(shm)
        .map(|f| f.blocks_available() * f.fragment_size())
        .unwrap_or(0);
    let writable = nix::unistd::access(shm, nix::unistd::AccessFlags::W_OK).is_ok();
    tmpfs && room >= SHM_ROOM && writable
}

/// Prepares the start of a run: sweeps the scratch root (and the temp dir,
/// if another) of what dead runs left, saying so on stderr when it removed
/// anything.
pub fn before_run() -> Swept {
    let mut swept = sweep(&scratch_root());
    if scratch_root() != std::env::temp_dir() {
        let more = sweep(&std::env::temp_dir());
        swept.dirs.extend(more.dirs);
        swept.processes.extend(more.processes);
    }
    if !swept.dirs.is_empty() {
        eprintln!(
            "grantgate: removed {} director{} and {} process{} left by dead runs",
            swept.dirs.len(),
            if swept.dirs.len() == 1 { "y" } else { "ies" },
            swept.processes.len(),
            if swept.processes.len() == 1 { "" } else { "es" },
        );
    }
    swept
}

/// Creates a directory `<prefix>XXXX` in the [`scratch_root`], owned by this
/// process: its marker names this process, so a later run removes it if
/// this one dies without cleaning up.
pub fn owned_tempdir(prefix: &str) -> io::Result<tempfile::TempDir> {
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(scratch_root())?;
    std::fs::write(dir.path().join(MARKER), format!("{}\n", owner_token()))?;
    Ok(dir)
}

/// Marks `dir` as kept (`--keep`): no later run sweeps it.
pub fn mark_kept(dir: &Path) {
    if !dir.is_absolute() {
        return;
    }
    let _ = std::fs::write(dir.join(MARKER), format!("{KEPT}\n"));
}

/// Removes the harness directories under `root` whose owner is gone, after
/// killing any process that still works in them.
pub fn sweep(root: &Path) -> Swept {
    let mut swept = Swept::default();
    let abandoned: Vec<PathBuf> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            PREFIXES.iter().any(|p| name.starts_with(p)) && e.file_type().is_ok_and(|t| t.is_dir())
        })
        .map(|e| e.path())
        .filter(|dir| is_abandoned(dir))
        .collect();
    if abandoned.is_empty() {
        return swept;
    }
    let users = processes_naming(&abandoned);
    for pid in &users {
        let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
    }
    // Let the kernel take them down before their files go.
    let deadline = Instant::now() + Duration::from_secs(5);
    while users.iter().any(|p| alive(*p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    swept.processes = users;
    for dir in abandoned {
        if std::fs::remove_dir_all(&dir).is_ok() {
            swept.dirs.push(dir);
        }
    }
    swept
}

/// Whether nobody will clean `dir` up: its owner is gone (and it was not
/// kept), or it has no marker and is older than [`UNMARKED_AGE`].
fn is_abandoned(dir: &Path) -> bool {
    match std::fs::read_to_string(dir.join(MARKER)) {
        Ok(owner) => {
            let owner = owner.trim();
            owner != KEPT && !owner_alive(owner)
        }
        Err(_) => std::fs::metadata(dir)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_some_and(|age| age > UNMARKED_AGE),
    }
}

/// Processes (other than this one) whose working directory lies in one of
/// `dirs`, or whose command line or environment names one: a Core (its
/// directory, its SQLite URL), an adapter, a PostgreSQL server (`-D`, its
/// data directory as working directory).
pub(crate) fn processes_naming(dirs: &[PathBuf]) -> Vec<i32> {
    processes_naming_any(dirs, &[])
}

/// [`processes_naming`], and those whose command line or environment holds
/// one of `more` (a stack's database URL).
pub(crate) fn processes_naming_any(dirs: &[PathBuf], more: &[&str]) -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut needles: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    needles.extend(more.iter().filter(|m| !m.is_empty()).map(|m| m.to_string()));
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if pid == me {
            continue;
        }
        let base = entry.path();
        let cwd = std::fs::read_link(base.join("cwd")).unwrap_or_default();
        let text = |name: &str| {
            String::from_utf8_lossy(&std::fs::read(base.join(name)).unwrap_or_default())
                .into_owned()
        };
        let (cmdline, environ) = (text("cmdline"), text("environ"));
        if dirs.iter().any(|d| cwd.starts_with(d))
            || needles
                .iter()
                .any(|n| cmdline.contains(n.as_str()) || environ.contains(n.as_str()))
        {
            found.push(pid);
        }
    }
    found
}

pub(crate) fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        // Field 3 (after the parenthesised name) is the state; Z is a zombie.
        s.rfind(')')
            .and_then(|i| s[i + 1..].split_whitespace().next())
            .is_some_and(|state| state != "Z")
    })
}

/// This process as an owner: its pid and start time, so that a reused pid
/// is not mistaken for a live owner.
pub fn owner_token() -> String {
    let pid = std::process::id() as i32;
    format!("{pid}:{}", start_ticks(pid).unwrap_or_default())
}

/// Whether the process an owner token names still runs.
pub fn owner_alive(owner: &str) -> bool {
    let Some((pid, ticks)) = owner.split_once(':') else {
        return false;
    };
    match pid.parse::<i32>() {
        Ok(pid) => start_ticks(pid).is_some_and(|t| t == ticks),
        Err(_) => false,
    }
}

/// Field 22 of `/proc/<pid>/stat`: when the process started, in clock ticks
/// since boot.
fn start_ticks(pid: i32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces; fields after it follow
    // its closing parenthesis.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    #[test]
    fn scratch_is_the_named_dir_then_tmpdir_then_a_roomy_dev_shm() {
        let named = Some(std::ffi::OsString::from("/srv/scratch"));
        assert_eq!(
            pick_scratch(named, true, || true),
            PathBuf::from("/srv/scratch")
        );
        assert_eq!(pick_scratch(None, false, || true), PathBuf::from(SHM));
        assert_eq!(pick_scratch(None, true, || true), std::env::temp_dir());
        assert_eq!(pick_scratch(None, false, || false), std::env::temp_dir());
    }

    fn dir_in(root: &Path, name: &str, marker: Option<&str>) -> PathBuf {
        let dir = root.join(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("core.db"), b"data").unwrap();
        if let Some(m) = marker {
            std::fs::write(dir.join(MARKER), m).unwrap();
        }
        dir
    }

    #[test]
    fn this_process_is_a_live_owner_and_a_made_up_one_is_not() {
        assert!(owner_alive(&owner_token()));
        let pid = std::process::id();
        assert!(!owner_alive(&format!("{pid}:1")));
        assert!(!owner_alive("not-a-pid:1"));
        assert!(!owner_alive("garbage"));
    }

    #[test]
    fn dead_owners_are_swept_with_their_processes_and_live_ones_are_not() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        let live = dir_in(root, "grantgate-stack-live-1", Some(&owner_token()));
        let kept = dir_in(root, "grantgate-stack-kept-1", Some("kept\n"));
        let young = dir_in(root, "grantgate-pg-unmarked", None);
        let other = dir_in(root, "someone-else", Some("1:1"));
        // A pid that is alive but started at another time: a reused pid.
        let dead = dir_in(
            root,
            "grantgate-pg-dead",
            Some(&format!("{}:1\n", std::process::id())),
        );
        // A leftover server of the dead run, still working in its directory.
        let mut server = Command::new("/bin/sleep")
            .arg("60")
            .current_dir(&dead)
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let swept = sweep(root);
        assert_eq!(swept.dirs, vec![dead.clone()]);
        assert_eq!(swept.processes, vec![server.id() as i32]);
        let status = server.wait().unwrap();
        assert!(!status.success(), "the leftover process was killed");
        assert!(!dead.exists());
        for untouched in [live, kept, young, other] {
            assert!(
                untouched.join("core.db").exists(),
                "{untouched:?} was swept"
            );
        }
    }

    #[test]
    fn an_owned_directory_names_this_process() {
        let dir = owned_tempdir("grantgate-stack-marker-test-").unwrap();
        let owner = std::fs::read_to_string(dir.path().join(MARKER)).unwrap();
        assert_eq!(owner.trim(), owner_token());
        mark_kept(dir.path());
        assert!(!is_abandoned(dir.path()));
    }
}
