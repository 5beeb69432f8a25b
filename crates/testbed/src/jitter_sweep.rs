//! Seed 001's jitter experiment (claims C11 and C12) on a real stack,
//! through `bbrlab emu` (this binary, as a child with a stop flag and a
//! deadline) on C11/C12's path, for each RTT standard deviation and seed.
//! One runner for both [`Source`]s:
//!
//! - `bbrlab kernel jitter-sweep` (or `bbrlab jitter-sweep --source
//!   linux-tcp`): Linux TCP, the kernel's own `bbr` and our BPF
//!   `bbrlab_jitter` (`bbrlab tcp send/recv` in the emulator's namespaces).
//!   Needs the `kernel` feature (bbrlab's BPF controls); without it the
//!   options are still checked and `--table` still works, but a sweep is
//!   refused with the command that builds the controls in.
//! - `bbrlab jitter-sweep --source s2n`: s2n-quic, through `quic-bulk`
//!   (`crates/quic-bulk`, found next to this binary or given with
//!   `--quic-bulk`): bbrlab's `bbr` and `bbr-jitter` through the
//!   `bbrlab-s2n` adapter, and s2n-quic's own BBRv2 (`s2n:bbr2`).
//!
//! What a sweep writes — its CSV, provenance, table and report block — is
//! defined in `claims::jitter_sweep`, the same for both.
#![cfg_attr(not(feature = "kernel"), allow(dead_code, unused_imports))]

use crate::summaries::{self, QuicSendSummary, TcpSendSummary};
use claims::jitter_sweep::{
    label, link_toml, path_words, write_csv, Provenance, Source, SweepRow, CSV_FILE,
    PROVENANCE_FILE,
};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Options of a jitter sweep.
#[derive(Clone, Debug)]
pub struct Options {
    /// Which stack runs.
    pub source: Source,
    /// `quic-bulk` as given with `--quic-bulk` (s2n-quic only; `None`:
    /// the one next to this binary).
    pub quic_bulk: Option<PathBuf>,
    /// Output directory: the CSV, the provenance and `runs/` (each run's
    /// path, logs and the probe's time series).
    pub out: PathBuf,
    /// RTT standard deviations, ms.
    pub sds_ms: Vec<f64>,
    /// Seeds.
    pub seeds: Vec<u64>,
    /// Congestion controls, alternated within each (sd, seed).
    pub ccs: Vec<String>,
    /// Send this many bytes per run (exclusive with `duration_s`).
    pub bytes: Option<u64>,
    /// Or send for this long, s.
    pub duration_s: Option<f64>,
    /// Longest a run may take before it is stopped and recorded as failed.
    pub timeout_s: u64,
    /// No progress bar (per-run lines still print).
    pub quiet: bool,
}

impl Options {
    /// The per-run timeout when none is given: the transfer at a third of
    /// the link's rate (reordering costs up to ~40 % of it) or the
    /// duration, plus two minutes for the start, the drain and the
    /// verdict.
    pub fn default_timeout_s(bytes: Option<u64>, duration_s: Option<f64>) -> u64 {
        let send = match (bytes, duration_s) {
            (_, Some(d)) => d,
            (Some(b), None) => b as f64 * 8.0 / 1e6,
            (None, None) => 0.0,
        };
        (send + 120.0).ceil() as u64
    }

    /// The command that repeats this sweep, every option spelled out, for
    /// the provenance.
    pub fn command_line(&self) -> String {
        let list = |v: Vec<String>| v.join(",");
        let mut c = format!(
            "{} --out {} --sds {} --seeds {} --cc {}",
            self.source.command(),
            self.out.display(),
            list(self.sds_ms.iter().map(f64::to_string).collect()),
            list(self.seeds.iter().map(u64::to_string).collect()),
            list(self.ccs.clone()),
        );
        if let Some(b) = self.bytes {
            let _ = write!(c, " --bytes {b}");
        }
        if let Some(d) = self.duration_s {
            let _ = write!(c, " --duration {d}s");
        }
        let _ = write!(c, " --timeout {}", self.timeout_s);
        if let Some(q) = &self.quic_bulk {
            let _ = write!(c, " --quic-bulk {}", q.display());
        }
        c
    }

