//! The interface every transport embeds: events in, cwnd and pacing rate out.
//!
//! [`Controller`] is the one type a transport holds. It owns the pieces every
//! algorithm shares (the delivery-rate sampler, the RTT estimator, and the
//! bookkeeping of recovery episodes) and forwards digested events to the
//! selected algorithm through the [`CongestionControl`] trait. The algorithms
//! therefore see exactly the same rate samples and recovery boundaries, which
//! is what makes comparisons between them fair.

use crate::bbr::Bbr;
use crate::bbr3::Bbr3;
use crate::config::{Algorithm, Config, RecoveryExit, SrttSample};
use crate::cubic::Cubic;
use crate::delivery_rate::{AckedPacket, DeliveryRateSampler, LostPacket, SentPacketState};
use crate::event::{AckEvent, RecoveryPoint};
use crate::reno::Reno;
use crate::rtt_estimator::RttEstimator;
use crate::snapshot::{Mode, Snapshot};
use crate::time::{duration_to_nanos, Instant};
use core::time::Duration;

pub use crate::algorithm::{AckContext, CongestionControl, LossContext, RecoveryState};

/// The algorithm a [`Controller`] runs: a built-in one, dispatched
/// statically (no allocation), or a user's, boxed.
///
/// `repr(u8)` gives it a tag of its own: without one the variant is
/// encoded in a niche of BBR's state, and each of the several dispatches
/// per packet and per ACK first decodes it (a load, a subtraction and a
/// select) before its jump.
#[allow(clippy::large_enum_variant)] // BBR's state is the point; boxing would allocate.
#[repr(u8)]
enum Inner {
    Bbr(Bbr),
    Bbr3(Bbr3),
    Cubic(Cubic),
    Reno(Reno),
    Custom(Box<dyn CongestionControl + Send + Sync>),
}

impl core::fmt::Debug for Inner {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Inner::Bbr(c) => c.fmt(f),
            Inner::Bbr3(c) => c.fmt(f),
            Inner::Cubic(c) => c.fmt(f),
            Inner::Reno(c) => c.fmt(f),
            Inner::Custom(c) => write!(f, "Custom({})", c.name()),
        }
    }
}

/// Calls `$call` on the algorithm inside `$inner` with static dispatch
/// for the built-in ones. The per-packet accessors go through it: a call
/// through `Inner::get()`'s trait object cannot be inlined, and the
/// simulator asks for the window and the pacing rate several times per
/// packet.
macro_rules! dispatch {
    ($inner:expr, $c:ident => $call:expr) => {
        match $inner {
            Inner::Bbr($c) => $call,
            Inner::Bbr3($c) => $call,
            Inner::Cubic($c) => $call,
            Inner::Reno($c) => $call,
            Inner::Custom($c) => $call,
        }
    };
}

impl Inner {
    /// A copy with its state: always for the built-in algorithms, and for
    /// a user's if it implements [`CongestionControl::clone_box`].
    fn try_clone(&self) -> Option<Inner> {
        Some(match self {
            Inner::Bbr(c) => Inner::Bbr(c.clone()),
            Inner::Bbr3(c) => Inner::Bbr3(c.clone()),
            Inner::Cubic(c) => Inner::Cubic(c.clone()),
            Inner::Reno(c) => Inner::Reno(c.clone()),
            Inner::Custom(c) => Inner::Custom(c.clone_box()?),
        })
    }

    fn get(&self) -> &dyn CongestionControl {
        match self {
            Inner::Bbr(c) => c,
            Inner::Bbr3(c) => c,
            Inner::Cubic(c) => c,
            Inner::Reno(c) => c,
            Inner::Custom(c) => c.as_ref(),
        }
    }
    fn get_mut(&mut self) -> &mut dyn CongestionControl {
        match self {
            Inner::Bbr(c) => c,
            Inner::Bbr3(c) => c,
            Inner::Cubic(c) => c,
            Inner::Reno(c) => c,
            Inner::Custom(c) => c.as_mut(),
        }
    }
}

/// The built-in algorithm `config.algorithm`, started at `now`, as a
/// [`CongestionControl`] of its own: for a user's algorithm that wraps a
/// built-in one (to log what it is told, or to alter one decision) and
/// runs through [`Controller::custom`]. A transport that just runs a
/// built-in uses [`Controller::new`], which dispatches without a box.
pub fn builtin(config: &Config, now: Instant) -> Box<dyn CongestionControl + Send + Sync> {
    match config.algorithm {
        Algorithm::Bbr => Box::new(Bbr::new(config, None, now)),
        Algorithm::BbrJitter => Box::new(Bbr::new(config, Some(config.jitter), now)),
        Algorithm::Bbr3 => Box::new(Bbr3::new(config, now)),
        Algorithm::Cubic => Box::new(Cubic::new(config)),
        Algorithm::Reno => Box::new(Reno::new(config)),
    }
}

