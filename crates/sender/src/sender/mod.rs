//! The sending end of a flow: the application's data, pacing, loss
//! detection, retransmission and the retransmission timer, around one
//! `congestion::Controller`.
//!
//! Loss detection follows RACK / RFC 9002 §6.1: a packet is lost once a
//! packet sent 3 or more later is acknowledged, or 9/8 of an RTT after it
//! was sent if a later one was acknowledged. A retransmission timeout
//! (RFC 6298: srtt + 4·rttvar, at least 200 ms as Linux, doubled on each
//! expiry) declares everything outstanding lost.
//!
//! Cost per ACK is O(newly acked + unresolved holes), not O(window): the
//! sender keeps a short list of packets that were skipped over by an ACK
//! and are not yet resolved, instead of rescanning the window.

use crate::app::AppState;
use crate::config::{LossDetection, MssChange, Pacing, SenderConfig, Timeout};
use crate::ecn::{extend_count, Ecn, EcnFeedback, SentPacket};
use crate::histogram::LogHistogram;
use crate::mode_times::ModeTimes;
use crate::receiver::{Ack, ACK_RANGES};
use congestion::{
    AckEvent, AckedPacket, Burst, Controller, Instant, LostPacket, Mode, Pacer, RecoveryExit,
    RecoveryPoint, RecoveryState, SentPacketState,
};
use std::collections::{BTreeSet, VecDeque};
use std::time::Duration;

mod ack;
mod ce;
mod defer;
mod ledger;
mod rack;
mod recovery;
mod rto;
mod send;
mod skb;
mod stats;
mod tail;
mod timestamps;
mod tlp;
mod undo;

use defer::Deferral;
use ledger::{uncovered, LostList};

/// Packet threshold for loss (RFC 9002 kPacketThreshold).
const PACKET_THRESHOLD: u64 = 3;
/// Minimum retransmission timeout (Linux TCP_RTO_MIN).
const MIN_RTO_NS: u64 = 200_000_000;
/// Initial retransmission timeout (RFC 6298 §2.1).
const INITIAL_RTO_NS: u64 = 1_000_000_000;
/// Largest retransmission timeout: Linux's `TCP_RTO_MAX`, 120 s (RFC 6298
/// §2.5 allows any cap of at least 60 s).
pub const MAX_RTO_NS: u64 = 120_000_000_000;
/// How many recoveries without a DSACK the widened reordering window
/// survives (Linux `TCP_RACK_RECOVERY_THRESH`, RFC 8985 §6.2 step 4).
const REO_WND_PERSIST: u32 = 16;
/// QUIC 2018's floor on its time threshold (`kMinLossDelayMs`).
const QUIC_2018_MIN_LOSS_DELAY_NS: u64 = 5_000_000;
/// Loss-detection timer granularity (RFC 9002 kGranularity).
const GRANULARITY_NS: u64 = 1_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Outstanding,
    Acked,
    Lost,
}

#[derive(Clone, Copy, Debug)]
struct SentPkt {
    chunk: u64,
    bytes: u32,
    sent: Instant,
    state: SentPacketState,
    status: Status,
    /// Whether this packet carried a chunk already sent before (a repair,
    /// a PTO or a tail-loss probe): counts towards `retrans_out`.
    retx: bool,
    /// The undo episode in which it was declared lost (0: none).
    lost_in: u32,
    /// The ECN codepoint it was sent with.
    ecn: Ecn,
}

/// What the sender can do right now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendDecision {
    /// Send this chunk now.
    Send {
        /// Data chunk index.
        chunk: u64,
        /// Payload bytes.
        bytes: u32,
        /// Whether it is a retransmission.
        retransmission: bool,
    },
    /// Pacing: try again at this time.
    PaceUntil(Instant),
    /// The congestion window is full: wait for an ACK.
    CwndLimited,
    /// The application has nothing to send until this time (or never).
    NoData(Option<Instant>),
    /// The receiver's flow-control limit stops new data: a transport's
    /// ([`Sender::set_flow_limit`]) or a TCP receiver's window (the
    /// right edge its ACKs offer, [`crate::Ack::rwnd_chunks`]).
    FlowBlocked,
}

