//! `[[arrivals]]` and `[[cross]]` in scenario files.

use netsim::{ArrivalProcess, CrossKind, Periods, SizeDist};
use std::path::Path;

const BASE: &str = r#"
duration = "20s"
[link.forward]
rate = "100mbit"
delay = "10ms"
[[flow]]
algorithm = "bbr"
"#;

fn parse_in(dir: &Path, extra: &str) -> Result<scenario::Scenario, scenario::ScenarioError> {
    let text = format!("{BASE}{extra}");
    scenario::parse(&text, "w.toml", dir, Path::new("w.toml"))
}

fn parse(extra: &str) -> Result<scenario::Scenario, scenario::ScenarioError> {
    parse_in(Path::new("."), extra)
}

fn err(extra: &str) -> String {
    parse(extra).unwrap_err().to_string()
}

#[test]
fn arrivals_take_a_flow_template_a_rate_a_window_and_a_size() {
    let sc = parse(
        r#"
[[arrivals]]
name = "web"
algorithm = "cubic"
ack = "delayed"
extra_rtt = "5ms"
rate = 50
start = "2s"
stop = "12s"
size = { dist = "pareto", mean = "60kB", shape = 1.2 }
"#,
    )
    .unwrap();
    let run = &sc.runs[0];
    assert_eq!(
        run.config.flows.len(),
        1,
        "the template is not a listed flow"
    );
    let a = &run.workload.arrivals[0];
    assert_eq!(a.name, "web");
    assert_eq!(a.process, ArrivalProcess::Poisson { rate_per_s: 50.0 });
    assert_eq!(
        (a.start_ns, a.stop_ns),
        (2_000_000_000, Some(12_000_000_000))
    );
    assert_eq!(a.template.cc.algorithm, congestion::Algorithm::Cubic);
    assert_eq!(a.template.extra_rtt_ns, 5_000_000);
    // scale = mean (shape - 1) / shape = 60000 * 0.2 / 1.2.
    match a.size {
        SizeDist::Pareto { scale, shape } => {
            assert!((scale - 10_000.0).abs() < 1e-6, "{scale}");
            assert_eq!(shape, 1.2);
        }
        ref d => panic!("{d:?}"),
    }
}

#[test]
fn a_scenario_of_arrivals_alone_runs_until_the_end() {
    let text = r#"
duration = "5s"
[link.forward]
rate = "10mbit"
delay = "10ms"
[[arrivals]]
algorithm = "bbr"
rate = 10
size = { dist = "exponential", mean = "20kB" }
"#;
    let sc = scenario::parse(text, "a.toml", Path::new("."), Path::new("a.toml")).unwrap();
    let a = &sc.runs[0].workload.arrivals[0];
    assert_eq!(a.name, "arrivals-0");
    assert_eq!(a.stop_ns, Some(5_000_000_000));
    assert_eq!(a.size, SizeDist::Exponential { mean: 20_000.0 });
}

/// serde loses a key's name inside the flattened `[[arrivals]]` table: the
/// error named only `arrivals[0]` until the key was looked for.
#[test]
fn a_wrongly_typed_arrivals_key_is_named_and_located() {
    let table = |extra: &str| {
        format!("[[arrivals]]\nalgorithm = \"bbr\"\nrate = 5\nsize = {{ dist = \"fixed\", bytes = \"1kB\" }}\n{extra}")
    };
    // (the key's line in BASE + the table, the key, what is wrong)
    for (extra, key, line, want) in [
        ("timestamps = 3\n", "timestamps", 12, "expected a boolean"),
        ("name = 4\n", "name", 12, "expected a string"),
        ("pacing = true\n", "pacing", 12, "invalid type"),
        ("ecn = [1]\n", "ecn", 12, "allowed"),
    ] {
        let e = err(&table(extra));
        assert!(
            e.contains(&format!("`arrivals[0].{key}`")) && e.contains(want),
            "{extra}: {e}"
        );
        assert!(e.starts_with(&format!("w.toml:{line}:")), "{extra}: {e}");
    }
    // One of the arrival process's own keys, in the second table.
    let e = err(&format!(
        "{}[[arrivals]]\nalgorithm = \"cubic\"\nrate = \"fast\"\nsize = {{ dist = \"fixed\", bytes = \"1kB\" }}\n",
        table("")
    ));
    assert!(e.contains("`arrivals[1].rate`"), "{e}");
    assert!(e.starts_with("w.toml:14:"), "{e}");
}

