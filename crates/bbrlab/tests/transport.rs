//! bbrlab's UDP transport (`bbrlab send` / `bbrlab recv`): intact data
//! with every algorithm and under loss with reordering, performance against
//! Linux's kernel BBR on the same emulated path, and fault handling. The
//! emulator tests need root and run one at a time (see `common`).

mod common;
use common::*;
use std::net::UdpSocket;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MB20: &str = "20000000";

fn udp_transfer(
    path: &[&str],
    cc: &str,
    what: &str,
    timeout: u32,
) -> (serde_json::Value, serde_json::Value) {
    let (ok, out, err) = emu(
        path,
        &format!("{BIN} recv --listen {{server}}:5202 --idle-timeout 10s"),
        &format!("{BIN} send --to {{server}}:5202 --cc {cc} {what} --quiet --idle-timeout 10s"),
        timeout,
    );
    assert!(ok, "{cc}: emu failed\n{out}\n{err}");
    let (s, r) = (json_with(&out, "\"cc\""), json_with(&out, "\"duplicates\""));
    // A duplicate at the receiver can only come from a retransmission.
    assert!(
        r["duplicates"].as_u64() <= s["retransmissions"].as_u64(),
        "{cc}: {r} from {s}"
    );
    (s, r)
}

/// [`udp_transfer`] of a performance test on a path of `rtt_ms`, run
/// again while the emulator stalled ([`unstalled`]): a run that stalled
/// says more about the host than about the transport. The flag is false
/// when every attempt stalled.
fn udp_transfer_unstalled(
    path: &[&str],
    rtt_ms: f64,
    cc: &str,
    what: &str,
    timeout: u32,
) -> ((serde_json::Value, serde_json::Value), bool) {
    unstalled(&format!("udp {cc}"), rtt_ms, |stats| {
        let mut args = path.to_vec();
        let stats = stats.to_str().expect("a UTF-8 temporary path");
        args.extend(["--stats", stats]);
        udp_transfer(&args, cc, what, timeout)
    })
}

/// 20 MB over 20 Mbit/s / 40 ms / 100 packets arrives intact (every byte
/// checked against the pattern, length and SHA-256) with each algorithm.
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn twenty_megabytes_arrive_intact_with_every_algorithm() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    for cc in ["bbr", "bbr-jitter", "cubic", "reno"] {
        let (s, r) = udp_transfer(
            &["--rate", "20mbit", "--rtt", "40ms", "--queue", "100"],
            cc,
            &format!("--bytes {MB20}"),
            90,
        );
        assert_eq!(s["bytes"].as_u64(), Some(20_000_000), "{cc}");
        assert_eq!(r["bytes"].as_u64(), Some(20_000_000), "{cc}");
    }
}

/// The same 20 MB with 5 % random loss and 0–5 ms jitter that reorders
/// packets.
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn twenty_megabytes_arrive_intact_through_loss_and_reordering() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    let dir = tempfile::tempdir().unwrap();
    let sc = dir.path().join("lossy.toml");
    std::fs::write(
        &sc,
        path_20mbit_40ms(
            "60s",
            "loss = 0.05\njitter = { uniform = { min = \"0ms\", max = \"5ms\" }, reorder = true }",
        ),
    )
    .unwrap();
    let (s, r) = udp_transfer(
        &["--scenario", sc.to_str().unwrap()],
        "bbr",
        &format!("--bytes {MB20}"),
        120,
    );
    assert_eq!(s["bytes"].as_u64(), Some(20_000_000));
    assert_eq!(r["bytes"].as_u64(), Some(20_000_000));
    assert!(
        s["retransmissions"].as_u64().unwrap() > 0,
        "the loss was real"
    );
}

/// On 20 Mbit/s / 40 ms / 100 packets our BBR over UDP reaches ≥ 90 % of
/// the link with a median RTT ≤ 1.5 × 40 ms (or within 10 % of the
/// kernel's BBR on a busy host), and its goodput is within 10 % of the
/// kernel's BBR measured in the same test run.
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn udp_bbr_fills_the_link_like_kernel_bbr() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    let path = ["--rate", "20mbit", "--rtt", "40ms", "--queue", "100"];
    let ((ours, _), clean) = udp_transfer_unstalled(&path, 40.0, "bbr", "--duration 10s", 60);
    let kernel = kernel_transfer("bbr", "20mbit", "40ms", "100", None, 10);
    let g = ours["goodput_bps"].as_f64().unwrap();
    let k = kernel["goodput_bps"].as_f64().unwrap();
    let rtt = ours["rtt_median_ms"].as_f64().unwrap();
    let k_rtt = kernel["rtt_median_ms"].as_f64().unwrap();
    assert!(g >= 0.9 * 20e6, "udp bbr {g}");
    // At most 1.5 × 40 ms, or 10 % over the kernel's BBR on the same path
    // in the same test when the host held a queue into both: stalls under
    // the retry limit still bunch ACKs, and BBR's ACK-aggregation
    // allowance then keeps a standing queue (seen: 60.4 ms for ours in a
    // run that stalled 1-2 % of the time, 49-52 ms on a quiet host). When
    // all three attempts stalled over the limit (75 ms against the
    // kernel's 57 in one such run: the transport's own processes lose the
    // CPU too) the RTT describes the host and is reported, not judged;
    // goodput still is.
    if clean {
        assert!(
            rtt <= (1.5 * 40.0f64).max(1.1 * k_rtt),
            "udp bbr median RTT {rtt} (kernel bbr {k_rtt})"
        );
    } else {
        eprintln!(
            "udp bbr median RTT {rtt} ms (kernel bbr {k_rtt}): every attempt stalled; not judged"
        );
    }
    assert!((g / k - 1.0).abs() <= 0.10, "udp {g} vs kernel {k}");
}