/// One flow's sender.
pub struct Sender {
    /// The congestion controller.
    pub cc: Controller,
    mss: u64,
    pkts: VecDeque<SentPkt>,
    base_pn: u64,
    next_pn: u64,
    /// Unresolved packet numbers below `cursor`, ascending.
    holes: Vec<u64>,
    cursor: u64,
    largest_acked: Option<u64>,
    /// Bytes in flight.
    pub inflight: u64,
    /// The most bytes in flight since [`Sender::take_inflight_peak`] was
    /// last called: a time series sampled every few milliseconds misses
    /// a burst between samples, and whether a flow ever filled its window
    /// is judged from this.
    inflight_peak: u64,
    retx: VecDeque<(u64, u32)>,
    next_chunk: u64,
    total_chunks: Option<u64>,
    /// The flow's size, for cutting what is left into segments of a new
    /// size.
    size_bytes: Option<u64>,
    /// A segment-size change still to come.
    mss_change: Option<MssChange>,
    /// Chunks from this one on are of `mss` bytes; those before, of
    /// `first_mss` (no change yet: never).
    mss_from_chunk: u64,
    /// The segment size before the change.
    first_mss: u64,
    /// A change that re-cut a finite flow: its new chunk count, for the
    /// receiver's completion test (taken once).
    new_total_chunks: Option<u64>,
    last_chunk_bytes: u32,
    stop: Option<Instant>,
    app: AppState,
    /// When the next packet may leave (congestion's earliest-departure-time
    /// schedule; with quantum pacing, packets may join the `burst` sent at
    /// the same instant).
    pacer: Pacer,
    pacing: Pacing,
    /// The last packet time the pacer was charged: (bytes, rate in bytes
    /// per second, `Pacer::packet_time_ns` of the two).
    pacing_memo: (u64, u64, u64),
    /// Packets that may leave before the pacer charges any its time
    /// ([`SenderConfig::initial_burst_packets`]).
    initial_burst: u64,
    timeout: Timeout,
    /// Probe packets owed after a PTO fired (RFC 9002 §6.2.4).
    probes_owed: u32,
    /// When the first RTT sample arrived (persistent congestion only
    /// counts packets sent after it, RFC 9002 §7.6.2).
    first_rtt_at: Option<Instant>,
    /// Set by loss detection when the newly lost packets show persistent
    /// congestion.
    persistent_congestion: bool,
    /// Quantum pacing: the last burst sent (one Linux TSO super-packet);
    /// a packet at the same instant joins it while it has room.
    burst: Option<Burst>,
    /// Quantum pacing of TCP segments (a sender with TCP's RTO): the
    /// chunk that continues the open burst and whether it is a
    /// retransmission. A TCP burst is one skb, contiguous bytes of one
    /// kind: Linux retransmits a lost skb on its own
    /// (`tcp_xmit_retransmit_queue()`, each paced by `tcp_pacing_check()`)
    /// and builds new-data skbs in `tcp_write_xmit()`, so a repair never
    /// rides in a new-data burst, and two repairs share one only when
    /// their chunks are adjacent. Drop-tail losses are mostly single
    /// segments, so a kernel flow in recovery sends most repairs alone
    /// (kernel 6.18 on the emulator, two `bbr` flows on 1 BDP: 150 of
    /// 205 repair bursts one segment). `None` for QUIC, whose GSO batch
    /// may carry any packets.
    skb_next: Option<(u64, bool)>,
    /// A TCP sender's open send unit, which says where PSH goes
    /// (`skb.rs`).
    unit: skb::SendUnit,
    /// Whether PSH is marked: a TCP sender (TCP's RTO) unless turned off
    /// ([`Sender::set_marks_push`]).
    marks_push: bool,
    /// Whether the sender defers TSO packets as Linux does (`defer.rs`,
    /// [`SenderConfig::tso_defer`]).
    tso_defer: bool,
    /// The TSO packet at the head of new data, for the deferral.
    tso: defer::TsoSkb,
    /// TCP timestamps and what Linux builds on them (`timestamps.rs`,
    /// [`SenderConfig::timestamps`]).
    stamps: timestamps::Stamps,
    app_limited_marked: bool,
    rto_backoff: u32,
    rto_base: Instant,
    loss_time: Option<Instant>,
    /// Data packets sent, retransmissions, RTOs.
    pub packets_sent: u64,
    /// Retransmitted packets.
    pub retransmissions: u64,
    /// Packets declared lost so far (each one queued for repair; a loss
    /// undone later still counted). For logs that want loss events
    /// (qlog's `recovery:packet_lost`).
    pub packets_lost: u64,
    /// Retransmission timeouts (probe timeouts with [`Timeout::Pto`]).
    pub rtos: u64,
    /// RTT samples, ns.
    pub rtt_hist: LogHistogram,
    /// Latest RTT sample.
    pub latest_rtt_ns: Option<u64>,
    /// Time spent in each controller mode.
    pub mode_times: ModeTimes,
    last_mode: Mode,
    /// Whether `bbr-jitter` used srtt since `last_mode_ns` (None: no such rule).
    last_using_srtt: Option<bool>,
    last_mode_at: Instant,
    acked_buf: Vec<AckedPacket>,
    lost_buf: Vec<LostPacket>,
    /// Chunks declared lost and not yet delivered by any packet.
    unrepaired: BTreeSet<u64>,
    /// The largest chunk ever put in `unrepaired` (0: none): nothing
    /// above it is there, since `mark_lost` is its only insertion. An
    /// upper bound, not its maximum (removals leave it), which is all
    /// `ack_pn`'s quick test needs.
    unrepaired_bound: u64,
    /// The recovery point of the current episode, as (next packet number,
    /// next new chunk) when it began: TCP's `high_seq`.
    recovery_point: Option<(u64, u64)>,
    /// The controller's episode count when the point was last noted.
    seen_episodes: u64,
    /// The highest cumulative point the receiver has reported.
    cum_chunk: u64,
    /// One past the chunk of the last short segment sent (a write's
    /// tail), 0 before any: Linux's `snd_sml`, which Nagle's test with
    /// Minshall's change compares with the cumulative ACK (`tail.rs`).
    short_end: u64,
    /// Chunks below this index may be sent (receiver flow control).
    flow_limit: Option<u64>,
    /// Since when new data has waited for the receiver's window, if it
    /// does, and the time it waited before: Linux's
    /// `TCP_CHRONO_RWND_LIMITED` (`tcpi_rwnd_limited`).
    rwnd_blocked_since: Option<Instant>,
    rwnd_limited_ns: u64,
    /// Packets declared lost that are still in the window, so an ACK that
    /// arrives for one after all (it was reordered or delayed, not lost)
    /// is found in O(log n).
    lost: LostList,
    /// The previous ACK's ranges, to find what an ACK adds.
    prev_ranges: [(u64, u64); ACK_RANGES],
    prev_len: usize,
    /// Retransmitted packets in flight (Linux `retrans_out`).
    retrans_out: u64,
    /// Loss episodes begun: each fast recovery, a recovery begun again at
    /// the recovery point with repairs pending (Linux stack), and the first
    /// of each run of timeouts. Linux counts the recoveries, both kinds, in
    /// `TCPSackRecovery`, so this is that plus the timeouts that were not
    /// repeats. The first kind and the timeouts are where this sender (as
    /// Linux) begins an episode that may be undone; a recovery begun again
    /// keeps the episode it had.
    pub loss_episodes: u64,
    /// Spurious-loss undos performed, and how many followed a timeout.
    pub undos: u64,
    /// Undos of a retransmission timeout (F-RTO, RFC 5682).
    pub rto_undos: u64,
    /// Undos within a fast recovery, before its point, when a timestamp
    /// echo showed an original filled the hole (Linux `TCPPartialUndo`;
    /// only with [`SenderConfig::timestamps`]). Counted in `undos` too.
    pub partial_undos: u64,
    /// ACKs that acknowledged a packet already declared lost.
    pub late_acks: u64,
    /// Tail-loss probes sent (RFC 8985 §7).
    pub tail_loss_probes: u64,
    /// Which loss detection runs.
    loss_detection: LossDetection,
    /// The largest packet the ACK being processed newly acknowledges, and
    /// its send time (QUIC's `largest_newly_acked`).
    newly_largest: Option<(u64, Instant)>,
    /// The largest acknowledged packet's send time, for losses found by
    /// the timer.
    largest_acked_sent: Instant,
    /// Discontiguous packet-number ranges among the losses being
    /// gathered in `lost_buf`, and the last packet number added.
    lost_ranges: u32,
    last_lost_pn: Option<u64>,
    /// ECN validation failed (RFC 9000 §13.4.2.1): the sender stopped
    /// marking its packets ECN-capable.
    pub ecn_failed: bool,
    /// Packets the sender has learned were CE-marked, as told to the
    /// controller: `flows.csv`'s `delivered_ce`.
    pub delivered_ce: u64,
    /// Packets acknowledged so far (the CE fraction's denominator).
    pub delivered_packets: u64,
    /// RACK's reordering window.
    reo: rack::Reordering,
    /// The undo episode under way.
    undo: undo::UndoState,
    /// The tail-loss probe.
    tlp: tlp::TailLossProbe,
    /// ECN: marking, the peer's counts, TCP's CWR.
    ecn: ce::EcnState,
}

