//! `bbrlab`: BBR congestion control, done properly, as software people can use.
//!
//! Subcommands:
//! - `reproduce`: run every published claim (C1–C14) and write the report
//! - `sim`: run a scenario file in the packet-level simulator
//! - `plot`: draw the standard figures for a run directory
//! - `emu`: run real programs over an emulated path (root)
//! - `tcp`: kernel-TCP bulk sender/receiver that records Linux's BBR
//! - `kernel`: load/unload bbrlab's BBR and bbr-jitter as BPF congestion
//!   controls in Linux TCP, and run seed 001's jitter sweep on them
//! - `send` / `recv`: the UDP transport
//! - `compare`: one scenario in the simulator, over UDP and over kernel TCP
//! - `bench`: measure the simulator's speed on the standard dumbbell

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

use claims::reproduce;
use figures as plots;
use tcp_probe as tcp;

mod bench;
mod compare;
mod emu;
mod emu_child;
mod kernel;
mod kernel_sweep;
mod signals;
mod sim;
mod validate;

/// BBR congestion control: simulate, measure and compare.
#[derive(Parser)]
#[command(name = "bbrlab", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Reproduce every published claim (C1–C14) in the simulator and write
    /// an HTML report with the paper-style figures and a verdict per claim.
    ///
    /// Exit status: 0 when every run completed and the report was written,
    /// even if some claims are not reproduced (the report and the summary
    /// line say which; a claim that does not reproduce is a finding, not a
    /// failure of the command). With --strict, 1 if any claim is not
    /// reproduced, for CI. Errors (a run that fails, an unwritable
    /// directory) always exit 1.
    Reproduce {
        /// Report directory.
        #[arg(long, short, default_value = "report")]
        out: PathBuf,
        /// Shorter durations (for CI); every claim's checks still apply.
        #[arg(long)]
        quick: bool,
        /// Only these claims, comma-separated (e.g. `C1,C3` or `1,3`).
        #[arg(long, value_delimiter = ',')]
        only: Option<Vec<String>>,
        /// Parallel runs (default: all cores).
        #[arg(long, short)]
        jobs: Option<usize>,
        /// No progress bar or per-claim lines.
        #[arg(long, short)]
        quiet: bool,
        /// Print the README's Markdown claims table from an existing
        /// claims.json (e.g. report/claims.json) and exit.
        #[arg(long, value_name = "CLAIMS_JSON")]
        table: Option<PathBuf>,
        /// Exit with status 1 if any claim is not reproduced (for CI); the
        /// report is written either way.
        #[arg(long, conflicts_with = "table")]
        strict: bool,
    },
    /// Run real programs over an emulated path (needs root): two network
    /// namespaces joined by TUN devices, with the link model in between.
    /// "up" is client → server (the link's forward direction), "down" is
    /// server → client. --rate, --queue and --loss shape both directions and
    /// --rtt is split evenly between them; --up-* / --down-* override one
    /// direction.
    #[command(
        after_help = "Examples:\n  bbrlab emu --rate 10mbit --rtt 40ms --queue 100 \\\n    --server 'iperf3 -s -1' --client 'iperf3 -c {server} -C bbr -t 10'\n  # 50 Mbit/s down, 5 Mbit/s up, 60 ms round trip:\n  bbrlab emu --down-rate 50mbit --up-rate 5mbit --rtt 60ms --interactive"
    )]
    Emu(Box<EmuArgs>),
    /// Send over bbrlab's UDP transport, paced by a `congestion` controller.
    Send(SendArgs),
    /// Receive one transfer over bbrlab's UDP transport and verify it.
    Recv {
        /// Address to listen on.
        #[arg(long, default_value = "0.0.0.0:5202")]
        listen: std::net::SocketAddr,
        /// Write the stream to this file (default: check the sender's pattern).
        #[arg(long)]
        output: Option<PathBuf>,
        /// Flow-control window, bytes (bounds the receiver's memory).
        #[arg(long, default_value_t = 16 << 20)]
        window: u64,
        /// Give up when the sender is silent this long.
        #[arg(long, default_value = "5s")]
        idle_timeout: String,
        /// How long to wait for a sender.
        #[arg(long, default_value = "60s")]
        accept_timeout: String,
    },
    /// Run a one-flow scenario in the simulator and, through the emulator
    /// (root), with kernel TCP and/or the UDP transport; overlay and tabulate.
    Compare {
        /// The scenario (one flow, no sweep).
        scenario: PathBuf,
        /// Real sources to add: kernel, udp (comma-separated), or `none`.
        #[arg(long, value_delimiter = ',', default_value = "kernel,udp")]
        with: Vec<String>,
        /// Output directory (default out/compare-NAME, NAME the scenario's name).
        #[arg(long, short)]
        out: Option<PathBuf>,
    },
    /// Validate the simulator against kernel TCP (root): a matrix of
    /// single-flow paths (2–100 Mbit/s, 5–200 ms, 0.25–10 BDP, 0–5 % loss,
    /// jitter), each through `compare` with kernel TCP (and the UDP
    /// transport for bbr), repeated; writes validate.json, validate.md and
    /// each run's overlays. Exits 0 unless --strict and a path misses.
    Validate {
        /// Output directory.
        #[arg(long, short, default_value = "out/validate")]
        out: PathBuf,
        /// Four representative paths, one repetition, 6 s runs (< 10 min).
        #[arg(long)]
        quick: bool,
        /// Only these paths (comma-separated names; see validate.json).
        #[arg(long, value_delimiter = ',')]
        only: Option<Vec<String>>,
        /// Repetitions per path and algorithm (default 3, 1 with --quick).
        #[arg(long)]
        reps: Option<usize>,
        /// Seconds per transfer (default 10, 6 with --quick).
        #[arg(long)]
        seconds: Option<u64>,
        /// Algorithms to validate (kernel names).
        #[arg(long, value_delimiter = ',', default_value = "bbr,cubic")]
        algorithms: Vec<String>,
        /// Exit with status 1 when any path misses its bounds (for CI).
        #[arg(long)]
        strict: bool,
        /// Print the Markdown table of an existing validate.json and exit.
        #[arg(long, value_name = "VALIDATE_JSON")]
        table: Option<PathBuf>,
    },
    /// Kernel-TCP bulk transfer that records Linux's own BBR/CUBIC/Reno.
    Tcp {
        #[command(subcommand)]
        side: TcpSide,
    },
    /// bbrlab's BBR and bbr-jitter as BPF congestion controls inside Linux
    /// TCP (`bbrlab_bbr`, `bbrlab_jitter`; root).
    Kernel {
        #[command(subcommand)]
        action: KernelAction,
    },
    /// Run a scenario file in the simulator; writes time series and summaries.
    Sim {
        /// The scenario (TOML; schema in docs/scenarios.md).
        scenario: PathBuf,
        /// Output directory (default: the scenario's `output`, else `out/<name>`).
        #[arg(long, short)]
        out: Option<PathBuf>,
        /// Parallel runs for sweeps (default: all cores).
        #[arg(long, short)]
        jobs: Option<usize>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
        /// Skip drawing figures (faster for large sweeps).
        #[arg(long)]
        no_plots: bool,
        /// Use an output directory that is not empty: first remove what an
        /// earlier run wrote there (run-NNNN/, CSV, JSON, figures,
        /// scenario.toml). Other files are never removed; they are an error.
        #[arg(long)]
        force: bool,
    },
    /// Draw the standard figures (SVG and PNG) for a run directory.
    Plot {
        /// A directory holding `flows.csv` (and optionally `link.csv`).
        run_dir: PathBuf,
    },
    /// Simulator speed: one BBR flow, 100 Mbit/s, 40 ms, 60 s simulated.
    Bench {
        /// Simulated seconds.
        #[arg(long, default_value_t = 60)]
        seconds: u64,
        /// Also run C2's 10 Gbit/s, 100 ms, 1 % loss path for 30 s and
        /// report its wall time and the peak memory (RSS) of this process.
        #[arg(long)]
        large: bool,
        /// Instead: goodput and CPU cost (Gbit per CPU-second) of the UDP
        /// transport (`bbrlab send`/`recv`, bbr) on loopback against quinn's
        /// BBR and CUBIC in the same run (ratios per round), each for
        /// --seconds; then without GSO and kernel TCP bbr once.
        #[arg(long, conflicts_with = "large")]
        transport: bool,
        /// Rounds of the --transport comparison.
        #[arg(long, default_value_t = 3, requires = "transport")]
        runs: u32,
        /// quinn's bulk program for --transport (default: `quinn-bulk` next
        /// to this binary; `cargo build --release -p quinn-baseline`).
        #[arg(long, requires = "transport")]
        quinn: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum KernelAction {
    /// Load and register (pinned under /sys/fs/bpf/bbrlab, so they stay
    /// after this command exits). Default: all.
    Load {
        /// bbrlab_bbr and/or bbrlab_jitter.
        names: Vec<String>,
    },
    /// Unregister (default: every loaded one). Refuses while sockets use
    /// it unless --force.
    Unload {
        /// bbrlab_bbr and/or bbrlab_jitter.
        names: Vec<String>,
        /// Unload even while sockets run it (they keep it until they close).
        #[arg(long)]
        force: bool,
    },
    /// Show each control: loaded, registered, sockets running it.
    List,
    /// Seed 001's jitter experiment (claims C11/C12) on real Linux TCP
    /// (root): each control through `bbrlab emu` at 3 Mbit/s with every
    /// data packet delayed by Normal(60 ms, sd), for each sd and seed;
    /// writes jitter-sweep.csv and jitter-sweep.json (provenance) in --out.
    /// Load bbrlab's controls first (`bbrlab kernel load`). Exits 1 if a
    /// run failed (its row says why).
    #[command(
        after_help = "Example (the lock keeps other users of the controls out while they run):\n  sudo flock /tmp/bbrlab-kernel-cc.lock sh -c \\\n    'bbrlab kernel load && bbrlab kernel jitter-sweep --out out/jitter; bbrlab kernel unload --force'\n  # --force: the last runs' sockets keep the controls for minutes after the sweep\n  bbrlab kernel jitter-sweep --table out/jitter/jitter-sweep.csv"
    )]
    JitterSweep(JitterSweepArgs),
}

