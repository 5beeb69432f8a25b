//! The discrete-event loop.
//!
//! Events sit in an [`EventQueue`] ordered by (time, insertion sequence);
//! the sequence breaks ties, so a run is a pure function of its
//! configuration and seed. Packet arrivals ride its FIFO lanes. Timers
//! (pacing, loss detection, delayed ACKs) are lazy: each flow remembers the
//! one instant it wants to be woken, and an event that no longer matches
//! that instant is skipped when popped, so rescheduling never searches the
//! queue.

mod ack_slab;
mod flows;
mod packet_trace;
mod path;
mod report;

use crate::config::SimConfig;
use crate::event_queue::EventQueue;
use crate::record::{FlowSample, FlowSummary, HopSummary, LinkSample, Recorder, Summary};
use crate::stats::jain_index;
use crate::workload::{
    ArrivalProcess, CrossKind, CrossSummary, FctRecord, FctStats, Periods, Workload,
};
use congestion::Instant;
use link::{Direction, Release, ScheduledDelay, Verdict};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};
use sender::{Ack, AckAction, Ecn, Receiver, SendDecision, Sender, TcpFlags};
use std::collections::{HashMap, VecDeque};
use std::io;
use std::time::Duration;

/// Events the engine handles at one simulated instant before it calls
/// the run a livelock: far above any real burst (a 10 Gbit/s link's
/// aggregated ACKs or thousands of flows arriving together are thousands
/// of events), reached in about a second of wall time by a loop.
pub const MAX_EVENTS_AT_ONE_INSTANT: u64 = 20_000_000;

/// Why the engine stopped a run that could not go on (a livelock, a
/// runaway window): the error inside the `io::Error` it returns, so a
/// caller tells it from a recorder's failure to write.
#[derive(Debug)]
pub struct RunStopped(pub String);

impl std::fmt::Display for RunStopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RunStopped {}

/// Bytes one flow may have in flight before the run is stopped: 2^33
/// (8.6 GB), over five times the most any path within the scenario limits
/// holds (10^6 packets of 1,500 B); only a runaway window (a wrapped
/// counter) gets there, and each packet in flight is a record in memory.
pub const MAX_INFLIGHT_BYTES: u64 = 1 << 33;

/// Events between two [`crate::Recorder::heartbeat`] calls (a power of
/// two, so the test is a mask).
pub const HEARTBEAT_EVENTS: u64 = 1 << 16;

/// On-the-wire size of an ACK (TCP/IP headers with SACK and timestamps).
pub const ACK_BYTES: u32 = 60;

/// On-the-wire size of a SYN and of a SYN-ACK: IPv4 and TCP with a SYN's
/// options (MSS, SACK-permitted, timestamps, window scale), 20 + 20 + 20.
const SYN_BYTES: u32 = 60;

/// The packet number a SYN travels under on the data path: no data
/// packet ever has it (numbers count up from 0 per flow).
const SYN_PN: u64 = u64::MAX;

/// The first SYN's retransmission timeout, doubled on each retry (Linux
/// `TCP_TIMEOUT_INIT`, RFC 6298 §2.1).
const SYN_TIMEOUT_NS: u64 = 1_000_000_000;

/// Event-queue lane for data arrivals at receivers.
const LANE_DATA: usize = 0;
/// Event-queue lane for ACK arrivals at senders.
const LANE_ACK: usize = 1;
/// Event-queue lane for senders' pacing wake-ups: one flow's come in
/// time order, so with one flow (or flows in step) nearly all skip the
/// heap; out-of-order ones fall back to it and pop at the same point.
const LANE_WAKE: usize = 2;
/// Event-queue lane for receivers' delayed-ACK timers, each set a fixed
/// delay after the segment that armed it, so they too come in order.
const LANE_DELACK: usize = 3;

/// Flow slots are reused once a generated flow completes; an event names
/// its slot and the slot's generation, and one whose generation no longer
/// matches belongs to a finished flow and is ignored. A u16 wraps only
/// after 65,536 reuses of one slot: far more than can happen while a
/// stale packet or ACK is in flight (each reuse is a whole flow, at least
/// one RTT), and a stale timer would also have to match the new flow's
/// timer instant to the nanosecond. Listed flows keep generation 0 and
/// their slots, so their events are exactly what they were.
type Gen = u16;

/// Flow keys of cross-traffic sources start here, above every
/// (slot, generation) key of a sender.
const CROSS_KEY_BASE: u64 = 1 << 48;

