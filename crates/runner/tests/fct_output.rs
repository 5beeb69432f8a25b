//! A run with finite flows writes `fct.csv` (the contract's columns) and
//! `summary.json`'s `"fct"`; a run without writes neither.

use std::path::Path;

const TEXT: &str = r#"
name = "fct"
duration = "6s"
sample_interval = "100ms"
[link.forward]
rate = "50mbit"
delay = "10ms"
queue = { limit = "200pkt" }
[link.reverse]
delay = "10ms"
[[flow]]
name = "bulk"
algorithm = "bbr"
[[flow]]
name = "file"
algorithm = "cubic"
size = "2MB"
start = "1s"
[[arrivals]]
name = "web"
algorithm = "cubic"
rate = 40
stop = "4s"
size = { dist = "exponential", mean = "30kB" }
[[cross]]
name = "voip"
kind = "cbr"
rate = "1mbit"
packet_size = "200B"
"#;

fn run(text: &str) -> (tempfile::TempDir, runner::output::SummaryJson) {
    let sc = scenario::parse(text, "fct.toml", Path::new("."), Path::new("fct.toml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let json = runner::sweep::run_one(&sc.name, &sc.runs[0], dir.path()).unwrap();
    (dir, json)
}

#[test]
fn finite_flows_get_fct_rows_and_bucketed_summaries() {
    let (dir, json) = run(TEXT);
    let mut r = csv::Reader::from_path(dir.path().join("fct.csv")).unwrap();
    let head: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        head,
        [
            "flow",
            "algorithm",
            "size_bytes",
            "start_s",
            "end_s",
            "fct_s",
            "ideal_s",
            "slowdown"
        ]
    );
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    let fct = json.fct.as_ref().expect("finite flows: an fct summary");
    assert_eq!(rows.len() as u64, fct.flows_completed);
    // About 40/s for 4 s plus the listed file: 161 expected, ± 4·sqrt.
    assert!(
        (fct.flows_started as f64 - 161.0).abs() < 4.0 * 161f64.sqrt(),
        "{} started",
        fct.flows_started
    );
    assert!(fct.flows_completed >= fct.flows_started - 5, "most finish");
    let bucketed: u64 = fct.buckets.iter().map(|b| b.count).sum();
    assert_eq!(bucketed, fct.flows_completed);
    assert_eq!(fct.buckets[0].label, "<=10KB");
    assert_eq!(fct.buckets[0].max_bytes, Some(10_000));
    assert_eq!(fct.buckets[3].max_bytes, None);
    let file = rows
        .iter()
        .find(|r| &r[0] == "file")
        .expect("the listed 2 MB flow");
    assert_eq!(&file[1], "cubic");
    assert_eq!(&file[2], "2000000");
    assert!(rows.iter().any(|r| r[0].starts_with("web#")));
    for row in &rows {
        let f = |i: usize| row[i].parse::<f64>().unwrap();
        // fct = end - start (to the nanosecond), slowdown = fct / ideal,
        // ideal = 20 ms + size·8/50 Mbit/s.
        assert!((f(5) - (f(4) - f(3))).abs() < 2e-9, "{row:?}");
        assert!((f(7) - f(5) / f(6)).abs() < 1e-5, "{row:?}");
        assert!((f(6) - (0.020 + f(2) * 8.0 / 50e6)).abs() < 2e-9, "{row:?}");
        assert!(f(7) >= 0.999, "{row:?}");
    }
    // Generated flows are not summary rows.
    assert_eq!(json.flows.len(), 2);
    assert_eq!(json.cross.len(), 1);
    assert_eq!(json.cross[0].name, "voip");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(j["runs"][0]["fct"]["flows_completed"], fct.flows_completed);
    assert_eq!(j["runs"][0]["fct"]["buckets"][1]["label"], "10KB-100KB");
}

#[test]
fn runs_without_finite_flows_write_no_fct() {
    let text = TEXT.split("[[flow]]\nname = \"file\"").next().unwrap();
    let (dir, json) = run(text);
    assert!(json.fct.is_none());
    assert!(json.cross.is_empty());
    assert!(!dir.path().join("fct.csv").exists());
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap())
            .unwrap();
    let run = j["runs"][0].as_object().unwrap();
    assert!(
        !run.contains_key("fct") && !run.contains_key("cross"),
        "{run:?}"
    );
}

/// The shipped example: both arrival streams start flows, most finish, and
/// the small flows' slowdown shows the queue the bulk flows keep.
#[test]
fn the_short_flows_example_runs() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/short-flows.toml");
    let sc = scenario::load(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let json = runner::sweep::run_one(&sc.name, &sc.runs[0], dir.path()).unwrap();
    let fct = json.fct.unwrap();
    // 60/s + 20/s for 16 s: 1280 expected; ± 4·sqrt(1280) = ± 143.
    assert!(
        (fct.flows_started as f64 - 1280.0).abs() < 143.0,
        "{} started",
        fct.flows_started
    );
    assert!(fct.flows_completed as f64 > 0.95 * fct.flows_started as f64);
    for b in &fct.buckets {
        eprintln!(
            "{} n={} fct p50 {:?} p99 {:?} slowdown p50 {:?} p99 {:?}",
            b.label, b.count, b.fct_p50_s, b.fct_p99_s, b.slowdown_p50, b.slowdown_p99
        );
    }
    // Flows of at most 10 kB, by hand: RPCs (320 expected) fall there
    // with P = 0.8 + 0.15 × 5000/15000 = 0.85 (the CDF file, interpolated),
    // web flows (960) with P = 1 − (8333/10000)^1.2 = 0.197 (Pareto, scale
    // = 50 kB × 0.2/1.2): 272 + 189 = 461 expected, ± 4·sqrt(461) = ± 86
    // (less the few that have not finished).
    let small = &fct.buckets[0];
    assert!(
        (small.count as f64 - 461.0).abs() < 86.0,
        "{} small flows",
        small.count
    );
    // The bulk flows keep a queue: even a one-packet flow waits in it.
    assert!(
        small.slowdown_p50.unwrap() > 1.2,
        "{:?}",
        small.slowdown_p50
    );
}