/// `bbrlab kernel jitter-sweep`'s options.
#[derive(clap::Args)]
struct JitterSweepArgs {
    /// Output directory: jitter-sweep.csv, jitter-sweep.json and runs/
    /// (each run's path file, emulator output and probe time series).
    #[arg(long, short, default_value = "out/kernel-jitter-sweep")]
    out: PathBuf,
    /// RTT standard deviations, ms (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "0,10,20,30,40,50,60")]
    sds: Vec<f64>,
    /// Seeds of the emulator's delay draws (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    seeds: Vec<u64>,
    /// Congestion controls, alternated at each (sd, seed).
    #[arg(long, value_delimiter = ',', default_value = "bbr,bbrlab_jitter")]
    cc: Vec<String>,
    /// Bytes each run sends [default: 3000000, 8 s at the line rate].
    #[arg(long, conflicts_with = "duration")]
    bytes: Option<u64>,
    /// Or how long each run sends (e.g. 60s, as C12's runs).
    #[arg(long)]
    duration: Option<String>,
    /// Longest one run may take, s, before it is stopped and recorded as
    /// failed [default: the transfer at 1 Mbit/s, or the duration, + 120].
    #[arg(long)]
    timeout: Option<u64>,
    /// No progress bar (a line per finished run still prints).
    #[arg(long, short)]
    quiet: bool,
    /// Print the README's Markdown table of an existing jitter-sweep.csv
    /// and exit.
    #[arg(long, value_name = "CSV", conflicts_with_all = ["bytes", "duration", "timeout"])]
    table: Option<PathBuf>,
}