#[derive(Clone, Copy, Debug)]
enum Kind {
    Wake(u32, Gen),
    Timer(u32, Gen),
    DelayedAck(u32, Gen),
    /// A data packet reaches its receiver.
    ///
    /// Its fields, and `DataHop`'s, are listed in the variant rather than
    /// held in one struct shared with `Payload::Data`, though they are the
    /// same: a variant holding a 32-byte struct is 40 bytes with its tag,
    /// where listed fields share their first word with it and an event
    /// stays 32. With the struct, one `cubic` flow ran 1.2 % more
    /// instructions (302.5 M against 298.8 M), and 2.3 % more when `Data`
    /// and `DataHop` were one variant whose tag went into the ECN field's
    /// spare values (305.6 M; Callgrind, the speed guard's paths,
    /// 2026-12-06).
    Data {
        flow: u32,
        gen: Gen,
        pn: u64,
        chunk: u64,
        bytes: u32,
        ecn: Ecn,
        flags: TcpFlags,
    },
    AckArrival {
        flow: u32,
        gen: Gen,
        /// Its slot in `Sim::acks`.
        ack: u32,
    },
    Release(Dir),
    /// A data packet reaches the `pos`-th link of its flow's data path
    /// (after an access link or an earlier hop).
    DataHop {
        flow: u32,
        gen: Gen,
        pos: u8,
        pn: u64,
        chunk: u64,
        bytes: u32,
        ecn: Ecn,
        flags: TcpFlags,
    },
    /// An ACK reaches the `pos`-th link of its flow's ACK path.
    AckHop {
        flow: u32,
        gen: Gen,
        pos: u8,
        /// Its slot in `Sim::acks`.
        ack: u32,
    },
    Sample,
    /// The next flow of arrival process `i`.
    Arrival(u32),
    /// The next packet (or on/off switch) of cross-traffic source `i`.
    Cross(u32),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    Forward,
    Reverse,
    /// `Sim::segs[i]`: an access link or a bottleneck hop after the first.
    Seg(u16),
}

/// The shared bottleneck's two directions as `link.csv` and the packet
/// log name them: one spelling for both files.
const FORWARD: &str = "forward";
const REVERSE: &str = "reverse";

/// Names of the hops after the first in `link.csv` (the first is
/// `forward`); `LinkSample::direction` is a `&'static str`.
const HOP_NAMES: [&str; crate::config::MAX_HOPS] = [
    FORWARD, "hop1", "hop2", "hop3", "hop4", "hop5", "hop6", "hop7", "hop8", "hop9", "hop10",
    "hop11", "hop12", "hop13", "hop14", "hop15",
];

/// A link direction besides the shared forward and reverse ones.
struct Seg {
    link: Direction,
    /// Its name in the packet log (`hop1`, ..., `access_forward`,
    /// `access_reverse`).
    name: &'static str,
    held: VecDeque<(u64, Payload)>,
    /// Packets waiting in a dequeue-time discipline, by link id.
    queued: HashMap<u64, Payload>,
    release_at: Option<u64>,
    wire: Option<ScheduledDelay>,
}

/// What travels through a link direction while held by ACK aggregation.
#[derive(Clone, Copy, Debug)]
enum Payload {
    Data {
        flow: usize,
        gen: Gen,
        pn: u64,
        chunk: u64,
        bytes: u32,
        /// Its ECN codepoint as it travels: CE once a queue marked it.
        ecn: Ecn,
        /// TCP's CWR and PSH flags.
        flags: TcpFlags,
        /// Which link of the flow's data path it is on.
        pos: u8,
    },
    Ack {
        flow: usize,
        gen: Gen,
        /// Its slot in `Sim::acks`.
        ack: u32,
        /// Which link of the flow's ACK path it is on.
        pos: u8,
    },

    /// An unresponsive cross-traffic packet of source `src`.
    Cross { src: usize, bytes: u32 },
}

/// The RTT a flow's receiver model needs, which the sender's estimator
/// stands in for (the receiver measures its own in reality).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReceiverRtt {
    None,
    /// Chromium's ACK decimation: min_rtt.
    Min,
    /// Linux's receive window: the smoothed RTT.
    Smoothed,
}

