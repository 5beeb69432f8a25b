//! The discrete-event loop.
//!
//! Events sit in an [`EventQueue`] ordered by (time, insertion sequence);
//! the sequence breaks ties, so a run is a pure function of its
//! configuration and seed. Packet arrivals ride its FIFO lanes. Timers
//! (pacing, loss detection, delayed ACKs) are lazy: each flow remembers the
//! one instant it wants to be woken, and an event that no longer matches
//! that instant is skipped when popped, so rescheduling never searches the
//! queue.

use crate::config::SimConfig;
use crate::event_queue::EventQueue;
use crate::record::{FlowSample, FlowSummary, HopSummary, LinkSample, Recorder, Summary};
use crate::stats::jain_index;
use crate::workload::{
    ArrivalProcess, CrossKind, CrossSummary, FctRecord, FctStats, Periods, Workload,
};
use link::{Direction, Release, ScheduledDelay, Verdict};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};
use sender::{Ack, AckAction, Ecn, Receiver, SendDecision, Sender};
use std::collections::{HashMap, VecDeque};
use std::io;

/// On-the-wire size of an ACK (TCP/IP headers with SACK and timestamps).
pub const ACK_BYTES: u32 = 60;

/// Event-queue lane for data arrivals at receivers.
const LANE_DATA: usize = 0;
/// Event-queue lane for ACK arrivals at senders.
const LANE_ACK: usize = 1;

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
    Data {
        flow: u32,
        gen: Gen,
        pn: u64,
        chunk: u64,
        bytes: u32,
        ecn: Ecn,
        cwr: bool,
    },
    AckArrival {
        // u32, not usize: the tag and the index share the word before the
        // ACK, so an event is no larger than the ACK needs.
        flow: u32,
        gen: Gen,
        ack: Ack,
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
        cwr: bool,
    },
    /// An ACK reaches the `pos`-th link of its flow's ACK path.
    AckHop {
        flow: u32,
        gen: Gen,
        pos: u8,
        ack: Ack,
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

/// Names of the hops after the first in `link.csv` (the first is
/// `forward`); `LinkSample::direction` is a `&'static str`.
const HOP_NAMES: [&str; crate::config::MAX_HOPS] = [
    "forward", "hop1", "hop2", "hop3", "hop4", "hop5", "hop6", "hop7", "hop8", "hop9", "hop10",
    "hop11", "hop12", "hop13", "hop14", "hop15",
];

/// A link direction besides the shared forward and reverse ones.
struct Seg {
    link: Direction,
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
        /// TCP's CWR flag.
        cwr: bool,
        /// Which link of the flow's data path it is on.
        pos: u8,
    },
    Ack {
        flow: usize,
        gen: Gen,
        ack: Ack,
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
    delack_at: Option<u64>,
    /// Which RTT the receiver's ACK policy needs from the sender.
    receiver_rtt: ReceiverRtt,
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
}

impl Flow {
    fn new(
        sc: &sender::SenderConfig,
        ack: sender::AckPolicy,
        seed: u64,
        extra_rtt_ns: u64,
        header_bytes: u32,
        (data_path, ack_path): (Vec<Dir>, Vec<Dir>),
    ) -> Self {
        let mss = sc.cc.mss_bytes.max(1);
        let total_chunks = sc.size_bytes.map(|s| s.div_ceil(mss).max(1));
        Flow {
            sender: Sender::new(sc, seed),
            receiver: Receiver::new(ack, total_chunks),
            start_ns: sc.start_ns,
            extra_rtt_ns,
            header_bytes,
            wake_at: None,
            timer_at: None,
            delack_at: None,
            receiver_rtt: match ack {
                sender::AckPolicy::Decimated { .. } => ReceiverRtt::Min,
                sender::AckPolicy::Linux { .. } => ReceiverRtt::Smoothed,
                _ => ReceiverRtt::None,
            },
            drops: 0,
            last_sample_delivered: 0,
            gen: 0,
            size_bytes: sc.size_bytes,
            fct_done: false,
            generated: None,
            data_path,
            ack_path,
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
        let mut add_seg = |seg: &crate::config::Segment, stream: u64| {
            let mut d = seg.direction.clone();
            if seg.delay_schedule.is_some() {
                d.delay_ns = 0;
            }
            segs.push(Seg {
                link: Direction::new(&d, sub_seed(cfg.seed, stream)),
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
                    .map(|(k, h)| add_seg(h, 3 + k as u64)),
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
                data_path.push(add_seg(a, 1_000_000 + 2 * i as u64));
            }
            data_path.extend(hops_of(f));
            let mut ack_path = vec![Dir::Reverse];
            if let Some(a) = &f.access_reverse {
                ack_path.push(add_seg(a, 1_000_001 + 2 * i as u64));
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
        }
    }

    fn link_mut(&mut self, dir: Dir) -> &mut Direction {
        match dir {
            Dir::Forward => &mut self.fwd,
            Dir::Reverse => &mut self.rev,
            Dir::Seg(k) => &mut self.segs[k as usize].link,
        }
    }

    /// The packets `dir` holds by aggregation and those waiting in its
    /// dequeue-time discipline.
    fn waiting_mut(
        &mut self,
        dir: Dir,
    ) -> (&mut VecDeque<(u64, Payload)>, &mut HashMap<u64, Payload>) {
        match dir {
            Dir::Forward => (&mut self.fwd_held, &mut self.queued[0]),
            Dir::Reverse => (&mut self.rev_held, &mut self.queued[1]),
            Dir::Seg(k) => {
                let s = &mut self.segs[k as usize];
                (&mut s.held, &mut s.queued)
            }
        }
    }

    fn release_slot(&mut self, dir: Dir) -> &mut Option<u64> {
        match dir {
            Dir::Forward => &mut self.release_at[0],
            Dir::Reverse => &mut self.release_at[1],
            Dir::Seg(k) => &mut self.segs[k as usize].release_at,
        }
    }

    /// When a packet that left `dir`'s queue at `t` reaches its far end:
    /// `t` itself unless the direction has a delay schedule.
    #[inline]
    fn wire(&mut self, dir: Dir, t: u64) -> u64 {
        let w = match dir {
            Dir::Forward => &mut self.fwd_wire,
            Dir::Reverse => &mut self.rev_wire,
            Dir::Seg(k) => &mut self.segs[k as usize].wire,
        };
        match w {
            None => t,
            Some(w) => w.arrive_ns(t),
        }
    }

    /// Offers a flow's packet of `wire` bytes to the link at `pos` of its
    /// path: data to its data path (with its own codepoint), an ACK to its
    /// ACK path. ACKs are not ECN-capable (Not-ECT), as TCP's pure ACKs (RFC
    /// 3168 §6.1.4).
    #[inline]
    fn enter(&mut self, wire: u32, payload: Payload) {
        let (flow, pos, ecn) = match payload {
            Payload::Data { flow, pos, ecn, .. } => (flow, pos, ecn),
            Payload::Ack { flow, pos, .. } => (flow, pos, Ecn::NotEct),
            Payload::Cross { .. } => unreachable!("cross traffic enters the first hop itself"),
        };
        let data = matches!(payload, Payload::Data { .. });
        let dir = match (self.single_path, data) {
            (true, true) => Dir::Forward,
            (true, false) => Dir::Reverse,
            (false, true) => self.flows[flow].data_path[pos as usize],
            (false, false) => self.flows[flow].ack_path[pos as usize],
        };
        let (now, key) = (self.now, self.flow_key(flow));
        let verdict = self.link_mut(dir).enqueue_flow(now, wire, ecn, key);
        self.route(dir, verdict, payload);
    }

    fn push(&mut self, t: u64, kind: Kind) {
        self.queue.push(t, kind);
    }

    fn run(&mut self, rec: &mut dyn Recorder) -> io::Result<()> {
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
        while let Some(ev) = self.queue.pop() {
            if ev.t >= self.cfg.duration_ns {
                break;
            }
            self.now = ev.t;
            self.events += 1;
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
                        self.flows[f].sender.on_timer(self.now);
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
                    if self.flows[f].delack_at == Some(ev.t) && self.flows[f].gen == gen {
                        self.flows[f].delack_at = None;
                        if let Some(ack) = self.flows[f].receiver.on_delayed_ack_timer(self.now) {
                            self.send_ack(f, ack);
                        }
                    }
                }
                Kind::Data {
                    flow,
                    gen,
                    pn,
                    chunk,
                    bytes,
                    ecn,
                    cwr,
                } => {
                    let flow = flow as usize;
                    if self.flows[flow].gen == gen {
                        self.on_data(flow, pn, chunk, bytes, ecn, cwr)
                    }
                }
                Kind::AckArrival { flow, gen, ack } => {
                    let flow = flow as usize;
                    if self.flows[flow].gen == gen {
                        self.flows[flow].sender.on_ack(self.now, &ack);
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
                    cwr,
                } => {
                    let flow = flow as usize;
                    if self.flows[flow].gen == gen {
                        let wire = bytes.saturating_add(self.flows[flow].header_bytes);
                        let payload = Payload::Data {
                            flow,
                            gen,
                            pn,
                            chunk,
                            bytes,
                            ecn,
                            cwr,
                            pos,
                        };
                        self.enter(wire, payload);
                    }
                }
                Kind::AckHop {
                    flow,
                    gen,
                    pos,
                    ack,
                } => {
                    let flow = flow as usize;
                    if self.flows[flow].gen == gen {
                        self.enter(
                            ACK_BYTES,
                            Payload::Ack {
                                flow,
                                gen,
                                ack,
                                pos,
                            },
                        );
                    }
                }
                Kind::Sample => {
                    self.sample(rec)?;
                    let next = self.now + self.cfg.sample_interval_ns;
                    self.push(next, Kind::Sample);
                }
            }
        }
        self.now = self.cfg.duration_ns;
        for f in &mut self.flows[..self.listed] {
            f.sender.finish(self.cfg.duration_ns.max(f.start_ns));
        }
        self.flush_completed(rec)?;
        Ok(())
    }

    /// Hands finished flows' records to the recorder.
    fn flush_completed(&mut self, rec: &mut dyn Recorder) -> io::Result<()> {
        for r in self.completed.drain(..) {
            rec.flow_completed(&r)?;
        }
        Ok(())
    }

    /// Records a finite flow's completion once its sender knows every byte
    /// arrived (the last ACK is in: FCT as pFabric and HPCC measure it, so
    /// the ideal is one RTT plus the transfer at the bottleneck's rate),
    /// and frees a generated flow's slot for reuse.
    fn check_complete(&mut self, f: usize) {
        let fl = &self.flows[f];
        if fl.fct_done || !fl.sender.is_done() {
            return;
        }
        let size = fl.size_bytes.unwrap_or(0);
        let rtt = self.path_rtt_ns + fl.extra_rtt_ns;
        let transfer = if self.bottleneck_bps.is_finite() && self.bottleneck_bps > 0.0 {
            (size as f64 * 8.0 * 1e9 / self.bottleneck_bps).round() as u64
        } else {
            0
        };
        let (name, algorithm) = match fl.generated {
            Some((a, k)) => {
                let arr = &self.work.arrivals[a as usize];
                (format!("{}#{k}", arr.name), algorithm_name(&arr.template))
            }
            None => (
                self.cfg.flows[f].name.clone(),
                algorithm_name(&self.cfg.flows[f]),
            ),
        };
        let r = FctRecord {
            name,
            algorithm,
            size_bytes: size,
            start_ns: fl.start_ns,
            end_ns: self.now,
            ideal_ns: rtt + transfer,
        };
        self.fct.record(&r);
        self.completed.push(r);
        let fl = &mut self.flows[f];
        fl.fct_done = true;
        if fl.generated.is_some() {
            // Every event still queued for this slot now carries a stale
            // generation and is ignored.
            fl.gen = fl.gen.wrapping_add(1);
            self.free.push(f);
            self.live -= 1;
        }
    }

    /// Starts arrival process `a`'s next flow and schedules the one after.
    fn on_arrival(&mut self, a: usize) {
        let arr = &self.work.arrivals[a];
        let st = &mut self.arrivals[a];
        let size = arr.size.sample(&mut st.rng);
        let k = st.next_k;
        st.next_k += 1;
        let next = self.now.saturating_add(st.next_gap_ns(arr.process));
        let mut sc = st.sender.clone();
        sc.start_ns = self.now;
        sc.stop_ns = None;
        sc.size_bytes = Some(size);
        let mut flow = Flow::new(
            &sc,
            arr.template.ack,
            sub_seed(st.seed, k),
            arr.template.extra_rtt_ns,
            arr.template.header_bytes,
            (st.data_path.clone(), vec![Dir::Reverse]),
        );
        flow.generated = Some((a as u32, k));
        if next < arr.stop_ns.unwrap_or(u64::MAX) {
            self.push(next, Kind::Arrival(a as u32));
        }
        let slot = match self.free.pop() {
            Some(s) => {
                flow.gen = self.flows[s].gen;
                self.flows[s] = flow;
                s
            }
            None => {
                self.flows.push(flow);
                self.flows.len() - 1
            }
        };
        self.live += 1;
        self.peak_live = self.peak_live.max(self.live);
        self.fct.started += 1;
        let now = self.now;
        self.schedule_wake(slot, now);
    }

    /// Sends cross-traffic source `c`'s next packet, or switches it on.
    fn on_cross(&mut self, c: usize) {
        let x = &self.work.cross[c];
        let st = &mut self.cross[c];
        let interval = x.interval_ns();
        if self.now >= st.on_until_ns {
            // An on period ended: stay off, then start the next one.
            let CrossKind::OnOff {
                on_ns,
                off_ns,
                periods,
            } = x.kind
            else {
                unreachable!("only on-off sources end periods");
            };
            let on_at = st
                .on_until_ns
                .saturating_add(period(&mut st.rng, off_ns, periods));
            st.period_start_ns = on_at;
            st.period_packets = 0;
            st.on_until_ns = on_at.saturating_add(period(&mut st.rng, on_ns, periods));
            if x.stop_ns.is_none_or(|s| on_at < s) {
                self.push(on_at, Kind::Cross(c as u32));
            }
            return;
        }
        st.period_packets += 1;
        st.stats.packets_sent += 1;
        st.stats.bytes_sent += x.packet_bytes as u64;
        // From the period's start, not the last packet, so rounding never
        // accumulates into a rate error.
        let next = st.period_start_ns + (st.period_packets as f64 * interval).round() as u64;
        let next = next.min(st.on_until_ns);
        if x.stop_ns.is_none_or(|s| next < s) {
            self.push(next, Kind::Cross(c as u32));
        }
        let bytes = x.packet_bytes;
        // Each cross source is a flow of its own to a flow-queueing
        // discipline, apart from every sender's key (see `flow_key`).
        let key = CROSS_KEY_BASE + c as u64;
        let verdict = self.fwd.enqueue_flow(self.now, bytes, Ecn::NotEct, key);
        self.route(Dir::Forward, verdict, Payload::Cross { src: c, bytes });
    }

    fn schedule_wake(&mut self, f: usize, t: u64) {
        if self.flows[f].wake_at.is_some_and(|w| w <= t) {
            return;
        }
        self.flows[f].wake_at = Some(t);
        let gen = self.flows[f].gen;
        self.push(t, Kind::Wake(f as u32, gen));
    }

    fn arm_timer(&mut self, f: usize) {
        let Some(d) = self.flows[f].sender.timer_deadline() else {
            return;
        };
        let d = d.max(self.now);
        if self.flows[f].timer_at.is_some_and(|t| t <= d) {
            return;
        }
        self.flows[f].timer_at = Some(d);
        let gen = self.flows[f].gen;
        self.push(d, Kind::Timer(f as u32, gen));
    }

    /// Sends whatever the flow may send now, then arranges to be woken.
    fn kick(&mut self, f: usize) {
        if self.now < self.flows[f].start_ns {
            return;
        }
        loop {
            match self.flows[f].sender.poll(self.now) {
                SendDecision::Send {
                    chunk,
                    bytes,
                    retransmission,
                } => {
                    let sent =
                        self.flows[f]
                            .sender
                            .on_sent_ecn(self.now, chunk, bytes, retransmission);
                    self.packets += 1;
                    // The link carries the headers; the receiver counts
                    // only the payload (`bytes`, which travels on).
                    let wire = bytes.saturating_add(self.flows[f].header_bytes);
                    self.enter(
                        wire,
                        Payload::Data {
                            flow: f,
                            gen: self.flows[f].gen,
                            pn: sent.pn,
                            chunk,
                            bytes,
                            ecn: sent.ecn,
                            cwr: sent.cwr,
                            pos: 0,
                        },
                    );
                }
                SendDecision::PaceUntil(t) => {
                    self.schedule_wake(f, t);
                    break;
                }
                SendDecision::NoData(Some(t)) => {
                    self.schedule_wake(f, t);
                    break;
                }
                SendDecision::CwndLimited
                | SendDecision::FlowBlocked
                | SendDecision::NoData(None) => break,
            }
        }
        self.arm_timer(f);
    }

    /// Delivers, holds or drops a packet according to the link's verdict.
    /// A packet the direction marked (or that arrived marked) travels on
    /// CE: a mark is never undone by a later hop.
    fn route(&mut self, dir: Dir, verdict: Verdict, mut payload: Payload) {
        match verdict {
            Verdict::Deliver { arrive_ns, ce, .. } => {
                mark_ce(&mut payload, ce);
                let t = self.wire(dir, arrive_ns);
                self.arrive(t, payload)
            }
            Verdict::Held { id, ce, .. } => {
                mark_ce(&mut payload, ce);
                self.waiting_mut(dir).0.push_back((id, payload));
                self.drain_releases(dir);
            }
            Verdict::Queued { id, .. } => {
                self.waiting_mut(dir).1.insert(id, payload);
                self.drain_releases(dir);
            }
            Verdict::Drop { .. } => self.count_drop(&payload),
        }
    }

    /// The flow key a flow-queueing discipline hashes: the slot, and for a
    /// reused slot its generation too, so a new flow does not inherit the
    /// queue (and DRR state) of the one that finished there.
    fn flow_key(&self, f: usize) -> u64 {
        f as u64 | (self.flows[f].gen as u64) << 32
    }

    /// Counts a packet the path dropped against its sender: a data packet
    /// lost on any link of its flow's data path, if the slot still holds
    /// that flow (a generated flow's slot may have been reused), or cross
    /// traffic. Lost ACKs are not a flow's drops.
    fn count_drop(&mut self, payload: &Payload) {
        match *payload {
            Payload::Data { flow, gen, .. } => {
                if self.flows[flow].gen == gen {
                    self.flows[flow].drops += 1;
                }
            }
            Payload::Ack { .. } => {}
            Payload::Cross { src, .. } => self.cross[src].stats.drops += 1,
        }
    }

    #[inline]
    fn arrive(&mut self, t: u64, payload: Payload) {
        match payload {
            Payload::Data {
                flow,
                gen,
                pn,
                chunk,
                bytes,
                ecn,
                cwr,
                pos,
            } => {
                if !self.single_path && pos as usize + 1 < self.flows[flow].data_path.len() {
                    // On to the next link of its path.
                    self.queue.push(
                        t,
                        Kind::DataHop {
                            flow: flow as u32,
                            gen,
                            pos: pos + 1,
                            pn,
                            chunk,
                            bytes,
                            ecn,
                            cwr,
                        },
                    );
                    return;
                }
                self.queue.push_lane(
                    LANE_DATA,
                    t,
                    Kind::Data {
                        flow: flow as u32,
                        gen,
                        pn,
                        chunk,
                        bytes,
                        ecn,
                        cwr,
                    },
                )
            }
            Payload::Ack {
                flow,
                gen,
                ack,
                pos,
            } => {
                if !self.single_path && pos as usize + 1 < self.flows[flow].ack_path.len() {
                    self.queue.push(
                        t,
                        Kind::AckHop {
                            flow: flow as u32,
                            gen,
                            pos: pos + 1,
                            ack,
                        },
                    );
                    return;
                }
                let t = t + self.flows[flow].extra_rtt_ns;
                // Slots are u32: listed flows are at most 1000 (scenario
                // limits) and generated ones reuse slots.
                let flow = flow as u32;
                self.queue
                    .push_lane(LANE_ACK, t, Kind::AckArrival { flow, gen, ack });
            }
            Payload::Cross { src, bytes } => {
                // Unresponsive: nobody acknowledges it; count what arrives
                // within the run.
                if t < self.cfg.duration_ns {
                    self.cross[src].stats.bytes_delivered += bytes as u64;
                }
            }
        }
    }

    /// Hands on every held packet the link has released, and schedules the
    /// next release timeout.
    fn drain_releases(&mut self, dir: Dir) {
        let now = self.now;
        self.releases.clear();
        let (link, held, queued) = match dir {
            Dir::Forward => (&mut self.fwd, &mut self.fwd_held, &mut self.queued[0]),
            Dir::Reverse => (&mut self.rev, &mut self.rev_held, &mut self.queued[1]),
            Dir::Seg(k) => {
                let s = &mut self.segs[k as usize];
                (&mut s.link, &mut s.held, &mut s.queued)
            }
        };
        link.release_due(now, &mut self.releases);
        let next = link.next_release_ns();
        let mut out = std::mem::take(&mut self.released);
        out.clear();
        for r in &self.releases {
            // A dequeue-time discipline's packet, or one held by aggregation.
            let from_queue = if queued.is_empty() {
                None
            } else {
                queued.remove(&r.id)
            };
            let p = match from_queue {
                Some(p) => p,
                None => match held.iter().position(|h| h.0 == r.id) {
                    Some(pos) => held.remove(pos).expect("position is in range").1,
                    None => continue,
                },
            };
            match (r.drop, p) {
                (Some(_), p) => out.push((0, p, true)),
                (None, mut p) => {
                    mark_ce(&mut p, r.ce);
                    out.push((r.arrive_ns, p, false));
                }
            }
        }
        // Neither counting a drop nor `arrive` comes back here, so the
        // scratch can be lent out and returned.
        for &(t, p, dropped) in &out {
            if dropped {
                self.count_drop(&p);
            } else {
                let t = self.wire(dir, t);
                self.arrive(t, p);
            }
        }
        self.released = out;
        if let Some(t) = next {
            let slot = self.release_slot(dir);
            if slot.is_none_or(|s| t < s) {
                *slot = Some(t);
                self.push(t.max(now), Kind::Release(dir));
            }
        }
    }

    fn on_data(&mut self, f: usize, pn: u64, chunk: u64, bytes: u32, ecn: Ecn, cwr: bool) {
        match self.flows[f].receiver_rtt {
            ReceiverRtt::None => {}
            // Chromium's receiver scales its decimation timer by its own
            // min_rtt, measured on the same path: the sender's stands in.
            ReceiverRtt::Min => {
                let min_rtt = self.flows[f].sender.cc.rtt().min_ns();
                self.flows[f].receiver.set_min_rtt_ns(min_rtt);
            }
            // Linux's receive window grows once per receiver RTT, which it
            // measures from echoed timestamps: the sender's smoothed RTT
            // stands in.
            ReceiverRtt::Smoothed => {
                let srtt = self.flows[f].sender.cc.rtt().smoothed_ns();
                self.flows[f].receiver.set_rtt_ns(srtt);
            }
        }
        match self.flows[f]
            .receiver
            .on_packet_ecn(self.now, pn, chunk, bytes as u64, ecn, cwr)
        {
            AckAction::Send(ack) => self.send_ack(f, ack),
            AckAction::Delay(t) => {
                // An earlier deadline (SACK compression's short timer)
                // replaces a later one; the stale event is ignored.
                if self.flows[f].delack_at.is_none_or(|at| t < at) {
                    self.flows[f].delack_at = Some(t);
                    let gen = self.flows[f].gen;
                    self.push(t, Kind::DelayedAck(f as u32, gen));
                }
            }
        }
    }

    /// ACKs are not ECN-capable (Not-ECT), as TCP's pure ACKs (RFC 3168
    /// §6.1.4); a marking queue drops them as before.
    fn send_ack(&mut self, f: usize, ack: Ack) {
        // An ACK sent cancels the delayed-ACK timer, as Linux's
        // `tcp_event_ack_sent()` clears ICSK_TIME_DACK: a timer armed for
        // an earlier lone segment must not fire for the next one and ACK
        // it early, out of the every-second-segment rhythm.
        self.flows[f].delack_at = None;
        let gen = self.flows[f].gen;
        self.enter(
            ACK_BYTES,
            Payload::Ack {
                flow: f,
                gen,
                ack,
                pos: 0,
            },
        );
    }

    fn sample(&mut self, rec: &mut dyn Recorder) -> io::Result<()> {
        let t = self.now;
        let interval = self.cfg.sample_interval_ns.max(1);
        let fwd_queue_delay_ns = self.fwd.queue_delay_ns(t);
        // Generated flows are not sampled: tens of thousands of them would
        // swamp flows.csv; their completion records are their output.
        for (i, f) in self.flows[..self.listed].iter_mut().enumerate() {
            if t < f.start_ns {
                continue;
            }
            let s = f.sender.cc.snapshot();
            let delivered = f.receiver.unique_bytes;
            let goodput =
                (delivered - f.last_sample_delivered) as f64 * 8.0 * 1e9 / interval as f64;
            f.last_sample_delivered = delivered;
            rec.flow_sample(&FlowSample {
                t_ns: t,
                flow: i,
                delivered_bytes: delivered,
                goodput_bps: goodput,
                rtt_ns: f.sender.latest_rtt_ns,
                srtt_ns: f.sender.cc.rtt().smoothed_ns(),
                cwnd_bytes: s.cwnd_bytes,
                pacing_rate_bps: s.pacing_rate_bytes_per_sec as f64 * 8.0,
                inflight_bytes: f.sender.inflight,
                mode: s.mode,
                bw_estimate_bps: s.bw_estimate_bytes_per_sec.map(|b| b * 8.0),
                min_rtt_ns: s.min_rtt.map(|d| d.as_nanos() as u64),
                queue_delay_ns: fwd_queue_delay_ns,
                drops: f.drops,
                packets_sent: f.sender.packets_sent,
                retransmissions: f.sender.retransmissions,
                delivered_ce: f.sender.delivered_ce,
            })?;
            if crate::ModelSample::applies(&s) {
                rec.model_sample(&crate::ModelSample {
                    t_ns: t,
                    flow: i,
                    snapshot: s,
                })?;
            }
        }
        // Hops after the first follow as `hop1`, `hop2`, ...; access links
        // are a flow's own and have no rows.
        let hops = self
            .hop_segs
            .iter()
            .enumerate()
            .map(|(k, &s)| (HOP_NAMES[k + 1], &self.segs[s as usize].link));
        for (name, link) in [("forward", &self.fwd), ("reverse", &self.rev)]
            .into_iter()
            .chain(hops)
        {
            let q = link.queue(t);
            let st = link.stats();
            rec.link_sample(&LinkSample {
                t_ns: t,
                direction: name,
                queue_packets: q.packets,
                queue_bytes: q.bytes,
                queue_delay_ns: link.queue_delay_ns(t),
                drops: st.dropped_total(),
                ce_marked: st.marked_ce,
            })?;
        }
        Ok(())
    }

    fn summary(&self) -> Summary {
        let flows: Vec<FlowSummary> = self
            .cfg
            .flows
            .iter()
            .zip(&self.flows)
            .map(|(fc, f)| {
                let s = &f.sender;
                let end = f.receiver.completed_ns.unwrap_or(self.cfg.duration_ns);
                let active = end.saturating_sub(f.start_ns).max(1);
                let ms = |v: Option<f64>| v.map(|x| x / 1e6);
                FlowSummary {
                    name: fc.name.clone(),
                    algorithm: algorithm_name(fc),
                    delivered_bytes: f.receiver.unique_bytes,
                    goodput_bps: f.receiver.unique_bytes as f64 * 8.0 * 1e9 / active as f64,
                    rtt_mean_ms: ms(s.rtt_hist.mean()),
                    rtt_median_ms: ms(s.rtt_hist.quantile(0.5)),
                    rtt_p95_ms: ms(s.rtt_hist.quantile(0.95)),
                    rtt_p99_ms: ms(s.rtt_hist.quantile(0.99)),
                    packets_sent: s.packets_sent,
                    retransmissions: s.retransmissions,
                    retransmission_rate: if s.packets_sent == 0 {
                        0.0
                    } else {
                        s.retransmissions as f64 / s.packets_sent as f64
                    },
                    drops: f.drops,
                    rtos: s.rtos,
                    mode_times: s.mode_times.clone(),
                    completion_ns: f.receiver.completed_ns,
                    ce_packets: s.delivered_ce,
                    delivered_packets: s.delivered_packets,
                    // Exact: a run holds at most 10^8 packets (scenario limits).
                    ce_received: f.receiver.ecn_counts.ce as u64,
                }
            })
            .collect();
        let goodputs: Vec<f64> = flows.iter().map(|f| f.goodput_bps).collect();
        Summary {
            jain_fairness: jain_index(&goodputs),
            flows,
            packets_simulated: self.packets,
            ack_packets_simulated: self.rev.stats().offered,
            events: self.events,
            forward_drops: self.fwd.stats().dropped_total(),
            forward_ce_marked: self.fwd.stats().marked_ce,
            reverse_drops: self.rev.stats().dropped_total(),
            reverse_ce_marked: self.rev.stats().marked_ce,
            fct: self.fct.summary(),
            cross: self.cross.iter().map(|c| c.stats.clone()).collect(),
            flow_slots: self.flows.len(),
            peak_live_flows: self.peak_live,
            hops: self
                .hop_segs
                .iter()
                .enumerate()
                .map(|(k, &s)| {
                    let st = self.segs[s as usize].link.stats();
                    HopSummary {
                        name: HOP_NAMES[k + 1],
                        offered: st.offered,
                        drops: st.dropped_total(),
                        ce_marked: st.marked_ce,
                    }
                })
                .collect(),
        }
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
    /// Events are copied in and out of the queue once each: an ACK's ECN
    /// counts (12 bytes) and ECE fit without growing an event past the
    /// ACK itself plus one word (104 bytes, as before ECN).
    #[test]
    fn an_event_is_the_ack_plus_one_word() {
        assert_eq!(std::mem::size_of::<sender::Ack>(), 96);
        assert_eq!(std::mem::size_of::<super::Kind>(), 104);
    }
}
