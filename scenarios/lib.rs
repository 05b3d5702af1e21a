//! The acceptance catalogue: every claim grantgate proves about a Core, one
//! async function each, written with `#[scenario(Family, ...)]` next to the
//! doc comment that is its claim. Every scenario runs on every backend, on a
//! fresh stack. Scenarios see only [`grantgate_engine::prelude`].
//!
//! One folder per family of spec §7 (`browser/`, `pagination/`, ...), its
//! files named for what they hold; `support/` holds what several families
//! share. A family imports only `support/`, its own folder and the prelude.
//! `#[scenario]` registers each scenario itself (a distributed slice in the
//! engine), and [`catalogue`] orders them: by family, then by file in the
//! order the family's `files! { .. }` (its `mod.rs`) names them, then by line.
//! To add a scenario: write it in a file of its family's folder; a new file
//! is also named in that folder's `files! { .. }`. To add a family, see
//! `docs/harness.md` ("Adding a scenario, or a family").

use grantgate_engine::prelude::{Family, Scenario};
use grantgate_engine::runner::registry::{Registration, SCENARIOS};

/// A family folder's files, declared in catalogue order: each a module, and
/// their names as `FILES`, which orders the family's scenarios file by file.
macro_rules! files {
    ($($file:ident),* $(,)?) => {
        $(mod $file;)*
        /// This family's files, in catalogue order.
        pub(crate) const FILES: &[&str] = &[$(stringify!($file)),*];
    };
}

/// The family folders, each with the family its scenarios belong to.
macro_rules! families {
    ($($folder:ident: $family:ident),* $(,)?) => {
        $(pub mod $folder;)*
        /// Each family folder, its family, and its files in catalogue order.
        pub const FOLDERS: &[(&str, Family, &[&str])] =
            &[$((stringify!($folder), Family::$family, $folder::FILES)),*];
    };
}

families! {
    browser: Browser,
    pagination: Pagination,
    lifecycle: Lifecycle,
    replay: Replay,
    tombstones: Tombstones,
    withdrawal: Withdrawal,
    boundaries: Boundaries,
    access_loss: AccessLoss,
    adapter_faults: AdapterFaults,
    privilege: Privilege,
    authority: Authority,
    sessions: Sessions,
    adapter_inputs: AdapterInputs,
    concurrency: Concurrency,
    exact_replay: ExactReplay,
    envelope: Envelope,
    consent: Consent,
    grammars: Grammars,
    explore: Exploration,
}

mod support;

/// Every scenario `#[scenario]` registered, in the order of spec §7: by
/// family, then by file as the family's folder names them, then by line
/// (backend parity, line 11, is the engine's `parity::` trial over every
/// scenario marked `parity`).
pub fn catalogue() -> Vec<Scenario> {
    let mut registered: Vec<(Scenario, (usize, &str, u32))> = (SCENARIOS.iter())
        .map(|r| ((r.scenario)(), (file_rank(r), r.module, r.line)))
        .collect();
    registered.sort_by_key(|(s, place)| (s.family, *place));
    registered.into_iter().map(|(s, _)| s).collect()
}

/// Where a scenario's file comes in its folder's `files! { .. }`
/// (`usize::MAX` for a module no folder names, which a test refuses).
pub fn file_rank(r: &Registration) -> usize {
    let mut path = r.module.split("::").skip(1);
    let (folder, file) = (path.next(), path.next());
    (FOLDERS.iter())
        .find(|(f, _, _)| Some(*f) == folder)
        .and_then(|(_, _, files)| files.iter().position(|f| Some(*f) == file))
        .unwrap_or(usize::MAX)
}
