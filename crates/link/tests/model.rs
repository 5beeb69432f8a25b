//! The link model, one feature at a time. Tolerances are stated where a
//! random quantity is compared with its expectation.

use link::{
    Direction, DirectionConfig, DropReason, LossConfig, QueueState, Release, ResolvedDirection,
    Verdict,
};
use std::path::Path;

const MS: u64 = 1_000_000;

fn dir(text: &str) -> ResolvedDirection {
    let cfg: DirectionConfig = toml::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    cfg.resolve(Path::new(".")).unwrap()
}

fn deliver(v: Verdict) -> (u64, u64) {
    match v {
        Verdict::Deliver {
            dequeue_ns,
            arrive_ns,
            ..
        } => (dequeue_ns, arrive_ns),
        other => panic!("expected delivery, got {other:?}"),
    }
}

#[test]
fn ten_mbit_serialises_1500_byte_packets_1_2_ms_apart() {
    let mut d = Direction::new(&dir("rate = \"10mbit\"\ndelay = \"20ms\""), 1);
    let times: Vec<(u64, u64)> = (0..5).map(|_| deliver(d.enqueue(0, 1500))).collect();
    for (i, (dq, arr)) in times.iter().enumerate() {
        assert_eq!(*dq, (i as u64 + 1) * 1_200_000);
        assert_eq!(*arr, dq + 20 * MS);
    }
}

#[test]
fn drop_tail_drops_exactly_the_overflow_in_packets_and_bytes() {
    // 10 packets offered at once to a 4-packet queue: the first starts
    // service at once but still counts as queued until it leaves, so
    // exactly 4 are accepted and 6 dropped.
    let mut d = Direction::new(&dir("rate = \"10mbit\"\nqueue = { limit = \"4pkt\" }"), 1);
    let v: Vec<Verdict> = (0..10).map(|_| d.enqueue(0, 1500)).collect();
    let drops = v
        .iter()
        .filter(|v| {
            matches!(
                v,
                Verdict::Drop {
                    reason: DropReason::QueueFull,
                    ..
                }
            )
        })
        .count();
    assert_eq!(drops, 6);
    assert_eq!(
        d.queue(0),
        QueueState {
            packets: 4,
            bytes: 6000
        }
    );
    // Once one has left, one more fits.
    assert!(matches!(
        d.enqueue(1_200_000, 1500),
        Verdict::Deliver { .. }
    ));
    assert!(matches!(d.enqueue(1_200_000, 1500), Verdict::Drop { .. }));
    // Byte limit: 4000 B holds two 1500-byte packets and one 1000-byte one.
    let mut d = Direction::new(&dir("rate = \"10mbit\"\nqueue = { limit = \"4000B\" }"), 1);
    let ok: Vec<bool> = [1500, 1500, 1500, 1000, 100]
        .iter()
        .map(|&b| matches!(d.enqueue(0, b), Verdict::Deliver { .. }))
        .collect();
    assert_eq!(ok, [true, true, false, true, false]);
    assert_eq!(d.queue(0).bytes, 4000);
}

#[test]
fn bernoulli_loss_is_within_three_sigma() {
    for p in [0.01, 0.1] {
        let mut d = Direction::new(&dir(&format!("loss = {{ bernoulli = {p} }}")), 7);
        let n = 1_000_000u64;
        let lost = (0..n)
            .filter(|_| {
                matches!(
                    d.enqueue(0, 100),
                    Verdict::Drop {
                        reason: DropReason::RandomLoss,
                        ..
                    }
                )
            })
            .count() as f64;
        let sigma = (n as f64 * p * (1.0 - p)).sqrt();
        assert!(
            (lost - n as f64 * p).abs() < 3.0 * sigma,
            "p={p}: {lost} lost of {n}"
        );
    }
}

