//! The emulator's path from its flags (`--rate`, `--rtt`, `--queue`,
//! `--loss` and their `--up-*`/`--down-*` forms) or a scenario's `[link]`:
//! parsed, checked (each error names the flag the user typed) and built
//! into the forwarder's configuration. The command line only collects the
//! flags; what they mean is here, below it, where a test reaches it.

use linkem::ForwardConfig;
use std::path::PathBuf;

/// Overrides for one direction of the path (`--up-*` or `--down-*`).
#[derive(Clone, Debug, Default)]
pub struct DirectionFlags {
    /// Bottleneck rate, e.g. `10mbit`, or `unlimited`.
    pub rate: Option<String>,
    /// One-way propagation delay, e.g. `20ms`.
    pub delay: Option<String>,
    /// Bottleneck queue, e.g. `100`, `100pkt` or `150kB`.
    pub queue: Option<String>,
    /// Random loss, e.g. `1%` or `0.01`.
    pub loss: Option<String>,
}

impl DirectionFlags {
    fn any(&self) -> bool {
        self.rate.is_some() || self.delay.is_some() || self.queue.is_some() || self.loss.is_some()
    }
}

/// The path, from flags or a scenario's `[link]`.
///
/// `--rate`, `--queue` and `--loss` shape both directions, and `--rtt` is
/// split evenly into the two one-way delays, because a path shaped one way
/// only is not the path the user described: a download (server → client)
/// through `--rate 50mbit` ran at 519 Mbit/s when only client → server was
/// shaped. The `up` (client → server, the link's forward direction) and
/// `down` (server → client, reverse) flags override one direction.
#[derive(Clone, Debug, Default)]
pub struct EmuPath {
    /// Scenario file whose `[link]` table to use.
    pub scenario: Option<PathBuf>,
    /// Bottleneck rate, both directions, e.g. `10mbit`; none: unlimited.
    pub rate: Option<String>,
    /// Round-trip propagation delay, split evenly between directions
    /// (default 40 ms).
    pub rtt: Option<String>,
    /// Bottleneck queue, both directions (default 100 packets).
    pub queue: Option<String>,
    /// Random loss, both directions, e.g. `1%` or `0.01`.
    pub loss: Option<String>,
    /// Client → server overrides.
    pub up: DirectionFlags,
    /// Server → client overrides.
    pub down: DirectionFlags,
    /// Seed for loss and jitter; `None`: the scenario's seed with
    /// `--scenario` (so a scenario means the same losses in the emulator
    /// as in the simulator), else 1.
    pub seed: Option<u64>,
}

/// RTT when neither `--rtt` nor both one-way delays are given.
const DEFAULT_RTT: &str = "40ms";
/// Queue when `--queue` is not given.
const DEFAULT_QUEUE: &str = "100";

/// The one-way delays (up, down) in ns: each direction half of the RTT,
/// unless `--up-delay` / `--down-delay` say otherwise; one of them given
/// takes its share out of `--rtt` (so the round trip stays `--rtt`), both
/// given make the round trip their sum.
fn one_way_delays(p: &EmuPath) -> Result<(u64, u64), String> {
    let parse =
        |flag: &str, v: &str| link::units::parse_duration_ns(v).map_err(|e| format!("{flag}: {e}"));
    let up =
        p.up.delay
            .as_deref()
            .map(|v| parse("--up-delay", v))
            .transpose()?;
    let down = p
        .down
        .delay
        .as_deref()
        .map(|v| parse("--down-delay", v))
        .transpose()?;
    if let (Some(u), Some(d)) = (up, down) {
        if p.rtt.is_some() {
            return Err(
                "give --rtt, or both --up-delay and --down-delay (whose sum is the RTT), not all three"
                    .into(),
            );
        }
        return Ok((u, d));
    }
    let rtt_text = p.rtt.as_deref().unwrap_or(DEFAULT_RTT);
    let rtt = parse("--rtt", rtt_text)?;
    let rest = |flag: &str, given: u64| {
        rtt.checked_sub(given).ok_or_else(|| {
            format!(
                "{flag} is longer than the round trip (--rtt {rtt_text}); the other direction's delay would be negative"
            )
        })
    };
    Ok(match (up, down) {
        (Some(u), None) => (u, rest("--up-delay", u)?),
        (None, Some(d)) => (rest("--down-delay", d)?, d),
        _ => (rtt / 2, rtt - rtt / 2),
    })
}

