//! s2n-quic's BBRv2 and CUBIC, driven by bbrlab's sender.
//!
//! The controllers are s2n-quic-core's own
//! (`recovery::bbr::BbrCongestionController`,
//! `recovery::CubicCongestionController`), called through s2n's
//! `CongestionController` trait exactly as s2n-quic-transport's recovery
//! manager calls them (`recovery/manager.rs`: RTT update and
//! `on_rtt_update`, then losses, then `on_ack` with the newest newly
//! acknowledged packet's `PacketInfo` and the bytes of all of them).
//!
//! What the wrapper supplies:
//! - **Time:** s2n's `Timestamp` (microseconds) from bbrlab's nanosecond
//!   clock, offset by one second so the simulation's start is not s2n's
//!   zero (which it rounds up).
//! - **RTT:** s2n's own `RttEstimator`, fed the same samples and ACK
//!   delays bbrlab's sender takes. Its `max_ack_delay` stays 0 (it comes
//!   from a transport parameter the simulator has no handshake for), so
//!   the ACK delay is not subtracted from s2n's srtt.
//! - **Per-packet state:** the `PacketInfo` s2n returns at send is kept in
//!   a ledger keyed by what bbrlab's sampler stores per packet (see the
//!   crate's `ledger` module) and handed back on ACK or loss.
//! - **Events:** a publisher of our own records what s2n publishes: BBR's
//!   state changes (s2n keeps the state private; its events are the only
//!   window onto it, and they feed the `mode` column), CUBIC's slow-start
//!   exit, and the pacer's rate and burst.
//! - **Randomness:** s2n's BBRv2 randomises its probe timing through a
//!   `random::Generator`; the wrapper's is a SplitMix64 seeded from the
//!   flow's seed, so runs are deterministic.
//! - **Pacing:** s2n paces itself through `earliest_departure_time()`:
//!   bursts of a send quantum, each `quantum / pacing rate` after the last
//!   (`bbr::pacing::Pacer::on_packet_sent`, `recovery::pacing::Pacer`).
//!   bbrlab's pacer releases the same bursts at the same rate when given
//!   that rate and quantum, so the wrapper reports them: BBR's
//!   `pacing_rate()` and `send_quantum()`; CUBIC's rate and burst as its
//!   pacer last published them (10 datagrams at 1.25 × cwnd / srtt, 2× in
//!   slow start). Neither paces while srtt < 2 ms (`MINIMUM_PACING_RTT`),
//!   and CUBIC's first burst leaves unpaced; the wrapper then reports an
//!   unlimited rate.
//!
//! What it approximates:
//! - **App-limited at send:** bbrlab's trait does not pass the sender's
//!   app-limited flag to the algorithm; the wrapper passes whether bbrlab's
//!   sampler was app-limited at the last ACK (an app-limited bubble is in
//!   flight). Bulk flows are never app-limited, so for them this is exact.
//! - **Persistent congestion:** s2n takes it as a flag on lost packets,
//!   computed by its recovery manager from the lost packets' send times.
//!   The wrapper computes it the same way over each contiguous run of lost
//!   packets, against s2n's own `persistent_congestion_threshold()`.
//!   bbrlab's retransmission timeout has no s2n counterpart (QUIC's PTO
//!   does not touch the controller) and is ignored.

use crate::ledger::Ledger;
use congestion::{
    AckContext, AckedPacket, Config, CongestionControl, DeliveryRateSampler, Instant, LossContext,
    Mode, Snapshot,
};
use core::time::Duration;
use s2n_quic_core::event::builder::{BbrState, SlowStartExitCause};
use s2n_quic_core::packet::number::PacketNumberSpace;
use s2n_quic_core::random;
use s2n_quic_core::recovery::bandwidth::{Bandwidth, RateSample};
use s2n_quic_core::recovery::bbr::BbrCongestionController;
use s2n_quic_core::recovery::congestion_controller::{CongestionController, Publisher};
use s2n_quic_core::recovery::{CubicCongestionController, RttEstimator};
use s2n_quic_core::time::Timestamp;

/// The rate reported while s2n does not pace: far above any simulated link.
pub const UNPACED_BYTES_PER_SEC: u64 = 1 << 40;

/// Below this srtt neither s2n pacer paces (`recovery::pacing::MINIMUM_PACING_RTT`,
/// which s2n keeps in a private module).
const MINIMUM_PACING_RTT: Duration = Duration::from_millis(2);

/// bbrlab time 0 is s2n time 1 s (s2n's `Timestamp` is non-zero).
const EPOCH: Duration = Duration::from_secs(1);

