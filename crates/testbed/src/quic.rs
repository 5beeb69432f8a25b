//! `bbrlab quic`: bulk transfers over real QUIC stacks with `quic-bulk`
//! (crate `quic-bulk`, a separate program so the stacks stay out of this
//! binary's dependencies, as quinn's does for `bench --transport`).
//!
//! Each run is one stack with one controller: the stack's own
//! (`s2n:bbr2`, `s2n:cubic`) or bbrlab's through the stack's adapter
//! crate (`bbr`, `bbr-jitter`, `bbr3`, `cubic`, `reno`). Two modes:
//!
//! - **loopback** (default, no root): sender and receiver are two
//!   processes on 127.0.0.1, each waited for with `wait4` so their CPU
//!   time is known (as `bench --transport` does). Every run is in the same
//!   invocation, so the CPU per gigabit of bbrlab's controllers is a ratio
//!   against the stack's own BBR measured minutes apart on the same
//!   machine, not against a figure from another day.
//! - **`--scenario FILE`** (root): every run through `bbrlab emu` on the
//!   scenario's `[link]`, plus kernel TCP `bbr` and `cubic` (`bbrlab tcp`)
//!   on the same emulated path as the reference rows. The figures are read
//!   from each run's `flows.csv` with `compare`'s one reader, so they are
//!   the same statistics `compare` and `validate` print.

use crate::child::{self, free_udp_port, Output, Supervise};
use crate::summaries::{self, QuicRecvSummary, QuicSendSummary, TcpSendSummary};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// bbrlab's controllers, which every stack's adapter offers: all of
/// `congestion`'s algorithms.
fn adapter_ccs() -> Vec<&'static str> {
    congestion::Algorithm::ALL.map(|a| a.name()).to_vec()
}

/// How long a transfer may run past its `--seconds` before it is stopped:
/// the handshake, the drain of the last bytes and a slow start under a
/// loaded machine.
const SLACK_S: u64 = 60;
use crate::quic_bulk::{QuicCommands, PEER_TIMEOUT_S};

/// Who controls congestion in a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Controller {
    /// bbrlab's, through the stack's adapter crate.
    Adapter(String),
    /// The stack's own, named `STACK:NAME` as quic-bulk takes it.
    Own(String),
    /// Linux TCP's (the reference rows of `--scenario`).
    Kernel(String),
}

/// One transfer to make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// `s2n`, `noq`, `quinn`; `kernel` for kernel TCP.
    pub stack: String,
    pub cc: Controller,
}

impl Plan {
    /// The `--cc` quic-bulk takes (or `bbrlab tcp send` for the kernel).
    pub fn cc_arg(&self) -> &str {
        match &self.cc {
            Controller::Adapter(n) | Controller::Own(n) | Controller::Kernel(n) => n,
        }
    }

    /// The table's label.
    pub fn label(&self) -> String {
        match &self.cc {
            Controller::Adapter(n) => format!("{} + bbrlab {n}", stack_name(&self.stack)),
            Controller::Own(n) => {
                let own = n.split_once(':').map_or(n.as_str(), |(_, a)| a);
                format!("{} {own} (own)", stack_name(&self.stack))
            }
            Controller::Kernel(n) => format!("kernel TCP {n}"),
        }
    }

    /// A directory name for the run's files.
    pub fn dir_name(&self) -> String {
        match &self.cc {
            Controller::Adapter(n) => format!("{}-bbrlab-{n}", self.stack),
            Controller::Own(n) => format!("{}-own-{}", self.stack, n.replace(':', "-")),
            Controller::Kernel(n) => format!("kernel-{n}"),
        }
    }
}

/// The stack's name as people write it.
fn stack_name(stack: &str) -> String {
    match stack {
        "s2n" => "s2n-quic".into(),
        other => other.to_string(),
    }
}

/// The stack's own BBR, the reference of the CPU ratio (the issue's
/// speed goal: the adapter costs no more than 10 % against it).
fn own_bbr(stack: &str) -> String {
    match stack {
        "s2n" => "s2n:bbr2".into(),
        other => format!("{other}:bbr"),
    }
}

