//! A scripted driver for `bbr3`'s rule tests: each call is one ACK whose
//! rate sample, RTT, inflight, app-limited mark, CE count and losses the
//! test chooses, fed to the [`Controller`] as one [`AckEvent`] per ACK
//! (the controller applies its losses, then its CE marks and packets).

#![allow(dead_code)] // Each test binary uses a different subset.

use congestion::{
    AckEvent, AckedPacket, Algorithm, Bbr3Config, Bbr3Snapshot, Config, Controller, Instant,
    LostPacket, Mode, SentPacketState, Snapshot,
};
use std::time::Duration;

pub const MS: u64 = 1_000_000;
pub const SEC: u64 = 1_000_000_000;
pub const MSS: u64 = 1500;

pub fn at(ns: u64) -> Instant {
    Instant::from_nanos(ns)
}

/// A `bbr3` config with `profile`'s values.
pub fn config(b3: Bbr3Config) -> Config {
    let mut c = Config::new(Algorithm::Bbr3);
    c.bbr3 = b3;
    c
}

/// Losses to declare on an ACK.
#[derive(Clone, Copy, Debug)]
pub struct Loss {
    /// Packets lost (each MSS bytes).
    pub packets: u64,
    /// Discontiguous ranges they form.
    pub ranges: u32,
    /// Each lost packet's tx_in_flight; `None`: the ACK's tx_in_flight.
    pub tx_in_flight: Option<u64>,
}

/// One scripted ACK.
#[derive(Clone, Copy, Debug)]
pub struct Ack {
    /// Delivery rate the sample must show, bytes/s.
    pub rate: f64,
    /// RTT sample and sample interval, ns.
    pub rtt_ns: u64,
    /// Bytes in flight after the ACK.
    pub inflight: u64,
    pub app_limited: bool,
    /// The acked packet's tx_in_flight; `None`: inflight + acked bytes.
    pub tx_in_flight: Option<u64>,
    /// CE-marked packets this ACK reports.
    pub ce_packets: u64,
    pub loss: Option<Loss>,
    /// Before the ACK, send a packet that fills cwnd (the sender is
    /// cwnd-limited this round).
    pub cwnd_limited: bool,
    /// The RTT sample, if not `rtt_ns` (the sample interval).
    pub rtt_sample_ns: Option<u64>,
    /// The receiver's reported ACK delay.
    pub ack_delay_ns: u64,
    /// The connection's lost bytes when the acked packet was sent;
    /// `None`: as of this ACK (after any timer losses since the last).
    pub lost_at_send: Option<u64>,
}

impl Ack {
    pub fn new(rate: f64, rtt_ns: u64, inflight: u64) -> Self {
        Ack {
            rate,
            rtt_ns,
            inflight,
            app_limited: false,
            tx_in_flight: None,
            ce_packets: 0,
            loss: None,
            cwnd_limited: false,
            rtt_sample_ns: None,
            ack_delay_ns: 0,
            lost_at_send: None,
        }
    }
    /// The acked packet left when the connection had lost `bytes`.
    pub fn sent_when_lost(mut self, bytes: u64) -> Self {
        self.lost_at_send = Some(bytes);
        self
    }
    pub fn rtt_sample(mut self, ns: u64) -> Self {
        self.rtt_sample_ns = Some(ns);
        self
    }
    pub fn ack_delay(mut self, ns: u64) -> Self {
        self.ack_delay_ns = ns;
        self
    }
    pub fn cwnd_limited(mut self) -> Self {
        self.cwnd_limited = true;
        self
    }
    pub fn app_limited(mut self) -> Self {
        self.app_limited = true;
        self
    }
    pub fn ce(mut self, packets: u64) -> Self {
        self.ce_packets = packets;
        self
    }
    pub fn tx(mut self, tx_in_flight: u64) -> Self {
        self.tx_in_flight = Some(tx_in_flight);
        self
    }
    pub fn lose(mut self, packets: u64, ranges: u32) -> Self {
        self.loss = Some(Loss {
            packets,
            ranges,
            tx_in_flight: None,
        });
        self
    }
    pub fn lose_at(mut self, packets: u64, ranges: u32, tx_in_flight: u64) -> Self {
        self.loss = Some(Loss {
            packets,
            ranges,
            tx_in_flight: Some(tx_in_flight),
        });
        self
    }
}

