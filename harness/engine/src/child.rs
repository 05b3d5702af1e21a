//! A child process the harness owns: started in its own process group with a
//! cleared environment, its output captured into a shared log, its exit
//! watched (so a Core that dies is reported as such, with its status, and not
//! as a later connection error), and its whole group killed when it is
//! stopped or dropped.
//!
//! Why process groups: a Core or adapter may start helpers of its own; killing
//! the group leaves nothing behind, and Ctrl-C on the terminal reaches only the
//! harness, which then stops every child in order. And every child is tied
//! to the harness ([`crate::lifeline`]): if the harness is killed outright,
//! the kernel kills the child.

use std::collections::VecDeque;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;
use tokio::sync::{mpsc, watch};

use crate::error::{HarnessError, Result};
use crate::limits::LINE_LIMIT;

/// Logs are kept to this size: a runaway child must not exhaust memory.
/// The first half and the last half are kept (the start shows how the
/// child was configured, the end why it stopped), with what was left out
/// between them counted.
const LOG_LIMIT: usize = 512 * 1024;

/// Output of a child, shared with the report.
#[derive(Clone, Default)]
pub struct SharedLog(Arc<Mutex<LogText>>);

#[derive(Default)]
struct LogText {
    head: String,
    tail: VecDeque<String>,
    tail_bytes: usize,
    left_out_lines: usize,
    left_out_bytes: usize,
}

impl SharedLog {
    /// Appends one line.
    pub fn push_line(&self, stream: &str, line: &str) {
        let entry = format!("{stream}: {line}\n");
        let mut log = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if log.head.len() + entry.len() <= LOG_LIMIT / 2 && log.tail.is_empty() {
            log.head.push_str(&entry);
            return;
        }
        log.tail_bytes += entry.len();
        log.tail.push_back(entry);
        while log.tail_bytes > LOG_LIMIT / 2 {
            let Some(old) = log.tail.pop_front() else {
                break;
            };
            log.tail_bytes -= old.len();
            log.left_out_lines += 1;
            log.left_out_bytes += old.len();
        }
    }

    /// The log so far: all of it, or its head and tail around a count of
    /// what was left out.
    pub fn text(&self) -> String {
        let log = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let mut text = log.head.clone();
        if log.left_out_lines > 0 {
            text.push_str(&format!(
                "… [{} lines, {} bytes left out] …\n",
                log.left_out_lines, log.left_out_bytes
            ));
        }
        log.tail.iter().for_each(|l| text.push_str(l));
        text
    }
}

/// A running child process.
pub struct ManagedChild {
    what: String,
    /// Whether the harness still owns the child: false once stopped or
    /// detached (`--keep`), when dropping it kills nothing.
    owned: bool,
    pid: Option<i32>,
    /// How the child exited, once it has (a task waits on it from the start).
    exit: watch::Receiver<Option<String>>,
    log: SharedLog,
    lines: mpsc::UnboundedReceiver<String>,
    stderr_pump: Option<tokio::task::JoinHandle<()>>,
}

impl ManagedChild {
    /// Spawns `program` with exactly the environment `env` (plus nothing
    /// inherited), in its own process group, capturing stdout and stderr.
    pub fn spawn(
        what: &str,
        program: &Path,
        args: &[String],
        env: &[(String, String)],
        dir: &Path,
    ) -> Result<Self> {
        let mut std_cmd = std::process::Command::new(program);
        std_cmd
            .args(args)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        // Killed by the kernel if the harness dies without a teardown.
        crate::lifeline::tie(&mut std_cmd, Signal::SIGKILL);
        // No kill_on_drop: the exit watcher owns the handle, and `Drop` below
        // kills the whole group (unless `--keep` detached it).
        let mut cmd = Command::from(std_cmd);
        // Forked from the lifeline thread, inside this runtime so that tokio
        // reaps the child.
        let runtime = tokio::runtime::Handle::current();
        let spawned = crate::lifeline::spawn_tied(move || {
            let _entered = runtime.enter();
            cmd.spawn()
        });
        let mut child = spawned.map_err(|e| {
            HarnessError::process(what, format!("cannot start {}: {e}", program.display()))
        })?;
        let pid = child.id().map(|p| p as i32);
        if let Some(pid) = pid {
            crate::lifeline::own_group(pid);
        }
        let log = SharedLog::default();
        let (tx, lines) = mpsc::unbounded_channel();
        if let Some(out) = child.stdout.take() {
            tokio::spawn(pump(out, "stdout", log.clone(), Some(tx)));
        }
        let stderr_pump = child
            .stderr
            .take()
            .map(|err| tokio::spawn(pump(err, "stderr", log.clone(), None)));
        let (exited, exit) = watch::channel(None);
        tokio::spawn(async move {
            let status = match child.wait().await {
                Ok(status) => status.to_string(),
                Err(e) => format!("unknown status ({e})"),
            };
            let _ = exited.send(Some(status));
        });
        Ok(ManagedChild {
            what: what.to_owned(),
            owned: true,
            pid,
            exit,
            log,
            lines,
            stderr_pump,
        })
    }

