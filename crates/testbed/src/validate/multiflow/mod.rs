//! `bbrlab validate --multiflow`: is the simulator right where flows
//! compete?
//!
//! Single-flow validation holds the simulator to kernel TCP on paths that
//! carry one flow; the questions researchers ask most (BBR against CUBIC
//! by buffer depth, BBRv3's coexistence, RTT unfairness, fairness under
//! ECN) need several. Here several kernel TCP flows (`bbrlab tcp send`,
//! one receiver port each) share one `bbrlab emu` bottleneck, each with
//! its own extra delay from a per-port rule (`[[link.ports]]`), and the
//! simulator runs the same flows with the same packet sizes, start times
//! and extra delays (`[[flow]]` with `start` and `extra_rtt`).
//!
//! Per path it reports each flow's share of the goodput, the total
//! goodput and the bottleneck's queueing delay percentiles, for kernel and
//! simulator side by side, and judges the simulator against the kernel
//! with [`SHARE`], [`QUEUE_DELAY_PCT`] and [`QUEUE_DELAY_MS`]: the bounds
//! are written once, as [`Tolerance`](claims::tolerance::Tolerance)s with their reasons, and every
//! verdict (and the bounds printed in `validate.json`) comes from them.
//! The verdicts are computed from the figures' JSON ([`judge`]), so a
//! table rebuilt from `validate.json` says what the run said.

mod paths;
mod sides;

pub use claims::validate::multiflow_judge::*;
pub use claims::validate::multiflow_markdown::*;
pub use paths::*;
use sides::*;

