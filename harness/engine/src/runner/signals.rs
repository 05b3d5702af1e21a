//! SIGINT and SIGTERM become a cancellation token, honoured whatever the
//! trials are doing. Once installed the process no longer dies on those
//! signals: the runner aborts its trials, tears every stack down, writes the
//! report and exits 130.
//!
//! Why a thread of its own rather than tokio's signal streams: those are
//! polled by a runtime worker, and a worker stuck in synchronous work (a
//! pathological page being parsed) would leave the signal unread. Here the
//! handler only writes a byte to a pipe, and a plain thread reading it
//! cancels the token and then keeps a clock: after [`END_GROUPS_AFTER`] it
//! kills every child group still alive (no teardown waits on a Core that
//! ignores SIGTERM), after [`EXIT_AFTER`] it kills everything and exits 130
//! with or without a report. A second signal exits at once.

use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
use tokio_util::sync::CancellationToken;

/// After a signal, when the children's groups are killed outright.
pub const END_GROUPS_AFTER: Duration = Duration::from_millis(1000);

/// After a signal, when the harness exits whatever the run is doing.
pub const EXIT_AFTER: Duration = Duration::from_secs(5);

/// The pipe's write end, for the handler (-1 before installation).
static WAKE: AtomicI32 = AtomicI32::new(-1);

/// The handler: one async-signal-safe `write`, nothing else.
#[expect(unsafe_code, reason = "a raw fd borrowed in a signal handler")]
extern "C" fn on_signal(_: nix::libc::c_int) {
    let fd = WAKE.load(Ordering::Relaxed);
    if fd >= 0 {
        // SAFETY: the fd is the pipe's write end, kept open for the life of
        // the process; write(2) is async-signal-safe.
        let fd = unsafe { BorrowedFd::borrow_raw(fd) };
        let _ = nix::unistd::write(fd, &[1]);
    }
}

/// Installs the SIGINT and SIGTERM handlers (once per process) and returns
/// the token they cancel.
pub fn cancel_on_signals() -> CancellationToken {
    static TOKEN: OnceLock<CancellationToken> = OnceLock::new();
    TOKEN
        .get_or_init(|| {
            let token = CancellationToken::new();
            if let Err(e) = install(token.clone()) {
                eprintln!("grantgate: cannot catch SIGINT/SIGTERM ({e}); they end the run at once");
            }
            token
        })
        .clone()
}

#[expect(unsafe_code, reason = "sigaction is unsafe by signature")]
fn install(token: CancellationToken) -> nix::Result<()> {
    let (read, write): (OwnedFd, OwnedFd) = nix::unistd::pipe()?;
    WAKE.store(write.as_raw_fd(), Ordering::SeqCst);
    // The write end lives as long as the process.
    std::mem::forget(write);
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for signal in [Signal::SIGINT, Signal::SIGTERM] {
        // SAFETY: the handler is async-signal-safe (one write to a pipe).
        unsafe { sigaction(signal, &action) }?;
    }
    std::thread::Builder::new()
        .name("grantgate-signals".into())
        .spawn(move || watch(read, token))
        .map_err(|_| nix::Error::EAGAIN)?;
    Ok(())
}

/// Reads the pipe: the first signal cancels and starts the clock, a second
/// exits.
fn watch(read: OwnedFd, token: CancellationToken) {
    let mut byte = [0u8; 1];
    loop {
        match nix::unistd::read(read.as_raw_fd(), &mut byte) {
            Ok(1) => break,
            Err(nix::Error::EINTR) => continue,
            _ => return,
        }
    }
    eprintln!(
        "grantgate: interrupted; ending the trials and writing the report \
         (again to exit at once)"
    );
    token.cancel();
    let clock = std::thread::spawn(|| {
        std::thread::sleep(END_GROUPS_AFTER);
        crate::lifeline::end_groups();
        std::thread::sleep(EXIT_AFTER - END_GROUPS_AFTER);
        exit_now("the run did not end in time");
    });
    loop {
        match nix::unistd::read(read.as_raw_fd(), &mut byte) {
            Ok(1) => exit_now("interrupted again"),
            Err(nix::Error::EINTR) => continue,
            _ => break,
        }
    }
    let _ = clock.join();
}

/// Kills every child group and every other child, then exits 130.
fn exit_now(why: &str) -> ! {
    eprintln!("grantgate: {why}; exiting without waiting (exit 130)");
    crate::lifeline::end_groups();
    crate::lifeline::end_orphans(&[]);
    std::process::exit(130)
}
