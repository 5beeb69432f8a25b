//! bbrlab's congestion controllers inside [noq](https://docs.rs/noq), a
//! QUIC stack forked from quinn.
//!
//! [`ControllerFactory`] implements noq-proto's
//! [`noq_proto::congestion::ControllerFactory`]: hand it to
//! `TransportConfig::congestion_controller_factory` and every connection
//! (every path, with multipath) runs a [`congestion::Controller`] with
//! bbrlab's `bbr`, `bbr-jitter`, `bbr3`, `cubic`, `reno`, or your own
//! [`congestion::CongestionControl`]. noq paces at the rate the controller
//! asks for and batches sends by its send quantum, so BBR runs here as it
//! is meant to: pacing, with its own cwnd as a cap. (Checked on loopback:
//! a user's algorithm with a 64 MiB window pacing at 5 MB/s moved 20 MB
//! in 4.42 s through noq, 4.5 MB/s of goodput; through quinn 0.11, which
//! paces from the window, the same run took 0.22 s.)
//!
//! ```no_run
//! # // no_run: builds a real endpoint; tests/loopback.rs runs a transfer.
//! use std::sync::Arc;
//! use bbrlab_noq::{Algorithm, Config, ControllerFactory};
//!
//! let factory = ControllerFactory::new(Config::for_quic(Algorithm::Bbr, 1200));
//! let observer = factory.observer();
//! let mut transport = noq::TransportConfig::default();
//! transport.congestion_controller_factory(Arc::new(factory));
//! // ... build a ClientConfig with `transport`, connect, send ...
//! if let Some(o) = observer.latest() {
//!     println!("{:?} cwnd {} pacing {} B/s", o.snapshot.mode,
//!              o.snapshot.cwnd_bytes, o.snapshot.pacing_rate_bytes_per_sec);
//! }
//! ```
//!
//! # Mapping (noq-proto 1.4)
//!
//! | noq calls | bbrlab's [`congestion::Controller`] gets |
//! |---|---|
//! | `ControllerFactory::build(now, mtu)` | `Controller::new` (or `custom`) with `mss_bytes = mtu`; bbrlab's clock starts at `now` |
//! | `on_packet_sent(now, bytes, pn)` (each ack-eliciting packet) | `on_packet_sent(now, bytes, in_flight_before, false)`; the returned `SentPacketState` is kept in the adapter's ring |
//! | `on_sent(now, bytes, last_pn)` (per datagram batch) | nothing (the per-packet call carries it) |
//! | `on_ack(now, sent, bytes, pn, app_limited, rtt)` (each packet of an ACK frame) | each: the stored state goes into the frame's `AckedPacket`s |
//! | `on_end_acks(now, in_flight, app_limited, largest)` | closes the frame: its `AckEvent` gets `prior_bytes_in_flight = in_flight + acked bytes`, `app_limited` as noq says, one RTT sample from the frame's newest packet |
//! | `on_packet_lost(bytes, pn, now)` | the stored state goes into the frame's `LostPacket`s; discontiguous packet numbers count as separate ranges |
//! | `on_congestion_event(.., is_persistent_congestion, is_ecn, lost_bytes, ..)` | `is_ecn`: one CE mark in the frame's event; persistent: the event's `persistent_congestion` (bbrlab's timeout after the losses) |
//! | `on_spurious_congestion_event()` | the next ACK frame's event says `spurious_loss` |
//! | `on_mtu_update(mtu)` | `on_mss_change(mtu)` |
//! | `window()`, `initial_window()` | `cwnd_bytes()`, the cwnd at creation |
//! | `metrics()` | `pacing_rate: pacing_rate_bytes_per_sec()`, `send_quantum: send_quantum_bytes()`, `bandwidth_estimate` (bit/s), which noq's pacer and GSO batching obey |
//! | `clone_box()` (path migration) | a copy with all its state (`Controller::try_clone`); a fresh controller from the same factory only for a user's algorithm without `clone_box` (see below) |
//! | `on_cwnd_limited`, `on_ack_frequency_update` | nothing: bbrlab's controllers do not use them |
//!
//! ## Order within an ACK frame
//!
//! noq reports an ACK frame as: spurious-loss detection, each acknowledged
//! packet (`on_ack`), `on_end_acks`, then loss detection (`on_packet_lost`
//! for each, one `on_congestion_event`), then ECN (`on_congestion_event`
//! with `is_ecn`); see `inner_on_ack_received` in noq-proto's
//! `connection/mod.rs`. bbrlab's controller wants the frame's losses
//! *before* its rate sample (Linux marks losses in `tcp_ack()` before
//! `tcp_rate_gen()`, and BBR's packet conservation and BBRv3's loss rate
//! read them from the sample). So the adapter collects the frame and hands
//! it to the controller as one `AckEvent` at noq's next call of any other
//! kind (`window()`, `metrics()`, a send, the next frame); the controller
//! applies Linux's order inside. noq asks `metrics()` at the start of every
//! `poll_transmit`, so nothing is sent on a window the frame has not yet
//! updated. Losses a timer declares (at another instant) go in alone
//! (`on_timer_losses`).
//!
//! ## What is approximated or missing
//!
//! - **Packet identity.** noq gives packet numbers, but Initial, Handshake
//!   and application data each number from 0. A packet is found by its
//!   number and send time on ACK, by number and size on loss (noq passes
//!   no send time there); the pairs could only collide during the
//!   handshake. Slots of packets noq drops silently (discarded Initial and
//!   Handshake spaces, the old path after a migration) are pruned once a
//!   packet sent two smoothed RTTs later is acknowledged.
//! - **Ring.** The states sit in a `VecDeque` in send order, marked dead
//!   on ACK or loss and popped from the front: no allocation per packet
//!   once it has grown to the largest flight.
//! - **Frames without data.** noq closes every frame that acknowledges
//!   anything with `on_end_acks`, ack-only packets included, which never
//!   reach `on_ack`. A frame with nothing the controller saw sent is no
//!   ACK event for it; its losses go in alone (`on_timer_losses`).
//! - **Bytes in flight.** The adapter counts its own between ACKs and
//!   takes noq's count at every `on_end_acks`.
//! - **App-limited.** noq says per ACK (`app_limited`: the last
//!   `poll_transmit` had nothing to send and was not blocked), not per
//!   send; the frame's event then says `app_limited`, which marks the
//!   sampler app-limited before the frame's rate sample.
//! - **RTT.** noq does not hand the controller the peer's ACK delay: the
//!   controller's samples include it. [`Observed::srtt`] is noq's own.
//! - **ECN.** noq reports that the CE count rose, not by how much: one
//!   CE mark per report, so BBRv3's CE fraction is a lower bound.
//! - **PTO.** noq does not tell the controller of probe timeouts; only
//!   persistent congestion reaches it (as bbrlab's timeout).
//! - **Spurious loss.** noq detects it (every packet declared lost was
//!   acknowledged after all) and the adapter undoes the episode with
//!   `on_spurious_loss`.
//! - **Pacer feedback.** noq's pacer keeps its next departure time to
//!   itself, so `Controller::set_next_departure` is never called; BBR
//!   judges its phases without the EDT discount Linux applies.
//! - **Path migration.** noq clones the controller (`clone_box`) only
//!   when a path's new address looks like a NAT rebinding (same IPv4
//!   address, new port: noq-proto's `Connection::migrate`), keeping the
//!   old RTT with it; any other new path gets a fresh controller from the
//!   factory (`build`). The clone is the controller with what it learned
//!   and the packets it still expects to hear of. Only a user's
//!   algorithm without `CongestionControl::clone_box` cannot be copied;
//!   its clone starts afresh.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod adapter;