#[test]
fn gilbert_elliott_makes_bursts_with_the_stationary_loss_rate() {
    let (p, r) = (0.01, 0.25);
    let mut d = Direction::new(
        &dir(&format!(
            "loss = {{ gilbert_elliott = {{ p = {p}, r = {r} }} }}"
        )),
        3,
    );
    let n = 1_000_000;
    let lost: Vec<bool> = (0..n)
        .map(|_| matches!(d.enqueue(0, 100), Verdict::Drop { .. }))
        .collect();
    let rate = lost.iter().filter(|l| **l).count() as f64 / n as f64;
    // Stationary P(bad) = p / (p + r) ≈ 0.0385, lossy in bad: within 5 %
    // relative (the chain's correlation makes the estimate noisier than
    // Bernoulli's; 1e6 samples give ≈ 1.5 % standard error).
    let expect = p / (p + r);
    assert!(
        (rate / expect - 1.0).abs() < 0.05,
        "loss {rate} vs {expect}"
    );
    // Mean burst length 1/r = 4 packets, within 5 %.
    let (mut bursts, mut in_burst, mut len) = (0, false, 0);
    for &l in &lost {
        if l {
            len += 1;
            if !in_burst {
                bursts += 1;
            }
        }
        in_burst = l;
    }
    let mean = len as f64 / bursts as f64;
    assert!((mean / (1.0 / r) - 1.0).abs() < 0.05, "mean burst {mean}");
}

#[test]
fn jitter_without_reordering_never_reorders_and_with_it_does() {
    let text = |reorder: bool| {
        format!("delay = \"10ms\"\njitter = {{ normal = {{ mean = \"20ms\", sd = \"10ms\", floor = \"1ms\" }}, reorder = {reorder} }}")
    };
    let arrivals = |reorder: bool| {
        let mut d = Direction::new(&dir(&text(reorder)), 5);
        (0..100_000u64)
            .map(|i| deliver(d.enqueue(i * MS / 10, 100)).1)
            .collect::<Vec<u64>>()
    };
    let a = arrivals(false);
    assert!(
        a.windows(2).all(|w| w[1] >= w[0]),
        "reorder-free jitter reordered"
    );
    let b = arrivals(true);
    assert!(
        b.windows(2).filter(|w| w[1] < w[0]).count() > 1000,
        "reordering jitter never reordered"
    );
    // Extra delay ~ max(1 ms, N(20 ms, 10 ms)): mean within 2 % of the
    // truncated normal's (≈ 20.1 ms), never below the floor.
    let extra: Vec<f64> = b
        .iter()
        .enumerate()
        .map(|(i, &t)| (t - i as u64 * MS / 10 - 10 * MS) as f64 / 1e6)
        .collect();
    let mean = extra.iter().sum::<f64>() / extra.len() as f64;
    assert!((mean - 20.1).abs() < 0.4, "mean extra delay {mean} ms");
    assert!(extra.iter().all(|&e| e >= 1.0 - 1e-9));
}

#[test]
fn policer_passes_at_most_rate_times_t_plus_bucket() {
    // 4 Mbit/s = 500 kB/s, 30 kB bucket; offered at 20 Mbit/s.
    let mut d = Direction::new(&dir("policer = { rate = \"4mbit\", bucket = \"30kB\" }"), 1);
    let mut passed = 0u64;
    for i in 0..20_000u64 {
        let t = i * 600_000; // 1500 B every 0.6 ms = 20 Mbit/s
        if matches!(d.enqueue(t, 1500), Verdict::Deliver { .. }) {
            passed += 1500;
        }
        let bound = 500_000.0 * t as f64 / 1e9 + 30_000.0 + 1500.0;
        assert!(passed as f64 <= bound, "passed {passed} > {bound} at {t}");
    }
    // And under overload it passes nearly that much (within 2 %).
    let t_end = 20_000.0 * 0.0006;
    let bound = 500_000.0 * t_end + 30_000.0;
    assert!(passed as f64 > 0.98 * bound, "passed {passed} of {bound}");
}

