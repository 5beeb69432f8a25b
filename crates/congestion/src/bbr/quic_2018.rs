//! The QUIC 2018 switches: BBR v1 as Chromium's QUIC `BbrSender` had it
//! in 2018 ([`BbrConfig::quic_2018`]), the stack seed 001's authors built
//! `bbr-jitter` on.
//!
//! It is the Linux state machine with a handful of differences, each a
//! field of [`BbrConfig`] so that a test or a scenario can turn one on
//! alone. Those that change a single expression stay as a branch in the
//! core function they alter, where a reader of that function sees them:
//! no quantization budget, a minimum cwnd in bytes, no pacing margin, no
//! long-term (policer) sampling, and min_rtt from every acked packet.
//! Those with state and rules of their own live here, so that the core
//! reads as `tcp_bbr.c`:
//!
//! - **the recovery window** ([`BbrRecovery::Quic2018`]): cwnd follows its
//!   target untouched while a separate window, with its own phases,
//!   bounds what is sent during loss recovery;
//! - **`max_ack_height`** ([`AckAggregation::Quic2018`]), the aggregation
//!   allowance Linux's `extra_acked` descends from (seed 004): one 10-round
//!   max filter of the excess acked per epoch, uncapped;
//! - **a bandwidth window that follows the cycle**
//!   ([`BbrConfig::bw_window_follows_cycle`]): cycle length + 2 rounds,
//!   which matters only while `bbr-jitter` shortens the cycle.
//!
//! Each rule cites the `BbrSender` method it follows.
//!
//! [`BbrConfig`]: crate::config::BbrConfig
//! [`BbrConfig::quic_2018`]: crate::config::BbrConfig::quic_2018
//! [`BbrConfig::bw_window_follows_cycle`]: crate::config::BbrConfig::bw_window_follows_cycle
//! [`BbrRecovery::Quic2018`]: crate::config::BbrRecovery::Quic2018
//! [`AckAggregation::Quic2018`]: crate::config::AckAggregation::Quic2018

use super::Bbr;
use crate::algorithm::AckContext;
use crate::float::u64_as_f64;
use crate::snapshot::Mode;
use crate::time::Instant;

/// QUIC 2018's `max_ack_height` window: `kBandwidthWindowSize` rounds
/// (cycle length 8 + 2), fixed even when the bandwidth window follows a
/// shortened cycle.
pub(super) const QUIC_ACK_HEIGHT_WINDOW_ROUNDS: u64 = 10;
/// Rounds the bandwidth window spans beyond the cycle length (Linux
/// `bbr_bw_rtts` = `CYCLE_LEN + 2`; QUIC `kBandwidthWindowSize`).
const BW_WINDOW_EXTRA_ROUNDS: u64 = 2;

/// Phases of QUIC 2018's recovery ([`BbrRecovery::Quic2018`]).
///
/// [`BbrRecovery::Quic2018`]: crate::config::BbrRecovery::Quic2018
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum QuicRecoveryPhase {
    #[default]
    Off,
    /// The first round: the window only loses what is lost.
    Conservation,
    /// Later rounds: it also grows by what is acked.
    Growth,
}

/// QUIC 2018's recovery window state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct QuicRecovery {
    phase: QuicRecoveryPhase,
    /// The recovery window, bytes; 0 until the first ACK of an episode.
    window: u64,
    /// When the latest loss was detected: recovery ends once a packet sent
    /// after it is acknowledged (`end_recovery_at_`).
    end_at: Instant,
    /// Bytes declared lost since the transport last began an ACK.
    lost_since_ack: u64,
    /// Of those, the ones found before the current ACK began (by the loss
    /// timer): not in its rate sample.
    timer_lost: u64,
}

impl QuicRecovery {
    /// Remembers `lost_bytes` for the next ACK's recovery update. Losses
    /// the transport finds while handling an ACK are in that ACK's rate
    /// sample instead, so the window update forgets them.
    pub(super) fn on_packets_lost(&mut self, lost_bytes: u64) {
        self.lost_since_ack = self.lost_since_ack.saturating_add(lost_bytes);
    }

    /// The transport is starting an ACK: what was lost before it belongs
    /// to the timer, not to the ACK's rate sample.
    ///
    /// With nothing lost since the last ACK (nearly every ACK, and every
    /// one unless [`BbrRecovery::Quic2018`] counts losses here), the
    /// move would add zero and zero a zero: one test skips it.
    ///
    /// [`BbrRecovery::Quic2018`]: crate::config::BbrRecovery::Quic2018
    pub(super) fn on_ack_begin(&mut self) {
        if self.lost_since_ack != 0 {
            self.timer_lost = self
                .timer_lost
                .saturating_add(std::mem::take(&mut self.lost_since_ack));
        }
    }

    /// Whether this ACK's two recovery steps
    /// ([`Bbr::update_quic_recovery_state`] and
    /// [`Bbr::update_quic_recovery_window`]) would write nothing: outside
    /// recovery, with no loss in the sample, none counted by a timer and
    /// none waiting. Then the state step sees no loss and returns in
    /// `Off`, and the window step takes a zero and zeroes a zero before
    /// returning in `Off`: the common ACK can skip both at one test.
    pub(super) fn is_quiet(&self, sample_lost: u64) -> bool {
        self.phase == QuicRecoveryPhase::Off
            && (self.timer_lost | self.lost_since_ack | sample_lost) == 0
    }
}

