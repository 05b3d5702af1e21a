//! Family 14 (spec §7.14): the adapter's whole input rule.

files! { input_rule, tools }
