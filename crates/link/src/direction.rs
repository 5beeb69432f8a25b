//! One direction of a link at run time.
//!
//! A packet offered at time t passes, in order: random loss, the policer,
//! the queue limit, FIFO service at the rate schedule (with the AQM, CoDel
//! or the step marker, deciding at the head of the line), propagation delay
//! plus jitter, and finally aggregation.
//!
//! ECN (RFC 3168): with `ecn` on the queue, where the AQM would drop a
//! packet it marks an ECN-capable one ([`Ecn::is_ect`]) CE instead,
//! and the packet stays in the queue; a packet that is not ECN-capable is
//! still dropped there, and a full queue drops every packet (overflow is
//! not an AQM decision). A packet that arrives CE leaves CE.
//!
//! The AQM's sojourn is the time from a packet's arrival until its own
//! transmission starts (the queueing delay ahead of it, without its own
//! serialisation): what CoDel's estimator measures at dequeue (RFC 8289
//! §3.1) and the instantaneous queue delay DCTCP and L4S step markers use.
//! Counting its own serialisation would make the step threshold depend on
//! packet size and rate: at 10 Mbit/s a lone 1500-byte packet takes
//! 1.2 ms, above a 1 ms threshold on an empty link. Because the queue is FIFO and the rate schedule is known in
//! advance, when a packet leaves is decided the moment it arrives: the
//! model needs no event loop of its own, so a discrete-event simulator and
//! a real-time emulator can both drive it.
//!
//! FQ-CoDel, PIE and DualPI2 cannot be decided on arrival (see
//! [`crate::sched`]). With one of them a packet that passes loss, the
//! policer and the discipline's own enqueue checks comes back as
//! [`Verdict::Queued`]; the direction then runs a dequeue clock of its own:
//! each time the link becomes free the discipline picks the next packet,
//! and its fate (sent, with its arrival time and mark, or dropped) comes
//! out of [`Direction::release_due`] as a [`Release`].
//! [`Direction::next_release_ns`] says when the next such decision is due,
//! so the driver's only duty is to call `release_due` then. The arrival-time
//! path of drop-tail, CoDel and the step marker is untouched by this.

use crate::config::{
    AggregationConfig, JitterDist, LossConfig, RateSchedule, ResolvedDirection,
    TRACE_OPPORTUNITY_BYTES,
};
pub use crate::drop_reason::DropReason;
use crate::fifo::Fifo;
use crate::sched::{Pkt, Sched};
use crate::units::Size;
use congestion::Ecn;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};
use std::collections::VecDeque;

/// What happens to a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It leaves the bottleneck at `dequeue_ns` and reaches the far end at `arrive_ns`.
    Deliver {
        /// Per-direction sequence number.
        id: u64,
        /// When it was offered.
        enqueue_ns: u64,
        /// When its last bit left the bottleneck.
        dequeue_ns: u64,
        /// When it reaches the far end.
        arrive_ns: u64,
        /// It leaves this direction CE-marked: marked here, or it arrived
        /// with CE.
        ce: bool,
    },
    /// Held by count-based aggregation; its arrival comes from
    /// [`Direction::release_due`].
    Held {
        /// Per-direction sequence number.
        id: u64,
        /// When it was offered.
        enqueue_ns: u64,
        /// When its last bit left the bottleneck.
        dequeue_ns: u64,
        /// It leaves this direction CE-marked: marked here, or it arrived
        /// with CE.
        ce: bool,
    },
    /// Dropped.
    Drop {
        /// Per-direction sequence number.
        id: u64,
        /// Why.
        reason: DropReason,
    },
    /// Waiting in a dequeue-time discipline (FQ-CoDel, PIE, DualPI2); its
    /// fate comes from [`Direction::release_due`].
    Queued {
        /// Per-direction sequence number.
        id: u64,
        /// When it was offered.
        enqueue_ns: u64,
    },
}

/// A held or queued packet's release: when it reaches the far end, or
/// that a dequeue-time discipline dropped it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Release {
    /// The packet's id.
    pub id: u64,
    /// When it reaches the far end (meaningless when `drop` is set).
    pub arrive_ns: u64,
    /// When its last bit left the bottleneck (for a drop: when it was
    /// dropped).
    pub dequeue_ns: u64,
    /// It leaves this direction CE-marked.
    pub ce: bool,
    /// A dequeue-time discipline dropped it (or FQ-CoDel's overflow did).
    pub drop: Option<DropReason>,
}

/// Queue occupancy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueState {
    /// Packets waiting or in service.
    pub packets: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DirectionStats {
    /// Packets offered.
    pub offered: u64,
    /// Packets that left the bottleneck.
    pub delivered: u64,
    /// Dropped by random loss.
    pub dropped_loss: u64,
    /// Dropped by the policer.
    pub dropped_policer: u64,
    /// Dropped because the queue was full.
    pub dropped_queue: u64,
    /// Dropped by CoDel.
    pub dropped_codel: u64,
    /// Dropped by the step marker.
    pub dropped_step: u64,
    /// ECN-capable packets this direction marked CE instead of dropping
    /// them (packets that arrived CE are not counted).
    pub marked_ce: u64,
    /// Dropped by FQ-CoDel's per-queue CoDel.
    pub dropped_fq_codel: u64,
    /// Dropped early by PIE.
    pub dropped_pie: u64,
    /// Dropped by DualPI2 (Classic queue).
    pub dropped_dualpi2: u64,
}

impl DirectionStats {
    /// All drops.
    pub fn dropped_total(&self) -> u64 {
        self.dropped_loss
            + self.dropped_policer
            + self.dropped_queue
            + self.dropped_codel
            + self.dropped_step
            + self.dropped_fq_codel
            + self.dropped_pie
            + self.dropped_dualpi2
    }

