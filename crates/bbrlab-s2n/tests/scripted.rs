//! The adapter driven by scripted s2n-quic callbacks, checked against the
//! same sequence of transport events fed to `congestion::Controller`
//! directly, each ACK as one `AckEvent` as bbrlab's own transport states
//! it (`sender::Sender::on_ack`: acked packets, losses, CE, RTT sample). After every step the two must agree exactly on the
//! snapshot (cwnd, pacing rate, mode, bandwidth estimate, min_rtt, round
//! count, recovery state...) and on bytes in flight.

use bbrlab_s2n::{CongestionController, Endpoint, PacketInfo, EPOCH_OFFSET};
use congestion::{
    AckContext, AckEvent, AckedPacket, Algorithm, Bbr3Config, Bbr3Profile, Config,
    CongestionControl, Controller, DeliveryRateSampler, Instant, LostPacket, Mode, Pacer,
    RecoveryState, SentPacketState, Snapshot,
};
use s2n_quic_core::event::testing::Publisher as EventPublisher;
use s2n_quic_core::packet::number::PacketNumberSpace;
use s2n_quic_core::path;
use s2n_quic_core::random::testing::Generator;
use s2n_quic_core::recovery::congestion_controller::{CongestionController as _, PathPublisher};
use s2n_quic_core::recovery::RttEstimator;
use s2n_quic_core::time::{clock::testing as clock, Timestamp};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const MSS: u64 = 1200;

struct Sent {
    at: Duration,
    info: PacketInfo,
    state: SentPacketState,
}

/// One adapter and one reference controller, fed the same events.
struct Pair {
    ad: CongestionController,
    rf: Controller,
    t0: Timestamp,
    rtt: RttEstimator,
    events: EventPublisher,
    rng: Generator,
    sent: Vec<Sent>,
    largest_acked: Option<usize>,
    rf_in_flight: u64,
    rf_pacer: Pacer,
    rf_burst: u64,
}

fn instant(at: Duration) -> Instant {
    Instant::ZERO
        .saturating_add(EPOCH_OFFSET)
        .saturating_add(at)
}

impl Pair {
    fn new(config: Config) -> Self {
        // Fixed seeds: the reference controller is built from `config` as it is.
        Self::with_endpoint(Endpoint::new(config).with_seeds(congestion::ConnectionSeeds::Fixed))
    }

    /// `endpoint` running a built-in algorithm.
    fn with_endpoint(endpoint: Endpoint) -> Self {
        let mut config = *endpoint.config();
        config.mss_bytes = MSS;
        let rf = Controller::new(&config, instant(Duration::ZERO));
        Self::with_reference(endpoint, rf)
    }

    fn with_reference(endpoint: Endpoint, rf: Controller) -> Self {
        Pair {
            ad: endpoint.new_controller(MSS as u16),
            rf,
            t0: clock::now(),
            rtt: RttEstimator::new(Duration::from_millis(333)),
            events: EventPublisher::no_snapshot(),
            rng: Generator::default(),
            sent: Vec::new(),
            largest_acked: None,
            rf_in_flight: 0,
            rf_pacer: Pacer::new(),
            rf_burst: 0,
        }
    }

    fn ts(&self, at: Duration) -> Timestamp {
        self.t0 + at
    }

    /// Sends one packet of `bytes` (0 for ACK-only) at `at`.
    fn send(&mut self, at: Duration, bytes: u64, app_limited: Option<bool>) -> PacketInfo {
        let ts = self.ts(at);
        let mut publisher = PathPublisher::new(&mut self.events, path::Id::test_id());
        let info =
            self.ad
                .on_packet_sent(ts, bytes as usize, app_limited, &self.rtt, &mut publisher);
        if bytes == 0 {
            return info;
        }
        let now = instant(at);
        let state =
            self.rf
                .on_packet_sent(now, bytes, self.rf_in_flight, app_limited.unwrap_or(true));
        self.rf_in_flight += bytes;
        // The pacer as the crate docs state it: congestion's EDT schedule
        // with 2 ms of slack (or half the packet's time, if more).
        if self.rf_pacer.is_due(now) {
            self.rf_burst = 0;
        }
        let ns = Pacer::packet_time_ns(bytes, self.rf.pacing_rate_bytes_per_sec());
        let next = self.rf_pacer.advance(now, ns, 2_000_000u64.max(ns / 2));
        self.rf_burst += bytes;
        let quantum = self.rf.send_quantum_bytes().max(MSS);
        self.rf.set_next_departure(next, quantum);
        assert_eq!(
            info.0,
            state,
            "send-time state of packet {}",
            self.sent.len()
        );
        self.sent.push(Sent { at, info, state });
        info
    }

