//! Family 8 (spec §7.8): collaborator removed, repository private, scope reduced.

files! { mid_flow }
