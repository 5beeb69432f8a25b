//! How packets and ACKs move through the link directions: onto the wire,
//! through a direction's queue and its verdict, held by ACK aggregation,
//! and into the next hop or the receiver.

use super::*;

impl Sim<'_> {
    pub(super) fn link_mut(&mut self, dir: Dir) -> &mut Direction {
        match dir {
            Dir::Forward => &mut self.fwd,
            Dir::Reverse => &mut self.rev,
            Dir::Seg(k) => &mut self.segs[k as usize].link,
        }
    }

    /// The packets `dir` holds by aggregation and those waiting in its
    /// dequeue-time discipline.
    pub(super) fn waiting_mut(
        &mut self,
        dir: Dir,
    ) -> (&mut VecDeque<(u64, Payload)>, &mut HashMap<u64, Payload>) {
        match dir {
            Dir::Forward => (&mut self.fwd_held, &mut self.queued[0]),
            Dir::Reverse => (&mut self.rev_held, &mut self.queued[1]),
            Dir::Seg(k) => {
                let s = &mut self.segs[k as usize];
                (&mut s.held, &mut s.queued)
            }
        }
    }

    pub(super) fn release_slot(&mut self, dir: Dir) -> &mut Option<u64> {
        match dir {
            Dir::Forward => &mut self.release_at[0],
            Dir::Reverse => &mut self.release_at[1],
            Dir::Seg(k) => &mut self.segs[k as usize].release_at,
        }
    }

    /// When a packet that left `dir`'s queue at `t` reaches its far end:
    /// `t` itself unless the direction has a delay schedule.
    #[inline]
    pub(super) fn wire(&mut self, dir: Dir, t: u64) -> u64 {
        let w = match dir {
            Dir::Forward => &mut self.fwd_wire,
            Dir::Reverse => &mut self.rev_wire,
            Dir::Seg(k) => &mut self.segs[k as usize].wire,
        };
        match w {
            None => t,
            Some(w) => w.arrive_ns(t),
        }
    }

    /// Offers a flow's packet of `wire` bytes to the link at `pos` of its
    /// path: data to its data path (with its own codepoint), an ACK to its
    /// ACK path. ACKs are not ECN-capable (Not-ECT), as TCP's pure ACKs (RFC
    /// 3168 §6.1.4).
    ///
    /// Always inlined: the compiler had left it out of line, and inlined
    /// it takes 1-1.5 % off every simulated run's instructions (the speed
    /// guard, 2026-12-01).
    #[inline(always)]
    pub(super) fn enter(&mut self, wire: u32, payload: Payload) {
        let (flow, pos, ecn) = match payload {
            Payload::Data { flow, pos, ecn, .. } => (flow, pos, ecn),
            Payload::Ack { flow, pos, .. } => (flow, pos, Ecn::NotEct),
            Payload::Cross { .. } => unreachable!("cross traffic enters the first hop itself"),
        };
        let data = matches!(payload, Payload::Data { .. });
        let dir = match (self.single_path, data) {
            (true, true) => Dir::Forward,
            (true, false) => Dir::Reverse,
            (false, true) => self.flows[flow].data_path[pos as usize],
            (false, false) => self.flows[flow].ack_path[pos as usize],
        };
        let (now, key) = (self.now, self.flow_key(flow));
        let verdict = self.link_mut(dir).enqueue_flow(now, wire, ecn, key);
        if self.packet_log.is_some() {
            self.log_verdict(dir, verdict, payload, wire);
        }
        self.route(dir, verdict, payload);
    }

    /// [`Sim::enter`] for a flow's data packet on a single path whose
    /// forward direction [`Direction::is_drop_tail_only`], without a
    /// packet log: the direction is known, and so is the way its queue
    /// decides, so the verdict is handled where it is made. Saves the
    /// direction's lookups, the flow key (drop-tail ignores it) and the
    /// verdict's trip through memory to a jump table in `route`.
    #[inline(always)]
    pub(super) fn enter_drop_tail(&mut self, wire: u32, mut payload: Payload, ecn: Ecn) {
        debug_assert!(
            self.fast_data
                && self.single_path
                && self.fwd.is_drop_tail_only()
                && self.packet_log.is_none()
        );
        debug_assert!(matches!(payload, Payload::Data { pos: 0, .. }));
        match self.fwd.enqueue_drop_tail(self.now, wire, ecn) {
            Verdict::Deliver { arrive_ns, ce, .. } => {
                mark_ce(&mut payload, ce);
                let t = self.wire(Dir::Forward, arrive_ns);
                self.arrive(t, payload)
            }
            verdict => self.route(Dir::Forward, verdict, payload),
        }
    }

    /// [`Sim::enter`] for flow `f`'s ACK (its slot `ack` in `Sim::acks`)
    /// on a single path without a packet log (`fast_acks`): the reverse
    /// direction is known, no log is written, and a delivered ACK goes
    /// straight to its lane, as `route` and `arrive` would put it there
    /// (an ACK is never CE-marked and has no next link on a single path).
    /// Other verdicts take `route`. Saves the path lookups, the log's test
    /// and the verdict's jump table: about 20 instructions per ACK.
    /// `gen` and `extra_rtt_ns` are the slot's, read by the caller with
    /// the rest of it.
    #[inline(always)]
    pub(super) fn enter_ack(&mut self, f: usize, gen: Gen, extra_rtt_ns: u64, ack: u32) {
        debug_assert!(self.fast_acks && self.single_path && self.packet_log.is_none());
        debug_assert!(gen == self.flows[f].gen && extra_rtt_ns == self.flows[f].extra_rtt_ns);
        let (now, key) = (self.now, flows::flow_key_of(f, gen));
        match self.rev.enqueue_flow(now, ACK_BYTES, Ecn::NotEct, key) {
            Verdict::Deliver { arrive_ns, .. } => {
                let t = self.wire(Dir::Reverse, arrive_ns) + extra_rtt_ns;
                let flow = f as u32;
                self.queue
                    .push_lane(LANE_ACK, t, Kind::AckArrival { flow, gen, ack });
            }
            verdict => {
                let payload = Payload::Ack {
                    flow: f,
                    gen,
                    ack,
                    pos: 0,
                };
                self.route(Dir::Reverse, verdict, payload)
            }
        }
    }

    /// A data packet (`payload`, a `Payload::Data`) reaches the link at
    /// its `pos` on its flow's data path, if its slot still holds that
    /// flow. Never inlined (see `Sim::on_cross`).
    #[inline(never)]
    pub(super) fn on_data_hop(&mut self, payload: Payload) {
        let Payload::Data {
            flow,
            gen,
            pn,
            bytes,
            ..
        } = payload
        else {
            unreachable!("a data hop carries data");
        };
        if self.flows[flow].gen == gen {
            let wire = if pn == SYN_PN {
                SYN_BYTES
            } else {
                bytes.saturating_add(self.flows[flow].header_bytes)
            };
            self.enter(wire, payload);
        }
    }

    /// Flow `f`'s ACK (its slot `ack` in `Sim::acks`) reaches the link at
    /// `pos` on the flow's ACK path, if its slot still holds generation
    /// `gen`; otherwise its slot is freed. Never inlined (see
    /// `Sim::on_cross`).
    #[inline(never)]
    pub(super) fn on_ack_hop(&mut self, flow: usize, gen: Gen, pos: u8, ack: u32) {
        if self.flows[flow].gen == gen {
            self.enter(
                ACK_BYTES,
                Payload::Ack {
                    flow,
                    gen,
                    ack,
                    pos,
                },
            );
        } else {
            self.acks.discard(ack);
        }
    }

    /// Delivers, holds or drops a packet according to the link's verdict.
    /// A packet the direction marked (or that arrived marked) travels on
    /// CE: a mark is never undone by a later hop.
    ///
    /// Always inlined, as `arrive` is: every packet and ACK passes both,
    /// and LLVM had left them out of line, each call saving and restoring
    /// registers around a few branches (one `bbr` flow −1.2 % in
    /// instructions for each of the two, the speed guard's path,
    /// 2026-12-04).
    #[inline(always)]
    pub(super) fn route(&mut self, dir: Dir, verdict: Verdict, mut payload: Payload) {
        match verdict {
            Verdict::Deliver { arrive_ns, ce, .. } => {
                mark_ce(&mut payload, ce);
                let t = self.wire(dir, arrive_ns);
                self.arrive(t, payload)
            }
            Verdict::Held { id, ce, .. } => {
                mark_ce(&mut payload, ce);
                self.waiting_mut(dir).0.push_back((id, payload));
                self.drain_releases(dir);
            }
            Verdict::Queued { id, .. } => {
                self.waiting_mut(dir).1.insert(id, payload);
                self.drain_releases(dir);
            }
            Verdict::Drop { .. } => self.count_drop(&payload),
        }
    }

    /// Counts a packet the path dropped against its sender: a data packet
    /// lost on any link of its flow's data path, if the slot still holds
    /// that flow (a generated flow's slot may have been reused), or cross
    /// traffic. Lost ACKs are not a flow's drops; their slots are freed.
    pub(super) fn count_drop(&mut self, payload: &Payload) {
        match *payload {
            Payload::Data { flow, gen, .. } => {
                if self.flows[flow].gen == gen {
                    self.flows[flow].drops += 1;
                }
            }
            Payload::Ack { ack, .. } => self.acks.discard(ack),
            Payload::Cross { src, .. } => self.cross[src].stats.drops += 1,
        }
    }

    /// A packet that left a link at `t`: on to its flow's next link, or
    /// to its receiver (data) or sender (an ACK). Always inlined (see
    /// `route`).
    #[inline(always)]
    pub(super) fn arrive(&mut self, t: u64, payload: Payload) {
        match payload {
            Payload::Data {
                flow,
                gen,
                pn,
                chunk,
                bytes,
                ecn,
                flags,
                pos,
            } => {
                if !self.single_path && pos as usize + 1 < self.flows[flow].data_path.len() {
                    // On to the next link of its path.
                    self.queue.push(
                        t,
                        Kind::DataHop {
                            flow: flow as u32,
                            gen,
                            pos: pos + 1,
                            pn,
                            chunk,
                            bytes,
                            ecn,
                            flags,
                        },
                    );
                    return;
                }
                self.queue.push_lane(
                    LANE_DATA,
                    t,
                    Kind::Data {
                        flow: flow as u32,
                        gen,
                        pn,
                        chunk,
                        bytes,
                        ecn,
                        flags,
                    },
                )
            }
            Payload::Ack {
                flow,
                gen,
                ack,
                pos,
            } => {
                if !self.single_path && pos as usize + 1 < self.flows[flow].ack_path.len() {
                    self.queue.push(
                        t,
                        Kind::AckHop {
                            flow: flow as u32,
                            gen,
                            pos: pos + 1,
                            ack,
                        },
                    );
                    return;
                }
                let t = t + self.flows[flow].extra_rtt_ns;
                // Slots are u32: listed flows are at most 1000 (scenario
                // limits) and generated ones reuse slots.
                let flow = flow as u32;
                self.queue
                    .push_lane(LANE_ACK, t, Kind::AckArrival { flow, gen, ack });
            }
            Payload::Cross { src, bytes } => {
                // Unresponsive: nobody acknowledges it; count what arrives
                // within the run.
                if t < self.cfg.duration_ns {
                    self.cross[src].stats.bytes_delivered += bytes as u64;
                }
            }
        }
    }

    /// Hands on every held packet the link has released, and schedules the
    /// next release timeout.
    pub(super) fn drain_releases(&mut self, dir: Dir) {
        let now = self.now;
        self.releases.clear();
        let (link, held, queued) = match dir {
            Dir::Forward => (&mut self.fwd, &mut self.fwd_held, &mut self.queued[0]),
            Dir::Reverse => (&mut self.rev, &mut self.rev_held, &mut self.queued[1]),
            Dir::Seg(k) => {
                let s = &mut self.segs[k as usize];
                (&mut s.link, &mut s.held, &mut s.queued)
            }
        };
        link.release_due(now, &mut self.releases);
        let next = link.next_release_ns();
        let mut out = std::mem::take(&mut self.released);
        out.clear();
        for r in &self.releases {
            // A dequeue-time discipline's packet, or one held by aggregation.
            let from_queue = if queued.is_empty() {
                None
            } else {
                queued.remove(&r.id)
            };
            let p = match from_queue {
                Some(p) => p,
                None => match held.iter().position(|h| h.0 == r.id) {
                    Some(pos) => held.remove(pos).expect("position is in range").1,
                    None => continue,
                },
            };
            match (r.drop, p) {
                (Some(_), p) => out.push((0, p, true)),
                (None, mut p) => {
                    mark_ce(&mut p, r.ce);
                    out.push((r.arrive_ns, p, false));
                }
            }
        }
        if self.packet_log.is_some() {
            self.log_releases(dir);
        }
        // Neither counting a drop nor `arrive` comes back here, so the
        // scratch can be lent out and returned.
        for &(t, p, dropped) in &out {
            if dropped {
                self.count_drop(&p);
            } else {
                let t = self.wire(dir, t);
                self.arrive(t, p);
            }
        }
        self.released = out;
        if let Some(t) = next {
            let slot = self.release_slot(dir);
            if slot.is_none_or(|s| t < s) {
                *slot = Some(t);
                self.push(t.max(now), Kind::Release(dir));
            }
        }
    }
}