fn ts(t: Instant) -> Timestamp {
    // SAFETY: `from_duration` is `unsafe` only to mark it as for clock
    // sources ("should only be used by time sources"); it has no memory
    // safety requirement. The simulator's clock is this controller's time
    // source.
    unsafe { Timestamp::from_duration(EPOCH + Duration::from_nanos(t.as_nanos())) }
}

/// What s2n's controllers publish, kept for the wrapper's outputs.
#[derive(Clone, Debug, Default)]
pub struct Published {
    /// BBR's latest state (s2n publishes every change).
    pub bbr_state: Option<BbrState>,
    /// CUBIC left slow start (a loss or ECN; s2n does not publish a return
    /// to slow start after persistent congestion).
    pub slow_start_exited: bool,
    /// The pacer's latest rate, bytes per second.
    pub pacing_rate: Option<u64>,
    /// The pacer's latest burst, bytes.
    pub burst_bytes: Option<u32>,
    /// Events seen, for tests.
    pub events: u64,
}

impl Publisher for Published {
    fn on_slow_start_exited(&mut self, _cause: SlowStartExitCause, _cwnd: u32) {
        self.slow_start_exited = true;
        self.events += 1;
    }
    fn on_delivery_rate_sampled(&mut self, _rate_sample: RateSample) {
        self.events += 1;
    }
    fn on_pacing_rate_updated(
        &mut self,
        pacing_rate: Bandwidth,
        burst_size: u32,
        _pacing_gain: num_rational::Ratio<u64>,
    ) {
        self.pacing_rate = Some(pacing_rate.as_bytes_per_second());
        self.burst_bytes = Some(burst_size);
        self.events += 1;
    }
    fn on_bbr_state_changed(&mut self, state: BbrState) {
        self.bbr_state = Some(state);
        self.events += 1;
    }
}

