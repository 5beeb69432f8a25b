//! `quic-bulk` end to end on loopback with real sockets: transfers arrive
//! intact with consistent summaries and time series, a killed receiver is
//! reported within the sender's timeout, and bad arguments exit 2.
//!
//! Judged on bytes and behaviour, never speed: the machine may be fully
//! loaded. Every wait is bounded, every child is stopped by its PID, and
//! every file lives in a temporary directory removed at the end.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_quic-bulk");

/// A child killed (by its PID, through `Child::kill`) if the test ends
/// without waiting for it.
struct Guard(Option<Child>);

impl Guard {
    fn spawn(cmd: &mut Command) -> Guard {
        Guard(Some(
            cmd.stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn quic-bulk"),
        ))
    }

    fn pid(&self) -> u32 {
        self.0.as_ref().expect("running").id()
    }

    /// Waits up to `limit` for the exit; on expiry kills it and panics.
    fn wait(&mut self, limit: Duration, what: &str) -> Output {
        let start = Instant::now();
        let child = self.0.as_mut().expect("running");
        loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                let child = self.0.take().expect("running");
                return collect(child, status);
            }
            if start.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                self.0 = None;
                panic!("{what} still running after {limit:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills the child now (SIGKILL to its PID) and reaps it.
    fn kill(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.kill();
    }
}

fn collect(mut child: Child, status: ExitStatus) -> Output {
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_end(&mut stdout);
    }
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_end(&mut stderr);
    }
    Output {
        status,
        stdout,
        stderr,
    }
}

/// A loopback UDP port free a moment ago (the receiver binds it next).
fn free_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .expect("bind loopback")
        .port()
}

