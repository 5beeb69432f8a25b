//! How each connection's controller is made.

use congestion::observe::Observer;
use congestion::{
    Config, ConfigError, CongestionControl, ConnectionSeeds, Controller, Instant, RecoveryExit,
};
use std::sync::Arc;

/// Builds a user's algorithm from a connection's configuration.
pub type MakeAlgorithm = dyn Fn(&Config) -> Box<dyn CongestionControl + Send + Sync> + Send + Sync;

/// How an adapter makes each connection's [`Controller`]: the
/// configuration, a user's algorithm if any, how connections are seeded,
/// and the [`Observer`] every controller of this recipe publishes to.
/// Cheap to clone (the user's algorithm and the observer are shared).
#[derive(Clone)]
pub struct Recipe {
    config: Config,
    make: Option<Arc<MakeAlgorithm>>,
    seeds: ConnectionSeeds,
    observer: Observer,
}

impl core::fmt::Debug for Recipe {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Recipe")
            .field("algorithm", &self.config.algorithm.name())
            .field("custom", &self.make.is_some())
            .field("seeds", &self.seeds)
            .finish_non_exhaustive()
    }
}

impl Recipe {
    /// Controllers running `config.algorithm`, each connection with its
    /// own seed ([`ConnectionSeeds::PerConnection`]).
    pub fn new(config: Config) -> Self {
        Recipe {
            config,
            make: None,
            seeds: ConnectionSeeds::default(),
            observer: Observer::default(),
        }
    }

    /// As [`Recipe::new`], after [`Config::check`]: a setting the
    /// algorithms' rules are not defined on (a NaN gain, a β above 1) is
    /// refused where the embedder made it, with the field and its range,
    /// rather than found later as a controller that paces at a byte a
    /// second.
    ///
    /// Also refused: [`RecoveryExit::Transport`]. Its episodes end only on
    /// an [`AckEvent`](congestion::AckEvent) whose
    /// [`RecoveryPoint`](congestion::RecoveryPoint) the transport sets, and
    /// no QUIC stack reports one (RFC 9002 has no cumulative ACK point to
    /// set it from): the first loss would open an episode that never
    /// ends, and CUBIC and Reno would never grow their window again.
    pub fn try_new(config: Config) -> Result<Self, ConfigError> {
        check_for_stack(&config)?;
        Ok(Recipe::new(config))
    }

    /// Controllers running a user's algorithm, built by `make` from each
    /// connection's configuration (its `algorithm` field is then only a
    /// label).
    pub fn custom<F>(config: Config, make: F) -> Self
    where
        F: Fn(&Config) -> Box<dyn CongestionControl + Send + Sync> + Send + Sync + 'static,
    {
        Recipe {
            make: Some(Arc::new(make)),
            ..Recipe::new(config)
        }
    }

    /// As [`Recipe::custom`], after the checks of [`Recipe::try_new`]:
    /// `config` still sets the MSS default and the recovery-exit rule
    /// around the user's algorithm (and `make` may build a built-in one
    /// from it, through [`congestion::builtin`]).
    pub fn try_custom<F>(config: Config, make: F) -> Result<Self, ConfigError>
    where
        F: Fn(&Config) -> Box<dyn CongestionControl + Send + Sync> + Send + Sync + 'static,
    {
        check_for_stack(&config)?;
        Ok(Recipe::custom(config, make))
    }

    /// How connections are seeded: by default each its own, so that flows
    /// sharing a bottleneck do not probe in step; [`ConnectionSeeds::Fixed`]
    /// gives every one `config.seed`, for runs that must repeat.
    #[must_use]
    pub fn with_seeds(mut self, seeds: ConnectionSeeds) -> Self {
        self.seeds = seeds;
        self
    }

    /// The configuration every connection starts from.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Whether the controllers run a user's algorithm.
    pub fn is_custom(&self) -> bool {
        self.make.is_some()
    }

    /// The observer every controller of this recipe publishes to.
    pub fn observer(&self) -> &Observer {
        &self.observer
    }

    /// A new connection's controller, counting in datagrams of
    /// `datagram_size` bytes and started at `now`, with the seed it drew.
    pub fn build(&self, datagram_size: u64, now: Instant) -> (Controller, u64) {
        let seed = self.next_seed();
        (self.build_seeded(datagram_size, seed, now), seed)
    }

    /// The seed the next connection gets (its own, or `config.seed` with
    /// [`ConnectionSeeds::Fixed`]).
    pub fn next_seed(&self) -> u64 {
        self.seeds.config_for(&self.config).seed
    }

    /// A controller with a given `seed`: for a stack that rebuilds a
    /// connection's controller (a copy of one whose algorithm cannot be
    /// cloned), which must keep the connection's seed.
    pub fn build_seeded(&self, datagram_size: u64, seed: u64, now: Instant) -> Controller {
        let mut config = self.config;
        config.seed = seed;
        config.mss_bytes = datagram_size.max(1);
        match &self.make {
            Some(make) => Controller::custom(&config, make(&config)),
            None => Controller::new(&config, now),
        }
    }
}

