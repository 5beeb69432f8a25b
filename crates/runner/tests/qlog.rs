//! A run's qlog (`bbrlab sim --qlog`) read back and checked against the
//! qlog 0.3 JSON-SEQ schema's shape, and against the run's own
//! `flows.csv`: the congestion window the metrics events rebuild is the
//! one the CSV has at every sample, the states follow the mode column,
//! and the loss events count the sender's declared losses.

use serde_json::Value;
use std::path::Path;

const SCENARIO: &str = r#"
name = "qlog"
duration = "3s"
sample_interval = "20ms"
[link.forward]
rate = "10mbit"
delay = "20ms"
queue = { limit = "40pkt" }
loss = 0.01
[link.reverse]
delay = "20ms"
[[flow]]
algorithm = "bbr3"
[[flow]]
algorithm = "cubic"
start = "500ms"
"#;

/// The records of a JSON-SEQ file (RFC 7464): each is RS, JSON, LF.
fn records(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        text.starts_with('\u{1e}'),
        "a JSON-SEQ record starts with RS"
    );
    text.split('\u{1e}')
        .skip(1)
        .map(|r| {
            assert!(r.ends_with('\n'), "a record ends with LF: {r}");
            serde_json::from_str(r).unwrap_or_else(|e| panic!("{e}: {r}"))
        })
        .collect()
}

#[test]
fn each_flows_qlog_follows_the_schema_and_rebuilds_its_csv() {
    let dir = tempfile::tempdir().unwrap();
    let sc = scenario::parse(
        SCENARIO,
        "qlog.toml",
        Path::new("."),
        Path::new("qlog.toml"),
    )
    .unwrap();
    let run = &sc.runs[0];
    runner::sweep::run_one_logged(
        "qlog",
        run,
        dir.path(),
        &Default::default(),
        runner::sweep::Logs {
            qlog: true,
            packets: false,
        },
    )
    .unwrap();
    let mut csv = csv::Reader::from_path(dir.path().join("flows.csv")).unwrap();
    let h = csv.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let rows: Vec<csv::StringRecord> = csv.records().map(|r| r.unwrap()).collect();
    for flow in 0..2 {
        let recs = records(&runner::qlog::QlogWriter::path(dir.path(), flow));
        let head = &recs[0];
        assert_eq!(head["qlog_version"], "0.3");
        assert_eq!(head["qlog_format"], "JSON-SEQ");
        assert!(head["title"].as_str().unwrap().contains("qlog"));
        let trace = &head["trace"];
        assert_eq!(trace["vantage_point"]["type"], "client");
        assert_eq!(trace["common_fields"]["time_format"], "relative");
        assert_eq!(trace["title"], ["bbr3", "cubic"][flow]);

        let mut last_t = 0.0f64;
        let (mut cwnd, mut mode, mut lost) = (None::<u64>, None::<String>, 0u64);
        let mut rebuilt = Vec::new();
        for e in &recs[1..] {
            let t = e["time"].as_f64().expect("a time");
            assert!(t >= last_t, "times never go back: {t} after {last_t}");
            let data = e["data"].as_object().expect("data is an object");
            match e["name"].as_str().unwrap() {
                "recovery:metrics_updated" => {
                    assert!(!data.is_empty(), "an update updates something");
                    for (k, v) in data {
                        assert!(
                            [
                                "congestion_window",
                                "bytes_in_flight",
                                "smoothed_rtt",
                                "latest_rtt",
                                "min_rtt",
                                "pacing_rate"
                            ]
                            .contains(&k.as_str()),
                            "{k}"
                        );
                        assert!(v.as_f64().is_some_and(|x| x >= 0.0), "{k}: {v}");
                    }
                    if let Some(c) = data.get("congestion_window") {
                        cwnd = c.as_u64();
                    }
                }
                "recovery:congestion_state_updated" => {
                    assert_eq!(data.get("old").and_then(Value::as_str), mode.as_deref());
                    mode = Some(data["new"].as_str().unwrap().to_string());
                }
                "recovery:packet_lost" => lost += 1,
                other => panic!("unexpected event {other}"),
            }
            if t > last_t || rebuilt.is_empty() {
                rebuilt.push((t, cwnd, mode.clone()));
            } else if let Some(r) = rebuilt.last_mut() {
                *r = (t, cwnd, mode.clone());
            }
            last_t = t;
        }
        // At each sample time that had an event, the rebuilt window and
        // state are the CSV's.
        let mine: Vec<&csv::StringRecord> = rows
            .iter()
            .filter(|r| r[col("flow")] == *flow.to_string())
            .collect();
        let mut checked = 0;
        for (t, c, m) in &rebuilt {
            let row = mine
                .iter()
                .find(|r| (r[col("time_s")].parse::<f64>().unwrap() * 1e3 - t).abs() < 1e-6)
                .unwrap_or_else(|| panic!("no CSV row at {t} ms"));
            assert_eq!(
                c.map(|c| c.to_string()).as_deref(),
                Some(&row[col("cwnd_bytes")])
            );
            assert_eq!(m.as_deref(), Some(&row[col("mode")]));
            checked += 1;
        }
        assert!(checked > 20, "{checked} sample times checked");
        // 1 % random loss over 3 s: the sender declared losses, and each
        // is an event.
        assert!(lost > 5, "flow {flow}: {lost} packet_lost events");
        let retx: u64 = mine.last().unwrap()[col("retransmitted_packets")]
            .parse()
            .unwrap();
        assert!(
            lost + 5 >= retx,
            "flow {flow}: {lost} losses, {retx} retransmissions"
        );
    }
}