fn json(out: &Output, what: &str) -> serde_json::Value {
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().unwrap_or_else(|| {
        panic!(
            "{what} printed nothing; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{what} line {line:?}: {e}"))
}

fn num(v: &serde_json::Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing or not a number in {v}"))
}

/// The summary's numbers agree with each other and with the receiver's
/// count, and the time series has the schema's header and sane rows.
fn check_run(send: &serde_json::Value, stack: &str, cc: &str, bytes: u64, log: &Path) {
    assert_eq!(send["quic_stack"], stack);
    assert_eq!(send["cc"], cc);
    assert_eq!(send["origin"], "end of the handshake");
    assert_eq!(num(send, "bytes") as u64, bytes, "{send}");
    let secs = num(send, "seconds");
    let goodput = num(send, "goodput_bps");
    assert!(secs > 0.0 && goodput > 0.0, "{send}");
    // goodput is bytes × 8 / seconds (rounded to a whole bit/s).
    assert!((goodput - bytes as f64 * 8.0 / secs).abs() <= 1.0, "{send}");
    let sent = num(send, "packets_sent");
    let lost = num(send, "packets_lost");
    // No QUIC packet carries more than 1500 bytes of stream data here
    // (s2n's default maximum MTU; noq's and quinn's MTU discovery stops at
    // 1452 by default), so at least bytes / 1500 were sent.
    assert!(sent >= bytes as f64 / 1500.0, "{send}");
    assert!((num(send, "retransmit_fraction") - lost / sent).abs() < 1e-9);
    let srtt = num(send, "srtt_median_ms");
    assert!(srtt > 0.0 && srtt < 10_000.0, "{send}");

    let mut r = csv::Reader::from_path(log).expect("the log exists");
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let names: Vec<&str> = sender::schema::FLOW_COLUMNS
        .iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(&header[..names.len()], &names[..]);
    let col = |n: &str| names.iter().position(|c| *c == n).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert!(!rows.is_empty(), "no rows in the log");
    let mut last_t = -1.0;
    let mut last_delivered = 0u64;
    for row in &rows {
        let t: f64 = row[col("time_s")].parse().unwrap();
        assert!(t > last_t, "time_s not increasing: {last_t} then {t}");
        last_t = t;
        assert_eq!(&row[col("flow")], "0");
        let cwnd: u64 = row[col("cwnd_bytes")]
            .parse()
            .unwrap_or_else(|_| panic!("empty cwnd at {t}"));
        assert!(cwnd > 0);
        let d: u64 = row[col("delivered_bytes")].parse().unwrap();
        assert!(d >= last_delivered && d <= bytes, "delivered {d} at {t}");
        last_delivered = d;
        assert_eq!(&row[col("queue_delay_ms")], "");
    }
    assert_eq!(
        last_delivered, bytes,
        "the last row has every byte delivered"
    );
    assert!((last_t - secs).abs() < 1e-3, "the last row is at the end");
}

const BYTES: u64 = 4_000_000;

/// Generous bound on a transfer of a few MB on a loaded machine.
const LIMIT: Duration = Duration::from_secs(120);

fn pair(stack: &str, cc: &str) {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("cert.pem");
    let log = dir.path().join("flows.csv");
    let addr = format!("127.0.0.1:{}", free_port());
    let mut recv = Guard::spawn(Command::new(BIN).args([
        "recv",
        "--stack",
        stack,
        "--listen",
        &addr,
        "--cert",
        cert.to_str().unwrap(),
        "--timeout",
        "60",
    ]));
    let mut send = Guard::spawn(Command::new(BIN).args([
        "send",
        "--stack",
        stack,
        "--to",
        &addr,
        "--cert",
        cert.to_str().unwrap(),
        "--cc",
        cc,
        "--bytes",
        &BYTES.to_string(),
        "--log",
        log.to_str().unwrap(),
        "--interval",
        "5ms",
        "--timeout",
        "60",
    ]));
    let s = send.wait(LIMIT, "send");
    let r = recv.wait(LIMIT, "recv");
    assert!(
        s.status.success(),
        "send failed: {}",
        String::from_utf8_lossy(&s.stderr)
    );
    assert!(
        r.status.success(),
        "recv failed: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    let rj = json(&r, "recv");
    assert_eq!(rj["role"], "recv");
    assert_eq!(rj["stack"], stack);
    assert_eq!(rj["intact"], true);
    assert_eq!(num(&rj, "bytes") as u64, BYTES);
    check_run(&json(&s, "send"), stack, cc, BYTES, &log);
}

/// `--version` names the stacks the binary was built with (from the
/// workspace's Cargo.lock at build time), which bbrlab records as the
/// provenance of a QUIC run.
#[test]
fn version_names_the_stacks_it_was_built_with() {
    let out = Command::new(BIN).arg("--version").output().unwrap();
    assert!(out.status.success());
    let line = String::from_utf8_lossy(&out.stdout);
    for stack in ["s2n-quic 1.", "quinn 0.", "noq 1."] {
        assert!(line.contains(stack), "{stack} in {line}");
    }
}

#[test]
fn s2n_bbr2_transfer_arrives_intact() {
    pair("s2n", "s2n:bbr2");
}

#[test]
fn s2n_cubic_transfer_arrives_intact() {
    pair("s2n", "s2n:cubic");
}

#[test]
fn bbrlab_bbr_through_the_adapter_arrives_intact() {
    pair("s2n", "bbr");
}

#[test]
fn bbrlab_cubic_through_the_adapter_arrives_intact() {
    pair("s2n", "cubic");
}

#[test]
fn noq_cubic_transfer_arrives_intact() {
    pair("noq", "noq:cubic");
}

#[test]
fn bbrlab_bbr_through_the_noq_adapter_arrives_intact() {
    pair("noq", "bbr");
}

#[test]
fn quinn_cubic_transfer_arrives_intact() {
    pair("quinn", "quinn:cubic");
}

#[test]
fn bbrlab_bbr_through_the_quinn_adapter_arrives_intact() {
    pair("quinn", "bbr");
}

/// `--bbr3-profile` reaches the adapter's controller.
#[test]
fn bbr3_with_the_linux_profile_in_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("flows.csv");
    let mut both = Guard::spawn(Command::new(BIN).args([
        "both",
        "--stack",
        "s2n",
        "--cc",
        "bbr3",
        "--bbr3-profile",
        "linux-v3",
        "--bytes",
        "2000000",
        "--log",
        log.to_str().unwrap(),
    ]));
    let out = both.wait(LIMIT, "both");
    assert!(
        out.status.success(),
        "both failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    check_run(&json(&out, "both"), "s2n", "bbr3", 2_000_000, &log);
}

/// `both` runs the two ends in one process and checks the receiver's
/// count against the sender's.
#[test]
fn both_in_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("flows.csv");
    let mut both = Guard::spawn(Command::new(BIN).args([
        "both",
        "--stack",
        "s2n",
        "--cc",
        "s2n:cubic",
        "--bytes",
        "3000001",
        "--log",
        log.to_str().unwrap(),
    ]));
    let out = both.wait(LIMIT, "both");
    assert!(
        out.status.success(),
        "both failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    check_run(&json(&out, "both"), "s2n", "s2n:cubic", 3_000_001, &log);
}

/// A receiver killed mid-transfer: the sender gives up within its
/// timeout, exit 1, naming the silent peer.
#[test]
fn a_killed_receiver_is_reported() {
    killed_receiver("s2n", "s2n:bbr2");
}

/// The same on quinn's side of the family (noq shares its code).
#[test]
fn a_killed_quinn_receiver_is_reported() {
    killed_receiver("quinn", "quinn:cubic");
}

fn killed_receiver(stack: &str, cc: &str) {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("cert.pem");
    let addr = format!("127.0.0.1:{}", free_port());
    let mut recv = Guard::spawn(Command::new(BIN).args([
        "recv",
        "--stack",
        stack,
        "--listen",
        &addr,
        "--cert",
        cert.to_str().unwrap(),
        "--timeout",
        "60",
    ]));
    let timeout = 6u64;
    let mut send = Guard::spawn(Command::new(BIN).args([
        "send",
        "--stack",
        stack,
        "--to",
        &addr,
        "--cert",
        cert.to_str().unwrap(),
        "--cc",
        cc,
        "--duration",
        "120s",
        "--timeout",
        &timeout.to_string(),
    ]));
    // Mid-transfer: the certificate is out and the sender has had time
    // to connect.
    let start = Instant::now();
    while !cert.exists() {
        assert!(start.elapsed() < LIMIT, "recv never wrote its certificate");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_secs(2));
    assert!(recv.pid() > 0);
    recv.kill();
    let killed = Instant::now();
    // Within its timeout, plus generous room for a loaded machine.
    let out = send.wait(Duration::from_secs(timeout + 60), "send");
    let waited = killed.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert!(err.starts_with("quic-bulk: "), "{err}");
    assert!(
        err.contains("peer stopped responding") || err.contains("made no progress"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "no summary after a failure");
    // Behaviour, not speed: the sender did not run to its 120 s duration.
    assert!(waited < Duration::from_secs(100), "{waited:?}");
}

/// The sender waits for the certificate only up to its timeout.
#[test]
fn a_certificate_that_never_appears_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("never.pem");
    let mut send = Guard::spawn(Command::new(BIN).args([
        "send",
        "--stack",
        "s2n",
        "--to",
        "127.0.0.1:9",
        "--cert",
        cert.to_str().unwrap(),
        "--cc",
        "s2n:cubic",
        "--bytes",
        "1000",
        "--timeout",
        "1",
    ]));
    let out = send.wait(LIMIT, "send");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no certificate at") && err.contains("never.pem"),
        "{err}"
    );
}

fn bad(args: &[&str]) -> String {
    let mut c = Guard::spawn(Command::new(BIN).args(args));
    let out = c.wait(LIMIT, "quic-bulk");
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}");
    err
}

