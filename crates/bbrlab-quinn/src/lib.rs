//! bbrlab's congestion controllers inside [quinn](https://docs.rs/quinn) 0.11.
//!
//! [`ControllerFactory`] implements quinn-proto's
//! [`quinn_proto::congestion::ControllerFactory`]: hand it to
//! `TransportConfig::congestion_controller_factory` and every connection
//! runs a [`congestion::Controller`] with bbrlab's `bbr`, `bbr-jitter`,
//! `bbr3`, `cubic`, `reno`, or your own [`congestion::CongestionControl`].
//!
//! # quinn paces from the window, not from the controller
//!
//! quinn 0.11 paces every connection at 1.25 × window / smoothed RTT,
//! whatever the controller says: its `Controller` trait has no pacing
//! rate, and its pacer reads only `window()`. A window-based controller
//! (`cubic`, `reno`) runs here as designed. **BBR does not**: its pacing
//! rate, the half of its model that sets how fast it sends, is ignored
//! (`metrics()` reports it, and quinn only logs it to qlog). BBR runs
//! cwnd-limited: quinn sends up to 1.25 × cwnd / srtt, and with BBR's
//! cwnd of 2 × estimated bandwidth × min RTT (plus its ACK-aggregation
//! allowance) that is at least 2.5 × the estimate × min RTT / srtt, so
//! BBR's pacing gains (1.25 to probe, 0.75 to drain) reach the sending
//! rate only through the window.
//!
//! What the window does, measured with `examples/bulk.rs --cc bbr` on
//! loopback (600 MB, sampled every 200 ms through the [`Observer`]): it
//! stayed bounded, 0.38–0.51 MB through 3.8 s of ProbeBW, mostly the
//! ACK-aggregation allowance (the min RTT was 19 µs, the bandwidth
//! estimate 3.2–4.2 Gbit/s against 1.27 Gbit/s of goodput), with 9 % of
//! packets lost (sender and receiver share one thread there). bbrlab's
//! loopback measurement of quinn's own BBR (issue 23) found its window at
//! 1.1–1.9 GB. (quinn's BBR is, in a maintainer's words, "highly
//! experimental and not currently maintained".)
//!
//! **For BBR, use s2n-quic through `bbrlab-s2n` or noq through
//! `bbrlab-noq`**, which pace at the controller's rate.
//!
//! ```no_run
//! # // no_run: builds a real endpoint; tests/loopback.rs runs a transfer.
//! use std::sync::Arc;
//! use bbrlab_quinn::{Algorithm, Config, ControllerFactory};
//!
//! let factory = ControllerFactory::new(Config::for_quic(Algorithm::Cubic, 1200));
//! let observer = factory.observer();
//! let mut transport = quinn::TransportConfig::default();
//! transport.congestion_controller_factory(Arc::new(factory));
//! // ... build a ClientConfig with `transport`, connect, send ...
//! if let Some(o) = observer.latest() {
//!     println!("{:?} cwnd {}", o.snapshot.mode, o.snapshot.cwnd_bytes);
//! }
//! ```
//!
//! # Mapping (quinn-proto 0.11.19)
//!
//! | quinn calls | bbrlab's [`congestion::Controller`] gets |
//! |---|---|
//! | `ControllerFactory::build(now, mtu)` | `Controller::new` (or `custom`) with `mss_bytes = mtu`; bbrlab's clock starts at `now` |
//! | `on_sent(now, bytes, last_pn)` (per transmit: one or more datagrams) | `on_packet_sent(now, bytes, in_flight_before, false)`: one `SentPacketState` per transmit, kept in the adapter's ring |
//! | `on_ack(now, sent, bytes, app_limited, rtt)` (each ack-eliciting packet of an ACK frame) | the transmit's stored state, with the packet's bytes, goes into the frame's `AckedPacket`s |
//! | `on_end_acks(now, in_flight, app_limited, largest)` | closes the frame: its `AckEvent` gets `prior_bytes_in_flight = in_flight + acked bytes`, `app_limited` as quinn says, one RTT sample from the frame's newest packet |
//! | `on_congestion_event(now, sent, persistent, lost_bytes > 0)` | one `LostPacket` of `lost_bytes` with the state of the transmit sent at `sent`, in the frame's event (a timer's: `on_timer_losses`); persistent: the event's `persistent_congestion` (bbrlab's timeout after the losses) |
//! | `on_congestion_event(.., lost_bytes == 0)` (ECN) | one CE mark in the frame's event |
//! | `on_mtu_update(mtu)` | `on_mss_change(mtu)` |
//! | `window()`, `initial_window()` | `cwnd_bytes()`, the cwnd at creation |
//! | `metrics()` | cwnd, ssthresh, and `pacing_rate` in bit/s, which quinn only logs to qlog |
//! | `clone_box()` (migration) | a copy with all its state (`Controller::try_clone`); a fresh controller from the same factory only for a user's algorithm without `clone_box` |
//!
//! ## Order within an ACK frame
//!
//! quinn reports an ACK frame as each acknowledged packet (`on_ack`),
//! `on_end_acks`, then loss detection (one `on_congestion_event`), then
//! ECN (`on_congestion_event` with no bytes); see `on_ack_received` in
//! quinn-proto's `connection/mod.rs`. bbrlab's controller wants the
//! frame's losses before its rate sample (Linux marks losses in
//! `tcp_ack()` before `tcp_rate_gen()`), so the adapter collects the frame
//! and hands it over as one `AckEvent` at quinn's next call of another
//! kind (`window()`, which quinn asks before every send, a send, the next
//! frame); the controller applies Linux's order inside. A timer's losses
//! (at another instant) go in alone (`on_timer_losses`).
//!
//! ## What is approximated or missing
//!
//! - **Pacing**: ignored by quinn (above). Nor does quinn's pacer tell its
//!   next departure time, so `Controller::set_next_departure` is never
//!   called; neither is a send quantum used.
//! - **Packet identity.** quinn gives no packet numbers: one state per
//!   transmit, found by send time (quinn stamps a transmit's packets with
//!   one `now`). Its datagrams are credited as they are acknowledged; a
//!   transmit whose datagrams were lost or were ack-only is pruned once a
//!   packet sent two smoothed RTTs later is acknowledged. The states sit
//!   in a `VecDeque` in send order: no allocation per packet once it has
//!   grown to the largest flight.
//! - **Losses** arrive as bytes: the controller sees one lost packet per
//!   event, carrying the newest lost transmit's state. The number of lost
//!   ranges (BBRv3's Startup exit counts them) is unknown: always one.
//! - **Frames without data.** quinn closes every frame that acknowledges
//!   anything with `on_end_acks`, ack-only packets included, which never
//!   reach `on_ack`. A frame with nothing the controller saw sent is no
//!   ACK event for it; its losses go in alone (`on_timer_losses`).
//! - **Bytes in flight.** The adapter counts its own between ACKs and
//!   takes quinn's count at every `on_end_acks`.
//! - **App-limited.** quinn says per ACK (its last `poll_transmit` had
//!   nothing to send and was not blocked), not per send; the frame's event
//!   says `app_limited`, which marks the sampler app-limited before the
//!   frame's rate sample.
//! - **RTT.** quinn does not hand the controller the peer's ACK delay: the
//!   controller's samples include it. [`Observed::srtt`] is quinn's own.
//! - **ECN.** quinn reports that the CE count rose, not by how much: one
//!   mark per report.
//! - **PTO and spurious loss.** quinn 0.11 tells the controller of
//!   neither: no probe timeouts (only persistent congestion, as bbrlab's
//!   timeout), no undo of a spurious episode.
//! - **Migration.** quinn clones the controller (`clone_box`) only when
//!   the peer's new address looks like a NAT rebinding (same IPv4
//!   address, new port: quinn-proto's `Connection::migrate`), and keeps
//!   the old path's RTT with it; any other new path gets a fresh
//!   controller from the factory (`build`). The clone is the controller
//!   with what it learned and the packets it still expects to hear of
//!   (acknowledgements of the old path's packets reach the new path's
//!   controller). Only a user's algorithm without
//!   `CongestionControl::clone_box` cannot be copied; its clone starts
//!   afresh.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod adapter;

