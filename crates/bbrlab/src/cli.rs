//! The command line's types: every subcommand, its flags and their help
//! (clap derive), and the parsing of flag values they share. Each
//! command's work is in its own module; `main` only dispatches.

use claims::search::spec::defaults as sd;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::path::PathBuf;

/// BBR congestion control: simulate, measure and compare.
#[derive(Parser)]
#[command(name = "bbrlab", version, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

impl Cli {
    /// Parses the process's arguments, taking a value that looks like a
    /// negative number (`--seconds -1`) as that flag's value. Clap's default
    /// reads it as an unknown flag and says "unexpected argument '-1'",
    /// which hides the real fault: the value is out of range, which the
    /// flag's own check then says, with the range.
    ///
    /// A negative value with a unit (`--duration -1s`) is not a number to
    /// clap, so it is joined to its flag (`--duration=-1s`) first, which
    /// clap takes as that flag's value: the flag's parser then refuses it
    /// with its own words.
    pub(crate) fn parse_args() -> Cli {
        let command = negatives_are_values(Cli::command());
        let args = negative_values_joined(&command, std::env::args_os());
        let matches = command.get_matches_from(args);
        Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
    }
}

/// `args` with each `--flag -<digit>…` pair written `--flag=-<digit>…`
/// (and `-f -<digit>…` as `-f=-<digit>…`), where some command of `c` has
/// a flag of that name that takes a value. Every other argument is passed
/// as it was.
fn negative_values_joined(
    c: &clap::Command,
    args: impl IntoIterator<Item = std::ffi::OsString>,
) -> Vec<std::ffi::OsString> {
    let mut valued = std::collections::HashSet::new();
    let mut stack = vec![c];
    while let Some(c) = stack.pop() {
        for a in c.get_arguments() {
            if a.get_action().takes_values() {
                valued.extend(a.get_long().map(|l| format!("--{l}")));
                valued.extend(a.get_short().map(|s| format!("-{s}")));
            }
        }
        stack.extend(c.get_subcommands());
    }
    let negative = |v: &std::ffi::OsString| match v.as_encoded_bytes() {
        [b'-', d, ..] => d.is_ascii_digit() || *d == b'.',
        _ => false,
    };
    let (mut out, mut args) = (Vec::new(), args.into_iter().peekable());
    while let Some(a) = args.next() {
        match (a.to_str(), args.peek()) {
            (Some(flag), Some(v)) if valued.contains(flag) && negative(v) => {
                let mut joined = std::ffi::OsString::from(flag);
                joined.push("=");
                joined.push(args.next().unwrap_or_default());
                out.push(joined);
            }
            _ => out.push(a),
        }
    }
    out
}