fn jitter_sweep(a: JitterSweepArgs) -> Result<(), String> {
    use crate::kernel_sweep::{run, Options};
    use claims::linux_tcp::table_from;
    if let Some(csv) = a.table {
        return table_from(&csv).map(|t| print!("{t}"));
    }
    let duration_s = match &a.duration {
        Some(d) => Some(duration_arg("--duration", d)?.as_secs_f64()),
        None => None,
    };
    let bytes = match (a.bytes, duration_s) {
        (None, None) => Some(3_000_000),
        (b, _) => b,
    };
    run(&Options {
        out: a.out,
        sds_ms: a.sds,
        seeds: a.seeds,
        ccs: a.cc,
        bytes,
        duration_s,
        timeout_s: a
            .timeout
            .unwrap_or_else(|| Options::default_timeout_s(bytes, duration_s)),
        quiet: a.quiet,
    })
}

#[derive(Subcommand)]
enum TcpSide {
    /// Send a verifiable byte stream and sample TCP_INFO / TCP_CC_INFO.
    Send {
        /// Receiver address, e.g. 10.77.0.2:5201.
        #[arg(long)]
        to: std::net::SocketAddr,
        /// Kernel congestion control: bbr, cubic or reno.
        #[arg(long, default_value = "bbr")]
        cc: String,
        /// How long to send (e.g. 10s).
        #[arg(long, default_value = "10s")]
        duration: String,
        /// Send exactly this many bytes instead of for a duration.
        #[arg(long)]
        bytes: Option<u64>,
        /// Sampling interval for the time series.
        #[arg(long, default_value = "10ms")]
        interval: String,
        /// Write the time series (the simulator's flows.csv schema) here.
        #[arg(long)]
        log: Option<PathBuf>,
    },
    /// Receive one transfer, check every byte, the length and the hash.
    Recv {
        /// Address to listen on.
        #[arg(long, default_value = "0.0.0.0:5201")]
        listen: std::net::SocketAddr,
        /// Give up when the sender is silent this long.
        #[arg(long, default_value = "10s")]
        idle_timeout: String,
    },
}