    fn count_drop(&mut self, reason: DropReason) {
        match reason {
            DropReason::RandomLoss => self.dropped_loss += 1,
            DropReason::Policer => self.dropped_policer += 1,
            DropReason::QueueFull => self.dropped_queue += 1,
            DropReason::Codel => self.dropped_codel += 1,
            DropReason::Step => self.dropped_step += 1,
            DropReason::FqCodel => self.dropped_fq_codel += 1,
            DropReason::Pie => self.dropped_pie += 1,
            DropReason::DualPi2 => self.dropped_dualpi2 += 1,
        }
    }
}

/// CoDel on the FIFO path: RFC 8289's state ([`crate::codel::Codel`])
/// with this queue's target and interval, decided for each packet when it
/// arrives, for the moment it will reach the head.
#[derive(Clone, Debug, Default)]
struct Codel {
    target_ns: u64,
    interval_ns: u64,
    state: crate::codel::Codel,
}

impl Codel {
    /// RFC 8289 §5.5 `dequeue`: should the packet of `packet_bytes` at the
    /// head at `now`, with `queue_bytes` standing, be dropped (or marked)?
    fn should_drop(&mut self, now: u64, sojourn: u64, packet_bytes: u64, queue_bytes: u64) -> bool {
        let (target, interval) = (self.target_ns, self.interval_ns);
        let c = &mut self.state;
        let ok = c.sojourn_persists(now, sojourn, packet_bytes, queue_bytes, target, interval);
        if c.dropping {
            if !ok {
                c.dropping = false;
                return false;
            }
            if now >= c.drop_next_ns {
                c.next_drop(interval);
                return true;
            }
            return false;
        }
        if ok {
            c.start_dropping(now, interval);
            return true;
        }
        false
    }
}

/// One direction of a link.
#[derive(Clone, Debug)]
pub struct Direction {
    cfg: ResolvedDirection,
    rng: ChaCha8Rng,
    next_id: u64,
    ge_bad: bool,
    tokens: f64,
    tokens_ns: u64,
    /// Dequeue time and cumulative bytes (including this packet) of packets
    /// in the queue, in FIFO order.
    queue: Fifo<(u64, u64)>,
    cum_bytes: u64,
    /// Cumulative bytes of every packet already removed from `queue`.
    popped_cum: u64,
    link_free_ns: u64,
    /// Trace: index of the next unused opportunity and bytes left in the
    /// last partly used one (with its time).
    trace: TraceCursor,
    codel: Option<Codel>,
    last_arrive_ns: u64,
    /// Packets held by count-based aggregation, each with its own arrival.
    held: VecDeque<Release>,
    released: Vec<Release>,
    stats: DirectionStats,
    /// A dequeue-time discipline, if configured (None on the fast path).
    sched: Option<Box<Sched>>,
    /// Bytes of the packet in service under `sched` (until `link_free_ns`).
    in_service_bytes: u64,
    /// Drops a discipline made, to turn into releases.
    sched_drops: Vec<(Pkt, DropReason)>,
    /// Set at construction when the direction is only a wire: no rate
    /// limit, loss, policer, jitter, aggregation or discipline (an ACK
    /// path's usual reverse direction). Its verdict is then the
    /// propagation delay alone, which [`Direction::pass_wire`] gives
    /// without looking at each of those settings for every packet; the
    /// configuration never changes after construction, so neither does
    /// this.
    wire_only: bool,
    /// Set at construction when the direction is a plain drop-tail queue
    /// at a constant rate: no loss, policer, AQM, jitter, aggregation or
    /// discipline (the bottleneck of most scenarios). Its verdict then
    /// depends only on the queue and the rate, which
    /// [`Direction::pass_drop_tail`] computes without testing each of the
    /// other settings for every packet; the configuration never changes
    /// after construction, so neither does this.
    drop_tail_only: bool,
    /// A constant rate's transmission time: (bytes, whole ns) of the
    /// last packet size [`Direction::finish_time`] computed, a pure
    /// function of the size while the rate is constant, so a repeat
    /// skips the float division and rounding. `u64::MAX` bytes (never a
    /// packet's size, which is a `u32`) until the first.
    tx_memo: (u64, u64),
}

/// Where a trace-driven direction has got to in its delivery opportunities.
#[derive(Clone, Copy, Debug, Default)]
struct TraceCursor {
    /// Index of the first opportunity not yet used (counting across periods).
    next: u64,
    /// Bytes left unused in the most recently used opportunity.
    left: u64,
    /// Time of that opportunity.
    left_ns: u64,
}

impl TraceCursor {
    fn op_time(ops: &[u64], period: u64, idx: u64) -> u64 {
        let n = ops.len() as u64;
        (idx / n) * period + ops[(idx % n) as usize]
    }

    /// Byte-accounted delivery opportunities: a packet uses the leftover of
    /// the current opportunity (if not earlier than its start) and then as
    /// many later opportunities as it needs; it finishes at the last one.
    fn finish(&mut self, ops: &[u64], period: u64, start: u64, bytes: u64) -> u64 {
        let mut need = bytes;
        let mut finish = start;
        if self.left > 0 && self.left_ns >= start {
            let take = need.min(self.left);
            self.left -= take;
            need -= take;
            finish = self.left_ns;
        }
        if need == 0 {
            return finish;
        }
        // First unused opportunity at or after `start`.
        let n = ops.len() as u64;
        let cycle = start / period;
        let within = start % period;
        let mut idx = cycle * n + ops.partition_point(|&o| o < within) as u64;
        if Self::op_time(ops, period, idx) < start {
            idx += 1;
        }
        idx = idx.max(self.next);
        while need > 0 {
            let t = Self::op_time(ops, period, idx);
            let take = need.min(TRACE_OPPORTUNITY_BYTES);
            need -= take;
            finish = t;
            self.left = TRACE_OPPORTUNITY_BYTES - take;
            self.left_ns = t;
            idx += 1;
        }
        self.next = idx;
        finish
    }
}

