//! `bbrlab bench`'s simulator benchmark (the command's `--transport`
//! part is the binary's own).
//!
//! One BBR flow over 100 Mbit/s with a 40 ms RTT and a 2-BDP drop-tail
//! buffer, simulated for 60 s by default. Reports simulated packets and
//! events per wall-clock second. The baseline in the same run is the
//! identical scenario with CUBIC, so the figures can be compared as a ratio
//! on a machine whose speed drifts. BBRv3 (`bbr3`) runs the same path, and
//! is reported as its own ratio against the same CUBIC run.

use scenario::builder::{Flow, Queue, ScenarioBuilder};
use std::path::Path;
use std::time::{Duration, Instant};

/// C2's path: 10 Gbit/s, 100 ms RTT, 1 % random loss, a 1.2-BDP buffer.
fn large_path(algorithm: &str) -> String {
    one_flow(algorithm, 10e9, 100, 100_000, Some(0.01))
        .duration(Duration::from_secs(30))
        .to_toml()
}

/// One flow of `algorithm` over `rate` bit/s, an RTT of `rtt_ms` split
/// evenly and a `queue`-packet buffer, without time series (what the
/// benchmark times is the simulation).
fn one_flow(
    algorithm: &str,
    rate: f64,
    rtt_ms: u64,
    queue: u64,
    loss: Option<f64>,
) -> ScenarioBuilder {
    let half = Duration::from_millis(rtt_ms / 2);
    ScenarioBuilder::bottleneck(rate, half, Queue::packets(queue), loss)
        .sample_interval(Duration::ZERO)
        .flow(Flow::new(algorithm))
}

/// The standard dumbbell: 100 Mbit/s, 40 ms, a 2-BDP (667-packet) buffer.
fn dumbbell(algorithm: &str, seconds: u64) -> String {
    one_flow(algorithm, 100e6, 40, 667, None)
        .duration(Duration::from_secs(seconds))
        .to_toml()
}

/// Simulated seconds for a run of at least `min_wall` wall-clock seconds,
/// from a trial of `seconds` that took `wall`: scaled up with a tenth to
/// spare, never below `seconds`, at most an hour.
fn seconds_for(seconds: u64, wall: f64, min_wall: f64) -> u64 {
    if wall >= min_wall {
        return seconds;
    }
    let scale = min_wall * 1.1 / wall.max(1e-6);
    ((seconds as f64 * scale).ceil() as u64).clamp(seconds, 3600)
}

/// One simulation of the dumbbell with `algorithm` for `seconds`.
struct Sample {
    wall: f64,
    summary: netsim::Summary,
}

fn simulate_dumbbell(algorithm: &str, seconds: u64) -> Result<Sample, String> {
    let text = dumbbell(algorithm, seconds);
    let sc = scenario::parse(&text, "<bench>", Path::new("."), Path::new("bench.toml"))
        .map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    let summary =
        netsim::run(&sc.runs[0].config, &mut netsim::NoRecorder).map_err(|e| e.to_string())?;
    Ok(Sample {
        wall: t0.elapsed().as_secs_f64(),
        summary,
    })
}

