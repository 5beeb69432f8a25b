//! Bottlenecks in series in the emulator: `[[link.hops]]` of an
//! `emu --scenario` file.
//!
//! Every client → server packet that the shared forward direction
//! delivers then crosses each hop in turn, each a full `link` direction
//! (rate, queue and its discipline, delay, jitter, loss, policer) with its
//! own random stream: a tandem. A hop's model is asked at the moment the
//! packet reaches it, which is later than the forwarder's clock; that is
//! sound because each hop is FIFO and packets reach it in order (the
//! shared direction does not reorder them unless its jitter is told to,
//! and then a packet is offered no earlier than the one before it). The
//! emulator has no per-flow hop choice (every forward packet crosses every
//! hop), so a parking lot, where flows join and leave at different hops,
//! needs the simulator. Aggregation is refused in a hop (its releases
//! would need a timer of their own).

use link::{Direction, DropReason, Ecn, ResolvedDirection, Verdict};

/// The forward hops after the shared forward direction.
pub struct Tandem {
    dirs: Vec<Direction>,
    last_ns: u64,
}

/// Why a hop cannot run in the emulator: its field and what is allowed.
pub fn check_hop(d: &ResolvedDirection) -> Result<(), (String, String)> {
    if d.aggregation.is_some() {
        return Err((
            "ack_aggregation".into(),
            "not in an emulated hop (it is for the shared directions); a hop takes rate, delay, queue, loss, jitter and policer".into(),
        ));
    }
    // A hop is asked once, when the packet reaches it, and must answer
    // then: a discipline that decides at dequeue (FQ-CoDel, PIE, DualPI2)
    // would need the forwarder's dequeue clock, which only the shared
    // directions have.
    if d.queue.discipline.is_some() {
        return Err((
            "queue.aqm".into(),
            "fq_codel, pie and dualpi2 run on the shared [link.forward] / [link.reverse] in the emulator, not in a hop; a hop's queue takes drop-tail, codel or step (the simulator runs every discipline in every hop)".into(),
        ));
    }
    Ok(())
}

impl Tandem {
    /// The hops in the order packets cross them; an error names a hop
    /// [`check_hop`] refuses.
    pub fn new(hops: &[ResolvedDirection], seed: u64) -> Result<Tandem, String> {
        for (k, d) in hops.iter().enumerate() {
            check_hop(d)
                .map_err(|(field, message)| format!("link.hops[{k}].{field}: {message}"))?;
        }
        Ok(Tandem {
            dirs: hops
                .iter()
                .enumerate()
                .map(|(k, d)| {
                    Direction::new(
                        d,
                        seed ^ 0x6C8E_9CF5_7093_2BD5u64.wrapping_mul(k as u64 + 1),
                    )
                })
                .collect(),
            last_ns: 0,
        })
    }

    /// When a forward packet the shared direction delivers at `arrive_ns`
    /// leaves the last hop, or why a hop dropped it. A hop that marks it
    /// sets CE in `pkt`'s header. Packets of `side` 1 (server → client)
    /// and paths without hops keep `arrive_ns`.
    pub fn release_ns(
        &mut self,
        side: usize,
        pkt: &mut [u8],
        arrive_ns: u64,
    ) -> Result<u64, DropReason> {
        if side != 0 || self.dirs.is_empty() {
            return Ok(arrive_ns);
        }
        let mut t = arrive_ns.max(self.last_ns);
        self.last_ns = t;
        for dir in &mut self.dirs {
            let cp = crate::ecn::codepoint(pkt).unwrap_or(Ecn::NotEct);
            match dir.enqueue_with(t, pkt.len() as u32, cp) {
                Verdict::Deliver { arrive_ns, ce, .. } => {
                    if ce && cp != Ecn::Ce {
                        crate::ecn::set_ce(pkt);
                    }
                    t = arrive_ns;
                }
                Verdict::Drop { reason, .. } => return Err(reason),
                // No aggregation and no dequeue-time discipline in a hop
                // (`check_hop` refuses both): nothing is held or queued.
                Verdict::Held { .. } | Verdict::Queued { .. } => {
                    unreachable!("Tandem::new refuses aggregation and dequeue-time disciplines")
                }
            }
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn direction(text: &str) -> ResolvedDirection {
        let cfg: link::DirectionConfig = toml::from_str(text).unwrap();
        cfg.resolve(std::path::Path::new(".")).unwrap()
    }

    const MS: u64 = 1_000_000;

    /// Two hops, 10 Mbit/s then 5 Mbit/s, 5 ms each: a lone 1500-byte
    /// packet takes 1.2 + 5 + 2.4 + 5 ms; a burst of 10 leaves at the
    /// slower hop's pace (2.4 ms apart); server → client is untouched.
    #[test]
    fn packets_cross_each_hop_in_turn() {
        let hops = [
            direction("rate = \"10mbit\"\ndelay = \"5ms\""),
            direction("rate = \"5mbit\"\ndelay = \"5ms\""),
        ];
        let mut t = Tandem::new(&hops, 1).unwrap();
        let mut pkt = vec![0x45u8; 1500];
        assert_eq!(t.release_ns(0, &mut pkt, 0), Ok(13_600_000));
        let out: Vec<u64> = (0..10)
            .map(|_| t.release_ns(0, &mut pkt, 100 * MS).unwrap())
            .collect();
        for w in out.windows(2) {
            assert_eq!(w[1] - w[0], 2_400_000, "{out:?}");
        }
        assert_eq!(t.release_ns(1, &mut pkt, 7), Ok(7));
    }

    /// A hop is asked once, on arrival, so a discipline that decides at
    /// dequeue is refused by name rather than run wrongly.
    #[test]
    fn a_hop_refuses_a_dequeue_time_discipline() {
        for aqm in ["fq_codel", "pie", "dualpi2"] {
            let hop = direction(&format!(
                "rate = \"10mbit\"\nqueue = {{ limit = \"100pkt\", aqm = \"{aqm}\" }}"
            ));
            let err = Tandem::new(&[hop], 1).err().expect(aqm);
            assert!(err.starts_with("link.hops[0].queue.aqm:"), "{err}");
        }
        let codel = direction("rate = \"10mbit\"\nqueue = { limit = \"100pkt\", aqm = \"codel\" }");
        assert!(Tandem::new(&[codel], 1).is_ok());
    }

    /// A hop's queue overflows on its own: 4 packets of room at 1 Mbit/s.
    #[test]
    fn a_hops_queue_drops_what_it_cannot_hold() {
        let hops = [direction("rate = \"1mbit\"\nqueue = { limit = \"4pkt\" }")];
        let mut t = Tandem::new(&hops, 1).unwrap();
        let mut pkt = vec![0x45u8; 1500];
        let fates: Vec<_> = (0..6).map(|_| t.release_ns(0, &mut pkt, 0)).collect();
        assert!(fates[..4].iter().all(|f| f.is_ok()), "{fates:?}");
        assert_eq!(fates[4], Err(DropReason::QueueFull));
        assert_eq!(fates[5], Err(DropReason::QueueFull));
    }

    #[test]
    fn aggregation_in_a_hop_is_refused() {
        let (field, msg) =
            check_hop(&direction("ack_aggregation = { interval = \"1ms\" }")).unwrap_err();
        assert_eq!(field, "ack_aggregation");
        assert!(msg.contains("rate, delay, queue"), "{msg}");
        check_hop(&direction("rate = \"1mbit\"\nloss = 0.1")).unwrap();
    }
}
