//! The fuzzer's input: a random but valid path and workload, as a few
//! numbers each drawn on a scale from 0 to 1 (so proptest, which shrinks
//! a number toward the low end of its range and an option toward none,
//! shrinks a failing path toward a slow, short, clean, single-flow bulk
//! one), and the scenario file it stands for.
//!
//! The ranges are the issue's: rates from 64 kbit/s to 10 Gbit/s, round
//! trips from 100 µs to 2 s, buffers from a tenth of a BDP to 20 BDPs,
//! random and bursty loss, rate and delay steps, reordering jitter, ACK
//! aggregation and the receivers' ACK policies (delayed, Linux's,
//! decimated), every AQM, a policer, app-limited patterns (a rate from
//! the first packet, on/off chunks, bulk that turns app-limited, bursts
//! with idles of up to 12 s), segment sizes from 500 to 9,000 bytes and
//! changes of it within a run, a
//! rare transfer past 2^32 bytes, up to three competing flows, and the
//! sender's pacer (one packet at a time, or Linux's TSO-sized bursts,
//! which `validate` matches kernel TCP with and which is the default of
//! a TCP-like flow). A run
//! is kept to [`PACKET_BUDGET`] packets
//! at the link's rate by shortening it (never below [`MIN_RTTS`] round
//! trips), and, where even that is too many, by lowering the rate: the
//! fuzzer's worth is in how many paths it tries.

use proptest::prelude::*;
use std::fmt::Write as _;

/// A `queue = { ... }` line alone, to resolve it as the link model does.
#[derive(serde::Deserialize)]
struct QueueOnly {
    queue: link::QueueConfig,
}

/// Packets a run may carry at the link's rate (about 10 ms of work).
pub const PACKET_BUDGET: f64 = 40_000.0;
/// Round trips a run lasts at least: STARTUP and a few probe cycles.
pub const MIN_RTTS: f64 = 40.0;
/// The longest run, simulated seconds.
pub const MAX_SECONDS: f64 = 20.0;
/// Round trips after a rate step before its recovery is judged, at least.
pub const RECOVERY_RTTS: f64 = 30.0;
/// Seconds after a rate step before its recovery is judged, at least:
/// BBRv3 probes for more bandwidth every 2-3 s.
pub const RECOVERY_SECONDS: f64 = 6.0;

/// The run of a transfer past 2^32 bytes, seconds: at 10 Gbit/s a flow
/// passes 2^32 bytes by 5 s if it averages 69 % of the link, and the 3 s
/// after show whether it still sends.
pub const LARGE_SECONDS: f64 = 8.0;
/// The segment size of a transfer past 2^32 bytes (jumbo frames, as on a
/// 10 Gbit/s data-centre path): 2^32 bytes are then 477,000 packets, not
/// 2.9 million, so such a run takes about a second, not ten.
pub const LARGE_MSS: u64 = 9000;

