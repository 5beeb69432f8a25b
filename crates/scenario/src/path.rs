//! The emulator's reading of a scenario file: only its path (`[link]`) and
//! `seed`.
//!
//! `bbrlab emu --scenario` runs real programs over the path a simulation
//! would use. The simulator's loader ([`crate::load`]) demands a duration
//! and a `[[flow]]` and applies simulator limits (a forward rate, run
//! sizes) that mean nothing to the emulator, so a file holding just a
//! `[link]` is enough here. It is the same code as the simulator's all
//! the same: the same `link::DirectionConfig`, the same TOML messages and
//! the same `file:line:col` locations ([`crate::locate`]), so a path means
//! the same thing, and is refused in the same words, in both.

use crate::locate::{KeyPath, Located, Seg};
use crate::{position, toml_error, ScenarioError};
use std::path::Path;

/// One direction given by the emulator's path flags (`--rate`, `--rtt`,
/// `--queue`, `--loss` and their `--up-*`/`--down-*` forms), already
/// parsed: `rate_bps` (none: unlimited), a one-way delay, a drop-tail
/// queue of `limit` and random loss with probability `loss` (0: none).
/// The same `link::DirectionConfig` a `[link.forward]` table gives, built
/// directly, so the flags and a file mean the same and go through the same
/// checks ([`link::DirectionConfig::resolve`]).
pub fn flag_direction(
    rate_bps: Option<f64>,
    delay_ns: u64,
    limit: link::units::Size,
    loss: f64,
) -> Result<link::ResolvedDirection, String> {
    // What a file's values are held to when they are read.
    if !(0.0..=1.0).contains(&loss) {
        return Err(format!("loss {loss}: a probability from 0 to 1"));
    }
    if let Some(r) = rate_bps {
        if !(link::units::MIN_RATE_BPS..=link::units::MAX_RATE_BPS).contains(&r) {
            return Err(format!(
                "rate {r} bit/s: outside the supported range, 1 bit/s to 1 Tbit/s"
            ));
        }
    }
    let cfg = link::DirectionConfig {
        rate: rate_bps.map(link::RateConfig::Constant),
        delay: Some(link::units::serde_units::Dur(delay_ns)),
        queue: Some(link::QueueConfig::drop_tail(limit)),
        loss: (loss > 0.0).then_some(link::LossConfig::Bernoulli(loss)),
        ..Default::default()
    };
    cfg.resolve(Path::new(".")).map_err(|e| e.to_string())
}

/// A scenario's path as the emulator reads it.
#[derive(Debug)]
pub struct LinkPath {
    /// `[link.forward]`: client → server.
    pub forward: link::ResolvedDirection,
    /// `[link.reverse]`: server → client.
    pub reverse: link::ResolvedDirection,
    /// The scenario's `seed` (1 if none), so loss and jitter are drawn as
    /// in the simulator.
    pub seed: u64,
    /// `[[link.ports]]`: per-port extra delay, jitter and loss, in order.
    pub ports: Vec<PortRule>,
    /// `[[link.hops]]`: forward hops after `[link.forward]`, in series
    /// (every client → server packet crosses them all).
    pub hops: Vec<link::ResolvedDirection>,
    /// `[link.forward]`'s and `[link.reverse]`'s `delay_schedule`, if
    /// any (that direction's resolved delay is then 0; the forwarder
    /// applies the schedule to what leaves its queue, as the simulator
    /// does).
    pub delay_schedules: [Option<link::DelaySchedule>; 2],
}

/// One `[[link.ports]]` table, resolved: extra directions the emulator
/// applies after the shared ones to packets whose TCP/UDP source or
/// destination port is `port` (`linkem::ports` says which keys it takes).
#[derive(Clone, Debug, PartialEq)]
pub struct PortRule {
    /// The port.
    pub port: u16,
    /// For client → server packets.
    pub forward: Option<link::ResolvedDirection>,
    /// For server → client packets.
    pub reverse: Option<link::ResolvedDirection>,
}

/// The parts of a scenario file the emulator reads; everything else
/// (duration, flows, sampling, output) belongs to the simulator and is
/// ignored, not required.
#[derive(serde::Deserialize)]
struct EmuScenario {
    seed: Option<u64>,
    link: Option<EmuLink>,
    sweep: Option<toml::Table>,
}

