//! ECN through the UDP transport on loopback (no root): with `ecn` every
//! data packet arrives ECT(0) and is counted so; without it none is; the
//! CE counts a receiver reports reach the controller, validated; counts
//! that fail validation stop the marking and the summary says so.
//!
//! The CE tests use a stand-in receiver (below) that speaks the wire
//! format and reports whatever ECN counts the test asks for: loopback
//! never marks CE (the root tests in the binary's
//! `tests/udp_ecn_netns.rs` have real marking). The stand-in also loses
//! two packets to show that a loss declaration reaches the controller with
//! its number of discontiguous ranges.

mod common;

use congestion::{
    AckContext, Algorithm, CongestionControl, DeliveryRateSampler, Instant, Snapshot,
};
use sender::schema::{Column, CWND_BYTES, DELIVERED_CE, RETRANSMITTED_PACKETS};
use std::collections::BTreeSet;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant as WallClock};
use transport::receiver::{recv, RecvConfig, RecvSummary};
use transport::sender::{send, send_with, SendConfig, SendSummary};
use transport::wire::{self, EcnCounts, Frame, Packet, CONTROL_PN, MAX_RANGES};

/// A transfer of `bytes` to a real receiver on `addr` (loopback), GSO on.
fn transfer(addr: SocketAddr, bytes: u64, ecn: bool) -> (SendSummary, RecvSummary) {
    std::thread::scope(|s| {
        let r = s.spawn(move || {
            recv(RecvConfig {
                listen: addr,
                output: None,
                window_chunks: 8192,
                idle_timeout: Duration::from_secs(5),
                accept_timeout: Duration::from_secs(10),
                stop: None,
            })
        });
        std::thread::sleep(Duration::from_millis(100));
        let sent = send(SendConfig {
            gso: true,
            ecn,
            ..common::pattern_config(addr, congestion::Config::new(Algorithm::Cubic), 21, bytes)
        })
        .expect("send");
        (sent, r.join().expect("receiver thread").expect("recv"))
    })
}

/// With ECN every data packet the receiver processed arrived ECT(0) (the
/// codepoint set by `sendmsg`'s TOS / traffic-class control message and
/// read back from `recvmmsg`'s), none CE or ECT(1); the sender's
/// validation held to the end. Without it, every one arrived Not-ECT.
fn check(addr_on: SocketAddr, addr_off: SocketAddr) {
    let (s, r) = transfer(addr_on, 5_000_000, true);
    assert_eq!(r.bytes, 5_000_000);
    assert!(r.data_packets >= 5_000_000 / wire::CHUNK as u64, "{r:?}");
    assert_eq!(r.ecn_ect0, r.data_packets, "{r:?}");
    assert_eq!((r.ecn_not_ect, r.ecn_ect1, r.ecn_ce), (0, 0, 0), "{r:?}");
    assert_eq!(s.ecn, "capable", "{s:?}");
    assert_eq!(s.ce_packets, 0, "{s:?}");
    assert_eq!(s.ce_fraction, Some(0.0), "{s:?}");

    let (s, r) = transfer(addr_off, 2_000_000, false);
    assert_eq!(r.bytes, 2_000_000);
    assert_eq!(r.ecn_not_ect, r.data_packets, "{r:?}");
    assert_eq!((r.ecn_ect0, r.ecn_ect1, r.ecn_ce), (0, 0, 0), "{r:?}");
    assert_eq!(s.ecn, "off");
    assert_eq!((s.ce_packets, s.ce_fraction), (0, None));
}

#[test]
fn ipv4_loopback_carries_ect0_on_every_data_packet_only_when_asked() {
    check(
        SocketAddr::from(([127, 0, 0, 1], 47_711)),
        SocketAddr::from(([127, 0, 0, 1], 47_712)),
    );
}

