//! The per-connection controller: s2n-quic's callbacks in, [`Controller`]
//! events out. The crate docs hold the mapping table; the comments here say
//! why each step happens where it does.

use crate::shared::Shared;
use congestion::observe::Observed;
use congestion::{AckEvent, AckedPacket, Controller, Instant, LostPacket, Pacer, SentPacketState};
use core::time::Duration;
use s2n_quic_core::random;
use s2n_quic_core::recovery::congestion_controller::{self as s2n, Publisher};
use s2n_quic_core::recovery::RttEstimator;
use s2n_quic_core::time::Timestamp;
use std::sync::Arc;

/// Where the first packet a controller sends lands on [`Instant`]'s axis.
///
/// Any point would do: no time is special to the controllers
/// ([`Instant::ZERO`] included). The controller is built at this point and
/// the first packet is sent at it or later, so the controller never sees a
/// send before its own start.
pub const EPOCH_OFFSET: Duration = Duration::from_secs(1);

/// What s2n-quic keeps with each sent packet and hands back when the packet
/// is acknowledged (as the newest of an ACK) or declared lost: our
/// delivery-rate sampler's state at send time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketInfo(pub SentPacketState);

/// One bbrlab controller on one s2n-quic path.
///
/// Created by [`crate::Endpoint`] through s2n-quic; a program does not
/// build it. It owns a [`Controller`] and the state the mapping needs:
/// the bytes in flight, the losses of the ACK being processed, the
/// earliest-departure-time pacer and the counters the
/// [`crate::Observer`] publishes.
pub struct CongestionController {
    state: Box<State>,
}

/// Boxed so s2n-quic's path table moves a pointer, not the algorithm.
struct State {
    cc: Controller,
    shared: Arc<Shared>,
    /// This controller's number; only the newest one publishes.
    id: u64,
    /// Its connection's seed for the algorithm's random choices (a
    /// clone keeps it, so the copy s2n-quic runs is the same controller).
    seed: u64,
    /// The s2n-quic timestamp of the first packet sent, which maps to
    /// [`EPOCH_OFFSET`]. `None` until then.
    epoch: Option<Timestamp>,
    /// The current datagram size, the unit of s2n-quic's window checks.
    max_datagram_size: u64,
    bytes_in_flight: u64,
    /// What s2n-quic has told and the algorithm has not yet heard.
    pending: Pending,
    /// The ACK being processed, as `Controller::on_ack` takes it (reused,
    /// so ACKs do not allocate once it has grown).
    acked: Vec<AckedPacket>,
    /// The state of the last packet that counted toward bytes in flight,
    /// returned for ACK-only packets (see `on_packet_sent`).
    last_info: PacketInfo,
    /// The earliest-departure-time schedule, in controller time (empty
    /// until the first packet is sent).
    pacer: Pacer,
    /// Bytes sent in the current burst (since a send found the departure
    /// time reached).
    burst_bytes: u64,
    /// The last values published, to publish on a change only.
    published_quantum: u64,
    observed: Observed,
}

/// What s2n-quic has reported and the algorithm has not yet heard, or
/// what the algorithm's last reduction still allows: s2n-quic hands an
/// ACK over in several callbacks (its losses, RTT and CE marks, then
/// `on_ack`), and a loss timer's losses have no closing callback at all.
///
/// One value, so that a clone (see `impl Clone for CongestionController`)
/// copies all of it: a field added here cannot be left out of the copy,
/// as one added to a field-by-field copy could.
#[derive(Clone, Debug, Default)]
struct Pending {
    /// Losses reported since the last flush, all at `loss_time`.
    lost: Vec<LostPacket>,
    lost_ranges: u32,
    loss_time: Option<Timestamp>,
    /// Bytes in flight before the first loss of the pending batch: the
    /// `prior_in_flight` of the ACK that revealed them.
    loss_prior_in_flight: u64,
    loss_persistent: bool,
    /// CE marks s2n-quic reported for the ACK being processed (it reports
    /// them between the ACK's losses and `on_ack`).
    ce: u64,
    /// The RTT sample of the ACK being processed (`on_rtt_update`), with
    /// the ACK's receive time.
    rtt: Option<(Timestamp, Duration)>,
    /// RFC 9002 §7.3.2: the one packet that may go past a window the
    /// algorithm has just reduced on entering recovery (s2n-quic's
    /// `requires_fast_retransmission`), until the next send.
    fast_retransmit: bool,
}

