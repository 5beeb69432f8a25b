//! Dequeue-time disciplines: FQ-CoDel (RFC 8290), PIE (RFC 8033) and
//! DualPI2 (RFC 9332).
//!
//! Unlike drop-tail, CoDel and the step marker, these do not serve packets
//! in arrival order (FQ-CoDel, DualPI2) or decide on state that changes on
//! a clock of its own (PIE's and DualPI2's controllers), so a packet's
//! departure cannot be fixed when it arrives. [`crate::Direction`] keeps
//! them behind its own dequeue clock: whenever the link becomes free it
//! asks the discipline for the next packet at that instant.
//!
//! The controllers' periodic updates (every `tupdate`) run lazily: before
//! any enqueue or dequeue at time t, every update due at or before t runs
//! first, in order, on the queue as it stood then (nothing changed between
//! events). An update and a dequeue at the same instant: the update first.

use crate::codel::Codel;
use crate::config::Discipline;
use crate::drop_reason::DropReason;
use crate::units::Size;
use congestion::Ecn;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// A packet waiting in a discipline.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pkt {
    pub id: u64,
    pub enq_ns: u64,
    pub bytes: u32,
    pub ecn: Ecn,
    pub flow: u64,
    /// The discipline decided to mark it CE.
    pub mark: bool,
}

/// Which of `flows` FQ-CoDel queues the flow key `flow` is hashed into.
///
/// The key is mixed (SplitMix64's finaliser) before the modulo, so
/// consecutive keys spread like the 5-tuple hash a router uses (RFC 8290
/// §4.1.1), with the same chance of collisions; it is deterministic, so a
/// run is still a pure function of its seed.
pub fn fq_codel_bucket(flow: u64, flows: u32) -> u32 {
    let mut z = flow.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z % u64::from(flows.max(1))) as u32
}

/// CoDel for one of FQ-CoDel's queues, run at dequeue: RFC 8289's state
/// ([`crate::codel::Codel`]) and its `dequeue`, which drops (or marks)
/// heads until one may go.
#[derive(Clone, Debug, Default)]
struct CodelQ {
    state: Codel,
}

impl CodelQ {
    /// RFC 8289 §5.4 dodequeue: the head packet, and whether the sojourn
    /// has stayed above target for an interval.
    fn dodequeue(
        &mut self,
        q: &mut VecDeque<Pkt>,
        bytes: &mut u64,
        now: u64,
        target: u64,
        interval: u64,
    ) -> Option<(Pkt, bool)> {
        let Some(p) = q.pop_front() else {
            // An empty queue is below target.
            self.state.sojourn_persists(now, 0, 0, 0, target, interval);
            return None;
        };
        *bytes -= u64::from(p.bytes);
        let sojourn = now - p.enq_ns;
        let ok =
            self.state
                .sojourn_persists(now, sojourn, u64::from(p.bytes), *bytes, target, interval);
        Some((p, ok))
    }

    /// RFC 8289 §5.5 dequeue, with RFC 3168 marking: where it would drop an
    /// ECN-capable packet with `ecn` on, it marks it and sends it instead
    /// (the control law advances as for a drop).
    #[allow(clippy::too_many_arguments)]
    fn dequeue(
        &mut self,
        q: &mut VecDeque<Pkt>,
        bytes: &mut u64,
        now: u64,
        target: u64,
        interval: u64,
        ecn: bool,
        reason: DropReason,
        drops: &mut Vec<(Pkt, DropReason)>,
    ) -> Option<Pkt> {
        let Some((mut p, ok)) = self.dodequeue(q, bytes, now, target, interval) else {
            self.state.dropping = false;
            return None;
        };
        if self.state.dropping {
            if !ok {
                self.state.dropping = false;
            }
            while self.state.dropping && now >= self.state.drop_next_ns {
                self.state.count += 1;
                if ecn && p.ecn.is_ect() {
                    p.mark = true;
                    self.state.drop_next_ns =
                        Codel::control_law(self.state.drop_next_ns, interval, self.state.count);
                    return Some(p);
                }
                drops.push((p, reason));
                match self.dodequeue(q, bytes, now, target, interval) {
                    None => {
                        self.state.dropping = false;
                        return None;
                    }
                    Some((next, ok)) => {
                        p = next;
                        if !ok {
                            self.state.dropping = false;
                        } else {
                            self.state.drop_next_ns = Codel::control_law(
                                self.state.drop_next_ns,
                                interval,
                                self.state.count,
                            );
                        }
                    }
                }
            }
        } else if ok {
            let mark = ecn && p.ecn.is_ect();
            let mut next = None;
            if mark {
                p.mark = true;
            } else {
                drops.push((p, reason));
                next = Some(self.dodequeue(q, bytes, now, target, interval));
            }
            self.state.start_dropping(now, interval);
            if let Some(next) = next {
                return next.map(|(n, _)| n);
            }
        }
        Some(p)
    }
}

