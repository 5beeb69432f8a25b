//! ECN through the sans-IO sender and receiver: the receiver's counts and
//! ECE flag, QUIC's validated CE increase, TCP's ECE/CWR exchange, and
//! the loss ranges the controller is told about. A recording controller
//! shows what reaches the algorithm.

use congestion::{
    AckContext, Config, CongestionControl, DeliveryRateSampler, Instant, LossContext,
    RecoveryState, Snapshot,
};
use sender::{
    Ack, AckAction, AckPolicy, CustomCc, Ecn, EcnCounts, EcnFeedback, Receiver, SendDecision,
    Sender, SenderConfig,
};
use std::sync::{Arc, Mutex};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

/// The sender takes instants; these tests count in nanoseconds.
fn at(ns: u64) -> Instant {
    Instant::from_nanos(ns)
}

/// What the recording controller saw.
#[derive(Default)]
struct Seen {
    /// (ce_packets, acked_packets) of every ACK.
    acks: Vec<(u64, u64)>,
    /// (lost packets, lost_ranges) of every loss report.
    losses: Vec<(usize, u32)>,
}

/// A fixed 100-packet window, paced fast, that records what it is told.
struct Recorder(Arc<Mutex<Seen>>);

impl CongestionControl for Recorder {
    fn on_ack(&mut self, ack: &AckContext<'_>, _: &mut DeliveryRateSampler) {
        let mut s = self.0.lock().unwrap();
        s.acks.push((ack.ce_packets, ack.acked_packets));
    }
    fn on_loss(&mut self, loss: &LossContext<'_>) {
        let mut s = self.0.lock().unwrap();
        s.losses.push((loss.lost.len(), loss.lost_ranges));
    }
    fn on_packets_lost(&mut self, _: Instant, _: u64, _: u64, _: bool) {}
    fn on_retransmission_timeout(&mut self, _: Instant, _: u64) {}
    fn on_mss_change(&mut self, _: u64) {}
    fn cwnd_bytes(&self) -> u64 {
        100 * 1500
    }
    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        10_000_000_000
    }
    fn send_quantum_bytes(&self) -> u64 {
        1500
    }
    fn snapshot(&self) -> Snapshot {
        Snapshot::default()
    }
    fn name(&self) -> &str {
        "recorder"
    }
}

fn recording(ecn: Ecn, feedback: EcnFeedback) -> (Sender, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let s2 = seen.clone();
    let mut f = SenderConfig::bulk(Config::default());
    f.custom_cc = Some(CustomCc::new("recorder", move |_, _| {
        Box::new(Recorder(s2.clone())) as Box<dyn CongestionControl + Send + Sync>
    }));
    f.tail_loss_probe = false;
    f.ecn = ecn;
    f.ecn_feedback = feedback;
    (Sender::new(&f, 1), seen)
}

/// Sends `n` packets, 1 µs apart from `t`; returns them as sent and the
/// time after.
fn send_n(s: &mut Sender, mut t: u64, n: usize) -> (Vec<sender::SentPacket>, u64) {
    let mut out = Vec::new();
    while out.len() < n {
        match s.poll(at(t)) {
            SendDecision::Send {
                chunk,
                bytes,
                retransmission,
            } => out.push(s.on_sent_ecn(at(t), chunk, bytes, retransmission)),
            SendDecision::PaceUntil(_) => {}
            other => panic!("{other:?} after {} sends", out.len()),
        }
        t += US;
    }
    (out, t)
}

/// An ACK of `ranges` (highest first) with QUIC counts.
fn ack(ranges: &[(u64, u64)], ect0: u32, ce: u32) -> Ack {
    let mut a = Ack {
        len: ranges.len() as u8,
        ecn: EcnCounts { ect0, ect1: 0, ce },
        ..Ack::default()
    };
    a.ranges[..ranges.len()].copy_from_slice(ranges);
    a
}

fn sent(r: AckAction) -> Ack {
    match r {
        AckAction::Send(a) => a,
        other => panic!("expected an ACK, got {other:?}"),
    }
}