/// Room for a large loss burst, so loss handling does not allocate; the
/// list grows (once) only beyond that.
const LOST_CAPACITY: usize = 256;

impl Pending {
    fn new() -> Self {
        Pending {
            lost: Vec::with_capacity(LOST_CAPACITY),
            ..Pending::default()
        }
    }
}

impl core::fmt::Debug for CongestionController {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CongestionController")
            .field("algorithm", &self.state.cc.name())
            .field("cwnd", &self.state.cc.cwnd_bytes())
            .field("bytes_in_flight", &self.state.bytes_in_flight)
            .finish_non_exhaustive()
    }
}

/// s2n-quic clones a controller once per connection, before the first
/// packet: `path::Manager::new` (s2n-quic-transport 0.91) puts the
/// initial path in its table with `SmallVec::from_elem`, which clones it,
/// and drops the original. The clone is the one that runs, so it keeps the
/// original's number and publishes to the [`crate::Observer`].
///
/// The clone is the same controller at whatever point it is taken: it
/// carries the controller's state ([`Controller::try_clone`]), the bytes
/// in flight, the time base, the pacing schedule, the counters, and what
/// is still to be reported (a timer's losses waiting for the next send, an
/// ACK's RTT sample, losses and CE marks waiting for its `on_ack`, the one
/// packet RFC 9002 §7.3.2 lets go past a just-reduced window). A user's algorithm
/// that cannot be copied (no `clone_box`) starts afresh from the same
/// configuration, which before the first packet (where s2n-quic 0.91
/// clones) is the same thing.
impl Clone for CongestionController {
    fn clone(&self) -> Self {
        let s = &self.state;
        let mut c = CongestionController::unpublished(
            s.shared.clone(),
            s.max_datagram_size as u16,
            s.id,
            s.seed,
        );
        let t = &mut c.state;
        t.epoch = s.epoch;
        t.bytes_in_flight = s.bytes_in_flight;
        t.last_info = s.last_info;
        t.pacer = s.pacer;
        t.burst_bytes = s.burst_bytes;
        t.observed = s.observed;
        t.pending = s.pending.clone();
        // A cloned vector has only its length's capacity.
        t.pending.lost.reserve(LOST_CAPACITY);
        // What the observer shows: the copy publishes when it changes.
        t.published_quantum = s.published_quantum;
        if let Some(cc) = s.cc.try_clone() {
            t.cc = cc;
        }
        c
    }
}

/// How late a sender may wake and still keep its pacing schedule, ns.
/// s2n-quic's event loop waits for a departure time on tokio's timer
/// wheel, which rounds a wait up to its next 1 ms tick, and the loop adds
/// its own delay. Measured through the emulator against kernel `bbr`
/// (`bbrlab validate --quick`): with 1 ms the sender reached 0.91 of
/// kernel TCP's goodput at 10 Mbit/s, with 2 ms 0.97–0.98 on the paths tried.
pub(crate) const TIMER_SLACK: u64 = 2_000_000;

impl CongestionController {
    /// A controller for a path whose datagrams carry `max_datagram_size`
    /// bytes; `id` 0 never publishes.
    pub(crate) fn new(shared: Arc<Shared>, max_datagram_size: u16, id: u64, seed: u64) -> Self {
        let mut c = Self::unpublished(shared, max_datagram_size, id, seed);
        c.state.publish();
        c
    }