impl Sender {
    /// A sender for `flow`, seeded for BBR's random choices.
    ///
    /// # Panics
    ///
    /// If the flow's custom controller is known only by name
    /// ([`crate::CustomCc::named`]); check [`crate::CustomCc::is_built`]
    /// first, as the simulator and the transport do.
    pub fn new(flow: &SenderConfig, seed: u64) -> Self {
        let mut cc_cfg = flow.cc;
        cc_cfg.seed = seed;
        // TCP with SACK: recovery episodes end as in Linux, when the
        // cumulative ACK passes the recovery point. QUIC has no cumulative
        // point; its episodes end when a packet sent after they began is
        // acknowledged (RFC 9002 §7.3.2).
        cc_cfg.recovery_exit = match flow.loss_detection {
            LossDetection::Linux => RecoveryExit::Transport,
            LossDetection::Quic2018 => RecoveryExit::FirstAckAfterStart,
        };
        // TCP's receiver (`ack = "linux"`, ECE feedback) reports no ACK
        // delay and TCP smooths the RTT of the oldest segment an ACK covers
        // (Linux's `seq_rtt_us`); QUIC smooths the largest acknowledged,
        // less the ACK delay its peer reports (RFC 9002 §5).
        if flow.ecn_feedback == EcnFeedback::Ece {
            cc_cfg.srtt_sample = congestion::SrttSample::Oldest;
        }
        // A flow that sends ECN-capable packets has ECN negotiated: BBRv3's
        // ECN logic is eligible from the start (Linux v3 `bbr_can_use_ecn()`
        // reads the negotiated `TCP_ECN_OK`), not from the first mark.
        if flow.ecn != Ecn::NotEct {
            cc_cfg.bbr3.ecn_capable = true;
        }
        let mss = cc_cfg.mss_bytes.max(1);
        let (total_chunks, last_chunk_bytes) = match flow.size_bytes {
            None => (None, mss as u32),
            Some(size) => {
                let n = size.div_ceil(mss).max(1);
                let last = size - (n - 1) * mss;
                (Some(n), last.max(1) as u32)
            }
        };
        let start = Instant::from_nanos(flow.start_ns);
        let cc = match &flow.custom_cc {
            Some(custom) => match custom.build(&cc_cfg, start) {
                Some(built) => Controller::custom(&cc_cfg, built),
                // The simulator and the transport refuse such a flow before
                // they build its sender (`CustomCc::unbuilt_error`).
                None => panic!("{}", custom.unbuilt_error().unwrap_or_default()),
            },
            None => Controller::new(&cc_cfg, start),
        };
        let mode = cc.snapshot().mode;
        Sender {
            cc,
            mss,
            pkts: VecDeque::new(),
            base_pn: 0,
            next_pn: 0,
            holes: Vec::new(),
            cursor: 0,
            largest_acked: None,
            inflight: 0,
            inflight_peak: 0,
            retx: VecDeque::new(),
            next_chunk: 0,
            total_chunks,
            size_bytes: flow.size_bytes,
            mss_change: flow.mss_change,
            mss_from_chunk: u64::MAX,
            first_mss: mss,
            new_total_chunks: None,
            last_chunk_bytes,
            stop: flow.stop_ns.map(Instant::from_nanos),
            app: AppState::new(&flow.app, start),
            pacer: Pacer::starting_at(start),
            pacing: flow.pacing,
            pacing_memo: (0, 0, Pacer::packet_time_ns(0, 0)),
            initial_burst: u64::from(flow.initial_burst_packets),
            timeout: flow.timeout,
            probes_owed: 0,
            first_rtt_at: None,
            persistent_congestion: false,
            burst: None,
            skb_next: None,
            unit: skb::SendUnit::default(),
            marks_push: matches!(flow.timeout, Timeout::Rto),
            tso_defer: Self::defers_tso(flow),
            tso: defer::TsoSkb::default(),
            stamps: timestamps::Stamps::new(flow.keeps_timestamps()),
            app_limited_marked: false,
            rto_backoff: 0,
            rto_base: start,
            loss_time: None,
            packets_sent: 0,
            retransmissions: 0,
            packets_lost: 0,
            rtos: 0,
            rtt_hist: LogHistogram::default(),
            latest_rtt_ns: None,
            mode_times: ModeTimes::default(),
            last_mode: mode,
            last_using_srtt: None,
            last_mode_at: start,
            acked_buf: Vec::new(),
            lost_buf: Vec::new(),
            unrepaired: BTreeSet::new(),
            unrepaired_bound: 0,
            recovery_point: None,
            seen_episodes: 0,
            flow_limit: None,
            rwnd_blocked_since: None,
            rwnd_limited_ns: 0,
            cum_chunk: 0,
            short_end: 0,
            lost: LostList::default(),
            prev_ranges: [(0, 0); ACK_RANGES],
            prev_len: 0,
            retrans_out: 0,
            loss_episodes: 0,
            undos: 0,
            rto_undos: 0,
            partial_undos: 0,
            late_acks: 0,
            tail_loss_probes: 0,
            loss_detection: flow.loss_detection,
            newly_largest: None,
            largest_acked_sent: Instant::ZERO,
            lost_ranges: 0,
            last_lost_pn: None,
            ecn_failed: false,
            delivered_ce: 0,
            delivered_packets: 0,
            reo: rack::Reordering {
                seen: false,
                steps: 1,
                persist: 0,
                last_delivered: 0,
                dsack_pending: false,
            },
            undo: undo::UndoState {
                marker: false,
                retrans: -1,
                episode: 0,
                lost: 0,
                tell_controller: false,
            },
            tlp: tlp::TailLossProbe {
                deadline: None,
                owed: false,
                in_flight: false,
                // TCP has TLP (Linux default); QUIC's PTO already is a probe.
                enabled: flow.timeout == Timeout::Rto && flow.tail_loss_probe,
            },
            ecn: ce::EcnState {
                codepoint: flow.ecn,
                feedback: flow.ecn_feedback,
                peer: [0; 3],
                configured: flow.ecn != Ecn::NotEct,
                ect_sent: [0; 2],
                ect_acked: [0; 2],
                newly_ect: [0; 2],
                cwr_pending: false,
                cwr_high: None,
            },
        }
    }