/// The controller's state for a time series, shared by every bbrlab
/// adapter (see [`congestion::observe`]). Here it is published after each
/// ACK or loss the controller processes, under id 0 (the last publish
/// wins). An ACK frame is processed at noq's next call after it, so the
/// newest frame shows once the stack next sends or asks for its window.
pub use congestion::observe::{Observed, Observer};
/// The `congestion` crate this adapter runs, and the types a user names to
/// configure it, so a program needs no separate dependency on it (and
/// cannot end up with a second, different version).
pub use congestion::{self, Algorithm, Bbr3Config, Config, ConfigError, ConnectionSeeds};

use crate::adapter::Core;
use bbrlab_adapter::Recipe;
use congestion::CongestionControl;
use noq_proto::congestion::{self as noq_cc, ControllerMetrics};
use noq_proto::RttEstimator;
use std::any::Any;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

/// Builds a bbrlab controller for each noq connection (and path).
#[derive(Debug)]
pub struct ControllerFactory {
    recipe: Recipe,
}

impl ControllerFactory {
    /// Controllers running `config.algorithm`. `config.mss_bytes` is
    /// replaced by noq's MTU: the stack counts whole datagrams.
    /// `config.initial_cwnd_packets` stays a count of datagrams, of
    /// noq's MTU when it builds the controller (its `initial_mtu`): [`Config::for_quic`] derived it from RFC 9002 §7.2 for the
    /// size it was given, so give it the MTU the stack starts at.
    pub fn new(config: Config) -> Self {
        ControllerFactory {
            recipe: Recipe::new(config),
        }
    }