impl Bbr {
    /// QUIC 2018's measure (`BbrSender::UpdateAckAggregationBytes()`):
    /// the bytes acked in the current epoch beyond max_bw × its length,
    /// into a 10-round max filter, uncapped. An ACK that finds the epoch
    /// no faster than max_bw starts a new epoch with its own bytes and
    /// gives no sample.
    pub(super) fn update_max_ack_height(&mut self, acked: u64) {
        let epoch_ns = u64_as_f64(self.delivered_time.nanos_since(self.ack_epoch_stamp));
        let expected = self.max_bw() * epoch_ns;
        if u64_as_f64(self.ack_epoch_acked) <= expected {
            self.ack_epoch_acked = acked;
            self.ack_epoch_stamp = self.delivered_time;
            return;
        }
        self.ack_epoch_acked = self.ack_epoch_acked.saturating_add(acked);
        let excess = u64_as_f64(self.ack_epoch_acked) - expected;
        self.max_ack_height.update(self.round_count, excess);
        // The cwnd target adds this filter's max.
        self.targets_stale = true;
    }

    /// The allowance `max_ack_height` grants: the gain times the filter's
    /// max, whole and uncapped ([`AckAggregation::Quic2018`]).
    ///
    /// [`AckAggregation::Quic2018`]: crate::config::AckAggregation::Quic2018
    pub(super) fn max_ack_height_cwnd(&self) -> u64 {
        let v = self.cfg.extra_acked_gain * self.max_ack_height.get_or(0.0);
        if v.is_finite() && v > 0.0 {
            v as u64
        } else {
            0
        }
    }

    /// The bandwidth filter's window follows the cycle in force:
    /// `kBandwidthWindowSize` = cycle length + 2 rounds
    /// ([`BbrConfig::bw_window_follows_cycle`]).
    ///
    /// [`BbrConfig::bw_window_follows_cycle`]: crate::config::BbrConfig::bw_window_follows_cycle
    pub(super) fn set_bw_window_from_cycle(&mut self) {
        self.bw_filter
            .set_window(self.cycle_len() as u64 + BW_WINDOW_EXTRA_ROUNDS);
    }

    /// [`QuicRecovery::is_quiet`] for this ACK. Debug builds run both
    /// steps anyway when it holds, and check that they wrote nothing.
    #[inline(always)]
    pub(super) fn quic_recovery_is_quiet(&mut self, ctx: &AckContext<'_>) -> bool {
        let quiet = self.quic_recovery.is_quiet(ctx.rate.lost_bytes);
        #[cfg(debug_assertions)]
        if quiet {
            let before = (self.quic_recovery, self.next_round_delivered);
            self.update_quic_recovery_state(ctx);
            self.update_quic_recovery_window(ctx);
            debug_assert_eq!((self.quic_recovery, self.next_round_delivered), before);
        }
        quiet
    }

    /// Both recovery steps, state then window, out of line: most ACKs
    /// skip them ([`QuicRecovery::is_quiet`]).
    #[inline(never)]
    pub(super) fn update_quic_recovery(&mut self, ctx: &AckContext<'_>) {
        self.update_quic_recovery_state(ctx);
        self.update_quic_recovery_window(ctx);
    }

    /// QUIC 2018's recovery phases (`BbrSender::UpdateRecoveryState()`),
    /// after the round counter has been updated for this ACK.
    pub(super) fn update_quic_recovery_state(&mut self, ctx: &AckContext<'_>) {
        let r = &mut self.quic_recovery;
        let has_losses = ctx.rate.lost_bytes > 0 || r.timer_lost > 0;
        if has_losses {
            r.end_at = ctx.now;
        }
        match r.phase {
            QuicRecoveryPhase::Off => {
                if has_losses {
                    r.phase = QuicRecoveryPhase::Conservation;
                    r.window = 0;
                    // Conservation lasts a whole round from now.
                    self.next_round_delivered = ctx.delivered_bytes;
                }
                return;
            }
            QuicRecoveryPhase::Conservation if self.round_start => {
                r.phase = QuicRecoveryPhase::Growth;
            }
            _ => {}
        }
        if !has_losses && ctx.newest_acked_sent.is_some_and(|t| t > r.end_at) {
            r.phase = QuicRecoveryPhase::Off;
        }
    }

    /// QUIC 2018's recovery window (`BbrSender::CalculateRecoveryWindow()`).
    pub(super) fn update_quic_recovery_window(&mut self, ctx: &AckContext<'_>) {
        let (min_cwnd, mss) = (self.min_cwnd(), self.mss);
        let r = &mut self.quic_recovery;
        let lost = ctx.rate.lost_bytes + std::mem::take(&mut r.timer_lost);
        r.lost_since_ack = 0;
        if r.phase == QuicRecoveryPhase::Off {
            return;
        }
        let acked = ctx.rate.acked_bytes;
        let floor = ctx.bytes_in_flight.saturating_add(acked);
        if r.window == 0 {
            r.window = floor.max(min_cwnd);
            return;
        }
        r.window = if r.window >= lost {
            r.window - lost
        } else {
            mss
        };
        if r.phase == QuicRecoveryPhase::Growth {
            r.window = r.window.saturating_add(acked);
        }
        r.window = r.window.max(floor).max(min_cwnd);
    }

    /// The window in force: cwnd, or under QUIC 2018's recovery the smaller
    /// of cwnd and the recovery window (`BbrSender::GetCongestionWindow()`).
    pub(super) fn effective_cwnd(&self) -> u64 {
        let r = &self.quic_recovery;
        if r.phase != QuicRecoveryPhase::Off && r.window > 0 && self.mode != Mode::ProbeRtt {
            // Never below one packet, even right after an MSS increase.
            self.cwnd.min(r.window).max(self.mss)
        } else {
            self.cwnd
        }
    }
}