/// 1 % random loss on 20 Mbit/s / 100 ms: our BBR gets more than 5× our
/// CUBIC, and is within 20 % of the kernel's BBR.
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn udp_bbr_tolerates_loss_like_kernel_bbr() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    let path = [
        "--rate", "20mbit", "--rtt", "100ms", "--queue", "250", "--loss", "1%",
    ];
    let ((bbr, _), _) = udp_transfer_unstalled(&path, 100.0, "bbr", "--duration 12s", 60);
    let ((cubic, _), _) = udp_transfer_unstalled(&path, 100.0, "cubic", "--duration 12s", 60);
    let kernel = kernel_transfer("bbr", "20mbit", "100ms", "250", Some("1%"), 12);
    let (b, c, k) = (
        bbr["goodput_bps"].as_f64().unwrap(),
        cubic["goodput_bps"].as_f64().unwrap(),
        kernel["goodput_bps"].as_f64().unwrap(),
    );
    assert!(b > 5.0 * c, "bbr {b} vs cubic {c}");
    assert!((b / k - 1.0).abs() <= 0.20, "udp bbr {b} vs kernel bbr {k}");
}

fn spawn_recv(port: u16, idle: &str) -> std::process::Child {
    Command::new(BIN)
        .args([
            "recv",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--idle-timeout",
            idle,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Killing the receiver mid-transfer makes the sender exit with an error
/// within its idle timeout (2 s here; 4 s allowed for start-up and the
/// loop's 50 ms wake-ups).
#[test]
fn sender_fails_cleanly_when_the_receiver_dies() {
    let mut recv = spawn_recv(5311, "30s");
    std::thread::sleep(Duration::from_millis(200));
    let mut send = Command::new(BIN)
        .args([
            "send",
            "--to",
            "127.0.0.1:5311",
            "--duration",
            "60s",
            "--idle-timeout",
            "2s",
            "--quiet",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    recv.kill().unwrap();
    let _ = recv.wait();
    let t0 = Instant::now();
    let mut status = None;
    while t0.elapsed() < Duration::from_secs(10) {
        if let Some(s) = send.try_wait().unwrap() {
            status = Some(s);
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    if status.is_none() {
        let _ = send.kill();
    }
    let out = send.wait_with_output().unwrap();
    let waited = t0.elapsed();
    assert!(status.is_some(), "the sender did not give up");
    assert!(!out.status.success());
    assert!(waited <= Duration::from_secs(4), "took {waited:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("silent") || err.contains("refused"), "{err}");
}

/// Garbage and stray datagrams sprayed at the receiver during a transfer
/// are dropped and counted; the transfer still arrives intact.
#[test]
fn malformed_and_stray_datagrams_are_dropped_and_counted() {
    let recv = spawn_recv(5312, "10s");
    std::thread::sleep(Duration::from_millis(200));
    let send = Command::new(BIN)
        .args([
            "send",
            "--to",
            "127.0.0.1:5312",
            "--bytes",
            "30000000",
            "--quiet",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A second process's worth of junk: random bytes, and well-formed data
    // packets of another connection.
    let junk = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut other = Vec::new();
    transport::wire::encode(
        &transport::wire::Packet {
            conn_id: 1,
            pn: 0,
            frame: transport::wire::Frame::Data {
                chunk: 0,
                payload: &[0xEE; 100],
            },
        },
        &mut other,
    );
    for i in 0..2000u32 {
        let garbage: Vec<u8> = (0..(i % 300) + 1).map(|b| (b * 31 + i) as u8).collect();
        let _ = junk.send_to(&garbage, "127.0.0.1:5312");
        let _ = junk.send_to(&other, "127.0.0.1:5312");
        if i % 100 == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let s = send.wait_with_output().unwrap();
    let r = recv.wait_with_output().unwrap();
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let rj = json_with(&String::from_utf8_lossy(&r.stdout), "\"duplicates\"");
    assert_eq!(rj["bytes"].as_u64(), Some(30_000_000));
    let dropped = rj["malformed"].as_u64().unwrap() + rj["stray"].as_u64().unwrap();
    assert!(dropped > 0, "{rj}");
}

/// `bbrlab compare` runs one scenario over the UDP transport and over
/// kernel TCP through the emulator, and in the simulator once per real
/// source with that source's packet size, and summarises all four with one
/// statistic per figure. Bounds are loose sanity limits on the 20 Mbit/s /
/// 40 ms path (each real source's performance is asserted tightly in the
/// tests above): every source moved at least half the link rate, so its
/// row came from a real transfer; srtt medians lie between the 40 ms
/// propagation delay and the most a full buffer allows (40 ms + 100
/// packets × 1.5 kB at 20 Mbit/s = 100 ms, plus 5 ms for the emulator and
/// the hosts; kernel BBR's median over this 4 s run was once 76 ms in CI);
/// and min_rtt is within 5 ms of 40 ms. The packet sizes are facts of the
/// path: a 1500-byte MTU gives kernel TCP with timestamps 1448 payload
/// bytes and 52 of headers, and the transport's 1400-byte chunk rides with
/// 56 (IPv4 20, UDP 8, its own 28); a simulator given 1448 + 52 cannot
/// deliver more payload than 20 Mbit/s × 1448/1500 = 19.31 Mbit/s.
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn compare_overlays_simulator_udp_and_kernel() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    let dir = tempfile::tempdir().unwrap();
    let sc = dir.path().join("cmp.toml");
    std::fs::write(&sc, path_20mbit_40ms("4s", "")).unwrap();
    let out = dir.path().join("out");
    let o = Command::new(BIN)
        .args([
            "compare",
            sc.to_str().unwrap(),
            "--with",
            "kernel,udp",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("compare.json")).unwrap()).unwrap();
    assert!(doc["statistics"]["rtt"].as_str().unwrap().contains("srtt"));
    assert!(stdout.contains("RTT: smoothed RTT (srtt"), "{stdout}");
    let rows = doc["sources"].as_array().unwrap();
    let labels: Vec<&str> = rows.iter().map(|r| r["source"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        [
            "simulator as kernel (bbr)",
            "kernel TCP (bbr)",
            "simulator as udp (bbr)",
            "UDP transport (bbr)"
        ]
    );
    let sizes: Vec<(u64, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["payload_bytes_per_packet"].as_u64().unwrap(),
                r["header_bytes_per_packet"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(sizes, [(1448, 52), (1448, 52), (1400, 56), (1400, 56)]);
    assert!(
        rows[0]["goodput_mbps"].as_f64().unwrap() <= 19.4,
        "{}",
        rows[0]
    );
    for r in rows {
        let g = r["goodput_mbps"].as_f64().unwrap();
        let p50 = r["srtt_median_ms"].as_f64().unwrap();
        let min_rtt = r["min_rtt_ms"].as_f64().unwrap();
        assert!((10.0..=20.5).contains(&g), "{r}");
        assert!((40.0..=105.0).contains(&p50), "{r}");
        assert!((40.0..=45.0).contains(&min_rtt), "{r}");
        // Every source counts data packets and their retransmissions.
        assert!(r["data_packets_sent"].as_u64().unwrap() > 1000, "{r}");
        let retx = r["retransmitted_fraction"].as_f64().unwrap();
        assert!((0.0..0.2).contains(&retx), "{r}");
        // Each printed row carries the same goodput.
        assert!(stdout.contains(&format!("{g:.2}")), "{stdout}");
    }
    // The kernel row says whether the hosts limited it.
    let host = &rows[1]["host"];
    let busy = host["busy_s"].as_f64().unwrap();
    assert!((2.0..=6.0).contains(&busy), "{host}");
    let limited = host["host_limited_fraction"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&limited), "{host}");
    assert!(
        host["delivery_rate_median_mbps"].as_f64().unwrap() > 5.0,
        "{host}"
    );
    for src in ["Δ kernel TCP (bbr)", "Δ UDP transport (bbr)"] {
        assert!(stdout.contains(src), "{stdout}");
    }
    // Recoveries where a source counts them: the simulator (its flow's
    // `loss_episodes`, `undos`) and kernel TCP (its namespaces' counters);
    // the UDP transport does not. Nothing is reordered on this path, so
    // kernel TCP's receiver discards nothing by PAWS.
    assert!(doc["statistics"]["recoveries"]
        .as_str()
        .unwrap()
        .contains("PAWS"));
    for (r, counted) in rows.iter().zip([true, true, true, false]) {
        assert_eq!(r["loss_episodes"].is_u64(), counted, "{r}");
        assert_eq!(r["undos"].is_u64(), counted, "{r}");
    }
    assert_eq!(
        rows[1]["paws_discarded_fraction"].as_f64(),
        Some(0.0),
        "{}",
        rows[1]
    );
    assert!(
        rows[0].get("paws_discarded_fraction").is_none(),
        "{}",
        rows[0]
    );
    for f in [
        "goodput.svg",
        "bw_estimate.svg",
        "min_rtt.png",
        "goodput.png",
        "rtt.svg",
        "sim-kernel/flows.csv",
        "sim-udp/flows.csv",
        "udp/flows.csv",
        "kernel/flows.csv",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let kernel_header = std::fs::read_to_string(out.join("kernel/flows.csv")).unwrap();
    let kernel_header = kernel_header.lines().next().unwrap();
    for c in [
        "srtt_ms",
        "retransmitted_packets",
        "delivery_rate_bps",
        "rwnd_limited_us",
    ] {
        assert!(kernel_header.contains(c), "{kernel_header}");
    }
}