pub struct Drv {
    pub cc: Controller,
    pub now_ns: u64,
    pub mss: u64,
    delivered: u64,
    /// `delivered_bytes` of the last ACK's packet (for mid-round ACKs).
    last_prior: u64,
    /// The sampler's delivered and CE-marked packet counts when the last
    /// ACK's packet was sent (for mid-round ACKs).
    last_counts: (u64, u64),
}

impl Drv {
    pub fn new(b3: Bbr3Config) -> Self {
        Self::with_config(&config(b3))
    }

    pub fn with_config(cfg: &Config) -> Self {
        Drv {
            cc: Controller::new(cfg, at(0)),
            now_ns: 0,
            mss: cfg.mss_bytes,
            delivered: 0,
            last_prior: 0,
            last_counts: (0, 0),
        }
    }

    /// The sampler's delivered and CE-marked packet totals now: what a
    /// packet sent now records (Linux `tx.delivered`, `tx.delivered_ce`).
    fn counts(&self) -> (u64, u64) {
        let s = self.cc.sampler();
        (s.delivered_packets(), s.delivered_ce_packets())
    }

    /// A draft-profile driver.
    pub fn draft() -> Self {
        Self::new(Bbr3Config::draft())
    }

    /// A linux-v3-profile driver.
    pub fn linux() -> Self {
        Self::new(Bbr3Config::linux_v3())
    }

    pub fn snap(&self) -> Snapshot {
        self.cc.snapshot()
    }

    pub fn b3(&self) -> Bbr3Snapshot {
        self.cc.snapshot().bbr3.expect("bbr3 snapshot")
    }

    pub fn mode(&self) -> Mode {
        self.cc.mode()
    }

    /// Plays one ACK: it acknowledges `rate × rtt` bytes (at least one
    /// byte) sent one RTT ago, so the sample shows exactly `rate`.
    pub fn ack(&mut self, a: Ack) -> Snapshot {
        let bytes = ((a.rate * a.rtt_ns as f64 / 1e9).round() as u64).max(1);
        let sent = self.now_ns;
        if a.cwnd_limited {
            let cwnd = self.cc.cwnd_bytes();
            let _ = self.cc.on_packet_sent(
                at(sent),
                self.mss,
                cwnd.saturating_sub(self.mss).max(1),
                false,
            );
        }
        self.now_ns += a.rtt_ns;
        let lost_at_send = a
            .lost_at_send
            .unwrap_or_else(|| self.cc.sampler().lost_bytes());
        let (dp, dce) = self.counts();
        self.last_counts = (dp, dce);
        let tx = a.tx_in_flight.unwrap_or(a.inflight + bytes);
        let state = SentPacketState {
            sent_time: at(sent),
            delivered_bytes: self.delivered,
            delivered_time: at(sent),
            first_sent_time: at(sent),
            is_app_limited: a.app_limited,
            bytes_in_flight: tx,
            lost_bytes: lost_at_send,
            delivered_packets: dp,
            delivered_ce_packets: dce,
        };
        let lost_bytes = a.loss.map_or(0, |l| l.packets * self.mss);
        let now = at(self.now_ns);
        let (lost, ranges) = match a.loss {
            Some(l) => {
                let lost: Vec<LostPacket> = (0..l.packets)
                    .map(|i| LostPacket {
                        bytes: self.mss,
                        state: SentPacketState {
                            // Sent just after the acked packet, so each loss is
                            // of a packet sent during this round.
                            sent_time: at(sent + 1 + i),
                            bytes_in_flight: l.tx_in_flight.unwrap_or(tx),
                            ..state
                        },
                    })
                    .collect();
                (lost, l.ranges)
            }
            None => (Vec::new(), 1),
        };
        self.last_prior = self.delivered;
        self.delivered += bytes;
        // In flight when the ACK arrived: what remains, plus what it
        // acknowledges and what it shows lost.
        let prior = a.inflight.saturating_add(bytes).saturating_add(lost_bytes);
        self.cc.on_ack(
            &AckEvent::new(now, &[AckedPacket { bytes, state }], prior, a.inflight)
                .rtt(
                    Some(Duration::from_nanos(a.rtt_sample_ns.unwrap_or(a.rtt_ns))),
                    Duration::from_nanos(a.ack_delay_ns),
                )
                .lost(&lost, ranges)
                .ce(a.ce_packets),
        );
        self.cc.snapshot()
    }

