//! What every controller of one [`crate::Endpoint`] shares: its
//! configuration, the user's algorithm factory, the observer and the
//! connection counter. A leaf of the crate, so the endpoint (which makes
//! controllers) and the controller (which reads this) do not import each
//! other.

use congestion::observe::Observer;
use congestion::Instant;
use congestion::{Config, CongestionControl, Controller};
use std::sync::atomic::AtomicU64;

/// Builds a user's algorithm for each new connection.
pub(crate) type Factory = dyn Fn(&Config) -> Box<dyn CongestionControl + Send + Sync> + Send + Sync;

/// What every controller of one [`Endpoint`] shares.
pub(crate) struct Shared {
    pub(crate) config: Config,
    pub(crate) factory: Option<Box<Factory>>,
    pub(crate) observer: Observer,
    pub(crate) next_id: AtomicU64,
}

impl Shared {
    /// A controller for `config` (its MSS set to the path's datagram size).
    pub(crate) fn build(&self, config: &Config, now: Instant) -> Controller {
        match &self.factory {
            Some(f) => Controller::custom(config, f(config)),
            None => Controller::new(config, now),
        }
    }
}
