//! `bbrlab kernel jitter-sweep`: seed 001's jitter experiment (claims C11
//! and C12) on real Linux TCP. The kernel's own `bbr` and our BPF
//! `bbrlab_jitter` each run through `bbrlab emu` on C11/C12's path
//! (3 Mbit/s, a 1000-packet buffer, every data packet's delay drawn from
//! Normal(60 ms, sd) floored at 1 ms, so packets reorder), for each RTT
//! standard deviation and seed.
//!
//! The simulator's C11/C12 judge the published claims; this is what an
//! operator who loads the variant into Linux would see, so the report and
//! the README show it beside them as a second, measured result that never
//! touches a verdict. One module owns the whole path — running the sweep,
//! the CSV it writes (through the `csv` crate), reading that CSV back, the
//! README's Markdown table and the report's section — so the committed
//! data, the README and the report cannot drift apart.

use crate::claims::{band, Spread, Stats};
use crate::plots::{self, Figure};
use crate::reproduce::esc;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The sweep's CSV, in `--out`.
pub const CSV_FILE: &str = "jitter-sweep.csv";
/// Its provenance, beside it.
pub const PROVENANCE_FILE: &str = "jitter-sweep.json";

/// The CSV's columns, in order. The first eight are the old script's
/// (`crates/kernel-cc/experiments/seed001-linux-tcp.sh`); `bytes` and
/// `duration_s` are what each run was asked to send (one of them empty),
/// `kernel` the release it ran on, and `error` why a run gave no figures
/// (empty when it did).
pub const CSV_COLUMNS: [&str; 12] = [
    "sd_ms",
    "seed",
    "cc",
    "goodput_bps",
    "seconds",
    "retransmitted_fraction",
    "rtt_median_ms",
    "using_srtt_fraction",
    "bytes",
    "duration_s",
    "kernel",
    "error",
];

/// C11/C12's path, as the emulator's `[link]` table: the jitter is on the
/// data direction only, drawn per packet, so packets overtake each other
/// as they would behind a netem-style impairment.
pub const RATE: &str = "3mbit";
/// Mean one-way data delay (the RTT's mean: the ACK path adds nothing).
pub const MEAN_DELAY_MS: f64 = 60.0;
/// The bottleneck buffer, packets.
pub const QUEUE_PACKETS: u64 = 1000;
/// No packet is delayed less than this.
pub const FLOOR_MS: f64 = 1.0;

/// One run of the sweep: a row of the CSV.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepRow {
    /// The delay's standard deviation, ms.
    pub sd_ms: f64,
    /// The emulator's seed (loss and jitter draws).
    pub seed: u64,
    /// Congestion control.
    pub cc: String,
    /// Bytes verified by the receiver × 8 / `seconds`.
    pub goodput_bps: Option<f64>,
    /// From the first write to the receiver's verdict, s.
    pub seconds: Option<f64>,
    /// Retransmitted / data segments sent (the kernel's counters).
    pub retransmitted_fraction: Option<f64>,
    /// Median sampled srtt, ms.
    pub rtt_median_ms: Option<f64>,
    /// Share of the variant's samples with its BDP built on srtt (rttvar >
    /// 0.3·srtt); empty for controls that are not ours (no state map).
    pub using_srtt_fraction: Option<f64>,
    /// The bytes each run sends (with `--bytes`).
    pub bytes: Option<u64>,
    /// How long each run sends, s (with `--duration`).
    pub duration_s: Option<f64>,
    /// The kernel release it ran on.
    pub kernel: String,
    /// Why the run produced no figures; `None` when it did.
    pub error: Option<String>,
}

fn cell<T: ToString>(v: Option<T>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

impl SweepRow {
    fn record(&self) -> Vec<String> {
        vec![
            self.sd_ms.to_string(),
            self.seed.to_string(),
            self.cc.clone(),
            cell(self.goodput_bps.map(|g| format!("{g:.0}"))),
            cell(self.seconds.map(|s| format!("{s:.3}"))),
            cell(self.retransmitted_fraction.map(|f| format!("{f:.4}"))),
            cell(self.rtt_median_ms.map(|r| format!("{r:.3}"))),
            cell(self.using_srtt_fraction.map(|f| format!("{f:.3}"))),
            cell(self.bytes),
            cell(self.duration_s),
            self.kernel.clone(),
            self.error.clone().unwrap_or_default(),
        ]
    }
}

/// Writes `rows` to `path` with the header [`CSV_COLUMNS`].
pub fn write_csv(path: &Path, rows: &[SweepRow]) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", path.display());
    let mut w = csv::Writer::from_path(path).map_err(|e| err(&e))?;
    w.write_record(CSV_COLUMNS).map_err(|e| err(&e))?;
    for r in rows {
        w.write_record(r.record()).map_err(|e| err(&e))?;
    }
    w.flush().map_err(|e| err(&e))
}