/// One direction of the flags' path, every value checked against its flag
/// first so an error names the flag the user typed.
fn flag_direction(
    p: &EmuPath,
    o: &DirectionFlags,
    side: &str,
    delay_ns: u64,
) -> Result<link::ResolvedDirection, String> {
    let pick = |own: &Option<String>, both: &Option<String>, name: &str| match (own, both) {
        (Some(v), _) => Some((format!("--{side}-{name}"), v.clone())),
        (None, Some(v)) => Some((format!("--{name}"), v.clone())),
        (None, None) => None,
    };
    let (qflag, queue) = pick(&o.queue, &p.queue, "queue")
        .unwrap_or_else(|| ("--queue".into(), DEFAULT_QUEUE.into()));
    let limit = link::units::parse_size(&queue).map_err(|e| format!("{qflag}: {e}"))?;
    if matches!(
        limit,
        link::units::Size::Packets(0) | link::units::Size::Bytes(0)
    ) {
        return Err(format!(
            "{qflag}: `{queue}`: the queue must hold at least one packet"
        ));
    }
    let mut rate_bps = None;
    if let Some((flag, r)) = pick(&o.rate, &p.rate, "rate") {
        if r != "unlimited" {
            let bps = link::units::parse_rate_bps(&r).map_err(|e| format!("{flag}: {e}"))?;
            if bps <= 0.0 {
                return Err(format!(
                    "{flag}: `{r}`: the rate must be positive (or `unlimited`)"
                ));
            }
            rate_bps = Some(bps);
        }
    }
    let mut loss = 0.0;
    if let Some((flag, l)) = pick(&o.loss, &p.loss, "loss") {
        loss = link::units::parse_probability(&l).map_err(|e| format!("{flag}: {e}"))?;
    }
    let what = if side == "up" {
        "the client → server (up) direction"
    } else {
        "the server → client (down) direction"
    };
    scenario::path::flag_direction(rate_bps, delay_ns, limit, loss)
        .map_err(|e| format!("{what}: {e}"))
}