use super::{ensure_loaded, BBR3_KERNEL};
use runner::stats::quantile;
use scenario::builder::{self, millis, Direction, ScenarioBuilder};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Default run length (issue 31's table), and `--quick`'s.
const SECONDS: u64 = 30;
const QUICK_SECONDS: u64 = 20;
/// Default repetitions (`--quick`: one). Two kernel runs of one path
/// differ by up to about 0.1 in a flow's share (bbrlab_bbr3 against cubic
/// at 0.5 and 2 BDP, runs on two days), twice the share bound, so the
/// kernel's side is the mean of three and the table shows their spread.
const REPS: usize = 3;
/// The first flow's receiver port; flow k listens on `PORT + k`.
const PORT: u16 = 5201;

/// What `--multiflow` was asked to do.
#[derive(Clone, Debug)]
pub struct Options {
    /// Output directory (validate.json gains the `multiflow` section).
    pub out: PathBuf,
    /// The quick subset ([`QUICK`]), 20 s runs.
    pub quick: bool,
    /// Only these paths.
    pub only: Option<Vec<String>>,
    /// Repetitions (default 1).
    pub reps: Option<usize>,
    /// Seconds per run (default 30; 20 with `--quick`).
    pub seconds: Option<u64>,
    /// The simulated receiver's ACK policy (the scenario's `ack`: `every`
    /// or `linux`).
    pub ack: &'static str,
    /// The simulated senders' pacer (`--sim-pacing`): Linux's (the
    /// default) or one packet at a time.
    pub pacer: crate::validate::SimPacer,
    /// The simulated flows keep TCP timestamps (`--sim-timestamps`,
    /// [`claims::validate::sim_timestamps`]).
    pub timestamps: bool,
    /// The simulator's runs per repetition, each with its own seed
    /// ([`DRAWS`]).
    pub draws: usize,
    /// The hosts' timing noise the simulator adds to each ACK's way back
    /// ([`HostNoise`]; `None`: none).
    pub noise: Option<HostNoise>,
    /// Run no kernel flows: judge the simulator, run afresh, against the
    /// kernel runs an earlier `--multiflow` left in `out` (its paths, run
    /// length and repetitions). Needs no root.
    pub resimulate: bool,
}

/// What an earlier `--multiflow` run in `out` ran, for `--resimulate`:
/// the paths it has kernel runs of (only `only`'s, when given), the
/// entries to keep as they were (the paths it skipped or failed, and
/// every path `only` leaves out, as `--help` promises), its run length
/// and repetitions.
fn earlier_run(opts: &Options) -> Result<(Vec<MultiPath>, Vec<Value>, u64, usize), String> {
    let json = opts.out.join("validate.json");
    let text = std::fs::read_to_string(&json).map_err(|e| {
        format!(
            "--resimulate judges the simulator against the kernel runs an earlier `validate --multiflow --out {}` left there, but {} cannot be read: {e}",
            opts.out.display(),
            json.display()
        )
    })?;
    let doc: Value =
        serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", json.display()))?;
    let mf = &doc["multiflow"];
    let (Some(seconds), Some(reps), Some(entries)) = (
        mf["seconds_per_run"].as_u64(),
        mf["repetitions"].as_u64(),
        mf["paths"].as_array(),
    ) else {
        return Err(format!(
            "{} has no competing-flow run (a `multiflow` section with seconds_per_run, repetitions and paths); run `validate --multiflow --out {}` first",
            json.display(),
            opts.out.display()
        ));
    };
    let name = |e: &Value| e["path"].as_str().unwrap_or("").to_string();
    let wanted = |e: &Value| opts.only.as_ref().is_none_or(|o| o.contains(&name(e)));
    if opts.only.is_some() {
        // The paths left out keep the earlier simulation's figures.
        super::check_earlier_pacer(mf, "--resimulate --only", opts.pacer)?;
        super::check_earlier_timestamps(mf, "--resimulate --only", opts.timestamps)?;
    }
    if let Some(only) = &opts.only {
        let have: Vec<String> = entries.iter().map(name).collect();
        if let Some(n) = only.iter().find(|n| !have.contains(n)) {
            return Err(format!(
                "--only: the run in {} has no path `{n}`; it has: {}",
                opts.out.display(),
                have.join(", ")
            ));
        }
    }
    let ran: Vec<String> = entries
        .iter()
        .filter(|e| wanted(e) && e.get("kernel").is_some())
        .map(name)
        .collect();
    let kept = entries
        .iter()
        .filter(|e| !wanted(e) || e.get("kernel").is_none())
        .cloned()
        .collect();
    Ok((paths_named(&ran)?, kept, seconds, reps.max(1) as usize))
}

/// Why `path` cannot run on this machine, if it cannot: a flow's control
/// is not available, or ECN is not.
fn cannot_run(p: &MultiPath, bbr3: &Result<(), String>) -> Option<String> {
    if p.flows.iter().any(|f| f.cc == BBR3_KERNEL) {
        if let Err(e) = bbr3 {
            return Some(e.clone());
        }
    }
    if p.queue == Queue::CodelEcn && !Path::new("/proc/sys/net/ipv4/tcp_ecn").exists() {
        return Some(
            "this kernel has no net.ipv4.tcp_ecn, so kernel TCP cannot negotiate ECN".into(),
        );
    }
    None
}

/// Runs the competing-flow matrix; merges its section into
/// `out/validate.json` and rewrites `validate.md`. Returns whether every
/// path that ran met its bounds.
pub fn run(opts: &Options) -> Result<bool, String> {
    let draws = opts.draws.max(1);
    let (paths, mut results, seconds, reps) = if opts.resimulate {
        earlier_run(opts)?
    } else {
        let paths = match &opts.only {
            Some(names) => paths_named(names)?,
            None if opts.quick => {
                paths_named(&QUICK.iter().map(|s| s.to_string()).collect::<Vec<_>>())?
            }
            None => matrix(),
        };
        let seconds = opts
            .seconds
            .unwrap_or(if opts.quick { QUICK_SECONDS } else { SECONDS })
            .max(5);
        let reps = opts.reps.unwrap_or(if opts.quick { 1 } else { REPS });
        (paths, Vec::new(), seconds, reps)
    };
    if !opts.resimulate && !crate::host::is_root() {
        return Err("validate --multiflow runs kernel TCP through `bbrlab emu`, which needs root (network namespaces and TUN devices); run it as root (or add --resimulate to judge the simulator against an earlier run's kernel flows)".into());
    }
    // bbrlab_bbr3 is loaded for the paths that need it (and unloaded when
    // this ends); when it cannot be, those paths are reported skipped.
    let needs_bbr3 = !opts.resimulate
        && paths
            .iter()
            .any(|p| p.flows.iter().any(|f| f.cc == BBR3_KERNEL));
    let (_loaded, bbr3) = if needs_bbr3 {
        match ensure_loaded(BBR3_KERNEL) {
            Ok(g) => (g, Ok(())),
            Err(e) => (None, Err(e)),
        }
    } else {
        (None, Ok(()))
    };
    std::fs::create_dir_all(&opts.out).map_err(|e| format!("{}: {e}", opts.out.display()))?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let started = Instant::now();
    let total = paths.len() * reps;
    let mut done = 0usize;
    for p in &paths {
        if let Some(why) = cannot_run(p, &bbr3) {
            eprintln!("validate: skipping {}: {why}", p.name);
            results
                .push(json!({ "path": p.name, "flows": flows_json(p, seconds), "skipped": why }));
            done += reps;
            continue;
        }
        let mut kernel = Vec::new();
        let mut sim = Vec::new();
        let mut starts_by_rep = Vec::new();
        let mut failed = Vec::new();
        for rep in 0..reps {
            let eta = if done == 0 {
                "?".to_string()
            } else {
                format!(
                    "{:.0} s",
                    started.elapsed().as_secs_f64() / done as f64 * (total - done) as f64
                )
            };
            eprintln!(
                "validate: [{}/{total}] {} rep {} (ETA {eta})",
                done + 1,
                p.name,
                rep + 1
            );
            let dir = opts
                .out
                .join("multiflow")
                .join(&p.name)
                .join(format!("rep-{rep}"));
            done += 1;
            let seed = 1 + rep as u64;
            let one = || -> Result<(Value, Value, Value), String> {
                if !opts.resimulate {
                    kernel_run(p, &exe, &dir, seconds, seed)?;
                }
                let (k, size) = kernel_side(p, &dir, seconds)?;
                let (starts, from) = sim_starts(p, &dir, seconds)?;
                // Linux's receiver as the kernel that made this
                // repetition grew its window (one that `--resimulate`
                // reads back may not be the running one).
                let rcv_autotuning = if opts.ack == "linux" {
                    crate::kernel_release::rcv_rule_for_runs(&dir)
                } else {
                    crate::validate::linux_rcv_autotuning()
                };
                let run = SimRun {
                    first_seed: 1 + (rep * draws) as u64,
                    draws,
                    size,
                    receiver: SimReceiver {
                        ack: opts.ack,
                        rcv_autotuning,
                    },
                    starts_us: &starts,
                    noise: opts.noise,
                    pacer: opts.pacer,
                    timestamps: opts.timestamps,
                };
                let s = sim_side(p, &dir, seconds, &run)?;
                let starts = json!({
                    "from": from,
                    "flow_starts_us": starts,
                    "kernel_release": crate::kernel_release::of_runs(&dir),
                    "rcv_autotuning": (opts.ack == "linux").then_some(rcv_autotuning),
                });
                Ok((k, s, starts))
            };
            // A repetition that fails is this path's finding (written
            // into validate.json with why), not a reason to lose the
            // repetitions that ran or the other paths.
            match one() {
                Ok((k, s, st)) => {
                    kernel.push(k);
                    sim.push(s);
                    starts_by_rep.push(st);
                }
                Err(e) => {
                    eprintln!("validate: {} rep {} failed: {e}", p.name, rep + 1);
                    failed.push(format!("rep {}: {e}", rep + 1));
                }
            }
        }
        if kernel.is_empty() {
            results.push(json!({
                "path": p.name,
                "flows": flows_json(p, seconds),
                "failed": failed.last().cloned().unwrap_or_default(),
                "failed_repetitions": failed,
                "simulator_vs_kernel": { "within": false },
            }));
            continue;
        }
        let (k, s) = (repetitions_json(&kernel), repetitions_of_draws_json(&sim));
        let verdict = judge(&k, &s);
        results.push(json!({
            "path": p.name,
            "rate_mbit": p.rate_mbit,
            "rtt_ms": p.rtt_ms,
            "buffer_bdp": p.buffer_bdp,
            "queue_packets": p.queue_packets(),
            "aqm": match p.queue { Queue::DropTail => "drop-tail", Queue::CodelEcn => "codel-ecn" },
            "ecn": p.queue == Queue::CodelEcn,
            "repetitions": kernel.len(),
            "failed_repetitions": failed,
            "flows": flows_json(p, seconds),
            "kernel": k,
            "simulator": s,
            "simulator_starts_by_rep": starts_by_rep,
            "simulator_vs_kernel": verdict,
        }));
    }
    if opts.resimulate {
        // The earlier run's skipped and failed entries were put first; the
        // matrix's order again.
        let order = matrix();
        let at = |r: &Value| {
            order
                .iter()
                .position(|p| r["path"].as_str() == Some(p.name.as_str()))
                .unwrap_or(usize::MAX)
        };
        results.sort_by_key(at);
    }
    let all_within = results
        .iter()
        .all(|r| r["simulator_vs_kernel"]["within"].as_bool() != Some(false));
    // Kept entries of an earlier run (`--only`) say nothing of how their
    // simulation started; the ones simulated now do.
    let all_from_kernel = results.iter().all(|r| {
        r["simulator_starts_by_rep"]
            .as_array()
            .is_none_or(|a| a.iter().all(|s| s["from"] == "kernel SYNs"))
    });
    let section = json!({
        "seconds_per_run": seconds,
        "repetitions": reps,
        "simulator_ack": opts.ack,
        "simulator_pacer": opts.pacer.name(),
        "simulator_timestamps": opts.timestamps,
        "simulator_draws": draws,
        "simulator_host_noise": opts.noise.map(|n| json!({
            "mean_us": n.mean.as_micros() as u64,
            "sd_us": n.sd.as_micros() as u64,
        })),
        "simulator_starts": if all_from_kernel { STARTS_KERNEL } else { STARTS_SCHEDULED },
        "bounds": bounds_json(),
        "statistics": {
            "share": "a flow's payload bytes delivered (kernel: tcpi_bytes_acked from its `tcp send` log; simulator: delivered_bytes) by the run's end, over all flows' bytes",
            "total_goodput": "all flows' payload bytes × 8 / the run's length",
            "queue_delay": "the bottleneck's forward queue, sampled every 10 ms over the run (emulator: the last dequeued packet's wait, from the first sample with a packet queued; simulator: the wait a packet offered at the sample time would have)",
            "packet_size": "the simulator's flows carry the kernel connection's MSS and headers (tcp send's summary)",
            "receiver": "with Linux's receiver (`simulator_ack` linux) the simulated flows grow their window by the receive-buffer rule of the kernel each repetition ran on (`simulator_starts_by_rep`: `kernel_release`, from the run directory's kernel-release file, null for runs kept from before 2026-12-04, which take the running kernel's; `rcv_autotuning`, the rule taken)",
            "simulator_draws": "the simulator runs each repetition `simulator_draws` times, repetition r's draw j with seed 1 + r × simulator_draws + j, every flow started (its SYN sent) when the repetition's kernel flow sent its SYN, from the emulator's packet log by port (`simulator_starts_by_rep`: from `kernel SYNs`, or `scheduled` for a kernel run logged without ports); its figures are the median over the draws (share_min, share_max and share_by_draw give the spread), since a kernel run is one draw of BBR's random gain-cycle phase and the kernel's timing, and one seed's simulation is one draw that never varies",
        },
        "all_within": all_within,
        "paths": results,
    });
    let doc = super::merge_into_validate_json(&opts.out, json!({ "multiflow": section }))?;
    let md = super::markdown(&doc)?;
    std::fs::write(opts.out.join("validate.md"), &md).map_err(|e| {
        format!(
            "cannot write {}: {e}",
            opts.out.join("validate.md").display()
        )
    })?;
    println!("{}", markdown(&doc)?);
    eprintln!(
        "validate: wrote {} and {} ({} runs in {:.0} s)",
        opts.out.join("validate.json").display(),
        opts.out.join("validate.md").display(),
        total,
        started.elapsed().as_secs_f64()
    );
    Ok(all_within)
}

/// The path's flows as `validate.json` lists them.
fn flows_json(p: &MultiPath, seconds: u64) -> Value {
    p.flows
        .iter()
        .zip(p.starts(seconds))
        .enumerate()
        .map(|(k, (f, start))| {
            json!({
                "cc": f.cc,
                "port": PORT + k as u16,
                "start_s": start,
                "extra_rtt_ms": f.extra_rtt_ms,
            })
        })
        .collect()
}

/// One repetition on the kernel: the flows through the emulator, their
/// logs and the emulator's in `dir` (cleared first).
fn kernel_run(
    p: &MultiPath,
    exe: &Path,
    dir: &Path,
    seconds: u64,
    seed: u64,
) -> Result<(), String> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let dir = std::fs::canonicalize(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let emu_path = dir.join("emu-path.toml");
    std::fs::write(&emu_path, p.emu_toml(seconds, seed))
        .map_err(|e| format!("cannot write {}: {e}", emu_path.display()))?;
    let (server, client) = p.commands(exe, seconds, &dir);
    let mut extra = vec![
        "--log".to_string(),
        dir.join("emu-log").display().to_string(),
    ];
    if p.queue == Queue::CodelEcn {
        extra.push("--tcp-ecn".into());
    }
    // For a later `--resimulate` (on another kernel, perhaps).
    crate::kernel_release::record(&dir)?;
    crate::emu::run_emu_with(
        exe,
        &emu_path,
        (&server, &client),
        seconds + 60,
        &dir,
        &extra,
    )
    .map(|_| ())
}

/// The kernel's side of a repetition, from what its run left in `dir`
/// (each flow's `tcp send` log, the emulator's queue log and its output),
/// and the connection's packet size. Read back rather than kept in memory,
/// so `--resimulate` judges a new simulator against the same kernel run.
fn kernel_side(
    p: &MultiPath,
    dir: &Path,
    seconds: u64,
) -> Result<(Value, crate::packet_size::PacketSize), String> {
    let need = |name: &str| {
        let f = dir.join(name);
        if f.exists() {
            Ok(f)
        } else {
            Err(format!(
                "{} is missing: {} does not hold a kernel run of path {} (`validate --multiflow` writes it)",
                f.display(),
                dir.display(),
                p.name
            ))
        }
    };
    let starts = p.starts(seconds);
    let flows = (0..p.flows.len())
        .map(|k| {
            let csv = need(&format!("kernel-flow-{k}.csv"))?;
            // Each flow's log starts when it connected, `starts[k]` into
            // the run.
            let ends = flow_window_ends(seconds, starts[k]);
            flow_figures(&csv, 0, 0.0, (seconds - starts[k]) as f64, &ends)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let qd = queue_delay(&need("emu-log/link.csv")?, None, seconds as f64)?;
    let out = need("emu.out")?;
    let stdout =
        std::fs::read_to_string(&out).map_err(|e| format!("cannot read {}: {e}", out.display()))?;
    let tcp: Option<crate::summaries::TcpSendSummary> =
        crate::summaries::line_with(&stdout, "pmtu")
            .map_err(|e| format!("{}: {e}", out.display()))?;
    let size = crate::packet_size::kernel_packet_size(tcp.as_ref());
    Ok((side_json(&flows, seconds, &starts, qd), size))
}

/// When the simulator starts each flow of the repetition in `dir`, µs
/// ([`MultiPath::sim_starts_us`]), and from what: `kernel SYNs` (the
/// emulator's packet log, each flow's SYN by its receiver's port) or
/// `scheduled` (a kernel run logged without ports, before 2026-12-01).
fn sim_starts(p: &MultiPath, dir: &Path, seconds: u64) -> Result<(Vec<u64>, &'static str), String> {
    let packets = dir.join("emu-log").join("packets.csv");
    if !crate::emu_log::logs_ports(&packets) {
        return Ok((p.sim_starts_us(seconds, None), "scheduled"));
    }
    let syn: Vec<u64> = crate::emu_log::first_packets(&packets, PORT, p.flows.len())?
        .iter()
        .map(|f| f.syn_ns)
        .collect();
    Ok((p.sim_starts_us(seconds, Some(&syn)), "kernel SYNs"))
}

/// What the simulator copies from one kernel repetition, and how often
/// it draws: the inputs of [`sim_side`] besides the path.
struct SimRun<'a> {
    /// Seed of draw 0; draw j runs with `first_seed + j` ([`DRAWS`]).
    first_seed: u64,
    /// Seed draws (at least one).
    draws: usize,
    /// The kernel connection's packet size.
    size: crate::packet_size::PacketSize,
    /// The simulated receiver (`--sim-ack`, and Linux's rule of the
    /// kernel the repetition ran on).
    receiver: SimReceiver<'a>,
    /// When each flow sends its SYN, µs ([`sim_starts`]).
    starts_us: &'a [u64],
    /// The hosts' timing noise on the ACKs' way back (`--sim-host-noise`).
    noise: Option<HostNoise>,
    /// The senders' pacer (`--sim-pacing`).
    pacer: crate::validate::SimPacer,
    /// The flows keep TCP timestamps (`--sim-timestamps`).
    timestamps: bool,
}

/// The simulator's side of a repetition: the path with the kernel's
/// packet size and the flows started when the kernel's did, `run.draws`
/// times; draw 0 in `dir/sim` (scenario `dir/scenario.toml`), draw j in
/// `dir/sim-draw-j` (`dir/scenario-draw-j.toml`). What an earlier
/// simulation left there (its draws, or the start phases of runs before
/// 2026-12-01) is removed first.
fn sim_side(p: &MultiPath, dir: &Path, seconds: u64, run: &SimRun) -> Result<Value, String> {
    let SimRun {
        first_seed,
        draws,
        size,
        receiver,
        starts_us,
        noise,
        pacer,
        timestamps,
    } = *run;
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        if name == "sim" || name.starts_with("sim-phase-") || name.starts_with("sim-draw-") {
            std::fs::remove_dir_all(&path)
        } else if name == "scenario.toml"
            || name.starts_with("scenario-phase-")
            || name.starts_with("scenario-draw-")
        {
            std::fs::remove_file(&path)
        } else {
            continue;
        }
        .map_err(|e| format!("cannot clear {}: {e}", path.display()))?;
    }
    let starts = p.starts(seconds);
    let mut sides = Vec::with_capacity(draws);
    for j in 0..draws.max(1) {
        let (toml, out) = if j == 0 {
            ("scenario.toml".to_string(), "sim".to_string())
        } else {
            (format!("scenario-draw-{j}.toml"), format!("sim-draw-{j}"))
        };
        let sc_path = dir.join(toml);
        let text = p.scenario_toml(
            seconds,
            first_seed + j as u64,
            size,
            receiver,
            starts_us,
            noise,
            pacer,
        );
        let text = if timestamps {
            claims::validate::sim_timestamps::apply(&text, p.flows.len())?
        } else {
            text
        };
        std::fs::write(&sc_path, text)
            .map_err(|e| format!("cannot write {}: {e}", sc_path.display()))?;
        let sc = scenario::load(&sc_path).map_err(|e| e.to_string())?;
        let sim_dir = dir.join(out);
        let summary = runner::sweep::run_one(&sc.name, &sc.runs[0], &sim_dir)?;
        let flows = (0..p.flows.len())
            .map(|k| {
                // From the flow's first data, as the kernel's log starts
                // once connected.
                let origin = summary.flows[k]
                    .handshake
                    .map(|h| h.opened_s)
                    .ok_or_else(|| {
                        format!(
                            "{}: flow {k}'s SYN exchange never completed in the simulator",
                            sim_dir.display()
                        )
                    })?;
                flow_figures(
                    &sim_dir.join("flows.csv"),
                    k,
                    origin,
                    seconds as f64 - origin,
                    &flow_window_ends(seconds, starts[k]),
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        sides.push(side_json(
            &flows,
            seconds,
            &starts,
            queue_delay(&sim_dir.join("link.csv"), Some(0.0), seconds as f64)?,
        ));
    }
    Ok(draws_json(&sides))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matrix_covers_what_the_issue_asks_for() {
        let m = matrix();
        let names: Vec<&str> = m.iter().map(|p| p.name.as_str()).collect();
        // Unique names (directories and --only).
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len());
        let two = |p: &MultiPath, a: &str, b: &str| {
            p.flows.len() == 2 && p.flows[0].cc == a && p.flows[1].cc == b
        };
        // bbr and bbrlab_bbr3 against cubic at every buffer of the table,
        // drop-tail, on 20 Mbit/s / 40 ms.
        for lead in ["bbr", BBR3_KERNEL] {
            let bufs: Vec<f64> = m
                .iter()
                .filter(|p| two(p, lead, "cubic"))
                .filter(|p| p.queue == Queue::DropTail)
                .map(|p| p.buffer_bdp)
                .collect();
            assert_eq!(bufs, BUFFERS_BDP, "{lead}");
        }
        assert_eq!(BUFFERS_BDP, [0.5, 1.0, 2.0, 4.0, 8.0, 16.0]);
        assert!(m.iter().all(|p| p.rate_mbit == 20.0 && p.rtt_ms == 40.0));
        // RTT unfairness: two bbr flows, +10 and +50 ms, shallow and deep.
        let rtt: Vec<f64> = m
            .iter()
            .filter(|p| {
                p.flows.iter().map(|f| f.extra_rtt_ms).collect::<Vec<_>>() == [10.0, 50.0]
                    && p.flows.iter().all(|f| f.cc == "bbr")
            })
            .map(|p| p.buffer_bdp)
            .collect();
        assert_eq!(rtt, [1.0, 8.0]);
        // Four bbr flows, staggered.
        assert!(m.iter().any(|p| p.flows.len() == 4
            && p.flows.iter().all(|f| f.cc == "bbr")
            && p.starts(30) == [0, 5, 10, 15]));
        // The control and the ECN path.
        assert!(m.iter().any(|p| two(p, "cubic", "cubic")));
        assert!(m
            .iter()
            .any(|p| p.queue == Queue::CodelEcn && two(p, BBR3_KERNEL, "cubic")));
        for q in QUICK {
            assert!(names.contains(q), "{q}");
        }
        assert!(QUICK.len() <= 3);
    }

    #[test]
    fn an_unknown_path_lists_the_matrix() {
        let e = paths_named(&["nope".into()]).unwrap_err();
        assert!(
            e.contains("`nope`") && e.contains("bbr-vs-cubic-0.5bdp"),
            "{e}"
        );
        assert!(e.contains("bbr3-vs-cubic-codel-ecn"), "{e}");
        assert_eq!(
            paths_named(&["cubic-vs-cubic-2bdp".into()]).unwrap().len(),
            1
        );
    }

    fn size() -> crate::packet_size::PacketSize {
        crate::packet_size::KERNEL_DEFAULT
    }

    /// The hosts' timing noise goes on the simulated ACKs' way back, in
    /// order and cut at zero, and nowhere else: not on the data's way,
    /// and never into the emulator's path (its hosts bring their own).
    #[test]
    fn the_host_noise_is_on_the_simulated_acks_way_back_only() {
        let dir = tempfile::tempdir().unwrap();
        let p = &paths_named(&["bbr-rtt-10-50ms-1bdp".into()]).unwrap()[0];
        let starts = p.sim_starts_us(30, None);
        let load = |noise: Option<HostNoise>, name: &str| {
            let f = dir.path().join(name);
            std::fs::write(
                &f,
                p.scenario_toml(
                    30,
                    1,
                    size(),
                    SimReceiver::running("linux"),
                    &starts,
                    noise,
                    crate::validate::SimPacer::Linux,
                ),
            )
            .unwrap();
            scenario::load(&f).unwrap().runs.remove(0).config
        };
        let with = load(Some(HOST_NOISE), "with.toml");
        let want = link::JitterConfig {
            dist: link::JitterDist::Normal {
                mean_ns: 50_000,
                sd_ns: 20_000,
                floor_ns: 0,
            },
            reorder: false,
        };
        assert_eq!(with.reverse.jitter, Some(want));
        assert_eq!(with.forward.jitter, None);
        // Everything else as without it.
        let without = load(None, "without.toml");
        assert_eq!(without.reverse.jitter, None);
        assert_eq!(
            (with.reverse.rate, with.reverse.delay_ns),
            (without.reverse.rate, without.reverse.delay_ns)
        );
        assert_eq!(format!("{:?}", with.flows), format!("{:?}", without.flows));
        assert!(!p.emu_toml(30, 1).contains("jitter"));
    }

    #[test]
    fn every_paths_scenario_parses_with_its_flows() {
        let dir = tempfile::tempdir().unwrap();
        for p in matrix() {
            let f = dir.path().join(format!("{}.toml", p.name));
            let starts = p.sim_starts_us(30, None);
            std::fs::write(
                &f,
                p.scenario_toml(
                    30,
                    1,
                    size(),
                    SimReceiver::running("linux"),
                    &starts,
                    None,
                    crate::validate::SimPacer::Linux,
                ),
            )
            .unwrap();
            let sc = scenario::load(&f).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert_eq!(sc.runs.len(), 1, "{}", p.name);
            let c = &sc.runs[0].config;
            assert_eq!(c.flows.len(), p.flows.len(), "{}", p.name);
            assert_eq!(c.duration_ns, 30_000_000_000);
            for (k, (f, start)) in c.flows.iter().zip(p.starts(30)).enumerate() {
                // Without the kernel's SYN times, each flow starts (sends
                // its SYN) when the kernel's is scheduled to; the
                // simulated SYN exchange delays its data as the kernel's
                // handshake does.
                assert_eq!(f.start_ns, start * 1_000_000_000, "{} flow {k}", p.name);
                assert_eq!(f.handshake, netsim::Handshake::Tcp, "{} flow {k}", p.name);
                assert_eq!(f.extra_rtt_ns, (p.flows[k].extra_rtt_ms * 1e6) as u64);
                assert_eq!((f.cc.mss_bytes, f.header_bytes), (1448, 52));
                assert_eq!(f.ecn.is_ect(), p.queue == Queue::CodelEcn, "{}", p.name);
                // The kernel's pacing: BBR's TSO bursts, CUBIC unpaced.
                let paced = if p.flows[k].cc == "cubic" {
                    sender::Pacing::Off
                } else {
                    sender::Pacing::Quantum
                };
                assert_eq!(f.pacing, paced, "{} flow {k}", p.name);
                // Both send TSO packets, and defer them as Linux does;
                // Linux's receiver has the running kernel's rule.
                assert!(f.tso_defer, "{} flow {k}", p.name);
                let want = match crate::validate::linux_rcv_autotuning() {
                    "6.16" => netsim::sender::RcvAutotuning::Linux6_16,
                    _ => netsim::sender::RcvAutotuning::Cushioned,
                };
                assert!(
                    matches!(f.ack, netsim::AckPolicy::Linux { autotuning, .. } if autotuning == want),
                    "{} flow {k}: {:?}",
                    p.name,
                    f.ack
                );
                if p.flows[k].cc == BBR3_KERNEL {
                    assert_eq!(
                        crate::compare::kernel_counterpart(&f.cc).unwrap(),
                        BBR3_KERNEL
                    );
                }
            }
            // The emulator's path parses too, with a port rule per flow
            // that has an extra delay, half each way.
            let e = dir.path().join(format!("{}-emu.toml", p.name));
            std::fs::write(&e, p.emu_toml(30, 1)).unwrap();
            let link = scenario::path::load_link(&e).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            let extra: Vec<(u16, u64)> = link
                .ports
                .iter()
                .map(|r| (r.port, r.forward.as_ref().unwrap().delay_ns))
                .collect();
            let want: Vec<(u16, u64)> = p
                .flows
                .iter()
                .enumerate()
                .filter(|(_, f)| f.extra_rtt_ms > 0.0)
                .map(|(k, f)| (PORT + k as u16, (f.extra_rtt_ms / 2.0 * 1e6) as u64))
                .collect();
            assert_eq!(extra, want, "{}", p.name);
        }
        // The RTT-unfairness path: ports 5201 (+5 ms each way) and 5202
        // (+25 ms).
        let p = &paths_named(&["bbr-rtt-10-50ms-1bdp".into()]).unwrap()[0];
        let e = dir.path().join("rtt-emu.toml");
        std::fs::write(&e, p.emu_toml(30, 1)).unwrap();
        let link = scenario::path::load_link(&e).unwrap();
        let ports: Vec<(u16, u64, u64)> = link
            .ports
            .iter()
            .map(|r| {
                let d = |x: &Option<link::ResolvedDirection>| x.as_ref().unwrap().delay_ns;
                (r.port, d(&r.forward), d(&r.reverse))
            })
            .collect();
        assert_eq!(
            ports,
            [(5201, 5_000_000, 5_000_000), (5202, 25_000_000, 25_000_000)]
        );
        // 20 Mbit/s × 40 ms = 66.7 packets of 1500 bytes.
        assert_eq!(p.queue_packets(), 67);
    }

    #[test]
    fn each_flow_gets_its_port_its_start_and_the_runs_end() {
        let p = &paths_named(&["4bbr-staggered-2bdp".into()]).unwrap()[0];
        let (server, client) = p.commands(Path::new("/b"), 30, Path::new("/d"));
        for port in 5201..=5204 {
            assert!(server.contains(&format!("/b tcp recv --listen {{server}}:{port} &")));
        }
        assert!(client.starts_with("/b tcp send --to {server}:5201 --cc bbr --duration 30s"));
        assert!(client.contains("(sleep 15 && exec /b tcp send --to {server}:5204 --cc bbr --duration 15s --interval 10ms --log /d/kernel-flow-3.csv) & p3=$!"), "{client}");
        assert!(client.ends_with("wait $p3 || s=1; exit $s"), "{client}");
    }

    /// Shares by window, on the path's clock: a flow that starts 10 s
    /// into a 22 s run has none of the first two windows and its own
    /// clock's 0-5 s in the third; the last window is the 2 s left. The
    /// simulator's file is on the run's clock from its origin (here 0.04 s,
    /// the SYN exchange), the kernel's from each flow's connection.
    #[test]
    fn shares_by_window_follow_the_paths_clock() {
        assert_eq!(window_ends(22), vec![5, 10, 15, 20, 22]);
        assert_eq!(window_ends(30), vec![5, 10, 15, 20, 25, 30]);
        assert_eq!(window_ends(3), vec![3]);
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("flows.csv");
        // Flow 0 delivers 1 MB/s from the origin; flow 1 (started at 10 s)
        // 3 MB/s of its own clock. Samples every 0.5 s.
        let mut text = String::from("time_s,flow,delivered_bytes,srtt_ms\n");
        for i in 0..=44 {
            let t = i as f64 * 0.5;
            text += &format!("{:.2},0,{},40\n", 0.04 + t, (t * 1e6) as u64);
            if t >= 10.0 {
                text += &format!("{:.2},1,{},40\n", 0.04 + t, ((t - 10.0) * 3e6) as u64);
            }
        }
        std::fs::write(&csv, text).unwrap();
        let starts = [0, 10];
        let flows: Vec<FlowFig> = (0..2)
            .map(|k| {
                // The simulator's flow k: its origin is its own start.
                let origin = 0.04 + starts[k] as f64;
                flow_figures(
                    &csv,
                    k,
                    origin,
                    22.0 - origin,
                    &flow_window_ends(22, starts[k]),
                )
                .unwrap()
            })
            .collect();
        // The run (and the simulator's file) ends at 22 s on the path's
        // clock: the last end reads the last sample before it.
        assert_eq!(flows[1].by_window_end, vec![0.0, 0.0, 15e6, 30e6, 34.5e6]);
        let j = side_json(&flows, 22, &starts, [None; 3]);
        assert_eq!(j["window_s"], json!(5));
        assert_eq!(
            j["flows"][0]["share_by_window"],
            json!([1.0, 1.0, 0.25, 0.25, 0.25])
        );
        assert_eq!(
            j["flows"][1]["share_by_window"],
            json!([0.0, 0.0, 0.75, 0.75, 0.75])
        );
        // Over repetitions (the kernel's mean), window by window.
        let mut other = j.clone();
        other["flows"][0]["share_by_window"] = json!([1.0, 1.0, 0.35, 0.45, 0.25]);
        let m = repetitions_json(&[j, other]);
        let w: Vec<f64> = m["flows"][0]["share_by_window"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert!(
            (w[2] - 0.30).abs() < 1e-12 && (w[3] - 0.35).abs() < 1e-12,
            "{w:?}"
        );
    }

    /// A path's sides as a run writes them (two flows).
    fn side(bytes: [f64; 2], p50: f64) -> Value {
        let flows = [
            FlowFig {
                bytes: bytes[0],
                srtt_median_ms: Some(50.0),
                by_window_end: vec![bytes[0] / 2.0, bytes[0]],
            },
            FlowFig {
                bytes: bytes[1],
                srtt_median_ms: None,
                by_window_end: vec![bytes[1] / 2.0, bytes[1]],
            },
        ];
        side_json(&flows, 30, &[0, 0], [Some(1.0), Some(p50), Some(90.0)])
    }

    #[test]
    fn shares_and_verdicts_come_from_the_json_and_the_bounds() {
        // Kernel 0.86 / 0.14; simulator 0.82 / 0.18: within 0.05.
        let k = side([86e6, 14e6], 40.0);
        assert!((k["flows"][0]["share"].as_f64().unwrap() - 0.86).abs() < 1e-12);
        assert!(
            (k["total_goodput_mbps"].as_f64().unwrap() - 100e6 * 8.0 / 30.0 / 1e6).abs() < 1e-9
        );
        let v = judge(&k, &side([82e6, 18e6], 43.9));
        assert_eq!(v["flows"][0]["share_diff"].as_f64(), Some(-0.04));
        assert_eq!(
            (v["shares_within"].as_bool(), v["within"].as_bool()),
            (Some(true), Some(true))
        );
        // 0.80: 0.06 off, outside.
        let v = judge(&k, &side([80e6, 20e6], 40.0));
        assert_eq!(
            (v["shares_within"].as_bool(), v["within"].as_bool()),
            (Some(false), Some(false))
        );
        // Queue delay: 44.1 ms on 40 is 10.25 % and 4.1 ms: outside; on a
        // short queue 3 ms against 1.5 ms is 100 % but within 2 ms.
        assert_eq!(
            judge(&k, &side([86e6, 14e6], 44.1))["queue_delay_within"],
            false
        );
        assert_eq!(
            judge(&side([1.0, 1.0], 1.5), &side([1.0, 1.0], 3.0))["queue_delay_within"],
            true
        );
        assert_eq!(
            judge(&side([1.0, 1.0], 1.5), &side([1.0, 1.0], 3.6))["queue_delay_within"],
            false
        );
        // A missing figure never passes.
        let mut missing = side([86e6, 14e6], 40.0);
        missing["queue_delay_ms"]["p50"] = Value::Null;
        assert_eq!(judge(&k, &missing)["within"], false);
        assert_eq!(judge(&k, &json!({"flows": []}))["shares_within"], false);
        // The bounds validate.json prints come from the tolerances.
        let b = bounds_json();
        assert!(
            b["share"]["rule"].as_str().unwrap().ends_with("≤ 0.05"),
            "{b}"
        );
        assert!(b["queue_delay_p50_pct"]["rule"]
            .as_str()
            .unwrap()
            .ends_with("≤ 10 %"));
        assert!(b["queue_delay_p50_ms"]["rule"]
            .as_str()
            .unwrap()
            .ends_with("≤ 2 ms"));
        assert_eq!(b["share"]["reason"], SHARE.reason);
    }

    #[test]
    fn repetitions_average_number_by_number() {
        let m = mean_json(&[side([86e6, 14e6], 40.0), side([80e6, 20e6], 44.0)]);
        assert!((m["flows"][0]["share"].as_f64().unwrap() - 0.83).abs() < 1e-12);
        assert_eq!(m["queue_delay_ms"]["p50"].as_f64(), Some(42.0));
        assert_eq!(m["flows"][1]["srtt_median_ms"], Value::Null);
    }

    /// The kernel's side is the mean over repetitions and, with more than
    /// one, keeps each flow's spread for the table; one repetition shows
    /// a bare share, as before.
    #[test]
    fn the_kernels_repetitions_keep_their_spread() {
        let m = repetitions_json(&[
            side([86.0, 14.0], 40.0),
            side([80.0, 20.0], 44.0),
            side([74.0, 26.0], 42.0),
        ]);
        assert_eq!(m["repetitions"], 3);
        assert!((m["flows"][0]["share"].as_f64().unwrap() - 0.80).abs() < 1e-12);
        assert_eq!(m["flows"][1]["share_by_rep"], json!([0.14, 0.2, 0.26]));
        assert_eq!(shares_cell(&m), "0.80 [0.74–0.86] / 0.20 [0.14–0.26]");
        let one = repetitions_json(&[side([86.0, 14.0], 40.0)]);
        assert_eq!(one["repetitions"], Value::Null);
        assert_eq!(shares_cell(&one), "0.86 / 0.14");
    }

    #[test]
    fn the_table_is_built_from_the_json() {
        let k = side([86e6, 14e6], 40.0);
        let s = side([82e6, 18e6], 43.9);
        let doc = json!({"multiflow": {
        "seconds_per_run": 30, "repetitions": 1,
        "paths": [
            {"path": "bbr-vs-cubic-1bdp", "flows": [{"cc": "bbr", "start_s": 0, "extra_rtt_ms": 0.0}, {"cc": "cubic", "start_s": 0, "extra_rtt_ms": 0.0}],
             "kernel": k, "simulator": s, "simulator_vs_kernel": judge(&k, &s)},
            {"path": "bbr3-vs-cubic-codel-ecn", "flows": [{"cc": "bbrlab_bbr3", "start_s": 0, "extra_rtt_ms": 0.0}, {"cc": "cubic", "start_s": 5, "extra_rtt_ms": 10.0}],
             "skipped": "no BPF"},
        ]}});
        let md = markdown(&doc).unwrap();
        assert!(
            md.contains("| bbr-vs-cubic-1bdp | bbr, cubic | 0.86 / 0.14 | 0.82 / 0.18 | -0.04 ✓ | 26.67 / 26.67 | 1.0 / 40.0 / 90.0 | 1.0 / 43.9 / 90.0 | 3.9 ms ✓ | ✓ |"),
            "{md}"
        );
        assert!(
            md.contains("| bbr3-vs-cubic-codel-ecn | bbrlab_bbr3, cubic +10ms @5s | – |"),
            "{md}"
        );
        assert!(md.contains("skipped: no BPF |"), "{md}");
        let failed = json!({"multiflow": {"seconds_per_run": 30, "repetitions": 1, "paths": [
            {"path": "p", "flows": [], "failed": "rep 1: the emulator run failed\nmore", "simulator_vs_kernel": {"within": false}}]}});
        assert!(markdown(&failed)
            .unwrap()
            .contains("| failed ✗: rep 1: the emulator run failed |"));
        assert!(
            md.contains("by ≤ 0.05 and the median queueing delay by ≤ 10 % or ≤ 2 ms"),
            "{md}"
        );
        assert_eq!(markdown(&json!({})).unwrap(), "");
        assert!(markdown(&json!({"multiflow": {}})).is_err());
        // Sections written with start phases (before 2026-12-01, as the
        // book's committed runs are) still say what they did.
        let mut old = doc.clone();
        old["multiflow"]["simulator_phases"] = json!(10);
        old["multiflow"]["simulator_starts"] = json!(STARTS);
        let md = markdown(&old).unwrap();
        assert!(
            md.contains(
                "the median over 10 start phases of the later flows, from half a round trip ahead"
            ),
            "{md}"
        );
        assert!(!md.contains("seeds per repetition"), "{md}");
    }

    /// Each simulated flow sends its SYN when the kernel's did, to the
    /// microsecond, the earliest at 0 whichever flow it was; without the
    /// kernel's times, at the scheduled starts.
    #[test]
    fn the_simulated_flows_start_at_the_kernels_syns() {
        let starts = |p: &MultiPath, starts_us: &[u64]| -> Vec<u64> {
            let dir = tempfile::tempdir().unwrap();
            let f = dir.path().join("s.toml");
            std::fs::write(
                &f,
                p.scenario_toml(
                    30,
                    1,
                    size(),
                    SimReceiver::running("linux"),
                    starts_us,
                    None,
                    crate::validate::SimPacer::Linux,
                ),
            )
            .unwrap();
            let sc = scenario::load(&f).unwrap();
            sc.runs[0].config.flows.iter().map(|f| f.start_ns).collect()
        };
        let p = &paths_named(&["4bbr-staggered-2bdp".into()]).unwrap()[0];
        // The staggered flows' SYNs 5 s apart plus the shell's delays, on
        // the emulator's clock (the first 0.3 s in).
        let syn = [300_000_000, 5_301_234_567, 10_302_000_499, 15_300_000_500];
        let us = p.sim_starts_us(30, Some(&syn));
        assert_eq!(us, [0, 5_001_235, 10_002_000, 15_000_001]);
        assert_eq!(
            starts(p, &us),
            [0, 5_001_235_000, 10_002_000_000, 15_000_001_000]
        );
        assert_eq!(
            p.sim_starts_us(30, None),
            [0, 5_000_000, 10_000_000, 15_000_000]
        );
        // Two flows at once, the second's SYN 156 us ahead: the first
        // starts that much after the second.
        let c = &paths_named(&["cubic-vs-cubic-2bdp".into()]).unwrap()[0];
        let us = c.sim_starts_us(30, Some(&[305_891_000, 305_735_000]));
        assert_eq!(us, [156, 0]);
        assert_eq!(starts(c, &us), [156_000, 0]);
        assert_eq!(c.sim_starts_us(30, None), [0, 0]);
    }

    #[test]
    fn the_simulators_figures_are_the_median_over_its_draws_with_the_spread() {
        let sides = [
            side([80.0, 20.0], 40.0),
            side([50.0, 50.0], 44.0),
            side([60.0, 40.0], 30.0),
        ];
        let m = draws_json(&sides);
        assert_eq!(m["draws"], 3);
        assert_eq!(m["flows"][0]["share"].as_f64(), Some(0.6));
        assert_eq!(m["flows"][1]["share"].as_f64(), Some(0.4));
        assert_eq!(m["queue_delay_ms"]["p50"].as_f64(), Some(40.0));
        assert_eq!(
            (
                m["flows"][0]["share_min"].as_f64(),
                m["flows"][0]["share_max"].as_f64()
            ),
            (Some(0.5), Some(0.8))
        );
        assert_eq!(m["flows"][1]["share_by_draw"], json!([0.2, 0.5, 0.4]));
        // The table shows the spread beside the median; a side without
        // draws (the kernel's, or an older validate.json) shows none.
        assert_eq!(shares_cell(&m), "0.60 [0.50–0.80] / 0.40 [0.20–0.50]");
        assert_eq!(shares_cell(&side([80.0, 20.0], 40.0)), "0.80 / 0.20");
        // Repetitions average the draws' medians; the brackets are the
        // least and greatest over every draw of every repetition.
        let other = draws_json(&[
            side([90.0, 10.0], 40.0),
            side([70.0, 30.0], 40.0),
            side([80.0, 20.0], 40.0),
        ]);
        let both = repetitions_of_draws_json(&[m.clone(), other]);
        assert_eq!(shares_cell(&both), "0.70 [0.50–0.90] / 0.30 [0.10–0.50]");
        assert_eq!(
            both["flows"][1]["share_by_draw"],
            json!([0.2, 0.5, 0.4, 0.1, 0.3, 0.2])
        );
        assert_eq!(both["draws"], 3);
    }

    /// An earlier `--multiflow` run's directory for `cubic-vs-cubic-2bdp`
    /// (5 s, one repetition), as its kernel side left it: the flows'
    /// logs (3 MB and 1 MB delivered), the emulator's queue log and its
    /// output with the connection's MSS and PMTU.
    fn earlier_run_dir(out: &Path) {
        let rep = out.join("multiflow/cubic-vs-cubic-2bdp/rep-0");
        std::fs::create_dir_all(rep.join("emu-log")).unwrap();
        for (k, bytes) in [(0, 3_000_000), (1, 1_000_000)] {
            std::fs::write(
                rep.join(format!("kernel-flow-{k}.csv")),
                format!(
                    "time_s,flow,delivered_bytes,srtt_ms\n1.0,0,1000,50.0\n4.99,0,{bytes},60.0\n"
                ),
            )
            .unwrap();
        }
        std::fs::write(
            rep.join("emu-log/link.csv"),
            "time_s,direction,queue_packets,queue_delay_ms\n0.5,forward,3,10.0\n1.0,forward,5,20.0\n2.0,forward,5,30.0\n",
        )
        .unwrap();
        std::fs::write(
            rep.join("emu.out"),
            // `tcp send`'s whole summary line, as the emulator passes it on.
            "{\"cc\":\"cubic\",\"bytes\":1000,\"seconds\":5.0,\"goodput_bps\":1600.0,\"rtt_median_ms\":41.0,\"rtt_median_steady_ms\":41.0,\"rtt_p95_ms\":45.0,\"retransmits\":0,\"data_segments_sent\":1,\"retransmitted_fraction\":0.0,\"rtos\":0,\"delivery_rate_median_bps\":null,\"busy_s\":5.0,\"rwnd_limited_s\":0.0,\"sndbuf_limited_s\":0.0,\"host_limited_fraction\":0.0,\"delivered_ce\":0,\"mss\":1448,\"pmtu\":1500,\"samples\":500}\n",
        )
        .unwrap();
        // The emulator's packet log: the second flow's SYN 156 us ahead.
        std::fs::write(
            rep.join("emu-log/packets.csv"),
            "enqueue_s,direction,bytes,src_port,dst_port\n\
             0.305735,forward,60,39210,5202\n\
             0.305891,forward,60,40622,5201\n\
             0.346417,forward,1500,39210,5202\n\
             0.346702,forward,1500,40622,5201\n",
        )
        .unwrap();
        // What runs with more draws, and with the start phases before
        // 2026-12-01, left behind.
        std::fs::create_dir_all(rep.join("sim-phase-7")).unwrap();
        std::fs::write(rep.join("scenario-phase-7.toml"), "").unwrap();
        std::fs::create_dir_all(rep.join("sim-draw-7")).unwrap();
        std::fs::write(rep.join("scenario-draw-7.toml"), "").unwrap();
        std::fs::write(
            out.join("validate.json"),
            json!({"multiflow": {"seconds_per_run": 5, "repetitions": 1, "paths": [
                {"path": "cubic-vs-cubic-2bdp", "kernel": {}, "simulator": {}},
                {"path": "bbr3-vs-cubic-codel-ecn", "skipped": "no BPF"},
            ]}})
            .to_string(),
        )
        .unwrap();
    }

    /// A repetition that fails (here: its kernel logs are gone) is kept
    /// with why, and the path is judged on the repetitions that ran.
    #[test]
    fn a_failed_repetition_keeps_the_ones_that_ran() {
        let dir = tempfile::tempdir().unwrap();
        earlier_run_dir(dir.path());
        let json = dir.path().join("validate.json");
        let text = std::fs::read_to_string(&json).unwrap();
        std::fs::write(
            &json,
            text.replace("\"repetitions\":1", "\"repetitions\":2"),
        )
        .unwrap();
        resimulate(dir.path(), Some(vec!["cubic-vs-cubic-2bdp".into()])).unwrap();
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let p = &doc["multiflow"]["paths"][0];
        assert_eq!(p["path"], "cubic-vs-cubic-2bdp");
        assert_eq!(p["repetitions"], 1, "{p}");
        let failed = p["failed_repetitions"].as_array().unwrap();
        assert_eq!(failed.len(), 1, "{p}");
        assert!(failed[0].as_str().unwrap().starts_with("rep 2:"), "{p}");
        assert_eq!(p["kernel"]["flows"][0]["share"].as_f64(), Some(0.75));
        let md = std::fs::read_to_string(dir.path().join("validate.md")).unwrap();
        assert!(md.contains("(1 rep(s) failed)"), "{md}");
    }

    fn resimulate(out: &Path, only: Option<Vec<String>>) -> Result<bool, String> {
        resimulate_as(out, crate::validate::SimPacer::Linux, false, 3, only)
    }

    /// `--resimulate` of the run in `out` with `pacer`, `timestamps` and
    /// `draws` draws.
    fn resimulate_as(
        out: &Path,
        pacer: crate::validate::SimPacer,
        timestamps: bool,
        draws: usize,
        only: Option<Vec<String>>,
    ) -> Result<bool, String> {
        run(&Options {
            out: out.to_path_buf(),
            quick: false,
            only,
            reps: None,
            seconds: None,
            ack: "linux",
            pacer,
            timestamps,
            draws,
            noise: Some(HOST_NOISE),
            resimulate: true,
        })
    }

    /// `--resimulate --only` judges the paths named and leaves every
    /// other path's entry, judged or skipped, as the earlier run wrote it
    /// (it used to drop them from validate.json).
    #[test]
    fn resimulate_only_keeps_the_other_paths() {
        let dir = tempfile::tempdir().unwrap();
        earlier_run_dir(dir.path());
        let json = dir.path().join("validate.json");
        let mut doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let judged = json!({"path": "bbr-vs-cubic-1bdp", "kernel": {"flows": [{"share": 0.86}]},
            "simulator": {"flows": [{"share": 0.84}]}, "simulator_vs_kernel": {"within": true}});
        doc["multiflow"]["paths"]
            .as_array_mut()
            .unwrap()
            .push(judged.clone());
        std::fs::write(&json, doc.to_string()).unwrap();
        resimulate(dir.path(), Some(vec!["cubic-vs-cubic-2bdp".into()])).unwrap();
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let paths = doc["multiflow"]["paths"].as_array().unwrap();
        let names: Vec<&str> = paths.iter().map(|p| p["path"].as_str().unwrap()).collect();
        // The matrix's order; the untouched entries byte for byte.
        assert_eq!(
            names,
            [
                "bbr-vs-cubic-1bdp",
                "cubic-vs-cubic-2bdp",
                "bbr3-vs-cubic-codel-ecn"
            ]
        );
        assert_eq!(paths[0], judged);
        assert_eq!(paths[2]["skipped"], "no BPF");
        assert!(
            paths[1]["simulator"]["draws"].as_f64().is_some(),
            "{}",
            paths[1]
        );
        let md = std::fs::read_to_string(dir.path().join("validate.md")).unwrap();
        assert!(md.contains("| bbr-vs-cubic-1bdp |"), "{md}");
    }

    /// `--sim-pacing exact` paces every simulated flow one packet at a
    /// time and says so in validate.json; `--only`, which keeps the other
    /// paths' figures, must keep their pacer too.
    #[test]
    fn resimulate_paces_as_asked_and_only_keeps_one_pacer() {
        let dir = tempfile::tempdir().unwrap();
        earlier_run_dir(dir.path());
        let with = |pacer, only| resimulate_as(dir.path(), pacer, false, 1, only);
        let only = || Some(vec!["cubic-vs-cubic-2bdp".into()]);
        // The earlier run records no pacer: it paced as Linux does.
        let e = with(crate::validate::SimPacer::Exact, only()).unwrap_err();
        assert!(
            e.contains("--resimulate --only") && e.contains("--sim-pacing linux"),
            "{e}"
        );
        with(crate::validate::SimPacer::Exact, None).unwrap();
        let json = dir.path().join("validate.json");
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(doc["multiflow"]["simulator_pacer"], "exact");
        let rep = dir.path().join("multiflow/cubic-vs-cubic-2bdp/rep-0");
        let text = std::fs::read_to_string(rep.join("scenario.toml")).unwrap();
        assert_eq!(text.matches("pacing = \"exact\"").count(), 2, "{text}");
        // Now the same pacer may keep the other paths; Linux's may not.
        with(crate::validate::SimPacer::Exact, only()).unwrap();
        let e = with(crate::validate::SimPacer::Linux, only()).unwrap_err();
        assert!(e.contains("--sim-pacing exact"), "{e}");
        with(crate::validate::SimPacer::Linux, None).unwrap();
        let text = std::fs::read_to_string(rep.join("scenario.toml")).unwrap();
        assert_eq!(text.matches("pacing = \"off\"").count(), 2, "{text}");
    }

    /// `--sim-timestamps` gives every simulated flow TCP timestamps and
    /// says so in validate.json and the table; `--only` keeps the other
    /// paths' figures, so it must match the earlier run.
    #[test]
    fn resimulate_with_timestamps_stamps_every_flow_and_only_keeps_one_kind() {
        let dir = tempfile::tempdir().unwrap();
        earlier_run_dir(dir.path());
        let with = |timestamps, only| {
            resimulate_as(
                dir.path(),
                crate::validate::SimPacer::Linux,
                timestamps,
                1,
                only,
            )
        };
        let only = || Some(vec!["cubic-vs-cubic-2bdp".into()]);
        let e = with(true, only()).unwrap_err();
        assert!(
            e.contains("--resimulate --only") && e.contains("run without --sim-timestamps"),
            "{e}"
        );
        with(true, None).unwrap();
        let json = dir.path().join("validate.json");
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(doc["multiflow"]["simulator_timestamps"], true);
        let rep = dir.path().join("multiflow/cubic-vs-cubic-2bdp/rep-0");
        let text = std::fs::read_to_string(rep.join("scenario.toml")).unwrap();
        assert_eq!(text.matches("timestamps = true").count(), 2, "{text}");
        let md = std::fs::read_to_string(dir.path().join("validate.md")).unwrap();
        assert!(md.contains("--sim-timestamps"), "{md}");
        with(true, only()).unwrap();
        with(false, None).unwrap();
        let text = std::fs::read_to_string(rep.join("scenario.toml")).unwrap();
        assert!(!text.contains("timestamps"), "{text}");
    }

    #[test]
    fn resimulate_judges_a_new_simulation_against_the_kept_kernel_run() {
        let dir = tempfile::tempdir().unwrap();
        earlier_run_dir(dir.path());
        // The kept runs were made on a kernel before 6.16: the simulated
        // receiver takes that kernel's rule, whatever this one runs.
        let rep = dir.path().join("multiflow/cubic-vs-cubic-2bdp/rep-0");
        std::fs::write(rep.join(crate::kernel_release::FILE), "6.1.0-25-amd64\n").unwrap();
        resimulate(dir.path(), None).unwrap();
        let doc: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("validate.json")).unwrap(),
        )
        .unwrap();
        let mf = &doc["multiflow"];
        assert_eq!(
            (mf["simulator_draws"].as_u64(), mf["simulator_ack"].as_str()),
            (Some(3), Some("linux"))
        );
        assert_eq!(mf["seconds_per_run"], 5);
        let paths = mf["paths"].as_array().unwrap();
        // The earlier run's order and its skipped path, kept as it was.
        assert_eq!(paths.len(), 2);
        assert_eq!(paths[1]["skipped"], "no BPF");
        let p = &paths[0];
        assert_eq!(p["path"], "cubic-vs-cubic-2bdp");
        // The kernel side is read back from the logs.
        assert_eq!(p["kernel"]["flows"][0]["share"].as_f64(), Some(0.75));
        assert_eq!(p["kernel"]["queue_delay_ms"]["p50"].as_f64(), Some(20.0));
        // The simulator ran three draws, and its figures are their median.
        let s = &p["simulator"];
        assert_eq!(s["draws"].as_f64(), Some(3.0));
        let f0 = &s["flows"][0];
        assert_eq!(f0["share_by_draw"].as_array().unwrap().len(), 3);
        let (lo, mid, hi) = (
            f0["share_min"].as_f64().unwrap(),
            f0["share"].as_f64().unwrap(),
            f0["share_max"].as_f64().unwrap(),
        );
        assert!(lo - 1e-3 <= mid && mid <= hi + 1e-3 && lo > 0.0, "{f0}");
        assert!(p["simulator_vs_kernel"]["within"].is_boolean());
        let rep = dir.path().join("multiflow/cubic-vs-cubic-2bdp/rep-0");
        for d in ["sim", "sim-draw-1", "sim-draw-2"] {
            assert!(rep.join(d).join("flows.csv").exists(), "{d}");
        }
        // Each draw starts the flows at the kernel's SYN times (the second
        // 156 us ahead), both with a SYN exchange and the kernel's packet
        // size, with its own seed (1, 2, 3 for the first repetition).
        assert_eq!(
            p["simulator_starts_by_rep"],
            json!([{"from": "kernel SYNs", "flow_starts_us": [156, 0],
                "kernel_release": "6.1.0-25-amd64", "rcv_autotuning": "pre-6.16"}])
        );
        assert_eq!(mf["simulator_starts"], STARTS_KERNEL);
        for (j, file) in [
            "scenario.toml",
            "scenario-draw-1.toml",
            "scenario-draw-2.toml",
        ]
        .iter()
        .enumerate()
        {
            let sc = scenario::load(&rep.join(file)).unwrap();
            assert_eq!(sc.runs[0].config.seed, 1 + j as u64, "{file}");
            for f in &sc.runs[0].config.flows {
                assert!(
                    matches!(
                        f.ack,
                        netsim::AckPolicy::Linux {
                            autotuning: netsim::sender::RcvAutotuning::Cushioned,
                            ..
                        }
                    ),
                    "{file}: {:?}",
                    f.ack
                );
            }
            // With the hosts' timing noise on the ACKs' way back.
            assert!(sc.runs[0].config.reverse.jitter.is_some(), "{file}");
            let flows = &sc.runs[0].config.flows;
            assert_eq!(
                (flows[0].start_ns, flows[1].start_ns),
                (156_000, 0),
                "{flows:?}"
            );
            assert!(flows.iter().all(|f| f.handshake == netsim::Handshake::Tcp));
            assert!(flows.iter().all(|f| f.initial_burst_packets == 10));
            assert_eq!((flows[1].cc.mss_bytes, flows[1].header_bytes), (1448, 52));
        }
        // What earlier simulations left is gone.
        for old in [
            "sim-phase-7",
            "scenario-phase-7.toml",
            "sim-draw-7",
            "scenario-draw-7.toml",
        ] {
            assert!(!rep.join(old).exists(), "{old}");
        }
        let md = std::fs::read_to_string(dir.path().join("validate.md")).unwrap();
        assert!(md.contains("median over 3 seeds per repetition"), "{md}");
        assert!(
            md.contains("each simulated ACK comes back 50 µs ± 20 µs later"),
            "{md}"
        );
        assert_eq!(
            mf["simulator_host_noise"],
            json!({ "mean_us": 50, "sd_us": 20 })
        );
        assert!(
            md.contains("send their SYNs when the repetition's kernel flows did (the emulator's packet log)"),
            "{md}"
        );
    }

    /// A kernel run logged before the emulator named each packet's ports
    /// has no SYN times: its simulated flows start at their scheduled
    /// times, and the JSON and the table say so.
    #[test]
    fn a_kernel_run_without_ports_starts_the_flows_as_scheduled() {
        let dir = tempfile::tempdir().unwrap();
        earlier_run_dir(dir.path());
        let rep = dir.path().join("multiflow/cubic-vs-cubic-2bdp/rep-0");
        std::fs::write(
            rep.join("emu-log/packets.csv"),
            "enqueue_s,direction,bytes\n0.305735,forward,60\n",
        )
        .unwrap();
        resimulate(dir.path(), None).unwrap();
        let doc: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("validate.json")).unwrap(),
        )
        .unwrap();
        let mf = &doc["multiflow"];
        // Runs kept without their kernel's name take the running one's.
        assert_eq!(
            mf["paths"][0]["simulator_starts_by_rep"],
            json!([{"from": "scheduled", "flow_starts_us": [0, 0], "kernel_release": null,
                "rcv_autotuning": crate::validate::linux_rcv_autotuning()}])
        );
        assert_eq!(mf["simulator_starts"], STARTS_SCHEDULED);
        let sc = scenario::load(&rep.join("scenario.toml")).unwrap();
        let flows = &sc.runs[0].config.flows;
        assert_eq!((flows[0].start_ns, flows[1].start_ns), (0, 0));
        let md = std::fs::read_to_string(dir.path().join("validate.md")).unwrap();
        assert!(md.contains("else at their scheduled times"), "{md}");
    }

    #[test]
    fn resimulate_says_what_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let e = resimulate(dir.path(), None).unwrap_err();
        assert!(
            e.contains("--resimulate") && e.contains("validate.json"),
            "{e}"
        );
        earlier_run_dir(dir.path());
        let e = resimulate(dir.path(), Some(vec!["bbr-vs-cubic-1bdp".into()])).unwrap_err();
        assert!(
            e.contains("`bbr-vs-cubic-1bdp`") && e.contains("cubic-vs-cubic-2bdp"),
            "{e}"
        );
        // A kernel run without the emulator's output is that path's miss,
        // with the file named.
        std::fs::remove_file(
            dir.path()
                .join("multiflow/cubic-vs-cubic-2bdp/rep-0/emu.out"),
        )
        .unwrap();
        assert!(!resimulate(dir.path(), None).unwrap());
        let doc: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("validate.json")).unwrap(),
        )
        .unwrap();
        let failed = doc["multiflow"]["paths"][0]["failed"].as_str().unwrap();
        assert!(failed.contains("emu.out is missing"), "{failed}");
    }
}
