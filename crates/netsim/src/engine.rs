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
use link::{Direction, Release, ScheduledDelay, Verdict};
use sender::{Ack, AckAction, Ecn, Receiver, SendDecision, Sender};
use std::collections::VecDeque;
use std::io;

/// On-the-wire size of an ACK (TCP/IP headers with SACK and timestamps).
pub const ACK_BYTES: u32 = 60;

/// Event-queue lane for data arrivals at receivers.
const LANE_DATA: usize = 0;
/// Event-queue lane for ACK arrivals at senders.
const LANE_ACK: usize = 1;

#[derive(Clone, Copy, Debug)]
enum Kind {
    Wake(usize),
    Timer(usize),
    DelayedAck(usize),
    Data {
        flow: usize,
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
        ack: Ack,
    },
    Release(Dir),
    /// A data packet reaches the `pos`-th link of its flow's data path
    /// (after an access link or an earlier hop).
    DataHop {
        flow: u32,
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
        pos: u8,
        ack: Ack,
    },
    Sample,
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
    release_at: Option<u64>,
    wire: Option<ScheduledDelay>,
}

/// What travels through a link direction while held by ACK aggregation.
#[derive(Clone, Copy, Debug)]
enum Payload {
    Data {
        flow: usize,
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
        ack: Ack,
        /// Which link of the flow's ACK path it is on.
        pos: u8,
    },
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
    /// The receiver decimates ACKs and needs a min_rtt.
    decimated_acks: bool,
    drops: u64,
    last_sample_delivered: u64,
    /// The links its data crosses in order (`[Forward]` on a single path).
    data_path: Vec<Dir>,
    /// The links its ACKs cross in order (`[Reverse]` without access).
    ack_path: Vec<Dir>,
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
    release_at: [Option<u64>; 2],
    events: u64,
    packets: u64,
    /// Access links and hops after the first.
    segs: Vec<Seg>,
    /// `segs` index of hop k (k >= 1) at `hop_segs[k - 1]`.
    hop_segs: Vec<u16>,
    fwd_wire: Option<ScheduledDelay>,
    rev_wire: Option<ScheduledDelay>,
}