impl Direction {
    /// Whether nothing but the rate, the queue's limit and the delay acts
    /// on `cfg`'s packets: no policer, jitter, aggregation, discipline or
    /// loss (`random_loss` draws nothing for Bernoulli p <= 0, or NaN).
    fn only_a_queue(cfg: &ResolvedDirection) -> bool {
        cfg.policer.is_none()
            && cfg.jitter.is_none()
            && cfg.aggregation.is_none()
            && cfg.queue.discipline.is_none()
            && match cfg.loss {
                None => true,
                Some(LossConfig::Bernoulli(p)) => p.is_nan() || p <= 0.0,
                Some(LossConfig::GilbertElliott { .. }) => false,
            }
    }

    /// A direction running `cfg`, with its randomness seeded by `seed`.
    pub fn new(cfg: &ResolvedDirection, seed: u64) -> Direction {
        Direction {
            cfg: cfg.clone(),
            rng: ChaCha8Rng::seed_from_u64(seed),
            next_id: 0,
            ge_bad: false,
            tokens: cfg.policer.map_or(0.0, |p| p.1 as f64),
            tokens_ns: 0,
            queue: Fifo::default(),
            cum_bytes: 0,
            popped_cum: 0,
            link_free_ns: 0,
            trace: TraceCursor::default(),
            codel: cfg.queue.codel.map(|(t, i)| Codel {
                target_ns: t,
                interval_ns: i,
                ..Codel::default()
            }),
            last_arrive_ns: 0,
            held: VecDeque::new(),
            released: Vec::new(),
            stats: DirectionStats::default(),
            sched: cfg
                .queue
                .discipline
                .as_ref()
                .map(|d| Box::new(Sched::new(d))),
            in_service_bytes: 0,
            sched_drops: Vec::new(),
            wire_only: cfg.rate == RateSchedule::Unlimited && Self::only_a_queue(cfg),
            drop_tail_only: matches!(cfg.rate, RateSchedule::Constant(_))
                && cfg.queue.codel.is_none()
                && cfg.queue.step_ns.is_none()
                && Self::only_a_queue(cfg),
            tx_memo: (u64::MAX, 0),
        }
    }

    /// PIE's drop probability, or DualPI2's base probability p' (the
    /// Classic queue drops with p'^2, the L4S queue marks with k·p'), as
    /// of the last event or release; None for other disciplines.
    pub fn aqm_probability(&self) -> Option<f64> {
        self.sched.as_ref().and_then(|s| s.probability())
    }

    /// Counters so far.
    pub fn stats(&self) -> &DirectionStats {
        &self.stats
    }

    /// Packets and bytes queued (waiting or in service) at `now_ns`.
    pub fn queue(&self, now_ns: u64) -> QueueState {
        if let Some(s) = &self.sched {
            // As of the last dequeue decision, plus the packet in service.
            let busy = self.link_free_ns > now_ns;
            return QueueState {
                packets: s.pkts() + u64::from(busy),
                bytes: s.bytes() + if busy { self.in_service_bytes } else { 0 },
            };
        }
        // Dequeue times are non-decreasing (FIFO), so those gone by now are
        // a prefix; cumulative byte counts give the bytes behind it.
        let gone = self.queue.partition_point(|&(dq, _)| dq <= now_ns);
        let left_cum = if gone == 0 {
            self.popped_cum
        } else {
            self.queue.get(gone - 1).1
        };
        QueueState {
            packets: (self.queue.len() - gone) as u64,
            bytes: self.cum_bytes - left_cum,
        }
    }

    /// How long a packet offered at `now_ns` would wait in the queue
    /// before its own service starts: the time left to send everything
    /// ahead of it, 0 when nothing is queued. This is what a
    /// `queue_delay_ms` column reports (the wait of the last packet to
    /// leave says nothing about the queue now).
    pub fn queue_delay_ns(&self, now_ns: u64) -> u64 {
        if let Some(s) = &self.sched {
            // What is in service, plus the waiting bytes at today's rate.
            let rest = self.link_free_ns.saturating_sub(now_ns);
            let (rate, _) = self.rate_at(now_ns);
            let wait = s.bytes() as f64 * 8.0 / rate * 1e9;
            return rest + if wait.is_finite() { wait as u64 } else { 0 };
        }
        match self.queue.back() {
            Some(&(dq, _)) if dq > now_ns => dq - now_ns,
            _ => 0,
        }
    }

    /// The rate in bits/s at `t`, and when it next changes.
    // Inlined into the arrival-time path as before the dequeue-time
    // path also called it (a shared out-of-line copy cost the drop-tail
    // bench about 2.5 % more instructions).
    #[inline(always)]
    fn rate_at(&self, t: u64) -> (f64, u64) {
        match &self.cfg.rate {
            RateSchedule::Constant(r) => (*r, u64::MAX),
            RateSchedule::Steps(steps) => {
                let i = steps.partition_point(|s| s.0 <= t).max(1) - 1;
                (steps[i].1, steps.get(i + 1).map_or(u64::MAX, |s| s.0))
            }
            RateSchedule::Square {
                low,
                high,
                period_ns,
            } => {
                let half = period_ns / 2;
                let phase = t % period_ns;
                let start = t - phase;
                if phase < half {
                    (*high, start + half)
                } else {
                    (*low, start + period_ns)
                }
            }
            RateSchedule::Unlimited | RateSchedule::Trace { .. } => (f64::INFINITY, u64::MAX),
        }
    }