/// SplitMix64: a small seeded generator for s2n's `random::Generator`.
#[derive(Clone, Debug)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn fill(&mut self, dest: &mut [u8]) {
        for chunk in dest.chunks_mut(8) {
            let v = self.next().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

impl random::Generator for Rng {
    fn public_random_fill(&mut self, dest: &mut [u8]) {
        self.fill(dest)
    }
    fn private_random_fill(&mut self, dest: &mut [u8]) {
        self.fill(dest)
    }
}

/// What differs between s2n's two controllers, for the wrapper.
pub trait S2nController: CongestionController {
    /// The name bbrlab shows.
    const NAME: &'static str;
    /// A controller for datagrams of `mss` bytes.
    fn create(mss: u16) -> Self;
    /// Pacing rate and burst, from the controller or what it published.
    fn pacing(&self, published: &Published, mss: u64) -> (u64, u64);
    /// The state for the `mode` column.
    fn mode(&self, published: &Published) -> Mode;
    /// Whether s2n's response to CE reduces the window as for a loss.
    const CE_REDUCES: bool;
}

impl S2nController for BbrCongestionController {
    const NAME: &'static str = "s2n:bbr2";
    const CE_REDUCES: bool = false;
    fn create(mss: u16) -> Self {
        BbrCongestionController::new(mss, Default::default())
    }
    fn pacing(&self, _published: &Published, mss: u64) -> (u64, u64) {
        let rate = self.pacing_rate().as_bytes_per_second();
        let quantum = self.send_quantum().map_or(mss, |q| q as u64);
        (rate, quantum)
    }
    fn mode(&self, published: &Published) -> Mode {
        // s2n starts in Startup and publishes only changes.
        match published.bbr_state {
            None | Some(BbrState::Startup) => Mode::Startup,
            Some(BbrState::Drain) => Mode::Drain,
            Some(BbrState::ProbeBwDown) => Mode::ProbeBwDown,
            Some(BbrState::ProbeBwCruise) => Mode::ProbeBwCruise,
            Some(BbrState::ProbeBwRefill) => Mode::ProbeBwRefill,
            Some(BbrState::ProbeBwUp) => Mode::ProbeBwUp,
            Some(BbrState::ProbeRtt) => Mode::ProbeRtt,
        }
    }
}

impl S2nController for CubicCongestionController {
    const NAME: &'static str = "s2n:cubic";
    const CE_REDUCES: bool = true;
    fn create(mss: u16) -> Self {
        CubicCongestionController::new(mss, Default::default())
    }
    fn pacing(&self, published: &Published, mss: u64) -> (u64, u64) {
        match (published.pacing_rate, published.burst_bytes) {
            (Some(r), Some(b)) => (r.max(1), u64::from(b).max(mss)),
            // s2n_quic_core::recovery::MAX_BURST_PACKETS datagrams.
            _ => (UNPACED_BYTES_PER_SEC, 10 * mss),
        }
    }
    fn mode(&self, published: &Published) -> Mode {
        if published.slow_start_exited {
            Mode::CongestionAvoidance
        } else {
            Mode::SlowStart
        }
    }
}

/// The newest packet an ACK newly acknowledges, and what it acknowledges.
#[derive(Clone, Copy, Debug)]
struct PendingAck<P> {
    newest_pn: u64,
    newest_sent: Instant,
    newest_info: P,
    bytes: u64,
}

/// An s2n-quic controller as a bbrlab [`CongestionControl`].
#[derive(Debug)]
pub struct S2n<C: S2nController> {
    cc: C,
    rtt: RttEstimator,
    published: Published,
    rng: Rng,
    ledger: Ledger<C::PacketInfo>,
    pending: Option<PendingAck<C::PacketInfo>>,
    /// Whether bbrlab's sampler was app-limited at the last ACK.
    app_limited: bool,
    mss: u64,
}

impl S2n<BbrCongestionController> {
    /// s2n-quic's BBRv2 with its default settings.
    pub fn bbr2(config: &Config, now: Instant) -> Self {
        Self::new(config, now)
    }
}

impl S2n<CubicCongestionController> {
    /// s2n-quic's CUBIC with its default settings.
    pub fn cubic(config: &Config, now: Instant) -> Self {
        Self::new(config, now)
    }
}

impl<C: S2nController> S2n<C> {
    /// A wrapper for a flow starting at `_now`, with `config`'s MSS as
    /// s2n's max datagram size.
    pub fn new(config: &Config, _now: Instant) -> Self {
        let mss = config.mss_bytes.clamp(1, u64::from(u16::MAX));
        S2n {
            cc: C::create(mss as u16),
            rtt: RttEstimator::default(),
            published: Published::default(),
            rng: Rng(config.seed),
            ledger: Ledger::new(),
            pending: None,
            app_limited: false,
            mss,
        }
    }

    /// The stack's controller itself.
    pub fn inner(&self) -> &C {
        &self.cc
    }

    /// What the controller has published so far.
    pub fn published(&self) -> &Published {
        &self.published
    }

    /// s2n's RTT estimator, as the wrapper feeds it.
    pub fn rtt_estimator(&self) -> &RttEstimator {
        &self.rtt
    }

    /// s2n's earliest departure time for the next packet, in bbrlab's
    /// time (`None`: now).
    pub fn earliest_departure_time(&self) -> Option<Instant> {
        let t = self.cc.earliest_departure_time()?;
        let d = t.saturating_duration_since(ts(Instant::ZERO));
        Some(Instant::from_nanos(d.as_nanos() as u64))
    }

    /// ACKed or lost packets the wrapper could not match to a send (0
    /// unless the transport breaks the controller's call contract).
    pub fn unmatched_packets(&self) -> u64 {
        self.ledger.misses
    }
}

impl<C: S2nController> CongestionControl for S2n<C> {
    fn on_packet_sent(&mut self, now: Instant, bytes: u64, in_flight_before: u64) {
        let sent = usize::try_from(bytes).unwrap_or(usize::MAX);
        let info = self.cc.on_packet_sent(
            ts(now),
            sent,
            Some(self.app_limited),
            &self.rtt,
            &mut self.published,
        );
        self.ledger.on_sent(now, bytes, in_flight_before, info);
    }

    fn on_packets_acked(&mut self, _now: Instant, acked: &[AckedPacket]) {
        let mut pending: Option<PendingAck<C::PacketInfo>> = None;
        for p in acked {
            let Some(e) = self.ledger.take(&p.state) else {
                continue;
            };
            match &mut pending {
                None => {
                    pending = Some(PendingAck {
                        newest_pn: e.pn,
                        newest_sent: e.sent,
                        newest_info: e.info,
                        bytes: e.bytes,
                    })
                }
                Some(a) => {
                    a.bytes += e.bytes;
                    if e.pn > a.newest_pn {
                        a.newest_pn = e.pn;
                        a.newest_sent = e.sent;
                        a.newest_info = e.info;
                    }
                }
            }
        }
        self.pending = pending;
    }

    fn on_congestion_experienced(
        &mut self,
        now: Instant,
        ce_packets: u64,
        _bytes_in_flight: u64,
        new_episode: bool,
    ) -> bool {
        self.cc
            .on_explicit_congestion(ce_packets, ts(now), &mut self.published);
        C::CE_REDUCES && new_episode
    }

    fn on_ack(&mut self, ack: &AckContext<'_>, sampler: &mut DeliveryRateSampler) {
        self.ledger.set_totals(ack.delivered_bytes, ack.lost_bytes);
        self.app_limited = sampler.is_app_limited();
        let Some(p) = self.pending.take() else {
            return;
        };
        let now = ts(ack.now);
        // recovery/manager.rs: the RTT sample is taken from the newest
        // newly acknowledged packet, then `on_rtt_update`.
        if let Some(sample) = ack.rtt_sample {
            self.rtt.update_rtt(
                ack.ack_delay,
                sample,
                now,
                true,
                PacketNumberSpace::ApplicationData,
            );
            self.cc
                .on_rtt_update(ts(p.newest_sent), now, &self.rtt, &mut self.published);
        }
        self.cc.on_ack(
            ts(p.newest_sent),
            usize::try_from(p.bytes).unwrap_or(usize::MAX),
            p.newest_info,
            &self.rtt,
            &mut self.rng,
            now,
            &mut self.published,
        );
    }

    fn on_packets_lost(&mut self, _: Instant, _: u64, _: u64, _: bool) {
        // Losses arrive through `on_loss`, packet by packet. The
        // controller calls this directly only for TCP's re-entry into
        // recovery (an ACK event's `RecoveryPoint::ReachedWithRepairsPending`),
        // which QUIC has not.
    }

    fn on_loss(&mut self, loss: &LossContext<'_>) {
        self.ledger
            .set_totals(loss.delivered_bytes, loss.total_lost_bytes);
        let lost = self.ledger.take_sorted(loss.lost.iter().map(|p| &p.state));
        // recovery/manager.rs `detect_and_remove_lost_packets`: persistent
        // congestion when the lost packets span more than the threshold
        // with none acknowledged between them (here: a contiguous run), and
        // only once an RTT sample exists. A loss burst starts wherever the
        // packet numbers are not consecutive.
        let threshold = self.rtt.persistent_congestion_threshold();
        let first_sample = self.rtt.first_rtt_sample();
        let mut i = 0;
        while i < lost.len() {
            let mut j = i + 1;
            while j < lost.len() && lost[j].pn == lost[j - 1].pn + 1 {
                j += 1;
            }
            let span = lost[j - 1].sent.saturating_since(lost[i].sent);
            let persistent = first_sample.is_some_and(|f| f < ts(lost[i].sent)) && span > threshold;
            for (k, e) in lost[i..j].iter().enumerate() {
                self.cc.on_packet_lost(
                    u32::try_from(e.bytes).unwrap_or(u32::MAX),
                    e.info,
                    persistent,
                    k == 0,
                    &mut self.rng,
                    ts(loss.now),
                    &mut self.published,
                );
            }
            i = j;
        }
    }

    fn on_retransmission_timeout(&mut self, _now: Instant, _bytes_in_flight: u64) {
        // QUIC has no RTO: s2n's PTO never reaches the controller. The
        // timeout's losses have come through `on_loss` already.
    }

    fn on_mss_change(&mut self, mss: u64) {
        self.mss = mss.clamp(1, u64::from(u16::MAX));
        self.cc.on_mtu_update(self.mss as u16, &mut self.published);
    }

    fn cwnd_bytes(&self) -> u64 {
        u64::from(self.cc.congestion_window())
    }

    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        if self.rtt.smoothed_rtt() < MINIMUM_PACING_RTT {
            return UNPACED_BYTES_PER_SEC;
        }
        self.cc.pacing(&self.published, self.mss).0.max(1)
    }

    fn send_quantum_bytes(&self) -> u64 {
        self.cc.pacing(&self.published, self.mss).1.max(1)
    }

    fn snapshot(&self) -> Snapshot {
        let min_rtt = self.rtt.first_rtt_sample().map(|_| self.rtt.min_rtt());
        let mut s = Snapshot::default();
        s.mode = self.mode();
        s.cwnd_bytes = self.cwnd_bytes();
        s.pacing_rate_bytes_per_sec = self.pacing_rate_bytes_per_sec();
        s.min_rtt = min_rtt;
        s.full_bw_reached = !matches!(self.mode(), Mode::Startup | Mode::SlowStart);
        s
    }

    fn mode(&self) -> Mode {
        self.cc.mode(&self.published)
    }

    fn name(&self) -> &str {
        C::NAME
    }
}