/// One generated path and workload. Every field is drawn so that its low
/// end (0, `None`, `false`) is the simpler path.
#[derive(Clone, Debug, PartialEq)]
pub struct FuzzPath {
    /// Bottleneck rate, on a log scale from 64 kbit/s (0) to 10 Gbit/s (1).
    pub rate: f64,
    /// Base round trip, log scale from 100 µs (0) to 2 s (1).
    pub rtt: f64,
    /// Buffer, log scale from 0.1 BDP (0) to 20 BDP (1); at least 2 packets.
    pub buffer: f64,
    /// Flows of the controller under test, 1 to 3, each started an eighth
    /// of a round trip after the one before.
    pub flows: u8,
    /// Random loss, log scale from 0.01 % (0) to 10 % (1), and whether it
    /// comes in bursts (Gilbert-Elliott).
    pub loss: Option<(f64, bool)>,
    /// A rate step: the factor, log scale from 0.1 (0) to 10 (1), and when
    /// (0 to 1 across the second half of the run before it; [`Sizes`]).
    pub rate_step: Option<(f64, f64)>,
    /// A forward delay step: the new one-way delay as a multiple of the
    /// old, log scale from 0.1 (0) to 10 (1), when (as for the rate; a
    /// rate step's time wins if both), and whether packets after a drop
    /// overtake (a route change).
    pub delay_step: Option<(f64, f64, bool)>,
    /// Uniform extra delay up to this fraction of the round trip (0 to 1),
    /// and whether packets may overtake.
    pub jitter: Option<(f64, bool)>,
    /// ACKs released in bursts, every 1 ms (0) to 40 ms (1).
    pub ack_aggregation: Option<f64>,
    /// 0 drop-tail, 1 CoDel, 2 FQ-CoDel, 3 PIE, 4 DualPI2.
    pub aqm: u8,
    /// A token-bucket policer at this fraction of the link (0.1 to 0.9)
    /// with a bucket of 5 (0) to 100 (1) packets of 1500 B, and at least
    /// one of the largest segments.
    pub policer: Option<(f64, f64)>,
    /// The application: 0 bulk; 1 a constant rate (`app_share` of the
    /// link, 1 % to 90 %); 2 chunks of `app_share` × 4 BDP every 1 to 20
    /// round trips (`app_period`), idle between; 3 bulk for a third of the
    /// run, then a constant rate; 4 chunks of `app_share` × a second at
    /// the link's rate every 1 to 12 s, long idles between.
    pub app: u8,
    /// The application's share of the link, log scale 1 % (0) to 90 % (1).
    pub app_share: f64,
    /// The chunks' period, 1 (0) to 20 (1) round trips; for pattern 4, 1
    /// (0) to 12 (1) seconds.
    pub app_period: f64,
    /// The receiver: 0 an ACK per packet; 1 delayed ACKs (every second
    /// packet or 40 ms); 2 Linux's receiver; 3 Chromium's ACK decimation.
    pub ack: u8,
    /// The segment size, log scale from 500 (0) to 9,000 (1) bytes;
    /// `None` is 1,500.
    pub mss: Option<f64>,
    /// A change of the segment size while the flows run (path MTU
    /// discovery, a route change): when (0 to 1 across the first 90 % of
    /// the run) and the new size, log scale from 500 (0) to 9,000 (1)
    /// bytes. Not with a large transfer.
    pub mss_change: Option<(f64, f64)>,
    /// A transfer past 2^32 bytes: one flow at 10 Gbit/s for
    /// [`LARGE_SECONDS`] with [`LARGE_MSS`]-byte segments, on a round trip
    /// of 100 µs (0) to 10 ms (1) instead of `rtt`'s range; the other
    /// features as drawn. Byte counters then pass 2^32, where a 32-bit
    /// one wraps.
    pub large: bool,
    /// The senders pace in Linux's TSO-sized bursts (`pacing =
    /// "quantum"`, what `validate` runs to match kernel TCP) rather than
    /// one packet at a time (`false`, `pacing = "exact"`). Drawn
    /// because the two differ where it matters most to a fuzzer: several
    /// BBR v1 flows in a queue of a few packets lock one of them out when
    /// each paces packet by packet, and share when they send pairs, in
    /// Linux as in the simulator (the fuzz chapter, "Checked against
    /// Linux"); and so that the burst pacer's own rules are fuzzed too.
    pub linux_bursts: bool,
    /// The scenario's seed.
    pub seed: u64,
}

/// The rate after a step by `factor` (on its 0.1-10 scale), within the
/// generator's range of 64 kbit/s to 10 Gbit/s (only a large transfer's
/// rise would pass the top).
fn stepped_rate_bps(rate_bps: f64, factor: f64) -> f64 {
    (rate_bps * log_scale(factor, 0.1, 10.0)).clamp(64e3, 10e9)
}