#[test]
fn ipv6_loopback_carries_ect0_on_every_data_packet_only_when_asked() {
    if UdpSocket::bind("[::1]:0").is_err() {
        eprintln!("skipped: no IPv6 loopback here");
        return;
    }
    check(
        "[::1]:47713".parse().unwrap(),
        "[::1]:47714".parse().unwrap(),
    );
}

/// What the stand-in receiver reports in its ACKs.
#[derive(Clone, Copy)]
enum Report {
    /// ECN ACKs; every `n`th data packet counted CE, the rest ECT(0).
    CeEvery(u64),
    /// Plain ACKs, no counts (a receiver that predates ECN).
    NoCounts,
    /// ECN ACKs whose counts never rise (a path that clears the marks,
    /// seen by a receiver that reports anyway).
    Bleached,
    /// Counts ECT(0) for every packet, but packets 20 and 22 never
    /// arrive, and arrivals 18 to 28 are not acknowledged: the ACK for 29
    /// is the first to show the two holes, which loss detection then
    /// declares lost together, as two ranges.
    LoseTwoRanges,
}

/// The packets [`Report::LoseTwoRanges`] loses, and those it holds ACKs for.
const LOST: [u64; 2] = [20, 22];
const HELD: std::ops::RangeInclusive<u64> = 18..=28;

/// A receiver that accepts one connection, acknowledges every data packet
/// at once (up to four ranges, highest first), reports ECN counts as
/// `report` says, and answers FIN with success (it checks nothing: the
/// transfer's integrity is the real receiver's business). Returns the CE
/// count of its last ACK. Gives up after 30 s.
fn stand_in(sock: UdpSocket, report: Report) -> u64 {
    let deadline = WallClock::now() + Duration::from_secs(30);
    sock.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let mut buf = [0u8; 2048];
    let mut out = Vec::new();
    let mut pns: Vec<(u64, u64)> = Vec::new(); // ascending, disjoint
    let mut chunks = BTreeSet::new();
    let mut cum = 0u64;
    let mut counts = EcnCounts::default();
    let mut data = 0u64;
    let mut finished: Option<WallClock> = None;
    let mut conn = None;
    while WallClock::now() < deadline
        && finished.is_none_or(|t| t.elapsed() < Duration::from_millis(300))
    {
        let Ok((n, from)) = sock.recv_from(&mut buf) else {
            continue;
        };
        let Ok(p) = wire::decode(&buf[..n]) else {
            continue;
        };
        let reply = |frame, out: &mut Vec<u8>| {
            wire::encode(
                &Packet {
                    conn_id: p.conn_id,
                    pn: CONTROL_PN,
                    frame,
                },
                out,
            );
            sock.send_to(out, from).unwrap();
        };
        match p.frame {
            Frame::Hello { .. } => {
                conn = Some(p.conn_id);
                reply(
                    Frame::HelloAck {
                        max_chunks: 1 << 40,
                    },
                    &mut out,
                );
            }
            Frame::Data { chunk, .. } if conn == Some(p.conn_id) => {
                let losing = matches!(report, Report::LoseTwoRanges);
                if losing && LOST.contains(&p.pn) {
                    continue;
                }
                data += 1;
                match report {
                    Report::CeEvery(k) if data % k == 0 => counts.ce += 1,
                    Report::CeEvery(_) | Report::LoseTwoRanges => counts.ect0 += 1,
                    _ => {}
                }
                chunks.insert(chunk);
                while chunks.remove(&cum) {
                    cum += 1;
                }
                let i = pns.partition_point(|&(_, hi)| hi + 1 < p.pn);
                if i < pns.len() && pns[i].0 <= p.pn + 1 {
                    pns[i] = (pns[i].0.min(p.pn), pns[i].1.max(p.pn));
                    if i + 1 < pns.len() && pns[i + 1].0 <= pns[i].1 + 1 {
                        pns[i].1 = pns[i + 1].1;
                        pns.remove(i + 1);
                    }
                } else {
                    pns.insert(i, (p.pn, p.pn));
                }
                if losing && HELD.contains(&p.pn) {
                    continue;
                }
                let mut ranges = [(0, 0); MAX_RANGES];
                let len = pns.len().min(MAX_RANGES);
                for (r, pr) in ranges.iter_mut().zip(pns.iter().rev()) {
                    *r = *pr;
                }
                let ecn = match report {
                    Report::NoCounts => None,
                    _ => Some(counts),
                };
                reply(
                    Frame::Ack {
                        ranges,
                        len: len as u8,
                        ack_delay_us: 0,
                        dsack: false,
                        cum_chunk: cum,
                        max_chunks: 1 << 40,
                        ecn,
                    },
                    &mut out,
                );
            }
            Frame::Fin { total, .. } if conn == Some(p.conn_id) => {
                finished.get_or_insert_with(WallClock::now);
                reply(
                    Frame::Done {
                        ok: true,
                        received: total,
                    },
                    &mut out,
                );
            }
            _ => {}
        }
    }
    counts.ce
}

