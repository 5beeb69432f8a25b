//! The dequeue-time disciplines against their RFCs' rules: FQ-CoDel
//! (RFC 8290), PIE (RFC 8033) and DualPI2 (RFC 9332).
//!
//! Expected values are computed here from the RFCs' formulas and from
//! serialisation times worked out by hand (1500 B at 10 Mbit/s = 1.2 ms),
//! never read back from the code under test.

use link::{fq_codel_bucket, Direction, DirectionConfig, DropReason, Ecn, Release, Verdict};
use std::collections::HashMap;
use std::path::Path;

const MS: u64 = 1_000_000;

fn direction(rate: &str, queue: &str) -> Direction {
    let text = format!("rate = \"{rate}\"\nqueue = {{ {queue} }}\n");
    let cfg: DirectionConfig = toml::from_str(&text).unwrap();
    Direction::new(&cfg.resolve(Path::new(".")).unwrap(), 7)
}

/// What became of one offered packet.
#[derive(Clone, Copy, Debug)]
struct Fate {
    flow: u64,
    ecn: Ecn,
    offered_ns: u64,
    /// Sent: (dequeue_ns, ce); dropped: the reason and when.
    sent: Option<(u64, bool)>,
    dropped: Option<(DropReason, u64)>,
}

/// Offers `arrivals` (time, bytes, codepoint, flow; in time order), lets
/// the dequeue clock run to `end_ns`, and returns each packet's fate by
/// id. `probe` is called with each time the clock is advanced to.
fn run(
    d: &mut Direction,
    arrivals: &[(u64, u32, Ecn, u64)],
    end_ns: u64,
    mut probe: impl FnMut(u64, &Direction),
) -> HashMap<u64, Fate> {
    let mut fates = HashMap::new();
    let mut out: Vec<Release> = Vec::new();
    let apply = |out: &mut Vec<Release>, fates: &mut HashMap<u64, Fate>| {
        for r in out.drain(..) {
            let f: &mut Fate = fates.get_mut(&r.id).expect("released packets were offered");
            match r.drop {
                Some(reason) => f.dropped = Some((reason, r.dequeue_ns)),
                None => f.sent = Some((r.dequeue_ns, r.ce)),
            }
        }
    };
    for &(t, bytes, ecn, flow) in arrivals {
        // Every dequeue decision due before this arrival, one at a time.
        while let Some(next) = d.next_release_ns().filter(|&n| n < t) {
            d.release_due(next, &mut out);
            probe(next, d);
            apply(&mut out, &mut fates);
        }
        let v = d.enqueue_flow(t, bytes, ecn, flow);
        let mut fate = Fate {
            flow,
            ecn,
            offered_ns: t,
            sent: None,
            dropped: None,
        };
        let id = match v {
            Verdict::Queued { id, .. } => id,
            Verdict::Drop { id, reason } => {
                fate.dropped = Some((reason, t));
                id
            }
            other => panic!("a dequeue-time discipline answered {other:?}"),
        };
        fates.insert(id, fate);
        d.release_due(t, &mut out);
        probe(t, d);
        apply(&mut out, &mut fates);
    }
    while let Some(next) = d.next_release_ns().filter(|&n| n <= end_ns) {
        d.release_due(next, &mut out);
        probe(next, d);
        apply(&mut out, &mut fates);
    }
    fates
}

fn sorted(fates: &HashMap<u64, Fate>) -> Vec<(u64, Fate)> {
    let mut v: Vec<(u64, Fate)> = fates.iter().map(|(&i, &f)| (i, f)).collect();
    v.sort_by_key(|x| x.0);
    v
}

/// RFC 8290 §4.2: a flow that arrives to an empty queue goes on the new
/// list and is served before the old (bulk) flows: its packet leaves
/// right after the one in service, not behind the bulk flow's backlog.
#[test]
fn fq_codel_serves_a_sparse_flow_before_the_bulk_backlog() {
    assert_ne!(fq_codel_bucket(1, 1024), fq_codel_bucket(2, 1024));
    let mut d = direction("10mbit", "limit = \"1000pkt\", aqm = \"fq_codel\"");
    let mut arrivals: Vec<(u64, u32, Ecn, u64)> =
        (0..50).map(|_| (0, 1500, Ecn::NotEct, 1)).collect();
    arrivals.push((10 * MS, 1500, Ecn::NotEct, 2));
    let fates = run(&mut d, &arrivals, 200 * MS, |_, _| {});
    // Bulk packets start at 0, 1.2, 2.4, ... ms; the sparse one arrives
    // at 10 ms, while the ninth (9.6–10.8 ms) is in service, so it starts
    // at 10.8 ms and ends at 12.0 ms. In a FIFO it would end at 61.2 ms.
    let sparse = fates.values().find(|f| f.flow == 2).unwrap();
    assert_eq!(sparse.sent, Some((12 * MS, false)));
    // The bulk flow keeps its order and loses nothing (60 ms of backlog is
    // less than CoDel's 100 ms interval above target).
    let bulk: Vec<u64> = sorted(&fates)
        .iter()
        .filter(|(_, f)| f.flow == 1)
        .map(|(_, f)| f.sent.expect("no bulk drops").0)
        .collect();
    assert_eq!(bulk.len(), 50);
    assert!(bulk.windows(2).all(|w| w[0] < w[1]));
    // Its tenth packet waits for the sparse one: 12.0 + 1.2 ms.
    assert_eq!(bulk[9], 13_200_000);
}

