//! `bbrlab emu`: run real programs over an emulated path.
//!
//! Creates the client and server namespaces (see `linkem`), forwards
//! between them through the link model on a dedicated thread, runs the
//! server command in the server namespace and the client command in the
//! client namespace, and tears everything down when the client exits, on
//! error, or on Ctrl-C / SIGTERM / SIGHUP. The forward direction of the
//! link carries client → server traffic.

use linkem::{CsvLog, ForwardConfig, ForwardStats, NoLog, Topology, CLIENT_ADDR, SERVER_ADDR};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
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

fn direction(text: &str, what: &str) -> Result<link::ResolvedDirection, String> {
    let cfg: link::DirectionConfig =
        toml::from_str(text).map_err(|e| format!("{what}: {}", e.message()))?;
    cfg.resolve(Path::new("."))
        .map_err(|e| format!("{what}: {e}"))
}

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

/// One direction's `[link.*]` table, every value checked against its flag
/// first so an error names the flag the user typed.
fn direction_toml(
    p: &PathSpec,
    o: &DirectionFlags,
    side: &str,
    delay_ns: u64,
) -> Result<String, String> {
    let pick = |own: &Option<String>, both: &Option<String>, name: &str| match (own, both) {
        (Some(v), _) => Some((format!("--{side}-{name}"), v.clone())),
        (None, Some(v)) => Some((format!("--{name}"), v.clone())),
        (None, None) => None,
    };
    let mut t = format!("delay = \"{delay_ns}ns\"\n");
    let (qflag, queue) = pick(&o.queue, &p.queue, "queue")
        .unwrap_or_else(|| ("--queue".into(), DEFAULT_QUEUE.into()));
    let limit = match link::units::parse_size(&queue).map_err(|e| format!("{qflag}: {e}"))? {
        link::units::Size::Packets(0) | link::units::Size::Bytes(0) => {
            return Err(format!(
                "{qflag}: `{queue}`: the queue must hold at least one packet"
            ))
        }
        link::units::Size::Packets(n) => format!("{n}pkt"),
        link::units::Size::Bytes(b) => format!("{b}B"),
    };
    t.push_str(&format!("queue = {{ limit = \"{limit}\" }}\n"));
    if let Some((flag, r)) = pick(&o.rate, &p.rate, "rate") {
        if r != "unlimited" {
            let bps = link::units::parse_rate_bps(&r).map_err(|e| format!("{flag}: {e}"))?;
            if bps <= 0.0 {
                return Err(format!(
                    "{flag}: `{r}`: the rate must be positive (or `unlimited`)"
                ));
            }
            t.push_str(&format!("rate = \"{bps}bit\"\n"));
        }
    }
    if let Some((flag, l)) = pick(&o.loss, &p.loss, "loss") {
        let prob = link::units::parse_probability(&l).map_err(|e| format!("{flag}: {e}"))?;
        if prob > 0.0 {
            t.push_str(&format!("loss = {prob}\n"));
        }
    }
    Ok(t)
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
        return Ok(ForwardConfig {
            forward: path.forward,
            reverse: path.reverse,
            seed: p.seed.unwrap_or(path.seed),
            sample_interval_ns: sample_ns,
            realtime: true,
        });
    }
    let (up_delay, down_delay) = one_way_delays(p)?;
    let up = direction_toml(p, &p.up, "up", up_delay)?;
    let down = direction_toml(p, &p.down, "down", down_delay)?;
    Ok(ForwardConfig {
        forward: direction(&up, "the client → server (up) direction")?,
        reverse: direction(&down, "the server → client (down) direction")?,
        seed: p.seed.unwrap_or(1),
        sample_interval_ns: sample_ns,
        realtime: true,
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
    let queue = match d.queue.limit {
        link::units::Size::Packets(n) => format!("{n} packets"),
        link::units::Size::Bytes(b) => format!("{b} bytes"),
    };
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

/// Which TCP buffer limits the namespaces have, as read back from them.
#[derive(serde::Serialize, Clone, Debug)]
pub struct TcpBuffers {
    /// `raised` (the emulator set [`linkem::TCP_BUFFERS`]) or `kernel`
    /// (`--kernel-buffers`: a new namespace's defaults).
    pub mode: &'static str,
    /// `net.ipv4.tcp_rmem` in the client namespace (min default max).
    pub tcp_rmem: String,
    /// `net.ipv4.tcp_wmem` in the client namespace.
    pub tcp_wmem: String,
}

/// Raises the namespaces' TCP buffer limits unless `kernel` asks to keep
/// the defaults, and reads back what applies.
fn setup_tcp_buffers(topo: &Topology, kernel: bool) -> Result<TcpBuffers, String> {
    if !kernel {
        topo.raise_tcp_buffers()?;
    }
    Ok(TcpBuffers {
        mode: if kernel { "kernel" } else { "raised" },
        tcp_rmem: topo.client.sysctl("net.ipv4.tcp_rmem")?,
        tcp_wmem: topo.client.sysctl("net.ipv4.tcp_wmem")?,
    })
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
    /// Hold the path up until Ctrl-C.
    pub interactive: bool,
    /// Longest run, s.
    pub timeout_s: u64,
    /// Keep the kernel's TCP buffer limits in the namespaces.
    pub kernel_buffers: bool,
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
    eprintln!(
        "emu: forwarded {} / {} packets (client→server / server→client), dropped {} / {}; release error p50 {} µs, p99 {} µs, max {} µs, {} released early; forwarder scheduling: {}",
        s.forwarded[0],
        s.forwarded[1],
        s.dropped[0],
        s.dropped[1],
        e.quantile_us(0.5).unwrap_or(0),
        e.quantile_us(0.99).unwrap_or(0),
        e.max_us().unwrap_or(0),
        e.early(),
        s.realtime.policy
    );
}

/// The `emu` command; returns the client's exit code.
pub fn run(opts: &EmuOptions) -> Result<i32, String> {
    if !opts.interactive && opts.client.is_none() {
        return Err("give --client (and usually --server), or --interactive".into());
    }
    let cfg = forward_config(&opts.path, if opts.log.is_some() { 10_000_000 } else { 0 })?;
    let stop = crate::signals::stop_flag()?;
    let topo = Topology::create()?;
    let buffers = setup_tcp_buffers(&topo, opts.kernel_buffers)?;
    eprintln!(
        "emu: up (client → server): {}",
        describe_direction(&cfg.forward)
    );
    eprintln!(
        "emu: down (server → client): {}",
        describe_direction(&cfg.reverse)
    );
    eprintln!("emu: {}", describe_buffers(&buffers));
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
        let code = drive(&topo, opts, &stop);
        fwd_stop.store(true, Ordering::Relaxed);
        let st = forwarder
            .join()
            .map_err(|_| "the forwarding thread panicked".to_string())??;
        Ok((code?, st))
    });
    drop(topo);
    let (code, st) = result?;
    print_stats(&st);
    Ok(code)
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
            eprintln!("emu: {w}; stopped the client and server");
            Ok(130)
        }
        (None, None) => Ok(1),
    }
}

