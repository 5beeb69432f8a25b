//! Each QUIC stack's controller, named in a scenario and built by the
//! runner (`runner::stacks::attach`), runs in the simulator on bbrlab's
//! sender: on a 10 Mbit/s, 40 ms path it delivers a whole transfer,
//! intact, at ≥ 80 % of the link rate.

use std::path::Path;

const SIZE: u64 = 6_000_000;

fn run(algorithm: &str) -> netsim::FlowSummary {
    let text = format!(
        "duration = \"20s\"\nseed = 3\n[link.forward]\nrate = \"10mbit\"\ndelay = \"20ms\"\nqueue = {{ limit = \"100pkt\" }}\n[link.reverse]\ndelay = \"20ms\"\n[[flow]]\nalgorithm = \"{algorithm}\"\nsize = \"{SIZE}B\"\n"
    );
    let sc = scenario::parse(&text, "t.toml", Path::new("."), Path::new("t.toml"))
        .unwrap_or_else(|e| panic!("{algorithm}: {e}"));
    let mut rec = netsim::MemoryRecorder::default();
    let (cfg, _) = runner::stacks::attach(&sc.runs[0].config, &sc.runs[0].workload);
    let summary = netsim::run(&cfg, &mut rec).expect("simulation");
    summary.flows[0].clone()
}

fn check(algorithm: &str) {
    let f = run(algorithm);
    assert_eq!(f.algorithm, algorithm);
    assert_eq!(f.delivered_bytes, SIZE, "{algorithm}: delivered");
    assert!(f.completion_ns.is_some(), "{algorithm}: not completed");
    assert!(
        f.goodput_bps >= 0.8 * 10e6,
        "{algorithm}: goodput {:.2} Mbit/s",
        f.goodput_bps / 1e6
    );
}

#[test]
fn s2n_bbr2_fills_a_10_mbit_path_and_delivers_everything() {
    check("s2n:bbr2");
}

#[test]
fn s2n_cubic_fills_a_10_mbit_path_and_delivers_everything() {
    check("s2n:cubic");
}

#[test]
fn quinn_bbr_fills_a_10_mbit_path_and_delivers_everything() {
    check("quinn:bbr");
}

#[test]
fn quinn_cubic_fills_a_10_mbit_path_and_delivers_everything() {
    check("quinn:cubic");
}