/// The receiver counts each codepoint that arrives and every ACK carries
/// the cumulative counts; Not-ECT packets are not counted.
#[test]
fn the_receiver_counts_codepoints_and_every_ack_carries_them() {
    let mut r = Receiver::new(AckPolicy::EveryPacket, None);
    let marks = [
        Ecn::Ect0,
        Ecn::Ect0,
        Ecn::Ce,
        Ecn::NotEct,
        Ecn::Ect1,
        Ecn::Ce,
        Ecn::Ect0,
    ];
    let mut want = EcnCounts::default();
    for (pn, &e) in marks.iter().enumerate() {
        let a = sent(r.on_packet_ecn(at(pn as u64), pn as u64, pn as u64, 1000, e, false));
        match e {
            Ecn::Ect0 => want.ect0 += 1,
            Ecn::Ect1 => want.ect1 += 1,
            Ecn::Ce => want.ce += 1,
            Ecn::NotEct => {}
        }
        assert_eq!(a.ecn, want, "after packet {pn} ({e:?})");
    }
    assert_eq!(
        want,
        EcnCounts {
            ect0: 3,
            ect1: 1,
            ce: 2
        }
    );
    // A receiver given no codepoints reports none.
    let mut plain = Receiver::new(AckPolicy::EveryPacket, None);
    let a = sent(plain.on_packet(at(0), 0, 0, 1000));
    assert_eq!(a.ecn, EcnCounts::default());
    assert!(!a.ece);
}

/// RFC 3168 §6.1.3: ECE is set on ACKs from the first CE, held while
/// packets without CWR arrive (even Not-CE ones), cleared by a packet with
/// CWR, and set again by the next CE; a packet with both CWR and CE leaves
/// it set (Linux clears on CWR, then sets on CE).
#[test]
fn ece_is_set_by_ce_held_until_cwr_and_then_cleared() {
    let mut r = Receiver::new(AckPolicy::EveryPacket, None);
    let mut pn = 0;
    let mut rx = |e: Ecn, cwr: bool| {
        let a = sent(r.on_packet_ecn(at(pn), pn, pn, 1000, e, cwr));
        pn += 1;
        a.ece
    };
    assert!(!rx(Ecn::Ect0, false));
    assert!(rx(Ecn::Ce, false), "the CE packet's own ACK echoes it");
    for _ in 0..5 {
        assert!(rx(Ecn::Ect0, false), "held until CWR");
    }
    assert!(!rx(Ecn::Ect0, true), "CWR clears it");
    assert!(!rx(Ecn::Ect0, false), "and it stays clear");
    assert!(rx(Ecn::Ce, false), "the next CE sets it again");
    assert!(rx(Ecn::Ce, true), "CWR with CE: cleared, then set");
    assert!(rx(Ecn::Ect0, false));
}

/// Linux's receiver would delay the ACK of an in-order packet after its
/// quick ACKs; a first CE puts it in quick-ACK mode for two ACKs instead
/// (`tcp_enter_quickack_mode(sk, 2)`), so that packet and the next are
/// acknowledged at once; a CE while ECE is already set is not. The
/// delayed policy acknowledges every CE at once (RFC 9000 §13.2.1).
#[test]
fn a_first_ce_is_acknowledged_at_once() {
    let mut r = Receiver::new(AckPolicy::LINUX, None);
    for pn in 0..16 {
        r.on_packet_ecn(at(pn), pn, pn, 1448, Ecn::Ect0, false);
    }
    assert!(matches!(
        r.on_packet_ecn(at(16), 16, 16, 1448, Ecn::Ect0, false),
        AckAction::Delay(_)
    ));
    assert!(
        sent(r.on_packet_ecn(at(17), 17, 17, 1448, Ecn::Ect0, false))
            .ecn
            .ce
            == 0
    );
    let a = sent(r.on_packet_ecn(at(18), 18, 18, 1448, Ecn::Ce, false));
    assert!(a.ece && a.ecn.ce == 1);
    let a = sent(r.on_packet_ecn(at(19), 19, 19, 1448, Ecn::Ect0, false));
    assert!(a.ece, "the second quick ACK still echoes");
    assert!(matches!(
        r.on_packet_ecn(at(20), 20, 20, 1448, Ecn::Ce, false),
        AckAction::Delay(_)
    ));
    let delayed = AckPolicy::Delayed {
        max_packets: 2,
        max_delay_ns: 25 * MS,
    };
    let mut r = Receiver::new(delayed, None);
    assert!(matches!(
        r.on_packet_ecn(at(0), 0, 0, 1448, Ecn::Ect0, false),
        AckAction::Delay(_)
    ));
    sent(r.on_packet_ecn(at(1), 1, 1, 1448, Ecn::Ect0, false));
    sent(r.on_packet_ecn(at(2), 2, 2, 1448, Ecn::Ce, false));
    sent(r.on_packet_ecn(at(3), 3, 3, 1448, Ecn::Ce, false));
}

