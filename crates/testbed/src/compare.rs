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

use figures::{self as plots, Figure, Series, Table};
use netsim::sender::schema;
use runner::stats::quantile;
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
const RETX_IS: &str = "retransmitted data packets / data packets sent (kernel: tcpi_total_retrans / tcpi_data_segs_out)";
const ORIGIN_IS: &str = "the first data packet: the simulator's flow start, the end of the UDP transport's or QUIC handshake, the kernel probe's first write after connect()";

/// The kernel's IPv4 + TCP header with the timestamp option, and its
/// payload per segment on the emulator's 1500-byte MTU: what `compare`
/// assumes if the probe's summary does not say.
pub const KERNEL_DEFAULT: PacketSize = PacketSize {
    payload: 1448,
    header: 52,
};

/// Bytes per data packet: payload (what goodput counts) and headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PacketSize {
    pub payload: u64,
    pub header: u32,
}

/// The UDP transport's full data packet: its chunk, and IPv4 (20) and UDP
/// (8) headers plus its own datagram overhead, measured by encoding one.
fn udp_packet_size() -> PacketSize {
    use transport::wire::{encode, Frame, Packet, CHUNK};
    let payload = [0u8; CHUNK];
    let mut out = Vec::new();
    encode(
        &Packet {
            conn_id: 0,
            pn: 0,
            frame: Frame::Data {
                chunk: 0,
                payload: &payload,
            },
        },
        &mut out,
    );
    PacketSize {
        payload: CHUNK as u64,
        header: (20 + 8 + out.len() - CHUNK) as u32,
    }
}

/// Bytes around each STREAM frame's payload in an s2n-quic 1-RTT packet:
/// IPv4 (20) and UDP (8); the short header's first byte, s2n-quic's 16-byte
/// destination connection ID and a packet number of up to 4 bytes (RFC
/// 9000 17.3.1); the AEAD tag (16, AES-GCM); the STREAM frame's type,
/// stream ID and 4-byte offset (RFC 9000 19.8; s2n-quic leaves out the
/// length of a packet's last frame).
const S2N_HEADER: u32 = 20 + 8 + 1 + 16 + 4 + 16 + 1 + 1 + 4;

/// s2n-quic's packet size: [`S2N_HEADER`] bytes of headers around the
/// payload the sender's summary shows per packet (bytes acknowledged over
/// packets sent and not lost). Without a summary, a full 1500-byte packet
/// (s2n-quic probes its MTU up to the emulator's 1500 bytes).
fn s2n_packet_size(summary: Option<&serde_json::Value>) -> PacketSize {
    let per_packet = summary.and_then(|s| {
        let bytes = s["bytes"].as_f64()?;
        let sent = s["packets_sent"].as_f64()?;
        let lost = s["packets_lost"].as_f64().unwrap_or(0.0);
        (sent - lost > 100.0).then(|| (bytes / (sent - lost)).round() as u64)
    });
    match per_packet {
        Some(p) if (500..=1500 - S2N_HEADER as u64).contains(&p) => PacketSize {
            payload: p,
            header: S2N_HEADER,
        },
        _ => PacketSize {
            payload: 1500 - S2N_HEADER as u64,
            header: S2N_HEADER,
        },
    }
}

/// The kernel connection's packet size from `tcp send`'s summary: its MSS
/// as payload and the rest of the path MTU as headers (52 bytes with TCP
/// timestamps, 40 without).
pub fn kernel_packet_size(summary: Option<&serde_json::Value>) -> PacketSize {
    let get = |k: &str| summary.and_then(|s| s[k].as_u64()).filter(|&v| v > 0);
    match (get("mss"), get("pmtu")) {
        (Some(mss), Some(pmtu)) if pmtu > mss && pmtu - mss <= 1000 => PacketSize {
            payload: mss,
            header: (pmtu - mss) as u32,
        },
        _ => KERNEL_DEFAULT,
    }
}

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
            if cc.bbr3.profile == Bbr3Profile::LinuxV3
                && cc.bbr3.signals == Bbr3Signals::StockKernel =>
        {
            Ok(Algorithm::Bbr3.kernel_name().into())
        }
        Algorithm::Bbr3 => Err(format!(
            "the kernel's counterpart of bbr3, {}, runs [flow.bbr3] profile = \"linux-v3\" with signals = \"stock-kernel\"; this flow has profile = \"{}\", signals = \"{}\"",
            Algorithm::Bbr3.kernel_name(), cc.bbr3.profile, cc.bbr3.signals
        )),
        _ => Err(format!("the kernel has no `{alg}`")),
    }
}

