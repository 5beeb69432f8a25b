//! What the controller tells an algorithm about losses and CE marks: the
//! send-time state BBRv3's per-packet loss bound needs
//! (draft-ietf-ccwg-bbr-06, `BBRHandleLostPacket()`), the number of lost
//! ranges, and the CE and packet counts of each ACK.

mod support;

use congestion::{
    AckContext, AckEvent, AckedPacket, Config, CongestionControl, Controller, DeliveryRateSampler,
    Instant, LossContext, LostPacket, Mode, Snapshot,
};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::*;

/// One `on_loss` call: (lost bytes, ranges, total lost, delivered, new
/// episode, each packet's (tx_in_flight, lost at send)).
type LossSeen = (u64, u32, u64, u64, bool, Vec<(u64, u64)>);

#[derive(Default)]
struct Seen {
    losses: Vec<LossSeen>,
    acks: Vec<(u64, u64)>,
}

struct Recorder(Arc<Mutex<Seen>>);

impl CongestionControl for Recorder {
    fn on_ack(&mut self, ack: &AckContext<'_>, _: &mut DeliveryRateSampler) {
        self.0
            .lock()
            .unwrap()
            .acks
            .push((ack.acked_packets, ack.ce_packets));
    }
    fn on_loss(&mut self, l: &LossContext<'_>) {
        let per_packet = l
            .lost
            .iter()
            .map(|p| (p.state.bytes_in_flight, p.state.lost_bytes))
            .collect();
        self.0.lock().unwrap().losses.push((
            l.lost_bytes,
            l.lost_ranges,
            l.total_lost_bytes,
            l.delivered_bytes,
            l.new_episode,
            per_packet,
        ));
    }
    fn on_packets_lost(&mut self, _: Instant, _: u64, _: u64, _: bool) {
        unreachable!("on_loss is overridden")
    }
    fn on_retransmission_timeout(&mut self, _: Instant, _: u64) {}
    fn on_mss_change(&mut self, _: u64) {}
    fn cwnd_bytes(&self) -> u64 {
        1 << 20
    }
    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        1 << 20
    }
    fn send_quantum_bytes(&self) -> u64 {
        1500
    }
    fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::default();
        s.mode = Mode::ProbeBwCruise;
        s
    }
}

#[test]
fn losses_carry_send_time_state_and_ranges_and_acks_carry_ce() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut cc = Controller::custom(&Config::default(), Box::new(Recorder(seen.clone())));
    // Four packets; the first is lost, then the third is lost in a second
    // declaration that reports two ranges.
    let s: Vec<_> = (0..4u64)
        .map(|i| cc.on_packet_sent(at(i * MS), 1000, i * 1000, false))
        .collect();
    assert_eq!(s[3].bytes_in_flight, 4000, "tx_in_flight of the 4th");
    assert!(s.iter().all(|p| p.lost_bytes == 0));
    cc.on_timer_losses(
        at(50 * MS),
        &[LostPacket {
            bytes: 1000,
            state: s[0],
        }],
        1,
        3000,
    );
    // Sent after the first loss: records the connection's lost bytes.
    let s4 = cc.on_packet_sent(at(51 * MS), 1000, 3000, false);
    assert_eq!(s4.lost_bytes, 1000);
    let acked = [
        AckedPacket {
            bytes: 1000,
            state: s[1],
        },
        AckedPacket {
            bytes: 1000,
            state: s[3],
        },
    ];
    cc.on_ack(
        &AckEvent::new(at(60 * MS), &acked, 4000, 2000)
            .rtt(Some(Duration::from_millis(57)), Duration::ZERO)
            .ce(1),
    );
    cc.on_timer_losses(
        at(61 * MS),
        &[
            LostPacket {
                bytes: 1000,
                state: s[2],
            },
            LostPacket {
                bytes: 1000,
                state: s4,
            },
        ],
        2,
        0,
    );
    // An ACK with no marks after one with marks: the count does not linger.
    // (It acknowledges a packet: an event that acknowledges nothing does
    // not reach the algorithm's `on_ack`.)
    let s5 = cc.on_packet_sent(at(62 * MS), 1000, 0, false);
    let acked = [AckedPacket {
        bytes: 1000,
        state: s5,
    }];
    cc.on_ack(&AckEvent::new(at(70 * MS), &acked, 1000, 0));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.acks, vec![(2, 1), (1, 0)]);
    assert_eq!(seen.losses.len(), 2);
    let (bytes, ranges, total, delivered, new_episode, ref per) = seen.losses[0];
    assert_eq!(
        (bytes, ranges, total, delivered, new_episode),
        (1000, 1, 1000, 0, true)
    );
    assert_eq!(per, &vec![(1000, 0)]);
    let (bytes, ranges, total, delivered, _, ref per) = seen.losses[1];
    assert_eq!((bytes, ranges, total, delivered), (2000, 2, 3000, 2000));
    assert_eq!(per, &vec![(3000, 0), (4000, 1000)]);
}

/// `SrttSample::Oldest` (TCP, Linux's `seq_rtt_us`): an ACK for two packets
/// sent 6 ms apart smooths the older one's RTT, while the latest RTT and
/// min_rtt are the newer one's (`ca_rtt_us`); the default smooths the
/// newest, as RFC 9002 §5.1 does.
#[test]
fn tcp_smooths_the_oldest_packet_an_ack_covers_and_quic_the_newest() {
    let srtt = |sample: congestion::SrttSample| {
        let t0 = Instant::from_nanos(0);
        let cfg = {
            let mut s = Config::default();
            s.algorithm = congestion::Algorithm::Cubic;
            s.srtt_sample = sample;
            s
        };
        let mut c = Controller::new(&cfg, t0);
        let a = c.on_packet_sent(t0, 1500, 0, false);
        let b = c.on_packet_sent(Instant::from_nanos(6_000_000), 1500, 1500, false);
        let now = Instant::from_nanos(106_000_000);
        let acked = [
            AckedPacket {
                bytes: 1500,
                state: a,
            },
            AckedPacket {
                bytes: 1500,
                state: b,
            },
        ];
        c.on_ack(
            &AckEvent::new(now, &acked, 3000, 0)
                .rtt(Some(Duration::from_millis(100)), Duration::ZERO),
        );
        let r = c.rtt();
        (r.smoothed().unwrap(), r.latest().unwrap(), r.min().unwrap())
    };
    let ms = Duration::from_millis;
    assert_eq!(
        srtt(congestion::SrttSample::Oldest),
        (ms(106), ms(100), ms(100))
    );
    assert_eq!(
        srtt(congestion::SrttSample::Newest),
        (ms(100), ms(100), ms(100))
    );
    assert_eq!(
        congestion::SrttSample::default(),
        congestion::SrttSample::Newest
    );
}