    /// When a packet of `bytes` whose service starts at `start` finishes.
    // Inlined for the arrival-time path's speed, as `rate_at`.
    #[inline(always)]
    fn finish_time(&mut self, start: u64, bytes: u64) -> u64 {
        if let RateSchedule::Trace {
            opportunities_ns,
            period_ns,
        } = &self.cfg.rate
        {
            return self
                .trace
                .finish(opportunities_ns, *period_ns, start, bytes);
        }
        if let RateSchedule::Constant(rate) = self.cfg.rate {
            // The loop below's first pass, which returns at once as a
            // constant rate never changes (`rate_at` gives `u64::MAX`).
            if self.tx_memo.0 != bytes {
                let need = ceil(bytes as f64 * 8.0 / rate * 1e9);
                self.tx_memo = (bytes, need as u64);
            }
            return start + self.tx_memo.1;
        }
        let mut t = start;
        let mut bits = bytes as f64 * 8.0;
        // Integrate across rate changes. A square wave's whole periods are
        // skipped in one step, so a short period cannot make one packet
        // cost millions of iterations; steps are finite (config's
        // MAX_STEPS), so the loop ends.
        loop {
            if let RateSchedule::Square {
                low,
                high,
                period_ns,
            } = self.cfg.rate
            {
                let half = period_ns / 2;
                let per_period = (high * half as f64 + low * (period_ns - half) as f64) / 1e9;
                let whole = (bits / per_period).floor();
                let phase = t % period_ns;
                if whole >= 2.0 && (phase == 0 || phase == half) {
                    let skip = (whole - 1.0).max(0.0);
                    bits -= skip * per_period;
                    t = t.saturating_add((skip as u64).saturating_mul(period_ns));
                }
            }
            let (rate, change) = self.rate_at(t);
            let need = ceil(bits / rate * 1e9);
            if change == u64::MAX || (t as f64 + need) <= change as f64 {
                return t + need as u64;
            }
            bits -= (change - t) as f64 * rate / 1e9;
            t = change;
        }
    }

    // Inlined for the arrival-time path's speed, as `rate_at`.
    #[inline(always)]
    fn random_loss(&mut self) -> bool {
        match self.cfg.loss {
            None => false,
            Some(LossConfig::Bernoulli(p)) => p > 0.0 && self.rng.gen::<f64>() < p,
            Some(LossConfig::GilbertElliott {
                p,
                r,
                loss_good,
                loss_bad,
            }) => {
                // Transition first, then lose with the state's probability.
                let u: f64 = self.rng.gen();
                self.ge_bad = if self.ge_bad { u >= r } else { u < p };
                let l = if self.ge_bad { loss_bad } else { loss_good };
                l > 0.0 && self.rng.gen::<f64>() < l
            }
        }
    }

    // Inlined for the arrival-time path's speed, as `rate_at`.
    #[inline(always)]
    fn jitter_ns(&mut self) -> u64 {
        match self.cfg.jitter.map(|j| j.dist) {
            None => 0,
            Some(JitterDist::Normal {
                mean_ns,
                sd_ns,
                floor_ns,
            }) => {
                let v = if sd_ns == 0 {
                    mean_ns as f64
                } else {
                    Normal::new(mean_ns as f64, sd_ns as f64)
                        .map_or(mean_ns as f64, |d| d.sample(&mut self.rng))
                };
                (v.max(floor_ns as f64)).max(0.0) as u64
            }
            Some(JitterDist::Uniform { min_ns, max_ns }) => {
                if max_ns == min_ns {
                    min_ns
                } else {
                    self.rng.gen_range(min_ns..=max_ns)
                }
            }
        }
    }

    /// A packet of `bytes` that is not ECN-capable enters this direction at
    /// `now_ns` (non-decreasing): [`Direction::enqueue_with`] with
    /// [`Ecn::NotEct`].
    #[inline]
    pub fn enqueue(&mut self, now_ns: u64, bytes: u32) -> Verdict {
        self.enqueue_with(now_ns, bytes, Ecn::NotEct)
    }

    /// A packet of `bytes` with ECN field `codepoint` enters this direction
    /// at `now_ns` (non-decreasing). The verdict's `ce` says whether it
    /// leaves CE-marked.
    #[inline]
    pub fn enqueue_with(&mut self, now_ns: u64, bytes: u32, codepoint: Ecn) -> Verdict {
        self.enqueue_flow(now_ns, bytes, codepoint, 0)
    }

    /// A packet of `bytes` with ECN field `codepoint`, of flow `flow` (the
    /// key FQ-CoDel hashes: a flow index or a 5-tuple hash), enters this
    /// direction at `now_ns` (non-decreasing). Only FQ-CoDel looks at
    /// `flow`. With FQ-CoDel, PIE or DualPI2 the verdict may be
    /// [`Verdict::Queued`]: call [`Direction::release_due`] now and at
    /// every [`Direction::next_release_ns`] for its fate.
    ///
    /// Always inlined: left to itself LLVM kept it out of line once it
    /// had two shortcuts, and the simulator's ACKs then paid a call for
    /// `pass_wire`'s few instructions.
    #[inline(always)]
    pub fn enqueue_flow(&mut self, now_ns: u64, bytes: u32, codepoint: Ecn, flow: u64) -> Verdict {
        if self.wire_only {
            return self.pass_wire(now_ns, codepoint);
        }
        if self.drop_tail_only {
            return self.pass_drop_tail(now_ns, bytes, codepoint);
        }
        if self.sched.is_some() {
            return self.enqueue_sched(now_ns, bytes, codepoint, flow);
        }
        self.enqueue_fifo(now_ns, bytes, codepoint)
    }

