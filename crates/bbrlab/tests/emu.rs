//! `bbrlab emu` and `bbrlab tcp` as root: Linux's own BBR and CUBIC
//! through the userspace emulator, the emulator's accuracy (light-load
//! RTT, release error idle and with every core busy, no early release),
//! shaping in both directions, the namespaces' TCP buffer limits, and
//! clean-up after signals and failing children.
//!
//! Every test creates its own namespaces (named after its emulator's PID)
//! and the emulator removes them; the tests check that it did. They run
//! one at a time (a shared lock): several measure the emulator itself
//! (its release error idle and with every core busy, its light-load RTT),
//! which a second emulator beside it would disturb. Two kernel TCP
//! transfers side by side measured what they measure one after the other
//! (`kernel_cc_validate.rs` runs its pairs so), so it is these
//! self-measurements, not the transfers, that keep the lock.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

mod common;
use common::*;

/// Kernel `bbr` over 20 Mbit/s / 40 ms / 100 packets: ≥ 90 % of the link
/// rate (the bar; TCP/IP headers alone cost 3.5 %), and a median
/// sampled RTT in steady state ≤ 1.5 × 40 ms.
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn kernel_bbr_fills_the_link_with_a_short_queue() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    let s = kernel_transfer("bbr", "20mbit", "40ms", "100", None, 10);
    let g = s["goodput_bps"].as_f64().unwrap();
    let rtt = s["rtt_median_steady_ms"].as_f64().unwrap();
    // The whole summary on failure: its delivery-rate median and host
    // figures tell a queue the host built (bursty delivery inflating
    // BBR's bandwidth estimate) from one the controller built.
    assert!(g >= 0.9 * 20e6, "goodput {g}: {s}");
    assert!(rtt <= 1.5 * 40.0, "median RTT {rtt}: {s}");
}

/// Kernel `cubic` with a 1000-packet buffer on the same path: its median
/// RTT is far above the 40 ms propagation delay (≥ 4×: 1000 packets at
/// 20 Mbit/s is 600 ms of queue, which CUBIC fills).
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn kernel_cubic_fills_a_deep_buffer() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    let s = kernel_transfer("cubic", "20mbit", "40ms", "1000", None, 10);
    let rtt = s["rtt_median_steady_ms"].as_f64().unwrap();
    assert!(rtt >= 4.0 * 40.0, "median RTT {rtt}");
}

/// 1 % random loss on 20 Mbit/s / 100 ms: kernel `bbr` gets more than 5×
/// kernel `cubic`'s goodput.
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn kernel_bbr_tolerates_random_loss_that_starves_cubic() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    let b = kernel_transfer("bbr", "20mbit", "100ms", "250", Some("1%"), 12);
    let c = kernel_transfer("cubic", "20mbit", "100ms", "250", Some("1%"), 12);
    let (gb, gc) = (
        b["goodput_bps"].as_f64().unwrap(),
        c["goodput_bps"].as_f64().unwrap(),
    );
    assert!(gb > 5.0 * gc, "bbr {gb} vs cubic {gc}");
    // `tcp send`'s namespace counters, the connection's alone in emu's
    // namespace: random loss puts each into recovery many times (63 for
    // bbr's 19,704 segments and 19 for cubic's 2,923 in one run here),
    // and no more reductions are undone than began.
    for (s, least) in [(&b, 10), (&c, 1)] {
        let n = &s["netns"];
        let count = |k: &str| n[k].as_u64().unwrap_or_else(|| panic!("no {k} in {n}"));
        let began = count("sack_recoveries") + count("timeouts");
        let undone: u64 = ["full_undos", "partial_undos", "dsack_undos", "loss_undos"]
            .into_iter()
            .map(count)
            .sum();
        assert!(began >= least, "{}: {n}", s["cc"]);
        assert!(undone <= began, "{}: {n}", s["cc"]);
        // `tcp recv`'s, from the receiver's namespace: the segments after
        // each hole wait out of order, and with nothing reordered no
        // segment arrives older than one already accepted, so PAWS
        // discards none.
        let r = &s["receiver"]["netns"];
        let count = |k: &str| r[k].as_u64().unwrap_or_else(|| panic!("no {k} in {r}"));
        assert!(count("segments_in") >= 1_000, "{}: {r}", s["cc"]);
        assert!(count("ofo_queued") >= least, "{}: {r}", s["cc"]);
        assert_eq!(count("paws_discards"), 0, "{}: {r}", s["cc"]);
    }
}

