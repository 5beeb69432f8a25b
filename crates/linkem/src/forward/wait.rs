//! How the forwarding loop waits for its next event: spin or sleep, within
//! a CPU budget.

use super::*;

/// How the loop waits for its next event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Loop straight back (reading as it goes): the next event is too
    /// close for a sleep to wake in time.
    Spin,
    /// Sleep this long (ns), or until a packet arrives.
    Sleep(u64),
}

/// Chooses between spinning and sleeping before the next event, and caps
/// the forwarding thread's CPU use.
///
/// Spinning within `spin_ns` of a release is what makes releases exact: a
/// sleeping thread wakes tens of µs late even when idle (on a VM, a halted
/// vCPU wakes later still). But a steady stream keeps some release always
/// within reach, so unbounded, a spinning (and, with SCHED_FIFO,
/// unpreemptable) thread would hold its core for as long as traffic flows,
/// starving the programs under test; and once it takes 95 % of a core the
/// kernel's RT throttling stops it outright for the rest of the second,
/// which delays releases by milliseconds (seen in testing: p99 5 ms). So
/// within each `window_ns`, once the thread has used `max_cpu_ns` of CPU
/// (work and spinning alike) it stops spinning and only sleeps, for the
/// exact remaining wait, until the next window. With real-time priority
/// such a wake-up is late by a timer's latency, not a scheduler slice.
#[derive(Clone, Debug)]
pub struct WaitPlanner {
    spin_ns: u64,
    window_ns: u64,
    max_cpu_ns: u64,
    /// (time, thread CPU time) at the start of the current window.
    window_start: Option<(u64, u64)>,
    spinning_since: Option<u64>,
    total_spun: u64,
}

impl WaitPlanner {
    /// Spins within `spin_ns` of an event while the thread has used less
    /// than `max_cpu_ns` of CPU in the current `window_ns`.
    pub fn new(spin_ns: u64, window_ns: u64, max_cpu_ns: u64) -> WaitPlanner {
        WaitPlanner {
            spin_ns,
            window_ns: window_ns.max(1),
            max_cpu_ns,
            window_start: None,
            spinning_since: None,
            total_spun: 0,
        }
    }

    /// Decides at `now_ns` how to wait for an event at `next_ns`
    /// (`u64::MAX`: none), given the thread's CPU time so far, `cpu_ns`.
    /// Neither time may go backwards between calls.
    pub fn plan(&mut self, now_ns: u64, next_ns: u64, cpu_ns: u64) -> Wait {
        // Charge the time since the last Spin decision as spinning.
        if let Some(since) = self.spinning_since.take() {
            self.total_spun += now_ns.saturating_sub(since);
        }
        let w_cpu = match self.window_start {
            Some((t, c)) if now_ns < t + self.window_ns => c,
            _ => {
                self.window_start = Some((now_ns, cpu_ns));
                cpu_ns
            }
        };
        let wait = next_ns.saturating_sub(now_ns);
        if wait == 0 {
            // Work is due: not spinning, just looping back to do it.
            return Wait::Spin;
        }
        if wait <= self.spin_ns {
            if cpu_ns.saturating_sub(w_cpu) < self.max_cpu_ns {
                self.spinning_since = Some(now_ns);
                return Wait::Spin;
            }
            // Over budget: sleep right up to the event.
            return Wait::Sleep(wait.min(MAX_SLEEP_NS));
        }
        Wait::Sleep((wait - self.spin_ns).min(MAX_SLEEP_NS))
    }

    /// Time spent spinning so far, ns.
    pub fn total_spun_ns(&self) -> u64 {
        self.total_spun
    }
}