// ----- self-test --------------------------------------------------------

/// Release accuracy under one condition: bulk TCP through 100 Mbit/s /
/// 10 ms, then a bursty UDP stream through the same path.
#[derive(serde::Serialize, Debug, Clone)]
pub struct ReleaseFigures {
    /// Threads the self-test kept spinning at normal priority meanwhile,
    /// one per core (0: no load of its own).
    pub busy_threads: usize,
    /// Packets released (bulk TCP phase).
    pub releases: u64,
    /// Release error (released − scheduled) under bulk TCP: median, µs.
    pub p50_us: u64,
    /// 99th percentile, µs (goal ≤ 200).
    pub p99_us: u64,
    /// Largest, µs.
    pub max_us: u64,
    /// Releases written before their scheduled time, both phases (goal 0).
    pub early_releases: u64,
    /// UDP datagrams whose one-way delay (the sender's CLOCK_MONOTONIC
    /// stamp to the receiver's) was below the configured one-way delay
    /// plus their own serialisation: the path was shorter than configured
    /// (goal 0). This can also catch arrival stamps taken too early, which
    /// the forwarder's own release check cannot see: with the per-pass
    /// stamp put back (and no real-time scheduling) it counted 1–4 early
    /// datagrams in two of four measurements. It needs a pass to outlast
    /// the sender-to-forwarder latency, so it is a spot check; the
    /// reliable guard is linkem's unit tests on a simulated clock.
    pub early_deliveries: u64,
    /// UDP datagrams received.
    pub datagrams: u64,
    /// Smallest one-way delay minus that floor, µs.
    pub min_margin_us: f64,
    /// Bulk TCP goodput meanwhile, Mbit/s.
    pub tcp_mbps: f64,
    /// The forwarding thread's CPU use during the bulk TCP phase, as a
    /// share of one core (its work and its spinning; capped by the
    /// forwarder's budget, see `linkem::WaitPlanner`).
    pub forwarder_cpu_share: f64,
    /// The part of that time spent spinning.
    pub spin_share: f64,
}

