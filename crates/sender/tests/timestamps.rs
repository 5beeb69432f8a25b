//! TCP timestamps (`SenderConfig::timestamps`): the receiver's echo and
//! PAWS, and what the sender does with the echo (Linux's partial undo), a
//! cumulative ACK of a retransmission in flight included. Each sender test
//! also runs without timestamps, where the same ACKs must not undo.

use congestion::{Algorithm, Config, Instant, RecoveryState};
use sender::{
    Ack, AckAction, AckPolicy, Ecn, Pacing, Receiver, SendDecision, Sender, SenderConfig, TcpFlags,
};

const MS: u64 = 1_000_000;

fn at(ns: u64) -> Instant {
    Instant::from_nanos(ns)
}

/// A Reno sender with a 10-packet window, timestamps as given, that has
/// sent pn 0-9 (chunks 0-9) at 0.
fn ten_sent(timestamps: bool) -> Sender {
    let mut cc = Config::new(Algorithm::Reno);
    cc.initial_cwnd_packets = 10;
    let mut f = SenderConfig::bulk(cc);
    f.tail_loss_probe = false;
    f.pacing = Pacing::Off;
    f.timestamps = timestamps;
    let mut s = Sender::new(&f, 1);
    for want in 0..10 {
        let chunk = send_one(&mut s, 0).expect("window open");
        assert_eq!(chunk, (want, false));
    }
    s
}

/// Sends the one packet the sender releases at `now` (it does not pace):
/// (chunk, retransmission), or `None` if it releases none.
fn send_one(s: &mut Sender, now: u64) -> Option<(u64, bool)> {
    match s.poll(at(now)) {
        SendDecision::Send {
            chunk,
            bytes,
            retransmission,
        } => {
            s.on_sent(at(now), chunk, bytes, retransmission);
            Some((chunk, retransmission))
        }
        _ => None,
    }
}

/// An ACK of `ranges` (highest first) with every chunk below `cum` in
/// order, echoing timestamp `echo` (ms).
fn ack(ranges: &[(u64, u64)], cum: u64, echo: Option<u32>) -> Ack {
    let mut a = Ack {
        len: ranges.len() as u8,
        cum_chunk: cum,
        ts_echo_ms: echo,
        ..Default::default()
    };
    a.ranges[..ranges.len()].copy_from_slice(ranges);
    a
}

/// pn 0 and pn 5 missing at 40 ms: both lost by the 3-packet rule, one
/// recovery whose point is chunk 10.
fn two_lost(timestamps: bool) -> Sender {
    let mut s = ten_sent(timestamps);
    s.on_ack(at(40 * MS), &ack(&[(6, 9), (1, 4)], 0, None));
    assert_eq!(s.loss_episodes, 1);
    assert_eq!(s.cc.recovery_state(), RecoveryState::Recovery);
    s
}

/// Linux's partial undo (`tcp_try_undo_partial()`): within a recovery, an
/// ACK moves the cumulative point and echoes a timestamp older than the
/// first repair, so the original filled the hole. With no repair left in
/// flight (the cumulative point acknowledges the one sent, as TCP frees
/// the segment), the reduction is undone before the recovery point, and
/// the other packet declared lost, whose repair had not left, is taken
/// back: RACK judges it again by time, finds it lost when its timer
/// fires, and a new recovery begins. Without timestamps the same ACK
/// leaves the recovery as it was, its repair next to go.
#[test]
fn an_echo_from_before_the_first_repair_undoes_part_of_a_recovery() {
    for timestamps in [true, false] {
        let mut s = two_lost(timestamps);
        let reduced = s.cc.cwnd_bytes();
        // Only the repair of chunk 0 leaves (pn 10, at 40 ms).
        assert_eq!(send_one(&mut s, 40 * MS), Some((0, true)));
        let delivered = s.delivered_bytes();
        // The original pn 0 arrives after all: chunks 0-4 in order, the
        // echo its own timestamp (0 ms, before the repair's 40 ms).
        s.on_ack(at(45 * MS), &ack(&[(6, 9), (0, 4)], 5, Some(0)));
        if !timestamps {
            assert_eq!(s.undos, 0, "no echo, no undo");
            assert_eq!(s.cc.recovery_state(), RecoveryState::Recovery);
            assert_eq!(
                send_one(&mut s, 45 * MS),
                Some((5, true)),
                "the repair of chunk 5"
            );
            continue;
        }
        assert_eq!((s.undos, s.partial_undos), (1, 1));
        assert_eq!(s.cc.recovery_state(), RecoveryState::Open);
        assert!(
            s.cc.cwnd_bytes() > reduced,
            "cwnd {} not restored",
            s.cc.cwnd_bytes()
        );
        // The original and the repair the cumulative point took out of
        // flight both count as delivered (Linux counts a needless
        // retransmission when its D-SACK comes).
        assert_eq!(s.delivered_bytes(), delivered + 3000);
        // Chunk 5's loss mark was taken back: new data goes first.
        assert_eq!(send_one(&mut s, 45 * MS), Some((10, false)));
        // RACK's timer declares pn 5 lost again: a new recovery, and its
        // repair.
        let deadline = s.timer_deadline().expect("RACK's timer for pn 5");
        assert!(
            deadline.as_nanos() > 45 * MS && deadline.as_nanos() < 100 * MS,
            "{deadline:?}"
        );
        s.on_timer(deadline);
        assert_eq!(s.loss_episodes, 2, "the mark again begins a recovery");
        assert_eq!(s.cc.recovery_state(), RecoveryState::Recovery);
        assert_eq!(send_one(&mut s, deadline.as_nanos()), Some((5, true)));
    }
}

