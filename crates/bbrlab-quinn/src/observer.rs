//! A window onto a running controller, for a program that samples it into
//! bbrlab's time series (`sender::schema::FLOW_COLUMNS`).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The controller's state after the last event it processed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Observed {
    /// What the controller reports of itself: mode, cwnd, pacing rate,
    /// bandwidth estimate, min RTT, recovery state.
    pub snapshot: congestion::Snapshot,
    /// Ack-eliciting bytes in flight, as quinn counts them.
    pub bytes_in_flight: u64,
    /// quinn's smoothed RTT (it removes the peer's ACK delay, which the
    /// controller is not told).
    pub srtt: Option<Duration>,
    /// The adapter's last RTT sample: from send to ACK of the newest
    /// packet of an ACK frame, ACK delay included.
    pub latest_rtt: Option<Duration>,
    /// Transmits the controller saw: quinn reports each batch of datagrams
    /// built in one `poll_transmit` as one send (`on_sent`), not each packet.
    pub packets_sent: u64,
    /// Loss events (quinn's `on_congestion_event` with lost bytes): quinn
    /// tells the controller how many bytes were lost, not how many packets.
    pub packets_lost: u64,
    /// Bytes of the ack-eliciting packets the controller saw acknowledged.
    pub bytes_acked: u64,
    /// CE reports: quinn says the peer's CE count rose, not by how much, so
    /// each counts as one marked packet.
    pub ce_packets: u64,
}

/// A handle that reads the latest [`Observed`] of the controllers a
/// [`crate::ControllerFactory`] built. Cheap to clone; every clone sees the
/// same state. With several connections on one factory it shows
/// whichever processed an event last, so give each connection to be
/// observed a factory of its own.
#[derive(Clone, Debug, Default)]
pub struct Observer {
    slot: Arc<Mutex<Option<Observed>>>,
}

impl Observer {
    /// The state after the last ACK or loss any controller of the factory
    /// processed; `None` before the first. An ACK frame is processed at the
    /// stack's next call after it (see the crate docs), so the newest frame
    /// shows once the stack next sends or asks for its window.
    pub fn latest(&self) -> Option<Observed> {
        *self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn publish(&self, observed: Observed) {
        *self.slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(observed);
    }
}
