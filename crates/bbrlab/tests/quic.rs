//! `bbrlab quic` on loopback (no root): the orchestration against a
//! stand-in for quic-bulk (what bbrlab does with a short delivery, a
//! rejected controller, a missing program), then real transfers with
//! quic-bulk's s2n stack (its own BBRv2, and bbrlab's bbr through the
//! adapter), and a killed receiver reported by the sender.
//!
//! The real transfers are short (1 s each): they check bytes, rows and
//! files, never speed.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::*;

/// A stand-in for quic-bulk: the receiver prints its verdict, the sender
/// its summary and a one-row time series. `FAKE_MODE=short` makes the
/// receiver count one byte less; `--cc bogus` is rejected with exit 2, as
/// the real program rejects an unknown controller.
fn fake(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join("fake-quic-bulk");
    std::fs::write(
        &p,
        r#"#!/bin/sh
role=$1; shift
cc=""; log=""
while [ $# -gt 0 ]; do
  case "$1" in --cc) cc=$2; shift;; --log) log=$2; shift;; esac
  shift
done
if [ "$role" = recv ]; then
  b=1000; [ "$FAKE_MODE" = short ] && b=999
  echo "{\"role\":\"recv\",\"stack\":\"s2n\",\"bytes\":$b,\"intact\":true,\"seconds\":1.0}"
  exit 0
fi
if [ "$cc" = bogus ]; then
  echo "quic-bulk: --cc bogus: unknown controller; allowed: bbr, bbr-jitter, bbr3, cubic, reno, s2n:bbr2, s2n:cubic" >&2
  exit 2
fi
echo "time_s,flow,delivered_bytes" > "$log"
echo "{\"quic_stack\":\"s2n\",\"cc\":\"$cc\",\"bytes\":1000,\"seconds\":1.0,\"goodput_bps\":8000.0,\"srtt_median_ms\":0.25,\"packets_sent\":1,\"packets_lost\":0,\"retransmit_fraction\":0.0}"
"#,
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    wait_until_executable(&p);
    p
}

/// Runs the fresh script once, retrying while exec fails with ETXTBSY.
/// A child that another test thread forked while this one still had the
/// file open for writing holds a copy of that descriptor until its own
/// exec closes it; exec'ing the script meanwhile fails with "Text file
/// busy" (seen once in CI, in `bbrlab quic`'s spawn of it). Once one exec
/// succeeds no such child is left, and none can appear, as the writing
/// descriptor is closed. Bounded: 200 tries, 10 ms apart.
fn wait_until_executable(p: &Path) {
    const ETXTBSY: i32 = 26;
    for _ in 0..200 {
        match Command::new(p).arg("recv").output() {
            Err(e) if e.raw_os_error() == Some(ETXTBSY) => {
                std::thread::sleep(std::time::Duration::from_millis(10))
            }
            Err(e) => panic!("{}: {e}", p.display()),
            Ok(_) => return,
        }
    }
    panic!("{}: still busy after 2 s", p.display());
}

fn bbrlab(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(BIN)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn each_run_is_a_row_and_a_json_entry_with_its_time_series() {
    let d = tempfile::tempdir().unwrap();
    let qb = fake(d.path());
    let out = d.path().join("out");
    let o = bbrlab(
        &[
            "quic",
            "--quic-bulk",
            qb.to_str().unwrap(),
            "--cc",
            "s2n:bbr2,bbr",
            "--seconds",
            "1",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{stderr}");
    let rows: Vec<&str> = stdout.lines().filter(|l| l.starts_with("1 ")).collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    assert!(rows[0].contains("s2n-quic bbr2 (own)") && rows[0].contains("1000"));
    assert!(rows[1].contains("s2n-quic + bbrlab bbr"));
    // A progress line per run on stderr.
    assert_eq!(stderr.matches("quic: [").count(), 4, "{stderr}");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("quic.json")).unwrap()).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1]["cc"], "bbr");
    assert_eq!(runs[1]["controller"], "adapter");
    assert_eq!(runs[0]["controller"], "own");
    assert_eq!(runs[0]["bytes"], 1000);
    assert!(out.join("s2n-bbrlab-bbr/flows.csv").is_file());
    assert!(out.join("s2n-own-s2n-bbr2/flows.csv").is_file());
}

#[test]
fn a_receiver_that_counts_other_bytes_fails_the_run() {
    let d = tempfile::tempdir().unwrap();
    let qb = fake(d.path());
    let o = bbrlab(
        &[
            "quic",
            "--quic-bulk",
            qb.to_str().unwrap(),
            "--cc",
            "bbr",
            "--seconds",
            "1",
            "--out",
            d.path().join("o").to_str().unwrap(),
        ],
        &[("FAKE_MODE", "short")],
    );
    let e = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        e.contains("s2n-quic + bbrlab bbr") && e.contains("999 bytes") && e.contains("1000"),
        "{e}"
    );
}