fn log_scale(x: f64, lo: f64, hi: f64) -> f64 {
    lo * (hi / lo).powf(x.clamp(0.0, 1.0))
}

/// The path's numbers in units.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// Bottleneck rate, bit/s (after the packet budget).
    pub rate_bps: f64,
    /// Base round trip, seconds.
    pub rtt_s: f64,
    /// The buffer, packets.
    pub buffer_packets: u64,
    /// The run, seconds.
    pub seconds: f64,
    /// When the rate or delay steps, seconds, if it does.
    pub step_s: Option<f64>,
}

impl FuzzPath {
    /// The segment size, bytes.
    pub fn mss_bytes(&self) -> u64 {
        if self.large {
            return LARGE_MSS;
        }
        self.mss
            .map_or(1500, |m| log_scale(m, 500.0, 9000.0).round() as u64)
    }

    /// The segment size after `mss_change`, if any (never with `large`).
    pub fn changed_mss_bytes(&self) -> Option<u64> {
        if self.large {
            return None;
        }
        self.mss_change
            .map(|(_, m)| log_scale(m, 500.0, 9000.0).round() as u64)
    }

    /// When the segment size changes, ns (as the scenario file gives it,
    /// to the microsecond), if it does.
    pub fn mss_change_ns(&self) -> Option<u64> {
        self.changed_mss_bytes()?;
        let (at, _) = self.mss_change?;
        Some((self.sizes().seconds * 0.9 * at.clamp(0.0, 1.0) * 1e6).round() as u64 * 1000)
    }

    /// The largest segment the flows send: windows and send quanta kept
    /// in whole segments hold the most bytes in it.
    pub fn max_mss_bytes(&self) -> u64 {
        self.changed_mss_bytes()
            .map_or(self.mss_bytes(), |m| m.max(self.mss_bytes()))
    }

    /// The smallest segment the flows send: a window floor is one of it.
    pub fn min_mss_bytes(&self) -> u64 {
        self.changed_mss_bytes()
            .map_or(self.mss_bytes(), |m| m.min(self.mss_bytes()))
    }

    /// The flows: one for a transfer past 2^32 bytes, else 1 to 3.
    pub fn flow_count(&self) -> usize {
        if self.large {
            1
        } else {
            usize::from(self.flows.clamp(1, 3))
        }
    }

    /// The path's sizes: the run as long as [`MIN_RTTS`] round trips (at
    /// least 2 s), the rate lowered if even that would take more than
    /// [`PACKET_BUDGET`] packets. A transfer past 2^32 bytes keeps 10
    /// Gbit/s for [`LARGE_SECONDS`] (its steps, if any, in that time).
    pub fn sizes(&self) -> Sizes {
        let mss_bits = self.mss_bytes() as f64 * 8.0;
        let rtt_s = if self.large {
            log_scale(self.rtt, 100e-6, 10e-3)
        } else {
            log_scale(self.rtt, 100e-6, 2.0)
        };
        let mut before = (MIN_RTTS * rtt_s).clamp(2.0, MAX_SECONDS);
        if self.large {
            before = LARGE_SECONDS;
        } else if self.app == 4 {
            // Two bursts and the idle between, at least.
            before = before.max((2.0 * self.idle_period_s() + 1.0).min(MAX_SECONDS));
        }
        // A step comes in the second half of that, and the run then goes
        // on long enough to judge the recovery ([`RECOVERY_RTTS`] round
        // trips and [`RECOVERY_SECONDS`]).
        let at = self
            .rate_step
            .map(|(_, at)| at)
            .or(self.delay_step.map(|(_, at, _)| at));
        let step_s = at.map(|a| before * (0.5 + 0.5 * a.clamp(0.0, 1.0)));
        let seconds = match step_s {
            // A large transfer keeps its length: at 10 Gbit/s each second
            // is 140,000 jumbo packets.
            _ if self.large => before,
            Some(t) => (t + (RECOVERY_RTTS * rtt_s).max(RECOVERY_SECONDS)).min(MAX_SECONDS),
            None => before,
        };
        let rate_bps = if self.large {
            10e9
        } else {
            let wanted = log_scale(self.rate, 64e3, 10e9);
            wanted.min(PACKET_BUDGET * mss_bits / seconds).max(64e3)
        };
        let bdp_packets = rate_bps * rtt_s / mss_bits;
        let buffer_packets = (log_scale(self.buffer, 0.1, 20.0) * bdp_packets)
            .ceil()
            .clamp(2.0, 1e6) as u64;
        Sizes {
            rate_bps,
            rtt_s,
            buffer_packets,
            seconds,
            step_s,
        }
    }