/// What differs, on purpose, between the simulated flow `cc` and its
/// kernel counterpart although it has one, for the user to hear before
/// reading the comparison: kernel `cubic` leaves slow start by Linux's
/// HyStart, and a scenario's `cubic` by RFC 9406's HyStart++ unless it
/// says otherwise (`bbrlab validate` always says so).
pub fn counterpart_note(cc: &congestion::Config) -> Option<String> {
    use congestion::{Algorithm, HyStartVariant};
    (cc.algorithm == Algorithm::Cubic
        && cc.cubic.hystart
        && cc.cubic.hystart_variant == HyStartVariant::Rfc9406)
        .then(|| {
            "the simulated cubic leaves slow start by HyStart++ (RFC 9406), kernel cubic by \
             Linux's HyStart; add [flow.cubic] hystart_variant = \"linux\" to compare like \
             with like"
                .to_string()
        })
}

/// The first line of `stdout` that is a JSON object with `key`: the
/// emulator passes on the server's and the client's summaries.
pub fn json_line_with(stdout: &str, key: &str) -> Option<serde_json::Value> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
        .find(|v| v.get(key).is_some())
}

/// A source's figures over the common window, times from its origin.
#[derive(Debug)]
pub struct Measured {
    pub goodput_mbps: f64,
    pub rtt_median_ms: Option<f64>,
    rtt_p95_ms: Option<f64>,
    data_packets: Option<u64>,
    pub retransmitted: Option<u64>,
    bw_mbps: Option<f64>,
    min_rtt_ms: Option<f64>,
    goodput: Vec<(f64, f64)>,
    rtt: Vec<(f64, f64)>,
    bw: Vec<(f64, f64)>,
    min_rtt: Vec<(f64, f64)>,
}

impl Measured {
    pub fn retransmitted_fraction(&self) -> Option<f64> {
        match (self.retransmitted, self.data_packets) {
            (Some(r), Some(n)) if n > 0 => Some(r as f64 / n as f64),
            _ => None,
        }
    }
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
}

/// Width of the goodput overlay's averaging window. Kernel TCP's
/// `bytes_acked` jumps when a SACK hole fills, so 10 ms goodput spikes to
/// many times the link rate; 100 ms (2.5 RTTs on the default path) shows
/// the rate the eye wants while keeping PROBE_RTT dips visible.
const GOODPUT_WINDOW_S: f64 = 0.1;

/// Goodput in Mbit/s over consecutive windows of `window` seconds, from a
/// cumulative delivered-bytes series.
fn windowed_goodput(delivered: &[(f64, f64)], window: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let Some(&(mut t0, mut b0)) = delivered.first() else {
        return out;
    };
    for &(t, b) in delivered {
        if t - t0 >= window {
            out.push((t, (b - b0) * 8.0 / (t - t0) / 1e6));
            (t0, b0) = (t, b);
        }
    }
    out
}

/// Moves a series to the common origin (subtracting `origin_s`) and keeps
/// the points inside `[0, window_s]`.
fn align(points: Vec<(f64, f64)>, origin_s: f64, window_s: f64) -> Vec<(f64, f64)> {
    points
        .into_iter()
        .map(|(t, v)| (t - origin_s, v))
        .filter(|&(t, _)| (-1e-9..=window_s + 1e-9).contains(&t))
        .collect()
}

