//! Helpers shared by the root tests that run `bbrlab emu`.
#![allow(dead_code)] // each test crate uses a different subset

use serde_json::Value;
use std::process::{Command, Stdio};
use std::sync::Mutex;

#[cfg(feature = "kernel")]
pub mod kernel;

pub static SERIAL: Mutex<()> = Mutex::new(());

pub const BIN: &str = env!("CARGO_BIN_EXE_bbrlab");

/// Runs `bbrlab` with `args` and returns what it printed; a failure fails
/// the test with the command's standard error.
pub fn bbrlab<I, S>(args: I) -> std::process::Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(|a| a.as_ref().into()).collect();
    let out = Command::new(BIN).args(&args).output().unwrap();
    assert!(
        out.status.success(),
        "bbrlab {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn require_root() {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    assert_eq!(
        uid, 0,
        "this test needs root: it is #[ignore]d for other users, and \
         scripts/test.sh runs it as root (`cargo test -p bbrlab --features \
         kernel -- --ignored`)"
    );
}

pub fn our_namespaces_of(pid: u32) -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(&format!("bbrlab-{pid}-")))
        .map(str::to_string)
        .collect()
}

pub fn tun_links_of(pid: u32) -> bool {
    let out = Command::new("ip").args(["-o", "link"]).output().unwrap();
    let tag = pid % 100_000;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .any(|l| l.contains(&format!("bblc{tag}")) || l.contains(&format!("bbls{tag}")))
}

/// Runs one kernel-TCP transfer through the emulator; returns the
/// sender's JSON summary. A run in which the emulator's forwarder was off
/// the CPU for longer than `linkem::stall::max_stalled_fraction` allows
/// on this RTT (a busy host's hypervisor took the vCPU; the link then
/// delivered in bursts) is run again ([`unstalled`]).
pub fn kernel_transfer(
    cc: &str,
    rate: &str,
    rtt: &str,
    queue: &str,
    loss: Option<&str>,
    secs: u32,
) -> Value {
    let rtt_ms: f64 = rtt
        .strip_suffix("ms")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("kernel_transfer takes the RTT in ms, not {rtt}"));
    let mut args = vec![
        "emu".to_string(),
        "--rate".into(),
        rate.into(),
        "--rtt".into(),
        rtt.into(),
        "--queue".into(),
        queue.into(),
        "--timeout".into(),
        (secs + 30).to_string(),
        "--server".into(),
        format!("{BIN} tcp recv --listen {{server}}:5201"),
        "--client".into(),
        format!("{BIN} tcp send --to {{server}}:5201 --cc {cc} --duration {secs}s"),
    ];
    if let Some(l) = loss {
        args.push("--loss".into());
        args.push(l.into());
    }
    unstalled(&format!("{cc} over {rate}/{rtt}"), rtt_ms, |stats| {
        kernel_transfer_once(&args, stats)
    })
    .0
}

/// Runs `once` (one run of `bbrlab emu` that writes `--stats` to the path
/// it is given) again, up to [`TRANSFER_ATTEMPTS`] times, while the
/// emulator's forwarder was off the CPU for longer than
/// `linkem::stall::max_stalled_fraction` allows at `rtt_ms` (a busy
/// host's hypervisor took the vCPU, and the link then delivered in
/// bursts). Returns the first clean run's result and `true`, else the
/// least stalled one's and `false`, with a note on stderr per stalled
/// attempt.
pub fn unstalled<T>(
    what: &str,
    rtt_ms: f64,
    mut once: impl FnMut(&std::path::Path) -> T,
) -> (T, bool) {
    let limit = linkem::stall::max_stalled_fraction(rtt_ms);
    let mut best: Option<(f64, T)> = None;
    for attempt in 1..=TRANSFER_ATTEMPTS {
        let stats = tempfile::NamedTempFile::new().unwrap();
        let result = once(stats.path());
        let emu: Value = serde_json::from_str(&std::fs::read_to_string(stats.path()).unwrap())
            .expect("emu --stats writes JSON");
        let stalled = emu["stalled_fraction"]
            .as_f64()
            .expect("emu --stats has stalled_fraction");
        if stalled <= limit {
            return (result, true);
        }
        eprintln!(
            "{what}: the emulator stalled {:.1} % of the run (over {:.1} %), attempt {attempt} of {TRANSFER_ATTEMPTS}",
            stalled * 100.0,
            limit * 100.0
        );
        if best.as_ref().is_none_or(|b| stalled < b.0) {
            best = Some((stalled, result));
        }
        std::thread::sleep(std::time::Duration::from_secs(5));
    }
    (best.expect("at least one attempt").1, false)
}

