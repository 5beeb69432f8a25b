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

/// The path, from flags or a scenario's `[link]`.
pub struct PathSpec {
    /// Scenario file whose `[link]` table to use.
    pub scenario: Option<PathBuf>,
    /// Bottleneck rate (client → server), e.g. `10mbit`; none: unlimited.
    pub rate: Option<String>,
    /// Round-trip propagation delay, split evenly between directions.
    pub rtt: String,
    /// Bottleneck queue, e.g. `100` (packets), `100pkt` or `150kB`.
    pub queue: String,
    /// Random loss on the forward direction, e.g. `1%` or `0.01`.
    pub loss: Option<String>,
    /// Seed for loss and jitter.
    pub seed: u64,
}

fn direction(text: &str, what: &str) -> Result<link::ResolvedDirection, String> {
    let cfg: link::DirectionConfig =
        toml::from_str(text).map_err(|e| format!("{what}: {}", e.message()))?;
    cfg.resolve(Path::new("."))
        .map_err(|e| format!("{what}: {e}"))
}

/// Builds the forwarder's configuration.
pub fn forward_config(p: &PathSpec, sample_ns: u64) -> Result<ForwardConfig, String> {
    if let Some(file) = &p.scenario {
        if p.rate.is_some() || p.loss.is_some() {
            return Err("give either --scenario or --rate/--loss, not both".into());
        }
        let sc = crate::scenario::load(file).map_err(|e| e.to_string())?;
        let run = &sc.runs[0].config;
        return Ok(ForwardConfig {
            forward: run.forward.clone(),
            reverse: run.reverse.clone(),
            seed: p.seed,
            sample_interval_ns: sample_ns,
        });
    }
    let rtt = link::units::parse_duration_ns(&p.rtt).map_err(|e| format!("--rtt: {e}"))?;
    let half = format!("{}ns", rtt / 2);
    let queue = if p.queue.chars().all(|c| c.is_ascii_digit()) {
        format!("{}pkt", p.queue)
    } else {
        p.queue.clone()
    };
    let mut fwd = format!("delay = \"{half}\"\nqueue = {{ limit = \"{queue}\" }}\n");
    if let Some(r) = &p.rate {
        fwd.push_str(&format!("rate = \"{r}\"\n"));
    }
    if let Some(l) = &p.loss {
        fwd.push_str(&format!("loss = \"{l}\"\n"));
    }
    Ok(ForwardConfig {
        forward: direction(&fwd, "--rate/--queue/--loss")?,
        reverse: direction(&format!("delay = \"{}ns\"", rtt - rtt / 2), "--rtt")?,
        seed: p.seed,
        sample_interval_ns: sample_ns,
    })
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

fn signal_flag() -> Result<Arc<AtomicBool>, String> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .map_err(|e| format!("cannot install a signal handler: {e}"))?;
    }
    Ok(stop)
}

fn print_stats(s: &ForwardStats) {
    eprintln!(
        "emu: forwarded {} / {} packets (client→server / server→client), dropped {} / {}, release error p50 {} µs p99 {} µs",
        s.forwarded[0],
        s.forwarded[1],
        s.dropped[0],
        s.dropped[1],
        s.release_error.quantile_us(0.5).unwrap_or(0),
        s.release_error.quantile_us(0.99).unwrap_or(0)
    );
}

/// The `emu` command; returns the client's exit code.
pub fn run(opts: &EmuOptions) -> Result<i32, String> {
    if !opts.interactive && opts.client.is_none() {
        return Err("give --client (and usually --server), or --interactive".into());
    }
    let cfg = forward_config(&opts.path, if opts.log.is_some() { 10_000_000 } else { 0 })?;
    let stop = signal_flag()?;
    let topo = Topology::create()?;
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

/// Results of `bbrlab emu --selftest`.
#[derive(serde::Serialize, Debug)]
pub struct SelfTest {
    /// Unshaped TCP goodput through the emulator, Gbit/s (goal ≥ 1).
    pub unshaped_gbps: f64,
    /// Release-time error at 100 Mbit/s under bulk TCP, p50 / p99 µs
    /// (goal p99 ≤ 200).
    pub release_error_p50_us: u64,
    /// See `release_error_p50_us`.
    pub release_error_p99_us: u64,
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
            l.set_nonblocking(false).map_err(|e| e.to_string())?;
            let (mut c, _) = l.accept().map_err(|e| e.to_string())?;
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
    fn link_sample(
        &mut self,
        _: u64,
        _: usize,
        _: u64,
        _: u64,
        _: u64,
        _: u64,
    ) -> std::io::Result<()> {
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
        scenario: None,
        rate: rate.map(str::to_string),
        rtt: rtt.to_string(),
        queue: queue.to_string(),
        loss: None,
        seed: 1,
    }
}

/// `bbrlab emu --selftest`: measures the emulator against its stated
/// accuracy bounds and prints the figures (and JSON with `json`).
pub fn selftest(json: bool) -> Result<SelfTest, String> {
    let topo = Topology::create()?;
    eprintln!("selftest: unshaped bulk TCP for 3 s …");
    let (bps, _) = with_forwarder(
        &topo,
        &forward_config(&spec(None, "0ms", "10000"), 0)?,
        || bulk_tcp(&topo, 3.0),
    )?;
    eprintln!("selftest: bulk TCP through 100 Mbit/s, 10 ms for 3 s …");
    let (_, st) = with_forwarder(
        &topo,
        &forward_config(&spec(Some("100mbit"), "10ms", "1000"), 0)?,
        || bulk_tcp(&topo, 3.0),
    )?;
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
        release_error_p50_us: st.release_error.quantile_us(0.5).unwrap_or(0),
        release_error_p99_us: st.release_error.quantile_us(0.99).unwrap_or(0),
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
    println!(
        "release error at 100 Mbit/s: p50 {} µs, p99 {} µs (goal p99 ≤ 200): {}",
        r.release_error_p50_us,
        r.release_error_p99_us,
        mark(r.release_error_p99_us <= 200)
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
