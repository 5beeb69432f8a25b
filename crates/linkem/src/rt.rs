//! Real-time scheduling for the forwarding thread.
//!
//! On a machine whose cores are busy, a normal (CFS/EEVDF) thread that
//! sleeps until just before a release wakes when the scheduler gets round
//! to it: milliseconds late, so every packet behind it is late too. The
//! emulator's timing therefore asks for `SCHED_FIFO`, under which a woken
//! forwarder preempts normal tasks at once.
//!
//! Measured with `bbrlab emu --selftest` on the 2-core development VM
//! (release error at 100 Mbit/s under bulk TCP, both cores held busy by
//! normal-priority spinning threads, p99):
//!
//! | forwarder | p99 |
//! | --- | --- |
//! | normal thread (before) | 3–37 ms |
//! | nice −20 (the fallback) | 4.6–9.2 ms |
//! | `SCHED_FIFO`, unbounded spinning | 85–145 µs, but RT throttling fired (idle p99 5 ms) |
//! | `SCHED_FIFO` + CPU budget, no `mlockall` | 79–393 µs |
//! | `SCHED_FIFO` + CPU budget + `mlockall` | 71–111 µs busy; idle 85 µs–3 ms (halted vCPUs) |
//! | `SCHED_FIFO` + CPU budget + `mlockall` + [`LatencyRequest`] (kept) | 81–98 µs busy, 73–97 µs idle |
//!
//! CPU pinning was not tried: the above met the 200 µs goal with margin.
//!
//! Where `SCHED_FIFO` is refused (not root, no CAP_SYS_NICE, or a
//! container with no real-time budget) the thread falls back to nice −20,
//! and failing that runs as it is; each fallback is reported as a warning
//! and the emulator carries on. A real-time thread that spun without end
//! would starve the machine: the forwarding loop sleeps in `ppoll` when
//! the next release is far and caps its spinning (see
//! [`crate::forward::WaitPlanner`]), so the kernel's RT throttling is only
//! a backstop.

/// `SCHED_FIFO` priority of the forwarding thread: above every normal
/// task, below the kernel's threaded interrupt handlers (priority 50),
/// whose work (the network stack) the forwarder depends on.
pub const RT_PRIORITY: i32 = 10;

/// Holds a CPU wake-up latency request of 0 µs (PM QoS,
/// `/dev/cpu_dma_latency`) for as long as it lives, so idle CPUs poll
/// instead of halting. On this VM (cpuidle driver `haltpoll` with
/// `guest_halt_poll_ns=0`) a halted vCPU is woken by the host, and a
/// SCHED_FIFO forwarder sleeping on an otherwise idle machine then woke up
/// to milliseconds late (release error p99 85 µs–3 ms idle, two of four
/// runs near 3 ms, while ≤ 120 µs with every core busy); with the request
/// held, idle p99 was 70–97 µs. This is what `cyclictest` does; it costs
/// host CPU while the emulator runs, not guest CPU (the poll loop is the
/// idle task).
pub struct LatencyRequest {
    _file: Option<std::fs::File>,
}

impl LatencyRequest {
    /// Asks for 0 µs wake-up latency; None with a reason if refused.
    pub fn zero() -> Result<LatencyRequest, String> {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/cpu_dma_latency")
            .map_err(|e| format!("cannot open /dev/cpu_dma_latency: {e}"))?;
        f.write_all(&0i32.to_ne_bytes())
            .map_err(|e| format!("cannot write /dev/cpu_dma_latency: {e}"))?;
        Ok(LatencyRequest { _file: Some(f) })
    }

    /// A request that holds nothing (when real-time mode is off).
    pub fn none() -> LatencyRequest {
        LatencyRequest { _file: None }
    }
}

/// What the forwarding thread got.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RealtimeStatus {
    /// The scheduling the thread runs with, e.g. `SCHED_FIFO 10`,
    /// `nice -20` or `normal`.
    pub policy: String,
    /// Whether the process's memory is locked (no page-fault stalls).
    pub memory_locked: bool,
    /// Whether CPUs are kept from halting while the forwarder runs (see
    /// [`LatencyRequest`]).
    pub cpu_latency_zero: bool,
    /// One line per thing that was refused, for stderr.
    pub warnings: Vec<String>,
}

impl RealtimeStatus {
    /// True when the thread runs under `SCHED_FIFO`.
    pub fn is_fifo(&self) -> bool {
        self.policy.starts_with("SCHED_FIFO")
    }
}

fn errno_text(e: i32) -> String {
    let name = match e {
        libc::EPERM => "EPERM",
        libc::EINVAL => "EINVAL",
        libc::ENOMEM => "ENOMEM",
        libc::EAGAIN => "EAGAIN",
        _ => "",
    };
    format!("{name} {}", std::io::Error::from_raw_os_error(e))
}