/// The runs `--stack` × `--cc` asks for, in that order: a plain name
/// (`bbr`) runs on every stack through its adapter, a `STACK:NAME` only on
/// that stack, as the stack's own controller. Names quic-bulk does not
/// know are left to it (it exits 2 with the list it allows).
pub fn plan(stacks: &[String], ccs: &[String]) -> Result<Vec<Plan>, String> {
    let word = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    if stacks.is_empty() || ccs.is_empty() {
        return Err("--stack and --cc each need at least one name".into());
    }
    let mut seen = std::collections::BTreeSet::new();
    for s in stacks {
        if !word(s) {
            return Err(format!(
                "--stack `{s}`: a stack is a plain name (s2n; later noq, quinn)"
            ));
        }
        if !seen.insert(s) {
            return Err(format!("--stack {s} is given twice"));
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for cc in ccs {
        let cc = cc.trim();
        if !seen.insert(cc) {
            return Err(format!("--cc {cc} is given twice"));
        }
        match cc.split_once(':') {
            Some((stack, name)) => {
                if !word(stack) || !word(name) {
                    return Err(format!(
                        "--cc `{cc}`: a stack's own controller is STACK:NAME (e.g. s2n:bbr2)"
                    ));
                }
                if !stacks.iter().any(|s| s == stack) {
                    return Err(format!(
                        "--cc {cc} is {}'s own controller, but --stack ({}) does not include `{stack}`",
                        stack_name(stack),
                        stacks.join(",")
                    ));
                }
                out.push(Plan {
                    stack: stack.into(),
                    cc: Controller::Own(cc.into()),
                });
            }
            None => {
                if !word(cc) {
                    return Err(format!(
                        "--cc `{cc}`: expected one of {} or a stack's own STACK:NAME",
                        adapter_ccs().join(", ")
                    ));
                }
                for s in stacks {
                    out.push(Plan {
                        stack: s.clone(),
                        cc: Controller::Adapter(cc.into()),
                    });
                }
            }
        }
    }
    // Stack by stack, in the --cc order within each.
    out.sort_by_key(|p| stacks.iter().position(|s| *s == p.stack));
    Ok(out)
}

/// What `bbrlab quic` was asked to do.
pub struct Options {
    pub stacks: Vec<String>,
    pub ccs: Vec<String>,
    pub seconds: Option<u64>,
    pub scenario: Option<PathBuf>,
    pub out: Option<PathBuf>,
    pub quic_bulk: Option<PathBuf>,
    pub interval: String,
    pub no_kernel: bool,
    pub rounds: u32,
}

/// One finished run's figures.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub label: String,
    pub stack: String,
    pub cc: String,
    pub controller: &'static str,
    pub round: u32,
    pub bytes: u64,
    pub goodput_bps: f64,
    pub srtt_median_ms: Option<f64>,
    pub retransmit_fraction: Option<f64>,
    /// Sender and receiver CPU seconds (loopback only).
    pub cpu_send_s: Option<f64>,
    pub cpu_recv_s: Option<f64>,
    /// This run's CPU per gigabit over the stack's own BBR's in the same
    /// round.
    pub cpu_ratio: Option<f64>,
    pub dir: PathBuf,
    /// Why the run failed or was stopped; its figures are then whatever
    /// its files still held (flows.csv through the emulator), else zero.
    pub error: Option<String>,
}

impl Outcome {
    /// Sender + receiver CPU seconds per gigabit delivered.
    pub fn cpu_s_per_gbit(&self) -> Option<f64> {
        let gbit = self.bytes as f64 * 8.0 / 1e9;
        match (self.cpu_send_s, self.cpu_recv_s) {
            (Some(s), Some(r)) if gbit > 0.0 => Some((s + r) / gbit),
            _ => None,
        }
    }
}

/// Fills in each run's CPU ratio against the stack's own BBR in its round.
pub fn cpu_ratios(rows: &mut [Outcome]) {
    let refs: Vec<(u32, String, f64)> = rows
        .iter()
        .filter(|r| r.error.is_none() && r.controller == "own" && r.cc == own_bbr(&r.stack))
        .filter_map(|r| Some((r.round, r.stack.clone(), r.cpu_s_per_gbit()?)))
        .collect();
    for r in rows.iter_mut().filter(|r| r.error.is_none()) {
        r.cpu_ratio = refs
            .iter()
            .find(|(round, stack, _)| *round == r.round && *stack == r.stack)
            .and_then(|(_, _, base)| Some(r.cpu_s_per_gbit()? / base));
    }
}

/// One transfer on loopback: receiver and sender as two processes of
/// quic-bulk, their CPU time from `wait4`.
fn loopback_run(
    qb: &Path,
    p: &Plan,
    seconds: u64,
    interval_ms: u64,
    dir: &Path,
) -> Result<Outcome, String> {
    let port = free_udp_port()?;
    let server = format!("127.0.0.1:{port}");
    let cert = dir.join("cert.pem");
    let _ = std::fs::remove_file(&cert);
    let log = dir.join("flows.csv");
    let cmds = QuicCommands {
        quic_bulk: qb,
        stack: &p.stack,
        cc: p.cc_arg(),
        extra: "",
        server: &server,
        cert: &cert,
        seconds,
        interval_ms,
        log: Some(&log),
    };
    let spawn = |args: Vec<String>, what: &str| {
        child::spawn(Command::new(qb).args(args), what, Output::Temporary)
    };
    let recv = spawn(cmds.recv_args(), "quic-bulk recv")?;
    let send = match spawn(cmds.send_args(), "quic-bulk send") {
        Ok(s) => s,
        Err(e) => {
            let _ = recv.wait(&Supervise::until(Instant::now()));
            return Err(e);
        }
    };
    let deadline = Instant::now() + Duration::from_secs(seconds + SLACK_S);
    let s = send.wait(&Supervise::until(deadline))?;
    // A sender that failed leaves the receiver waiting for it: a few
    // seconds to notice, then it is stopped by its PID.
    let recv_deadline = if s.code == Some(0) {
        Instant::now() + Duration::from_secs(PEER_TIMEOUT_S + 5)
    } else {
        Instant::now() + Duration::from_secs(3)
    };
    let r = recv.wait(&Supervise::until(recv_deadline))?;
    let label = p.label();
    if let Some(why) = s.failure().or_else(|| r.failure()) {
        return Err(format!("{label}: {why}"));
    }
    let sv: QuicSendSummary = summaries::line_with(&s.stdout, "quic_stack")
        .map_err(|e| format!("{label}: quic-bulk send: {e}"))?
        .ok_or_else(|| format!("{label}: no summary from quic-bulk send in {:?}", s.stdout))?;
    let rv: QuicRecvSummary = summaries::line_with(&r.stdout, "intact")
        .map_err(|e| format!("{label}: quic-bulk recv: {e}"))?
        .ok_or_else(|| format!("{label}: no summary from quic-bulk recv in {:?}", r.stdout))?;
    let bytes = summaries::check_delivery(&sv, &rv).map_err(|e| format!("{label}: {e}"))?;
    Ok(Outcome {
        label,
        stack: p.stack.clone(),
        cc: p.cc_arg().into(),
        controller: controller_kind(&p.cc),
        bytes,
        goodput_bps: sv.goodput_bps,
        srtt_median_ms: sv.srtt_median_ms,
        retransmit_fraction: sv.retransmit_fraction,
        cpu_send_s: Some(s.cpu_s),
        cpu_recv_s: Some(r.cpu_s),
        dir: dir.to_path_buf(),
        ..Outcome::default()
    })
}

fn controller_kind(c: &Controller) -> &'static str {
    match c {
        Controller::Adapter(_) => "adapter",
        Controller::Own(_) => "own",
        Controller::Kernel(_) => "kernel",
    }
}