/// QUIC: an ECN-capable flow marks every packet (retransmissions too) and
/// reports the CE count's increase to the controller, in the same ACK's
/// context (between `on_ack_begin` and `on_ack`).
#[test]
fn quic_reports_the_increase_of_the_ce_count() {
    let (mut s, seen) = recording(Ecn::Ect0, EcnFeedback::Counts);
    let (pkts, t) = send_n(&mut s, 0, 10);
    assert!(pkts.iter().all(|p| p.ecn == Ecn::Ect0 && !p.cwr));
    s.on_ack(at(t + 10 * MS), &ack(&[(0, 4)], 3, 2));
    s.on_ack(at(t + 11 * MS), &ack(&[(0, 7)], 6, 2));
    s.on_ack(at(t + 12 * MS), &ack(&[(0, 9)], 7, 3));
    assert_eq!(seen.lock().unwrap().acks, [(2, 5), (0, 3), (1, 2)]);
    assert_eq!(s.delivered_ce, 3);
    assert_eq!(s.delivered_packets, 10);
    assert!(!s.ecn_failed);
}

/// Counts never decrease, and a reordered ACK (one that does not raise
/// the largest acknowledged) must not fail validation (RFC 9000
/// §13.4.2.1): its lower counts change nothing. A duplicate ACK newly
/// acknowledges nothing and reports nothing.
#[test]
fn reordered_and_duplicate_acks_never_lower_the_counts() {
    let (mut s, seen) = recording(Ecn::Ect0, EcnFeedback::Counts);
    let (_, t) = send_n(&mut s, 0, 12);
    // Packets 0..=4 and 9 arrived, two of them CE.
    let newer = ack(&[(9, 9), (0, 4)], 4, 2);
    s.on_ack(at(t + 10 * MS), &newer);
    s.on_ack(at(t + 10 * MS), &newer);
    // An older ACK overtaken by the newer one: lower counts, and it newly
    // acknowledges 5 and 6 whose ACK range the newer one no longer held.
    s.on_ack(at(t + 11 * MS), &ack(&[(9, 9), (0, 6)], 3, 1));
    assert!(!s.ecn_failed, "a reordered ACK must not fail validation");
    assert_eq!(s.delivered_ce, 2);
    // The next ACK raises the largest: one more CE since the max (2).
    s.on_ack(at(t + 12 * MS), &ack(&[(0, 11)], 9, 3));
    assert!(!s.ecn_failed);
    assert_eq!(s.delivered_ce, 3);
    let acks = seen.lock().unwrap().acks.clone();
    assert_eq!(
        acks,
        [(2, 6), (0, 2), (1, 4)],
        "the duplicate reached no on_ack"
    );
}

/// An increase of the CE count larger than the packets an ACK newly
/// acknowledges is allowed (ACKs were lost, RFC 9000 §13.4.2.1); the
/// controller is told at most as many marks as packets acknowledged,
/// and the rest with the next ACKs.
#[test]
fn a_ce_increase_beyond_the_newly_acked_is_capped_and_carried() {
    let (mut s, seen) = recording(Ecn::Ect0, EcnFeedback::Counts);
    let (_, t) = send_n(&mut s, 0, 10);
    s.on_ack(at(t + 10 * MS), &ack(&[(0, 1)], 0, 2));
    // The receiver saw 2..=6 all CE, but ACKs for 2..=4 were lost and
    // this one's range begins at 5 (its older ranges are forgotten).
    s.on_ack(at(t + 11 * MS), &ack(&[(5, 6)], 0, 7));
    assert!(!s.ecn_failed, "a larger increase is not a failure");
    assert_eq!(s.delivered_ce, 4);
    s.on_ack(at(t + 12 * MS), &ack(&[(0, 9)], 3, 7));
    assert_eq!(s.delivered_ce, 7);
    assert_eq!(seen.lock().unwrap().acks, [(2, 2), (2, 2), (3, 6)]);
    assert!(!s.ecn_failed);
}