/// Which list a flow queue is on (RFC 8290 §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

#[derive(Clone, Debug)]
struct FlowQ {
    q: VecDeque<Pkt>,
    bytes: u64,
    deficit: i64,
    list: List,
    codel: CodelQ,
}

/// FQ-CoDel (RFC 8290).
#[derive(Clone, Debug)]
pub(crate) struct FqCodel {
    flows: Vec<FlowQ>,
    new: VecDeque<u32>,
    old: VecDeque<u32>,
    quantum: i64,
    target: u64,
    interval: u64,
    pkts: u64,
    bytes: u64,
}

impl FqCodel {
    /// RFC 8290 §4.1: classify, enqueue, put a queue that was on no list
    /// at the tail of the new list with a full quantum, and on overflow
    /// drop from the head of the queue with the most bytes.
    fn enqueue(&mut self, p: Pkt, limit: Size, drops: &mut Vec<(Pkt, DropReason)>) {
        let n = self.flows.len() as u32;
        let i = fq_codel_bucket(p.flow, n);
        let f = &mut self.flows[i as usize];
        f.q.push_back(p);
        f.bytes += u64::from(p.bytes);
        if f.list == List::None {
            f.list = List::New;
            f.deficit = self.quantum;
            self.new.push_back(i);
        }
        self.pkts += 1;
        self.bytes += u64::from(p.bytes);
        while match limit {
            Size::Packets(l) => self.pkts > l,
            Size::Bytes(l) => self.bytes > l,
        } {
            // The fattest queue (first of equals, so the choice is stable).
            let mut fat = 0;
            for (j, f) in self.flows.iter().enumerate() {
                if f.bytes > self.flows[fat].bytes {
                    fat = j;
                }
            }
            let f = &mut self.flows[fat];
            let Some(d) = f.q.pop_front() else { break };
            f.bytes -= u64::from(d.bytes);
            self.pkts -= 1;
            self.bytes -= u64::from(d.bytes);
            drops.push((d, DropReason::QueueFull));
        }
    }

    /// RFC 8290 §4.2: new flows first, then old ones, by deficit round
    /// robin; each queue's CoDel decides at its head.
    fn dequeue(&mut self, now: u64, ecn: bool, drops: &mut Vec<(Pkt, DropReason)>) -> Option<Pkt> {
        loop {
            let (i, from_new) = if let Some(&i) = self.new.front() {
                (i, true)
            } else if let Some(&i) = self.old.front() {
                (i, false)
            } else {
                return None;
            };
            let f = &mut self.flows[i as usize];
            if f.deficit <= 0 {
                // Out of credit: a new quantum, and to the back of the old list.
                f.deficit += self.quantum;
                f.list = List::Old;
                if from_new {
                    self.new.pop_front();
                } else {
                    self.old.pop_front();
                }
                self.old.push_back(i);
                continue;
            }
            let (len0, bytes0) = (f.q.len(), f.bytes);
            let got = f.codel.dequeue(
                &mut f.q,
                &mut f.bytes,
                now,
                self.target,
                self.interval,
                ecn,
                DropReason::FqCodel,
                drops,
            );
            self.pkts -= (len0 - f.q.len()) as u64;
            self.bytes -= bytes0 - f.bytes;
            if let Some(p) = got {
                f.deficit -= i64::from(p.bytes);
                return Some(p);
            }
            // Empty: a new queue goes to the old list (so a flow cannot
            // stay "new" by emptying its queue each round); an old one leaves.
            if from_new {
                self.new.pop_front();
                f.list = List::Old;
                self.old.push_back(i);
            } else {
                self.old.pop_front();
                f.list = List::None;
            }
        }
    }
}