/// Reads a flows.csv written by any source: `origin_s` is when its first
/// data packet left (in the file's own times), `window_s` the common span
/// measured from there.
pub fn measure(csv: &Path, origin_s: f64, window_s: f64) -> Result<Measured, String> {
    let t = Table::read(csv)?;
    let col = |y: schema::Column| -> Result<Vec<(f64, f64)>, String> {
        Ok(align(
            t.points(
                csv,
                schema::TIME_S.name,
                y.name,
                Some((schema::FLOW.name, "0")),
            )?,
            origin_s,
            window_s,
        ))
    };
    let delivered = col(schema::DELIVERED_BYTES)?;
    let srtt = col(schema::SRTT_MS)?;
    let sent = col(schema::DATA_PACKETS_SENT)?;
    let retx = col(schema::RETRANSMITTED_PACKETS)?;
    let bw = col(schema::BW_ESTIMATE_BPS)?;
    let min_rtt = col(schema::MIN_RTT_MS)?;
    let goodput_mbps = match delivered.last() {
        Some(&(t, b)) if t > 0.0 => b * 8.0 / t / 1e6,
        _ => 0.0,
    };
    let mut r: Vec<f64> = srtt.iter().map(|p| p.1).collect();
    let half = window_s / 2.0;
    let mut bws: Vec<f64> = bw
        .iter()
        .filter(|p| p.0 >= half)
        .map(|p| p.1 / 1e6)
        .collect();
    Ok(Measured {
        goodput_mbps,
        rtt_median_ms: quantile(&mut r, 0.5),
        rtt_p95_ms: quantile(&mut r, 0.95),
        data_packets: sent.last().map(|p| p.1 as u64),
        retransmitted: retx.last().map(|p| p.1 as u64),
        bw_mbps: quantile(&mut bws, 0.5),
        min_rtt_ms: min_rtt.last().map(|p| p.1),
        goodput: windowed_goodput(&delivered, GOODPUT_WINDOW_S),
        rtt: srtt,
        bw: bw.iter().map(|&(t, b)| (t, b / 1e6)).collect(),
        min_rtt,
    })
}

/// Runs the emulator (through [`crate::emu`], so one that does not
/// come back is stopped at a deadline); returns its standard output, which
/// carries the client's and server's JSON summaries. Its output files stay
/// in `log_dir`.
pub fn run_emu(
    exe: &Path,
    scenario: &Path,
    programs: (&str, &str),
    timeout: u64,
    log_dir: &Path,
) -> Result<String, String> {
    run_emu_with(exe, scenario, programs, timeout, log_dir, &[])
}

/// Where [`run_emu_with`] has the emulator write its own figures
/// (`--stats`), in the run's log directory.
pub const EMU_STATS: &str = "emu.json";

/// The emulator's figures of the run whose log directory is `log_dir`
/// (see [`EMU_STATS`]); `None` if it wrote none (it did not end normally).
pub fn emu_stats(log_dir: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(log_dir.join(EMU_STATS)).ok()?;
    serde_json::from_str(&text).ok()
}

/// [`run_emu`] with more of the emulator's options (`--tcp-ecn`, `--log
/// DIR`). The emulator writes its own figures to [`EMU_STATS`] in
/// `log_dir`.
pub fn run_emu_with(
    exe: &Path,
    scenario: &Path,
    (server, client): (&str, &str),
    timeout: u64,
    log_dir: &Path,
    extra_args: &[String],
) -> Result<String, String> {
    let stats = log_dir.join(EMU_STATS);
    let _ = std::fs::remove_file(&stats);
    let mut extra_args = extra_args.to_vec();
    extra_args.push("--stats".into());
    extra_args.push(stats.display().to_string());
    let extra_args = &extra_args[..];
    let ended = crate::emu::run(
        &crate::emu::EmuRun {
            exe,
            scenario,
            server,
            client,
            timeout_s: timeout,
            log_dir,
            extra_args,
        },
        None,
        &|_| {},
    )?;
    match ended.status {
        Some(st) if st.success() => Ok(ended.stdout),
        Some(_) => Err(format!("the emulator run failed: {}", ended.stderr.trim())),
        None => Err(format!(
            "the emulator did not exit within {} s; stopped it (log: {})",
            ended.deadline.as_secs(),
            ended.err_path.display()
        )),
    }
}

