//! `bbrlab search --confirm`: the worst path a search found, replayed
//! through the emulator with kernel TCP, its objective measured on the
//! kernel's flows beside the simulator's.
//!
//! The emulator's schedules count from its own start, the kernel's flows
//! start a little later (namespaces, then the receivers, then the
//! senders' connections). The lag is read off the emulator's packet log
//! (its first forward packet, the first flow's SYN), and both sides are
//! judged on the path as the flows met it: the schedule moved earlier by
//! the lag, each kernel flow's samples placed on that clock by its own
//! first data packet. The simulator runs that path again with flows made
//! like kernel TCP's (`--tcp-like`: the kernel's packet size, TCP's SYN
//! exchange, Linux's receiver and pacing, as `validate` runs its flows),
//! each started when the kernel's sent its SYN, so that both numbers are
//! of one path, one kind of sender and one order of arrival, and with the
//! simulator's plain flows; the search's figure on its own path is
//! reported beside.
//!
//! A kernel replay is one random draw (Linux's BBR starts its gain cycle
//! at a random phase on every connection), so each replay's simulator
//! figure is the median of [`SIM_DRAWS`] runs with their own seeds, not
//! one seed's run repeated.

use crate::emu_log::{columns, first_packets};
use claims::search::budget::SearchPath;
use claims::search::Options;
use runner::run::FlowSample;
use std::path::{Path, PathBuf};

/// The first receiver port; flow k's is this plus k.
const PORT: u16 = 5201;

/// A confirmation's outcome: the medians of its replays, and each replay.
#[derive(Debug, serde::Serialize)]
pub struct Confirmed {
    /// The kernel's congestion control per flow.
    pub kernel_ccs: Vec<String>,
    /// The replays' median of how much later than the emulator's start the
    /// first flow's first packet (its SYN) came, s.
    pub lag_s: f64,
    /// The path as the flows of the replay with the median lag met it (the
    /// schedule moved earlier by the lag).
    pub path: SearchPath,
    /// The replays' median of the objective in the simulator on the path
    /// each replay's flows met, kernel-like flows.
    pub simulator: f64,
    /// The same with plain flows (the simulator's defaults, not
    /// `--tcp-like`): beside `simulator`, what making the flows like the
    /// kernel's changes.
    pub simulator_plain_flows: f64,
    /// The replays' median of the objective on the kernel's flows.
    pub kernel: f64,
    /// The lowest and highest of the kernel's replays: how far one
    /// kernel run of the path is from the next.
    pub kernel_range: [f64; 2],
    /// Each replay, in the order run.
    pub replays: Vec<Replay>,
    /// Where the runs' files are (a directory per replay).
    pub dir: PathBuf,
}

/// One replay of the worst path through the emulator with kernel TCP.
#[derive(Debug, serde::Serialize)]
pub struct Replay {
    /// How much later than the emulator's start the first flow's first
    /// packet (its SYN) came, s.
    pub lag_s: f64,
    /// When each flow's SYN came, s after the first's: the simulator's
    /// flows start so.
    pub flow_starts_s: Vec<f64>,
    /// The objective on the kernel's flows.
    pub kernel: f64,
    /// The objective in the simulator on the path as these flows met it,
    /// kernel-like flows: the median of `simulator_draws`.
    pub simulator: f64,
    /// Each of the simulator's draws (seeds `--seed`, `--seed` + 1, ...).
    pub simulator_draws: Vec<f64>,
    /// The same with plain flows, the median of its draws.
    pub simulator_plain_flows: f64,
    /// The share of the run in which the emulator's forwarder could not
    /// run while packets fell due (`emu --stats`' `stalled_fraction`).
    pub stalled_fraction: f64,
    /// Whether that share is above what the path allows
    /// ([`linkem::stall::max_stalled_fraction`] at its shortest round
    /// trip) after [`MAX_ATTEMPTS`] runs: the replay says as much about
    /// the machine as about the controllers.
    pub stalled: bool,
    /// Runs of this replay thrown away because the forwarder stalled.
    pub reruns: usize,
    /// Where this replay's files are.
    pub dir: PathBuf,
}

/// Runs of one replay, at most: a replay whose forwarder stalled longer
/// than the path allows is run again, as `validate` runs its repetitions
/// (a neighbour's burst on a shared machine often passes in seconds).
pub const MAX_ATTEMPTS: usize = crate::validate::MAX_ATTEMPTS;

/// The replays `--confirm` runs unless told otherwise: one kernel run of
/// competing flows is one draw (two runs of `bbr` against `cubic` on one
/// path gave the first 0.44 and 0.59 of the link), and the median of
/// three is steadier than any one.
pub const DEFAULT_REPLAYS: usize = 3;