/// Results of `bbrlab emu --selftest`.
#[derive(serde::Serialize, Debug)]
pub struct SelfTest {
    /// Unshaped TCP goodput through the emulator, Gbit/s (goal ≥ 1).
    pub unshaped_gbps: f64,
    /// Release-time error at 100 Mbit/s under bulk TCP with no load of
    /// the self-test's own, p50 / p99 µs (goal p99 ≤ 200); the same as
    /// `release_idle`'s.
    pub release_error_p50_us: u64,
    /// See `release_error_p50_us`.
    pub release_error_p99_us: u64,
    /// Release figures without added load.
    pub release_idle: ReleaseFigures,
    /// Release figures with every core kept busy by the self-test.
    pub release_busy: ReleaseFigures,
    /// The forwarding thread's scheduling (e.g. `SCHED_FIFO 10`).
    pub scheduling: String,
    /// Whether the emulator's memory was locked.
    pub memory_locked: bool,
    /// Whether idle CPUs were kept polling (PM QoS wake-up latency 0).
    pub cpu_latency_zero: bool,
    /// Load average (1 min) when the self-test started: other work on the
    /// machine, which "idle" does not exclude.
    pub loadavg_at_start: f64,
    /// The namespaces' TCP buffer limits.
    pub tcp_buffers: TcpBuffers,
    /// Light-load probe RTT over a 20 ms path: median, ms.
    pub light_rtt_median_ms: f64,
    /// Median probe RTT beyond the configured 20 ms, µs. This includes
    /// both hosts' network stacks and the probe threads' wake-ups, not only
    /// the emulator.
    pub light_added_median_us: f64,
    /// Median delay the emulator itself adds per round trip beyond the
    /// configured one (two traversals of read → write, less the
    /// configured one-way delays), µs (goal ≤ 100).
    pub emulator_added_median_us: f64,
    /// Probes that came back.
    pub probes: usize,
}