/// One `bbrlab emu --selftest --json` per test process, shared by the
/// tests that check its figures (it takes about 20 s).
fn selftest() -> &'static Value {
    static RESULT: OnceLock<Value> = OnceLock::new();
    RESULT.get_or_init(run_selftest)
}

/// One `bbrlab emu --selftest --json`, its JSON.
fn run_selftest() -> Value {
    let out = bbrlab(["emu", "--selftest", "--json"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
}

/// The self-test's light-load probe RTT over a 20 ms path is within 1 ms
/// of 20 ms.
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn emulator_rtt_at_light_load_matches_the_configured_rtt() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    let json = selftest();
    let rtt = json["light_rtt_median_ms"].as_f64().unwrap();
    assert!((rtt - 20.0).abs() <= 1.0, "median RTT {rtt}");
    assert!(
        json["probes"].as_u64().unwrap() >= 190,
        "lost probes: {json}"
    );
}

/// No packet leaves the emulator before its scheduled time, and no
/// datagram crosses the path faster than its configured one-way delay plus
/// serialisation (which would show arrival stamps taken too early), idle
/// or with every core busy.
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn the_selftest_sees_no_early_release() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    let json = selftest();
    for cond in ["release_idle", "release_busy"] {
        let f = &json[cond];
        assert_eq!(f["early_releases"].as_u64(), Some(0), "{cond}: {f}");
        assert_eq!(f["early_deliveries"].as_u64(), Some(0), "{cond}: {f}");
        // Enough traffic for the counts to mean something.
        assert!(f["releases"].as_u64().unwrap() > 10_000, "{cond}: {f}");
        assert!(f["datagrams"].as_u64().unwrap() > 5_000, "{cond}: {f}");
    }
    assert!(json["release_busy"]["busy_threads"].as_u64().unwrap() >= 2);
}

/// Release error p99 ≤ 200 µs at 100 Mbit/s under bulk TCP, also while
/// the self-test keeps every core busy with normal-priority threads: the
/// forwarder runs SCHED_FIFO (as root) within a CPU budget, so a busy
/// machine delays it by a timer's latency, not a scheduler slice (a normal
/// thread's p99 was 3–37 ms here). The bound is the emulator's stated goal,
/// not a loosened one.
///
/// A self-test whose forwarder stalled in a release phase beyond the
/// emulator's own limit for the path is run again, at most twice, as
/// `validate` runs a stalled repetition again: the release error is then
/// the hypervisor's, not the forwarder's (a CI run on 2026-11-30 read a
/// p99 of 484 µs with 73 stalls, 61 ms of a 3 s phase). Every run stalled
/// fails the test, naming the stalls.
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn release_error_stays_within_200_us_with_every_core_busy() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    // Each release phase says how long its forwarder stalled and how much
    // the emulator's own limit allows for that phase's path and length.
    let stalled = |j: &Value| {
        ["release_idle", "release_busy"].iter().any(|c| {
            let limit = j[*c]["stall_limit_ms"]
                .as_f64()
                .unwrap_or_else(|| panic!("{c} has no stall_limit_ms: {j}"));
            j[*c]["stalled_ms"].as_f64().unwrap_or(0.0) > limit
        })
    };
    let mut json = selftest().clone();
    for _ in 0..2 {
        if !stalled(&json) {
            break;
        }
        eprintln!("the emulator's forwarder stalled beyond its limit (stall_limit_ms) in a release phase; running the self-test again: {json}");
        json = run_selftest();
    }
    assert!(
        !stalled(&json),
        "the forwarder stalled beyond its limit (stall_limit_ms) in a release phase in three self-tests (the machine did not give it the CPU): {json}"
    );
    assert_eq!(
        json["scheduling"].as_str(),
        Some("SCHED_FIFO 10"),
        "the forwarder did not get SCHED_FIFO (the selftest's stderr says why); \
         the bound under load depends on it: {json}"
    );
    for cond in ["release_idle", "release_busy"] {
        let p99 = json[cond]["p99_us"].as_u64().unwrap();
        assert!(p99 <= 200, "{cond}: p99 {p99} µs: {}", json[cond]);
    }
}