/// Validation fails on an ACK that raises the largest acknowledged and
/// whose counts decreased, or that acknowledges ECT(0) packets without
/// counting them (bleaching), or that counts ECT(1) never sent
/// (remarking). The sender then stops marking and reports no more CE.
#[test]
fn failed_validation_turns_ecn_off() {
    type Bad = fn(u64) -> Ack;
    let cases: [(&str, Bad); 3] = [
        ("decrease", |_| ack(&[(0, 9)], 9, 0)),
        ("bleached", |_| ack(&[(0, 9)], 4, 1)),
        ("remarked", |_| {
            let mut a = ack(&[(0, 9)], 9, 1);
            a.ecn.ect1 = 1;
            a
        }),
    ];
    for (what, bad) in cases {
        let (mut s, _) = recording(Ecn::Ect0, EcnFeedback::Counts);
        let (_, t) = send_n(&mut s, 0, 10);
        s.on_ack(at(t + 10 * MS), &ack(&[(0, 4)], 4, 1));
        assert!(!s.ecn_failed, "{what}");
        s.on_ack(at(t + 11 * MS), &bad(0));
        assert!(s.ecn_failed, "{what}");
        assert_eq!(s.delivered_ce, 1, "{what}");
        let (more, _) = send_n(&mut s, t + 12 * MS, 3);
        assert!(more.iter().all(|p| p.ecn == Ecn::NotEct), "{what}");
    }
}

/// TCP (RFC 3168 §6.1.2): every packet an ACK with ECE newly acknowledges
/// counts as CE; the first ECE queues CWR for the next new data packet
/// (not a retransmission, which goes out Not-ECT), once per window: ECE
/// on ACKs of packets sent before that CWR packet does not queue another,
/// an ECE after it is acknowledged does.
#[test]
fn tcp_ece_counts_acked_packets_and_sets_cwr_once_per_window() {
    let (mut s, seen) = recording(Ecn::Ect0, EcnFeedback::Ece);
    let (first, t) = send_n(&mut s, 0, 10);
    assert!(first.iter().all(|p| p.ecn == Ecn::Ect0 && !p.cwr));
    let mut a = ack(&[(0, 2)], 0, 0);
    a.ece = true;
    s.on_ack(at(t + 10 * MS), &a);
    assert_eq!(s.delivered_ce, 3);
    let (next, t2) = send_n(&mut s, t + 10 * MS, 3);
    assert_eq!(
        next.iter().map(|p| p.cwr).collect::<Vec<_>>(),
        [true, false, false]
    );
    let cwr_pn = next[0].pn;
    // More ECE for the old window: counted, no second CWR.
    let mut a = ack(&[(0, 6)], 0, 0);
    a.ece = true;
    s.on_ack(at(t2 + 10 * MS), &a);
    assert_eq!(s.delivered_ce, 7);
    let (more, t3) = send_n(&mut s, t2 + 10 * MS, 2);
    assert!(more.iter().all(|p| !p.cwr));
    // No ECE: nothing counted. Then the CWR packet is acknowledged and a
    // new ECE arrives: a new reaction.
    s.on_ack(at(t3 + 10 * MS), &ack(&[(0, 9)], 0, 0));
    let mut a = ack(&[(0, cwr_pn)], 0, 0);
    a.ece = true;
    s.on_ack(at(t3 + 11 * MS), &a);
    assert_eq!(s.delivered_ce, 8);
    let (again, _) = send_n(&mut s, t3 + 11 * MS, 1);
    assert!(again[0].cwr);
    let acks = seen.lock().unwrap().acks.clone();
    assert_eq!(acks, [(3, 3), (4, 4), (0, 3), (1, 1)]);
}

/// CWR's recovery point is what was sent before the ACK that began it
/// (`tcp_enter_cwr()` sets `high_seq` to `snd_nxt` on the ACK carrying
/// ECE), so acknowledging the first packet sent after that ACK ends it.
/// Noted an ACK late, the point would sit above the packets sent in
/// between and CWR would last longer.
#[test]
fn cwr_ends_when_the_first_packet_sent_after_the_ece_ack_is_acknowledged() {
    let mut f = SenderConfig::bulk(Config::default());
    f.tail_loss_probe = false;
    f.ecn = Ecn::Ect0;
    f.ecn_feedback = EcnFeedback::Ece;
    let mut s = Sender::new(&f, 1);
    let (_, t) = send_n(&mut s, 0, 10);
    let mut a = ack(&[(0, 2)], 0, 0);
    a.ece = true;
    s.on_ack(at(t + 10 * MS), &a);
    assert_eq!(s.cc.recovery_state(), RecoveryState::Cwr);
    let (after, t2) = send_n(&mut s, t + 10 * MS, 3);
    // Everything sent before the ECE ACK: CWR holds (Linux waits for
    // `snd_una` to pass `high_seq`).
    s.on_ack(at(t2 + 10 * MS), &ack(&[(0, 9)], 0, 0));
    assert_eq!(s.cc.recovery_state(), RecoveryState::Cwr);
    // The first packet sent after it: CWR ends.
    s.on_ack(at(t2 + 11 * MS), &ack(&[(0, after[0].pn)], 0, 0));
    assert_eq!(s.cc.recovery_state(), RecoveryState::Open);
}