    /// An ACK `gap_ns` after the last one, within its round: its packet was
    /// sent when the last ACK's was, so it is no round start, and its rate
    /// sample over one `rtt_ns` shows `rate` (the last ACK's bytes and
    /// this one's over that interval).
    pub fn ack_mid(&mut self, rate: f64, rtt_ns: u64, gap_ns: u64, inflight: u64) -> Snapshot {
        self.now_ns += gap_ns;
        let total = (rate * rtt_ns as f64 / 1e9).round() as u64;
        let bytes = total
            .saturating_sub(self.delivered - self.last_prior)
            .max(1);
        let sent = self.now_ns.saturating_sub(rtt_ns);
        let state = SentPacketState {
            sent_time: at(sent),
            delivered_bytes: self.last_prior,
            delivered_time: at(sent),
            first_sent_time: at(sent),
            is_app_limited: false,
            bytes_in_flight: inflight + bytes,
            lost_bytes: self.cc.sampler().lost_bytes(),
            delivered_packets: self.last_counts.0,
            delivered_ce_packets: self.last_counts.1,
        };
        self.delivered += bytes;
        self.cc.on_ack(
            &AckEvent::new(
                at(self.now_ns),
                &[AckedPacket { bytes, state }],
                inflight + bytes,
                inflight,
            )
            .rtt(Some(Duration::from_nanos(rtt_ns)), Duration::ZERO),
        );
        self.cc.snapshot()
    }

    /// Declares `packets` lost outside an ACK (a timer), each with
    /// `tx_in_flight`, as `ranges` ranges.
    pub fn lose_now(&mut self, packets: u64, ranges: u32, tx_in_flight: u64, inflight: u64) {
        let lost_at_send = self.cc.sampler().lost_bytes();
        self.lose_now_sent_at(packets, ranges, tx_in_flight, inflight, lost_at_send);
    }

    /// [`Drv::lose_now`] for packets sent when the connection had lost
    /// `lost_at_send` bytes.
    pub fn lose_now_sent_at(
        &mut self,
        packets: u64,
        ranges: u32,
        tx_in_flight: u64,
        inflight: u64,
        lost_at_send: u64,
    ) {
        let lost = self.lost_now(packets, tx_in_flight, lost_at_send);
        self.cc
            .on_timer_losses(at(self.now_ns), &lost, ranges, inflight);
    }

    /// A retransmission timeout now that declares `packets` lost (each
    /// with `tx_in_flight`, as one range) and leaves `inflight` in flight,
    /// as bbrlab's transports report one: the losses and the timeout in
    /// one call.
    pub fn rto_now(&mut self, packets: u64, tx_in_flight: u64, inflight: u64) {
        let lost_at_send = self.cc.sampler().lost_bytes();
        let lost = self.lost_now(packets, tx_in_flight, lost_at_send);
        self.cc
            .on_retransmission_timeout(at(self.now_ns), &lost, 1, inflight);
    }

    /// `packets` lost packets of MSS bytes, sent now with `tx_in_flight`
    /// in flight and `lost_at_send` bytes lost so far.
    fn lost_now(&self, packets: u64, tx_in_flight: u64, lost_at_send: u64) -> Vec<LostPacket> {
        let state = SentPacketState {
            sent_time: at(self.now_ns),
            delivered_bytes: self.delivered,
            delivered_time: at(self.now_ns),
            first_sent_time: at(self.now_ns),
            is_app_limited: false,
            bytes_in_flight: tx_in_flight,
            lost_bytes: lost_at_send,
            delivered_packets: 0,
            delivered_ce_packets: 0,
        };
        (0..packets)
            .map(|_| LostPacket {
                bytes: self.mss,
                state,
            })
            .collect()
    }

    /// One round in `n` ACKs of one packet each (all sent together one RTT
    /// before the last ACK), the i-th reporting `ce[i]` CE marks; only the
    /// last ACK's rate sample is valid (the others span less than min_rtt).
    pub fn split_round(&mut self, rate: f64, rtt_ns: u64, inflight: u64, ce: &[u64]) -> Snapshot {
        self.split_round_with(rate, rtt_ns, inflight, ce, None, false)
    }