#[test]
fn bad_arrivals_are_located_and_say_what_is_allowed() {
    let e = err("[[arrivals]]\nalgorithm = \"bbr\"\nrate = 5\nsize = { dist = \"fixed\", bytes = \"1kB\" }\ntypo = 3\n");
    assert!(
        e.contains("unknown field `typo`") && e.contains("w.toml:"),
        "{e}"
    );
    let e = err("[[arrivals]]\nalgorithm = \"bbr\"\nrate = 5\ncount = 3\nsize = { dist = \"fixed\", bytes = \"1kB\" }\n");
    assert!(
        e.contains("arrivals[0].count") || e.contains("`count` does not apply"),
        "{e}"
    );
    let e = err("[[arrivals]]\nalgorithm = \"bbr\"\nrate = -1\nsize = { dist = \"fixed\", bytes = \"1kB\" }\n");
    assert!(
        e.contains("arrivals[0].rate") && e.contains("positive"),
        "{e}"
    );
    let e = err("[[arrivals]]\nalgorithm = \"bbr\"\nrate = 1e6\nsize = { dist = \"fixed\", bytes = \"1kB\" }\n");
    assert!(e.contains("limit is 200000"), "{e}");
    let e = err("[[arrivals]]\nalgorithm = \"bbr\"\nrate = 5\nsize = { dist = \"pareto\", mean = \"10kB\", shape = 0.9 }\n");
    assert!(e.contains("no mean") && e.contains("scale"), "{e}");
    let e = err("[[arrivals]]\nalgorithm = \"bbr\"\nrate = 5\nsize = { dist = \"pareto\", mean = \"10kB\", scale = \"1kB\", shape = 1.5 }\n");
    assert!(e.contains("exactly one of `mean` and `scale`"), "{e}");
    let e = err("[[arrivals]]\nalgorithm = \"bbr\"\nrate = 5\nsize = { dist = \"zipf\" }\n");
    assert!(e.contains("zipf") && e.contains("w.toml:"), "{e}");
    let e = err("[[arrivals]]\nalgorithm = \"bbr\"\nrate = 5\nsize = { dist = \"fixed\", bytes = \"1kB\" }\nmss = 20\n");
    assert!(
        e.contains("arrivals[0].mss") && e.contains("500 to 9000"),
        "{e}"
    );
    let e = err("[[arrivals]]\nalgorithm = \"bbr\"\nrate = 5\nsize = { dist = \"fixed\", bytes = \"1kB\" }\nmss_change = { at = \"1s\", mss = 1200 }\n");
    assert!(
        e.contains("arrivals[0].mss_change") && e.contains("does not apply to arrivals"),
        "{e}"
    );
}

#[test]
fn cdf_files_are_read_and_checked_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("good.csv"),
        "# size_bytes,cumulative_probability\n1000,0.5\n10000, 0.9\n100000,1\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("down.csv"),
        "1000,0.5\n# note\n900,0.9\n2000,1\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("short.csv"), "1000,0.5\n2000,0.9\n").unwrap();
    std::fs::write(dir.path().join("text.csv"), "1000,0.5\nlots,1\n").unwrap();
    let with = |file: &str| {
        parse_in(
            dir.path(),
            &format!("[[arrivals]]\nalgorithm = \"bbr\"\nrate = 5\nsize = {{ dist = \"cdf\", file = \"{file}\" }}\n"),
        )
    };
    let sc = with("good.csv").unwrap();
    let SizeDist::Cdf(c) = &sc.runs[0].workload.arrivals[0].size else {
        panic!("not a CDF");
    };
    assert_eq!(
        c.points(),
        &[(1000.0, 0.5), (10000.0, 0.9), (100000.0, 1.0)]
    );
    let e = with("down.csv").unwrap_err().to_string();
    assert!(
        e.contains("down.csv:3") && e.contains("must not decrease"),
        "{e}"
    );
    let e = with("short.csv").unwrap_err().to_string();
    assert!(e.contains("short.csv:2") && e.contains("end at 1"), "{e}");
    let e = with("text.csv").unwrap_err().to_string();
    assert!(
        e.contains("text.csv:2") && e.contains("`lots` is not a number"),
        "{e}"
    );
    let e = with("missing.csv").unwrap_err().to_string();
    assert!(e.contains("cannot read the CDF file"), "{e}");
}

#[test]
fn cross_traffic_is_cbr_or_on_off() {
    let sc = parse(
        r#"
[[cross]]
name = "video"
kind = "cbr"
rate = "5mbit"
packet_size = "1200B"
[[cross]]
kind = "onoff"
rate = "20mbit"
on = "200ms"
off = "800ms"
periods = "fixed"
"#,
    )
    .unwrap();
    let c = &sc.runs[0].workload.cross;
    assert_eq!(c[0].name, "video");
    assert_eq!(
        (c[0].rate_bps, c[0].packet_bytes, c[0].kind),
        (5e6, 1200, CrossKind::Cbr)
    );
    assert_eq!(c[1].name, "cross-1");
    assert_eq!(c[1].packet_bytes, 1500);
    assert_eq!(
        c[1].kind,
        CrossKind::OnOff {
            on_ns: 200_000_000,
            off_ns: 800_000_000,
            periods: Periods::Fixed
        }
    );
    let e = err("[[cross]]\nkind = \"onoff\"\nrate = \"1mbit\"\non = \"1s\"\n");
    assert!(
        e.contains("cross[0].on") && e.contains("both `on` and `off`"),
        "{e}"
    );
    let e = err("[[cross]]\nkind = \"cbr\"\nrate = \"1mbit\"\non = \"1s\"\n");
    assert!(e.contains("only to `kind = \"onoff\"`"), "{e}");
    let e = err("[[cross]]\nkind = \"burst\"\nrate = \"1mbit\"\n");
    assert!(e.contains("burst") && e.contains("cbr"), "{e}");
    let e = err("[[cross]]\nkind = \"cbr\"\nrate = \"1mbit\"\npacket_size = \"20B\"\n");
    assert!(e.contains("40 to 9000"), "{e}");
}