/// RFC 8290 §4.2 deficit round robin: two backlogged flows get the same
/// bytes, whatever their packet sizes, within one quantum plus one packet
/// at every instant (the DRR bound), and within 1 % over the whole period.
#[test]
fn fq_codel_drr_gives_backlogged_flows_equal_bytes() {
    assert_ne!(fq_codel_bucket(10, 1024), fq_codel_bucket(11, 1024));
    // CoDel pushed out of the way so only the scheduler decides.
    let mut d = direction(
        "10mbit",
        "limit = \"10000pkt\", aqm = \"fq_codel\", target = \"10s\", interval = \"100s\"",
    );
    let mut arrivals: Vec<(u64, u32, Ecn, u64)> =
        (0..200).map(|_| (0, 1500, Ecn::NotEct, 10)).collect();
    arrivals.extend((0..1000).map(|_| (0, 300, Ecn::NotEct, 11)));
    let fates = run(&mut d, &arrivals, 10_000 * MS, |_, _| {});
    let mut sends: Vec<(u64, u64, u32)> = fates
        .values()
        .map(|f| {
            let bytes = if f.flow == 10 { 1500 } else { 300 };
            (f.sent.expect("no drops").0, f.flow, bytes)
        })
        .collect();
    sends.sort();
    // Both flows hold 300 kB; compare while both are backlogged.
    let (mut a, mut b) = (0i64, 0i64);
    let mut worst = 0i64;
    for &(_, flow, bytes) in &sends {
        if flow == 10 {
            a += i64::from(bytes);
        } else {
            b += i64::from(bytes);
        }
        if a >= 300_000 || b >= 300_000 {
            break;
        }
        worst = worst.max((a - b).abs());
    }
    assert!(worst <= 1514 + 1500, "byte gap {worst}");
    assert!(a > 280_000 && b > 280_000, "{a} {b}");
}

/// RFC 8290 §4.3 / §5: each queue has its own CoDel, so a flow that
/// overloads the link is dropped while a sparse flow beside it keeps a
/// near-empty queue and loses nothing.
#[test]
fn fq_codel_per_queue_codel_drops_only_the_fat_flow() {
    assert_ne!(fq_codel_bucket(1, 1024), fq_codel_bucket(2, 1024));
    let mut d = direction("10mbit", "limit = \"10000pkt\", aqm = \"fq_codel\"");
    let mut arrivals: Vec<(u64, u32, Ecn, u64)> = Vec::new();
    for i in 0..2000u64 {
        // The fat flow: 1500 B every 0.6 ms, twice the link rate.
        arrivals.push((i * 600_000, 1500, Ecn::NotEct, 1));
        // The sparse one: 1500 B every 12 ms (a tenth of it), offset.
        if i % 20 == 0 {
            arrivals.push((i * 600_000 + 300_000, 1500, Ecn::NotEct, 2));
        }
    }
    arrivals.sort_by_key(|a| a.0);
    let fates = run(&mut d, &arrivals, 5_000 * MS, |_, _| {});
    let fat_drops = fates
        .values()
        .filter(|f| f.flow == 1 && f.dropped.is_some_and(|d| d.0 == DropReason::FqCodel))
        .count();
    let sparse: Vec<&Fate> = fates.values().filter(|f| f.flow == 2).collect();
    assert!(fat_drops > 50, "fat flow drops {fat_drops}");
    assert_eq!(sparse.len(), 100);
    for f in &sparse {
        let (dq, _) = f.sent.expect("the sparse flow loses nothing");
        // At most the packet in service ahead of it, one more of the fat
        // flow's while that is still on the new list too (its first
        // quantum), then its own 1.2 ms.
        assert!(
            dq - f.offered_ns <= 3_600_000,
            "sojourn {}",
            dq - f.offered_ns
        );
    }
    assert_eq!(d.stats().dropped_fq_codel as usize, fat_drops);
}

