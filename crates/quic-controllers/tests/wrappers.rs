//! Scripted send/ACK/loss sequences through `Controller::custom`, the way
//! bbrlab's sender drives a controller, checking what the stacks'
//! controllers do against numbers written down here (the stacks' β, the
//! pacing rules), not against the wrappers' own output.

use congestion::{
    AckEvent, AckedPacket, Config, Controller, Instant, LostPacket, Mode, SentPacketState,
};
use core::time::Duration;
mod common;
use common::Shared;
use quic_controllers::noq::{self, Noq};
use quic_controllers::quinn::{rtt, Quinn};
use quic_controllers::s2n::S2n;
use quic_controllers::StackAlgorithm;
use std::collections::VecDeque;

const MSS: u64 = 1200;
const RTT: Duration = Duration::from_millis(40);

/// A sender with a fixed RTT and no bottleneck: it fills the window at
/// one instant and every packet is acknowledged one RTT later, one ACK
/// per packet.
struct Drive {
    c: Controller,
    now: u64,
    inflight: u64,
    out: VecDeque<(u64, SentPacketState)>,
    /// A bottleneck's time per packet: ACKs leave at least this far apart.
    ser_ns: u64,
    last_ack: u64,
}

impl Drive {
    fn new(alg: StackAlgorithm) -> Self {
        let cfg = {
            let mut s = Config::default();
            s.mss_bytes = MSS;
            s
        };
        Drive {
            c: Controller::custom(&cfg, quic_controllers::build(alg, &cfg, Instant::ZERO)),
            now: 0,
            inflight: 0,
            out: VecDeque::new(),
            ser_ns: 0,
            last_ack: 0,
        }
    }

    fn with(c: Controller) -> Self {
        Drive {
            c,
            now: 0,
            inflight: 0,
            out: VecDeque::new(),
            ser_ns: 0,
            last_ack: 0,
        }
    }

    fn t(&self) -> Instant {
        Instant::from_nanos(self.now)
    }

    fn send(&mut self, n: usize) {
        for _ in 0..n {
            let st = self.c.on_packet_sent(self.t(), MSS, self.inflight, false);
            self.inflight += MSS;
            self.out.push_back((self.now, st));
        }
    }

    fn fill(&mut self) -> usize {
        let mut n = 0;
        while self.inflight + MSS <= self.c.cwnd_bytes() && n < 100_000 {
            self.send(1);
            n += 1;
        }
        n
    }

    /// Acknowledges the oldest `n` packets at their send time + RTT.
    fn ack(&mut self, n: usize) {
        for _ in 0..n {
            let Some((sent_ns, st)) = self.out.pop_front() else {
                return;
            };
            self.now = self
                .now
                .max(sent_ns + RTT.as_nanos() as u64)
                .max(self.last_ack + self.ser_ns);
            self.last_ack = self.now;
            let prior = self.inflight;
            self.inflight -= MSS;
            let t = self.t();
            let acked = [AckedPacket {
                bytes: MSS,
                state: st,
            }];
            self.c.on_ack(
                &AckEvent::new(t, &acked, prior, self.inflight).rtt(Some(RTT), Duration::ZERO),
            );
        }
    }

    /// Declares the oldest packet lost.
    fn lose_oldest(&mut self) {
        let (_, st) = self.out.pop_front().expect("a packet in flight");
        self.inflight -= MSS;
        let t = self.t();
        self.c.on_timer_losses(
            t,
            &[LostPacket {
                bytes: MSS,
                state: st,
            }],
            1,
            self.inflight,
        );
    }

    /// Rounds of: fill the window, acknowledge all of it.
    fn rounds(&mut self, k: usize) {
        for _ in 0..k {
            self.fill();
            let n = self.out.len();
            self.ack(n);
        }
    }
}

#[test]
fn quinn_rtt_estimator_holds_the_given_estimates() {
    assert!(rtt::available(), "quinn-proto's RttEstimator layout");
    let e = rtt::Estimates {
        latest: Duration::from_millis(52),
        smoothed: Duration::from_millis(47),
        var: Duration::from_millis(3),
        min: Duration::from_millis(40),
    };
    let q = rtt::build(e).expect("builds");
    assert_eq!(q.get(), Duration::from_millis(47));
    assert_eq!(q.min(), Duration::from_millis(40));
    assert_eq!(q.conservative(), Duration::from_millis(52));
}

