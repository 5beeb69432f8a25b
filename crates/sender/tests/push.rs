//! TCP's PSH flag as the sender marks it: the last segment of each whole
//! send unit of the size goal, none on a unit the window cut short, the
//! end of each application write, the flow's last segment; never for
//! QUIC.

use congestion::{
    AckContext, Config, CongestionControl, DeliveryRateSampler, Instant, LossContext, Snapshot,
};
use sender::{App, CustomCc, Pacing, SendDecision, Sender, SenderConfig, Timeout};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const MSS: u64 = 1000;

fn at(ns: u64) -> Instant {
    Instant::from_nanos(ns)
}

/// A controller whose window (in segments) the test sets, with a send
/// quantum of three segments and a pacing rate too fast to matter.
struct Fixed(Arc<AtomicU64>);

impl CongestionControl for Fixed {
    fn on_ack(&mut self, _: &AckContext<'_>, _: &mut DeliveryRateSampler) {}
    fn on_loss(&mut self, _: &LossContext<'_>) {}
    fn on_packets_lost(&mut self, _: Instant, _: u64, _: u64, _: bool) {}
    fn on_retransmission_timeout(&mut self, _: Instant, _: u64) {}
    fn on_mss_change(&mut self, _: u64) {}
    fn cwnd_bytes(&self) -> u64 {
        self.0.load(Ordering::Relaxed) * MSS
    }
    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        u64::MAX / 4
    }
    fn send_quantum_bytes(&self) -> u64 {
        3 * MSS
    }
    fn snapshot(&self) -> Snapshot {
        Snapshot::default()
    }
}

/// A sender of `MSS`-byte segments with window `cwnd` segments.
fn sender(
    app: App,
    size_bytes: Option<u64>,
    timeout: Timeout,
    cwnd: u64,
) -> (Sender, Arc<AtomicU64>) {
    sender_paced(app, size_bytes, timeout, cwnd, Pacing::Exact)
}

/// [`sender`] with its pacer.
fn sender_paced(
    app: App,
    size_bytes: Option<u64>,
    timeout: Timeout,
    cwnd: u64,
    pacing: Pacing,
) -> (Sender, Arc<AtomicU64>) {
    let window = Arc::new(AtomicU64::new(cwnd));
    let w2 = window.clone();
    let mut cc = Config::default();
    cc.mss_bytes = MSS;
    let mut f = SenderConfig::bulk(cc);
    f.custom_cc = Some(CustomCc::new("fixed", move |_, _| {
        Box::new(Fixed(w2.clone())) as Box<dyn CongestionControl + Send + Sync>
    }));
    f.tail_loss_probe = false;
    f.app = app;
    f.size_bytes = size_bytes;
    f.timeout = timeout;
    f.pacing = pacing;
    (Sender::new(&f, 1), window)
}

/// Sends from `t` until the sender stops (the pacer's nanosecond gaps
/// are waited out); the chunks sent with PSH, and how many were sent.
fn send_all(s: &mut Sender, mut t: u64) -> (Vec<u64>, u64) {
    let (mut pushed, mut sent) = (Vec::new(), 0);
    for _ in 0..1000 {
        match s.poll(at(t)) {
            SendDecision::Send {
                chunk,
                bytes,
                retransmission,
            } => {
                assert_eq!(u64::from(bytes), MSS);
                if s.on_sent_ecn(at(t), chunk, bytes, retransmission).psh {
                    pushed.push(chunk);
                }
                sent += 1;
            }
            SendDecision::PaceUntil(next) if next.as_nanos() < t + 100 => t = next.as_nanos(),
            _ => return (pushed, sent),
        }
    }
    panic!("the sender never stopped");
}

/// An exactly paced bulk TCP sender pushes every third segment, the end of each skb of
/// the three-segment quantum; when the window lets out only the front of
/// an skb, that front carries no PSH and the rest, sent later, ends with it.
#[test]
fn a_tcp_sender_pushes_the_last_segment_of_each_skb() {
    let (mut s, window) = sender(App::Bulk, None, Timeout::Rto, 10);
    // Chunks 0-9: skbs 0-2, 3-5, 6-8, and the front of 9-11.
    assert_eq!(send_all(&mut s, 0), (vec![2, 5, 8], 10));
    // Two more segments of window: 10 and 11 finish the skb.
    window.store(12, Ordering::Relaxed);
    assert_eq!(send_all(&mut s, 1_000), (vec![11], 2));
    window.store(18, Ordering::Relaxed);
    assert_eq!(send_all(&mut s, 2_000), (vec![14, 17], 6));
}

/// A sender of bursts (quantum-paced or unpaced) pushes each whole unit
/// of the goal it sends at one instant; a unit the window cuts short
/// carries no PSH (the front of a kernel skb, `tso_fragment()`), and the
/// next instant starts a new one.
#[test]
fn a_bursting_tcp_sender_pushes_whole_units_only() {
    for pacing in [Pacing::Off, Pacing::Quantum] {
        let (mut s, window) = sender_paced(App::Bulk, None, Timeout::Rto, 10, pacing);
        // The pacing rate is too fast for the pacer's gaps to matter.
        // Units 0-2, 3-5, 6-8; chunk 9 alone, cut by the window.
        assert_eq!(send_all(&mut s, 0), (vec![2, 5, 8], 10), "{pacing:?}");
        // 10-12: a whole unit (an exactly paced sender, whose unit 9-11
        // runs on, would push 11).
        window.store(13, Ordering::Relaxed);
        assert_eq!(send_all(&mut s, 10_000_000), (vec![12], 3), "{pacing:?}");
        // Lone segments cut by the window, one after another: none.
        for (w, t) in [(14, 20), (15, 30)] {
            window.store(w, Ordering::Relaxed);
            assert_eq!(send_all(&mut s, t * 1_000_000), (vec![], 1), "{pacing:?}");
        }
        // 15-17 whole, 18 cut.
        window.store(19, Ordering::Relaxed);
        assert_eq!(send_all(&mut s, 40_000_000), (vec![17], 4), "{pacing:?}");
    }
}

/// A write ends an skb: each 4-segment chunk of the application is one
/// skb of three and one of one, both pushed, and the next write starts a
/// new skb. A finite flow's last segment is pushed.
#[test]
fn the_end_of_a_write_and_of_the_flow_are_pushed() {
    let app = App::Chunks {
        bytes: 4 * MSS,
        every_ns: 1_000_000,
    };
    let (mut s, _) = sender(app, None, Timeout::Rto, 100);
    assert_eq!(send_all(&mut s, 0), (vec![2, 3], 4));
    assert_eq!(send_all(&mut s, 1_000_000), (vec![6, 7], 4));

    let (mut s, _) = sender(App::Bulk, Some(5 * MSS), Timeout::Rto, 100);
    assert_eq!(send_all(&mut s, 0), (vec![2, 4], 5));
}

/// QUIC has no PSH: a sender with QUIC's probe timeout marks none.
#[test]
fn a_quic_sender_pushes_nothing() {
    let pto = Timeout::Pto {
        max_ack_delay_ns: 25_000_000,
    };
    let (mut s, _) = sender_paced(App::Bulk, None, pto, 10, Pacing::Off);
    assert_eq!(send_all(&mut s, 0), (vec![], 10));
    // Nor does a TCP sender told its receiver ignores PSH.
    let (mut s, _) = sender(App::Bulk, None, Timeout::Rto, 10);
    s.set_marks_push(false);
    assert_eq!(send_all(&mut s, 0), (vec![], 10));
}
