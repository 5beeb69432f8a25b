//! `bbrlab bench`: the simulator's speed on the standard dumbbell, and
//! with `--transport` the UDP transport's cost against quinn's.
//!
//! One BBR flow over 100 Mbit/s with a 40 ms RTT and a 2-BDP drop-tail
//! buffer, simulated for 60 s by default. Reports simulated packets and
//! events per wall-clock second. The baseline in the same run is the
//! identical scenario with CUBIC, so the figures can be compared as a ratio
//! on a machine whose speed drifts. BBRv3 (`bbr3`) runs the same path, and
//! is reported as its own ratio against the same CUBIC run.

use scenario::builder::{Flow, Queue, ScenarioBuilder};
use std::path::Path;
use std::time::{Duration, Instant};
use testbed::child::{finish, free_tcp_port, free_udp_port, spawn, Output};
use testbed::quic_bulk::QuicCommands;
use testbed::summaries::{self, QuicSendSummary, UdpSendSummary};

/// C2's path: 10 Gbit/s, 100 ms RTT, 1 % random loss, a 1.2-BDP buffer.
fn large_path(algorithm: &str) -> String {
    one_flow(algorithm, 10e9, 100, 100_000, Some(0.01))
        .duration(Duration::from_secs(30))
        .to_toml()
}

/// One flow of `algorithm` over `rate` bit/s, an RTT of `rtt_ms` split
/// evenly and a `queue`-packet buffer, without time series (what the
/// benchmark times is the simulation).
fn one_flow(
    algorithm: &str,
    rate: f64,
    rtt_ms: u64,
    queue: u64,
    loss: Option<f64>,
) -> ScenarioBuilder {
    let half = Duration::from_millis(rtt_ms / 2);
    ScenarioBuilder::bottleneck(rate, half, Queue::packets(queue), loss)
        .sample_interval(Duration::ZERO)
        .flow(Flow::new(algorithm))
}

/// The standard dumbbell: 100 Mbit/s, 40 ms, a 2-BDP (667-packet) buffer.
fn dumbbell(algorithm: &str, seconds: u64) -> String {
    one_flow(algorithm, 100e6, 40, 667, None)
        .duration(Duration::from_secs(seconds))
        .to_toml()
}

/// Simulated seconds for a run of at least `min_wall` wall-clock seconds,
/// from a trial of `seconds` that took `wall`: scaled up with a tenth to
/// spare, never below `seconds`, at most an hour.
fn seconds_for(seconds: u64, wall: f64, min_wall: f64) -> u64 {
    if wall >= min_wall {
        return seconds;
    }
    let scale = min_wall * 1.1 / wall.max(1e-6);
    ((seconds as f64 * scale).ceil() as u64).clamp(seconds, 3600)
}

/// One simulation of the dumbbell with `algorithm` for `seconds`.
struct Sample {
    wall: f64,
    summary: netsim::Summary,
}

fn simulate_dumbbell(algorithm: &str, seconds: u64) -> Result<Sample, String> {
    let text = dumbbell(algorithm, seconds);
    let sc = scenario::parse(&text, "<bench>", Path::new("."), Path::new("bench.toml"))
        .map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    let summary =
        netsim::run(&sc.runs[0].config, &mut netsim::NoRecorder).map_err(|e| e.to_string())?;
    Ok(Sample {
        wall: t0.elapsed().as_secs_f64(),
        summary,
    })
}