/// The controller's state for a time series, shared by every bbrlab
/// adapter (see [`congestion::observe`]). Here it is published after each
/// ACK or loss the controller processes, under id 0 (the last publish
/// wins). An ACK frame is processed at quinn's next call after it, so the
/// newest frame shows once the stack next sends or asks for its window.
pub use congestion::observe::{Observed, Observer};
/// The `congestion` crate this adapter runs, and the types a user names to
/// configure it, so a program needs no separate dependency on it (and
/// cannot end up with a second, different version).
pub use congestion::{self, Algorithm, Bbr3Config, Config, ConfigError, ConnectionSeeds};

use crate::adapter::Core;
use bbrlab_adapter::Recipe;
use congestion::CongestionControl;
use quinn_proto::congestion::{self as quinn_cc, ControllerMetrics};
use quinn_proto::RttEstimator;
use std::any::Any;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

/// Builds a bbrlab controller for each quinn connection.
#[derive(Debug)]
pub struct ControllerFactory {
    recipe: Recipe,
}

impl ControllerFactory {
    /// Controllers running `config.algorithm`. `config.mss_bytes` is
    /// replaced by quinn's MTU: the stack counts whole datagrams.
    /// `config.initial_cwnd_packets` stays a count of datagrams, of
    /// quinn's MTU when it builds the controller (its `initial_mtu`): [`Config::for_quic`] derived it from RFC 9002 §7.2 for the
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
    /// `config` (with quinn's MTU as `mss_bytes`) for each connection.
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