struct Flow {
    sender: Sender,
    receiver: Receiver,
    start_ns: u64,
    extra_rtt_ns: u64,
    /// Header bytes added to each data packet on the link.
    header_bytes: u32,
    wake_at: Option<u64>,
    timer_at: Option<u64>,
    /// When the receiver's delayed ACK is due, if one is pending.
    delack_at: Option<u64>,
    /// The time of the delayed-ACK event this flow relies on, queued and
    /// not yet popped: never later than `delack_at` while that is set.
    /// A deadline at or after it queues nothing; when it pops before the
    /// deadline it is queued again for the deadline, as the RTO timer is
    /// (`arm_timer`). Linux's receiver ACKs every second segment, so
    /// nearly every deadline is cancelled by the next segment's ACK: one
    /// event per deadline was one stale event per two packets.
    delack_event: Option<u64>,
    /// The deadline and queue sequence of the last delayed-ACK deadline
    /// that queued no event (see `delack_event`): its event, queued when
    /// the one relied on pops, takes that sequence.
    delack_reserved: Option<(u64, u64)>,
    /// Which RTT the receiver's ACK policy needs from the sender.
    receiver_rtt: ReceiverRtt,
    /// Its segments carry TCP's timestamp ([`sender::SenderConfig::timestamps`]).
    timestamps: bool,
    drops: u64,
    last_sample_delivered: u64,
    /// The slot's generation (see [`Gen`]).
    gen: Gen,
    /// A finite flow's size, for its completion record.
    size_bytes: Option<u64>,
    /// Its completion has been recorded.
    fct_done: bool,
    /// (arrival process, k) of a generated flow; `None` for a listed one.
    generated: Option<(u32, u64)>,
    /// The links its data crosses in order (`[Forward]` on a single path).
    data_path: Vec<Dir>,
    /// The links its ACKs cross in order (`[Reverse]` without access).
    ack_path: Vec<Dir>,
    /// Its handshake while under way ([`crate::Handshake::Tcp`]); `None`
    /// once the SYN-ACK arrived, or for a flow without one.
    opening: Option<Opening>,
    /// How its handshake ended, once it has.
    opened: Option<crate::record::HandshakeRecord>,
}

/// A flow's SYN exchange under way.
#[derive(Clone, Copy, Debug)]
struct Opening {
    /// When the latest SYN left (`None`: not yet).
    syn_sent_at: Option<u64>,
    /// How long after it the SYN is sent again.
    timeout_ns: u64,
}

impl Flow {
    fn new(
        sc: &sender::SenderConfig,
        ack: sender::AckPolicy,
        seed: u64,
        extra_rtt_ns: u64,
        header_bytes: u32,
        (data_path, ack_path): (Vec<Dir>, Vec<Dir>),
        handshake: crate::Handshake,
    ) -> Self {
        let mss = sc.cc.mss_bytes.max(1);
        let total_chunks = sc.size_bytes.map(|s| s.div_ceil(mss).max(1));
        let receiver = Receiver::new(ack, total_chunks);
        let mut sender = Sender::new(sc, seed);
        // A receiver that offers a window (Linux's) offers its first in
        // the SYN-ACK: the sender is held to it until the first ACK.
        if let Some(window) = receiver.initial_rwnd_chunks(mss) {
            sender.set_flow_limit(window);
        }
        // Only Linux's receiver acts on PSH: for the others the sender
        // need not work out where it goes.
        if !receiver.acts_on_push() {
            sender.set_marks_push(false);
        }
        Flow {
            sender,
            receiver,
            start_ns: sc.start_ns,
            extra_rtt_ns,
            header_bytes,
            wake_at: None,
            timer_at: None,
            delack_at: None,
            delack_event: None,
            delack_reserved: None,
            receiver_rtt: match ack {
                sender::AckPolicy::Decimated { .. } => ReceiverRtt::Min,
                sender::AckPolicy::Linux { .. } => ReceiverRtt::Smoothed,
                _ => ReceiverRtt::None,
            },
            timestamps: sc.keeps_timestamps(),
            drops: 0,
            last_sample_delivered: 0,
            gen: 0,
            size_bytes: sc.size_bytes,
            fct_done: false,
            generated: None,
            data_path,
            ack_path,
            opening: (handshake == crate::Handshake::Tcp).then_some(Opening {
                syn_sent_at: None,
                timeout_ns: SYN_TIMEOUT_NS,
            }),
            opened: None,
        }
    }
}

/// An arrival process's running state.
struct ArrivalState {
    rng: ChaCha8Rng,
    /// Flows started so far (the next one's k).
    next_k: u64,
    /// The template's sender settings, cloned for each flow.
    sender: sender::SenderConfig,
    /// Its per-flow seed stream.
    seed: u64,
    /// The links its flows' data cross (the template's `hops`).
    data_path: Vec<Dir>,
}