/// With a repair still in flight, Linux does not undo on such an ACK
/// (`tcp_try_undo_partial()` returns before it, holding back new loss
/// marks instead): both repairs left, the cumulative point passes only
/// the first.
#[test]
fn with_a_repair_in_flight_an_echo_from_before_it_does_not_undo() {
    let mut s = two_lost(true);
    assert_eq!(send_one(&mut s, 40 * MS), Some((0, true)));
    assert_eq!(send_one(&mut s, 40 * MS), Some((5, true)));
    s.on_ack(at(45 * MS), &ack(&[(6, 9), (0, 4)], 5, Some(0)));
    assert_eq!(s.undos, 0);
    assert_eq!(s.cc.recovery_state(), RecoveryState::Recovery);
}

/// The other half of that rule: the ACK that is held marks nothing more
/// lost, though RACK would (Linux `tcp_fastretrans_alert()` leaves before
/// `tcp_identify_packet_loss()` when `tcp_try_undo_partial()` says so).
/// Chunk 8 is missing with only chunk 9 above it, so it is not lost at
/// 40 ms; by 60 ms it is overdue by time. Without timestamps the ACK of
/// 60 ms marks it and its repair goes next; with them that ACK is held,
/// new data goes, and RACK's timer, still set, marks it.
#[test]
fn with_a_repair_in_flight_an_echo_from_before_it_holds_new_loss_marks() {
    for timestamps in [true, false] {
        let mut s = ten_sent(timestamps);
        // Chunks 0 and 5 lost (three or more SACKed above each); 8 not yet.
        s.on_ack(at(40 * MS), &ack(&[(9, 9), (6, 7), (1, 4)], 0, None));
        assert_eq!(s.loss_episodes, 1);
        assert_eq!(send_one(&mut s, 40 * MS), Some((0, true)));
        assert_eq!(send_one(&mut s, 40 * MS), Some((5, true)));
        assert_eq!(
            send_one(&mut s, 40 * MS),
            Some((10, false)),
            "8 is not lost yet"
        );
        // Chunk 0's original arrives after all; chunk 5's repair is in
        // flight.
        s.on_ack(at(60 * MS), &ack(&[(9, 9), (6, 7)], 5, Some(0)));
        assert_eq!(s.undos, 0, "no undo with a repair in flight");
        assert_eq!(s.cc.recovery_state(), RecoveryState::Recovery);
        if !timestamps {
            assert_eq!(send_one(&mut s, 60 * MS), Some((8, true)), "RACK marks 8");
            continue;
        }
        assert_eq!(send_one(&mut s, 60 * MS), Some((11, false)), "8 not marked");
        let deadline = s.timer_deadline().expect("RACK's timer for 8");
        assert!(deadline.as_nanos() <= 60 * MS, "{deadline:?}");
        s.on_timer(at(60 * MS));
        assert_eq!(
            send_one(&mut s, 60 * MS),
            Some((8, true)),
            "the timer marks 8"
        );
        assert_eq!(s.loss_episodes, 1, "within the same recovery");
    }
}

/// An echo of the repair's own timestamp shows the repair filled the
/// hole: the loss was real, nothing is undone.
#[test]
fn an_echo_of_the_repair_does_not_undo() {
    let mut s = two_lost(true);
    assert_eq!(send_one(&mut s, 40 * MS), Some((0, true)));
    s.on_ack(at(80 * MS), &ack(&[(10, 10), (6, 9), (1, 4)], 5, Some(40)));
    assert_eq!(s.undos, 0);
    assert_eq!(s.cc.recovery_state(), RecoveryState::Recovery);
}