/// Slow start, then one loss: the three CUBICs cut to β = 0.7 of the
/// window (s2n `recovery/cubic.rs` BETA_CUBIC, quinn's and noq's
/// `congestion/cubic.rs` BETA_CUBIC; RFC 9438 §4.6), once per episode.
#[test]
fn cubic_wrappers_cut_their_window_by_the_stacks_beta_on_loss() {
    for alg in [
        StackAlgorithm::S2nCubic,
        StackAlgorithm::QuinnCubic,
        StackAlgorithm::NoqCubic,
    ] {
        let mut d = Drive::new(alg);
        let w0 = d.c.cwnd_bytes();
        d.rounds(3);
        let before = d.c.cwnd_bytes();
        assert!(before >= 4 * w0, "{alg}: slow start grew {w0} to {before}");
        assert_eq!(d.c.mode(), Mode::SlowStart, "{alg}");
        d.fill();
        let before = d.c.cwnd_bytes();
        d.lose_oldest();
        let after = d.c.cwnd_bytes();
        let want = 0.7 * before as f64;
        assert!(
            (after as f64 - want).abs() <= MSS as f64,
            "{alg}: {before} -> {after}, want 0.7x = {want}"
        );
        assert_eq!(d.c.mode(), Mode::CongestionAvoidance, "{alg}");
        // A second loss of a packet sent before the cut: same episode.
        d.lose_oldest();
        assert_eq!(d.c.cwnd_bytes(), after, "{alg}: cut twice in one episode");
    }
}

/// quinn paces every controller at 1.25 × window / srtt in bursts of
/// window × 2 ms / srtt, 10 to 256 datagrams (`connection/pacing.rs`).
#[test]
fn quinn_pacing_is_five_quarters_of_the_window_per_srtt() {
    for alg in [StackAlgorithm::QuinnCubic, StackAlgorithm::QuinnBbr] {
        let mut d = Drive::new(alg);
        d.rounds(4);
        let cwnd = d.c.cwnd_bytes() as f64;
        let srtt = d.c.rtt().smoothed().expect("samples").as_secs_f64();
        assert!((srtt - 0.040).abs() < 1e-6, "{alg}: srtt {srtt}");
        let want = 1.25 * cwnd / srtt;
        let got = d.c.pacing_rate_bytes_per_sec() as f64;
        assert!(
            (got - want).abs() <= 1.0 + 1e-9 * want,
            "{alg}: pacing {got} want {want}"
        );
        let burst = (cwnd * 0.002 / srtt).clamp(10.0 * MSS as f64, 256.0 * MSS as f64);
        let q = d.c.send_quantum_bytes() as f64;
        assert!((q - burst).abs() <= 1.0, "{alg}: burst {q} want {burst}");
    }
}

/// quinn's BBR window grows over lossless rounds on a path whose BDP is
/// above its initial window (its own bandwidth filter, fed by the
/// per-packet `on_ack` and the `on_end_acks` rounds).
#[test]
fn quinn_bbr_grows_its_window_from_acks() {
    let mut d = Drive::new(StackAlgorithm::QuinnBbr);
    // 100 Mbit/s: a BDP of 500 kB, above quinn's 240 kB initial window.
    d.ser_ns = MSS * 8 * 1_000_000_000 / 100_000_000;
    let w0 = d.c.cwnd_bytes();
    d.rounds(6);
    assert!(d.c.cwnd_bytes() > 2 * w0, "{w0} -> {}", d.c.cwnd_bytes());
    assert_eq!(d.c.name(), "quinn:bbr");
}

