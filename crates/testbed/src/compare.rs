//! `bbrlab compare`: one single-flow scenario three ways — the simulator,
//! bbrlab's UDP transport through the emulator, and kernel TCP through the
//! emulator — overlaid on the same axes, with a table of the headline
//! figures. All three write the shared time-series schema
//! (`sender::schema`, counters included), so one reader serves them and
//! every figure is the same statistic on every source:
//!
//! - **goodput**: payload bytes delivered (headers never count) divided by
//!   the time since the first data packet, over a common window;
//! - **RTT**: the smoothed RTT (srtt, RFC 6298's 1/8 gain) sampled every
//!   interval — the only RTT the kernel exposes (`tcpi_rtt`), so the
//!   simulator and the UDP transport report their controller's srtt too;
//! - **retransmissions**: retransmitted data packets as a share of data
//!   packets sent (the kernel's `tcpi_total_retrans / tcpi_data_segs_out`);
//! - **time origin**: the first data packet (the simulator's flow start,
//!   the end of the UDP handshake, the kernel probe's first write);
//! - **packet size**: each real source gets its own simulator run with that
//!   source's payload and header bytes per packet, so the simulated link
//!   carries the same bytes per byte of goodput.

use crate::compare_report::{CompareReport, FailedSource, SourceRow, Statistics};
use crate::emu::{emu_stats, run_emu_with};
use crate::packet_size::{kernel_packet_size, s2n_packet_size, udp_packet_size, PacketSize};
use crate::summaries::{self, SenderSummary};
use figures::{self as plots, Figure, Series};
use runner::measure::{measure, Measured};
use std::path::{Path, PathBuf};

/// Which real sources to add to the simulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Kernel TCP through the emulator (`bbrlab tcp`).
    Kernel,
    /// bbrlab's UDP transport through the emulator (`bbrlab send`).
    Udp,
    /// s2n-quic with the scenario's algorithm through bbrlab's adapter,
    /// through the emulator (`quic-bulk --stack s2n`).
    S2n,
}

/// Parses `--with kernel,udp,s2n`; `--with none` runs the simulator alone
/// (no root needed), as the scenario describes its packets.
pub fn parse_sources(list: &[String]) -> Result<Vec<Source>, String> {
    if list.len() == 1 && list[0].trim() == "none" {
        return Ok(Vec::new());
    }
    list.iter()
        .map(|s| match s.trim() {
            "kernel" => Ok(Source::Kernel),
            "udp" => Ok(Source::Udp),
            "s2n" | "quic-s2n" => Ok(Source::S2n),
            other => Err(format!(
                "--with {other}: allowed `kernel`, `udp` and `s2n`, or `none` alone"
            )),
        })
        .collect()
}

/// How each figure is measured, printed above the table and written to
/// compare.json, so a reader knows the rows are alike.
const GOODPUT_IS: &str =
    "payload bytes delivered / seconds since the first data packet, over the common window";
const RTT_IS: &str = "smoothed RTT (srtt, RFC 6298 gain 1/8) sampled every interval: the kernel's tcpi_rtt, the simulator's and UDP transport's controller estimator and s2n-quic's (which, per RFC 9002, subtract the ACK delay the receiver reports; Linux's does not)";
const RECOVERIES_IS: &str = "over the whole run: loss recoveries begun and reductions undone (simulator: loss_episodes, undos; kernel TCP: its sender namespace's TCPSackRecovery + TCPTimeouts and the four undo counters; the UDP transport and s2n-quic: not counted), and the share of segments reaching kernel TCP's receiver that it discarded by PAWS (PAWSEstab / InSegs; the simulated receiver's, paws_discards / segments_received, when its flow keeps timestamps)";
const RETX_IS: &str = "retransmitted data packets / data packets sent (kernel: tcpi_total_retrans / tcpi_data_segs_out)";
const ORIGIN_IS: &str = "the first data packet: the simulator's flow start, the end of the UDP transport's or QUIC handshake, the kernel probe's first write after connect()";

/// The kernel congestion control that runs what the simulator runs for
/// a flow with `cc`: the kernel's own `bbr`, `cubic` and `reno`, and for
/// `bbr3` bbrlab's BPF control `bbrlab_bbr3`, which implements the
/// linux-v3 profile with the signals a stock kernel gives
/// (`[flow.bbr3] profile = "linux-v3"`, `signals = "stock-kernel"`), so
/// only a flow set up that way has it as its counterpart. `Err` says why
/// there is none.
pub fn kernel_counterpart(cc: &congestion::Config) -> Result<String, String> {
    use congestion::{Algorithm, Bbr3Profile, Bbr3Signals};
    let alg = cc.algorithm.name();
    match cc.algorithm {
        Algorithm::Bbr | Algorithm::Cubic | Algorithm::Reno => Ok(cc.algorithm.kernel_name().into()),
        Algorithm::Bbr3
            if cc.bbr3.profile() == Bbr3Profile::LinuxV3
                && cc.bbr3.signals == Bbr3Signals::StockKernel =>
        {
            Ok(Algorithm::Bbr3.kernel_name().into())
        }
        Algorithm::Bbr3 => Err(format!(
            "the kernel's counterpart of bbr3, {}, runs [flow.bbr3] profile = \"linux-v3\" with signals = \"stock-kernel\"; this flow has profile = \"{}\", signals = \"{}\"",
            Algorithm::Bbr3.kernel_name(), cc.bbr3.profile(), cc.bbr3.signals
        )),
        _ => Err(format!("the kernel has no `{alg}`")),
    }
}

/// What differs, on purpose, between the simulated flow `cc` and its
/// kernel counterpart although it has one, for the user to hear before
/// reading the comparison: kernel `cubic` leaves slow start by Linux's
/// HyStart and grows by Linux's congestion-avoidance rules, a scenario's
/// `cubic` by RFC 9406's HyStart++ and RFC 9438's rules unless it says
/// otherwise (`bbrlab validate` always says so).
pub fn counterpart_note(cc: &congestion::Config) -> Option<String> {
    use congestion::{Algorithm, CubicAvoidance, HyStartVariant};
    if cc.algorithm != Algorithm::Cubic {
        return None;
    }
    let mut differ = Vec::new();
    if cc.cubic.hystart && cc.cubic.hystart_variant == HyStartVariant::Rfc9406 {
        differ.push((
            "leaves slow start by HyStart++ (RFC 9406), kernel cubic by Linux's HyStart",
            "hystart_variant = \"linux\"",
        ));
    }
    if cc.cubic.avoidance == CubicAvoidance::Rfc9438 {
        differ.push((
            "grows by RFC 9438's rules (α = 1 past the last window, the curve one srtt ahead), \
             kernel cubic by Linux's",
            "avoidance = \"linux\"",
        ));
    }
    (!differ.is_empty()).then(|| {
        let what: Vec<&str> = differ.iter().map(|d| d.0).collect();
        let keys: Vec<&str> = differ.iter().map(|d| d.1).collect();
        format!(
            "the simulated cubic {}; add [flow.cubic] {} to compare like with like",
            what.join("; it "),
            keys.join(" and ")
        )
    })
}

/// The sysctl by which kernel TCP negotiates ECN.
const TCP_ECN_SYSCTL: &str = "/proc/sys/net/ipv4/tcp_ecn";