/// `[link]`; either direction may be left out (no rate limit, no delay,
/// as with the emulator's path flags).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct EmuLink {
    forward: Option<link::DirectionConfig>,
    reverse: Option<link::DirectionConfig>,
    ports: Option<Vec<EmuPort>>,
    hops: Option<Vec<link::DirectionConfig>>,
}

/// One `[[link.ports]]` table: the emulator's per-flow path, for the
/// packets whose TCP/UDP source or destination port is `port`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct EmuPort {
    port: u16,
    forward: Option<link::DirectionConfig>,
    reverse: Option<link::DirectionConfig>,
}

/// The largest packet the emulator forwards: the MTU `linkem` gives the
/// namespaces' interfaces. A policer's bucket must hold one such packet,
/// since real stacks send full-size segments and a token bucket never
/// holds more than its depth (the simulator checks against its flows' own
/// packet sizes instead; it has no MTU).
const EMU_MTU_BYTES: u64 = 1500;

/// Reads the `[link]` table and `seed` of the scenario file `file`.
pub fn load_link(file: &Path) -> Result<LinkPath, ScenarioError> {
    let name = file.display().to_string();
    let src = std::fs::read_to_string(file).map_err(|e| ScenarioError {
        location: name.clone(),
        message: format!("cannot read the scenario file: {e}"),
    })?;
    parse_link(&src, &name, file.parent().unwrap_or(Path::new(".")))
}