/// RFC 8033 §4.1's MEAN_PKTSIZE: below two of these queued, PIE never
/// drops early.
const PIE_MEAN_PKTSIZE: u64 = 1500;

/// PIE (RFC 8033). Its latency estimate is the timestamp one RFC 8033
/// §4.3 allows in place of the departure-rate estimate: the sojourn of the
/// packet last dequeued, 0 once the queue is empty (as Linux's sch_pie
/// does without its rate estimator).
#[derive(Clone, Debug)]
pub(crate) struct Pie {
    q: VecDeque<Pkt>,
    bytes: u64,
    target_s: f64,
    tupdate_ns: u64,
    alpha: f64,
    beta: f64,
    max_burst_ns: u64,
    drop_prob: f64,
    qdelay_old_s: f64,
    burst_allowance_ns: u64,
    qdelay_ns: u64,
    next_update_ns: u64,
}

impl Pie {
    /// RFC 8033 §4.2 calculate_drop_prob, with §5.1's auto-tuning of the
    /// adjustment by the size of drop_prob, the 2 % cap on steps above
    /// 10 %, the 0.98 decay once the queue is idle, and §4.4's burst
    /// allowance.
    fn update(&mut self) {
        let cur = self.qdelay_ns as f64 / 1e9;
        let mut p = self.alpha * (cur - self.target_s) + self.beta * (cur - self.qdelay_old_s);
        let dp = self.drop_prob;
        p /= if dp < 0.000_001 {
            2048.0
        } else if dp < 0.000_01 {
            512.0
        } else if dp < 0.000_1 {
            128.0
        } else if dp < 0.001 {
            32.0
        } else if dp < 0.01 {
            8.0
        } else if dp < 0.1 {
            2.0
        } else {
            1.0
        };
        if dp >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        self.drop_prob += p;
        if cur == 0.0 && self.qdelay_old_s == 0.0 {
            self.drop_prob *= 0.98;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        self.burst_allowance_ns = self.burst_allowance_ns.saturating_sub(self.tupdate_ns);
        if self.drop_prob == 0.0
            && cur < self.target_s / 2.0
            && self.qdelay_old_s < self.target_s / 2.0
        {
            self.burst_allowance_ns = self.max_burst_ns;
        }
        self.qdelay_old_s = cur;
    }

    fn catch_up(&mut self, now: u64) {
        // Idle at its fixed point: every update would leave it unchanged.
        if self.next_update_ns <= now
            && self.q.is_empty()
            && self.qdelay_ns == 0
            && self.qdelay_old_s == 0.0
            && self.drop_prob == 0.0
            && self.burst_allowance_ns == self.max_burst_ns
        {
            let skip = (now - self.next_update_ns) / self.tupdate_ns;
            self.next_update_ns += skip * self.tupdate_ns;
        }
        while self.next_update_ns <= now {
            self.update();
            self.next_update_ns += self.tupdate_ns;
        }
    }

    /// RFC 8033 §4.1 drop_early and enqueue: no early drop while the
    /// burst allowance lasts, while the delay is low and the probability
    /// small, or with fewer than two packets queued; ECN-capable packets
    /// are marked instead while drop_prob is at most 10 % (§5.1).
    fn enqueue(&mut self, mut p: Pkt, ecn: bool, rng: &mut ChaCha8Rng) -> Result<Pkt, DropReason> {
        let early = self.burst_allowance_ns == 0
            && !(self.qdelay_old_s < self.target_s / 2.0 && self.drop_prob < 0.2)
            && self.bytes > 2 * PIE_MEAN_PKTSIZE
            && rng.gen::<f64>() < self.drop_prob;
        if early {
            if ecn && p.ecn.is_ect() && self.drop_prob <= 0.1 {
                p.mark = true;
            } else {
                return Err(DropReason::Pie);
            }
        }
        self.bytes += u64::from(p.bytes);
        self.q.push_back(p);
        Ok(p)
    }

    fn dequeue(&mut self, now: u64) -> Option<Pkt> {
        let p = self.q.pop_front()?;
        self.bytes -= u64::from(p.bytes);
        self.qdelay_ns = if self.q.is_empty() { 0 } else { now - p.enq_ns };
        Some(p)
    }
}

/// DualPI2's time shift (RFC 9332 Appendix A.1, `tshift`): the Classic
/// head is served first only once it has waited this much longer than the
/// L4S head.
const DUALPI2_TSHIFT_NS: u64 = 50_000_000;

/// The least MTU in DualPI2's shallow-queue test (Linux's `psched_mtu()`
/// on a 1500-byte link). The simulator's links have no MTU of their own:
/// the test takes this or the largest packet seen, whichever is larger,
/// as a jumbo-frame device's MTU would be (CoDel learns its maxpacket the
/// same way).
const DUALPI2_MIN_MTU: u64 = 1500;

/// DualPI2 (RFC 9332 Appendix A).
#[derive(Clone, Debug)]
pub(crate) struct DualPi2 {
    l: VecDeque<Pkt>,
    c: VecDeque<Pkt>,
    bytes: u64,
    target_s: f64,
    tupdate_ns: u64,
    alpha: f64,
    beta: f64,
    k: f64,
    step_ns: u64,
    /// p', the PI2 controller's base probability.
    p_base: f64,
    prevq_s: f64,
    next_update_ns: u64,
    /// recur()'s accumulator for the coupled L4S marking.
    recur: f64,
    /// The MTU of the shallow-queue test: [`DUALPI2_MIN_MTU`] or the
    /// largest packet offered, if larger.
    mtu: u64,
    /// On overload, drop L4S packets at p'² (Linux's default,
    /// `drop_on_overload`) rather than mark them all (`overflow`).
    drop_on_overload: bool,
}

impl DualPi2 {
    /// RFC 9332 A.1 dualpi2_update: p' += alpha (curq - target) +
    /// beta (curq - prevq), on the Classic queue's head sojourn.
    fn catch_up(&mut self, now: u64) {
        if self.next_update_ns <= now
            && self.c.is_empty()
            && self.p_base == 0.0
            && self.prevq_s == 0.0
        {
            let skip = (now - self.next_update_ns) / self.tupdate_ns;
            self.next_update_ns += skip * self.tupdate_ns;
        }
        while self.next_update_ns <= now {
            let t = self.next_update_ns;
            let curq = self.c.front().map_or(0.0, |p| (t - p.enq_ns) as f64 / 1e9);
            self.p_base += self.alpha * (curq - self.target_s) + self.beta * (curq - self.prevq_s);
            self.p_base = self.p_base.clamp(0.0, 1.0);
            self.prevq_s = curq;
            self.next_update_ns += self.tupdate_ns;
        }
    }