/// RFC 8290 §4.1: when the queue limit is reached, the packet dropped is
/// the head of the queue with the most bytes, not the arriving one.
#[test]
fn fq_codel_overflow_drops_from_the_fattest_queue() {
    let keys = [1u64, 2, 3];
    for (i, a) in keys.iter().enumerate() {
        for b in &keys[i + 1..] {
            assert_ne!(fq_codel_bucket(*a, 1024), fq_codel_bucket(*b, 1024));
        }
    }
    let mut d = direction("1mbit", "limit = \"10pkt\", aqm = \"fq_codel\"");
    let mut arrivals: Vec<(u64, u32, Ecn, u64)> = Vec::new();
    // Flow 1: 8 packets (the first goes straight into service), flow 2:
    // 2, so 9 wait; flow 3's two packets make 10 then 11 waiting.
    arrivals.extend((0..8).map(|_| (0, 1500, Ecn::NotEct, 1)));
    arrivals.extend((0..2).map(|_| (0, 1500, Ecn::NotEct, 2)));
    arrivals.extend((0..2).map(|_| (0, 1500, Ecn::NotEct, 3)));
    let mut out = Vec::new();
    let mut ids = Vec::new();
    for &(t, b, e, f) in &arrivals {
        match d.enqueue_flow(t, b, e, f) {
            Verdict::Queued { id, .. } => ids.push(id),
            v => panic!("{v:?}"),
        }
    }
    d.release_due(0, &mut out);
    let drops: Vec<&Release> = out.iter().filter(|r| r.drop.is_some()).collect();
    assert_eq!(drops.len(), 1, "{out:?}");
    // Flow 1's second packet: the head of the fattest queue (its first is
    // in service).
    assert_eq!(drops[0].id, ids[1]);
    assert_eq!(drops[0].drop, Some(DropReason::QueueFull));
    assert_eq!(d.stats().dropped_queue, 1);
    assert_eq!(d.queue(0).packets, 11, "10 waiting and 1 in service");
}

/// FQ-CoDel with `ecn = true` marks an ECN-capable flow's packets where
/// its queue's CoDel would drop them (RFC 8290 §4.1 / RFC 3168).
#[test]
fn fq_codel_marks_ecn_capable_packets_instead_of_dropping() {
    let mut d = direction(
        "10mbit",
        "limit = \"10000pkt\", aqm = \"fq_codel\", ecn = true",
    );
    let arrivals: Vec<(u64, u32, Ecn, u64)> = (0..2000u64)
        .map(|i| (i * 600_000, 1500, Ecn::Ect0, 1))
        .collect();
    let fates = run(&mut d, &arrivals, 5_000 * MS, |_, _| {});
    let marked = fates
        .values()
        .filter(|f| f.sent.is_some_and(|s| s.1))
        .count();
    assert!(marked > 10, "marked {marked}");
    assert!(fates
        .values()
        .all(|f| f.dropped.is_none_or(|d| d.0 == DropReason::QueueFull)));
    assert_eq!(d.stats().dropped_fq_codel, 0);
    assert_eq!(d.stats().marked_ce as usize, marked);
}

/// RFC 8033 §4.2 (with §5.1's scaling): every T_UPDATE,
/// p = alpha (qdelay − QDELAY_REF) + beta (qdelay − qdelay_old), scaled
/// down by the current drop_prob's magnitude, capped at 0.02 above 10 %,
/// and added to drop_prob. A burst of 200 packets at t = 0 drains at
/// 1.2 ms each, so at the update at T the last packet dequeued started at
/// the last multiple of 1.2 ms before T, and waited that long.
#[test]
fn pie_drop_probability_follows_rfc_8033_update() {
    let mut d = direction("10mbit", "limit = \"1000pkt\", aqm = \"pie\"");
    let mut out = Vec::new();
    for _ in 0..200 {
        assert!(matches!(
            d.enqueue_flow(0, 1500, Ecn::NotEct, 0),
            Verdict::Queued { .. }
        ));
    }
    let (alpha, beta, qref) = (0.125, 1.25, 0.015);
    let (mut p, mut old) = (0.0f64, 0.0f64);
    let mut last = 0.0;
    for n in 1..=15u64 {
        let t = n * 15 * MS;
        d.release_due(t, &mut out);
        // Last dequeue start strictly before T (an update at T runs first).
        let k = t.div_ceil(1_200_000) - 1;
        let cur = (k * 1_200_000) as f64 / 1e9;
        let mut adj = alpha * (cur - qref) + beta * (cur - old);
        adj /= if p < 1e-6 {
            2048.0
        } else if p < 1e-5 {
            512.0
        } else if p < 1e-4 {
            128.0
        } else if p < 1e-3 {
            32.0
        } else if p < 1e-2 {
            8.0
        } else if p < 0.1 {
            2.0
        } else {
            1.0
        };
        if p >= 0.1 && adj > 0.02 {
            adj = 0.02;
        }
        p = (p + adj).clamp(0.0, 1.0);
        old = cur;
        let got = d.aqm_probability().unwrap();
        assert!((got - p).abs() < 1e-12, "update {n}: {got} against {p}");
        assert!(got > last, "delay above target and rising: p must rise");
        last = got;
    }
    // By 225 ms of a 240 ms queue the probability is well above 10 %.
    assert!(last > 0.1, "{last}");
}

