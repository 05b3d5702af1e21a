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
//! that left the group (`setsid`) is caught another way: the harness is a
//! child subreaper ([`adopt_orphans`]), so a process orphaned by a dying Core
//! becomes the harness's child, and [`end_orphans`] kills every child of the
//! harness no teardown accounts for. [`end_groups`] kills every live group
//! at once, for an interrupt that cannot wait for teardowns.

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

/// SIGKILLs every child of the harness but `spared` (pids of children it
/// still needs, such as the PostgreSQL server): at the end of a run, all
/// that is left are orphans adopted from dead Cores. Returns their pids.
pub fn end_orphans(spared: &[i32]) -> Vec<i32> {
    if !children_are_tied() {
        return Vec::new();
    }
    let me = std::process::id() as i32;
    let mut ended = Vec::new();
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
        let state = fields.next();
        let ppid = fields.next().and_then(|p| p.parse::<i32>().ok());
        if ppid == Some(me) && state != Some("Z") && !spared.contains(&pid) {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
            ended.push(pid);
        }
    }
    ended
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
