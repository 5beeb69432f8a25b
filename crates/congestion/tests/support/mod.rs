//! Test support: two ways to drive a controller without a real network.
//!
//! - [`RoundDriver`] scripts rate samples directly: one ACK per round trip
//!   whose delivery rate, RTT and inflight the test chooses. It isolates one
//!   rule at a time (full-pipe detection, DRAIN's exit, jitter switching).
//! - [`run_path`] is a tiny packet-level bottleneck: a paced sender, a
//!   fixed-rate link with a drop-tail queue, an optional token-bucket
//!   policer, optional ACK bunching and random loss. It shows whole
//!   behaviours (BDP inflight, PROBE_RTT cadence, policer detection).
//!
//! This is deliberately small; bbrlab's real simulator lives in `netsim`.

#![allow(dead_code)] // Each test binary uses a different subset.

use congestion::{
    AckEvent, AckedPacket, Config, Controller, Instant, LostPacket, SentPacketState, Snapshot,
};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Duration;

pub const MS: u64 = 1_000_000;
pub const SEC: u64 = 1_000_000_000;

pub fn at(ns: u64) -> Instant {
    Instant::from_nanos(ns)
}

/// Scripts one ACK per round with a chosen delivery rate.
pub struct RoundDriver {
    pub cc: Controller,
    pub now_ns: u64,
    pub mss: u64,
    delivered: u64,
}

impl RoundDriver {
    pub fn new(cfg: &Config) -> Self {
        RoundDriver {
            cc: Controller::new(cfg, at(0)),
            now_ns: 0,
            mss: cfg.mss_bytes,
            delivered: 0,
        }
    }

    /// A copy of the driver and its controller (`Controller::try_clone`).
    pub fn try_clone(&self) -> Option<RoundDriver> {
        Some(RoundDriver {
            cc: self.cc.try_clone()?,
            now_ns: self.now_ns,
            mss: self.mss,
            delivered: self.delivered,
        })
    }

    /// Advances one round of `rtt_ns` and acknowledges `rate × rtt` bytes in
    /// one ACK, built so the sampler measures exactly `rate_bytes_per_sec`
    /// (the acked packet was sent one RTT ago, when `delivered` was last
    /// updated). `in_flight_after` is what the test says remains in flight.
    pub fn round(
        &mut self,
        rate_bytes_per_sec: f64,
        rtt_ns: u64,
        in_flight_after: u64,
        app_limited: bool,
    ) -> Snapshot {
        let bytes = ((rate_bytes_per_sec * rtt_ns as f64 / 1e9).round() as u64).max(1);
        self.ack_after(bytes, rtt_ns, rtt_ns, in_flight_after, app_limited)
    }

    /// Acknowledges `bytes` sent `interval_ns` ago, with an RTT sample of `rtt_ns`.
    pub fn ack_after(
        &mut self,
        bytes: u64,
        interval_ns: u64,
        rtt_ns: u64,
        in_flight_after: u64,
        app_limited: bool,
    ) -> Snapshot {
        let sent = self.now_ns;
        self.now_ns += interval_ns;
        let state = SentPacketState {
            sent_time: at(sent),
            delivered_bytes: self.delivered,
            delivered_time: at(sent),
            first_sent_time: at(sent),
            is_app_limited: app_limited,
            bytes_in_flight: in_flight_after + bytes,
            lost_bytes: 0,
            delivered_packets: 0,
            delivered_ce_packets: 0,
        };
        self.delivered += bytes;
        // Nothing is lost on a scripted ACK, so the bytes in flight when it
        // arrived are what remains plus what it acknowledges.
        self.cc.on_ack(
            &AckEvent::new(
                at(self.now_ns),
                &[AckedPacket { bytes, state }],
                in_flight_after + bytes,
                in_flight_after,
            )
            .rtt(Some(Duration::from_nanos(rtt_ns)), Duration::ZERO),
        );
        self.cc.snapshot()
    }
}

/// A token-bucket policer.
#[derive(Clone, Copy, Debug)]
pub struct Policer {
    pub rate_bytes_per_sec: f64,
    pub bucket_bytes: f64,
}