/// A congestion controller, ready to embed in a transport.
///
/// Typical use by a sender:
/// 1. On each send, call [`Controller::on_packet_sent`] and keep the returned
///    [`SentPacketState`] with the packet.
/// 2. On each ACK, build an [`AckEvent`] from the newly acknowledged
///    packets (and those it shows lost, its CE marks, its RTT sample) and
///    call [`Controller::on_ack`]: one call per ACK, whatever it carries.
/// 3. Between ACKs: losses a timer declares, [`Controller::on_timer_losses`];
///    a timeout, [`Controller::on_retransmission_timeout`].
/// 4. Send while bytes in flight < [`Controller::cwnd_bytes`], paced at
///    [`Controller::pacing_rate_bytes_per_sec`] in bursts of
///    [`Controller::send_quantum_bytes`].
#[derive(Debug)]
pub struct Controller {
    /// `None` for a user's algorithm.
    algorithm: Option<Algorithm>,
    inner: Inner,
    sampler: DeliveryRateSampler,
    rtt: RttEstimator,
    recovery: RecoveryState,
    /// Packets sent after this instant end the current recovery episode when
    /// acknowledged (RFC 9002 §7.3.2 "recovery start time").
    recovery_start: Instant,
    recovery_exit: RecoveryExit,
    /// Which packet of an ACK srtt follows.
    srtt_sample: SrttSample,
    /// Number of recovery episodes begun (RTOs included).
    recovery_episodes: u64,
    mss: u64,
    /// The pacer's next departure time, as last reported.
    next_departure: Option<Instant>,
    next_burst_bytes: u64,
    /// CE marks reported on events that acknowledged nothing, kept for the
    /// next ACK that does.
    pending_ce: u64,
    /// In [`RecoveryState::Cwr`]: whether the algorithm cut its window for
    /// the CE that began it. A loss then turns CWR into recovery without a
    /// second cut, as Linux's `tcp_enter_recovery()` leaves ssthresh alone
    /// when already in CWR; an algorithm that ignored the CE (BBR) still
    /// sees the loss open an episode.
    cwr_reduced: bool,
}

impl Controller {
    /// A copy of this controller with all its state (the algorithm's, the
    /// delivery-rate sampler's, the RTT estimator's, the recovery
    /// episode), for a stack that clones a connection's controller. Always
    /// `Some` for the built-in algorithms; for a user's, `Some` when it
    /// implements [`CongestionControl::clone_box`]. (Not `Clone`, since a
    /// user's algorithm may not be copyable.)
    pub fn try_clone(&self) -> Option<Controller> {
        Some(Controller {
            algorithm: self.algorithm,
            inner: self.inner.try_clone()?,
            sampler: self.sampler.clone(),
            rtt: self.rtt.clone(),
            recovery: self.recovery,
            recovery_start: self.recovery_start,
            recovery_exit: self.recovery_exit,
            srtt_sample: self.srtt_sample,
            recovery_episodes: self.recovery_episodes,
            mss: self.mss,
            next_departure: self.next_departure,
            next_burst_bytes: self.next_burst_bytes,
            pending_ce: self.pending_ce,
            cwr_reduced: self.cwr_reduced,
        })
    }

    /// [`Controller::new`] for a configuration taken from a user: it is
    /// checked first ([`Config::check`]), and a setting the algorithms'
    /// rules are not defined on is returned as the error, naming the
    /// field and its range, instead of a controller that would run on it
    /// (`new` clamps sizes and saturates, so it never fails).
    pub fn try_new(config: &Config, now: Instant) -> Result<Self, crate::ConfigError> {
        config.check()?;
        Ok(Controller::new(config, now))
    }

    /// Creates a controller for `config.algorithm`, starting at `now`.
    pub fn new(config: &Config, now: Instant) -> Self {
        let inner = match config.algorithm {
            Algorithm::Bbr => Inner::Bbr(Bbr::new(config, None, now)),
            Algorithm::BbrJitter => Inner::Bbr(Bbr::new(config, Some(config.jitter), now)),
            Algorithm::Bbr3 => Inner::Bbr3(Bbr3::new(config, now)),
            Algorithm::Cubic => Inner::Cubic(Cubic::new(config)),
            Algorithm::Reno => Inner::Reno(Reno::new(config)),
        };
        Self::with_inner(config, Some(config.algorithm), inner)
    }