    /// The most bytes in flight since the last call (at least what is in
    /// flight now); the next call counts from now.
    pub fn take_inflight_peak(&mut self) -> u64 {
        std::mem::replace(&mut self.inflight_peak, self.inflight).max(self.inflight)
    }

    fn chunk_bytes(&self, chunk: u64) -> u32 {
        if Some(chunk + 1) == self.total_chunks {
            self.last_chunk_bytes
        } else if chunk >= self.mss_from_chunk {
            self.mss as u32
        } else {
            self.first_mss as u32
        }
    }

    /// Applies a segment-size change that is due at `now`: chunks not yet
    /// sent take the new size, a finite flow's remaining bytes are cut
    /// anew, and the controller hears of it.
    pub(super) fn apply_mss_change(&mut self, now: Instant) {
        let Some(change) = self.mss_change.filter(|c| now.as_nanos() >= c.at_ns) else {
            return;
        };
        self.mss_change = None;
        let mss = change.mss.max(1);
        let from = self.next_chunk;
        if let (Some(size), Some(total)) = (self.size_bytes, self.total_chunks) {
            if from < total {
                // Every chunk before `from` is whole: the short last one
                // has not been sent.
                let left = size - from * self.mss;
                let n = left.div_ceil(mss).max(1);
                self.total_chunks = Some(from + n);
                self.last_chunk_bytes = (left - (n - 1) * mss).max(1) as u32;
                self.new_total_chunks = self.total_chunks;
            }
        }
        self.first_mss = self.mss;
        self.mss_from_chunk = from;
        self.mss = mss;
        self.cc.on_mss_change(mss);
    }