    /// [`CongestionController::new`] before its first publish: a clone
    /// builds on it and publishes nothing, so that the observer keeps
    /// showing the connection's state, not a fresh controller's.
    fn unpublished(shared: Arc<Shared>, max_datagram_size: u16, id: u64, seed: u64) -> Self {
        let mss = u64::from(max_datagram_size).max(1);
        let cc = shared
            .recipe
            .build_seeded(mss, seed, Instant::ZERO.saturating_add(EPOCH_OFFSET));
        let quantum = cc.send_quantum_bytes();
        let mut state = State {
            cc,
            shared,
            id,
            seed,
            epoch: None,
            max_datagram_size: mss,
            bytes_in_flight: 0,
            pending: Pending::new(),
            acked: Vec::with_capacity(64),
            last_info: PacketInfo::default(),
            pacer: Pacer::new(),
            burst_bytes: 0,
            published_quantum: quantum,
            observed: Observed::default(),
        };
        state.observed.connection = id;
        CongestionController {
            state: Box::new(state),
        }
    }

    /// The seed of this connection's random choices (BBR's PROBE_BW
    /// phase): its own unless the endpoint was told
    /// [`congestion::ConnectionSeeds::Fixed`]; for logs that tie a run to it.
    pub fn seed(&self) -> u64 {
        self.state.seed
    }

    /// The wrapped controller, read-only (its snapshot, RTT estimator,
    /// sampler).
    pub fn controller(&self) -> &Controller {
        &self.state.cc
    }

    /// What the [`crate::Observer`] would show for this controller now.
    pub fn observed(&self) -> Observed {
        let mut o = self.state.observed;
        self.state.fill_observed(&mut o);
        o
    }
}

/// Controller time as the time since the connection's first packet.
fn since_epoch(t: Instant) -> Duration {
    t.saturating_since(Instant::ZERO)
        .saturating_sub(EPOCH_OFFSET)
}

impl State {
    /// Maps an s2n-quic timestamp to controller time: the first packet
    /// sent is at [`EPOCH_OFFSET`]. Timestamps before it (none in
    /// practice) saturate to it.
    fn instant(&mut self, t: Timestamp) -> Instant {
        let epoch = *self.epoch.get_or_insert(t);
        // Not `Timestamp::saturating_duration_since`: in s2n-quic-core 0.91
        // it returns 1 µs, not zero, for equal timestamps.
        let since = if t > epoch { t - epoch } else { Duration::ZERO };
        Instant::ZERO
            .saturating_add(EPOCH_OFFSET)
            .saturating_add(since)
    }

    /// The s2n-quic timestamp of controller time `at` (inverse of
    /// [`State::instant`]), rounded down to s2n-quic's microseconds.
    fn timestamp(&self, at: Instant) -> Option<Timestamp> {
        let epoch = self.epoch?;
        let since = at
            .saturating_since(Instant::ZERO)
            .saturating_sub(EPOCH_OFFSET);
        epoch.checked_add(since)
    }

    fn has_pending_losses(&self) -> bool {
        !self.pending.lost.is_empty() || self.pending.loss_persistent
    }

    /// Reports the pending losses as a batch of their own, outside any
    /// ACK: losses the loss timer declared (s2n-quic runs loss detection
    /// from its timer with no ACK after it).
    fn flush_timer_losses(&mut self) {
        if !self.has_pending_losses() {
            return;
        }
        let t = self.pending.loss_time.take().map(|t| self.instant(t));
        let t = t.unwrap_or(Instant::ZERO);
        self.report_losses(t);
        self.observed.at = since_epoch(t);
        self.publish();
    }

    /// Hands a timer's pending batch to the controller, then persistent
    /// congestion (the order of an ACK's event).
    fn report_losses(&mut self, t: Instant) {
        let episodes = self.cc.recovery_episodes();
        if !self.pending.lost.is_empty() {
            self.cc.on_timer_losses(
                t,
                &self.pending.lost,
                self.pending.lost_ranges,
                self.bytes_in_flight,
            );
        }
        if core::mem::take(&mut self.pending.loss_persistent) {
            self.cc.on_persistent_congestion(t, self.bytes_in_flight);
        }
        self.losses_reported(episodes);
    }

    /// After a batch of losses reached the controller (on its own or in
    /// an ACK's event that began with `episodes` episodes). RFC 9002
    /// §7.3.2: on entering recovery one packet may be sent before the
    /// reduced window applies (s2n-quic's `requires_fast_retransmission`).
    fn losses_reported(&mut self, episodes: u64) {
        if self.cc.recovery_episodes() != episodes {
            self.pending.fast_retransmit = true;
        }
        self.pending.lost.clear();
        self.pending.lost_ranges = 0;
        self.pending.loss_time = None;
    }

