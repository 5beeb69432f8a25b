//! The application's side of a sender: how much data is on offer, and
//! when more will be. Kept apart from the window logic so an app-limited
//! flow's pattern (bulk, constant rate, chunks) is one small state machine.

use crate::config::App;
use congestion::Instant;

/// What the application has for the sender.
#[derive(Clone, Debug)]
pub(crate) enum AppState {
    Bulk,
    Rate {
        bytes_per_ns: f64,
        credit: f64,
        last: Instant,
    },
    Chunks {
        bytes: u64,
        every_ns: u64,
        available: u64,
        next_at: Instant,
    },
    /// Bulk until `until`, then [`AppState::Rate`] from there.
    BulkUntil {
        after_ns: u64,
        until: Instant,
        bytes_per_ns: f64,
    },
}

impl AppState {
    pub(crate) fn new(app: &App, start: Instant) -> Self {
        match *app {
            App::Bulk => AppState::Bulk,
            App::Rate { bytes_per_sec } => AppState::Rate {
                bytes_per_ns: bytes_per_sec / 1e9,
                credit: 0.0,
                last: start,
            },
            App::BulkThenRate {
                after_ns,
                bytes_per_sec,
            } => AppState::BulkUntil {
                after_ns,
                until: start.saturating_add_nanos(after_ns),
                bytes_per_ns: bytes_per_sec / 1e9,
            },
            App::Chunks { bytes, every_ns } => AppState::Chunks {
                bytes,
                every_ns: every_ns.max(1),
                available: 0,
                next_at: start,
            },
        }
    }

    /// Brings the offered data up to `now`.
    pub(crate) fn advance(&mut self, now: Instant) {
        if let AppState::BulkUntil {
            until,
            bytes_per_ns,
            ..
        } = *self
        {
            if now < until {
                return;
            }
            // The rate starts with nothing banked at the switch.
            *self = AppState::Rate {
                bytes_per_ns,
                credit: 0.0,
                last: until,
            };
        }
        match self {
            AppState::Bulk => {}
            AppState::Rate {
                bytes_per_ns,
                credit,
                last,
            } => {
                // Cap the credit so an app-limited flow does not bank an
                // unbounded burst while the network is slow.
                *credit = (*credit + *bytes_per_ns * now.nanos_since(*last) as f64).min(1e9);
                *last = now;
            }
            AppState::Chunks {
                bytes,
                every_ns,
                available,
                next_at,
            } => {
                while *next_at <= now {
                    *available += *bytes;
                    *next_at = next_at.saturating_add_nanos(*every_ns);
                }
            }
            // Replaced by `Rate` above once its time has come.
            AppState::BulkUntil { .. } => {}
        }
    }

    /// The application starts offering data at `now` (the connection's
    /// handshake ended): nothing accrues while the connection opens.
    pub(crate) fn restart(&mut self, now: Instant) {
        match self {
            AppState::Bulk => {}
            AppState::Rate { last, .. } => *last = now,
            AppState::Chunks { next_at, .. } => *next_at = now,
            AppState::BulkUntil {
                after_ns, until, ..
            } => *until = now.saturating_add_nanos(*after_ns),
        }
    }

    pub(crate) fn has(&self, bytes: u64) -> bool {
        match self {
            AppState::Bulk | AppState::BulkUntil { .. } => true,
            AppState::Rate { credit, .. } => *credit >= bytes as f64,
            AppState::Chunks { available, .. } => *available >= bytes,
        }
    }

    pub(crate) fn consume(&mut self, bytes: u64) {
        match self {
            AppState::Bulk | AppState::BulkUntil { .. } => {}
            AppState::Rate { credit, .. } => *credit -= bytes as f64,
            AppState::Chunks { available, .. } => *available -= bytes,
        }
    }

    /// What the application has written and not yet handed over beyond
    /// its first `after` bytes, when that is some but less than a segment
    /// of `whole` bytes: the tail of a chunk, which may go as a short
    /// segment (`sender/tail.rs`). Only chunk writes have tails (see
    /// there).
    ///
    /// Always inlined: the sender asks once per packet, and a bulk
    /// application must pay no more than the test of its kind.
    #[inline(always)]
    pub(crate) fn tail(&self, after: u64, whole: u64) -> Option<u64> {
        match *self {
            AppState::Chunks { available, .. } => {
                let left = available.checked_sub(after)?;
                (left > 0 && left < whole).then_some(left)
            }
            _ => None,
        }
    }

    /// When `bytes` more will be on offer.
    pub(crate) fn ready_at(&self, bytes: u64) -> Option<Instant> {
        match self {
            AppState::Bulk | AppState::BulkUntil { .. } => None,
            AppState::Rate {
                bytes_per_ns,
                credit,
                last,
            } => {
                let need = bytes as f64 - *credit;
                Some(last.saturating_add_nanos((need / bytes_per_ns).ceil().max(1.0) as u64))
            }
            AppState::Chunks { next_at, .. } => Some(*next_at),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bulk_then_rate_offers_everything_until_its_time_then_only_the_rate() {
        let app = App::BulkThenRate {
            after_ns: 1_000_000_000,
            bytes_per_sec: 1e6,
        };
        let mut a = AppState::new(&app, Instant::from_nanos(0));
        // The connection opens at 0.1 s: the bulk phase runs from there.
        a.restart(Instant::from_nanos(100_000_000));
        a.advance(Instant::from_nanos(1_099_000_000));
        assert!(a.has(u64::MAX), "bulk before its end");
        assert_eq!(a.ready_at(1500), None);
        // 2 ms after the switch: 2,000 bytes on offer, none banked before.
        a.advance(Instant::from_nanos(1_102_000_000));
        assert!(a.has(2_000) && !a.has(2_001));
        a.consume(1_500);
        assert!(!a.has(1_500));
        // The next 1,500 bytes need 1 ms more: ready 1 ms after now.
        assert_eq!(a.ready_at(1_500), Some(Instant::from_nanos(1_103_000_000)));
    }
}
