//! The adapter driven as quinn drives it, against [`Controller`] fed the
//! same events directly in the order bbrlab's UDP transport uses, with one
//! state per transmit as quinn allows. Both sides run the same controller
//! code, so any difference is the adapter's: a lost or misfiled state, a
//! wrong bytes-in-flight, a wrong order.

use super::*;
use congestion::{
    AckEvent, AckedPacket, Algorithm, Bbr3Profile, Controller, LostPacket, SentPacketState,
};
use quinn_proto::congestion::Controller as _;
use std::collections::BTreeMap;
use std::time::Duration;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// quinn's side (the adapter) and the reference, fed one script.
struct Harness {
    t0: Instant,
    adapter: QuinnController,
    /// Transmits by index: send time and datagram sizes.
    transmits: Vec<(Instant, Vec<u64>)>,
    quinn_in_flight: u64,
    reference: Controller,
    ref_states: BTreeMap<usize, SentPacketState>,
    ref_in_flight: u64,
    ref_sampled_up_to: Option<congestion::Instant>,
    /// CE marks of a frame that acknowledged nothing, for the next event.
    ref_pending_ce: u64,
    frames: u32,
}

impl Harness {
    fn new(factory: ControllerFactory, reference: Controller) -> Self {
        let t0 = Instant::now();
        Harness {
            t0,
            adapter: Arc::new(factory).controller(t0, 1200),
            transmits: Vec::new(),
            quinn_in_flight: 0,
            reference,
            ref_states: BTreeMap::new(),
            ref_in_flight: 0,
            ref_sampled_up_to: None,
            ref_pending_ce: 0,
            frames: 0,
        }
    }

    fn with_config(config: Config) -> Self {
        let cc_config = {
            let mut s = config;
            s.mss_bytes = 1200;
            s
        };
        let reference = Controller::new(&cc_config, congestion::Instant::ZERO);
        // Fixed seeds: the reference is built from `config` as it is.
        Harness::new(
            ControllerFactory::new(config).with_seeds(congestion::ConnectionSeeds::Fixed),
            reference,
        )
    }

    fn at(&self, t: Instant) -> congestion::Instant {
        congestion::Instant::from_nanos(t.duration_since(self.t0).as_nanos() as u64)
    }

    /// One transmit of `datagrams`; returns its index.
    fn send(&mut self, t: Instant, datagrams: &[u64]) -> usize {
        let bytes: u64 = datagrams.iter().sum();
        let index = self.transmits.len();
        self.adapter.on_sent(t, bytes, index as u64);
        self.transmits.push((t, datagrams.to_vec()));
        self.quinn_in_flight += bytes;
        let at = self.at(t);
        let state = self
            .reference
            .on_packet_sent(at, bytes, self.ref_in_flight, false);
        self.ref_states.insert(index, state);
        self.ref_in_flight += bytes;
        index
    }

    /// One ACK frame as quinn reports it: the acks (per datagram),
    /// `on_end_acks`, one congestion event for the losses, then ECN.
    fn frame(&mut self, now: Instant, acked: &[usize], lost: &[usize], ce: bool, persistent: bool) {
        self.frames += 1;
        let ref_prior_in_flight = self.ref_in_flight;
        let mut acked_packets = Vec::new();
        let mut newest = None;
        for &i in acked {
            let (sent, sizes) = self.transmits[i].clone();
            let state = self.ref_states[&i];
            for b in sizes {
                self.quinn_in_flight -= b;
                self.adapter.core().ack(sent, b, ms(40));
                self.ref_in_flight -= b;
                acked_packets.push(AckedPacket { bytes: b, state });
            }
            newest = newest.max(Some(state.sent_time));
        }
        self.adapter
            .on_end_acks(now, self.quinn_in_flight, false, None);
        let lost_bytes: u64 = lost
            .iter()
            .map(|&i| self.transmits[i].1.iter().sum::<u64>())
            .sum();
        let newest_lost = lost.iter().copied().max();
        if let Some(n) = newest_lost {
            self.quinn_in_flight -= lost_bytes;
            self.adapter
                .on_congestion_event(now, self.transmits[n].0, persistent, lost_bytes);
        }
        if ce {
            self.adapter.on_congestion_event(now, now, false, 0);
        }
        // The reference: the frame as one ACK event, as bbrlab's UDP
        // transport states an ACK. A frame that acknowledges nothing (its
        // one transmit lost) is no ACK event, only losses; its CE mark
        // waits for the next event.
        let at = self.at(now);
        if ce {
            self.ref_pending_ce += 1;
        }
        let mut lost_packets = Vec::new();
        if let Some(n) = newest_lost {
            self.ref_in_flight -= lost_bytes;
            lost_packets.push(LostPacket {
                bytes: lost_bytes,
                state: self.ref_states[&n],
            });
        }
        if acked.is_empty() {
            if !lost_packets.is_empty() {
                self.reference
                    .on_timer_losses(at, &lost_packets, 1, self.ref_in_flight);
            }
            if persistent {
                self.reference
                    .on_persistent_congestion(at, self.ref_in_flight);
            }
            return;
        }
        let sample = match newest {
            Some(sent) if self.ref_sampled_up_to.is_none_or(|t| sent > t) => {
                self.ref_sampled_up_to = Some(sent);
                Some(at.saturating_since(sent))
            }
            _ => None,
        };
        let event = AckEvent::new(at, &acked_packets, ref_prior_in_flight, self.ref_in_flight)
            .rtt(sample, Duration::ZERO)
            .lost(&lost_packets, 1)
            .ce(std::mem::take(&mut self.ref_pending_ce))
            .persistent_congestion(persistent);
        self.reference.on_ack(&event);
    }

