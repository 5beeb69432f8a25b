//! `bbr-jitter` (seed 001, Dong & Guo 2019, eqs. 8–11).

mod support;

use congestion::{Algorithm, Config, Mode};
use support::*;

const BIG: u64 = 1 << 22;

/// The paper's equations, computed independently of the implementation.
struct Reference {
    srtt: f64,
    rttvar: f64,
    started: bool,
}

impl Reference {
    fn update(&mut self, rtt_ns: f64) {
        if !self.started {
            self.srtt = rtt_ns;
            self.rttvar = 0.0;
            self.started = true;
            return;
        }
        self.srtt = 0.875 * self.srtt + 0.125 * rtt_ns; // eq. (8), α = 0.125
        self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - rtt_ns).abs(); // eq. (9), β = 0.25
    }
    fn unstable(&self) -> bool {
        self.rttvar > 0.3 * self.srtt // γ = 0.3
    }
}

fn rtt_sequence() -> Vec<u64> {
    let mut v = vec![100 * MS; 15];
    for i in 0..30 {
        v.push(if i % 2 == 0 { 20 * MS } else { 180 * MS });
    }
    v.extend(std::iter::repeat_n(100 * MS, 30));
    v
}

#[test]
fn switches_to_srtt_exactly_when_rttvar_exceeds_gamma_srtt() {
    let mut d = RoundDriver::new(&Config::new(Algorithm::BbrJitter));
    let mut r = Reference {
        srtt: 0.0,
        rttvar: 0.0,
        started: false,
    };
    let (mut saw_stable, mut saw_unstable) = (false, false);
    for rtt in rtt_sequence() {
        let s = d.round(1e6, rtt, 50_000, false);
        r.update(rtt as f64);
        let j = s.jitter.expect("bbr-jitter exposes its statistics");
        // Snapshot durations are truncated to whole ns.
        assert!(
            (j.srtt.as_nanos() as f64 - r.srtt).abs() <= 1.0,
            "srtt {:?} vs {}",
            j.srtt,
            r.srtt
        );
        assert!((j.rttvar.as_nanos() as f64 - r.rttvar).abs() <= 1.0);
        assert_eq!(
            j.using_srtt,
            r.unstable(),
            "rttvar {} srtt {}",
            r.rttvar,
            r.srtt
        );
        saw_stable |= !j.using_srtt;
        saw_unstable |= j.using_srtt;
    }
    assert!(saw_stable && saw_unstable);
}

/// Runs the jittery RTT sequence in PROBE_BW and returns the snapshots.
fn probe_bw_under_jitter(alg: Algorithm) -> Vec<congestion::Snapshot> {
    let mut d = RoundDriver::new(&Config::new(alg));
    // STARTUP and DRAIN on a steady 100 ms path.
    let mut rate: f64 = 1.25e5;
    while d.cc.snapshot().mode == Mode::Startup {
        d.round(rate.min(1e6), 100 * MS, BIG, false);
        rate *= 2.0;
    }
    d.round(1e6, 100 * MS, 0, false);
    assert_eq!(d.cc.snapshot().mode, Mode::ProbeBw);
    let mut out = Vec::new();
    for i in 0..40 {
        let rtt = if i % 2 == 0 { 20 * MS } else { 180 * MS };
        out.push(d.round(1e6, rtt, BIG, false));
    }
    out
}

#[test]
fn unstable_rtt_sizes_cwnd_from_srtt_instead_of_min_rtt() {
    let jit = probe_bw_under_jitter(Algorithm::BbrJitter);
    let plain = probe_bw_under_jitter(Algorithm::Bbr);
    let (j, p) = (jit.last().unwrap(), plain.last().unwrap());
    let js = j.jitter.unwrap();
    assert!(js.using_srtt);
    let bw = j.bw_estimate_bytes_per_sec.unwrap();
    let srtt = js.srtt.as_secs_f64();
    // Eq. (10): BDP = srtt × bw, so cwnd ≥ cwnd_gain × bw × srtt (plus
    // allowances); bbr's is built on the 20 ms min_rtt instead.
    assert!(
        j.cwnd_bytes as f64 >= 2.0 * bw * srtt,
        "jitter cwnd {} < 2·bw·srtt {}",
        j.cwnd_bytes,
        2.0 * bw * srtt
    );
    assert_eq!(p.min_rtt, Some(std::time::Duration::from_millis(20)));
    assert!(
        (j.cwnd_bytes as f64) > 1.5 * p.cwnd_bytes as f64,
        "jitter {} vs bbr {}",
        j.cwnd_bytes,
        p.cwnd_bytes
    );
}

