//! What the speed guard measures, as plain functions: the benchmark
//! (`benches/instructions.rs`) runs each under Callgrind through gungraun
//! and `scripts/speed-guard.sh` compares the instruction counts with the
//! committed baseline (`baseline.json`). Kept here, not in the benchmark,
//! so a test can check every case runs and means what it says.
//!
//! Instruction counts, not time: they repeat exactly for the same binary
//! and inputs however busy the machine is, so a 3 % rise is a real one.

use congestion::{AckEvent, AckedPacket, Algorithm, Config, Controller, Instant};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The benchmark scenarios' directory.
pub fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/scenarios")
}

/// One simulation, parsed and ready: the part the guard counts is
/// [`simulate`].
pub struct Simulation {
    config: netsim::SimConfig,
    workload: netsim::Workload,
}

/// Loads run `index` of the benchmark scenario `name` (a file in
/// [`scenarios_dir`], without `.toml`; a sweep's points are its runs).
///
/// # Panics
/// If the file does not parse or has no such run: the benchmark's own
/// inputs are broken, and there is nothing to measure.
pub fn load(name: &str, index: usize) -> Simulation {
    let path = scenarios_dir().join(format!("{name}.toml"));
    let mut sc = scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        index < sc.runs.len(),
        "{}: run {index} of {}",
        path.display(),
        sc.runs.len()
    );
    let run = sc.runs.swap_remove(index);
    Simulation {
        config: run.config,
        workload: run.workload,
    }
}

/// Runs the simulation without recording anything; returns the packets
/// simulated (data and ACK), so the work cannot be optimised away and a
/// test can see it happened.
pub fn simulate(sim: &Simulation) -> u64 {
    let summary = netsim::run_workload(&sim.config, &sim.workload, &mut netsim::NoRecorder)
        .unwrap_or_else(|e| panic!("simulation failed: {e}"));
    summary.packets_simulated + summary.ack_packets_simulated
}

/// A controller of `algorithm` with `acks` packets sent and acknowledged in
/// steady state: one send and one ACK per 120 µs (100 Mbit/s of 1,500-byte
/// packets) with 400 packets in flight, so each ACK is a delivery-rate
/// sample and a full run of the algorithm. Returns the final window.
pub fn send_and_ack(algorithm: Algorithm, acks: u64) -> u64 {
    let mut cc = Controller::new(&Config::new(algorithm), Instant::ZERO);
    let mut window = VecDeque::with_capacity(401);
    let mut now = 0u64;
    let mut acked = 0;
    while acked < acks {
        now += 120_000;
        let t = Instant::from_nanos(now);
        let in_flight = window.len() as u64 * 1500;
        window.push_back(cc.on_packet_sent(t, 1500, in_flight, false));
        if window.len() > 400 {
            let state = window.pop_front().expect("a packet in flight");
            let rtt = t.saturating_since(state.sent_time);
            let packet = [AckedPacket { bytes: 1500, state }];
            let after = window.len() as u64 * 1500;
            // Opaque, as in `congestion`'s `ack_loop`: a controller inlined
            // here must not be specialised to this loop's constant event.
            cc.on_ack(std::hint::black_box(
                &AckEvent::new(t, &packet, after + 1500, after).rtt(Some(rtt), Duration::ZERO),
            ));
            acked += 1;
        }
    }
    cc.cwnd_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every benchmark scenario parses and simulates traffic (so a broken
    /// file fails here, with the test suite, not first in the guard).
    #[test]
    fn every_scenario_runs_and_moves_packets() {
        for (name, runs) in [
            ("one-flow", 4),
            ("dumbbell-10", 1),
            ("fq-codel", 1),
            ("poisson-2000", 1),
            ("c2-10g", 1),
        ] {
            for i in 0..runs {
                let mut sim = load(name, i);
                // A tenth of the time (at least a second, ten of C2's
                // round trips) is enough to see it runs.
                sim.config.duration_ns = (sim.config.duration_ns / 10).max(1_000_000_000);
                let packets = simulate(&sim);
                assert!(packets > 100, "{name} run {i}: {packets} packets");
            }
        }
    }

    #[test]
    fn the_per_ack_loop_reaches_steady_state_for_every_algorithm() {
        for a in Algorithm::ALL {
            assert!(send_and_ack(a, 2_000) >= 4 * 1500, "{a}");
        }
    }
}
