//! The competing-flow matrix: its paths (bottleneck, buffer, flows with
//! their extra delays and starts), the quick subset, and each path's
//! emulator and simulator setups.

use super::*;

/// The bottleneck's queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    /// Drop-tail, the buffer's packets long.
    DropTail,
    /// CoDel (RFC 8289 defaults) marking ECN-capable packets CE; every
    /// flow is ECN-capable (the emulator's `--tcp-ecn`, the simulator's
    /// `ecn = true`).
    CodelEcn,
}

pub use crate::host_noise::{HostNoise, HOST_NOISE};

/// One flow of a path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Flow {
    /// Kernel name: `bbr`, `cubic`, or [`BBR3_KERNEL`] (the simulator's
    /// `bbr3`, linux-v3 with the stock kernel's signals).
    pub cc: &'static str,
    /// When it starts, as a fraction of the run (rounded to whole
    /// seconds), so `--seconds` keeps the staggering's shape.
    pub start_frac: f64,
    /// Round-trip delay added to this flow only, ms (half each way).
    pub extra_rtt_ms: f64,
}

impl Flow {
    const fn at_once(cc: &'static str) -> Flow {
        Flow {
            cc,
            start_frac: 0.0,
            extra_rtt_ms: 0.0,
        }
    }
}

/// One competing-flow path.
#[derive(Clone, Debug, PartialEq)]
pub struct MultiPath {
    /// Short label, for directories and `--only`.
    pub name: String,
    /// Bottleneck rate, Mbit/s (both directions).
    pub rate_mbit: f64,
    /// The base round trip, ms (before each flow's extra delay).
    pub rtt_ms: f64,
    /// Buffer in BDPs of the base round trip.
    pub buffer_bdp: f64,
    /// The bottleneck's queue discipline.
    pub queue: Queue,
    /// The flows, in port order (5201, 5202, …).
    pub flows: Vec<Flow>,
}

/// The path: 20 Mbit/s, 40 ms.
pub(super) const RATE_MBIT: f64 = 20.0;

pub(super) const RTT_MS: f64 = 40.0;

/// The buffers of issue 31's table, in BDPs.
pub const BUFFERS_BDP: &[f64] = &[0.5, 1.0, 2.0, 4.0, 8.0, 16.0];

/// The simulator's runs per repetition (`--sim-draws`), each with its
/// own seed, every flow started when the repetition's kernel flow sent its
/// SYN ([`MultiPath::sim_starts_us`]); the simulator's figures are the
/// median over the draws.
///
/// Why draws: who wins a competing-flow run is often decided in its first
/// seconds, by whether one round's bandwidth sample crosses a threshold
/// (STARTUP's 1.25×, a loss round's 2 %), and the kernel's runs are
/// random draws of that: Linux's BBR enters PROBE_BW at a random phase of
/// its gain cycle on every connection (`bbr_reset_probe_bw_mode()`),
/// BBRv3 draws how long to wait before probing (`bbr_pick_probe_wait()`),
/// and the kernel's timers jitter. One seed's simulation is one draw that
/// never varies, so the simulator's typical outcome is the median over
/// several seeds.
///
/// Why the kernel's own start times, not start phases: the kernel's flows
/// send their SYNs microseconds to milliseconds apart (the emulator's
/// packet log, every repetition of the paths whose flows start together:
/// within 0.35 ms, most within 0.01 ms, on a quiet machine; 6 µs to
/// 4.4 ms on a busy one), in either order, and the order and gap are one
/// more thing a run turns on. Until 2026-12-01 the
/// simulator moved the later flows through one base round trip instead
/// (±20 ms, ten phases), which made starts the kernel never has: on
/// `bbr-rtt-10-50ms-1bdp` the long-RTT flow then often left STARTUP at
/// 0.8 s with 2–3 Mbit/s, which needs its SYN about 0.35 ms or more away
/// from the other's, and the simulated short flow got 0.71–0.82 of the
/// link against the kernel's 0.52 (Validation chapter). A kernel run
/// logged before the emulator named each packet's ports gives no SYN
/// times; its flows start at their scheduled times.
///
/// Ten draws cost ten simulations of a second or less each.
pub const DRAWS: usize = 10;