/// TCP retransmissions are Not-ECT (RFC 3168 §6.1.5); QUIC's are marked.
#[test]
fn tcp_retransmissions_are_not_ect() {
    for (feedback, want) in [
        (EcnFeedback::Ece, Ecn::NotEct),
        (EcnFeedback::Counts, Ecn::Ect0),
    ] {
        let (mut s, _) = recording(Ecn::Ect0, feedback);
        let (_, t) = send_n(&mut s, 0, 10);
        // 0 is lost: 1..=9 acknowledged.
        s.on_ack(at(t + 10 * MS), &ack(&[(1, 9)], 9, 0));
        match s.poll(at(t + 10 * MS + US)) {
            SendDecision::Send {
                chunk,
                bytes,
                retransmission: true,
            } => {
                let p = s.on_sent_ecn(at(t + 10 * MS + US), chunk, bytes, true);
                assert_eq!((chunk, p.ecn), (0, want), "{feedback:?}");
            }
            other => panic!("{feedback:?}: {other:?}"),
        }
    }
}

/// Losses of packets 3, 4 and 7 in one declaration are 2 discontiguous
/// ranges; the controller is told so with the packets.
#[test]
fn lost_ranges_are_counted_per_declaration() {
    let (mut s, seen) = recording(Ecn::NotEct, EcnFeedback::Counts);
    let (_, t) = send_n(&mut s, 0, 12);
    // 3, 4, 7, 9, 10 missing below 11: 3, 4 and 7 are 3 or more below.
    s.on_ack(
        at(t + 10 * MS),
        &ack(&[(11, 11), (8, 8), (5, 6), (0, 2)], 0, 0),
    );
    assert_eq!(seen.lock().unwrap().losses, [(3, 2)]);
    // 9 and 10 (sent 1 µs apart) follow by time: one range.
    s.on_timer(at(s
        .timer_deadline()
        .map(Instant::as_nanos)
        .expect("loss timer")
        + 10 * US));
    assert_eq!(seen.lock().unwrap().losses, [(3, 2), (2, 1)]);
}

/// The counts travel modulo 2^32 and the sender extends them: a CE count
/// that wrapped past 2^32 is an increase, one 2^31 or more below the
/// largest seen is a decrease.
#[test]
fn counts_are_extended_across_the_32_bit_wrap() {
    use sender::extend_count;
    let near = (1u64 << 32) - 3;
    assert_eq!(extend_count(near, 2), (1 << 32) + 2);
    assert_eq!(extend_count(near, u32::MAX), (1 << 32) - 1);
    assert_eq!(extend_count(near, (near as u32) - 5), near - 5);
    assert_eq!(extend_count(0, 7), 7);
    assert_eq!(extend_count(5, 3), 3, "a decrease stays a decrease");
    assert_eq!(extend_count(2, u32::MAX), 0, "never below zero");
    let mut c = EcnCounts {
        ce: u32::MAX,
        ..EcnCounts::default()
    };
    c.count(Ecn::Ce);
    assert_eq!(c.ce, 0);
}

/// A flow without ECN sends Not-ECT and ignores counts it never asked for.
#[test]
fn without_ecn_nothing_is_marked_or_reported() {
    let (mut s, seen) = recording(Ecn::NotEct, EcnFeedback::Counts);
    let (pkts, t) = send_n(&mut s, 0, 5);
    assert!(pkts.iter().all(|p| p.ecn == Ecn::NotEct && !p.cwr));
    s.on_ack(at(t + MS), &ack(&[(0, 4)], 0, 3));
    assert_eq!(s.delivered_ce, 0);
    assert_eq!(seen.lock().unwrap().acks, [(0, 5)]);
}
