//! Family 17 (spec §7.16, §8): the repository grant envelope.

files! { evidence, refusals }
