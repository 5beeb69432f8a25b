//! `bbrlab kernel load|unload|list` and the BPF congestion controls in
//! Linux TCP (root: they register kernel-wide). Every test that loads holds
//! a guard that unloads (`--force`) on drop, panics included, and checks the
//! kernel lists neither control afterwards; traffic runs only in namespaces
//! the test makes (`bbrlab emu`'s, or an anonymous one of a thread).
//!
//! Only with the binary's `kernel` feature (`scripts/test.sh` sets it).
#![cfg(feature = "kernel")]

mod common;

use common::kernel::{kernel, loopback_up, registered, stderr, Loaded};

use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

const NAMES: [&str; 2] = ["bbrlab_bbr", "bbrlab_jitter"];

fn set_cc(s: &TcpStream, cc: &str) {
    // SAFETY: the buffer is valid for its length.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            cc.as_ptr().cast(),
            cc.len() as libc::socklen_t,
        )
    };
    assert_eq!(
        r,
        0,
        "TCP_CONGESTION={cc}: {}",
        std::io::Error::last_os_error()
    );
}

#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn load_twice_unload_in_use_and_unload_leave_nothing_registered() {
    common::require_root();
    let _serial = common::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _kernel = common::kernel_lock();
    let guard = Loaded::new(&NAMES);
    for n in NAMES {
        assert!(registered(n), "{n} not in tcp_available_congestion_control");
    }
    let list = String::from_utf8_lossy(&kernel(&["list"]).stdout).into_owned();
    assert!(
        list.lines()
            .any(|l| l.starts_with("bbrlab_jitter") && l.contains("yes")),
        "{list}"
    );

    // Loading twice is refused and says how to proceed.
    let o = kernel(&["load", "bbrlab_bbr"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("already loaded"), "{}", stderr(&o));
    // Unknown names too.
    let o = kernel(&["load", "vegas"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("bbrlab provides"), "{}", stderr(&o));

    // A non-root user gets a clear error.
    let o = Command::new(common::BIN)
        .args(["kernel", "load", "bbrlab_bbr"])
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("needs root"), "{}", stderr(&o));

    // A socket on bbrlab_bbr in a namespace of its own (this thread's).
    let (to_main, from_thread) = mpsc::channel::<i32>();
    let (to_thread, from_main) = mpsc::channel::<()>();
    let conn = std::thread::spawn(move || {
        // SAFETY: unshare affects only this thread's network namespace.
        assert_eq!(unsafe { libc::unshare(libc::CLONE_NEWNET) }, 0);
        loopback_up();
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let s = socket2_like_connect(l.local_addr().unwrap(), "bbrlab_bbr");
        let (mut c, _) = l.accept().unwrap();
        let mut sender = s;
        let data = vec![7u8; 4 << 20];
        let reader = std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            let mut got = 0;
            while got < 4 << 20 {
                let n = c.read(&mut buf).unwrap();
                assert!(n > 0);
                got += n;
            }
            got
        });
        sender.write_all(&data).unwrap();
        assert_eq!(reader.join().unwrap(), 4 << 20);
        to_main.send(sender.as_raw_fd()).unwrap();
        // Keep the socket open until the main thread has tried to unload.
        from_main.recv_timeout(Duration::from_secs(60)).unwrap();
        drop(sender);
    });
    let fd = from_thread.recv_timeout(Duration::from_secs(60)).unwrap();

    // Its state is readable through the control's map, keyed by the fd.
    let st = kernel_cc::StateReader::open("bbrlab_bbr")
        .unwrap()
        .read(fd)
        .expect("no state for the socket");
    assert!(st.acks > 0, "{st:?}");
    assert!(st.min_rtt_us < 10_000, "loopback min_rtt {st:?}");
    assert!(
        ["startup", "drain", "probe_bw"].contains(&st.mode_name()),
        "{st:?}"
    );
    assert_eq!(st.srtt_us, 0, "bbrlab_bbr keeps no seed-001 srtt");

    let o = kernel(&["unload", "bbrlab_bbr"]);
    assert!(!o.status.success(), "unload while in use succeeded");
    assert!(
        stderr(&o).contains("still use bbrlab_bbr"),
        "{}",
        stderr(&o)
    );
    assert!(registered("bbrlab_bbr"), "a refused unload unregistered it");

    to_thread.send(()).unwrap();
    conn.join().unwrap();
    // Both ends closed in a namespace now gone: the count returns to 0.
    let start = Instant::now();
    let count = |n: &str| {
        kernel_cc::list()
            .into_iter()
            .find(|s| s.name == n)
            .unwrap()
            .live_sockets
    };
    while count("bbrlab_bbr") > 0 && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(count("bbrlab_bbr"), 0, "socket count after close");
    let o = kernel(&["unload", "bbrlab_bbr"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!registered("bbrlab_bbr"));
    let o = kernel(&["unload", "bbrlab_bbr"]);
    assert!(stderr(&o).contains("not loaded"), "{}", stderr(&o));
    drop(guard);
}

