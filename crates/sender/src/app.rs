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
        }
    }

    /// The application starts offering data at `now` (the connection's
    /// handshake ended): nothing accrues while the connection opens.
    pub(crate) fn restart(&mut self, now: Instant) {
        match self {
            AppState::Bulk => {}
            AppState::Rate { last, .. } => *last = now,
            AppState::Chunks { next_at, .. } => *next_at = now,
        }
    }

    pub(crate) fn has(&self, bytes: u64) -> bool {
        match self {
            AppState::Bulk => true,
            AppState::Rate { credit, .. } => *credit >= bytes as f64,
            AppState::Chunks { available, .. } => *available >= bytes,
        }
    }

    pub(crate) fn consume(&mut self, bytes: u64) {
        match self {
            AppState::Bulk => {}
            AppState::Rate { credit, .. } => *credit -= bytes as f64,
            AppState::Chunks { available, .. } => *available -= bytes,
        }
    }

    /// When `bytes` more will be on offer.
    pub(crate) fn ready_at(&self, bytes: u64) -> Option<Instant> {
        match self {
            AppState::Bulk => None,
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