fn throughput_between(d: &mut Direction, from: u64, to: u64) -> f64 {
    // Saturate the link and count bytes whose service ends in [from, to).
    let mut bytes = 0u64;
    let mut t = from;
    while t < to {
        if let Verdict::Deliver { dequeue_ns, .. } = d.enqueue(t, 1500) {
            if dequeue_ns < to {
                bytes += 1500;
            }
        }
        t += 100_000;
    }
    bytes as f64 * 8.0 / ((to - from) as f64 / 1e9)
}

#[test]
fn step_and_square_schedules_deliver_their_rates() {
    let steps = "rate = { steps = [ { at = \"0s\", rate = \"10mbit\" }, { at = \"1s\", rate = \"20mbit\" } ] }\nqueue = { limit = \"100000pkt\" }";
    let mut d = Direction::new(&dir(steps), 1);
    let a = throughput_between(&mut d, 0, 1_000_000_000);
    // Within one packet per second of each segment's rate.
    assert!((a - 10e6).abs() <= 12_000.0, "first step {a}");
    let mut d = Direction::new(&dir(steps), 1);
    let b = throughput_between(&mut d, 1_000_000_000, 2_000_000_000);
    assert!((b - 20e6).abs() <= 12_000.0, "second step {b}");
    let sq = "rate = { square = { low = \"5mbit\", high = \"10mbit\", period = \"2s\" } }\nqueue = { limit = \"100000pkt\" }";
    let mut d = Direction::new(&dir(sq), 1);
    let hi = throughput_between(&mut d, 0, 1_000_000_000);
    let mut d = Direction::new(&dir(sq), 1);
    let lo = throughput_between(&mut d, 1_000_000_000, 2_000_000_000);
    assert!(
        (hi - 10e6).abs() <= 12_000.0 && (lo - 5e6).abs() <= 12_000.0,
        "square {hi} {lo}"
    );
}

#[test]
fn mahimahi_traces_replay_their_opportunities_and_repeat() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("t.trace"), "1\n1\n5\n10\n").unwrap();
    let cfg: DirectionConfig = toml::from_str("rate = { trace = \"t.trace\" }").unwrap();
    let r = cfg.resolve(tmp.path()).unwrap();
    let mut d = Direction::new(&r, 1);
    let dq: Vec<u64> = (0..8).map(|_| deliver(d.enqueue(0, 1500)).0).collect();
    // Two opportunities at 1 ms, then 5 and 10 ms; the trace repeats every 10 ms.
    assert_eq!(dq, [1, 1, 5, 10, 11, 11, 15, 20].map(|m| m * MS));
    // Small packets share an opportunity (byte accounting).
    let mut d = Direction::new(&r, 1);
    let small: Vec<u64> = (0..3).map(|_| deliver(d.enqueue(0, 500)).0).collect();
    assert_eq!(small, [MS, MS, MS]);
    // A bad line is reported with its line number; a missing file by name.
    std::fs::write(tmp.path().join("bad.trace"), "1\n2\nx\n").unwrap();
    let cfg: DirectionConfig = toml::from_str("rate = { trace = \"bad.trace\" }").unwrap();
    let e = cfg.resolve(tmp.path()).unwrap_err().to_string();
    assert!(e.contains("bad.trace:3") && e.contains("`x`"), "{e}");
    let cfg: DirectionConfig = toml::from_str("rate = { trace = \"gone.trace\" }").unwrap();
    assert!(cfg
        .resolve(tmp.path())
        .unwrap_err()
        .to_string()
        .contains("gone.trace"));
}