    /// Losses a timer declares, with no ACK.
    fn timer_loss(&mut self, now: Instant, lost: &[usize]) {
        let lost_bytes: u64 = lost
            .iter()
            .map(|&i| self.transmits[i].1.iter().sum::<u64>())
            .sum();
        let n = *lost.iter().max().expect("losses");
        self.quinn_in_flight -= lost_bytes;
        self.adapter
            .on_congestion_event(now, self.transmits[n].0, false, lost_bytes);
        self.ref_in_flight -= lost_bytes;
        let at = self.at(now);
        let lost = [LostPacket {
            bytes: lost_bytes,
            state: self.ref_states[&n],
        }];
        self.reference
            .on_timer_losses(at, &lost, 1, self.ref_in_flight);
    }

    fn mtu(&mut self, mtu: u16) {
        self.adapter.on_mtu_update(mtu);
        self.reference.on_mss_change(u64::from(mtu));
    }

    /// What quinn would read, against the reference.
    fn check(&mut self, what: &str) {
        assert_eq!(
            self.adapter.window(),
            self.reference.cwnd_bytes(),
            "{what}: cwnd"
        );
        let metrics = self.adapter.metrics();
        assert_eq!(
            metrics.pacing_rate,
            Some(self.reference.pacing_rate_bytes_per_sec() * 8),
            "{what}: pacing rate (bit/s)"
        );
        let ours = self.adapter.snapshot();
        let theirs = self.reference.snapshot();
        assert_eq!(ours.mode, theirs.mode, "{what}: mode");
        assert_eq!(
            ours.bw_estimate_bytes_per_sec, theirs.bw_estimate_bytes_per_sec,
            "{what}: bandwidth estimate"
        );
        assert_eq!(ours, theirs, "{what}: snapshot");
        assert_eq!(
            self.adapter.core().in_flight(),
            self.ref_in_flight,
            "{what}: in flight"
        );
    }
}

/// Rounds of transmits (every fifth of two datagrams, as a GSO batch) and
/// frames acknowledging two transmits each, over a 40–43 ms path; every
/// 23rd transmit lost and declared in its neighbour's frame. With
/// `events`: a CE report (round 4), an MTU rise (7), persistent
/// congestion (9), a timer's losses (14). Checks the adapter against the
/// reference after every frame.
fn script(h: &mut Harness, rounds: u64, events: bool) {
    let mut t = h.t0 + ms(1);
    let mut size = 1200u64;
    for round in 0..rounds {
        let n = (h.adapter.window() / size).clamp(2, 120);
        let rtt = ms(40 + round % 4);
        let first = h.transmits.len();
        for k in 0..n {
            let at = t + Duration::from_micros(100 * k);
            let datagrams = if k % 5 == 4 {
                vec![size, size]
            } else {
                vec![size]
            };
            h.send(at, &datagrams);
        }
        let end = h.transmits.len();
        let mut i = first;
        let mut now = t;
        while i < end {
            let chunk: Vec<usize> = (i..(i + 2).min(end)).collect();
            now = h.transmits[chunk[chunk.len() - 1]].0 + rtt;
            let (lost, acked): (Vec<usize>, Vec<usize>) = chunk.iter().partition(|&&q| q % 23 == 7);
            let first_frame = i == first;
            let persistent = events && round == 9 && first_frame && !lost.is_empty();
            let ce = events && round == 4 && first_frame;
            h.frame(now, &acked, &lost, ce, persistent);
            h.check(&format!("round {round} frame at transmit {i}"));
            i += 2;
        }
        if events && round == 7 {
            h.mtu(1400);
            size = 1400;
            h.check("after the MTU rise");
        }
        if events && round == 14 {
            let a = h.send(now + Duration::from_micros(10), &[size]);
            let b = h.send(now + Duration::from_micros(20), &[size, size]);
            now += ms(200);
            h.timer_loss(now, &[a, b]);
            h.check("after a timer's losses");
        }
        t = now + Duration::from_micros(100);
    }
}