    /// Whether every [`Direction::enqueue_flow`] here is
    /// [`Direction::enqueue_drop_tail`]: a plain drop-tail queue at a
    /// constant rate (decided at construction, so a caller may decide
    /// once which of the two it calls).
    #[inline(always)]
    pub fn is_drop_tail_only(&self) -> bool {
        self.drop_tail_only
    }

    /// [`Direction::enqueue_flow`] of a direction that
    /// [`Direction::is_drop_tail_only`]: the same verdict, without the
    /// tests of the direction's kind. A caller that knows the kind (the
    /// simulator's single-path data, decided once per packet from the
    /// flag) lets LLVM fold its handling of the verdict into this one
    /// path instead of matching the verdict of four.
    #[inline(always)]
    pub fn enqueue_drop_tail(&mut self, now_ns: u64, bytes: u32, codepoint: Ecn) -> Verdict {
        // A constant rate is never `wire_only` (no rate limit), so
        // `enqueue_flow` takes this same path.
        debug_assert!(self.drop_tail_only && !self.wire_only);
        self.pass_drop_tail(now_ns, bytes, codepoint)
    }

    /// The FIFO's content at `now_ns`, once the packets that have left by
    /// then are forgotten. Shared by the general path and the drop-tail
    /// shortcut, so the two cannot count the queue differently.
    #[inline(always)]
    fn queue_at(&mut self, now_ns: u64) -> QueueState {
        while self.queue.front().is_some_and(|&(dq, _)| dq <= now_ns) {
            let (_, c) = self.queue.pop_front().expect("front exists");
            self.popped_cum = c;
        }
        QueueState {
            packets: self.queue.len() as u64,
            bytes: self.cum_bytes - self.popped_cum,
        }
    }

    /// Whether a packet of `bytes` finds the queue `q` at its limit, in
    /// packets or in bytes.
    #[inline(always)]
    fn overflows(&self, q: &QueueState, bytes: u64) -> bool {
        match self.cfg.queue.limit {
            Size::Packets(n) => q.packets >= n,
            Size::Bytes(b) => q.bytes + bytes > b,
        }
    }

    /// Packet `id`'s verdict when the queue is full, counted.
    #[inline(always)]
    fn drop_queue_full(&mut self, id: u64) -> Verdict {
        self.stats.dropped_queue += 1;
        Verdict::Drop {
            id,
            reason: DropReason::QueueFull,
        }
    }

    /// [`Direction::enqueue_fifo`]'s verdict for a plain drop-tail queue
    /// at a constant rate (`drop_tail_only`), as that path computes it:
    /// no loss or policer to draw or charge, no AQM (so the packet's
    /// codepoint leaves as it came), no jitter (so arrivals keep their
    /// order) and no aggregation. Kept apart from `enqueue_fifo` for the
    /// reason `pass_wire` is, and because every packet of a simulated
    /// bottleneck takes it (one bbr flow at 100 Mbit/s: the bench path).
    /// Always inlined: out of line, its call's prologue and epilogue
    /// were about 10 of its 110 instructions per packet.
    #[inline(always)]
    fn pass_drop_tail(&mut self, now_ns: u64, bytes: u32, codepoint: Ecn) -> Verdict {
        let id = self.next_id;
        self.next_id += 1;
        self.stats.offered += 1;
        let bytes = bytes as u64;
        let q = self.queue_at(now_ns);
        if self.overflows(&q, bytes) {
            return self.drop_queue_full(id);
        }
        let head_ns = now_ns.max(self.link_free_ns);
        // `finish_time`'s remembered constant-rate time, read here when it
        // holds for this size.
        let dq = if self.tx_memo.0 == bytes {
            head_ns + self.tx_memo.1
        } else {
            self.finish_time(head_ns, bytes)
        };
        self.link_free_ns = dq;
        self.cum_bytes += bytes;
        self.queue.push_back((dq, self.cum_bytes));
        self.stats.delivered += 1;
        let arrive = (dq + self.cfg.delay_ns).max(self.last_arrive_ns);
        self.last_arrive_ns = arrive;
        Verdict::Deliver {
            id,
            enqueue_ns: now_ns,
            dequeue_ns: dq,
            arrive_ns: arrive,
            ce: codepoint == Ecn::Ce,
        }
    }

    /// [`Direction::enqueue_fifo`]'s verdict for a direction that is only
    /// a wire (`wire_only`), as that path computes it: no loss or
    /// policer, dequeued on arrival, no AQM (which acts only on a
    /// rate-limited queue), no jitter (so arrivals keep their order) and
    /// no aggregation. Kept out of `enqueue_fifo`, whose prologue and
    /// epilogue alone (about 20 instructions: it saves every register it
    /// uses) cost as much as this whole path.
    #[inline]
    fn pass_wire(&mut self, now_ns: u64, codepoint: Ecn) -> Verdict {
        let id = self.next_id;
        self.next_id += 1;
        self.stats.offered += 1;
        self.stats.delivered += 1;
        let arrive = (now_ns + self.cfg.delay_ns).max(self.last_arrive_ns);
        self.last_arrive_ns = arrive;
        Verdict::Deliver {
            id,
            enqueue_ns: now_ns,
            dequeue_ns: now_ns,
            arrive_ns: arrive,
            ce: codepoint == Ecn::Ce,
        }
    }