#[test]
fn codel_drops_a_standing_queue_but_not_a_short_burst() {
    let text = "rate = \"10mbit\"\nqueue = { limit = \"10000pkt\", aqm = \"codel\" }";
    // A short burst: 20 packets at once (24 ms of queue, drained within
    // one 100 ms interval): no drops.
    let mut d = Direction::new(&dir(text), 1);
    for _ in 0..20 {
        assert!(matches!(d.enqueue(0, 1500), Verdict::Deliver { .. }));
    }
    // A standing queue: offered at 12 Mbit/s into 10 Mbit/s for 5 s.
    let mut d = Direction::new(&dir(text), 1);
    let mut drop_times = Vec::new();
    for i in 0..5000u64 {
        let t = i * 1_000_000;
        if let Verdict::Drop {
            reason: DropReason::Codel,
            ..
        } = d.enqueue(t, 1500)
        {
            drop_times.push(t);
        }
    }
    assert!(
        drop_times.len() > 10,
        "CoDel dropped {} packets",
        drop_times.len()
    );
    // No drop before the queue has stayed above target for an interval.
    assert!(drop_times[0] >= 100 * MS, "first drop at {}", drop_times[0]);
    // The control law: drops come faster as the episode goes on (the
    // interval shrinks as 1/√count), so late gaps are shorter than early ones.
    let gaps: Vec<u64> = drop_times.windows(2).map(|w| w[1] - w[0]).collect();
    let early: u64 = gaps[..5].iter().sum::<u64>() / 5;
    let late: u64 = gaps[gaps.len() - 5..].iter().sum::<u64>() / 5;
    assert!(late < early / 2, "gaps early {early} late {late}");
    // Against an unresponsive 20 % overload CoDel cannot hold the target
    // (its drop rate only grows as √count), but the queue stays far below
    // drop-tail's: 5 s × 2 Mbit/s of excess = 833 packets.
    let q = d.queue(5000 * MS);
    assert!(q.packets < 833 / 2, "queue {q:?}");
}

#[test]
fn aggregation_releases_on_interval_boundaries_or_in_counted_groups() {
    let mut d = Direction::new(
        &dir("delay = \"1ms\"\nack_aggregation = { interval = \"20ms\" }"),
        1,
    );
    for i in 0..50u64 {
        let (_, arr) = deliver(d.enqueue(i * MS, 60));
        assert_eq!(arr % (20 * MS), 0);
        assert!(arr >= i * MS + MS);
    }
    let mut d = Direction::new(
        &dir("delay = \"1ms\"\nack_aggregation = { every = 4, max_hold = \"10ms\" }"),
        1,
    );
    let mut out: Vec<Release> = Vec::new();
    for i in 0..4u64 {
        assert!(matches!(d.enqueue(i * MS, 60), Verdict::Held { .. }));
        d.release_due(i * MS, &mut out);
    }
    assert_eq!(out.len(), 4, "a full group is released");
    assert!(out.iter().all(|r| r.arrive_ns == out[0].arrive_ns));
    out.clear();
    d.enqueue(10 * MS, 60);
    d.release_due(15 * MS, &mut out);
    assert!(out.is_empty());
    assert_eq!(d.next_release_ns(), Some(21 * MS));
    d.release_due(21 * MS, &mut out);
    assert_eq!(out.len(), 1, "released by max_hold");
}

#[test]
fn same_seed_same_verdicts_and_different_seed_different_losses() {
    let text = "rate = \"10mbit\"\nloss = { bernoulli = 0.1 }\njitter = { uniform = { min = \"0ms\", max = \"5ms\" } }";
    let run = |seed| {
        let mut d = Direction::new(&dir(text), seed);
        (0..2000u64)
            .map(|i| d.enqueue(i * MS, 1500))
            .collect::<Vec<_>>()
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1), run(2));
}

/// The shorthand `loss = 0.01` / `"1%"` means the same Bernoulli loss as
/// the explicit table.
#[test]
fn loss_shorthand_is_bernoulli() {
    let table = dir("loss = { bernoulli = 0.01 }");
    assert_eq!(dir("loss = 0.01").loss, table.loss);
    assert_eq!(dir("loss = \"1%\"").loss, table.loss);
    assert_eq!(dir("loss = 0").loss, Some(LossConfig::Bernoulli(0.0)));
}

