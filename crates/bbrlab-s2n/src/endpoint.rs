//! The s2n-quic congestion-controller provider.

use crate::controller::CongestionController;
use crate::shared::Shared;
use bbrlab_adapter::Recipe;
use congestion::observe::Observer;
use congestion::{Config, ConfigError, CongestionControl, ConnectionSeeds};
use s2n_quic_core::recovery::congestion_controller::{self as s2n, PathInfo};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// bbrlab's controllers as an s2n-quic congestion-controller provider:
/// pass it to `s2n_quic::Server::builder().with_congestion_controller(..)`
/// (or the client's). Each new path gets its own
/// [`CongestionController`]. Cloning shares the configuration and the
/// [`Observer`].
#[derive(Clone)]
pub struct Endpoint {
    shared: Arc<Shared>,
}

impl core::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Endpoint")
            .field("algorithm", &self.shared.recipe.config().algorithm.name())
            .field("custom", &self.shared.recipe.is_custom())
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// Every connection runs the built-in `config.algorithm` with
    /// `config`'s settings; the MSS is taken from each path's datagram
    /// size instead of `config.mss_bytes`.
    /// `config.initial_cwnd_packets` stays a count of datagrams, of the
    /// path's size when s2n-quic creates its controller:
    /// [`Config::for_quic`] derived it from RFC 9002 §7.2 for the size it
    /// was given, so give it the size the path starts at.
    pub fn new(config: Config) -> Self {
        Self::with_recipe(Recipe::new(config))
    }

    /// As [`Endpoint::new`], after [`Config::check`]: a setting the
    /// algorithms' rules are not defined on (a NaN gain, a β above 1) is
    /// refused here, named with its field and range, where the
    /// application took it from its user.
    /// So is `recovery_exit: RecoveryExit::Transport`, whose episodes
    /// end only on a recovery point s2n-quic never reports
    /// ([`bbrlab_adapter::Recipe::try_new`]).
    pub fn try_new(config: Config) -> Result<Self, ConfigError> {
        Ok(Self::with_recipe(Recipe::try_new(config)?))
    }

    /// Every connection runs the algorithm `factory` builds, inside a
    /// [`Controller`](congestion::Controller) (rate sampling, RTT estimation, recovery episodes
    /// and pacing hints, as for the built-in ones). `config` supplies the
    /// MSS default and the recovery-exit rule; `factory` gets it with the
    /// path's MSS set.
    pub fn custom<F>(config: Config, factory: F) -> Self
    where
        F: Fn(&Config) -> Box<dyn CongestionControl + Send + Sync> + Send + Sync + 'static,
    {
        Self::with_recipe(Recipe::custom(config, factory))
    }

    /// As [`Endpoint::custom`], after the checks of [`Endpoint::try_new`]
    /// (`config` still sets the recovery-exit rule around the user's
    /// algorithm).
    pub fn try_custom<F>(config: Config, factory: F) -> Result<Self, ConfigError>
    where
        F: Fn(&Config) -> Box<dyn CongestionControl + Send + Sync> + Send + Sync + 'static,
    {
        Ok(Self::with_recipe(Recipe::try_custom(config, factory)?))
    }

    fn with_recipe(recipe: Recipe) -> Self {
        Endpoint {
            shared: Arc::new(Shared {
                recipe,
                next_id: AtomicU64::new(1),
            }),
        }
    }

    /// How each connection's controller is seeded: by default its own
    /// seed ([`ConnectionSeeds::PerConnection`]), so connections do not
    /// probe in step; [`ConnectionSeeds::Fixed`] gives every one
    /// `config.seed`, for runs that must repeat exactly.
    /// It returns the new value: a call whose result is dropped changes nothing.
    #[must_use]
    pub fn with_seeds(self, seeds: ConnectionSeeds) -> Self {
        Endpoint {
            shared: Arc::new(Shared {
                recipe: self.shared.recipe.clone().with_seeds(seeds),
                next_id: AtomicU64::new(self.shared.next_id.load(Ordering::Relaxed)),
            }),
        }
    }

    /// A handle on the newest connection's controller state.
    pub fn observer(&self) -> Observer {
        self.shared.recipe.observer().clone()
    }

    /// The configuration every connection starts from.
    pub fn config(&self) -> &Config {
        self.shared.recipe.config()
    }

    /// A controller for a path with datagrams of `max_datagram_size`
    /// bytes, as s2n-quic would create it; for tests and for driving the
    /// adapter without a network.
    pub fn new_controller(&self, max_datagram_size: u16) -> CongestionController {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        self.shared.recipe.observer().register(id);
        let seed = self.shared.recipe.next_seed();
        CongestionController::new(self.shared.clone(), max_datagram_size, id, seed)
    }
}

impl s2n::Endpoint for Endpoint {
    type CongestionController = CongestionController;

    fn new_congestion_controller(&mut self, path_info: PathInfo) -> CongestionController {
        self.new_controller(path_info.max_datagram_size)
    }
}