    /// A controller running a user's algorithm: everything a [`Controller`]
    /// adds (delivery-rate samples, RTT estimation, recovery episodes,
    /// undo, pacing hints) drives `algorithm` exactly as it drives the
    /// built-in ones, so the simulator and the UDP transport run it too.
    /// `config` supplies the MSS and the recovery-exit rule; its
    /// `algorithm` field is ignored.
    pub fn custom(config: &Config, algorithm: Box<dyn CongestionControl + Send + Sync>) -> Self {
        Self::with_inner(config, None, Inner::Custom(algorithm))
    }

    /// [`Controller::custom`] for a configuration taken from a user, as
    /// [`Controller::try_new`] is for [`Controller::new`]: `custom` takes
    /// an `mss_bytes` of 0 as 1 byte without a word, so a user's mistake
    /// would only show as a window of a few bytes. The whole
    /// configuration is checked ([`Config::check`]), since a user's
    /// algorithm may build a built-in one from it.
    pub fn try_custom(
        config: &Config,
        algorithm: Box<dyn CongestionControl + Send + Sync>,
    ) -> Result<Self, crate::ConfigError> {
        config.check()?;
        Ok(Controller::custom(config, algorithm))
    }

    fn with_inner(config: &Config, algorithm: Option<Algorithm>, inner: Inner) -> Self {
        let mss = crate::config::usable_mss(config.mss_bytes);
        Controller {
            algorithm,
            inner,
            sampler: DeliveryRateSampler::new(),
            rtt: RttEstimator::new(),
            recovery: RecoveryState::Open,
            recovery_start: Instant::ZERO,
            recovery_exit: config.recovery_exit,
            srtt_sample: config.srtt_sample,
            recovery_episodes: 0,
            mss,
            next_departure: None,
            next_burst_bytes: 0,
            pending_ce: 0,
            cwr_reduced: false,
        }
    }

    /// Which built-in algorithm this is; `None` for a user's.
    pub fn algorithm(&self) -> Option<Algorithm> {
        self.algorithm
    }

    /// The algorithm's name: a built-in's canonical name, or what a user's
    /// [`CongestionControl::name`] says.
    pub fn name(&self) -> &str {
        match self.algorithm {
            Some(a) => a.name(),
            None => self.inner.get().name(),
        }
    }

    /// Records a send and returns the per-packet state to store with it.
    ///
    /// `in_flight_before` is the bytes in flight before this packet.
    /// `app_limited` is true when the application has nothing more to send
    /// after this packet although the window would allow more: rate samples
    /// taken from such packets do not lower BBR's bandwidth estimate.
    #[inline]
    pub fn on_packet_sent(
        &mut self,
        now: Instant,
        bytes: u64,
        in_flight_before: u64,
        app_limited: bool,
    ) -> SentPacketState {
        self.on_packet_sent_when(
            now,
            bytes,
            in_flight_before,
            app_limited,
            in_flight_before == 0,
        )
    }

    /// [`Controller::on_packet_sent`] for a transport that also knows
    /// whether any data at all is unacknowledged. `nothing_unacked` is
    /// true only when no packet is in flight *and* none declared lost is
    /// still awaiting repair. Linux restarts the delivery-rate interval
    /// only then (`tcp_rate_skb_sent()` tests `packets_out`, which counts
    /// lost segments): after a timeout that emptied the flight, the
    /// interval keeps running, so the repair's rate sample spans the
    /// stall instead of starting fresh and overestimating.
    #[inline]
    pub fn on_packet_sent_when(
        &mut self,
        now: Instant,
        bytes: u64,
        in_flight_before: u64,
        app_limited: bool,
        nothing_unacked: bool,
    ) -> SentPacketState {
        // Restarting from idle after the application ran dry (Linux
        // CA_EVENT_TX_START with tp->app_limited set).
        if in_flight_before == 0 && self.sampler.is_app_limited() {
            self.inner.get_mut().on_restart_from_idle(now, &self.rtt);
        }
        if app_limited {
            self.sampler
                .on_app_limited(in_flight_before.saturating_add(bytes));
        }
        let state = self
            .sampler
            .on_packet_sent_when(now, bytes, in_flight_before, nothing_unacked);
        // Dispatched statically, as on_ack is, so the algorithms that
        // ignore sends cost nothing here.
        match &mut self.inner {
            Inner::Bbr(c) => c.on_packet_sent(now, bytes, in_flight_before),
            Inner::Bbr3(c) => c.on_packet_sent(now, bytes, in_flight_before),
            Inner::Cubic(c) => c.on_packet_sent(now, bytes, in_flight_before),
            Inner::Reno(c) => c.on_packet_sent(now, bytes, in_flight_before),
            Inner::Custom(c) => c.on_packet_sent(now, bytes, in_flight_before),
        }
        state
    }

