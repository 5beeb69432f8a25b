//! The flows: their timers and sends, arrivals of generated flows and
//! cross traffic, data reaching receivers and ACKs going back, and a
//! finished flow's slot freed for reuse.

use super::*;

impl Sim<'_> {
    /// Hands finished flows' records to the recorder.
    pub(super) fn flush_completed(&mut self, rec: &mut dyn Recorder) -> io::Result<()> {
        for r in self.completed.drain(..) {
            rec.flow_completed(&r)?;
        }
        Ok(())
    }

    /// Records a finite flow's completion once its sender knows every byte
    /// arrived (the last ACK is in: FCT as pFabric and HPCC measure it, so
    /// the ideal is one RTT plus the transfer at the bottleneck's rate),
    /// and frees a generated flow's slot for reuse.
    pub(super) fn check_complete(&mut self, f: usize) {
        let fl = &self.flows[f];
        if fl.fct_done || !fl.sender.is_done() {
            return;
        }
        let size = fl.size_bytes.unwrap_or(0);
        let rtt = self.path_rtt_ns + fl.extra_rtt_ns;
        // A flow that opens with a SYN exchange spends one more round trip
        // before its data; its completion time counts it, so the ideal
        // does too (a slowdown of 1 stays the best a flow can do).
        let opening = if fl.opened.is_some() { rtt } else { 0 };
        let transfer = if self.bottleneck_bps.is_finite() && self.bottleneck_bps > 0.0 {
            (size as f64 * 8.0 * 1e9 / self.bottleneck_bps).round() as u64
        } else {
            0
        };
        let (name, algorithm) = match fl.generated {
            Some((a, k)) => {
                let arr = &self.work.arrivals[a as usize];
                (format!("{}#{k}", arr.name), algorithm_name(&arr.template))
            }
            None => (
                self.cfg.flows[f].name.clone(),
                algorithm_name(&self.cfg.flows[f]),
            ),
        };
        let r = FctRecord {
            name,
            algorithm,
            size_bytes: size,
            start_ns: fl.start_ns,
            end_ns: self.now,
            ideal_ns: rtt + opening + transfer,
        };
        self.fct.record(&r);
        self.completed.push(r);
        let fl = &mut self.flows[f];
        fl.fct_done = true;
        if fl.generated.is_some() {
            // Every event still queued for this slot now carries a stale
            // generation and is ignored.
            fl.gen = fl.gen.wrapping_add(1);
            self.free.push(f);
            self.live -= 1;
        }
    }

    /// Starts arrival process `a`'s next flow and schedules the one after.
    ///
    /// Never inlined, as the handshake's steps (`open`, `answer_syn`,
    /// `on_syn_ack`) are: once per flow, not per packet, and inlined into
    /// the event loop their code took registers from the per-packet path.
    /// The four out of line: cubic's bench path 307.0 M -> 302.8 M
    /// instructions, bbr's 303.8 M -> 300.2 M (Callgrind, 2026-12-06).
    #[inline(never)]
    pub(super) fn on_arrival(&mut self, a: usize) {
        let arr = &self.work.arrivals[a];
        let st = &mut self.arrivals[a];
        let size = arr.size.sample(&mut st.rng);
        let k = st.next_k;
        st.next_k += 1;
        let next = self.now.saturating_add(st.next_gap_ns(arr.process));
        let mut sc = st.sender.clone();
        sc.start_ns = self.now;
        sc.stop_ns = None;
        sc.size_bytes = Some(size);
        let mut flow = Flow::new(
            &sc,
            arr.template.ack,
            sub_seed(st.seed, k),
            arr.template.extra_rtt_ns,
            arr.template.header_bytes,
            (st.data_path.clone(), vec![Dir::Reverse]),
            arr.template.handshake,
        );
        flow.generated = Some((a as u32, k));
        if next < arr.stop_ns.unwrap_or(u64::MAX) {
            self.push(next, Kind::Arrival(a as u32));
        }
        let slot = match self.free.pop() {
            Some(s) => {
                flow.gen = self.flows[s].gen;
                self.flows[s] = flow;
                s
            }
            None => {
                self.flows.push(flow);
                self.flows.len() - 1
            }
        };
        self.live += 1;
        self.peak_live = self.peak_live.max(self.live);
        self.fct.started += 1;
        let now = self.now;
        self.schedule_wake(slot, now);
    }

    /// Sends cross-traffic source `c`'s next packet, or switches it on.
    ///
    /// Never inlined, as the other handlers of events a flow's data and
    /// ACKs do not make (`on_delayed_ack_event`, `sample`, the hops'
    /// `on_data_hop` and `on_ack_hop`): inlined into the event loop,
    /// their code took registers from the per-packet path (the five out
    /// of line: cubic's bench path 302.8 M -> 300.7 M instructions, bbr's
    /// 300.2 M -> 297.7 M, Callgrind, 2026-12-06). A path of several
    /// hops pays a call per hop.
    #[inline(never)]
    pub(super) fn on_cross(&mut self, c: usize) {
        let x = &self.work.cross[c];
        let st = &mut self.cross[c];
        let interval = x.interval_ns();
        if self.now >= st.on_until_ns {
            // An on period ended: stay off, then start the next one.
            let CrossKind::OnOff {
                on_ns,
                off_ns,
                periods,
            } = x.kind
            else {
                unreachable!("only on-off sources end periods");
            };
            let on_at = st
                .on_until_ns
                .saturating_add(period(&mut st.rng, off_ns, periods));
            st.period_start_ns = on_at;
            st.period_packets = 0;
            st.on_until_ns = on_at.saturating_add(period(&mut st.rng, on_ns, periods));
            if x.stop_ns.is_none_or(|s| on_at < s) {
                self.push(on_at, Kind::Cross(c as u32));
            }
            return;
        }
        st.period_packets += 1;
        st.stats.packets_sent += 1;
        st.stats.bytes_sent += x.packet_bytes as u64;
        // From the period's start, not the last packet, so rounding never
        // accumulates into a rate error.
        let next = st.period_start_ns + (st.period_packets as f64 * interval).round() as u64;
        let next = next.min(st.on_until_ns);
        if x.stop_ns.is_none_or(|s| next < s) {
            self.push(next, Kind::Cross(c as u32));
        }
        let bytes = x.packet_bytes;
        // Each cross source is a flow of its own to a flow-queueing
        // discipline, apart from every sender's key (see `flow_key`).
        let key = CROSS_KEY_BASE + c as u64;
        let verdict = self.fwd.enqueue_flow(self.now, bytes, Ecn::NotEct, key);
        let payload = Payload::Cross { src: c, bytes };
        if self.packet_log.is_some() {
            self.log_verdict(Dir::Forward, verdict, payload, bytes);
        }
        self.route(Dir::Forward, verdict, payload);
    }

    /// Always inlined: called after nearly every send, and out of line its
    /// call cost more than its test (one `bbr` flow −0.8 % in
    /// instructions, the speed guard's path, 2026-12-04). The flow is
    /// looked up once: each `self.flows[f]` is a bounds check and a
    /// multiply by the slot's size.
    #[inline(always)]
    pub(super) fn schedule_wake(&mut self, f: usize, t: u64) {
        let fl = &mut self.flows[f];
        if fl.wake_at.is_some_and(|w| w <= t) {
            return;
        }
        fl.wake_at = Some(t);
        let gen = fl.gen;
        self.queue
            .push_lane(LANE_WAKE, t, Kind::Wake(f as u32, gen));
    }

    pub(super) fn arm_timer(&mut self, f: usize) {
        // A timer already armed no later than every candidate deadline
        // stays as it is (the test below would return), and the sender
        // tells that from the deadlines' floors without computing the
        // RTO: the common case after a send or an ACK.
        let fl = &self.flows[f];
        if let Some(t) = fl.timer_at {
            if fl.sender.timer_deadline_not_before(Instant::from_nanos(t)) {
                return;
            }
        }
        self.rearm_timer(f);
    }

    /// [`Sim::arm_timer`] when the timer armed may not serve: the sender's
    /// deadline is computed, and a timer queued for it if none is armed
    /// no later. Never inlined: rare after a send or an ACK, and its code
    /// inlined into `kick` took registers from the send loop. With the
    /// heap's push out of line too: cubic's bench path 300.7 M -> 299.8 M
    /// instructions, bbr's 297.7 M -> 296.6 M (Callgrind, 2026-12-06).
    #[inline(never)]
    fn rearm_timer(&mut self, f: usize) {
        let Some(d) = self.flows[f].sender.timer_deadline() else {
            return;
        };
        let d = d.as_nanos().max(self.now);
        if self.flows[f].timer_at.is_some_and(|t| t <= d) {
            return;
        }
        self.flows[f].timer_at = Some(d);
        let gen = self.flows[f].gen;
        self.push(d, Kind::Timer(f as u32, gen));
    }

    /// Sends whatever the flow may send now, then arranges to be woken.
    pub(super) fn kick(&mut self, f: usize) {
        if self.now < self.flows[f].start_ns {
            return;
        }
        if let Some(opening) = self.flows[f].opening {
            self.open(f, opening);
            return;
        }
        let now = Instant::from_nanos(self.now);
        // Between two paced sends (an ACK's kick) the sender often knows,
        // for less than a `poll`, that `poll` would only ask to be woken
        // no earlier than the wake-up already queued: the loop below
        // would then do nothing (`schedule_wake` keeps the earlier one).
        let fl = &self.flows[f];
        let woken_in_time = fl.wake_at.is_some_and(|w| {
            fl.sender
                .paced_until(now)
                .is_some_and(|t| w <= t.as_nanos())
        });
        if !woken_in_time {
            loop {
                match self.flows[f].sender.poll(now) {
                    SendDecision::Send {
                        chunk,
                        bytes,
                        retransmission,
                    } => {
                        self.transmit(f, chunk, bytes, retransmission);
                        // After a send, the sender often knows the next
                        // decision without a `poll`: the pacer holding the
                        // next packet, or the window full.
                        match self.flows[f].sender.poll_settled(now) {
                            Some(SendDecision::PaceUntil(t)) => {
                                self.schedule_wake(f, t.as_nanos());
                                break;
                            }
                            Some(_) => break,
                            None => {}
                        }
                    }
                    SendDecision::PaceUntil(t) | SendDecision::NoData(Some(t)) => {
                        self.schedule_wake(f, t.as_nanos());
                        break;
                    }
                    SendDecision::CwndLimited
                    | SendDecision::FlowBlocked
                    | SendDecision::NoData(None) => break,
                }
            }
        }
        // A segment-size change re-cut a finite flow: its receiver's
        // completion test counts the new chunks.
        let fl = &mut self.flows[f];
        if let Some(total) = fl.sender.take_new_total_chunks() {
            fl.receiver.total_chunks = Some(total);
        }
        self.arm_timer(f);
    }

    /// Records the send `poll` decided and puts the packet on the link.
    ///
    /// Never inlined: inlined into `kick`'s send loop, its link and event
    /// queue addresses were computed before the loop and kept on the
    /// stack, about 23 instructions on every `kick` (one per ACK and one
    /// per pacing wake-up, which send 0.9 packets on average), more than
    /// a call per packet costs. Out of line: cubic's bench path 308.3 M -> 307.5 M
    /// instructions, bbr's 305.2 M -> 304.7 M (Callgrind, 2026-12-06).
    fn transmit(&mut self, f: usize, chunk: u64, bytes: u32, retransmission: bool) {
        let now = Instant::from_nanos(self.now);
        let fl = &mut self.flows[f];
        let sent = fl.sender.on_sent_ecn(now, chunk, bytes, retransmission);
        // The link carries the headers; the receiver counts only the
        // payload (`bytes`, which travels on).
        let wire = bytes.saturating_add(fl.header_bytes);
        let gen = fl.gen;
        self.packets += 1;
        let payload = Payload::Data {
            flow: f,
            gen,
            pn: sent.pn,
            chunk,
            bytes,
            ecn: sent.ecn,
            flags: sent.tcp_flags(),
            pos: 0,
        };
        if self.fast_data {
            self.enter_drop_tail(wire, payload, sent.ecn);
        } else {
            self.enter(wire, payload);
        }
    }

    /// A flow whose handshake is under way: sends its SYN at the start,
    /// and again each time the timeout passes without a SYN-ACK (a lost
    /// SYN or SYN-ACK), the timeout doubling. The SYN carries its send
    /// time in `chunk`, and the SYN-ACK echoes it, as TCP's timestamp
    /// option lets Linux measure the exchange of a SYN sent again.
    #[cold]
    #[inline(never)]
    fn open(&mut self, f: usize, opening: Opening) {
        let due = opening
            .syn_sent_at
            .map_or(self.now, |t| t.saturating_add(opening.timeout_ns));
        if self.now < due {
            return self.schedule_wake(f, due);
        }
        let timeout_ns = if opening.syn_sent_at.is_some() {
            opening.timeout_ns.saturating_mul(2).min(sender::MAX_RTO_NS)
        } else {
            opening.timeout_ns
        };
        self.flows[f].opening = Some(Opening {
            syn_sent_at: Some(self.now),
            timeout_ns,
        });
        let gen = self.flows[f].gen;
        self.enter(
            SYN_BYTES,
            Payload::Data {
                flow: f,
                gen,
                pn: SYN_PN,
                chunk: self.now,
                bytes: 0,
                ecn: Ecn::NotEct,
                flags: TcpFlags::default(),
                pos: 0,
            },
        );
        let retry = self.now.saturating_add(timeout_ns);
        self.schedule_wake(f, retry);
    }

    /// The receiver answers a SYN sent at `syn_sent_at` with a SYN-ACK
    /// (an ACK without ranges that echoes that time), every time one
    /// arrives: a SYN sent again means the first answer was lost.
    #[cold]
    #[inline(never)]
    pub(super) fn answer_syn(&mut self, f: usize, syn_sent_at: u64) {
        let gen = self.flows[f].gen;
        let ack = Ack {
            cum_chunk: syn_sent_at,
            ..Ack::default()
        };
        let ack = self.acks.put(ack);
        self.enter(
            SYN_BYTES,
            Payload::Ack {
                flow: f,
                gen,
                ack,
                pos: 0,
            },
        );
    }

    /// The SYN-ACK for the SYN sent at `syn_sent_at` arrived: the
    /// handshake is over (a later copy is ignored), the sender takes its
    /// RTT and starts sending.
    #[cold]
    #[inline(never)]
    pub(super) fn on_syn_ack(&mut self, f: usize, syn_sent_at: u64) {
        if self.flows[f].opening.take().is_none() {
            return;
        }
        let rtt_ns = self.now.saturating_sub(syn_sent_at);
        self.flows[f].opened = Some(crate::record::HandshakeRecord {
            opened_ns: self.now,
            rtt_ns,
        });
        let rtt = Duration::from_nanos(rtt_ns);
        let now = Instant::from_nanos(self.now);
        self.flows[f].sender.on_handshake(now, rtt);
        self.kick(f);
    }

    /// The flow key a flow-queueing discipline hashes: the slot, and for a
    /// reused slot its generation too, so a new flow does not inherit the
    /// queue (and DRR state) of the one that finished there.
    pub(super) fn flow_key(&self, f: usize) -> u64 {
        flow_key_of(f, self.flows[f].gen)
    }

    /// A flow with TCP timestamps: the receiver checks the segment's
    /// ([`sender::Receiver::on_timestamp`]), and a segment PAWS discards
    /// gets the duplicate ACK returned. Its timestamp is its send time,
    /// which the sender holds for every packet still in its window; one
    /// it has dropped was acknowledged already (by its own ACK, or as a
    /// retransmission by the cumulative point), so it is a copy and goes
    /// unchecked. Out of line, so a flow without them pays one test.
    #[inline(never)]
    fn check_timestamp(&mut self, f: usize, pn: u64, chunk: u64) -> Option<Ack> {
        let now = Instant::from_nanos(self.now);
        let fl = &mut self.flows[f];
        let tsval_ms = fl.sender.tsval_ms(pn)?;
        fl.receiver.on_timestamp(now, chunk, tsval_ms)
    }

    pub(super) fn on_data(
        &mut self,
        f: usize,
        pn: u64,
        chunk: u64,
        bytes: u32,
        ecn: Ecn,
        flags: TcpFlags,
    ) {
        match self.flows[f].receiver_rtt {
            ReceiverRtt::None => {}
            // Chromium's receiver scales its decimation timer by its own
            // min_rtt, measured on the same path: the sender's stands in.
            ReceiverRtt::Min => {
                let min_rtt = self.flows[f].sender.cc.rtt().min_ns();
                self.flows[f].receiver.set_min_rtt_ns(min_rtt);
            }
            // Linux's receive window grows once per receiver RTT, which it
            // estimates from echoed timestamps: the sender's RTT stands in
            // (the smoothed one, or its newest sample, by the receiver's
            // autotuning rule). Its SACK compression also takes the
            // handshake's RTT, for which the sender's min_rtt stands in.
            ReceiverRtt::Smoothed => {
                let sender = &self.flows[f].sender;
                let rtt = sender.cc.rtt();
                let (srtt, min_rtt) = (rtt.smoothed_ns(), rtt.min_ns());
                let latest = sender.latest_rtt_ns;
                self.flows[f].receiver.on_sender_rtt(srtt, latest);
                self.flows[f].receiver.set_min_rtt_ns(min_rtt);
            }
        }
        let discarded = if self.flows[f].timestamps {
            self.check_timestamp(f, pn, chunk)
        } else {
            None
        };
        let action = match discarded {
            Some(dupack) => AckAction::Send(dupack),
            None => self.flows[f].receiver.on_segment(
                Instant::from_nanos(self.now),
                pn,
                chunk,
                bytes as u64,
                ecn,
                flags,
            ),
        };
        match action {
            AckAction::Send(ack) => self.send_ack(f, ack),
            AckAction::Delay(t) => {
                let t = t.as_nanos();
                // An earlier deadline (SACK compression's short timer)
                // replaces a later one.
                let fl = &mut self.flows[f];
                if fl.delack_at.is_none_or(|at| t < at) {
                    fl.delack_at = Some(t);
                    if fl.delack_event.is_none_or(|e| t < e) {
                        fl.delack_event = Some(t);
                        let gen = fl.gen;
                        self.queue
                            .push_lane(LANE_DELACK, t, Kind::DelayedAck(f as u32, gen));
                    } else {
                        // An event queued no later than `t` serves: it is
                        // queued again for `t` when it pops, with the
                        // sequence taken now, so it pops among events at
                        // `t` where one queued now would. The sequence is
                        // taken even when kept, so every later event's is
                        // what it was with an event per deadline.
                        let seq = self.queue.reserve();
                        // The same deadline again (an ACK went out
                        // between): its first event would have fired it,
                        // so the first sequence stays.
                        if fl.delack_reserved.is_none_or(|(rt, _)| rt != t) {
                            fl.delack_reserved = Some((t, seq));
                        }
                    }
                }
            }
        }
    }

    /// A delayed-ACK event of flow `f` popped at `t`: the ACK goes out if
    /// it is due now; if it is due later, the event is queued again for
    /// then. An event that was replaced by an earlier one, or whose ACK
    /// went out with a later segment, does nothing. Never inlined (see
    /// `on_cross`).
    #[inline(never)]
    pub(super) fn on_delayed_ack_event(&mut self, f: usize, t: u64) {
        let fl = &mut self.flows[f];
        let relied_on = fl.delack_event == Some(t);
        if relied_on {
            fl.delack_event = None;
        }
        match fl.delack_at {
            Some(at) if at == t => {
                fl.delack_at = None;
                if let Some(ack) = fl.receiver.on_delayed_ack_timer(Instant::from_nanos(t)) {
                    self.send_ack(f, ack);
                }
            }
            Some(at) if relied_on && at > t => {
                // `delack_at` later than the event relied on was set with
                // a reservation (an event queued at once would be the one
                // relied on), and `delack_reserved` holds it.
                let reserved = fl.delack_reserved.filter(|&(rt, _)| rt == at);
                debug_assert!(reserved.is_some(), "deadline {at} without its reservation");
                fl.delack_event = Some(at);
                let gen = fl.gen;
                let seq = match reserved {
                    Some((_, seq)) => seq,
                    None => self.queue.reserve(),
                };
                self.queue.push_lane_reserved(
                    LANE_DELACK,
                    at,
                    seq,
                    Kind::DelayedAck(f as u32, gen),
                );
            }
            _ => {}
        }
    }

    /// ACKs are not ECN-capable (Not-ECT), as TCP's pure ACKs (RFC 3168
    /// §6.1.4); a marking queue drops them as before.
    pub(super) fn send_ack(&mut self, f: usize, ack: Ack) {
        // An ACK sent cancels the delayed-ACK timer, as Linux's
        // `tcp_event_ack_sent()` clears ICSK_TIME_DACK: a timer armed for
        // an earlier lone segment must not fire for the next one and ACK
        // it early, out of the every-second-segment rhythm.
        let fl = &mut self.flows[f];
        fl.delack_at = None;
        let (gen, extra_rtt_ns) = (fl.gen, fl.extra_rtt_ns);
        let ack = self.acks.put(ack);
        if self.fast_acks {
            self.enter_ack(f, gen, extra_rtt_ns, ack);
            return;
        }
        self.enter(
            ACK_BYTES,
            Payload::Ack {
                flow: f,
                gen,
                ack,
                pos: 0,
            },
        );
    }
}

/// [`Sim::flow_key`] of slot `f` holding generation `gen`, for a caller
/// that has the generation at hand (no second look-up of the slot).
#[inline(always)]
pub(super) fn flow_key_of(f: usize, gen: Gen) -> u64 {
    f as u64 | (gen as u64) << 32
}