/// A cross-traffic source's running state.
struct CrossState {
    rng: ChaCha8Rng,
    /// Start of the current sending period, ns.
    period_start_ns: u64,
    /// Packets sent in the current period (the next one's index in it).
    period_packets: u64,
    /// End of the current on period (`u64::MAX` for CBR).
    on_until_ns: u64,
    stats: CrossSummary,
}

struct Sim<'a> {
    cfg: &'a SimConfig,
    queue: EventQueue<Kind>,
    /// The ACKs in transit, which events and link queues name by slot.
    acks: ack_slab::AckSlab,
    now: u64,
    flows: Vec<Flow>,
    fwd: Direction,
    rev: Direction,
    fwd_held: VecDeque<(u64, Payload)>,
    rev_held: VecDeque<(u64, Payload)>,
    releases: Vec<Release>,
    /// Scratch for `drain_releases`: each released packet with its arrival
    /// time and whether the discipline dropped it (kept to avoid an
    /// allocation per packet under a dequeue-time discipline).
    released: Vec<(u64, Payload, bool)>,
    release_at: [Option<u64>; 2],
    events: u64,
    packets: u64,
    /// Packets waiting in a dequeue-time discipline (FQ-CoDel, PIE,
    /// DualPI2), by link id, forward and reverse; empty otherwise.
    queued: [HashMap<u64, Payload>; 2],
    work: &'a Workload,
    /// Flows listed in the configuration: slots 0..listed, never reused.
    listed: usize,
    /// Slots of generated flows that completed, free for reuse.
    free: Vec<usize>,
    arrivals: Vec<ArrivalState>,
    cross: Vec<CrossState>,
    fct: FctStats,
    /// Completions not yet handed to the recorder.
    completed: Vec<FctRecord>,
    /// Round-trip propagation of the shared path, ns (without extra_rtt).
    path_rtt_ns: u64,
    /// The forward bottleneck's rate for ideal FCTs, bits/s.
    bottleneck_bps: f64,
    /// Most flows alive at once.
    peak_live: usize,
    live: usize,
    /// Access links and hops after the first.
    segs: Vec<Seg>,
    /// `segs` index of hop k (k >= 1) at `hop_segs[k - 1]`.
    hop_segs: Vec<u16>,
    fwd_wire: Option<ScheduledDelay>,
    rev_wire: Option<ScheduledDelay>,
    /// Every flow's data crosses only `[link.forward]` and its ACKs only
    /// `[link.reverse]` (no hops, no access links): the common case, which
    /// skips the per-packet path lookups.
    single_path: bool,
    /// The per-packet log, when the recorder wants it
    /// ([`Recorder::wants_packets`]); `None` costs one test per packet.
    packet_log: Option<Box<packet_trace::PacketLog>>,
    /// `single_path`, a forward direction that
    /// [`Direction::is_drop_tail_only`] and no packet log: a flow's data
    /// packet takes `Sim::enter_drop_tail`. None of the three changes
    /// once `run` has decided the log, so `run` decides this once there,
    /// and each packet tests one flag instead of three (false until then:
    /// the general path, which gives the same outcome).
    fast_data: bool,
    /// `single_path` and no packet log: an ACK takes `Sim::enter_ack`,
    /// which skips the path lookups and the log's test. Decided by `run`
    /// with `fast_data`.
    fast_acks: bool,
}

/// Runs `cfg` to completion, streaming samples to `rec`.
///
/// A topology the engine cannot build (more than
/// [`MAX_HOPS`](crate::config::MAX_HOPS) hops, a flow's `hops` out of
/// range or reversed), or a flow whose custom controller has no
/// constructor yet ([`crate::CustomCc::named`]), is an
/// [`io::ErrorKind::InvalidInput`] error naming the flow.
pub fn run(cfg: &SimConfig, rec: &mut dyn Recorder) -> io::Result<Summary> {
    run_workload(cfg, &Workload::default(), rec)
}