/// Connects with the congestion control set before the handshake.
fn socket2_like_connect(to: std::net::SocketAddr, cc: &str) -> TcpStream {
    // SAFETY: a fresh socket, owned by the TcpStream made from it.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
    assert!(fd >= 0);
    // SAFETY: fd is a valid socket we own.
    let s = unsafe { <TcpStream as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    set_cc(&s, cc);
    let std::net::SocketAddr::V4(a) = to else {
        panic!("v4 only")
    };
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*a.ip()).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: sin is a valid sockaddr_in of the given length.
    let r = unsafe {
        libc::connect(
            fd,
            (&sin as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    assert_eq!(r, 0, "connect: {}", std::io::Error::last_os_error());
    s
}

fn csv_rows(path: &std::path::Path) -> Vec<std::collections::HashMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let h = r.headers().unwrap().clone();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            h.iter()
                .zip(rec.iter())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn tcp_send_runs_bbrlab_jitter_and_samples_its_state() {
    common::require_root();
    let _serial = common::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _kernel = common::kernel_lock();
    let _guard = Loaded::new(&NAMES);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("flows.csv");
    let (ok, out, err) = common::emu(
        &["--rate", "10Mbit", "--rtt", "40ms", "--queue", "70pkt"],
        &format!("{} tcp recv --listen {{server}}:5201", common::BIN),
        &format!(
            "{} tcp send --to {{server}}:5201 --cc bbrlab_jitter --duration 6s --log {}",
            common::BIN,
            log.display()
        ),
        60,
    );
    assert!(ok, "emu failed: {err}\n{out}");
    // emu closed the sockets its programs left behind: none still runs the
    // control (orphans used to, for minutes, so that `kernel unload`
    // refused without --force). Bounded wait: release runs as they close.
    let t0 = std::time::Instant::now();
    let live = loop {
        let live = kernel_cc::list()
            .into_iter()
            .find(|c| c.name == "bbrlab_jitter")
            .map(|c| c.live_sockets);
        if live == Some(0) || t0.elapsed() > std::time::Duration::from_secs(10) {
            break live;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(live, Some(0), "sockets still run bbrlab_jitter after emu");
    let s: Value = common::json_with(&out, "\"cc\"");
    assert_eq!(s["cc"], "bbrlab_jitter");
    let g = s["goodput_bps"].as_f64().unwrap();
    assert!(g > 8e6 && g < 10e6, "goodput {g}");
    // --duration ends on time: the unsent queue is bounded (512 KiB, 0.4 s
    // at 10 Mbit/s), so an autotuned send buffer cannot hold the transfer
    // open after the writes stop (it did, for up to a minute).
    let secs = s["seconds"].as_f64().unwrap();
    assert!(secs > 5.9 && secs < 8.0, "a 6 s send took {secs} s");
    // The shared schema's BBR columns come from the BPF map.
    let rows = csv_rows(&log);
    let modes: Vec<&str> = rows.iter().map(|r| r["mode"].as_str()).collect();
    assert!(modes.contains(&"startup"), "{modes:?}");
    assert!(modes.contains(&"probe_bw"), "{modes:?}");
    let last = rows.last().unwrap();
    let bw: f64 = last["bw_estimate_bps"].parse().unwrap();
    assert!(bw > 8e6 && bw < 11e6, "bw estimate {bw}");
    let min_rtt: f64 = last["min_rtt_ms"].parse().unwrap();
    assert!(min_rtt > 39.0 && min_rtt < 45.0, "min_rtt {min_rtt}");
    // The variant's own state: srtt near the path's RTT, a clean path is
    // stable (the BDP stays on min_rtt, the cycle is 8 long).
    let cc_rows = csv_rows(&kernel_cc::sampler_path(&log));
    let last = cc_rows.last().unwrap();
    let srtt: f64 = last["srtt_ms"].parse().unwrap();
    assert!(srtt > 39.0 && srtt < 80.0, "srtt {srtt}");
    let steady: Vec<_> = cc_rows
        .iter()
        .filter(|r| r["time_s"].parse::<f64>().unwrap() > 2.0)
        .collect();
    assert!(!steady.is_empty());
    let unstable = steady.iter().filter(|r| r["using_srtt"] == "1").count();
    assert!(
        unstable * 10 < steady.len(),
        "clean path judged unstable in {unstable} of {} samples",
        steady.len()
    );
    assert!(steady.iter().any(|r| r["cycle_len"] == "8"));
}