    /// The child's process id.
    pub fn pid(&self) -> Option<i32> {
        self.pid
    }

    /// The captured output.
    pub fn log(&self) -> SharedLog {
        self.log.clone()
    }

    /// Resolves when the child has exited, with its status (`exit status:
    /// 3`, `signal: 9 (SIGKILL)`); never while it runs.
    pub fn exited(&self) -> impl std::future::Future<Output = String> + Send + 'static {
        let mut exit = self.exit.clone();
        async move {
            let status = exit
                .wait_for(Option::is_some)
                .await
                .map(|status| status.clone().unwrap_or_default());
            match status {
                Ok(status) => status,
                // The watcher is gone only with the runtime: nothing to say.
                Err(_) => std::future::pending().await,
            }
        }
    }

    /// Why the child is gone, with its last output lines: what a failure
    /// reports when it exits while it is needed.
    pub async fn exit_report(&mut self, status: &str) -> String {
        // Let stderr's pump finish the log, which usually holds the reason.
        if let Some(pump) = self.stderr_pump.take() {
            let _ = tokio::time::timeout(Duration::from_secs(1), pump).await;
        }
        format!(
            "{} exited ({status}); its last output:\n{}",
            self.what,
            tail(&self.log.text())
        )
    }

    /// Waits for a stdout line starting with `prefix` and returns the rest of
    /// it, trimmed. Fails when the child exits first (even while a process it
    /// left behind holds its stdout open) or `timeout` passes; the error
    /// carries the log tail, which is usually the reason.
    pub async fn wait_for_line(&mut self, prefix: &str, timeout: Duration) -> Result<String> {
        let deadline = tokio::time::Instant::now() + timeout;
        let exited = self.exited();
        tokio::pin!(exited);
        loop {
            let next = tokio::select! {
                biased;
                next = tokio::time::timeout_at(deadline, self.lines.recv()) => next,
                status = &mut exited => {
                    // What it printed before exiting still counts: take what
                    // the pump delivers within a second.
                    let drained = tokio::time::sleep(Duration::from_secs(1));
                    tokio::pin!(drained);
                    loop {
                        tokio::select! {
                            biased;
                            line = self.lines.recv() => match line {
                                Some(line) => if let Some(rest) = line.trim().strip_prefix(prefix) {
                                    return Ok(rest.trim().to_owned());
                                },
                                None => break,
                            },
                            () = &mut drained => break,
                        }
                    }
                    let report = self.exit_report(&status).await;
                    return Err(HarnessError::process(
                        &self.what,
                        format!("exited before printing `{prefix}`: {report}"),
                    ));
                }
            };
            match next {
                Ok(Some(line)) => {
                    if let Some(rest) = line.trim().strip_prefix(prefix) {
                        return Ok(rest.trim().to_owned());
                    }
                }
                Ok(None) => {
                    // Stdout closed: let stderr's pump finish the log, which
                    // usually holds the reason.
                    if let Some(pump) = self.stderr_pump.take() {
                        let _ = tokio::time::timeout(Duration::from_secs(2), pump).await;
                    }
                    return Err(HarnessError::process(
                        &self.what,
                        format!(
                            "exited before printing `{prefix}`; its output:\n{}",
                            tail(&self.log.text())
                        ),
                    ));
                }
                Err(_) => {
                    return Err(HarnessError::process(
                        &self.what,
                        format!(
                            "did not print `{prefix}` within {timeout:?}; its output:\n{}",
                            tail(&self.log.text())
                        ),
                    ));
                }
            }
        }
    }

    /// Stops the child: SIGTERM to its group, then SIGKILL after `grace`
    /// (at once for a zero grace). Returns whether it exited within
    /// `grace` (true for a child stopped already).
    pub async fn stop(&mut self, grace: Duration) -> bool {
        if !std::mem::replace(&mut self.owned, false) {
            return true;
        }
        if let Some(pid) = self.pid {
            let _ = killpg(Pid::from_raw(pid), Signal::SIGTERM);
        }
        let clean = tokio::time::timeout(grace, self.exited()).await.is_ok();
        if !clean {
            if let Some(pid) = self.pid {
                let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
            }
            // SIGKILL cannot be refused; the bound is for a stuck runtime.
            let _ = tokio::time::timeout(Duration::from_secs(5), self.exited()).await;
        }
        // Whatever the leader left in its group goes too.
        if let Some(pid) = self.pid {
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
            crate::lifeline::disown_group(pid);
        }
        clean
    }

    /// Lets the child run on after the harness exits (`--keep`).
    pub fn detach(&mut self) {
        // The child lives on in its own process group.
        self.owned = false;
        if let Some(pid) = self.pid {
            crate::lifeline::disown_group(pid);
        }
    }
}

