//! ECN in the link model: CoDel and the step marker mark ECN-capable
//! packets CE where they would drop them (RFC 3168 §5, RFC 8289 §5), drop
//! the others, and a full queue drops everything. Expected outcomes are
//! computed here from the path's rate and the packets offered, not read
//! from the model.

use link::{Direction, DirectionConfig, DropReason, Ecn, QueueConfig, Verdict};
use std::path::Path;

const MS: u64 = 1_000_000;

fn direction(text: &str) -> Direction {
    let cfg: DirectionConfig = toml::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    Direction::new(&cfg.resolve(Path::new(".")).unwrap(), 1)
}

fn queue(text: &str) -> Result<QueueConfig, String> {
    toml::from_str::<DirectionConfig>(&format!("queue = {{ {text} }}"))
        .map(|c| c.queue.expect("queue given"))
        .map_err(|e| e.to_string())
}

/// Serialisation time of `bytes` at `bps`, ns, rounded up (a packet's
/// service never ends before its last bit is out).
fn ser_ns(bytes: u64, bps: f64) -> u64 {
    (bytes as f64 * 8.0 / bps * 1e9).ceil() as u64
}

/// (dequeue_ns, ce) of a delivered packet.
fn delivered(v: Verdict) -> Option<(u64, bool)> {
    match v {
        Verdict::Deliver { dequeue_ns, ce, .. } | Verdict::Held { dequeue_ns, ce, .. } => {
            Some((dequeue_ns, ce))
        }
        Verdict::Drop { .. } => None,
        Verdict::Queued { .. } => panic!("CoDel and the step decide on arrival"),
    }
}

/// A 20 % overload of a CoDel-ECN queue, ECT(0) and Not-ECT packets
/// alternating: CoDel's decisions fall on both kinds; the ECT ones are
/// marked and delivered, the Not-ECT ones dropped, none of either kind is
/// dropped for any other reason, no Not-ECT packet is marked, and the
/// counters agree with the verdicts.
#[test]
fn codel_ecn_marks_ect_packets_and_drops_not_ect_in_the_same_overload() {
    let mut d = direction(
        "rate = \"10mbit\"\nqueue = { limit = \"10000pkt\", aqm = \"codel\", ecn = true }",
    );
    let (mut marked, mut dropped, mut ect_delivered) = (0u64, 0u64, 0u64);
    for i in 0..5000u64 {
        // 1500 B every 1 ms: 12 Mbit/s.
        let cp = if i % 2 == 0 { Ecn::Ect0 } else { Ecn::NotEct };
        match d.enqueue_with(i * MS, 1500, cp) {
            Verdict::Deliver { ce, .. } => {
                if cp == Ecn::NotEct {
                    assert!(!ce, "packet {i}: a Not-ECT packet was marked");
                } else {
                    ect_delivered += 1;
                    marked += u64::from(ce);
                }
            }
            Verdict::Drop { reason, .. } => {
                assert_eq!(cp, Ecn::NotEct, "packet {i}: an ECT packet dropped");
                assert_eq!(reason, DropReason::Codel, "packet {i}");
                dropped += 1;
            }
            v => panic!("{v:?}"),
        }
    }
    assert!(marked > 10, "{marked} marks");
    assert!(dropped > 10, "{dropped} drops");
    assert_eq!(ect_delivered, 2500);
    let st = d.stats();
    assert_eq!(st.marked_ce, marked);
    assert_eq!(st.dropped_codel, dropped);
    assert_eq!(st.dropped_total(), dropped);
    assert_eq!(st.delivered, 5000 - dropped);
}