/// Runs `cfg` to completion, streaming samples to `rec`.
///
/// A topology the engine cannot build (more than [`crate::MAX_HOPS`]
/// hops, a flow's `hops` out of range or reversed) is an
/// [`io::ErrorKind::InvalidInput`] error naming the flow.
pub fn run(cfg: &SimConfig, rec: &mut dyn Recorder) -> io::Result<Summary> {
    let n_hops = cfg.topology.hops.len() + 1;
    let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
    if n_hops > crate::config::MAX_HOPS {
        return Err(invalid(format!(
            "{n_hops} hops; at most {}",
            crate::config::MAX_HOPS
        )));
    }
    for f in &cfg.flows {
        if let Some((first, last)) = f.hops {
            if first > last || last >= n_hops {
                return Err(invalid(format!(
                    "flow `{}`: hops ({first}, {last}); allowed first <= last < {n_hops}",
                    f.name
                )));
            }
        }
    }
    let mut sim = Sim::new(cfg);
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
    fn new(cfg: &'a SimConfig) -> Self {
        // Segments: the hops after the first, then each flow's access
        // links, each with its own random stream (1 and 2 are the shared
        // directions, 100 + i the flows).
        let mut segs: Vec<Seg> = Vec::new();
        let mut add_seg = |seg: &crate::config::Segment, stream: u64| {
            let mut d = seg.direction.clone();
            if seg.delay_schedule.is_some() {
                d.delay_ns = 0;
            }
            segs.push(Seg {
                link: Direction::new(&d, sub_seed(cfg.seed, stream)),
                held: VecDeque::new(),
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
        let mut paths = Vec::with_capacity(cfg.flows.len());
        for (i, f) in cfg.flows.iter().enumerate() {
            let mut data_path = Vec::new();
            if let Some(a) = &f.access_forward {
                data_path.push(add_seg(a, 1_000_000 + 2 * i as u64));
            }
            let (first, last) = f.hops.unwrap_or((0, hop_dirs.len() - 1));
            data_path.extend_from_slice(&hop_dirs[first..=last]);
            let mut ack_path = vec![Dir::Reverse];
            if let Some(a) = &f.access_reverse {
                ack_path.push(add_seg(a, 1_000_001 + 2 * i as u64));
            }
            paths.push((data_path, ack_path));
        }
        let hop_segs = hop_dirs[1..]
            .iter()
            .map(|d| match d {
                Dir::Seg(k) => *k,
                _ => unreachable!("hops after the first are segments"),
            })
            .collect();
        let flows = cfg
            .flows
            .iter()
            .zip(paths)
            .enumerate()
            .map(|(i, (f, (data_path, ack_path)))| {
                let mss = f.cc.mss_bytes.max(1);
                let total_chunks = f.size_bytes.map(|s| s.div_ceil(mss).max(1));
                Flow {
                    sender: Sender::new(&f.sender_config(), sub_seed(cfg.seed, 100 + i as u64)),
                    receiver: Receiver::new(f.ack, total_chunks),
                    start_ns: f.start_ns,
                    extra_rtt_ns: f.extra_rtt_ns,
                    header_bytes: f.header_bytes,
                    wake_at: None,
                    timer_at: None,
                    delack_at: None,
                    decimated_acks: matches!(f.ack, sender::AckPolicy::Decimated { .. }),
                    drops: 0,
                    last_sample_delivered: 0,
                    data_path,
                    ack_path,
                }
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
        Sim {
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
            release_at: [None; 2],
            events: 0,
            packets: 0,
            segs,
            hop_segs,
            fwd_wire: topo.forward_delay_schedule.clone().map(ScheduledDelay::new),
            rev_wire: topo.reverse_delay_schedule.clone().map(ScheduledDelay::new),
        }
    }

    fn link_mut(&mut self, dir: Dir) -> &mut Direction {
        match dir {
            Dir::Forward => &mut self.fwd,
            Dir::Reverse => &mut self.rev,
            Dir::Seg(k) => &mut self.segs[k as usize].link,
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

    /// Offers a data packet to the link at `pos` of its flow's data path.
    fn enter_data(&mut self, wire: u32, payload: Payload) {
        let Payload::Data { flow, ecn, pos, .. } = payload else {
            unreachable!("data only")
        };
        let dir = self.flows[flow].data_path[pos as usize];
        let now = self.now;
        let link = self.link_mut(dir);
        let verdict = match ecn {
            Ecn::NotEct => link.enqueue(now, wire),
            e => link.enqueue_with(now, wire, e),
        };
        self.route(dir, verdict, payload);
    }

    fn push(&mut self, t: u64, kind: Kind) {
        self.queue.push(t, kind);
    }

    fn run(&mut self, rec: &mut dyn Recorder) -> io::Result<()> {
        for i in 0..self.flows.len() {
            let t = self.flows[i].start_ns;
            self.schedule_wake(i, t);
        }
        if self.cfg.sample_interval_ns > 0 {
            self.push(0, Kind::Sample);
        }
        while let Some(ev) = self.queue.pop() {
            if ev.t >= self.cfg.duration_ns {
                break;
            }
            self.now = ev.t;
            self.events += 1;
            match ev.kind {
                Kind::Wake(f) => {
                    if self.flows[f].wake_at == Some(ev.t) {
                        self.flows[f].wake_at = None;
                        self.kick(f);
                    }
                }
                Kind::Timer(f) => {
                    if self.flows[f].timer_at == Some(ev.t) {
                        self.flows[f].timer_at = None;
                        self.flows[f].sender.on_timer(self.now);
                        self.kick(f);
                    }
                }
                Kind::DelayedAck(f) => {
                    if self.flows[f].delack_at == Some(ev.t) {
                        self.flows[f].delack_at = None;
                        if let Some(ack) = self.flows[f].receiver.on_delayed_ack_timer(self.now) {
                            self.send_ack(f, ack);
                        }
                    }
                }
                Kind::Data {
                    flow,
                    pn,
                    chunk,
                    bytes,
                    ecn,
                    cwr,
                } => self.on_data(flow, pn, chunk, bytes, ecn, cwr),
                Kind::AckArrival { flow, ack } => {
                    let flow = flow as usize;
                    self.flows[flow].sender.on_ack(self.now, &ack);
                    self.kick(flow);
                }
                Kind::Release(dir) => {
                    match dir {
                        Dir::Forward => self.release_at[0] = None,
                        Dir::Reverse => self.release_at[1] = None,
                        Dir::Seg(k) => self.segs[k as usize].release_at = None,
                    }
                    self.drain_releases(dir);
                }
                Kind::DataHop {
                    flow,
                    pos,
                    pn,
                    chunk,
                    bytes,
                    ecn,
                    cwr,
                } => {
                    let flow = flow as usize;
                    let wire = bytes.saturating_add(self.flows[flow].header_bytes);
                    self.enter_data(
                        wire,
                        Payload::Data {
                            flow,
                            pn,
                            chunk,
                            bytes,
                            ecn,
                            cwr,
                            pos,
                        },
                    );
                }
                Kind::AckHop { flow, pos, ack } => {
                    let flow = flow as usize;
                    let dir = self.flows[flow].ack_path[pos as usize];
                    let now = self.now;
                    let verdict = self.link_mut(dir).enqueue(now, ACK_BYTES);
                    self.route(dir, verdict, Payload::Ack { flow, ack, pos });
                }
                Kind::Sample => {
                    self.sample(rec)?;
                    let next = self.now + self.cfg.sample_interval_ns;
                    self.push(next, Kind::Sample);
                }
            }
        }
        self.now = self.cfg.duration_ns;
        for f in &mut self.flows {
            f.sender.finish(self.cfg.duration_ns.max(f.start_ns));
        }
        Ok(())
    }

    fn schedule_wake(&mut self, f: usize, t: u64) {
        if self.flows[f].wake_at.is_some_and(|w| w <= t) {
            return;
        }
        self.flows[f].wake_at = Some(t);
        self.push(t, Kind::Wake(f));
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
        self.push(d, Kind::Timer(f));
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
                    self.enter_data(
                        wire,
                        Payload::Data {
                            flow: f,
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
                match dir {
                    Dir::Forward => self.fwd_held.push_back((id, payload)),
                    Dir::Reverse => self.rev_held.push_back((id, payload)),
                    Dir::Seg(k) => self.segs[k as usize].held.push_back((id, payload)),
                }
                self.drain_releases(dir);
            }
            Verdict::Drop { .. } => {
                // A flow's drops are its data packets lost on any link of
                // its data path (ACKs travel the reverse ones).
                if let Payload::Data { flow, .. } = payload {
                    self.flows[flow].drops += 1;
                }
            }
        }
    }

    fn arrive(&mut self, t: u64, payload: Payload) {
        match payload {
            Payload::Data {
                flow,
                pn,
                chunk,
                bytes,
                ecn,
                cwr,
                pos,
            } => {
                if pos as usize + 1 < self.flows[flow].data_path.len() {
                    self.queue.push(
                        t,
                        Kind::DataHop {
                            flow: flow as u32,
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
                        flow,
                        pn,
                        chunk,
                        bytes,
                        ecn,
                        cwr,
                    },
                )
            }
            Payload::Ack { flow, ack, pos } => {
                if pos as usize + 1 < self.flows[flow].ack_path.len() {
                    self.queue.push(
                        t,
                        Kind::AckHop {
                            flow: flow as u32,
                            pos: pos + 1,
                            ack,
                        },
                    );
                    return;
                }
                let t = t + self.flows[flow].extra_rtt_ns;
                let flow = flow as u32; // at most 1000 flows (scenario limits)
                self.queue
                    .push_lane(LANE_ACK, t, Kind::AckArrival { flow, ack });
            }
        }
    }

    /// Hands on every held packet the link has released, and schedules the
    /// next release timeout.
    fn drain_releases(&mut self, dir: Dir) {
        let now = self.now;
        self.releases.clear();
        let (link, held) = match dir {
            Dir::Forward => (&mut self.fwd, &mut self.fwd_held),
            Dir::Reverse => (&mut self.rev, &mut self.rev_held),
            Dir::Seg(k) => {
                let s = &mut self.segs[k as usize];
                (&mut s.link, &mut s.held)
            }
        };
        link.release_due(now, &mut self.releases);
        let next = link.next_release_ns();
        let mut out: Vec<(u64, Payload)> = Vec::with_capacity(self.releases.len());
        for r in &self.releases {
            if let Some(pos) = held.iter().position(|h| h.0 == r.id) {
                let (_, p) = held.remove(pos).expect("position is in range");
                out.push((r.arrive_ns, p));
            }
        }
        for (t, p) in out {
            let t = self.wire(dir, t);
            self.arrive(t, p);
        }
        if let Some(t) = next {
            let slot = match dir {
                Dir::Forward => &mut self.release_at[0],
                Dir::Reverse => &mut self.release_at[1],
                Dir::Seg(k) => &mut self.segs[k as usize].release_at,
            };
            if slot.is_none_or(|s| t < s) {
                *slot = Some(t);
                self.push(t.max(now), Kind::Release(dir));
            }
        }
    }

    fn on_data(&mut self, f: usize, pn: u64, chunk: u64, bytes: u32, ecn: Ecn, cwr: bool) {
        if self.flows[f].decimated_acks {
            // Chromium's receiver scales its decimation timer by its own
            // min_rtt, measured on the same path: the sender's stands in.
            let min_rtt = self.flows[f].sender.cc.rtt().min_ns();
            self.flows[f].receiver.set_min_rtt_ns(min_rtt);
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
                    self.push(t, Kind::DelayedAck(f));
                }
            }
        }
    }

    /// ACKs are not ECN-capable (Not-ECT), as TCP's pure ACKs (RFC 3168
    /// §6.1.4); a marking queue drops them as before.
    fn send_ack(&mut self, f: usize, ack: Ack) {
        let verdict = self.rev.enqueue(self.now, ACK_BYTES);
        self.route(
            Dir::Reverse,
            verdict,
            Payload::Ack {
                flow: f,
                ack,
                pos: 0,
            },
        );
    }

    fn sample(&mut self, rec: &mut dyn Recorder) -> io::Result<()> {
        let t = self.now;
        let interval = self.cfg.sample_interval_ns.max(1);
        let fwd_queue_delay_ns = self.fwd.queue_delay_ns(t);
        for (i, f) in self.flows.iter_mut().enumerate() {
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
                    algorithm: fc
                        .custom_cc
                        .as_ref()
                        .map_or(fc.cc.algorithm.name(), |c| c.name.as_str())
                        .to_string(),
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