/// Runs the benchmark and prints its figures: `reps` rounds of bbr, cubic
/// and bbr3 in turn (so a machine's drift falls on all three alike), each
/// simulation long enough to take `min_wall` seconds, then the median and
/// range of each rate and of the per-round ratios.
pub fn run(seconds: u64, large: bool, reps: u32, min_wall: f64) -> Result<(), String> {
    if seconds == 0 || seconds > 3600 {
        return Err(format!("--seconds {seconds}: allowed 1 to 3600"));
    }
    if reps == 0 || reps > 50 {
        return Err(format!("--reps {reps}: allowed 1 to 50"));
    }
    if !(0.0..=600.0).contains(&min_wall) {
        return Err(format!("--min-wall {min_wall}: allowed 0 to 600 seconds"));
    }
    // bbr3 last, so the bbr/cubic pair keeps the order (and the cache
    // state) it had before bbr3 existed.
    let algorithms = ["bbr", "cubic", "bbr3"];
    // A trial of the slowest algorithm fixes the simulated time: the
    // same for all three, so their rates compare.
    let trial = simulate_dumbbell("bbr3", seconds)?;
    let seconds = seconds_for(seconds, trial.wall, min_wall);
    println!(
        "dumbbell: 100 Mbit/s, 40 ms RTT, 667-packet buffer, {seconds} s simulated per run \
         (each at least {min_wall} s of wall time), one flow; {reps} round(s) of {}",
        algorithms.join(", ")
    );
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); algorithms.len()];
    for round in 1..=reps {
        for (i, alg) in algorithms.iter().enumerate() {
            let Sample { wall, summary } = simulate_dumbbell(alg, seconds)?;
            let pps = summary.packets_simulated as f64 / wall;
            let all = (summary.packets_simulated + summary.ack_packets_simulated) as f64 / wall;
            println!(
                "round {round}/{reps} {alg:<6} {:>9} data + {:>9} ACK packets, {:>9} events in {wall:.3} s: \
                 {:.2} M data packets/s, {:.2} M packets/s (data+ACK), {:.2} M events/s, goodput {:.1} Mbit/s",
                summary.packets_simulated,
                summary.ack_packets_simulated,
                summary.events,
                pps / 1e6,
                all / 1e6,
                summary.events as f64 / wall / 1e6,
                summary.flows[0].goodput_bps / 1e6
            );
            rates[i].push(pps);
        }
    }
    for (alg, r) in algorithms.iter().zip(&rates) {
        let (m, lo, hi) = stats::median_and_range(r);
        println!(
            "{alg:<6} median {:.2} M data packets/s (range {:.2}–{:.2}, {} runs)",
            m / 1e6,
            lo / 1e6,
            hi / 1e6,
            r.len()
        );
    }
    for (i, name) in [(0, "bbr/cubic"), (2, "bbr3/cubic")] {
        let ratios: Vec<f64> = rates[i].iter().zip(&rates[1]).map(|(a, b)| a / b).collect();
        let (m, lo, hi) = stats::median_and_range(&ratios);
        println!("{name} speed ratio: median {m:.2} (range {lo:.2}–{hi:.2}, per round)");
    }
    if large {
        let before = hostfacts::peak_rss_kib();
        let sc = scenario::parse(
            &large_path("bbr"),
            "<bench>",
            Path::new("."),
            Path::new("bench.toml"),
        )
        .map_err(|e| e.to_string())?;
        let t0 = Instant::now();
        let summary =
            netsim::run(&sc.runs[0].config, &mut netsim::NoRecorder).map_err(|e| e.to_string())?;
        let wall = t0.elapsed().as_secs_f64();
        let kib = |v: Option<u64>| {
            v.map_or("unknown".to_string(), |k| {
                format!("{:.1} MiB", k as f64 / 1024.0)
            })
        };
        println!(
            "C2 path (10 Gbit/s, 100 ms, 1 % loss, 30 s, bbr): {} data packets in {wall:.2} s ({:.2} M/s), \
             goodput {:.0} Mbit/s; peak RSS before {} after {}",
            summary.packets_simulated,
            summary.packets_simulated as f64 / wall / 1e6,
            summary.flows[0].goodput_bps / 1e6,
            kib(before),
            kib(hostfacts::peak_rss_kib()),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_trial_is_scaled_to_the_wall_time_wanted() {
        // 10 s simulated in 0.1 s: 2 s of wall time needs 220 s.
        assert_eq!(seconds_for(10, 0.1, 2.0), 220);
        // Already long enough, or no minimum: unchanged.
        assert_eq!(seconds_for(10, 3.0, 2.0), 10);
        assert_eq!(seconds_for(10, 0.1, 0.0), 10);
        // Never more than an hour.
        assert_eq!(seconds_for(600, 0.001, 2.0), 3600);
    }
}