    /// Checks what can be checked before anything runs.
    fn check(&self) -> Result<(), String> {
        if self.sds_ms.is_empty() || self.seeds.is_empty() || self.ccs.is_empty() {
            return Err("--sds, --seeds and --cc each need at least one value".into());
        }
        if let Some(sd) = self.sds_ms.iter().find(|s| !s.is_finite() || **s < 0.0) {
            return Err(format!(
                "--sds: {sd}: an RTT standard deviation is a number of ms ≥ 0"
            ));
        }
        for (i, cc) in self.ccs.iter().enumerate() {
            if self.ccs[..i].contains(cc) {
                return Err(format!("--cc: {cc} is given twice"));
            }
        }
        if self.source == Source::S2nQuic {
            let allowed = quic_ccs();
            if let Some(cc) = self.ccs.iter().find(|c| !allowed.contains(&c.as_str())) {
                return Err(format!(
                    "--cc: `{cc}` is not a control quic-bulk runs in s2n-quic; give one of {}",
                    allowed.join(", ")
                ));
            }
        } else if self.quic_bulk.is_some() {
            return Err("--quic-bulk is for --source s2n; Linux TCP runs `bbrlab tcp`".into());
        }
        match (self.bytes, self.duration_s) {
            (Some(0), _) => Err("--bytes 0: nothing to send; give a byte count > 0".into()),
            (_, Some(d)) if d.is_nan() || d <= 0.0 => {
                Err(format!("--duration {d} s: give a duration > 0"))
            }
            (Some(_), Some(_)) => Err("give --bytes or --duration, not both".into()),
            (None, None) => Err("give --bytes or --duration".into()),
            _ if self.timeout_s == 0 => Err("--timeout 0: give a timeout > 0 s".into()),
            _ => Ok(()),
        }
    }
}

/// The controls `quic-bulk --stack s2n --cc` takes (the quic-bulk
/// contract, `docs`' "quic-bulk" section): bbrlab's through the
/// `bbrlab-s2n` adapter, and s2n-quic's own under `s2n:`. Checked before
/// a sweep starts so a misspelt name does not cost a whole sweep of
/// failed runs; quic-bulk checks them again.
pub fn quic_ccs() -> Vec<&'static str> {
    let mut ccs = congestion::Algorithm::ALL.map(|a| a.name()).to_vec();
    // s2n-quic's own controllers: quic-bulk runs them inside s2n-quic.
    ccs.extend(
        stack_names::StackAlgorithm::ALL
            .into_iter()
            .filter(|a| a.stack() == "s2n")
            .map(|a| a.name()),
    );
    ccs
}

/// The UDP port quic-bulk's receiver listens on in the server namespace.
const QUIC_PORT: u16 = 4433;
/// quic-bulk's time-series interval: 20 rows a second, enough to follow
/// cwnd and srtt on a ~60 ms path.
const QUIC_LOG_INTERVAL: &str = "50ms";

/// `'…'` for `sh -c`.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Mean of a time series' `using_srtt` column (the variant's state: the
/// kernel probe's sidecar, or a quic-bulk log that carries it); `None`
/// without the file (a control that is not ours), without the column
/// (a source that does not report it) or without samples.
pub fn using_srtt_fraction(path: &Path) -> Result<Option<f64>, String> {
    if !path.exists() {
        return Ok(None);
    }
    let err = |e: csv::Error| format!("cannot read {}: {e}", path.display());
    let mut r = csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(path)
        .map_err(err)?;
    let Some(col) = r
        .headers()
        .map_err(err)?
        .iter()
        .position(|h| h == "using_srtt")
    else {
        return Ok(None);
    };
    let mut v = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(err)?;
        if let Some(x) = rec.get(col).and_then(|c| c.trim().parse::<f64>().ok()) {
            if x.is_finite() {
                v.push(x);
            }
        }
    }
    Ok((!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64))
}

/// Why an emulator run failed, from its stderr: the lines that say
/// `error:` or `timed out`, else the last line (not the emulator's
/// statistics line, whose "release error" is not one).
fn failure_reason(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let errors: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.contains("error:") || l.contains("timed out"))
        .collect();
    if errors.is_empty() {
        lines.last().copied().unwrap_or("no output").to_string()
    } else {
        errors.join(" / ")
    }
}

/// One (sd, seed, cc) through `bbrlab emu`; the error says why not.
struct RunSpec<'a> {
    exe: &'a Path,
    /// quic-bulk, for s2n-quic runs.
    quic_bulk: Option<&'a Path>,
    dir: PathBuf,
    sd_ms: f64,
    seed: u64,
    cc: &'a str,
}

/// What one run measured.
struct Measured {
    goodput_bps: f64,
    seconds: f64,
    retransmitted_fraction: Option<f64>,
    rtt_median_ms: Option<f64>,
    using_srtt_fraction: Option<f64>,
}