    /// [`Drv::split_round`] with the packets' tx_in_flight, and a
    /// cwnd-filling send before each ACK if `cwnd_limited`.
    pub fn split_round_with(
        &mut self,
        rate: f64,
        rtt_ns: u64,
        inflight: u64,
        ce: &[u64],
        tx_in_flight: Option<u64>,
        cwnd_limited: bool,
    ) -> Snapshot {
        let n = ce.len().max(1) as u64;
        let total = ((rate * rtt_ns as f64 / 1e9).round() as u64).max(n);
        let bytes = total / n;
        let sent = self.now_ns;
        let d0 = self.delivered;
        let lost_at_send = self.cc.sampler().lost_bytes();
        let (dp, dce) = self.counts();
        let state = SentPacketState {
            sent_time: at(sent),
            delivered_bytes: d0,
            delivered_time: at(sent),
            first_sent_time: at(sent),
            is_app_limited: false,
            bytes_in_flight: tx_in_flight.unwrap_or(inflight + total),
            lost_bytes: lost_at_send,
            delivered_packets: dp,
            delivered_ce_packets: dce,
        };
        for i in 0..n {
            let now = sent + rtt_ns * (i + 1) / n;
            self.now_ns = now;
            if cwnd_limited {
                let cwnd = self.cc.cwnd_bytes();
                let _ = self.cc.on_packet_sent(
                    at(now),
                    self.mss,
                    cwnd.saturating_sub(self.mss).max(1),
                    false,
                );
            }
            let left = inflight + bytes * (n - 1 - i);
            let c = ce.get(i as usize).copied().unwrap_or(0);
            self.delivered += bytes;
            self.cc.on_ack(
                &AckEvent::new(at(now), &[AckedPacket { bytes, state }], left + bytes, left)
                    .rtt(Some(Duration::from_nanos(rtt_ns)), Duration::ZERO)
                    .ce(c),
            );
        }
        self.cc.snapshot()
    }

    /// One plain round at `rate` with `inflight` left in flight.
    pub fn round(&mut self, rate: f64, rtt_ns: u64, inflight: u64) -> Snapshot {
        self.ack(Ack::new(rate, rtt_ns, inflight))
    }

    /// STARTUP with rates doubling up to `bw`, then plateau rounds until it
    /// leaves STARTUP; inflight stays huge so DRAIN does not end.
    pub fn drive_to_drain(&mut self, bw: f64, rtt_ns: u64) {
        let mut r = bw / 8.0;
        while r < bw {
            self.round(r, rtt_ns, 1 << 30);
            r *= 2.0;
        }
        for _ in 0..5 {
            if self.round(bw, rtt_ns, 1 << 30).mode != Mode::Startup {
                return;
            }
        }
        panic!("never left STARTUP: {:?}", self.snap());
    }

    /// STARTUP, DRAIN, then one ACK with a small inflight: PROBE_BW.
    pub fn drive_to_probe_bw(&mut self, bw: f64, rtt_ns: u64) {
        self.drive_to_drain(bw, rtt_ns);
        let s = self.round(bw, rtt_ns, 0);
        assert!(
            matches!(s.mode, Mode::ProbeBwDown | Mode::ProbeBwCruise),
            "{:?}",
            s.mode
        );
    }

    /// Plays rounds at `bw` with `inflight` (at most cwnd, as a sender
    /// keeps it) until `mode` (at most `max` rounds).
    pub fn until(
        &mut self,
        mode: Mode,
        bw: f64,
        rtt_ns: u64,
        inflight: u64,
        max: usize,
    ) -> Snapshot {
        for _ in 0..max {
            let inflight = inflight.min(self.cc.cwnd_bytes());
            let s = self.round(bw, rtt_ns, inflight);
            if s.mode == mode {
                return s;
            }
        }
        panic!("never reached {mode:?}: {:?}", self.snap());
    }
}

/// `x` within `tol` (relative) of `want`.
pub fn near(x: f64, want: f64, tol: f64) -> bool {
    (x - want).abs() <= tol * want.abs()
}
