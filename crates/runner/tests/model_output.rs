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
    assert_eq!(head, netsim::MODEL_COLUMNS);
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    // Only flow 0 (bbr3), at every sample of flows.csv: 8 s / 50 ms.
    assert!(rows.iter().all(|row| &row[col("flow")] == "0"));
    assert_eq!(rows.len(), 160, "one row per sample");
    // The shallow buffer overflows: some loss round sets
    // inflight_longterm, and the cwnd never exceeds a set bound by more
    // than the model allows (the bound caps it).
    let set: Vec<&csv::StringRecord> = rows
        .iter()
        .filter(|row| !row[col("inflight_longterm_bytes")].is_empty())
        .collect();
    assert!(
        !set.is_empty(),
        "a loss in a 33-packet buffer sets inflight_longterm"
    );
    assert!(rows.iter().any(|row| &row[col("loss_in_round")] == "1"));
    for row in &set {
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
