//! Live progress of parallel simulation runs (`bbrlab sim` sweeps and
//! `bbrlab reproduce`).
//!
//! A count of finished runs says nothing while a long run is under way,
//! and the message used to name the run started last, not the one holding
//! everything up. So each worker's run reports its simulated time as it
//! goes ([`SimClock`], advanced by [`ClockRecorder`] from the samples the
//! simulator writes), the [`Board`] turns that into a fraction of the
//! run's simulated duration and an ETA from the wall time spent so far,
//! and the display shows one line per running run plus an overall line
//! naming the slowest (the longest ETA).
//!
//! The board's arithmetic takes the current instant as an argument, so it
//! is tested without waiting on the clock.

use netsim::{FlowSample, LinkSample, Recorder};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Simulated time reached by one run, shared between the worker that runs
/// it (which advances it) and the display (which reads it).
#[derive(Clone, Default)]
pub struct SimClock(Arc<AtomicU64>);

impl SimClock {
    /// Records that the simulation has reached `t_ns`.
    pub fn advance(&self, t_ns: u64) {
        self.0.fetch_max(t_ns, Ordering::Relaxed);
    }

    /// The simulated time reached so far, ns.
    pub fn now_ns(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// A [`Recorder`] that passes every sample on to `inner` and advances a
/// [`SimClock`] to the sample's time: the simulator reports its progress
/// through the samples it already writes (every `sample_interval`), so no
/// hook in the engine's hot loop is needed.
pub struct ClockRecorder<'a, R: Recorder> {
    /// Where the samples go.
    pub inner: R,
    /// The clock to advance.
    pub clock: &'a SimClock,
}

impl<R: Recorder> Recorder for ClockRecorder<'_, R> {
    fn flow_sample(&mut self, s: &FlowSample) -> io::Result<()> {
        self.clock.advance(s.t_ns);
        self.inner.flow_sample(s)
    }
    fn link_sample(&mut self, s: &LinkSample) -> io::Result<()> {
        self.clock.advance(s.t_ns);
        self.inner.link_sample(s)
    }
    fn flow_completed(&mut self, r: &netsim::FctRecord) -> io::Result<()> {
        self.inner.flow_completed(r)
    }
    fn model_sample(&mut self, s: &netsim::ModelSample) -> io::Result<()> {
        self.inner.model_sample(s)
    }
    fn heartbeat(&mut self, t_ns: u64) -> io::Result<()> {
        self.inner.heartbeat(t_ns)
    }
    fn wants_packets(&self) -> bool {
        self.inner.wants_packets()
    }
    fn packet(&mut self, p: &netsim::PacketRecord) -> io::Result<()> {
        self.inner.packet(p)
    }
}

/// One running run as of a moment.
#[derive(Clone, Debug, PartialEq)]
pub struct RunStatus {
    /// What to call it (e.g. `run-0003` or `C2 run 0`).
    pub label: String,
    /// Simulated time reached, ns (0 until its first sample).
    pub sim_ns: u64,
    /// Simulated duration it runs for, ns.
    pub duration_ns: u64,
    /// Wall time since it started.
    pub elapsed: Duration,
}

impl RunStatus {
    /// Fraction of the simulated duration done, 0..=1.
    pub fn fraction(&self) -> f64 {
        if self.duration_ns == 0 {
            return 0.0;
        }
        (self.sim_ns as f64 / self.duration_ns as f64).clamp(0.0, 1.0)
    }

    /// Wall time still to go, assuming the rest simulates as fast as what
    /// is done; `None` before any simulated time has been reported.
    pub fn eta(&self) -> Option<Duration> {
        let f = self.fraction();
        (f > 0.0).then(|| self.elapsed.mul_f64((1.0 - f) / f))
    }

    /// How long this run is still expected to hold things up: its ETA,
    /// or (with no simulated time yet) the wall time it has already taken,
    /// a lower bound that grows while it reports nothing.
    fn holdup(&self) -> Duration {
        self.eta().unwrap_or(self.elapsed)
    }

    /// One line: label, simulated time against the duration, ETA.
    pub fn describe(&self) -> String {
        let secs = |ns: u64| ns as f64 / 1e9;
        match self.eta() {
            Some(eta) => format!(
                "{}: {:.1} of {:.1} s simulated ({:.0} %), ETA {}",
                self.label,
                secs(self.sim_ns),
                secs(self.duration_ns),
                100.0 * self.fraction(),
                clock_time(eta)
            ),
            None => format!(
                "{}: starting ({:.1} s to simulate, {} so far)",
                self.label,
                secs(self.duration_ns),
                clock_time(self.elapsed)
            ),
        }
    }
}

/// `1h02m03s`, `2m03s` or `3s`.
fn clock_time(d: Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s:02}s"),
        (h, m, s) => format!("{h}h{m:02}m{s:02}s"),
    }
}

/// Of `runs`, the index of the one expected to finish last (the longest
/// ETA; a run that has reported no simulated time ranks by the time it
/// has taken so far).
pub fn slowest(runs: &[RunStatus]) -> Option<usize> {
    runs.iter()
        .enumerate()
        .max_by_key(|(_, r)| r.holdup())
        .map(|(i, _)| i)
}

