//! The emulator measures itself (`bbrlab emu --selftest`).
//!
//! The emulator is only worth its results if it delivers the path it was
//! given. The self-test creates its own [`Topology`], runs real traffic
//! (kernel TCP and UDP sockets in the two namespaces) through the
//! forwarder, and reports the figures against the emulator's stated goals:
//!
//! - **Throughput:** unshaped bulk TCP goes through at
//!   [`UNSHAPED_GOAL_GBPS`] or more, so the emulator is never the
//!   bottleneck of a path slower than that.
//! - **Release accuracy:** at 100 Mbit/s under bulk TCP, a packet leaves
//!   at most [`RELEASE_P99_GOAL_US`] after its scheduled time (p99) and
//!   never before it, both on an otherwise idle machine and with every core
//!   kept busy by normal-priority threads (see [`crate::rt`] for why the
//!   latter holds). A bursty UDP stream then checks from outside that no
//!   datagram crossed the path faster than its configured delay.
//! - **Added delay:** the emulator itself (read → write, less the
//!   configured delay) adds at most [`EMULATOR_ADDED_GOAL_US`] per round
//!   trip at light load.
//!
//! It needs root (see [`crate::check_environment`]) and takes about 20 s.
//! [`run`] returns the figures as a [`SelfTest`]; its `Display` is the
//! report, one line per goal ending in `ok` or `MISSED`. With the feature
//! `serde` the figures are also `Serialize` (the command's `--json`).

use crate::forward::{ForwardConfig, ForwardStats, Log, NoLog, PacketRecord};
use crate::netns::{TcpBuffers, Topology, CLIENT_ADDR, SERVER_ADDR};
use link::{units::Size, QueueConfig, RateSchedule, ResolvedDirection};
use std::fmt;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Goal for unshaped TCP goodput through the emulator, Gbit/s.
pub const UNSHAPED_GOAL_GBPS: f64 = 1.0;
/// Goal for the 99th percentile of the release error, µs.
pub const RELEASE_P99_GOAL_US: u64 = 200;
/// Goal for the delay the emulator adds per round trip, µs.
pub const EMULATOR_ADDED_GOAL_US: f64 = 100.0;

/// Rate of the path the release accuracy is measured on, bit/s.
const RELEASE_RATE_BPS: f64 = 100e6;
/// Round trip of that path, ns (10 ms).
const RELEASE_RTT_NS: u64 = 10_000_000;
/// Round trip of the light-load probes' path, ns (20 ms).
const PROBE_RTT_NS: u64 = 20_000_000;

/// Release accuracy under one condition: bulk TCP through 100 Mbit/s /
/// 10 ms, then a bursty UDP stream through the same path.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ReleaseFigures {
    /// Threads the self-test kept spinning at normal priority meanwhile,
    /// one per core (0: no load of its own).
    pub busy_threads: usize,
    /// Packets released (bulk TCP phase).
    pub releases: u64,
    /// Release error (released − scheduled) under bulk TCP: median, µs.
    pub p50_us: u64,
    /// 99th percentile, µs (goal ≤ [`RELEASE_P99_GOAL_US`]).
    pub p99_us: u64,
    /// Largest, µs.
    pub max_us: u64,
    /// Releases written before their scheduled time, both phases (goal 0).
    pub early_releases: u64,
    /// Times the forwarder could not run while a packet fell due (bulk
    /// TCP phase, [`crate::stall`]).
    pub stalls: u64,
    /// Their total, ms.
    pub stalled_ms: f64,
    /// The most the forwarder may stall in this phase before its figures
    /// are the machine's rather than the emulator's, ms: the share
    /// [`crate::stall::max_stalled_fraction`] allows on the phase's path
    /// (10 ms), of the phase's wall time, the limit `bbrlab validate`
    /// applies to a repetition. Carried here so a reader of the JSON need
    /// not know the phase's length or path.
    pub stall_limit_ms: f64,
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
    /// forwarder's budget, see [`crate::WaitPlanner`]).
    pub forwarder_cpu_share: f64,
    /// The part of that time spent spinning.
    pub spin_share: f64,
}

impl ReleaseFigures {
    /// Whether these figures meet the goals: p99 within
    /// [`RELEASE_P99_GOAL_US`], nothing released or delivered early.
    pub fn meets_goal(&self) -> bool {
        self.p99_us <= RELEASE_P99_GOAL_US && self.early_releases == 0 && self.early_deliveries == 0
    }