#[test]
fn arrival_and_cross_rates_sweep_by_name_or_for_all() {
    let sc = parse(
        r#"
[[arrivals]]
name = "web"
algorithm = "cubic"
rate = 50
size = { dist = "fixed", bytes = "10kB" }
[[arrivals]]
name = "mice"
algorithm = "bbr"
rate = 7
size = { dist = "fixed", bytes = "1kB" }
[[cross]]
name = "bg"
kind = "cbr"
rate = "1mbit"
[sweep]
"arrivals.web.rate" = [10, 20.5]
"cross.bg.rate" = ["2mbit"]
"#,
    )
    .unwrap();
    let rates: Vec<(f64, f64, f64)> = sc
        .runs
        .iter()
        .map(|r| {
            let rate = |i: usize| match r.workload.arrivals[i].process {
                ArrivalProcess::Poisson { rate_per_s } => rate_per_s,
            };
            (rate(0), rate(1), r.workload.cross[0].rate_bps)
        })
        .collect();
    assert_eq!(rates, [(10.0, 7.0, 2e6), (20.5, 7.0, 2e6)]);
    let sc = parse(
        "[[arrivals]]\nalgorithm = \"bbr\"\nrate = 5\nsize = { dist = \"fixed\", bytes = \"1kB\" }\n[sweep]\n\"arrivals.size.bytes\" = [\"2kB\", \"3kB\"]\n",
    )
    .unwrap();
    let sizes: Vec<SizeDist> = sc
        .runs
        .iter()
        .map(|r| r.workload.arrivals[0].size.clone())
        .collect();
    assert_eq!(sizes, [SizeDist::Fixed(2000), SizeDist::Fixed(3000)]);
}

/// The shipped web-search CDF (DCTCP's, as HPCC tabulates it) loads, and
/// its mean under interpolation is, segment by segment (probability ×
/// midpoint): 0.15·5k + 0.05·15k + 0.10·25k + 0.10·40k + 0.13·65k +
/// 0.07·140k + 0.10·600k + 0.10·1.5M + 0.10·3.5M + 0.07·7.5M + 0.03·20M
/// = 1,711,250 bytes.
#[test]
fn the_shipped_cdf_files_load_with_their_means() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/sizes");
    let c = scenario::workload::read_cdf(&dir.join("websearch-dctcp.csv")).unwrap();
    assert_eq!(c.points().len(), 12);
    assert!((c.mean() - 1_711_250.0).abs() < 1e-6, "{}", c.mean());
    let e = scenario::workload::read_cdf(&dir.join("example-rpc.csv")).unwrap();
    // 300·0.2 + 0.3·650 + 0.3·3000 + 0.15·12500 + 0.05·110000.
    assert!((e.mean() - 8_530.0).abs() < 1e-6, "{}", e.mean());
}

/// An arrival process or a cross source starting at or after the run's
/// end (20 s here) makes nothing; both were accepted silently before.
#[test]
fn arrivals_and_cross_starting_at_or_after_the_end_are_refused() {
    for start in ["20s", "25s"] {
        let e = err(&format!("[[arrivals]]\nalgorithm = \"bbr\"\nrate = 5\nstart = \"{start}\"\nsize = {{ dist = \"fixed\", bytes = \"1kB\" }}\n"));
        assert!(
            e.contains("arrivals[0].start")
                && e.contains("not before the run's end (20 s)")
                && e.contains("up to (not including) 20 s"),
            "{start}: {e}"
        );
        let e = err(&format!(
            "[[cross]]\nkind = \"cbr\"\nrate = \"1mbit\"\nstart = \"{start}\"\n"
        ));
        assert!(
            e.contains("cross[0].start") && e.contains("not before the run's end (20 s)"),
            "{start}: {e}"
        );
    }
    assert!(parse("[[arrivals]]\nalgorithm = \"bbr\"\nrate = 5\nstart = \"19s\"\nsize = { dist = \"fixed\", bytes = \"1kB\" }\n[[cross]]\nkind = \"cbr\"\nrate = \"1mbit\"\nstart = \"19s\"\n").is_ok());
}