/// RFC 8033 §4.4: with the burst allowance (150 ms) unused, PIE lets the
/// first 150 ms of a burst through whatever drop_prob says; only after it
/// has run out does it drop early.
#[test]
fn pie_burst_allowance_lets_the_first_150_ms_through() {
    let mut d = direction("10mbit", "limit = \"100000pkt\", aqm = \"pie\"");
    // Twice the link rate for 1 s.
    let arrivals: Vec<(u64, u32, Ecn, u64)> = (0..1666u64)
        .map(|i| (i * 600_000, 1500, Ecn::NotEct, 0))
        .collect();
    let mut p_at_150 = 0.0;
    let fates = run(&mut d, &arrivals, 3_000 * MS, |t, d| {
        if t < 150 * MS {
            p_at_150 = d.aqm_probability().unwrap();
        }
    });
    let early: Vec<u64> = fates
        .values()
        .filter_map(|f| f.dropped.filter(|d| d.0 == DropReason::Pie).map(|d| d.1))
        .collect();
    assert!(
        p_at_150 > 0.0,
        "drop_prob was already positive in the burst"
    );
    assert!(!early.is_empty(), "PIE drops once the allowance is spent");
    let first = *early.iter().min().unwrap();
    assert!(first >= 150 * MS, "first early drop at {first} ns");
}

/// RFC 9332 §2.5.1.1 and A.2: ECT(1) packets go to the L4S queue, which
/// the time-shifted FIFO serves ahead of a Classic backlog, and which
/// marks at a 1 ms sojourn step.
#[test]
fn dualpi2_classifies_ect1_to_the_l4s_queue_and_steps_at_1ms() {
    let mut d = direction("10mbit", "limit = \"1000pkt\", aqm = \"dualpi2\"");
    let mut arrivals: Vec<(u64, u32, Ecn, u64)> = (0..5).map(|_| (0, 1500, Ecn::Ect1, 0)).collect();
    let fates = run(&mut d, &arrivals, 100 * MS, |_, _| {});
    let ce: Vec<bool> = sorted(&fates)
        .iter()
        .map(|(_, f)| f.sent.unwrap().1)
        .collect();
    // Sojourns 0, 1.2, 2.4, 3.6, 4.8 ms: all but the first reach 1 ms.
    assert_eq!(ce, [false, true, true, true, true]);

    // Ten Classic packets at 0; an ECT(1) packet at 1 ms goes next (at
    // 1.2 ms, ending 2.4 ms), ahead of nine waiting Classic packets.
    let mut d = direction("10mbit", "limit = \"1000pkt\", aqm = \"dualpi2\"");
    arrivals = (0..10).map(|_| (0, 1500, Ecn::NotEct, 0)).collect();
    arrivals.push((MS, 1500, Ecn::Ect1, 0));
    let fates = run(&mut d, &arrivals, 100 * MS, |_, _| {});
    let l4s = fates.values().find(|f| f.ecn == Ecn::Ect1).unwrap();
    assert_eq!(l4s.sent, Some((2_400_000, false)));
    let classic_last = fates
        .values()
        .filter(|f| f.ecn == Ecn::NotEct)
        .map(|f| f.sent.unwrap().0)
        .max()
        .unwrap();
    assert_eq!(classic_last, 13_200_000);
}