/// Runs the benchmark and prints its figures: `reps` rounds of bbr, cubic
/// and bbr3 in turn (so a machine's drift falls on all three alike), each
/// simulation long enough to take `min_wall` seconds, then the median and
/// range of each rate and of the per-round ratios.
pub fn run(seconds: u64, large: bool, reps: u32, min_wall: f64) -> Result<(), String> {
    if seconds == 0 || seconds > 3600 {
        return Err(format!("--seconds {seconds}: allowed 1 to 3600"));
    }
    if reps == 0 || reps > 50 {
        return Err(format!("--reps {reps}: allowed 1 to 50"));
    }
    if !(0.0..=600.0).contains(&min_wall) {
        return Err(format!("--min-wall {min_wall}: allowed 0 to 600 seconds"));
    }
    // bbr3 last, so the bbr/cubic pair keeps the order (and the cache
    // state) it had before bbr3 existed.
    let algorithms = ["bbr", "cubic", "bbr3"];
    // A trial of the slowest algorithm fixes the simulated time: the
    // same for all three, so their rates compare.
    let trial = simulate_dumbbell("bbr3", seconds)?;
    let seconds = seconds_for(seconds, trial.wall, min_wall);
    println!(
        "dumbbell: 100 Mbit/s, 40 ms RTT, 667-packet buffer, {seconds} s simulated per run \
         (each at least {min_wall} s of wall time), one flow; {reps} round(s) of {}",
        algorithms.join(", ")
    );
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); algorithms.len()];
    for round in 1..=reps {
        for (i, alg) in algorithms.iter().enumerate() {
            let Sample { wall, summary } = simulate_dumbbell(alg, seconds)?;
            let pps = summary.packets_simulated as f64 / wall;
            let all = (summary.packets_simulated + summary.ack_packets_simulated) as f64 / wall;
            println!(
                "round {round}/{reps} {alg:<6} {:>9} data + {:>9} ACK packets, {:>9} events in {wall:.3} s: \
                 {:.2} M data packets/s, {:.2} M packets/s (data+ACK), {:.2} M events/s, goodput {:.1} Mbit/s",
                summary.packets_simulated,
                summary.ack_packets_simulated,
                summary.events,
                pps / 1e6,
                all / 1e6,
                summary.events as f64 / wall / 1e6,
                summary.flows[0].goodput_bps / 1e6
            );
            rates[i].push(pps);
        }
    }
    for (alg, r) in algorithms.iter().zip(&rates) {
        let (m, lo, hi) = stats::median_and_range(r);
        println!(
            "{alg:<6} median {:.2} M data packets/s (range {:.2}–{:.2}, {} runs)",
            m / 1e6,
            lo / 1e6,
            hi / 1e6,
            r.len()
        );
    }
    for (i, name) in [(0, "bbr/cubic"), (2, "bbr3/cubic")] {
        let ratios: Vec<f64> = rates[i].iter().zip(&rates[1]).map(|(a, b)| a / b).collect();
        let (m, lo, hi) = stats::median_and_range(&ratios);
        println!("{name} speed ratio: median {m:.2} (range {lo:.2}–{hi:.2}, per round)");
    }
    if large {
        let before = hostfacts::peak_rss_kib();
        let sc = scenario::parse(
            &large_path("bbr"),
            "<bench>",
            Path::new("."),
            Path::new("bench.toml"),
        )
        .map_err(|e| e.to_string())?;
        let t0 = Instant::now();
        let summary =
            netsim::run(&sc.runs[0].config, &mut netsim::NoRecorder).map_err(|e| e.to_string())?;
        let wall = t0.elapsed().as_secs_f64();
        let kib = |v: Option<u64>| {
            v.map_or("unknown".to_string(), |k| {
                format!("{:.1} MiB", k as f64 / 1024.0)
            })
        };
        println!(
            "C2 path (10 Gbit/s, 100 ms, 1 % loss, 30 s, bbr): {} data packets in {wall:.2} s ({:.2} M/s), \
             goodput {:.0} Mbit/s; peak RSS before {} after {}",
            summary.packets_simulated,
            summary.packets_simulated as f64 / wall / 1e6,
            summary.flows[0].goodput_bps / 1e6,
            kib(before),
            kib(hostfacts::peak_rss_kib()),
        );
    }
    Ok(())
}

/// One transfer's figures.
struct Transfer {
    label: String,
    bytes: u64,
    goodput_bps: f64,
    send_cpu_s: f64,
    recv_cpu_s: f64,
    /// Extra detail for the printed line.
    note: String,
}