    /// No loss, policer, step, jitter, ACK aggregation or delayed ACKs:
    /// only a queue. (A receiver that holds its ACKs aggregates them: BBR
    /// then raises its window by the extra it sees acknowledged, and the
    /// standing-queue bound is not for such paths.)
    pub fn is_clean(&self) -> bool {
        self.ack == 0
            && self.loss.is_none()
            && self.rate_step.is_none()
            && self.delay_step.is_none()
            && self.jitter.is_none()
            && self.ack_aggregation.is_none()
            && self.policer.is_none()
    }

    /// The queueing delay the path's AQM lets stand, s: its target as the
    /// link model resolves the path's queue (each AQM's default: 5 ms for
    /// CoDel and FQ-CoDel, 15 ms for PIE and DualPI2's Classic queue).
    /// `None` for drop-tail, whose queue stands up to its limit.
    pub fn aqm_target_s(&self) -> Option<f64> {
        let text = format!("queue = {{ {} }}", self.queue_table());
        let t: QueueOnly = toml::from_str(&text).expect("the fuzzer writes a valid queue table");
        t.queue.delay_target_ns().map(|ns| ns as f64 / 1e9)
    }

    /// The inside of the path's `queue = { ... }` table (the link model
    /// fills in each AQM's defaults).
    fn queue_table(&self) -> String {
        let aqm = [
            "",
            ", aqm = \"codel\"",
            ", aqm = \"fq_codel\"",
            ", aqm = \"pie\"",
            ", aqm = \"dualpi2\"",
        ][usize::from(self.aqm.min(4))];
        format!("limit = \"{}pkt\"{aqm}", self.sizes().buffer_packets)
    }

    /// The rate after the step (the rate without one), bit/s.
    pub fn final_rate_bps(&self) -> f64 {
        let r = self.sizes().rate_bps;
        self.rate_step.map_or(r, |(f, _)| stepped_rate_bps(r, f))
    }

    /// The application's offered rate, bit/s, per flow: the constant rate
    /// of patterns 1 and 3, the chunks' average of patterns 2 and 4; none
    /// for bulk.
    pub fn app_rate_bps(&self) -> Option<f64> {
        let z = self.sizes();
        let share = log_scale(self.app_share, 0.01, 0.9);
        match self.app {
            1 | 3 => Some(z.rate_bps * share),
            2 | 4 => Some(self.chunk_bytes() * 8.0 / self.chunk_every_s()),
            _ => None,
        }
    }

