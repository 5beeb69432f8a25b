//! Filling the per-packet log ([`crate::packet_log`]) as link directions
//! decide each packet's fate: a FIFO queue's verdict at arrival carries
//! the departure time, so its row is complete at once; a dequeue-time
//! discipline's packet waits in `pending` until its release or its drop.
//! Nothing here runs unless the recorder asked for packets.

use super::{Dir, Payload, Sim};
use crate::packet_log::{PacketKind, PacketRecord};
use crate::record::Recorder;
use link::Verdict;
use std::collections::BTreeMap;
use std::io;

/// Rows settled since the last flush, and the rows still waiting in a
/// dequeue-time discipline.
#[derive(Default)]
pub(super) struct PacketLog {
    rows: Vec<PacketRecord>,
    /// By link direction ([`dir_key`]) and the direction's packet id. A
    /// B-tree, not a hash map: a second hashed key type here made the
    /// compiler stop inlining the hashing of the engine's own `queued`
    /// maps: 2.5 % more instructions for FQ-CoDel with no log at all
    /// (the speed guard).
    pending: BTreeMap<(u32, u64), PacketRecord>,
}

/// A number per link direction, for `pending`'s key.
fn dir_key(dir: Dir) -> u32 {
    match dir {
        Dir::Forward => 0,
        Dir::Reverse => 1,
        Dir::Seg(k) => 2 + k as u32,
    }
}

/// What the packet is, and whose.
fn kind_of(p: &Payload) -> (PacketKind, usize) {
    match *p {
        Payload::Data { flow, .. } => (PacketKind::Data, flow),
        Payload::Ack { flow, .. } => (PacketKind::Ack, flow),
        Payload::Cross { src, .. } => (PacketKind::Cross, src),
    }
}

impl Sim<'_> {
    /// The link direction's name in the log, as `link.csv` names it.
    fn link_name(&self, dir: Dir) -> &'static str {
        match dir {
            Dir::Forward => super::FORWARD,
            Dir::Reverse => super::REVERSE,
            Dir::Seg(k) => self.segs[k as usize].name,
        }
    }

    /// Logs a packet of `wire` bytes that `dir` just judged: complete if
    /// its fate is known, pending if a dequeue-time discipline holds it.
    /// Cold and out of line, so the per-packet path of a run that logs
    /// nothing keeps only the test of `packet_log`.
    #[cold]
    #[inline(never)]
    pub(super) fn log_verdict(&mut self, dir: Dir, verdict: Verdict, p: Payload, wire: u32) {
        let direction = self.link_name(dir);
        let Some(log) = self.packet_log.as_deref_mut() else {
            return;
        };
        let (kind, flow) = kind_of(&p);
        let mut row = PacketRecord {
            enqueue_ns: self.now,
            dequeue_ns: None,
            direction,
            kind,
            flow,
            bytes: wire,
            dropped: None,
            ce: false,
        };
        match verdict {
            Verdict::Deliver { dequeue_ns, ce, .. } | Verdict::Held { dequeue_ns, ce, .. } => {
                row.dequeue_ns = Some(dequeue_ns);
                row.ce = ce;
                log.rows.push(row);
            }
            Verdict::Drop { reason, .. } => {
                row.dropped = Some(reason);
                log.rows.push(row);
            }
            Verdict::Queued { id, .. } => {
                log.pending.insert((dir_key(dir), id), row);
            }
        }
    }

    /// Completes the pending rows of the packets `dir` just released or
    /// dropped (`self.releases`).
    #[cold]
    #[inline(never)]
    pub(super) fn log_releases(&mut self, dir: Dir) {
        let Some(log) = self.packet_log.as_deref_mut() else {
            return;
        };
        for r in &self.releases {
            if let Some(mut row) = log.pending.remove(&(dir_key(dir), r.id)) {
                row.dequeue_ns = Some(r.dequeue_ns);
                row.dropped = r.drop;
                row.ce = r.drop.is_none() && r.ce;
                log.rows.push(row);
            }
        }
    }

    /// Hands the settled rows to the recorder. Packets still in a
    /// dequeue-time discipline when the run ends never get a row.
    #[cold]
    #[inline(never)]
    pub(super) fn flush_packets(&mut self, rec: &mut dyn Recorder) -> io::Result<()> {
        if let Some(log) = self.packet_log.as_deref_mut() {
            for row in log.rows.drain(..) {
                rec.packet(&row)?;
            }
        }
        Ok(())
    }
}