    /// Fewer than two MTUs queued (the packet being dequeued not
    /// counted): no AQM drop or coupled mark (see `dequeue`).
    fn shallow(&self) -> bool {
        self.bytes < 2 * self.mtu
    }

    /// Overload: the coupled L4S probability k·p' above 1 (Linux's
    /// `dualpi2_is_overloaded()`).
    fn overloaded(&self) -> bool {
        self.k * self.p_base > 1.0
    }

    /// The Classic drop or mark at p_C = p'², as two independent draws
    /// each below p' (RFC 9332 A.1; Linux's `dualpi2_squared_roll()`).
    fn classic_hit(&self, rng: &mut ChaCha8Rng) -> bool {
        self.p_base > rng.gen::<f64>() && self.p_base > rng.gen::<f64>()
    }

    /// RFC 9332 A.1 recur(): deterministic marking at `likelihood`.
    fn recur(&mut self, likelihood: f64) -> bool {
        self.recur += likelihood;
        if self.recur > 1.0 {
            self.recur -= 1.0;
            true
        } else {
            false
        }
    }

    /// RFC 9332 §2.5.1.1 classifier: ECT(1) and CE go to the L4S queue.
    fn enqueue(&mut self, p: Pkt) {
        self.bytes += u64::from(p.bytes);
        self.mtu = self.mtu.max(u64::from(p.bytes));
        if matches!(p.ecn, Ecn::Ect1 | Ecn::Ce) {
            self.l.push_back(p);
        } else {
            self.c.push_back(p);
        }
    }

