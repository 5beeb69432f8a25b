//! Profiling aid: one of the guard's simulations, once, for Callgrind or
//! perf. `cargo run --release -p speed-guard --example profile_sim --
//! one-flow 0` (a scenario of `benches/scenarios` and its run index).
fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "one-flow".into());
    let index = args.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let sim = speed_guard::load(&name, index);
    println!("{} packets", speed_guard::simulate(&sim));
}