/// s2n's BBRv2 in Startup: the window grows round over round, the state
/// it publishes is Startup, and bbrlab's pacer is given exactly s2n's
/// pacing rate and send quantum.
#[test]
fn s2n_bbr2_grows_in_startup_and_reports_its_pacer() {
    let cfg = {
        let mut s = Config::default();
        s.mss_bytes = MSS;
        s
    };
    let mut d = Drive::with(Controller::custom(
        &cfg,
        Box::new(S2n::bbr2(&cfg, Instant::ZERO)),
    ));
    let w0 = d.c.cwnd_bytes();
    let mut prev = w0;
    for _ in 0..4 {
        d.rounds(1);
        let w = d.c.cwnd_bytes();
        assert!(w > prev, "window {prev} -> {w}");
        prev = w;
    }
    assert_eq!(d.c.mode(), Mode::Startup);
    assert!(prev >= 4 * w0, "{w0} -> {prev}");

    // Beside it, the bare wrapper: its pacing calls agree with s2n's EDT.
    let mut s = S2n::bbr2(&cfg, Instant::ZERO);
    use congestion::CongestionControl;
    let mut sampler = congestion::DeliveryRateSampler::new();
    let mut inflight = 0;
    let mut now = 0u64;
    let mut states = Vec::new();
    // One RTT sample first (s2n paces only once srtt ≥ 2 ms).
    let st = sampler.on_packet_sent(Instant::ZERO, MSS, 0);
    s.on_packet_sent(Instant::ZERO, MSS, 0);
    now += RTT.as_nanos() as u64;
    let acked = [AckedPacket {
        bytes: MSS,
        state: st,
    }];
    s.on_packets_acked(Instant::from_nanos(now), &acked);
    let mut rtt = congestion::RttEstimator::new();
    rtt.update(RTT, Duration::ZERO);
    let rate = sampler.on_ack_ns(Instant::from_nanos(now), &acked, None, MSS);
    let mut ctx = congestion::AckContext::new(Instant::from_nanos(now), &rate, &rtt);
    ctx.rtt_sample = Some(RTT);
    ctx.min_acked_rtt = Some(RTT);
    ctx.newest_acked_sent = Some(Instant::ZERO);
    ctx.delivered_bytes = sampler.delivered_bytes();
    ctx.acked_packets = 1;
    s.on_ack(&ctx, &mut sampler);
    // Send quanta back to back at one instant. The burst allowance left
    // from before the sample is spent first; then each quantum moves s2n's
    // EDT by one quantum / pacing rate (`bbr::pacing::Pacer`).
    let quantum = s.send_quantum_bytes();
    let rate = s.pacing_rate_bytes_per_sec();
    assert!(rate < quic_controllers::s2n::UNPACED_BYTES_PER_SEC);
    let mut edts: Vec<u64> = Vec::new();
    for _ in 0..12 {
        let mut sent = 0;
        while sent < quantum {
            let t = Instant::from_nanos(now);
            states.push(sampler.on_packet_sent(t, MSS, inflight));
            s.on_packet_sent(t, MSS, inflight);
            inflight += MSS;
            sent += MSS;
        }
        let e = s.earliest_departure_time().expect("paced").as_nanos();
        if e >= now && edts.last() != Some(&e) {
            edts.push(e);
        }
    }
    let gap_want = quantum as f64 * 1e9 / rate as f64;
    assert!(edts.len() >= 4, "EDT moved only {edts:?}");
    for w in edts.windows(2) {
        let gap = (w[1] - w[0]) as f64;
        // s2n's clock ticks in microseconds; its rate is rounded to
        // nanoseconds per KiB.
        assert!(
            (gap - gap_want).abs() <= 2_000.0 + 0.01 * gap_want,
            "EDT gap {gap} ns, quantum/rate {gap_want} ns"
        );
    }
    assert_eq!(s.unmatched_packets(), 0);
}

/// s2n's BBRv2 stops growing on heavy loss: losses in Startup with more
/// than 2 % of the flight lost end Startup (s2n's `LOSS_THRESH`, its
/// `full_pipe` loss exit needs that in 6 bursts over a round).
#[test]
fn s2n_bbr2_leaves_startup_on_heavy_loss() {
    let mut d = Drive::new(StackAlgorithm::S2nBbr2);
    d.rounds(3);
    assert_eq!(d.c.mode(), Mode::Startup);
    for _ in 0..4 {
        d.fill();
        // Lose every fourth packet of the flight, as separate bursts.
        let n = d.out.len();
        let mut k = 0;
        while k < n {
            if k % 4 == 0 {
                d.lose_oldest();
            } else {
                d.ack(1);
            }
            k += 1;
        }
        if d.c.mode() != Mode::Startup {
            break;
        }
    }
    assert_ne!(d.c.mode(), Mode::Startup, "25 % loss did not end Startup");
}