    /// The application's offered rate per flow over `[from_s, to_s)` of
    /// the run, bit/s, as what the flows could deliver in that window: the
    /// constant rate of patterns 1 and 3; for the chunk patterns 2 and 4,
    /// the chunks that arrive (every period from the start) early enough
    /// to be delivered in the window, by its end less the chunk's own time
    /// at the link's rate and four round trips, over the window's length.
    /// A period of up to 12 s can leave a window with no chunk in it,
    /// where the chunks' long-run average would ask for data never offered
    /// (the run of 2026-12-06, seed 20261206: one 12.5 MB chunk every
    /// 9.8 s, an 8 s run). Chunks that arrived before the window are not
    /// counted, so a backlog carried into it is not judged. None for bulk.
    pub fn app_offered_bps(&self, from_s: f64, to_s: f64) -> Option<f64> {
        match self.app {
            2 | 4 if to_s <= from_s => Some(0.0),
            2 | 4 => {
                let z = self.sizes();
                let bits = self.chunk_bytes() * 8.0;
                let every = self.chunk_every_s();
                let last = to_s - bits / z.rate_bps - 4.0 * z.rtt_s;
                // Arrivals k·every in [from_s, last]; the period is at
                // least a round trip, so the count is bounded by the run.
                let first = (from_s / every).ceil().max(0.0);
                let chunks = ((last / every).floor() - first + 1.0).max(0.0);
                Some(chunks * bits / (to_s - from_s))
            }
            _ => self.app_rate_bps(),
        }
    }

    /// The chunk of patterns 2 (`app_share` × 4 BDP) and 4 (`app_share` ×
    /// a second at the link's rate), bytes.
    fn chunk_bytes(&self) -> f64 {
        let z = self.sizes();
        let share = log_scale(self.app_share, 0.01, 0.9);
        let span_s = if self.app == 4 { 1.0 } else { 4.0 * z.rtt_s };
        (z.rate_bps * span_s / 8.0 * share)
            .max(self.mss_bytes() as f64)
            .round()
    }

    /// The chunks' period, seconds: patterns 2 and 4.
    fn chunk_every_s(&self) -> f64 {
        if self.app == 4 {
            self.idle_period_s()
        } else {
            self.sizes().rtt_s * (1.0 + 19.0 * self.app_period.clamp(0.0, 1.0))
        }
    }

    /// Pattern 4's period, 1 to 12 s: its idles outlast the retransmission
    /// timer and, from 10 s, BBR's min_rtt window, so a flow restarts from
    /// idle with stale estimates.
    fn idle_period_s(&self) -> f64 {
        1.0 + 11.0 * self.app_period.clamp(0.0, 1.0)
    }