/// The simulator's runs per replay, each with its own seed: a kernel
/// replay is one draw of BBR's random cycle phase, and so is one seed's
/// run. On one search's worst path (`bbr` against `cubic`, 2.4 then
/// 4.5 Mbit/s, 40 ms, 2026-12-01), eight seeds with the kernel's order of
/// arrival gave the simulated `bbr` 0.37-0.49 of the bytes where three
/// kernel replays gave 0.35-0.50; one seed gave 0.49 every time.
pub const SIM_DRAWS: u64 = 5;

/// Wait before a replay is run again after a stall.
const RERUN_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The kernel's congestion control for each of the search's flows, or
/// why one has none (a QUIC stack's controller, bbr3's draft profile).
pub fn kernel_ccs(o: &Options, path: &SearchPath) -> Result<Vec<String>, String> {
    let text = o.scenario(path, &[]);
    let sc = scenario::parse(
        &text,
        "search.toml",
        Path::new("."),
        Path::new("search.toml"),
    )
    .map_err(|e| e.to_string())?;
    let run = sc.runs.first().ok_or("the search's scenario has no run")?;
    o.controllers
        .iter()
        .cycle()
        .zip(&run.config.flows)
        .map(|(c, f)| {
            if c.name.contains(':') && !c.name.starts_with("bbr3:") {
                return Err(format!(
                    "--confirm: {} is a QUIC stack's controller; kernel TCP has no counterpart",
                    c.name
                ));
            }
            crate::compare::kernel_counterpart(&f.cc)
                .map_err(|e| format!("--confirm: {}: {e}", c.name))
        })
        .collect()
}

/// Whether the kernel offers `cc` now, from
/// `net.ipv4.tcp_available_congestion_control`.
fn available(cc: &str) -> bool {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .map(|s| s.split_whitespace().any(|x| x == cc))
        .unwrap_or(false)
}