/// The emulator's options kernel TCP's run needs for a flow that is
/// (`ecn`) or is not ECN-capable: `--tcp-ecn` with ECN (the UDP transport
/// and QUIC stacks set their codepoints themselves, so only the kernel's
/// run takes it). `Err` when this kernel cannot negotiate ECN at all (no
/// `sysctl`, the file [`TCP_ECN_SYSCTL`]).
fn kernel_ecn_args(ecn: bool, sysctl: &Path) -> Result<Vec<String>, String> {
    if !ecn {
        return Ok(Vec::new());
    }
    if !sysctl.exists() {
        return Err(format!(
            "the flow is ECN-capable (`ecn` in the scenario), but this kernel has no {}, so \
             kernel TCP cannot negotiate ECN; compare without the kernel (--with udp) or \
             without ECN",
            sysctl.display()
        ));
    }
    Ok(vec!["--tcp-ecn".into()])
}

/// One row of the table.
struct Row {
    label: String,
    kind: &'static str,
    matched_to: Option<String>,
    size: Option<PacketSize>,
    m: Measured,
    rtos: Option<u64>,
    /// The kernel probe's host-limit figures (busy, rwnd- and
    /// sndbuf-limited seconds, their share, delivery rate).
    host: Option<serde_json::Value>,
    /// The emulator's own figures for the run (`bbrlab emu --stats`):
    /// how long its forwarder could not run while packets fell due.
    emulator: Option<serde_json::Value>,
    /// The share of the flow's packets the bottleneck marked CE (an
    /// ECN-marking queue; `None` without marks to count).
    ce_marked: Option<f64>,
    /// Loss recoveries begun and reductions undone over the whole run,
    /// where the source counts them.
    recoveries: Option<(u64, u64)>,
    /// The share of arriving segments kernel TCP's receiver discarded by
    /// PAWS.
    paws_discarded: Option<f64>,
}

/// What one simulated run gave [`Row::simulated`].
struct Simulated {
    m: Measured,
    rtos: u64,
    /// The share of the flow's data packets the bottleneck marked CE.
    ce_marked: Option<f64>,
    /// The flow's `loss_episodes` and `undos`.
    recoveries: (u64, u64),
    /// The share of arriving segments its receiver discarded by PAWS,
    /// when the flow keeps TCP timestamps.
    paws_discarded: Option<f64>,
}

/// The share of the data direction's packets an emulator run's bottleneck
/// marked CE, from its own figures (`marked_ce_packets` and
/// `forwarded_packets`, the forward direction first); `None` when it
/// marked none or did not say.
fn emulator_ce_marked(emulator: Option<&serde_json::Value>) -> Option<f64> {
    let e = emulator?;
    let marked = e.get("marked_ce_packets")?.get(0)?.as_u64()?;
    let forwarded = e.get("forwarded_packets")?.get(0)?.as_u64()?;
    (marked > 0 && forwarded > 0).then(|| marked as f64 / forwarded as f64)
}

impl Row {
    /// A simulator row: `matched_to` the real source's label, if any.
    fn simulated(
        label: String,
        matched_to: Option<String>,
        size: Option<PacketSize>,
        sim: Simulated,
    ) -> Row {
        Row {
            label,
            kind: "simulator",
            matched_to,
            size,
            m: sim.m,
            rtos: Some(sim.rtos),
            host: None,
            emulator: None,
            ce_marked: sim.ce_marked,
            recoveries: Some(sim.recoveries),
            paws_discarded: sim.paws_discarded,
        }
    }

    /// The row as compare.json writes it.
    fn source_row(&self) -> SourceRow {
        SourceRow {
            source: self.label.clone(),
            kind: self.kind.into(),
            matched_to: self.matched_to.clone(),
            payload_bytes_per_packet: self.size.map(|s| s.payload),
            header_bytes_per_packet: self.size.map(|s| s.header),
            goodput_mbps: Some(self.m.goodput_mbps),
            srtt_median_ms: self.m.rtt_median_ms,
            srtt_p95_ms: self.m.rtt_p95_ms,
            data_packets_sent: self.m.data_packets,
            retransmitted_packets: self.m.retransmitted,
            retransmitted_fraction: self.m.retransmitted_fraction(),
            rtos: self.rtos,
            bw_estimate_mbps: self.m.bw_mbps,
            min_rtt_ms: self.m.min_rtt_ms,
            host: self.host.clone(),
            emulator: self.emulator.clone(),
            ce_marked_fraction: self.ce_marked,
            loss_episodes: self.recoveries.map(|r| r.0),
            undos: self.recoveries.map(|r| r.1),
            paws_discarded_fraction: self.paws_discarded,
        }
    }
}

/// The packet the scenario's flow sends when no real source sets one.
fn own_size(run: &scenario::Run) -> PacketSize {
    let f = &run.config.flows[0];
    PacketSize {
        payload: f.cc.mss_bytes,
        header: f.header_bytes,
    }
}

pub use claims::validate::LINUX_INITIAL_BURST;

/// How much longer the simulation matched to kernel TCP runs than the
/// scenario says, ms ([`matched_run`]).
const HANDSHAKE_MARGIN_MS: u64 = 4_000;

/// The scenario's run with the simulated flow given `size` (when given)
/// and, for kernel TCP (`tcp_handshake`), the receiver `kernel_ack`
/// (validate's `--sim-ack`, a scenario's `ack` name) when given, else the
/// scenario's (Linux's by default), and TCP's SYN exchange: the kernel's BBR
/// takes min_rtt and its first pacing rate from it, and its data starts
/// after it (`handshake = "tcp"`); and its unpaced first ten segments
/// (`initial_burst = 10`). For the UDP transport and s2n-quic, which pace
/// and acknowledge with their own rules, of which Linux's (a TCP-like
/// flow's defaults) are no model, the flow paces one packet at a time and
/// its receiver sends an ACK per packet, as they were matched before
/// Linux's became the defaults, unless the scenario names its own
/// (`kernel_ack` is ignored). Made by
/// editing the scenario's text and parsing it again: the `scenario.toml`
/// written beside the results is then the scenario that ran, and `bbrlab
/// sim` on it gives the same bytes. (A path in it that is relative, such
/// as a trace or a CDF file, resolves against the scenario's own
/// directory, as it did for the run: copy the file back there, or make the
/// path absolute, to run it elsewhere.)
fn matched_run(
    scenario: &Path,
    run: &scenario::Run,
    size: Option<PacketSize>,
    kernel_ack: Option<&str>,
    tcp_handshake: bool,
    rcv_rule: &str,
) -> Result<scenario::Run, String> {
    use scenario::edit::{has_key, set_keys, Table};
    let mut keys = Vec::new();
    let mut ack = None;
    if tcp_handshake {
        ack = kernel_ack;
        keys.push((
            Table::Flow(0),
            "handshake",
            scenario::edit::Value::String("tcp".into()),
        ));
        // Linux paces a connection only from its tenth data segment on.
        keys.push((
            Table::Flow(0),
            "initial_burst",
            scenario::edit::Value::Integer(LINUX_INITIAL_BURST.into()),
        ));
        // And waits for the ACK that lets a whole TSO packet out
        // (`tcp_tso_should_defer()`), where the flow sends TSO packets.
        let f = &run.config.flows[0];
        if f.pacing != netsim::Pacing::Exact
            && f.timeout == netsim::Timeout::Rto
            && !has_key(&run.text, Table::Flow(0), "tso_defer")?
        {
            keys.push((
                Table::Flow(0),
                "tso_defer",
                scenario::edit::Value::Boolean(true),
            ));
        }
        // Linux's receiver grows its window by the rule of the kernel the
        // real run was made on (`rcv_rule`), unless the scenario names one.
        let linux_receiver = match ack {
            Some(a) => a == "linux",
            None => matches!(f.ack, netsim::AckPolicy::Linux { .. }),
        };
        if linux_receiver && !has_key(&run.text, Table::Flow(0), "rcv_autotuning")? {
            keys.push((
                Table::Flow(0),
                "rcv_autotuning",
                scenario::edit::Value::String(rcv_rule.into()),
            ));
        }
        // Measured from the SYN-ACK, as the kernel's log is from the
        // connection: the run goes on past its duration by the longest
        // handshake it may take (a SYN lost twice: 1 + 2 s, and the round
        // trip), so the window it is measured over is whole.
        let ms = run.config.duration_ns.div_ceil(1_000_000) + HANDSHAKE_MARGIN_MS;
        keys.push((
            Table::Top,
            "duration",
            scenario::edit::Value::String(format!("{ms}ms")),
        ));
    } else {
        // The UDP transport and s2n-quic: their own pacers and receivers,
        // unless the scenario names one.
        if !has_key(&run.text, Table::Flow(0), "pacing")? {
            keys.push((
                Table::Flow(0),
                "pacing",
                scenario::edit::Value::String("exact".into()),
            ));
        }
        if !has_key(&run.text, Table::Flow(0), "ack")? {
            ack = Some("every");
        }
        // Neither sends TCP's timestamp option: a scenario whose flow
        // keeps timestamps keeps them for kernel TCP's match alone.
        if run.config.flows[0].timestamps {
            keys.push((
                Table::Flow(0),
                "timestamps",
                scenario::edit::Value::Boolean(false),
            ));
        }
    }
    if let Some(s) = size {
        keys.push((
            Table::Flow(0),
            "mss",
            scenario::edit::Value::Integer(s.payload as i64),
        ));
        keys.push((
            Table::Flow(0),
            "header_bytes",
            scenario::edit::Value::Integer(s.header as i64),
        ));
    }
    if let Some(a) = ack {
        keys.push((
            Table::Flow(0),
            "ack",
            scenario::edit::Value::String(a.into()),
        ));
    }
    if keys.is_empty() {
        return Ok(run.clone());
    }
    reparse(scenario, &set_keys(&run.text, &keys)?)
}

