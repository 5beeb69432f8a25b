//! A seed per connection. BBR randomises where each flow starts its
//! PROBE_BW gain cycle (Linux `bbr_reset_probe_bw_mode()`, draft-06
//! §5.3.3.6's random wait before probing) precisely so that flows sharing
//! a bottleneck do not probe in step. Every connection given the same
//! seed takes the same "random" schedule, which undoes that: an embedder
//! must give each connection its own.

use super::Config;
use crate::rng::SplitMix64;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// How a stack's adapter seeds each connection's controller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConnectionSeeds {
    /// Each connection its own seed ([`Config::for_new_connection`]): the
    /// default, and what a deployment wants.
    #[default]
    PerConnection,
    /// Every connection the configuration's own `seed`, so a run can be
    /// repeated exactly: for tests and experiments, where flows of one
    /// process then probe in step.
    Fixed,
}

impl ConnectionSeeds {
    /// The configuration of a new connection built from `base`.
    pub fn config_for(self, base: &Config) -> Config {
        match self {
            ConnectionSeeds::PerConnection => base.for_new_connection(),
            ConnectionSeeds::Fixed => *base,
        }
    }
}

/// Connections this process has seeded so far.
static CONNECTIONS: AtomicU64 = AtomicU64::new(0);

impl Config {
    /// This configuration for connection number `connection`: the seed
    /// mixed with it (SplitMix64's finaliser), everything else as is.
    /// Deterministic: the same base and number give the same seed, and
    /// different numbers differ.
    pub fn for_connection(&self, connection: u64) -> Config {
        let mut rng = SplitMix64::new(self.seed ^ connection.rotate_left(32));
        Config {
            seed: rng.next_u64() ^ connection,
            ..*self
        }
    }

    /// This configuration for one more connection of this process, with
    /// a seed no earlier connection of the process got: the base seed
    /// mixed with a per-process counter and a per-process salt (the time
    /// the process first asked and its id), so neither two connections of
    /// one process nor the first connections of two hosts share BBR's
    /// random choices. Not reproducible from run to run; use
    /// [`Config::for_connection`] (or [`ConnectionSeeds::Fixed`]) where a
    /// run must repeat exactly.
    pub fn for_new_connection(&self) -> Config {
        let k = CONNECTIONS.fetch_add(1, Ordering::Relaxed);
        Config {
            seed: self.seed ^ process_salt(),
            ..*self
        }
        .for_connection(k)
    }
}

/// 64 bits that differ between processes: the wall-clock time of the
/// first call, in nanoseconds, and the process id.
fn process_salt() -> u64 {
    static SALT: OnceLock<u64> = OnceLock::new();
    *SALT.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        SplitMix64::new(nanos ^ (u64::from(std::process::id()) << 32)).next_u64()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Algorithm;

    #[test]
    fn connections_get_their_own_seeds() {
        let base = Config::new(Algorithm::Bbr);
        let (a, b) = (base.for_connection(1), base.for_connection(2));
        assert_ne!(a.seed, b.seed);
        assert_eq!(a.seed, base.for_connection(1).seed, "deterministic");
        assert_eq!((a.algorithm, a.mss_bytes), (base.algorithm, base.mss_bytes));
        let seeds: Vec<u64> = (0..100).map(|_| base.for_new_connection().seed).collect();
        let mut unique = seeds.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), seeds.len(), "no two connections share a seed");
        assert_eq!(ConnectionSeeds::Fixed.config_for(&base), base);
        assert_ne!(
            ConnectionSeeds::PerConnection.config_for(&base).seed,
            base.seed
        );
    }
}
