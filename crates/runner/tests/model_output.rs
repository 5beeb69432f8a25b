//! A run with a BBR flow writes `model.csv` (the BBR flows' model at
//! every sample, `netsim::MODEL_COLUMNS`); a run without one writes none.
//! Against CUBIC in a shallow buffer, BBRv3 loses packets, and the model
//! shows the bound that loss set, which `flows.csv` cannot.

use std::path::Path;

const TEXT: &str = r#"
name = "model"
duration = "8s"
sample_interval = "50ms"
[link.forward]
rate = "20mbit"
delay = "20ms"
queue = { limit = "33pkt" }
[link.reverse]
delay = "20ms"
[[flow]]
algorithm = "bbr3"
[[flow]]
algorithm = "cubic"
"#;

fn run(text: &str) -> tempfile::TempDir {
    let sc = scenario::parse(text, "model.toml", Path::new("."), Path::new("model.toml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    runner::sweep::run_one(&sc.name, &sc.runs[0], dir.path()).unwrap();
    dir
}

#[test]
fn a_bbr3_flow_gets_its_model_sampled_and_a_cubic_flow_none() {
    let dir = run(TEXT);
    let mut r = csv::Reader::from_path(dir.path().join("model.csv")).unwrap();
    let head: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(head, netsim::MODEL_COLUMNS.map(|c| c.name));
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    // Only flow 0 (bbr3), at every sample of flows.csv: 8 s / 50 ms.
    assert!(rows.iter().all(|row| &row[col("flow")] == "0"));
    assert_eq!(rows.len(), 160, "one row per sample");
    // The shallow buffer overflows: some loss round sets
    // inflight_longterm, and in PROBE_BW the cwnd never exceeds it (Linux
    // v3's `bbr_bound_cwnd_for_inflight_model()` caps cwnd at
    // inflight_hi in PROBE_BW, less headroom in CRUISE; STARTUP and DRAIN
    // have no such cap, so a cwnd above the bound there is the model's).
    let set: Vec<&csv::StringRecord> = rows
        .iter()
        .filter(|row| !row[col("inflight_longterm_bytes")].is_empty())
        .collect();
    assert!(
        !set.is_empty(),
        "a loss in a 33-packet buffer sets inflight_longterm"
    );
    assert!(rows.iter().any(|row| &row[col("loss_in_round")] == "1"));
    let probe_bw: Vec<&&csv::StringRecord> = set
        .iter()
        .filter(|row| row[col("mode")].starts_with("probe_bw"))
        .collect();
    assert!(
        !probe_bw.is_empty(),
        "the flow reaches PROBE_BW with a bound"
    );
    for row in probe_bw {
        let hi: u64 = row[col("inflight_longterm_bytes")].parse().unwrap();
        let cwnd: u64 = row[col("cwnd_bytes")].parse().unwrap();
        assert!(
            cwnd <= hi,
            "cwnd {cwnd} above inflight_longterm {hi}: {row:?}"
        );
    }
    assert!(rows.iter().any(|row| &row[col("full_bw_reached")] == "1"));
    // The samples' times are flows.csv's.
    let flows = std::fs::read_to_string(dir.path().join("flows.csv")).unwrap();
    let t0 = &rows[0][col("time_s")];
    assert!(flows.lines().any(|l| l.starts_with(&format!("{t0},0,"))));
}

#[test]
fn runs_without_a_bbr_flow_write_no_model() {
    let dir = run(&TEXT.replace("\"bbr3\"", "\"reno\""));
    assert!(dir.path().join("flows.csv").exists());
    assert!(!dir.path().join("model.csv").exists());
}

/// BBRv3 raises `inflight_longterm` in PROBE_UP while its cwnd, capped at
/// that bound, is full (`bbr_probe_inflight_hi_upward()`; draft-06
/// `BBRProbeInflightLongtermUpward()`). A loss sets the bound in bytes,
/// seldom a whole number of packets, and a sender sends a packet only
/// when all of it fits under cwnd, so "the cwnd is full" has to mean "no
/// room for another packet", as Linux counts it in packets
/// (`tcp_cwnd_validate()`). The path is validate's `bbr3` against `cubic`
/// in a 16-BDP buffer: CUBIC's queue overflows at about 16 s and sets
/// `bbr3`'s bound to 140,301 bytes (96.9 packets of 1,448); before the
/// fix its cwnd held 96 packets, never counted as full, and the bound
/// stayed there for the rest of the run through every PROBE_UP.
#[test]
fn bbr3_raises_inflight_longterm_in_probe_up_when_its_cwnd_is_full() {
    let text = r#"
name = "up"
duration = "30s"
sample_interval = "10ms"
[link.forward]
rate = "20Mbit"
delay = "20ms"
queue = { limit = "1067pkt" }
[link.reverse]
rate = "20Mbit"
delay = "20ms"
[[flow]]
algorithm = "bbr3"
ack = "linux"
mss = 1448
header_bytes = 52
pacing = "quantum"
start = "40ms"
[flow.bbr3]
profile = "linux-v3"
signals = "stock-kernel"
[[flow]]
algorithm = "cubic"
ack = "linux"
mss = 1448
header_bytes = 52
pacing = "off"
start = "22ms"
[flow.cubic]
hystart_variant = "linux"
"#;
    let dir = run(text);
    let mut r = csv::Reader::from_path(dir.path().join("model.csv")).unwrap();
    let head: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    let hi = |row: &csv::StringRecord| row[col("inflight_longterm_bytes")].parse::<u64>().ok();
    let first = rows
        .iter()
        .position(|r| hi(r).is_some())
        .expect("CUBIC's queue overflows and sets the bound");
    let set = hi(&rows[first]).unwrap();
    assert_ne!(
        set % 1448,
        0,
        "the bound is not a whole number of packets: {set}"
    );
    let ups = rows[first..]
        .iter()
        .filter(|r| &r[col("mode")] == "probe_bw_up")
        .count();
    assert!(ups > 0, "PROBE_UP follows");
    let most = rows[first..].iter().filter_map(hi).max().unwrap();
    assert!(
        most > set + 1448,
        "inflight_longterm never rose in PROBE_UP: set to {set}, at most {most}"
    );
}