    fn send_n(&mut self, at: Duration, n: usize) {
        for _ in 0..n {
            self.send(at, MSS, Some(false));
        }
    }

    /// One ACK frame received at `at`, acking `acked` and revealing
    /// `lost` (packet numbers; `lost` ascending), with `ce` new CE marks.
    fn ack(&mut self, at: Duration, acked: &[usize], lost: &[usize], ce: u64, persistent: bool) {
        let ts = self.ts(at);
        let now = instant(at);
        let newest = *acked.iter().max().expect("an ACK acks something");
        // --- the adapter, in s2n-quic's order (recovery/manager.rs) ---
        let mut publisher = PathPublisher::new(&mut self.events, path::Id::test_id());
        let rtt_sample = if self.largest_acked.is_none_or(|l| newest > l) {
            self.largest_acked = Some(newest);
            let sample = at - self.sent[newest].at;
            self.rtt.update_rtt(
                Duration::ZERO,
                sample,
                ts,
                true,
                PacketNumberSpace::ApplicationData,
            );
            let sent_ts = self.t0 + self.sent[newest].at;
            self.ad
                .on_rtt_update(sent_ts, ts, &self.rtt, &mut publisher);
            Some(self.rtt.latest_rtt())
        } else {
            None
        };
        let mut prev: Option<usize> = None;
        for &pn in lost {
            let burst = prev.is_none_or(|p| pn != p + 1);
            self.ad.on_packet_lost(
                MSS as u32,
                self.sent[pn].info,
                persistent,
                burst,
                &mut self.rng,
                ts,
                &mut publisher,
            );
            prev = Some(pn);
        }
        if ce > 0 {
            self.ad.on_explicit_congestion(ce, ts, &mut publisher);
        }
        self.ad.on_ack(
            self.t0 + self.sent[newest].at,
            acked.len() * MSS as usize,
            self.sent[newest].info,
            &self.rtt,
            &mut self.rng,
            ts,
            &mut publisher,
        );
        // --- the reference: the ACK as one event, as bbrlab's transport
        // states it ---
        let prior = self.rf_in_flight;
        // Newest first: among packets sent at the same instant the sampler
        // takes the first it meets as the newest, and s2n-quic hands over
        // the highest packet number (as Linux breaks such ties by sequence,
        // `tcp_skb_sent_after()`).
        let acked_pkts: Vec<AckedPacket> = acked
            .iter()
            .rev()
            .map(|&pn| AckedPacket {
                bytes: MSS,
                state: self.sent[pn].state,
            })
            .collect();
        self.rf_in_flight -= MSS * acked.len() as u64;
        let (lost_pkts, ranges) = self.take_lost(lost);
        let event = AckEvent::new(now, &acked_pkts, prior, self.rf_in_flight)
            .rtt(rtt_sample, Duration::ZERO)
            .lost(&lost_pkts, ranges)
            .ce(ce)
            .persistent_congestion(persistent);
        self.rf.on_ack(&event);
        self.check(&format!("after the ACK at {at:?}"));
    }

    /// Takes `lost` out of the reference's flight: the packets, and how
    /// many discontiguous ranges of packet numbers they form.
    fn take_lost(&mut self, lost: &[usize]) -> (Vec<LostPacket>, u32) {
        let lost_pkts: Vec<LostPacket> = lost
            .iter()
            .map(|&pn| LostPacket {
                bytes: MSS,
                state: self.sent[pn].state,
            })
            .collect();
        let ranges = lost
            .iter()
            .enumerate()
            .filter(|(i, pn)| *i == 0 || lost[i - 1] + 1 != **pn)
            .count() as u32;
        self.rf_in_flight -= MSS * lost.len() as u64;
        (lost_pkts, ranges)
    }

    /// The loss timer declares `lost` at `at`, with no ACK after it.
    fn timer_loss(&mut self, at: Duration, lost: &[usize], persistent: bool) {
        let ts = self.ts(at);
        let mut publisher = PathPublisher::new(&mut self.events, path::Id::test_id());
        for (i, &pn) in lost.iter().enumerate() {
            let burst = i == 0 || lost[i - 1] + 1 != pn;
            self.ad.on_packet_lost(
                MSS as u32,
                self.sent[pn].info,
                persistent,
                burst,
                &mut self.rng,
                ts,
                &mut publisher,
            );
        }
        let now = instant(at);
        let (lost_pkts, ranges) = self.take_lost(lost);
        self.rf
            .on_timer_losses(now, &lost_pkts, ranges, self.rf_in_flight);
        if persistent {
            self.rf.on_persistent_congestion(now, self.rf_in_flight);
        }
    }