/// Runs `send_with` against the stand-in on 127.0.0.1:`port`.
fn against_stand_in(
    port: u16,
    report: Report,
    cfg: impl FnOnce(SocketAddr) -> SendConfig,
    custom: Option<sender::CustomCc>,
) -> (SendSummary, u64) {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let sock = UdpSocket::bind(addr).unwrap();
    std::thread::scope(|s| {
        let r = s.spawn(move || stand_in(sock, report));
        let sent = send_with(cfg(addr), custom).expect("send");
        (sent, r.join().expect("stand-in thread"))
    })
}

/// The built-in CUBIC, whatever algorithm the flow's configuration names.
fn cubic(cfg: &congestion::Config) -> Box<dyn CongestionControl + Send + Sync> {
    let mut cfg = *cfg;
    cfg.algorithm = congestion::Algorithm::Cubic;
    congestion::builtin(&cfg, Instant::ZERO)
}

/// Cubic's window with the CE marks it was given counted.
struct CountingCubic {
    inner: Box<dyn CongestionControl + Send + Sync>,
    ce_calls: Arc<AtomicU64>,
    ce_marks: Arc<AtomicU64>,
    ce_in_acks: Arc<AtomicU64>,
}

impl CongestionControl for CountingCubic {
    fn on_ack(&mut self, ack: &AckContext<'_>, sampler: &mut DeliveryRateSampler) {
        self.ce_in_acks.fetch_add(ack.ce_packets, Ordering::Relaxed);
        self.inner.on_ack(ack, sampler)
    }
    fn on_packets_lost(&mut self, now: Instant, lost: u64, inflight: u64, new_episode: bool) {
        self.inner.on_packets_lost(now, lost, inflight, new_episode)
    }
    fn on_congestion_experienced(
        &mut self,
        now: Instant,
        ce_packets: u64,
        bytes_in_flight: u64,
        new_episode: bool,
    ) -> bool {
        self.ce_calls.fetch_add(1, Ordering::Relaxed);
        self.ce_marks.fetch_add(ce_packets, Ordering::Relaxed);
        self.inner
            .on_congestion_experienced(now, ce_packets, bytes_in_flight, new_episode)
    }
    fn on_retransmission_timeout(&mut self, now: Instant, inflight: u64) {
        self.inner.on_retransmission_timeout(now, inflight)
    }
    fn on_ack_begin(&mut self) {
        self.inner.on_ack_begin()
    }
    fn on_mss_change(&mut self, mss: u64) {
        self.inner.on_mss_change(mss)
    }
    fn cwnd_bytes(&self) -> u64 {
        self.inner.cwnd_bytes()
    }
    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        self.inner.pacing_rate_bytes_per_sec()
    }
    fn send_quantum_bytes(&self) -> u64 {
        self.inner.send_quantum_bytes()
    }
    fn snapshot(&self) -> Snapshot {
        self.inner.snapshot()
    }
    fn name(&self) -> &str {
        "counting-cubic"
    }
}