/// RFC 9332 §2.4: the L4S queue is marked with p_CL = k·p' (recur()'s
/// deterministic marking, so the count is within one of the sum), and
/// Classic packets that are not ECN-capable are dropped, never marked,
/// with p_C = p'^2 (random: within 4 standard deviations); ECT(0) ones
/// are marked instead with `ecn = true`.
#[test]
fn dualpi2_couples_l4s_marking_to_k_p_and_classic_to_p_squared() {
    let mut d = direction(
        "100mbit",
        "limit = \"100000pkt\", aqm = \"dualpi2\", ecn = true",
    );
    let mut arrivals: Vec<(u64, u32, Ecn, u64)> = Vec::new();
    // Unresponsive Classic traffic at 104 Mbit/s (1500 B every 0.115 ms),
    // a quarter ECT(0), the rest Not-ECT; a sparse L4S flow, 100 B every 10 ms at
    // 5 ms past each update boundary (so p' is known when it is served,
    // and its sojourn stays far below the 1 ms step).
    let end = 3_000 * MS;
    for i in 0..(end / 115_000) {
        let cp = if i % 4 == 0 { Ecn::Ect0 } else { Ecn::NotEct };
        arrivals.push((i * 115_000, 1500, cp, 1));
    }
    for n in 0..(end / (16 * MS)) {
        arrivals.push((n * 16 * MS + 5 * MS + 50_000, 100, Ecn::Ect1, 2));
    }
    arrivals.sort_by_key(|a| a.0);
    // p' after each update (updates at 16 ms multiples).
    let mut p_by_update: HashMap<u64, f64> = HashMap::new();
    let mut p_at_arrival: HashMap<u64, f64> = HashMap::new();
    let fates = run(&mut d, &arrivals, end + 100 * MS, |t, d| {
        let p = d.aqm_probability().unwrap();
        p_by_update.insert(t / (16 * MS), p);
        p_at_arrival.insert(t, p);
    });
    let p_at = |t: u64| -> f64 {
        let u = t / (16 * MS);
        *p_by_update
            .get(&u)
            .expect("the clock ran in every update period")
    };
    // L4S: marks within one of sum(min(k p', 1)).
    let l4s: Vec<&Fate> = fates.values().filter(|f| f.flow == 2).collect();
    let mut expect = 0.0;
    let mut marks = 0;
    for f in &l4s {
        let (dq, ce) = f.sent.expect("the L4S flow is never dropped");
        // Its sojourn until its own 8 µs serialisation started.
        if dq - 8_000 - f.offered_ns >= MS {
            // p_L = max(native, coupled): the step alone marks it.
            assert!(ce, "an L4S packet past the step is marked");
            continue;
        }
        expect += (2.0 * p_at_arrival[&f.offered_ns]).min(1.0);
        marks += usize::from(ce);
    }
    assert!(expect > 20.0, "the coupling was exercised ({expect})");
    assert!(
        (marks as f64 - expect).abs() <= 1.0,
        "{marks} marks against {expect}"
    );
    // Classic Not-ECT: dropped with p'^2, never marked.
    let mut mean = 0.0;
    let mut var = 0.0;
    let mut drops = 0.0;
    for f in fates
        .values()
        .filter(|f| f.flow == 1 && f.ecn == Ecn::NotEct)
    {
        assert!(
            f.sent.is_none_or(|s| !s.1),
            "a Not-ECT packet is never marked"
        );
        let t = match (f.sent, f.dropped) {
            (_, Some((DropReason::DualPi2, t))) => {
                drops += 1.0;
                t
            }
            (_, Some((r, _))) => panic!("unexpected drop {r:?}"),
            // Its dequeue decision came one serialisation (120 µs) before it left.
            (Some((dq, _)), None) => dq - 120_000,
            (None, None) => continue,
        };
        let pc = p_at(t).powi(2);
        mean += pc;
        var += pc * (1.0 - pc);
    }
    assert!(
        mean > 100.0,
        "the Classic drop probability was exercised ({mean})"
    );
    assert!(
        (drops - mean).abs() <= 4.0 * var.sqrt(),
        "{drops} drops against {mean} ± {}",
        var.sqrt()
    );
    // Classic ECT(0): marked, never dropped by the AQM.
    let ect0: Vec<&Fate> = fates
        .values()
        .filter(|f| f.flow == 1 && f.ecn == Ecn::Ect0)
        .collect();
    assert!(ect0.iter().all(|f| f.dropped.is_none()));
    assert!(ect0.iter().filter(|f| f.sent.unwrap().1).count() > 100);
}

/// `count` Not-ECT packets of `bytes` from flow 1, one every `every_ns`
/// from 0: traffic that does not respond to drops.
fn unresponsive(count: u64, every_ns: u64, bytes: u32) -> Vec<(u64, u32, Ecn, u64)> {
    (0..count)
        .map(|i| (i * every_ns, bytes, Ecn::NotEct, 1))
        .collect()
}

/// The probability last seen at or before `t` among `(time, p)` probes in
/// time order (0 before the first).
fn p_before(p_at: &[(u64, f64)], t: u64) -> f64 {
    p_at.iter()
        .rev()
        .find(|&&(pt, _)| pt <= t)
        .map_or(0.0, |&(_, p)| p)
}