/// With every packet ECT(0), CoDel's decisions become marks and every
/// packet stays in the queue, so the head-of-line times are known in
/// advance: packet i (1500 B every 1 ms into 10 Mbit/s) starts service at
/// max(its arrival, the previous packet's end). The marks must follow
/// RFC 8289's schedule from those times alone: the first mark on the
/// first packet to reach the head an interval after the sojourn first
/// reached the target, then the k-th on the first packet to reach the
/// head at or after drop_next, where drop_next grows by interval/√k
/// (the control law advancing on each mark as it would on a drop).
#[test]
fn codel_ecn_marks_follow_the_control_law() {
    let (target, interval) = (5 * MS, 100 * MS);
    let mut d = direction(
        "rate = \"10mbit\"\nqueue = { limit = \"10000pkt\", aqm = \"codel\", ecn = true }",
    );
    let service = ser_ns(1500, 10e6);
    let n = 3000u64;
    let (mut heads, mut sojourns, mut marks) = (Vec::new(), Vec::new(), Vec::new());
    let mut free = 0u64;
    for i in 0..n {
        let arrival = i * MS;
        let head = arrival.max(free);
        free = head + service;
        heads.push(head);
        sojourns.push(head - arrival);
        let (dq, ce) = delivered(d.enqueue_with(arrival, 1500, Ecn::Ect0))
            .unwrap_or_else(|| panic!("packet {i} dropped"));
        assert_eq!(dq, free, "packet {i}: the FIFO schedule differs");
        if ce {
            marks.push(head);
        }
    }
    // The queue only grows (unresponsive 12 Mbit/s), so the sojourn stays
    // at or above the target once there: one marking episode.
    let first_above = sojourns.iter().position(|&s| s >= target).unwrap();
    assert!(sojourns[first_above..].iter().all(|&s| s >= target));
    let first_head_from = |t: u64| heads[heads.partition_point(|&h| h < t)];
    assert_eq!(marks[0], first_head_from(heads[first_above] + interval));
    assert!(marks.len() > 20, "{} marks", marks.len());
    let mut drop_next = marks[0] + interval; // count = 1
    for (k, &m) in marks.iter().enumerate().skip(1) {
        assert_eq!(m, first_head_from(drop_next), "mark {}", k + 1);
        // The mark made it count k+1; the next is interval/√(k+1) later.
        drop_next += (interval as f64 / ((k + 1) as f64).sqrt()) as u64;
    }
    // And the marks get closer together, as interval/√count does.
    let gaps: Vec<u64> = marks.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps[gaps.len() - 1] < gaps[0] / 3, "{gaps:?}");
    assert_eq!(d.stats().marked_ce, marks.len() as u64);
}

/// A deterministic mixed offer (sizes, gaps, bursts and a quarter of the
/// packets Not-ECT) at 12 Mbit/s, where one 1500-byte packet takes
/// exactly 1 ms, the threshold: the model marks exactly the ECT packets
/// whose sojourn (arrival to start of service, computed here) exceeds the
/// threshold, drops exactly the Not-ECT ones above it, and a sojourn of
/// exactly the threshold is not above it.
#[test]
fn step_marks_exactly_the_packets_whose_sojourn_exceeds_the_threshold() {
    let rate = 12e6;
    let threshold = MS;
    let mut d = direction(
        "rate = \"12mbit\"\nqueue = { limit = \"100000pkt\", aqm = \"step\", threshold = \"1ms\", ecn = true }",
    );
    let mut free = 0u64;
    let mut t = 0u64;
    let mut x = 12345u64;
    let (mut marks, mut drops, mut at_threshold) = (0u64, 0u64, 0u64);
    for i in 0..20_000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = x >> 33;
        // Bursts: most packets back to back, some after a pause.
        t += match r % 10 {
            0..=5 => 0,
            6..=8 => (r >> 8) % 1_500_000,
            _ => 5 * MS,
        };
        let bytes = if r % 3 == 0 {
            100 + (r >> 4) % 1400
        } else {
            1500
        };
        let cp = match (r >> 12) % 4 {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            _ => Ecn::Ect0,
        };
        let head = t.max(free);
        let sojourn = head - t;
        at_threshold += u64::from(sojourn == threshold);
        let above = sojourn > threshold;
        let v = d.enqueue_with(t, bytes as u32, cp);
        match (above, cp.is_ect()) {
            (true, false) => {
                assert!(
                    matches!(
                        v,
                        Verdict::Drop {
                            reason: DropReason::Step,
                            ..
                        }
                    ),
                    "packet {i}: sojourn {sojourn}, Not-ECT: {v:?}"
                );
                drops += 1;
            }
            (above, true) => {
                let (dq, ce) = delivered(v).unwrap_or_else(|| panic!("packet {i}: {v:?}"));
                free = head + ser_ns(bytes, rate);
                assert_eq!(dq, free, "packet {i}");
                assert_eq!(ce, above, "packet {i}: sojourn {sojourn} ns");
                marks += u64::from(ce);
            }
            (false, false) => {
                let (dq, ce) = delivered(v).unwrap_or_else(|| panic!("packet {i}: {v:?}"));
                free = head + ser_ns(bytes, rate);
                assert_eq!(dq, free, "packet {i}");
                assert!(!ce, "packet {i}: Not-ECT marked");
            }
        }
    }
    assert!(marks > 1000 && drops > 100, "{marks} marks, {drops} drops");
    assert!(
        at_threshold > 10,
        "only {at_threshold} sojourns at the threshold"
    );
    let st = d.stats();
    assert_eq!((st.marked_ce, st.dropped_step), (marks, drops));
    assert_eq!(st.dropped_total(), drops);
}

