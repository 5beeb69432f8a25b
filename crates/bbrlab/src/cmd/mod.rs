//! One module per command that does more than call a library: each turns
//! its parsed arguments into a library's options and prints the result.
//! None imports another; the run loops live in `testbed`, the studies in
//! `claims`.

pub mod bench;
pub mod emu;
pub mod jitter_sweep;
pub mod kernel;
pub mod sim;
pub mod tcp;
pub mod udp;