fn config(algorithm: Algorithm) -> Config {
    Config::new(algorithm)
}

#[test]
fn every_algorithm_matches_the_controller_fed_directly() {
    for algorithm in Algorithm::ALL {
        let mut h = Harness::with_config(config(algorithm));
        script(&mut h, 24, true);
        assert!(
            h.frames > 50,
            "{algorithm}: the script ran ({} frames)",
            h.frames
        );
    }
}

/// A clone (quinn's `clone_box`: the stack duplicating a connection's
/// controller) carries what the controller learned, where it used to be a
/// fresh controller at the initial window.
#[test]
fn a_clone_keeps_the_controllers_state() {
    let mut h = Harness::with_config(config(Algorithm::Bbr));
    script(&mut h, 8, false);
    let copy = h.adapter.clone_box();
    assert_eq!(copy.window(), h.adapter.window());
    assert_ne!(
        copy.window(),
        h.adapter.initial_window(),
        "learned nothing?"
    );
    let copy = copy.into_any().downcast::<QuinnController>().expect("ours");
    assert_eq!(copy.snapshot(), h.adapter.snapshot());
    assert_eq!(copy.seed(), h.adapter.seed());
}

/// Each connection gets its own seed from a default factory, so
/// connections do not probe in step; a factory told `Fixed` gives every
/// one the configuration's.
#[test]
fn each_connection_gets_its_own_seed_unless_fixed() {
    let t = Instant::now();
    let factory = Arc::new(ControllerFactory::new(config(Algorithm::Bbr)));
    let (a, b) = (factory.controller(t, 1200), factory.controller(t, 1200));
    assert_ne!(a.seed(), b.seed());
    let fixed = Arc::new(
        ControllerFactory::new(config(Algorithm::Bbr))
            .with_seeds(congestion::ConnectionSeeds::Fixed),
    );
    let seed = config(Algorithm::Bbr).seed;
    assert_eq!(fixed.controller(t, 1200).seed(), seed);
    assert_eq!(fixed.controller(t, 1200).seed(), seed);
}

#[test]
fn bbr3_profiles_match_the_controller_fed_directly_and_differ() {
    let mut ends = Vec::new();
    for profile in Bbr3Profile::ALL {
        let mut c = config(Algorithm::Bbr3);
        c.bbr3 = congestion::Bbr3Config::for_profile(profile);
        let mut h = Harness::with_config(c);
        script(&mut h, 24, true);
        ends.push(h.adapter.snapshot());
    }
    // Each profile's adapter matched a controller of the same profile,
    // which a profile that only labelled its config would pass too; the
    // two must also end apart, their constants differing (DRAIN's pacing
    // gain, the draft's 0.5 against Linux's 88/256, among others).
    assert_ne!(ends[0], ends[1], "the draft and linux-v3 ran the same");
}

#[test]
fn the_rare_events_move_the_controller() {
    // CUBIC reduces on CE and on persistent congestion: the script's
    // events must reach it through the adapter, or the comparisons above
    // prove little about them.
    for (rounds, event) in [(5, "CE"), (11, "persistent congestion")] {
        let mut with = Harness::with_config(config(Algorithm::Cubic));
        script(&mut with, rounds, true);
        let mut without = Harness::with_config(config(Algorithm::Cubic));
        script(&mut without, rounds, false);
        let (w, wo) = (with.adapter.window(), without.adapter.window());
        assert!(w < wo, "{event}: cwnd {w} with it, {wo} without");
    }
}

/// A fixed window: enough of an algorithm to tell its calls arrive.
#[derive(Debug)]
struct Fixed {
    cwnd: u64,
    losses: u64,
}