/// Without `ecn`, the step drops every packet above the threshold, ECT or
/// not: the step is an AQM of its own, and ECN only turns its drops of
/// ECN-capable packets into marks.
#[test]
fn step_without_ecn_drops_ect_packets_too() {
    let mut d = direction("rate = \"10mbit\"\nqueue = { limit = \"100pkt\", aqm = \"step\" }");
    // At 10 Mbit/s each 1500-byte packet takes 1.2 ms: the first starts at
    // once, the second waits 1.2 ms (> 1 ms, the default) and is dropped,
    // and so is every later one of the burst (the link is still busy with
    // the first until 1.2 ms).
    let v: Vec<Verdict> = (0..5).map(|_| d.enqueue_with(0, 1500, Ecn::Ect0)).collect();
    assert!(matches!(v[0], Verdict::Deliver { ce: false, .. }));
    for x in &v[1..] {
        assert!(
            matches!(
                x,
                Verdict::Drop {
                    reason: DropReason::Step,
                    ..
                }
            ),
            "{x:?}"
        );
    }
    assert_eq!(d.stats().marked_ce, 0);
    assert_eq!(d.stats().dropped_step, 4);
}

/// A full queue drops whatever the codepoint: overflow is not an AQM
/// decision, and marking cannot make room.
#[test]
fn a_full_queue_drops_even_ect_packets() {
    for aqm in ["aqm = \"step\"", "aqm = \"codel\""] {
        let mut d = direction(&format!(
            "rate = \"10mbit\"\nqueue = {{ limit = \"4pkt\", {aqm}, ecn = true }}"
        ));
        let v: Vec<Verdict> = (0..10)
            .map(|_| d.enqueue_with(0, 1500, Ecn::Ect0))
            .collect();
        assert!(v[..4].iter().all(|v| matches!(v, Verdict::Deliver { .. })));
        for x in &v[4..] {
            assert!(
                matches!(
                    x,
                    Verdict::Drop {
                        reason: DropReason::QueueFull,
                        ..
                    }
                ),
                "{aqm}: {x:?}"
            );
        }
        assert_eq!(d.stats().dropped_queue, 6, "{aqm}");
        if aqm.contains("step") {
            // Waits of 1.2, 2.4 and 3.6 ms are above 1 ms: three marks.
            let ce: Vec<bool> = v[..4].iter().map(|v| delivered(*v).unwrap().1).collect();
            assert_eq!(ce, [false, true, true, true]);
            assert_eq!(d.stats().marked_ce, 3);
        }
    }
}

/// A packet that arrives CE leaves CE, on any queue and through count
/// aggregation's hold, and is not counted as marked here; ECT and Not-ECT
/// packets on a queue without AQM leave as they came.
#[test]
fn an_arriving_ce_packet_stays_ce_and_is_not_counted() {
    for text in [
        "rate = \"10mbit\"",
        "rate = \"10mbit\"\nqueue = { limit = \"100pkt\", aqm = \"step\", ecn = true }",
        "rate = \"10mbit\"\nqueue = { limit = \"100pkt\", aqm = \"codel\", ecn = true }",
        "ack_aggregation = { every = 2, max_hold = \"10ms\" }",
        "ack_aggregation = { interval = \"10ms\" }",
    ] {
        let mut d = direction(text);
        for i in 0..10 {
            let v = d.enqueue_with(0, 1500, Ecn::Ce);
            assert_eq!(delivered(v).map(|x| x.1), Some(true), "{text}: packet {i}");
        }
        assert_eq!(d.stats().marked_ce, 0, "{text}");
    }
    let mut d = direction("rate = \"10mbit\"");
    for cp in [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1] {
        for _ in 0..50 {
            assert_eq!(
                delivered(d.enqueue_with(0, 1500, cp)).map(|x| x.1),
                Some(false)
            );
        }
    }
    assert_eq!(d.stats().marked_ce, 0);
}