    /// Loss and the policer, shared by both paths: Some(drop) if the
    /// packet goes no further.
    #[inline]
    fn pre_queue(&mut self, now_ns: u64, id: u64, bytes: u64) -> Option<Verdict> {
        if self.random_loss() {
            self.stats.dropped_loss += 1;
            return Some(Verdict::Drop {
                id,
                reason: DropReason::RandomLoss,
            });
        }
        if let Some((rate, bucket)) = self.cfg.policer {
            self.tokens = (self.tokens + rate * now_ns.saturating_sub(self.tokens_ns) as f64 / 1e9)
                .min(bucket as f64);
            self.tokens_ns = now_ns;
            if self.tokens < bytes as f64 {
                self.stats.dropped_policer += 1;
                return Some(Verdict::Drop {
                    id,
                    reason: DropReason::Policer,
                });
            }
            self.tokens -= bytes as f64;
        }
        None
    }

    /// The dequeue-time path: the discipline takes the packet (or refuses
    /// it), and the dequeue clock runs up to `now_ns`.
    fn enqueue_sched(&mut self, now_ns: u64, bytes: u32, codepoint: Ecn, flow: u64) -> Verdict {
        let id = self.next_id;
        self.next_id += 1;
        self.stats.offered += 1;
        if let Some(v) = self.pre_queue(now_ns, id, u64::from(bytes)) {
            return v;
        }
        self.advance(now_ns);
        let mut s = self.sched.take().expect("sched path");
        if s.pkts() == 0 {
            // An idle discipline: the next decision is when the link is
            // free, and not before this packet arrives.
            self.link_free_ns = self.link_free_ns.max(now_ns);
        }
        let pkt = Pkt {
            id,
            enq_ns: now_ns,
            bytes,
            ecn: codepoint,
            flow,
            mark: false,
        };
        let res = s.enqueue(
            now_ns,
            pkt,
            self.cfg.queue.limit,
            self.cfg.queue.ecn,
            &mut self.rng,
            &mut self.sched_drops,
        );
        self.sched = Some(s);
        if let Err(reason) = res {
            self.stats.count_drop(reason);
            return Verdict::Drop { id, reason };
        }
        // FQ-CoDel's overflow may have dropped this very packet.
        let own = self.sched_drops.iter().position(|d| d.0.id == id);
        if let Some(i) = own {
            let (_, reason) = self.sched_drops.swap_remove(i);
            self.flush_drops(now_ns);
            self.stats.count_drop(reason);
            return Verdict::Drop { id, reason };
        }
        self.flush_drops(now_ns);
        self.advance(now_ns);
        Verdict::Queued {
            id,
            enqueue_ns: now_ns,
        }
    }

    /// Turns the discipline's drops into releases.
    fn flush_drops(&mut self, t: u64) {
        for (p, reason) in self.sched_drops.drain(..) {
            self.stats.count_drop(reason);
            self.released.push(Release {
                id: p.id,
                arrive_ns: t,
                dequeue_ns: t,
                ce: false,
                drop: Some(reason),
            });
        }
    }

    /// Runs the dequeue clock: every time up to `now_ns` at which the link
    /// is free and the discipline holds packets, the discipline picks one.
    fn advance(&mut self, now_ns: u64) {
        let Some(mut s) = self.sched.take() else {
            return;
        };
        while s.pkts() > 0 && self.link_free_ns <= now_ns {
            let t = self.link_free_ns;
            let got = s.dequeue(t, self.cfg.queue.ecn, &mut self.rng, &mut self.sched_drops);
            self.flush_drops(t);
            let Some(p) = got else { break };
            let dq = self.finish_time(t, u64::from(p.bytes));
            self.link_free_ns = dq;
            self.in_service_bytes = u64::from(p.bytes);
            let ce = p.mark || p.ecn == Ecn::Ce;
            if p.mark && p.ecn != Ecn::Ce {
                self.stats.marked_ce += 1;
            }
            self.depart(p.id, dq, ce);
        }
        s.catch_up(now_ns);
        self.sched = Some(s);
    }

    /// A packet of the dequeue-time path leaves the bottleneck at `dq`:
    /// propagation, jitter and aggregation as on the arrival-time path.
    fn depart(&mut self, id: u64, dq: u64, ce: bool) {
        self.stats.delivered += 1;
        let mut arrive = dq + self.cfg.delay_ns + self.jitter_ns();
        if !self.cfg.jitter.is_some_and(|j| j.reorder) {
            arrive = arrive.max(self.last_arrive_ns);
        }
        self.last_arrive_ns = self.last_arrive_ns.max(arrive);
        let r = Release {
            id,
            arrive_ns: arrive,
            dequeue_ns: dq,
            ce,
            drop: None,
        };
        match self.cfg.aggregation {
            None => self.released.push(r),
            Some(AggregationConfig::Interval(iv)) => self.released.push(Release {
                arrive_ns: arrive.div_ceil(iv) * iv,
                ..r
            }),
            Some(AggregationConfig::Count { every, .. }) => {
                self.held.push_back(r);
                if self.held.len() >= every as usize {
                    self.release_held(arrive);
                }
            }
        }
    }

    /// Releases every held packet together, at the latest of their own
    /// arrivals and `at`.
    fn release_held(&mut self, at: u64) {
        let at = self
            .held
            .iter()
            .map(|h| h.arrive_ns)
            .max()
            .unwrap_or(at)
            .max(at);
        self.released
            .extend(self.held.drain(..).map(|r| Release { arrive_ns: at, ..r }));
    }

