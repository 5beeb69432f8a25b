//! `bbrlab send --ecn` and `--cc bbr3 --bbr3-profile` against `bbrlab recv`
//! on loopback, without root: the summaries carry the ECN counts, and bad
//! values are refused with a clear error. (A real CE-marking queue is in
//! `udp_ecn_netns.rs`, as root.)
//!
//! Every process is stopped by its PID; every wait is a bounded loop.

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_bbrlab");

fn start(args: &[&str]) -> Child {
    Command::new(BIN)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start bbrlab")
}

/// Waits for `c` at most `limit`, then kills it by PID and fails.
fn finish(mut c: Child, limit: Duration, what: &str) -> Output {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if c.try_wait().expect("try_wait").is_some() {
            return c.wait_with_output().expect("output");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = c.kill();
    let o = c.wait_with_output().expect("output");
    panic!(
        "{what} did not exit within {limit:?}; stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn json(o: &Output, what: &str) -> serde_json::Value {
    assert!(
        o.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(out.lines().last().expect("a summary line")).expect("JSON summary")
}

/// One transfer of 3 MB on loopback; the two summaries.
fn transfer(port: u16, send_args: &[&str]) -> (serde_json::Value, serde_json::Value) {
    let listen = format!("127.0.0.1:{port}");
    let r = start(&["recv", "--listen", &listen, "--accept-timeout", "20s"]);
    std::thread::sleep(Duration::from_millis(200));
    let mut args = vec!["send", "--to", &listen, "--bytes", "3000000", "--quiet"];
    args.extend_from_slice(send_args);
    let s = finish(start(&args), Duration::from_secs(60), "bbrlab send");
    let r = finish(r, Duration::from_secs(30), "bbrlab recv");
    (json(&s, "bbrlab send"), json(&r, "bbrlab recv"))
}

#[test]
fn send_ecn_with_bbr3_marks_every_data_packet_and_reports_the_counts() {
    let (s, r) = transfer(
        5341,
        &["--ecn", "--cc", "bbr3", "--bbr3-profile", "linux-v3"],
    );
    assert_eq!(s["cc"], "bbr3", "{s}");
    assert_eq!(s["bytes"], 3_000_000, "{s}");
    assert_eq!(s["ecn"], "capable", "{s}");
    assert_eq!(s["ce_packets"], 0, "{s}");
    assert_eq!(s["ce_fraction"], 0.0, "{s}");
    let data = r["data_packets"].as_u64().unwrap();
    assert!(data >= 3_000_000 / 1400, "{r}");
    assert_eq!(r["ecn_ect0"].as_u64(), Some(data), "{r}");
    assert_eq!(r["ecn_ce"], 0, "{r}");
    assert_eq!(r["ecn_not_ect"], 0, "{r}");
}

#[test]
fn send_without_ecn_sends_not_ect() {
    let (s, r) = transfer(5342, &["--cc", "cubic"]);
    assert_eq!(s["ecn"], "off", "{s}");
    assert_eq!(s["ce_packets"], 0, "{s}");
    assert!(s["ce_fraction"].is_null(), "{s}");
    assert_eq!(r["ecn_ect0"], 0, "{r}");
    assert_eq!(r["ecn_not_ect"], r["data_packets"], "{r}");
}

/// Bad values fail at once, before any packet, saying what is allowed.
#[test]
fn bad_cc_and_profile_values_are_refused_clearly() {
    for (args, want) in [
        (
            vec!["--cc", "bbr3", "--bbr3-profile", "linux-v2"],
            "--bbr3-profile: unknown bbr3 profile `linux-v2`; known profiles: draft, linux-v3",
        ),
        (
            vec!["--cc", "cubic", "--bbr3-profile", "draft"],
            "--bbr3-profile draft: only for --cc bbr3",
        ),
        (vec!["--cc", "bbr4"], "--cc: "),
    ] {
        let mut a = vec!["send", "--to", "127.0.0.1:9", "--quiet"];
        a.extend_from_slice(&args);
        let o = finish(start(&a), Duration::from_secs(20), "bbrlab send");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