    /// EDT pacing in the manner of Linux's `tcp_wstamp_ns`: each packet
    /// moves the next departure on by its time at the pacing rate, from
    /// its own departure, keeping that schedule when the sender wakes late
    /// by up to [`TIMER_SLACK`] (or half the packet's time, if more), else
    /// from now less that slack (so idle time is not banked). Packets may
    /// leave back to back while the current burst
    /// has room for one more datagram within one send quantum; then the
    /// next one waits for the departure time.
    fn pace(&mut self, now: Instant, bytes: u64) {
        if self.pacer.is_due(now) {
            self.burst_bytes = 0;
        }
        let ns = Pacer::packet_time_ns(bytes, self.cc.pacing_rate_bytes_per_sec());
        // A sender woken late gets the lateness back, up to the larger of
        // half this packet's time (Linux's EDT pacing,
        // `tcp_update_skb_after_send()`: "take into account OS jitter") and
        // TIMER_SLACK. Linux's pacing timer is a high-resolution one, so
        // half a packet is enough there; s2n-quic waits for a departure
        // time on tokio's timer wheel, which wakes a millisecond or more
        // late, and with only half a packet back the sender falls short of
        // its pacing rate (measured on a 20 Mbit/s emulated path: the
        // bandwidth estimate settled at 0.85 of the link). Keeping the
        // schedule through that slack keeps the average rate at the pacing
        // rate; a longer pause (idle, app-limited) still earns no more
        // than the slack's worth of catch-up.
        let next = self.pacer.advance(now, ns, TIMER_SLACK.max(ns / 2));
        self.burst_bytes = self.burst_bytes.saturating_add(bytes);
        let quantum = self.cc.send_quantum_bytes().max(self.max_datagram_size);
        self.cc.set_next_departure(next, quantum);
    }

    /// s2n-quic gives an ACK's bytes in total and the newest packet's
    /// state. The sample only uses the newest packet's state
    /// (`tcp_rate_skb_delivered()` takes the most recently sent), but
    /// BBRv3's ECN fraction counts acked packets, so the bytes are split
    /// into datagram-sized packets that all carry the newest state: exact
    /// when every acked packet was full-sized. At most `MAX_SPLIT`
    /// entries, so a huge ACK costs bounded work.
    fn fill_acked(&mut self, bytes: u64, state: SentPacketState) {
        const MAX_SPLIT: u64 = 4096;
        self.acked.clear();
        let mss = self.max_datagram_size;
        let n = bytes.div_ceil(mss).clamp(1, MAX_SPLIT);
        let mut left = bytes;
        for i in 0..n {
            let b = if i + 1 == n { left } else { mss.min(left) };
            left -= b;
            self.acked.push(AckedPacket { bytes: b, state });
        }
    }

    fn quantum(&self) -> u64 {
        self.cc.send_quantum_bytes().max(self.max_datagram_size)
    }

    fn fill_observed(&self, o: &mut Observed) {
        o.snapshot = self.cc.snapshot();
        o.bytes_in_flight = self.bytes_in_flight;
        o.send_quantum_bytes = self.quantum();
        o.recovery_episodes = self.cc.recovery_episodes();
        o.delivered_bytes = self.cc.sampler().delivered_bytes();
    }

    /// Copies the current state to the shared observer if this is the
    /// newest connection's controller. One uncontended lock and a copy;
    /// no allocation.
    fn publish(&mut self) {
        self.published_quantum = self.quantum();
        let mut o = self.observed;
        self.fill_observed(&mut o);
        self.observed = o;
        if self.id != 0 {
            self.shared.recipe.observer().publish(self.id, &o);
        }
    }
}

impl s2n::CongestionController for CongestionController {
    type PacketInfo = PacketInfo;

    fn congestion_window(&self) -> u32 {
        u32::try_from(self.state.cc.cwnd_bytes()).unwrap_or(u32::MAX)
    }

    fn bytes_in_flight(&self) -> u32 {
        u32::try_from(self.state.bytes_in_flight).unwrap_or(u32::MAX)
    }