/// Runs the scenario in the simulator with `size` (when given) in `dir`.
fn simulate(
    name: &str,
    run: &scenario::Run,
    size: Option<PacketSize>,
    dir: &Path,
    window_s: f64,
) -> Result<(Measured, u64), String> {
    let mut run = run.clone();
    if let Some(s) = size {
        run.config.flows[0].cc.mss_bytes = s.payload;
        run.config.flows[0].header_bytes = s.header;
    }
    let summary = runner::sweep::run_one(name, &run, dir)?;
    let origin_s = run.config.flows[0].start_ns as f64 / 1e9;
    let m = measure(&dir.join("flows.csv"), origin_s, window_s)?;
    Ok((m, summary.flows.first().map_or(0, |f| f.rtos)))
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
) -> Result<(), String> {
    let failed = run_with(scenario, with, out, quic_bulk, None)?;
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

/// [`run`], the simulation matched to kernel TCP run with `kernel_ack`
/// for its receiver when given (validate's `--sim-ack`): the kernel's
/// receiver is Linux's, the UDP transport's and s2n-quic's are not, so
/// the scenario's own `ack` stays for theirs. Returns each failed real
/// run as "source: why" (compare.json's `failed` has them too).
pub fn run_with(
    scenario: &Path,
    with: &[Source],
    out: Option<PathBuf>,
    quic_bulk: Option<&Path>,
    kernel_ack: Option<netsim::AckPolicy>,
) -> Result<Vec<String>, String> {
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
    let out = out.unwrap_or_else(|| PathBuf::from("out").join(format!("compare-{}", sc.name)));
    let mut run = sc.runs[0].clone();
    if run.config.sample_interval_ns == 0 {
        run.config.sample_interval_ns = 10_000_000;
    }
    let interval_ms = (run.config.sample_interval_ns / 1_000_000).max(1);
    let alg = run.config.flows[0].cc.algorithm.name().to_string();
    // The UDP sender runs the flow as the simulator does: bbr3 with the
    // flow's profile, and ECN-capable when the flow is (`bbrlab send`
    // sends ECT(0) for `ecn = "ect1"` too; a classic marking queue treats
    // both alike).
    let flow0 = &run.config.flows[0];
    let mut udp_extra = String::new();
    if flow0.cc.algorithm == congestion::Algorithm::Bbr3 {
        udp_extra += &format!(" --bbr3-profile {}", flow0.cc.bbr3.profile);
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
                let (r, s) = crate::quic::QuicCommands {
                    quic_bulk: quic_bulk.as_deref().expect("located above"),
                    stack: "s2n",
                    cc: &alg,
                    extra: &udp_extra,
                    server: "{server}:5201",
                    cert: &cert,
                    seconds: secs,
                    interval_ms,
                    log: &csv,
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
        let stdout = match run_emu(&exe_path, scenario, (&server, &client), secs + 60, &dir) {
            Ok(o) => o,
            // A run that fails is a finding about that source (written
            // into compare.json's `failed`, so validate reports it), not a
            // reason to lose the other sources' rows.
            Err(e) => {
                eprintln!(
                    "compare: FAILED: the {label} ({run_alg}) run: {e}; going on without its row"
                );
                failed.push(serde_json::json!({ "kind": name, "source": format!("{label} ({run_alg})"), "error": e }));
                continue;
            }
        };
        let summary = json_line_with(&stdout, key);
        if summary.is_none() {
            eprintln!("compare: no summary from the {label} sender; its RTO count is missing");
        }
        let emulator = emu_stats(&dir);
        real.push((*s, name, label, csv, summary, emulator));
    }
    for (s, name, label, csv, summary, emulator) in &real {
        let size = match s {
            Source::Kernel => kernel_packet_size(summary.as_ref()),
            Source::Udp => udp_packet_size(),
            Source::S2n => s2n_packet_size(summary.as_ref()),
        };
        // The kernel row names the kernel's control (`bbrlab_bbr3` for
        // the simulator's bbr3 in its stock-kernel form).
        let real_alg = match s {
            Source::Kernel => kernel_alg.as_deref().unwrap_or(&alg),
            _ => &alg,
        };
        let real_label = format!("{label} ({real_alg})");
        let mut matched = run.clone();
        if let (Source::Kernel, Some(ack)) = (s, kernel_ack) {
            matched.config.flows[0].ack = ack;
        }
        let (m, rtos) = simulate(
            &sc.name,
            &matched,
            Some(size),
            &out.join(format!("sim-{name}")),
            window_s,
        )?;
        rows.push(Row {
            label: format!("simulator as {name} ({alg})"),
            kind: "simulator",
            matched_to: Some(real_label.clone()),
            size: Some(size),
            m,
            rtos: Some(rtos),
            host: None,
            emulator: None,
        });
        let sum = summary.as_ref();
        let host = match s {
            Source::Kernel => sum.map(|v| {
                serde_json::json!({
                    "busy_s": v["busy_s"],
                    "rwnd_limited_s": v["rwnd_limited_s"],
                    "sndbuf_limited_s": v["sndbuf_limited_s"],
                    "host_limited_fraction": v["host_limited_fraction"],
                    "delivery_rate_median_mbps": v["delivery_rate_median_bps"].as_f64().map(|b| b / 1e6),
                })
            }),
            Source::Udp | Source::S2n => None,
        };
        rows.push(Row {
            label: real_label,
            kind: name,
            matched_to: None,
            size: Some(size),
            m: measure(csv, 0.0, window_s)?,
            rtos: sum.and_then(|v| v["rtos"].as_u64()),
            host,
            emulator: emulator.clone(),
        });
    }
    if real.is_empty() {
        let (m, rtos) = simulate(&sc.name, &run, None, &out.join("sim"), window_s)?;
        let f = &run.config.flows[0];
        rows.push(Row {
            label: format!("simulator ({alg})"),
            kind: "simulator",
            matched_to: None,
            size: Some(PacketSize {
                payload: f.cc.mss_bytes,
                header: f.header_bytes,
            }),
            m,
            rtos: Some(rtos),
            host: None,
            emulator: None,
        });
    }
    print_table(&rows, window_s);
    write_json(&out, &sc.name, window_s, &rows, &failed)?;
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
        })?;
    }
    println!(
        "wrote {} (compare.json; goodput, rtt, bw_estimate and min_rtt figures; each source's flows.csv)",
        out.display()
    );
    Ok(failed
        .iter()
        .map(|f| {
            format!(
                "{}: {}",
                f["source"].as_str().unwrap_or("?"),
                f["error"].as_str().unwrap_or("?")
            )
        })
        .collect())
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
}