#[test]
fn every_name_builds_a_controller_that_says_its_name() {
    for alg in StackAlgorithm::ALL {
        let d = Drive::new(alg);
        assert_eq!(d.c.name(), alg.name());
        assert!(d.c.cwnd_bytes() >= 2 * MSS, "{alg}");
    }
    let _ = Quinn::cubic(&Config::default(), Instant::ZERO);
}

#[test]
fn noq_rtt_estimator_holds_the_given_estimates() {
    assert!(noq::rtt::available(), "noq-proto's RttEstimator layout");
    let e = noq::rtt::Estimates {
        latest: Duration::from_millis(52),
        smoothed: Duration::from_millis(47),
        var: Duration::from_millis(3),
        min: Duration::from_millis(40),
    };
    let q = noq::rtt::build(e).expect("builds");
    assert_eq!(q.get(), Duration::from_millis(47));
    assert_eq!(q.min(), Duration::from_millis(40));
    assert_eq!(q.conservative(), Duration::from_millis(52));
}

/// noq paces a controller that reports no rate (CUBIC) as quinn does, at
/// 1.25 × window / srtt, in bursts of 2 ms at window / srtt (10 to 256
/// datagrams, at most 10 ms; `connection/pacing.rs`).
#[test]
fn noq_paces_cubic_at_five_quarters_of_the_window_per_srtt() {
    let mut d = Drive::new(StackAlgorithm::NoqCubic);
    d.rounds(4);
    let cwnd = d.c.cwnd_bytes() as f64;
    let srtt = d.c.rtt().smoothed().expect("samples").as_secs_f64();
    let want = 1.25 * cwnd / srtt;
    let got = d.c.pacing_rate_bytes_per_sec() as f64;
    assert!(
        (got - want).abs() <= 1.0 + 1e-9 * want,
        "pacing {got} want {want}"
    );
    let rate = cwnd / srtt;
    let burst = (rate * 0.002)
        .clamp(10.0 * MSS as f64, 256.0 * MSS as f64)
        .min((rate * 0.010).max(MSS as f64));
    let q = d.c.send_quantum_bytes() as f64;
    assert!((q - burst).abs() <= 1.0, "burst {q} want {burst}");
}

/// noq's BBRv3 grows its window over lossless rounds on a path whose BDP
/// is above its initial window, reports its own pacing rate and bandwidth
/// estimate, and bbrlab's pacer is given exactly that rate, in bursts of
/// 2 ms of it (10 to 256 datagrams).
#[test]
fn noq_bbr3_grows_and_paces_at_its_own_rate() {
    let mut d = Drive::new(StackAlgorithm::NoqBbr3);
    // 100 Mbit/s: a BDP of 500 kB, above noq's 12 kB initial window.
    d.ser_ns = MSS * 8 * 1_000_000_000 / 100_000_000;
    let w0 = d.c.cwnd_bytes();
    d.rounds(8);
    assert!(d.c.cwnd_bytes() > 4 * w0, "{w0} -> {}", d.c.cwnd_bytes());
    let cfg = {
        let mut s = Config::default();
        s.mss_bytes = MSS;
        s
    };
    // The same drive on a wrapper held here, to read noq's metrics.
    let shared = std::sync::Arc::new(std::sync::Mutex::new(Noq::bbr3(&cfg, Instant::ZERO)));
    let mut e = Drive::with(Controller::custom(&cfg, Box::new(Shared(shared.clone()))));
    e.ser_ns = d.ser_ns;
    e.rounds(8);
    let m = shared.lock().unwrap().metrics();
    let rate = m.pacing_rate.expect("BBRv3 reports a pacing rate");
    assert_eq!(e.c.pacing_rate_bytes_per_sec(), rate);
    let burst = (rate as f64 * 0.002).clamp(10.0 * MSS as f64, 256.0 * MSS as f64);
    assert!((e.c.send_quantum_bytes() as f64 - burst).abs() <= 1.0);
    let bw = m.bandwidth_estimate.expect("an estimate after 8 rounds");
    let snap = e.c.snapshot();
    assert_eq!(snap.bw_estimate_bytes_per_sec, Some(bw as f64 / 8.0));
    assert_eq!(shared.lock().unwrap().unmatched_packets(), 0);
}
