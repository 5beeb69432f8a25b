//! One module per command: each turns its parsed arguments into a
//! library's options and prints the result.
//! None imports another; the run loops live in `testbed`, the studies in
//! `claims`.

pub mod bbr3_signals;
pub mod bench;
pub mod compare;
pub mod conformance;
pub mod emu;
pub mod fuzz;
pub mod jitter_sweep;
pub mod kernel;
pub mod plot;
pub mod quic;
pub mod reproduce;
pub mod search;
pub mod sim;
pub mod stacks;
pub mod tcp;
pub mod udp;
pub mod validate;