impl Drop for ManagedChild {
    fn drop(&mut self) {
        if self.owned
            && let Some(pid) = self.pid
        {
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
            crate::lifeline::disown_group(pid);
        }
    }
}

/// Reads `reader` line by line, each line bounded by [`LINE_LIMIT`]: a
/// longer one is passed on cut, at once (output that never prints a newline
/// still shows), and the rest of it dropped up to its newline.
async fn pump<R: tokio::io::AsyncRead + Unpin>(
    reader: R,
    stream: &'static str,
    log: SharedLog,
    lines: Option<mpsc::UnboundedSender<String>>,
) {
    let emit = |line: &[u8], cut: bool| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let mut text = String::from_utf8_lossy(line).into_owned();
        if cut {
            text.push_str(&format!("… [line longer than {LINE_LIMIT} bytes, cut]"));
        }
        log.push_line(stream, &text);
        if let Some(tx) = &lines {
            let _ = tx.send(text);
        }
    };
    let mut reader = BufReader::new(reader);
    let (mut line, mut skipping) = (Vec::new(), false);
    loop {
        let buf = match reader.fill_buf().await {
            Ok(buf) if !buf.is_empty() => buf,
            _ => break,
        };
        let newline = buf.iter().position(|b| *b == b'\n');
        let piece = &buf[..newline.unwrap_or(buf.len())];
        if !skipping {
            let room = LINE_LIMIT - line.len();
            line.extend_from_slice(&piece[..piece.len().min(room)]);
            if piece.len() > room {
                emit(&line, true);
                line.clear();
                skipping = true;
            }
        }
        let used = newline.map_or(buf.len(), |n| n + 1);
        reader.consume(used);
        if newline.is_some() {
            if !skipping {
                emit(&line, false);
            }
            line.clear();
            skipping = false;
        }
    }
    if !line.is_empty() {
        emit(&line, false);
    }
}