/// Reads a sweep's CSV.
pub fn read_csv(path: &Path) -> Result<Vec<SweepRow>, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_csv(&text, &path.display().to_string())
}

/// Parses a sweep's CSV (`origin` names it in errors). Columns are found
/// by name, so their order may change; every one of [`CSV_COLUMNS`] must
/// be there. Every error names the file, the line and the column, what
/// was found and what is allowed.
pub fn parse_csv(text: &str, origin: &str) -> Result<Vec<SweepRow>, String> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let head = r
        .headers()
        .map_err(|e| format!("{origin}: not a CSV file: {e}"))?
        .clone();
    let mut index = Vec::new();
    for c in CSV_COLUMNS {
        match head.iter().position(|h| h == c) {
            Some(i) => index.push(i),
            None => {
                return Err(format!(
                    "{origin}: line 1: no column `{c}`; a jitter sweep's CSV has the columns {}",
                    CSV_COLUMNS.join(",")
                ))
            }
        }
    }
    let mut rows = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| format!("{origin}: {e}"))?;
        let line = rec.position().map_or(0, |p| p.line());
        let get = |k: usize| rec.get(index[k]).unwrap_or("").trim();
        let at = |k: usize, what: &str| {
            format!(
                "{origin}: line {line}, column `{}`: `{}` is not {what}",
                CSV_COLUMNS[k],
                get(k)
            )
        };
        let number = |k: usize| -> Result<Option<f64>, String> {
            match get(k) {
                "" => Ok(None),
                s => s
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .map(Some)
                    .ok_or_else(|| at(k, "a number ≥ 0 (or empty)")),
            }
        };
        let sd_ms = number(0)?.ok_or_else(|| at(0, "an RTT standard deviation in ms"))?;
        let seed = get(1)
            .parse::<u64>()
            .map_err(|_| at(1, "a seed (a whole number ≥ 0)"))?;
        let cc = get(2).to_string();
        if cc.is_empty() {
            return Err(at(2, "a congestion control's name"));
        }
        let bytes = match get(8) {
            "" => None,
            s => Some(
                s.parse::<u64>()
                    .map_err(|_| at(8, "a byte count (or empty)"))?,
            ),
        };
        let error = Some(get(11).to_string()).filter(|e| !e.is_empty());
        let row = SweepRow {
            sd_ms,
            seed,
            cc,
            goodput_bps: number(3)?,
            seconds: number(4)?,
            retransmitted_fraction: number(5)?,
            rtt_median_ms: number(6)?,
            using_srtt_fraction: number(7)?,
            bytes,
            duration_s: number(9)?,
            kernel: get(10).to_string(),
            error,
        };
        if row.error.is_none() && row.goodput_bps.is_none() {
            return Err(format!(
                "{origin}: line {line}: a run with neither a goodput nor an error; \
                 a run that failed says why in `error`"
            ));
        }
        rows.push(row);
    }
    Ok(rows)
}

/// Where and how a sweep was measured, written beside its CSV so that a
/// table or figure made from it can say which kernel, code and command
/// produced it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Provenance {
    /// `uname -r`.
    pub kernel_release: String,
    /// bbrlab's version.
    pub bbrlab_version: String,
    /// The git commit bbrlab was built from.
    pub bbrlab_commit: String,
    /// The checkout at the time of the sweep: its commit, and whether the
    /// BPF programs (crates/kernel-cc) had uncommitted changes, which the
    /// build's commit alone would not show.
    #[serde(default)]
    pub source_tree: String,
    /// When the sweep started, UTC (ISO 8601).
    pub started_utc: String,
    /// When it ended, UTC.
    pub finished_utc: String,
    /// The command that made it (rerun it, as root with the controls
    /// loaded, to measure again).
    pub command: String,
    /// RTT standard deviations, ms.
    pub sds_ms: Vec<f64>,
    /// Seeds.
    pub seeds: Vec<u64>,
    /// Congestion controls.
    pub ccs: Vec<String>,
    /// Bytes per run (with `--bytes`).
    pub bytes: Option<u64>,
    /// Seconds per run (with `--duration`).
    pub duration_s: Option<f64>,
    /// The path: rate, mean delay, buffer, floor, reordering.
    pub path: String,
    /// Runs made and runs that failed.
    pub runs: usize,
    /// See `runs`.
    pub failed: usize,
    /// The 1-minute load average when the sweep started (other work on
    /// the machine perturbs the emulator's timing).
    pub loadavg_at_start: f64,
    /// The same at its end.
    #[serde(default)]
    pub loadavg_at_end: f64,
}