    /// The pacer's earliest departure time for the next packet (Linux
    /// `tcp_wstamp_ns`). A transport that paces tells it after each send;
    /// BBR then discounts what the network will deliver before that time
    /// when it judges its PROBE_BW phases and the end of DRAIN, as Linux
    /// does since it moved to earliest-departure-time pacing.
    ///
    /// `burst_bytes` is what leaves at that time: one packet for a pacer
    /// that sends packet by packet, a send quantum for one that bursts.
    pub fn set_next_departure(&mut self, at: Instant, burst_bytes: u64) {
        self.next_departure = Some(at);
        self.next_burst_bytes = burst_bytes;
    }

    /// The application has run out of data with `bytes_in_flight` still in
    /// flight. Marks the sampler app-limited so the idle period is not
    /// mistaken for a slow path. The same as sending the last packet with
    /// [`Controller::on_packet_sent`]'s `app_limited` set, or an
    /// [`AckEvent`] with `app_limited`: one input, three places a
    /// transport may learn it.
    pub fn on_app_limited(&mut self, bytes_in_flight: u64) {
        self.sampler.on_app_limited(bytes_in_flight);
    }

    /// Processes one ACK: everything it tells the controller, in the order
    /// Linux's `tcp_ack()` applies it.
    ///
    /// 1. `prior_bytes_in_flight` is fixed before anything else, and
    ///    losses declared between ACKs (by a timer) leave the rate sample,
    ///    so only this ACK's losses reach BBR's packet conservation
    ///    (`tcp_ack()`, `tcp_rate_gen()`).
    /// 2. A spurious reduction is undone (`tcp_try_undo_*()` run first in
    ///    `tcp_fastretrans_alert()`).
    /// 3. The end of a recovery episode the transport tracks, then this
    ///    ACK's losses, then persistent congestion: a loss after the
    ///    episode's end begins a new one.
    /// 4. The CE marks count as delivered before the rate sample, which is
    ///    taken over this ACK's packets; then the algorithm runs
    ///    (`cong_control`).
    ///
    /// An event that acknowledges nothing (only losses) runs steps 1–3;
    /// its CE marks wait for the next ACK that acknowledges data.
    pub fn on_ack(&mut self, ack: &AckEvent<'_>) {
        self.sampler.forget_pending_losses();
        // Most ACKs carry nothing but acknowledgements: one test skips the
        // rest of steps 1-3 for them.
        if ack.app_limited
            | ack.spurious_loss
            | ack.persistent_congestion
            | !ack.lost.is_empty()
            | (ack.recovery_point != RecoveryPoint::NotReached)
        {
            self.begin_ack();
            self.ack_signals(ack);
            if ack.acked.is_empty() {
                self.pending_ce = self.pending_ce.saturating_add(ack.ce_packets);
            } else {
                self.packets_acked(ack);
                self.ack_packets::<false>(ack);
            }
        } else if ack.acked.is_empty() {
            self.begin_ack();
            self.pending_ce = self.pending_ce.saturating_add(ack.ce_packets);
        } else if (self.pending_ce | ack.ce_packets) == 0 {
            // No CE to report: the algorithm hears nothing between the
            // start of the ACK and its `on_ack` (the RTT estimator, the
            // sampler and the recovery state, updated in between, neither
            // read the algorithm nor are passed to `on_ack_begin` and
            // `on_packets_acked`), so those two calls can move to just
            // before `on_ack` unobserved, and one dispatch serves all three.
            self.ack_packets::<true>(ack);
        } else {
            // Nothing runs between the two, so one dispatch serves both.
            let (now, acked) = (ack.now, ack.acked);
            dispatch!(&mut self.inner, c => {
                c.on_ack_begin();
                c.on_packets_acked(now, acked)
            });
            self.ack_packets::<false>(ack);
        }
    }

    /// Steps 1-3 of [`Controller::on_ack`] beyond fixing the prior bytes
    /// in flight: app-limited, undo, the end of an episode, losses,
    /// persistent congestion.
    #[inline(never)]
    fn ack_signals(&mut self, ack: &AckEvent<'_>) {
        if ack.app_limited {
            self.sampler.on_app_limited(ack.prior_bytes_in_flight);
        }
        if ack.spurious_loss {
            self.on_spurious_loss(ack.now);
        }
        self.reach_recovery_point(ack.now, ack.recovery_point, ack.bytes_in_flight);
        self.declare_lost(ack.now, ack.lost, ack.lost_ranges, ack.bytes_in_flight);
        if ack.persistent_congestion {
            self.on_persistent_congestion(ack.now, ack.bytes_in_flight);
        }
    }