/// Runs `cfg` with `work`'s flow arrivals and cross traffic besides its
/// listed flows. An empty workload is exactly [`run`].
pub fn run_workload(
    cfg: &SimConfig,
    work: &Workload,
    rec: &mut dyn Recorder,
) -> io::Result<Summary> {
    let n_hops = cfg.topology.hops.len() + 1;
    let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
    if n_hops > crate::config::MAX_HOPS {
        return Err(invalid(format!(
            "{n_hops} hops; at most {}",
            crate::config::MAX_HOPS
        )));
    }
    let templates = work.arrivals.iter().map(|a| &a.template);
    for f in cfg.flows.iter().chain(templates) {
        if let Some(e) = f.custom_cc.as_ref().and_then(|c| c.unbuilt_error()) {
            return Err(invalid(format!("flow `{}`: {e}", f.name)));
        }
        if let Some((first, last)) = f.hops {
            if first > last || last >= n_hops {
                return Err(invalid(format!(
                    "flow `{}`: hops ({first}, {last}); allowed first <= last < {n_hops}",
                    f.name
                )));
            }
        }
    }
    let mut sim = Sim::new(cfg, work);
    sim.run(rec)?;
    Ok(sim.summary())
}

/// Marks a data packet CE when a link direction's verdict says it leaves
/// marked.
#[inline]
fn mark_ce(payload: &mut Payload, ce: bool) {
    if let (Payload::Data { ecn, .. }, true) = (payload, ce) {
        *ecn = Ecn::Ce;
    }
}