#[test]
fn unstable_rtt_shortens_the_gain_cycle_to_five_phases() {
    let jit = probe_bw_under_jitter(Algorithm::BbrJitter);
    let plain = probe_bw_under_jitter(Algorithm::Bbr);
    // Skip the first rounds while rttvar builds up past γ·srtt.
    let unstable: Vec<u8> = jit
        .iter()
        .filter(|s| s.jitter.unwrap().using_srtt)
        .skip(5)
        .map(|s| s.cycle_index.unwrap())
        .collect();
    assert!(unstable.len() >= 20);
    // Eq. (11): {1.25, 0.75, 1, 1, 1}: indices 0–4 only, wrapping 4 → 0.
    assert!(unstable.iter().all(|&i| i < 5), "{unstable:?}");
    assert!(unstable.windows(2).any(|w| w == [4, 0]), "{unstable:?}");
    // Plain bbr visits the long cycle's later phases.
    assert!(plain.iter().any(|s| s.cycle_index.unwrap() >= 5));
}

#[test]
fn on_a_clean_path_bbr_jitter_behaves_exactly_like_bbr() {
    let path = Path::new(10.0, 40, 100);
    let a = run_path(&path, &Config::new(Algorithm::Bbr), 12 * SEC);
    let b = run_path(&path, &Config::new(Algorithm::BbrJitter), 12 * SEC);
    assert_eq!(a.records.len(), b.records.len());
    for (x, y) in a.records.iter().zip(&b.records) {
        assert!(!y.snap.jitter.unwrap().using_srtt, "switched at {}", y.t_ns);
        assert_eq!(
            (
                x.t_ns,
                x.snap.cwnd_bytes,
                x.snap.pacing_rate_bytes_per_sec,
                x.snap.mode
            ),
            (
                y.t_ns,
                y.snap.cwnd_bytes,
                y.snap.pacing_rate_bytes_per_sec,
                y.snap.mode
            )
        );
    }
}

#[test]
fn under_c11_jitter_the_variant_keeps_the_link_fuller_than_bbr() {
    // C11's path: 3 Mbit/s, per-packet RTT ~ Normal(60 ms, 40 ms) floored at
    // 1 ms, reordering allowed, no loss.
    let mut path = Path::new(3.0, 60, 1000);
    path.jitter = Some(Jitter {
        mean_ns: 60e6,
        sd_ns: 40e6,
        floor_ns: 1e6,
        reorder: true,
    });
    let g = |alg| run_path(&path, &Config::new(alg), 60 * SEC).goodput_bps(10 * SEC, 60 * SEC);
    let (plain, variant) = (g(Algorithm::Bbr), g(Algorithm::BbrJitter));
    eprintln!("bbr {plain:.0} bit/s, bbr-jitter {variant:.0} bit/s");
    // Measured over path seeds 1–6 on this harness: bbr-jitter 2.72–2.77
    // Mbit/s, 1.16–1.19 × bbr. Bounds sit about halfway between that and
    // "no effect": ≥ 88 % of the link and ≥ 1.08 × bbr. This harness does
    // not reproduce seed 001's collapse of bbr to 0.5 Mbit/s (bbr keeps
    // ≈ 2.3 Mbit/s, partly thanks to extra_acked, which treats reordered ACKs
    // as aggregation); claim C11 in issue 4 examines that gap.
    assert!(variant >= 0.88 * 3e6, "bbr-jitter {variant}");
    assert!(
        variant >= 1.08 * plain,
        "bbr-jitter {variant} vs bbr {plain}"
    );
}