/// What one worker is running.
struct Active {
    label: String,
    duration_ns: u64,
    started: Instant,
    clock: SimClock,
}

/// The runs under way, one slot per worker.
pub struct Board {
    slots: Mutex<Vec<Option<Active>>>,
}

impl Board {
    /// A board for `workers` workers, all idle.
    pub fn new(workers: usize) -> Board {
        Board {
            slots: Mutex::new((0..workers).map(|_| None).collect()),
        }
    }

    /// Worker `w` starts a run of `duration_ns` simulated at `now`; returns
    /// the clock it advances.
    pub fn start(&self, w: usize, label: String, duration_ns: u64, now: Instant) -> SimClock {
        let clock = SimClock::default();
        self.lock()[w] = Some(Active {
            label,
            duration_ns,
            started: now,
            clock: clock.clone(),
        });
        clock
    }

    /// Worker `w` has finished its run.
    pub fn finish(&self, w: usize) {
        self.lock()[w] = None;
    }

    /// Each worker's run as of `now` (`None` for an idle worker).
    pub fn snapshot(&self, now: Instant) -> Vec<Option<RunStatus>> {
        self.lock()
            .iter()
            .map(|s| {
                s.as_ref().map(|a| RunStatus {
                    label: a.label.clone(),
                    sim_ns: a.clock.now_ns(),
                    duration_ns: a.duration_ns,
                    elapsed: now.saturating_duration_since(a.started),
                })
            })
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Option<Active>>> {
        // A worker that panicked left consistent slots (plain stores).
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(label: &str, sim_s: f64, dur_s: f64, elapsed_s: f64) -> RunStatus {
        RunStatus {
            label: label.into(),
            sim_ns: (sim_s * 1e9) as u64,
            duration_ns: (dur_s * 1e9) as u64,
            elapsed: Duration::from_secs_f64(elapsed_s),
        }
    }

    #[test]
    fn fraction_and_eta_come_from_simulated_time() {
        // A quarter done in 10 s: 30 s to go.
        let r = status("C2 run 0", 7.5, 30.0, 10.0);
        assert_eq!(r.fraction(), 0.25);
        assert_eq!(r.eta(), Some(Duration::from_secs(30)));
        assert_eq!(
            r.describe(),
            "C2 run 0: 7.5 of 30.0 s simulated (25 %), ETA 30s"
        );
        // Nothing reported yet: no ETA, and it says so.
        let r = status("run-0001", 0.0, 5.0, 2.0);
        assert_eq!(r.eta(), None);
        assert_eq!(
            r.describe(),
            "run-0001: starting (5.0 s to simulate, 2s so far)"
        );
        // Done, or past the end: no time left; a zero duration is safe.
        assert_eq!(status("x", 6.0, 5.0, 4.0).eta(), Some(Duration::ZERO));
        assert_eq!(status("x", 0.0, 0.0, 4.0).eta(), None);
        assert_eq!(clock_time(Duration::from_secs(3723)), "1h02m03s");
        assert_eq!(clock_time(Duration::from_secs(63)), "1m03s");
    }

    #[test]
    fn the_slowest_run_is_named_not_the_last_started() {
        let runs = [
            // Started first, long: 90 % to go after 60 s → 540 s left.
            status("C2 run 0", 3.0, 30.0, 60.0),
            // Started last, nearly done.
            status("C1 run 7", 9.0, 10.0, 1.0),
            // Just started, nothing reported.
            status("C1 run 8", 0.0, 10.0, 0.1),
        ];
        assert_eq!(slowest(&runs), Some(0));
        // A run that never reports ranks by the time it has taken.
        let silent = [status("a", 5.0, 10.0, 5.0), status("b", 0.0, 10.0, 20.0)];
        assert_eq!(slowest(&silent), Some(1));
        assert_eq!(slowest(&[]), None);
    }

    #[test]
    fn the_board_tracks_each_workers_run_through_its_samples() {
        let board = Board::new(2);
        let t0 = Instant::now();
        let clock = board.start(1, "run-0004".into(), 4_000_000_000, t0);
        assert_eq!(
            board.snapshot(t0),
            vec![None, Some(status("run-0004", 0.0, 4.0, 0.0))]
        );
        // The simulator's samples advance the clock through the recorder.
        let mut rec = ClockRecorder {
            inner: netsim::MemoryRecorder::default(),
            clock: &clock,
        };
        let link = LinkSample {
            t_ns: 1_000_000_000,
            direction: "forward",
            queue_packets: 0,
            queue_bytes: 0,
            queue_delay_ns: 0,
            drops: 0,
            ce_marked: 0,
        };
        rec.link_sample(&link).unwrap();
        assert_eq!(rec.inner.links, vec![link]);
        let later = t0 + Duration::from_secs(3);
        let s = board.snapshot(later)[1].clone().unwrap();
        assert_eq!(s.fraction(), 0.25);
        assert_eq!(s.eta(), Some(Duration::from_secs(9)));
        // Time never runs backwards.
        clock.advance(10);
        assert_eq!(clock.now_ns(), 1_000_000_000);
        board.finish(1);
        assert_eq!(board.snapshot(later), vec![None, None]);
    }
}