    fn check(&self, when: &str) {
        assert_eq!(self.snapshot(), self.rf.snapshot(), "snapshot {when}");
        assert_eq!(
            u64::from(self.ad.bytes_in_flight()),
            self.rf_in_flight,
            "bytes in flight {when}"
        );
        assert_eq!(
            u64::from(self.ad.congestion_window()),
            self.rf.cwnd_bytes(),
            "cwnd {when}"
        );
    }

    fn snapshot(&self) -> Snapshot {
        self.ad.controller().snapshot()
    }
}

/// A deterministic path for the scripts: a `rate_pps` bottleneck and a
/// `rtt` base delay. Each ms the sender fills the window; packets are
/// acked one by one as the bottleneck delivers them, one ACK frame per
/// ms. Every `loss_every`-th packet is lost and declared so by the ACK
/// that acks the third packet after it; every `ce_every`-th ACK frame
/// carries a CE mark.
fn run_path(
    pair: &mut Pair,
    ms: u64,
    rtt_ms: u64,
    rate_pps: u64,
    loss_every: usize,
    ce_every: u64,
) {
    let rtt = Duration::from_millis(rtt_ms);
    let per_pkt = Duration::from_nanos(1_000_000_000 / rate_pps);
    // (packet number, arrival at the sender of its ACK)
    let mut in_flight: Vec<(usize, Duration)> = Vec::new();
    let mut link_free = Duration::ZERO;
    let mut lost_pending: Vec<usize> = Vec::new();
    let mut frames = 0u64;
    for step in 0..ms {
        let now = Duration::from_millis(step);
        // ACKs due by now, as one frame.
        let due: Vec<usize> = in_flight
            .iter()
            .filter(|(_, t)| *t <= now)
            .map(|(pn, _)| *pn)
            .collect();
        in_flight.retain(|(_, t)| *t > now);
        let mut acked = Vec::new();
        let mut lost = Vec::new();
        for pn in due {
            if loss_every > 0 && pn % loss_every == loss_every - 1 {
                lost_pending.push(pn);
            } else {
                acked.push(pn);
            }
        }
        if !acked.is_empty() {
            let newest = *acked.iter().max().unwrap();
            lost_pending.retain(|&l| {
                let declare = newest >= l + 3;
                if declare {
                    lost.push(l);
                }
                !declare
            });
            lost.sort_unstable();
            frames += 1;
            let ce = u64::from(ce_every > 0 && frames.is_multiple_of(ce_every));
            pair.ack(now, &acked, &lost, ce, false);
        }
        // Fill the window.
        while u64::from(pair.ad.bytes_in_flight()) + MSS <= u64::from(pair.ad.congestion_window()) {
            let pn = pair.sent.len();
            pair.send(now, MSS, Some(false));
            link_free = link_free.max(now) + per_pkt;
            in_flight.push((pn, link_free + rtt));
        }
        pair.check(&format!("after the sends at {now:?}"));
    }
}

fn algorithms() -> Vec<(String, Config)> {
    let mut v: Vec<(String, Config)> = [
        Algorithm::Bbr,
        Algorithm::BbrJitter,
        Algorithm::Cubic,
        Algorithm::Reno,
    ]
    .into_iter()
    .map(|a| (a.name().to_string(), Config::new(a)))
    .collect();
    for p in Bbr3Profile::ALL {
        let mut c = Config::new(Algorithm::Bbr3);
        c.bbr3 = Bbr3Config::for_profile(p);
        v.push((format!("bbr3 {}", p.name()), c));
    }
    v
}

#[test]
fn every_algorithm_matches_the_controller_on_a_lossy_ce_marking_path() {
    for (name, config) in algorithms() {
        let mut pair = Pair::new(config);
        // 10 Mbit/s of 1200-byte packets, 20 ms, 1 % loss, CE every 40th frame.
        run_path(&mut pair, 3000, 20, 1040, 100, 40);
        let s = pair.snapshot();
        assert!(
            pair.sent.len() > 500,
            "{name}: the script ran ({} sent)",
            pair.sent.len()
        );
        if name.starts_with("bbr") {
            assert!(s.round_count > 20, "{name}: rounds {}", s.round_count);
            assert!(
                s.bw_estimate_bytes_per_sec.is_some_and(|b| b > 0.0),
                "{name}: a bandwidth estimate"
            );
        }
        assert!(
            pair.ad.observed().ce_packets > 0,
            "{name}: CE reached the adapter"
        );
    }
}