/// `stats = Quic2018` keeps srtt and rttvar as the paper's QUIC stack did
/// (Chromium's RttStats of 2018): the ACK delay comes off the sample when
/// the sample exceeds it; the deviation is updated first, against the old
/// srtt; the first sample sets the deviation to half of it. Checked against
/// the same rules written out here, sample by sample.
#[test]
fn quic_2018_statistics_follow_quics_order_start_and_ack_delay() {
    use congestion::{AckEvent, AckedPacket, Controller, JitterStats, SentPacketState};
    use std::time::Duration;
    let mut cfg = Config::new(Algorithm::BbrJitter);
    cfg.jitter.stats = JitterStats::Quic2018;
    let mut cc = Controller::new(&cfg, at(0));
    // (rtt, ack delay) in ms; the fourth delay exceeds its sample and is
    // therefore ignored.
    let samples = [(100, 0), (140, 10), (60, 0), (30, 40), (100, 5), (100, 0)];
    let (mut srtt, mut dev) = (0.0f64, 0.0f64);
    let mut t = 0;
    for (i, &(rtt, delay)) in samples.iter().enumerate() {
        t += 100 * MS;
        let r = if rtt > delay { rtt - delay } else { rtt } as f64 * 1e6;
        if i == 0 {
            srtt = r;
            dev = r / 2.0;
        } else {
            dev = 0.75 * dev + 0.25 * (srtt - r).abs();
            srtt = 0.875 * srtt + 0.125 * r;
        }
        let state = SentPacketState {
            sent_time: at(t - rtt * MS),
            ..SentPacketState::default()
        };
        cc.on_ack(
            &AckEvent::new(at(t), &[AckedPacket { bytes: 1500, state }], 1500, 0).rtt(
                Some(Duration::from_millis(rtt)),
                Duration::from_millis(delay),
            ),
        );
        let j = cc
            .snapshot()
            .jitter
            .expect("bbr-jitter exposes its statistics");
        assert!(
            (j.srtt.as_nanos() as f64 - srtt).abs() <= 1.0,
            "{i}: srtt {:?} vs {srtt}",
            j.srtt
        );
        assert!(
            (j.rttvar.as_nanos() as f64 - dev).abs() <= 1.0,
            "{i}: rttvar {:?} vs {dev}",
            j.rttvar
        );
        assert_eq!(j.using_srtt, dev > 0.3 * srtt, "{i}");
    }
    // Unlike the default statistics, the first sample already reads as
    // unstable (rtt/2 > 0.3 rtt).
    let mut first = Controller::new(&cfg, at(0));
    let state = SentPacketState::default();
    first.on_ack(
        &AckEvent::new(at(50 * MS), &[AckedPacket { bytes: 1500, state }], 1500, 0)
            .rtt(Some(Duration::from_millis(50)), Duration::ZERO),
    );
    assert!(first.snapshot().jitter.unwrap().using_srtt);
    let mut default = Controller::new(&Config::new(Algorithm::BbrJitter), at(0));
    default.on_ack(
        &AckEvent::new(at(50 * MS), &[AckedPacket { bytes: 1500, state }], 1500, 0)
            .rtt(Some(Duration::from_millis(50)), Duration::ZERO),
    );
    assert!(!default.snapshot().jitter.unwrap().using_srtt);
}

/// Drives a `bbr-jitter` controller with scripted ACKs, `per_round` ACK
/// frames per round trip, each with its own RTT sample. All packets of a
/// round were sent together when the previous round ended, so only the
/// first ACK of each round starts a round (its packet was sent after the
/// previous round's start was acknowledged, `bbr_update_bw()`). Returns,
/// for each ACK, the srtt the controller then reports.
struct CadenceDriver {
    cc: congestion::Controller,
    now_ns: u64,
    delivered: u64,
}

impl CadenceDriver {
    fn new(cadence: congestion::JitterCadence) -> Self {
        let mut cfg = Config::new(Algorithm::BbrJitter);
        cfg.jitter.cadence = cadence;
        CadenceDriver {
            cc: congestion::Controller::new(&cfg, at(0)),
            now_ns: 0,
            delivered: 0,
        }
    }

    /// One round of ACK frames; `rtts[i]` is the sample of the i-th (None:
    /// a frame without an RTT sample). Returns (srtt ns, round count)
    /// after each frame.
    fn round(&mut self, rtts: &[Option<u64>]) -> Vec<(f64, u64)> {
        use congestion::{AckEvent, AckedPacket, SentPacketState};
        use std::time::Duration;
        let sent = self.now_ns;
        let state = SentPacketState {
            sent_time: at(sent),
            delivered_bytes: self.delivered,
            delivered_time: at(sent),
            first_sent_time: at(sent),
            is_app_limited: false,
            bytes_in_flight: 30_000,
            lost_bytes: 0,
            delivered_packets: 0,
            delivered_ce_packets: 0,
        };
        let mut out = Vec::new();
        // The frames arrive 200 ms and more after the send, longer than any
        // sample, so the rate samples are valid (interval ≥ min_rtt).
        self.now_ns += 200 * MS;
        for rtt in rtts {
            self.now_ns += MS;
            self.delivered += 1500;
            self.cc.on_ack(
                &AckEvent::new(
                    at(self.now_ns),
                    &[AckedPacket { bytes: 1500, state }],
                    21_500,
                    20_000,
                )
                .rtt(rtt.map(Duration::from_nanos), Duration::ZERO),
            );
            let s = self.cc.snapshot();
            out.push((
                s.jitter
                    .expect("bbr-jitter exposes its statistics")
                    .srtt
                    .as_nanos() as f64,
                s.round_count,
            ));
        }
        out
    }
}

