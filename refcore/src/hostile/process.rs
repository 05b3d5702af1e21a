//! The hostile modes that are process behaviours: at start-up, instead of
//! (or beside) the normal Core.

use std::future::Future;
use std::io::Write;
use std::pin::Pin;
use std::time::Duration;

use super::Mode;

/// What the process does under `mode`: `Some(f)` runs `f` instead of the
/// Core (until the process is stopped); `None` starts the Core as usual,
/// after changing `config` or starting a companion.
pub(super) fn run_instead(
    mode: Mode,
    config: &mut crate::Config,
) -> Option<Pin<Box<dyn Future<Output = ()>>>> {
    let listen = config.listen;
    match mode {
        Mode::NeverListens => Some(Box::pin(std::future::pending())),
        Mode::ExitsAfterListening => {
            println!("core listening on http://{listen}");
            let _ = std::io::stdout().flush();
            std::process::exit(0)
        }
        Mode::Daemonizes => {
            // A double fork into a session of its own: the outer shell
            // exits at once, so the daemon is nobody's child and has left
            // the Core's process group; it starts helpers of its own, out
            // of the Core's directory. Then the Core says it listens and
            // exits 0.
            let _ = std::process::Command::new("/bin/sh")
                .args([
                    "-c",
                    "setsid /bin/sh -c 'cd /; sleep 300 & sleep 300 & sleep 300 & wait' \
                     </dev/null >/dev/null 2>&1 &",
                ])
                .status();
            println!("core listening on http://{listen}");
            let _ = std::io::stdout().flush();
            std::process::exit(0)
        }
        Mode::OtherPort => {
            config
                .listen
                .set_port(listen.port().wrapping_add(1).max(1024));
            None
        }
        Mode::NoNewline => Some(Box::pin(async {
            // About 4 MiB/s of output that never ends its first line.
            let _ = tokio::task::spawn_blocking(|| {
                let chunk = vec![b'x'; 64 * 1024];
                let mut out = std::io::stdout().lock();
                while out.write_all(&chunk).is_ok() {
                    let _ = out.flush();
                    std::thread::sleep(Duration::from_millis(15));
                }
            })
            .await;
        })),
        Mode::LogFlood => {
            // 16 MiB/s of log lines on stderr beside an otherwise honest Core.
            std::thread::spawn(|| {
                let line = format!("hostile log flood {}\n", "x".repeat(1000));
                let per_tick = 16 * 1024 * 1024 / 100 / line.len();
                loop {
                    let mut err = std::io::stderr().lock();
                    for _ in 0..per_tick {
                        if err.write_all(line.as_bytes()).is_err() {
                            return;
                        }
                    }
                    drop(err);
                    std::thread::sleep(Duration::from_millis(10));
                }
            });
            None
        }
        Mode::NotHttp => Some(Box::pin(async move {
            let Ok(listener) = tokio::net::TcpListener::bind(listen).await else {
                return;
            };
            println!("core listening on http://{listen}");
            let _ = std::io::stdout().flush();
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    use tokio::io::AsyncWriteExt;
                    let _ = socket
                        .write_all(b"SSH-2.0-hostile not http at all\r\n\x00\xff")
                        .await;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                });
            }
        })),
        _ => None,
    }
}