    /// The scenario file: `algorithm` (and `[flow.bbr3] profile`) for
    /// every flow; a header comment says what the numbers were drawn as.
    pub fn scenario(&self, algorithm: &str, profile: Option<&str>) -> String {
        let z = self.sizes();
        let us = |s: f64| format!("{}us", (s * 1e6).round().max(1.0) as u64);
        let kbit = |b: f64| format!("{}kbit", (b / 1e3).round().max(1.0) as u64);
        let one_way = z.rtt_s / 2.0;
        let mut t = String::new();
        let _ = writeln!(t, "# Written by `bbrlab fuzz`: {self:?}");
        let _ = writeln!(t, "name = \"fuzz\"");
        let _ = writeln!(t, "duration = \"{}\"", us(z.seconds));
        let _ = writeln!(t, "seed = {}", self.seed);
        // About 400 samples a run, at most one per 100 µs.
        let _ = writeln!(
            t,
            "sample_interval = \"{}\"",
            us((z.seconds / 400.0).max(100e-6))
        );
        let _ = writeln!(t, "\n[link.forward]");
        match self.rate_step {
            Some((factor, at)) => {
                let _ = writeln!(
                    t,
                    "rate = {{ steps = [ {{ at = \"0s\", rate = \"{}\" }}, {{ at = \"{}\", rate = \"{}\" }} ] }}",
                    kbit(z.rate_bps),
                    us(z.step_s.unwrap_or(z.seconds * at)),
                    kbit(stepped_rate_bps(z.rate_bps, factor))
                );
            }
            None => {
                let _ = writeln!(t, "rate = \"{}\"", kbit(z.rate_bps));
            }
        }
        match self.delay_step {
            Some((factor, at, reorder)) => {
                let _ = writeln!(
                    t,
                    "delay_schedule = {{ steps = [ {{ at = \"0s\", delay = \"{}\" }}, {{ at = \"{}\", delay = \"{}\" }} ], reorder = {reorder} }}",
                    us(one_way),
                    us(z.step_s.unwrap_or(z.seconds * at)),
                    us(one_way * log_scale(factor, 0.1, 10.0))
                );
            }
            None => {
                let _ = writeln!(t, "delay = \"{}\"", us(one_way));
            }
        }
        let _ = writeln!(t, "queue = {{ {} }}", self.queue_table());
        if let Some((p, bursty)) = self.loss {
            let p = log_scale(p, 1e-4, 0.1);
            if bursty {
                // Bursts of 1 / r = 4 packets on average, entered so that
                // the long-run loss is p.
                let _ = writeln!(
                    t,
                    "loss = {{ gilbert_elliott = {{ p = {:.6}, r = 0.25, loss_good = 0.0, loss_bad = 1.0 }} }}",
                    0.25 * p / (1.0 - p)
                );
            } else {
                let _ = writeln!(t, "loss = {p:.6}");
            }
        }
        if let Some((frac, reorder)) = self.jitter {
            let _ = writeln!(
                t,
                "jitter = {{ uniform = {{ min = \"0us\", max = \"{}\" }}, reorder = {reorder} }}",
                us(z.rtt_s * frac.clamp(0.0, 1.0))
            );
        }
        if let Some((frac, bucket)) = self.policer {
            let _ = writeln!(
                t,
                "policer = {{ rate = \"{}\", bucket = \"{}B\" }}",
                kbit((z.rate_bps * (0.1 + 0.8 * frac.clamp(0.0, 1.0))).max(64e3)),
                // At least one of the largest segments: a smaller bucket
                // never lets one through, and the simulator refuses it.
                ((5.0 + 95.0 * bucket.clamp(0.0, 1.0)).round() as u64 * 1500)
                    .max(self.max_mss_bytes())
            );
        }
        let _ = writeln!(t, "\n[link.reverse]\ndelay = \"{}\"", us(one_way));
        if let Some(x) = self.ack_aggregation {
            let _ = writeln!(
                t,
                "ack_aggregation = {{ interval = \"{}\" }}",
                us(log_scale(x, 1e-3, 40e-3))
            );
        }
        for i in 0..self.flow_count() {
            let _ = writeln!(t, "\n[[flow]]\nalgorithm = \"{algorithm}\"");
            if i > 0 {
                let _ = writeln!(t, "start = \"{}\"", us(z.rtt_s * i as f64 / 8.0));
            }
            if self.mss_bytes() != 1500 {
                let _ = writeln!(t, "mss = {}", self.mss_bytes());
            }
            if let (Some(at_ns), Some(mss)) = (self.mss_change_ns(), self.changed_mss_bytes()) {
                let _ = writeln!(
                    t,
                    "mss_change = {{ at = \"{}us\", mss = {mss} }}",
                    at_ns / 1000
                );
            }
            // Always written: a flow that names none gets its stack's
            // default receiver (Linux's for bbrlab's algorithms), not
            // receiver 0's ACK per packet.
            let ack = ["every", "delayed", "linux", "decimated"][usize::from(self.ack.min(3))];
            let _ = writeln!(t, "ack = \"{ack}\"");
            // Always written, as `ack` is: a flow that names none gets
            // its stack's default pacer (Linux's for bbrlab's
            // algorithms), which is not what `false` means.
            let pacing = if self.linux_bursts {
                "quantum"
            } else {
                "exact"
            };
            let _ = writeln!(t, "pacing = \"{pacing}\"");
            let share = log_scale(self.app_share, 0.01, 0.9);
            match self.app {
                1 => {
                    let _ = writeln!(t, "app_rate = \"{}\"", kbit(z.rate_bps * share));
                }
                2 | 4 => {
                    let _ = writeln!(
                        t,
                        "chunk_size = \"{}B\"\nchunk_every = \"{}\"",
                        self.chunk_bytes() as u64,
                        us(self.chunk_every_s())
                    );
                }
                3 => {
                    let _ = writeln!(
                        t,
                        "app_rate = \"{}\"\napp_rate_from = \"{}\"",
                        kbit(z.rate_bps * share),
                        us(z.seconds / 3.0)
                    );
                }
                _ => {}
            }
            if let Some(p) = profile {
                let _ = writeln!(t, "[flow.bbr3]\nprofile = \"{p}\"");
            }
        }
        t
    }