impl Transfer {
    /// Bits moved per CPU-second of sender and receiver together.
    fn bits_per_cpu_s(&self) -> f64 {
        self.bytes as f64 * 8.0 / (self.send_cpu_s + self.recv_cpu_s).max(1e-9)
    }

    fn print(&self) {
        println!(
            "  {:<22} {:>6.2} Gbit/s  CPU send {:>5.2} s recv {:>5.2} s  {:>5.2} Gbit per CPU-second  {}",
            self.label,
            self.goodput_bps / 1e9,
            self.send_cpu_s,
            self.recv_cpu_s,
            self.bits_per_cpu_s() / 1e9,
            self.note
        );
    }
}

/// `bbrlab send` → `bbrlab recv` on loopback as two processes (this
/// binary), BBR, a pattern for `secs`.
fn bbrlab_transfer(secs: std::time::Duration, gso: bool) -> Result<Transfer, String> {
    use std::process::Command;
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let port = free_udp_port()?;
    let addr = format!("127.0.0.1:{port}");
    let deadline = std::time::Instant::now() + secs + std::time::Duration::from_secs(60);
    let recv = spawn(
        Command::new(&exe)
            .args([
                "recv",
                "--listen",
                &addr,
                "--window",
                &(64u64 << 20).to_string(),
            ])
            .args(["--idle-timeout", "5s", "--accept-timeout", "20s"]),
        "bbrlab recv",
        Output::Temporary,
    )?;
    std::thread::sleep(std::time::Duration::from_millis(100));
    let mut send = Command::new(&exe);
    send.args(["send", "--to", &addr, "--cc", "bbr", "--quiet"])
        .args(["--duration", &format!("{}ms", secs.as_millis())]);
    if !gso {
        send.arg("--no-gso");
    }
    let send = spawn(&mut send, "bbrlab send", Output::Temporary)?;
    let s = finish(send, deadline);
    let r = finish(recv, deadline)?;
    let s = s?;
    let v: UdpSendSummary = summaries::line_with(&s.stdout, "datagrams_per_syscall")?
        .ok_or_else(|| format!("bbrlab send printed no summary: {:?}", s.stdout.trim()))?;
    Ok(Transfer {
        label: format!("bbrlab bbr, {}", if gso { "GSO" } else { "no GSO" }),
        bytes: v.bytes,
        goodput_bps: v.goodput_bps,
        send_cpu_s: s.cpu_s,
        recv_cpu_s: r.cpu_s,
        note: format!(
            "{:.1} datagrams/send call, {} retransmissions, pacing error p50 {:.1} µs p99 {:.1} µs",
            v.datagrams_per_syscall,
            v.retransmissions,
            v.pacing_error_p50_us.unwrap_or(f64::NAN),
            v.pacing_error_p99_us.unwrap_or(f64::NAN),
        ),
    })
}

/// The figures of `quic-bulk send`'s summary line
/// ([`QuicSendSummary`]): bytes, goodput (bytes acknowledged over the
/// seconds from the end of the handshake to the last acknowledgement),
/// and the line's detail.
fn quic_bulk_figures(stdout: &str) -> Result<(u64, f64, String), String> {
    let v: QuicSendSummary = summaries::line_with(stdout, "quic_stack")?
        .ok_or_else(|| format!("quic-bulk printed no summary: {:?}", stdout.trim()))?;
    let srtt = v
        .srtt_median_ms
        .map_or("unknown".to_string(), |x| format!("{x:.2} ms"));
    Ok((
        v.bytes,
        v.goodput_bps,
        format!("{} lost packets, median srtt {srtt}", v.packets_lost),
    ))
}

/// quic-bulk's sampling interval for the transfers' srtt median (its
/// own default; no time series is written).
const QUIC_SAMPLE_MS: u64 = 10;