#[test]
fn a_clean_path_takes_bbr_out_of_startup_as_the_controller_does() {
    let mut pair = Pair::new(Config::new(Algorithm::Bbr));
    run_path(&mut pair, 2000, 30, 2000, 0, 0);
    let s = pair.snapshot();
    assert_ne!(s.mode, Mode::Startup, "full pipe found");
    assert!(s.full_bw_reached);
}

#[test]
fn losses_of_an_ack_come_before_its_rate_sample() {
    // Packet conservation and the loss accounting read the ACK's losses:
    // with the losses reported after the sample instead, BBR's snapshot
    // differs from the reference's, which the pair check would catch.
    for (name, config) in algorithms() {
        let mut pair = Pair::new(config);
        let ms = Duration::from_millis;
        pair.send_n(ms(0), 10);
        pair.ack(ms(20), &[0, 1, 2, 3], &[], 0, false);
        pair.send_n(ms(20), 8);
        // Packets 4 and 5 lost, 6..=12 acked, in one frame.
        pair.ack(ms(40), &[6, 7, 8, 9, 10, 11, 12], &[4, 5], 0, false);
        let s = pair.snapshot();
        assert_eq!(
            s.recovery,
            RecoveryState::Recovery,
            "{name}: recovery entered"
        );
        assert_eq!(pair.ad.observed().packets_lost, 2, "{name}");
    }
}

#[test]
fn timer_losses_are_reported_before_the_next_send_or_ack() {
    for (name, config) in algorithms() {
        let mut pair = Pair::new(config);
        let ms = Duration::from_millis;
        pair.send_n(ms(0), 10);
        pair.ack(ms(20), &[0, 1, 2, 3, 4, 5, 6], &[], 0, false);
        pair.timer_loss(ms(35), &[7, 8], false);
        // The bytes leave flight at once; the window follows at the send.
        assert_eq!(
            u64::from(pair.ad.bytes_in_flight()),
            pair.rf_in_flight,
            "{name}"
        );
        pair.send(ms(36), MSS, Some(false));
        pair.check(&format!("{name}: after the send following a timer loss"));
        assert_eq!(pair.snapshot().recovery, RecoveryState::Recovery, "{name}");
        // A timer loss followed straight by an ACK (no send between).
        pair.timer_loss(ms(50), &[9], false);
        pair.ack(ms(52), &[10], &[], 0, false);
    }
}

#[test]
fn persistent_congestion_is_the_controllers_timeout() {
    for (name, config) in algorithms() {
        let mut pair = Pair::new(config);
        let ms = Duration::from_millis;
        pair.send_n(ms(0), 10);
        pair.ack(ms(20), &[0, 1], &[], 0, false);
        pair.send_n(ms(20), 20);
        pair.ack(ms(900), &[29], &(2..=27).collect::<Vec<_>>(), 0, true);
        let s = pair.snapshot();
        assert_eq!(s.recovery, RecoveryState::Loss, "{name}: timeout state");
        assert!(
            pair.ad.congestion_window() as u64 <= 4 * MSS,
            "{name}: window collapsed to {}",
            pair.ad.congestion_window()
        );
    }
}

#[test]
fn ce_marks_reach_the_algorithms_that_use_them() {
    // CUBIC and Reno reduce on CE as on a loss (RFC 9002 §7.1).
    for a in [Algorithm::Cubic, Algorithm::Reno] {
        let mut pair = Pair::new(Config::new(a));
        let ms = Duration::from_millis;
        pair.send_n(ms(0), 10);
        let before = pair.ad.congestion_window();
        pair.ack(ms(20), &[0, 1, 2, 3], &[], 2, false);
        assert!(
            pair.ad.congestion_window() < before,
            "{a}: window reduced on CE"
        );
        assert_eq!(pair.ad.observed().ce_packets, 2);
    }
}

#[test]
fn discarded_packets_leave_flight_without_a_congestion_event() {
    let mut pair = Pair::new(Config::new(Algorithm::Cubic));
    let ms = Duration::from_millis;
    // Handshake packets (app_limited unknown: None).
    for _ in 0..3 {
        pair.send(ms(0), MSS, None);
    }
    assert_eq!(pair.ad.bytes_in_flight() as u64, 3 * MSS);
    let cwnd = pair.ad.congestion_window();
    let mut publisher = PathPublisher::new(&mut pair.events, path::Id::test_id());
    pair.ad
        .on_packet_discarded(2 * MSS as usize, &mut publisher);
    assert_eq!(pair.ad.bytes_in_flight() as u64, MSS);
    assert_eq!(pair.ad.congestion_window(), cwnd, "no reduction");
    assert_eq!(pair.snapshot().recovery, RecoveryState::Open);
    assert_eq!(pair.ad.observed().bytes_discarded, 2 * MSS);
}

