//! Family 5 (spec §7.5): deleted and moved Issues.

files! { deleted_and_moved }