fn bulk_tcp(topo: &Topology, seconds: f64) -> Result<f64, String> {
    let port = 5301;
    let stop_at = Instant::now() + Duration::from_secs_f64(seconds + 0.5);
    std::thread::scope(|s| {
        let server = s.spawn(|| -> Result<(u64, f64), String> {
            topo.server
                .enter_current_thread()
                .map_err(|e| e.to_string())?;
            let l = TcpListener::bind((SERVER_ADDR, port)).map_err(|e| e.to_string())?;
            // Accept within 5 s (the client gives up after 3 s), polling so
            // a client that never connects cannot hang the self-test.
            l.set_nonblocking(true).map_err(|e| e.to_string())?;
            let t_accept = Instant::now();
            let mut c = loop {
                match l.accept() {
                    Ok((c, _)) => break c,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        if t_accept.elapsed() > Duration::from_secs(5) {
                            return Err("no connection through the emulator within 5 s".into());
                        }
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(e) => return Err(e.to_string()),
                }
            };
            c.set_nonblocking(false).map_err(|e| e.to_string())?;
            c.set_read_timeout(Some(Duration::from_secs(5)))
                .map_err(|e| e.to_string())?;
            let mut buf = vec![0u8; 256 * 1024];
            let mut total = 0u64;
            let t0 = Instant::now();
            let mut t_first = None;
            loop {
                match c.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        t_first.get_or_insert_with(Instant::now);
                        total += n as u64;
                    }
                    Err(_) => break,
                }
                if t0.elapsed() > Duration::from_secs_f64(seconds + 5.0) {
                    break;
                }
            }
            let el = t_first.map_or(1.0, |t| t.elapsed().as_secs_f64());
            Ok((total, el))
        });
        let client = s.spawn(|| -> Result<(), String> {
            topo.client
                .enter_current_thread()
                .map_err(|e| e.to_string())?;
            std::thread::sleep(Duration::from_millis(200));
            let mut c = TcpStream::connect_timeout(
                &SocketAddr::from((SERVER_ADDR, port)),
                Duration::from_secs(3),
            )
            .map_err(|e| format!("connect through the emulator: {e}"))?;
            let buf = vec![0x5Au8; 256 * 1024];
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs_f64(seconds) && Instant::now() < stop_at {
                if c.write_all(&buf).is_err() {
                    break;
                }
            }
            Ok(())
        });
        client
            .join()
            .map_err(|_| "client thread panicked".to_string())??;
        let (bytes, el) = server
            .join()
            .map_err(|_| "server thread panicked".to_string())??;
        Ok(bytes as f64 * 8.0 / el.max(1e-3))
    })
}

fn probe_rtts(topo: &Topology, count: usize) -> Result<Vec<f64>, String> {
    let port = 5302;
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let echo = s.spawn(|| -> Result<(), String> {
            topo.server
                .enter_current_thread()
                .map_err(|e| e.to_string())?;
            let sock = UdpSocket::bind((SERVER_ADDR, port)).map_err(|e| e.to_string())?;
            sock.set_read_timeout(Some(Duration::from_millis(100)))
                .map_err(|e| e.to_string())?;
            let mut buf = [0u8; 64];
            while !done.load(Ordering::Relaxed) {
                if let Ok((n, from)) = sock.recv_from(&mut buf) {
                    let _ = sock.send_to(&buf[..n], from);
                }
            }
            Ok(())
        });
        let prober = s.spawn(|| -> Result<Vec<f64>, String> {
            topo.client
                .enter_current_thread()
                .map_err(|e| e.to_string())?;
            std::thread::sleep(Duration::from_millis(200));
            let sock = UdpSocket::bind((CLIENT_ADDR, 0)).map_err(|e| e.to_string())?;
            sock.set_read_timeout(Some(Duration::from_millis(500)))
                .map_err(|e| e.to_string())?;
            let mut rtts = Vec::new();
            let mut buf = [0u8; 64];
            for i in 0..count as u64 {
                let t0 = Instant::now();
                sock.send_to(&i.to_be_bytes(), (SERVER_ADDR, port))
                    .map_err(|e| e.to_string())?;
                if let Ok((n, _)) = sock.recv_from(&mut buf) {
                    if n == 8 && buf[..8] == i.to_be_bytes() {
                        rtts.push(t0.elapsed().as_secs_f64() * 1e3);
                    }
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(rtts)
        });
        let r = prober.join().map_err(|_| "prober panicked".to_string());
        done.store(true, Ordering::Relaxed);
        echo.join().map_err(|_| "echo panicked".to_string())??;
        r?
    })
}

/// Keeps each forwarded packet's time inside the emulator (read → write).
#[derive(Default)]
struct Residence(Vec<u64>);

impl linkem::Log for Residence {
    fn packet(&mut self, p: &linkem::PacketRecord) -> std::io::Result<()> {
        if let Some(r) = p.released_ns {
            self.0.push(r - p.enqueue_ns);
        }
        Ok(())
    }
}

