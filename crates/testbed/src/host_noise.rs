//! The hosts' timing noise: what a real sender's ACK clock has that a
//! simulation answering to the nanosecond has not. `validate
//! --multiflow` puts it on its simulated ACKs' way back; `compare`'s
//! single-flow match to kernel TCP does not (the Validation chapter,
//! "ECN on a step queue against the kernel", says why).

use std::time::Duration;

/// The hosts' timing noise the simulator adds to each ACK's way back
/// (`validate --multiflow --sim-host-noise`): a normally distributed
/// extra delay, cut at zero, in order (an ACK never overtakes another).
///
/// Why: a real sender does not answer an ACK at the instant the
/// bottleneck let the acknowledged segment go one round trip earlier.
/// The receiver's stack, both hosts' softirqs and the emulator's release
/// timer each add some microseconds, different for every packet. A
/// simulation without that noise answers to the nanosecond, so where two
/// flows' packets meet at a full drop-tail queue the same flow loses the
/// race for the place a departure frees, round after round, and a
/// STARTUP that needs one round's sample 25 % above the last can be
/// starved by phase alone (Floyd and Jacobson's traffic phase effects).
/// Measured on the emulator's packet log (`scripts/host_noise.py`, the
/// three repetitions of `cubic-vs-cubic-2bdp` of 2026-12-02, whose
/// unpaced flows answer each ACK at once): from a segment's departure at
/// the bottleneck to its sender's next segment arriving there, 54-77 µs
/// beyond the 40 ms path at the median, about 21 µs of which is the ACK's
/// own transmission on the way back (the simulator has that), and a
/// spread a normal distribution with a standard deviation of 15-23 µs
/// has: a mean of 50 µs and a standard deviation of 20 µs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostNoise {
    /// Mean extra delay.
    pub mean: Duration,
    /// Standard deviation.
    pub sd: Duration,
}

/// The default [`HostNoise`], as measured (see there).
pub const HOST_NOISE: HostNoise = HostNoise {
    mean: Duration::from_micros(50),
    sd: Duration::from_micros(20),
};

impl HostNoise {
    /// The noise as the reverse direction's `jitter`: normal, cut at zero,
    /// in order.
    pub fn jitter(&self) -> scenario::builder::Jitter {
        scenario::builder::Jitter {
            mean: self.mean,
            sd: self.sd,
            floor: Duration::ZERO,
            reorder: false,
        }
    }
}
