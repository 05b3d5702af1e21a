//! Family 9 (spec §7.9): faults between adapter and Core.

files! { transport, success_answers, error_answers }