/// Builds the forwarder's configuration.
pub fn forward_config(p: &EmuPath, sample_ns: u64) -> Result<ForwardConfig, String> {
    if let Some(file) = &p.scenario {
        if p.rate.is_some()
            || p.loss.is_some()
            || p.rtt.is_some()
            || p.queue.is_some()
            || p.up.any()
            || p.down.any()
        {
            return Err(
                "give either --scenario (its [link] table is the path) or the path flags (--rate, --rtt, --queue, --loss, --up-*, --down-*), not both"
                    .into(),
            );
        }
        let path = scenario::path::load_link(file).map_err(|e| e.to_string())?;
        let mut ports = Vec::new();
        for (k, r) in path.ports.into_iter().enumerate() {
            let rule = linkem::ports::PortPath {
                port: r.port,
                forward: r.forward,
                reverse: r.reverse,
            };
            rule.check().map_err(|(field, message)| {
                format!("{}: `link.ports.{k}.{field}`: {message}", file.display())
            })?;
            ports.push(rule);
        }
        for (k, h) in path.hops.iter().enumerate() {
            linkem::hops::check_hop(h).map_err(|(field, message)| {
                format!("{}: `link.hops.{k}.{field}`: {message}", file.display())
            })?;
        }
        return Ok(ForwardConfig {
            forward: path.forward,
            reverse: path.reverse,
            seed: p.seed.unwrap_or(path.seed),
            sample_interval_ns: sample_ns,
            realtime: true,
            ports,
            hops: path.hops,
            delay_schedules: path.delay_schedules,
        });
    }
    let (up_delay, down_delay) = one_way_delays(p)?;
    Ok(ForwardConfig {
        forward: flag_direction(p, &p.up, "up", up_delay)?,
        reverse: flag_direction(p, &p.down, "down", down_delay)?,
        seed: p.seed.unwrap_or(1),
        sample_interval_ns: sample_ns,
        realtime: true,
        ports: Vec::new(),
        hops: Vec::new(),
        delay_schedules: [None, None],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(f: impl FnOnce(&mut EmuPath)) -> EmuPath {
        let mut p = EmuPath {
            seed: Some(1),
            ..EmuPath::default()
        };
        f(&mut p);
        p
    }

    fn rate(d: &link::ResolvedDirection) -> Option<f64> {
        match d.rate {
            link::RateSchedule::Constant(r) => Some(r),
            link::RateSchedule::Unlimited => None,
            ref other => panic!("unexpected schedule {other:?}"),
        }
    }

    /// With --scenario the emulator draws losses from the scenario's seed
    /// (as the simulator does), unless --seed overrides it.
    #[test]
    fn a_scenario_brings_its_seed() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.toml");
        std::fs::write(
            &f,
            "duration = \"1s\"\nseed = 7\n[link.forward]\nrate = \"1mbit\"\n[link.reverse]\n[[flow]]\nalgorithm = \"bbr\"\n",
        )
        .unwrap();
        let mut p = EmuPath {
            scenario: Some(f),
            ..EmuPath::default()
        };
        assert_eq!(forward_config(&p, 0).unwrap().seed, 7);
        p.seed = Some(3);
        assert_eq!(forward_config(&p, 0).unwrap().seed, 3);
    }

    /// `[[link.ports]]` reach the forwarder; a rate there is refused by
    /// name (the emulator applies per-port paths after the bottleneck).
    #[test]
    fn port_rules_reach_the_forwarder_and_rates_there_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("path.toml");
        let scenario = |text: &str| {
            std::fs::write(&f, text).unwrap();
            forward_config(
                &EmuPath {
                    scenario: Some(f.clone()),
                    ..EmuPath::default()
                },
                0,
            )
        };
        let c = scenario(
            "[link.forward]\ndelay = \"5ms\"\n[[link.ports]]\nport = 5201\nforward = { delay = \"30ms\" }\n",
        )
        .unwrap();
        assert_eq!(c.ports.len(), 1);
        assert_eq!(c.ports[0].port, 5201);
        assert_eq!(c.ports[0].forward.as_ref().unwrap().delay_ns, 30_000_000);
        let e =
            scenario("[[link.ports]]\nport = 5201\nforward = { rate = \"1mbit\" }\n").unwrap_err();
        assert!(
            e.contains("link.ports.0.forward.rate")
                && e.contains("only `delay`, `jitter` and `loss`"),
            "{e}"
        );
        // Hops in series reach it too; aggregation in one is refused.
        let c =
            scenario("[[link.hops]]\nrate = \"5mbit\"\n[[link.hops]]\ndelay = \"3ms\"\n").unwrap();
        assert_eq!(c.hops.len(), 2);
        assert_eq!(c.hops[1].delay_ns, 3_000_000);
        let e = scenario("[[link.hops]]\nack_aggregation = { interval = \"1ms\" }\n").unwrap_err();
        assert!(e.contains("link.hops.0.ack_aggregation"), "{e}");
    }

    /// Issue 13: `emu --scenario` reads only `[link]` and `seed`. A file
    /// with no duration, no `[[flow]]` and no forward rate (all required by
    /// the simulator) is a valid path; errors in `[link]` are located.
    #[test]
    fn a_scenario_needs_only_its_link_table() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("path.toml");
        let scenario = |text: &str| {
            std::fs::write(&f, text).unwrap();
            forward_config(
                &EmuPath {
                    scenario: Some(f.clone()),
                    ..EmuPath::default()
                },
                0,
            )
        };
        let c = scenario("[link.forward]\ndelay = \"20ms\"\n[link.reverse]\nrate = \"5mbit\"\n")
            .unwrap();
        assert_eq!(rate(&c.forward), None);
        assert_eq!(c.forward.delay_ns, 20_000_000);
        assert_eq!(rate(&c.reverse), Some(5e6));
        assert_eq!(c.seed, 1);
        // Simulator keys are ignored, not checked: a sweep over flows too.
        let c = scenario(
            "name = \"x\"\nduration = \"0s\"\nseed = 9\n[link.forward]\nrate = \"1mbit\"\n[[flow]]\nalgorithm = \"nonsense\"\n[sweep]\n\"flow.algorithm\" = [\"bbr\"]\n",
        )
        .unwrap();
        assert_eq!((rate(&c.forward), c.seed), (Some(1e6), 9));
        // Errors: where, what, what is allowed.
        let e = scenario("duration = \"1s\"\n").unwrap_err();
        assert!(
            e.contains("no [link] table") && e.contains("[link.forward]"),
            "{e}"
        );
        let e = scenario("[link.forward]\nrate = \"10MBps\"\n").unwrap_err();
        assert!(e.contains("path.toml:2:8") && e.contains("rate"), "{e}");
        let e = scenario("[link.forward]\nrat = \"1mbit\"\n").unwrap_err();
        assert!(e.contains("path.toml:2:1") && e.contains("rat"), "{e}");
        let e = scenario("[link]\nsideways = {}\n").unwrap_err();
        assert!(e.contains("path.toml:2:1") && e.contains("sideways"), "{e}");
        let e = scenario(
            "[link.forward]\nrate = \"1mbit\"\n[sweep]\n\"link.forward.delay\" = [\"1ms\"]\n",
        )
        .unwrap_err();
        assert!(
            e.contains("path.toml:4:") && e.contains("does not expand sweeps"),
            "{e}"
        );
        let e = scenario("[link.forward]\nrate = 10\n").unwrap_err();
        assert!(e.contains("path.toml:2:8") && e.contains("10mbit"), "{e}");
    }

    #[test]
    fn rate_queue_and_loss_shape_both_directions_and_rtt_is_split() {
        let c = forward_config(
            &flags(|p| {
                p.rate = Some("50mbit".into());
                p.rtt = Some("101ms".into());
                p.queue = Some("150kB".into());
                p.loss = Some("1%".into());
            }),
            0,
        )
        .unwrap();
        for d in [&c.forward, &c.reverse] {
            assert_eq!(rate(d), Some(50e6));
            assert_eq!(d.queue.limit, link::units::Size::Bytes(150_000));
            assert_eq!(d.loss, Some(link::LossConfig::Bernoulli(0.01)));
        }
        assert_eq!(c.forward.delay_ns + c.reverse.delay_ns, 101_000_000);
        assert_eq!(c.forward.delay_ns, 50_500_000);
    }

    #[test]
    fn defaults_are_40ms_and_100_packets_unshaped() {
        let c = forward_config(&flags(|_| {}), 0).unwrap();
        for d in [&c.forward, &c.reverse] {
            assert_eq!(rate(d), None);
            assert_eq!(d.delay_ns, 20_000_000);
            assert_eq!(d.queue.limit, link::units::Size::Packets(100));
            assert_eq!(d.loss, None);
        }
        assert!(c.realtime);
    }

    #[test]
    fn up_and_down_flags_override_one_direction() {
        let c = forward_config(
            &flags(|p| {
                p.rate = Some("10mbit".into());
                p.loss = Some("2%".into());
                p.down.rate = Some("unlimited".into());
                p.up.queue = Some("20".into());
                p.down.loss = Some("0".into());
            }),
            0,
        )
        .unwrap();
        assert_eq!(rate(&c.forward), Some(10e6));
        assert_eq!(rate(&c.reverse), None);
        assert_eq!(c.forward.queue.limit, link::units::Size::Packets(20));
        assert_eq!(c.reverse.queue.limit, link::units::Size::Packets(100));
        assert_eq!(c.forward.loss, Some(link::LossConfig::Bernoulli(0.02)));
        assert_eq!(c.reverse.loss, None);
    }

    #[test]
    fn one_way_delays_keep_the_round_trip() {
        let d = |f: fn(&mut EmuPath)| {
            let c = forward_config(&flags(f), 0).unwrap();
            (
                c.forward.delay_ns / 1_000_000,
                c.reverse.delay_ns / 1_000_000,
            )
        };
        assert_eq!(
            d(|p| {
                p.rtt = Some("100ms".into());
                p.up.delay = Some("10ms".into());
            }),
            (10, 90)
        );
        assert_eq!(d(|p| p.down.delay = Some("30ms".into())), (10, 30));
        assert_eq!(
            d(|p| {
                p.up.delay = Some("5ms".into());
                p.down.delay = Some("25ms".into());
            }),
            (5, 25)
        );
    }

    fn error(f: fn(&mut EmuPath)) -> String {
        forward_config(&flags(f), 0).unwrap_err()
    }

    #[test]
    fn bad_values_name_the_flag_and_the_value() {
        let e = error(|p| p.down.rate = Some("fast".into()));
        assert!(e.contains("--down-rate") && e.contains("fast"), "{e}");
        let e = error(|p| p.rate = Some("0mbit".into()));
        assert!(e.contains("--rate") && e.contains("positive"), "{e}");
        let e = error(|p| p.up.loss = Some("150%".into()));
        assert!(e.contains("--up-loss") && e.contains("150%"), "{e}");
        let e = error(|p| p.queue = Some("0".into()));
        assert!(
            e.contains("--queue") && e.contains("at least one packet"),
            "{e}"
        );
        let e = error(|p| p.up.queue = Some("10 parsecs".into()));
        assert!(e.contains("--up-queue") && e.contains("parsecs"), "{e}");
        let e = error(|p| {
            p.rtt = Some("10ms".into());
            p.up.delay = Some("20ms".into());
        });
        assert!(e.contains("--up-delay") && e.contains("--rtt 10ms"), "{e}");
        let e = error(|p| {
            p.rtt = Some("10ms".into());
            p.up.delay = Some("2ms".into());
            p.down.delay = Some("2ms".into());
        });
        assert!(e.contains("not all three"), "{e}");
        let e = error(|p| {
            p.scenario = Some("x.toml".into());
            p.down.rate = Some("1mbit".into());
        });
        assert!(e.contains("--scenario") && e.contains("not both"), "{e}");
    }
}