/// A forward delay schedule in `--scenario` (10 ms, then 60 ms from
/// 2 s, then 5 ms from 4 s) under a kernel TCP upload: no forward packet
/// that leaves the queue well inside a piece is released before that
/// piece's delay after it left, the median is that delay (within 1 ms:
/// single packets may be late by the forwarder's stalls on a busy
/// machine, which the release-error tests bound), and forward packets
/// never overtake one another.
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn a_delay_schedule_delays_each_packet_by_the_piece_it_leaves_in() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("schedule.toml");
    std::fs::write(
        &scenario,
        "[link.forward]\nrate = \"20mbit\"\ndelay_schedule = { steps = [ { at = \"0s\", delay = \"10ms\" }, { at = \"2s\", delay = \"60ms\" }, { at = \"4s\", delay = \"5ms\" } ] }\nqueue = { limit = \"100pkt\" }\n[link.reverse]\ndelay = \"10ms\"\n",
    )
    .unwrap();
    let log = dir.path().join("log");
    let (ok, out, err) = emu(
        &[
            "--scenario",
            scenario.to_str().unwrap(),
            "--log",
            log.to_str().unwrap(),
        ],
        &format!("{BIN} tcp recv --listen {{server}}:5201"),
        &format!("{BIN} tcp send --to {{server}}:5201 --cc cubic --duration 5s"),
        60,
    );
    assert!(ok, "emu failed\n{out}\n{err}");
    let mut rows = csv::Reader::from_path(log.join("packets.csv")).unwrap();
    let h = rows.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let (deq, rel, d) = (col("dequeue_s"), col("released_s"), col("direction"));
    let (bytes, dport) = (col("bytes"), col("dst_port"));
    let (seq, flags) = (col("tcp_seq"), col("tcp_flags"));
    let mut took_by_piece: [Vec<f64>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    let mut last_release = 0.0f64;
    let mut data_seqs = std::collections::HashSet::new();
    let mut data_rows = 0usize;
    for r in rows.records().map(Result::unwrap) {
        if &r[d] != "forward" || r[rel].is_empty() {
            continue;
        }
        // Each forward packet names the connection's port (the log's
        // ports tell competing flows apart), and each data segment its
        // sequence number and flags (ACK set on every one after the SYN).
        if r[bytes].parse::<usize>().unwrap() > 100 {
            assert_eq!(&r[dport], "5201", "{r:?}");
            data_seqs.insert(r[seq].parse::<u32>().unwrap());
            assert!(r[flags].contains('.'), "{r:?}");
            data_rows += 1;
        }
        let (left, released): (f64, f64) = (r[deq].parse().unwrap(), r[rel].parse().unwrap());
        // In order (with a few µs of slack for the log's rounding).
        assert!(
            released + 1e-5 >= last_release,
            "a packet overtook at {released} s"
        );
        last_release = released;
        let took = released - left;
        // Away from the steps (and after the step down, once the packets
        // that left at 60 ms have gone), the piece's delay.
        let (piece, want) = match left {
            t if (0.3..1.9).contains(&t) => (0, 0.010),
            t if (2.1..3.9).contains(&t) => (1, 0.060),
            t if (4.2..4.9).contains(&t) => (2, 0.005),
            _ => continue,
        };
        assert!(
            took >= want - 1e-4,
            "released {took} s after leaving at {left} s, before {want} s"
        );
        took_by_piece[piece].push(took);
    }
    // Sequence numbers are the segments' own: nearly all distinct (a
    // retransmission repeats one).
    assert!(
        data_seqs.len() * 10 >= data_rows * 9,
        "{} distinct sequence numbers in {data_rows} data segments",
        data_seqs.len()
    );
    for (piece, want) in [0.010, 0.060, 0.005].into_iter().enumerate() {
        let t = &mut took_by_piece[piece];
        assert!(t.len() > 100, "piece {piece}: {} packets", t.len());
        t.sort_by(f64::total_cmp);
        let median = t[t.len() / 2];
        assert!(
            median <= want + 0.001,
            "piece {piece}: median {median} s, want {want} s"
        );
    }
}

/// Runs one kernel-TCP download (server → client) for 5 s through `path`
/// and returns the receiver's goodput, bit/s.
fn download_bps(path: &[&str]) -> f64 {
    // The client (receiver) must listen before the server connects; the
    // emulator starts the server first, so the server waits a second.
    let (ok, out, err) = emu(
        path,
        &format!("sleep 1; {BIN} tcp send --to {{client}}:5201 --duration 5s"),
        &format!("{BIN} tcp recv --listen {{client}}:5201"),
        40,
    );
    assert!(ok, "emu failed\n{out}\n{err}");
    // The receiver's summary (the sender's also has "cc").
    let line = out
        .lines()
        .find(|l| l.starts_with('{') && l.contains("goodput_bps") && !l.contains("\"cc\""))
        .unwrap_or_else(|| panic!("no receiver summary in {out}\n{err}"));
    let v: Value = serde_json::from_str(line).unwrap();
    v["goodput_bps"].as_f64().unwrap()
}