/// The scripted path.
#[derive(Clone, Debug)]
pub struct Path {
    /// Bottleneck rate, bits/s.
    pub rate_bps: f64,
    /// Rate changes: (time ns, new rate bits/s).
    pub rate_steps: Vec<(u64, f64)>,
    /// Two-way propagation delay, ns.
    pub rtt_ns: u64,
    /// Drop-tail queue limit, packets.
    pub queue_packets: usize,
    pub policer: Option<Policer>,
    /// If set, ACKs are held and released together on this period (Wi-Fi-like).
    pub ack_burst_ns: Option<u64>,
    /// Random forward-path loss probability.
    pub loss: f64,
    pub seed: u64,
    /// If set, the application offers data at this rate (bytes/s) only.
    pub app_rate_bytes_per_sec: Option<f64>,
    /// If set, the application rate applies only before this time (ns);
    /// from then on the application always has data (bulk).
    pub app_until_ns: Option<u64>,
    /// If set, each packet's two-way delay is drawn from this distribution
    /// instead of `rtt_ns`.
    pub jitter: Option<Jitter>,
}

/// Per-packet two-way delay ~ Normal(mean, sd), floored.
#[derive(Clone, Copy, Debug)]
pub struct Jitter {
    pub mean_ns: f64,
    pub sd_ns: f64,
    pub floor_ns: f64,
    /// If false, a packet is never delivered before its predecessor.
    pub reorder: bool,
}

impl Path {
    pub fn new(rate_mbps: f64, rtt_ms: u64, queue_packets: usize) -> Self {
        Path {
            rate_bps: rate_mbps * 1e6,
            rate_steps: Vec::new(),
            rtt_ns: rtt_ms * MS,
            queue_packets,
            policer: None,
            ack_burst_ns: None,
            loss: 0.0,
            seed: 1,
            app_rate_bytes_per_sec: None,
            app_until_ns: None,
            jitter: None,
        }
    }

    fn rate_at(&self, t: u64) -> f64 {
        let mut r = self.rate_bps;
        for &(ts, rate) in &self.rate_steps {
            if ts <= t {
                r = rate;
            }
        }
        r
    }
}

/// One record per ACK batch.
#[derive(Clone, Debug)]
pub struct Record {
    pub t_ns: u64,
    pub rtt_ns: u64,
    pub in_flight: u64,
    pub delivered: u64,
    pub snap: Snapshot,
}

/// What a run produced.
pub struct RunResult {
    pub records: Vec<Record>,
    pub delivered_bytes: u64,
    pub drops: u64,
    pub sent_packets: u64,
    /// Send time of each packet, and whether the path dropped it.
    pub sends: Vec<(u64, bool)>,
    pub rtos: u64,
    /// The largest per-ACK acked-bytes batch.
    pub max_ack_batch: u64,
}

impl RunResult {
    /// Goodput over [from, to) in bits/s, from the delivered counter.
    pub fn goodput_bps(&self, from_ns: u64, to_ns: u64) -> f64 {
        let d = |t: u64| {
            self.records
                .iter()
                .take_while(|r| r.t_ns <= t)
                .last()
                .map(|r| r.delivered)
                .unwrap_or(0)
        };
        (d(to_ns) - d(from_ns)) as f64 * 8.0 * 1e9 / (to_ns - from_ns) as f64
    }

    /// Fraction of packets sent in [from, to) that the path dropped.
    pub fn loss_rate(&self, from_ns: u64, to_ns: u64) -> f64 {
        let w: Vec<bool> = self
            .sends
            .iter()
            .filter(|s| s.0 >= from_ns && s.0 < to_ns)
            .map(|s| s.1)
            .collect();
        w.iter().filter(|d| **d).count() as f64 / w.len().max(1) as f64
    }

    /// Median RTT sample in [from, to), ns.
    pub fn median_rtt_ns(&self, from_ns: u64, to_ns: u64) -> u64 {
        let mut v: Vec<u64> = self
            .records
            .iter()
            .filter(|r| r.t_ns >= from_ns && r.t_ns < to_ns && r.rtt_ns > 0)
            .map(|r| r.rtt_ns)
            .collect();
        v.sort_unstable();
        v[v.len() / 2]
    }

    pub fn window(&self, from_ns: u64, to_ns: u64) -> impl Iterator<Item = &Record> {
        self.records
            .iter()
            .filter(move |r| r.t_ns >= from_ns && r.t_ns < to_ns)
    }
}

struct Pkt {
    bytes: u64,
    state: SentPacketState,
    dropped: bool,
    done: bool,
}

