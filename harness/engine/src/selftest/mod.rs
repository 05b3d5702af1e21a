//! `grantgate selftest`: proves the catalogue catches broken releases.
//!
//! A release gate is only as good as the broken releases it stops. `refcore`
//! and `awg-mcp` built with their `faults` feature carry named faults
//! (`docs/faults.md`), each breaking one rule of the contract. The self-test
//! runs the catalogue cleanly, then once per fault, and writes the kill
//! matrix: fault × trials that failed. Then it runs the catalogue against
//! every honest variant of the Core, each of which must pass (compatible
//! variants together in one Core, a refused group again one by one). It
//! passes only when the clean pass is green, every fault is killed and every
//! honest variant passed.
//!
//! - [`faults`] asks the binaries for their faults and decides each one's
//!   backends;
//! - [`variants`] asks the Core for its honest variants;
//! - [`run`] runs the passes and writes the files;
//! - [`matrix`] turns the run reports into the matrix (pure);
//! - [`render`] renders it (pure, like the run report's writers);
//! - [`hostile`] is the hostile pass (`--hostile`): the gate, as a child
//!   process, against Cores broken badly on purpose, measured from outside.

pub mod faults;
pub mod hostile;
pub mod matrix;
pub mod render;
pub mod run;
pub mod variants;