/// A run that fails does not end the comparison: the runs after it still
/// run, the table and quic.json keep the failed one as a row with its
/// reason, and the exit status says that something failed.
#[test]
fn a_rejected_controller_is_a_failed_row_and_the_next_run_still_runs() {
    let d = tempfile::tempdir().unwrap();
    let qb = fake(d.path());
    let out = d.path().join("o");
    let o = bbrlab(
        &[
            "quic",
            "--quic-bulk",
            qb.to_str().unwrap(),
            "--cc",
            "bogus,bbr",
            "--seconds",
            "1",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    let (e, t) = (text(&o.stderr), text(&o.stdout));
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        t.contains("FAILED: quic-bulk send rejected its arguments: quic-bulk: --cc bogus: unknown controller; allowed:"),
        "{t}"
    );
    assert!(e.contains("1 of 2 runs failed"), "{e}");
    let j: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("quic.json")).unwrap()).unwrap();
    let runs = j["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{j}");
    assert!(
        runs[0]["error"].as_str().unwrap().contains("--cc bogus"),
        "{j}"
    );
    assert_eq!(runs[1]["cc"], "bbr", "{j}");
    assert!(runs[1]["error"].is_null(), "{j}");
    assert_eq!(runs[1]["bytes"], 1000, "{j}");
}

#[test]
fn bad_options_are_named_before_anything_runs() {
    let d = tempfile::tempdir().unwrap();
    let o = bbrlab(&["quic", "--quic-bulk", "/nonexistent/quic-bulk"], &[]);
    assert!(text(&o.stderr).contains("--quic-bulk /nonexistent/quic-bulk: no such file"));
    let qb = fake(d.path());
    let qb = qb.to_str().unwrap();
    for (args, want) in [
        (vec!["--cc", "quinn:bbr"], "does not include `quinn`"),
        (vec!["--cc", "bbr,bbr"], "--cc bbr is given twice"),
        (vec!["--seconds", "0"], "--seconds 0: allowed 1 to 3600"),
        (vec!["--interval", "0ms"], "--interval 0ms"),
        (vec!["--rounds", "0"], "--rounds 0: allowed 1 to 20"),
    ] {
        let mut a = vec!["quic", "--quic-bulk", qb];
        a.extend(args);
        let o = bbrlab(&a, &[]);
        assert_eq!(o.status.code(), Some(1), "{a:?}");
        assert!(text(&o.stderr).contains(want), "{a:?}: {}", text(&o.stderr));
    }
}

/// The real program: s2n-quic's own BBRv2 and bbrlab's bbr through the
/// adapter, 1 s each on loopback. Every byte arrives (quic-bulk's receiver
/// checks the pattern; bbrlab checks the counts agree), the table has a
/// row per run, and the time series has the shared schema's columns first.
#[test]
fn s2n_with_its_own_bbr_and_bbrlabs_bbr_deliver_on_loopback() {
    let qb = quic_bulk();
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let o = bbrlab(
        &[
            "quic",
            "--quic-bulk",
            qb.to_str().unwrap(),
            "--cc",
            "s2n:bbr2,bbr",
            "--seconds",
            "1",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{stderr}\n{stdout}");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("quic.json")).unwrap()).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{doc}");
    for (r, cc) in runs.iter().zip(["s2n:bbr2", "bbr"]) {
        assert_eq!(r["cc"], cc);
        assert!(r["bytes"].as_u64().unwrap() > 0, "{r}");
        assert!(r["cpu_s_per_gbit"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["cpu_ratio_to_own_bbr"].as_f64().is_some(), "{r}");
        let bytes = r["bytes"].as_u64().unwrap().to_string();
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with("1 ") && l.contains(&bytes)),
            "no row with {bytes} bytes:\n{stdout}"
        );
    }
    assert_eq!(runs[0]["cpu_ratio_to_own_bbr"].as_f64(), Some(1.0));
    for dir in ["s2n-own-s2n-bbr2", "s2n-bbrlab-bbr"] {
        let csv = std::fs::read_to_string(out.join(dir).join("flows.csv")).unwrap();
        let header = csv.lines().next().unwrap();
        assert!(
            header.starts_with(netsim::sender::schema::FLOW_CSV_HEADER),
            "{dir}: {header}"
        );
        assert!(csv.lines().count() > 2, "{dir}: no samples");
    }
}

/// A receiver killed mid-transfer: the sender says so (exit 1, one
/// `quic-bulk:` line) instead of hanging, and neither process is left.
#[test]
fn a_killed_receiver_is_reported_by_the_sender() {
    let qb = quic_bulk();
    let d = tempfile::tempdir().unwrap();
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let cert = d.path().join("cert.pem");
    let cert = cert.to_str().unwrap();
    let mut recv = Command::new(&qb)
        .args(["recv", "--stack", "s2n", "--listen", &addr, "--cert", cert])
        .args(["--timeout", "30"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let send = Command::new(&qb)
        .args(["send", "--stack", "s2n", "--to", &addr, "--cert", cert])
        .args(["--cc", "bbr", "--duration", "60s", "--timeout", "5"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let send_pid = send.id();
    // Once data flows (the certificate is written before the receiver
    // listens; give the handshake a moment), kill the receiver.
    let t0 = Instant::now();
    while !Path::new(cert).exists() && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(1500));
    recv.kill().unwrap();
    recv.wait().unwrap();
    // The sender must give up on its own, long before its 60 s: the
    // bound here only tells "reported" from "hung" on a loaded machine.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(send.wait_with_output().unwrap()));
    let out = match rx.recv_timeout(Duration::from_secs(50)) {
        Ok(o) => o,
        Err(_) => {
            // SAFETY: stopping our own child by its PID.
            unsafe { libc::kill(send_pid as i32, libc::SIGKILL) };
            panic!("the sender did not report its dead peer within 50 s");
        }
    };
    let e = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{e}");
    let last = e.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    assert!(last.starts_with("quic-bulk: "), "{e}");
    assert!(!quic_bulk_alive(send_pid) && !quic_bulk_alive(recv.id()));
}