    /// The same path with every number rounded to one significant decimal
    /// step of its scale (tenths): a shrunk path read by people.
    pub fn rounded(&self) -> FuzzPath {
        let r = |x: f64| (x * 10.0).round() / 10.0;
        FuzzPath {
            rate: r(self.rate),
            rtt: r(self.rtt),
            buffer: r(self.buffer),
            loss: self.loss.map(|(p, b)| (r(p), b)),
            rate_step: self.rate_step.map(|(f, a)| (r(f), r(a))),
            delay_step: self.delay_step.map(|(f, a, o)| (r(f), r(a), o)),
            jitter: self.jitter.map(|(f, o)| (r(f), o)),
            ack_aggregation: self.ack_aggregation.map(r),
            policer: self.policer.map(|(f, b)| (r(f), r(b))),
            app_share: r(self.app_share),
            app_period: r(self.app_period),
            mss: self.mss.map(r),
            mss_change: self.mss_change.map(|(a, m)| (r(a), r(m))),
            ..self.clone()
        }
    }
}

/// The generator: each feature present with a fixed chance, numbers
/// uniform on their 0..1 scales.
pub fn strategy() -> impl Strategy<Value = FuzzPath> {
    let unit = || 0.0..1.0f64;
    let sometimes = |p: f64| proptest::bool::weighted(p);
    // TOML integers are signed 64-bit: seeds below 2^32 are plenty.
    let shape = (
        unit(),
        unit(),
        unit(),
        1u8..=3,
        0u8..5,
        any::<u32>().prop_map(u64::from),
    );
    let impairments = (
        proptest::option::weighted(0.3, (unit(), sometimes(0.3))),
        proptest::option::weighted(0.2, (unit(), unit())),
        proptest::option::weighted(0.15, (unit(), unit(), sometimes(0.5))),
        proptest::option::weighted(0.15, (unit(), sometimes(0.5))),
        proptest::option::weighted(0.15, unit()),
        proptest::option::weighted(0.1, (unit(), unit())),
    );
    let app = (
        prop_oneof![
            8 => Just(0u8),
            4 => Just(1u8),
            2 => Just(2u8),
            2 => Just(3u8),
            1 => Just(4u8)
        ],
        unit(),
        unit(),
    );
    // The receiver, the segment size, the rare large transfer and the
    // pacer: each shrinks to the plain case (an ACK per packet, 1,500
    // bytes, small, one packet at a time).
    let ends = (
        prop_oneof![4 => Just(0u8), 1 => Just(1u8), 1 => Just(2u8), 1 => Just(3u8)],
        proptest::option::weighted(0.15, unit()),
        sometimes(0.01),
        proptest::option::weighted(0.1, (unit(), unit())),
        sometimes(0.5),
    );
    (shape, impairments, app, ends).prop_map(
        |(
            (rate, rtt, buffer, flows, aqm, seed),
            (loss, rate_step, delay_step, jitter, ack_aggregation, policer),
            (app, app_share, app_period),
            (ack, mss, large, mss_change, linux_bursts),
        )| FuzzPath {
            rate,
            rtt,
            buffer,
            flows,
            loss,
            rate_step,
            delay_step,
            jitter,
            ack_aggregation,
            aqm,
            policer,
            app,
            app_share,
            app_period,
            ack,
            mss,
            mss_change,
            large,
            linux_bursts,
            seed,
        },
    )
}