/// Runs `f` with a forwarder running `cfg` over `topo`.
fn with_forwarder<T>(
    topo: &Topology,
    cfg: &ForwardConfig,
    f: impl FnOnce() -> Result<T, String>,
) -> Result<(T, ForwardStats), String> {
    with_forwarder_log(topo, cfg, &mut NoLog, f)
}

fn with_forwarder_log<T>(
    topo: &Topology,
    cfg: &ForwardConfig,
    log: &mut (dyn linkem::Log + Send),
    f: impl FnOnce() -> Result<T, String>,
) -> Result<(T, ForwardStats), String> {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let h = s.spawn(|| linkem::run(topo, cfg, &stop, log));
        let r = f();
        stop.store(true, Ordering::Relaxed);
        let st = h
            .join()
            .map_err(|_| "forwarder panicked".to_string())?
            .map_err(|e| format!("forwarding: {e}"))?;
        Ok((r?, st))
    })
}

fn spec(rate: Option<&str>, rtt: &str, queue: &str) -> PathSpec {
    PathSpec {
        rate: rate.map(str::to_string),
        rtt: Some(rtt.to_string()),
        queue: Some(queue.to_string()),
        seed: Some(1),
        ..PathSpec::default()
    }
}

/// CLOCK_MONOTONIC in ns: the same clock in every network namespace, so
/// a sender's stamp and a receiver's reading can be compared.
fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// UDP datagram size the one-way check sends (payload bytes).
const ONE_WAY_PAYLOAD: usize = 1200;

/// One-way check: bursts of 16 datagrams every 2 ms (77 Mbit/s) from the
/// client to the server for `seconds`, each stamped with its send time.
/// Returns (datagrams received, how many arrived sooner than
/// `floor_ns` after being sent, smallest arrival − send − floor in ns).
fn one_way_udp(topo: &Topology, seconds: f64, floor_ns: u64) -> Result<(u64, u64, i64), String> {
    let port = 5303;
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let receiver = s.spawn(|| -> Result<(u64, u64, i64), String> {
            topo.server
                .enter_current_thread()
                .map_err(|e| e.to_string())?;
            let sock = UdpSocket::bind((SERVER_ADDR, port)).map_err(|e| e.to_string())?;
            sock.set_read_timeout(Some(Duration::from_millis(100)))
                .map_err(|e| e.to_string())?;
            let mut buf = [0u8; 2048];
            let (mut n, mut early, mut min_margin) = (0u64, 0u64, i64::MAX);
            let t0 = Instant::now();
            while !done.load(Ordering::Relaxed) && t0.elapsed().as_secs_f64() < seconds + 10.0 {
                let Ok(len) = sock.recv(&mut buf) else {
                    continue;
                };
                let now = mono_ns();
                if len != ONE_WAY_PAYLOAD {
                    continue;
                }
                let sent = u64::from_be_bytes(buf[..8].try_into().expect("8 bytes"));
                let margin = now as i64 - sent as i64 - floor_ns as i64;
                n += 1;
                if margin < 0 {
                    early += 1;
                }
                min_margin = min_margin.min(margin);
            }
            Ok((n, early, min_margin))
        });
        let sender = s.spawn(|| -> Result<(), String> {
            topo.client
                .enter_current_thread()
                .map_err(|e| e.to_string())?;
            std::thread::sleep(Duration::from_millis(200));
            let sock = UdpSocket::bind((CLIENT_ADDR, 0)).map_err(|e| e.to_string())?;
            let mut buf = [0x5Au8; ONE_WAY_PAYLOAD];
            let bursts = (seconds * 500.0) as u64;
            let t0 = Instant::now();
            for b in 0..bursts {
                for _ in 0..16 {
                    buf[..8].copy_from_slice(&mono_ns().to_be_bytes());
                    sock.send_to(&buf, (SERVER_ADDR, port))
                        .map_err(|e| format!("one-way probe: {e}"))?;
                }
                let next = Duration::from_millis(2 * (b + 1));
                if let Some(d) = next.checked_sub(t0.elapsed()) {
                    std::thread::sleep(d);
                }
            }
            // Let the last ones through the path.
            std::thread::sleep(Duration::from_millis(300));
            Ok(())
        });
        let r = sender.join().map_err(|_| "sender panicked".to_string());
        done.store(true, Ordering::Relaxed);
        let got = receiver
            .join()
            .map_err(|_| "receiver panicked".to_string())??;
        r??;
        Ok(got)
    })
}

