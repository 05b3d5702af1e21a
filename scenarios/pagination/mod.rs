//! Family 2 (spec §7.2): 31 grants, totals, `Link`, clamped pages.

files! { pages }