fn write_json(
    out: &Path,
    name: &str,
    window_s: f64,
    rows: &[Row],
    failed: &[serde_json::Value],
) -> Result<(), String> {
    let sources: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "source": r.label,
                "kind": r.kind,
                "matched_to": r.matched_to,
                "payload_bytes_per_packet": r.size.map(|s| s.payload),
                "header_bytes_per_packet": r.size.map(|s| s.header),
                "goodput_mbps": r.m.goodput_mbps,
                "srtt_median_ms": r.m.rtt_median_ms,
                "srtt_p95_ms": r.m.rtt_p95_ms,
                "data_packets_sent": r.m.data_packets,
                "retransmitted_packets": r.m.retransmitted,
                "retransmitted_fraction": r.m.retransmitted_fraction(),
                "rtos": r.rtos,
                "bw_estimate_mbps": r.m.bw_mbps,
                "min_rtt_ms": r.m.min_rtt_ms,
                "host": r.host,
                "emulator": r.emulator,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "scenario": name,
        "window_s": window_s,
        "statistics": {
            "time_origin": ORIGIN_IS,
            "goodput": GOODPUT_IS,
            "rtt": RTT_IS,
            "retransmissions": RETX_IS,
            "bw_estimate": "median over the second half of the window",
            "min_rtt": "the controller's (kernel: TCP_CC_INFO for BBR, else tcpi_min_rtt) at the end of the window",
        },
        "sources": sources,
        "failed_sources": failed,
    });
    let json = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
    let path = out.join("compare.json");
    std::fs::write(&path, json + "\n").map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Writes a flows.csv of the full schema from (time, delivered bytes,
    /// srtt ms, data packets sent, retransmitted) rows.
    /// A flows.csv of flow 0 with rows (time s, delivered bytes, srtt ms,
    /// data packets sent, retransmitted packets); other tests use it too.
    pub(crate) fn csv(dir: &Path, rows: &[(f64, u64, f64, u64, u64)]) -> PathBuf {
        let p = dir.join("flows.csv");
        let mut w = csv::Writer::from_path(&p).unwrap();
        w.write_record(schema::FLOW_CSV_HEADER.split(',')).unwrap();
        for &(t, d, s, n, r) in rows {
            // drops (link drops in the simulator) deliberately disagrees
            // with the retransmission count, which is what must be used.
            let (t, d, s, n, r3) = (
                format!("{t:.6}"),
                d.to_string(),
                format!("{s:.3}"),
                n.to_string(),
                (r * 3).to_string(),
            );
            let r = r.to_string();
            // By column name, so a column the schema gains later is just
            // left empty here.
            let cell = |c: &schema::Column| -> &str {
                match c.name {
                    "time_s" => &t,
                    "delivered_bytes" => &d,
                    "rtt_ms" => "99.000",
                    "mode" => "probe_bw",
                    "bw_estimate_bps" => "1000000",
                    "min_rtt_ms" => "40.000",
                    "queue_delay_ms" => "0.000",
                    "drops" => &r3,
                    "srtt_ms" => &s,
                    "data_packets_sent" => &n,
                    "retransmitted_packets" => &r,
                    "flow" | "goodput_bps" | "cwnd_bytes" | "pacing_rate_bps"
                    | "inflight_bytes" => "0",
                    _ => "",
                }
            };
            w.write_record(schema::FLOW_COLUMNS.iter().map(cell))
                .unwrap();
        }
        w.flush().unwrap();
        p
    }

    #[test]
    fn retransmissions_are_a_share_of_data_packets_at_the_window_end() {
        let dir = tempfile::tempdir().unwrap();
        let p = csv(
            dir.path(),
            &[
                (0.0, 0, 40.0, 0, 0),
                (1.0, 1_000_000, 50.0, 700, 7),
                (2.0, 2_000_000, 60.0, 1400, 10),
                // After the 2 s window: ignored.
                (3.0, 2_100_000, 500.0, 1500, 200),
            ],
        );
        let m = measure(&p, 0.0, 2.0).unwrap();
        assert_eq!((m.retransmitted, m.data_packets), (Some(10), Some(1400)));
        assert!((m.retransmitted_fraction().unwrap() - 10.0 / 1400.0).abs() < 1e-12);
        // 2 MB in 2 s; the srtt median of 40, 50, 60 (not the rtt_ms
        // column's 99, nor the post-window 500).
        assert!((m.goodput_mbps - 8.0).abs() < 1e-9);
        assert_eq!(m.rtt_median_ms, Some(50.0));
        // runner::stats::quantile interpolates (the one rule every report
        // uses): 0.95 of the way from 40 to 60 over two steps is 59.
        assert_eq!(m.rtt_p95_ms, Some(59.0));
    }

    #[test]
    fn no_packets_sent_gives_no_fraction() {
        let dir = tempfile::tempdir().unwrap();
        let p = csv(dir.path(), &[(0.0, 0, 40.0, 0, 0)]);
        let m = measure(&p, 0.0, 1.0).unwrap();
        assert_eq!(m.retransmitted_fraction(), None);
        assert_eq!(m.goodput_mbps, 0.0);
    }

    #[test]
    fn a_late_flow_start_is_moved_to_the_origin() {
        // A simulated flow starting at 1.5 s: its samples before then do
        // not exist, and times count from its start.
        let dir = tempfile::tempdir().unwrap();
        let p = csv(
            dir.path(),
            &[
                (1.5, 0, 40.0, 0, 0),
                (2.5, 1_250_000, 45.0, 900, 0),
                (3.5, 2_500_000, 45.0, 1800, 0),
            ],
        );
        let m = measure(&p, 1.5, 2.0).unwrap();
        // 2.5 MB in the 2 s since the start: 10 Mbit/s, not 2.5 MB over
        // 3.5 s of file time.
        assert!((m.goodput_mbps - 10.0).abs() < 1e-9);
        assert_eq!(m.rtt.first().map(|p| p.0), Some(0.0));
        assert!((m.rtt.last().unwrap().0 - 2.0).abs() < 1e-9);
    }

    #[test]
    fn udp_packets_carry_ip_udp_and_datagram_headers() {
        // IPv4 20 + UDP 8 + the transport's header 18 (version, type,
        // connection id, packet number) + the data frame's chunk index 8
        // and length 2, around a 1400-byte chunk.
        assert_eq!(
            udp_packet_size(),
            PacketSize {
                payload: 1400,
                header: 56
            }
        );
    }

    #[test]
    fn kernel_packet_size_comes_from_the_probe() {
        let with_ts = serde_json::json!({"mss": 1448, "pmtu": 1500});
        assert_eq!(
            kernel_packet_size(Some(&with_ts)),
            PacketSize {
                payload: 1448,
                header: 52
            }
        );
        let no_ts = serde_json::json!({"mss": 1460, "pmtu": 1500});
        assert_eq!(kernel_packet_size(Some(&no_ts)).header, 40);
        // Missing or nonsensical figures fall back to 1448 + 52.
        let bad = serde_json::json!({"mss": 1500, "pmtu": 1500});
        assert_eq!(kernel_packet_size(Some(&bad)), KERNEL_DEFAULT);
        assert_eq!(kernel_packet_size(None), KERNEL_DEFAULT);
    }

    #[test]
    fn s2n_packets_carry_quic_headers_around_the_measured_payload() {
        // 12 MB over 8500 packets of which 100 were lost: 1429 bytes each.
        let s =
            serde_json::json!({"bytes": 12_003_600u64, "packets_sent": 8500, "packets_lost": 100});
        assert_eq!(
            s2n_packet_size(Some(&s)),
            PacketSize {
                payload: 1429,
                header: 71
            }
        );
        // Too few packets to tell, or a figure no 1500-byte packet holds:
        // a full packet.
        let few = serde_json::json!({"bytes": 1000, "packets_sent": 10});
        let big = serde_json::json!({"bytes": 15_000_000u64, "packets_sent": 10_000});
        for s in [Some(&few), Some(&big), None] {
            assert_eq!(
                s2n_packet_size(s),
                PacketSize {
                    payload: 1429,
                    header: 71
                }
            );
        }
    }

    #[test]
    fn each_algorithm_has_its_kernel_counterpart_or_a_reason() {
        use congestion::{Algorithm, Bbr3Profile, Bbr3Signals, Config as CcConfig};
        let with = |a: Algorithm| CcConfig {
            algorithm: a,
            ..CcConfig::default()
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
        b3.bbr3.profile = Bbr3Profile::LinuxV3;
        assert!(kernel_counterpart(&b3)
            .unwrap_err()
            .contains("signals = \"exact\""));
        b3.bbr3.signals = Bbr3Signals::StockKernel;
        assert_eq!(kernel_counterpart(&b3).unwrap(), "bbrlab_bbr3");
        assert!(kernel_counterpart(&with(Algorithm::BbrJitter))
            .unwrap_err()
            .contains("no `bbr-jitter`"));
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

    #[test]
    fn the_senders_summary_is_found_among_the_emulators_output() {
        let out = "emu: path up\n{\"bytes\":5,\"goodput_bps\":1.0}\n{\"cc\":\"bbr\",\"pmtu\":1500,\"mss\":1448}\nnot json\n";
        let v = json_line_with(out, "pmtu").unwrap();
        assert_eq!(v["mss"].as_u64(), Some(1448));
        assert!(json_line_with(out, "datagrams_per_syscall").is_none());
    }

    /// A scenario's cubic (HyStart++ by default) is told apart from
    /// kernel cubic; with Linux's HyStart, or without HyStart, or another
    /// algorithm, nothing is said.
    #[test]
    fn a_cubic_flow_on_hystart_plus_plus_gets_a_note_against_kernel_cubic() {
        use congestion::{Algorithm, Config, HyStartVariant};
        let mut c = Config::new(Algorithm::Cubic);
        let note = counterpart_note(&c).expect("a note");
        assert!(note.contains("hystart_variant = \"linux\""), "{note}");
        c.cubic.hystart_variant = HyStartVariant::Linux;
        assert_eq!(counterpart_note(&c), None);
        c.cubic.hystart_variant = HyStartVariant::Rfc9406;
        c.cubic.hystart = false;
        assert_eq!(counterpart_note(&c), None);
        assert_eq!(counterpart_note(&Config::new(Algorithm::Bbr)), None);
    }
}