/// The path in words, for the provenance and the report.
fn path_words() -> String {
    format!(
        "{RATE}, {QUEUE_PACKETS}-packet buffer, data delay ~ Normal({MEAN_DELAY_MS} ms, sd) \
         per packet floored at {FLOOR_MS} ms, reordering allowed; no delay on the ACK path"
    )
}

/// The emulator's `[link]` file for one (sd, seed): the same path as
/// C11/C12's scenarios.
pub fn link_toml(sd_ms: f64, seed: u64) -> String {
    format!(
        "seed = {seed}\n[link.forward]\nrate = \"{RATE}\"\ndelay = \"0ms\"\n\
         queue = {{ limit = \"{QUEUE_PACKETS}pkt\" }}\n\
         jitter = {{ normal = {{ mean = \"{MEAN_DELAY_MS}ms\", sd = \"{sd_ms}ms\", floor = \"{FLOOR_MS}ms\" }}, reorder = true }}\n\
         [link.reverse]\ndelay = \"0ms\"\n"
    )
}

/// Options of `kernel jitter-sweep`.
#[derive(Clone, Debug)]
pub struct Options {
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
            "bbrlab kernel jitter-sweep --out {} --sds {} --seeds {} --cc {}",
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

/// Whether this process runs as root (the emulator makes namespaces).
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Every control in `ccs` must be one the kernel offers now; ours are
/// offered once `bbrlab kernel load` has registered them.
pub fn check_available(ccs: &[String], available: &[String]) -> Result<(), String> {
    let missing: Vec<&String> = ccs.iter().filter(|c| !available.contains(c)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let offered = if available.is_empty() {
        "nothing (no /proc/sys/net/ipv4/tcp_available_congestion_control)".to_string()
    } else {
        available.join(" ")
    };
    let mut hints = Vec::new();
    let ours: Vec<&str> = missing
        .iter()
        .filter(|c| kernel_cc::is_ours(c))
        .map(|c| c.as_str())
        .collect();
    if !ours.is_empty() {
        hints.push(format!(
            "{} not loaded: run `sudo bbrlab kernel load` first (and `bbrlab kernel unload` after)",
            ours.join(" and ")
        ));
    }
    for c in missing.iter().filter(|c| !kernel_cc::is_ours(c)) {
        hints.push(format!(
            "`{c}` is not one of bbrlab's ({}); if it is the kernel's, `modprobe tcp_{c}` loads it",
            kernel_cc::NAMES.join(", ")
        ));
    }
    Err(format!(
        "congestion control {} not available; the kernel offers {offered}. {}",
        missing
            .iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        hints.join("; ")
    ))
}

/// `'…'` for `sh -c`.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The sender's summary fields the CSV keeps (`tcp send`'s JSON).
#[derive(Deserialize)]
struct SenderJson {
    goodput_bps: f64,
    seconds: f64,
    retransmitted_fraction: Option<f64>,
    rtt_median_ms: Option<f64>,
}

/// Mean of the sidecar's `using_srtt` column (the variant's state, sampled
/// with the probe's log); `None` without the file (a control that is not
/// ours) or samples.
pub fn using_srtt_fraction(sidecar: &Path) -> Result<Option<f64>, String> {
    if !sidecar.exists() {
        return Ok(None);
    }
    let t = plots::Table::read(sidecar)?;
    let v: Vec<f64> = t
        .points(sidecar, "time_s", "using_srtt", None)?
        .into_iter()
        .map(|p| p.1)
        .filter(|x| x.is_finite())
        .collect();
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

/// Sends `sig` to `pid` (a child of ours).
fn signal(pid: u32, sig: i32) {
    // SAFETY: signalling our own child by its PID.
    unsafe { libc::kill(pid as i32, sig) };
}

/// Stops the emulator by its PID: SIGTERM (it stops the client and server
/// and removes its namespaces), then SIGKILL after `grace`.
fn stop_emu(child: &mut Child, grace: Duration) {
    if child.try_wait().ok().flatten().is_some() {
        return;
    }
    signal(child.id(), libc::SIGTERM);
    let t0 = Instant::now();
    while t0.elapsed() < grace {
        if child.try_wait().ok().flatten().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    signal(child.id(), libc::SIGKILL);
    let _ = child.wait();
}

/// One (sd, seed, cc) through `bbrlab emu`; the error says why not.
struct RunSpec<'a> {
    exe: &'a Path,
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
    let log = dir.join("flows.csv");
    let exe = sh_quote(&spec.exe.display().to_string());
    let amount = match (opts.bytes, opts.duration_s) {
        (Some(b), _) => format!("--bytes {b}"),
        (None, Some(d)) => format!("--duration {d}s"),
        (None, None) => return Err("no --bytes or --duration".into()),
    };
    let server = format!("{exe} tcp recv --listen {{server}}:5201");
    let client = format!(
        "{exe} tcp send --to {{server}}:5201 --cc {} {amount} --log {}",
        spec.cc,
        sh_quote(&log.display().to_string())
    );
    let (out_path, err_path) = (dir.join("emu.out"), dir.join("emu.err"));
    let file = |p: &Path| fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()));
    let mut child = Command::new(spec.exe)
        .args(["emu", "--scenario"])
        .arg(&link)
        .args([
            "--timeout",
            &opts.timeout_s.to_string(),
            "--server",
            &server,
            "--client",
            &client,
        ])
        .stdin(Stdio::null())
        .stdout(file(&out_path)?)
        .stderr(file(&err_path)?)
        .spawn()
        .map_err(|e| format!("cannot run {} emu: {e}", spec.exe.display()))?;
    // The emulator stops its client at --timeout; this bound is for an
    // emulator that does not come back.
    let t0 = Instant::now();
    let deadline = Duration::from_secs(opts.timeout_s + 30);
    let status = loop {
        if let Some(st) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(st);
        }
        if stop.load(Ordering::Relaxed) {
            stop_emu(&mut child, Duration::from_secs(15));
            return Err("interrupted (the sweep was stopped by a signal)".into());
        }
        if t0.elapsed() >= deadline {
            stop_emu(&mut child, Duration::from_secs(15));
            break None;
        }
        tick(t0.elapsed());
        std::thread::sleep(Duration::from_millis(100));
    };
    let stdout = fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = fs::read_to_string(&err_path).unwrap_or_default();
    let where_ = format!("(log: {})", err_path.display());
    let Some(status) = status else {
        return Err(format!(
            "the emulator did not exit within {} s; stopped it {where_}",
            deadline.as_secs()
        ));
    };
    let sender = crate::compare::json_line_with(&stdout, "cc");
    if !status.success() || sender.is_none() {
        return Err(format!(
            "the emulator exited with {status}{}: {} {where_}",
            if sender.is_none() {
                " and no sender summary"
            } else {
                ""
            },
            failure_reason(&stderr)
        ));
    }
    let s: SenderJson = serde_json::from_value(sender.unwrap_or_default())
        .map_err(|e| format!("the sender's summary lacks a figure: {e} {where_}"))?;
    Ok(Measured {
        goodput_bps: s.goodput_bps,
        seconds: s.seconds,
        retransmitted_fraction: s.retransmitted_fraction,
        rtt_median_ms: s.rtt_median_ms,
        using_srtt_fraction: using_srtt_fraction(&kernel_cc::sampler_path(&log))?,
    })
}