/// The kernel's RT budget (`sched_rt_runtime_us` of each
/// `sched_rt_period_us`); -1 means no throttling. None if unreadable.
pub fn rt_runtime_us() -> Option<i64> {
    std::fs::read_to_string("/proc/sys/kernel/sched_rt_runtime_us")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Gives the calling thread `SCHED_FIFO` priority [`RT_PRIORITY`] (or
/// nice −20 if refused), locks the process's memory and requests zero CPU
/// wake-up latency (held until the returned [`LatencyRequest`] drops).
/// Never fails: whatever is refused becomes a warning in the status.
pub fn prepare_forwarding_thread() -> (RealtimeStatus, LatencyRequest) {
    let mut st = RealtimeStatus {
        policy: "normal".into(),
        ..RealtimeStatus::default()
    };
    let param = libc::sched_param {
        sched_priority: RT_PRIORITY,
    };
    // SAFETY: pthread_self is always valid; param outlives the call.
    let r = unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) };
    if r == 0 {
        st.policy = format!("SCHED_FIFO {RT_PRIORITY}");
        if rt_runtime_us() == Some(-1) {
            st.warnings.push(
                "kernel RT throttling is off (sched_rt_runtime_us = -1); the forwarder caps its own spinning at half a core"
                    .into(),
            );
        }
    } else {
        // SAFETY: gettid has no preconditions; setpriority with a thread id
        // changes only that thread on Linux.
        let nice = unsafe {
            let tid = libc::gettid();
            libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, -20)
        };
        if nice == 0 {
            st.policy = "nice -20".into();
            st.warnings.push(format!(
                "cannot give the forwarding thread SCHED_FIFO priority {RT_PRIORITY} ({}); running at nice -20 instead, so releases may be late on a busy machine",
                errno_text(r)
            ));
        } else {
            st.warnings.push(format!(
                "cannot give the forwarding thread SCHED_FIFO priority {RT_PRIORITY} ({}) nor nice -20 ({}); running at normal priority, so releases may be milliseconds late on a busy machine",
                errno_text(r),
                std::io::Error::last_os_error()
            ));
        }
    }
    // SAFETY: mlockall has no memory-safety preconditions.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } == 0 {
        st.memory_locked = true;
    } else {
        st.warnings.push(format!(
            "cannot lock the emulator's memory (mlockall: {}); a page fault may delay a release",
            std::io::Error::last_os_error()
        ));
    }
    let latency = match LatencyRequest::zero() {
        Ok(l) => {
            st.cpu_latency_zero = true;
            l
        }
        Err(e) => {
            st.warnings.push(format!(
                "{e}; idle CPUs may halt, and waking them can delay a release"
            ));
            LatencyRequest::none()
        }
    };
    (st, latency)
}

/// Puts the calling thread back under normal scheduling (`SCHED_OTHER`,
/// nice 0), whatever it inherited: a thread started by the forwarder
/// after it took `SCHED_FIFO` inherits that policy, and a helper that
/// writes files (the packet log's writer) must never hold a core ahead of
/// the forwarder or block the machine under it. Lowering one's own
/// priority is always permitted, so this cannot fail in practice; the
/// result is returned for the caller that wants to know.
pub fn normal_scheduling() -> Result<(), String> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pthread_self is always valid; param outlives the call.
    let r = unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_OTHER, &param) };
    if r != 0 {
        return Err(format!("cannot return to SCHED_OTHER ({})", errno_text(r)));
    }
    // SAFETY: as in prepare_forwarding_thread: only this thread changes.
    let nice = unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, 0) };
    if nice != 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EACCES) {
        return Err(format!(
            "cannot return to nice 0 ({})",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever the machine permits, the status says what the thread got
    /// and every refusal comes with a warning naming it. (Run on a thread
    /// of its own, which exits at once, so the test harness keeps its
    /// scheduling; the memory lock is process-wide and harmless here.)
    /// A thread started by a `SCHED_FIFO` forwarder inherits its policy
    /// until it calls `normal_scheduling`, and then runs as a normal
    /// thread. (Where SCHED_FIFO is refused the inheritance cannot be
    /// shown; the call must still leave the thread under SCHED_OTHER.)
    #[test]
    fn a_thread_started_by_the_forwarder_returns_to_normal_scheduling() {
        fn policy() -> i32 {
            let mut policy = 0;
            let mut param = libc::sched_param { sched_priority: 0 };
            // SAFETY: both pointers are valid for the call.
            let r = unsafe {
                libc::pthread_getschedparam(libc::pthread_self(), &mut policy, &mut param)
            };
            assert_eq!(r, 0);
            policy
        }
        let (fifo, inherited, after) = std::thread::spawn(|| {
            let (st, _latency) = prepare_forwarding_thread();
            std::thread::spawn(move || {
                let inherited = policy();
                normal_scheduling().unwrap();
                (st.is_fifo(), inherited, policy())
            })
            .join()
            .unwrap()
        })
        .join()
        .unwrap();
        if fifo {
            assert_eq!(
                inherited,
                libc::SCHED_FIFO,
                "the child did not inherit SCHED_FIFO"
            );
        }
        assert_eq!(after, libc::SCHED_OTHER);
    }

    #[test]
    fn every_refusal_is_reported() {
        let (st, latency) = std::thread::spawn(prepare_forwarding_thread)
            .join()
            .unwrap();
        drop(latency);
        assert!(
            ["SCHED_FIFO 10", "nice -20", "normal"].contains(&st.policy.as_str()),
            "{st:?}"
        );
        let warned = |what: &str| st.warnings.iter().any(|w| w.contains(what));
        if !st.is_fifo() {
            assert!(warned("SCHED_FIFO"), "{st:?}");
        }
        if !st.memory_locked {
            assert!(warned("mlockall"), "{st:?}");
        }
        if !st.cpu_latency_zero {
            assert!(warned("/dev/cpu_dma_latency"), "{st:?}");
        }
    }
}
