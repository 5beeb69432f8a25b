//! `bbrlab emu`: run real programs over an emulated path.
//!
//! Creates the client and server namespaces (see `linkem`), forwards
//! between them through the link model on a dedicated thread, runs the
//! server command in the server namespace and the client command in the
//! client namespace, and tears everything down when the client exits, on
//! error, or on Ctrl-C / SIGTERM / SIGHUP. The forward direction of the
//! link carries client → server traffic.

use linkem::selftest::{Progress, SelfTest};
use linkem::{
    CsvLog, ForwardConfig, ForwardStats, NoLog, TcpBuffers, Topology, CLIENT_ADDR, SERVER_ADDR,
};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

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
pub struct PathSpec {
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
fn one_way_delays(p: &PathSpec) -> Result<(u64, u64), String> {
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
    p: &PathSpec,
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
pub fn forward_config(p: &PathSpec, sample_ns: u64) -> Result<ForwardConfig, String> {
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
    })
}

fn describe_direction(d: &link::ResolvedDirection) -> String {
    let rate = match &d.rate {
        link::RateSchedule::Unlimited => "unlimited".to_string(),
        link::RateSchedule::Constant(r) => format!("{} Mbit/s", r / 1e6),
        other => format!(
            "{} (peak {} Mbit/s)",
            schedule_kind(other),
            other.peak_bps() / 1e6
        ),
    };
    let mut queue = match d.queue.limit {
        link::units::Size::Packets(n) => format!("{n} packets"),
        link::units::Size::Bytes(b) => format!("{b} bytes"),
    };
    if let Some((target, interval)) = d.queue.codel {
        queue += &format!(
            ", CoDel (target {} ms, interval {} ms)",
            target as f64 / 1e6,
            interval as f64 / 1e6
        );
    }
    if let Some(t) = d.queue.step_ns {
        queue += &format!(", step at {} ms", t as f64 / 1e6);
    }
    if d.queue.ecn {
        queue += ", marking ECN";
    }
    let loss = match d.loss {
        Some(link::LossConfig::Bernoulli(p)) => format!(", loss {}%", p * 100.0),
        Some(_) => ", Gilbert-Elliott loss".to_string(),
        None => String::new(),
    };
    format!(
        "{rate}, delay {} ms, queue {queue}{loss}",
        d.delay_ns as f64 / 1e6
    )
}

fn schedule_kind(r: &link::RateSchedule) -> &'static str {
    match r {
        link::RateSchedule::Unlimited => "unlimited",
        link::RateSchedule::Constant(_) => "constant",
        link::RateSchedule::Steps(_) => "steps",
        link::RateSchedule::Square { .. } => "square wave",
        link::RateSchedule::Trace { .. } => "trace",
    }
}

fn describe_buffers(b: &TcpBuffers) -> String {
    let how = if b.mode == "raised" {
        "raised (--kernel-buffers keeps the defaults)"
    } else {
        "kernel defaults (--kernel-buffers)"
    };
    format!(
        "TCP buffers in both namespaces {how}: tcp_rmem {}, tcp_wmem {}",
        b.tcp_rmem, b.tcp_wmem
    )
}

/// Options of the `emu` command.
pub struct EmuOptions {
    /// The path.
    pub path: PathSpec,
    /// Command for the server namespace (`{server}`, `{client}` expand).
    pub server: Option<String>,
    /// Command for the client namespace.
    pub client: Option<String>,
    /// Directory for packets.csv and link.csv.
    pub log: Option<PathBuf>,
    /// File for the forwarder's figures as JSON ([`stats_json`]).
    pub stats: Option<PathBuf>,
    /// Hold the path up until Ctrl-C.
    pub interactive: bool,
    /// Longest run, s.
    pub timeout_s: u64,
    /// Keep the kernel's TCP buffer limits in the namespaces.
    pub kernel_buffers: bool,
    /// Set `net.ipv4.tcp_ecn = 1` in both namespaces.
    pub tcp_ecn: bool,
}

fn expand(cmd: &str) -> String {
    cmd.replace("{server}", &SERVER_ADDR.to_string())
        .replace("{client}", &CLIENT_ADDR.to_string())
}

/// Starts `cmd` in namespace `ns` in its own process group, so it and
/// anything it starts can be stopped together by its PID.
fn spawn_in(ns: &str, cmd: &str) -> Result<Child, String> {
    use std::os::unix::process::CommandExt;
    Command::new("ip")
        .args(["netns", "exec", ns, "sh", "-c", cmd])
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start `{cmd}`: {e}"))
}

