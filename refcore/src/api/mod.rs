//! The JSON API under `/api`: one file per resource, handlers named
//! `resource_action`, each only translating HTTP to a [`crate::service`]
//! call and back.

pub(crate) mod edges;
pub mod grants;
pub mod issues;
pub mod meta;
pub mod oauth;
pub mod pagination;
pub mod setup;