#[test]
fn config_errors_name_the_field_and_what_is_allowed() {
    let cases = [
        ("rate = \"-5mbit\"", "negative"),
        ("rate = \"5 lightyears\"", "Mbit"),
        ("queue = { limit = \"0pkt\" }", "at least one packet"),
        ("loss = { bernoulli = 1.5 }", "outside [0, 1]"),
        ("loss = 1.5", "outside [0, 1]"),
        ("loss = \"150%\"", "1]"),
        ("loss = true", "a probability like 0.01"),
        (
            "loss = { bernoulli = 0.1, gilbert_elliott = { p = 0.1, r = 0.1 } }",
            "exactly one",
        ),
        ("delay = \"5 parsecs\"", "ms"),
        ("colour = \"red\"", "unknown field"),
        (
            "rate = { steps = [ { at = \"1s\", rate = \"1mbit\" } ] }",
            "at = \\\"0s\\\"",
        ),
        (
            "policer = { rate = \"1mbit\", bucket = \"10pkt\" }",
            "expected bytes",
        ),
        ("ack_aggregation = { every = 4 }", "max_hold"),
    ];
    for (text, needle) in cases {
        let e = match toml::from_str::<DirectionConfig>(text) {
            Ok(_) => panic!("accepted {text}"),
            Err(e) => e.to_string(),
        };
        assert!(
            e.contains(needle.replace("\\\"", "\"").as_str()),
            "{text}: {e}"
        );
    }
}

/// Issue 13: a square wave with a tiny period made each packet's service
/// time an integration over a million half-periods (and silently cut it
/// off there). Whole periods are now skipped: the long-run rate is the
/// mean of low and high, and a packet spanning many periods finishes when
/// its bits have been served.
#[test]
fn a_square_wave_with_a_tiny_period_serves_at_its_mean_rate() {
    let sq = "rate = { square = { low = \"5mbit\", high = \"15mbit\", period = \"2ns\" } }\nqueue = { limit = \"100000pkt\" }";
    let mut d = Direction::new(&dir(sq), 1);
    // One 1500-byte packet at a mean of 10 Mbit/s takes 1.2 ms.
    let (dq, _) = deliver(d.enqueue(0, 1500));
    assert!((dq as i64 - 1_200_000).abs() <= 2, "dequeue at {dq}");
    let r = throughput_between(&mut d, 0, 200 * MS);
    assert!((r - 10e6).abs() <= 0.01 * 10e6, "mean rate {r}");
}

/// Issue 13: `queue_delay_ms` held the last departed packet's wait while
/// the queue was empty. The wait a packet offered now would see is the
/// time left to serve the queue, and 0 when it is empty.
#[test]
fn queue_delay_is_the_wait_of_a_packet_offered_now() {
    let mut d = Direction::new(&dir("rate = \"10mbit\""), 1);
    assert_eq!(d.queue_delay_ns(0), 0);
    for _ in 0..10 {
        d.enqueue(0, 1500);
    }
    // Ten packets of 1.2 ms each are ahead of a packet offered at 0.
    assert_eq!(d.queue_delay_ns(0), 12 * MS);
    assert_eq!(d.queue_delay_ns(5 * MS), 7 * MS);
    assert_eq!(d.queue(5 * MS).packets, 6);
    // Everything has left by 12 ms: nothing queued, no wait.
    assert_eq!(d.queue_delay_ns(12 * MS), 0);
    assert_eq!(d.queue_delay_ns(20 * MS), 0);
    assert_eq!(d.queue(20 * MS).packets, 0);
}

/// Issue 13: trace timestamps past 2^64 ns overflowed; traces are bounded.
#[test]
fn trace_timestamps_that_overflow_are_errors() {
    let dir_ = tempfile::tempdir().unwrap();
    let p = dir_.path().join("t.trace");
    std::fs::write(&p, "1\n18446744073709551\n").unwrap();
    let e = link::config::load_trace(&p).unwrap_err().to_string();
    assert!(e.contains("too large") && e.contains("limit"), "{e}");
}