/// Stops a child's process group: SIGTERM, then SIGKILL after 1 s.
fn stop_child(child: &mut Child) {
    if child.try_wait().ok().flatten().is_some() {
        return;
    }
    let pgid = child.id() as i32;
    // SAFETY: signalling a process group we created.
    unsafe { libc::kill(-pgid, libc::SIGTERM) };
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(1) {
        if child.try_wait().ok().flatten().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: as above.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
    let _ = child.wait();
}

fn print_stats(s: &ForwardStats) {
    let e = &s.release_error;
    note(format_args!(
        "emu: forwarded {} / {} packets (client→server / server→client), dropped {} / {}, marked CE {} / {}; release error p50 {} µs, p99 {} µs, max {} µs, {} released early; {} stalls of the forwarder ({:.1} ms in all, longest {:.1} ms); forwarder scheduling: {}",
        s.forwarded[0],
        s.forwarded[1],
        s.dropped[0],
        s.dropped[1],
        s.marked_ce[0],
        s.marked_ce[1],
        e.quantile_us(0.5).unwrap_or(0),
        e.quantile_us(0.99).unwrap_or(0),
        e.max_us().unwrap_or(0),
        e.early(),
        s.stalls,
        s.stalled_ns as f64 / 1e6,
        s.longest_stall_ns as f64 / 1e6,
        s.realtime.policy
    ));
}

/// Sets its flag when dropped.
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A line on stderr that cannot panic: `eprintln!` panics when stderr is
/// gone (the process that read it was killed: EPIPE) or full (ENOSPC), and
/// an emulator being stopped must still stop its forwarder and remove its
/// namespaces.
fn note(args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{args}");
}

/// The `emu` command; returns the client's exit code.
pub fn run(opts: &EmuOptions) -> Result<i32, String> {
    if !opts.interactive && opts.client.is_none() {
        return Err("give --client (and usually --server), or --interactive".into());
    }
    let cfg = forward_config(&opts.path, if opts.log.is_some() { 10_000_000 } else { 0 })?;
    let stop = testbed::signals::stop_flag()?;
    let topo = Topology::create()?;
    let buffers = topo.setup_tcp_buffers(opts.kernel_buffers)?;
    eprintln!(
        "emu: up (client → server): {}",
        describe_direction(&cfg.forward)
    );
    eprintln!(
        "emu: down (server → client): {}",
        describe_direction(&cfg.reverse)
    );
    eprintln!("emu: {}", describe_buffers(&buffers));
    if opts.tcp_ecn {
        let v = topo.enable_tcp_ecn()?;
        eprintln!(
            "emu: kernel TCP ECN on (--tcp-ecn): {} = {} / {} (client / server)",
            linkem::netns::TCP_ECN,
            v[0],
            v[1]
        );
    }
    let fwd_stop = AtomicBool::new(false);
    let result = std::thread::scope(|s| -> Result<(i32, ForwardStats), String> {
        let forwarder = s.spawn(|| -> Result<ForwardStats, String> {
            match &opts.log {
                Some(dir) => {
                    let mut log = CsvLog::create(dir)
                        .map_err(|e| format!("cannot write the log in {}: {e}", dir.display()))?;
                    let st = linkem::run(&topo, &cfg, &fwd_stop, &mut log)
                        .map_err(|e| format!("forwarding: {e}"))?;
                    log.finish().map_err(|e| format!("writing the log: {e}"))?;
                    Ok(st)
                }
                None => linkem::run(&topo, &cfg, &fwd_stop, &mut NoLog)
                    .map_err(|e| format!("forwarding: {e}")),
            }
        });
        // However `drive` ends (an error, or a panic), the forwarder is
        // told to stop, so the scope can end and the topology be removed:
        // a forwarder left running kept the process (and its namespaces)
        // alive for good when a print of `drive`'s panicked.
        let code = {
            let _stop_forwarder = SetOnDrop(&fwd_stop);
            drive(&topo, opts, &stop)
        };
        let st = forwarder
            .join()
            .map_err(|_| "the forwarding thread panicked".to_string())??;
        Ok((code?, st))
    });
    drop(topo);
    let (code, st) = result?;
    print_stats(&st);
    if let Some(path) = &opts.stats {
        let text = serde_json::to_string_pretty(&stats_json(&st)).expect("plain JSON");
        std::fs::write(path, text + "\n").map_err(|e| {
            format!(
                "cannot write the emulator's figures to {}: {e}",
                path.display()
            )
        })?;
    }
    Ok(code)
}

/// The forwarder's figures as `--stats` writes them. `stalled_fraction` is
/// the share of the run in which the forwarder could not run while
/// packets fell due ([`linkem::stall`]): what a caller checks before it
/// trusts a run's timing.
pub fn stats_json(s: &ForwardStats) -> serde_json::Value {
    let e = &s.release_error;
    serde_json::json!({
        "forwarded_packets": s.forwarded,
        "dropped_packets": s.dropped,
        "marked_ce_packets": s.marked_ce,
        "release_error_us": {
            "p50": e.quantile_us(0.5),
            "p99": e.quantile_us(0.99),
            "max": e.max_us(),
        },
        "released_early": e.early(),
        "stalls": s.stalls,
        "stalled_s": s.stalled_ns as f64 / 1e9,
        "longest_stall_ms": s.longest_stall_ns as f64 / 1e6,
        "stalled_fraction": if s.wall_ns > 0 { s.stalled_ns as f64 / s.wall_ns as f64 } else { 0.0 },
        "wall_s": s.wall_ns as f64 / 1e9,
        "forwarder_cpu_share": if s.wall_ns > 0 { s.cpu_ns as f64 / s.wall_ns as f64 } else { 0.0 },
        "spin_share": if s.wall_ns > 0 { s.spin_ns as f64 / s.wall_ns as f64 } else { 0.0 },
        "scheduling": s.realtime.policy.to_string(),
    })
}

/// Runs the commands (or waits, interactively) until done or stopped.
fn drive(topo: &Topology, opts: &EmuOptions, stop: &AtomicBool) -> Result<i32, String> {
    let deadline = Instant::now() + Duration::from_secs(opts.timeout_s.max(1));
    if opts.interactive {
        println!(
            "emu: path is up (client {CLIENT_ADDR}, server {SERVER_ADDR}). Enter each side with:\n  ip netns exec {} bash\n  ip netns exec {} bash\nCtrl-C to tear it down.",
            topo.client.name(),
            topo.server.name()
        );
        while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        return Ok(0);
    }
    let mut server = match &opts.server {
        Some(cmd) => Some(spawn_in(topo.server.name(), &expand(cmd))?),
        None => None,
    };
    // Give the server a moment to start listening.
    std::thread::sleep(Duration::from_millis(300));
    let client_cmd = expand(opts.client.as_deref().unwrap_or("true"));
    let mut client = match spawn_in(topo.client.name(), &client_cmd) {
        Ok(c) => c,
        Err(e) => {
            if let Some(s) = server.as_mut() {
                stop_child(s);
            }
            return Err(e);
        }
    };
    let mut status: Option<ExitStatus> = None;
    let mut why = None;
    while status.is_none() {
        if stop.load(Ordering::Relaxed) {
            why = Some("stopped by a signal");
            break;
        }
        if Instant::now() >= deadline {
            why = Some("timed out");
            break;
        }
        status = client.try_wait().map_err(|e| e.to_string())?;
        if status.is_none() {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    stop_child(&mut client);
    if let Some(s) = server.as_mut() {
        // A server that ends by itself after its one transfer (iperf3 -s -1,
        // bbrlab recv) gets 3 s to finish and report before it is stopped.
        if status.is_some() {
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(3) && s.try_wait().ok().flatten().is_none() {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        stop_child(s);
    }
    match (status, why) {
        (Some(st), _) => Ok(st.code().unwrap_or(1)),
        (None, Some(w)) => {
            note(format_args!("emu: {w}; stopped the client and server"));
            Ok(130)
        }
        (None, None) => Ok(1),
    }
}

/// `bbrlab emu --selftest`: measures the emulator against its stated
/// accuracy bounds, idle and with every core busy (see
/// [`linkem::selftest`]), and prints the figures (and JSON with `json`).
pub fn selftest(json: bool, kernel_buffers: bool) -> Result<SelfTest, String> {
    let r = linkem::selftest::run(kernel_buffers, |p| match p {
        Progress::Buffers(b) => eprintln!("selftest: {}", describe_buffers(b)),
        Progress::Step(what) => eprintln!("selftest: {what}"),
    })?;
    println!("{r}");
    if json {
        println!("{}", serde_json::to_string(&r).map_err(|e| e.to_string())?);
    }
    Ok(r)
}

/// Runs `bbrlab emu` (or its `--selftest`); the client's exit status.
pub(crate) fn command(a: Box<crate::cli::EmuArgs>) -> Result<i32, String> {
    let a = *a;
    if a.reap {
        linkem::check_environment()?;
        let n = linkem::reap_stale();
        eprintln!("emu: removed {n} namespace(s) left by emulators that no longer run");
        return Ok(0);
    }
    if a.selftest {
        if a.tcp_ecn {
            return Err(
                "--tcp-ecn applies to runs with --client or --interactive; the self-test's traffic does not use ECN"
                    .into(),
            );
        }
        return selftest(a.json, a.kernel_buffers).map(|_| 0);
    }
    let o = EmuOptions {
        path: PathSpec {
            scenario: a.scenario,
            rate: a.rate,
            rtt: a.rtt,
            queue: a.queue,
            loss: a.loss,
            up: DirectionFlags {
                rate: a.up_rate,
                delay: a.up_delay,
                queue: a.up_queue,
                loss: a.up_loss,
            },
            down: DirectionFlags {
                rate: a.down_rate,
                delay: a.down_delay,
                queue: a.down_queue,
                loss: a.down_loss,
            },
            seed: a.seed,
        },
        server: a.server,
        client: a.client,
        log: a.log,
        stats: a.stats,
        interactive: a.interactive,
        timeout_s: a.timeout,
        kernel_buffers: a.kernel_buffers,
        tcp_ecn: a.tcp_ecn,
    };
    run(&o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(f: impl FnOnce(&mut PathSpec)) -> PathSpec {
        let mut p = PathSpec {
            seed: Some(1),
            ..PathSpec::default()
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
        let mut p = PathSpec {
            scenario: Some(f),
            ..PathSpec::default()
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
                &PathSpec {
                    scenario: Some(f.clone()),
                    ..PathSpec::default()
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
                &PathSpec {
                    scenario: Some(f.clone()),
                    ..PathSpec::default()
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
        let d = |f: fn(&mut PathSpec)| {
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

    fn error(f: fn(&mut PathSpec)) -> String {
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
