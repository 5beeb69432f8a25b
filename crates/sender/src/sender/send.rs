//! Sending: what may leave now (a probe owed, then repairs, then new
//! data, within cwnd, the receiver's flow-control limit and the pacer),
//! and the record kept of each packet sent.

use super::*;

impl Sender {
    /// Decides what to do at `now`.
    ///
    /// Always inlined: the simulator asks once per packet sent, and left
    /// to itself the `bbrlab` binary's inliner kept it out of line and
    /// paid a call's prologue and epilogue per packet (one bbr flow's
    /// bench path: 0.9 % fewer instructions inlined, measured 2026-12-05
    /// with Callgrind).
    #[inline(always)]
    pub fn poll(&mut self, now: Instant) -> SendDecision {
        if self.mss_change.is_some() {
            self.apply_mss_change(now);
        }
        self.prune_repairs();
        if self.tlp.owed {
            if let Some(d) = self.tail_loss_probe() {
                return d;
            }
            self.tlp.owed = false;
        }
        // PTO probes ignore cwnd and pacing (RFC 9002 §7.5): a lost
        // retransmission if one is queued, else the oldest data still
        // unacknowledged, whose original stays outstanding.
        if self.probes_owed > 0 {
            if let Some(&(chunk, bytes)) = self.retx.front() {
                return SendDecision::Send {
                    chunk,
                    bytes,
                    retransmission: true,
                };
            }
            // The first probe resends the oldest, the second the next.
            let k = 2 - self.probes_owed.min(2) as usize;
            let mut outstanding = self.pkts.iter().filter(|p| p.status == Status::Outstanding);
            let pick = outstanding.clone().nth(k).or_else(|| outstanding.next());
            if let Some(p) = pick {
                return SendDecision::Send {
                    chunk: p.chunk,
                    bytes: p.bytes,
                    retransmission: true,
                };
            }
            self.probes_owed = 0;
        }
        // Retransmissions first: they are owed to the receiver already.
        let (chunk, bytes, retransmission) = if let Some(&(c, b)) = self.retx.front() {
            (c, b, true)
        } else {
            let stopped =
                self.stop.is_some_and(|s| now >= s) || self.total_chunks == Some(self.next_chunk);
            if stopped {
                return SendDecision::NoData(None);
            }
            let whole = self.chunk_bytes(self.next_chunk);
            // A bulk application always has a whole segment ready: its
            // `advance` does nothing, it has no tail and `has` holds. One
            // test of its kind here instead of three matches, which LLVM
            // had turned into a jump table per packet.
            let (b, has_data) = if matches!(self.app, AppState::Bulk) {
                (whole, true)
            } else {
                self.app.advance(now);
                let b = self.short_or(whole);
                (b, self.app.has(b as u64))
            };
            if self.flow_limit.is_some_and(|l| self.next_chunk >= l) {
                // Window-limited only with data to send (Linux starts the
                // clock in `tcp_write_xmit()`, which runs for queued data).
                if has_data {
                    self.rwnd_blocked(now);
                }
                return SendDecision::FlowBlocked;
            }
            self.rwnd_open(now);
            if !has_data {
                // The application is the bottleneck: tell the sampler once,
                // so the idle time is not read as a slow path.
                if !self.app_limited_marked {
                    self.cc.on_app_limited(self.inflight);
                    self.app_limited_marked = true;
                }
                return SendDecision::NoData(self.app.ready_at(b as u64));
            }
            (self.next_chunk, b, false)
        };
        if self.inflight + bytes as u64 > self.cc.cwnd_bytes() {
            return SendDecision::CwndLimited;
        }
        let next_send = self.next_send();
        // Quantum pacing: a packet joins the burst leaving now while it
        // has room, as segments join one TSO super-packet.
        if next_send > now && !self.joins_burst(now, chunk, bytes as u64, retransmission) {
            return SendDecision::PaceUntil(next_send);
        }
        if !retransmission {
            match self.tso_deferral(now) {
                Deferral::Send => {}
                Deferral::Cwnd => {
                    self.cc.on_held_by_cwnd(now, self.inflight);
                    return SendDecision::CwndLimited;
                }
                Deferral::Rwnd => {
                    self.rwnd_blocked(now);
                    return SendDecision::FlowBlocked;
                }
                // The ACK due within a millisecond, or the application's
                // next write, brings the sender back.
                Deferral::App => return SendDecision::CwndLimited,
            }
        }
        SendDecision::Send {
            chunk,
            bytes,
            retransmission,
        }
    }