    /// Not room for one more full datagram (RFC 9002 §7: a sender must not
    /// exceed the window).
    fn is_congestion_limited(&self) -> bool {
        let s = &self.state;
        s.cc.cwnd_bytes().saturating_sub(s.bytes_in_flight) < s.max_datagram_size
    }

    fn requires_fast_retransmission(&self) -> bool {
        self.state.pending.fast_retransmit
    }

    fn on_packet_sent<Pub: Publisher>(
        &mut self,
        time_sent: Timestamp,
        sent_bytes: usize,
        app_limited: Option<bool>,
        rtt_estimator: &RttEstimator,
        _publisher: &mut Pub,
    ) -> PacketInfo {
        let s = &mut *self.state;
        // Losses the loss timer declared are reported before the send
        // that follows them (see the crate docs: no event marks the end
        // of a timer's batch).
        s.flush_timer_losses();
        let now = s.instant(time_sent);
        s.observed.srtt = Some(rtt_estimator.smoothed_rtt());
        if sent_bytes == 0 {
            // An ACK-only packet is not congestion controlled and adds
            // nothing in flight (RFC 9002 §7), but s2n-quic hands its info
            // back when it is the newest packet an ACK covers; the last
            // counted packet's state stands in for it.
            return s.last_info;
        }
        let bytes = sent_bytes as u64;
        // Initial and Handshake packets (`None`) are sent as the handshake
        // allows, not as the window does: mark them app-limited so their
        // rate samples never lower a bandwidth estimate.
        let app_limited = app_limited.unwrap_or(true);
        let state =
            s.cc.on_packet_sent(now, bytes, s.bytes_in_flight, app_limited);
        s.bytes_in_flight = s.bytes_in_flight.saturating_add(bytes);
        s.pace(now, bytes);
        s.pending.fast_retransmit = false;
        s.observed.packets_sent += 1;
        s.observed.bytes_sent = s.observed.bytes_sent.saturating_add(bytes);
        s.last_info = PacketInfo(state);
        if s.quantum() != s.published_quantum {
            s.publish();
        }
        s.last_info
    }

    fn on_rtt_update<Pub: Publisher>(
        &mut self,
        _time_sent: Timestamp,
        now: Timestamp,
        rtt_estimator: &RttEstimator,
        _publisher: &mut Pub,
    ) {
        let s = &mut *self.state;
        // Kept for this ACK's `on_ack`, which comes after its losses.
        s.pending.rtt = Some((now, rtt_estimator.latest_rtt()));
        s.observed.srtt = Some(rtt_estimator.smoothed_rtt());
        s.observed.latest_rtt = Some(rtt_estimator.latest_rtt());
        s.observed.rttvar = Some(rtt_estimator.rttvar());
    }

    fn on_ack<Pub: Publisher>(
        &mut self,
        newest_acked_time_sent: Timestamp,
        bytes_acknowledged: usize,
        newest_acked_packet_info: PacketInfo,
        rtt_estimator: &RttEstimator,
        _random_generator: &mut dyn random::Generator,
        ack_receive_time: Timestamp,
        _publisher: &mut Pub,
    ) {
        let s = &mut *self.state;
        // A batch stamped with another time came from the loss timer, not
        // from this ACK: it is reported on its own, before the ACK.
        if s.pending.loss_time.is_some_and(|t| t != ack_receive_time) {
            s.flush_timer_losses();
        }
        let now = s.instant(ack_receive_time);
        let ours = s.has_pending_losses();
        // Linux `tcp_ack()`: prior_in_flight is taken before the ACK marks
        // anything. s2n-quic has already removed this ACK's lost packets
        // (reported before `on_ack`) but not yet told us the acked bytes.
        let prior = if ours {
            s.pending.loss_prior_in_flight
        } else {
            s.bytes_in_flight
        };
        let acked = bytes_acknowledged as u64;
        s.bytes_in_flight = s.bytes_in_flight.saturating_sub(acked);
        let rtt_sample = match s.pending.rtt.take() {
            Some((t, rtt)) if t == ack_receive_time => Some(rtt),
            _ => None,
        };
        let _ = newest_acked_time_sent; // the same as the info's sent_time
        s.fill_acked(acked, newest_acked_packet_info.0);
        let episodes = s.cc.recovery_episodes();
        // s2n-quic does not pass the peer's ACK delay; see the crate docs.
        let event = AckEvent::new(now, &s.acked, prior, s.bytes_in_flight)
            .rtt(rtt_sample, Duration::ZERO)
            .lost(&s.pending.lost, s.pending.lost_ranges)
            .ce(core::mem::take(&mut s.pending.ce))
            .persistent_congestion(core::mem::take(&mut s.pending.loss_persistent));
        s.cc.on_ack(&event);
        if ours {
            s.losses_reported(episodes);
        }
        s.observed.bytes_acked = s.observed.bytes_acked.saturating_add(acked);
        s.observed.acks += 1;
        s.observed.srtt = Some(rtt_estimator.smoothed_rtt());
        s.observed.min_rtt = Some(rtt_estimator.min_rtt());
        s.observed.at = since_epoch(now);
        s.publish();
    }

