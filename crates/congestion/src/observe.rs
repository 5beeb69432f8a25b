//! A shared view of a controller running inside someone else's transport,
//! for a program that samples it into a time series (bbrlab's simulator
//! writes the same columns for its own flows).
//!
//! The adapter crates (`bbrlab-s2n`, `bbrlab-noq`, `bbrlab-quinn`) each
//! hold a [`Controller`](crate::Controller) inside a QUIC stack's
//! congestion-control callback, where the application cannot reach it.
//! After each event they copy what a time-series row needs into an
//! [`Observed`] and [`Observer::publish`] it; the application keeps a
//! clone of the [`Observer`] and reads [`Observer::latest`] when it
//! samples. The type lives here, not in each adapter, so a program
//! sampling any stack reads the same fields with the same meanings.
//!
//! Publishing takes one uncontended lock and copies a plain value: no
//! allocation per packet (the shared slot is allocated once, with the
//! first `Observer`).

use crate::Snapshot;
use core::time::Duration;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The state of one connection's controller as of the latest event the
/// adapter published (an ACK, a loss batch; s2n-quic also a change of
/// send quantum).
///
/// The union of what the adapters know. A field an adapter cannot fill
/// stays at its default (`None` or 0); each field says which adapters
/// fill it, and each adapter's crate docs say how its stack's callbacks
/// map onto the counts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Observed {
    /// Which connection this is, when the adapter numbers its controllers
    /// (s2n: 1 for the endpoint's first, counting up, so a program that
    /// sees it change knows a new connection took over); 0 otherwise
    /// (noq, quinn).
    pub connection: u64,
    /// When this was taken, from the connection's first packet, on the
    /// controller's clock (s2n; zero where the adapter does not keep it).
    pub at: Duration,
    /// The controller's own view: cwnd, pacing rate, mode, bandwidth
    /// estimate, min_rtt, round count, gains, recovery state (all).
    pub snapshot: Snapshot,
    /// Bytes in flight as the adapter counts them: sent, less acked, lost
    /// and (s2n) discarded (all).
    pub bytes_in_flight: u64,
    /// The stack's smoothed RTT, the one its timers use (all; `None`
    /// before the first RTT sample). noq and quinn remove the peer's ACK
    /// delay from it, which the controller is not told.
    pub srtt: Option<Duration>,
    /// The latest RTT sample: the stack's (s2n), or the adapter's, from
    /// send to ACK of the newest packet of an ACK frame with the ACK delay
    /// included (noq, quinn).
    pub latest_rtt: Option<Duration>,
    /// The stack's RTT variation (s2n; `None` elsewhere).
    pub rttvar: Option<Duration>,
    /// The stack's minimum RTT (s2n; `None` elsewhere: the controller's
    /// own is in `snapshot.min_rtt`).
    pub min_rtt: Option<Duration>,
    /// The send quantum the adapter gives the stack (s2n; 0 elsewhere).
    pub send_quantum_bytes: u64,
    /// Congestion-controlled sends the controller saw: packets (s2n, noq),
    /// or transmits, each a batch of datagrams built at once (quinn
    /// reports sends that way).
    pub packets_sent: u64,
    /// Bytes of those sends (s2n; 0 elsewhere).
    pub bytes_sent: u64,
    /// Packets declared lost that the controller had seen sent (s2n,
    /// noq), or loss events (quinn, which tells lost bytes, not packets).
    pub packets_lost: u64,
    /// Bytes of the packets declared lost (s2n; 0 elsewhere).
    pub bytes_lost: u64,
    /// Bytes of the packets the controller saw acknowledged (all).
    pub bytes_acked: u64,
    /// ACK frames that acknowledged congestion-controlled bytes (s2n; 0
    /// elsewhere).
    pub acks: u64,
    /// Bytes the controller's delivery-rate sampler counts as delivered
    /// (s2n; 0 elsewhere).
    pub delivered_bytes: u64,
    /// Bytes that left flight without an ACK or a loss, e.g. with a
    /// discarded packet-number space (s2n; 0 elsewhere).
    pub bytes_discarded: u64,
    /// CE-marked packets the peer reported (s2n). noq and quinn say only
    /// that the peer's CE count rose, not by how much, so there each rise
    /// counts as one.
    pub ce_packets: u64,
    /// Recovery episodes begun, persistent congestion included (s2n; 0
    /// elsewhere).
    pub recovery_episodes: u64,
}

#[derive(Debug, Default)]
struct Slot {
    /// The newest registered controller's id; only it publishes.
    newest: u64,
    latest: Option<Observed>,
}

/// A handle on the latest [`Observed`] of the controllers an adapter's
/// factory (or endpoint provider) builds. Cheap to clone; every clone sees
/// the same state.
///
/// Which controller it shows: an adapter that numbers its controllers
/// [`register`](Observer::register)s each new one, and then only the
/// newest registered controller's [`publish`](Observer::publish)es are
/// kept (s2n: the newest connection). An adapter that does not number them
/// publishes under id 0, and the last publish wins (noq, quinn: with
/// several connections on one factory, whichever processed an event
/// last; give each connection to be observed a factory of its own).
#[derive(Clone, Debug, Default)]
pub struct Observer {
    slot: Arc<Mutex<Slot>>,
}

impl Observer {
    /// The latest state published; `None` before the first publish.
    pub fn latest(&self) -> Option<Observed> {
        self.lock().latest
    }

    /// A poisoned lock only means a panic elsewhere while copying a plain
    /// value: the value is still whole, so keep serving it.
    fn lock(&self) -> MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new controller numbered `id` (counting up from 1) takes over the
    /// observer; an older id never takes it back.
    pub fn register(&self, id: u64) {
        let mut slot = self.lock();
        if id > slot.newest {
            slot.newest = id;
        }
    }

    /// Publishes `observed` for the controller numbered `id` (0 for an
    /// adapter that does not number them). Kept only if `id` is the newest
    /// registered. One uncontended lock and a copy: no allocation.
    pub fn publish(&self, id: u64, observed: &Observed) {
        let mut slot = self.lock();
        if slot.newest == id {
            slot.latest = Some(*observed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(bytes_acked: u64) -> Observed {
        Observed {
            bytes_acked,
            ..Observed::default()
        }
    }

    /// Unnumbered publishes: the last wins, and every clone sees it.
    #[test]
    fn unnumbered_publishes_last_wins() {
        let o = Observer::default();
        let view = o.clone();
        assert_eq!(view.latest(), None);
        o.publish(0, &at(1));
        o.publish(0, &at(2));
        assert_eq!(view.latest().map(|x| x.bytes_acked), Some(2));
    }

    /// Numbered controllers: the newest registered one owns the observer;
    /// an older one's publishes are dropped, and it cannot take over again.
    #[test]
    fn the_newest_registered_controller_owns_the_observer() {
        let o = Observer::default();
        o.register(1);
        o.publish(1, &at(10));
        o.register(2);
        o.publish(1, &at(11));
        assert_eq!(o.latest().map(|x| x.bytes_acked), Some(10));
        o.publish(2, &at(20));
        o.register(1);
        o.publish(1, &at(12));
        assert_eq!(o.latest().map(|x| x.bytes_acked), Some(20));
        // Unnumbered publishes are dropped once any controller registered.
        o.publish(0, &at(99));
        assert_eq!(o.latest().map(|x| x.bytes_acked), Some(20));
    }
}