/// Linux's `sch_dualpi2` (`must_drop()`): no Classic drop and no coupled
/// L4S mark while less than two MTUs stay queued behind the packet. Three
/// seconds of unresponsive Classic traffic at 15 Mbit/s into 10 Mbit/s
/// hold p' near 0.58 (p'^2 drops the third in excess); once it stops, p'
/// falls by α·target (0.0024) per 16 ms update, so it stays high for
/// seconds. In that second, lone packets (nothing behind them) are
/// neither dropped nor marked, while in groups of four offered at once
/// the second (two MTUs behind it when it is dequeued) is dropped at
/// about p'^2.
#[test]
fn dualpi2_neither_drops_nor_couples_below_two_mtus_queued() {
    let mut d = direction("10mbit", "limit = \"1000pkt\", aqm = \"dualpi2\"");
    let mut arrivals = unresponsive(3_750, 800_000, 1500);
    // From 3.1 s (the standing queue gone), every 20 ms: a lone Classic
    // packet, 5 ms later a lone 100-byte L4S one, 5 ms later four Classic
    // packets at once (each group gone in 4.8 ms).
    let start = 3_100 * MS;
    for n in 0..45 {
        let t = start + n * 20 * MS;
        arrivals.push((t, 1500, Ecn::NotEct, 2));
        arrivals.push((t + 5 * MS, 100, Ecn::Ect1, 3));
        for _ in 0..4 {
            arrivals.push((t + 10 * MS, 1500, Ecn::NotEct, 4));
        }
    }
    let mut p_at: Vec<(u64, f64)> = Vec::new();
    let fates = run(&mut d, &arrivals, 4_100 * MS, |t, d| {
        p_at.push((t, d.aqm_probability().unwrap()));
    });
    let p = |t: u64| p_before(&p_at, t);
    let of = |flow: u64| fates.values().filter(move |f| f.flow == flow);
    // Without the rule, the lone Classic packets would lose about the sum
    // of p'^2 over them; at least 5 here.
    let lone: f64 = of(2).map(|f| p(f.offered_ns).powi(2)).sum();
    assert!(lone > 5.0, "p'^2 summed over the lone packets: {lone}");
    assert_eq!(of(2).count(), 45);
    assert!(
        of(2).all(|f| f.dropped.is_none() && f.sent.is_some()),
        "a lone Classic packet was dropped: {:?}",
        of(2).find(|f| f.dropped.is_some())
    );
    assert_eq!(of(3).count(), 45);
    assert!(
        of(3).all(|f| f.sent.is_some_and(|(_, ce)| !ce)),
        "a lone L4S packet was marked"
    );
    // The groups: only their second packets can be dropped (the first is
    // served at once, the third and fourth have less behind them).
    let (mut mean, mut var) = (0.0, 0.0);
    for n in 0..45 {
        // The second is dequeued when the first has been sent, 1.2 ms on.
        let pc = p(start + n * 20 * MS + 10 * MS + 1_200_000).powi(2);
        mean += pc;
        var += pc * (1.0 - pc);
    }
    let drops = of(4)
        .filter(|f| matches!(f.dropped, Some((DropReason::DualPi2, _))))
        .count() as f64;
    assert!(drops >= 1.0, "no group lost a packet ({mean} expected)");
    assert!(
        (drops - mean).abs() <= 4.0 * var.sqrt() + 1.0,
        "{drops} drops against {mean} ± {}",
        var.sqrt()
    );
}

/// On a path of 9000-byte packets the two MTUs are 18,000 bytes (the
/// largest packet seen, as a jumbo-frame device's MTU): with p' held high
/// by unresponsive jumbo traffic, triples offered at once lose nothing:
/// the first is served at once, and the second, when dequeued, has 9,000
/// bytes behind it, which a fixed 1500-byte MTU would let be dropped.
#[test]
fn dualpi2_takes_the_largest_packet_as_its_mtu() {
    let mut d = direction("100mbit", "limit = \"1000pkt\", aqm = \"dualpi2\"");
    // 150 Mbit/s of 9000-byte packets for 3 s (one every 480 µs).
    let mut arrivals = unresponsive(6_250, 480_000, 9000);
    // From 3.1 s, three at once every 5 ms (gone in 2.16 ms).
    for n in 0..150 {
        for _ in 0..3 {
            arrivals.push((3_100 * MS + n * 5 * MS, 9000, Ecn::NotEct, 2));
        }
    }
    let mut p_at: Vec<(u64, f64)> = Vec::new();
    let fates = run(&mut d, &arrivals, 4_000 * MS, |t, d| {
        p_at.push((t, d.aqm_probability().unwrap()));
    });
    let lone: f64 = fates
        .values()
        .filter(|f| f.flow == 2)
        .map(|f| p_before(&p_at, f.offered_ns).powi(2))
        .sum();
    assert!(lone > 30.0, "p'^2 summed over the triples' packets: {lone}");
    let triples: Vec<&Fate> = fates.values().filter(|f| f.flow == 2).collect();
    assert_eq!(triples.len(), 450);
    assert!(
        triples.iter().all(|f| f.dropped.is_none()),
        "a packet of a triple was dropped"
    );
}