/// Delivers `pn` (carrying `chunk`, timestamp `ts` ms) to `r`, each
/// packet acknowledged at once: the ACK it draws.
fn deliver(r: &mut Receiver, pn: u64, chunk: u64, ts: u64) -> Ack {
    let now = at(ts * MS);
    if let Some(dupack) = r.on_timestamp(now, chunk, ts as u32) {
        return dupack;
    }
    match r.on_segment(now, pn, chunk, 1500, Ecn::NotEct, TcpFlags::default()) {
        AckAction::Send(a) => a,
        other => panic!("every packet is acknowledged: {other:?}"),
    }
}

/// RFC 7323 §4.3 as Linux keeps `ts_recent`: the echo moves to a segment
/// at the point last acknowledged, not to one above a hole, and to the
/// one that fills the hole.
#[test]
fn the_echo_follows_the_segment_at_the_point_last_acknowledged() {
    let mut r = Receiver::new(AckPolicy::EveryPacket, None);
    assert_eq!(deliver(&mut r, 0, 0, 0).ts_echo_ms, Some(0));
    assert_eq!(deliver(&mut r, 1, 1, 1).ts_echo_ms, Some(1));
    // Above a hole (chunk 2 missing): the echo stays.
    assert_eq!(deliver(&mut r, 3, 3, 3).ts_echo_ms, Some(1));
    // The hole filled: its segment's timestamp is echoed.
    let a = deliver(&mut r, 2, 2, 4);
    assert_eq!((a.ts_echo_ms, a.cum_chunk), (Some(4), 4));
    // Without timestamps nothing is echoed.
    let mut plain = Receiver::new(AckPolicy::EveryPacket, None);
    match plain.on_segment(at(0), 0, 0, 1500, Ecn::NotEct, TcpFlags::default()) {
        AckAction::Send(a) => assert_eq!(a.ts_echo_ms, None),
        other => panic!("{other:?}"),
    }
}

/// PAWS (RFC 7323 §5, Linux `tcp_paws_discard()`): once a repair filled
/// the hole and set the echo, an original from more than a tick before it
/// is discarded and answered at once: with a D-SACK if its data had
/// arrived, and without its packet in the ranges when it was new data,
/// which must then be sent again. One tick older passes.
#[test]
fn paws_discards_a_segment_older_than_the_echo_by_more_than_a_tick() {
    let mut r = Receiver::new(AckPolicy::EveryPacket, None);
    for pn in 0..4 {
        deliver(&mut r, pn, pn, pn);
    }
    // Chunk 4's original (pn 4) is late; chunk 5 arrives; the repair of
    // chunk 4 (pn 10, at 50 ms) fills the hole.
    deliver(&mut r, 5, 5, 5);
    let a = deliver(&mut r, 10, 4, 50);
    assert_eq!((a.ts_echo_ms, a.cum_chunk), (Some(50), 6));
    // The original of chunk 4, sent at 4 ms: a duplicate, discarded.
    let a = deliver(&mut r, 4, 4, 4);
    assert!(a.dsack, "its data had arrived");
    assert!(!a.covers(4));
    // New data (chunk 6) sent at 6 ms, still on its way: discarded too.
    let a = deliver(&mut r, 6, 6, 6);
    assert!(!a.dsack);
    assert!(!a.covers(6));
    assert_eq!(a.cum_chunk, 6, "chunk 6 must be sent again");
    assert_eq!(
        (r.timestamps().segments, r.timestamps().paws_discards),
        (8, 2)
    );
    // One tick older than the echo is within PAWS's window.
    let a = deliver(&mut r, 11, 6, 49);
    assert!(a.covers(11));
    assert_eq!(a.cum_chunk, 7);
    assert_eq!(r.timestamps().paws_discards, 2);
}

/// Linux's RTT sample from the echo (`tcp_rtt_tsopt_us()`): taken when an
/// ACK moves the cumulative point but newly acknowledges only
/// retransmitted data, in whole milliseconds and at least one, so an echo
/// from the same millisecond does not make an RTT of zero.
#[test]
fn an_echo_gives_the_rtt_sample_of_an_ack_of_retransmitted_data_only() {
    let mut s = ten_sent(true);
    // pn 0 missing, 1-9 acknowledged at 40 ms: a 40 ms sample, pn 0 lost.
    s.on_ack(at(40 * MS), &ack(&[(1, 9)], 0, None));
    assert_eq!(s.cc.rtt().min_ns(), Some(40 * MS));
    assert_eq!(send_one(&mut s, 40 * MS), Some((0, true)));
    // The repair (pn 10, sent at 40 ms) is acknowledged within the same
    // millisecond: no clean packet, so the echo's sample, of one tick.
    s.on_ack(at(40 * MS + 500_000), &ack(&[(1, 10)], 10, Some(40)));
    assert_eq!(s.cc.rtt().min_ns(), Some(MS));
}