/// The paths `--quick` runs (CI): BBR against CUBIC where the share is
/// most sensitive to the model (2 BDP), RTT unfairness in a shallow
/// buffer, and the CUBIC control; 20 s each, about 90 s in all.
pub const QUICK: &[&str] = &[
    "bbr-vs-cubic-2bdp",
    "bbr-rtt-10-50ms-1bdp",
    "cubic-vs-cubic-2bdp",
];

pub(super) fn path(name: String, buffer_bdp: f64, queue: Queue, flows: Vec<Flow>) -> MultiPath {
    MultiPath {
        name,
        rate_mbit: RATE_MBIT,
        rtt_ms: RTT_MS,
        buffer_bdp,
        queue,
        flows,
    }
}

/// A buffer in BDPs as a name: 0.5 → `0.5bdp`, 2 → `2bdp`.
pub(super) fn bdp_name(b: f64) -> String {
    format!("{b}bdp")
}

/// The competing-flow matrix, all on 20 Mbit/s / 40 ms: `bbr` and
/// `bbrlab_bbr3` against `cubic` by buffer (0.5–16 BDP); two `bbr` flows
/// with 10 and 50 ms extra RTT in a shallow (1 BDP) and a deep (8 BDP)
/// buffer; four `bbr` flows starting a sixth of the run apart; `cubic`
/// against `cubic` as the control; `bbrlab_bbr3` and `cubic` with ECN on a
/// CoDel-ECN queue.
pub fn matrix() -> Vec<MultiPath> {
    let mut m = Vec::new();
    for lead in ["bbr", BBR3_KERNEL] {
        let short = if lead == BBR3_KERNEL { "bbr3" } else { lead };
        for &b in BUFFERS_BDP {
            m.push(path(
                format!("{short}-vs-cubic-{}", bdp_name(b)),
                b,
                Queue::DropTail,
                vec![Flow::at_once(lead), Flow::at_once("cubic")],
            ));
        }
    }
    for b in [1.0, 8.0] {
        let rtt = |ms| Flow {
            extra_rtt_ms: ms,
            ..Flow::at_once("bbr")
        };
        m.push(path(
            format!("bbr-rtt-10-50ms-{}", bdp_name(b)),
            b,
            Queue::DropTail,
            vec![rtt(10.0), rtt(50.0)],
        ));
    }
    m.push(path(
        "4bbr-staggered-2bdp".into(),
        2.0,
        Queue::DropTail,
        (0..4)
            .map(|k| Flow {
                start_frac: k as f64 / 6.0,
                ..Flow::at_once("bbr")
            })
            .collect(),
    ));
    m.push(path(
        "cubic-vs-cubic-2bdp".into(),
        2.0,
        Queue::DropTail,
        vec![Flow::at_once("cubic"), Flow::at_once("cubic")],
    ));
    m.push(path(
        "bbr3-vs-cubic-codel-ecn".into(),
        8.0,
        Queue::CodelEcn,
        vec![Flow::at_once(BBR3_KERNEL), Flow::at_once("cubic")],
    ));
    m
}