/// `c` and every subcommand under it, with negative numbers taken as
/// values (clap's setting is per command, not inherited).
fn negatives_are_values(c: clap::Command) -> clap::Command {
    let names: Vec<String> = c
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    names.iter().fold(c.allow_negative_numbers(true), |c, n| {
        c.mut_subcommand(n, negatives_are_values)
    })
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Reproduce every published claim (C1–C14) in the simulator and write
    /// an HTML report with the paper-style figures and a verdict per claim;
    /// then the BBRv3 results (V1 …: bbr3 beside v1 bbr), in a section of
    /// their own in the same report.
    ///
    /// Exit status: 0 when every run completed and the report was written,
    /// even if some claims are not reproduced (the report and the summary
    /// line say which; a claim that does not reproduce is a finding, not a
    /// failure of the command). With --strict, 1 if any claim or BBRv3
    /// result that ran is not reproduced, for CI. Errors (a run that fails, an unwritable
    /// directory) always exit 1.
    Reproduce(ReproduceArgs),
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
        /// Flow-control window, bytes (bounds the receiver's memory):
        /// counted in whole 1,400-byte chunks, at least 16 of them
        /// (22,400 bytes).
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
    /// (root), with kernel TCP, the UDP transport and/or s2n-quic (bbrlab's
    /// controller through the adapter); overlay and tabulate.
    Compare(CompareArgs),
    /// Bulk transfers over real QUIC stacks with `quic-bulk`: each stack's
    /// own controllers (`s2n:bbr2`, `s2n:cubic`) and bbrlab's through the
    /// stack's adapter (`bbr`, `bbr-jitter`, `bbr3`, `cubic`, `reno`).
    ///
    /// On loopback (default, no root) sender and receiver are two
    /// processes; the table gives goodput, median srtt, retransmissions
    /// and the CPU seconds per gigabit of both (from wait4), with each
    /// run's CPU as a ratio to the stack's own BBR in the same invocation.
    /// With --scenario every run goes through `bbrlab emu` on the file's
    /// [link] (root), with kernel TCP bbr and cubic on the same path as
    /// reference rows. Writes quic.json and each run's flows.csv (the
    /// shared time-series schema) under --out.
    #[command(
        after_help = "Examples:\n  # s2n-quic's own BBRv2 against bbrlab's BBR through the adapter, 5 s each:\n  bbrlab quic --cc s2n:bbr2,bbr,s2n:cubic,cubic\n  # through the emulator, with kernel TCP bbr and cubic beside them (root):\n  sudo bbrlab quic --scenario scenarios/compare.toml --cc s2n:bbr2,bbr --seconds 10\n\nquic-bulk comes from `cargo build --release -p quic-bulk` (found next to bbrlab)."
    )]
    Quic(QuicArgs),
    /// Validate the simulator against kernel TCP (root): a matrix of
    /// single-flow paths (2–100 Mbit/s, 5–200 ms, 0.25–10 BDP, 0–5 % loss,
    /// jitter), each through `compare` with kernel TCP (and the UDP
    /// transport for bbr), repeated; writes validate.json, validate.md and
    /// each run's overlays. Exits 0 unless --strict and a path misses.
    ///
    /// With --multiflow, competing flows instead: several kernel TCP flows
    /// share one emulated 20 Mbit/s / 40 ms bottleneck (bbr and
    /// bbrlab_bbr3 against cubic by buffer, RTT unfairness, staggered
    /// starts, cubic against cubic, ECN on CoDel) and the simulator runs
    /// the same flows; each flow's share of the goodput, the total
    /// goodput and the queueing delay, judged per flow and per path.
    /// validate.json gains a `multiflow` section, validate.md its table.
    #[command(
        after_help = "Examples (as root):\n  bbrlab validate --quick --out out/validate                 # single flow, 4 paths, ~3 min\n  bbrlab validate --multiflow --quick --out out/validate     # competing flows, 3 paths of 20 s, ~2 min\n  bbrlab validate --multiflow --only bbr-vs-cubic-0.5bdp,bbr-vs-cubic-16bdp\n  bbrlab validate --multiflow --resimulate --sim-ack every --out out/validate   # the simulator again, the same kernel runs, an ACK per packet (no root)\n  bbrlab validate --resimulate --out out/validate                             # the same, single flow, Linux's receiver\n  scripts/validate-multiflow.sh                              # the whole competing-flow matrix\n  bbrlab validate --table out/validate/validate.json"
    )]
    Validate(ValidateArgs),
    /// Kernel-TCP bulk transfer that records Linux's own BBR/CUBIC/Reno.
    Tcp {
        #[command(subcommand)]
        side: TcpSide,
    },
    /// bbrlab's BBR, bbr-jitter and BBRv3 as BPF congestion controls inside
    /// Linux TCP (`bbrlab_bbr`, `bbrlab_jitter`, `bbrlab_bbr3`; root).
    Kernel {
        #[command(subcommand)]
        action: KernelAction,
    },
    /// Seed 001's jitter experiment (claims C11/C12) on a real stack
    /// (root): each control through `bbrlab emu` at 3 Mbit/s with every
    /// data packet delayed by Normal(60 ms, sd), for each sd and seed;
    /// writes jitter-sweep.csv and jitter-sweep.json (provenance) in --out.
    /// `--source s2n`: s2n-quic through quic-bulk (bbrlab's bbr and
    /// bbr-jitter through the bbrlab-s2n adapter, s2n-quic's own BBRv2 as
    /// s2n:bbr2); `--source linux-tcp`: as `bbrlab kernel jitter-sweep`.
    /// Exits 1 if a run failed (its row says why).
    #[command(
        after_help = "Defaults with --source s2n: --cc bbr,bbr-jitter,s2n:bbr2 --sds 0,20,40,60 --seeds 1,2,3,4,5 --bytes 750000 --out out/quic-jitter-sweep.\n\nExample (quic-bulk is found next to bbrlab):\n  cargo build --release -p bbrlab -p quic-bulk\n  sudo target/release/bbrlab jitter-sweep --source s2n --out out/quic-jitter\n  bbrlab jitter-sweep --source s2n --table out/quic-jitter/jitter-sweep.csv"
    )]
    JitterSweep(SourceSweepArgs),
    /// Run a scenario file in the simulator; writes time series and summaries.
    Sim {
        /// The scenario (TOML; schema in docs/scenarios.md).
        scenario: PathBuf,
        /// Output directory (default: the scenario's `output`, else `out/<name>`).
        #[arg(long, short)]
        out: Option<PathBuf>,
        /// Parallel runs for sweeps (default: all cores).
        #[arg(long, short, value_parser = runner::sweep::parse_jobs)]
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
        /// Also write each listed flow's qlog (`run-NNNN/flow-<i>.sqlog`,
        /// qlog 0.3 JSON-SEQ: recovery:metrics_updated,
        /// congestion_state_updated and packet_lost from the sender's
        /// samples), to open in qvis.
        #[arg(long)]
        qlog: bool,
        /// Also write every packet each link direction takes in
        /// (`run-NNNN/packets.csv`: when it entered and left the queue, or
        /// why it was dropped; its flow, size and CE mark), to compare a
        /// run packet by packet with the emulator's `emu --log`. About
        /// 50 bytes a packet: 3.5 MB for 30 s of two flows at 20 Mbit/s.
        #[arg(long)]
        packets: bool,
    },
    /// Draw figures (SVG and PNG) from a run directory or a sweep's output.
    ///
    /// A run directory (`flows.csv`, optionally `link.csv` and `fct.csv`):
    /// the time series, Jain's index over sliding windows, the queueing
    /// delay's CDF and the flow completion time CDFs. A sweep's output
    /// directory (`summary.json`): throughput against 95th-percentile RTT,
    /// one point per run and algorithm (Pantheon-style).
    Plot(PlotArgs),
    /// What bbr3 loses on a stock kernel: the simulator's bbr3 (profile
    /// linux-v3) with v3's exact signals and with the stock kernel's
    /// substitutes (`[flow.bbr3] signals = "stock-kernel"`, what the BPF
    /// control `bbrlab_bbr3` gets), on `bbrlab validate`'s paths over a few
    /// seeds; writes approximation.csv, approximation-runs.csv and
    /// approximation.md and prints the table. Simulator only (no root).
    #[command(name = "bbr3-signals")]
    Bbr3Signals(Bbr3SignalsArgs),
    /// Compare bbrlab's bbr and bbr3 with the QUIC stacks' own controllers
    /// (s2n:bbr2, s2n:cubic, quinn:bbr, quinn:cubic) on C1's, C3's and C10's
    /// paths in the simulator; writes stack-controllers.csv and
    /// stack-controllers.md (the table the book includes) and prints the
    /// table.
    Stacks(StacksArgs),
    /// The 22 example test cases of draft-ietf-ccwg-bbr-06 (the exits of
    /// STARTUP, DRAIN, PROBE_UP and PROBE_DOWN, app-limited phases,
    /// PROBE_RTT, ACK aggregation, a sub-packet BDP, bandwidth steps, a
    /// policer, spurious recoveries: the case files in --cases) run on
    /// each named controller over a grid of path sizes in the simulator;
    /// prints a matrix of case × controller and writes conformance.md,
    /// conformance.json and, per case, a figure and conformance.html.
    ///
    /// Exit status: 0 when every run completed, whatever the verdicts
    /// (a controller failing a case is a finding); with --strict, 1 if
    /// bbrlab's own bbr3 (draft profile) fails a case. An unknown
    /// controller or case, or a case file in error, exits 1 with the reason.
    #[command(
        after_help = "Examples:\n  bbrlab conformance --quick\n  bbrlab conformance --cc bbr3,bbr,s2n:bbr2 --only A01,A10 --out out/conformance"
    )]
    Conformance(ConformanceArgs),
    /// Random but valid paths and workloads (rates 64 kbit/s to 10 Gbit/s,
    /// round trips 100 µs to 2 s, loss, rate and delay steps, reordering,
    /// ACK aggregation, delayed and decimated ACKs, every AQM, policers,
    /// app-limited patterns and idles of up to 12 s, segments of 500 to
    /// 9,000 bytes, transfers past 2^32 bytes, up to three flows, paced
    /// one packet at a time or in Linux's TSO-sized bursts) run on each
    /// named controller in the simulator and
    /// held to invariants any sane controller keeps: no panic, a window of
    /// at least a packet and at most 2^40 bytes, a finite pacing rate, no
    /// window growth while app-limited, no stall, no standing queue for
    /// BBR on a clean path, recovery from a rate step. Each failing path
    /// is shrunk (proptest) and written as a scenario file that `bbrlab
    /// sim` reproduces; the seed is printed, so a run can be repeated.
    ///
    /// Build with overflow checks to catch arithmetic overflow as a panic:
    /// `cargo run --profile fuzz -p bbrlab -- fuzz`.
    ///
    /// Exit status: 0 when the run completed, whatever it found; with
    /// --strict, 1 if anything failed.
    #[command(
        after_help = "Examples:\n  bbrlab fuzz --seconds 60\n  bbrlab fuzz --cc bbr3,quinn:bbr --seconds 300 --seed 7 --out out/fuzz"
    )]
    Fuzz(FuzzArgs),
    /// Search a path budget for the path on which a controller (or the
    /// first of two) does worst by an objective: CMA-ES (with restarts)
    /// against uniform random sampling in the same number of evaluations,
    /// each a deterministic simulation, in parallel on all cores.
    ///
    /// The budget: the rate within [--rate / --rate-ratio, --rate], the
    /// forward one-way delay within [--delay, --delay + --jitter], random
    /// loss up to --loss, per-packet jitter up to --packet-jitter, a
    /// schedule of at most --pieces pieces of at least --min-piece each. Writes the worst path found by each method as a
    /// scenario file `bbrlab sim` reproduces, the history (history.csv and
    /// a figure), search.json, and for a BBR a reading of why it failed.
    #[command(
        after_help = "Objectives: utilization, queue-p95, share, jain, retransmissions, convergence.\n\nExamples:\n  bbrlab search --cc bbr --rate 20mbit --rate-ratio 10 --objective utilization\n  bbrlab search --cc bbr,cubic --objective share --rate 20mbit --rate-ratio 1 --jitter 20ms --evaluations 300\n  bbrlab search --cc bbr3 --objective queue-p95 --loss 0.02 --pieces 1 --rate-ratio 1 --out out/search"
    )]
    Search(SearchArgs),
    /// Simulator speed: one flow of bbr, cubic and bbr3 in turn on
    /// 100 Mbit/s, 40 ms, repeated; the median and range of each rate and
    /// of bbr's and bbr3's ratio to cubic in the same round.
    Bench(BenchArgs),
}