    /// As [`ControllerFactory::new`], after [`Config::check`]: a setting
    /// the algorithms' rules are not defined on (a NaN gain, a β above 1)
    /// is refused here, named with its field and range, where the
    /// application took it from its user.
    /// So is `recovery_exit: RecoveryExit::Transport`, whose episodes
    /// end only on a recovery point the stack never reports
    /// ([`bbrlab_adapter::Recipe::try_new`]).
    pub fn try_new(config: Config) -> Result<Self, ConfigError> {
        Ok(ControllerFactory {
            recipe: Recipe::try_new(config)?,
        })
    }

    /// Controllers running a user's algorithm, built by `factory` from
    /// `config` (with noq's MTU as `mss_bytes`) for each connection.
    pub fn custom<F>(config: Config, factory: F) -> Self
    where
        F: Fn(&Config) -> Box<dyn CongestionControl + Send + Sync> + Send + Sync + 'static,
    {
        ControllerFactory {
            recipe: Recipe::custom(config, factory),
        }
    }

    /// As [`ControllerFactory::custom`], after the checks of [`ControllerFactory::try_new`]
    /// (`config` still sets the recovery-exit rule around the user's
    /// algorithm).
    pub fn try_custom<F>(config: Config, factory: F) -> Result<Self, ConfigError>
    where
        F: Fn(&Config) -> Box<dyn CongestionControl + Send + Sync> + Send + Sync + 'static,
    {
        Ok(ControllerFactory {
            recipe: Recipe::try_custom(config, factory)?,
        })
    }

    /// How each connection's controller is seeded: by default its own
    /// seed ([`ConnectionSeeds::PerConnection`]), so connections do not
    /// probe in step; [`ConnectionSeeds::Fixed`] gives every one
    /// `config.seed`, for runs that must repeat exactly.
    /// It returns the new value: a call whose result is dropped changes nothing.
    #[must_use]
    pub fn with_seeds(mut self, seeds: ConnectionSeeds) -> Self {
        self.recipe = self.recipe.with_seeds(seeds);
        self
    }

    /// A handle on the latest state of the controllers this factory
    /// builds: with several connections, whichever last processed an ACK
    /// or a loss (they publish unnumbered; see [`Observer`]), so give a
    /// connection to be observed a factory of its own.
    pub fn observer(&self) -> Observer {
        self.recipe.observer().clone()
    }

    fn controller(self: &Arc<Self>, now: Instant, mtu: u16) -> NoqController {
        let (cc, seed) = self.recipe.build(u64::from(mtu), congestion::Instant::ZERO);
        let initial_window = cc.cwnd_bytes();
        NoqController {
            factory: Arc::clone(self),
            mtu,
            initial_window,
            seed,
            core: Mutex::new(Core::new(cc, now, self.recipe.observer().clone())),
        }
    }
}

impl noq_cc::ControllerFactory for ControllerFactory {
    fn build(self: Arc<Self>, now: Instant, current_mtu: u16) -> Box<dyn noq_cc::Controller> {
        Box::new(self.controller(now, current_mtu))
    }
}

