//! Loopback ports chosen before the process that listens on them starts: a
//! consent-mode adapter (its redirect URI is registered first), the
//! PostgreSQL cluster, a container's published port.
//!
//! A port the kernel hands out for `bind(127.0.0.1:0)` and that is closed at
//! once can be handed out again — to another `bind(…:0)`, or as the source
//! port of one of the thousands of connections a run opens — before its user
//! binds it, and that user's start then fails. So these ports come from below
//! the kernel's ephemeral range, where it hands out nothing by itself, one
//! after another from a random start, so that no port is handed out twice by
//! one harness; a port found taken is skipped.

use std::io;
use std::net::TcpListener;
use std::sync::atomic::{AtomicU32, Ordering};

/// A free loopback port that neither the kernel nor this harness will hand
/// out to anyone else.
pub fn unassigned_loopback_port() -> io::Result<u16> {
    let (floor, ceiling) = range();
    if ceiling <= floor {
        return kernel_port();
    }
    static NEXT: AtomicU32 = AtomicU32::new(u32::MAX);
    let width = u32::from(ceiling - floor);
    let _ = NEXT.compare_exchange(
        u32::MAX,
        uuid::Uuid::new_v4().as_u128() as u32 % width,
        Ordering::SeqCst,
        Ordering::SeqCst,
    );
    for _ in 0..256 {
        let port = floor + (NEXT.fetch_add(1, Ordering::SeqCst) % width) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return Ok(port);
        }
    }
    kernel_port()
}

/// The half of the ports below the kernel's ephemeral range (by default
/// 16384–32767), or an empty range if that starts too low to leave room.
fn range() -> (u16, u16) {
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    let floor = (low / 2).max(10_000);
    (floor, low)
}

fn kernel_port() -> io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_lie_below_the_ephemeral_range_and_are_never_handed_out_twice() {
        let (floor, ceiling) = range();
        let ports: Vec<u16> = (0..200)
            .map(|_| unassigned_loopback_port().unwrap())
            .collect();
        assert!(
            ports.iter().all(|p| (floor..ceiling).contains(p)),
            "{ports:?}"
        );
        let mut unique = ports.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), ports.len());
    }
}