/// Runs of [`kernel_transfer`] at most.
pub const TRANSFER_ATTEMPTS: u32 = 3;

/// One [`kernel_transfer`] run of `bbrlab emu` with `args`, writing its
/// `--stats` to `stats`: the sender's summary.
fn kernel_transfer_once(args: &[String], stats: &std::path::Path) -> Value {
    let child = Command::new(BIN)
        .args(args)
        .arg("--stats")
        .arg(stats)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "emu failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(our_namespaces_of(pid).is_empty(), "namespaces left behind");
    // The receiver prints its summary first, the sender's has "cc".
    let line = stdout
        .lines()
        .find(|l| l.contains("\"cc\""))
        .unwrap_or_else(|| panic!("no sender summary in {stdout}"));
    let mut summary: Value = serde_json::from_str(line).unwrap();
    // The receiver's (its namespace's counters), under "receiver".
    let receiver = stdout
        .lines()
        .find(|l| l.starts_with('{') && l.contains("\"goodput_bps\"") && !l.contains("\"cc\""))
        .unwrap_or_else(|| panic!("no receiver summary in {stdout}"));
    summary["receiver"] = serde_json::from_str(receiver).unwrap();
    summary
}

/// Runs `bbrlab emu` with `path_args` (rate, rtt, queue, loss or
/// --scenario) and the two commands; checks it cleaned up; returns the
/// exit success and stdout.
pub fn emu(
    path_args: &[&str],
    server: &str,
    client: &str,
    timeout_s: u32,
) -> (bool, String, String) {
    let mut args: Vec<String> = vec!["emu".into()];
    args.extend(path_args.iter().map(|s| s.to_string()));
    args.extend([
        "--timeout".into(),
        timeout_s.to_string(),
        "--server".into(),
        server.to_string(),
        "--client".into(),
        client.to_string(),
    ]);
    let child = Command::new(BIN)
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert!(our_namespaces_of(pid).is_empty(), "namespaces left behind");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The JSON line of `stdout` that contains `key`.
pub fn json_with(stdout: &str, key: &str) -> Value {
    let line = stdout
        .lines()
        .find(|l| l.starts_with('{') && l.contains(key))
        .unwrap_or_else(|| panic!("no JSON with {key} in {stdout}"));
    serde_json::from_str(line).unwrap()
}

/// A one-flow `bbr` scenario on the 20 Mbit/s / 40 ms / 100-packet path of
/// issue 6, with extra `[link.forward]` lines (loss, jitter).
pub fn path_20mbit_40ms(duration: &str, forward_extra: &str) -> String {
    format!(
        r#"duration = "{duration}"
[link.forward]
rate = "20mbit"
delay = "20ms"
queue = {{ limit = "100pkt" }}
{forward_extra}
[link.reverse]
delay = "20ms"
[[flow]]
algorithm = "bbr"
"#
    )
}

/// Holds an exclusive lock shared by every test that loads or unloads the
/// controls, across test processes: they register kernel-wide, so two
/// test binaries (or two checkouts on one machine) must take turns.
pub fn kernel_lock() -> std::fs::File {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open("/tmp/bbrlab-kernel-cc.lock")
        .unwrap();
    // SAFETY: flock on an fd we own; blocks until the lock is ours.
    assert_eq!(
        unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&f), libc::LOCK_EX) },
        0
    );
    f
}

/// `quic-bulk`, built next to the bbrlab binary under test (the same
/// target/<profile>/). `cargo test -p bbrlab` builds only bbrlab's own
/// binary, so scripts/test.sh builds it first; a missing one fails with
/// how to build it rather than skipping.
pub fn quic_bulk() -> std::path::PathBuf {
    let p = std::path::Path::new(BIN).with_file_name("quic-bulk");
    assert!(
        p.is_file(),
        "{} is missing: build it with `cargo build -p quic-bulk` (scripts/test.sh does) \
         into the same target directory as this test",
        p.display()
    );
    p
}

/// Whether the process `pid` is a running quic-bulk (its PID reused by
/// anything else does not count).
pub fn quic_bulk_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "quic-bulk")
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.split(") ").nth(1).is_some_and(|r| r.starts_with('Z')))
}