/// Mixes the scenario seed with a stream number so each random consumer
/// (each link direction, each flow) gets an independent, stable seed.
fn sub_seed(seed: u64, stream: u64) -> u64 {
    let mut z = seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl<'a> Sim<'a> {
    fn new(cfg: &'a SimConfig, work: &'a Workload) -> Self {
        // Segments: the hops after the first, then each listed flow's
        // access links, each with its own random stream (1 and 2 are the
        // shared directions, 100 + i the flows).
        let mut segs: Vec<Seg> = Vec::new();
        let mut add_seg = |seg: &crate::config::Segment, stream: u64, name: &'static str| {
            let mut d = seg.direction.clone();
            if seg.delay_schedule.is_some() {
                d.delay_ns = 0;
            }
            segs.push(Seg {
                link: Direction::new(&d, sub_seed(cfg.seed, stream)),
                name,
                held: VecDeque::new(),
                queued: HashMap::new(),
                release_at: None,
                wire: seg.delay_schedule.clone().map(ScheduledDelay::new),
            });
            Dir::Seg((segs.len() - 1) as u16)
        };
        let hop_dirs: Vec<Dir> = std::iter::once(Dir::Forward)
            .chain(
                cfg.topology
                    .hops
                    .iter()
                    .enumerate()
                    .map(|(k, h)| add_seg(h, 3 + k as u64, HOP_NAMES[k + 1])),
            )
            .collect();
        let hops_of = |f: &crate::config::FlowConfig| {
            let (first, last) = f.hops.unwrap_or((0, hop_dirs.len() - 1));
            hop_dirs[first..=last].to_vec()
        };
        let mut paths = Vec::with_capacity(cfg.flows.len());
        for (i, f) in cfg.flows.iter().enumerate() {
            let mut data_path = Vec::new();
            if let Some(a) = &f.access_forward {
                data_path.push(add_seg(a, 1_000_000 + 2 * i as u64, "access_forward"));
            }
            data_path.extend(hops_of(f));
            let mut ack_path = vec![Dir::Reverse];
            if let Some(a) = &f.access_reverse {
                ack_path.push(add_seg(a, 1_000_001 + 2 * i as u64, "access_reverse"));
            }
            paths.push((data_path, ack_path));
        }
        let segs_empty = segs.is_empty();
        let hop_segs = hop_dirs[1..]
            .iter()
            .map(|d| match d {
                Dir::Seg(k) => *k,
                _ => unreachable!("hops after the first are segments"),
            })
            .collect();
        let flows: Vec<Flow> = cfg
            .flows
            .iter()
            .zip(paths)
            .enumerate()
            .map(|(i, (f, path))| {
                Flow::new(
                    &f.sender_config(),
                    f.ack,
                    sub_seed(cfg.seed, 100 + i as u64),
                    f.extra_rtt_ns,
                    f.header_bytes,
                    path,
                    f.handshake,
                )
            })
            .collect();
        let listed = flows.len();
        let arrivals = work
            .arrivals
            .iter()
            .enumerate()
            .map(|(a, arr)| ArrivalState {
                rng: ChaCha8Rng::seed_from_u64(sub_seed(cfg.seed, 1_000_000 + a as u64)),
                next_k: 0,
                sender: arr.template.sender_config(),
                seed: sub_seed(cfg.seed, 2_000_000 + a as u64),
                data_path: hops_of(&arr.template),
            })
            .collect();
        let cross = work
            .cross
            .iter()
            .enumerate()
            .map(|(c, x)| CrossState {
                rng: ChaCha8Rng::seed_from_u64(sub_seed(cfg.seed, 3_000_000 + c as u64)),
                period_start_ns: x.start_ns,
                period_packets: 0,
                on_until_ns: u64::MAX,
                stats: CrossSummary {
                    name: x.name.clone(),
                    packets_sent: 0,
                    bytes_sent: 0,
                    bytes_delivered: 0,
                    drops: 0,
                },
            })
            .collect();
        let unscheduled = |d: &link::ResolvedDirection, s: &Option<link::DelaySchedule>| {
            let mut d = d.clone();
            if s.is_some() {
                d.delay_ns = 0;
            }
            d
        };
        let topo = &cfg.topology;
        let single_path = segs_empty;
        Sim {
            work,
            listed,
            free: Vec::new(),
            arrivals,
            cross,
            fct: FctStats::default(),
            completed: Vec::new(),
            path_rtt_ns: cfg.forward.delay_ns + cfg.reverse.delay_ns,
            bottleneck_bps: cfg.forward.rate.peak_bps(),
            peak_live: listed,
            live: listed,
            cfg,
            queue: EventQueue::default(),
            acks: ack_slab::AckSlab::default(),
            now: 0,
            flows,
            fwd: Direction::new(
                &unscheduled(&cfg.forward, &topo.forward_delay_schedule),
                sub_seed(cfg.seed, 1),
            ),
            rev: Direction::new(
                &unscheduled(&cfg.reverse, &topo.reverse_delay_schedule),
                sub_seed(cfg.seed, 2),
            ),
            fwd_held: VecDeque::new(),
            rev_held: VecDeque::new(),
            releases: Vec::new(),
            released: Vec::new(),
            release_at: [None; 2],
            events: 0,
            packets: 0,
            queued: [HashMap::new(), HashMap::new()],
            segs,
            hop_segs,
            fwd_wire: topo.forward_delay_schedule.clone().map(ScheduledDelay::new),
            rev_wire: topo.reverse_delay_schedule.clone().map(ScheduledDelay::new),
            single_path,
            packet_log: None,
            fast_data: false,
            fast_acks: false,
        }
    }

    /// The event loop's check every `HEARTBEAT_EVENTS` events: the
    /// recorder's heartbeat, the packet log's flush, and a stop for a
    /// window that ran away. Out of line and cold, as is `no_progress`:
    /// inside the loop their code took registers from the per-event path
    /// (moving them out: cubic's bench path 307.5 M -> 307.0 M
    /// instructions, bbr's 304.7 M -> 303.8 M, Callgrind, 2026-12-06).
    #[cold]
    #[inline(never)]
    fn heartbeat(&mut self, rec: &mut dyn Recorder) -> io::Result<()> {
        rec.heartbeat(self.now)?;
        // The packet log's rows wait at most this many events.
        if self.packet_log.is_some() {
            self.flush_packets(rec)?;
        }
        if let Some((i, f)) = self
            .flows
            .iter()
            .enumerate()
            .find(|(_, f)| f.sender.inflight > MAX_INFLIGHT_BYTES)
        {
            return Err(io::Error::other(RunStopped(format!(
                "flow {i}'s controller put {} bytes in flight at {:.6} s, more than {MAX_INFLIGHT_BYTES}: its window ran away, and the run stops before its packet records fill memory",
                f.sender.inflight,
                self.now as f64 / 1e9
            ))));
        }
        Ok(())
    }

    /// The error that stops a run stuck at one instant.
    #[cold]
    #[inline(never)]
    fn no_progress(&self) -> io::Error {
        io::Error::other(RunStopped(format!(
            "the simulation made no progress: more than {MAX_EVENTS_AT_ONE_INSTANT} events at {:.9} s of simulated time (a timer re-arming itself at the same instant); please report the scenario",
            self.now as f64 / 1e9
        )))
    }

    fn push(&mut self, t: u64, kind: Kind) {
        self.queue.push(t, kind);
    }

    /// Never inlined: the event loop is the one place the per-event
    /// handlers are inlined into, and when LLVM inlined the loop itself
    /// into its caller (as it did once the heap's entries kept their key)
    /// it left the receiver's `on_segment` and the sender's `on_ack` out of
    /// line instead: one `bbr` flow ran 1.5 % more instructions (the speed
    /// guard's path, 2026-12-04).
    #[inline(never)]
    fn run(&mut self, rec: &mut dyn Recorder) -> io::Result<()> {
        if rec.wants_packets() {
            self.packet_log = Some(Box::default());
        }
        let no_log = self.packet_log.is_none();
        self.fast_data = self.single_path && self.fwd.is_drop_tail_only() && no_log;
        self.fast_acks = self.single_path && no_log;
        for i in 0..self.flows.len() {
            let t = self.flows[i].start_ns;
            self.schedule_wake(i, t);
            if self.flows[i].size_bytes.is_some() && t < self.cfg.duration_ns {
                self.fct.started += 1;
            }
        }
        if self.cfg.sample_interval_ns > 0 {
            self.push(0, Kind::Sample);
        }
        for (a, arr) in self.work.arrivals.iter().enumerate() {
            let first = self.arrivals[a].next_gap_ns(arr.process);
            let t = arr.start_ns.saturating_add(first);
            if t < arr.stop_ns.unwrap_or(u64::MAX) {
                self.push(t, Kind::Arrival(a as u32));
            }
        }
        for (c, x) in self.work.cross.iter().enumerate() {
            if let CrossKind::OnOff { on_ns, periods, .. } = x.kind {
                let st = &mut self.cross[c];
                st.on_until_ns = x
                    .start_ns
                    .saturating_add(period(&mut st.rng, on_ns, periods));
            }
            if x.stop_ns.is_none_or(|s| x.start_ns < s) {
                self.push(x.start_ns, Kind::Cross(c as u32));
            }
        }
        // Events at one simulated instant, to stop a livelock (a timer
        // that re-arms itself in the past) with an error rather than spin.
        let mut at_this_instant: u64 = 0;
        while let Some(ev) = self.queue.pop() {
            if ev.t >= self.cfg.duration_ns {
                break;
            }
            if ev.t == self.now {
                at_this_instant += 1;
                if at_this_instant > MAX_EVENTS_AT_ONE_INSTANT {
                    return Err(self.no_progress());
                }
            } else {
                at_this_instant = 0;
            }
            self.now = ev.t;
            self.events += 1;
            if self.events & (HEARTBEAT_EVENTS - 1) == 0 {
                self.heartbeat(rec)?;
            }
            match ev.kind {
                Kind::Wake(f, gen) => {
                    let f = f as usize;
                    if self.flows[f].wake_at == Some(ev.t) && self.flows[f].gen == gen {
                        self.flows[f].wake_at = None;
                        self.kick(f);
                    }
                }
                Kind::Timer(f, gen) => {
                    let f = f as usize;
                    if self.flows[f].timer_at == Some(ev.t) && self.flows[f].gen == gen {
                        self.flows[f].timer_at = None;
                        self.flows[f].sender.on_timer(Instant::from_nanos(self.now));
                        if self.flows[f].size_bytes.is_some() {
                            self.check_complete(f);
                            self.flush_completed(rec)?;
                            if self.flows[f].gen != gen {
                                continue;
                            }
                        }
                        self.kick(f);
                    }
                }
                Kind::DelayedAck(f, gen) => {
                    let f = f as usize;
                    if self.flows[f].gen == gen {
                        self.on_delayed_ack_event(f, ev.t);
                    }
                }
                Kind::Data {
                    flow,
                    gen,
                    pn,
                    chunk,
                    bytes,
                    ecn,
                    flags,
                } => {
                    let flow = flow as usize;
                    if self.flows[flow].gen == gen {
                        if pn == SYN_PN {
                            self.answer_syn(flow, chunk);
                        } else {
                            self.on_data(flow, pn, chunk, bytes, ecn, flags)
                        }
                    }
                }
                Kind::AckArrival { flow, gen, ack } => {
                    let flow = flow as usize;
                    // Read in place: nothing below stores an ACK before
                    // the sender has read this one.
                    let ack = self.acks.take(ack);
                    if self.flows[flow].gen == gen {
                        if ack.largest().is_none() {
                            // A SYN-ACK: the only ACK without ranges.
                            let syn_sent_at = ack.cum_chunk;
                            self.on_syn_ack(flow, syn_sent_at);
                            continue;
                        }
                        self.flows[flow]
                            .sender
                            .on_ack(Instant::from_nanos(self.now), ack);
                        if self.flows[flow].size_bytes.is_some() {
                            self.check_complete(flow);
                            self.flush_completed(rec)?;
                            if self.flows[flow].gen != gen {
                                continue;
                            }
                        }
                        self.kick(flow);
                    }
                }
                Kind::Arrival(a) => self.on_arrival(a as usize),
                Kind::Cross(c) => self.on_cross(c as usize),
                Kind::Release(dir) => {
                    *self.release_slot(dir) = None;
                    self.drain_releases(dir);
                }
                Kind::DataHop {
                    flow,
                    gen,
                    pos,
                    pn,
                    chunk,
                    bytes,
                    ecn,
                    flags,
                } => {
                    let payload = Payload::Data {
                        flow: flow as usize,
                        gen,
                        pn,
                        chunk,
                        bytes,
                        ecn,
                        flags,
                        pos,
                    };
                    self.on_data_hop(payload);
                }
                Kind::AckHop {
                    flow,
                    gen,
                    pos,
                    ack,
                } => self.on_ack_hop(flow as usize, gen, pos, ack),
                Kind::Sample => {
                    self.sample(rec)?;
                    let next = self.now + self.cfg.sample_interval_ns;
                    self.push(next, Kind::Sample);
                }
            }
        }
        self.flush_packets(rec)?;
        self.now = self.cfg.duration_ns;
        for f in &mut self.flows[..self.listed] {
            f.sender
                .finish(Instant::from_nanos(self.cfg.duration_ns.max(f.start_ns)));
        }
        self.flush_completed(rec)?;
        Ok(())
    }
}