/// Threads that keep every core busy at normal priority, as other work on
/// the machine would, until dropped (stopped by flag and joined; each
/// also ends by itself after `max`).
struct BusyLoad {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl BusyLoad {
    fn start(n: usize, max: Duration) -> BusyLoad {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..n)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let t0 = Instant::now();
                    let mut x = 1u64;
                    while !stop.load(Ordering::Relaxed) && t0.elapsed() < max {
                        for _ in 0..10_000 {
                            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                        }
                        std::hint::black_box(x);
                    }
                })
            })
            .collect();
        BusyLoad { stop, threads }
    }
}

impl Drop for BusyLoad {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Bulk TCP, then the one-way UDP check, through 100 Mbit/s / 10 ms with
/// `busy` spinning threads running.
fn measure_release(topo: &Topology, busy: usize) -> Result<(ReleaseFigures, ForwardStats), String> {
    let cfg = forward_config(&spec(Some("100mbit"), "10ms", "1000"), 0)?;
    let _load = (busy > 0).then(|| BusyLoad::start(busy, Duration::from_secs(60)));
    let (bps, st) = with_forwarder(topo, &cfg, || bulk_tcp(topo, 3.0))?;
    let wall = st.wall_ns.max(1) as f64;
    // The floor: the configured one-way delay plus the datagram's own
    // serialisation (IP and UDP headers included) at 100 Mbit/s.
    let wire = (ONE_WAY_PAYLOAD + 28) as u64;
    let floor = cfg.forward.delay_ns + (wire * 8 * 1_000_000_000).div_ceil(100_000_000);
    let ((datagrams, early_deliveries, min_margin), st_udp) =
        with_forwarder(topo, &cfg, || one_way_udp(topo, 2.0, floor))?;
    let e = &st.release_error;
    let fig = ReleaseFigures {
        busy_threads: busy,
        releases: e.count(),
        p50_us: e.quantile_us(0.5).unwrap_or(0),
        p99_us: e.quantile_us(0.99).unwrap_or(0),
        max_us: e.max_us().unwrap_or(0),
        early_releases: e.early() + st_udp.release_error.early(),
        early_deliveries,
        datagrams,
        min_margin_us: if datagrams > 0 {
            min_margin as f64 / 1e3
        } else {
            f64::NAN
        },
        tcp_mbps: bps / 1e6,
        forwarder_cpu_share: st.cpu_ns as f64 / wall,
        spin_share: st.spin_ns as f64 / wall,
    };
    Ok((fig, st))
}

fn loadavg() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|x| x.parse().ok()))
        .unwrap_or(f64::NAN)
}