    /// Packets declared lost by a timer, between ACKs (RFC 9002 §6.1.2's
    /// loss timer, RACK's reordering timer). `bytes_in_flight` excludes
    /// them; `lost_ranges` is how many discontiguous ranges they form (1
    /// when unknown). Losses found on an ACK go in its [`AckEvent`]
    /// instead, and a timeout's in [`Controller::on_retransmission_timeout`].
    pub fn on_timer_losses(
        &mut self,
        now: Instant,
        lost: &[LostPacket],
        lost_ranges: u32,
        bytes_in_flight: u64,
    ) {
        self.declare_lost(now, lost, lost_ranges, bytes_in_flight);
    }

    /// Step 1 of [`Controller::on_ack`], the algorithm's part.
    fn begin_ack(&mut self) {
        match &mut self.inner {
            Inner::Bbr(c) => c.on_ack_begin(),
            Inner::Bbr3(c) => c.on_ack_begin(),
            Inner::Cubic(c) => c.on_ack_begin(),
            Inner::Reno(c) => c.on_ack_begin(),
            Inner::Custom(c) => c.on_ack_begin(),
        }
    }

    /// The start of step 4 of [`Controller::on_ack`]: the algorithm hears
    /// of the packets acknowledged.
    fn packets_acked(&mut self, ack: &AckEvent<'_>) {
        let (now, acked) = (ack.now, ack.acked);
        dispatch!(&mut self.inner, c => c.on_packets_acked(now, acked));
    }

    /// Step 4 of [`Controller::on_ack`] after
    /// [`Controller::packets_acked`]: the rate sample and the algorithm.
    /// With `BEGIN`, the algorithm's `on_ack_begin` and
    /// `on_packets_acked` have not run yet, and run at the end, just
    /// before its `on_ack`, in the same dispatch (for an ACK without CE
    /// marks only: see [`Controller::on_ack`]).
    fn ack_packets<const BEGIN: bool>(&mut self, ack: &AckEvent<'_>) {
        let AckEvent {
            now,
            acked,
            rtt_sample,
            ack_delay,
            bytes_in_flight,
            prior_bytes_in_flight: prior_in_flight,
            ..
        } = *ack;
        if let Some(rtt) = rtt_sample {
            // In nanoseconds, converting the sample once: `Duration` and
            // its saturating conversion to u64 nanoseconds keep order and
            // are exact below u64::MAX ns, and `saturating_since` is
            // `Duration::from_nanos(nanos_since)`, so the max is taken on
            // the same values as in `Duration`s.
            let rtt_ns = duration_to_nanos(rtt);
            let smoothed_ns = match self.srtt_sample {
                SrttSample::Newest => rtt_ns,
                SrttSample::Oldest => acked
                    .iter()
                    .map(|p| now.nanos_since(p.state.sent_time))
                    .max()
                    .map_or(rtt_ns, |oldest| oldest.max(rtt_ns)),
            };
            self.rtt
                .update_split_ns(rtt_ns, smoothed_ns, duration_to_nanos(ack_delay));
        }
        // CE marks count as delivered before the sample is taken, so the
        // sample's interval includes this ACK's marks (Linux counts
        // `delivered_ce` in `tcp_ack()` before `tcp_rate_gen()`).
        //
        // Without ECN both counts are zero: the take would leave zero, the
        // sum be zero and the sampler add zero, so one test skips them.
        let ce_packets = if (self.pending_ce | ack.ce_packets) == 0 {
            0
        } else {
            let ce_packets = core::mem::take(&mut self.pending_ce).saturating_add(ack.ce_packets);
            self.sampler.on_delivered_ce(ce_packets);
            ce_packets
        };
        // `Some(0)` and `None` give the sampler the same floor (an
        // interval of at least 1 ns), so min_rtt is passed as `Some`
        // always, without testing whether there is one.
        let rate =
            self.sampler
                .on_ack_ns(now, acked, Some(self.rtt.min_ns_or_zero()), prior_in_flight);
        // One pass over the acknowledged packets: their newest send time
        // also tells whether one was sent after recovery began, and the
        // smallest RTT any of them shows (`now - sent` only shrinks as
        // `sent` grows).
        // A lone packet is its own newest (the max of one item), tested
        // by the same length check as the sampler's lone-packet arm.
        let newest_acked_sent = match acked {
            [p] => Some(p.state.sent_time),
            _ => acked.iter().map(|p| p.state.sent_time).max(),
        };
        // RFC 9002 §7.3.2: an episode ends once a packet sent after it began
        // is acknowledged.
        if self.recovery != RecoveryState::Open
            && self.recovery_exit == RecoveryExit::FirstAckAfterStart
            && newest_acked_sent.is_some_and(|t| t > self.recovery_start)
        {
            self.recovery = RecoveryState::Open;
        }
        if ce_packets > 0 {
            self.on_congestion_experienced(now, ce_packets, newest_acked_sent, bytes_in_flight);
        }
        let min_acked_rtt = newest_acked_sent.map(|t| now.saturating_since(t));
        let ack_maybe_delayed = maybe_delayed(acked, self.mss, ce_packets);
        let ctx = AckContext {
            now,
            rate: &rate,
            rtt: &self.rtt,
            rtt_sample,
            min_acked_rtt,
            newest_acked_sent,
            ack_delay,
            ack_maybe_delayed,
            bytes_in_flight,
            delivered_bytes: self.sampler.delivered_bytes(),
            lost_bytes: self.sampler.lost_bytes(),
            recovery: self.recovery,
            next_departure: self.next_departure,
            next_burst_bytes: self.next_burst_bytes,
            acked_packets: acked.len() as u64,
            ce_packets,
        };
        debug_assert!(!BEGIN || ce_packets == 0);
        let sampler = &mut self.sampler;
        dispatch!(&mut self.inner, c => {
            if BEGIN {
                c.on_ack_begin();
                c.on_packets_acked(now, acked);
            }
            c.on_ack(&ctx, sampler)
        });
    }