/// A flow's algorithm as outputs name it (a custom controller's own name).
fn algorithm_name(fc: &crate::config::FlowConfig) -> String {
    fc.custom_cc
        .as_ref()
        .map_or(fc.cc.algorithm.name(), |c| c.name.as_str())
        .to_string()
}

/// One on or off period: `mean_ns` exactly, or drawn exponentially.
fn period(rng: &mut ChaCha8Rng, mean_ns: u64, periods: Periods) -> u64 {
    match periods {
        Periods::Fixed => mean_ns,
        Periods::Exponential => Exp::new(1.0 / mean_ns.max(1) as f64)
            .map_or(mean_ns, |d| d.sample(rng).round() as u64)
            .max(1),
    }
}

impl ArrivalState {
    /// The gap to the next arrival, ns.
    fn next_gap_ns(&mut self, process: ArrivalProcess) -> u64 {
        match process {
            ArrivalProcess::Poisson { rate_per_s } => Exp::new(rate_per_s)
                .map_or(u64::MAX, |d| (d.sample(&mut self.rng) * 1e9).round() as u64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FlowConfig, NoRecorder};
    use congestion::{Algorithm, Config};

    /// Events are copied in and out of the queue once each, so their size
    /// is per-packet work: an ACK (112 bytes since it carries TCP's
    /// timestamp echo, 104 before) travels as a slot number, and
    /// an event is no larger than a data packet's fields need, its tag in
    /// their first word (see `Kind::Data`).
    #[test]
    fn an_event_carries_an_ack_by_its_slot() {
        assert_eq!(std::mem::size_of::<sender::Ack>(), 112);
        assert!(
            std::mem::size_of::<Kind>() <= 32,
            "{}",
            std::mem::size_of::<Kind>()
        );
        assert!(
            std::mem::size_of::<Payload>() <= 40,
            "{}",
            std::mem::size_of::<Payload>()
        );
    }

    /// Every ACK's slot is freed, whether the ACK arrives or a link drops
    /// it: over 20 s with 10 % of ACKs lost (about 1,700 drops), the ACKs
    /// still stored at the end are only those in transit then.
    #[test]
    fn dropped_and_delivered_acks_free_their_slots() {
        let dir = |t: &str| {
            let c: link::DirectionConfig = toml::from_str(t).expect("valid direction");
            c.resolve(std::path::Path::new(".")).expect("resolves")
        };
        let cfg = SimConfig {
            duration_ns: 20_000_000_000,
            seed: 5,
            forward: dir("rate = \"10mbit\"\ndelay = \"20ms\"\nqueue = { limit = \"100pkt\" }"),
            reverse: dir("delay = \"20ms\"\nloss = { bernoulli = 0.1 }"),
            flows: vec![FlowConfig::bulk("a", Config::new(Algorithm::Cubic))],
            sample_interval_ns: 0,
            topology: Default::default(),
        };
        let work = Workload::default();
        let mut sim = Sim::new(&cfg, &work);
        sim.run(&mut NoRecorder).unwrap();
        let lost = sim.rev.stats().dropped_loss;
        assert!(lost > 1_000, "{lost} ACKs lost");
        // At most a round trip's worth of ACKs (about 35 at 10 Mbit/s,
        // 40 ms) can be in transit when the run ends.
        assert!(sim.acks.live() <= 100, "{} slots live", sim.acks.live());
    }
}