/// `bbrlab reproduce`'s options.
#[derive(clap::Args)]
pub(crate) struct ReproduceArgs {
    /// Report directory.
    #[arg(long, short, default_value = "report")]
    pub(crate) out: PathBuf,
    /// Shorter durations (for CI); every claim's checks still apply.
    #[arg(long)]
    pub(crate) quick: bool,
    /// Only these claims or BBRv3 results, comma-separated (e.g.
    /// `C1,C3`, `1,3` or `V1`).
    #[arg(long, value_delimiter = ',')]
    pub(crate) only: Option<Vec<String>>,
    /// Parallel runs (default: all cores).
    #[arg(long, short, value_parser = runner::sweep::parse_jobs)]
    pub(crate) jobs: Option<usize>,
    /// No progress bar or per-claim lines.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Also write each run's qlog (qlog 0.3 JSON-SEQ from the sender's
    /// samples, to open in qvis): `flow-<i>.sqlog` in each run's directory.
    #[arg(long)]
    pub(crate) qlog: bool,
    /// Print the Markdown claims table (as the book's "Reproduced claims"
    /// chapter pastes it) from an existing
    /// claims.json (e.g. report/claims.json) and exit.
    #[arg(long, value_name = "CLAIMS_JSON")]
    pub(crate) table: Option<PathBuf>,
    /// Exit with status 1 if any claim is not reproduced (for CI); the
    /// report is written either way.
    #[arg(long, conflicts_with = "table")]
    pub(crate) strict: bool,
}

/// `bbrlab compare`'s options.
#[derive(clap::Args)]
pub(crate) struct CompareArgs {
    /// The scenario (one flow, no sweep).
    pub(crate) scenario: PathBuf,
    /// Real sources to add (comma-separated): kernel (kernel TCP), udp
    /// (bbrlab's UDP transport), s2n (s2n-quic with the scenario's
    /// algorithm through bbrlab's adapter, by `quic-bulk`); or `none`.
    #[arg(long, value_delimiter = ',', default_value = "kernel,udp")]
    pub(crate) with: Vec<String>,
    /// quic-bulk for `--with s2n` (default: next to this binary;
    /// `cargo build --release -p quic-bulk`).
    #[arg(long)]
    pub(crate) quic_bulk: Option<PathBuf>,
    /// Output directory (default out/compare-NAME, or out/compare-NAME-seedN with --seed).
    #[arg(long, short)]
    pub(crate) out: Option<PathBuf>,
    /// Seed in place of the scenario's, in the simulations and the emulator (loss, jitter):
    /// one pair of runs on a lossy path is one draw, so compare a path over several seeds.
    #[arg(long, value_parser = clap::value_parser!(u64).range(..=i64::MAX as u64))]
    pub(crate) seed: Option<u64>,
}