    /// The handshake ended at `now` with one RTT sample, `rtt`, before any
    /// data was sent: it seeds the RTT estimator (srtt, rttvar, min_rtt)
    /// and the algorithm, as Linux's SYN exchange does
    /// (`tcp_ack_update_rtt()` on the SYN-ACK, then `tcp_init_transfer()`
    /// builds the controller). A transport without a handshake sample
    /// never calls it, and its first RTT comes from the first data ACK.
    pub fn on_handshake_rtt(&mut self, now: Instant, rtt: Duration) {
        self.rtt.update(rtt, Duration::ZERO);
        self.inner.get_mut().on_handshake_rtt(now, &self.rtt);
    }

    /// CE marks on an ACK. From the open state they begin a CWR episode
    /// whatever the algorithm does with them: Linux puts every socket in
    /// `TCP_CA_CWR` on an ACK with ECE (`tcp_try_to_open()` ->
    /// `tcp_enter_cwr()`), and BBRv3 reads that state (its quick re-probe
    /// after ECN waits for `TCP_CA_Open`). The algorithm decides whether to
    /// cut; marks inside an episode (RFC 9002 §7.1: unless the newest
    /// acknowledged packet was sent after it began) do not cut again.
    fn on_congestion_experienced(
        &mut self,
        now: Instant,
        ce_packets: u64,
        newest_acked_sent: Option<Instant>,
        bytes_in_flight: u64,
    ) {
        let open = self.recovery == RecoveryState::Open;
        let new_episode = open
            || (self.recovery_exit == RecoveryExit::FirstAckAfterStart
                && newest_acked_sent.is_some_and(|t| t > self.recovery_start));
        let responded = self.inner.get_mut().on_congestion_experienced(
            now,
            ce_packets,
            bytes_in_flight,
            new_episode,
        );
        if new_episode && (responded || open) {
            self.recovery_start = now;
            self.recovery_episodes += 1;
        }
        if open {
            self.recovery = RecoveryState::Cwr;
            self.cwr_reduced = responded;
        } else if self.recovery == RecoveryState::Cwr && new_episode && responded {
            self.cwr_reduced = true;
        }
    }

    /// Losses, from an ACK or a timer. `bytes_in_flight` excludes them.
    ///
    /// A loss of a packet sent after the current episode began starts a new
    /// episode; losses inside an episode do not reduce the window again.
    fn declare_lost(
        &mut self,
        now: Instant,
        lost: &[LostPacket],
        lost_ranges: u32,
        bytes_in_flight: u64,
    ) {
        if lost.is_empty() {
            return;
        }
        self.sampler.on_packets_lost(lost);
        let lost_bytes = lost.iter().fold(0u64, |a, p| a.saturating_add(p.bytes));
        let newest_sent = lost
            .iter()
            .map(|p| p.state.sent_time)
            .max()
            .unwrap_or(Instant::ZERO);
        // CWR turns into recovery on a loss (Linux `tcp_enter_recovery()`
        // from `TCP_CA_CWR`): an episode for the sender's recovery point,
        // but no second cut for an algorithm that cut for the CE.
        let from_cwr = self.recovery == RecoveryState::Cwr;
        // RFC 9002 §7.3.2: a loss of a packet sent after the episode began
        // is a new congestion event (once per round trip).
        let sent_after_start = self.recovery_exit == RecoveryExit::FirstAckAfterStart
            && newest_sent > self.recovery_start;
        let new_episode = self.recovery == RecoveryState::Open || from_cwr || sent_after_start;
        if new_episode {
            self.recovery_start = now;
            self.recovery_episodes += 1;
            if self.recovery < RecoveryState::Recovery {
                self.recovery = RecoveryState::Recovery;
            }
        }
        let algorithm_new_episode =
            new_episode && !(from_cwr && self.cwr_reduced && !sent_after_start);
        let loss = LossContext {
            now,
            lost,
            lost_bytes,
            lost_ranges: lost_ranges.max(1),
            bytes_in_flight,
            new_episode: algorithm_new_episode,
            delivered_bytes: self.sampler.delivered_bytes(),
            total_lost_bytes: self.sampler.lost_bytes(),
        };
        self.inner.get_mut().on_loss(&loss);
    }