/// Runs one bulk flow over `path` for `duration_ns`.
pub fn run_path(path: &Path, cfg: &Config, duration_ns: u64) -> RunResult {
    let mss = cfg.mss_bytes;
    let mut cc = Controller::new(cfg, at(0));
    let mut rng = SplitMix64::new(path.seed);
    let mut now: u64 = 0;
    let mut next_send: u64 = 0;
    let mut link_free: u64 = 0;
    let mut queue: VecDeque<u64> = VecDeque::new(); // bottleneck departure times
    let mut pkts: VecDeque<Pkt> = VecDeque::new();
    let mut base_seq: u64 = 0; // seq of pkts[0]
    let mut acks: BinaryHeap<Reverse<(u64, u64)>> = BinaryHeap::new(); // (time, seq)
    let mut in_flight: u64 = 0;
    let mut tokens = path.policer.map(|p| p.bucket_bytes).unwrap_or(0.0);
    let mut tokens_t: u64 = 0;
    let mut app_credit: f64 = 0.0;
    let mut app_t: u64 = 0;
    let mut last_progress: u64 = 0;
    let mut out = RunResult {
        records: Vec::new(),
        delivered_bytes: 0,
        drops: 0,
        sent_packets: 0,
        rtos: 0,
        max_ack_batch: 0,
        sends: Vec::new(),
    };
    let mut acked_buf: Vec<AckedPacket> = Vec::new();
    let mut lost_buf: Vec<LostPacket> = Vec::new();
    let mut largest_acked: Option<u64> = None;
    let mut last_ack_t: u64 = 0;

    while now < duration_ns {
        let rto = cc
            .rtt()
            .retransmission_timeout(Duration::from_millis(1), Duration::from_secs(1))
            .max(Duration::from_millis(200));
        let rto_at = if in_flight > 0 {
            last_progress + rto.as_nanos() as u64
        } else {
            u64::MAX
        };
        // When may the app next send a full packet?
        let app_rate = path
            .app_rate_bytes_per_sec
            .filter(|_| path.app_until_ns.is_none_or(|u| now < u));
        let app_ready = match app_rate {
            None => now,
            Some(r) => {
                let credit = app_credit + r * (now - app_t) as f64 / 1e9;
                if credit >= mss as f64 {
                    now
                } else {
                    now + (((mss as f64 - credit) / r) * 1e9).ceil() as u64
                }
            }
        };
        let can_send = in_flight + mss <= cc.cwnd_bytes();
        let send_at = if can_send {
            next_send.max(app_ready)
        } else {
            u64::MAX
        };
        let ack_at = acks.peek().map(|Reverse((t, _))| *t).unwrap_or(u64::MAX);
        let t = send_at.min(ack_at).min(rto_at);
        if t == u64::MAX || t >= duration_ns {
            break;
        }
        now = t;
        if ack_at == t {
            acked_buf.clear();
            lost_buf.clear();
            while let Some(Reverse((ta, seq))) = acks.peek().copied() {
                if ta != t {
                    break;
                }
                acks.pop();
                if seq < base_seq {
                    continue;
                }
                let p = &mut pkts[(seq - base_seq) as usize];
                if p.done {
                    continue;
                }
                p.done = true;
                in_flight -= p.bytes;
                acked_buf.push(AckedPacket {
                    bytes: p.bytes,
                    state: p.state,
                });
                largest_acked = Some(largest_acked.map_or(seq, |l| l.max(seq)));
            }
            // Loss detection: a dropped packet is lost once a later one is acked.
            if let Some(la) = largest_acked {
                for (i, p) in pkts.iter_mut().enumerate() {
                    let seq = base_seq + i as u64;
                    if seq >= la {
                        break;
                    }
                    if p.dropped && !p.done {
                        p.done = true;
                        in_flight -= p.bytes;
                        lost_buf.push(LostPacket {
                            bytes: p.bytes,
                            state: p.state,
                        });
                    }
                }
            }
            while pkts.front().is_some_and(|p| p.done) {
                pkts.pop_front();
                base_seq += 1;
            }
            if !acked_buf.is_empty() {
                last_progress = now;
                let newest = acked_buf.iter().map(|a| a.state.sent_time).max().unwrap();
                let rtt = now - newest.as_nanos();
                let bytes: u64 = acked_buf.iter().map(|a| a.bytes).sum();
                out.max_ack_batch = out.max_ack_batch.max(bytes);
                out.delivered_bytes += bytes;
                // One event per ACK: what it acknowledges and the losses it
                // reveals. In flight when it arrived: what remains plus what
                // it acknowledges (this model leaves the ACK's losses out of
                // that figure; a real transport counts them too).
                cc.on_ack(
                    &AckEvent::new(at(now), &acked_buf, in_flight + bytes, in_flight)
                        .rtt(Some(Duration::from_nanos(rtt)), Duration::ZERO)
                        .lost(&lost_buf, 1),
                );
                out.records.push(Record {
                    t_ns: now,
                    rtt_ns: rtt,
                    in_flight,
                    delivered: out.delivered_bytes,
                    snap: cc.snapshot(),
                });
            } else if !lost_buf.is_empty() {
                // Losses revealed by an ACK that acknowledged nothing new.
                cc.on_ack(&AckEvent::new(at(now), &[], in_flight, in_flight).lost(&lost_buf, 1));
            }
            continue;
        }
        if rto_at == t {
            lost_buf.clear();
            for p in pkts.iter_mut().filter(|p| !p.done) {
                p.done = true;
                lost_buf.push(LostPacket {
                    bytes: p.bytes,
                    state: p.state,
                });
            }
            in_flight = 0;
            pkts.clear();
            cc.on_retransmission_timeout(at(now), &lost_buf, 1, 0);
            out.rtos += 1;
            last_progress = now;
            // Sequence numbers keep increasing; drop stale ACK events.
            base_seq = out.sent_packets;
            continue;
        }
        // Send one packet.
        if let Some(r) = app_rate {
            app_credit =
                (app_credit + r * (now - app_t) as f64 / 1e9).min(64.0 * mss as f64) - mss as f64;
            app_t = now;
        }
        let app_limited = app_rate.is_some();
        let state = cc.on_packet_sent(at(now), mss, in_flight, app_limited);
        let seq = out.sent_packets;
        out.sent_packets += 1;
        in_flight += mss;
        if pkts.is_empty() {
            base_seq = seq;
            if in_flight == mss {
                last_progress = now;
            }
        }
        let rate = cc.pacing_rate_bytes_per_sec().max(1) as f64;
        next_send = next_send.max(now) + (mss as f64 / rate * 1e9) as u64;
        // The path.
        let mut dropped = path.loss > 0.0 && (rng.next_u64() as f64 / u64::MAX as f64) < path.loss;
        if let (Some(pol), false) = (path.policer, dropped) {
            tokens = (tokens + pol.rate_bytes_per_sec * (now - tokens_t) as f64 / 1e9)
                .min(pol.bucket_bytes);
            tokens_t = now;
            if tokens >= mss as f64 {
                tokens -= mss as f64;
            } else {
                dropped = true;
            }
        }
        while queue.front().is_some_and(|&d| d <= now) {
            queue.pop_front();
        }
        if !dropped && queue.len() >= path.queue_packets {
            dropped = true;
        }
        out.sends.push((now, dropped));
        if dropped {
            out.drops += 1;
        } else {
            let rate_bps = path.rate_at(now.max(link_free));
            let dep = now.max(link_free) + (mss as f64 * 8.0 / rate_bps * 1e9) as u64;
            link_free = dep;
            queue.push_back(dep);
            let mut ack_t = match path.jitter {
                None => dep + path.rtt_ns,
                Some(j) => {
                    // Box–Muller from two uniforms in (0, 1].
                    let u1 = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 + f64::EPSILON;
                    let u2 = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                    let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                    let d = (j.mean_ns + j.sd_ns * z).max(j.floor_ns) as u64;
                    if j.reorder {
                        dep + d
                    } else {
                        (dep + d).max(last_ack_t)
                    }
                }
            };
            last_ack_t = ack_t;
            if let Some(b) = path.ack_burst_ns {
                ack_t = ack_t.div_ceil(b) * b;
            }
            acks.push(Reverse((ack_t, seq)));
        }
        pkts.push_back(Pkt {
            bytes: mss,
            state,
            dropped,
            done: false,
        });
    }
    out
}

/// Drives STARTUP with rates doubling up to `plateau` (bytes/s) in rounds
/// of `rtt_ns`, then plateau rounds until DRAIN; leaves the driver in
/// DRAIN with a huge inflight.
#[allow(dead_code)] // not every test binary that includes `support` uses it
pub fn to_drain(d: &mut RoundDriver, plateau: f64, rtt_ns: u64) {
    let mut r = plateau / 8.0;
    while r < plateau {
        d.round(r, rtt_ns, 1 << 30, false);
        r *= 2.0;
    }
    for _ in 0..4 {
        if d.round(plateau, rtt_ns, 1 << 30, false).mode == congestion::Mode::Drain {
            return;
        }
    }
    panic!("never left STARTUP");
}

/// The paths' random numbers: SplitMix64 (Steele, Lea & Flood, 2014), the
/// generator the crate uses internally, written here because the crate
/// keeps it private; the same sequence, so the paths are the ones the
/// tests were calibrated on.
struct SplitMix64(u64);

impl SplitMix64 {
    fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}
