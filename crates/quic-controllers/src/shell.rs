//! What the quinn and noq wrappers keep beside the stack's controller,
//! and the steps they share: noq is a fork of quinn, and both take
//! packet numbers, `std::time::Instant`s, the stack's own RTT estimator
//! on every ACK, and losses judged for persistent congestion by RFC 9002.

use crate::ledger::{Entry, Ledger};
use crate::rtt_layout::{persistent_threshold, spans_persistent, Estimates};
use congestion::{AckContext, AckedPacket, Config, Instant, LossContext};
use core::time::Duration;

/// The state beside the controller.
#[derive(Debug)]
pub(crate) struct Shell {
    /// The stack's time of bbrlab's `Instant::ZERO`.
    base: std::time::Instant,
    pub ledger: Ledger<()>,
    /// The ACK's newly acknowledged packets, in send order, waiting for
    /// its RTT estimate.
    pub acked: Vec<Entry<()>>,
    /// bbrlab's RTT estimates as of the last ACK; `None` before a sample.
    pub rtt: Option<Estimates>,
    pub app_limited: bool,
    /// The stack's MTU: the flow's MSS.
    pub mtu: u64,
    /// What the stack's estimator holds before a sample.
    initial_rtt: Duration,
    /// The peer's max_ack_delay, for persistent congestion.
    max_ack_delay: Duration,
}

impl Shell {
    /// A shell for a flow of `config` starting at `now`, with the stack's
    /// initial RTT and max_ack_delay.
    pub fn new(config: &Config, initial_rtt: Duration, max_ack_delay: Duration) -> Shell {
        Shell {
            base: std::time::Instant::now(),
            ledger: Ledger::new(),
            acked: Vec::new(),
            rtt: None,
            app_limited: false,
            mtu: config.mss_bytes.clamp(1, u64::from(u16::MAX)),
            initial_rtt,
            max_ack_delay,
        }
    }

    /// The stack's instant for bbrlab's `t`. The stacks use differences
    /// only, so results do not depend on `base`.
    pub fn at(&self, t: Instant) -> std::time::Instant {
        self.base + Duration::from_nanos(t.as_nanos())
    }

    /// The smoothed RTT the stack's pacer would use (`RttEstimator::get`).
    pub fn srtt(&self) -> Duration {
        self.rtt.map_or(self.initial_rtt, |r| r.smoothed)
    }

    /// Keeps an ACK's newly acknowledged packets, in send order.
    pub fn take_acked(&mut self, acked: &[AckedPacket]) {
        self.acked = self.ledger.take_sorted(acked.iter().map(|p| &p.state));
    }

    /// Takes an ACK's totals, app-limited state and RTT; returns the
    /// estimates to hand the stack (its initial ones before a sample).
    pub fn on_ack(&mut self, ack: &AckContext<'_>, app_limited: bool) -> Estimates {
        self.ledger.set_totals(ack.delivered_bytes, ack.lost_bytes);
        self.app_limited = app_limited;
        if let Some(e) = Estimates::from_rtt(ack.rtt) {
            self.rtt = Some(e);
        }
        self.rtt
            .unwrap_or_else(|| Estimates::initial(self.initial_rtt))
    }

    /// The lost packets it knows, in send order, and whether they show
    /// persistent congestion (RFC 9002 §7.6.2, after an RTT sample).
    pub fn take_lost(&mut self, loss: &LossContext<'_>) -> (Vec<Entry<()>>, bool) {
        self.ledger
            .set_totals(loss.delivered_bytes, loss.total_lost_bytes);
        let lost = self.ledger.take_sorted(loss.lost.iter().map(|p| &p.state));
        let persistent = self
            .rtt
            .is_some_and(|r| spans_persistent(&lost, persistent_threshold(r, self.max_ack_delay)));
        (lost, persistent)
    }
}