/// The matrix's paths with these names, in the order given; an unknown
/// name is an error that lists the matrix.
pub fn paths_named(names: &[String]) -> Result<Vec<MultiPath>, String> {
    let all = matrix();
    names
        .iter()
        .map(|n| {
            all.iter().find(|p| p.name == *n).cloned().ok_or_else(|| {
                format!(
                    "--only: no competing-flow path `{n}`; --multiflow has: {}",
                    all.iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
        })
        .collect()
}

impl MultiPath {
    /// The buffer in 1500-byte packets (as single-flow validate sizes it).
    pub fn queue_packets(&self) -> u64 {
        crate::validate::buffer_packets(self.rate_mbit, self.rtt_ms, self.buffer_bdp)
    }

    /// When each flow starts (sends its SYN) in the simulator, µs from
    /// the run's start: when the kernel's flow sent its SYN, from the
    /// emulator's packet log (`kernel_syn_ns`, on the emulator's clock;
    /// the earliest SYN is the run's start), or, for a kernel run logged
    /// without ports, its scheduled start. Its data follows when its
    /// SYN-ACK arrives, one round trip of its own path later plus any
    /// queue the SYN met, as the kernel's does.
    pub fn sim_starts_us(&self, seconds: u64, kernel_syn_ns: Option<&[u64]>) -> Vec<u64> {
        match kernel_syn_ns {
            Some(syn) => {
                let first = syn.iter().copied().min().unwrap_or(0);
                // To the microsecond: the kernel's gaps are 10 µs and up.
                syn.iter().map(|t| (t - first + 500) / 1000).collect()
            }
            None => self
                .starts(seconds)
                .into_iter()
                .map(|s| s * 1_000_000)
                .collect(),
        }
    }

    /// Each flow's start, whole seconds into a run of `seconds`.
    pub(super) fn starts(&self, seconds: u64) -> Vec<u64> {
        self.flows
            .iter()
            .map(|f| (f.start_frac * seconds as f64).round() as u64)
            .collect()
    }

    /// What the simulator's and the emulator's files share: the header
    /// and the `[link]` tables.
    pub(super) fn base(&self, seconds: u64, seed: u64) -> ScenarioBuilder {
        let queue = match self.queue {
            Queue::DropTail => builder::Queue::packets(self.queue_packets()),
            Queue::CodelEcn => builder::Queue::packets(self.queue_packets()).codel().ecn(),
        };
        ScenarioBuilder::new(self.one_way().queue(queue))
            .comment(&format!(
                "Written by `bbrlab validate --multiflow` for path {}.",
                self.name
            ))
            .name(&format!("validate-mf-{}", self.name))
            .duration(Duration::from_secs(seconds))
            .sample_interval(Duration::from_millis(10))
            .seed(seed)
            .reverse(self.reverse_direction())
    }

    /// The ACKs' way back: the bottleneck's rate, no queue limit, half
    /// the round trip.
    fn reverse_direction(&self) -> Direction {
        self.one_way()
    }

    /// Either way of the path without its queue: the bottleneck's rate
    /// (whole kbit/s) and half the round trip.
    fn one_way(&self) -> Direction {
        let rate_bps = (self.rate_mbit * 1000.0).round() * 1e3;
        Direction::new()
            .rate_bps(rate_bps)
            .delay(millis(self.rtt_ms / 2.0))
    }

    /// The simulator's scenario: the flows with the kernel's packet size
    /// (`size`), TCP's SYN exchange, their start times (`starts_us`,
    /// [`MultiPath::sim_starts_us`]) and extra delays, paced by `pacer`
    /// (Linux's: BBR in TSO-sized bursts, CUBIC not paced,
    /// [`crate::validate::sim_pacing`]; or one packet at a time, `validate
    /// --sim-pacing exact`), and the hosts' timing noise on the ACKs' way
    /// back ([`HostNoise`]; `None`: none).
    #[allow(clippy::too_many_arguments)]
    pub fn scenario_toml(
        &self,
        seconds: u64,
        seed: u64,
        size: crate::packet_size::PacketSize,
        receiver: SimReceiver,
        starts_us: &[u64],
        noise: Option<HostNoise>,
        pacer: crate::validate::SimPacer,
    ) -> String {
        let ack = receiver.ack;
        let mut b = self.base(seconds, seed);
        if let Some(n) = noise {
            b = b.reverse(self.reverse_direction().jitter(&n.jitter()));
        }
        let ecn = self.queue == Queue::CodelEcn;
        for (f, &start_us) in self.flows.iter().zip(starts_us) {
            let mut flow = crate::validate::sim_flow(f.cc)
                .handshake("tcp")
                .initial_burst(crate::compare::LINUX_INITIAL_BURST)
                .start(Duration::from_micros(start_us))
                .extra_rtt(millis(f.extra_rtt_ms))
                .packet(size.payload, u64::from(size.header))
                .pacing(pacer.pacing(f.cc))
                // Linux defers to fill a TSO packet; one packet at a
                // time, there is none to fill.
                .tso_defer(pacer == crate::validate::SimPacer::Linux)
                .ack(ack)
                .ecn(ecn);
            // Linux's receiver grows its window by the rule of the kernel
            // the runs were made on.
            if ack == "linux" {
                flow = flow.rcv_autotuning(receiver.rcv_autotuning);
            }
            b = b.flow(flow);
        }
        b.to_toml()
    }

    /// The emulator's path: the same `[link]` and, for each flow with an
    /// extra delay, a `[[link.ports]]` rule on its receiver's port adding
    /// half of it each way.
    pub fn emu_toml(&self, seconds: u64, seed: u64) -> String {
        let mut b = self.base(seconds, seed);
        for (k, f) in self.flows.iter().enumerate() {
            if f.extra_rtt_ms > 0.0 {
                let half = Direction::new().delay(millis(f.extra_rtt_ms / 2.0));
                b = b.port(PORT + k as u16, half.clone(), half);
            }
        }
        b.to_toml()
    }

    /// The receivers' and senders' shell commands for the emulator: one
    /// `tcp recv` per port in the server namespace; in the client one
    /// `tcp send` per flow, each after its start delay and sending until
    /// the run's end, logging to `dir/kernel-flow-K.csv`. The client's
    /// status is 1 when any sender failed.
    pub(super) fn commands(&self, exe: &Path, seconds: u64, dir: &Path) -> (String, String) {
        let exe = exe.display();
        let mut server = String::new();
        let mut client = String::new();
        for (k, (f, start)) in self.flows.iter().zip(self.starts(seconds)).enumerate() {
            let port = PORT + k as u16;
            server.push_str(&format!("{exe} tcp recv --listen {{server}}:{port} & "));
            let send = format!(
                "{exe} tcp send --to {{server}}:{port} --cc {} --duration {}s --interval 10ms --log {}",
                f.cc,
                seconds - start,
                dir.join(format!("kernel-flow-{k}.csv")).display()
            );
            if start == 0 {
                client.push_str(&format!("{send} & p{k}=$!; "));
            } else {
                client.push_str(&format!("(sleep {start} && exec {send}) & p{k}=$!; "));
            }
        }
        server.push_str("wait");
        client.push_str("s=0; ");
        for k in 0..self.flows.len() {
            client.push_str(&format!("wait $p{k} || s=1; "));
        }
        client.push_str("exit $s");
        (server, client)
    }
}

/// The simulated receiver of a competing-flow path: `--sim-ack`'s policy
/// and, for Linux's (`"linux"`), the receive-buffer rule of the kernel the
/// runs it is matched to were made on ([`crate::kernel_release`]).
#[derive(Clone, Copy, Debug)]
pub struct SimReceiver<'a> {
    /// The receiver policy (`ack`).
    pub ack: &'a str,
    /// Linux's `rcv_autotuning` rule (`"6.16"` or `"pre-6.16"`).
    pub rcv_autotuning: &'a str,
}

impl<'a> SimReceiver<'a> {
    /// `ack` with the running kernel's rule, for runs made now.
    pub fn running(ack: &'a str) -> Self {
        SimReceiver {
            ack,
            rcv_autotuning: crate::validate::linux_rcv_autotuning(),
        }
    }
}
