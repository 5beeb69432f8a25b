//! A path `bbrlab fuzz` found that made the simulator spin at one instant:
//! three BBR flows sending 206 kB chunks every 5.2 s over a 31 Mbit/s,
//! 382 ms path with PIE, 0.6 % loss and up to 258 ms of reordering
//! jitter. A tail-loss-probe deadline passed while nothing was in flight
//! and the retransmission timer's base was also past, so the sender's
//! timer fired again at the same instant for ever (at 7.66 s). The run
//! must now complete, and an engine that does spin stops with an error
//! after `netsim::MAX_EVENTS_AT_ONE_INSTANT` events.

use std::path::Path;

const SCENARIO: &str = r#"
name = "livelock"
duration = "15293067us"
seed = 3059141107
sample_interval = "38233us"

[link.forward]
rate = "31387kbit"
delay = "191163us"
queue = { limit = "1077pkt", aqm = "pie" }
loss = 0.005994
jitter = { uniform = { min = "0us", max = "258172us" }, reorder = true }

[link.reverse]
delay = "191163us"

[[flow]]
algorithm = "bbr"
chunk_size = "205648B"
chunk_every = "5168768us"

[[flow]]
algorithm = "bbr"
start = "47791us"
chunk_size = "205648B"
chunk_every = "5168768us"

[[flow]]
algorithm = "bbr"
start = "95582us"
chunk_size = "205648B"
chunk_every = "5168768us"
"#;

#[test]
fn a_probe_deadline_past_with_nothing_in_flight_does_not_spin_the_timer() {
    let dir = tempfile::tempdir().unwrap();
    let sc = scenario::parse(SCENARIO, "l.toml", Path::new("."), Path::new("l.toml")).unwrap();
    let json = runner::sweep::run_one("livelock", &sc.runs[0], dir.path())
        .unwrap_or_else(|e| panic!("the run must complete: {e}"));
    // Every flow delivered its chunks (three each in 15.3 s) and the run
    // reached its end.
    for f in &json.flows {
        assert!(
            f.delivered_bytes >= 2 * 205_648,
            "{}: {}",
            f.flow,
            f.delivered_bytes
        );
    }
    let rows = std::fs::read_to_string(dir.path().join("flows.csv")).unwrap();
    let last: f64 = rows
        .lines()
        .last()
        .and_then(|l| l.split(',').next())
        .and_then(|t| t.parse().ok())
        .unwrap();
    assert!(last > 15.0, "the run stopped at {last} s");
}
