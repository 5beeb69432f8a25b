//! `bbrlab emu`: run real programs over an emulated path.
//!
//! Creates the client and server namespaces (see `linkem`), forwards
//! between them through the link model on a dedicated thread, runs the
//! server command in the server namespace and the client command in the
//! client namespace, and tears everything down when the client exits, on
//! error, or on Ctrl-C / SIGTERM / SIGHUP. The forward direction of the
//! link carries client → server traffic.

use linkem::selftest::{Progress, SelfTest};
use linkem::{CsvLog, ForwardStats, NoLog, TcpBuffers, Topology, CLIENT_ADDR, SERVER_ADDR};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use testbed::child::{self, Output, Running, Supervise};
use testbed::emu_path::{forward_config, DirectionFlags, EmuPath};

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
    pub path: EmuPath,
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

/// How long a client or server has after SIGTERM before SIGKILL.
const GRACE: Duration = Duration::from_secs(1);

/// How long a server that ends by itself after its one transfer (iperf3
/// -s -1, bbrlab recv) has, once its client has ended, to finish and
/// report before it is stopped.
const SERVER_LINGER: Duration = Duration::from_secs(3);

/// Starts `cmd` (`what`: "client", "server") in namespace `ns` as a
/// supervised child leading its own process group, so it and anything
/// its shell starts are stopped together by its PID. Its output is the
/// emulator's: callers read the programs' JSON summaries from it.
fn spawn_in(ns: &str, cmd: &str, what: &str) -> Result<Running, String> {
    child::spawn_group(
        Command::new("ip").args(["netns", "exec", ns, "sh", "-c", cmd]),
        &format!("the {what} `{cmd}`"),
        Output::Inherit,
    )
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
    // Not ended by a reader that goes away: `main` gives SIGPIPE its
    // default action (a piped listing ends quietly), which would kill an
    // emulator mid-run with its namespaces and children left behind. Its
    // lines then fail with EPIPE instead, which `note` ignores.
    // SAFETY: setting a signal's disposition has no memory-safety
    // preconditions; the children get the default back (std resets
    // SIGPIPE in a child before exec).
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
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
    // A child is stopped (its process group, by PID) and reaped however
    // this returns: explicitly below, or by `Running`'s drop on an error.
    let server = match &opts.server {
        Some(cmd) => Some(spawn_in(topo.server.name(), &expand(cmd), "server")?),
        None => None,
    };
    // Give the server a moment to start listening.
    std::thread::sleep(Duration::from_millis(300));
    let client_cmd = expand(opts.client.as_deref().unwrap_or("true"));
    let client = spawn_in(topo.client.name(), &client_cmd, "client")?;
    // Its exit status is passed on as the emulator's, not judged here
    // (`Exited::failure` would call a status of 2 rejected arguments).
    let c = client.wait(&Supervise {
        deadline,
        stop: Some(stop),
        grace: GRACE,
        tick: None,
    })?;
    let ended = !c.overran && !c.interrupted;
    if let Some(s) = server {
        if ended {
            s.wait(&Supervise {
                deadline: Instant::now() + SERVER_LINGER,
                stop: Some(stop),
                grace: GRACE,
                tick: None,
            })?;
        } else {
            s.stop(GRACE)?;
        }
    }
    if !ended {
        let why = if c.interrupted {
            "stopped by a signal"
        } else {
            "timed out"
        };
        note(format_args!("emu: {why}; stopped the client and server"));
        return Ok(130);
    }
    // Killed by a signal (not ours): no status of its own.
    Ok(c.code.unwrap_or(1))
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
        path: EmuPath {
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
