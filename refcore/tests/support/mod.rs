//! Shared plumbing of refcore's integration tests: real refcore child
//! processes ([`core`]), an HTTP client for bots and admins ([`client`]), a
//! cookie-holding browser ([`browser`]), per-test fixtures ([`world`]) and
//! the client side of delegated consent ([`oauth`]).

pub mod browser;
pub mod client;
pub mod core;
pub mod oauth;
pub mod world;

/// What every test returns: a failure is a message naming what differed.
pub type TestResult = Result<(), String>;

/// Fails the test with a formatted message unless `cond` holds.
#[macro_export]
macro_rules! check {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!("{} (at {}:{})", format!($($msg)+), file!(), line!()));
        }
    };
}