/// `--rate` shapes the download direction too (a download through
/// `--rate 50mbit` once ran at 519 Mbit/s), and `--down-rate` overrides
/// it for that direction alone.
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn rate_shapes_downloads_and_down_rate_overrides_it() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    let both = download_bps(&["--rate", "10mbit", "--rtt", "20ms", "--queue", "100"]);
    assert!(
        (7e6..=10.5e6).contains(&both),
        "download through --rate 10mbit: {both} bit/s"
    );
    let down = download_bps(&[
        "--rate",
        "10mbit",
        "--down-rate",
        "4mbit",
        "--rtt",
        "20ms",
        "--queue",
        "100",
    ]);
    assert!(
        (2.8e6..=4.2e6).contains(&down),
        "download through --down-rate 4mbit: {down} bit/s"
    );
}

/// A namespace of our own, deleted however the test ends.
struct TestNs(String);

impl Drop for TestNs {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

fn sysctls_via_emu(extra: &[&str]) -> (String, String) {
    let mut path = vec!["--rtt", "2ms"];
    path.extend_from_slice(extra);
    let (ok, out, err) = emu(
        &path,
        "echo server rmem $(cat /proc/sys/net/ipv4/tcp_rmem) wmem $(cat /proc/sys/net/ipv4/tcp_wmem)",
        "echo client rmem $(cat /proc/sys/net/ipv4/tcp_rmem) wmem $(cat /proc/sys/net/ipv4/tcp_wmem)",
        20,
    );
    assert!(ok, "emu failed\n{out}\n{err}");
    (out, err)
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Both namespaces get 64 MiB TCP buffer maxima, read back from inside
/// them; with `--kernel-buffers` they keep what a new namespace has; the
/// banner says which applies.
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn tcp_buffer_limits_are_raised_in_both_namespaces_unless_kernel_buffers() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    let (out, err) = sysctls_via_emu(&[]);
    for side in ["server", "client"] {
        let want = format!("{side} rmem 4096 131072 67108864 wmem 4096 16384 67108864");
        assert!(out.lines().any(|l| l == want), "{want} not in:\n{out}");
    }
    assert!(
        err.contains("TCP buffers in both namespaces raised"),
        "{err}"
    );

    // What a new namespace has by default.
    let ns = TestNs(format!("bbrlab-{}-bufcheck", std::process::id()));
    let add = Command::new("ip").args(["netns", "add", &ns.0]).status();
    assert!(add.unwrap().success());
    let read = |k: &str| {
        let o = Command::new("ip")
            .args([
                "netns",
                "exec",
                &ns.0,
                "cat",
                &format!("/proc/sys/net/ipv4/{k}"),
            ])
            .output()
            .unwrap();
        squash(&String::from_utf8_lossy(&o.stdout))
    };
    let (rmem, wmem) = (read("tcp_rmem"), read("tcp_wmem"));
    drop(ns);
    assert!(!rmem.ends_with("67108864"), "fresh namespace: {rmem}");
    let (out, err) = sysctls_via_emu(&["--kernel-buffers"]);
    for side in ["server", "client"] {
        let want = format!("{side} rmem {rmem} wmem {wmem}");
        assert!(out.lines().any(|l| l == want), "{want} not in:\n{out}");
    }
    assert!(err.contains("kernel defaults (--kernel-buffers)"), "{err}");
}

/// Kills and reaps a child however the test ends.
struct Reaped(std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn children_of(pid: u32) -> Vec<u32> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) {
            // Field 4 (after the parenthesised name) is the parent PID.
            let after = &stat[stat.rfind(')').unwrap_or(0) + 2..];
            let ppid: u32 = after
                .split(' ')
                .nth(1)
                .and_then(|x| x.parse().ok())
                .unwrap_or(0);
            if ppid == pid {
                v.push(p);
            }
        }
    }
    v
}

fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s[s.rfind(')').unwrap_or(0)..].starts_with(") Z"),
        Err(_) => false,
    }
}