impl CongestionControl for Fixed {
    fn on_ack(
        &mut self,
        ack: &congestion::AckContext<'_>,
        _: &mut congestion::DeliveryRateSampler,
    ) {
        self.cwnd += ack.acked_packets;
    }
    fn on_packets_lost(&mut self, _: congestion::Instant, _: u64, _: u64, _: bool) {
        self.losses += 1;
        self.cwnd = (self.cwnd / 2).max(2400);
    }
    fn on_retransmission_timeout(&mut self, _: congestion::Instant, _: u64) {
        self.cwnd = 2400;
    }
    fn on_mss_change(&mut self, _: u64) {}
    fn cwnd_bytes(&self) -> u64 {
        self.cwnd
    }
    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        1_000_000 + self.losses
    }
    fn send_quantum_bytes(&self) -> u64 {
        2400
    }
    fn snapshot(&self) -> congestion::Snapshot {
        let mut s = congestion::Snapshot::default();
        s.cwnd_bytes = self.cwnd;
        s.pacing_rate_bytes_per_sec = self.pacing_rate_bytes_per_sec();
        s
    }
    fn name(&self) -> &str {
        "fixed"
    }
}

#[test]
fn a_custom_algorithm_matches_the_controller_fed_directly() {
    let make = |_: &Config| -> Box<dyn CongestionControl + Send + Sync> {
        Box::new(Fixed {
            cwnd: 12_000,
            losses: 0,
        })
    };
    let c = {
        let mut s = Config::default();
        s.mss_bytes = 1200;
        s
    };
    let reference = Controller::custom(&c, make(&c));
    let mut h = Harness::new(
        ControllerFactory::custom(Config::default(), make),
        reference,
    );
    script(&mut h, 16, true);
    assert_eq!(h.adapter.snapshot().algorithm, None, "a user's algorithm");
    assert!(
        h.adapter.metrics().pacing_rate > Some(8_000_000),
        "losses reached it"
    );
}

#[test]
fn the_ring_empties_and_prunes_transmits_never_fully_acked() {
    let mut h = Harness::with_config(config(Algorithm::Cubic));
    // Handshake transmits whose space quinn discards: never acked. The
    // controller behind the adapter counts them in flight until quinn's
    // next report, and CUBIC reads in-flight at each send to know whether
    // the window is used; the reference is told the same.
    for k in 0..4 {
        let t = h.t0 + Duration::from_micros(k);
        h.adapter.on_sent(t, 1200, k);
        let at = h.at(t);
        let _ = h.reference.on_packet_sent(at, 1200, h.ref_in_flight, false);
        h.ref_in_flight += 1200;
    }
    assert_eq!(h.adapter.core().ring_len(), 4);
    let mut t = h.t0 + ms(500);
    for k in 0..300u64 {
        let i = h.send(t, &[1200, 1200]);
        t += ms(1);
        if k == 1 {
            h.ref_in_flight -= 4 * 1200;
        }
        if k % 2 == 1 {
            h.frame(t + ms(40), &[i - 1, i], &[], false, false);
            h.check(&format!("transmit {i}"));
        }
    }
    assert_eq!(h.adapter.core().in_flight(), 0);
    assert_eq!(
        h.adapter.core().ring_len(),
        0,
        "every slot acknowledged or pruned"
    );
}

#[test]
fn the_observer_sees_what_the_controller_took() {
    let factory = ControllerFactory::new(config(Algorithm::Bbr));
    let observer = factory.observer();
    let c = {
        let mut s = config(Algorithm::Bbr);
        s.mss_bytes = 1200;
        s
    };
    let reference = Controller::new(&c, congestion::Instant::ZERO);
    let mut h = Harness::new(factory, reference);
    assert!(observer.latest().is_none(), "nothing before the first ACK");
    script(&mut h, 6, true);
    let o = observer.latest().expect("ACKs were processed");
    let transmits = h.transmits.len() as u64;
    let lost: Vec<usize> = (0..h.transmits.len()).filter(|q| q % 23 == 7).collect();
    let all_bytes: u64 = h.transmits.iter().flat_map(|t| t.1.iter()).sum();
    let lost_bytes: u64 = lost
        .iter()
        .map(|&i| h.transmits[i].1.iter().sum::<u64>())
        .sum();
    assert_eq!(o.packets_sent, transmits);
    assert_eq!(
        o.packets_lost,
        lost.len() as u64,
        "one loss event per frame with a loss"
    );
    assert_eq!(o.bytes_acked, all_bytes - lost_bytes);
    assert_eq!(o.ce_packets, 1);
    assert_eq!(o.bytes_in_flight, 0);
    assert_eq!(o.snapshot, h.reference.snapshot());
    assert_eq!(o.srtt, Some(ms(40)), "quinn's srtt as it passed it");
}