    fn controller(self: &Arc<Self>, now: Instant, mtu: u16) -> QuinnController {
        let (cc, seed) = self.recipe.build(u64::from(mtu), congestion::Instant::ZERO);
        let initial_window = cc.cwnd_bytes();
        QuinnController {
            factory: Arc::clone(self),
            mtu,
            initial_window,
            seed,
            core: Mutex::new(Core::new(cc, now, self.recipe.observer().clone())),
        }
    }
}

impl quinn_cc::ControllerFactory for ControllerFactory {
    fn build(self: Arc<Self>, now: Instant, current_mtu: u16) -> Box<dyn quinn_cc::Controller> {
        Box::new(self.controller(now, current_mtu))
    }
}

/// One connection's controller, as quinn holds it.
///
/// quinn wants its controllers `Sync` and asks `window()` through `&self`;
/// the state sits in a `Mutex` that quinn's `&mut self` calls reach
/// without locking (`Mutex::get_mut`), and the queries lock (uncontended:
/// quinn drives a connection from one task) to replay a held-back ACK
/// frame first.
pub struct QuinnController {
    factory: Arc<ControllerFactory>,
    mtu: u16,
    initial_window: u64,
    /// The seed of its algorithm's random choices.
    seed: u64,
    core: Mutex<Core>,
}

impl core::fmt::Debug for QuinnController {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("QuinnController")
            .field("core", &*self.lock())
            .finish()
    }
}

impl QuinnController {
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

    /// The controller's state now (for a program that downcast quinn's
    /// controller through `into_any`).
    pub fn snapshot(&self) -> congestion::Snapshot {
        self.lock().controller().snapshot()
    }
}

impl quinn_cc::Controller for QuinnController {
    fn on_sent(&mut self, now: Instant, bytes: u64, _last_packet_number: u64) {
        self.core().sent(now, bytes);
    }

    fn on_ack(
        &mut self,
        _now: Instant,
        sent: Instant,
        bytes: u64,
        _app_limited: bool,
        rtt: &RttEstimator,
    ) {
        self.core().ack(sent, bytes, rtt.get());
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

    fn on_congestion_event(
        &mut self,
        now: Instant,
        sent: Instant,
        is_persistent_congestion: bool,
        lost_bytes: u64,
    ) {
        self.core()
            .congestion_event(now, sent, is_persistent_congestion, lost_bytes);
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
        let cc = core.controller();
        let mut m = ControllerMetrics::default();
        m.congestion_window = cc.cwnd_bytes();
        m.ssthresh = cc.snapshot().ssthresh_bytes;
        // quinn documents this field as bits per second; it only logs it.
        m.pacing_rate = Some(cc.pacing_rate_bytes_per_sec().saturating_mul(8));
        m
    }

    fn clone_box(&self) -> Box<dyn quinn_cc::Controller> {
        // The connection's controller with its state, as the stack asks;
        // a fresh one from the factory only when it cannot be copied.
        match self.lock().try_clone() {
            Some(core) => Box::new(QuinnController {
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