/// `bbrlab validate`'s options.
#[derive(clap::Args)]
pub(crate) struct ValidateArgs {
    /// Output directory.
    #[arg(long, short, default_value = "out/validate")]
    pub(crate) out: PathBuf,
    /// Four representative paths, one repetition, 6 s runs (< 10 min);
    /// with --multiflow three paths of 20 s (about 2 min).
    #[arg(long)]
    pub(crate) quick: bool,
    /// Run the competing-flow matrix instead of the single-flow one.
    #[arg(long, conflicts_with_all = ["algorithms", "quic_bulk"])]
    pub(crate) multiflow: bool,
    /// Only these paths (comma-separated names; an unknown name lists
    /// the matrix's).
    #[arg(long, value_delimiter = ',')]
    pub(crate) only: Option<Vec<String>>,
    /// Repetitions per path and algorithm (default 3, 1 with --quick,
    /// with --multiflow too)
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100))]
    pub(crate) reps: Option<u64>,
    /// Seconds per transfer, at least 2 (default 10, 6 with --quick; with
    /// --multiflow 30, 20 with --quick).
    #[arg(long, value_parser = clap::value_parser!(u64).range(2..))]
    pub(crate) seconds: Option<u64>,
    /// The receiver of the simulation matched to kernel TCP: `linux`
    /// (Linux's, the simulator's default for TCP-like flows) or `every`
    /// (an ACK per packet, the default before 2026-12-02). The UDP
    /// transport's and s2n-quic's matched simulations keep an ACK per
    /// packet.
    #[arg(long, value_enum, default_value = "linux")]
    pub(crate) sim_ack: SimAck,
    /// The simulated senders' pacer: `linux` (as Linux without fq: BBR in
    /// TSO-sized bursts, CUBIC and Reno unpaced; the simulator's default for
    /// TCP-like flows) or `exact` (one packet at a time, the default before 2026-12-06)
    #[arg(long, default_value = "linux", value_parser = clap::builder::TypedValueParser::map(clap::builder::PossibleValuesParser::new(["linux", "exact"]),
        |v: String| testbed::validate::SimPacer::from_name(&v).expect("a possible value")))]
    pub(crate) sim_pacing: testbed::validate::SimPacer,
    /// The simulated TCP flows keep TCP timestamps, as Linux does (the
    /// flow key `timestamps`: partial undo, PAWS, Linux's RTT sample); off
    /// by default, as in the simulator.
    #[arg(long)]
    pub(crate) sim_timestamps: bool,
    /// With --multiflow: how many times the simulator runs each
    /// repetition, each time with its own seed (BBR's random gain-cycle
    /// phase), every flow sending its SYN when the repetition's kernel
    /// flow did (the emulator's packet log; the scheduled start for a
    /// kernel run logged without ports); its figures are the median over
    /// these draws, the shares' least and greatest shown beside them
    /// (1: one run, no spread). `--sim-phases` is its former name.
    #[arg(long, value_name = "N", default_value_t = testbed::validate::multiflow::DRAWS as u32,
          alias = "sim-phases",
          value_parser = clap::value_parser!(u32).range(1..=64), requires = "multiflow")]
    pub(crate) sim_draws: u32,
    /// With --multiflow: the hosts' timing noise the simulator adds to
    /// each ACK's way back, `MEAN,SD` in whole microseconds (a normal
    /// extra delay cut at zero, in order), or `off`. The default is what the emulator's packet log
    /// shows between a segment leaving the bottleneck and its sender's
    /// answer arriving there (the Validation chapter); without it the
    /// simulated flows answer to the nanosecond and lock in phase at a
    /// full drop-tail queue.
    #[arg(long, value_name = "MEAN,SD|off", default_value = "50us,20us",
          value_parser = host_noise_arg, requires = "multiflow")]
    pub(crate) sim_host_noise: HostNoiseArg,
    /// Run no real transfers; judge the simulator, run afresh (with
    /// --sim-ack, and --sim-draws and --sim-host-noise with --multiflow),
    /// against the real runs an earlier validate (or validate
    /// --multiflow) left in --out: its paths (or --only's), algorithms (or, single flow,
    /// --algorithms'), run length and repetitions; with --only or
    /// --algorithms the other rows stay as they were. Rewrites --out's
    /// validate.json, validate.md and each repetition's compare.json.
    /// Needs no root; takes seconds.
    #[arg(long, conflicts_with_all = ["quick", "reps", "seconds", "jobs", "update", "quic_bulk", "table", "receivers"])]
    pub(crate) resimulate: bool,
    /// Algorithms to validate (kernel names): bbr, cubic, reno, and
    /// bbrlab_bbr3 (the BPF BBRv3, against the simulator's bbr3 with
    /// profile linux-v3 and stock-kernel signals; loaded for the run
    /// if it is not, retransmissions judged too). Default: bbr,cubic;
    /// with --resimulate, every algorithm the earlier run has.
    #[arg(long, value_delimiter = ',')]
    pub(crate) algorithms: Option<Vec<String>>,
    /// Keep the rows an earlier single-flow run left in --out's
    /// validate.json for other algorithms or paths, and replace only
    /// the rows this run makes (e.g. `--algorithms cubic --update`
    /// after a change to CUBIC). The earlier run must have the same
    /// run length, repetitions and --sim-ack.
    #[arg(long, conflicts_with_all = ["multiflow", "table", "receivers"])]
    pub(crate) update: bool,
    /// Single flow: how many paths (or algorithms) run at once, each
    /// through its own emulator. Two transfers at once measured the
    /// same as one after another on a 2-core machine up to 20 Mbit/s
    /// (the emulators' forwarders run at real-time priority); faster
    /// rows were host-limited, and validate names them. More than the
    /// machine has cores is refused.
    #[arg(long, short = 'j', default_value_t = 1,
          value_parser = runner::sweep::parse_jobs, conflicts_with = "multiflow")]
    pub(crate) jobs: usize,
    /// Exit with status 1 when any path misses its bounds (for CI).
    #[arg(long)]
    pub(crate) strict: bool,
    /// Print the Markdown table of an existing validate.json and exit.
    #[arg(long, value_name = "VALIDATE_JSON")]
    pub(crate) table: Option<PathBuf>,
    /// Print which simulated receiver matches kernel TCP better and
    /// exit: EVERY is a single-flow validate.json with an ACK per
    /// packet, LINUX one run with --sim-ack linux; both receivers are
    /// judged against LINUX's kernel runs (the simulator is deterministic).
    #[arg(long, num_args = 2, value_names = ["EVERY", "LINUX"], conflicts_with = "table")]
    pub(crate) receivers: Option<Vec<PathBuf>>,
    /// quic-bulk for the s2n-quic rows of bbr (default: next to this
    /// binary; without it those rows are skipped, with a note).
    #[arg(long)]
    pub(crate) quic_bulk: Option<PathBuf>,
}

/// `bbrlab plot`'s options.
#[derive(clap::Args)]
pub(crate) struct PlotArgs {
    /// A run directory (`run-NNNN`) or the directory `bbrlab sim` wrote.
    pub(crate) run_dir: PathBuf,
    /// Jain's index window length, seconds [default: 1]; no longer than the run.
    #[arg(long)]
    pub(crate) jain_window: Option<f64>,
    /// A Jain window ends every this many seconds.
    #[arg(long, default_value_t = 0.1)]
    pub(crate) jain_step: f64,
    /// Jain's index at or above which the flows share fairly (0–1].
    #[arg(long, default_value_t = 0.9)]
    pub(crate) jain_threshold: f64,
}

/// `bbrlab bbr3-signals`'s options.
#[derive(clap::Args)]
pub(crate) struct Bbr3SignalsArgs {
    /// Output directory (each run's files under `runs/<path>/<signals>/seed-N`).
    #[arg(long, short, default_value = "out/bbr3-signals")]
    pub(crate) out: PathBuf,
    /// Only these paths (comma-separated names of validate's matrix).
    #[arg(long, value_delimiter = ',')]
    pub(crate) only: Option<Vec<String>>,
    /// Seeds per path and mode (1..=N).
    #[arg(long, default_value_t = 3)]
    pub(crate) seeds: u64,
    /// Simulated seconds per run.
    #[arg(long, default_value_t = 10)]
    pub(crate) seconds: u64,
}