    /// Whether the forwarder stalled beyond [`Self::stall_limit_ms`]:
    /// then the release error measures the machine that took the CPU away,
    /// not the emulator, and the phase is worth measuring again.
    pub fn stalled_beyond_limit(&self) -> bool {
        self.stalled_ms > self.stall_limit_ms
    }
}

/// Results of the self-test.
#[derive(Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct SelfTest {
    /// Unshaped TCP goodput through the emulator, Gbit/s (goal ≥
    /// [`UNSHAPED_GOAL_GBPS`]).
    pub unshaped_gbps: f64,
    /// Release-time error at 100 Mbit/s under bulk TCP with no load of
    /// the self-test's own, p50 / p99 µs (goal p99 ≤
    /// [`RELEASE_P99_GOAL_US`]); the same as `release_idle`'s.
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
    /// configured one-way delays), µs (goal ≤ [`EMULATOR_ADDED_GOAL_US`]).
    pub emulator_added_median_us: f64,
    /// Probes that came back.
    pub probes: usize,
}

/// The report: one line per goal, each ending in `ok` or `MISSED`, and a
/// line on how the forwarder ran.
impl fmt::Display for SelfTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mark = |ok: bool| if ok { "ok" } else { "MISSED" };
        writeln!(
            f,
            "unshaped forwarding: {:.2} Gbit/s (goal ≥ {UNSHAPED_GOAL_GBPS}): {}",
            self.unshaped_gbps,
            mark(self.unshaped_gbps >= UNSHAPED_GOAL_GBPS)
        )?;
        for (what, r) in [
            ("idle", &self.release_idle),
            ("every core busy", &self.release_busy),
        ] {
            writeln!(
                f,
                "release error at 100 Mbit/s, {what}: p50 {} µs, p99 {} µs, max {} µs; {} of {} released early; \
                 {} stalls ({:.1} ms of {:.1} allowed{}); {} of {} datagrams delivered early (closest {:.0} µs above the floor) \
                 (goal p99 ≤ {RELEASE_P99_GOAL_US}, none early): {}",
                r.p50_us,
                r.p99_us,
                r.max_us,
                r.early_releases,
                r.releases,
                r.stalls,
                r.stalled_ms,
                r.stall_limit_ms,
                if r.stalled_beyond_limit() {
                    ", so the machine took the forwarder away: measure again"
                } else {
                    ""
                },
                r.early_deliveries,
                r.datagrams,
                r.min_margin_us,
                mark(r.meets_goal())
            )?;
        }
        writeln!(
            f,
            "forwarder: {}{}{}; CPU {:.0} % of a core idle ({:.0} % spinning), {:.0} % busy ({:.0} % spinning); load average {:.2} at the start",
            self.scheduling,
            if self.memory_locked { ", memory locked" } else { "" },
            if self.cpu_latency_zero {
                ", CPU wake-up latency 0"
            } else {
                ""
            },
            self.release_idle.forwarder_cpu_share * 100.0,
            self.release_idle.spin_share * 100.0,
            self.release_busy.forwarder_cpu_share * 100.0,
            self.release_busy.spin_share * 100.0,
            self.loadavg_at_start
        )?;
        write!(
            f,
            "light load over 20 ms: median probe RTT {:.3} ms ({:.0} µs above 20 ms, both hosts' stacks included); \
             emulator adds {:.0} µs per round trip (goal ≤ {EMULATOR_ADDED_GOAL_US}): {}",
            self.light_rtt_median_ms,
            self.light_added_median_us,
            self.emulator_added_median_us,
            mark(self.emulator_added_median_us <= EMULATOR_ADDED_GOAL_US)
        )
    }
}

