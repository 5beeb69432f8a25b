//! `[flow.access]`, `[[link.hops]]` with a flow's `hops`, and
//! `delay_schedule`: read into the simulation, sweepable, and refused
//! clearly when wrong.

use std::path::Path;

fn parse(src: &str) -> Result<scenario::Scenario, scenario::ScenarioError> {
    scenario::parse(src, "p.toml", Path::new("."), Path::new("p.toml"))
}

const HEAD: &str = "duration = \"1s\"\n[link.forward]\nrate = \"10mbit\"\ndelay = \"5ms\"\n";

#[test]
fn access_links_take_the_link_keys_each_way() {
    let s = parse(&format!(
        "{HEAD}[[flow]]\nalgorithm = \"bbr\"\n[flow.access.forward]\nrate = \"2mbit\"\ndelay = \"7ms\"\nloss = 0.01\n[flow.access.reverse]\ndelay = \"7ms\"\nack_aggregation = {{ interval = \"4ms\" }}\n[[flow]]\nalgorithm = \"cubic\"\n"
    ))
    .unwrap();
    let f = &s.runs[0].config.flows;
    let fwd = f[0].access_forward.as_ref().unwrap();
    assert_eq!(fwd.direction.rate, link::RateSchedule::Constant(2e6));
    assert_eq!(fwd.direction.delay_ns, 7_000_000);
    assert!(fwd.direction.loss.is_some());
    let rev = f[0].access_reverse.as_ref().unwrap();
    assert_eq!(
        rev.direction.aggregation,
        Some(link::AggregationConfig::Interval(4_000_000))
    );
    // The other flow has none: straight into the bottleneck.
    assert!(f[1].access_forward.is_none() && f[1].access_reverse.is_none());
    assert_eq!(f[1].hops, None);
}

#[test]
fn hops_in_series_and_a_flows_run_of_them() {
    let s = parse(&format!(
        "{HEAD}[[link.hops]]\nrate = \"5mbit\"\ndelay = \"3ms\"\n[[link.hops]]\nrate = \"8mbit\"\n[[flow]]\nalgorithm = \"bbr\"\nhops = [0, 1, 2]\n[[flow]]\nalgorithm = \"bbr\"\nhops = [1, 2]\n[[flow]]\nalgorithm = \"bbr\"\n[sweep]\n\"link.hops.0.delay\" = [\"3ms\", \"30ms\"]\n"
    ))
    .unwrap();
    assert_eq!(s.runs.len(), 2);
    let c = &s.runs[1].config;
    assert_eq!(c.topology.hops.len(), 2);
    assert_eq!(c.topology.hops[0].direction.delay_ns, 30_000_000);
    assert_eq!(
        c.topology.hops[1].direction.rate,
        link::RateSchedule::Constant(8e6)
    );
    assert_eq!(c.flows[0].hops, Some((0, 2)));
    assert_eq!(c.flows[1].hops, Some((1, 2)));
    // No `hops`: every hop.
    assert_eq!(c.flows[2].hops, None);
}

