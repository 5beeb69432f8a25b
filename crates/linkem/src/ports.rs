//! Per-flow delay, jitter and loss in the emulator, chosen by port.
//!
//! The simulator gives a flow its own access link (`[flow.access]`). Real
//! flows have no flow index, so the emulator tells them apart by their TCP
//! or UDP port: a [`PortPath`] applies to every IPv4 packet whose source
//! or destination port is its `port` (a server's listening port catches
//! every connection to it; a client port bound with the program's own
//! option catches one flow). The first rule that matches wins.
//!
//! A matching packet crosses the rule's direction after the shared one:
//! its delay and jitter are added to the packet's release time, and its
//! loss drops it, drawn from the rule's own random stream. The extra
//! direction takes only `delay`, `jitter` and `loss`: a rate or queue
//! behind the shared bottleneck would not be the access link in front of
//! it that the simulator models, so those are refused
//! ([`PortPath::check`]).

use link::{Direction, DropReason, ResolvedDirection, Verdict};

/// Extra delay, jitter and loss for the packets of one port.
#[derive(Clone, Debug, PartialEq)]
pub struct PortPath {
    /// TCP or UDP port, matched as source or destination.
    pub port: u16,
    /// For client → server packets (the link's forward direction).
    pub forward: Option<ResolvedDirection>,
    /// For server → client packets.
    pub reverse: Option<ResolvedDirection>,
}

impl PortPath {
    /// Why this rule cannot run in the emulator, if it cannot: the field
    /// (`forward.rate`, ...) and what is allowed.
    pub fn check(&self) -> Result<(), (String, String)> {
        for (side, d) in [("forward", &self.forward), ("reverse", &self.reverse)] {
            let Some(d) = d else { continue };
            let bad = if d.rate != link::RateSchedule::Unlimited {
                Some("rate")
            } else if d.policer.is_some() {
                Some("policer")
            } else if d.aggregation.is_some() {
                Some("ack_aggregation")
            } else if d.queue != link::QueueConfig::drop_tail(d.queue.limit) {
                // Any AQM (a rate-less direction never queues, so only the
                // discipline could act).
                Some("queue")
            } else {
                None
            };
            if let Some(field) = bad {
                return Err((
                    format!("{side}.{field}"),
                    "a per-port path in the emulator takes only `delay`, `jitter` and `loss` (it is applied after the shared bottleneck, so a rate or queue there would not be an access link)".into(),
                ));
            }
        }
        Ok(())
    }
}

/// The TCP or UDP (source, destination) ports of an IPv4 packet, or
/// `None` for other protocols, later fragments and short packets.
pub fn ports(pkt: &[u8]) -> Option<(u16, u16)> {
    if pkt.len() < 20 || pkt[0] >> 4 != 4 {
        return None;
    }
    let ihl = (pkt[0] & 0x0f) as usize * 4;
    // Fragment offset non-zero: no transport header here (RFC 791).
    let frag_offset = u16::from_be_bytes([pkt[6] & 0x1f, pkt[7]]);
    if !matches!(pkt[9], 6 | 17) || frag_offset != 0 || pkt.len() < ihl + 4 {
        return None;
    }
    Some((
        u16::from_be_bytes([pkt[ihl], pkt[ihl + 1]]),
        u16::from_be_bytes([pkt[ihl + 2], pkt[ihl + 3]]),
    ))
}

/// The running form of a list of [`PortPath`]s: one [`Direction`] per rule
/// and side.
pub struct PortPaths {
    rules: Vec<(u16, [Option<Direction>; 2])>,
    /// Per rule and side, the latest time offered: a direction's clock
    /// must not run backwards, and a shared direction that reorders could
    /// hand packets on out of time order.
    last: Vec<[u64; 2]>,
    /// Packets each side's per-port paths dropped.
    pub dropped: [u64; 2],
}