/// eq. (8) with α = 1/8 over exactly the samples a cadence should use.
fn srtt_of(samples: &[u64]) -> f64 {
    let mut srtt = samples[0] as f64;
    for &r in &samples[1..] {
        srtt = 0.875 * srtt + 0.125 * r as f64;
    }
    srtt
}

/// A distinct RTT for every ACK, so each update moves srtt.
fn cadence_rtt(i: usize) -> u64 {
    (40 + 7 * (i as u64 % 11) + i as u64) * MS
}

#[test]
fn every_sample_cadence_updates_on_every_sample() {
    let mut d = CadenceDriver::new(congestion::JitterCadence::EverySample);
    let mut fed = Vec::new();
    for r in 0..6 {
        let rtts: Vec<Option<u64>> = (0..4).map(|k| Some(cadence_rtt(r * 4 + k))).collect();
        for (k, (srtt, _)) in d.round(&rtts).into_iter().enumerate() {
            fed.push(cadence_rtt(r * 4 + k));
            assert!((srtt - srtt_of(&fed)).abs() <= 1.0, "ack {}", fed.len());
        }
    }
}

#[test]
fn every_n_samples_cadence_uses_the_first_and_then_every_nth_sample() {
    let n = std::num::NonZeroU32::new(3).unwrap();
    let mut d = CadenceDriver::new(congestion::JitterCadence::EveryNSamples(n));
    let (mut fed, mut i, mut updates) = (Vec::new(), 0usize, 0);
    let mut last = f64::NAN;
    for _ in 0..5 {
        // A frame without a sample is not a sample: it does not count.
        let mut rtts: Vec<Option<u64>> = (0..4).map(|k| Some(cadence_rtt(i + k))).collect();
        rtts.insert(2, None);
        for (srtt, _) in d.round(&rtts) {
            if srtt == last {
                continue;
            }
            updates += 1;
            last = srtt;
        }
        for k in 0..4 {
            // Samples 0, 3, 6, … (the first, then every third).
            if (i + k) % 3 == 0 {
                fed.push(cadence_rtt(i + k));
            }
        }
        i += 4;
    }
    // 20 samples: indices 0, 3, …, 18 are used.
    assert_eq!(fed.len(), 7);
    assert_eq!(updates, 7, "srtt changed on exactly the used samples");
    assert!(
        (last - srtt_of(&fed)).abs() <= 1.0,
        "{last} vs {}",
        srtt_of(&fed)
    );
}

#[test]
fn per_round_cadence_uses_only_the_ack_that_starts_each_round() {
    let mut d = CadenceDriver::new(congestion::JitterCadence::PerRound);
    let mut fed = Vec::new();
    let mut prev_round = 0;
    for r in 0..8 {
        let rtts: Vec<Option<u64>> = (0..5).map(|k| Some(cadence_rtt(r * 5 + k))).collect();
        let out = d.round(&rtts);
        // The script's rounds are BBR's: the first frame starts one.
        assert_eq!(
            out[0].1,
            prev_round + 1,
            "round {r} starts at its first ACK"
        );
        assert!(
            out.iter().all(|o| o.1 == out[0].1),
            "one round per script round"
        );
        prev_round = out[0].1;
        fed.push(cadence_rtt(r * 5));
        for (k, (srtt, _)) in out.into_iter().enumerate() {
            assert!(
                (srtt - srtt_of(&fed)).abs() <= 1.0,
                "round {r} ack {k}: srtt {srtt} vs {}",
                srtt_of(&fed)
            );
        }
    }
}

#[test]
fn per_ack_frame_cadence_updates_once_per_frame_with_a_sample() {
    let mut d = CadenceDriver::new(congestion::JitterCadence::PerAckFrame);
    let mut fed = Vec::new();
    for r in 0..4 {
        let rtts = [Some(cadence_rtt(3 * r)), None, Some(cadence_rtt(3 * r + 2))];
        let out = d.round(&rtts);
        fed.push(cadence_rtt(3 * r));
        assert!((out[0].0 - srtt_of(&fed)).abs() <= 1.0);
        // A frame without an RTT sample leaves the statistics alone.
        assert_eq!(out[1].0, out[0].0);
        fed.push(cadence_rtt(3 * r + 2));
        assert!((out[2].0 - srtt_of(&fed)).abs() <= 1.0);
    }
}