/// Replays `worst` through the emulator (as root) with the kernel's
/// flows `replays` times (at least once), each in its own directory under
/// `dir`, and measures the objective on both sides of each; `progress`
/// is told of each run as it starts and of each rerun.
pub fn confirm(
    o: &Options,
    worst: &SearchPath,
    exe: &Path,
    dir: &Path,
    replays: usize,
    progress: &dyn Fn(&str),
) -> Result<Confirmed, String> {
    if replays == 0 {
        return Err("--confirm-replays must be at least 1".into());
    }
    let ccs = kernel_ccs(o, worst)?;
    if !crate::host::is_root() {
        return Err("--confirm runs kernel TCP through `bbrlab emu`, which makes network namespaces: it needs root (run it with sudo)".into());
    }
    for cc in &ccs {
        if !available(cc) {
            // Linux loads its own on first use; bbrlab's BPF controls must
            // be loaded first.
            let _ = std::process::Command::new("modprobe")
                .arg(format!("tcp_{cc}"))
                .status();
            if !available(cc) {
                return Err(format!(
                    "--confirm: the kernel does not offer `{cc}` (net.ipv4.tcp_available_congestion_control){}",
                    if cc.starts_with("bbrlab_") {
                        "; load bbrlab's BPF controls first: `bbrlab kernel load`"
                    } else {
                        ""
                    }
                ));
            }
        }
    }
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let dir = std::fs::canonicalize(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let shortest_rtt_ms = (0..worst.pieces.len())
        .map(|i| worst.piece_rtt_ns(i))
        .min()
        .unwrap_or(0) as f64
        / 1e6;
    let max_stalled = linkem::stall::max_stalled_fraction(shortest_rtt_ms);
    let mut runs: Vec<(Replay, SearchPath)> = Vec::with_capacity(replays);
    for k in 1..=replays {
        let rdir = dir.join(format!("replay-{k}"));
        let mut reruns = 0;
        let KernelRun {
            objective: kernel,
            lag_ns,
            starts_ns,
            stalled: stalled_fraction,
        } = loop {
            progress(&format!(
                "confirm: replay {k}/{replays}{}",
                if reruns > 0 {
                    format!(", run {}/{MAX_ATTEMPTS}", reruns + 1)
                } else {
                    String::new()
                }
            ));
            let run = replay(o, worst, &ccs, exe, &rdir)?;
            if run.stalled <= max_stalled || reruns + 1 >= MAX_ATTEMPTS {
                if run.stalled > max_stalled {
                    progress(&format!(
                        "confirm: replay {k}: the emulator's forwarder still could not run {:.1} % of the run after {MAX_ATTEMPTS} runs; kept, and marked stalled in confirm.json",
                        run.stalled * 100.0
                    ));
                }
                break run;
            }
            reruns += 1;
            progress(&format!(
                "confirm: replay {k}: the emulator's forwarder could not run {:.1} % of the run (the machine did not give it the CPU; the path allows {:.1} %), running it again",
                run.stalled * 100.0,
                max_stalled * 100.0
            ));
            std::thread::sleep(RERUN_WAIT);
        };
        let path = shifted(worst, lag_ns);
        let like = Options {
            tcp_like: true,
            stack: None,
            flow_starts_ns: starts_ns.clone(),
            ..o.clone()
        };
        like.check()?;
        std::fs::write(rdir.join("simulated.toml"), like.scenario(&path, &[]))
            .map_err(|e| format!("{}: {e}", rdir.display()))?;
        let simulator_draws = draws(&like, &path)?;
        let plain = Options {
            tcp_like: false,
            flow_starts_ns: starts_ns.clone(),
            ..o.clone()
        };
        let simulator_plain_flows = median(draws(&plain, &path)?);
        runs.push((
            Replay {
                lag_s: lag_ns as f64 / 1e9,
                flow_starts_s: starts_ns.iter().map(|&s| s as f64 / 1e9).collect(),
                kernel,
                simulator: median(simulator_draws.clone()),
                simulator_draws,
                simulator_plain_flows,
                stalled_fraction,
                stalled: stalled_fraction > max_stalled,
                reruns,
                dir: rdir,
            },
            path,
        ));
    }
    let med = |f: fn(&Replay) -> f64| median(runs.iter().map(|(r, _)| f(r)).collect());
    let lag_s = med(|r| r.lag_s);
    let at_median_lag = runs
        .iter()
        .min_by(|a, b| {
            (a.0.lag_s - lag_s)
                .abs()
                .total_cmp(&(b.0.lag_s - lag_s).abs())
        })
        .map(|(_, p)| p.clone())
        .expect("at least one replay");
    let kernels = stats::Stats::of(&runs.iter().map(|(r, _)| r.kernel).collect::<Vec<_>>());
    Ok(Confirmed {
        kernel_ccs: ccs,
        lag_s,
        path: at_median_lag,
        simulator: med(|r| r.simulator),
        simulator_plain_flows: med(|r| r.simulator_plain_flows),
        kernel: med(|r| r.kernel),
        kernel_range: [kernels.min, kernels.max],
        replays: runs.into_iter().map(|(r, _)| r).collect(),
        dir,
    })
}

/// The objective on `path` in [`SIM_DRAWS`] runs of the simulator, the
/// `k`th with seed `o.seed + k`.
fn draws(o: &Options, path: &SearchPath) -> Result<Vec<f64>, String> {
    (0..SIM_DRAWS)
        .map(|k| {
            Options {
                seed: o.seed.wrapping_add(k),
                ..o.clone()
            }
            .evaluate(path)
        })
        .collect()
}

/// The median by the project's one quantile rule (the mean of the middle
/// two for an even count); NaN for no values.
fn median(mut v: Vec<f64>) -> f64 {
    stats::quantile(&mut v, 0.5).unwrap_or(f64::NAN)
}

/// What one run through the emulator gave.
struct KernelRun {
    /// The objective on the kernel's flows.
    objective: f64,
    /// The lag of the first flow's SYN behind the emulator's start, ns.
    lag_ns: u64,
    /// When each flow's SYN came, ns after the first's.
    starts_ns: Vec<u64>,
    /// The share of the run the forwarder stalled (`stalled_fraction`).
    stalled: f64,
}

/// One run of `worst` through the emulator with the kernel's flows `ccs`,
/// writing into `dir` (cleared first).
fn replay(
    o: &Options,
    worst: &SearchPath,
    ccs: &[String],
    exe: &Path,
    dir: &Path,
) -> Result<KernelRun, String> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let emu_path = dir.join("emu-path.toml");
    std::fs::write(&emu_path, o.scenario(worst, &[]))
        .map_err(|e| format!("cannot write {}: {e}", emu_path.display()))?;
    let seconds = worst.duration_ns.div_ceil(1_000_000_000);
    let exe_s = exe.display();
    let mut server = String::new();
    let mut client = String::new();
    for (k, cc) in ccs.iter().enumerate() {
        let port = PORT + k as u16;
        server.push_str(&format!("{exe_s} tcp recv --listen {{server}}:{port} & "));
        client.push_str(&format!(
            "{exe_s} tcp send --to {{server}}:{port} --cc {cc} --duration {seconds}s --interval 10ms --log {} & p{k}=$!; ",
            dir.join(format!("kernel-flow-{k}.csv")).display()
        ));
    }
    server.push_str("wait");
    client.push_str("s=0; ");
    for k in 0..ccs.len() {
        client.push_str(&format!("wait $p{k} || s=1; "));
    }
    client.push_str("exit $s");
    let log = dir.join("emu-log");
    let stdout = crate::emu::run_emu_with(
        exe,
        &emu_path,
        (&server, &client),
        seconds + 60,
        dir,
        &["--log".to_string(), log.display().to_string()],
    )?;
    std::fs::write(dir.join("emu.out"), &stdout).map_err(|e| format!("{}: {e}", dir.display()))?;
    let stalled = crate::emu::emu_stats(dir)
        .and_then(|s| s.get("stalled_fraction")?.as_f64())
        .ok_or_else(|| format!("{}: the emulator wrote no stalled_fraction", dir.display()))?;
    let firsts = first_packets(&log.join("packets.csv"), PORT, ccs.len())?;
    let lag_ns = firsts.iter().map(|f| f.syn_ns).min().unwrap_or(0);
    let queue = queue_delays(&log.join("link.csv"))?;
    let mut samples = Vec::new();
    for (k, f) in firsts.iter().enumerate() {
        samples.extend(kernel_samples(
            &dir.join(format!("kernel-flow-{k}.csv")),
            k,
            f.data_ns - lag_ns,
            lag_ns,
            &queue,
        )?);
    }
    samples.sort_by_key(|s| (s.t_ns, s.flow));
    let path = shifted(worst, lag_ns);
    let tcp: Option<crate::summaries::TcpSendSummary> =
        crate::summaries::line_with(&stdout, "pmtu").map_err(|e| format!("emu.out: {e}"))?;
    let size = crate::packet_size::kernel_packet_size(tcp.as_ref());
    let payload = size.payload as f64 / (size.payload + u64::from(size.header)) as f64;
    let kernel = o
        .objective
        .measure(&path, &samples, o.flows, o.warmup_ns, payload);
    Ok(KernelRun {
        objective: kernel,
        lag_ns,
        starts_ns: firsts.iter().map(|f| f.syn_ns - lag_ns).collect(),
        stalled,
    })
}

