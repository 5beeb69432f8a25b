//! Real runs for bbrlab: real programs over real or emulated paths, and
//! what they need from the machine.
//!
//! The pieces every run uses:
//! - [`child`]: supervised child processes (deadline, stop flag, output
//!   to files, CPU time from `wait4`, why one failed);
//! - [`emu`]: `bbrlab emu` as such a child;
//! - [`emu_log`]: what its logs say of each flow's first packets;
//! - [`emu_path`]: the emulator's path from its flags or a scenario's `[link]`;
//! - [`host`]: the machine's facts (root, the kernel's congestion
//!   controls), one reader each;
//! - [`host_noise`]: the hosts' timing noise `validate --multiflow`
//!   puts on its simulated ACKs;
//! - [`kernel`]: what to say when the BPF controls were not built in;
//! - [`packet_size`]: each source's bytes per data packet;
//! - [`quic_bulk`]: where the QUIC bulk-transfer program is, and its
//!   command lines;
//! - [`signals`]: Ctrl-C and SIGTERM as a flag long runs poll.
//!
//! The run loops of the binary's multi-run commands, each taking plain
//! options (the binary parses its command line into them):
//! - [`compare`]: one scenario on the simulator and on real senders
//!   ([`compare_report`]: its `compare.json`, typed);
//! - [`validate`]: the simulator held to kernel TCP, single-flow and
//!   competing flows;
//! - [`quic`]: the QUIC stacks' controllers through the emulator;
//! - [`jitter_sweep`]: seed 001's jitter sweep on kernel TCP or s2n-quic;
//!
//! These run `bbrlab emu` through [`std::env::current_exe`], so they are
//! meant to be called from the `bbrlab` binary.

pub mod child;
pub mod compare;
pub mod compare_report;
pub mod emu;
pub mod emu_log;
pub mod emu_path;
pub mod host;
pub mod host_noise;
pub mod jitter_sweep;
pub mod kernel;
pub mod kernel_release;
pub mod packet_size;
pub mod quic;
pub mod quic_bulk;
pub mod search_confirm;
pub mod signals;
pub mod sim_bench;
pub mod summaries;
pub mod validate;
