//! The per-packet handle the stacks' controllers need, rebuilt from what
//! bbrlab's [`CongestionControl`](congestion::CongestionControl) gives.
//!
//! s2n-quic's controller returns a `PacketInfo` at send and wants it back
//! when that packet is acknowledged (the newest of an ACK) or lost; quinn's
//! wants packet numbers. bbrlab's trait hands an algorithm, at send, only
//! `(now, bytes, in_flight_before)`, and on ACK or loss the packet's
//! [`SentPacketState`]. That state is what the delivery-rate sampler
//! stored at the same send: its send time, bytes in flight after it, and
//! the connection's delivered and lost totals then. The ledger keeps those
//! four numbers as the key: the first two come with the send, the totals
//! are the ones the controller last reported to the algorithm (they only
//! change on an ACK or a loss, which the algorithm is told of). Two
//! packets cannot share all four: between two sends at the same instant
//! the bytes in flight only fall through an ACK (delivered grows) or a
//! loss (lost grows).
//!
//! Each packet also gets a packet number in send order, which gives loss
//! bursts (s2n's `new_loss_burst`) and quinn's largest acked packet.

use congestion::{Instant, SentPacketState};
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    sent_ns: u64,
    in_flight_after: u64,
    delivered: u64,
    lost: u64,
}

/// What the ledger returns for an acknowledged or lost packet.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry<T> {
    /// Send order, from 0.
    pub pn: u64,
    pub sent: Instant,
    pub bytes: u64,
    /// What the stack's controller returned at send.
    pub info: T,
}

#[derive(Debug)]
pub(crate) struct Ledger<T> {
    delivered: u64,
    lost: u64,
    next_pn: u64,
    packets: HashMap<Key, Entry<T>>,
    /// ACKed or lost packets the ledger did not know (should stay 0).
    pub misses: u64,
}

impl<T: Copy> Ledger<T> {
    pub fn new() -> Self {
        Ledger {
            delivered: 0,
            lost: 0,
            next_pn: 0,
            packets: HashMap::new(),
            misses: 0,
        }
    }

    /// Records a send; returns its packet number.
    pub fn on_sent(&mut self, now: Instant, bytes: u64, in_flight_before: u64, info: T) -> u64 {
        let pn = self.next_pn;
        self.next_pn += 1;
        let key = Key {
            sent_ns: now.as_nanos(),
            // As `DeliveryRateSampler::on_packet_sent_when` computes it.
            in_flight_after: in_flight_before.saturating_add(bytes),
            delivered: self.delivered,
            lost: self.lost,
        };
        self.packets.insert(
            key,
            Entry {
                pn,
                sent: now,
                bytes,
                info,
            },
        );
        pn
    }

    /// The connection's delivered and lost totals, as the controller last
    /// reported them (every ACK and every loss report carries them).
    pub fn set_totals(&mut self, delivered: u64, lost: u64) {
        self.delivered = delivered;
        self.lost = lost;
    }

    /// Removes and returns the packet sent with `state`.
    pub fn take(&mut self, state: &SentPacketState) -> Option<Entry<T>> {
        let key = Key {
            sent_ns: state.sent_time.as_nanos(),
            in_flight_after: state.bytes_in_flight,
            delivered: state.delivered_bytes,
            lost: state.lost_bytes,
        };
        let e = self.packets.remove(&key);
        if e.is_none() {
            self.misses += 1;
        }
        e
    }

    /// Removes and returns the packets of `states` it knows, in send
    /// order (the order the stacks number them in).
    pub fn take_sorted<'a>(
        &mut self,
        states: impl IntoIterator<Item = &'a SentPacketState>,
    ) -> Vec<Entry<T>> {
        let mut out: Vec<Entry<T>> = states.into_iter().filter_map(|s| self.take(s)).collect();
        out.sort_by_key(|e| e.pn);
        out
    }

    /// Packets sent and neither acknowledged nor lost yet.
    #[cfg(test)]
    pub fn outstanding(&self) -> usize {
        self.packets.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use congestion::{AckedPacket, DeliveryRateSampler};

    /// The keys the ledger builds at send match the states bbrlab's
    /// sampler stores, through sends at one instant, ACKs and losses.
    #[test]
    fn the_ledger_finds_every_packet_the_sampler_describes() {
        let mut sampler = DeliveryRateSampler::new();
        let mut ledger: Ledger<u32> = Ledger::new();
        let mut states = Vec::new();
        let mut inflight = 0u64;
        // Five packets at t = 0, same instant.
        for i in 0..5u32 {
            let st = sampler.on_packet_sent(Instant::ZERO, 1000, inflight);
            ledger.on_sent(Instant::ZERO, 1000, inflight, i);
            inflight += 1000;
            states.push(st);
        }
        // The first is acknowledged at 10 ms.
        let t = Instant::from_nanos(10_000_000);
        sampler.on_ack_ns(
            t,
            &[AckedPacket {
                bytes: 1000,
                state: states[0],
            }],
            None,
            inflight,
        );
        inflight -= 1000;
        ledger.set_totals(sampler.delivered_bytes(), sampler.lost_bytes());
        assert_eq!(ledger.take(&states[0]).map(|e| e.info), Some(0));
        // A send at the ACK's instant with the same bytes in flight as an
        // earlier one (4000 after it) differs by the delivered total.
        let st = sampler.on_packet_sent(t, 1000, inflight);
        ledger.on_sent(t, 1000, inflight, 5);
        states.push(st);
        for (i, s) in states.iter().enumerate().skip(1) {
            assert_eq!(ledger.take(s).map(|e| e.info), Some(i as u32));
        }
        assert_eq!(ledger.misses, 0);
        assert_eq!(ledger.outstanding(), 0);
        // A packet it never saw is a miss, counted.
        assert!(ledger.take(&states[0]).is_none());
        assert_eq!(ledger.misses, 1);
    }
}