/// The one run of `text`, the scenario `scenario` after an edit (its
/// relative paths resolve as the file's did).
fn reparse(scenario: &Path, text: &str) -> Result<scenario::Run, String> {
    let file = scenario.display().to_string();
    let base = scenario.parent().unwrap_or(Path::new("."));
    let sc = scenario::parse(text, &file, base, scenario).map_err(|e| e.to_string())?;
    sc.runs
        .into_iter()
        .next()
        .ok_or_else(|| format!("{file}: the edited scenario has no run"))
}

/// Runs `run` in the simulator in `dir`. Its figures start where the
/// flow's data does: at its start, or when its handshake ended, as the
/// real senders' logs start once connected.
fn simulate(
    name: &str,
    run: &scenario::Run,
    dir: &Path,
    window_s: f64,
) -> Result<Simulated, String> {
    let summary = runner::sweep::run_one(name, run, dir)?;
    let origin_s = summary
        .flows
        .first()
        .and_then(|f| f.handshake)
        .map_or(run.config.flows[0].start_ns as f64 / 1e9, |h| h.opened_s);
    let m = measure(&dir.join("flows.csv"), origin_s, window_s)?;
    // Over the whole run, as the emulator counts its marks.
    let marked = summary
        .links
        .iter()
        .find(|l| l.direction == "forward")
        .map_or(0, |l| l.ce_marked);
    let sent = summary.flows.first().map_or(0, |f| f.packets_sent);
    Ok(Simulated {
        m,
        rtos: summary.flows.first().map_or(0, |f| f.rtos),
        ce_marked: (marked > 0 && sent > 0).then(|| marked as f64 / sent as f64),
        recoveries: summary
            .flows
            .first()
            .map_or((0, 0), |f| (f.loss_episodes, f.undos)),
        paws_discarded: summary
            .flows
            .first()
            .and_then(|f| f.timestamps.as_ref())
            .filter(|t| t.segments_received > 0)
            .map(|t| t.paws_discards as f64 / t.segments_received as f64),
    })
}

/// The `compare` command. `quic_bulk`: the program for [`Source::S2n`]
/// (default: next to this binary). A real run that fails does not stop
/// the others; the command then ends with an error that names each
/// failure, after writing the table and compare.json.
pub fn run(
    scenario: &Path,
    with: &[Source],
    out: Option<PathBuf>,
    quic_bulk: Option<&Path>,
    seed: Option<u64>,
) -> Result<(), String> {
    let failed = run_with(scenario, with, out, quic_bulk, None, seed)?;
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} of {} real runs failed (compare.json's `failed` keeps why): {}",
            failed.len(),
            with.len(),
            failed.join("; ")
        ))
    }
}

/// The emulator's options for a run of `source`: the kernel's ECN
/// switch (`kernel`) for kernel TCP, and the chosen seed for every
/// source, so that the emulator's loss and jitter follow it as the
/// simulation's do (`emu --seed` takes the place of the scenario's).
fn emu_args(source: Source, kernel: &[String], seed: Option<u64>) -> Vec<String> {
    let mut args = match source {
        Source::Kernel => kernel.to_vec(),
        _ => Vec::new(),
    };
    if let Some(n) = seed {
        args.extend(["--seed".to_string(), n.to_string()]);
    }
    args
}

/// Where a comparison is written unless `--out` says: `out/compare-NAME`,
/// and `out/compare-NAME-seedN` for a chosen seed, so runs of one path
/// over several seeds do not overwrite each other.
fn default_out(name: &str, seed: Option<u64>) -> PathBuf {
    let dir = match seed {
        Some(n) => format!("compare-{name}-seed{n}"),
        None => format!("compare-{name}"),
    };
    PathBuf::from("out").join(dir)
}

/// The scenario's one run, which compare needs to have one flow of
/// bbrlab's own algorithms and no sweep, with a 10 ms sample interval
/// unless it sets one and with `seed` in place of its own when given;
/// and the scenario's name.
fn single_flow_run(scenario: &Path, seed: Option<u64>) -> Result<(String, scenario::Run), String> {
    let sc = scenario::load(scenario).map_err(|e| e.to_string())?;
    let flows = sc.runs.first().map_or(0, |r| r.config.flows.len());
    if sc.runs.len() != 1 || flows != 1 {
        return Err(format!(
            "{}: compare needs a scenario with one flow and no sweep ({} runs, {flows} flows)",
            scenario.display(),
            sc.runs.len(),
        ));
    }
    // A QUIC stack's own controller (`s2n:bbr2`, …) runs only in the
    // simulator: kernel TCP and the UDP transport have no such algorithm.
    if let Some(custom) = &sc.runs[0].config.flows[0].custom_cc {
        return Err(format!(
            "{}: compare runs the flow's algorithm in kernel TCP and the UDP transport too; `{}` is a QUIC stack's controller and runs only in the simulator (`bbrlab sim`, `bbrlab stacks`)",
            scenario.display(),
            custom.name
        ));
    }
    // Kernel TCP takes its segment size from the path's MTU and the UDP
    // transport keeps one: neither can be told to change it at a time.
    if sc.runs[0].config.flows[0].mss_change.is_some() {
        return Err(format!(
            "{}: `mss_change` runs only in the simulator (`bbrlab sim`); kernel TCP and the UDP transport keep one segment size",
            scenario.display()
        ));
    }
    let run = sc.runs[0].clone();
    let mut keys = Vec::new();
    if run.config.sample_interval_ns == 0 {
        keys.push((
            scenario::edit::Table::Top,
            "sample_interval",
            scenario::edit::Value::String("10ms".into()),
        ));
    }
    if let Some(n) = seed {
        let n = i64::try_from(n).map_err(|_| {
            format!(
                "--seed {n}: a seed is at most {} (TOML's largest integer)",
                i64::MAX
            )
        })?;
        keys.push((
            scenario::edit::Table::Top,
            "seed",
            scenario::edit::Value::Integer(n),
        ));
    }
    if keys.is_empty() {
        return Ok((sc.name, run));
    }
    let text = scenario::edit::set_keys(&run.text, &keys)?;
    Ok((sc.name, reparse(scenario, &text)?))
}

