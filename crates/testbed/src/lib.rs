//! Real runs for bbrlab: real programs over real or emulated paths, and
//! what they need from the machine.
//!
//! - [`child`]: supervised child processes (deadline, stop flag, output
//!   to files, CPU time from `wait4`, why one failed);
//! - [`emu`]: `bbrlab emu` as such a child;
//! - [`host`]: the machine's facts (root, the kernel's congestion
//!   controls), one reader each;
//! - [`quic_bulk`]: where the QUIC bulk-transfer program is;
//! - [`signals`]: Ctrl-C and SIGTERM as a flag long runs poll.
//!
//! The commands that use these (`compare`, `validate`, `quic`, the jitter
//! sweeps, `bench --transport`) stay in the binary for now; moving their
//! run loops here is the rest of the testbed's job.

pub mod child;
pub mod emu;
pub mod host;
pub mod quic_bulk;
pub mod signals;