/// Parses the `[link]` table and `seed` of scenario text named `file`;
/// `base_dir` resolves relative paths (rate traces). Errors name
/// `file:line:col`, what is wrong and what is allowed.
pub fn parse_link(src: &str, file: &str, base_dir: &Path) -> Result<LinkPath, ScenarioError> {
    let sc: EmuScenario = toml::from_str(src).map_err(|e| toml_error(file, src, &e))?;
    let loc = Located::new(src);
    if let Some(sweep) = &sc.sweep {
        if let Some(k) = sweep
            .keys()
            .find(|k| k.starts_with("link.") || *k == "link")
        {
            let at = KeyPath(vec![Seg::Key("sweep".into()), Seg::Key(k.clone())]);
            return Err(ScenarioError {
                location: position(file, &loc, &at),
                message: format!(
                    "[sweep] `{k}`: emu --scenario runs one path and does not expand sweeps of [link]; write the value you want in [link] (sweeps of other keys are ignored)"
                ),
            });
        }
    }
    let Some(link) = sc.link else {
        return Err(ScenarioError {
            location: file.to_string(),
            message: "no [link] table; emu --scenario takes the path from [link.forward] (client → server) and [link.reverse] (server → client), e.g.\n  [link.forward]\n  rate = \"10mbit\"\n  delay = \"20ms\"".into(),
        });
    };
    let resolve = |d: Option<link::DirectionConfig>, which: &str| {
        let d = d.unwrap_or_default();
        // The shared directions take a schedule; a port's or a hop's
        // delay is constant (they are applied after the shared queue).
        if d.delay_schedule.is_some() && which != "forward" && which != "reverse" {
            let key = format!("link.{which}.delay_schedule");
            return Err(ScenarioError {
                location: position(file, &loc, &KeyPath::parse(&key)),
                message: format!("`{key}`: the emulator applies a delay schedule on [link.forward] and [link.reverse] only; a port's or a hop's delay is constant"),
            });
        }
        if let Some(p) = d.policer.filter(|p| p.bucket.0 < EMU_MTU_BYTES) {
            let key = format!("link.{which}.policer.bucket");
            return Err(ScenarioError {
                location: position(file, &loc, &KeyPath::parse(&key)),
                message: format!("`{key}`: {} B is smaller than one packet, so a full-size packet would never conform; the emulator's interfaces carry packets of up to {EMU_MTU_BYTES} B (their MTU): give at least `{EMU_MTU_BYTES}B`", p.bucket.0),
            });
        }
        d.resolve(base_dir).map_err(|e| {
            let key = format!("link.{which}.{}", e.field);
            ScenarioError {
                location: position(file, &loc, &KeyPath::parse(&key)),
                message: format!("`{key}`: {}", e.message),
            }
        })
    };
    let mut ports = Vec::new();
    for (k, p) in link.ports.unwrap_or_default().into_iter().enumerate() {
        let at = |field: &str| format!("ports.{k}.{field}");
        let side = |d: Option<link::DirectionConfig>, which: &str| {
            d.map(|d| resolve(Some(d), &at(which))).transpose()
        };
        let rule = PortRule {
            port: p.port,
            forward: side(p.forward, "forward")?,
            reverse: side(p.reverse, "reverse")?,
        };
        if ports.iter().any(|r: &PortRule| r.port == p.port) {
            let key = format!("link.{}", at("port"));
            return Err(ScenarioError {
                location: position(file, &loc, &KeyPath::parse(&key)),
                message: format!("`{key}`: port {} has a rule already; give each port one `[[link.ports]]` table", p.port),
            });
        }
        ports.push(rule);
    }
    let mut hops = Vec::new();
    for (k, h) in link.hops.unwrap_or_default().into_iter().enumerate() {
        hops.push(resolve(Some(h), &format!("hops.{k}"))?);
    }
    let schedule =
        |d: &Option<link::DirectionConfig>| d.as_ref().and_then(|d| d.delay_schedule.clone());
    let delay_schedules = [schedule(&link.forward), schedule(&link.reverse)];
    Ok(LinkPath {
        forward: resolve(link.forward, "forward")?,
        reverse: resolve(link.reverse, "reverse")?,
        seed: sc.seed.unwrap_or(1),
        ports,
        hops,
        delay_schedules,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(src: &str) -> Result<LinkPath, ScenarioError> {
        parse_link(src, "p.toml", Path::new("."))
    }

    #[test]
    fn flags_make_the_direction_a_file_would() {
        let d =
            flag_direction(Some(1e7), 20_000_000, link::units::Size::Packets(100), 0.01).unwrap();
        assert_eq!(d.rate, link::RateSchedule::Constant(1e7));
        assert_eq!(d.delay_ns, 20_000_000);
        assert_eq!(d.queue.limit, link::units::Size::Packets(100));
        assert_eq!(d.loss, Some(link::LossConfig::Bernoulli(0.01)));
        let d = flag_direction(None, 0, link::units::Size::Bytes(150_000), 0.0).unwrap();
        assert_eq!(d.rate, link::RateSchedule::Unlimited);
        assert_eq!(d.loss, None);
        // What a file may not hold, the flags may not either.
        let e = flag_direction(None, 0, link::units::Size::Packets(10), 1.5).unwrap_err();
        assert!(e.contains("loss 1.5"), "{e}");
        let e = flag_direction(Some(0.0), 0, link::units::Size::Packets(10), 0.0).unwrap_err();
        assert!(e.contains("rate 0"), "{e}");
    }

    #[test]
    fn the_shared_directions_take_a_delay_schedule_and_ports_do_not() {
        let p = parse(
            "[link.forward]\nrate = \"10mbit\"\ndelay_schedule = { steps = [ { at = \"0s\", delay = \"5ms\" }, { at = \"2s\", delay = \"30ms\" } ] }\n[link.reverse]\ndelay = \"5ms\"\n",
        )
        .unwrap();
        let s = p.delay_schedules[0].as_ref().expect("forward's schedule");
        assert_eq!(s.delay_at(1_000_000_000), 5_000_000);
        assert_eq!(s.delay_at(3_000_000_000), 30_000_000);
        assert_eq!(p.forward.delay_ns, 0);
        assert!(p.delay_schedules[1].is_none());
        assert_eq!(p.reverse.delay_ns, 5_000_000);
        let e = parse(
            "[link.forward]\nrate = \"10mbit\"\n[[link.ports]]\nport = 5201\nforward = { delay_schedule = { steps = [ { at = \"0s\", delay = \"5ms\" } ] } }\n",
        )
        .unwrap_err();
        assert!(
            e.message.contains("[link.forward] and [link.reverse] only"),
            "{e:?}"
        );
    }

    /// A bucket below the 1500-byte MTU was accepted, and no full-size
    /// packet could ever pass.
    #[test]
    fn a_policer_bucket_below_the_mtu_is_refused() {
        let e = parse("[link.forward]\nrate = \"10mbit\"\npolicer = { rate = \"5mbit\", bucket = \"1000B\" }\n")
            .unwrap_err();
        assert!(
            e.message.contains("link.forward.policer.bucket")
                && e.message.contains("give at least `1500B`")
                && e.location.starts_with("p.toml:3"),
            "{e:?}"
        );
        assert!(parse("[link.forward]\nrate = \"10mbit\"\npolicer = { rate = \"5mbit\", bucket = \"1500B\" }\n").is_ok());
    }

    #[test]
    fn a_link_alone_is_a_path_and_the_seed_defaults_to_one() {
        let p = parse("[link.forward]\nrate = \"10mbit\"\ndelay = \"20ms\"\n").unwrap();
        assert_eq!(p.seed, 1);
        let p = parse("seed = 7\nduration = \"3s\"\n[link.reverse]\ndelay = \"5ms\"\n").unwrap();
        assert_eq!(p.seed, 7);
    }

    #[test]
    fn errors_are_located_like_the_simulators() {
        let e = parse("[link.forward]\nrate = 10\n").unwrap_err();
        assert_eq!(e.location, "p.toml:2:8");
        assert!(e.message.starts_with("`link.forward.rate`: "), "{e}");
        assert!(e.message.contains("a rate like \"10mbit\""), "{e}");
        let e = parse("seed = 1\n").unwrap_err();
        assert!(e.message.contains("no [link] table"), "{e}");
        let e = parse(
            "[link.forward]\nrate = \"1mbit\"\n[sweep]\n\"link.forward.rate\" = [\"1mbit\"]\n",
        )
        .unwrap_err();
        assert_eq!(e.location, "p.toml:4:23");
        assert!(e.message.contains("does not expand sweeps"), "{e}");
        let e = parse("[link.forward]\nrate = \"fast\"\n").unwrap_err();
        assert!(e.location.starts_with("p.toml:2:"), "{e}");
    }

    /// The simulator's path keys the emulator cannot honour are refused,
    /// not dropped; hops in series it runs.
    #[test]
    fn delay_schedules_are_refused_on_hops_by_name_and_hops_read() {
        // The shared directions take one (see the test above).
        parse("[link.forward]\nrate = \"1mbit\"\ndelay_schedule = [{ at = \"0s\", delay = \"5ms\" }]\n")
            .unwrap();
        let p =
            parse("[link.forward]\nrate = \"1mbit\"\n[[link.hops]]\nrate = \"2mbit\"\n").unwrap();
        assert_eq!(p.hops.len(), 1);
        assert_eq!(p.hops[0].rate, link::RateSchedule::Constant(2e6));
        let e = parse("[[link.hops]]\ndelay_schedule = [{ at = \"0s\", delay = \"5ms\" }]\n")
            .unwrap_err();
        assert!(
            e.message.contains("link.hops.0.delay_schedule") && e.message.contains("constant"),
            "{e}"
        );
    }

    #[test]
    fn port_rules_are_read_in_order_and_duplicates_refused() {
        let p = parse(
            "[link.forward]\ndelay = \"5ms\"\n[[link.ports]]\nport = 5201\nforward = { delay = \"30ms\" }\nreverse = { delay = \"30ms\", jitter = { uniform = { min = \"0ms\", max = \"4ms\" } } }\n[[link.ports]]\nport = 5202\nforward = { loss = 0.01 }\n",
        )
        .unwrap();
        assert_eq!(p.ports.len(), 2);
        assert_eq!(p.ports[0].port, 5201);
        assert_eq!(p.ports[0].forward.as_ref().unwrap().delay_ns, 30_000_000);
        assert!(p.ports[0].reverse.as_ref().unwrap().jitter.is_some());
        assert!(p.ports[1].reverse.is_none());
        let e = parse("[[link.ports]]\nport = 1\n[[link.ports]]\nport = 1\n").unwrap_err();
        assert!(e.message.contains("port 1 has a rule already"), "{e}");
        let e = parse("[[link.ports]]\nport = 70000\n").unwrap_err();
        assert!(e.location.starts_with("p.toml:2:"), "{e}");
        let e = parse("[[link.ports]]\nport = 1\nforward = { delay = \"5xs\" }\n").unwrap_err();
        assert!(e.message.contains("5xs"), "{e}");
    }
}
