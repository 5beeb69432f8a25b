//! Undoing a recovery that was not needed: a late ACK or a DSACK shows
//! that a packet declared lost was not (Linux `tcp_try_undo_*`, RFC 8985
//! §6.2's reordering window widening).

use super::*;

/// The undo episode under way (Linux `undo_marker`, `undo_retrans`):
/// what would prove the current reduction spurious.
#[derive(Clone, Debug)]
pub(super) struct UndoState {
    /// An undo is possible: the current or last reduction may still be
    /// proved spurious (Linux `undo_marker`).
    pub(super) marker: bool,
    /// Retransmissions of the episode not yet reported as needless by a
    /// DSACK; -1 while none was sent (Linux `undo_retrans`). At 0 every
    /// retransmission was a duplicate, so the losses were spurious.
    pub(super) retrans: i64,
    /// Numbers the undo episodes, so a late ACK counts against the
    /// episode that declared the packet lost.
    pub(super) episode: u32,
    /// Packets the current undo episode declared lost that no late ACK
    /// has yet shown to have arrived. At 0 every loss was spurious.
    pub(super) lost: u64,
    /// This ACK proved the last reduction spurious: its event tells the
    /// controller, which restores its window before the ACK's new losses.
    pub(super) tell_controller: bool,
}

impl Sender {
    /// An ACK covers `pn`, which had been declared lost: it was reordered
    /// or delayed, not lost. As Linux does when a SACK covers a packet
    /// marked lost (`tcp_sacktag_one()`), its data counts as delivered,
    /// feeding this ACK's rate sample, unless a retransmission delivered
    /// it first; a repair still queued for it is cancelled (dropped from
    /// the queue when it reaches the front); and reordering is noted.
    ///
    /// Returns whether this proves the current reduction spurious.
    pub(super) fn on_late_ack(&mut self, pn: u64) -> bool {
        let Some(p) = self.lost.remove(pn) else {
            return false;
        };
        self.late_acks += 1;
        self.reo.seen = true;
        if let Some(q) = self.pkt_mut(pn) {
            q.status = Status::Acked;
        }
        if self.stamps.on {
            self.stamps.note_acked(p.sent, p.retx);
        }
        match p.ecn {
            Ecn::Ect0 => self.ecn.newly_ect[0] += 1,
            Ecn::Ect1 => self.ecn.newly_ect[1] += 1,
            _ => {}
        }
        let (bytes, state, chunk, lost_in) = (p.bytes, p.state, p.chunk, p.lost_in);
        let mut all_spurious = false;
        if self.undo.marker && lost_in == self.undo.episode && lost_in != 0 {
            self.undo.lost = self.undo.lost.saturating_sub(1);
            // F-RTO (RFC 5682 §3, Linux `tcp_process_loss()`): after a
            // timeout, one original acknowledged after it proves the
            // timeout spurious. After fast recovery, undo needs every
            // loss of the episode proved spurious, standing in for what
            // Linux learns from every retransmission DSACKed or from the
            // in-order point moved by an original (`tcp_packet_delayed()`).
            // With timestamps the sender has those rules themselves
            // (`timestamps.rs`, and DSACKs either way) and no stand-in:
            // Linux undoes nothing on the SACK of an original, and the
            // stand-in, acting on the SACK before the cumulative ACK came,
            // took the place of its partial undos (26-43 % of the undos
            // with it on C12's reordering path, 50-60 % without, the
            // kernel's 78-84 %: Notes on fidelity).
            all_spurious = (self.undo.lost == 0 && !self.stamps.on)
                || self.recovery_state() == RecoveryState::Loss;
        }
        if self.unrepaired.remove(&chunk) {
            self.acked_buf.push(AckedPacket {
                bytes: bytes as u64,
                state,
            });
        }
        all_spurious
    }

    /// A DSACK reported a needless retransmission. Returns whether every
    /// retransmission of the episode has now been reported needless, so
    /// the reduction was spurious (Linux `tcp_check_dsack()` and
    /// `tcp_try_undo_dsack()`, RFC 2883). The reordering window widens at
    /// the next [`Sender::update_reo_wnd`].
    pub(super) fn on_dsack(&mut self) -> bool {
        self.reo.seen = true;
        self.reo.dsack_pending = true;
        if self.undo.marker && self.undo.retrans > 0 {
            self.undo.retrans -= 1;
            if self.undo.retrans == 0 {
                self.reo.persist = (self.reo.persist + 1).min(REO_WND_PERSIST);
                return true;
            }
        }
        false
    }

    /// A reduction begins: it may later be undone (Linux `tcp_init_undo()`).
    pub(super) fn init_undo(&mut self) {
        self.loss_episodes += 1;
        self.undo.marker = true;
        self.undo.episode = self.undo.episode.wrapping_add(1).max(1);
        self.undo.lost = 0;
        self.undo.retrans = if self.retrans_out > 0 {
            self.retrans_out as i64
        } else {
            -1
        };
    }

    /// The current reduction was spurious: tell the controller, which
    /// restores its window and leaves recovery. After a timeout (F-RTO,
    /// RFC 5682 §3; Linux `tcp_try_undo_loss()`), packets declared lost
    /// whose repair has not been sent are taken back as in flight, since
    /// the timeout, not the network, declared them lost. After a fast
    /// recovery, Linux keeps its loss marks (`tcp_undo_cwnd_reduction()`
    /// with `unmark_loss` false), and so do we.
    pub(super) fn undo(&mut self) {
        let after_timeout = self.recovery_state() == RecoveryState::Loss;
        self.undo.marker = false;
        self.undo.retrans = -1;
        self.undos += 1;
        self.recovery_point = None;
        self.undo.tell_controller = true;
        if after_timeout {
            self.rto_undos += 1;
            self.rto_backoff = 0;
            self.unmark_losses();
        }
    }

    /// The controller's recovery state as this ACK leaves it so far: open
    /// once an undo is decided, though the controller hears of it only in
    /// the ACK's event, so loss detection on the same ACK opens a new
    /// undo episode as Linux's does after `tcp_try_undo_recovery()`.
    pub(super) fn recovery_state(&self) -> RecoveryState {
        if self.undo.tell_controller {
            RecoveryState::Open
        } else {
            self.cc.recovery_state()
        }
    }

    /// Takes back as in flight every packet declared lost whose repair is
    /// still queued, and drops those repairs.
    pub(super) fn unmark_losses(&mut self) {
        let queued: BTreeSet<u64> = self
            .retx
            .iter()
            .map(|&(c, _)| c)
            .filter(|c| self.unrepaired.contains(c))
            .collect();
        let back: Vec<(u64, SentPkt)> = self
            .lost
            .0
            .iter()
            .filter(|(_, p)| queued.contains(&p.chunk))
            .copied()
            .collect();
        for &(pn, mut p) in &back {
            self.lost.remove(pn);
            p.status = Status::Outstanding;
            // A packet already trimmed from the window's front comes back,
            // with resolved placeholders for any gap.
            while pn < self.base_pn {
                let mut gap = p;
                gap.status = Status::Acked;
                self.pkts.push_front(gap);
                self.base_pn -= 1;
            }
            if let Some(q) = self.pkt_mut(pn) {
                *q = p;
            }
            self.inflight += p.bytes as u64;
            self.retrans_out += p.retx as u64;
            self.unrepaired.remove(&p.chunk);
            self.holes.push(pn);
        }
        self.retx.retain(|(c, _)| !queued.contains(c));
        self.holes.sort_unstable();
        self.holes.dedup();
    }
}