fn duration_arg(flag: &str, v: &str) -> Result<std::time::Duration, String> {
    link::units::parse_duration_ns(v)
        .map(std::time::Duration::from_nanos)
        .map_err(|e| format!("{flag}: {e}"))
}

fn tcp_command(side: TcpSide) -> Result<(), String> {
    match side {
        TcpSide::Send {
            to,
            cc,
            duration,
            bytes,
            interval,
            log,
        } => {
            let o = tcp::SendOptions {
                to,
                cc,
                duration_s: duration_arg("--duration", &duration)?.as_secs_f64(),
                bytes,
                interval: duration_arg("--interval", &interval)?
                    .max(std::time::Duration::from_millis(1)),
                log,
            };
            let s = tcp::send(&o)?;
            println!("{}", serde_json::to_string(&s).map_err(|e| e.to_string())?);
            Ok(())
        }
        TcpSide::Recv {
            listen,
            idle_timeout,
        } => {
            let s = tcp::recv(listen, duration_arg("--idle-timeout", &idle_timeout)?)?;
            println!("{}", serde_json::to_string(&s).map_err(|e| e.to_string())?);
            Ok(())
        }
    }
}

/// `bbrlab emu`'s options.
#[derive(clap::Args)]
struct EmuArgs {
    /// Use this scenario file's [link] table for the path (no path flags
    /// then). Only [link] and `seed` are read: a file with just a [link]
    /// table will do; duration, flows and sweeps of other keys are ignored.
    #[arg(long)]
    scenario: Option<PathBuf>,
    /// Bottleneck rate of both directions (e.g. 10mbit); default unlimited.
    #[arg(long)]
    rate: Option<String>,
    /// Round-trip propagation delay, half of it each way [default: 40ms].
    #[arg(long)]
    rtt: Option<String>,
    /// Bottleneck queue of both directions: packets (100), or with units
    /// (100pkt, 150kB) [default: 100].
    #[arg(long)]
    queue: Option<String>,
    /// Random loss in both directions (e.g. 1% or 0.01).
    #[arg(long)]
    loss: Option<String>,
    /// Rate client → server (overrides --rate; `unlimited` for none).
    #[arg(long)]
    up_rate: Option<String>,
    /// Rate server → client (overrides --rate; `unlimited` for none).
    #[arg(long)]
    down_rate: Option<String>,
    /// One-way delay client → server; with --rtt the other direction gets
    /// the rest, with --down-delay the RTT is their sum.
    #[arg(long)]
    up_delay: Option<String>,
    /// One-way delay server → client (see --up-delay).
    #[arg(long)]
    down_delay: Option<String>,
    /// Queue client → server (overrides --queue).
    #[arg(long)]
    up_queue: Option<String>,
    /// Queue server → client (overrides --queue).
    #[arg(long)]
    down_queue: Option<String>,
    /// Loss client → server (overrides --loss; 0 for none).
    #[arg(long)]
    up_loss: Option<String>,
    /// Loss server → client (overrides --loss; 0 for none).
    #[arg(long)]
    down_loss: Option<String>,
    /// Seed for loss and jitter (default: the scenario's with --scenario,
    /// else 1).
    #[arg(long)]
    seed: Option<u64>,
    /// Keep the kernel's TCP buffer limits in the namespaces (by default
    /// net.ipv4.tcp_rmem/tcp_wmem allow 64 MiB, so host buffers do not cap
    /// fast or long paths).
    #[arg(long)]
    kernel_buffers: bool,
    /// Command run in the server namespace ({server} and {client} expand to the addresses).
    #[arg(long)]
    server: Option<String>,
    /// Command run in the client namespace; the run ends when it exits.
    #[arg(long)]
    client: Option<String>,
    /// Write packets.csv (every packet's fate) and link.csv here.
    #[arg(long)]
    log: Option<PathBuf>,
    /// Hold the path up and print how to enter each side; Ctrl-C ends.
    #[arg(long)]
    interactive: bool,
    /// Measure the emulator's own accuracy and speed (idle, then with
    /// every core kept busy), then exit.
    #[arg(long)]
    selftest: bool,
    /// With --selftest: also print the figures as JSON.
    #[arg(long)]
    json: bool,
    /// Longest run in seconds before everything is stopped.
    #[arg(long, default_value_t = 3600)]
    timeout: u64,
}