    /// `Some(t)` when [`Sender::poll`] at `now` is known to send nothing
    /// and change nothing, and to decide either `PaceUntil(t)` or a
    /// decision that asks for no wake-up (`CwndLimited`, `NoData(None)`);
    /// `None` when only `poll` can tell. A caller that is
    /// already to be woken at or before `t` (the simulator, on an ACK that
    /// arrives between two paced sends) then has nothing to do and skips
    /// `poll`, about a third of its calls on a paced flow.
    ///
    /// Told as [`Sender::poll_settled`] tells it (its `quiet` test),
    /// without its stop and window tests: their outcomes, `NoData(None)`
    /// and `CwndLimited`, ask for no wake-up, so only the pacer's hold
    /// (the next departure after `now`, and no quantum burst open to the
    /// packet) is required.
    #[inline]
    pub fn paced_until(&self, now: Instant) -> Option<Instant> {
        if !self.quiet() {
            return None;
        }
        let next_send = self.next_send();
        let bytes = self.chunk_bytes(self.next_chunk) as u64;
        (next_send > now && !self.joins_burst(now, self.next_chunk, bytes, false))
            .then_some(next_send)
    }

    /// What [`Sender::poll`] at `now` would decide, when that is known to
    /// be `NoData(None)` (a stopped or complete flow), `CwndLimited` or
    /// the pacer's `PaceUntil`, all of which `poll` decides without
    /// changing anything; `None` when only `poll` can tell (it may send,
    /// defer, or move state). A caller that has just sent a packet asks
    /// this first: on a paced flow the pacer then holds the next one, and
    /// the second `poll` of every send is spared.
    ///
    /// When its `quiet` test holds, `poll`'s branches before the window's
    /// test (the segment-size change, probes, repairs, the application's
    /// advance, the receiver's window and its clock) each do nothing, so
    /// `poll` goes on to the tests made here, in its order: a stopped or
    /// complete flow, then the window, then the pacer.
    #[inline]
    pub fn poll_settled(&self, now: Instant) -> Option<SendDecision> {
        if !self.quiet() {
            return None;
        }
        if self.stop.is_some_and(|s| now >= s) || self.total_chunks == Some(self.next_chunk) {
            return Some(SendDecision::NoData(None));
        }
        let bytes = self.chunk_bytes(self.next_chunk) as u64;
        if self.inflight + bytes > self.cc.cwnd_bytes() {
            return Some(SendDecision::CwndLimited);
        }
        let next_send = self.next_send();
        (next_send > now && !self.joins_burst(now, self.next_chunk, bytes, false))
            .then_some(SendDecision::PaceUntil(next_send))
    }

    /// Whether [`Sender::poll`]'s branches before its stop, window and
    /// pacer tests would each do nothing: no segment-size change pending,
    /// no tail-loss or PTO probe owed, no repair queued (so pruning the
    /// queue changes nothing), a bulk application (`poll` advances any
    /// other, which moves its state), and new data inside the receiver's
    /// window with its clock stopped (the window's clock,
    /// `rwnd_limited_ns`, starts and stops in `poll`).
    #[inline]
    fn quiet(&self) -> bool {
        self.mss_change.is_none()
            && !self.tlp.owed
            && self.probes_owed == 0
            && self.retx.is_empty()
            && matches!(self.app, AppState::Bulk)
            && self.rwnd_blocked_since.is_none()
            && self.flow_limit.is_none_or(|l| self.next_chunk < l)
    }