/// SIGTERM mid-run: the emulator stops its children (by process group) and
/// removes both namespaces and TUN devices before exiting.
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn killing_the_emulator_mid_run_leaves_nothing_behind() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    let mut emu = Reaped(
        Command::new(BIN)
            .args([
                "emu", "--rate", "10mbit", "--rtt", "20ms", "--server", "sleep 60", "--client",
                "sleep 60",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let pid = emu.0.id();
    // Wait (bounded) until the path is up and both children run.
    let t0 = Instant::now();
    let mut kids = Vec::new();
    while t0.elapsed() < Duration::from_secs(10) {
        kids = children_of(pid);
        if our_namespaces_of(pid).len() == 2 && kids.len() == 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(our_namespaces_of(pid).len(), 2, "namespaces never appeared");
    assert_eq!(kids.len(), 2, "children {kids:?}");
    let r = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(r.success());
    let t0 = Instant::now();
    let mut status = None;
    while t0.elapsed() < Duration::from_secs(15) {
        if let Some(s) = emu.0.try_wait().unwrap() {
            status = Some(s);
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        status.is_some(),
        "the emulator did not exit within 15 s of SIGTERM"
    );
    assert!(our_namespaces_of(pid).is_empty(), "namespaces left behind");
    assert!(!tun_links_of(pid), "TUN devices left behind");
    for k in kids {
        assert!(!alive(k), "child {k} still running");
    }
}

/// A client that fails ends the run with its exit status, and the path is
/// still torn down.
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn a_failing_client_ends_the_run_with_its_status_and_cleans_up() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    let emu = Command::new(BIN)
        .args([
            "emu", "--rtt", "10ms", "--server", "sleep 60", "--client", "exit 3",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = emu.id();
    let out = emu.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(our_namespaces_of(pid).is_empty());
    assert!(!tun_links_of(pid));
}

/// A client that exits 2 is passed through as such: the emulator does not
/// call it a usage error (the supervised child's wording for status 2 is
/// about the program's own arguments, not the emulator's), and a server
/// that would run on is stopped with the client's end.
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn a_client_exiting_2_is_passed_through_without_a_usage_error() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    let t0 = Instant::now();
    let emu = Command::new(BIN)
        .args([
            "emu", "--rtt", "10ms", "--server", "sleep 60", "--client", "exit 2",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = emu.id();
    let out = emu.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("emu: the client exited with status 2"),
        "{err}"
    );
    assert!(!err.contains("rejected its arguments"), "{err}");
    assert!(t0.elapsed() < Duration::from_secs(30), "the server ran on");
    assert!(our_namespaces_of(pid).is_empty());
    assert!(!tun_links_of(pid));
}

/// Bad flags get a clear error naming the flag, before anything is created.
#[test]
fn bad_path_flags_are_named() {
    let out = Command::new(BIN)
        .args(["emu", "--rate", "fast", "--client", "true"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("--rate") && e.contains("fast"), "{e}");
    assert!(Path::new("/dev/net/tun").exists());
}

/// `[[link.ports]]`: kernel BBR to port 5202, whose rule adds 15 ms each
/// way to a 20 ms round trip, sees a 50 ms path: its steady median RTT
/// (the kernel's smoothed RTT, BBR keeping a queue of at most about one
/// BDP) is at least 50 ms and at most 1.5 × 50 ms; without the rule it
/// could not reach 50 ms (20 ms base plus at most 1.5 × on this queue).
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn a_port_rule_adds_its_delay_to_a_kernel_flow() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ports.toml");
    std::fs::write(
        &path,
        "[link.forward]\nrate = \"20mbit\"\ndelay = \"10ms\"\nqueue = { limit = \"100pkt\" }\n\
         [link.reverse]\nrate = \"20mbit\"\ndelay = \"10ms\"\nqueue = { limit = \"100pkt\" }\n\
         [[link.ports]]\nport = 5202\nforward = { delay = \"15ms\" }\nreverse = { delay = \"15ms\" }\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let (ok, out, err) = emu(
        &["--scenario", p],
        &format!("{BIN} tcp recv --listen {{server}}:5202"),
        &format!("{BIN} tcp send --to {{server}}:5202 --cc bbr --duration 6s"),
        60,
    );
    assert!(ok, "emu failed\n{out}\n{err}");
    let s = json_with(&out, "\"cc\"");
    let rtt = s["rtt_median_steady_ms"].as_f64().unwrap();
    assert!((50.0..=75.0).contains(&rtt), "median RTT {rtt} ms\n{s}");
}

/// `[[link.hops]]` in the emulator: a 5 Mbit/s hop after a 20 Mbit/s
/// `[link.forward]` is the path's bottleneck, so kernel BBR gets at least
/// 90 % of 5 Mbit/s (headers cost 3.5 %) and never more; the hop's 5 ms
/// adds to the 20 ms round trip (median RTT at least 25 ms).
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn a_second_hop_is_the_bottleneck_when_it_is_slower() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hops.toml");
    std::fs::write(
        &path,
        "[link.forward]\nrate = \"20mbit\"\ndelay = \"10ms\"\nqueue = { limit = \"100pkt\" }\n\
         [link.reverse]\ndelay = \"10ms\"\n\
         [[link.hops]]\nrate = \"5mbit\"\ndelay = \"5ms\"\nqueue = { limit = \"50pkt\" }\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let (ok, out, err) = emu(
        &["--scenario", p],
        &format!("{BIN} tcp recv --listen {{server}}:5201"),
        &format!("{BIN} tcp send --to {{server}}:5201 --cc bbr --duration 6s"),
        60,
    );
    assert!(ok, "emu failed\n{out}\n{err}");
    let s = json_with(&out, "\"cc\"");
    let g = s["goodput_bps"].as_f64().unwrap();
    let rtt = s["rtt_median_steady_ms"].as_f64().unwrap();
    assert!((0.9 * 5e6..=5e6).contains(&g), "goodput {g}\n{s}");
    assert!(rtt >= 25.0, "median RTT {rtt} ms\n{s}");
}

/// `bbrlab emu --reap` removes a namespace whose emulator is gone and
/// keeps one whose emulator still runs (here: this test's own PID), by
/// the rule every emulator applies as it starts.
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn reap_removes_only_the_namespaces_of_emulators_that_are_gone() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    // A PID that no longer runs: a child that has exited and been reaped.
    let mut done = Command::new("true").spawn().unwrap();
    let gone = done.id();
    done.wait().unwrap();
    let dead = TestNs(format!("bbrlab-{gone}-reaptest"));
    let live = TestNs(format!("bbrlab-{}-reaptest", std::process::id()));
    for ns in [&dead, &live] {
        let add = Command::new("ip").args(["netns", "add", &ns.0]).status();
        assert!(add.unwrap().success(), "{}", ns.0);
    }
    let o = Command::new(common::BIN)
        .args(["emu", "--reap"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("removed"), "{err}");
    let list = String::from_utf8_lossy(
        &Command::new("ip")
            .args(["netns", "list"])
            .output()
            .unwrap()
            .stdout,
    )
    .to_string();
    let has = |n: &str| list.lines().any(|l| l.split_whitespace().next() == Some(n));
    assert!(!has(&dead.0), "{} left:\n{list}", dead.0);
    assert!(has(&live.0), "{} removed:\n{list}", live.0);
}

/// An emulator stopped by SIGTERM after whoever read its stderr has gone
/// (the test harness or CI job that started it was killed) still stops
/// and removes its namespaces. Before, its "stopped by a signal" line
/// panicked on the broken pipe before the forwarding thread was told to
/// stop, and the process waited for that thread for good, namespaces and
/// all (seen in CI when a failing phase stopped the root tests).
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn a_signalled_emulator_with_its_stderr_gone_still_cleans_up() {
    use std::io::{BufRead, BufReader};
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    let child = Command::new(BIN)
        .args([
            "emu",
            "--rtt",
            "2ms",
            "--timeout",
            "60",
            "--client",
            "sleep 30",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut child = Reaped(child);
    // Wait for the path to be up (its first lines), then close the pipe.
    let mut err = BufReader::new(child.0.stderr.take().unwrap());
    let mut line = String::new();
    let t0 = Instant::now();
    while !line.contains("emu: up") && t0.elapsed() < Duration::from_secs(20) {
        line.clear();
        if err.read_line(&mut line).unwrap() == 0 {
            break;
        }
    }
    assert!(
        line.contains("emu: up"),
        "the emulator did not start: {line}"
    );
    assert!(
        !our_namespaces_of(pid).is_empty(),
        "its namespaces exist while it runs"
    );
    drop(err);
    // SAFETY: signalling our own child by its PID.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let t0 = Instant::now();
    let status = loop {
        if let Some(st) = child.0.try_wait().unwrap() {
            break Some(st);
        }
        if t0.elapsed() > Duration::from_secs(15) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        status.is_some(),
        "the emulator still runs 15 s after SIGTERM"
    );
    assert!(
        our_namespaces_of(pid).is_empty(),
        "left: {:?}",
        our_namespaces_of(pid)
    );
}