    /// A finite flow's new chunk count after a segment-size change, once:
    /// whoever tests the receiver for completion needs it.
    pub fn take_new_total_chunks(&mut self) -> Option<u64> {
        self.new_total_chunks.take()
    }

    /// Whether every chunk of a finite flow has been sent at least once and
    /// nothing is waiting for retransmission or in flight.
    pub fn is_done(&self) -> bool {
        self.total_chunks == Some(self.next_chunk) && !self.repairs_queued() && self.inflight == 0
    }

    /// Whether a queued repair still carries undelivered data. Entries
    /// whose chunk was delivered meanwhile (its original was acknowledged
    /// late) are dropped lazily when they reach the queue's front.
    fn repairs_queued(&self) -> bool {
        self.retx.iter().any(|(c, _)| self.unrepaired.contains(c))
    }

    /// Drops queued repairs at the front whose data has been delivered.
    fn prune_repairs(&mut self) {
        while let Some(&(c, _)) = self.retx.front() {
            if self.unrepaired.contains(&c) {
                break;
            }
            self.retx.pop_front();
        }
    }

    /// Whether the flow has ended at `now`: a finite flow is done, or a
    /// flow with a stop time has passed it, and nothing is waiting for
    /// retransmission or in flight.
    pub fn is_finished(&self, now: Instant) -> bool {
        let no_more =
            self.total_chunks == Some(self.next_chunk) || self.stop.is_some_and(|s| now >= s);
        no_more && !self.repairs_queued() && self.inflight == 0
    }