    /// The arrival-time path (drop-tail, CoDel, step): the packet's fate
    /// is decided now.
    fn enqueue_fifo(&mut self, now_ns: u64, bytes: u32, codepoint: Ecn) -> Verdict {
        let mut ce = codepoint == Ecn::Ce;
        let id = self.next_id;
        self.next_id += 1;
        self.stats.offered += 1;
        let bytes = bytes as u64;
        if self.random_loss() {
            self.stats.dropped_loss += 1;
            return Verdict::Drop {
                id,
                reason: DropReason::RandomLoss,
            };
        }
        if let Some((rate, bucket)) = self.cfg.policer {
            self.tokens = (self.tokens + rate * now_ns.saturating_sub(self.tokens_ns) as f64 / 1e9)
                .min(bucket as f64);
            self.tokens_ns = now_ns;
            if self.tokens < bytes as f64 {
                self.stats.dropped_policer += 1;
                return Verdict::Drop {
                    id,
                    reason: DropReason::Policer,
                };
            }
            self.tokens -= bytes as f64;
        }
        let dequeue_ns = if self.cfg.rate == RateSchedule::Unlimited {
            now_ns
        } else {
            let q = self.queue_at(now_ns);
            if self.overflows(&q, bytes) {
                return self.drop_queue_full(id);
            }
            let head_ns = now_ns.max(self.link_free_ns);
            // The AQM's decision, made now for the moment the packet reaches
            // the head of the line (FIFO: nothing behind it can change
            // that), on its sojourn until its own service starts.
            let sojourn = head_ns - now_ns;
            let aqm = if let Some(c) = self.codel.as_mut() {
                // The bytes ahead of it (and its own) stand in for the
                // queue at that moment.
                c.should_drop(head_ns, sojourn, bytes, q.bytes + bytes)
                    .then_some(DropReason::Codel)
            } else if let Some(threshold) = self.cfg.queue.step_ns {
                (sojourn > threshold).then_some(DropReason::Step)
            } else {
                None
            };
            if let Some(reason) = aqm {
                if self.cfg.queue.ecn && codepoint.is_ect() {
                    // RFC 3168 §5: mark instead of dropping. CoDel's control
                    // law has advanced exactly as for a drop (RFC 8289 §5);
                    // unlike a dropped packet, a marked one stays queued.
                    if !ce {
                        self.stats.marked_ce += 1;
                        ce = true;
                    }
                } else {
                    match reason {
                        DropReason::Step => self.stats.dropped_step += 1,
                        _ => self.stats.dropped_codel += 1,
                    }
                    return Verdict::Drop { id, reason };
                }
            }
            let dq = self.finish_time(head_ns, bytes);
            self.link_free_ns = dq;
            self.cum_bytes += bytes;
            self.queue.push_back((dq, self.cum_bytes));
            dq
        };
        self.stats.delivered += 1;
        let mut arrive = dequeue_ns + self.cfg.delay_ns + self.jitter_ns();
        if !self.cfg.jitter.is_some_and(|j| j.reorder) {
            arrive = arrive.max(self.last_arrive_ns);
        }
        self.last_arrive_ns = self.last_arrive_ns.max(arrive);
        match self.cfg.aggregation {
            None => Verdict::Deliver {
                id,
                enqueue_ns: now_ns,
                dequeue_ns,
                arrive_ns: arrive,
                ce,
            },
            Some(AggregationConfig::Interval(iv)) => Verdict::Deliver {
                id,
                enqueue_ns: now_ns,
                dequeue_ns,
                arrive_ns: arrive.div_ceil(iv) * iv,
                ce,
            },
            Some(AggregationConfig::Count { every, .. }) => {
                self.held.push_back(Release {
                    id,
                    arrive_ns: arrive,
                    dequeue_ns,
                    ce,
                    drop: None,
                });
                if self.held.len() >= every as usize {
                    self.release_held(arrive);
                }
                Verdict::Held {
                    id,
                    enqueue_ns: now_ns,
                    dequeue_ns,
                    ce,
                }
            }
        }
    }

    /// When `release_due` next has something to do: with count-based
    /// aggregation, when the oldest held packet times out; with a
    /// dequeue-time discipline holding packets, when the link is next free
    /// (the next dequeue decision). The earlier of the two.
    pub fn next_release_ns(&self) -> Option<u64> {
        let hold = self.hold_timeout_ns();
        match &self.sched {
            Some(s) if s.pkts() > 0 => {
                Some(hold.map_or(self.link_free_ns, |h| h.min(self.link_free_ns)))
            }
            _ => hold,
        }
    }

    fn hold_timeout_ns(&self) -> Option<u64> {
        match self.cfg.aggregation {
            Some(AggregationConfig::Count { max_hold_ns, .. }) => {
                self.held.front().map(|h| h.arrive_ns + max_hold_ns)
            }
            _ => None,
        }
    }

    /// Moves released packets into `out`: batches completed by `enqueue`,
    /// held packets whose hold timed out by `now_ns`, and with a
    /// dequeue-time discipline every packet it sent or dropped by `now_ns`
    /// (`now_ns` non-decreasing, as for `enqueue`).
    pub fn release_due(&mut self, now_ns: u64, out: &mut Vec<Release>) {
        if self.sched.is_some() {
            self.advance(now_ns);
        }
        if let Some(t) = self.hold_timeout_ns() {
            if t <= now_ns {
                self.release_held(t);
            }
        }
        out.append(&mut self.released);
    }
}

/// `x.ceil()`, bit for bit, without the libm call `ceil` compiles to on
/// baseline x86-64 (no SSE4.1 `roundsd`): it ran once per packet on every
/// rate-limited link. For `0 < x < 2^52`, `x + 2^52` lies where `f64`s
/// are the integers, so adding and taking away 2^52 rounds `x` to its
/// nearest integer exactly; one more if that fell below `x` is the
/// ceiling. Everything else (zeros, whose sign the sum would lose,
/// negatives, from 2^52 on, NaN, the infinities) is left to `ceil`
/// itself; a packet's transmission time is rarely there.
#[inline(always)]
fn ceil(x: f64) -> f64 {
    const TWO_52: f64 = 4_503_599_627_370_496.0;
    if x > 0.0 && x < TWO_52 {
        let r = (x + TWO_52) - TWO_52;
        if r < x {
            r + 1.0
        } else {
            r
        }
    } else {
        x.ceil()
    }
}