#[test]
fn bad_arguments_exit_2_with_a_clear_message() {
    let send = |cc: &str, stack: &str| {
        bad(&[
            "send",
            "--stack",
            stack,
            "--to",
            "127.0.0.1:9",
            "--cert",
            "/nonexistent/c.pem",
            "--cc",
            cc,
            "--bytes",
            "10",
        ])
    };
    let e = send("vegas", "s2n");
    assert!(
        e.contains("--cc vegas") && e.contains("s2n:bbr2, s2n:cubic"),
        "{e}"
    );
    assert!(e.contains("bbr, bbr-jitter, bbr3, cubic, reno"), "{e}");
    let e = send("s2n:bbr3", "s2n");
    assert!(e.contains("--cc s2n:bbr3"), "{e}");
    // Each stack lists its own controllers; another stack's are not its.
    let e = send("s2n:bbr2", "noq");
    assert!(
        e.contains("--cc s2n:bbr2") && e.contains("noq:bbr3, noq:cubic, noq:newreno"),
        "{e}"
    );
    let e = send("quinn:bbr3", "quinn");
    assert!(
        e.contains("--cc quinn:bbr3") && e.contains("quinn:bbr, quinn:cubic, quinn:newreno"),
        "{e}"
    );
    let e = send("s2n:bbr2", "msquic");
    assert!(
        e.contains("--stack msquic") && e.contains("known stacks: s2n, noq, quinn"),
        "{e}"
    );
    // No --cert at all.
    let e = bad(&[
        "send",
        "--stack",
        "s2n",
        "--to",
        "127.0.0.1:9",
        "--cc",
        "s2n:bbr2",
        "--bytes",
        "10",
    ]);
    assert!(e.contains("--cert"), "{e}");
    // Neither --bytes nor --duration.
    let e = bad(&[
        "send",
        "--stack",
        "s2n",
        "--to",
        "127.0.0.1:9",
        "--cert",
        "/x.pem",
        "--cc",
        "s2n:bbr2",
    ]);
    assert!(e.contains("--duration") || e.contains("--bytes"), "{e}");
    let e = bad(&[
        "send",
        "--stack",
        "s2n",
        "--to",
        "127.0.0.1:9",
        "--cert",
        "/x.pem",
        "--cc",
        "s2n:bbr2",
        "--duration",
        "10",
    ]);
    assert!(e.contains("--duration") && e.contains("unit"), "{e}");
    let e = bad(&[
        "send",
        "--stack",
        "s2n",
        "--to",
        "127.0.0.1:9",
        "--cert",
        "/x.pem",
        "--cc",
        "cubic",
        "--bbr3-profile",
        "draft",
        "--bytes",
        "10",
    ]);
    assert!(
        e.contains("--bbr3-profile draft: only for --cc bbr3"),
        "{e}"
    );
    // Zero, and seconds past what a Duration holds: the same error (exit
    // 2), not a panic (exit 101).
    for secs in ["0", "1e20"] {
        let e = bad(&[
            "recv",
            "--stack",
            "s2n",
            "--listen",
            "127.0.0.1:9",
            "--cert",
            "/x.pem",
            "--timeout",
            secs,
        ]);
        assert!(
            e.contains(&format!("--timeout {secs}: allowed from 1 s to 3600 s")),
            "{e}"
        );
    }
}