/// What the self-test is doing, for the caller to show as it goes.
#[derive(Debug)]
pub enum Progress<'a> {
    /// The namespaces are up, with these TCP buffer limits.
    Buffers(&'a TcpBuffers),
    /// A measurement starts: what it sends, over which path, for how long.
    Step(&'a str),
}

/// Runs the self-test: creates the namespaces (keeping the kernel's TCP
/// buffer limits if `keep_kernel_buffers`, else raising them as the
/// emulator does, see [`Topology::setup_tcp_buffers`]), measures, removes
/// them, and returns the figures. `progress` hears of each step before it
/// starts.
pub fn run(
    keep_kernel_buffers: bool,
    mut progress: impl FnMut(Progress<'_>),
) -> Result<SelfTest, String> {
    let load_start = hostfacts::load_average();
    let topo = Topology::create()?;
    let buffers = topo.setup_tcp_buffers(keep_kernel_buffers)?;
    progress(Progress::Buffers(&buffers));
    progress(Progress::Step("unshaped bulk TCP for 3 s …"));
    let (bps, _) = with_forwarder(&topo, &path(None, 0, 10_000), || bulk_tcp(&topo, 3.0))?;
    progress(Progress::Step(
        "bulk TCP through 100 Mbit/s, 10 ms for 3 s, then one-way UDP for 2 s …",
    ));
    let (idle, st) = measure_release(&topo, 0)?;
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    progress(Progress::Step(&format!(
        "the same with {cores} busy threads (every core busy) …"
    )));
    let (busy, _) = measure_release(&topo, cores)?;
    progress(Progress::Step("200 light-load probes over a 20 ms path …"));
    let mut residence = Residence::default();
    let probe_path = path(None, PROBE_RTT_NS, 1000);
    let (mut rtts, _) = with_forwarder_log(&topo, &probe_path, &mut residence, || {
        probe_rtts(&topo, 200)
    })?;
    residence.0.sort_unstable();
    let res_med = residence.0.get(residence.0.len() / 2).copied().unwrap_or(0);
    let one_way_ns = (PROBE_RTT_NS / 2) as f64;
    let emulator_added_us = 2.0 * (res_med as f64 - one_way_ns) / 1e3;
    drop(topo);
    rtts.sort_by(f64::total_cmp);
    let med = rtts.get(rtts.len() / 2).copied().unwrap_or(f64::NAN);
    let probe_rtt_ms = PROBE_RTT_NS as f64 / 1e6;
    Ok(SelfTest {
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
        light_added_median_us: (med - probe_rtt_ms) * 1e3,
        emulator_added_median_us: emulator_added_us,
        probes: rtts.len(),
    })
}

/// The self-test's paths: `rtt_ns` split evenly into the two one-way
/// delays, both directions shaped alike (`rate_bps`, `None`: unlimited;
/// a drop-tail queue of `queue_packets`; no loss), seed 1, real-time
/// forwarding, no queue samples. The same path as `bbrlab emu` builds
/// from `--rate`, `--rtt` and `--queue`.
fn path(rate_bps: Option<f64>, rtt_ns: u64, queue_packets: u64) -> ForwardConfig {
    let direction = |delay_ns| ResolvedDirection {
        rate: rate_bps.map_or(RateSchedule::Unlimited, RateSchedule::Constant),
        delay_ns,
        queue: QueueConfig::drop_tail(Size::Packets(queue_packets)),
        loss: None,
        jitter: None,
        policer: None,
        aggregation: None,
    };
    ForwardConfig {
        forward: direction(rtt_ns / 2),
        reverse: direction(rtt_ns - rtt_ns / 2),
        seed: 1,
        sample_interval_ns: 0,
        realtime: true,
        ports: Vec::new(),
        hops: Vec::new(),
        delay_schedules: [None, None],
    }
}

/// Bulk TCP from the client to the server for `seconds`; returns the
/// receiver's goodput, bit/s.
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

/// A UDP socket on the server's `port`, for the calling thread to use in
/// the server namespace (a thread enters a namespace for itself). Reads
/// time out after 100 ms, so a loop on it sees its stop flag.
fn server_udp(topo: &Topology, port: u16) -> Result<UdpSocket, String> {
    topo.server
        .enter_current_thread()
        .map_err(|e| e.to_string())?;
    let sock = UdpSocket::bind((SERVER_ADDR, port)).map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_millis(100)))
        .map_err(|e| e.to_string())?;
    Ok(sock)
}

/// A UDP socket on the client, for the calling thread to use in the client
/// namespace, made after giving the server side 200 ms to bind.
fn client_udp(topo: &Topology) -> Result<UdpSocket, String> {
    topo.client
        .enter_current_thread()
        .map_err(|e| e.to_string())?;
    std::thread::sleep(Duration::from_millis(200));
    UdpSocket::bind((CLIENT_ADDR, 0)).map_err(|e| e.to_string())
}