#[test]
fn handshake_packets_are_marked_app_limited() {
    let mut pair = Pair::new(Config::new(Algorithm::Bbr));
    let info = pair.send(Duration::ZERO, MSS, None);
    assert!(info.0.is_app_limited);
    let info = pair.send(Duration::ZERO, MSS, Some(false));
    // The bubble of the first packet is not yet delivered.
    assert!(info.0.is_app_limited);
}

#[test]
fn ack_only_packets_add_nothing_in_flight() {
    let mut pair = Pair::new(Config::new(Algorithm::Bbr));
    let data = pair.send(Duration::ZERO, MSS, Some(false));
    let ack_only = pair.send(Duration::from_millis(1), 0, Some(false));
    assert_eq!(ack_only, data, "the last counted packet's state stands in");
    assert_eq!(pair.ad.bytes_in_flight() as u64, MSS);
}

#[test]
fn pacing_sends_a_quantum_then_waits_its_time_at_the_pacing_rate() {
    let mut pair = Pair::new(Config::new(Algorithm::Bbr));
    let t = Duration::ZERO;
    let rate = pair.rf.pacing_rate_bytes_per_sec();
    let quantum = pair.ad.send_quantum().expect("a quantum") as u64;
    assert!(quantum >= MSS);
    let mut sent = 0u64;
    while pair.ad.earliest_departure_time().is_none() {
        pair.send(t, MSS, Some(false));
        sent += MSS;
        assert!(sent <= quantum, "burst bounded by the quantum");
    }
    assert!(
        sent + MSS > quantum,
        "a full quantum leaves at once ({sent} of {quantum})"
    );
    let edt = pair.ad.earliest_departure_time().unwrap();
    let wait = edt - pair.ts(t);
    let expected = Duration::from_nanos(sent * 1_000_000_000 / rate);
    // s2n-quic timestamps are whole microseconds.
    assert!(
        wait.abs_diff(expected) <= Duration::from_micros(1) + Duration::from_nanos(sent / MSS),
        "wait {wait:?}, expected {expected:?}"
    );
    // Sending late resets the departure time to now: no burst of credit.
    let late = t + Duration::from_secs(1);
    pair.send(late, MSS, Some(false));
    assert!(pair.ad.earliest_departure_time().is_none());
}

/// A sender woken a little late keeps its schedule (the lateness comes
/// back as catch-up), so timer granularity does not cost it its pacing
/// rate; a long sleep earns no more than the slack, 2 ms (or half a
/// packet's time, if more: Linux's `tcp_update_skb_after_send()`).
#[test]
fn a_late_send_keeps_the_schedule_within_the_timer_slack() {
    let mut pair = Pair::new(Config::new(Algorithm::Bbr));
    let t = Duration::ZERO;
    while pair.ad.earliest_departure_time().is_none() {
        pair.send(t, MSS, Some(false));
    }
    let rate = pair.rf.pacing_rate_bytes_per_sec();
    let edt = pair.ad.earliest_departure_time().unwrap();
    let due = edt - pair.ts(t);
    let per_packet = Duration::from_nanos(MSS * 1_000_000_000 / rate);
    let check = |pair: &mut Pair, lateness: Duration, credit: Duration, at: Duration| {
        let send_at = at + lateness;
        let burst_before = pair.ad.send_quantum().unwrap() as u64;
        pair.send(send_at, MSS, Some(false));
        // Fill the rest of the burst at the same instant; the departure
        // that follows is the credited one plus the burst's packets.
        let mut n = 1u64;
        while pair.ad.earliest_departure_time().is_none() {
            pair.send(send_at, MSS, Some(false));
            n += 1;
            // A quantum, plus the catch-up the credit allows.
            let catch_up = credit.as_nanos() as u64 * rate / 1_000_000_000;
            assert!(n * MSS <= burst_before + catch_up + MSS, "burst bounded");
        }
        let next = pair.ad.earliest_departure_time().unwrap() - pair.ts(send_at);
        let want = per_packet * n as u32 - credit;
        assert!(
            next.abs_diff(want) <= Duration::from_micros(2),
            "late by {lateness:?}: next departure in {next:?}, want {want:?}"
        );
        send_at + next
    };
    // s2n-quic's timestamps are whole microseconds, so the sends are too.
    let whole_us = |d: Duration| Duration::from_micros(d.as_micros() as u64);
    let slack = Duration::from_millis(2).max(per_packet / 2);
    // A quarter of a packet late: all of it back.
    let quarter = whole_us(per_packet / 4);
    let at = check(&mut pair, quarter, quarter, due);
    // Just within the slack: all of it back.
    let within = whole_us(slack) - Duration::from_micros(10);
    let at = check(&mut pair, within, within, at);
    // Three slacks late: only the slack back.
    check(&mut pair, whole_us(slack * 3), slack, at);
}