    /// Whether a packet of `bytes` carrying `chunk` may join the quantum
    /// burst open at `now`: it leaves at the same instant and fits, and a
    /// TCP segment continues the burst's skb (`skb_next`).
    #[inline]
    fn joins_burst(&self, now: Instant, chunk: u64, bytes: u64, retransmission: bool) -> bool {
        self.burst.is_some_and(|b| b.admits(now, bytes))
            && self.skb_next.is_none_or(|n| n == (chunk, retransmission))
    }

    /// Records the send decided by [`Sender::poll`]; returns the packet
    /// number. [`Sender::on_sent_ecn`] also says how to mark the packet.
    pub fn on_sent(&mut self, now: Instant, chunk: u64, bytes: u32, retransmission: bool) -> u64 {
        self.on_sent_ecn(now, chunk, bytes, retransmission).pn
    }

    /// [`Sender::on_sent`], returning the packet's number with its ECN
    /// codepoint and TCP flags (CWR, and PSH on the last segment of each
    /// skb: `skb.rs`). With [`EcnFeedback::Ece`] (TCP),
    /// retransmissions are Not-ECT (RFC 3168 §6.1.5, Linux's
    /// `tcp_ecn_send()`) and CWR rides on the first new data packet after
    /// the sender reacted to ECE (RFC 3168 §6.1.2).
    ///
    /// Always inlined, for the reason [`Sender::poll`] is: once per packet
    /// sent, and out of line in the `bbrlab` binary (bench path: 2.0 %
    /// fewer instructions for bbr and cubic, measured 2026-12-05).
    #[inline(always)]
    pub fn on_sent_ecn(
        &mut self,
        now: Instant,
        chunk: u64,
        bytes: u32,
        retransmission: bool,
    ) -> SentPacket {
        let (ecn, cwr) = if self.ecn.configured {
            self.marking(retransmission)
        } else {
            (Ecn::NotEct, false)
        };
        let pn = self.record_sent(now, chunk, bytes, retransmission, ecn);
        let psh = self.ends_skb(now, chunk, bytes as u64, retransmission);
        SentPacket { pn, ecn, cwr, psh }
    }