/// The emulator's server and client commands for one run, and the
/// sender's time series.
fn programs(spec: &RunSpec<'_>, opts: &Options) -> Result<(String, String, PathBuf), String> {
    let dir = &spec.dir;
    let log = dir.join("flows.csv");
    let amount = match (opts.bytes, opts.duration_s) {
        (Some(b), _) => format!("--bytes {b}"),
        (None, Some(d)) => format!("--duration {d}s"),
        (None, None) => return Err("no --bytes or --duration".into()),
    };
    let log_q = sh_quote(&log.display().to_string());
    match opts.source {
        Source::LinuxTcp => {
            let exe = sh_quote(&spec.exe.display().to_string());
            Ok((
                format!("{exe} tcp recv --listen {{server}}:5201"),
                format!(
                    "{exe} tcp send --to {{server}}:5201 --cc {} {amount} --log {log_q}",
                    spec.cc
                ),
                log,
            ))
        }
        Source::S2nQuic => {
            let qb = sh_quote(
                &spec
                    .quic_bulk
                    .ok_or("no quic-bulk for an s2n-quic run")?
                    .display()
                    .to_string(),
            );
            // Both ends see the run's directory: the receiver writes its
            // certificate there and the sender trusts only that one.
            let cert = sh_quote(&dir.join("cert.pem").display().to_string());
            // quic-bulk's --timeout bounds every wait, the wait for the
            // last acknowledgement included: a run whose control has
            // collapsed to a few hundred kbit/s must not fail at its
            // default 30 s, so both ends get the run's own bound.
            let t = opts.timeout_s;
            Ok((
                format!("{qb} recv --stack s2n --listen {{server}}:{QUIC_PORT} --cert {cert} --timeout {t}"),
                format!(
                    "{qb} send --stack s2n --to {{server}}:{QUIC_PORT} --cert {cert} --cc {} {amount} --interval {QUIC_LOG_INTERVAL} --log {log_q} --timeout {t}",
                    sh_quote(spec.cc)
                ),
                log,
            ))
        }
    }
}

/// Reads one run's figures from the emulator's output: the sender's JSON
/// line (`tcp send`'s has `cc`, quic-bulk's `quic_stack`) and the
/// variant's state from its time series.
fn measured(source: Source, stdout: &str, log: &Path, where_: &str) -> Result<Measured, String> {
    let key = match source {
        Source::LinuxTcp => "cc",
        Source::S2nQuic => "quic_stack",
    };
    let missing = || format!("no sender summary (a JSON line with `{key}`) {where_}");
    let lacks = |e: String| format!("{e} {where_}");
    match source {
        Source::LinuxTcp => {
            let s: TcpSendSummary = summaries::line_with(stdout, key)
                .map_err(lacks)?
                .ok_or_else(missing)?;
            Ok(Measured {
                goodput_bps: s.goodput_bps,
                seconds: s.seconds,
                retransmitted_fraction: s.retransmitted_fraction,
                rtt_median_ms: s.rtt_median_ms,
                using_srtt_fraction: srtt_state(log)?,
            })
        }
        Source::S2nQuic => {
            let s: QuicSendSummary = summaries::line_with(stdout, key)
                .map_err(lacks)?
                .ok_or_else(missing)?;
            Ok(Measured {
                goodput_bps: s.goodput_bps,
                seconds: s.seconds,
                retransmitted_fraction: s.retransmit_fraction,
                rtt_median_ms: s.srtt_median_ms,
                using_srtt_fraction: using_srtt_fraction(log)?,
            })
        }
    }
}

/// The kernel probe keeps our controls' state in a sidecar of the log.
#[cfg(feature = "kernel")]
fn srtt_state(log: &Path) -> Result<Option<f64>, String> {
    using_srtt_fraction(&kernel_cc::sampler_path(log))
}

#[cfg(not(feature = "kernel"))]
fn srtt_state(_log: &Path) -> Result<Option<f64>, String> {
    Ok(None)
}

