//! Children die with the harness, however the harness dies.
//!
//! Teardown and `Drop` guards clean up after a panic or Ctrl-C, but nothing
//! of ours runs after SIGKILL (a CI runner killing a job on timeout). So every
//! Core, adapter and PostgreSQL server is started with a parent-death signal
//! (`PR_SET_PDEATHSIG`): the kernel signals the child when its parent dies.
//!
//! Why a thread of its own: Linux ties that signal to the parent *thread*,
//! not the process. A child forked from a tokio worker or a `spawn_blocking`
//! thread (which exits after ten idle seconds) would be killed when that
//! thread ends, mid-run. So every tied child is forked from one thread,
//! [`spawn_tied`]'s, which lives exactly as long as the harness process.
//!
//! `--keep` leaves stacks running after the harness exits on purpose; a run
//! with it calls [`let_children_outlive`] and its children are not tied.
//!
//! A Core's own helpers are in its process group, which teardown kills; one
//! that left the group (`setsid`, a daemon) is caught another way: the
//! harness is a child subreaper ([`adopt_orphans`]), so a process orphaned
//! by a dying Core becomes the harness's child. Teardown ends what still
//! names its stack ([`end_naming`]), and at the end [`end_orphans`] kills
//! every child of the harness no teardown accounted for. Both go round
//! until nothing is left: a killed daemon's own children come back to the
//! harness in turn. Both reap what they kill. [`end_groups`] kills every
//! live group at once, for an interrupt that cannot wait for teardowns.

use std::io;
use std::os::unix::process::CommandExt;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use nix::sys::signal::Signal;

/// Whether children are started untied (`--keep`).
static OUTLIVE: AtomicBool = AtomicBool::new(false);

/// The process groups of the children the harness owns right now.
static GROUPS: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

/// Counts `pgid` among the live groups [`end_groups`] kills.
pub fn own_group(pgid: i32) {
    GROUPS.lock().unwrap_or_else(|e| e.into_inner()).push(pgid);
}

/// Takes `pgid` off the live groups (stopped, or detached by `--keep`).
pub fn disown_group(pgid: i32) {
    GROUPS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|g| *g != pgid);
}

/// SIGKILLs every live group: what an interrupt does when teardowns take
/// too long. Safe to call from any thread.
pub fn end_groups() {
    let groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for pgid in groups {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), Signal::SIGKILL);
    }
}

/// Makes the harness the reaper of its descendants' orphans
/// (`PR_SET_CHILD_SUBREAPER`), unless children may outlive it (`--keep`).
pub fn adopt_orphans() {
    if children_are_tied() {
        let _ = nix::sys::prctl::set_child_subreaper(true);
    }
}

/// Rounds of killing a sweep goes: each round's killed processes hand their
/// children to the harness for the next; a process tree deeper than this
/// is not a Core's.
const SWEEP_ROUNDS: usize = 20;

/// SIGKILLs, round after round until none is left, every process that
/// names one of `dirs` (its working directory under one, or one in its
/// command line or environment) or one of `more`, and reaps those that are
/// the harness's: what a Core left running outside its process group (a
/// daemon) is ended with its stack. Returns their pids.
pub fn end_naming(dirs: &[std::path::PathBuf], more: &[&str]) -> Vec<i32> {
    if !children_are_tied() {
        return Vec::new();
    }
    sweep_rounds(|| crate::sweep::processes_naming_any(dirs, more))
}

/// Kills what `find` finds, reaps it, and looks again, for
/// [`SWEEP_ROUNDS`] at most.
fn sweep_rounds(find: impl Fn() -> Vec<i32>) -> Vec<i32> {
    let mut ended: Vec<i32> = Vec::new();
    for _ in 0..SWEEP_ROUNDS {
        let found: Vec<i32> = find()
            .into_iter()
            .filter(|p| crate::sweep::alive(*p))
            .collect();
        if found.is_empty() {
            break;
        }
        for pid in &found {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(*pid), Signal::SIGKILL);
        }
        // Let them die, then reap those that were ours (an adopted
        // process that is not ours to reap is its parent's business).
        std::thread::sleep(std::time::Duration::from_millis(20));
        for pid in &found {
            reap(*pid);
        }
        // A process still dying is found and killed again: count it once.
        for pid in found {
            if !ended.contains(&pid) {
                ended.push(pid);
            }
        }
    }
    ended
}

/// Collects `pid`'s exit status if it is a dead child of the harness.
fn reap(pid: i32) {
    use nix::sys::wait::{WaitPidFlag, waitpid};
    let _ = waitpid(nix::unistd::Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG));
}

/// SIGKILLs every child of the harness but `spared` (pids of children it
/// still needs, such as the PostgreSQL server), and their children in turn
/// as they come back to the harness, reaping each: at the end of a run,
/// all that is left are orphans adopted from dead Cores. Returns their
/// pids.
pub fn end_orphans(spared: &[i32]) -> Vec<i32> {
    if !children_are_tied() {
        return Vec::new();
    }
    let ended = sweep_rounds(|| children(spared));
    // Adopted processes that died on their own meanwhile: reaped too.
    for pid in children_in_state(spared, |s| s == "Z") {
        reap(pid);
    }
    ended
}

/// Live children of the harness but `spared`.
fn children(spared: &[i32]) -> Vec<i32> {
    children_in_state(spared, |s| s != "Z")
}

