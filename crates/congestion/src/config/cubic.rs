//! CUBIC's switches ([`CubicConfig`]). Re-exported from
//! [`crate::config`].

/// Switches for CUBIC. Defaults follow RFC 9438 and Linux.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct CubicConfig {
    /// Cubic scaling constant C (RFC 9438 §5.1: 0.4).
    pub c: f64,
    /// Multiplicative decrease factor β_cubic (RFC 9438 §4.6: 0.7).
    pub beta: f64,
    /// Fast convergence (RFC 9438 §4.7).
    pub fast_convergence: bool,
    /// The Reno-friendly region (RFC 9438 §4.3).
    pub reno_friendly: bool,
    /// A delay-based slow-start exit; Linux enables HyStart by default.
    pub hystart: bool,
    /// Which one: RFC 9406's HyStart++ (the default, what QUIC stacks
    /// implement) or the HyStart of Linux's `tcp_cubic.c`, to compare with
    /// kernel TCP (see [`HyStartVariant`]).
    pub hystart_variant: HyStartVariant,
    /// Whose congestion-avoidance rules: RFC 9438's (the default) or
    /// those of Linux's `tcp_cubic.c`, to compare with kernel TCP (see
    /// [`CubicAvoidance`]).
    pub avoidance: CubicAvoidance,
}

/// The congestion-avoidance rules CUBIC follows. RFC 9438 and Linux's
/// `bictcp_update()` agree on the cubic curve and on the Reno-friendly
/// region, but differ in two rules that matter on small windows and deep
/// queues, which is where kernel TCP is compared with the simulator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum CubicAvoidance {
    /// RFC 9438: the Reno-friendly estimate grows by α = 3(1−β)/(1+β)
    /// segments per round trip until it passes the window before the last
    /// reduction, then by 1 (§4.3); the curve is aimed one smoothed RTT
    /// ahead (§4.4).
    #[default]
    Rfc9438,
    /// Linux (`bictcp_update()`): the Reno-friendly estimate grows by one
    /// segment per `cwnd · beta_scale / 8` segments acked for good
    /// (`beta_scale` = ⌊8(1+β) / (3(1−β))⌋ = 15, so α = 8/15 ≈ 0.53 per
    /// round trip) and never switches to 1; the curve is aimed one
    /// *minimum* RTT ahead (`delay_min`); the window grows at the faster
    /// of the curve's target and the estimate; and until the first loss it
    /// grows at least 5 % a round trip. Under 1 % random loss on 20 Mbit/s
    /// / 40 ms, where the estimate often passes the last window before the
    /// next loss, RFC 9438's rules gave 15 % more throughput than kernel
    /// CUBIC (ten kernel runs), Linux's 6 %.
    Linux,
}

impl CubicAvoidance {
    /// The names scenarios use.
    pub const NAMES: [&'static str; 2] = ["rfc9438", "linux"];

    /// The rules called `name` (one of [`CubicAvoidance::NAMES`]).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "rfc9438" => Some(CubicAvoidance::Rfc9438),
            "linux" => Some(CubicAvoidance::Linux),
            _ => None,
        }
    }
}

/// The delay-based slow-start exit CUBIC runs when
/// [`CubicConfig::hystart`] is on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum HyStartVariant {
    /// HyStart++ (RFC 9406): a round's RTT against the previous round's,
    /// then five rounds of conservative slow start.
    #[default]
    Rfc9406,
    /// Linux's HyStart (`hystart_update()` in `tcp_cubic.c`): a round's RTT
    /// against the connection's minimum, or an ACK train longer than half
    /// of it, and straight to congestion avoidance. Kernel CUBIC leaves
    /// slow start this way, often well before HyStart++ would.
    Linux,
}

impl HyStartVariant {
    /// The names scenarios use.
    pub const NAMES: [&'static str; 2] = ["rfc9406", "linux"];

    /// The variant called `name` (one of [`HyStartVariant::NAMES`]).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "rfc9406" => Some(HyStartVariant::Rfc9406),
            "linux" => Some(HyStartVariant::Linux),
            _ => None,
        }
    }
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            reno_friendly: true,
            hystart: true,
            hystart_variant: HyStartVariant::Rfc9406,
            avoidance: CubicAvoidance::Rfc9438,
        }
    }
}
