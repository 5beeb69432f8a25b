//! `bbrlab bench`: the simulator's speed on the standard dumbbell
//! (`testbed::sim_bench`), and with `--transport` the UDP transport's cost
//! against quinn's.

use testbed::child::{finish, free_tcp_port, free_udp_port, spawn, Output};
use testbed::quic_bulk::QuicCommands;
use testbed::summaries::{self, QuicSendSummary, UdpSendSummary};

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