/// `bbrlab emu --selftest`: measures the emulator against its stated
/// accuracy bounds, idle and with every core busy, and prints the figures
/// (and JSON with `json`).
pub fn selftest(json: bool, kernel_buffers: bool) -> Result<SelfTest, String> {
    let load_start = loadavg();
    let topo = Topology::create()?;
    let buffers = setup_tcp_buffers(&topo, kernel_buffers)?;
    eprintln!("selftest: {}", describe_buffers(&buffers));
    eprintln!("selftest: unshaped bulk TCP for 3 s …");
    let (bps, _) = with_forwarder(
        &topo,
        &forward_config(&spec(None, "0ms", "10000"), 0)?,
        || bulk_tcp(&topo, 3.0),
    )?;
    eprintln!("selftest: bulk TCP through 100 Mbit/s, 10 ms for 3 s, then one-way UDP for 2 s …");
    let (idle, st) = measure_release(&topo, 0)?;
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    eprintln!("selftest: the same with {cores} busy threads (every core busy) …");
    let (busy, _) = measure_release(&topo, cores)?;
    eprintln!("selftest: 200 light-load probes over a 20 ms path …");
    let mut residence = Residence::default();
    let (mut rtts, _) = with_forwarder_log(
        &topo,
        &forward_config(&spec(None, "20ms", "1000"), 0)?,
        &mut residence,
        || probe_rtts(&topo, 200),
    )?;
    residence.0.sort_unstable();
    let res_med = residence.0.get(residence.0.len() / 2).copied().unwrap_or(0);
    let emulator_added_us = 2.0 * (res_med as f64 - 10e6) / 1e3;
    drop(topo);
    rtts.sort_by(f64::total_cmp);
    let med = rtts.get(rtts.len() / 2).copied().unwrap_or(f64::NAN);
    let r = SelfTest {
        unshaped_gbps: bps / 1e9,
        release_error_p50_us: idle.p50_us,
        release_error_p99_us: idle.p99_us,
        release_idle: idle,
        release_busy: busy,
        scheduling: st.realtime.policy.clone(),
        memory_locked: st.realtime.memory_locked,
        cpu_latency_zero: st.realtime.cpu_latency_zero,
        loadavg_at_start: load_start,
        tcp_buffers: buffers,
        light_rtt_median_ms: med,
        light_added_median_us: (med - 20.0) * 1e3,
        emulator_added_median_us: emulator_added_us,
        probes: rtts.len(),
    };
    let mark = |ok: bool| if ok { "ok" } else { "MISSED" };
    println!(
        "unshaped forwarding: {:.2} Gbit/s (goal ≥ 1): {}",
        r.unshaped_gbps,
        mark(r.unshaped_gbps >= 1.0)
    );
    for (what, f) in [
        ("idle", &r.release_idle),
        ("every core busy", &r.release_busy),
    ] {
        println!(
            "release error at 100 Mbit/s, {what}: p50 {} µs, p99 {} µs, max {} µs; {} of {} released early; \
             {} of {} datagrams delivered early (closest {:.0} µs above the floor) \
             (goal p99 ≤ 200, none early): {}",
            f.p50_us,
            f.p99_us,
            f.max_us,
            f.early_releases,
            f.releases,
            f.early_deliveries,
            f.datagrams,
            f.min_margin_us,
            mark(f.p99_us <= 200 && f.early_releases == 0 && f.early_deliveries == 0)
        );
    }
    println!(
        "forwarder: {}{}{}; CPU {:.0} % of a core idle ({:.0} % spinning), {:.0} % busy ({:.0} % spinning); load average {:.2} at the start",
        r.scheduling,
        if r.memory_locked { ", memory locked" } else { "" },
        if r.cpu_latency_zero {
            ", CPU wake-up latency 0"
        } else {
            ""
        },
        r.release_idle.forwarder_cpu_share * 100.0,
        r.release_idle.spin_share * 100.0,
        r.release_busy.forwarder_cpu_share * 100.0,
        r.release_busy.spin_share * 100.0,
        r.loadavg_at_start
    );
    println!(
        "light load over 20 ms: median probe RTT {:.3} ms ({:.0} µs above 20 ms, both hosts' stacks included); \
         emulator adds {:.0} µs per round trip (goal ≤ 100): {}",
        r.light_rtt_median_ms,
        r.light_added_median_us,
        r.emulator_added_median_us,
        mark(r.emulator_added_median_us <= 100.0)
    );
    if json {
        println!("{}", serde_json::to_string(&r).map_err(|e| e.to_string())?);
    }
    Ok(r)
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

    /// The emulator's link.csv has the simulator's columns, so `bbrlab
    /// plot` and `compare` read either.
    #[test]
    fn the_emulators_link_csv_has_the_simulators_columns() {
        assert_eq!(linkem::LINK_CSV_HEADER.join(","), netsim::LINK_CSV_HEADER);
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