/// `bbrlab stacks`'s options.
#[derive(clap::Args)]
pub(crate) struct StacksArgs {
    /// Output directory (each run's files under `<path>/run-NNNN`).
    #[arg(long, short, default_value = "stack-controllers")]
    pub(crate) out: PathBuf,
    /// Shorter durations (C1 15 s, C3 30 s, C10 15 s instead of the
    /// claims' 60, 120 and 60 s).
    #[arg(long)]
    pub(crate) quick: bool,
    /// Parallel runs (default: all cores).
    #[arg(long, short, value_parser = runner::sweep::parse_jobs)]
    pub(crate) jobs: Option<usize>,
}

/// `bbrlab conformance`'s options.
#[derive(clap::Args)]
pub(crate) struct ConformanceArgs {
    /// Controllers to run, comma-separated: bbrlab's (`bbr3` or
    /// `bbr3:draft`, `bbr3:linux-v3`, `bbr`, `bbr-jitter`, `cubic`, `reno`)
    /// and the QUIC stacks' (`s2n:bbr2`, `s2n:cubic`, `quinn:bbr`,
    /// `quinn:cubic`, `noq:bbr3`, `noq:cubic`).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "bbr3,bbr3:linux-v3,bbr,s2n:bbr2,quinn:bbr,noq:bbr3"
    )]
    pub(crate) cc: Vec<String>,
    /// Only these cases, comma-separated (`A01,A10`).
    #[arg(long, value_delimiter = ',')]
    pub(crate) only: Option<Vec<String>>,
    /// The grid's middle point only (50 Mbit/s, 40 ms) instead of 3 rates
    /// (10, 50, 250 Mbit/s) × 3 RTTs (10, 40, 200 ms).
    #[arg(long)]
    pub(crate) quick: bool,
    /// The directory of case files.
    #[arg(long, default_value = "scenarios/conformance")]
    pub(crate) cases: PathBuf,
    /// Output directory (conformance.md, conformance.json,
    /// conformance.html with its figures/, and qlog/ with --qlog).
    #[arg(long, short, default_value = "conformance")]
    pub(crate) out: PathBuf,
    /// Parallel runs (default: all cores).
    #[arg(long, short, value_parser = runner::sweep::parse_jobs)]
    pub(crate) jobs: Option<usize>,
    /// Also write each run's qlog (qlog 0.3 JSON-SEQ, from the sender's
    /// samples, to open in qvis): `qlog/<case>/<point>/<controller>/flow-0.sqlog`.
    #[arg(long)]
    pub(crate) qlog: bool,
    /// No figures (conformance.html then shows none).
    #[arg(long)]
    pub(crate) no_plots: bool,
    /// Exit 1 if bbrlab's own bbr3 (draft profile) fails a case.
    #[arg(long)]
    pub(crate) strict: bool,
    /// Wall-clock seconds a run may take before it is stopped and recorded
    /// as a timeout (a failure of that run; the suite goes on).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub(crate) timeout: u64,
    /// No progress display.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

/// `bbrlab fuzz`'s options.
#[derive(clap::Args)]
pub(crate) struct FuzzArgs {
    /// Controllers to fuzz, comma-separated (the names `conformance --cc` takes).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "bbr,bbr3,bbr3:linux-v3,cubic,reno,s2n:bbr2,quinn:bbr,noq:bbr3"
    )]
    pub(crate) cc: Vec<String>,
    /// Wall-clock seconds to fuzz for.
    #[arg(long, default_value_t = 60.0)]
    pub(crate) seconds: f64,
    /// Stop after this many runs (shrinking included), whatever the time:
    /// with --jobs 1 and --seed, a run is the same on any machine.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) runs: Option<u64>,
    /// The seed (default: from the clock; printed either way).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Worker threads (default: all cores).
    #[arg(long, short, value_parser = runner::sweep::parse_jobs)]
    pub(crate) jobs: Option<usize>,
    /// Output directory: fuzz.json and a scenario file per failure.
    #[arg(long, short, default_value = "fuzz")]
    pub(crate) out: PathBuf,
    /// Stop after this many distinct failures (controller × invariant).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub(crate) max_failures: u64,
    /// Wall-clock seconds one simulation may take before it is stopped and
    /// counted, not judged.
    #[arg(long, default_value_t = 10.0)]
    pub(crate) run_timeout: f64,
    /// Exit 1 if anything failed.
    #[arg(long)]
    pub(crate) strict: bool,
    /// No progress display.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