/// `quic-bulk send` → `quic-bulk recv` on loopback over quinn 0.11 with
/// quinn's own controller `cc` (`bbr`, `cubic`), for `seconds`, with the
/// command lines [`QuicCommands`] builds for `quic` and `compare` too.
fn quinn_transfer(bin: &std::path::Path, seconds: u64, cc: &str) -> Result<Transfer, String> {
    use std::process::Command;
    let port = free_udp_port()?;
    let addr = format!("127.0.0.1:{port}");
    let dir =
        std::env::temp_dir().join(format!("bbrlab-bench-quinn-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let cert = dir.join("cert.pem");
    let _ = std::fs::remove_file(&cert);
    let cc_arg = format!("quinn:{cc}");
    let cmds = QuicCommands {
        quic_bulk: bin,
        stack: "quinn",
        cc: &cc_arg,
        extra: "",
        server: &addr,
        cert: &cert,
        seconds,
        interval_ms: QUIC_SAMPLE_MS,
        log: None,
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds + 60);
    // Both are stopped and reaped however this returns (`Running`'s drop
    // stops one not waited for); the directory is removed after them.
    let transfer = || -> Result<Transfer, String> {
        let server = spawn(
            Command::new(bin).args(cmds.recv_args()),
            "quic-bulk recv",
            Output::Temporary,
        )?;
        let client = spawn(
            Command::new(bin).args(cmds.send_args()),
            "quic-bulk send",
            Output::Temporary,
        )?;
        let c = finish(client, deadline);
        let s = finish(server, deadline);
        let (c, s) = (c?, s?);
        let (bytes, goodput_bps, note) = quic_bulk_figures(&c.stdout)?;
        Ok(Transfer {
            label: format!("quinn {cc}"),
            bytes,
            goodput_bps,
            send_cpu_s: c.cpu_s,
            recv_cpu_s: s.cpu_s,
            note,
        })
    };
    let t = transfer();
    let _ = std::fs::remove_dir_all(&dir);
    t
}

/// min–max of `v` as "a–b" (or one figure).
fn range(v: &[f64]) -> String {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if (hi - lo).abs() < 0.005 {
        format!("{lo:.2}")
    } else {
        format!("{lo:.2}–{hi:.2}")
    }
}

/// `bbrlab bench --transport`: bbrlab's UDP transport (`send`/`recv`, BBR,
/// GSO) against quinn's BBR and CUBIC (`quic-bulk --stack quinn`, QUIC
/// with AES-GCM)
/// on loopback, `runs` rounds of `seconds` each, every transfer two
/// processes whose CPU time is read from `wait4`. Ratios are taken within
/// each round, so a machine whose speed drifts between rounds still gives
/// comparable figures. Then, once, bbrlab without GSO and kernel TCP BBR.
pub fn transport(
    seconds: u64,
    runs: u32,
    quic_bulk: Option<std::path::PathBuf>,
) -> Result<(), String> {
    if seconds == 0 || seconds > 600 {
        return Err(format!("--seconds {seconds}: allowed 1 to 600"));
    }
    if runs == 0 || runs > 20 {
        return Err(format!("--runs {runs}: allowed 1 to 20"));
    }
    // quic-bulk runs quinn's controllers for the baseline.
    let quinn = testbed::quic_bulk::locate(quic_bulk.as_deref())?;
    let secs = std::time::Duration::from_secs(seconds);
    println!(
        "loopback, {seconds} s per transfer, {runs} round(s); CPU = user + system of sender and receiver processes"
    );
    let mut ratios: Vec<[f64; 4]> = Vec::new();
    for round in 0..runs {
        println!("round {}:", round + 1);
        // Rotate the order so no stack always runs first.
        let mut order = ["ours", "quinn-bbr", "quinn-cubic"];
        order.rotate_left(round as usize % 3);
        let (mut ours, mut qbbr, mut qcubic) = (None, None, None);
        for which in order {
            match which {
                "ours" => ours = Some(bbrlab_transfer(secs, true)?),
                "quinn-bbr" => qbbr = Some(quinn_transfer(&quinn, seconds, "bbr")?),
                _ => qcubic = Some(quinn_transfer(&quinn, seconds, "cubic")?),
            }
        }
        let (ours, qbbr, qcubic) = (ours.expect("ran"), qbbr.expect("ran"), qcubic.expect("ran"));
        for t in [&ours, &qbbr, &qcubic] {
            t.print();
        }
        let r = [
            ours.goodput_bps / qbbr.goodput_bps,
            ours.bits_per_cpu_s() / qbbr.bits_per_cpu_s(),
            ours.goodput_bps / qcubic.goodput_bps,
            ours.bits_per_cpu_s() / qcubic.bits_per_cpu_s(),
        ];
        println!(
            "  bbrlab / quinn bbr: goodput {:.2}, Gbit per CPU-second {:.2}; bbrlab / quinn cubic: goodput {:.2}, per CPU-second {:.2}",
            r[0], r[1], r[2], r[3]
        );
        ratios.push(r);
    }
    let col = |i: usize| ratios.iter().map(|r| r[i]).collect::<Vec<_>>();
    println!(
        "bbrlab / quinn bbr over {runs} round(s): goodput {}, Gbit per CPU-second {}",
        range(&col(0)),
        range(&col(1))
    );
    println!(
        "bbrlab / quinn cubic over {runs} round(s): goodput {}, Gbit per CPU-second {}",
        range(&col(2)),
        range(&col(3))
    );
    println!("once more, for reference:");
    let no_gso = bbrlab_transfer(secs, false)?;
    no_gso.print();
    let tcp_addr = std::net::SocketAddr::from(([127, 0, 0, 1], free_tcp_port()?));
    let tcp = std::thread::scope(|s| -> Result<f64, String> {
        let r = s.spawn(|| tcp_probe::recv(tcp_addr, std::time::Duration::from_secs(5)));
        std::thread::sleep(std::time::Duration::from_millis(200));
        let sent = tcp_probe::send(&tcp_probe::SendOptions {
            to: tcp_addr,
            cc: "bbr".into(),
            duration_s: secs.as_secs_f64(),
            bytes: None,
            interval: std::time::Duration::from_millis(100),
            log: None,
        })?;
        r.join().map_err(|_| "receiver panicked".to_string())??;
        Ok(sent.goodput_bps)
    })?;
    println!("  kernel TCP bbr         {:>6.2} Gbit/s", tcp / 1e9);
    Ok(())
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_trial_is_scaled_to_the_wall_time_wanted() {
        // 10 s simulated in 0.1 s: 2 s of wall time needs 220 s.
        assert_eq!(seconds_for(10, 0.1, 2.0), 220);
        // Already long enough, or no minimum: unchanged.
        assert_eq!(seconds_for(10, 3.0, 2.0), 10);
        assert_eq!(seconds_for(10, 0.1, 0.0), 10);
        // Never more than an hour.
        assert_eq!(seconds_for(600, 0.001, 2.0), 3600);
    }

    /// `bench --transport` reads quic-bulk's summary as its type: the
    /// bytes and goodput it reports (not recomputed), the lost packets and
    /// srtt in the note; a line lacking a figure is an error naming it.
    #[test]
    fn quic_bulk_summary_maps_to_the_transfer() {
        let line = r#"{"quic_stack":"quinn","cc":"quinn:bbr","bytes":1250000,"seconds":0.5,"goodput_bps":20000000.0,"srtt_median_ms":0.25,"packets_sent":900,"packets_lost":3,"retransmit_fraction":0.0033,"origin":"end of the handshake"}"#;
        let (bytes, goodput, note) = quic_bulk_figures(&format!("{line}\n")).unwrap();
        assert_eq!(bytes, 1_250_000);
        assert_eq!(goodput, 20e6);
        assert!(
            note.contains("3 lost packets") && note.contains("0.25 ms"),
            "{note}"
        );
        let e =
            quic_bulk_figures(r#"{"quic_stack":"quinn","cc":"quinn:bbr","bytes":1}"#).unwrap_err();
        assert!(e.contains("missing field `seconds`"), "{e}");
        assert!(quic_bulk_figures("").is_err());
    }
}
