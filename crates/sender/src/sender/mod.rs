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
use crate::config::{LossDetection, Pacing, SenderConfig, Timeout};
use crate::ecn::{extend_count, Ecn, EcnFeedback, SentPacket};
use crate::histogram::LogHistogram;
use crate::mode_times::ModeTimes;
use crate::receiver::{Ack, ACK_RANGES};
use congestion::{
    AckedPacket, Controller, Instant, LostPacket, Mode, RecoveryExit, RecoveryState,
    SentPacketState,
};
use std::collections::{BTreeSet, VecDeque};
use std::time::Duration;

mod ce;
mod ledger;
mod rack;
mod rto;
mod tlp;
mod undo;

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
    /// The receiver's flow-control limit stops new data (a transport
    /// sets it with [`Sender::set_flow_limit`]; the simulator never does).
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
    retx: VecDeque<(u64, u32)>,
    next_chunk: u64,
    total_chunks: Option<u64>,
    last_chunk_bytes: u32,
    stop: Option<Instant>,
    app: AppState,
    next_send: Instant,
    pacing: Pacing,
    timeout: Timeout,
    /// Probe packets owed after a PTO fired (RFC 9002 §6.2.4).
    probes_owed: u32,
    /// When the first RTT sample arrived (persistent congestion only
    /// counts packets sent after it, RFC 9002 §7.6.2).
    first_rtt_at: Option<Instant>,
    /// Set by loss detection when the newly lost packets show persistent
    /// congestion.
    persistent_congestion: bool,
    /// Quantum pacing: packets whose slot is before this may go now.
    burst_until: Instant,
    app_limited_marked: bool,
    rto_backoff: u32,
    rto_base: Instant,
    loss_time: Option<Instant>,
    /// Data packets sent, retransmissions, RTOs.
    pub packets_sent: u64,
    /// Retransmitted packets.
    pub retransmissions: u64,
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
    /// The recovery point of the current episode, as (next packet number,
    /// next new chunk) when it began: TCP's `high_seq`.
    recovery_point: Option<(u64, u64)>,
    /// The controller's episode count when the point was last noted.
    seen_episodes: u64,
    /// The highest cumulative point the receiver has reported.
    cum_chunk: u64,
    /// Chunks below this index may be sent (receiver flow control).
    flow_limit: Option<u64>,
    /// Reordering has been observed (Linux `tp->reord_seen`): a hole was
    /// filled by its original packet, or a DSACK reported a needless
    /// retransmission. From then on loss is judged by time alone.
    reord_seen: bool,
    /// Multiplier of the reordering window (Linux `rack.reo_wnd_steps`),
    /// raised once per round trip that sees a DSACK.
    reo_wnd_steps: u64,
    /// Recoveries left before the reordering window falls back to one
    /// step (Linux `rack.reo_wnd_persist`).
    reo_wnd_persist: u32,
    /// Delivered bytes when the window was last widened: a DSACK for a
    /// packet sent before then belongs to the same round and is ignored
    /// (Linux `rack.last_delivered`).
    reo_wnd_last_delivered: u64,
    /// Packets declared lost that are still in the window, so an ACK that
    /// arrives for one after all (it was reordered or delayed, not lost)
    /// is found in O(log n).
    lost: LostList,
    /// The previous ACK's ranges, to find what an ACK adds.
    prev_ranges: [(u64, u64); ACK_RANGES],
    prev_len: usize,
    /// Retransmitted packets in flight (Linux `retrans_out`).
    retrans_out: u64,
    /// An undo is possible: the current or last reduction may still be
    /// proved spurious (Linux `undo_marker`).
    undo_marker: bool,
    /// Retransmissions of the episode not yet reported as needless by a
    /// DSACK; -1 while none was sent (Linux `undo_retrans`). At 0 every
    /// retransmission was a duplicate, so the losses were spurious.
    undo_retrans: i64,
    /// Numbers the undo episodes, so a late ACK counts against the
    /// episode that declared the packet lost.
    undo_episode: u32,
    /// Packets the current undo episode declared lost that no late ACK
    /// has yet shown to have arrived. At 0 every loss was spurious.
    undo_lost: u64,
    /// Spurious-loss undos performed, and how many followed a timeout.
    pub undos: u64,
    /// Undos of a retransmission timeout (F-RTO, RFC 5682).
    pub rto_undos: u64,
    /// ACKs that acknowledged a packet already declared lost.
    pub late_acks: u64,
    /// Tail-loss probes sent (RFC 8985 §7).
    pub tail_loss_probes: u64,
    /// The probe timeout is armed for this time (RFC 8985 §7.2): when
    /// nothing is acknowledged for about two RTTs, one packet is sent to
    /// provoke an ACK, so a lost tail is found by RACK instead of an RTO.
    tlp_deadline: Option<Instant>,
    /// A tail-loss probe is owed to the pacer.
    tlp_owed: bool,
    /// A probe is in flight and not yet answered (Linux `tlp_high_seq`):
    /// only one at a time.
    tlp_in_flight: bool,
    /// Whether tail-loss probes are enabled.
    tlp_enabled: bool,
    /// A DSACK arrived and has not yet been weighed for the reordering
    /// window (Linux `rack.dsack_seen`).
    dsack_pending: bool,
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
    /// The codepoint new data packets carry (`NotEct` once ECN is off,
    /// from the start or after a failed validation).
    ecn: Ecn,
    /// How CE marks come back.
    ecn_feedback: EcnFeedback,
    /// QUIC: the largest ECN counts any ACK reported, extended to 64 bits
    /// (ECT(0), ECT(1), CE; counts never decrease, RFC 9000 §13.4.2.1).
    peer_ecn: [u64; 3],
    /// The flow was configured ECN-capable (else its ACKs are not read
    /// for ECN at all).
    ecn_configured: bool,
    /// Packets sent with ECT(0) and ECT(1).
    ect_sent: [u64; 2],
    /// Packets sent with ECT(0) and ECT(1) that ACK ranges acknowledged
    /// (so the receiver counted them before it sent that ACK).
    ect_acked: [u64; 2],
    /// Of those, newly acknowledged by the ACK being processed.
    newly_ect: [u64; 2],
    /// ECN validation failed (RFC 9000 §13.4.2.1): the sender stopped
    /// marking its packets ECN-capable.
    pub ecn_failed: bool,
    /// Packets the sender has learned were CE-marked, as told to the
    /// controller: `flows.csv`'s `delivered_ce`.
    pub delivered_ce: u64,
    /// Packets acknowledged so far (the CE fraction's denominator).
    pub delivered_packets: u64,
    /// TCP: CWR goes on the next new data packet (Linux
    /// `TCP_ECN_QUEUE_CWR`).
    cwr_pending: bool,
    /// TCP: the window of the last reaction to ECE: no new reaction until
    /// a packet from this number on is acknowledged (Linux's CWR state,
    /// which ends when `snd_una` passes `high_seq`).
    cwr_high: Option<u64>,
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
            retx: VecDeque::new(),
            next_chunk: 0,
            total_chunks,
            last_chunk_bytes,
            stop: flow.stop_ns.map(Instant::from_nanos),
            app: AppState::new(&flow.app, start),
            next_send: start,
            pacing: flow.pacing,
            timeout: flow.timeout,
            probes_owed: 0,
            first_rtt_at: None,
            persistent_congestion: false,
            burst_until: Instant::ZERO,
            app_limited_marked: false,
            rto_backoff: 0,
            rto_base: start,
            loss_time: None,
            packets_sent: 0,
            retransmissions: 0,
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
            recovery_point: None,
            seen_episodes: 0,
            flow_limit: None,
            cum_chunk: 0,
            reord_seen: false,
            reo_wnd_steps: 1,
            reo_wnd_persist: 0,
            reo_wnd_last_delivered: 0,
            lost: LostList::default(),
            prev_ranges: [(0, 0); ACK_RANGES],
            prev_len: 0,
            retrans_out: 0,
            undo_marker: false,
            undo_retrans: -1,
            undo_episode: 0,
            undo_lost: 0,
            undos: 0,
            rto_undos: 0,
            late_acks: 0,
            tail_loss_probes: 0,
            tlp_deadline: None,
            tlp_owed: false,
            tlp_in_flight: false,
            // TCP has TLP (Linux default); QUIC's PTO already is a probe.
            tlp_enabled: flow.timeout == Timeout::Rto && flow.tail_loss_probe,
            loss_detection: flow.loss_detection,
            newly_largest: None,
            largest_acked_sent: Instant::ZERO,
            dsack_pending: false,
            lost_ranges: 0,
            last_lost_pn: None,
            ecn: flow.ecn,
            ecn_feedback: flow.ecn_feedback,
            peer_ecn: [0; 3],
            ecn_configured: flow.ecn != Ecn::NotEct,
            ect_sent: [0; 2],
            ect_acked: [0; 2],
            newly_ect: [0; 2],
            ecn_failed: false,
            delivered_ce: 0,
            delivered_packets: 0,
            cwr_pending: false,
            cwr_high: None,
        }
    }

    fn chunk_bytes(&self, chunk: u64) -> u32 {
        if Some(chunk + 1) == self.total_chunks {
            self.last_chunk_bytes
        } else {
            self.mss as u32
        }
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

    /// Bytes acknowledged so far.
    pub fn delivered_bytes(&self) -> u64 {
        self.cc.sampler().delivered_bytes()
    }

    /// Decides what to do at `now`.
    pub fn poll(&mut self, now: Instant) -> SendDecision {
        self.prune_repairs();
        if self.tlp_owed {
            if let Some(d) = self.tail_loss_probe() {
                return d;
            }
            self.tlp_owed = false;
        }
        // PTO probes ignore cwnd and pacing (RFC 9002 §7.5): a lost
        // retransmission if one is queued, else the oldest data still
        // unacknowledged, whose original stays outstanding.
        if self.probes_owed > 0 {
            if let Some(&(chunk, bytes)) = self.retx.front() {
                return SendDecision::Send {
                    chunk,
                    bytes,
                    retransmission: true,
                };
            }
            // The first probe resends the oldest, the second the next.
            let k = 2 - self.probes_owed.min(2) as usize;
            let mut outstanding = self.pkts.iter().filter(|p| p.status == Status::Outstanding);
            let pick = outstanding.clone().nth(k).or_else(|| outstanding.next());
            if let Some(p) = pick {
                return SendDecision::Send {
                    chunk: p.chunk,
                    bytes: p.bytes,
                    retransmission: true,
                };
            }
            self.probes_owed = 0;
        }
        // Retransmissions first: they are owed to the receiver already.
        let (chunk, bytes, retransmission) = if let Some(&(c, b)) = self.retx.front() {
            (c, b, true)
        } else {
            let stopped =
                self.stop.is_some_and(|s| now >= s) || self.total_chunks == Some(self.next_chunk);
            if stopped {
                return SendDecision::NoData(None);
            }
            if self.flow_limit.is_some_and(|l| self.next_chunk >= l) {
                return SendDecision::FlowBlocked;
            }
            let b = self.chunk_bytes(self.next_chunk);
            self.app.advance(now);
            if !self.app.has(b as u64) {
                // The application is the bottleneck: tell the sampler once,
                // so the idle time is not read as a slow path.
                if !self.app_limited_marked {
                    self.cc.on_app_limited(self.inflight);
                    self.app_limited_marked = true;
                }
                return SendDecision::NoData(self.app.ready_at(b as u64));
            }
            (self.next_chunk, b, false)
        };
        if self.inflight + bytes as u64 > self.cc.cwnd_bytes() {
            return SendDecision::CwndLimited;
        }
        if self.next_send > now {
            // Mid-burst (quantum pacing): the packet's slot starts within
            // the burst opened when the pacer last caught up.
            if self.next_send >= self.burst_until {
                return SendDecision::PaceUntil(self.next_send);
            }
        } else if self.pacing == Pacing::Quantum {
            // Caught up: open a burst of one send quantum at the rate.
            self.burst_until = now.saturating_add_nanos(self.quantum_ns());
        }
        SendDecision::Send {
            chunk,
            bytes,
            retransmission,
        }
    }

    /// Records the send decided by [`Sender::poll`]; returns the packet
    /// number. [`Sender::on_sent_ecn`] also says how to mark the packet.
    pub fn on_sent(&mut self, now: Instant, chunk: u64, bytes: u32, retransmission: bool) -> u64 {
        self.on_sent_ecn(now, chunk, bytes, retransmission).pn
    }

    /// [`Sender::on_sent`], returning the packet's number with its ECN
    /// codepoint and TCP CWR flag. With [`EcnFeedback::Ece`] (TCP),
    /// retransmissions are Not-ECT (RFC 3168 §6.1.5, Linux's
    /// `tcp_ecn_send()`) and CWR rides on the first new data packet after
    /// the sender reacted to ECE (RFC 3168 §6.1.2).
    pub fn on_sent_ecn(
        &mut self,
        now: Instant,
        chunk: u64,
        bytes: u32,
        retransmission: bool,
    ) -> SentPacket {
        let (ecn, cwr) = if self.ecn_configured {
            self.marking(retransmission)
        } else {
            (Ecn::NotEct, false)
        };
        let pn = self.record_sent(now, chunk, bytes, retransmission, ecn);
        SentPacket { pn, ecn, cwr }
    }

    #[inline]
    fn record_sent(
        &mut self,
        now: Instant,
        chunk: u64,
        bytes: u32,
        retransmission: bool,
        ecn: Ecn,
    ) -> u64 {
        self.probes_owed = self.probes_owed.saturating_sub(1);
        if std::mem::take(&mut self.tlp_owed) {
            self.tlp_in_flight = true;
            self.tail_loss_probes += 1;
        }
        if retransmission {
            self.retrans_out += 1;
            // Linux `tcp_retransmit_skb()`: every retransmission may yet be
            // reported needless by a DSACK.
            if self.undo_marker {
                self.undo_retrans = self.undo_retrans.max(0) + 1;
            }
            // A probe resends outstanding data; only a queued repair is
            // taken off the queue.
            if self.retx.front().is_some_and(|&(c, _)| c == chunk) {
                self.retx.pop_front();
            }
            self.retransmissions += 1;
        } else {
            self.next_chunk += 1;
            self.app.consume(bytes as u64);
        }
        self.app_limited_marked = false;
        // App-limited after this packet: nothing else is queued to send.
        let app_limited = self.retx.is_empty() && !matches!(self.app, AppState::Bulk) && {
            let next = self.chunk_bytes(self.next_chunk) as u64;
            !self.app.has(next)
        };
        if self.inflight == 0 || matches!(self.timeout, Timeout::Pto { .. }) {
            // TCP's retransmission timer starts with the first packet in
            // flight (and restarts on each ACK of new data, RFC 6298 §5);
            // QUIC's probe timeout counts from the last ack-eliciting
            // packet sent (RFC 9002 §6.2.1, appendix A.8).
            self.rto_base = now;
        }
        let nothing_unacked = self.inflight == 0 && self.unrepaired.is_empty();
        let state = self.cc.on_packet_sent_when(
            now,
            bytes as u64,
            self.inflight,
            app_limited,
            nothing_unacked,
        );
        let pn = self.next_pn;
        self.next_pn += 1;
        if self.pkts.is_empty() {
            self.base_pn = pn;
        }
        self.pkts.push_back(SentPkt {
            chunk,
            bytes,
            sent: now,
            state,
            status: Status::Outstanding,
            retx: retransmission,
            lost_in: 0,
            ecn,
        });
        self.inflight += bytes as u64;
        if self.tlp_deadline.is_none() {
            self.arm_tlp(now);
        }
        self.packets_sent += 1;
        // The next packet may leave once this one's time at the pacing rate
        // has passed. Exact pacing gives no credit for lateness or idle
        // time, so a flow resuming after a pause does not burst. Quantum
        // pacing forgives up to half a quantum of lateness: a real
        // sender's wake-ups come late (scheduling), and without credit
        // each late wake would be sending time lost for good. Linux fq
        // likewise discounts timer drift, by at most half of the next
        // delay (`fq_dequeue()`). More credit means bigger catch-up bursts,
        // which shorten send intervals and inflate delivery-rate samples.
        let rate = self.cc.pacing_rate_bytes_per_sec().max(1) as f64;
        let (floor, gap_ns) = match self.pacing {
            Pacing::Exact => (now, (bytes as f64 * 1e9 / rate).ceil() as u64),
            Pacing::Quantum => (
                now.saturating_sub_nanos(self.quantum_ns() / 2),
                (bytes as f64 * 1e9 / rate).ceil() as u64,
            ),
            Pacing::Off => (now, 0),
        };
        self.next_send = self.next_send.max(floor).saturating_add_nanos(gap_ns);
        let burst = match self.pacing {
            Pacing::Exact | Pacing::Off => bytes as u64,
            Pacing::Quantum => self.cc.send_quantum_bytes(),
        };
        self.cc.set_next_departure(self.next_send, burst);
        pn
    }

    /// How long one send quantum lasts at the pacing rate.
    fn quantum_ns(&self) -> u64 {
        let rate = self.cc.pacing_rate_bytes_per_sec().max(1) as f64;
        (self.cc.send_quantum_bytes() as f64 * 1e9 / rate) as u64
    }

    fn pkt(&self, pn: u64) -> Option<&SentPkt> {
        self.pkts.get(pn.checked_sub(self.base_pn)? as usize)
    }

    /// Declares `pn` lost, charging it to the current undo episode.
    /// The caller has already taken the packet out of flight; this records
    /// the loss for the controller and queues the repair.
    fn mark_lost(&mut self, pn: u64) {
        let episode = self.undo_marker.then_some(self.undo_episode);
        let Some(p) = self.pkt_mut(pn) else { return };
        p.status = Status::Lost;
        p.lost_in = episode.unwrap_or(0);
        let copy = *p;
        if self.last_lost_pn.is_none_or(|l| pn != l + 1) {
            self.lost_ranges += 1;
        }
        self.last_lost_pn = Some(pn);
        self.undo_lost += episode.is_some() as u64;
        self.lost.insert(pn, copy);
        self.lost_buf.push(LostPacket {
            bytes: copy.bytes as u64,
            state: copy.state,
        });
        self.retx.push_back((copy.chunk, copy.bytes));
        self.unrepaired.insert(copy.chunk);
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

    /// Marks `pn` acknowledged if it is outstanding.
    fn ack_pn(&mut self, pn: u64) {
        let Some(p) = self.pkt_mut(pn) else { return };
        if p.status != Status::Outstanding {
            return;
        }
        p.status = Status::Acked;
        let (bytes, state, chunk, retx) = (p.bytes, p.state, p.chunk, p.retx);
        let sent = p.sent;
        match p.ecn {
            Ecn::Ect0 => self.newly_ect[0] += 1,
            Ecn::Ect1 => self.newly_ect[1] += 1,
            _ => {}
        }
        if self.newly_largest.is_none_or(|(l, _)| pn > l) {
            self.newly_largest = Some((pn, sent));
        }
        self.inflight -= bytes as u64;
        self.retrans_out -= retx as u64;
        if !self.unrepaired.is_empty() {
            self.unrepaired.remove(&chunk);
        }
        self.acked_buf.push(AckedPacket {
            bytes: bytes as u64,
            state,
        });
    }

    /// Drops resolved packets from the front of the window.
    fn trim(&mut self) {
        while self
            .pkts
            .front()
            .is_some_and(|p| p.status != Status::Outstanding)
        {
            self.pkts.pop_front();
            self.base_pn += 1;
        }
    }

    /// Records the recovery point when the controller has begun a new
    /// episode since we last looked.
    fn note_recovery_point(&mut self) {
        let episodes = self.cc.recovery_episodes();
        if episodes != self.seen_episodes {
            self.seen_episodes = episodes;
            self.recovery_point = Some((self.next_pn, self.next_chunk));
        }
    }

    /// Ends the recovery episode once everything sent before it began has
    /// been delivered: no packet from before the point is still
    /// outstanding (the window is trimmed up to the first outstanding one)
    /// and no chunk from before it awaits repair. That is TCP's
    /// `snd_una` ≥ `high_seq`.
    fn check_recovery_point(&mut self, t: Instant) {
        let Some((high_pn, high_chunk)) = self.recovery_point else {
            return;
        };
        let state = self.cc.recovery_state();
        if state == RecoveryState::Open {
            self.recovery_point = None;
            return;
        }
        // CWR is held until something *above* the point is acknowledged
        // (`tcp_fastretrans_alert()`: `snd_una != high_seq`), so the
        // receiver has seen the CWR flag before the next ECE counts anew.
        let pkts_done = if state == RecoveryState::Cwr {
            self.base_pn > high_pn || (self.pkts.is_empty() && self.next_pn > high_pn)
        } else {
            self.pkts.is_empty() || self.base_pn >= high_pn
        };
        let data_done = self.unrepaired.first().is_none_or(|&c| c >= high_chunk);
        if pkts_done && data_done {
            self.recovery_point = None;
            // A recovery that ends without undo ages the widened reordering
            // window (Linux `tcp_try_undo_recovery()`).
            self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
            let still_lost = !self.unrepaired.is_empty();
            self.cc
                .on_recovery_point_reached(t, still_lost, self.inflight);
            self.note_recovery_point();
        }
    }

    fn account_mode(&mut self, now: Instant) {
        let mode = self.cc.mode();
        let ns = now.nanos_since(self.last_mode_at);
        self.mode_times.add(self.last_mode, ns);
        self.mode_times.add_srtt(self.last_using_srtt, ns);
        self.last_mode = mode;
        self.last_using_srtt = self.cc.using_srtt();
        self.last_mode_at = now;
    }

    /// Processes an ACK arriving at `now`: marks what it acknowledges
    /// (`mark_acked`), moves the largest acknowledged packet and the holes
    /// below it (`advance_largest`), detects losses, and hands the
    /// controller its one ACK (`deliver`).
    pub fn on_ack(&mut self, now: Instant, ack: &Ack) {
        self.acked_buf.clear();
        self.clear_losses();
        self.newly_largest = None;
        self.newly_ect = [0; 2];
        // Linux `tcp_ack()`: prior_in_flight is taken before this ACK marks
        // anything, and only its own losses enter the rate sample.
        self.cc.on_ack_begin(self.inflight);
        let prev_largest = self.largest_acked;
        let Some(largest) = ack.largest() else { return };
        let largest = largest.min(self.next_pn.saturating_sub(1));
        // Karn's rule as RFC 9002 §5.1 puts it: sample the RTT only from the
        // largest acknowledged packet, and only if this ACK newly acks it.
        // Packet numbers are never reused, so a packet declared lost and
        // acknowledged after all gives an unambiguous sample too (TCP gets
        // the same from timestamps); without it a path whose RTT exceeds
        // the initial RTO would never get a sample and time out forever.
        let rtt_from = match self.pkt(largest) {
            Some(p) if p.status == Status::Outstanding => Some(p.sent),
            _ => self.lost.get(largest).map(|p| p.sent),
        };
        let spurious = self.mark_acked(ack, largest, prev_largest);
        // What the ranges acknowledged; the cumulative point below may
        // acknowledge packets the receiver never saw (their repair arrived).
        let ect_by_ranges = self.newly_ect;
        // TCP's cumulative ACK: data below the receiver's in-order point has
        // arrived, whether or not an ACK range showed the packet.
        if ack.cum_chunk > self.cum_chunk {
            self.cum_chunk = ack.cum_chunk;
            self.on_cumulative_ack();
        }
        let spurious = if ack.dsack {
            self.on_dsack() | spurious
        } else {
            spurious
        };
        self.update_reo_wnd();
        // QUIC 2018 had no undo of spurious reductions.
        if spurious && self.undo_marker && self.loss_detection == LossDetection::Linux {
            self.undo(now);
        }
        self.advance_largest(largest, prev_largest, rtt_from);
        let rtt = rtt_from.map(|sent| now.nanos_since(sent));
        if let Some(r) = rtt {
            self.first_rtt_at.get_or_insert(now);
            self.latest_rtt_ns = Some(r);
            self.rtt_hist.record(r);
        }
        self.detect_losses(now);
        self.trim();
        self.check_recovery_point(now);
        self.report_losses(now);
        self.note_recovery_point();
        if !self.acked_buf.is_empty() {
            let increases_largest = prev_largest.is_none_or(|l| largest > l);
            self.deliver(now, ack, rtt, increases_largest, ect_by_ranges);
        }
        if !self.acked_buf.is_empty() || self.inflight == 0 {
            self.arm_tlp(now);
        }
        self.account_mode(now);
    }

    /// Marks what `ack` acknowledges up to `largest`: the packets above
    /// the previous largest, holes filled late (reordering), and packets
    /// declared lost that arrived after all. Returns whether one of those
    /// shows a loss was spurious.
    fn mark_acked(&mut self, ack: &Ack, largest: u64, prev_largest: Option<u64>) -> bool {
        // New territory: packets above the previous largest.
        let from = prev_largest.map_or(0, |l| l + 1).max(self.base_pn);
        for &(lo, hi) in ack.ranges() {
            let hi = hi.min(largest);
            if hi < from {
                continue;
            }
            for pn in lo.max(from)..=hi {
                self.ack_pn(pn);
            }
        }
        // Holes filled late (reordering): check only the known holes.
        for i in 0..self.holes.len() {
            let pn = self.holes[i];
            if ack.covers(pn) {
                self.reord_seen = true;
                self.ack_pn(pn);
            }
        }
        // Packets declared lost that arrived after all. Only the parts of
        // this ACK's ranges that the previous ACK did not cover can hold
        // one, and a part above every lost packet is rejected at once, so
        // an ACK that only extends its newest range costs no search.
        let mut spurious = false;
        if !self.lost.is_empty() {
            let (first, last) = self.lost.span();
            for &(lo, hi) in ack.ranges() {
                if hi < first || lo > last || self.prev_ranges[..self.prev_len].contains(&(lo, hi))
                {
                    continue;
                }
                let mut parts = [(0u64, 0u64); ACK_RANGES + 1];
                let n = uncovered(lo, hi, &self.prev_ranges[..self.prev_len], &mut parts);
                for &(a, b) in &parts[..n] {
                    while let Some(pn) = self.lost.first_in(a, b) {
                        spurious |= self.on_late_ack(pn);
                    }
                }
            }
        }
        self.prev_len = ack.ranges().len();
        self.prev_ranges[..self.prev_len].copy_from_slice(ack.ranges());
        spurious
    }

    /// The largest acknowledged packet moves up to `largest` (remembering
    /// when it was sent, for RACK), and everything skipped below it that
    /// is still outstanding becomes a hole.
    fn advance_largest(&mut self, largest: u64, prev_largest: Option<u64>, sent: Option<Instant>) {
        if prev_largest.is_none_or(|l| largest > l) {
            self.largest_acked = Some(largest);
            if let Some(sent) = sent {
                self.largest_acked_sent = sent;
            }
        }
        let upto = self.largest_acked.map_or(0, |l| l + 1);
        let start = self.cursor.max(self.base_pn);
        for pn in start..upto {
            if self
                .pkt_mut(pn)
                .is_some_and(|p| p.status == Status::Outstanding)
            {
                self.holes.push(pn);
            }
        }
        self.cursor = self.cursor.max(upto);
    }

    /// An ACK that newly acknowledged data: timers and counters, the CE
    /// marks it reports, and the controller's one call for it.
    fn deliver(
        &mut self,
        now: Instant,
        ack: &Ack,
        rtt: Option<u64>,
        increases_largest: bool,
        ect_by_ranges: [u64; 2],
    ) {
        self.rto_backoff = 0;
        // RFC 6298 §5.3 restarts TCP's timer on an ACK of new data; a
        // PTO stays based on the last packet sent, and only its
        // backoff is reset (RFC 9002 §6.2.1).
        if matches!(self.timeout, Timeout::Rto) {
            self.rto_base = now;
        }
        // An answered probe makes way for the next (Linux clears
        // `tlp_high_seq` once the ACK passes it).
        self.tlp_in_flight = false;
        let newly = self.acked_buf.len() as u64;
        self.delivered_packets += newly;
        if self.ecn_configured {
            let ce = match self.ecn_feedback {
                EcnFeedback::Counts => self.quic_ce(ack, increases_largest, newly, ect_by_ranges),
                EcnFeedback::Ece => self.tcp_ce(ack, newly),
            };
            if ce > 0 {
                self.delivered_ce += ce;
                self.cc.on_ecn_ce(ce);
            }
        }
        // A TCP ACK carries no ACK delay (the receiver's figure is the
        // model's bookkeeping, not on the wire).
        let delay = match self.ecn_feedback {
            EcnFeedback::Ece => Duration::ZERO,
            EcnFeedback::Counts => Duration::from_nanos(ack.ack_delay_ns),
        };
        self.cc.on_ack(
            now,
            &self.acked_buf,
            rtt.map(Duration::from_nanos),
            delay,
            self.inflight,
        );
    }

    /// The receiver's in-order point passed `cum_chunk`. Holes carrying
    /// data below it are acknowledged (as TCP's cumulative ACK covers
    /// segments no SACK block reported), and data below it that was
    /// waiting for repair needs none. A packet declared lost whose data is
    /// thus delivered is not taken as proof of a spurious loss: the
    /// cumulative point cannot tell the original from its repair.
    fn on_cumulative_ack(&mut self) {
        let cum = self.cum_chunk;
        self.lost.prune_below_chunk(cum);
        while self.unrepaired.first().is_some_and(|&c| c < cum) {
            self.unrepaired.pop_first();
        }
        for i in 0..self.holes.len() {
            let pn = self.holes[i];
            if self.pkt_mut(pn).is_some_and(|p| p.chunk < cum) {
                self.ack_pn(pn);
            }
        }
    }

    /// Tells the controller what loss detection just found.
    fn report_losses(&mut self, t: Instant) {
        if !self.lost_buf.is_empty() {
            self.cc
                .on_packets_lost_in_ranges(t, &self.lost_buf, self.lost_ranges, self.inflight);
        }
        if std::mem::take(&mut self.persistent_congestion) {
            self.cc.on_persistent_congestion(t, self.inflight);
        }
    }

    /// Starts gathering a new batch of losses.
    fn clear_losses(&mut self) {
        self.lost_buf.clear();
        self.lost_ranges = 0;
        self.last_lost_pn = None;
    }

    /// Closes the mode-time accounting at the end of the run.
    pub fn finish(&mut self, now: Instant) {
        self.account_mode(now);
    }
}