    /// A retransmission timeout fired and the transport declared `lost`
    /// (everything outstanding, as TCP does, forming `lost_ranges`
    /// discontiguous ranges; empty for a transport that declares nothing
    /// lost on a timeout). The losses are applied first, then the window
    /// collapses, so the algorithm's loss response (CUBIC's ssthresh) comes
    /// from the window before the timeout: to one packet for CUBIC, Reno
    /// and BBR v1 (Linux's `tcp_enter_loss()`), and to `bytes_in_flight`
    /// plus one packet for BBRv3 (the draft's `BBROnEnterRTO()`), which is
    /// one packet when everything outstanding was declared lost. QUIC has
    /// no retransmission timeout: its persistent congestion is
    /// [`Controller::on_persistent_congestion`].
    pub fn on_retransmission_timeout(
        &mut self,
        now: Instant,
        lost: &[LostPacket],
        lost_ranges: u32,
        bytes_in_flight: u64,
    ) {
        self.declare_lost(now, lost, lost_ranges, bytes_in_flight);
        self.timeout(now, bytes_in_flight);
    }

    /// The window collapse of a timeout.
    fn timeout(&mut self, now: Instant, bytes_in_flight: u64) {
        self.enter_loss(now);
        self.inner
            .get_mut()
            .on_retransmission_timeout(now, bytes_in_flight);
    }

    /// The recovery state of a timeout or of persistent congestion: a new
    /// episode in `Loss`.
    fn enter_loss(&mut self, now: Instant) {
        self.recovery = RecoveryState::Loss;
        self.recovery_start = now;
        self.recovery_episodes += 1;
    }

    /// The transport has proof that the losses (or the timeout) behind the
    /// current or last window reduction were spurious: an original
    /// transmission it had declared lost was acknowledged after all, every
    /// retransmission of the episode was reported as a duplicate (DSACK),
    /// or, after a timeout, data sent before it was acknowledged (F-RTO,
    /// RFC 5682). The episode ends and the algorithm restores its window
    /// (Linux `tcp_undo_cwnd_reduction()`); BBR restores its pre-loss cwnd
    /// on the next ACK, as when a recovery episode ends.
    pub fn on_spurious_loss(&mut self, now: Instant) {
        self.recovery = RecoveryState::Open;
        self.inner.get_mut().on_spurious_loss(now);
    }

    /// QUIC's persistent congestion (RFC 9002 §7.6), declared after the
    /// losses that prove it have been reported: an episode as for a
    /// timeout, and the window falls to two packets (§7.6.2's "MUST" and
    /// §7.2's kMinimumWindow, 2 × max_datagram_size) whatever is still in
    /// flight; `bytes_in_flight` does not change that. A timeout's answer
    /// would not do: BBRv3's keeps what is in flight plus a packet, and
    /// the loss-based algorithms' keeps one packet.
    pub fn on_persistent_congestion(&mut self, now: Instant, bytes_in_flight: u64) {
        let _ = bytes_in_flight;
        self.enter_loss(now);
        let min_window = self.mss.saturating_mul(2);
        self.inner
            .get_mut()
            .on_persistent_congestion(now, min_window);
    }

    /// The path MTU changed; `mss` is the new payload size per packet
    /// (0 is taken as 1, and more than [`crate::MAX_MSS_BYTES`] as that).
    pub fn on_mss_change(&mut self, mss: u64) {
        self.mss = crate::config::usable_mss(mss);
        self.inner.get_mut().on_mss_change(self.mss);
    }

    /// The sender had data to send and held it for want of window,
    /// sending nothing, with `bytes_in_flight` out: the window counts as
    /// used ([`CongestionControl::on_held_by_cwnd`]). A TCP sender that
    /// defers a TSO packet until an ACK opens room for all of it calls
    /// this, as Linux's `tcp_tso_should_defer()` sets `is_cwnd_limited`.
    pub fn on_held_by_cwnd(&mut self, now: Instant, bytes_in_flight: u64) {
        match &mut self.inner {
            Inner::Bbr(c) => c.on_held_by_cwnd(now, bytes_in_flight),
            Inner::Bbr3(c) => c.on_held_by_cwnd(now, bytes_in_flight),
            Inner::Cubic(c) => c.on_held_by_cwnd(now, bytes_in_flight),
            Inner::Reno(c) => c.on_held_by_cwnd(now, bytes_in_flight),
            Inner::Custom(c) => c.on_held_by_cwnd(now, bytes_in_flight),
        }
    }