/// `enqueue` is `enqueue_with` Not-ECT: the same verdicts, packet for
/// packet, on a marking queue.
#[test]
fn enqueue_is_enqueue_with_not_ect() {
    let text =
        "rate = \"10mbit\"\nloss = 0.05\nqueue = { limit = \"50pkt\", aqm = \"step\", ecn = true }";
    let (mut a, mut b) = (direction(text), direction(text));
    for i in 0..5000u64 {
        let t = i * MS;
        assert_eq!(a.enqueue(t, 1500), b.enqueue_with(t, 1500, Ecn::NotEct));
    }
    assert_eq!(a.stats(), b.stats());
    assert!(a.stats().dropped_step > 0);
}

#[test]
fn queue_keys_parse_to_their_meaning() {
    let q = queue("limit = \"10pkt\", aqm = \"step\", ecn = true").unwrap();
    assert_eq!((q.codel, q.step_ns, q.ecn), (None, Some(MS), true));
    let q = queue("limit = \"10pkt\", aqm = \"step\", threshold = \"250us\"").unwrap();
    assert_eq!((q.step_ns, q.ecn), (Some(250_000), false));
    let q = queue("limit = \"10pkt\", aqm = \"codel\", ecn = true").unwrap();
    assert_eq!(
        (q.codel, q.step_ns, q.ecn),
        (Some((5 * MS, 100 * MS)), None, true)
    );
    let q = queue("limit = \"10pkt\", ecn = false").unwrap();
    assert_eq!(q, QueueConfig::drop_tail(link::units::Size::Packets(10)));
}

/// Every wrong combination is an error that says what is wrong, where,
/// and what is allowed.
#[test]
fn bad_queue_combinations_are_errors_that_say_what_is_allowed() {
    let cases: [(&str, &[&str]); 9] = [
        (
            "limit = \"10pkt\", ecn = true",
            &[
                "`ecn = true` needs an AQM",
                "aqm = \"codel\"",
                "aqm = \"step\"",
            ],
        ),
        (
            "limit = \"10pkt\", aqm = \"none\", ecn = true",
            &["`ecn = true` needs an AQM"],
        ),
        (
            "limit = \"10pkt\", aqm = \"codel\", threshold = \"1ms\"",
            &[
                "`threshold` applies only with `aqm = \"step\"`",
                "CoDel takes `target`",
            ],
        ),
        (
            "limit = \"10pkt\", threshold = \"1ms\"",
            &["`threshold` applies only with `aqm = \"step\"`"],
        ),
        (
            "limit = \"10pkt\", aqm = \"step\", target = \"5ms\"",
            &[
                "`target` and `interval` apply only with `aqm = \"codel\"`",
                "step marker takes `threshold`",
            ],
        ),
        (
            "limit = \"10pkt\", aqm = \"step\", interval = \"100ms\", ecn = true",
            &["apply only with `aqm = \"codel\"`"],
        ),
        (
            "limit = \"10pkt\", aqm = \"step\", threshold = \"0ms\"",
            &["`threshold` must be positive"],
        ),
        (
            "limit = \"10pkt\", aqm = \"red\"",
            &["unknown variant `red`", "`none`, `codel`, `step`"],
        ),
        (
            "limit = \"10pkt\", aqm = \"step\", ecn = \"yes\"",
            &["invalid type"],
        ),
    ];
    for (text, needles) in cases {
        let e = match queue(text) {
            Ok(q) => panic!("accepted {text}: {q:?}"),
            Err(e) => e,
        };
        // toml names the place: the `queue` key, with line and column.
        assert!(e.contains("queue") && e.contains("line 1"), "{text}: {e}");
        for n in needles {
            assert!(e.contains(n), "{text}: `{n}` not in: {e}");
        }
    }
}