/// Every aqm names the keys it takes; a key of another aqm is an error
/// that says what, where and what is allowed.
#[test]
fn aqm_keys_belong_to_their_aqm() {
    let parse = |q: &str| -> Result<DirectionConfig, String> {
        toml::from_str::<DirectionConfig>(&format!("rate = \"10mbit\"\nqueue = {{ {q} }}\n"))
            .map_err(|e| e.to_string())
    };
    for ok in [
        "limit = \"10pkt\", aqm = \"fq_codel\", target = \"5ms\", interval = \"100ms\", flows = 64, quantum = 300",
        "limit = \"10pkt\", aqm = \"pie\", target = \"20ms\", tupdate = \"30ms\", alpha = 0.1, beta = 1.0, max_burst = \"0ms\"",
        "limit = \"10pkt\", aqm = \"dualpi2\", target = \"15ms\", tupdate = \"16ms\", alpha = 0.16, beta = 3.2, coupling = 2.0, l4s_threshold = \"1ms\", ecn = true",
        "limit = \"10pkt\", aqm = \"dualpi2\", overload = \"overflow\"",
        "limit = \"10pkt\", aqm = \"dualpi2\", overload = \"drop\"",
    ] {
        parse(ok).unwrap();
    }
    let cases: [(&str, &[&str]); 9] = [
        (
            "limit = \"10pkt\", aqm = \"pie\", quantum = 300",
            &[
                "`quantum` does not apply to `aqm = \"pie\"`",
                "`tupdate`",
                "\"fq_codel\"",
            ],
        ),
        (
            "limit = \"10pkt\", aqm = \"fq_codel\", coupling = 2.0",
            &[
                "`coupling` does not apply to `aqm = \"fq_codel\"`",
                "`quantum`",
                "\"dualpi2\"",
            ],
        ),
        (
            "limit = \"10pkt\", aqm = \"codel\", flows = 10",
            &["`flows` does not apply to `aqm = \"codel\"`", "`interval`"],
        ),
        (
            "limit = \"10pkt\", aqm = \"dualpi2\", max_burst = \"1s\"",
            &["`max_burst` does not apply", "\"pie\""],
        ),
        (
            "limit = \"10pkt\", aqm = \"fq_codel\", flows = 0",
            &["`flows` = 0", "1 to 65536"],
        ),
        (
            "limit = \"10pkt\", aqm = \"pie\", alpha = -1.0",
            &["`alpha` = -1", "above 0"],
        ),
        (
            "limit = \"10pkt\", aqm = \"dualpi2\", tupdate = \"0s\"",
            &["`tupdate` must be positive"],
        ),
        (
            "limit = \"10pkt\", aqm = \"pie\", overload = \"drop\"",
            &[
                "`overload` does not apply to `aqm = \"pie\"`",
                "\"dualpi2\"",
            ],
        ),
        (
            "limit = \"10pkt\", aqm = \"dualpi2\", overload = \"sometimes\"",
            &["sometimes", "`drop`", "`overflow`"],
        ),
    ];
    for (q, needles) in cases {
        let e = parse(q).expect_err(q);
        for n in needles {
            assert!(e.contains(n), "{q}: `{e}` lacks `{n}`");
        }
    }
}

/// Unresponsive ECT(0) Classic traffic at 30 Mbit/s into 10 Mbit/s with
/// `ecn = true`, beside an L4S flow (300 B every 1 ms): marks cannot
/// slow it, so p' rises until k·p' passes 1 and stays there (the drops
/// must remove two thirds: p'² ≈ 0.67). Judges the packets decided in
/// 1-3 s (after the rise), at the p' last seen before the decision (a
/// sent packet's decision is one serialisation before it leaves).
///
/// Checks that k·p' stayed above 1 and what both overload settings share:
/// a Classic ECT(0) packet that p'² hits is dropped, not marked (none is
/// marked). Returns, for each L4S packet judged, its p' and whether it
/// was dropped (`None`) or left marked or not.
fn overload_run(extra: &str) -> Vec<(f64, Option<bool>)> {
    let mut d = direction(
        "10mbit",
        &format!("limit = \"100000pkt\", aqm = \"dualpi2\", ecn = true{extra}"),
    );
    let end = 3_000 * MS;
    let mut arrivals: Vec<(u64, u32, Ecn, u64)> = (0..end / 400_000)
        .map(|i| (i * 400_000, 1500, Ecn::Ect0, 1))
        .collect();
    arrivals.extend((0..end / MS).map(|i| (i * MS + 170_000, 300, Ecn::Ect1, 2)));
    arrivals.sort_by_key(|a| a.0);
    let mut p_at: Vec<(u64, f64)> = Vec::new();
    let fates = run(&mut d, &arrivals, end, |t, d| {
        p_at.push((t, d.aqm_probability().unwrap()));
    });
    let (mut classic, mut l4s) = (Vec::new(), Vec::new());
    let mut p_min: f64 = 1.0;
    for f in fates.values() {
        let (decided, fate) = match (f.sent, f.dropped) {
            (_, Some((DropReason::DualPi2, t))) => (t, None),
            (_, Some((r, _))) => panic!("unexpected drop {r:?}"),
            // Serialisation: 1.2 ms for flow 1's 1500 B, 240 µs for flow
            // 2's 300 B.
            (Some((left, ce)), None) => {
                let ser = if f.flow == 1 { 1_200_000 } else { 240_000 };
                (left - ser, Some(ce))
            }
            (None, None) => continue,
        };
        if !(1_000 * MS..3_000 * MS).contains(&decided) {
            continue;
        }
        let p = p_before(&p_at, decided);
        p_min = p_min.min(p);
        match f.flow {
            1 => classic.push((p, fate)),
            _ => l4s.push((p, fate)),
        }
    }
    assert!(p_min > 0.5, "not overloaded throughout: p' fell to {p_min}");
    dropped_at_p_squared(&classic, "Classic ECT(0)");
    assert!(
        classic.iter().all(|(_, f)| *f != Some(true)),
        "a Classic packet was marked on overload"
    );
    assert!(l4s.len() > 1_000, "{} L4S packets judged", l4s.len());
    l4s
}