/// Every CE mark the receiver reports reaches the controller, once: the
/// sender's validated count equals the stand-in's final CE count, and the
/// controller's `on_congestion_experienced` and `AckContext::ce_packets`
/// saw that many.
#[test]
fn reported_ce_marks_reach_the_controller_exactly_once() {
    let (calls, marks, in_acks) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let (c, m, a) = (calls.clone(), marks.clone(), in_acks.clone());
    let custom = sender::CustomCc::new("counting-cubic", move |cfg, _| {
        Box::new(CountingCubic {
            inner: cubic(cfg),
            ce_calls: c.clone(),
            ce_marks: m.clone(),
            ce_in_acks: a.clone(),
        }) as Box<dyn CongestionControl + Send + Sync>
    });
    let (s, reported) = against_stand_in(
        47_721,
        Report::CeEvery(10),
        |addr| SendConfig {
            ecn: true,
            ..common::pattern_config(addr, congestion::Config::default(), 4, 3_000_000)
        },
        Some(custom),
    );
    assert_eq!(s.ecn, "capable", "{s:?}");
    assert!(reported >= 200, "{reported} CE reported");
    assert_eq!(s.ce_packets, reported, "{s:?}");
    assert_eq!(marks.load(Ordering::Relaxed), reported);
    assert_eq!(in_acks.load(Ordering::Relaxed), reported);
    assert!(calls.load(Ordering::Relaxed) > 0);
    let f = s.ce_fraction.expect("a CE fraction");
    assert!((0.09..=0.11).contains(&f), "{f}");
}

/// A receiver that reports no counts (one that predates ECN, or a path
/// that clears every mark so the receiver never sees one) fails
/// validation at its first ACK: marking stops, the transfer completes,
/// and the summary says why. So does one whose counts fall behind the
/// packets acknowledged (a path that clears some marks). A sender without
/// ECN ignores whatever comes back.
#[test]
fn counts_that_fail_validation_stop_marking_and_the_summary_says_why() {
    for (port, report, ecn, want) in [
        (
            47_722,
            Report::NoCounts,
            true,
            "failed: ACKs of ECT(0) packets carry no ECN counts",
        ),
        (
            47_723,
            Report::Bleached,
            true,
            "failed: the ECN counts failed validation",
        ),
        (47_724, Report::CeEvery(2), false, "off"),
    ] {
        let (s, _) = against_stand_in(
            port,
            report,
            |addr| SendConfig {
                ecn,
                ..common::pattern_config(
                    addr,
                    congestion::Config::new(Algorithm::Cubic),
                    4,
                    500_000,
                )
            },
            None,
        );
        assert_eq!(s.bytes, 500_000);
        assert!(s.ecn.starts_with(want), "{}: {s:?}", s.ecn);
        assert_eq!(s.ce_packets, 0, "{s:?}");
    }
}