impl PortPaths {
    /// Builds the rules; `seed` gives each its own random streams.
    pub fn new(paths: &[PortPath], seed: u64) -> PortPaths {
        let rules: Vec<_> = paths
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let s = |side: u64| {
                    seed ^ (0xA24B_AED4_963E_E407u64.wrapping_mul(2 * k as u64 + side + 1))
                };
                (
                    p.port,
                    [
                        p.forward.as_ref().map(|d| Direction::new(d, s(0))),
                        p.reverse.as_ref().map(|d| Direction::new(d, s(1))),
                    ],
                )
            })
            .collect();
        PortPaths {
            last: vec![[0; 2]; rules.len()],
            rules,
            dropped: [0; 2],
        }
    }

    /// Whether there are no rules (every packet passes untouched).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// When a packet of direction `side` that the shared direction
    /// delivers at `arrive_ns` is released: later by its port's delay and
    /// jitter, or why its port's path dropped it. Packets of no rule keep
    /// `arrive_ns`.
    pub fn release_ns(
        &mut self,
        side: usize,
        pkt: &[u8],
        arrive_ns: u64,
    ) -> Result<u64, DropReason> {
        if self.rules.is_empty() {
            return Ok(arrive_ns);
        }
        let Some((src, dst)) = ports(pkt) else {
            return Ok(arrive_ns);
        };
        let Some(k) = self.rules.iter().position(|(p, _)| *p == src || *p == dst) else {
            return Ok(arrive_ns);
        };
        let Some(dir) = self.rules[k].1[side].as_mut() else {
            return Ok(arrive_ns);
        };
        let t = arrive_ns.max(self.last[k][side]);
        self.last[k][side] = t;
        match dir.enqueue(t, pkt.len() as u32) {
            Verdict::Deliver { arrive_ns, .. } => Ok(arrive_ns),
            Verdict::Drop { reason, .. } => {
                self.dropped[side] += 1;
                Err(reason)
            }
            // No aggregation or queue discipline here (a port's rule has
            // no rate or queue, `check` refuses them), so nothing is held
            // or queued; should a rule slip through, release at once
            // rather than lose the packet.
            Verdict::Held { .. } | Verdict::Queued { .. } => Ok(t),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use link::{units::Size, QueueConfig, RateSchedule};

    fn direction(text: &str) -> ResolvedDirection {
        let cfg: link::DirectionConfig = toml::from_str(text).unwrap();
        cfg.resolve(std::path::Path::new(".")).unwrap()
    }

    /// A 40-byte IPv4 packet of protocol `proto` from port `src` to `dst`.
    pub(crate) fn packet(proto: u8, src: u16, dst: u16) -> Vec<u8> {
        let mut p = vec![0u8; 40];
        p[0] = 0x45;
        p[9] = proto;
        p[20..22].copy_from_slice(&src.to_be_bytes());
        p[22..24].copy_from_slice(&dst.to_be_bytes());
        p
    }

    #[test]
    fn ports_are_read_from_tcp_and_udp_only() {
        assert_eq!(ports(&packet(6, 40000, 5201)), Some((40000, 5201)));
        assert_eq!(ports(&packet(17, 1, 2)), Some((1, 2)));
        assert_eq!(ports(&packet(1, 1, 2)), None, "ICMP");
        let mut frag = packet(6, 1, 2);
        frag[7] = 8; // a later fragment
        assert_eq!(ports(&frag), None);
        assert_eq!(ports(&packet(6, 1, 2)[..22]), None, "too short");
        let mut opts = packet(6, 9, 9);
        opts[0] = 0x46; // 24-byte header: ports at 24
        opts[24..28].copy_from_slice(&[0, 7, 0, 8]);
        assert_eq!(ports(&opts), Some((7, 8)));
    }

    #[test]
    fn a_ports_delay_applies_to_its_packets_each_way_only() {
        let rule = PortPath {
            port: 5201,
            forward: Some(direction("delay = \"30ms\"")),
            reverse: Some(direction("delay = \"10ms\"")),
        };
        rule.check().unwrap();
        let mut p = PortPaths::new(&[rule], 1);
        let ms = 1_000_000;
        // Client → server to 5201, and the server's answer from 5201.
        assert_eq!(
            p.release_ns(0, &packet(6, 40000, 5201), 5 * ms),
            Ok(35 * ms)
        );
        assert_eq!(
            p.release_ns(1, &packet(6, 5201, 40000), 5 * ms),
            Ok(15 * ms)
        );
        // Another port, and a non-TCP packet: untouched.
        assert_eq!(p.release_ns(0, &packet(6, 40000, 5202), 5 * ms), Ok(5 * ms));
        assert_eq!(p.release_ns(0, &packet(1, 0, 5201), 5 * ms), Ok(5 * ms));
    }

    /// Jitter without reordering: each packet later by 0 to 10 ms, never
    /// before the one ahead of it. Sent 20 ms apart (more than the jitter's
    /// span, so order never holds one back) the draws are the uniform's:
    /// the mean of 1000 is within 1 ms of 5 ms (sd of the mean 0.09 ms).
    /// Sent 1 ms apart, order holds: no packet overtakes.
    #[test]
    fn a_ports_jitter_is_drawn_per_packet_and_keeps_order() {
        let rule = PortPath {
            port: 9000,
            forward: Some(direction(
                "jitter = { uniform = { min = \"0ms\", max = \"10ms\" } }",
            )),
            reverse: None,
        };
        let mut p = PortPaths::new(&[rule], 7);
        let ms = 1_000_000u64;
        let mut sum = 0u64;
        for i in 0..1000u64 {
            let at = i * 20 * ms;
            let t = p.release_ns(0, &packet(17, 9000, 1), at).unwrap();
            assert!(t >= at && t <= at + 10 * ms, "{i}: {t}");
            sum += t - at;
        }
        let mean_ms = sum as f64 / 1000.0 / 1e6;
        assert!((mean_ms - 5.0).abs() < 1.0, "mean extra delay {mean_ms} ms");
        let start = 1000 * 20 * ms;
        let mut prev = 0;
        for i in 0..1000u64 {
            let at = start + i * ms;
            let t = p.release_ns(0, &packet(17, 9000, 1), at).unwrap();
            assert!(t >= at && t >= prev, "{i} overtook the packet before it");
            prev = t;
        }
    }

    #[test]
    fn a_ports_loss_drops_about_its_share() {
        let rule = PortPath {
            port: 80,
            forward: Some(direction("loss = 0.1")),
            reverse: None,
        };
        let mut p = PortPaths::new(&[rule], 3);
        let lost = (0..10_000u64)
            .filter(|&i| p.release_ns(0, &packet(6, 1, 80), i).is_err())
            .count();
        // Binomial(10000, 0.1): sd 30; 5 sd either side.
        assert!((850..=1150).contains(&lost), "{lost}");
        assert_eq!(p.dropped[0], lost as u64);
    }

    #[test]
    fn rates_queues_and_aggregation_are_refused() {
        let mut rule = PortPath {
            port: 1,
            forward: Some(direction("rate = \"1mbit\"")),
            reverse: None,
        };
        let (field, msg) = rule.check().unwrap_err();
        assert_eq!(field, "forward.rate");
        assert!(msg.contains("only `delay`, `jitter` and `loss`"), "{msg}");
        rule.forward = None;
        rule.reverse = Some(direction("ack_aggregation = { interval = \"1ms\" }"));
        assert_eq!(rule.check().unwrap_err().0, "reverse.ack_aggregation");
        rule.reverse = Some(ResolvedDirection {
            queue: QueueConfig {
                ecn: true,
                ..QueueConfig::drop_tail(Size::Packets(10))
            },
            ..direction("")
        });
        assert_eq!(rule.check().unwrap_err().0, "reverse.queue");
        assert_eq!(direction("").rate, RateSchedule::Unlimited);
    }

    /// Fake TUN devices on a simulated clock: `offers` arrive on side 0
    /// at their times; the loop stops once every packet has been written.
    struct FakeTuns<'a> {
        t: u64,
        offers: Vec<(u64, Vec<u8>)>,
        written: Vec<(u64, u16)>, // (when, destination port)
        expected: usize,
        stop: &'a std::sync::atomic::AtomicBool,
    }

    impl crate::PacketIo for FakeTuns<'_> {
        fn now_ns(&mut self) -> u64 {
            self.t += 100;
            if self.t > 10_000_000_000 {
                self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            self.t
        }
        fn recv(&mut self, side: usize, buf: &mut [u8]) -> std::io::Result<Option<usize>> {
            match self.offers.first() {
                Some((at, _)) if side == 0 && *at <= self.t => {
                    let (_, p) = self.offers.remove(0);
                    buf[..p.len()].copy_from_slice(&p);
                    Ok(Some(p.len()))
                }
                _ => Ok(None),
            }
        }
        fn send(&mut self, _side: usize, pkt: &[u8]) -> std::io::Result<()> {
            let (_, dst) = ports(pkt).expect("a TCP packet");
            self.written.push((self.t, dst));
            if self.written.len() == self.expected {
                self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            Ok(())
        }
        fn wait(&mut self, ns: u64) -> std::io::Result<()> {
            self.t += ns.min(100_000);
            Ok(())
        }
        fn cpu_ns(&mut self) -> u64 {
            0
        }
    }

    /// Through the forwarding loop: over a 5 ms shared path, a packet to
    /// port 5201 (whose rule adds 30 ms forward) is written 30 ms after
    /// one to 5202 sent at the same moment, and never before 35 ms.
    #[test]
    fn the_forwarder_delays_only_the_ruled_port() {
        let stop = std::sync::atomic::AtomicBool::new(false);
        let shared = direction("delay = \"5ms\"");
        let cfg = crate::ForwardConfig {
            forward: shared.clone(),
            reverse: shared,
            seed: 1,
            sample_interval_ns: 0,
            realtime: false,
            hops: Vec::new(),
            delay_schedules: [None, None],
            ports: vec![PortPath {
                port: 5201,
                forward: Some(direction("delay = \"30ms\"")),
                reverse: None,
            }],
        };
        let mut io = FakeTuns {
            t: 0,
            offers: vec![
                (1_000, packet(6, 40000, 5201)),
                (1_000, packet(6, 40001, 5202)),
            ],
            written: Vec::new(),
            expected: 2,
            stop: &stop,
        };
        crate::run_io(&mut io, &cfg, &stop, &mut crate::NoLog).unwrap();
        let when = |port| io.written.iter().find(|w| w.1 == port).expect("written").0;
        let ms = 1_000_000;
        let (ruled, other) = (when(5201), when(5202));
        assert!((5 * ms..6 * ms).contains(&other), "5202 at {other} ns");
        assert!((35 * ms..36 * ms).contains(&ruled), "5201 at {ruled} ns");
    }
}