/// Children of the harness but `spared` whose state (`/proc/<pid>/stat`'s
/// third field) `state` accepts.
fn children_in_state(spared: &[i32], state: impl Fn(&str) -> bool) -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        // Field 4 of /proc/<pid>/stat, after the parenthesised name.
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let after_name = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
        let mut fields = after_name.split_whitespace();
        let st = fields.next();
        let ppid = fields.next().and_then(|p| p.parse::<i32>().ok());
        if ppid == Some(me) && st.is_some_and(&state) && !spared.contains(&pid) {
            found.push(pid);
        }
    }
    found
}

/// A job for the lifeline thread: fork something, hand the result back.
type Job = Box<dyn FnOnce() + Send>;

/// Lets children started from now on outlive the harness (`--keep`: a kept
/// stack must still answer after the run).
pub fn let_children_outlive(outlive: bool) {
    OUTLIVE.store(outlive, Ordering::SeqCst);
}

/// Whether children started now are tied to the harness.
pub fn children_are_tied() -> bool {
    !OUTLIVE.load(Ordering::SeqCst)
}

/// Arranges for the child `cmd` starts to receive `signal` when the harness
/// dies (a no-op with [`let_children_outlive`]). Start it through
/// [`spawn_tied`], or the signal follows the spawning thread instead.
#[expect(unsafe_code, reason = "pre_exec runs between fork and exec")]
pub fn tie(cmd: &mut std::process::Command, signal: Signal) {
    if !children_are_tied() {
        return;
    }
    let parent = std::process::id() as i32;
    // SAFETY: the closure runs between fork and exec and only makes two
    // async-signal-safe system calls (prctl, getppid); it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(signal).map_err(io::Error::from)?;
            // The harness may have died between fork and prctl: then the
            // signal will never come, so give up now.
            if nix::unistd::getppid().as_raw() != parent {
                return Err(io::Error::other(
                    "the harness exited while starting a child",
                ));
            }
            Ok(())
        });
    }
}

/// Runs `start` (which forks a tied child) on the lifeline thread and
/// returns its result. The call blocks only for the fork and exec.
pub fn spawn_tied<T: Send + 'static>(start: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::sync_channel(1);
    let job: Job = Box::new(move || {
        let _ = tx.send(start());
    });
    lifeline()
        .send(job)
        .expect("the lifeline thread lives as long as the process");
    rx.recv()
        .expect("the lifeline thread answers every job it takes")
}

/// The one thread every tied child is forked from; it never exits before
/// the process does.
fn lifeline() -> mpsc::Sender<Job> {
    static SENDER: OnceLock<std::sync::Mutex<mpsc::Sender<Job>>> = OnceLock::new();
    SENDER
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("grantgate-lifeline".into())
                .spawn(move || {
                    for job in rx {
                        job();
                    }
                    // Every sender is in the static above, so this loop
                    // ends only with the process: park to be safe.
                    loop {
                        std::thread::park();
                    }
                })
                .expect("spawn the lifeline thread");
            std::sync::Mutex::new(tx)
        })
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    /// A daemon (double fork, `setsid`, out of its directory) and its own
    /// children are found by what they inherited and ended, all of them.
    #[test]
    fn a_daemon_and_its_children_are_ended_by_what_they_name() {
        let needle = format!("grantgate-test-daemon-{}", uuid::Uuid::new_v4().simple());
        let status = Command::new("/bin/sh")
            .args([
                "-c",
                "setsid /bin/sh -c 'cd /; sleep 60 & sleep 60 & wait' </dev/null >/dev/null 2>&1 &",
            ])
            .env("STACK_MARK", &needle)
            .status()
            .unwrap();
        assert!(status.success());
        let naming = || crate::sweep::processes_naming_any(&[], &[needle.as_str()]);
        let deadline = Instant::now() + Duration::from_secs(5);
        while naming().len() < 3 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(naming().len(), 3, "the daemon and its two children");
        let ended = end_naming(&[], &[needle.as_str()]);
        assert_eq!(ended.len(), 3, "{ended:?}");
        let left: Vec<i32> = naming()
            .into_iter()
            .filter(|p| crate::sweep::alive(*p))
            .collect();
        assert!(left.is_empty(), "left running: {left:?}");
    }

    /// A child forked through the lifeline survives the thread that asked
    /// for it: the signal follows the lifeline thread, not the caller.
    #[test]
    fn a_tied_child_outlives_the_thread_that_started_it() {
        let child = std::thread::spawn(|| {
            let mut cmd = Command::new("/bin/sleep");
            cmd.arg("30").stdin(Stdio::null());
            tie(&mut cmd, Signal::SIGKILL);
            spawn_tied(move || cmd.spawn()).unwrap()
        })
        .join()
        .unwrap();
        let mut child = child;
        // The asking thread is gone; give a wrongly tied child time to die.
        std::thread::sleep(Duration::from_millis(300));
        assert!(
            child.try_wait().unwrap().is_none(),
            "the child died with the thread that asked for it"
        );
        child.kill().unwrap();
        let _ = child.wait();
    }

    /// The kernel really delivers the signal when the parent thread dies:
    /// a child forked from a short-lived thread (deliberately not through
    /// the lifeline) is killed when that thread ends. This is both the proof
    /// that `tie` works and the reason the lifeline thread exists.
    #[test]
    fn a_tied_child_dies_with_the_thread_that_forked_it() {
        let mut cmd = Command::new("/bin/sh");
        cmd.args(["-c", "exec /bin/sleep 30"]).stdin(Stdio::null());
        tie(&mut cmd, Signal::SIGKILL);
        let mut child = std::thread::spawn(move || cmd.spawn().unwrap())
            .join()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break Some(s);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            status.and_then(|s| s.signal()),
            Some(Signal::SIGKILL as i32),
            "the parent-death signal never came"
        );
    }
}