#[test]
fn bad_hops_say_what_is_allowed() {
    let hop = "[[link.hops]]\nrate = \"5mbit\"\n";
    for (extra, flow, want) in [
        (hop, "hops = [0, 2]", "hop 2 does not exist"),
        (hop, "hops = [1, 0]", "not consecutive and ascending"),
        (hop, "hops = []", "empty"),
        (hop, "hops = [-1]", "hop -1 does not exist"),
        ("", "hops = [1]", "the path has one hop"),
    ] {
        let e = parse(&format!(
            "{HEAD}{extra}[[flow]]\nalgorithm = \"bbr\"\n{flow}\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("flow[0].hops") && e.contains(want),
            "{flow}: {e}"
        );
    }
    // A flow whose hops have no rate would send without bound.
    let e = parse(&format!(
        "{HEAD}[[link.hops]]\ndelay = \"1ms\"\n[[flow]]\nalgorithm = \"bbr\"\nhops = [1]\n"
    ))
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("flow[0].hops") && e.contains("no link with a rate"),
        "{e}"
    );
    let e = parse(&format!(
        "{HEAD}[[link.hops]]\nrate = \"5mbt\"\n[[flow]]\nalgorithm = \"bbr\"\n"
    ))
    .unwrap_err()
    .to_string();
    assert!(e.contains("p.toml:6:") && e.contains("5mbt"), "{e}");
    let many = "[[link.hops]]\nrate = \"5mbit\"\n".repeat(16);
    let e = parse(&format!("{HEAD}{many}[[flow]]\nalgorithm = \"bbr\"\n"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("link.hops") && e.contains("allowed up to 15"),
        "{e}"
    );
}

#[test]
fn delay_schedules_replace_delay_and_are_checked() {
    let s = parse(
        "duration = \"1s\"\n[link.forward]\nrate = \"10mbit\"\ndelay_schedule = [{ at = \"0s\", delay = \"20ms\" }, { at = \"10s\", delay = \"80ms\" }]\n[link.reverse]\ndelay_schedule = { every = \"15s\", values = [\"25ms\", \"40ms\"] }\n[[flow]]\nalgorithm = \"bbr\"\n",
    )
    .unwrap();
    let c = &s.runs[0].config;
    assert_eq!(
        c.topology.forward_delay_schedule,
        Some(link::DelaySchedule::in_order(link::DelayShape::Steps(
            vec![(0, 20_000_000), (10_000_000_000, 80_000_000)]
        )))
    );
    assert_eq!(
        c.topology.reverse_delay_schedule,
        Some(link::DelaySchedule::in_order(link::DelayShape::Periodic {
            every_ns: 15_000_000_000,
            values: vec![25_000_000, 40_000_000]
        }))
    );
    let e = parse(
        "duration = \"1s\"\n[link.forward]\nrate = \"10mbit\"\ndelay = \"5ms\"\ndelay_schedule = [{ at = \"0s\", delay = \"20ms\" }]\n[[flow]]\nalgorithm = \"bbr\"\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("link.forward.delay_schedule") && e.contains("not both"),
        "{e}"
    );
    let e = parse(
        "duration = \"1s\"\n[link.forward]\nrate = \"10mbit\"\ndelay_schedule = [{ at = \"1s\", delay = \"20ms\" }]\n[[flow]]\nalgorithm = \"bbr\"\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("p.toml:4:") && e.contains("first step must be at"),
        "{e}"
    );
    // Sweepable: the whole schedule is a value.
    let s = parse(
        "duration = \"1s\"\n[link.forward]\nrate = \"10mbit\"\n[[flow]]\nalgorithm = \"bbr\"\n[sweep]\n\"link.forward.delay_schedule\" = [[{ at = \"0s\", delay = \"20ms\" }], { every = \"5s\", values = [\"10ms\", \"30ms\"] }]\n",
    )
    .unwrap();
    assert_eq!(s.runs.len(), 2);
    assert!(matches!(
        s.runs[1].config.topology.forward_delay_schedule,
        Some(link::DelaySchedule {
            shape: link::DelayShape::Periodic { .. },
            ..
        })
    ));
}

#[test]
fn the_emulators_port_rules_point_the_simulator_to_access_links() {
    let e = parse(&format!(
        "{HEAD}[[link.ports]]\nport = 5201\n[[flow]]\nalgorithm = \"bbr\"\n"
    ))
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("link.ports") && e.contains("[flow.access.forward]"),
        "{e}"
    );
}

/// Every scenario under scenarios/ that uses the new keys loads.
#[test]
fn the_example_scenarios_load() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    for name in ["parking-lot.toml", "route-change.toml"] {
        let s = scenario::load(&root.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!s.runs.is_empty(), "{name}");
    }
}