fn run_one(
    spec: &RunSpec<'_>,
    opts: &Options,
    stop: &AtomicBool,
    tick: &dyn Fn(Duration),
) -> Result<Measured, String> {
    let dir = &spec.dir;
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
    }
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let link = dir.join("link.toml");
    fs::write(&link, link_toml(spec.sd_ms, spec.seed))
        .map_err(|e| format!("cannot write {}: {e}", link.display()))?;
    let (server, client, log) = programs(spec, opts)?;
    let ended = crate::emu::run(
        &crate::emu::EmuRun {
            exe: spec.exe,
            scenario: &link,
            server: &server,
            client: &client,
            timeout_s: opts.timeout_s,
            log_dir: dir,
            extra_args: &[],
        },
        Some(stop),
        tick,
    )
    .map_err(|e| {
        if e.starts_with("interrupted") {
            "interrupted (the sweep was stopped by a signal)".to_string()
        } else {
            e
        }
    })?;
    let (stdout, stderr) = (ended.stdout, ended.stderr);
    let where_ = format!("(log: {})", ended.err_path.display());
    let Some(status) = ended.status else {
        return Err(format!(
            "the emulator did not exit within {} s; stopped it {where_}",
            ended.deadline.as_secs()
        ));
    };
    let key = match opts.source {
        Source::LinuxTcp => "cc",
        Source::S2nQuic => "quic_stack",
    };
    let has_summary = crate::child::json_line_with(&stdout, key).is_some();
    if !status.success() || !has_summary {
        return Err(format!(
            "the emulator exited with {status}{}: {} {where_}",
            if has_summary {
                ""
            } else {
                " and no sender summary"
            },
            failure_reason(&stderr)
        ));
    }
    measured(opts.source, &stdout, &log, &where_)
}

/// One line per finished run, as the sweep goes.
fn describe(r: &SweepRow) -> String {
    match (&r.error, r.goodput_bps) {
        (Some(e), _) => format!("{}: FAILED: {e}", label(r.sd_ms, r.seed, &r.cc)),
        (None, g) => format!(
            "{}: {:.2} Mbit/s in {:.1} s, {:.0} % retransmitted, median RTT {:.0} ms{}",
            label(r.sd_ms, r.seed, &r.cc),
            g.unwrap_or(f64::NAN) / 1e6,
            r.seconds.unwrap_or(f64::NAN),
            100.0 * r.retransmitted_fraction.unwrap_or(f64::NAN),
            r.rtt_median_ms.unwrap_or(f64::NAN),
            r.using_srtt_fraction.map_or(String::new(), |u| format!(
                ", BDP on srtt {:.0} % of samples",
                100.0 * u
            ))
        ),
    }
}

/// How long the sweep waits at its end for its sockets on our controls to
/// be released before it says what is left.
const SOCKET_WAIT_S: u64 = 10;