#[test]
fn mtu_update_changes_the_controllers_mss() {
    let mut pair = Pair::new(Config::new(Algorithm::Reno));
    let before = pair.ad.congestion_window();
    let mut publisher = PathPublisher::new(&mut pair.events, path::Id::test_id());
    pair.ad.on_mtu_update(1400, &mut publisher);
    pair.rf.on_mss_change(1400);
    assert_eq!(pair.ad.controller().mss_bytes(), 1400);
    assert_eq!(pair.ad.congestion_window() as u64, pair.rf.cwnd_bytes());
    assert!(pair.ad.congestion_window() >= before);
}

#[test]
fn the_observer_follows_the_newest_connection() {
    let endpoint = Endpoint::new(Config::new(Algorithm::Bbr));
    let observer = endpoint.observer();
    assert!(observer.latest().is_none());
    let mut pair = Pair::with_endpoint(endpoint.clone());
    let ms = Duration::from_millis;
    pair.send_n(ms(0), 4);
    pair.ack(ms(10), &[0, 1], &[], 0, false);
    let o = observer.latest().expect("published on the ACK");
    assert_eq!(o.connection, 1);
    assert_eq!(o.bytes_acked, 2 * MSS);
    assert_eq!(o.packets_sent, 4);
    assert_eq!(o.bytes_in_flight, 2 * MSS);
    assert_eq!(o.srtt, Some(ms(10)));
    assert_eq!(o.snapshot, pair.rf.snapshot());
    // s2n-quic's clone of a fresh controller is the one that runs.
    let clone = pair.ad.clone();
    assert_eq!(clone.observed().connection, 1);
    // Cloning publishes nothing new: the observer still shows the
    // connection's state, not a fresh controller's at its initial window.
    assert_eq!(observer.latest(), Some(o), "after the clone");
    // A second connection takes over the observer.
    let mut second = Pair::with_endpoint(endpoint);
    second.send_n(ms(0), 1);
    second.ack(ms(5), &[0], &[], 0, false);
    assert_eq!(observer.latest().unwrap().connection, 2);
    pair.ack(ms(20), &[2, 3], &[], 0, false);
    assert_eq!(
        observer.latest().unwrap().connection,
        2,
        "the old one no longer writes"
    );
}

/// A user's algorithm: a fixed window that counts the events it gets.
#[derive(Debug)]
struct Fixed {
    acks: Arc<AtomicU64>,
    losses: Arc<AtomicU64>,
    mss: u64,
}

impl CongestionControl for Fixed {
    fn on_ack(&mut self, _ack: &AckContext<'_>, _sampler: &mut DeliveryRateSampler) {
        self.acks.fetch_add(1, Ordering::Relaxed);
    }
    fn on_packets_lost(&mut self, _now: Instant, _lost: u64, _in_flight: u64, _new: bool) {
        self.losses.fetch_add(1, Ordering::Relaxed);
    }
    fn on_retransmission_timeout(&mut self, _now: Instant, _in_flight: u64) {}
    fn on_mss_change(&mut self, mss: u64) {
        self.mss = mss;
    }
    fn cwnd_bytes(&self) -> u64 {
        7 * self.mss
    }
    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        1_000_000
    }
    fn send_quantum_bytes(&self) -> u64 {
        2 * self.mss
    }
    fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::default();
        s.cwnd_bytes = self.cwnd_bytes();
        s
    }
    fn name(&self) -> &str {
        "fixed"
    }
}