    /// The current segment size.
    pub fn mss_bytes(&self) -> u64 {
        self.mss
    }

    /// How many bytes may be in flight.
    pub fn cwnd_bytes(&self) -> u64 {
        dispatch!(&self.inner, c => c.cwnd_bytes())
    }

    /// How fast to send, in bytes per second (always ≥ 1). Before any
    /// RTT sample (no [`Controller::on_handshake_rtt`], no ACK yet) every
    /// algorithm takes the RTT to be 1 ms, as Linux does
    /// (`bbr_init_pacing_rate_from_rtt()`; CUBIC and Reno pace from
    /// cwnd/srtt): the initial window leaves nearly unpaced. A QUIC stack
    /// knows its handshake's RTT before it sends data; given to
    /// [`Controller::on_handshake_rtt`], it paces the first flight.
    pub fn pacing_rate_bytes_per_sec(&self) -> u64 {
        dispatch!(&self.inner, c => c.pacing_rate_bytes_per_sec())
    }

    /// How many bytes to release back to back per pacing opportunity.
    pub fn send_quantum_bytes(&self) -> u64 {
        dispatch!(&self.inner, c => c.send_quantum_bytes())
    }

    /// The recovery state.
    pub fn recovery_state(&self) -> RecoveryState {
        self.recovery
    }

    /// How many recovery episodes have begun, RTOs included. A transport
    /// using [`RecoveryExit::Transport`] watches this change to know when
    /// to note its recovery point (TCP's `high_seq`: the highest sequence
    /// sent so far).
    pub fn recovery_episodes(&self) -> u64 {
        self.recovery_episodes
    }

    /// Step 3 of [`Controller::on_ack`]: with [`RecoveryExit::Transport`],
    /// the episode ends, or ends and begins again while repairs are
    /// pending (see [`RecoveryPoint`]). Ignored in other modes or outside
    /// an episode.
    fn reach_recovery_point(&mut self, now: Instant, point: RecoveryPoint, bytes_in_flight: u64) {
        if point == RecoveryPoint::NotReached
            || self.recovery_exit != RecoveryExit::Transport
            || self.recovery == RecoveryState::Open
        {
            return;
        }
        if point == RecoveryPoint::ReachedWithRepairsPending {
            self.recovery = RecoveryState::Recovery;
            self.recovery_start = now;
            self.recovery_episodes += 1;
            self.inner
                .get_mut()
                .on_packets_lost(now, 0, bytes_in_flight, true);
        } else {
            self.recovery = RecoveryState::Open;
        }
    }

    /// The RTT estimator (a transport uses it for its timers).
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// The delivery-rate sampler, read-only.
    pub fn sampler(&self) -> &DeliveryRateSampler {
        &self.sampler
    }

    /// The current mode; cheaper than [`Controller::snapshot`] for callers
    /// that only account time per mode.
    pub fn mode(&self) -> Mode {
        dispatch!(&self.inner, c => c.mode())
    }

    /// Whether `bbr-jitter` currently builds its BDP on srtt; `None` for
    /// other algorithms. Cheap, for per-ACK accounting.
    pub fn using_srtt(&self) -> Option<bool> {
        dispatch!(&self.inner, c => c.using_srtt())
    }

    /// A read-only view of the controller's state for plots and logs.
    pub fn snapshot(&self) -> Snapshot {
        let mut s = self.inner.get().snapshot();
        s.algorithm = self.algorithm;
        s.recovery = self.recovery;
        s
    }
}

/// Linux's suspicion of a delayed ACK (`tcp_clean_rtx_queue()` sets
/// `FLAG_ACK_MAYBE_DELAYED`): the ACK newly delivers exactly one packet,
/// a runt (fewer bytes than an MSS), and carries no congestion alert
/// (here: no CE; Linux also excludes SACK and DSACK news, which a
/// controller is not told, so a lone SACKed runt counts here and not
/// there). A lone runt is what a receiver holds back for its delayed-ACK
/// timer, hoping for a second segment; full-sized segments are ACKed in
/// pairs without waiting.
fn maybe_delayed(acked: &[AckedPacket], mss: u64, ce_packets: u64) -> bool {
    matches!(acked, [p] if p.bytes < mss) && ce_packets == 0
}