/// Drops among `judged` (`None` fates) against Σp'² within 4 standard
/// deviations.
fn dropped_at_p_squared(judged: &[(f64, Option<bool>)], what: &str) {
    let mean: f64 = judged.iter().map(|(p, _)| p * p).sum();
    let var: f64 = judged.iter().map(|(p, _)| p * p * (1.0 - p * p)).sum();
    let drops = judged.iter().filter(|(_, f)| f.is_none()).count() as f64;
    assert!(mean > 100.0, "{what}: too few judged ({mean})");
    assert!(
        (drops - mean).abs() <= 4.0 * var.sqrt(),
        "{what}: {drops} drops against {mean} ± {}",
        var.sqrt()
    );
}

/// Overload (RFC 9332 §4.2.3; Linux's `must_drop()`, whose default is
/// `drop_on_overload`): once k·p' passes 1, a Classic ECT(0) packet that
/// p'² hits is dropped, not marked, and L4S packets are dropped at p'² as
/// well, every one not dropped being marked.
#[test]
fn dualpi2_on_overload_drops_ecn_capable_and_l4s_packets_at_p_squared() {
    let l4s = overload_run("");
    dropped_at_p_squared(&l4s, "L4S");
    assert!(
        l4s.iter().all(|(_, f)| *f != Some(false)),
        "an L4S packet left unmarked on overload"
    );
}

/// `overload = "overflow"` (Linux's `overflow`) keeps ECN's no-loss
/// promise to L4S packets on overload: none is dropped, every one is
/// marked; Classic ECT(0) packets are still dropped at p'².
#[test]
fn dualpi2_overflow_marks_every_l4s_packet_and_drops_none() {
    let l4s = overload_run(", overload = \"overflow\"");
    assert!(
        l4s.iter().all(|(_, f)| *f == Some(true)),
        "an L4S packet was dropped or left unmarked on overflow"
    );
}

/// Each AQM's delay target, as the resolved configuration gives it: the
/// RFCs' defaults (RFC 8289 §4.4 and RFC 8290 §4.3 5 ms, RFC 8033 §4.1
/// 15 ms, RFC 9332 A.1 15 ms) or the value given; none for drop-tail.
#[test]
fn each_aqm_reports_its_delay_target() {
    let target = |q: &str| -> Option<u64> {
        toml::from_str::<DirectionConfig>(&format!("rate = \"10mbit\"\nqueue = {{ {q} }}\n"))
            .unwrap()
            .queue
            .expect("the table names a queue")
            .delay_target_ns()
    };
    assert_eq!(target("limit = \"10pkt\""), None);
    assert_eq!(target("limit = \"10pkt\", aqm = \"codel\""), Some(5 * MS));
    assert_eq!(
        target("limit = \"10pkt\", aqm = \"fq_codel\""),
        Some(5 * MS)
    );
    assert_eq!(target("limit = \"10pkt\", aqm = \"pie\""), Some(15 * MS));
    assert_eq!(
        target("limit = \"10pkt\", aqm = \"dualpi2\""),
        Some(15 * MS)
    );
    assert_eq!(
        target("limit = \"10pkt\", aqm = \"pie\", target = \"20ms\""),
        Some(20 * MS)
    );
    assert_eq!(
        target("limit = \"10pkt\", aqm = \"step\", threshold = \"2ms\""),
        Some(2 * MS)
    );
}