#[test]
fn a_custom_algorithm_runs_behind_the_adapter() {
    let acks = Arc::new(AtomicU64::new(0));
    let losses = Arc::new(AtomicU64::new(0));
    let (a, l) = (acks.clone(), losses.clone());
    let endpoint = Endpoint::custom(Config::default(), move |config| {
        Box::new(Fixed {
            acks: a.clone(),
            losses: l.clone(),
            mss: config.mss_bytes,
        })
    });
    let config = {
        let mut s = Config::default();
        s.mss_bytes = MSS;
        s
    };
    let reference = Box::new(Fixed {
        acks: Arc::default(),
        losses: Arc::default(),
        mss: MSS,
    });
    let mut pair = Pair::with_reference(endpoint, Controller::custom(&config, reference));
    assert_eq!(
        pair.ad.congestion_window() as u64,
        7 * MSS,
        "the path's MSS reached it"
    );
    assert_eq!(pair.ad.send_quantum(), Some(2 * MSS as usize));
    let ms = Duration::from_millis;
    pair.send_n(ms(0), 7);
    pair.ack(ms(10), &[0, 1, 2, 4], &[], 0, false);
    pair.ack(ms(11), &[5, 6], &[3], 0, false);
    assert_eq!(acks.load(Ordering::Relaxed), 2);
    assert_eq!(losses.load(Ordering::Relaxed), 1);
    assert_eq!(pair.ad.controller().name(), "fixed");
}

/// Each connection of a default endpoint gets its own seed, so
/// connections do not probe in step; an endpoint told `Fixed` gives every
/// one the configuration's, and a clone (which s2n-quic runs in place of
/// the original) keeps its original's.
#[test]
fn each_connection_gets_its_own_seed_unless_fixed() {
    let endpoint = Endpoint::new(Config::new(Algorithm::Bbr));
    let (a, b) = (endpoint.new_controller(1200), endpoint.new_controller(1200));
    assert_ne!(a.seed(), b.seed());
    assert_eq!(a.clone().seed(), a.seed());
    let fixed =
        Endpoint::new(Config::new(Algorithm::Bbr)).with_seeds(congestion::ConnectionSeeds::Fixed);
    let seed = Config::new(Algorithm::Bbr).seed;
    assert_eq!(
        (
            fixed.new_controller(1200).seed(),
            fixed.new_controller(1200).seed()
        ),
        (seed, seed)
    );
}

/// A clone (s2n-quic clones a connection's controller into its path
/// table) carries what the controller learned, not only its counters.
#[test]
fn a_clone_keeps_the_controllers_state() {
    let mut pair = Pair::new(Config::new(Algorithm::Bbr));
    run_path(&mut pair, 800, 20, 1040, 100, 0);
    let copy = pair.ad.clone();
    let (a, b) = (
        copy.controller().snapshot(),
        pair.ad.controller().snapshot(),
    );
    assert_eq!(a, b);
    assert!(
        b.bw_estimate_bytes_per_sec.is_some_and(|bw| bw > 0.0),
        "{b:?}"
    );
    assert_eq!(copy.seed(), pair.ad.seed());
}

/// `try_new` refuses what `Config::check` refuses, naming the field, and
/// builds the endpoint from a defined configuration.
#[test]
fn try_new_refuses_an_undefined_setting() {
    let mut c = congestion::Config::new(congestion::Algorithm::Cubic);
    c.cubic.beta = 1.0;
    let e = Endpoint::try_new(c).unwrap_err();
    assert_eq!(e.field, "cubic.beta");
    assert!(Endpoint::try_new(congestion::Config::new(congestion::Algorithm::Cubic)).is_ok());
    // No recovery point comes from the stack: such episodes never end.
    let mut c = congestion::Config::for_quic(congestion::Algorithm::Cubic, 1200);
    c.recovery_exit = congestion::RecoveryExit::Transport;
    assert_eq!(Endpoint::try_new(c).unwrap_err().field, "recovery_exit");
    // A user's algorithm still runs inside the configuration's episodes.
    let make = |c: &congestion::Config| congestion::builtin(c, congestion::Instant::ZERO);
    assert_eq!(
        Endpoint::try_custom(c, make).unwrap_err().field,
        "recovery_exit"
    );
    c.recovery_exit = congestion::RecoveryExit::FirstAckAfterStart;
    assert!(Endpoint::try_custom(c, make).is_ok());
}