/// One connection's (or path's) controller, as noq holds it.
///
/// noq wants its controllers `Sync` and queries `window()` and `metrics()`
/// through `&self`; the state sits in a `Mutex` that noq's `&mut self`
/// calls reach without locking (`Mutex::get_mut`), and the queries lock
/// (uncontended: noq drives a connection from one task) to replay a
/// held-back ACK frame first.
pub struct NoqController {
    factory: Arc<ControllerFactory>,
    mtu: u16,
    initial_window: u64,
    /// The seed of its algorithm's random choices.
    seed: u64,
    core: Mutex<Core>,
}

impl core::fmt::Debug for NoqController {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("NoqController")
            .field("core", &*self.lock())
            .finish()
    }
}

impl NoqController {
    /// The seed of this connection's random choices (BBR's PROBE_BW
    /// phase): its own unless the factory was told
    /// [`ConnectionSeeds::Fixed`]; for logs that tie a run to it.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    fn core(&mut self) -> &mut Core {
        self.core.get_mut().unwrap_or_else(PoisonError::into_inner)
    }

    fn lock(&self) -> MutexGuard<'_, Core> {
        self.core.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The controller's state now (for a program that downcast noq's
    /// controller through `into_any`).
    pub fn snapshot(&self) -> congestion::Snapshot {
        self.lock().controller().snapshot()
    }
}

impl noq_cc::Controller for NoqController {
    fn on_packet_sent(&mut self, now: Instant, bytes: u16, pn: u64) {
        self.core().sent(now, u64::from(bytes), pn);
    }

    fn on_ack(
        &mut self,
        now: Instant,
        sent: Instant,
        bytes: u64,
        pn: u64,
        _app_limited: bool,
        rtt: &RttEstimator,
    ) {
        self.core().ack(now, sent, bytes, pn, rtt.get());
    }

    fn on_end_acks(
        &mut self,
        now: Instant,
        in_flight: u64,
        app_limited: bool,
        _largest_packet_num_acked: Option<u64>,
    ) {
        self.core().end_acks(now, in_flight, app_limited);
    }

    fn on_packet_lost(&mut self, lost_bytes: u16, pn: u64, now: Instant) {
        self.core().lost(now, u64::from(lost_bytes), pn);
    }

    fn on_congestion_event(
        &mut self,
        now: Instant,
        _sent: Instant,
        is_persistent_congestion: bool,
        is_ecn: bool,
        _lost_bytes: u64,
        _largest_lost_pn: u64,
    ) {
        self.core()
            .congestion_event(now, is_persistent_congestion, is_ecn);
    }

    fn on_spurious_congestion_event(&mut self) {
        self.core().spurious();
    }

    fn on_mtu_update(&mut self, new_mtu: u16) {
        self.mtu = new_mtu;
        self.core().mtu(new_mtu);
    }

    fn window(&self) -> u64 {
        self.lock().controller().cwnd_bytes()
    }

    fn metrics(&self) -> ControllerMetrics {
        let mut core = self.lock();
        let (bandwidth, ssthresh) = core.estimates();
        let cc = core.controller();
        let mut m = ControllerMetrics::default();
        m.congestion_window = cc.cwnd_bytes();
        m.ssthresh = ssthresh;
        m.pacing_rate = Some(cc.pacing_rate_bytes_per_sec());
        m.send_quantum = Some(cc.send_quantum_bytes());
        m.bandwidth_estimate = bandwidth;
        m
    }

    fn clone_box(&self) -> Box<dyn noq_cc::Controller> {
        // The connection's controller with its state, as the stack asks;
        // a fresh one from the factory only when it cannot be copied.
        match self.lock().try_clone() {
            Some(core) => Box::new(NoqController {
                factory: Arc::clone(&self.factory),
                mtu: self.mtu,
                initial_window: self.initial_window,
                seed: self.seed,
                core: Mutex::new(core),
            }),
            None => Box::new(self.factory.controller(Instant::now(), self.mtu)),
        }
    }

    fn initial_window(&self) -> u64 {
        self.initial_window
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

#[cfg(test)]
mod tests;