/// One transfer through `bbrlab emu` on `scenario`'s path; the figures
/// come from its flows.csv over `seconds` (compare's reader).
fn emu_run(
    qb: Option<&Path>,
    scenario: &Path,
    p: &Plan,
    seconds: u64,
    interval_ms: u64,
    dir: &Path,
) -> Result<Outcome, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let csv = dir.join("flows.csv");
    let cert = dir.join("cert.pem");
    let _ = std::fs::remove_file(&cert);
    let _ = std::fs::remove_file(&csv);
    let (server, client, key) = match &p.cc {
        Controller::Kernel(cc) => (
            format!("{} tcp recv --listen {{server}}:5201", exe.display()),
            format!(
                "{} tcp send --to {{server}}:5201 --cc {cc} --duration {seconds}s --interval {interval_ms}ms --log {}",
                exe.display(),
                csv.display()
            ),
            "pmtu",
        ),
        _ => {
            let qb = qb.ok_or("quic-bulk is needed for the QUIC runs")?;
            let (s, c) = QuicCommands {
                quic_bulk: qb,
                stack: &p.stack,
                cc: p.cc_arg(),
                extra: "",
                server: "{server}:5201",
                cert: &cert,
                seconds,
                interval_ms,
                log: Some(&csv),
            }
            .shell();
            (s, c, "quic_stack")
        }
    };
    let label = p.label();
    let stdout = crate::emu::run_emu(&exe, scenario, (&server, &client), seconds + SLACK_S, dir)
        .map_err(|e| format!("{label}: {e}"))?;
    // The sender's summary: a kernel run's bytes, or a QUIC run's bytes
    // checked against the receiver's verdict.
    let (bytes, quic_retransmit) = if key == "quic_stack" {
        let sv: Option<QuicSendSummary> =
            summaries::line_with(&stdout, key).map_err(|e| format!("{label}: {e}"))?;
        let rv: Option<QuicRecvSummary> =
            summaries::line_with(&stdout, "intact").map_err(|e| format!("{label}: {e}"))?;
        let (Some(sv), Some(rv)) = (sv, rv) else {
            return Err(format!(
                "{label}: the emulator's output lacks quic-bulk's summaries (see {})",
                dir.join("emu.out").display()
            ));
        };
        let bytes = summaries::check_delivery(&sv, &rv).map_err(|e| format!("{label}: {e}"))?;
        (bytes, sv.retransmit_fraction)
    } else {
        let sv: Option<TcpSendSummary> =
            summaries::line_with(&stdout, key).map_err(|e| format!("{label}: {e}"))?;
        (sv.map_or(0, |s| s.bytes), None)
    };
    let m = runner::measure::measure(&csv, 0.0, seconds as f64)?;
    Ok(Outcome {
        label,
        stack: p.stack.clone(),
        cc: p.cc_arg().into(),
        controller: controller_kind(&p.cc),
        bytes,
        goodput_bps: m.goodput_mbps * 1e6,
        srtt_median_ms: m.rtt_median_ms,
        retransmit_fraction: m.retransmitted_fraction().or(quic_retransmit),
        dir: dir.to_path_buf(),
        ..Outcome::default()
    })
}

