//! Linux's TSO deferral (`tcp_tso_should_defer()`) in the TCP sender: a
//! window with room for only part of the next TSO packet waits for the
//! ACK about to arrive, and each of the rule's exits sends at once.

use congestion::{
    AckContext, Config, CongestionControl, DeliveryRateSampler, Instant, LossContext, Snapshot,
};
use sender::{Ack, CustomCc, Pacing, SendDecision, Sender, SenderConfig, Timeout};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const MSS: u64 = 1000;
const MS: u64 = 1_000_000;

fn at(ns: u64) -> Instant {
    Instant::from_nanos(ns)
}

/// What the test sets and reads of its controller: the window and the
/// send quantum (segments), and how often the sender said it held data
/// for want of window.
#[derive(Default)]
struct Knobs {
    cwnd: AtomicU64,
    quantum: AtomicU64,
    held: AtomicU64,
}

/// A controller with the test's window and quantum and a pacing rate too
/// fast to matter.
struct Fixed(Arc<Knobs>);

impl CongestionControl for Fixed {
    fn on_ack(&mut self, _: &AckContext<'_>, _: &mut DeliveryRateSampler) {}
    fn on_loss(&mut self, _: &LossContext<'_>) {}
    fn on_packets_lost(&mut self, _: Instant, _: u64, _: u64, _: bool) {}
    fn on_retransmission_timeout(&mut self, _: Instant, _: u64) {}
    fn on_mss_change(&mut self, _: u64) {}
    fn on_held_by_cwnd(&mut self, _: Instant, _: u64) {
        self.0.held.fetch_add(1, Ordering::Relaxed);
    }
    fn cwnd_bytes(&self) -> u64 {
        self.0.cwnd.load(Ordering::Relaxed) * MSS
    }
    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        u64::MAX / 4
    }
    fn send_quantum_bytes(&self) -> u64 {
        self.0.quantum.load(Ordering::Relaxed) * MSS
    }
    fn snapshot(&self) -> Snapshot {
        Snapshot::default()
    }
}

/// A bulk TCP sender of `MSS`-byte segments, window `cwnd` and quantum
/// `quantum` segments, deferring when `defer`.
fn sender(pacing: Pacing, defer: bool, cwnd: u64, quantum: u64) -> (Sender, Arc<Knobs>) {
    sender_of(pacing, defer, cwnd, quantum, None)
}

/// [`sender`] of a flow of `size_bytes` (`None`: unending).
fn sender_of(
    pacing: Pacing,
    defer: bool,
    cwnd: u64,
    quantum: u64,
    size_bytes: Option<u64>,
) -> (Sender, Arc<Knobs>) {
    let knobs = Arc::new(Knobs::default());
    knobs.cwnd.store(cwnd, Ordering::Relaxed);
    knobs.quantum.store(quantum, Ordering::Relaxed);
    let k2 = knobs.clone();
    let mut cc = Config::default();
    cc.mss_bytes = MSS;
    let mut f = SenderConfig::bulk(cc);
    f.custom_cc = Some(CustomCc::new("fixed", move |_, _| {
        Box::new(Fixed(k2.clone())) as Box<dyn CongestionControl + Send + Sync>
    }));
    f.tail_loss_probe = false;
    f.timeout = Timeout::Rto;
    f.pacing = pacing;
    f.tso_defer = defer;
    f.size_bytes = size_bytes;
    (Sender::new(&f, 1), knobs)
}

/// Sends what the sender lets out at `t` (the quantum pacer's
/// nanosecond gaps at this rate waited out); the chunks, and the
/// decision that stopped it.
fn send_all(s: &mut Sender, mut t: u64) -> (Vec<u64>, SendDecision) {
    let mut chunks = Vec::new();
    for _ in 0..200 {
        match s.poll(at(t)) {
            SendDecision::Send {
                chunk,
                bytes,
                retransmission,
            } => {
                s.on_sent(at(t), chunk, bytes, retransmission);
                chunks.push(chunk);
            }
            SendDecision::PaceUntil(next) if next.as_nanos() <= t + 1_000 => t = next.as_nanos(),
            other => return (chunks, other),
        }
    }
    panic!("the sender never stopped");
}

/// A cumulative ACK of every packet up to `pn` (chunks = packets here:
/// nothing is lost).
fn ack_to(pn: u64) -> Ack {
    let mut a = Ack {
        len: 1,
        cum_chunk: pn + 1,
        ..Default::default()
    };
    a.ranges[0] = (0, pn);
    a
}

/// The ACK clock of one window: ten segments at 0 (skbs of the
/// three-segment goal: 0-2, 3-5, 6-8, and the front of 9-11), then their
/// ACKs one by one from 10 ms on, 0.1 ms apart. With deferral the first
/// ACK sends segment 10 (the last send was 10 ms before: Linux defers only
/// within 1 ms of it), the second the skb's last, 11 (a one-segment skb is
/// never deferred); then the sender waits until three segments of room
/// let a whole skb out. Without it, each ACK sends one segment.
#[test]
fn an_ack_clocked_sender_waits_to_send_whole_tso_packets() {
    for pacing in [Pacing::Off, Pacing::Quantum] {
        let mut got = Vec::new();
        for defer in [true, false] {
            let (mut s, knobs) = sender(pacing, defer, 10, 3);
            assert_eq!(send_all(&mut s, 0).0, (0..10).collect::<Vec<_>>());
            let mut sends = Vec::new();
            for k in 0..8 {
                let t = 10 * MS + k * MS / 10;
                s.on_ack(at(t), &ack_to(k));
                let (chunks, stop) = send_all(&mut s, t);
                assert_eq!(stop, SendDecision::CwndLimited, "{pacing:?} ack {k}");
                sends.push(chunks.len());
            }
            got.push((sends, knobs.held.load(Ordering::Relaxed)));
        }
        // Deferring: 1, 1, wait, wait, 3, wait, wait, 3; each wait tells
        // the controller the window held the data back.
        assert_eq!(got[0], (vec![1, 1, 0, 0, 3, 0, 0, 3], 4), "{pacing:?}");
        assert_eq!(got[1], (vec![1; 8], 0), "{pacing:?}");
    }
}

/// An exactly paced sender has no TSO packets: it never defers, even
/// when told to.
#[test]
fn an_exactly_paced_sender_never_defers() {
    let (mut s, knobs) = sender(Pacing::Exact, true, 10, 3);
    let (mut t, mut sent) = (0, 0);
    for _ in 0..100 {
        match s.poll(at(t)) {
            SendDecision::Send { chunk, bytes, .. } => {
                s.on_sent(at(t), chunk, bytes, false);
                sent += 1;
            }
            SendDecision::PaceUntil(next) => t = next.as_nanos(),
            _ => break,
        }
    }
    assert_eq!(sent, 10);
    for k in 0..4 {
        let t = 10 * MS + k * MS / 10;
        s.on_ack(at(t), &ack_to(k));
        assert!(
            matches!(s.poll(at(t)), SendDecision::Send { .. }),
            "ack {k}"
        );
        let (chunks, _) = send_all(&mut s, t);
        assert_eq!(chunks.len(), 1, "ack {k}");
    }
    assert_eq!(knobs.held.load(Ordering::Relaxed), 0);
}

/// A sender with a two-segment goal and a window of ten: ten segments
/// (five whole skbs) at 0, then two ACKs at 10 ms, which send one skb.
/// The next ACK at `t`, freeing one segment, finds the next skb short of
/// room.
fn one_segment_of_room_at(t: u64) -> (Vec<u64>, SendDecision) {
    let (mut s, _) = sender(Pacing::Off, true, 10, 2);
    assert_eq!(send_all(&mut s, 0).0.len(), 10);
    s.on_ack(at(10 * MS), &ack_to(1));
    assert_eq!(send_all(&mut s, 10 * MS).0, vec![10, 11]);
    s.on_ack(at(t), &ack_to(2));
    send_all(&mut s, t)
}

/// Each exit of the rule sends the part at once.
#[test]
fn the_rules_exits_send_at_once() {
    // Within 1 ms of the last departure it waits; 1.5 ms after, it sends.
    assert_eq!(
        one_segment_of_room_at(10 * MS + MS / 2),
        (vec![], SendDecision::CwndLimited)
    );
    assert_eq!(one_segment_of_room_at(11 * MS + MS / 2).0, vec![12]);

    // The next ACK not due soon: everything out was acknowledged at
    // 10 ms and the window sent again, so the oldest segment out left
    // 0.1 ms ago and its ACK is 9.9 ms away.
    let (mut s, _) = sender(Pacing::Off, true, 10, 2);
    send_all(&mut s, 0);
    s.on_ack(at(10 * MS), &ack_to(9));
    assert_eq!(send_all(&mut s, 10 * MS).0.len(), 10);
    s.on_ack(at(10 * MS + MS / 10), &ack_to(10));
    assert_eq!(send_all(&mut s, 10 * MS + MS / 10).0, vec![20]);

    // A third of the window free: a goal of 6 segments, a window of 12
    // (two skbs at 0), ACKs 0.5 ms later (RTT 0.5 ms, within 1 ms of the
    // departure): room for 4 (= 12 / 3) leaves, room for 3 waits.
    for (acked, want) in [(4, 4), (3, 0)] {
        let (mut s, _) = sender(Pacing::Off, true, 12, 6);
        assert_eq!(send_all(&mut s, 0).0.len(), 12);
        s.on_ack(at(MS / 2), &ack_to(acked - 1));
        assert_eq!(send_all(&mut s, MS / 2).0.len(), want, "room {acked}");
    }
}

/// In recovery Linux never defers (`icsk_ca_state` ≥ `TCP_CA_Recovery`):
/// the same ACK clock that waits when nothing was lost sends each freed
/// segment once a loss has begun a recovery episode.
#[test]
fn a_sender_in_recovery_sends_at_once() {
    let sack = |hi: u64| {
        let mut a = Ack {
            len: 1,
            ..Default::default()
        };
        a.ranges[0] = (1, hi);
        a
    };
    let (mut s, _) = sender(Pacing::Off, true, 10, 2);
    send_all(&mut s, 0);
    // Segment 0 lost: four above it are selectively acknowledged.
    s.on_ack(at(10 * MS), &sack(4));
    assert_eq!(s.cc.recovery_state(), congestion::RecoveryState::Recovery);
    let (first, _) = send_all(&mut s, 10 * MS);
    assert_eq!(first.first(), Some(&0), "the repair first: {first:?}");
    s.on_ack(at(10 * MS + MS / 10), &sack(5));
    let (next, stop) = send_all(&mut s, 10 * MS + MS / 10);
    assert_eq!((next.len(), stop), (1, SendDecision::CwndLimited));
}

/// The flow's last segments (its FIN) leave when they fit, though fewer
/// than the goal; the receiver's window short of the packet holds it as
/// the congestion window's does, as window-limited.
#[test]
fn the_flows_end_leaves_and_the_receivers_window_holds() {
    let (mut s, _) = sender_of(Pacing::Off, true, 10, 4, Some(13 * MSS));
    assert_eq!(send_all(&mut s, 0).0.len(), 10);
    s.on_ack(at(10 * MS), &ack_to(0));
    assert_eq!(send_all(&mut s, 10 * MS).0, vec![10]);
    // Two segments of room, two left in the flow: they go.
    s.on_ack(at(10 * MS + MS / 10), &ack_to(2));
    assert_eq!(send_all(&mut s, 10 * MS + MS / 10).0, vec![11, 12]);

    // The receiver's window with room for two segments of a four-segment
    // goal, the congestion window with room for eleven.
    let (mut s, knobs) = sender(Pacing::Off, true, 30, 4);
    assert_eq!(send_all(&mut s, 0).0.len(), 30);
    knobs.cwnd.store(40, Ordering::Relaxed);
    let with_window = |pn: u64, rwnd: u32| Ack {
        rwnd_chunks: Some(rwnd),
        ..ack_to(pn)
    };
    // Skbs of four: 28 and 29 went out at 0, 30 leaves on the first ACK
    // (the last send was 10 ms before), 31, the skb's last, alone on the
    // second; the next skb, 32-35, finds the receiver's window ending
    // at 33 (cumulative point 2 + 31).
    s.on_ack(at(10 * MS), &with_window(0, 30));
    assert_eq!(send_all(&mut s, 10 * MS).0, vec![30]);
    let t = 10 * MS + MS / 10;
    s.on_ack(at(t), &with_window(1, 31));
    assert_eq!(send_all(&mut s, t), (vec![31], SendDecision::FlowBlocked));
    assert_eq!(
        knobs.held.load(Ordering::Relaxed),
        0,
        "not the cwnd's doing"
    );
    // Window-limited time runs on from the wait.
    assert_eq!(
        s.rwnd_limited_ns(at(t + MS / 10)) - s.rwnd_limited_ns(at(t)),
        MS / 10
    );
}