/// [`run`], the simulation matched to kernel TCP run with `kernel_ack`
/// for its receiver when given (validate's `--sim-ack`): the kernel's
/// receiver is Linux's, the UDP transport's and s2n-quic's are not, so
/// the scenario's own `ack` stays for theirs. `seed`, when given, takes
/// the place of the scenario's in the simulations and the emulator (its
/// random loss and jitter), so one path can be compared over several
/// seeds. Returns each failed real run as "source: why" (compare.json's
/// `failed` has them too).
pub fn run_with(
    scenario: &Path,
    with: &[Source],
    out: Option<PathBuf>,
    quic_bulk: Option<&Path>,
    kernel_ack: Option<&str>,
    seed: Option<u64>,
) -> Result<Vec<String>, String> {
    let (sc_name, run) = single_flow_run(scenario, seed)?;
    let out = out.unwrap_or_else(|| default_out(&sc_name, seed));
    let interval_ms = (run.config.sample_interval_ns / 1_000_000).max(1);
    let alg = run.config.flows[0].cc.algorithm.name().to_string();
    // The UDP sender runs the flow as the simulator does: bbr3 with the
    // flow's profile, and ECN-capable when the flow is (`bbrlab send`
    // sends ECT(0) for `ecn = "ect1"` too; a classic marking queue treats
    // both alike).
    let flow0 = &run.config.flows[0];
    let mut udp_extra = String::new();
    if flow0.cc.algorithm == congestion::Algorithm::Bbr3 {
        udp_extra += &format!(" --bbr3-profile {}", flow0.cc.bbr3.profile());
    }
    if flow0.ecn.is_ect() {
        udp_extra += " --ecn";
    }
    let secs = (run.config.duration_ns / 1_000_000_000).max(1);
    // The common window: as long as the simulated flow runs and no longer
    // than the real transfers, which send for `secs`.
    let sim_span = run
        .config
        .duration_ns
        .saturating_sub(run.config.flows[0].start_ns) as f64
        / 1e9;
    let window_s = sim_span.min(secs as f64);
    let quic_bulk = if with.contains(&Source::S2n) {
        Some(crate::quic_bulk::locate(quic_bulk)?)
    } else {
        None
    };
    // The kernel's counterpart of the flow's algorithm; a BPF control of
    // ours must be registered before the run (`bbrlab kernel load`).
    let kernel_alg = kernel_counterpart(&run.config.flows[0].cc);
    if let (Ok(k), true) = (&kernel_alg, with.contains(&Source::Kernel)) {
        crate::host::check_offered(&[k], &crate::host::available_congestion_controls())?;
        if let Some(note) = counterpart_note(&run.config.flows[0].cc) {
            eprintln!("compare: note: {note}");
        }
    }
    // Kernel TCP negotiates ECN only where the namespaces allow it
    // (`net.ipv4.tcp_ecn = 1`): an ECN-capable flow's kernel run gets the
    // emulator's `--tcp-ecn`, or a marking queue would drop its Not-ECT
    // packets where the simulated flow's are marked.
    let kernel_emu_args = if with.contains(&Source::Kernel) {
        kernel_ecn_args(flow0.ecn.is_ect(), Path::new(TCP_ECN_SYSCTL))?
    } else {
        Vec::new()
    };
    let exe_path = std::env::current_exe().map_err(|e| e.to_string())?;
    let exe = exe_path.display();
    let mut rows = Vec::new();
    let mut real = Vec::new();
    let mut failed = Vec::new();
    for s in with {
        let (name, label) = match s {
            Source::Kernel => {
                if let Err(why) = &kernel_alg {
                    eprintln!("compare: {why}; skipping the kernel run");
                    continue;
                }
                ("kernel", "kernel TCP")
            }
            Source::Udp => ("udp", "UDP transport"),
            Source::S2n => ("s2n", "s2n-quic + bbrlab"),
        };
        let dir = out.join(name);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let dir = std::fs::canonicalize(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let csv = dir.join("flows.csv");
        // The receiver's and sender's commands, and the key of the
        // sender's JSON summary among the emulator's output.
        let (server, client, key) = match s {
            Source::Kernel => (
                format!("{exe} tcp recv --listen {{server}}:5201"),
                format!(
                    "{exe} tcp send --to {{server}}:5201 --cc {} --duration {secs}s --interval {interval_ms}ms --log {}",
                    kernel_alg.as_deref().unwrap_or(&alg),
                    csv.display()
                ),
                "pmtu",
            ),
            Source::Udp => (
                format!("{exe} recv --listen {{server}}:5201"),
                format!(
                    "{exe} send --quiet --to {{server}}:5201 --cc {alg}{udp_extra} --duration {secs}s --interval {interval_ms}ms --log {}",
                    csv.display()
                ),
                "datagrams_per_syscall",
            ),
            Source::S2n => {
                let cert = dir.join("cert.pem");
                let _ = std::fs::remove_file(&cert);
                let (r, s) = crate::quic_bulk::QuicCommands {
                    quic_bulk: quic_bulk.as_deref().expect("located above"),
                    stack: "s2n",
                    cc: &alg,
                    extra: &udp_extra,
                    server: "{server}:5201",
                    cert: &cert,
                    seconds: secs,
                    interval_ms,
                    log: Some(&csv),
                }
                .shell();
                (r, s, "quic_stack")
            }
        };
        let run_alg = match s {
            Source::Kernel => kernel_alg.as_deref().unwrap_or(&alg),
            _ => &alg,
        };
        eprintln!("compare: {label} ({run_alg}) through the emulator for {secs} s …");
        let emu_extra = emu_args(*s, &kernel_emu_args, seed);
        let stdout = match run_emu_with(
            &exe_path,
            scenario,
            (&server, &client),
            secs + 60,
            &dir,
            &emu_extra,
        ) {
            Ok(o) => o,
            // A run that fails is a finding about that source (written
            // into compare.json's `failed`, so validate reports it), not a
            // reason to lose the other sources' rows.
            Err(e) => {
                eprintln!(
                    "compare: FAILED: the {label} ({run_alg}) run: {e}; going on without its row"
                );
                failed.push(FailedSource {
                    kind: name.into(),
                    source: format!("{label} ({run_alg})"),
                    error: e,
                });
                continue;
            }
        };
        let read = match s {
            Source::Kernel => summaries::line_with(&stdout, key).map(|o| o.map(SenderSummary::Tcp)),
            Source::Udp => summaries::line_with(&stdout, key).map(|o| o.map(SenderSummary::Udp)),
            Source::S2n => summaries::line_with(&stdout, key).map(|o| o.map(SenderSummary::Quic)),
        };
        let summary = match read {
            Ok(Some(v)) => Some(v),
            Ok(None) => {
                eprintln!("compare: no summary from the {label} sender; its RTO count is missing");
                None
            }
            Err(e) => {
                eprintln!("compare: the {label} sender's summary: {e}; its RTO count is missing");
                None
            }
        };
        if *s == Source::Kernel {
            // For a later `--resimulate` (on another kernel, perhaps). A
            // file that cannot be written costs only that: the rows are
            // measured, and a resimulation without it takes the running
            // kernel's rule and says so, so the run goes on.
            if let Err(e) = crate::kernel_release::record(&out) {
                eprintln!(
                    "compare: warning: {e}; a later --resimulate of these runs will take its own kernel's receive-buffer rule"
                );
            }
        }
        let emulator = emu_stats(&dir);
        // Kernel TCP's receiver: what share of the segments reaching it
        // Linux discarded by PAWS (`tcp recv`'s namespace counters).
        let paws = match s {
            Source::Kernel => {
                summaries::tcp_receiver_counters(&stdout).and_then(|c| c.paws_discarded_fraction())
            }
            _ => None,
        };
        real.push((*s, name, label, csv, summary, emulator, paws));
    }
    for (s, name, label, csv, summary, emulator, paws) in &real {
        let size = match s {
            Source::Kernel => kernel_packet_size(summary.as_ref().and_then(SenderSummary::tcp)),
            Source::Udp => udp_packet_size(),
            Source::S2n => s2n_packet_size(summary.as_ref().and_then(SenderSummary::quic)),
        };
        // The kernel row names the kernel's control (`bbrlab_bbr3` for
        // the simulator's bbr3 in its stock-kernel form).
        let real_alg = match s {
            Source::Kernel => kernel_alg.as_deref().unwrap_or(&alg),
            _ => &alg,
        };
        let real_label = format!("{label} ({real_alg})");
        // A real run whose log cannot be measured (a sender that died
        // before writing a sample) is a failed run like one whose program
        // failed: recorded with why, and the other sources go on.
        let real_m = match measure(csv, 0.0, window_s) {
            Ok(m) => m,
            Err(e) => {
                eprintln!(
                    "compare: FAILED: the {real_label} run's log: {e}; going on without its row"
                );
                failed.push(FailedSource {
                    kind: (*name).into(),
                    source: real_label,
                    error: format!("its log: {e}"),
                });
                continue;
            }
        };
        let matched = matched_run(
            scenario,
            &run,
            Some(size),
            kernel_ack,
            *s == Source::Kernel,
            claims::validate::linux_rcv_autotuning(),
        )?;
        let sim = simulate(
            &sc_name,
            &matched,
            &out.join(format!("sim-{name}")),
            window_s,
        )?;
        rows.push(Row::simulated(
            format!("simulator as {name} ({alg})"),
            Some(real_label.clone()),
            Some(size),
            sim,
        ));
        let sum = summary.as_ref();
        let host = sum.and_then(SenderSummary::tcp).map(|t| {
            serde_json::json!({
                "busy_s": t.busy_s,
                "rwnd_limited_s": t.rwnd_limited_s,
                "sndbuf_limited_s": t.sndbuf_limited_s,
                "host_limited_fraction": t.host_limited_fraction,
                "delivery_rate_median_mbps": t.delivery_rate_median_bps.map(|b| b / 1e6),
            })
        });
        rows.push(Row {
            label: real_label,
            kind: name,
            matched_to: None,
            size: Some(size),
            m: real_m,
            rtos: sum.and_then(SenderSummary::rtos),
            host,
            ce_marked: emulator_ce_marked(emulator.as_ref()),
            emulator: emulator.clone(),
            recoveries: sum.and_then(SenderSummary::recoveries),
            paws_discarded: *paws,
        });
    }
    // No real source to match (none asked for, or every one failed): the
    // simulator's own run still gives its row.
    if rows.is_empty() {
        let sim = simulate(&sc_name, &run, &out.join("sim"), window_s)?;
        let size = own_size(&run);
        rows.push(Row::simulated(
            format!("simulator ({alg})"),
            None,
            Some(size),
            sim,
        ));
    }
    print_table(&rows, window_s);
    for f in &failed {
        println!("{:<30} FAILED: {}", f.source, f.error);
    }
    write_json(&out, &sc_name, window_s, &rows, &failed)?;
    let series = |f: &dyn Fn(&Measured) -> Vec<(f64, f64)>| -> Vec<Series> {
        rows.iter()
            .map(|r| Series {
                label: r.label.clone(),
                points: f(&r.m),
            })
            .collect()
    };
    for (stem, title, y, s) in [
        (
            "goodput",
            "Goodput (payload): simulator vs real sockets",
            "Mbit/s",
            series(&|m| m.goodput.clone()),
        ),
        (
            "rtt",
            "Smoothed RTT (srtt): simulator vs real sockets",
            "ms",
            series(&|m| m.rtt.clone()),
        ),
        (
            "bw_estimate",
            "Bandwidth estimate: simulator vs real sockets",
            "Mbit/s",
            series(&|m| m.bw.clone()),
        ),
        (
            "min_rtt",
            "min_rtt estimate: simulator vs real sockets",
            "ms",
            series(&|m| m.min_rtt.clone()),
        ),
    ] {
        plots::figure(&Figure {
            stem: &out.join(stem),
            title,
            x_label: "time since the first data packet (s)",
            y_label: y,
            log_x: false,
            log_y: false,
            series: &s,
            published: &[],
            published_label: None,
        })?;
    }
    println!(
        "wrote {} (compare.json; goodput, rtt, bw_estimate and min_rtt figures; each source's flows.csv)",
        out.display()
    );
    Ok(failed
        .iter()
        .map(|f| format!("{}: {}", f.source, f.error))
        .collect())
}

/// `recoveries: N begun, M undone (P %); PAWS discarded Q % of arriving
/// segments`, each part where known.
fn recoveries_line(recoveries: Option<(u64, u64)>, paws: Option<f64>) -> String {
    let mut parts = Vec::new();
    if let Some((n, u)) = recoveries {
        let share = if n > 0 {
            format!(" ({:.0} %)", u as f64 / n as f64 * 100.0)
        } else {
            String::new()
        };
        parts.push(format!("recoveries: {n} begun, {u} undone{share}"));
    }
    if let Some(p) = paws {
        parts.push(format!(
            "PAWS discarded {:.1} % of arriving segments",
            p * 100.0
        ));
    }
    parts.join("; ")
}

fn opt(v: Option<f64>, p: usize) -> String {
    v.map_or("-".to_string(), |x| format!("{x:.p$}"))
}

fn print_table(rows: &[Row], window_s: f64) {
    println!("over the first {window_s:.1} s from {ORIGIN_IS}");
    println!("goodput: {GOODPUT_IS}");
    println!("RTT: {RTT_IS}");
    println!("retx: {RETX_IS}");
    println!(
        "{:<30} {:>9} {:>12} {:>10} {:>10} {:>8} {:>5} {:>11} {:>10} {:>10}",
        "source",
        "pkt B",
        "goodput Mb/s",
        "srtt p50",
        "srtt p95",
        "retx %",
        "RTOs",
        "bw est Mb/s",
        "min_rtt ms",
        "host-lim %"
    );
    let mut last_sim: Option<&Row> = None;
    for r in rows {
        let size = r
            .size
            .map_or("-".into(), |s| format!("{}+{}", s.payload, s.header));
        let host = r
            .host
            .as_ref()
            .and_then(|h| h["host_limited_fraction"].as_f64())
            .map(|f| f * 100.0);
        println!(
            "{:<30} {:>9} {:>12.2} {:>10} {:>10} {:>8} {:>5} {:>11} {:>10} {:>10}",
            r.label,
            size,
            r.m.goodput_mbps,
            opt(r.m.rtt_median_ms, 1),
            opt(r.m.rtt_p95_ms, 1),
            opt(r.m.retransmitted_fraction().map(|f| f * 100.0), 3),
            r.rtos.map_or("-".into(), |n| n.to_string()),
            opt(r.m.bw_mbps, 2),
            opt(r.m.min_rtt_ms, 1),
            opt(host, 2),
        );
        if r.kind == "simulator" {
            last_sim = Some(r);
            continue;
        }
        // The real source minus the simulator run matched to it (goodput
        // as a ratio): what a user checks.
        if let Some(sim) = last_sim.filter(|s| s.matched_to.as_deref() == Some(&r.label)) {
            let d = |a: Option<f64>, b: Option<f64>, p: usize| match (a, b) {
                (Some(a), Some(b)) => format!("{:+.p$}", a - b),
                _ => "-".to_string(),
            };
            let pct = |m: &Measured| m.retransmitted_fraction().map(|f| f * 100.0);
            println!(
                "{:<30} {:>9} {:>+11.1}% {:>10} {:>10} {:>8} {:>5} {:>11} {:>10} {:>10}",
                format!("Δ {}", r.label),
                "",
                (r.m.goodput_mbps / sim.m.goodput_mbps - 1.0) * 100.0,
                d(r.m.rtt_median_ms, sim.m.rtt_median_ms, 1),
                d(r.m.rtt_p95_ms, sim.m.rtt_p95_ms, 1),
                d(pct(&r.m), pct(&sim.m), 3),
                "",
                d(r.m.bw_mbps, sim.m.bw_mbps, 2),
                d(r.m.min_rtt_ms, sim.m.min_rtt_ms, 1),
                "",
            );
        }
    }
    // Recoveries and undos (and the kernel receiver's PAWS discards),
    // over each whole run, where a source counts them: on a path where
    // some source entered recovery.
    if rows.iter().any(|r| {
        r.recoveries.is_some_and(|(n, _)| n > 0) || r.paws_discarded.is_some_and(|p| p > 0.0)
    }) {
        println!("recoveries, over each whole run, where the source counts them:");
        for r in rows
            .iter()
            .filter(|r| r.recoveries.is_some() || r.paws_discarded.is_some())
        {
            println!(
                "{:<30} {}",
                r.label,
                recoveries_line(r.recoveries, r.paws_discarded)
            );
        }
    }
    // A marking queue: how much of each flow it marked, the figure the
    // ECN response is judged by (over each whole run).
    for r in rows.iter().filter(|r| r.ce_marked.is_some()) {
        println!(
            "{:<30} marked CE at the bottleneck: {:.1} % of its packets",
            r.label,
            r.ce_marked.unwrap_or(0.0) * 100.0
        );
    }
}

/// Runs again, with the current simulator, the simulations an earlier
/// compare run in `dir` matched to its real sources (each with that
/// source's packet and header bytes, from `dir/compare.json`), on the
/// scenario `scenario`, and rewrites `dir/compare.json` with their
/// figures; the real rows stay as they were measured. `kernel_ack`
/// as in [`run_with`]. Needs no root. The figures' SVGs are not drawn
/// again. Returns the new report.
pub fn resimulate(
    scenario: &Path,
    dir: &Path,
    kernel_ack: Option<&str>,
) -> Result<CompareReport, String> {
    let (sc_name, run) = single_flow_run(scenario, None)?;
    let mut report = CompareReport::read(dir)?;
    let window_s = report.window_s;
    let real: Vec<(String, String)> = report
        .sources
        .iter()
        .filter(|s| s.kind != "simulator")
        .map(|s| (s.source.clone(), s.kind.clone()))
        .collect();
    for row in report.sources.iter_mut().filter(|s| s.kind == "simulator") {
        let kind = row.matched_to.as_ref().and_then(|m| {
            real.iter()
                .find(|(label, _)| label == m)
                .map(|(_, kind)| kind.clone())
        });
        let (Some(kind), Some(payload), Some(header)) = (
            kind,
            row.payload_bytes_per_packet,
            row.header_bytes_per_packet,
        ) else {
            // The simulator alone (`--with none`): its own packet sizes.
            let sim = simulate(&sc_name, &run, &dir.join("sim"), window_s)?;
            let size = own_size(&run);
            *row = Row::simulated(row.source.clone(), None, Some(size), sim).source_row();
            continue;
        };
        let size = PacketSize { payload, header };
        let matched = matched_run(
            scenario,
            &run,
            Some(size),
            kernel_ack,
            kind == "kernel",
            // The kernel the kept run was made on, not this one.
            if kind == "kernel" {
                crate::kernel_release::rcv_rule_for_runs(dir)
            } else {
                claims::validate::linux_rcv_autotuning()
            },
        )?;
        let sim = simulate(
            &sc_name,
            &matched,
            &dir.join(format!("sim-{kind}")),
            window_s,
        )?;
        *row = Row::simulated(row.source.clone(), row.matched_to.clone(), Some(size), sim)
            .source_row();
    }
    report.write(dir)?;
    Ok(report)
}

fn write_json(
    out: &Path,
    name: &str,
    window_s: f64,
    rows: &[Row],
    failed: &[FailedSource],
) -> Result<(), String> {
    let sources = rows.iter().map(Row::source_row).collect();
    CompareReport {
        scenario: name.into(),
        window_s,
        statistics: Statistics {
            time_origin: ORIGIN_IS.into(),
            goodput: GOODPUT_IS.into(),
            rtt: RTT_IS.into(),
            retransmissions: RETX_IS.into(),
            bw_estimate: "median over the second half of the window".into(),
            min_rtt: "the controller's (kernel: TCP_CC_INFO for BBR, else tcpi_min_rtt) at the end of the window".into(),
            recoveries: RECOVERIES_IS.into(),
        },
        sources,
        failed_sources: failed.to_vec(),
    }
    .write(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn the_recoveries_line_says_what_each_source_counted() {
        assert_eq!(
            recoveries_line(Some((503, 258)), Some(0.182)),
            "recoveries: 503 begun, 258 undone (51 %); PAWS discarded 18.2 % of arriving segments"
        );
        assert_eq!(
            recoveries_line(Some((0, 0)), None),
            "recoveries: 0 begun, 0 undone"
        );
        assert_eq!(
            recoveries_line(None, Some(0.0)),
            "PAWS discarded 0.0 % of arriving segments"
        );
    }
    #[test]
    fn each_algorithm_has_its_kernel_counterpart_or_a_reason() {
        use congestion::{Algorithm, Bbr3Signals, Config as CcConfig};
        let with = |a: Algorithm| {
            let mut s = CcConfig::default();
            s.algorithm = a;
            s
        };
        assert_eq!(kernel_counterpart(&with(Algorithm::Bbr)).unwrap(), "bbr");
        assert_eq!(
            kernel_counterpart(&with(Algorithm::Cubic)).unwrap(),
            "cubic"
        );
        // bbr3 has bbrlab_bbr3 only as linux-v3 with stock-kernel signals.
        let mut b3 = with(Algorithm::Bbr3);
        let e = kernel_counterpart(&b3).unwrap_err();
        assert!(
            e.contains("bbrlab_bbr3") && e.contains("profile = \"draft\""),
            "{e}"
        );
        b3.bbr3 = congestion::Bbr3Config::linux_v3();
        assert!(kernel_counterpart(&b3)
            .unwrap_err()
            .contains("signals = \"exact\""));
        b3.bbr3.signals = Bbr3Signals::StockKernel;
        assert_eq!(kernel_counterpart(&b3).unwrap(), "bbrlab_bbr3");
        assert!(kernel_counterpart(&with(Algorithm::BbrJitter))
            .unwrap_err()
            .contains("no `bbr-jitter`"));
    }

    /// `text` written as scenario file `name` in `dir` (a test's tempdir,
    /// which the caller keeps alive).
    fn scenario_file(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// A scenario whose segment size changes runs only in the simulator:
    /// compare says so by name before it starts anything.
    #[test]
    fn a_segment_size_change_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = scenario_file(
            dir.path(),
            "mc.toml",
            "duration = \"2s\"\n[link.forward]\nrate = \"10mbit\"\ndelay = \"20ms\"\n[[flow]]\nalgorithm = \"bbr\"\nmss_change = { at = \"1s\", mss = 1200 }\n",
        );
        let e = single_flow_run(&path, None).unwrap_err();
        assert!(e.contains("`mss_change` runs only in the simulator"), "{e}");
    }

    /// `--seed` reaches the simulation (its scenario text and its
    /// configuration) and every real source's emulator, and names the
    /// default output directory; without it the scenario's seed stays.
    #[test]
    fn a_chosen_seed_reaches_the_simulation_and_the_emulator() {
        let dir = tempfile::tempdir().unwrap();
        let path = scenario_file(
            dir.path(),
            "lossy.toml",
            "seed = 3\nduration = \"2s\"\n[link.forward]\nrate = \"10mbit\"\ndelay = \"20ms\"\nloss = 0.01\n[[flow]]\nalgorithm = \"bbr\"\n",
        );
        let (_, own) = single_flow_run(&path, None).unwrap();
        assert_eq!(own.config.seed, 3);
        let (name, seeded) = single_flow_run(&path, Some(11)).unwrap();
        assert_eq!(seeded.config.seed, 11);
        // The edited text is what `scenario.toml` beside the results holds.
        assert!(seeded.text.contains("seed = 11"), "{}", seeded.text);
        // The sample interval compare adds stays with the seed.
        assert_eq!(seeded.config.sample_interval_ns, 10_000_000);
        let over = single_flow_run(&path, Some(u64::MAX)).unwrap_err();
        assert!(over.contains("at most"), "{over}");

        let ecn = vec!["--tcp-ecn".to_string()];
        assert_eq!(emu_args(Source::Kernel, &ecn, None), ecn);
        assert_eq!(
            emu_args(Source::Kernel, &ecn, Some(11)),
            ["--tcp-ecn", "--seed", "11"]
        );
        assert_eq!(emu_args(Source::Udp, &ecn, Some(11)), ["--seed", "11"]);
        assert!(emu_args(Source::S2n, &ecn, None).is_empty());

        assert_eq!(default_out(&name, None), Path::new("out/compare-lossy"));
        assert_eq!(
            default_out(&name, Some(11)),
            Path::new("out/compare-lossy-seed11")
        );
    }

    #[test]
    fn the_share_marked_ce_comes_from_each_sides_own_counts() {
        // The emulator's figures: forward direction first.
        let emu = serde_json::json!({
            "marked_ce_packets": [250, 0],
            "forwarded_packets": [1000, 600],
        });
        assert_eq!(emulator_ce_marked(Some(&emu)), Some(0.25));
        let none =
            serde_json::json!({"marked_ce_packets": [0, 0], "forwarded_packets": [1000, 600]});
        assert_eq!(emulator_ce_marked(Some(&none)), None);
        assert_eq!(emulator_ce_marked(Some(&serde_json::json!({}))), None);
        assert_eq!(emulator_ce_marked(None), None);
        // The simulator's: a flow that fills a queue marking above 1 ms is
        // marked on part of its packets; the same flow on a drop-tail
        // queue on none.
        let dir = tempfile::tempdir().unwrap();
        let run = |queue: &str| {
            let sc = scenario_file(
                dir.path(),
                "ecn.toml",
                &format!(
                    "duration = \"2s\"\nsample_interval = \"10ms\"\n[link.forward]\nrate = \"20mbit\"\ndelay = \"2ms\"\nqueue = {{ limit = \"100pkt\"{queue} }}\n[link.reverse]\ndelay = \"2ms\"\n[[flow]]\nalgorithm = \"bbr\"\necn = true\n"
                ),
            );
            let run = scenario::load(&sc).unwrap().runs[0].clone();
            simulate("ecn", &run, &dir.path().join("out"), 2.0).unwrap()
        };
        let marked = run(", aqm = \"step\", threshold = \"1ms\", ecn = true")
            .ce_marked
            .expect("a marking queue marked");
        assert!(marked > 0.05 && marked <= 1.0, "{marked}");
        assert_eq!(run("").ce_marked, None);
    }

    #[test]
    fn an_ecn_flows_kernel_run_negotiates_ecn_or_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let sysctl = dir.path().join("tcp_ecn");
        assert!(kernel_ecn_args(false, &sysctl).unwrap().is_empty());
        let e = kernel_ecn_args(true, &sysctl).unwrap_err();
        assert!(e.contains("tcp_ecn") && e.contains("--with udp"), "{e}");
        std::fs::write(&sysctl, "2\n").unwrap();
        assert_eq!(kernel_ecn_args(true, &sysctl).unwrap(), ["--tcp-ecn"]);
        assert!(kernel_ecn_args(false, &sysctl).unwrap().is_empty());
    }

    #[test]
    fn sources_are_parsed_by_name() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            parse_sources(&v(&["kernel", "s2n", "quic-s2n", "udp"])).unwrap(),
            [Source::Kernel, Source::S2n, Source::S2n, Source::Udp]
        );
        assert_eq!(parse_sources(&v(&["none"])).unwrap(), []);
        let e = parse_sources(&v(&["quinn"])).unwrap_err();
        assert!(e.contains("quinn") && e.contains("`s2n`"), "{e}");
    }

    /// The simulation matched to kernel TCP opens with TCP's SYN exchange,
    /// written into its scenario text, and its figures start where its
    /// data did, as the kernel's log starts once connected; the others'
    /// (the UDP transport, s2n-quic) keep the scenario's own start.
    #[test]
    fn the_kernels_match_opens_with_a_handshake_and_is_measured_from_its_data() {
        let dir = tempfile::tempdir().unwrap();
        let sc = dir.path().join("p.toml");
        std::fs::write(
            &sc,
            "duration = \"2s\"\nsample_interval = \"10ms\"\n[link.forward]\nrate = \"10mbit\"\ndelay = \"20ms\"\nqueue = { limit = \"100pkt\" }\n[link.reverse]\ndelay = \"20ms\"\n[[flow]]\nalgorithm = \"bbr\"\npacing = \"exact\"\n",
        )
        .unwrap();
        let run = scenario::load(&sc).unwrap().runs[0].clone();
        let size = PacketSize {
            payload: 1448,
            header: 52,
        };
        let kernel = matched_run(
            &sc,
            &run,
            Some(size),
            Some("linux"),
            true,
            claims::validate::linux_rcv_autotuning(),
        )
        .unwrap();
        assert!(
            kernel.text.contains("handshake = \"tcp\""),
            "{}",
            kernel.text
        );
        let f = &kernel.config.flows[0];
        assert_eq!(f.handshake, netsim::Handshake::Tcp);
        assert_eq!(f.initial_burst_packets, 10, "Linux's unpaced first ten");
        assert_eq!((f.cc.mss_bytes, f.header_bytes), (1448, 52));
        // An exactly paced flow has no TSO packets to defer; one sending
        // kernel-sized bursts defers as Linux does.
        assert!(!f.tso_defer);
        let quantum = dir.path().join("q.toml");
        let text = std::fs::read_to_string(&sc)
            .unwrap()
            .replace("pacing = \"exact\"", "pacing = \"quantum\"");
        std::fs::write(&quantum, text).unwrap();
        let run_q = scenario::load(&quantum).unwrap().runs[0].clone();
        let kernel_q = matched_run(
            &quantum,
            &run_q,
            Some(size),
            Some("linux"),
            true,
            claims::validate::linux_rcv_autotuning(),
        )
        .unwrap();
        assert!(kernel_q.config.flows[0].tso_defer);
        let udp_q = matched_run(
            &quantum,
            &run_q,
            Some(size),
            None,
            false,
            claims::validate::linux_rcv_autotuning(),
        )
        .unwrap();
        assert!(!udp_q.config.flows[0].tso_defer, "the UDP transport's");
        // Linux's receiver grows its window by the rule it is given: the
        // kernel's that made the real run.
        let rule = |r: &scenario::Run| match r.config.flows[0].ack {
            netsim::AckPolicy::Linux { autotuning, .. } => autotuning,
            other => panic!("not Linux's receiver: {other:?}"),
        };
        let running = match claims::validate::linux_rcv_autotuning() {
            "6.16" => netsim::sender::RcvAutotuning::Linux6_16,
            _ => netsim::sender::RcvAutotuning::Cushioned,
        };
        assert_eq!(rule(&kernel_q), running);
        for (given, want) in [
            ("pre-6.16", netsim::sender::RcvAutotuning::Cushioned),
            ("6.16", netsim::sender::RcvAutotuning::Linux6_16),
        ] {
            let m = matched_run(&quantum, &run_q, Some(size), Some("linux"), true, given).unwrap();
            assert_eq!(rule(&m), want, "{given}");
        }
        // A scenario's own choices stay.
        let own = dir.path().join("own.toml");
        let text = std::fs::read_to_string(&quantum).unwrap()
            + "tso_defer = false\nrcv_autotuning = \"pre-6.16\"\n";
        std::fs::write(&own, text).unwrap();
        let run_own = scenario::load(&own).unwrap().runs[0].clone();
        let kernel_own = matched_run(
            &own,
            &run_own,
            Some(size),
            Some("linux"),
            true,
            claims::validate::linux_rcv_autotuning(),
        )
        .unwrap();
        assert!(!kernel_own.config.flows[0].tso_defer);
        assert_eq!(rule(&kernel_own), netsim::sender::RcvAutotuning::Cushioned);
        // No timing noise on the kernel match's ACKs (the hosts' noise of
        // `validate --multiflow` is not put there: Validation, "ECN on a
        // step queue against the kernel"), nor on the UDP transport's.
        let udp = matched_run(
            &sc,
            &run,
            Some(size),
            None,
            false,
            claims::validate::linux_rcv_autotuning(),
        )
        .unwrap();
        assert!(kernel.config.reverse.jitter.is_none(), "{}", kernel.text);
        assert!(udp.config.reverse.jitter.is_none(), "{}", udp.text);
        assert_eq!(udp.config.flows[0].handshake, netsim::Handshake::None);
        assert_eq!(udp.config.flows[0].initial_burst_packets, 0);
        // A scenario that names no pacer: the kernel's match gets Linux's
        // (BBR's TSO bursts, deferred as Linux defers them), the UDP
        // transport's one packet at a time, as before Linux's became the
        // default.
        let plain = dir.path().join("plain.toml");
        let text = std::fs::read_to_string(&sc)
            .unwrap()
            .replace("pacing = \"exact\"\n", "");
        std::fs::write(&plain, text).unwrap();
        let run_plain = scenario::load(&plain).unwrap().runs[0].clone();
        let rule_now = claims::validate::linux_rcv_autotuning();
        let k = matched_run(
            &plain,
            &run_plain,
            Some(size),
            Some("linux"),
            true,
            rule_now,
        )
        .unwrap();
        assert_eq!(k.config.flows[0].pacing, netsim::Pacing::Quantum);
        assert!(k.config.flows[0].tso_defer);
        let u = matched_run(&plain, &run_plain, Some(size), None, false, rule_now).unwrap();
        assert_eq!(
            u.config.flows[0].pacing,
            netsim::Pacing::Exact,
            "{}",
            u.text
        );
        // And its receiver an ACK per packet; the kernel's, Linux's.
        assert_eq!(u.config.flows[0].ack, netsim::AckPolicy::EveryPacket);
        assert!(matches!(
            k.config.flows[0].ack,
            netsim::AckPolicy::Linux { .. }
        ));
        // The plain scenario with one more flow key, written beside it.
        let with_key = |file: &str, line: &str| {
            let path = dir.path().join(file);
            std::fs::write(&path, std::fs::read_to_string(&plain).unwrap() + line).unwrap();
            let run = scenario::load(&path).unwrap().runs[0].clone();
            (path, run)
        };
        // A receiver the scenario names stays, and `kernel_ack` is the
        // kernel's alone.
        let (named, run_named) = with_key("named.toml", "ack = \"delayed\"\n");
        let un = matched_run(
            &named,
            &run_named,
            Some(size),
            Some("every"),
            false,
            rule_now,
        )
        .unwrap();
        assert!(
            matches!(un.config.flows[0].ack, netsim::AckPolicy::Delayed { .. }),
            "{}",
            un.text
        );
        // TCP timestamps are kernel TCP's match's alone: the UDP
        // transport's drops them.
        let (stamped, run_stamped) = with_key("stamped.toml", "timestamps = true\n");
        let ks = matched_run(
            &stamped,
            &run_stamped,
            Some(size),
            Some("linux"),
            true,
            rule_now,
        )
        .unwrap();
        assert!(ks.config.flows[0].timestamps, "{}", ks.text);
        let us = matched_run(&stamped, &run_stamped, Some(size), None, false, rule_now).unwrap();
        assert!(!us.config.flows[0].timestamps, "{}", us.text);
        assert!(!u.text.contains("timestamps"), "{}", u.text);
        // Measured from the SYN-ACK's arrival, 40 ms (and the SYN's
        // serialization) after the start: the same delivery counted from
        // there gives a higher goodput than from 0 over the same window.
        let from_data = simulate("p", &kernel, &dir.path().join("k"), 2.0)
            .unwrap()
            .m;
        let summary: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("k/summary.json")).unwrap(),
        )
        .unwrap();
        let opened = summary["runs"][0]["flows"][0]["handshake"]["opened_s"]
            .as_f64()
            .unwrap();
        assert!((0.040..0.041).contains(&opened), "{summary}");
        // simulate measured from the SYN-ACK: what measure gives from
        // there, not from the scenario's start; and the run went on past
        // its 2 s so that window is whole.
        let csv = dir.path().join("k/flows.csv");
        let direct = runner::measure::measure(&csv, opened, 2.0).unwrap();
        assert_eq!(from_data.goodput_mbps, direct.goodput_mbps);
        let from_start = runner::measure::measure(&csv, 0.0, 2.0).unwrap();
        assert_ne!(from_data.goodput_mbps, from_start.goodput_mbps);
        assert_eq!(kernel.config.duration_ns, 6_000_000_000);
        assert_eq!(udp.config.duration_ns, 2_000_000_000);
    }

    /// A scenario's cubic (HyStart++ and RFC 9438's avoidance by default)
    /// is told apart from kernel cubic, naming each key that differs; with
    /// Linux's HyStart (or none) and Linux's avoidance, or another
    /// algorithm, nothing is said.
    #[test]
    fn a_cubic_flow_on_rfc_rules_gets_a_note_against_kernel_cubic() {
        use congestion::{Algorithm, Config, CubicAvoidance, HyStartVariant};
        let mut c = Config::new(Algorithm::Cubic);
        let note = counterpart_note(&c).expect("a note");
        assert!(note.contains("hystart_variant = \"linux\""), "{note}");
        assert!(note.contains("avoidance = \"linux\""), "{note}");
        c.cubic.hystart_variant = HyStartVariant::Linux;
        let note = counterpart_note(&c).expect("a note");
        assert!(!note.contains("hystart_variant"), "{note}");
        assert!(note.contains("avoidance = \"linux\""), "{note}");
        c.cubic.avoidance = CubicAvoidance::Linux;
        assert_eq!(counterpart_note(&c), None);
        c.cubic.hystart_variant = HyStartVariant::Rfc9406;
        c.cubic.hystart = false;
        assert_eq!(counterpart_note(&c), None);
        c.cubic.avoidance = CubicAvoidance::Rfc9438;
        assert!(counterpart_note(&c).is_some());
        assert_eq!(counterpart_note(&Config::new(Algorithm::Bbr)), None);
    }
}
