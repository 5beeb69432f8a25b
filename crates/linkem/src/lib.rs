//! # linkem: bbrlab's userspace link emulator
//!
//! Real programs run in two network namespaces joined by TUN devices; one
//! thread forwards the IP packets between them and applies the same link
//! model (`link` crate) as the simulator: rate schedules and traces, the
//! queue (drop-tail or CoDel), random loss, jitter, the policer and ACK
//! aggregation. This machine's kernel has no netem or fq qdisc, so delay,
//! rate and loss are emulated in user space, as mahimahi does.

pub mod forward;
pub mod netns;
pub mod rt;

pub use forward::{
    run, run_io, CsvLog, ErrorHistogram, ForwardConfig, ForwardStats, Log, NoLog, PacketIo,
    PacketRecord, Wait, WaitPlanner, LINK_CSV_HEADER, PACKETS_CSV_HEADER,
};
pub use netns::{
    check_environment, list_ours, reap_stale, Namespace, Topology, Tun, CLIENT_ADDR, SERVER_ADDR,
    TCP_BUFFERS,
};
pub use rt::RealtimeStatus;