#[test]
fn transmits_sharing_an_instant_are_all_credited() {
    // quinn's driver can poll several transmits with one `now`.
    let mut h = Harness::with_config(config(Algorithm::Bbr));
    let t = h.t0 + ms(1);
    let a = h.send(t, &[1200, 1200]);
    let b = h.send(t, &[1200]);
    let c = h.send(t, &[1200, 1200]);
    h.frame(t + ms(40), &[a, b, c], &[], false, false);
    h.check("three transmits at one instant");
    assert_eq!(h.adapter.core().in_flight(), 0);
    assert_eq!(
        h.adapter.core().ring_len(),
        0,
        "all three fully acknowledged"
    );
}

#[test]
fn a_timers_losses_after_a_held_back_frame_are_replayed_apart() {
    // An ACK frame whose replay quinn has not yet triggered, then losses a
    // timer declares at a later instant: they are not the frame's, and
    // must not enter its rate sample (BBRv3 would count them in its round).
    for algorithm in [Algorithm::Bbr3, Algorithm::Cubic] {
        let mut h = Harness::with_config(config(algorithm));
        script(&mut h, 4, false);
        let t = h.t0 + ms(1000);
        let sent: Vec<usize> = (0..6)
            .map(|i| h.send(t + Duration::from_micros(100 * i), &[1200]))
            .collect();
        h.frame(t + ms(41), &sent[..3], &[], false, false);
        h.timer_loss(t + ms(300), &sent[3..]);
        h.check(&format!("{algorithm}: frame, then a timer's losses"));
    }
}

/// `try_new` refuses what `Config::check` refuses, naming the field, and
/// builds the factory from a defined configuration.
#[test]
fn try_new_refuses_an_undefined_setting() {
    let mut c = Config::new(Algorithm::Bbr);
    c.bbr.cwnd_gain = f64::NAN;
    let e = ControllerFactory::try_new(c).unwrap_err();
    assert_eq!(e.field, "bbr.cwnd_gain");
    assert!(ControllerFactory::try_new(Config::new(Algorithm::Bbr)).is_ok());
    // No recovery point comes from the stack: such episodes never end.
    let mut c = Config::for_quic(congestion::Algorithm::Cubic, 1200);
    c.recovery_exit = congestion::RecoveryExit::Transport;
    assert_eq!(
        ControllerFactory::try_new(c).unwrap_err().field,
        "recovery_exit"
    );
    // A user's algorithm still runs inside the configuration's episodes.
    let make = |c: &congestion::Config| congestion::builtin(c, congestion::Instant::ZERO);
    assert_eq!(
        ControllerFactory::try_custom(c, make).unwrap_err().field,
        "recovery_exit"
    );
    c.recovery_exit = congestion::RecoveryExit::FirstAckAfterStart;
    assert!(ControllerFactory::try_custom(c, make).is_ok());
}

/// Byte counts at their type's limits through every callback that takes
/// one never panic (the tests keep overflow checks on), and the window
/// and pacing rate stay positive.
#[test]
fn huge_byte_counts_never_panic() {
    for algorithm in Algorithm::ALL {
        let mut h = Harness::with_config(Config::for_quic(algorithm, 1200));
        let t0 = h.t0;
        for i in 0..3u64 {
            h.adapter.on_sent(t0, u64::MAX, i);
        }
        for _ in 0..2 {
            h.adapter.core().ack(t0, u64::MAX, ms(40));
        }
        h.adapter.on_end_acks(t0 + ms(40), u64::MAX, true, None);
        h.adapter
            .on_congestion_event(t0 + ms(40), t0, false, u64::MAX);
        h.adapter
            .on_congestion_event(t0 + ms(41), t0, true, u64::MAX);
        h.adapter.on_mtu_update(u16::MAX);
        assert!(h.adapter.window() > 0, "{algorithm}");
        let m = h.adapter.metrics();
        assert!(m.pacing_rate.is_some_and(|r| r > 0), "{algorithm}");
    }
}