/// The last lines of a log, enough to see why a process died.
pub fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    let start = lines.len().saturating_sub(30);
    lines[start..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, env: &[(String, String)]) -> ManagedChild {
        ManagedChild::spawn(
            "test child",
            Path::new("/bin/sh"),
            &["-c".into(), script.into()],
            env,
            Path::new("/"),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn a_child_sees_only_the_environment_it_is_given() {
        let mut child = sh(
            "env; echo done",
            &[("ONLY_THIS".to_owned(), "1".to_owned())],
        );
        child
            .wait_for_line("done", Duration::from_secs(10))
            .await
            .unwrap();
        let names: Vec<String> = child
            .log()
            .text()
            .lines()
            .filter_map(|l| l.strip_prefix("stdout: "))
            .filter(|l| *l != "done")
            .map(|l| l.split('=').next().unwrap_or("").to_owned())
            .collect();
        // The shell adds PWD (and some add SHLVL and `_`); nothing of ours.
        for name in &names {
            assert!(
                ["ONLY_THIS", "PWD", "SHLVL", "_"].contains(&name.as_str()),
                "inherited variable {name}: {names:?}"
            );
        }
        assert!(names.contains(&"ONLY_THIS".to_owned()));
    }

    #[tokio::test]
    async fn stopping_a_child_kills_its_whole_process_group() {
        let mut child = sh("sleep 60 & echo grandchild $!; wait", &[]);
        let pid: i32 = child
            .wait_for_line("grandchild", Duration::from_secs(10))
            .await
            .unwrap()
            .parse()
            .unwrap();
        let alive = |pid: i32| {
            std::fs::read_to_string(format!("/proc/{pid}/status"))
                .map(|s| !s.contains("zombie"))
                .unwrap_or(false)
        };
        assert!(alive(pid));
        child.stop(Duration::from_secs(2)).await;
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while alive(pid) && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(!alive(pid), "grandchild {pid} survived");
    }

    #[tokio::test]
    async fn stop_says_whether_the_child_heeded_sigterm_within_its_grace() {
        let grace = Duration::from_millis(500);
        let mut heeds = sh("echo ready; exec sleep 60", &[]);
        heeds
            .wait_for_line("ready", Duration::from_secs(10))
            .await
            .unwrap();
        assert!(heeds.stop(grace).await, "sleep ends on SIGTERM");
        let mut ignores = sh("trap '' TERM; echo ready; exec sleep 60", &[]);
        ignores
            .wait_for_line("ready", Duration::from_secs(10))
            .await
            .unwrap();
        let started = std::time::Instant::now();
        assert!(!ignores.stop(grace).await, "SIGTERM ignored");
        assert!(started.elapsed() >= grace);
        let status = tokio::time::timeout(Duration::from_secs(5), ignores.exited())
            .await
            .expect("killed after its grace");
        assert!(status.contains("SIGKILL"), "{status}");
    }

    /// The exit is seen even while a process the child left behind holds
    /// its stdout open (no end of output to notice).
    #[tokio::test]
    async fn a_child_that_exits_leaving_its_stdout_open_is_reported_at_once() {
        let mut child = sh("echo 'giving up' >&2; sleep 30 & exit 3", &[]);
        let started = std::time::Instant::now();
        let err = child
            .wait_for_line("core listening on", Duration::from_secs(20))
            .await
            .unwrap_err()
            .to_string();
        assert!(started.elapsed() < Duration::from_secs(5), "{err}");
        assert!(err.contains("exit status: 3"), "{err}");
        assert!(err.contains("giving up"), "{err}");
    }

    #[tokio::test]
    async fn endless_lines_and_logs_are_kept_bounded_with_their_tail() {
        // 2 MiB without a newline, then 2 MiB of short lines, then the last word.
        let mut child = sh(
            "head -c 2097152 /dev/zero | tr '\\0' x; echo; \
             i=0; while [ $i -lt 40000 ]; do echo 'line of fifty bytes, more or less, to fill a log'; i=$((i+1)); done; \
             echo the-end",
            &[],
        );
        child
            .wait_for_line("the-end", Duration::from_secs(60))
            .await
            .unwrap();
        let text = child.log().text();
        assert!(text.len() <= LOG_LIMIT + 200, "{} bytes", text.len());
        assert!(text.contains("line longer than 8192 bytes, cut"));
        assert!(text.lines().all(|l| l.len() < LINE_LIMIT + 100));
        assert!(text.contains("lines, ") && text.contains("bytes left out"));
        assert!(text.ends_with("stdout: the-end\n"), "the tail is kept");
    }

    #[tokio::test]
    async fn a_child_that_exits_early_is_reported_with_its_output() {
        let mut child = sh("echo 'config is broken' >&2; exit 3", &[]);
        let err = child
            .wait_for_line("core listening on", Duration::from_secs(10))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("exited before printing"), "{err}");
        assert!(err.contains("config is broken"), "{err}");
    }
}