    /// RFC 9332 A.1 dualpi2_dequeue with the time-shifted FIFO scheduler:
    /// L4S packets are marked at max(native step, coupled k·p'); Classic
    /// ones are marked (ECN-capable, with `ecn`) or dropped with p'^2,
    /// as two independent draws each below p'.
    ///
    /// Neither the coupled mark nor the Classic drop or mark is applied
    /// while less than two MTUs stay queued behind the packet, as Linux's
    /// `sch_dualpi2` does (`must_drop()`, after `dequeue_packet()` has
    /// taken the packet's bytes off the backlog; RED's min_th in spirit):
    /// without it, p' (which falls by α·target per update once the queue
    /// is empty: 0.0024 every 16 ms at RFC 9332's defaults, about 7 s
    /// from 1 to 0) goes on dropping from a queue of a packet or two for
    /// seconds after a delay spike, and a flow that backs off (BBRv3 cuts
    /// inflight_lo on each lossy round) is held far below the link. The
    /// native step mark is not gated, as Linux's `do_step_aqm()` is not
    /// (its `min_qlen_step` defaults to 0).
    ///
    /// Overload (RFC 9332 §4.2.3, Linux's `must_drop()`): once k·p'
    /// exceeds 1 the L4S queue can no longer be held by marking alone
    /// (unresponsive or too many flows), so ECN stops sparing Classic
    /// packets, which are dropped at p'², and L4S packets are dropped at
    /// p'² too and every one not dropped is marked; with `overload =
    /// "overflow"` they are all marked and none dropped, and the L4S
    /// queue grows to the limit instead.
    fn dequeue(
        &mut self,
        now: u64,
        ecn: bool,
        rng: &mut ChaCha8Rng,
        drops: &mut Vec<(Pkt, DropReason)>,
    ) -> Option<Pkt> {
        loop {
            let serve_l = match (self.l.front(), self.c.front()) {
                (None, None) => return None,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some(l), Some(c)) => l.enq_ns <= c.enq_ns + DUALPI2_TSHIFT_NS,
            };
            if serve_l {
                let mut p = self.l.pop_front().expect("L4S head exists");
                self.bytes -= u64::from(p.bytes);
                if !self.shallow() && self.overloaded() {
                    if self.drop_on_overload && self.classic_hit(rng) {
                        drops.push((p, DropReason::DualPi2));
                        continue;
                    }
                    p.mark = true;
                    return Some(p);
                }
                let native = now - p.enq_ns >= self.step_ns;
                let p_cl = (self.k * self.p_base).min(1.0);
                // p_L = max(p_native, p_CL): the step is 0 or 1.
                p.mark = native || (!self.shallow() && self.recur(p_cl));
                return Some(p);
            }
            let mut p = self.c.pop_front().expect("Classic head exists");
            self.bytes -= u64::from(p.bytes);
            if !self.shallow() && self.classic_hit(rng) {
                if ecn && p.ecn.is_ect() && !self.overloaded() {
                    p.mark = true;
                } else {
                    drops.push((p, DropReason::DualPi2));
                    continue;
                }
            }
            return Some(p);
        }
    }
}

/// One of the dequeue-time disciplines.
#[derive(Clone, Debug)]
pub(crate) enum Sched {
    FqCodel(FqCodel),
    Pie(Pie),
    DualPi2(DualPi2),
}