    /// Chunks sent at least once (the stream's length so far, in chunks).
    pub fn chunks_sent(&self) -> u64 {
        self.next_chunk
    }

    /// Sets the receiver's flow-control limit: chunks below `limit` may be
    /// sent. Limits only grow, as in QUIC's MAX_DATA.
    pub fn set_flow_limit(&mut self, limit: u64) {
        self.flow_limit = Some(self.flow_limit.map_or(limit, |l| l.max(limit)));
    }

    /// How long new data the application had waited for the receiver's
    /// window (or a transport's flow-control limit), ns: Linux's
    /// `tcpi_rwnd_limited`, whose clock starts when a send finds the
    /// window closed and stops at the next send attempt that does not
    /// (`tcp_chrono_start()`/`tcp_chrono_stop()` in `tcp_write_xmit()`).
    /// An interval still open counts up to `now`.
    pub fn rwnd_limited_ns(&self, now: Instant) -> u64 {
        self.rwnd_limited_ns + self.rwnd_blocked_since.map_or(0, |t| now.nanos_since(t))
    }

    /// A send attempt found the window closed with data to send.
    #[cold]
    pub(super) fn rwnd_blocked(&mut self, now: Instant) {
        self.rwnd_blocked_since.get_or_insert(now);
    }

    /// A send attempt found the window open: the blocked time ends.
    #[inline]
    pub(super) fn rwnd_open(&mut self, now: Instant) {
        if let Some(t) = self.rwnd_blocked_since.take() {
            self.rwnd_limited_ns += now.nanos_since(t);
        }
    }

    /// The connection's handshake ended at `now`, its exchange taking
    /// `rtt`: the controller takes that RTT as its first sample (Linux
    /// measures the SYN exchange and builds BBR from it,
    /// [`congestion::Controller::on_handshake_rtt`]), and sending, the
    /// timers and the application's data start now. A caller that models
    /// no handshake never calls it.
    pub fn on_handshake(&mut self, now: Instant, rtt: Duration) {
        self.cc.on_handshake_rtt(now, rtt);
        self.first_rtt_at = Some(now);
        self.pacer.hold_until(now);
        self.rto_base = now;
        self.app.restart(now);
    }

    /// Bytes acknowledged so far.
    pub fn delivered_bytes(&self) -> u64 {
        self.cc.sampler().delivered_bytes()
    }

    /// The timestamp packet `pn` carried (TCP's TSval: its send time in
    /// milliseconds, 32 bits), while the sender holds it (in flight, or
    /// declared lost and not yet resolved): for a simulated receiver.
    pub fn tsval_ms(&self, pn: u64) -> Option<u32> {
        self.pkt(pn)
            .or_else(|| self.lost.get(pn))
            .map(|p| timestamps::ms(p.sent))
    }

    fn pkt(&self, pn: u64) -> Option<&SentPkt> {
        self.pkts.get(pn.checked_sub(self.base_pn)? as usize)
    }

    fn set_status(&mut self, pn: u64, status: Status) {
        if let Some(p) = self.pkt_mut(pn) {
            p.status = status;
        }
    }

    fn pkt_mut(&mut self, pn: u64) -> Option<&mut SentPkt> {
        if pn < self.base_pn {
            return None;
        }
        self.pkts.get_mut((pn - self.base_pn) as usize)
    }
}
