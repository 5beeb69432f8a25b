//! A shared, cheap view of the newest connection's controller, for a
//! program that samples it into bbrlab's time series.

use congestion::Snapshot;
use core::time::Duration;
use std::sync::{Arc, Mutex, PoisonError};

/// The state of one connection's controller, as of its latest ACK, loss
/// batch or change of send quantum.
///
/// Everything a row of `sender::schema::FLOW_COLUMNS` needs from the
/// sender's side: cwnd, pacing rate, mode, bandwidth estimate and min_rtt
/// (in [`Observed::snapshot`]), bytes in flight, srtt, the RTT sample,
/// and counters to difference between samples (retransmissions are
/// `packets_lost`: s2n-quic resends the data of every lost packet).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Observed {
    /// Which connection this is: 1 for the endpoint's first controller,
    /// counting up (a program that sees it change knows a new connection
    /// took over).
    pub connection: u64,
    /// When this was taken, from the connection's first packet (the
    /// controller's clock, s2n-quic's timestamps).
    pub at: Duration,
    /// The controller's own view: cwnd, pacing rate, mode, bandwidth
    /// estimate, min_rtt, round count, gains, recovery state.
    pub snapshot: Snapshot,
    /// Bytes in flight as the adapter counts them (sent, less acked, lost
    /// and discarded).
    pub bytes_in_flight: u64,
    /// s2n-quic's smoothed RTT (what its timers use).
    pub srtt: Option<Duration>,
    /// s2n-quic's latest RTT sample.
    pub latest_rtt: Option<Duration>,
    /// s2n-quic's RTT variation.
    pub rttvar: Option<Duration>,
    /// s2n-quic's minimum RTT.
    pub min_rtt: Option<Duration>,
    /// The send quantum the adapter gives s2n-quic.
    pub send_quantum_bytes: u64,
    /// Congestion-controlled packets sent (ACK-only packets excluded).
    pub packets_sent: u64,
    /// Their bytes.
    pub bytes_sent: u64,
    /// Packets declared lost.
    pub packets_lost: u64,
    /// Their bytes.
    pub bytes_lost: u64,
    /// Bytes acknowledged.
    pub bytes_acked: u64,
    /// `on_ack` calls (ACK frames that acked congestion-controlled bytes).
    pub acks: u64,
    /// Bytes the delivery-rate sampler counts as delivered.
    pub delivered_bytes: u64,
    /// Bytes that left flight without an ACK or a loss.
    pub bytes_discarded: u64,
    /// Packets the peer reported CE-marked.
    pub ce_packets: u64,
    /// Recovery episodes begun (persistent congestion included).
    pub recovery_episodes: u64,
}

#[derive(Debug, Default)]
struct Slot {
    /// The newest controller's id; only it writes.
    newest: u64,
    latest: Option<Observed>,
}

/// A handle on the state of the most recently created connection's
/// controller. Cloning shares it.
#[derive(Clone, Debug, Default)]
pub struct Observer {
    slot: Arc<Mutex<Slot>>,
}

impl Observer {
    /// The latest state of the most recently created connection's
    /// controller, updated on every ACK, loss batch and change of send
    /// quantum; `None` before any connection.
    pub fn latest(&self) -> Option<Observed> {
        self.lock().latest
    }

    /// A poisoned lock only means a panic elsewhere while copying a plain
    /// value: the value is still whole, so keep serving it.
    fn lock(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new controller takes over the observer.
    pub(crate) fn register(&self, id: u64) {
        let mut slot = self.lock();
        if id > slot.newest {
            slot.newest = id;
        }
    }

    pub(crate) fn publish(&self, id: u64, observed: &Observed) {
        let mut slot = self.lock();
        if slot.newest == id {
            slot.latest = Some(*observed);
        }
    }
}