    fn on_packet_lost<Pub: Publisher>(
        &mut self,
        lost_bytes: u32,
        packet_info: PacketInfo,
        persistent_congestion: bool,
        new_loss_burst: bool,
        _random_generator: &mut dyn random::Generator,
        timestamp: Timestamp,
        _publisher: &mut Pub,
    ) {
        let s = &mut *self.state;
        if s.pending.loss_time.is_some_and(|t| t != timestamp) {
            s.flush_timer_losses();
        }
        if !s.has_pending_losses() {
            s.pending.loss_time = Some(timestamp);
            s.pending.loss_prior_in_flight = s.bytes_in_flight;
        }
        let bytes = u64::from(lost_bytes);
        s.bytes_in_flight = s.bytes_in_flight.saturating_sub(bytes);
        s.pending.lost.push(LostPacket {
            bytes,
            state: packet_info.0,
        });
        if new_loss_burst || s.pending.lost_ranges == 0 {
            s.pending.lost_ranges = s.pending.lost_ranges.saturating_add(1);
        }
        s.pending.loss_persistent |= persistent_congestion;
        s.observed.packets_lost += 1;
        s.observed.bytes_lost = s.observed.bytes_lost.saturating_add(bytes);
    }

    fn on_explicit_congestion<Pub: Publisher>(
        &mut self,
        ce_count: u64,
        _event_time: Timestamp,
        _publisher: &mut Pub,
    ) {
        // s2n-quic reports the CE increase of an ACK between its losses and
        // `on_ack`: it goes in that ACK's event.
        self.state.pending.ce = self.state.pending.ce.saturating_add(ce_count);
        self.state.observed.ce_packets = self.state.observed.ce_packets.saturating_add(ce_count);
    }

    fn on_mtu_update<Pub: Publisher>(&mut self, max_data_size: u16, _publisher: &mut Pub) {
        let s = &mut *self.state;
        s.max_datagram_size = u64::from(max_data_size).max(1);
        s.cc.on_mss_change(s.max_datagram_size);
        s.publish();
    }

    fn on_packet_discarded<Pub: Publisher>(&mut self, bytes_sent: usize, _publisher: &mut Pub) {
        // A discarded packet (its packet number space dropped, a lost MTU
        // probe, a Retry) leaves flight without being acked or lost.
        let s = &mut *self.state;
        s.bytes_in_flight = s.bytes_in_flight.saturating_sub(bytes_sent as u64);
        s.observed.bytes_discarded = s.observed.bytes_discarded.saturating_add(bytes_sent as u64);
    }

    fn earliest_departure_time(&self) -> Option<Timestamp> {
        let s = &self.state;
        // Room for one more full datagram in the burst: it may leave now.
        // Saturating: a send of `usize::MAX` bytes must not overflow it.
        if s.burst_bytes.saturating_add(s.max_datagram_size) <= s.quantum() {
            return None;
        }
        s.timestamp(s.pacer.next_departure()?)
    }

    fn send_quantum(&self) -> Option<usize> {
        Some(usize::try_from(self.state.quantum()).unwrap_or(usize::MAX))
    }
}