/// The `quic` command.
pub fn run(o: &Options) -> Result<(), String> {
    let mut plans = plan(&o.stacks, &o.ccs)?;
    let interval_ms = link::units::parse_duration_ns(&o.interval)
        .map_err(|e| format!("--interval: {e}"))?
        / 1_000_000;
    if interval_ms == 0 {
        return Err(format!(
            "--interval {}: at least 1ms (the time series' step)",
            o.interval
        ));
    }
    if o.rounds == 0 || o.rounds > 20 {
        return Err(format!("--rounds {}: allowed 1 to 20", o.rounds));
    }
    let qb = crate::quic_bulk::locate(o.quic_bulk.as_deref())?;
    let (seconds, out, mode) = match &o.scenario {
        None => (
            o.seconds.unwrap_or(5),
            o.out.clone().unwrap_or_else(|| PathBuf::from("out/quic")),
            "loopback".to_string(),
        ),
        Some(sc) => {
            if !crate::host::is_root() {
                return Err(format!(
                    "--scenario {}: the runs go through `bbrlab emu`, which needs root (network \
                     namespaces and TUN devices); run as root, or drop --scenario for loopback",
                    sc.display()
                ));
            }
            let s = scenario::load(sc).map_err(|e| e.to_string())?;
            let secs = s
                .runs
                .first()
                .map_or(10, |r| (r.config.duration_ns / 1_000_000_000).max(1));
            if !o.no_kernel {
                for cc in ["bbr", "cubic"] {
                    plans.push(Plan {
                        stack: "kernel".into(),
                        cc: Controller::Kernel(cc.into()),
                    });
                }
            }
            (
                o.seconds.unwrap_or(secs),
                o.out
                    .clone()
                    .unwrap_or_else(|| PathBuf::from("out").join(format!("quic-{}", s.name))),
                format!("emulated path of {}", sc.display()),
            )
        }
    };
    if seconds == 0 || seconds > 3600 {
        return Err(format!("--seconds {seconds}: allowed 1 to 3600"));
    }
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let out = std::fs::canonicalize(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let total = plans.len() * o.rounds as usize;
    let started = Instant::now();
    let mut rows = Vec::new();
    for round in 0..o.rounds {
        // Rotate the order each round so no run always goes first.
        let mut order = plans.clone();
        order.rotate_left(round as usize % plans.len());
        for p in &order {
            let n = rows.len() + 1;
            let mut dir = out.join(p.dir_name());
            if o.rounds > 1 {
                dir = dir.join(format!("round-{}", round + 1));
            }
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            eprintln!(
                "quic: [{n}/{total}] {} over the {mode} for {seconds} s …",
                p.label()
            );
            let result = match &o.scenario {
                None => loopback_run(&qb, p, seconds, interval_ms, &dir),
                Some(sc) => emu_run(Some(&qb), sc, p, seconds, interval_ms, &dir),
            };
            let mut r = result.unwrap_or_else(|e| failed_run(p, &dir, seconds, e));
            r.round = round + 1;
            match &r.error {
                None => eprintln!(
                    "quic: [{n}/{total}] {}: {:.1} Mbit/s, {} bytes intact ({:.0} s elapsed)",
                    r.label,
                    r.goodput_bps / 1e6,
                    r.bytes,
                    started.elapsed().as_secs_f64()
                ),
                Some(e) => eprintln!(
                    "quic: [{n}/{total}] FAILED, going on with the next run: {e} ({:.0} s elapsed)",
                    started.elapsed().as_secs_f64()
                ),
            }
            rows.push(r);
        }
    }
    cpu_ratios(&mut rows);
    print!("{}", table(&rows, &mode, seconds));
    write_json(&out, &mode, seconds, &rows)?;
    println!(
        "wrote {} (quic.json; each run's flows.csv in its directory)",
        out.display()
    );
    let failed: Vec<&Outcome> = rows.iter().filter(|r| r.error.is_some()).collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} of {} runs failed (each is a row above and in quic.json, with its error): {}",
            failed.len(),
            rows.len(),
            failed
                .iter()
                .map(|r| format!("{} (round {})", r.label, r.round))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

/// A run that failed or was stopped, as a row: its error, and what its
/// `flows.csv` holds over `seconds` if it wrote one (a run stopped at its
/// deadline through the emulator still measured its first seconds).
fn failed_run(p: &Plan, dir: &Path, seconds: u64, error: String) -> Outcome {
    let label = p.label();
    // The run's errors name the run; the row already does.
    let error = match error.strip_prefix(&format!("{label}: ")) {
        Some(rest) => rest.to_string(),
        None => error,
    };
    let mut r = Outcome {
        label,
        stack: p.stack.clone(),
        cc: p.cc_arg().into(),
        controller: controller_kind(&p.cc),
        dir: dir.to_path_buf(),
        error: Some(error),
        ..Outcome::default()
    };
    if let Ok(m) = runner::measure::measure(&dir.join("flows.csv"), 0.0, seconds as f64) {
        r.goodput_bps = m.goodput_mbps * 1e6;
        r.srtt_median_ms = m.rtt_median_ms;
        r.retransmit_fraction = m.retransmitted_fraction();
    }
    r
}

fn opt(v: Option<f64>, p: usize) -> String {
    v.map_or("-".to_string(), |x| format!("{x:.p$}"))
}

/// What the figures are, printed above the table and written into
/// quic.json.
const STATISTICS: &[(&str, &str)] = &[
    ("goodput", "loopback: bytes the peer acknowledged / seconds from the end of the handshake to the last acknowledgement (quic-bulk's summary); emulated: payload delivered / seconds since the first data packet over the run, from flows.csv (compare's reader)"),
    ("srtt", "median of the smoothed RTT sampled every interval"),
    ("retx", "loopback: packets declared lost / packets sent (quic-bulk); emulated: retransmitted / data packets sent from flows.csv, else quic-bulk's figure"),
    ("cpu", "user + system CPU seconds of sender and receiver processes (wait4), per gigabit delivered; loopback only"),
    ("cpu_ratio", "CPU per gigabit over the same stack's own BBR (s2n: s2n:bbr2) in the same round"),
];

/// The table, one row per run.
pub fn table(rows: &[Outcome], mode: &str, seconds: u64) -> String {
    let mut s = format!("{mode}, {seconds} s per run\n");
    for (k, v) in STATISTICS {
        s += &format!("{k}: {v}\n");
    }
    s += &format!(
        "{:<5} {:<30} {:>13} {:>12} {:>12} {:>8} {:>9} {:>9} {:>10} {:>9}\n",
        "round",
        "run",
        "bytes",
        "goodput Mb/s",
        "srtt p50 ms",
        "retx %",
        "CPU snd s",
        "CPU rcv s",
        "CPU s/Gbit",
        "× own bbr"
    );
    for r in rows {
        s += &format!(
            "{:<5} {:<30} {:>13} {:>12.2} {:>12} {:>8} {:>9} {:>9} {:>10} {:>9}\n",
            r.round,
            r.label,
            r.bytes,
            r.goodput_bps / 1e6,
            opt(r.srtt_median_ms, 2),
            opt(r.retransmit_fraction.map(|f| f * 100.0), 3),
            opt(r.cpu_send_s, 2),
            opt(r.cpu_recv_s, 2),
            opt(r.cpu_s_per_gbit(), 3),
            opt(r.cpu_ratio, 2),
        );
    }
    for r in rows {
        if let Some(e) = &r.error {
            s += &format!("round {} {}: FAILED: {e}\n", r.round, r.label);
        }
    }
    s
}

fn write_json(out: &Path, mode: &str, seconds: u64, rows: &[Outcome]) -> Result<(), String> {
    let runs: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!({
                "label": r.label,
                "stack": r.stack,
                "cc": r.cc,
                "controller": r.controller,
                "round": r.round,
                "bytes": r.bytes,
                "goodput_mbps": r.goodput_bps / 1e6,
                "srtt_median_ms": r.srtt_median_ms,
                "retransmit_fraction": r.retransmit_fraction,
                "cpu_send_s": r.cpu_send_s,
                "cpu_recv_s": r.cpu_recv_s,
                "cpu_s_per_gbit": r.cpu_s_per_gbit(),
                "cpu_ratio_to_own_bbr": r.cpu_ratio,
                "dir": r.dir,
                "error": r.error,
            })
        })
        .collect();
    let stats: serde_json::Map<String, Value> = STATISTICS
        .iter()
        .map(|(k, v)| (k.to_string(), Value::from(*v)))
        .collect();
    let doc = json!({
        "mode": mode,
        "seconds_per_run": seconds,
        "statistics": stats,
        "runs": runs,
    });
    let path = out.join("quic.json");
    let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n";
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn plain_names_run_on_every_stack_and_own_names_on_theirs() {
        let p = plan(&v(&["s2n", "noq"]), &v(&["s2n:bbr2", "bbr", "noq:cubic"])).unwrap();
        let got: Vec<(String, String)> = p.iter().map(|p| (p.stack.clone(), p.label())).collect();
        assert_eq!(
            got,
            [
                ("s2n".into(), "s2n-quic bbr2 (own)".into()),
                ("s2n".into(), "s2n-quic + bbrlab bbr".into()),
                ("noq".into(), "noq + bbrlab bbr".into()),
                ("noq".into(), "noq cubic (own)".into()),
            ]
        );
        assert_eq!(p[0].cc_arg(), "s2n:bbr2");
        assert_eq!(p[0].dir_name(), "s2n-own-s2n-bbr2");
        assert_eq!(p[1].dir_name(), "s2n-bbrlab-bbr");
    }

    #[test]
    fn a_stacks_own_controller_needs_its_stack_and_bad_names_are_named() {
        let e = plan(&v(&["s2n"]), &v(&["quinn:bbr"])).unwrap_err();
        assert!(
            e.contains("quinn:bbr") && e.contains("does not include `quinn`"),
            "{e}"
        );
        let e = plan(&v(&["s2n"]), &v(&["bbr", "bbr"])).unwrap_err();
        assert!(e.contains("twice"), "{e}");
        let e = plan(&v(&["s2n"]), &v(&["bb r"])).unwrap_err();
        assert!(e.contains("bb r") && e.contains("bbr-jitter"), "{e}");
        assert!(plan(&v(&["s2n"]), &v(&["s2n:"])).is_err());
        assert!(plan(&v(&["s2n/x"]), &v(&["bbr"])).is_err());
        assert!(plan(&v(&[]), &v(&["bbr"])).is_err());
    }

    #[test]
    fn the_commands_carry_the_contracts_flags() {
        let c = QuicCommands {
            quic_bulk: Path::new("/t/quic-bulk"),
            stack: "s2n",
            cc: "bbr3",
            extra: " --bbr3-profile linux-v3 --ecn",
            server: "{server}:5201",
            cert: Path::new("/o/cert.pem"),
            seconds: 6,
            interval_ms: 10,
            log: Some(Path::new("/o/flows.csv")),
        };
        let (r, s) = c.shell();
        assert_eq!(
            r,
            "/t/quic-bulk recv --stack s2n --listen {server}:5201 --cert /o/cert.pem --timeout 30"
        );
        assert_eq!(
            s,
            "/t/quic-bulk send --stack s2n --to {server}:5201 --cert /o/cert.pem --cc bbr3 \
             --bbr3-profile linux-v3 --ecn --duration 6s --interval 10ms --log /o/flows.csv --timeout 30"
        );
    }

    fn row(stack: &str, cc: &str, controller: &'static str, round: u32, cpu: f64) -> Outcome {
        Outcome {
            stack: stack.into(),
            cc: cc.into(),
            controller,
            round,
            // 1 Gbit.
            bytes: 125_000_000,
            cpu_send_s: Some(cpu * 0.75),
            cpu_recv_s: Some(cpu * 0.25),
            ..Outcome::default()
        }
    }

    #[test]
    fn cpu_is_a_ratio_to_the_stacks_own_bbr_in_the_same_round() {
        let mut rows = vec![
            row("s2n", "s2n:bbr2", "own", 1, 2.0),
            row("s2n", "bbr", "adapter", 1, 2.2),
            row("s2n", "s2n:cubic", "own", 1, 1.0),
            row("s2n", "bbr", "adapter", 2, 3.0),
            row("s2n", "s2n:bbr2", "own", 2, 4.0),
            row("noq", "bbr", "adapter", 1, 1.0),
        ];
        cpu_ratios(&mut rows);
        assert_eq!(rows[1].cpu_s_per_gbit(), Some(2.2));
        let r: Vec<Option<f64>> = rows
            .iter()
            .map(|r| r.cpu_ratio.map(|x| (x * 1000.0).round() / 1000.0))
            .collect();
        // noq has no own-BBR run: no ratio rather than one against s2n.
        assert_eq!(
            r,
            [Some(1.0), Some(1.1), Some(0.5), Some(0.75), Some(1.0), None]
        );
        // No CPU figures (emulated runs): no ratio either.
        let mut e = vec![Outcome {
            cpu_send_s: None,
            ..row("s2n", "s2n:bbr2", "own", 1, 1.0)
        }];
        cpu_ratios(&mut e);
        assert_eq!((e[0].cpu_s_per_gbit(), e[0].cpu_ratio), (None, None));
    }

    #[test]
    fn the_table_has_a_row_per_run_with_the_ratio() {
        let mut rows = vec![
            Outcome {
                label: "s2n-quic bbr2 (own)".into(),
                goodput_bps: 2e9,
                srtt_median_ms: Some(0.5),
                retransmit_fraction: Some(0.001),
                ..row("s2n", "s2n:bbr2", "own", 1, 2.0)
            },
            Outcome {
                label: "s2n-quic + bbrlab bbr".into(),
                ..row("s2n", "bbr", "adapter", 1, 2.1)
            },
        ];
        cpu_ratios(&mut rows);
        let t = table(&rows, "loopback", 5);
        let lines: Vec<&str> = t.lines().filter(|l| l.starts_with("1 ")).collect();
        assert_eq!(lines.len(), 2, "{t}");
        assert!(
            lines[0].contains("2000.00") && lines[0].contains("0.100"),
            "{t}"
        );
        assert!(lines[1].trim_end().ends_with("1.05"), "{t}");
    }

    /// A run that fails is a row with its reason and what its flows.csv
    /// measured; it gets no CPU ratio, serves as no reference, and the
    /// table says why it failed under the rows.
    #[test]
    fn a_failed_run_is_a_row_with_its_error_and_what_it_measured() {
        let dir = tempfile::tempdir().unwrap();
        runner::measure::sample_flows_csv(
            dir.path(),
            &[(1.0, 250_000, 40.0, 200, 0), (2.0, 500_000, 42.0, 400, 4)],
        )
        .unwrap();
        let p = Plan {
            stack: "s2n".into(),
            cc: Controller::Own("s2n:bbr2".into()),
        };
        let failed = failed_run(
            &p,
            dir.path(),
            2,
            "quic-bulk send did not finish in time".into(),
        );
        assert_eq!(failed.label, "s2n-quic bbr2 (own)");
        assert!(
            (failed.goodput_bps - 2e6).abs() < 1.0,
            "{}",
            failed.goodput_bps
        );
        assert_eq!(failed.retransmit_fraction, Some(0.01));
        let nothing = failed_run(&p, &dir.path().join("absent"), 2, "no handshake".into());
        assert_eq!((nothing.goodput_bps, nothing.srtt_median_ms), (0.0, None));

        let mut rows = vec![
            Outcome {
                cpu_send_s: Some(1.0),
                cpu_recv_s: Some(1.0),
                bytes: 1_000_000_000,
                round: 1,
                ..failed
            },
            Outcome {
                label: "s2n-quic + bbrlab bbr".into(),
                ..row("s2n", "bbr", "adapter", 1, 2.0)
            },
        ];
        cpu_ratios(&mut rows);
        assert_eq!((rows[0].cpu_ratio, rows[1].cpu_ratio), (None, None));
        let t = table(&rows, "loopback", 2);
        assert!(
            t.contains(
                "round 1 s2n-quic bbr2 (own): FAILED: quic-bulk send did not finish in time"
            ),
            "{t}"
        );
        assert_eq!(t.lines().filter(|l| l.starts_with("1 ")).count(), 2, "{t}");
    }
}