    #[inline]
    pub(super) fn record_sent(
        &mut self,
        now: Instant,
        chunk: u64,
        bytes: u32,
        retransmission: bool,
        ecn: Ecn,
    ) -> u64 {
        self.probes_owed = self.probes_owed.saturating_sub(1);
        if std::mem::take(&mut self.tlp.owed) {
            self.tlp.in_flight = true;
            self.tail_loss_probes += 1;
        }
        if retransmission {
            self.retrans_out += 1;
            self.stamp_retransmission(now);
            // Linux `tcp_retransmit_skb()`: every retransmission may yet be
            // reported needless by a DSACK.
            if self.undo.marker {
                self.undo.retrans = self.undo.retrans.max(0) + 1;
            }
            // A probe resends outstanding data; only a queued repair is
            // taken off the queue.
            if self.retx.front().is_some_and(|&(c, _)| c == chunk) {
                self.retx.pop_front();
            }
            self.retransmissions += 1;
        } else {
            self.note_new_segment(chunk, bytes);
            self.next_chunk += 1;
            self.app.consume(bytes as u64);
            self.tso_sent();
        }
        self.app_limited_marked = false;
        // App-limited after this packet: nothing else is queued to send.
        // The application's kind first: a bulk one settles it in one test.
        let app_limited = !matches!(self.app, AppState::Bulk) && self.retx.is_empty() && {
            let next = self.next_new_bytes() as u64;
            !self.app.has(next)
        };
        if self.inflight == 0 || matches!(self.timeout, Timeout::Pto { .. }) {
            // TCP's retransmission timer starts with the first packet in
            // flight (and restarts on each ACK of new data, RFC 6298 §5);
            // QUIC's probe timeout counts from the last ack-eliciting
            // packet sent (RFC 9002 §6.2.1, appendix A.8).
            self.rto_base = now;
        }
        let nothing_unacked = self.inflight == 0 && self.unrepaired.is_empty();
        let state = self.cc.on_packet_sent_when(
            now,
            bytes as u64,
            self.inflight,
            app_limited,
            nothing_unacked,
        );
        let pn = self.next_pn;
        self.next_pn += 1;
        if self.pkts.is_empty() {
            self.base_pn = pn;
        }
        self.pkts.push_back(SentPkt {
            chunk,
            bytes,
            sent: now,
            state,
            status: Status::Outstanding,
            retx: retransmission,
            lost_in: 0,
            ecn,
        });
        self.inflight += bytes as u64;
        self.inflight_peak = self.inflight_peak.max(self.inflight);
        if self.tlp.deadline.is_none() {
            self.arm_tlp(now);
        }
        self.packets_sent += 1;
        // The next packet may leave once this one's time at the pacing rate
        // has passed. Exact pacing gives no credit for lateness or idle
        // time, so a flow resuming after a pause does not burst. Quantum
        // pacing sends a send quantum as one burst, as Linux sends one TSO
        // super-packet, and charges the burst's time as Linux does
        // (`Pacer::add_to_burst`): lateness, such as a wait on the window,
        // is forgiven up to half of the burst's time, so a flow that was
        // waiting on its window sends one burst at once and the next half
        // a burst's time later. More credit would mean bigger catch-up
        // bursts, which shorten send intervals, inflate delivery-rate
        // samples and meet a full queue harder.
        // The first `initial_burst` packets cost no time: Linux charges a
        // segment's pacing time only once `data_segs_out` reaches ten, so
        // segments 1-10 leave together and the 11th waits the 10th's time.
        let rate = self.cc.pacing_rate_bytes_per_sec();
        let next_send = match self.pacing {
            _ if self.packets_sent < self.initial_burst => self.pacer.advance(now, 0, 0),
            Pacing::Exact => {
                let gap_ns = self.packet_time_ns(bytes as u64, rate);
                self.pacer.advance(now, gap_ns, 0)
            }
            Pacing::Quantum => {
                let mut burst = match self.burst {
                    Some(b) if self.joins_burst(now, chunk, bytes as u64, retransmission) => b,
                    _ => self.pacer.open_burst(now, self.cc.send_quantum_bytes()),
                };
                if matches!(self.timeout, Timeout::Rto) {
                    self.skb_next = Some((chunk + 1, retransmission));
                }
                let gap_ns = self.packet_time_ns(bytes as u64, rate);
                let next = self.pacer.add_to_burst(&mut burst, bytes as u64, gap_ns);
                self.burst = Some(burst);
                next
            }
            Pacing::Off => self.pacer.advance(now, 0, 0),
        };
        let burst = match self.pacing {
            Pacing::Exact | Pacing::Off => bytes as u64,
            Pacing::Quantum => self.cc.send_quantum_bytes(),
        };
        self.cc.set_next_departure(next_send, burst);
        pn
    }

    /// [`Pacer::packet_time_ns`], remembered for the last packet size and
    /// rate: a pure function of the two, which stay the same from packet
    /// to packet while the controller's pacing rate holds, so a repeat
    /// skips the floating-point conversion, division and rounding.
    #[inline]
    fn packet_time_ns(&mut self, bytes: u64, rate: u64) -> u64 {
        let (b, r, gap) = self.pacing_memo;
        if b == bytes && r == rate {
            return gap;
        }
        let gap = Pacer::packet_time_ns(bytes, rate);
        self.pacing_memo = (bytes, rate, gap);
        gap
    }

    /// When the pacer lets the next packet leave.
    pub(super) fn next_send(&self) -> Instant {
        // Started at the flow's start, so the schedule always exists.
        self.pacer.next_departure().unwrap_or(Instant::ZERO)
    }
}