/// Waits, at most `limit`, until no socket runs any of our controls in
/// `ccs`, so that `bbrlab kernel unload` right after the sweep succeeds;
/// past that, says which are left and what to do. A connection's control
/// is released only when the kernel destroys its socket. The emulator
/// closes the sockets its programs leave (`ss -K`) before it removes their
/// namespaces; before it did, the last runs' sockets outlived the path as
/// orphans for 2–4 minutes, and on a kernel without SOCK_DESTROY they
/// still would. Unloading meanwhile is refused without --force.
#[cfg(feature = "kernel")]
fn wait_for_sockets(ccs: &[String], limit: Duration) {
    let t0 = Instant::now();
    loop {
        let live: Vec<String> = kernel_cc::list()
            .iter()
            .filter(|s| ccs.contains(&s.name) && s.live_sockets > 0)
            .map(|s| format!("{} on {}", s.live_sockets, s.name))
            .collect();
        if live.is_empty() {
            return;
        }
        if t0.elapsed() >= limit {
            eprintln!(
                "jitter-sweep: sockets of the last runs still run bbrlab's controls ({}): connections whose namespaces are gone and which the emulator could not close (a kernel without CONFIG_INET_DIAG_DESTROY?); the kernel releases them after its orphan retries (minutes). `bbrlab kernel unload --force` unregisters the controls now; those sockets keep them until they close.",
                live.join(", ")
            );
            return;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Linux TCP's controls must be registered (ours by `bbrlab kernel
/// load`), which needs the `kernel` feature.
#[cfg(feature = "kernel")]
fn linux_tcp_ready(ccs: &[String]) -> Result<(), String> {
    crate::host::check_offered(ccs, &crate::host::available_congestion_controls())
}

#[cfg(not(feature = "kernel"))]
fn linux_tcp_ready(_ccs: &[String]) -> Result<(), String> {
    Err(crate::kernel::missing("kernel jitter-sweep"))
}

/// A jitter sweep: every (sd, seed, cc), one at a time (the emulator's
/// timing wants the machine to itself). Writes the CSV after every run,
/// so an interrupted sweep keeps what it measured, and the provenance at
/// the end. A run that fails is a row with its error; the command then
/// exits 1 after the sweep, naming how many.
pub fn run(opts: &Options) -> Result<(), String> {
    opts.check()?;
    if opts.source == Source::LinuxTcp && !cfg!(feature = "kernel") {
        return linux_tcp_ready(&opts.ccs);
    }
    if !crate::host::is_root() {
        return Err(format!(
            "{} needs root: every run goes through `bbrlab emu`, which makes network namespaces (run it with sudo)",
            opts.source.command().trim_start_matches("bbrlab ")
        ));
    }
    let quic_bulk = match opts.source {
        Source::LinuxTcp => {
            linux_tcp_ready(&opts.ccs)?;
            None
        }
        Source::S2nQuic => Some(crate::quic_bulk::locate(opts.quic_bulk.as_deref())?),
    };
    let stack = match opts.source {
        Source::LinuxTcp => String::new(),
        Source::S2nQuic => quic_bulk.as_deref().map_or_else(
            || "s2n-quic".into(),
            |q| crate::quic_bulk::stack_version(q, "s2n-quic"),
        ),
    };
    let exe = std::env::current_exe().map_err(|e| format!("cannot find bbrlab itself: {e}"))?;
    fs::create_dir_all(&opts.out)
        .map_err(|e| format!("cannot create {}: {e}", opts.out.display()))?;
    let stop = crate::signals::stop_flag()?;
    let kernel = hostfacts::kernel_release();
    let started = hostfacts::utc_now();
    let load = hostfacts::load_average();
    let mut plan = Vec::new();
    for &sd in &opts.sds_ms {
        for &seed in &opts.seeds {
            for cc in &opts.ccs {
                plan.push((sd, seed, cc.as_str()));
            }
        }
    }
    let csv_path = opts.out.join(CSV_FILE);
    let bar = if opts.quiet {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new(plan.len() as u64)
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} runs, ETA {eta}  {msg}",
        )
        .expect("static template"),
    );
    eprintln!(
        "jitter-sweep: {} runs ({} sds × {} seeds × {}) on {}, {} (kernel {kernel}); each run's logs in {}",
        plan.len(),
        opts.sds_ms.len(),
        opts.seeds.len(),
        opts.ccs.join(", "),
        opts.source.label(),
        path_words(),
        opts.out.join("runs").display()
    );
    let mut rows: Vec<SweepRow> = Vec::new();
    for &(sd, seed, cc) in &plan {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let name = label(sd, seed, cc);
        let spec = RunSpec {
            exe: &exe,
            quic_bulk: quic_bulk.as_deref(),
            dir: opts
                .out
                .join("runs")
                .join(format!("sd{sd}-seed{seed}-{}", cc.replace(':', "-"))),
            sd_ms: sd,
            seed,
            cc,
        };
        let tick = |t: Duration| bar.set_message(format!("{name}: {} s", t.as_secs()));
        tick(Duration::ZERO);
        let m = run_one(&spec, opts, &stop, &tick);
        let mut row = SweepRow {
            sd_ms: sd,
            seed,
            cc: cc.to_string(),
            goodput_bps: None,
            seconds: None,
            retransmitted_fraction: None,
            rtt_median_ms: None,
            using_srtt_fraction: None,
            bytes: opts.bytes,
            duration_s: opts.duration_s,
            kernel: kernel.clone(),
            error: None,
        };
        match m {
            Ok(m) => {
                row.goodput_bps = Some(m.goodput_bps);
                row.seconds = Some(m.seconds);
                row.retransmitted_fraction = m.retransmitted_fraction;
                row.rtt_median_ms = m.rtt_median_ms;
                row.using_srtt_fraction = m.using_srtt_fraction;
            }
            Err(e) => row.error = Some(e),
        }
        bar.suspend(|| eprintln!("{}", describe(&row)));
        rows.push(row);
        bar.inc(1);
        write_csv(&csv_path, &rows)?;
    }
    bar.finish_and_clear();
    #[cfg(feature = "kernel")]
    if opts.source == Source::LinuxTcp {
        wait_for_sockets(&opts.ccs, Duration::from_secs(SOCKET_WAIT_S));
    }
    let failed = rows.iter().filter(|r| r.error.is_some()).count();
    let prov = Provenance {
        kernel_release: kernel,
        bbrlab_version: runner::provenance().0.to_string(),
        bbrlab_commit: runner::provenance().1.to_string(),
        // The build's commit (with -dirty) is the provenance of the code.
        source_tree: String::new(),
        started_utc: started,
        finished_utc: hostfacts::utc_now(),
        command: opts.command_line(),
        sds_ms: opts.sds_ms.clone(),
        seeds: opts.seeds.clone(),
        ccs: opts.ccs.clone(),
        bytes: opts.bytes,
        duration_s: opts.duration_s,
        path: path_words(),
        runs: rows.len(),
        failed,
        source: opts.source.key().to_string(),
        stack,
        loadavg_at_start: load,
        loadavg_at_end: hostfacts::load_average(),
    };
    let json = serde_json::to_string_pretty(&prov).map_err(|e| e.to_string())?;
    let prov_path = opts.out.join(PROVENANCE_FILE);
    fs::write(&prov_path, json + "\n")
        .map_err(|e| format!("cannot write {}: {e}", prov_path.display()))?;
    eprintln!(
        "jitter-sweep: wrote {} and {}",
        csv_path.display(),
        prov_path.display()
    );
    if rows.len() < plan.len() {
        return Err(format!(
            "stopped by a signal after {} of {} runs; {} holds those",
            rows.len(),
            plan.len(),
            csv_path.display()
        ));
    }
    if failed > 0 {
        return Err(format!(
            "{failed} of {} runs failed (their `error` column in {} says why)",
            rows.len(),
            csv_path.display()
        ));
    }
    Ok(())
}

/// A source's defaults for what the command line leaves out: Linux TCP's
/// are the kernel sweep's since issue 21 (3 MB per run, seven sds, three
/// seeds); s2n-quic's fit a ~20-minute sweep of the three controls (four
/// sds, five seeds, 750 kB per run: 2 s at the line rate, ~25 s at the
/// ~0.25 Mbit/s they fall to under jitter). A byte count, not a duration:
/// quic-bulk's `--duration` stops writing on time but then waits for all
/// that s2n-quic buffered (up to 16 MiB) to be acknowledged, minutes at
/// those rates.
pub struct Defaults {
    /// `--out`.
    pub out: &'static str,
    /// `--sds`.
    pub sds_ms: &'static [f64],
    /// `--seeds`.
    pub seeds: &'static [u64],
    /// `--cc`.
    pub ccs: &'static [&'static str],
    /// `--bytes` when neither it nor `--duration` is given.
    pub bytes: Option<u64>,
    /// `--duration` when neither is given, s.
    pub duration_s: Option<f64>,
}