/// `p` as flows that start `lag_ns` into it meet it: each piece earlier
/// by the lag, the pieces it passes dropped, the first at 0.
pub fn shifted(p: &SearchPath, lag_ns: u64) -> SearchPath {
    let mut out = p.clone();
    let keep = p
        .pieces
        .iter()
        .rposition(|x| x.start_ns <= lag_ns)
        .unwrap_or(0);
    out.pieces = p.pieces[keep..].to_vec();
    for x in &mut out.pieces {
        x.start_ns = x.start_ns.saturating_sub(lag_ns);
    }
    out
}

/// The forward queue's delay over the emulator's time: (ns, delay ns).
fn queue_delays(link: &Path) -> Result<Vec<(u64, u64)>, String> {
    let (mut r, [t, d, q]) = columns(link, ["time_s", "direction", "queue_delay_ms"])?;
    let mut out = Vec::new();
    for row in r.records() {
        let row = row.map_err(|e| e.to_string())?;
        if &row[d] == "forward" {
            let (ts, qs): (f64, f64) =
                (row[t].parse().unwrap_or(0.0), row[q].parse().unwrap_or(0.0));
            out.push(((ts * 1e9) as u64, (qs * 1e6) as u64));
        }
    }
    Ok(out)
}

/// Flow `flow`'s samples from its `tcp send --log` file on the path's
/// clock (0 at the first SYN, `lag_ns` into the emulator's run): its log's
/// own clock starts at its first write, which reached the emulator
/// `offset_ns` after the first SYN. Each with the queue's delay then.
fn kernel_samples(
    csv_path: &Path,
    flow: usize,
    offset_ns: u64,
    lag_ns: u64,
    queue: &[(u64, u64)],
) -> Result<Vec<FlowSample>, String> {
    let (mut r, [t, d, s, x]) = columns(
        csv_path,
        [
            "time_s",
            "delivered_bytes",
            "data_packets_sent",
            "retransmitted_packets",
        ],
    )?;
    let int = |v: &str| v.parse::<u64>().unwrap_or(0);
    let mut out = Vec::new();
    for row in r.records() {
        let row = row.map_err(|e| e.to_string())?;
        let t_ns = (row[t].parse::<f64>().unwrap_or(0.0) * 1e9) as u64 + offset_ns;
        let at = t_ns + lag_ns;
        let i = queue.partition_point(|q| q.0 <= at);
        out.push(FlowSample {
            t_ns,
            flow,
            delivered_bytes: int(&row[d]),
            goodput_bps: 0.0,
            rtt_ns: None,
            srtt_ns: None,
            cwnd_bytes: 0,
            pacing_rate_bps: 0.0,
            inflight_bytes: 0,
            inflight_peak_bytes: 0,
            mode: congestion::Mode::default(),
            bw_estimate_bps: None,
            min_rtt_ns: None,
            queue_delay_ns: i.checked_sub(1).map_or(0, |i| queue[i].1),
            drops: 0,
            packets_sent: int(&row[s]),
            retransmissions: int(&row[x]),
            packets_lost: 0,
            delivered_ce: 0,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use claims::search::budget::Piece;

    fn path() -> SearchPath {
        SearchPath {
            pieces: vec![
                Piece {
                    start_ns: 0,
                    rate_bps: 1e6,
                    delay_ns: 10_000_000,
                },
                Piece {
                    start_ns: 2_000_000_000,
                    rate_bps: 2e6,
                    delay_ns: 10_000_000,
                },
                Piece {
                    start_ns: 5_000_000_000,
                    rate_bps: 3e6,
                    delay_ns: 10_000_000,
                },
            ],
            loss: 0.0,
            packet_jitter_ns: 0,
            packet_jitter_sd_ns: None,
            duration_ns: 10_000_000_000,
            reverse_delay_ns: 10_000_000,
        }
    }

    #[test]
    fn the_path_the_flows_met_starts_at_their_first_packet() {
        let p = shifted(&path(), 300_000_000);
        let starts: Vec<u64> = p.pieces.iter().map(|x| x.start_ns).collect();
        assert_eq!(starts, [0, 1_700_000_000, 4_700_000_000]);
        let p = shifted(&path(), 2_500_000_000);
        let starts: Vec<u64> = p.pieces.iter().map(|x| x.start_ns).collect();
        assert_eq!(starts, [0, 2_500_000_000]);
        assert_eq!(p.pieces[0].rate_bps, 2e6);
        assert_eq!(shifted(&path(), 0), path());
    }

    /// A kernel flow's log counts from its first write; its samples are
    /// moved onto the path's clock (0 at the first SYN) by when its first
    /// data reached the emulator, and read the queue at emulator time.
    #[test]
    fn kernel_samples_sit_on_the_paths_clock() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("k.csv");
        std::fs::write(
            &f,
            "time_s,delivered_bytes,data_packets_sent,retransmitted_packets\n0.0,0,10,0\n1.0,5000,20,1\n",
        )
        .unwrap();
        let queue = [
            (0, 0),
            (1_340_000_000, 7_000_000),
            (1_400_000_000, 9_000_000),
        ];
        let s = kernel_samples(&f, 1, 40_000_000, 300_000_000, &queue).unwrap();
        let t: Vec<u64> = s.iter().map(|x| x.t_ns).collect();
        assert_eq!(t, [40_000_000, 1_040_000_000]);
        assert_eq!(s[1].queue_delay_ns, 7_000_000);
        assert_eq!(
            (s[1].flow, s[1].delivered_bytes, s[1].retransmissions),
            (1, 5000, 1)
        );
    }

    #[test]
    fn no_replay_is_refused_before_anything_runs() {
        let o = claims::search::spec::Spec {
            cc: vec!["bbr".into()],
            ..Default::default()
        }
        .options(1)
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let e = confirm(
            &o,
            &path(),
            Path::new("/nonexistent"),
            dir.path(),
            0,
            &|_| {},
        )
        .unwrap_err();
        assert!(e.contains("at least 1"), "{e}");
    }

    #[test]
    fn a_stack_controller_or_the_draft_bbr3_has_no_kernel_counterpart() {
        let spec = |cc: &str| claims::search::spec::Spec {
            cc: cc.split(',').map(String::from).collect(),
            ..Default::default()
        };
        let p = path();
        let o = spec("bbr,cubic").options(1).unwrap();
        assert_eq!(kernel_ccs(&o, &p).unwrap(), ["bbr", "cubic"]);
        let o = spec("s2n:bbr2").options(1).unwrap();
        assert!(kernel_ccs(&o, &p).unwrap_err().contains("QUIC stack"));
        let o = spec("bbr3").options(1).unwrap();
        assert!(kernel_ccs(&o, &p).unwrap_err().contains("stock-kernel"));
    }
}
