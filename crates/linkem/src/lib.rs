//! # linkem: bbrlab's userspace link emulator
//!
//! Real programs run in two network namespaces joined by TUN devices; one
//! thread forwards the IP packets between them and applies the same link
//! model (`link` crate) as the simulator: rate schedules and traces, the
//! queue (drop-tail, CoDel or a step marker, with or without ECN), random
//! loss, jitter, the policer and ACK aggregation. Where the model marks a
//! packet CE, [`ecn::set_ce`] sets CE in its IPv4 header (and fixes the
//! header checksum); the forwarder passes IPv4 only. This machine's kernel has no netem or fq qdisc, so delay,
//! rate and loss are emulated in user space, as mahimahi does.
//!
//! Why it exists: the simulator shows what the algorithms do in a model;
//! the emulator puts real programs (kernel TCP with `tcp_bbr`, bbrlab's
//! UDP transport, any other program) on a path that means the same thing,
//! so one scenario compares them all.
//!
//! [`selftest`] measures the emulator on this machine against its stated
//! accuracy goals (throughput, release error idle and with every core
//! busy, delay added per round trip): `bbrlab emu --selftest`.
//!
//! # Example
//!
//! Creating the namespaces and TUN devices needs root ([`Topology`]), but
//! the forwarding loop is written against [`PacketIo`], so it runs as
//! well on a simulated clock and fake devices. One IPv4 packet enters the
//! client side of a 10 Mbit/s, 20 ms path and is written out of the server
//! side, never before its 1.2 ms of serialisation and 20 ms of delay are
//! over:
//!
//! ```
//! use link::{units::Size, QueueConfig, RateSchedule, ResolvedDirection};
//! use linkem::{run_io, ForwardConfig, NoLog, PacketIo};
//! use std::io;
//! use std::sync::atomic::{AtomicBool, Ordering};
//!
//! let path = ResolvedDirection {
//!     rate: RateSchedule::Constant(10e6), // bits/s
//!     delay_ns: 20_000_000,
//!     queue: QueueConfig::drop_tail(Size::Packets(100)),
//!     loss: None,
//!     jitter: None,
//!     policer: None,
//!     aggregation: None,
//! };
//! let cfg = ForwardConfig {
//!     forward: path.clone(),
//!     reverse: path,
//!     seed: 1,
//!     sample_interval_ns: 0,
//!     realtime: false,
//!     ports: Vec::new(),
//!     hops: Vec::new(),
//!     delay_schedules: [None, None],
//! };
//!
//! /// Two fake TUN devices on a simulated clock that stop the loop once
//! /// a packet has been written.
//! struct FakeTuns<'a> {
//!     t_ns: u64,
//!     offered: bool,
//!     written: Vec<(usize, u64)>, // (side, when)
//!     stop: &'a AtomicBool,
//! }
//! impl PacketIo for FakeTuns<'_> {
//!     fn now_ns(&mut self) -> u64 {
//!         self.t_ns += 100; // each look at the clock takes a little time
//!         self.t_ns
//!     }
//!     fn recv(&mut self, side: usize, buf: &mut [u8]) -> io::Result<Option<usize>> {
//!         if side == 0 && !self.offered {
//!             self.offered = true;
//!             buf[0] = 0x45; // IPv4
//!             return Ok(Some(1500));
//!         }
//!         Ok(None)
//!     }
//!     fn send(&mut self, side: usize, _packet: &[u8]) -> io::Result<()> {
//!         self.written.push((side, self.t_ns));
//!         self.stop.store(true, Ordering::Relaxed);
//!         Ok(())
//!     }
//!     fn wait(&mut self, ns: u64) -> io::Result<()> {
//!         self.t_ns += ns;
//!         Ok(())
//!     }
//!     fn cpu_ns(&mut self) -> u64 {
//!         0
//!     }
//! }
//!
//! let stop = AtomicBool::new(false);
//! let mut tuns = FakeTuns { t_ns: 0, offered: false, written: Vec::new(), stop: &stop };
//! let stats = run_io(&mut tuns, &cfg, &stop, &mut NoLog)?;
//! assert_eq!(stats.forwarded, [1, 0]); // one packet, client to server
//! let (side, at_ns) = tuns.written[0];
//! assert_eq!(side, 1);
//! assert!(at_ns >= 21_200_000, "written at {at_ns} ns");
//! assert_eq!(stats.release_error.early(), 0);
//! # Ok::<(), io::Error>(())
//! ```

pub mod ecn;
pub mod forward;
pub mod hops;
pub mod netns;
pub mod ports;
pub mod rt;
pub mod selftest;
pub mod stall;

pub use forward::{
    run, run_io, CsvLog, ErrorHistogram, ForwardConfig, ForwardStats, LinkSample, Log, NoLog,
    PacketIo, PacketRecord, Wait, WaitPlanner, LINK_CSV_HEADER, PACKETS_CSV_HEADER,
};
pub use netns::{
    check_environment, list_ours, reap_stale, Namespace, TcpBuffers, Topology, Tun, CLIENT_ADDR,
    SERVER_ADDR, TCP_BUFFERS,
};
pub use rt::RealtimeStatus;