/// See [`Defaults`].
pub fn defaults(source: Source) -> Defaults {
    match source {
        Source::LinuxTcp => Defaults {
            out: "out/kernel-jitter-sweep",
            sds_ms: &[0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0],
            seeds: &[1, 2, 3],
            ccs: &["bbr", congestion::kernel_names::BPF_JITTER],
            bytes: Some(3_000_000),
            duration_s: None,
        },
        Source::S2nQuic => Defaults {
            out: "out/quic-jitter-sweep",
            sds_ms: &[0.0, 20.0, 40.0, 60.0],
            seeds: &[1, 2, 3, 4, 5],
            ccs: &["bbr", "bbr-jitter", "s2n:bbr2"],
            bytes: Some(750_000),
            duration_s: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_link_file_is_c11_c12s_path() {
        let t = link_toml(40.0, 2);
        let path =
            std::env::temp_dir().join(format!("bbrlab-jitter-link-{}.toml", std::process::id()));
        fs::write(&path, &t).unwrap();
        let p = scenario::path::load_link(&path);
        let _ = fs::remove_file(&path);
        let p = p.unwrap();
        assert_eq!(p.seed, 2);
        assert!(t.contains("sd = \"40ms\""), "{t}");
        assert!(t.contains("reorder = true"), "{t}");
    }

    #[test]
    fn options_are_checked_before_anything_runs() {
        let ok = Options {
            source: Source::LinuxTcp,
            quic_bulk: None,
            out: "x".into(),
            sds_ms: vec![0.0, 40.0],
            seeds: vec![1],
            ccs: vec!["bbr".into()],
            bytes: Some(3_000_000),
            duration_s: None,
            timeout_s: 144,
            quiet: true,
        };
        assert!(ok.check().is_ok());
        assert_eq!(
            ok.command_line(),
            "bbrlab kernel jitter-sweep --out x --sds 0,40 --seeds 1 --cc bbr --bytes 3000000 --timeout 144"
        );
        let bad = |f: fn(&mut Options)| {
            let mut o = ok.clone();
            f(&mut o);
            o.check().unwrap_err()
        };
        assert!(bad(|o| o.sds_ms = vec![-1.0]).contains("--sds"));
        assert!(bad(|o| o.ccs = vec!["bbr".into(), "bbr".into()]).contains("twice"));
        assert!(bad(|o| o.bytes = Some(0)).contains("--bytes 0"));
        assert!(bad(|o| o.duration_s = Some(60.0)).contains("not both"));
        assert!(bad(|o| o.seeds.clear()).contains("--seeds"));
        assert_eq!(Options::default_timeout_s(Some(3_000_000), None), 144);
        assert_eq!(Options::default_timeout_s(None, Some(60.0)), 180);
    }

    #[test]
    #[cfg(feature = "kernel")]
    fn the_share_on_srtt_is_the_mean_of_the_sidecars_column() {
        let dir = std::env::temp_dir().join(format!("bbrlab-srtt-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let log = dir.join("flows.csv");
        let side = kernel_cc::sampler_path(&log);
        let row = |t: f64, u: u32| {
            format!(
                "{t},bbrlab_jitter,probe_bw,3000000,40.000,70.000,30.000,{u},5,1,256,512,10,0,0,\n"
            )
        };
        let text = format!(
            "{}\n{}{}{}{}",
            kernel_cc::SAMPLER_COLUMNS,
            row(0.01, 0),
            row(0.02, 1),
            row(0.03, 1),
            row(0.04, 1)
        );
        fs::write(&side, text).unwrap();
        let got = using_srtt_fraction(&side);
        let none = using_srtt_fraction(&dir.join("absent.cc.csv"));
        let _ = fs::remove_dir_all(&dir);
        assert_eq!(got, Ok(Some(0.75)));
        assert_eq!(none, Ok(None));
    }

    #[test]
    fn an_emulator_failure_is_told_by_its_error_lines() {
        let err = "emu: up (client → server): 3 Mbit/s\nerror: connect: refused\nemu: forwarded 1 / 2; release error p50 25 µs\n";
        assert_eq!(failure_reason(err), "error: connect: refused");
        let timeout = "emu: timed out; stopped the client and server\nemu: forwarded 402 / 267 packets; release error p50 25 µs\n";
        assert_eq!(
            failure_reason(timeout),
            "emu: timed out; stopped the client and server"
        );
        assert_eq!(failure_reason("a\nlast line\n"), "last line");
        assert_eq!(failure_reason(""), "no output");
        assert_eq!(sh_quote("/a b/it's"), "'/a b/it'\\''s'");
    }

    fn quic_options() -> Options {
        Options {
            source: Source::S2nQuic,
            quic_bulk: None,
            out: "q".into(),
            sds_ms: vec![0.0, 60.0],
            seeds: vec![1, 2],
            ccs: vec!["bbr".into(), "bbr-jitter".into(), "s2n:bbr2".into()],
            bytes: None,
            duration_s: Some(20.0),
            timeout_s: 140,
            quiet: true,
        }
    }

    #[test]
    fn an_s2n_sweep_checks_its_controls_and_repeats_as_its_own_command() {
        let ok = quic_options();
        assert!(ok.check().is_ok());
        assert_eq!(
            ok.command_line(),
            "bbrlab jitter-sweep --source s2n --out q --sds 0,60 --seeds 1,2 --cc bbr,bbr-jitter,s2n:bbr2 --duration 20s --timeout 140"
        );
        let mut bad = ok.clone();
        bad.ccs = vec!["bbr".into(), "bbrlab_jitter".into()];
        let e = bad.check().unwrap_err();
        assert!(
            e.contains("`bbrlab_jitter` is not a control quic-bulk runs"),
            "{e}"
        );
        assert!(e.contains("bbr-jitter") && e.contains("s2n:bbr2"), "{e}");
        // A kernel control is not an s2n one and --quic-bulk is not Linux TCP's.
        let mut kernel = ok.clone();
        kernel.source = Source::LinuxTcp;
        kernel.ccs = vec!["bbr".into()];
        kernel.quic_bulk = Some("/x/quic-bulk".into());
        assert!(kernel
            .check()
            .unwrap_err()
            .contains("--quic-bulk is for --source s2n"));
        let mut given = ok.clone();
        given.quic_bulk = Some("/opt/quic-bulk".into());
        assert!(given
            .command_line()
            .ends_with(" --quic-bulk /opt/quic-bulk"));
    }

    #[test]
    fn the_s2n_defaults_cover_the_issues_sweep() {
        // Issue 23: σ from 0 to 60 ms, at least 5 seeds, bbr against
        // bbr-jitter with s2n-quic's BBRv2 as the third line.
        let d = defaults(Source::S2nQuic);
        assert_eq!(d.sds_ms.first(), Some(&0.0));
        assert_eq!(d.sds_ms.last(), Some(&60.0));
        assert!(d.seeds.len() >= 5);
        assert_eq!(d.ccs, ["bbr", "bbr-jitter", "s2n:bbr2"]);
        assert!(d.ccs.iter().all(|c| quic_ccs().contains(c)));
        // Linux TCP's stay those of `kernel jitter-sweep` before.
        let k = defaults(Source::LinuxTcp);
        assert_eq!(k.bytes, Some(3_000_000));
        assert_eq!(k.ccs, ["bbr", "bbrlab_jitter"]);
        assert_eq!(k.sds_ms.len(), 7);
    }

    #[test]
    fn an_s2n_run_is_quic_bulk_at_both_ends_sharing_the_certificate() {
        let dir = PathBuf::from("/tmp/sweep/runs/sd40-seed2-s2n-bbr2");
        let spec = RunSpec {
            exe: Path::new("/b/bbrlab"),
            quic_bulk: Some(Path::new("/b/quic-bulk")),
            dir: dir.clone(),
            sd_ms: 40.0,
            seed: 2,
            cc: "s2n:bbr2",
        };
        let (server, client, log) = programs(&spec, &quic_options()).unwrap();
        assert_eq!(
            server,
            "'/b/quic-bulk' recv --stack s2n --listen {server}:4433 --cert '/tmp/sweep/runs/sd40-seed2-s2n-bbr2/cert.pem' --timeout 140"
        );
        assert_eq!(
            client,
            "'/b/quic-bulk' send --stack s2n --to {server}:4433 --cert '/tmp/sweep/runs/sd40-seed2-s2n-bbr2/cert.pem' --cc 's2n:bbr2' --duration 20s --interval 50ms --log '/tmp/sweep/runs/sd40-seed2-s2n-bbr2/flows.csv' --timeout 140"
        );
        assert_eq!(log, dir.join("flows.csv"));
        // Linux TCP's run is unchanged: bbrlab tcp at both ends.
        let mut k = quic_options();
        k.source = Source::LinuxTcp;
        k.duration_s = None;
        k.bytes = Some(300_000);
        let (server, client, _) = programs(
            &RunSpec {
                quic_bulk: None,
                cc: "bbr",
                ..spec
            },
            &k,
        )
        .unwrap();
        assert_eq!(server, "'/b/bbrlab' tcp recv --listen {server}:5201");
        assert!(
            client.starts_with(
                "'/b/bbrlab' tcp send --to {server}:5201 --cc bbr --bytes 300000 --log "
            ),
            "{client}"
        );
    }

    #[test]
    fn quic_bulks_summary_and_log_fill_the_row() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("flows.csv");
        // The receiver's line comes first; the sender's is found by key.
        let stdout = "{\"role\":\"recv\",\"stack\":\"s2n\",\"bytes\":7000000,\"intact\":true,\"seconds\":20.1}\n\
            {\"quic_stack\":\"s2n\",\"cc\":\"bbr-jitter\",\"bytes\":7000000,\"seconds\":20.0,\"goodput_bps\":2800000.0,\"srtt_median_ms\":71.5,\"packets_sent\":5000,\"packets_lost\":250,\"retransmit_fraction\":0.05,\"origin\":\"end of the handshake\"}\n";
        fs::write(
            &log,
            "time_s,flow,delivered_bytes,using_srtt\n0.05,0,1000,0\n0.10,0,2000,1\n0.15,0,3000,1\n0.20,0,4000,\n",
        )
        .unwrap();
        let m = measured(Source::S2nQuic, stdout, &log, "(log: x)").unwrap();
        assert_eq!(m.goodput_bps, 2.8e6);
        assert_eq!(m.seconds, 20.0);
        assert_eq!(m.retransmitted_fraction, Some(0.05));
        assert_eq!(m.rtt_median_ms, Some(71.5));
        // Mean over the rows that have the state: 2 of 3.
        assert!((m.using_srtt_fraction.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        // A log without the column (s2n-quic's own control): no share.
        fs::write(&log, "time_s,flow,delivered_bytes\n0.05,0,1000\n").unwrap();
        assert_eq!(
            measured(Source::S2nQuic, stdout, &log, "")
                .unwrap()
                .using_srtt_fraction,
            None
        );
        // Only the receiver's line: the run has no sender figures.
        let e = measured(
            Source::S2nQuic,
            stdout.lines().next().unwrap(),
            &log,
            "(log: x)",
        )
        .err()
        .unwrap();
        assert!(
            e.contains("no sender summary (a JSON line with `quic_stack`) (log: x)"),
            "{e}"
        );
        // A sender line without a figure: an error that names it.
        let line = stdout
            .lines()
            .nth(1)
            .unwrap()
            .replace("\"goodput_bps\":2800000.0,", "");
        let e = measured(Source::S2nQuic, &line, &log, "").err().unwrap();
        assert!(e.contains("missing field `goodput_bps`"), "{e}");
    }
}