/// A clone is the same controller at any point, not only before the
/// first packet: a timer's losses still waiting for the next send (s2n-quic
/// closes such a batch with no event of its own), an ACK's RTT sample,
/// losses and CE marks waiting for its `on_ack`, and the permission to
/// send one packet past the window on entering recovery (RFC 9002
/// §7.3.2) go with it. Before, the copy dropped all of them: it never
/// entered recovery for the losses, and lost the fast retransmission.
#[test]
fn a_clone_keeps_what_is_still_to_be_reported() {
    let ms = Duration::from_millis;
    for (name, config) in algorithms() {
        // A timer's losses, waiting for the next send.
        let mut pair = Pair::new(config);
        pair.send_n(ms(0), 10);
        pair.ack(ms(20), &[0, 1, 2, 3, 4, 5, 6], &[], 0, false);
        pair.timer_loss(ms(35), &[7, 8], false);
        let mut copy = pair.ad.clone();
        pair.send(ms(36), MSS, Some(false));
        let ts = pair.ts(ms(36));
        let mut publisher = PathPublisher::new(&mut pair.events, path::Id::test_id());
        copy.on_packet_sent(ts, MSS as usize, Some(false), &pair.rtt, &mut publisher);
        assert_eq!(
            copy.controller().snapshot(),
            pair.ad.controller().snapshot(),
            "{name}: the copy reports the timer's losses"
        );
        assert_eq!(copy.bytes_in_flight(), pair.ad.bytes_in_flight(), "{name}");
        assert_eq!(
            copy.requires_fast_retransmission(),
            pair.ad.requires_fast_retransmission(),
            "{name}"
        );

        // An ACK half reported: its RTT sample, a loss and a CE mark in,
        // `on_ack` still to come; the copy then hears the same `on_ack`.
        let mut pair = Pair::new(config);
        pair.send_n(ms(0), 10);
        let ts = pair.ts(ms(20));
        let mut publisher = PathPublisher::new(&mut pair.events, path::Id::test_id());
        pair.rtt.update_rtt(
            Duration::ZERO,
            ms(20),
            ts,
            true,
            PacketNumberSpace::ApplicationData,
        );
        pair.ad
            .on_rtt_update(pair.t0, ts, &pair.rtt, &mut publisher);
        pair.ad.on_packet_lost(
            MSS as u32,
            pair.sent[0].info,
            false,
            true,
            &mut pair.rng,
            ts,
            &mut publisher,
        );
        pair.ad.on_explicit_congestion(1, ts, &mut publisher);
        let mut copy = pair.ad.clone();
        for ad in [&mut pair.ad, &mut copy] {
            ad.on_ack(
                pair.t0,
                8 * MSS as usize,
                pair.sent[8].info,
                &pair.rtt,
                &mut pair.rng,
                ts,
                &mut publisher,
            );
        }
        assert_eq!(
            copy.controller().snapshot(),
            pair.ad.controller().snapshot(),
            "{name}: the copy takes the ACK as the original does"
        );
        assert_eq!(copy.controller().recovery_episodes(), 1, "{name}");
        assert!(pair.ad.requires_fast_retransmission(), "{name}");
        assert!(copy.requires_fast_retransmission(), "{name}");
        assert!(pair.ad.clone().requires_fast_retransmission(), "{name}");
    }
}

/// Byte counts at their type's limits, through every call that takes or
/// reports one, never panic (the tests keep overflow checks on): a send
/// of `usize::MAX` bytes used to overflow the burst's room check in
/// `earliest_departure_time`.
#[test]
fn huge_byte_counts_never_panic() {
    for (name, config) in algorithms() {
        let mut pair = Pair::new(config);
        let ts = pair.ts(Duration::ZERO);
        let ts2 = pair.ts(Duration::from_millis(20));
        let mut publisher = PathPublisher::new(&mut pair.events, path::Id::test_id());
        let info = pair
            .ad
            .on_packet_sent(ts, usize::MAX, Some(false), &pair.rtt, &mut publisher);
        let _ = pair.ad.earliest_departure_time();
        let _ = pair.ad.send_quantum();
        assert!(pair.ad.is_congestion_limited(), "{name}");
        let ts = ts2;
        pair.ad.on_explicit_congestion(u64::MAX, ts, &mut publisher);
        pair.ad.on_packet_lost(
            u32::MAX,
            info,
            false,
            true,
            &mut pair.rng,
            ts,
            &mut publisher,
        );
        pair.ad.on_ack(
            ts,
            usize::MAX,
            info,
            &pair.rtt,
            &mut pair.rng,
            ts,
            &mut publisher,
        );
        pair.ad.on_packet_discarded(usize::MAX, &mut publisher);
        let _ = pair.ad.earliest_departure_time();
        assert!(pair.ad.congestion_window() > 0, "{name}");
        assert!(
            pair.ad.controller().pacing_rate_bytes_per_sec() > 0,
            "{name}"
        );
    }
}