/// `bbrlab search`'s options (the defaults are the library's, which
/// Python's `bbrlab.search` shares).
#[derive(clap::Args)]
pub(crate) struct SearchArgs {
    /// The controller, or two comma-separated to set the first against
    /// the second (one flow each); the names `conformance --cc` takes.
    #[arg(long, value_delimiter = ',', default_value = sd::CC)]
    pub(crate) cc: Vec<String>,
    /// What to make worse (see below).
    #[arg(long, default_value = sd::OBJECTIVE)]
    pub(crate) objective: String,
    /// The highest bottleneck rate (R), e.g. `20mbit`.
    #[arg(long, default_value = sd::RATE)]
    pub(crate) rate: String,
    /// Rates range from R / this to R (1 fixes the rate).
    #[arg(long, default_value_t = sd::RATE_RATIO)]
    pub(crate) rate_ratio: f64,
    /// The shortest forward one-way delay, and the reverse one (d).
    #[arg(long, default_value = sd::DELAY)]
    pub(crate) delay: String,
    /// How far the forward one-way delay may rise above --delay (j).
    #[arg(long, default_value = sd::JITTER)]
    pub(crate) jitter: String,
    /// The most random loss, a fraction (0.01 is 1 %).
    #[arg(long, default_value_t = sd::LOSS)]
    pub(crate) loss: f64,
    /// The most per-packet jitter: each packet's forward delay gains a
    /// uniform draw from 0 to a level the search picks up to this, each
    /// packet's its own (packets overtake, seed 001's independent delays).
    #[arg(long, default_value = sd::PACKET_JITTER)]
    pub(crate) packet_jitter: String,
    /// The per-packet jitter's distribution: `uniform` (from 0 to a
    /// level) or `normal` (max(0, Normal(mean, sd)), the search picking
    /// the mean and the standard deviation each up to --packet-jitter;
    /// seed 001's delays were Normal(60 ms, 40 ms)).
    #[arg(long, default_value = sd::PACKET_JITTER_DIST)]
    pub(crate) packet_jitter_dist: String,
    /// The most pieces in the schedule; each has its own rate and delay.
    #[arg(long, default_value_t = sd::PIECES)]
    pub(crate) pieces: usize,
    /// The shortest a piece may be.
    #[arg(long, default_value = sd::MIN_PIECE)]
    pub(crate) min_piece: String,
    /// Each simulated run's length.
    #[arg(long, default_value = sd::DURATION)]
    pub(crate) duration: String,
    /// The bottleneck's buffer, in BDPs of --rate and a round trip of
    /// twice --delay.
    #[arg(long, default_value_t = sd::BUFFER)]
    pub(crate) buffer: f64,
    /// The queue discipline: drop-tail, codel, fq_codel or pie.
    #[arg(long, default_value = sd::AQM)]
    pub(crate) aqm: String,
    /// Flows of the one controller (two controllers: one flow each).
    #[arg(long)]
    pub(crate) flows: Option<usize>,
    /// The flows' transport, as a scenario's `[[flow]] stack` names it
    /// (`linux`, `quic-2018`, ...; default: each algorithm's own).
    #[arg(long)]
    pub(crate) stack: Option<String>,
    /// Make the flows run as kernel TCP's do, as `validate` makes its
    /// competing flows: the kernel's packet size (1448 + 52 B), TCP's SYN
    /// exchange, Linux's first burst of 10, its delayed-ACK receiver and
    /// its pacing; `bbr3` then runs linux-v3 with stock-kernel signals.
    /// What --confirm compares the kernel with.
    #[arg(long)]
    pub(crate) tcp_like: bool,
    /// Evaluations for CMA-ES; the random baseline gets as many.
    #[arg(long, default_value_t = sd::EVALUATIONS)]
    pub(crate) evaluations: usize,
    /// The objective is measured from this time on (default: 2 s, or 10
    /// of the budget's longest round trips if longer).
    #[arg(long)]
    pub(crate) warmup: Option<String>,
    /// The seed of the optimizer, the baseline and the scenarios' loss
    /// (default: from the clock; printed either way).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Worker threads (default: all cores).
    #[arg(long, short, value_parser = runner::sweep::parse_jobs)]
    pub(crate) jobs: Option<usize>,
    /// Output directory.
    #[arg(long, short, default_value = "search")]
    pub(crate) out: PathBuf,
    /// Wall-clock seconds one simulation may take; a run past it counts
    /// as failed, at the objective's worst, and is listed.
    #[arg(long, default_value_t = sd::RUN_TIMEOUT_S)]
    pub(crate) run_timeout: f64,
    /// No figures (history.svg/png, and the worst path's worst-rate and
    /// worst-rtt .svg/.png).
    #[arg(long)]
    pub(crate) no_plots: bool,
    /// Then replay the worst path through `bbrlab emu` with kernel TCP
    /// (root; `bbr`, `cubic`, `reno`, and `bbr3` as bbrlab_bbr3 where it
    /// runs the linux-v3 profile with stock-kernel signals) and report
    /// the objective on the kernel beside the simulator's (confirm.json).
    #[arg(long)]
    pub(crate) confirm: bool,
    /// How many times --confirm replays the worst path with kernel TCP;
    /// it reports the medians and the kernel's range (one kernel run of
    /// competing flows is one draw). A replay during which the emulator
    /// could not keep the path's timing is run again, up to three times.
    #[arg(long, default_value_t = testbed::search_confirm::DEFAULT_REPLAYS as u64, value_parser = clap::value_parser!(u64).range(1..=100), requires = "confirm")]
    pub(crate) confirm_replays: u64,
    /// No progress display.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

/// `bbrlab bench`'s options.
#[derive(clap::Args)]
pub(crate) struct BenchArgs {
    /// Simulated seconds per run, at least (lengthened so each run
    /// takes --min-wall seconds of wall time).
    #[arg(long, default_value_t = 60)]
    pub(crate) seconds: u64,
    /// Rounds (each runs bbr, cubic and bbr3 once).
    #[arg(long, default_value_t = 5)]
    pub(crate) reps: u32,
    /// Wall-clock seconds each run takes at least: on a shared machine
    /// a run of a tenth of a second scatters by ±30 %.
    #[arg(long, default_value_t = 2.0)]
    pub(crate) min_wall: f64,
    /// Also run C2's 10 Gbit/s, 100 ms, 1 % loss path for 30 s and
    /// report its wall time and the peak memory (RSS) of this process.
    #[arg(long)]
    pub(crate) large: bool,
    /// Instead: goodput and CPU cost (Gbit per CPU-second) of the UDP
    /// transport (`bbrlab send`/`recv`, bbr) on loopback against quinn's
    /// BBR and CUBIC in the same run (ratios per round), each for
    /// --seconds; then without GSO and kernel TCP bbr once.
    #[arg(long, conflicts_with = "large")]
    pub(crate) transport: bool,
    /// Rounds of the --transport comparison.
    #[arg(long, default_value_t = 3, requires = "transport")]
    pub(crate) runs: u32,
    /// `quic-bulk`, which runs quinn's BBR and CUBIC for --transport
    /// (default: `quic-bulk` next to this binary; `cargo build
    /// --release -p quic-bulk`). `--quinn` is the old name.
    #[arg(long = "quic-bulk", alias = "quinn", requires = "transport")]
    pub(crate) quic_bulk: Option<PathBuf>,
}

#[derive(Subcommand)]
pub(crate) enum KernelAction {
    /// Load and register (pinned under /sys/fs/bpf/bbrlab, so they stay
    /// after this command exits). Default: all.
    Load {
        /// bbrlab_bbr, bbrlab_jitter and/or bbrlab_bbr3.
        names: Vec<String>,
    },
    /// Unregister (default: every loaded one). Refuses while sockets use
    /// it unless --force.
    Unload {
        /// bbrlab_bbr, bbrlab_jitter and/or bbrlab_bbr3.
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

/// `bbrlab jitter-sweep`'s options: the stack, then the sweep's.
#[derive(clap::Args)]
pub(crate) struct SourceSweepArgs {
    /// The stack: `s2n` (s2n-quic through quic-bulk) or `linux-tcp` (the
    /// same as `bbrlab kernel jitter-sweep`). With --table, the sweep's
    /// jitter-sweep.json beside the CSV says it when this is not given.
    #[arg(long, value_parser = ["s2n", "linux-tcp"], required_unless_present = "table")]
    pub(crate) source: Option<String>,
    /// quic-bulk, for --source s2n [default: `quic-bulk` next to this
    /// binary; `cargo build --release -p quic-bulk`].
    #[arg(long, value_name = "PATH")]
    pub(crate) quic_bulk: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) sweep: JitterSweepArgs,
}

/// A jitter sweep's options (`bbrlab kernel jitter-sweep`, `bbrlab
/// jitter-sweep`). Defaults that differ by stack are given for Linux TCP
/// here; `bbrlab jitter-sweep --help` gives s2n-quic's.
#[derive(clap::Args)]
pub(crate) struct JitterSweepArgs {
    /// Output directory: jitter-sweep.csv, jitter-sweep.json and runs/
    /// (each run's path file, emulator output and time series)
    /// [default on Linux TCP: out/kernel-jitter-sweep].
    #[arg(long, short)]
    pub(crate) out: Option<PathBuf>,
    /// RTT standard deviations, ms (comma-separated) [default on Linux
    /// TCP: 0,10,20,30,40,50,60].
    #[arg(long, value_delimiter = ',')]
    pub(crate) sds: Option<Vec<f64>>,
    /// Seeds of the emulator's delay draws (comma-separated) [default on
    /// Linux TCP: 1,2,3].
    #[arg(long, value_delimiter = ',')]
    pub(crate) seeds: Option<Vec<u64>>,
    /// Congestion controls, alternated at each (sd, seed) [default on
    /// Linux TCP: bbr,bbrlab_jitter].
    #[arg(long, value_delimiter = ',')]
    pub(crate) cc: Option<Vec<String>>,
    /// Bytes each run sends, e.g. 3000000 or 3MB [default on Linux TCP:
    /// 3000000, 8 s at the line rate].
    #[arg(long, conflicts_with = "duration", value_parser = link::units::parse_bytes)]
    pub(crate) bytes: Option<u64>,
    /// Or how long each run sends (e.g. 60s, as C12's runs).
    #[arg(long)]
    pub(crate) duration: Option<String>,
    /// Longest one run may take, s, before it is stopped and recorded as
    /// failed [default: the transfer at 1 Mbit/s, or the duration, + 120].
    #[arg(long)]
    pub(crate) timeout: Option<u64>,
    /// No progress bar (a line per finished run still prints).
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Print the Markdown table of an existing jitter-sweep.csv (as the
    /// book's kernel chapter pastes it) and exit.
    #[arg(long, value_name = "CSV", conflicts_with_all = ["bytes", "duration", "timeout", "cc", "sds", "seeds"])]
    pub(crate) table: Option<PathBuf>,
}

#[derive(Subcommand)]
pub(crate) enum TcpSide {
    /// Send a verifiable byte stream, sample TCP_INFO / TCP_CC_INFO; print a JSON summary with the namespace's TCP counters (netns).
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
    /// Receive one transfer, check every byte, the length and the hash; print a JSON summary with the namespace's TCP counters (netns).
    Recv {
        /// Address to listen on.
        #[arg(long, default_value = "0.0.0.0:5201")]
        listen: std::net::SocketAddr,
        /// Give up when the sender is silent this long.
        #[arg(long, default_value = "10s")]
        idle_timeout: String,
    },
}

/// `bbrlab emu`'s options.
#[derive(clap::Args)]
pub(crate) struct EmuArgs {
    /// Use this scenario file's [link] table for the path (no path flags
    /// then). Only [link] and `seed` are read: a file with just a [link]
    /// table will do; duration, flows and sweeps of other keys are ignored.
    #[arg(long)]
    pub(crate) scenario: Option<PathBuf>,
    /// Bottleneck rate of both directions (e.g. 10mbit); default unlimited.
    #[arg(long)]
    pub(crate) rate: Option<String>,
    /// Round-trip propagation delay, half of it each way [default: 40ms].
    #[arg(long)]
    pub(crate) rtt: Option<String>,
    /// Bottleneck queue of both directions: packets (100), or with units
    /// (100pkt, 150kB) [default: 100].
    #[arg(long)]
    pub(crate) queue: Option<String>,
    /// Random loss in both directions (e.g. 1% or 0.01).
    #[arg(long)]
    pub(crate) loss: Option<String>,
    /// Rate client → server (overrides --rate; `unlimited` for none).
    #[arg(long)]
    pub(crate) up_rate: Option<String>,
    /// Rate server → client (overrides --rate; `unlimited` for none).
    #[arg(long)]
    pub(crate) down_rate: Option<String>,
    /// One-way delay client → server; with --rtt the other direction gets
    /// the rest, with --down-delay the RTT is their sum.
    #[arg(long)]
    pub(crate) up_delay: Option<String>,
    /// One-way delay server → client (see --up-delay).
    #[arg(long)]
    pub(crate) down_delay: Option<String>,
    /// Queue client → server (overrides --queue).
    #[arg(long)]
    pub(crate) up_queue: Option<String>,
    /// Queue server → client (overrides --queue).
    #[arg(long)]
    pub(crate) down_queue: Option<String>,
    /// Loss client → server (overrides --loss; 0 for none).
    #[arg(long)]
    pub(crate) up_loss: Option<String>,
    /// Loss server → client (overrides --loss; 0 for none).
    #[arg(long)]
    pub(crate) down_loss: Option<String>,
    /// Seed for loss and jitter (default: the scenario's with --scenario,
    /// else 1).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Keep the kernel's TCP buffer limits in the namespaces (by default
    /// net.ipv4.tcp_rmem/tcp_wmem allow 64 MiB, so host buffers do not cap
    /// fast or long paths).
    #[arg(long)]
    pub(crate) kernel_buffers: bool,
    /// Turn on ECN for kernel TCP in both namespaces (net.ipv4.tcp_ecn = 1;
    /// a new namespace's default, 2, only accepts ECN when asked), so TCP
    /// connections negotiate ECN and respond to CE marks from a queue with
    /// `ecn = true` (see --scenario).
    #[arg(long)]
    pub(crate) tcp_ecn: bool,
    /// Command run in the server namespace ({server} and {client} expand to the addresses).
    #[arg(long)]
    pub(crate) server: Option<String>,
    /// Command run in the client namespace; the run ends when it exits.
    #[arg(long)]
    pub(crate) client: Option<String>,
    /// Write packets.csv (every packet's fate) and link.csv here.
    #[arg(long)]
    pub(crate) log: Option<PathBuf>,
    /// Write the emulator's own figures for the run here as JSON when it
    /// ends: packets forwarded and dropped, release error, and how long
    /// the forwarder could not run while packets fell due (a run that
    /// stalled long is a poor copy of the path).
    #[arg(long, value_name = "FILE")]
    pub(crate) stats: Option<PathBuf>,
    /// Hold the path up and print how to enter each side; Ctrl-C ends.
    #[arg(long)]
    pub(crate) interactive: bool,
    /// Measure the emulator's own accuracy and speed (idle, then with
    /// every core kept busy), then exit.
    #[arg(long)]
    pub(crate) selftest: bool,
    /// With --selftest: also print the figures as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    /// Remove the namespaces (and their TUN devices) that emulators which
    /// no longer run left behind, say how many, and exit. Every emulator
    /// does this as it starts; this is for after the last one, e.g. when
    /// a run was killed outright. A namespace whose emulator still runs is
    /// kept.
    #[arg(long, conflicts_with_all = ["selftest", "client", "server", "interactive"])]
    pub(crate) reap: bool,
    /// Longest run in seconds before everything is stopped (at least 1).
    #[arg(long, default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) timeout: u64,
}

/// `bbrlab quic`'s options.
#[derive(clap::Args)]
pub(crate) struct QuicArgs {
    /// QUIC stacks, comma-separated (s2n; noq and quinn where quic-bulk
    /// has them).
    #[arg(long, value_delimiter = ',', default_value = "s2n")]
    pub(crate) stack: Vec<String>,
    /// Controllers, comma-separated: bbrlab's through each stack's adapter
    /// (bbr, bbr-jitter, bbr3, cubic, reno), or a stack's own as
    /// STACK:NAME (s2n:bbr2, s2n:cubic), which runs on that stack only.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "s2n:bbr2,bbr,s2n:cubic,cubic"
    )]
    pub(crate) cc: Vec<String>,
    /// Seconds each transfer sends [default: 5 on loopback, the scenario's
    /// duration with --scenario].
    #[arg(long)]
    pub(crate) seconds: Option<u64>,
    /// Run through `bbrlab emu` on this scenario's [link] (root), adding
    /// kernel TCP bbr and cubic as reference rows.
    #[arg(long)]
    pub(crate) scenario: Option<PathBuf>,
    /// With --scenario: no kernel TCP rows.
    #[arg(long, requires = "scenario")]
    pub(crate) no_kernel: bool,
    /// Output directory [default: out/quic, or out/quic-NAME with
    /// --scenario].
    #[arg(long, short)]
    pub(crate) out: Option<PathBuf>,
    /// The quic-bulk program (default: next to this binary).
    #[arg(long)]
    pub(crate) quic_bulk: Option<PathBuf>,
    /// Sampling interval of each run's flows.csv.
    #[arg(long, default_value = "10ms")]
    pub(crate) interval: String,
    /// Repeat every run this many times, rotating the order; CPU ratios
    /// are taken within each round.
    #[arg(long, default_value_t = 1)]
    pub(crate) rounds: u32,
}

/// `bbrlab send`'s options.
#[derive(clap::Args)]
pub(crate) struct SendArgs {
    /// Receiver address, e.g. 10.77.0.2:5202.
    #[arg(long)]
    pub(crate) to: std::net::SocketAddr,
    /// Congestion control: bbr, bbr-jitter, bbr3, cubic or reno.
    #[arg(long, default_value = "bbr")]
    pub(crate) cc: String,
    /// bbr3's profile: draft (draft-ietf-ccwg-bbr) or linux-v3 (the
    /// google/bbr v3 branch's constants and ECN response) [default: draft].
    #[arg(long, value_name = "PROFILE")]
    pub(crate) bbr3_profile: Option<String>,
    /// Send data packets ECN-capable (ECT(0) in the IP header) and give the
    /// controller the CE marks the receiver counts (every ACK carries its
    /// ECT(0)/ECT(1)/CE counts, as QUIC's). cubic and reno answer a round
    /// with CE as a loss, bbr3 as its draft says, bbr ignores CE. If the
    /// counts fail validation (RFC 9000 13.4.2: none come back, or the path
    /// clears the marks) marking stops and the summary's `ecn` says why.
    #[arg(long)]
    pub(crate) ecn: bool,
    /// Send this file.
    #[arg(long, conflicts_with_all = ["bytes", "duration"])]
    pub(crate) file: Option<PathBuf>,
    /// Send this many bytes of a verifiable pattern (e.g. 5000000, 5MB, 64KiB).
    #[arg(long, conflicts_with = "duration", value_parser = link::units::parse_bytes)]
    pub(crate) bytes: Option<u64>,
    /// Send a verifiable pattern for this long (default 10s).
    #[arg(long)]
    pub(crate) duration: Option<String>,
    /// Give up when the receiver is silent this long.
    #[arg(long, default_value = "5s")]
    pub(crate) idle_timeout: String,
    /// Write the time series (shared schema, srtt and packet counters, pacing_error_us) here.
    #[arg(long)]
    pub(crate) log: Option<PathBuf>,
    /// Sampling interval of the time series.
    #[arg(long, default_value = "10ms")]
    pub(crate) interval: String,
    /// No progress line.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Send every datagram with its own system call instead of batching
    /// what the pacer releases together into one GSO send.
    #[arg(long)]
    pub(crate) no_gso: bool,
}

/// A duration flag (`10s`, `250ms`) in the scenario files' units.
pub(crate) fn duration_arg(flag: &str, v: &str) -> Result<std::time::Duration, String> {
    link::units::parse_duration(v).map_err(|e| format!("{flag}: {e}"))
}

/// `--sim-host-noise`'s value: the noise, or `None` for `off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostNoiseArg(pub Option<testbed::validate::multiflow::HostNoise>);

/// Parses `--sim-host-noise` (`HostNoise::parse`).
pub(crate) fn host_noise_arg(v: &str) -> Result<HostNoiseArg, String> {
    testbed::validate::multiflow::HostNoise::parse(v).map(HostNoiseArg)
}

/// The simulated receiver's ACK policy for `validate --multiflow`, as the
/// scenario key `ack` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SimAck {
    /// An ACK for every packet (the default before 2026-12-02).
    Every,
    /// Linux's receiver (quick ACKs, every second segment or 40 ms, SACK
    /// compression; the default for TCP-like flows).
    Linux,
}

impl SimAck {
    /// The scenario file's spelling.
    pub fn name(self) -> &'static str {
        match self {
            SimAck::Every => "every",
            SimAck::Linux => "linux",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default is the measured noise the testbed documents.
    #[test]
    fn host_noise_defaults_to_the_measured_one() {
        let cli = Cli::try_parse_from(["bbrlab", "validate", "--multiflow"]).unwrap();
        let Command::Validate(a) = cli.command else {
            panic!("not validate")
        };
        assert_eq!(
            a.sim_host_noise.0,
            Some(testbed::validate::multiflow::HOST_NOISE)
        );
    }
}
