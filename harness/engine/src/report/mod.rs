//! Reports: every format is a pure function of the [`model::RunReport`] and
//! the secret registry, written last, then hashed into a manifest, then the
//! whole directory is scanned for registered secrets.
//!
//! Layout of `reports/<run-id>/`: `junit.xml`, `report.json`, `index.html`,
//! `manifest.json`.

pub mod coverage;
pub mod diff;
pub mod gate;
pub mod html;
pub mod invocation;
pub mod json;
pub mod judged;
pub mod junit;
pub mod manifest;
pub mod merge;
pub mod model;
pub mod paths;
pub mod words;
pub mod write;

pub use write::{write_all, write_files};
