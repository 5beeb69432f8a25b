//! A small Reno-like controller, sane by itself, into which one bug at a
//! time is planted: the fuzzer and the search must find each.

use claims::conformance::grid::Controller;
use congestion::{AckContext, Config, CongestionControl, DeliveryRateSampler, Instant, Snapshot};

#[derive(Clone, Copy, PartialEq)]
pub enum Bug {
    /// None: the controller is sane.
    None,
    /// `cwnd -= 10 × lost`, unchecked: a u64 underflow on loss.
    UnderflowOnLoss,
    /// The window grows with every ACK, used or not.
    GrowsWhenAppLimited,
    /// Once the delivery rate has stayed below half its best for ten
    /// samples (a rate drop), the window freezes at two packets.
    StallsAfterRateDrop,
    /// Once its smoothed round trip passes 70 ms, the window freezes at
    /// two packets.
    FreezesOnLongRtt,
    /// Counts bytes delivered in 32 bits and, when the count wraps, takes
    /// the drop for a collapse of the path: the window falls to one
    /// segment and stays there.
    Wraps32,
}

/// Reno, growing only while it uses at least half its window.
struct Planted {
    bug: Bug,
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    rate: u64,
    best: f64,
    low: u32,
    frozen: bool,
    /// Bytes delivered, modulo 2^32 (the `Wraps32` bug's counter).
    delivered32: u32,
    wrapped: bool,
}

impl Planted {
    /// Ten segments of the flow's size to start with.
    fn new(bug: Bug, mss: u64) -> Planted {
        Planted {
            bug,
            mss,
            cwnd: 10 * mss,
            ssthresh: u64::MAX,
            rate: 1_000_000_000,
            best: 0.0,
            low: 0,
            frozen: false,
            delivered32: 0,
            wrapped: false,
        }
    }
}

impl CongestionControl for Planted {
    fn on_ack(&mut self, a: &AckContext<'_>, _: &mut DeliveryRateSampler) {
        let rs = a.rate;
        if let (Some(iv), false) = (rs.interval_ns, rs.is_app_limited) {
            let r = rs.delivered_bytes as f64 / iv.max(1) as f64;
            self.best = self.best.max(r);
            self.low = if r < 0.5 * self.best { self.low + 1 } else { 0 };
            if self.bug == Bug::StallsAfterRateDrop && self.low >= 10 {
                self.frozen = true;
            }
        }
        let used = 2 * a.bytes_in_flight + rs.acked_bytes >= self.cwnd;
        if self.bug == Bug::GrowsWhenAppLimited || used {
            if self.cwnd < self.ssthresh {
                self.cwnd += rs.acked_bytes;
            } else {
                self.cwnd += (self.mss * rs.acked_bytes / self.cwnd).max(1);
            }
        }
        if let (Bug::FreezesOnLongRtt, Some(srtt)) = (self.bug, a.rtt.smoothed()) {
            self.frozen |= srtt.as_millis() > 70;
        }
        if self.frozen {
            self.cwnd = 2 * self.mss;
        }
        let before = self.delivered32;
        self.delivered32 = before.wrapping_add(rs.acked_bytes as u32);
        if self.bug == Bug::Wraps32 && self.delivered32 < before {
            self.wrapped = true;
        }
        if self.wrapped {
            self.cwnd = self.mss;
        }
        if let Some(srtt) = a.rtt.smoothed() {
            self.rate = (2 * self.cwnd as u128 * 1_000_000_000 / srtt.as_nanos().max(1)) as u64;
        }
    }
    fn on_packets_lost(&mut self, _: Instant, lost: u64, _: u64, new_episode: bool) {
        if self.bug == Bug::UnderflowOnLoss {
            // Wraps (or, with overflow checks, panics) once 10 × lost
            // exceeds the window.
            self.cwnd = self.cwnd.wrapping_sub(10 * lost);
            if cfg!(debug_assertions) && self.cwnd > 1 << 50 {
                panic!("attempt to subtract with overflow");
            }
            return;
        }
        if new_episode {
            self.ssthresh = (self.cwnd / 2).max(2 * self.mss);
            self.cwnd = self.ssthresh;
        }
    }
    fn on_retransmission_timeout(&mut self, _: Instant, _: u64) {
        self.ssthresh = (self.cwnd / 2).max(2 * self.mss);
        self.cwnd = self.mss;
    }
    fn on_mss_change(&mut self, mss: u64) {
        self.mss = mss;
    }
    fn cwnd_bytes(&self) -> u64 {
        self.cwnd
    }
    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        self.rate
    }
    fn send_quantum_bytes(&self) -> u64 {
        self.mss
    }
    fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::default();
        s.cwnd_bytes = self.cwnd;
        s.pacing_rate_bytes_per_sec = self.rate;
        s
    }
}

pub fn planted(bug: Bug) -> Controller {
    planted_named(bug, planted_name(bug))
}

/// [`planted`] under another name: the fuzzer holds a controller whose
/// name says BBR to BBR's own bounds.
pub fn planted_named(bug: Bug, name: &str) -> Controller {
    Controller::custom(name, false, move |c: &Config, _: Instant| {
        Box::new(Planted::new(bug, c.mss_bytes)) as Box<dyn CongestionControl + Send + Sync>
    })
}

fn planted_name(bug: Bug) -> &'static str {
    match bug {
        Bug::None => "sane",
        Bug::UnderflowOnLoss => "underflow-on-loss",
        Bug::GrowsWhenAppLimited => "grows-when-app-limited",
        Bug::StallsAfterRateDrop => "stalls-after-rate-drop",
        Bug::FreezesOnLongRtt => "freezes-on-long-rtt",
        Bug::Wraps32 => "wraps-32",
    }
}
