//! bbrlab's placeholder main job until the simulator lands (issue 3): every
//! algorithm over the scripted bottleneck used by the tests, on C3's path
//! (10 Mbit/s, 40 ms RTT, 1000-packet drop-tail buffer), printing goodput,
//! RTT and loss side by side.
//!
//! `cargo run --release -p congestion --example bottleneck -- [seconds]`

#[path = "../tests/support/mod.rs"]
mod support;

use congestion::{Algorithm, Config};
use support::{run_path, Path, SEC};

fn main() {
    let secs: u64 = match std::env::args().nth(1) {
        None => 30,
        Some(s) => {
            match s.parse() {
                Ok(v) if (1..=3600).contains(&v) => v,
                _ => {
                    eprintln!("error: duration must be a whole number of seconds from 1 to 3600, got `{s}`");
                    std::process::exit(2);
                }
            }
        }
    };
    let path = Path::new(10.0, 40, 1000);
    println!("path: 10 Mbit/s, 40 ms RTT, 1000-packet drop-tail buffer, {secs} s; steady state from {} s", secs / 4);
    println!(
        "{:<11} {:>14} {:>16} {:>13} {:>8}",
        "algorithm", "goodput Mbit/s", "median RTT ms", "p95 RTT ms", "loss %"
    );
    for alg in Algorithm::ALL {
        let run = run_path(&path, &Config::new(alg), secs * SEC);
        let (from, to) = (secs * SEC / 4, secs * SEC);
        let mut rtts: Vec<u64> = run.window(from, to).map(|r| r.rtt_ns).collect();
        rtts.sort_unstable();
        let pct = |p: f64| {
            rtts.get(((rtts.len() as f64 - 1.0) * p) as usize)
                .map_or(f64::NAN, |&v| v as f64 / 1e6)
        };
        println!(
            "{:<11} {:>14.2} {:>16.1} {:>13.1} {:>8.3}",
            alg.name(),
            run.goodput_bps(from, to) / 1e6,
            pct(0.5),
            pct(0.95),
            100.0 * run.loss_rate(0, secs * SEC)
        );
    }
}