impl Sched {
    pub fn new(d: &Discipline) -> Sched {
        match *d {
            Discipline::FqCodel {
                target_ns,
                interval_ns,
                flows,
                quantum,
            } => Sched::FqCodel(FqCodel {
                flows: vec![
                    FlowQ {
                        q: VecDeque::new(),
                        bytes: 0,
                        deficit: 0,
                        list: List::None,
                        codel: CodelQ::default(),
                    };
                    flows as usize
                ],
                new: VecDeque::new(),
                old: VecDeque::new(),
                quantum: i64::from(quantum),
                target: target_ns,
                interval: interval_ns,
                pkts: 0,
                bytes: 0,
            }),
            Discipline::Pie {
                target_ns,
                tupdate_ns,
                alpha,
                beta,
                max_burst_ns,
            } => Sched::Pie(Pie {
                q: VecDeque::new(),
                bytes: 0,
                target_s: target_ns as f64 / 1e9,
                tupdate_ns,
                alpha,
                beta,
                max_burst_ns,
                drop_prob: 0.0,
                qdelay_old_s: 0.0,
                burst_allowance_ns: max_burst_ns,
                qdelay_ns: 0,
                next_update_ns: tupdate_ns,
            }),
            Discipline::DualPi2 {
                target_ns,
                tupdate_ns,
                alpha,
                beta,
                coupling,
                l4s_threshold_ns,
                drop_on_overload,
            } => Sched::DualPi2(DualPi2 {
                l: VecDeque::new(),
                c: VecDeque::new(),
                bytes: 0,
                target_s: target_ns as f64 / 1e9,
                tupdate_ns,
                alpha,
                beta,
                k: coupling,
                step_ns: l4s_threshold_ns,
                p_base: 0.0,
                prevq_s: 0.0,
                next_update_ns: tupdate_ns,
                recur: 0.0,
                mtu: DUALPI2_MIN_MTU,
                drop_on_overload,
            }),
        }
    }

    /// Packets waiting (not counting the one in service).
    pub fn pkts(&self) -> u64 {
        match self {
            Sched::FqCodel(s) => s.pkts,
            Sched::Pie(s) => s.q.len() as u64,
            Sched::DualPi2(s) => (s.l.len() + s.c.len()) as u64,
        }
    }

    /// Their bytes.
    pub fn bytes(&self) -> u64 {
        match self {
            Sched::FqCodel(s) => s.bytes,
            Sched::Pie(s) => s.bytes,
            Sched::DualPi2(s) => s.bytes,
        }
    }

    /// Runs the controller updates due by `now`.
    pub fn catch_up(&mut self, now: u64) {
        match self {
            Sched::FqCodel(_) => {}
            Sched::Pie(s) => s.catch_up(now),
            Sched::DualPi2(s) => s.catch_up(now),
        }
    }

    /// PIE's drop_prob or DualPI2's base probability p'.
    pub fn probability(&self) -> Option<f64> {
        match self {
            Sched::FqCodel(_) => None,
            Sched::Pie(s) => Some(s.drop_prob),
            Sched::DualPi2(s) => Some(s.p_base),
        }
    }

    /// Offers `p` at `now`. A full PIE or DualPI2 queue refuses it
    /// (`QueueFull`), as does PIE's early drop (`Pie`); FQ-CoDel always
    /// takes it and on overflow drops from its fattest queue into `drops`
    /// (possibly `p` itself).
    pub fn enqueue(
        &mut self,
        now: u64,
        p: Pkt,
        limit: Size,
        ecn: bool,
        rng: &mut ChaCha8Rng,
        drops: &mut Vec<(Pkt, DropReason)>,
    ) -> Result<(), DropReason> {
        self.catch_up(now);
        let full = match limit {
            Size::Packets(n) => self.pkts() >= n,
            Size::Bytes(b) => self.bytes() + u64::from(p.bytes) > b,
        };
        match self {
            Sched::FqCodel(s) => {
                s.enqueue(p, limit, drops);
                Ok(())
            }
            Sched::Pie(s) => {
                if full {
                    return Err(DropReason::QueueFull);
                }
                s.enqueue(p, ecn, rng).map(|_| ())
            }
            Sched::DualPi2(s) => {
                if full {
                    return Err(DropReason::QueueFull);
                }
                s.enqueue(p);
                Ok(())
            }
        }
    }

    /// The packet to send when the link becomes free at `now`, if any;
    /// packets the discipline drops on the way go into `drops`.
    pub fn dequeue(
        &mut self,
        now: u64,
        ecn: bool,
        rng: &mut ChaCha8Rng,
        drops: &mut Vec<(Pkt, DropReason)>,
    ) -> Option<Pkt> {
        self.catch_up(now);
        match self {
            Sched::FqCodel(s) => s.dequeue(now, ecn, drops),
            Sched::Pie(s) => s.dequeue(now),
            Sched::DualPi2(s) => s.dequeue(now, ecn, rng, drops),
        }
    }
}