/// The running kernel's release (`uname -r`).
pub fn kernel_release() -> String {
    fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// See [`Provenance::source_tree`].
fn source_tree() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(&root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short=12", "HEAD"]) {
        None => "unknown (not a git checkout)".into(),
        Some(c) => match git(&["status", "--porcelain", "--", "crates/kernel-cc"]) {
            Some(st) if !st.is_empty() => {
                format!("{c}, crates/kernel-cc with uncommitted changes")
            }
            Some(_) => format!("{c}, crates/kernel-cc as committed"),
            None => c,
        },
    }
}

/// Seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ`.
fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let t = secs % 86_400;
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        crate::reproduce::utc_date(secs),
        t / 3600,
        t / 60 % 60,
        t % 60
    )
}

fn loadavg() -> f64 {
    fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

/// The label of one run: `sd 40 ms, seed 2, bbrlab_jitter`.
fn label(sd: f64, seed: u64, cc: &str) -> String {
    format!("sd {sd} ms, seed {seed}, {cc}")
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

/// `kernel jitter-sweep`: every (sd, seed, cc), one at a time (the
/// emulator's timing wants the machine to itself). Writes the CSV after
/// every run, so an interrupted sweep keeps what it measured, and the
/// provenance at the end. A run that fails is a row with its error; the
/// command then exits 1 after the sweep, naming how many.
pub fn run(opts: &Options) -> Result<(), String> {
    opts.check()?;
    if !is_root() {
        return Err(
            "kernel jitter-sweep needs root: every run goes through `bbrlab emu`, which makes network namespaces (run it with sudo)"
                .into(),
        );
    }
    check_available(&opts.ccs, &kernel_cc::available())?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find bbrlab itself: {e}"))?;
    fs::create_dir_all(&opts.out)
        .map_err(|e| format!("cannot create {}: {e}", opts.out.display()))?;
    let stop = crate::signals::stop_flag()?;
    let kernel = kernel_release();
    let started = utc_now();
    let load = loadavg();
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
        "jitter-sweep: {} runs ({} sds × {} seeds × {}) on {} (kernel {kernel}); each run's logs in {}",
        plan.len(),
        opts.sds_ms.len(),
        opts.seeds.len(),
        opts.ccs.join(", "),
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
            dir: opts
                .out
                .join("runs")
                .join(format!("sd{sd}-seed{seed}-{cc}")),
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
    wait_for_sockets(&opts.ccs, Duration::from_secs(SOCKET_WAIT_S));
    let failed = rows.iter().filter(|r| r.error.is_some()).count();
    let prov = Provenance {
        kernel_release: kernel,
        bbrlab_version: crate::output::provenance().0.to_string(),
        bbrlab_commit: crate::output::provenance().1.to_string(),
        source_tree: source_tree(),
        started_utc: started,
        finished_utc: utc_now(),
        command: opts.command_line(),
        sds_ms: opts.sds_ms.clone(),
        seeds: opts.seeds.clone(),
        ccs: opts.ccs.clone(),
        bytes: opts.bytes,
        duration_s: opts.duration_s,
        path: path_words(),
        runs: rows.len(),
        failed,
        loadavg_at_start: load,
        loadavg_at_end: loadavg(),
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

// ----- tables, figures and the report ---------------------------------------

/// The statistics of one (sd, cc) over its seeds.
struct Cell {
    goodput_mbps: Stats,
    retx_pct: Stats,
    srtt_pct: Stats,
    failed: usize,
}

/// The sweep's controls in order of first appearance and its sds in
/// ascending order.
fn axes(rows: &[SweepRow]) -> (Vec<String>, Vec<f64>) {
    let mut ccs: Vec<String> = Vec::new();
    let mut sds: Vec<f64> = Vec::new();
    for r in rows {
        if !ccs.contains(&r.cc) {
            ccs.push(r.cc.clone());
        }
        if !sds.contains(&r.sd_ms) {
            sds.push(r.sd_ms);
        }
    }
    sds.sort_by(f64::total_cmp);
    (ccs, sds)
}

fn cell_of(rows: &[SweepRow], sd: f64, cc: &str) -> Cell {
    let at: Vec<&SweepRow> = rows
        .iter()
        .filter(|r| r.sd_ms == sd && r.cc == cc)
        .collect();
    let ok: Vec<&&SweepRow> = at.iter().filter(|r| r.error.is_none()).collect();
    let stats = |f: &dyn Fn(&SweepRow) -> Option<f64>, scale: f64| {
        Stats::of(
            &ok.iter()
                .map(|r| f(r).map_or(f64::NAN, |x| x * scale))
                .collect::<Vec<_>>(),
        )
    };
    Cell {
        goodput_mbps: stats(&|r| r.goodput_bps, 1e-6),
        retx_pct: stats(&|r| r.retransmitted_fraction, 100.0),
        srtt_pct: stats(&|r| r.using_srtt_fraction, 100.0),
        failed: at.len() - ok.len(),
    }
}

/// "2.86 ± 0.01 (n = 3)", with the failed runs counted beside it.
fn show_goodput(c: &Cell) -> String {
    let mut s = if c.goodput_mbps.n == 0 {
        "–".to_string()
    } else {
        format!(
            "{:.2} ± {:.2} (n = {})",
            c.goodput_mbps.mean, c.goodput_mbps.sd, c.goodput_mbps.n
        )
    };
    if c.failed > 0 {
        let _ = write!(s, "; {} failed", c.failed);
    }
    s
}

fn show_pct(s: &Stats) -> String {
    if s.n == 0 {
        "–".into()
    } else {
        format!("{:.0} %", s.mean)
    }
}

/// The table's header and rows as plain cells: RTT sd, then per control
/// goodput (mean ± sd over seeds), then per control the retransmitted
/// share, then, for our controls, the share of samples on srtt.
fn table_cells(rows: &[SweepRow]) -> (Vec<String>, Vec<Vec<String>>) {
    let (ccs, sds) = axes(rows);
    let ours: Vec<&String> = ccs.iter().filter(|c| kernel_cc::is_ours(c)).collect();
    let mut head = vec!["RTT sd (ms)".to_string()];
    head.extend(ccs.iter().map(|c| {
        if kernel_cc::is_ours(c) {
            format!("{c} Mbit/s")
        } else {
            format!("{c} (kernel) Mbit/s")
        }
    }));
    head.extend(ccs.iter().map(|c| format!("{c} retx")));
    head.extend(ours.iter().map(|c| format!("{c} BDP on srtt")));
    let body = sds
        .iter()
        .map(|&sd| {
            let cells: Vec<Cell> = ccs.iter().map(|c| cell_of(rows, sd, c)).collect();
            let mut r = vec![format!("{sd}")];
            r.extend(cells.iter().map(show_goodput));
            r.extend(cells.iter().map(|c| show_pct(&c.retx_pct)));
            r.extend(
                ccs.iter()
                    .zip(&cells)
                    .filter(|(cc, _)| kernel_cc::is_ours(cc))
                    .map(|(_, c)| show_pct(&c.srtt_pct)),
            );
            r
        })
        .collect();
    (head, body)
}

/// The README's table of a sweep: a row per RTT sd, goodput as mean ±
/// sample sd over the seeds that completed (failed runs counted in the
/// cell), retransmitted share and, for our controls, the share of samples
/// with the BDP on srtt (means over seeds). `kernel jitter-sweep --table`
/// prints it, so the README's table is always one a command made.
pub fn markdown(rows: &[SweepRow]) -> String {
    let (head, body) = table_cells(rows);
    let mut out = format!("| {} |\n|", head.join(" | "));
    out.push_str(&" --- |".repeat(head.len()));
    out.push('\n');
    for r in body {
        let _ = writeln!(out, "| {} |", r.join(" | "));
    }
    out
}

/// `kernel jitter-sweep --table CSV`.
pub fn table_from(path: &Path) -> Result<String, String> {
    Ok(markdown(&read_csv(path)?))
}

/// Where the report looks for measured sweeps: `$BBRLAB_KERNEL_TCP_DIR`,
/// else the checkout's `docs/kernel-tcp` (the binary's source tree). Each
/// subdirectory holding a [`CSV_FILE`] is one sweep.
pub fn data_dir() -> PathBuf {
    std::env::var_os("BBRLAB_KERNEL_TCP_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/kernel-tcp"))
}

/// The command that measures the committed sweep (3 MB per run), as the
/// report and the README give it.
pub const REGENERATE: &str = "sudo flock /tmp/bbrlab-kernel-cc.lock sh -c 'bbrlab kernel load && bbrlab kernel jitter-sweep --out docs/kernel-tcp/seed001-3mb --bytes 3000000; bbrlab kernel unload --force'";

/// One measured sweep in the report: its table, its goodput-vs-sd figure
/// (written into `fig_dir`, linked as `href`) and its provenance.
fn sweep_html(csv: &Path, fig_dir: &Path, href: &str) -> Result<String, String> {
    let rows = read_csv(csv)?;
    let prov_path = csv.with_file_name(PROVENANCE_FILE);
    let prov: Option<Provenance> = fs::read_to_string(&prov_path)
        .ok()
        .map(|t| serde_json::from_str(&t).map_err(|e| format!("{}: {e}", prov_path.display())))
        .transpose()?;
    fs::create_dir_all(fig_dir).map_err(|e| format!("{}: {e}", fig_dir.display()))?;
    fs::copy(csv, fig_dir.join(CSV_FILE)).map_err(|e| format!("{}: {e}", csv.display()))?;
    if prov.is_some() {
        fs::copy(&prov_path, fig_dir.join(PROVENANCE_FILE))
            .map_err(|e| format!("{}: {e}", prov_path.display()))?;
    }
    let (ccs, sds) = axes(&rows);
    let seeds = {
        let mut s: Vec<u64> = rows.iter().map(|r| r.seed).collect();
        s.sort_unstable();
        s.dedup();
        s.len()
    };
    let bands: Vec<plots::Band> = ccs
        .iter()
        .map(|cc| {
            let pts: Vec<(f64, Stats)> = sds
                .iter()
                .map(|&sd| (sd, cell_of(&rows, sd, cc).goodput_mbps))
                .collect();
            let who = if kernel_cc::is_ours(cc) {
                format!("{cc} (BPF)")
            } else {
                format!("{cc} (kernel)")
            };
            band(
                &format!(
                    "{who}, Linux TCP (mean, min–max over {seeds} seed{})",
                    if seeds == 1 { "" } else { "s" }
                ),
                &pts,
                Spread::MinMax,
            )
        })
        .collect();
    let first = rows.first();
    let amount = match (
        first.and_then(|r| r.bytes),
        first.and_then(|r| r.duration_s),
    ) {
        (Some(b), _) => format!("{:.1} MB per run", b as f64 / 1e6),
        (None, Some(d)) => format!("{d} s per run"),
        (None, None) => "no rows".to_string(),
    };
    let title = format!(
        "Linux TCP (kernel, measured): goodput vs RTT sd, 3 Mbit/s, {amount} (▲ seed 001's bbr)"
    );
    plots::figure_with_bands(
        &Figure {
            stem: &fig_dir.join("goodput-vs-sd"),
            title: &title,
            x_label: "RTT standard deviation (ms)",
            y_label: "goodput (Mbit/s)",
            log_x: false,
            log_y: false,
            series: &[],
            published: &crate::claims::C12_PUBLISHED_BBR,
        },
        &bands,
    )?;
    let mut h = String::new();
    let _ = write!(h, "<h4>{}</h4><table><tr>", esc(&amount));
    let (head, body) = table_cells(&rows);
    for c in &head {
        let _ = write!(h, "<th>{}</th>", esc(c));
    }
    h.push_str("</tr>");
    for r in &body {
        h.push_str("<tr>");
        for c in r {
            let _ = write!(h, "<td>{}</td>", esc(c));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
    let _ = write!(
        h,
        "<p><a href=\"{href}/goodput-vs-sd.png\"><img src=\"{href}/goodput-vs-sd.svg\" alt=\"{}\"></a></p>",
        esc(&title)
    );
    let failed: Vec<&SweepRow> = rows.iter().filter(|r| r.error.is_some()).collect();
    if !failed.is_empty() {
        h.push_str("<p><b>Failed runs</b> (left out of the means):</p><ul>");
        for r in failed {
            let _ = write!(
                h,
                "<li>{}: {}</li>",
                esc(&label(r.sd_ms, r.seed, &r.cc)),
                esc(r.error.as_deref().unwrap_or(""))
            );
        }
        h.push_str("</ul>");
    }
    match &prov {
        Some(p) => {
            let _ = write!(
                h,
                "<p><b>Provenance:</b> kernel {}, measured {} to {} UTC, bbrlab {} (git commit {}; checkout {}), {} runs ({} failed), load average {:.2} at the start and {:.2} at the end. Path: {}. Command: <code>{}</code> (as root, between <code>bbrlab kernel load</code> and <code>bbrlab kernel unload</code>, all under <code>flock /tmp/bbrlab-kernel-cc.lock</code>). Data: <a href=\"{href}/{CSV_FILE}\">{CSV_FILE}</a> · <a href=\"{href}/{PROVENANCE_FILE}\">{PROVENANCE_FILE}</a> (from {}).</p>",
                esc(&p.kernel_release),
                esc(&p.started_utc),
                esc(&p.finished_utc),
                esc(&p.bbrlab_version),
                esc(&p.bbrlab_commit),
                esc(&p.source_tree),
                p.runs,
                p.failed,
                p.loadavg_at_start,
                p.loadavg_at_end,
                esc(&p.path),
                esc(&p.command),
                esc(&csv.display().to_string()),
            );
        }
        None => {
            let _ = write!(
                h,
                "<p><b>Provenance:</b> no {PROVENANCE_FILE} beside {}; kernel {} (from the CSV). Data: <a href=\"{href}/{CSV_FILE}\">{CSV_FILE}</a>.</p>",
                esc(&csv.display().to_string()),
                esc(&rows.first().map_or("unknown".into(), |r| r.kernel.clone())),
            );
        }
    }
    Ok(h)
}

/// The report's "Linux TCP (kernel, measured)" block for C11/C12: every
/// sweep under `data` (a subdirectory with a [`CSV_FILE`]), each with its
/// table, figure (written under `out/kernel-tcp/`) and provenance. It is a
/// second result beside the simulator's and judges nothing. Without data
/// it says how to measure it; a sweep that cannot be read shows its error
/// in place of its table, so the rest of the report is still written.
pub fn report_section(data: &Path, out: &Path) -> String {
    let mut h = String::from(
        "<h3 id=\"linux-tcp\">Linux TCP (kernel, measured)</h3>\
         <p>Not the simulator: real Linux TCP through <code>bbrlab emu</code> on C11/C12's path \
         (3 Mbit/s, 1000-packet buffer, each data packet delayed by Normal(60 ms, sd) floored at 1 ms, \
         so packets reorder), the kernel's own <code>bbr</code> against seed 001's variant as a BPF \
         congestion control (<code>bbrlab_jitter</code>, loaded with <code>bbrlab kernel load</code>). \
         A second, labelled result: it does not enter C11's or C12's verdict.</p>",
    );
    let mut sweeps: Vec<PathBuf> = fs::read_dir(data)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.join(CSV_FILE).is_file())
                .collect()
        })
        .unwrap_or_default();
    sweeps.sort();
    if sweeps.is_empty() {
        let _ = write!(
            h,
            "<p><b>No measurement found</b> in <code>{}</code> (a subdirectory with {CSV_FILE}). \
             To measure it (root, about 20 minutes; the lock keeps other users of the BPF controls out): \
             <code>{}</code>, then run <code>bbrlab reproduce</code> again.</p>",
            esc(&data.display().to_string()),
            esc(REGENERATE)
        );
        return h;
    }
    for s in sweeps {
        let name = s
            .file_name()
            .map_or("sweep".into(), |n| n.to_string_lossy().into_owned());
        let href = format!("kernel-tcp/{name}");
        match sweep_html(&s.join(CSV_FILE), &out.join(&href), &href) {
            Ok(block) => h.push_str(&block),
            Err(e) => {
                eprintln!("reproduce: Linux TCP data: {e}");
                let _ = write!(
                    h,
                    "<p class=\"fail\"><b>Cannot show {}:</b> {}</p>",
                    esc(&name),
                    esc(&e)
                );
            }
        }
    }
    h
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
        let p = crate::emu::load_link(&path);
        let _ = fs::remove_file(&path);
        let p = p.unwrap();
        assert_eq!(p.seed, 2);
        assert!(t.contains("sd = \"40ms\""), "{t}");
        assert!(t.contains("reorder = true"), "{t}");
    }

    #[test]
    fn missing_controls_name_the_remedy() {
        let avail: Vec<String> = ["reno", "bbr", "cubic"].map(String::from).to_vec();
        assert!(check_available(&["bbr".into()], &avail).is_ok());
        let e = check_available(&["bbr".into(), "bbrlab_jitter".into()], &avail).unwrap_err();
        assert!(e.contains("bbrlab_jitter not available"), "{e}");
        assert!(e.contains("bbrlab kernel load"), "{e}");
        assert!(e.contains("reno bbr cubic"), "{e}");
        let e = check_available(&["vegas".into()], &avail).unwrap_err();
        assert!(e.contains("modprobe tcp_vegas"), "{e}");
    }

    #[test]
    fn options_are_checked_before_anything_runs() {
        let ok = Options {
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
}