#[cfg(test)]
mod ceil_tests {
    use super::ceil;

    /// The same bits as `f64::ceil` across signs, magnitudes, integers,
    /// halves, values next to integers and the special values.
    #[test]
    fn ceil_is_the_libm_ceiling_bit_for_bit() {
        let mut xs = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            1.5,
            -1.5,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            4_503_599_627_370_495.5,
            -4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            9_007_199_254_740_993.0,
            1e300,
            -1e300,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        let mut v: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..100_000 {
            v = v
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let x = f64::from_bits(v);
            xs.push(x);
            xs.push((v >> 11) as f64 / 1024.0);
            xs.push(-((v >> 20) as f64) / 7.0);
        }
        for &x in &xs {
            let (a, b) = (ceil(x), x.ceil());
            assert!(
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                "{x:e}: {a:e} against {b:e}"
            );
        }
    }
}

#[cfg(test)]
mod shortcut_tests {
    use super::*;
    use crate::config::QueueConfig;

    fn cfg(rate: RateSchedule, loss: Option<LossConfig>) -> ResolvedDirection {
        ResolvedDirection {
            rate,
            delay_ns: 20_000_000,
            queue: QueueConfig::drop_tail(Size::Packets(50)),
            loss,
            jitter: None,
            policer: None,
            aggregation: None,
        }
    }

    /// A few hundred packets of mixed sizes and codepoints, at times that
    /// sometimes repeat and sometimes leave the queue to drain.
    fn offers() -> Vec<(u64, u32, Ecn)> {
        let mut x: u64 = 7;
        let mut now = 0;
        (0..600)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                now += (x >> 40) % 400_000;
                let bytes = [1500, 1500, 1500, 40, 9000, 1][((x >> 20) % 6) as usize];
                let ecn = [Ecn::NotEct, Ecn::Ect0, Ecn::Ce][((x >> 10) % 3) as usize];
                (now, bytes, ecn)
            })
            .collect()
    }

    /// A wire-only direction's shortcut gives the general path's verdicts
    /// (that path taken by clearing the flag), and the flag is set only
    /// when nothing but the delay acts.
    #[test]
    fn a_wire_only_direction_gives_the_general_paths_verdicts() {
        for loss in [None, Some(LossConfig::Bernoulli(0.0))] {
            let c = cfg(RateSchedule::Unlimited, loss);
            let mut fast = Direction::new(&c, 3);
            let mut slow = Direction::new(&c, 3);
            assert!(fast.wire_only);
            slow.wire_only = false;
            for (now, bytes, ecn) in offers() {
                assert_eq!(
                    fast.enqueue_with(now, bytes, ecn),
                    slow.enqueue_with(now, bytes, ecn)
                );
            }
            assert_eq!(fast.stats(), slow.stats());
        }
        let lossy = cfg(RateSchedule::Unlimited, Some(LossConfig::Bernoulli(0.1)));
        assert!(!Direction::new(&lossy, 3).wire_only);
        assert!(!Direction::new(&cfg(RateSchedule::Constant(1e8), None), 3).wire_only);
    }

    /// A plain drop-tail direction's shortcut gives the general path's
    /// verdicts (that path taken by clearing the flag), in packets and in
    /// bytes, with drops; and the flag is set only when nothing but the
    /// rate and the queue's limit act.
    #[test]
    fn a_drop_tail_direction_gives_the_general_paths_verdicts() {
        for limit in [Size::Packets(5), Size::Bytes(20_000)] {
            for loss in [None, Some(LossConfig::Bernoulli(0.0))] {
                let mut c = cfg(RateSchedule::Constant(1e8), loss);
                c.queue = QueueConfig::drop_tail(limit);
                let mut fast = Direction::new(&c, 3);
                let mut slow = Direction::new(&c, 3);
                assert!(fast.drop_tail_only && !fast.wire_only);
                slow.drop_tail_only = false;
                for (now, bytes, ecn) in offers() {
                    assert_eq!(
                        fast.enqueue_with(now, bytes, ecn),
                        slow.enqueue_with(now, bytes, ecn)
                    );
                }
                assert_eq!(fast.stats(), slow.stats());
                assert!(fast.stats().dropped_queue > 0, "{limit:?}");
            }
        }
        let lossy = cfg(
            RateSchedule::Constant(1e8),
            Some(LossConfig::Bernoulli(0.1)),
        );
        assert!(!Direction::new(&lossy, 3).drop_tail_only);
        assert!(!Direction::new(&cfg(RateSchedule::Unlimited, None), 3).drop_tail_only);
        let steps = cfg(RateSchedule::Steps(vec![(0, 1e8)]), None);
        assert!(!Direction::new(&steps, 3).drop_tail_only);
    }

    /// A constant rate's remembered transmission time gives the times of
    /// the general integration, which a one-step schedule of the same rate
    /// takes.
    #[test]
    fn a_constant_rates_remembered_time_matches_the_general_integration() {
        for rate in [1e8, 9.6e3, 1e10, 3.3e7] {
            let mut memo = Direction::new(&cfg(RateSchedule::Constant(rate), None), 5);
            let mut steps = Direction::new(&cfg(RateSchedule::Steps(vec![(0, rate)]), None), 5);
            for (now, bytes, ecn) in offers() {
                assert_eq!(
                    memo.enqueue_with(now, bytes, ecn),
                    steps.enqueue_with(now, bytes, ecn),
                    "{rate} b/s"
                );
            }
        }
    }
}
