//! The per-packet log of a run's links (`packets.csv`, `bbrlab sim
//! --packets`): one row for every packet a link direction took in, with
//! when it entered the queue and when it left, or why it was dropped.
//!
//! Why: a flow's share of a shared queue is decided packet by packet,
//! by which flow's packets a full queue turns away and in what bursts
//! they arrive. The time series (`flows.csv`, `link.csv`) sample every
//! 10 ms and cannot show that; the emulator logs real packets the same way
//! (`bbrlab emu --log`, its `packets.csv`), so a simulated run and a kernel
//! run can be laid side by side. Drop reasons are spelled as the
//! emulator's ([`link::DropReason::name`]).
//!
//! Rows come in the order the simulator settled each packet's fate: at
//! arrival for a FIFO queue (its departure is known then), at departure
//! for a dequeue-time discipline (FQ-CoDel, PIE, DualPI2, CoDel's head
//! drops). Sort by `enqueue_s` for arrival order.

use crate::cells::{self, Cells, Row};
use link::DropReason;
use std::io;

/// The columns of `packets.csv`, in order.
pub const PACKET_COLUMNS: [&str; 8] = [
    "enqueue_s",
    "dequeue_s",
    "direction",
    "kind",
    "flow",
    "bytes",
    "dropped",
    "ce",
];

/// What a logged packet is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    /// A listed or generated flow's data (a SYN included).
    Data,
    /// A flow's acknowledgment.
    Ack,
    /// Unresponsive cross traffic; `flow` is the source's index.
    Cross,
}

impl PacketKind {
    /// Its name in `packets.csv`.
    pub fn name(self) -> &'static str {
        match self {
            PacketKind::Data => "data",
            PacketKind::Ack => "ack",
            PacketKind::Cross => "cross",
        }
    }
}

/// One row of `packets.csv`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PacketRecord {
    /// When the packet was offered to the link direction.
    pub enqueue_ns: u64,
    /// When its last bit left the bottleneck; for a packet a dequeue-time
    /// discipline dropped, when it was dropped; `None` for one dropped on
    /// arrival.
    pub dequeue_ns: Option<u64>,
    /// The link direction, named as in `link.csv`'s `direction`
    /// (`forward`, `reverse`, `hop1`, ...), or `access_forward` /
    /// `access_reverse` for a flow's own access link.
    pub direction: &'static str,
    /// Data, ACK or cross traffic.
    pub kind: PacketKind,
    /// The flow's index (as in `flows.csv`), or the cross source's.
    pub flow: usize,
    /// Its size on the wire.
    pub bytes: u32,
    /// Why it was dropped, if it was.
    pub dropped: Option<DropReason>,
    /// It left this direction CE-marked (marked here or before).
    pub ce: bool,
}

impl Row for PacketRecord {
    /// [`PACKET_COLUMNS`]' order; times in seconds to the nanosecond, so
    /// two packets a link serves back to back never share a time.
    fn cells(&self, c: &mut Cells<'_>) -> io::Result<()> {
        c.put(format_args!("{:.9}", self.enqueue_ns as f64 / 1e9))?;
        match self.dequeue_ns {
            Some(t) => c.put(format_args!("{:.9}", t as f64 / 1e9))?,
            None => c.empty()?,
        }
        c.text(self.direction)?;
        c.text(self.kind.name())?;
        c.put(format_args!("{}", self.flow))?;
        c.put(format_args!("{}", self.bytes))?;
        c.text(self.dropped.map_or("", DropReason::name))?;
        c.text(if self.ce { "1" } else { "0" })
    }
}

impl PacketRecord {
    /// The row's cells in [`PACKET_COLUMNS`]' order ([`Row::cells`]).
    pub fn fields(&self) -> [String; PACKET_COLUMNS.len()] {
        cells::collect(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drop_on_arrival_has_no_departure_and_names_its_reason() {
        let r = PacketRecord {
            enqueue_ns: 1_500_000_001,
            dequeue_ns: None,
            direction: "forward",
            kind: PacketKind::Data,
            flow: 3,
            bytes: 1500,
            dropped: Some(DropReason::QueueFull),
            ce: false,
        };
        assert_eq!(
            r.fields(),
            [
                "1.500000001",
                "",
                "forward",
                "data",
                "3",
                "1500",
                "queue",
                "0"
            ]
        );
        let served = PacketRecord {
            dequeue_ns: Some(2_000_000_000),
            dropped: None,
            ce: true,
            kind: PacketKind::Ack,
            ..r
        };
        assert_eq!(
            served.fields(),
            [
                "1.500000001",
                "2.000000000",
                "forward",
                "ack",
                "3",
                "1500",
                "",
                "1"
            ]
        );
    }
}