/// `count` UDP echoes from the client to the server, 10 ms apart; returns
/// the round trips of those that came back, ms.
fn probe_rtts(topo: &Topology, count: usize) -> Result<Vec<f64>, String> {
    let port = 5302;
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let echo = s.spawn(|| -> Result<(), String> {
            let sock = server_udp(topo, port)?;
            let mut buf = [0u8; 64];
            while !done.load(Ordering::Relaxed) {
                if let Ok((n, from)) = sock.recv_from(&mut buf) {
                    let _ = sock.send_to(&buf[..n], from);
                }
            }
            Ok(())
        });
        let prober = s.spawn(|| -> Result<Vec<f64>, String> {
            let sock = client_udp(topo)?;
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

impl Log for Residence {
    fn packet(&mut self, p: &PacketRecord) -> std::io::Result<()> {
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

/// [`with_forwarder`], with the forwarder writing to `log`.
fn with_forwarder_log<T>(
    topo: &Topology,
    cfg: &ForwardConfig,
    log: &mut (dyn Log + Send),
    f: impl FnOnce() -> Result<T, String>,
) -> Result<(T, ForwardStats), String> {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let h = s.spawn(|| crate::run(topo, cfg, &stop, log));
        let r = f();
        stop.store(true, Ordering::Relaxed);
        let st = h
            .join()
            .map_err(|_| "forwarder panicked".to_string())?
            .map_err(|e| format!("forwarding: {e}"))?;
        Ok((r?, st))
    })
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
            let sock = server_udp(topo, port)?;
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
            let sock = client_udp(topo)?;
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

/// The lowest one-way delay a one-way datagram can see on `cfg`'s forward
/// direction: the configured delay plus the datagram's own serialisation
/// (IP and UDP headers included) at [`RELEASE_RATE_BPS`], ns.
fn one_way_floor_ns(cfg: &ForwardConfig) -> u64 {
    let wire = (ONE_WAY_PAYLOAD + 28) as u64;
    cfg.forward.delay_ns + (wire * 8 * 1_000_000_000).div_ceil(RELEASE_RATE_BPS as u64)
}

/// Bulk TCP, then the one-way UDP check, through 100 Mbit/s / 10 ms with
/// `busy` spinning threads running.
fn measure_release(topo: &Topology, busy: usize) -> Result<(ReleaseFigures, ForwardStats), String> {
    let cfg = path(Some(RELEASE_RATE_BPS), RELEASE_RTT_NS, 1000);
    let _load = (busy > 0).then(|| BusyLoad::start(busy, Duration::from_secs(60)));
    let (bps, st) = with_forwarder(topo, &cfg, || bulk_tcp(topo, 3.0))?;
    let wall = st.wall_ns.max(1) as f64;
    let floor = one_way_floor_ns(&cfg);
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
        stalls: st.stalls,
        stalled_ms: st.stalled_ns as f64 / 1e6,
        stall_limit_ms: crate::stall::max_stalled_fraction(RELEASE_RTT_NS as f64 / 1e6) * wall
            / 1e6,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(busy_threads: usize, p99_us: u64, early_deliveries: u64) -> ReleaseFigures {
        ReleaseFigures {
            busy_threads,
            releases: 37_773,
            p50_us: 8,
            p99_us,
            max_us: 1346,
            early_releases: 0,
            stalls: 0,
            stalled_ms: 0.0,
            stall_limit_ms: 15.0,
            early_deliveries,
            datagrams: 12_519,
            min_margin_us: 28.281,
            tcp_mbps: 91.97,
            forwarder_cpu_share: 0.7335,
            spin_share: 0.642,
        }
    }

    #[test]
    fn a_phase_stalled_beyond_its_limit_says_so() {
        // The limit is the phase's own (15 ms in the fixture): stalls up to
        // it leave the figures the emulator's, beyond it the machine's.
        let mut f = figures(2, 480, 0);
        assert!(!f.stalled_beyond_limit());
        f.stalled_ms = 15.0;
        assert!(!f.stalled_beyond_limit());
        f.stalled_ms = 61.0;
        assert!(f.stalled_beyond_limit());
        // The report says so beside the stalls.
        let mut t = sample();
        t.release_busy = f;
        let text = t.to_string();
        assert!(
            text.contains("0 stalls (61.0 ms of 15.0 allowed, so the machine took the forwarder away: measure again)"),
            "{text}"
        );
        // 0.5 % of a 3 s phase on the self-test's 10 ms path, as validate
        // allows a repetition on that path.
        let limit = crate::stall::max_stalled_fraction(RELEASE_RTT_NS as f64 / 1e6) * 3000.0;
        assert!((limit - 15.0).abs() < 1e-9, "{limit}");
    }

    fn sample() -> SelfTest {
        SelfTest {
            unshaped_gbps: 2.0567,
            release_error_p50_us: 8,
            release_error_p99_us: 66,
            release_idle: figures(0, 66, 0),
            release_busy: figures(2, 201, 0),
            scheduling: "SCHED_FIFO 10".into(),
            memory_locked: true,
            cpu_latency_zero: false,
            loadavg_at_start: 2.93,
            tcp_buffers: TcpBuffers {
                mode: "raised",
                tcp_rmem: "4096 131072 67108864".into(),
                tcp_wmem: "4096 16384 67108864".into(),
            },
            light_rtt_median_ms: 20.319019,
            light_added_median_us: 319.019,
            emulator_added_median_us: 35.008,
            probes: 200,
        }
    }

    /// The report is the command's output: one line per goal with its
    /// verdict, the goals written from the same constants as the verdicts.
    #[test]
    fn the_report_states_each_goal_and_its_verdict() {
        let text = sample().to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "unshaped forwarding: 2.06 Gbit/s (goal ≥ 1): ok",
                "release error at 100 Mbit/s, idle: p50 8 µs, p99 66 µs, max 1346 µs; 0 of 37773 released early; \
                 0 stalls (0.0 ms of 15.0 allowed); 0 of 12519 datagrams delivered early (closest 28 µs above the floor) (goal p99 ≤ 200, none early): ok",
                "release error at 100 Mbit/s, every core busy: p50 8 µs, p99 201 µs, max 1346 µs; 0 of 37773 released early; \
                 0 stalls (0.0 ms of 15.0 allowed); 0 of 12519 datagrams delivered early (closest 28 µs above the floor) (goal p99 ≤ 200, none early): MISSED",
                "forwarder: SCHED_FIFO 10, memory locked; CPU 73 % of a core idle (64 % spinning), \
                 73 % busy (64 % spinning); load average 2.93 at the start",
                "light load over 20 ms: median probe RTT 20.319 ms (319 µs above 20 ms, both hosts' stacks included); \
                 emulator adds 35 µs per round trip (goal ≤ 100): ok",
            ]
        );
        assert!(!text.ends_with('\n'));
    }

    /// A datagram delivered early misses the goal however small the
    /// release error.
    #[test]
    fn an_early_delivery_misses_the_release_goal() {
        assert!(figures(0, RELEASE_P99_GOAL_US, 0).meets_goal());
        assert!(!figures(0, RELEASE_P99_GOAL_US + 1, 0).meets_goal());
        assert!(!figures(0, 10, 1).meets_goal());
    }

    /// The release path is 100 Mbit/s with 5 ms each way, and a one-way
    /// datagram (1228 bytes on the wire) cannot arrive sooner than 5 ms
    /// plus its 98.24 µs of serialisation.
    #[test]
    fn the_one_way_floor_is_the_delay_plus_serialisation() {
        let cfg = path(Some(RELEASE_RATE_BPS), RELEASE_RTT_NS, 1000);
        assert_eq!(cfg.forward, cfg.reverse);
        assert_eq!(cfg.forward.rate, RateSchedule::Constant(100e6));
        assert_eq!(cfg.forward.delay_ns, 5_000_000);
        assert_eq!(cfg.forward.queue.limit, Size::Packets(1000));
        assert_eq!(one_way_floor_ns(&cfg), 5_098_240);
        // An odd round trip keeps its length.
        let odd = path(None, 3, 1);
        assert_eq!((odd.forward.delay_ns, odd.reverse.delay_ns), (1, 2));
    }

    /// The busy threads stop when dropped, long before their own limit.
    #[test]
    fn busy_load_stops_when_dropped() {
        let t0 = Instant::now();
        let load = BusyLoad::start(2, Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(20));
        drop(load);
        assert!(t0.elapsed() < Duration::from_secs(10));
    }
}
