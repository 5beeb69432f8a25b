//! Why a link dropped a packet: shared by the FIFO path (`direction`) and
//! the dequeue-time disciplines (`sched`), so neither depends on the other
//! for it.

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// Random loss.
    RandomLoss,
    /// The token bucket was empty.
    Policer,
    /// The queue was full.
    QueueFull,
    /// CoDel dropped it at the head of the queue.
    Codel,
    /// The step marker dropped it: its sojourn was above the threshold and
    /// it was not ECN-capable (or the queue does not mark ECN).
    Step,
    /// FQ-CoDel's per-queue CoDel dropped it at dequeue (overflow drops
    /// from the fattest queue count as [`DropReason::QueueFull`]).
    FqCodel,
    /// PIE's early drop at enqueue.
    Pie,
    /// DualPI2 dropped a Classic packet that was not ECN-capable (or the
    /// queue does not mark ECN) with probability p'^2.
    DualPi2,
}

impl DropReason {
    /// Its name in the packet logs (the emulator's `packets.csv`, the
    /// simulator's): one spelling for both, so the two logs compare
    /// cell for cell.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::RandomLoss => "loss",
            DropReason::Policer => "policer",
            DropReason::QueueFull => "queue",
            DropReason::Codel => "codel",
            DropReason::Step => "step",
            DropReason::FqCodel => "fq_codel",
            DropReason::Pie => "pie",
            DropReason::DualPi2 => "dualpi2",
        }
    }
}