fn emu_command(a: Box<EmuArgs>) -> Result<i32, String> {
    let a = *a;
    if a.selftest {
        return emu::selftest(a.json, a.kernel_buffers).map(|_| 0);
    }
    let o = emu::EmuOptions {
        path: emu::PathSpec {
            scenario: a.scenario,
            rate: a.rate,
            rtt: a.rtt,
            queue: a.queue,
            loss: a.loss,
            up: emu::DirectionFlags {
                rate: a.up_rate,
                delay: a.up_delay,
                queue: a.up_queue,
                loss: a.up_loss,
            },
            down: emu::DirectionFlags {
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
        interactive: a.interactive,
        timeout_s: a.timeout,
        kernel_buffers: a.kernel_buffers,
    };
    emu::run(&o)
}

/// `bbrlab send`'s options.
#[derive(clap::Args)]
struct SendArgs {
    /// Receiver address, e.g. 10.77.0.2:5202.
    #[arg(long)]
    to: std::net::SocketAddr,
    /// Congestion control: bbr, bbr-jitter, cubic or reno.
    #[arg(long, default_value = "bbr")]
    cc: String,
    /// Send this file.
    #[arg(long, conflicts_with_all = ["bytes", "duration"])]
    file: Option<PathBuf>,
    /// Send this many bytes of a verifiable pattern.
    #[arg(long, conflicts_with = "duration")]
    bytes: Option<u64>,
    /// Send a verifiable pattern for this long (default 10s).
    #[arg(long)]
    duration: Option<String>,
    /// Give up when the receiver is silent this long.
    #[arg(long, default_value = "5s")]
    idle_timeout: String,
    /// Write the time series (shared schema, srtt and packet counters, pacing_error_us) here.
    #[arg(long)]
    log: Option<PathBuf>,
    /// Sampling interval of the time series.
    #[arg(long, default_value = "10ms")]
    interval: String,
    /// No progress line.
    #[arg(long, short)]
    quiet: bool,
    /// Send every datagram with its own system call instead of batching
    /// what the pacer releases together into one GSO send.
    #[arg(long)]
    no_gso: bool,
}

fn udp_send(a: SendArgs) -> Result<(), String> {
    let SendArgs {
        to,
        cc,
        file,
        bytes,
        duration,
        idle_timeout,
        log,
        interval,
        quiet,
        no_gso,
    } = a;
    let algorithm: congestion::Algorithm = cc.parse().map_err(|e| format!("--cc: {e}"))?;
    let source = match (file, bytes) {
        (Some(f), _) => transport::data::Source::file(&f)?,
        (None, Some(0)) => return Err("--bytes 0: nothing to send".into()),
        (None, b) => transport::data::Source::Pattern {
            seed: rand_seed(),
            total: b,
        },
    };
    let duration = match duration {
        Some(d) => Some(duration_arg("--duration", &d)?),
        None if source.total().is_none() => Some(std::time::Duration::from_secs(10)),
        None => None,
    };
    let s = transport::sender::send(transport::sender::SendConfig {
        peer: to,
        cc: congestion::Config::new(algorithm),
        source,
        duration,
        idle_timeout: duration_arg("--idle-timeout", &idle_timeout)?,
        log,
        interval: duration_arg("--interval", &interval)?,
        progress: !quiet,
        gso: !no_gso,
    })?;
    println!("{}", serde_json::to_string(&s).map_err(|e| e.to_string())?);
    Ok(())
}

/// A seed for the pattern that differs between runs.
fn rand_seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    t ^ ((std::process::id() as u64) << 32)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Sim {
            scenario,
            out,
            jobs,
            quiet,
            no_plots,
            force,
        } => sim::run(&scenario, out, jobs, quiet, !no_plots, force),
        Command::Plot { run_dir } => plots::plot_run(&run_dir).map(|made| {
            for m in made {
                println!("wrote {}", run_dir.join(format!("{m}.svg")).display());
            }
        }),
        Command::Reproduce {
            table: Some(json), ..
        } => std::fs::read_to_string(&json)
            .map_err(|e| format!("{}: {e}", json.display()))
            .and_then(|t| {
                reproduce::table_from_json(&t).map_err(|e| format!("{}: {e}", json.display()))
            })
            .map(|t| print!("{t}")),
        Command::Reproduce {
            out,
            quick,
            only,
            jobs,
            quiet,
            table: None,
            strict,
        } => reproduce::run(
            &reproduce::Options {
                out,
                quick,
                only,
                jobs,
                quiet,
            },
            &sim::TerminalView::new(quiet),
        )
        .and_then(|outcomes| {
            if strict {
                reproduce::require_all(&outcomes)
            } else {
                Ok(())
            }
        }),
        Command::Tcp { side } => tcp_command(side),
        Command::Kernel { action } => match action {
            KernelAction::Load { names } => kernel::load(&names),
            KernelAction::Unload { names, force } => kernel::unload(&names, force),
            KernelAction::List => kernel::list(),
            KernelAction::JitterSweep(a) => jitter_sweep(a),
        },
        Command::Validate {
            out,
            quick,
            only,
            reps,
            seconds,
            algorithms,
            strict,
            table,
        } => match table {
            Some(json) => validate::table_from(&json).map(|t| println!("{t}")),
            None => validate::run(&validate::Options {
                out,
                quick,
                only,
                reps,
                seconds,
                algorithms,
            })
            .and_then(|ok| {
                if strict && !ok {
                    Err("validate: some paths miss their bounds (see validate.md)".into())
                } else {
                    Ok(())
                }
            }),
        },
        Command::Compare {
            scenario,
            with,
            out,
        } => compare::parse_sources(&with).and_then(|w| compare::run(&scenario, &w, out)),
        Command::Send(a) => udp_send(a),
        Command::Recv {
            listen,
            output,
            window,
            idle_timeout,
            accept_timeout,
        } => (|| {
            let s = transport::receiver::recv(transport::receiver::RecvConfig {
                listen,
                output,
                window_chunks: (window / transport::wire::CHUNK as u64).max(16),
                idle_timeout: duration_arg("--idle-timeout", &idle_timeout)?,
                accept_timeout: duration_arg("--accept-timeout", &accept_timeout)?,
                // Ctrl-C / SIGTERM: stop and remove the partial output.
                stop: Some(signals::stop_flag()?),
            })?;
            println!("{}", serde_json::to_string(&s).map_err(|e| e.to_string())?);
            Ok(())
        })(),
        Command::Emu(args) => match emu_command(args) {
            Ok(0) => Ok(()),
            Ok(code) => {
                eprintln!("emu: the client exited with status {code}");
                return ExitCode::from(code.clamp(1, 255) as u8);
            }
            Err(e) => Err(e),
        },
        Command::Bench {
            seconds,
            large,
            transport,
            runs,
            quinn,
        } => {
            if transport {
                bench::transport(seconds, runs, quinn)
            } else {
                bench::run(seconds, large)
            }
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