/// CUBIC answers CE as a loss: with every 10th packet reported CE its
/// window is cut while nothing has been retransmitted, which without CE
/// (every packet ECT(0)) never happens on loopback.
#[test]
fn cubic_cuts_its_window_on_reported_ce_and_not_without() {
    let col = |h: &csv::StringRecord, c: Column| h.iter().position(|x| x == c.name).unwrap();
    for (port, report, want_cut) in [
        (47_725, Report::CeEvery(10), true),
        (47_726, Report::CeEvery(u64::MAX), false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("send.csv");
        let (s, _) = against_stand_in(
            port,
            report,
            |addr| SendConfig {
                ecn: true,
                log: Some(log.clone()),
                interval: Duration::from_millis(1),
                ..common::pattern_config(
                    addr,
                    congestion::Config::new(Algorithm::Cubic),
                    4,
                    3_000_000,
                )
            },
            None,
        );
        assert_eq!(s.ecn, "capable", "{s:?}");
        let mut rd = csv::Reader::from_path(&log).unwrap();
        let h = rd.headers().unwrap().clone();
        let (cw, rx) = (col(&h, CWND_BYTES), col(&h, RETRANSMITTED_PACKETS));
        let ce_col = col(&h, DELIVERED_CE);
        let mut cut = false;
        let mut prev: Option<u64> = None;
        let (mut retransmitted, mut ce_logged) = (false, 0u64);
        for r in rd.records() {
            let r = r.unwrap();
            // flows.csv's delivered_ce: the marks given to the controller
            // so far, never decreasing.
            let ce: u64 = r[ce_col].parse().unwrap();
            assert!(ce >= ce_logged, "{r:?}");
            ce_logged = ce;
            retransmitted |= r[rx].parse::<u64>().unwrap() > 0;
            if retransmitted {
                continue;
            }
            let w: u64 = r[cw].parse().unwrap();
            cut |= prev.is_some_and(|p| w < p);
            prev = Some(w);
        }
        assert!(ce_logged <= s.ce_packets, "{ce_logged} logged: {s:?}");
        assert_eq!(ce_logged > 0, want_cut, "{ce_logged} logged: {s:?}");
        assert_eq!(cut, want_cut, "{s:?}");
        assert_eq!(s.ce_packets > 0, want_cut, "{s:?}");
    }
}

/// Cubic that records the largest number of lost ranges one loss
/// declaration reported.
struct RangeCountingCubic {
    inner: Box<dyn CongestionControl + Send + Sync>,
    most_ranges: Arc<AtomicU64>,
}

impl CongestionControl for RangeCountingCubic {
    fn on_ack(&mut self, ack: &AckContext<'_>, sampler: &mut DeliveryRateSampler) {
        self.inner.on_ack(ack, sampler)
    }
    fn on_loss(&mut self, loss: &congestion::LossContext<'_>) {
        self.most_ranges
            .fetch_max(u64::from(loss.lost_ranges), Ordering::Relaxed);
        self.inner.on_loss(loss)
    }
    fn on_packets_lost(&mut self, now: Instant, lost: u64, inflight: u64, new_episode: bool) {
        self.inner.on_packets_lost(now, lost, inflight, new_episode)
    }
    fn on_retransmission_timeout(&mut self, now: Instant, inflight: u64) {
        self.inner.on_retransmission_timeout(now, inflight)
    }
    fn on_mss_change(&mut self, mss: u64) {
        self.inner.on_mss_change(mss)
    }
    fn cwnd_bytes(&self) -> u64 {
        self.inner.cwnd_bytes()
    }
    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        self.inner.pacing_rate_bytes_per_sec()
    }
    fn send_quantum_bytes(&self) -> u64 {
        self.inner.send_quantum_bytes()
    }
    fn snapshot(&self) -> Snapshot {
        self.inner.snapshot()
    }
}

/// The transport's loss detection (the shared sender's) tells the
/// controller how many discontiguous packet-number ranges a loss
/// declaration covers: packets 20 and 22 lost and first seen missing in
/// the same ACK are one declaration of two ranges (`LossContext::lost_ranges`,
/// which BBRv3's Startup exit counts).
#[test]
fn two_holes_declared_lost_together_reach_the_controller_as_two_ranges() {
    let most = Arc::new(AtomicU64::new(0));
    let m = most.clone();
    let custom = sender::CustomCc::new("range-counting-cubic", move |cfg, _| {
        Box::new(RangeCountingCubic {
            inner: cubic(cfg),
            most_ranges: m.clone(),
        }) as Box<dyn CongestionControl + Send + Sync>
    });
    let (s, _) = against_stand_in(
        47_727,
        Report::LoseTwoRanges,
        |addr| SendConfig {
            ecn: true,
            ..common::pattern_config(addr, congestion::Config::default(), 4, 500_000)
        },
        Some(custom),
    );
    assert_eq!(s.bytes, 500_000);
    assert!(s.retransmissions >= 2, "{s:?}");
    assert!(most.load(Ordering::Relaxed) >= 2, "{s:?}");
    assert_eq!(s.ecn, "capable", "{s:?}");
}