/// [`Config::check`], and the one setting no QUIC stack can run:
/// [`RecoveryExit::Transport`] (see [`Recipe::try_new`]).
fn check_for_stack(config: &Config) -> Result<(), ConfigError> {
    config.check()?;
    if config.recovery_exit == RecoveryExit::Transport {
        return Err(ConfigError::new(
            "recovery_exit",
            format_args!("{:?}", config.recovery_exit),
            "FirstAckAfterStart (RFC 9002 §7.3.2): a QUIC stack reports no recovery point",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use congestion::Algorithm;

    #[test]
    fn try_new_refuses_an_undefined_setting_and_takes_a_defined_one() {
        let mut c = Config::new(Algorithm::Bbr3);
        c.bbr3.beta = 1.5;
        let e = Recipe::try_new(c).unwrap_err();
        assert_eq!((e.field, e.value.as_str()), ("bbr3.beta", "1.5"));
        let r = Recipe::try_new(Config::new(Algorithm::Bbr3)).unwrap();
        assert_eq!(r.config().algorithm, Algorithm::Bbr3);
    }

    /// No stack sets a recovery point, so an episode under
    /// `RecoveryExit::Transport` would never end: refused, naming the
    /// field. Before, `try_new` took it, and a CUBIC connection's window
    /// stayed frozen from its first loss on.
    #[test]
    fn try_new_refuses_episodes_no_stack_can_end() {
        let mut c = Config::for_quic(Algorithm::Cubic, 1200);
        c.recovery_exit = RecoveryExit::Transport;
        let e = Recipe::try_new(c).unwrap_err();
        assert_eq!((e.field, e.value.as_str()), ("recovery_exit", "Transport"));
        assert!(e.to_string().contains("FirstAckAfterStart"), "{e}");
        let custom = Recipe::try_custom(c, |c| congestion::builtin(c, Instant::ZERO));
        assert_eq!(custom.unwrap_err().field, "recovery_exit");
        c.recovery_exit = RecoveryExit::FirstAckAfterStart;
        assert!(Recipe::try_new(c).is_ok());
        assert!(Recipe::try_custom(c, |c| congestion::builtin(c, Instant::ZERO)).is_ok());
        let mut bad = c;
        bad.mss_bytes = 0;
        let custom = Recipe::try_custom(bad, |c| congestion::builtin(c, Instant::ZERO));
        assert_eq!(custom.unwrap_err().field, "mss_bytes");

        // Why: acknowledgements as a stack reports them (no recovery
        // point) never end such an episode, so CUBIC never grows again.
        c.recovery_exit = RecoveryExit::Transport;
        let (mut cc, _) = Recipe::new(c).build(1200, Instant::ZERO);
        let ms = |n: u64| Instant::from_nanos(n * 1_000_000);
        let mut sent = Vec::new();
        for i in 0..10 {
            sent.push(cc.on_packet_sent(ms(0), 1200, i * 1200, false));
        }
        let lost = [congestion::LostPacket {
            bytes: 1200,
            state: sent[0],
        }];
        let acked: Vec<_> = sent[1..]
            .iter()
            .map(|&state| congestion::AckedPacket { bytes: 1200, state })
            .collect();
        cc.on_ack(&congestion::AckEvent::new(ms(40), &acked, 12_000, 0).lost(&lost, 1));
        let after_loss = cc.cwnd_bytes();
        for round in 1..50u64 {
            let t = ms(40 * round);
            let state = cc.on_packet_sent(t, 1200, 0, false);
            let acked = [congestion::AckedPacket { bytes: 1200, state }];
            cc.on_ack(&congestion::AckEvent::new(
                ms(40 * round + 40),
                &acked,
                1200,
                0,
            ));
        }
        assert_eq!(cc.recovery_state(), congestion::RecoveryState::Recovery);
        assert!(cc.cwnd_bytes() <= after_loss, "{}", cc.cwnd_bytes());
    }

    #[test]
    fn each_connection_gets_its_datagram_size_and_by_default_its_own_seed() {
        let r = Recipe::new(Config::new(Algorithm::Bbr));
        let (a, seed_a) = r.build(1200, Instant::ZERO);
        let (_, seed_b) = r.build(1200, Instant::ZERO);
        assert_eq!(a.mss_bytes(), 1200);
        assert_eq!(a.algorithm(), Some(Algorithm::Bbr));
        assert_ne!(seed_a, seed_b);
        let fixed = r.clone().with_seeds(ConnectionSeeds::Fixed);
        assert_eq!(fixed.build(1200, Instant::ZERO).1, fixed.config().seed);
        assert_eq!(
            fixed.build(0, Instant::ZERO).0.mss_bytes(),
            1,
            "at least one byte"
        );
    }

    #[test]
    fn a_custom_recipe_builds_the_users_algorithm() {
        let r = Recipe::custom(Config::new(Algorithm::Cubic), |c| {
            congestion::builtin(c, Instant::ZERO)
        });
        assert!(r.is_custom());
        let (cc, _) = r.build(1500, Instant::ZERO);
        assert_eq!(cc.algorithm(), None);
        assert_eq!(cc.name(), "cubic");
    }
}
