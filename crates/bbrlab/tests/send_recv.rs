//! `bbrlab send` / `bbrlab recv` on loopback, without root: what the user
//! sees when things go wrong (issue 13). A busy receiver says it is busy,
//! the sender's error starts on its own line after its progress line, and
//! `recv --output` never leaves partial or unverified data at the path.
//!
//! Every process is stopped by its PID; every wait is a bounded loop; no
//! assertion is on wall time.

use std::io::Read;
use std::net::UdpSocket;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use transport::wire::{self, Frame, Packet, CONTROL_PN};

const BIN: &str = env!("CARGO_BIN_EXE_bbrlab");

fn recv(port: u16, extra: &[&str]) -> Child {
    Command::new(BIN)
        .args([
            "recv",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--accept-timeout",
            "20s",
        ])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start bbrlab recv")
}

fn send(port: u16, extra: &[&str]) -> Child {
    Command::new(BIN)
        .args(["send", "--to", &format!("127.0.0.1:{port}")])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start bbrlab send")
}

/// Waits for `c` to exit, at most `limit` (then kills it by PID and
/// fails): a guard against a hang, not a timing assertion.
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

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Two senders aimed at one receiver: the receiver serves one and answers
/// the other's HELLO with BUSY, and that sender says the receiver is busy
/// (it used to time out with "is `bbrlab recv` running there?", though the
/// receiver was running). Whichever HELLO arrives first wins, so the test
/// asserts one success and one busy refusal, not which.
#[test]
fn a_second_sender_is_told_the_receiver_is_busy() {
    let port = 5331;
    let r = recv(port, &["--idle-timeout", "10s"]);
    // Both start together; the receiver answers whichever HELLO is first.
    let args = ["--duration", "2s", "--quiet", "--idle-timeout", "10s"];
    let a = send(port, &args);
    let b = send(port, &args);
    let (a, b) = (
        finish(a, Duration::from_secs(60), "sender a"),
        finish(b, Duration::from_secs(60), "sender b"),
    );
    let r = finish(r, Duration::from_secs(60), "receiver");
    assert!(r.status.success(), "receiver: {}", text(&r.stderr));
    let (ok, busy) = if a.status.success() { (a, b) } else { (b, a) };
    assert!(
        ok.status.success(),
        "no sender succeeded: {}",
        text(&ok.stderr)
    );
    assert!(!busy.status.success(), "both senders succeeded");
    let err = text(&busy.stderr);
    assert!(
        err.contains("busy with another transfer"),
        "the refused sender does not say the receiver is busy: {err}"
    );
    assert!(!err.contains("running there"), "{err}");
}

/// The sender's live progress line (redrawn with `\r`, no newline) is
/// ended before its error is printed, so `error: ...` starts a line.
/// The receiver is killed once the sender has drawn a progress line.
#[test]
fn the_senders_error_starts_on_a_line_of_its_own() {
    let port = 5332;
    let mut r = recv(port, &["--idle-timeout", "30s"]);
    let mut s = send(port, &["--duration", "60s", "--idle-timeout", "3s"]);
    // Collect the sender's stderr as it comes.
    let buf = Arc::new(Mutex::new(Vec::<u8>::new()));
    let mut pipe = s.stderr.take().expect("stderr piped");
    let reader = {
        let buf = Arc::clone(&buf);
        std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                buf.lock().unwrap().extend_from_slice(&chunk[..n]);
            }
        })
    };
    // Wait (bounded) for the first progress line.
    let t0 = Instant::now();
    while !text(&buf.lock().unwrap()).contains("Mbit/s") {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "no progress line: {}",
            text(&buf.lock().unwrap())
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    r.kill().expect("kill the receiver");
    let _ = r.wait();
    let out = finish(s, Duration::from_secs(30), "sender");
    reader.join().expect("reader");
    assert!(!out.status.success());
    let err = text(&buf.lock().unwrap());
    let at = err
        .find("error:")
        .unwrap_or_else(|| panic!("no error: {err:?}"));
    assert!(at > 0, "{err:?}");
    assert_eq!(
        &err[at - 1..at],
        "\n",
        "the error continues the progress line: {err:?}"
    );
}

/// Sends `frame` (again every 100 ms, at most 100 times) until the
/// receiver answers with a frame `want` accepts; returns that answer's
/// verdict if it was a DONE (`Some(None)` for another frame), `None` if
/// nothing came.
fn ask(
    sock: &UdpSocket,
    to: &str,
    conn_id: u64,
    frame: Frame<'_>,
    want: fn(&Frame<'_>) -> bool,
) -> Option<Option<bool>> {
    let mut out = Vec::new();
    let mut inbuf = [0u8; 2048];
    wire::encode(
        &Packet {
            conn_id,
            pn: CONTROL_PN,
            frame,
        },
        &mut out,
    );
    for _ in 0..100 {
        sock.send_to(&out, to).unwrap();
        if let Ok(n) = sock.recv(&mut inbuf) {
            if let Ok(p) = wire::decode(&inbuf[..n]) {
                if want(&p.frame) {
                    return Some(match p.frame {
                        Frame::Done { ok, .. } => Some(ok),
                        _ => None,
                    });
                }
            }
        }
    }
    None
}

/// A hand-made sender: HELLO for `total` bytes, the given chunks as data,
/// then (if `fin`) a FIN with that digest; returns the receiver's DONE
/// verdict if one came.
fn forge(port: u16, total: u64, chunks: &[&[u8]], fin: Option<[u8; 32]>) -> Option<bool> {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let to = format!("127.0.0.1:{port}");
    let conn_id = 0x5EED_F00D;
    ask(&sock, &to, conn_id, Frame::Hello { total, seed: 0 }, |f| {
        matches!(f, Frame::HelloAck { .. })
    })
    .expect("no HELLO_ACK");
    let mut out = Vec::new();
    for (i, c) in chunks.iter().enumerate() {
        wire::encode(
            &Packet {
                conn_id,
                pn: i as u64,
                frame: Frame::Data {
                    chunk: i as u64,
                    payload: c,
                },
            },
            &mut out,
        );
        sock.send_to(&out, &to).unwrap();
    }
    let sha256 = fin?;
    ask(
        &sock,
        &to,
        conn_id,
        Frame::Fin {
            total,
            digest: sha256,
        },
        |f| matches!(f, Frame::Done { .. }),
    )
    .flatten()
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A forged transfer (right length, wrong SHA-256) and one whose sender
/// vanishes half-way both fail, and neither touches the output path: the
/// file that was there keeps its bytes, and no temporary file is left.
#[test]
fn recv_output_never_holds_unverified_data() {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("data.bin");
    std::fs::write(&dest, b"precious").unwrap();
    let dest_s = dest.to_str().unwrap();

    // Forged: 10 bytes, delivered in full, with a hash that does not match.
    let port = 5333;
    let r = recv(port, &["--output", dest_s, "--idle-timeout", "5s"]);
    let verdict = forge(port, 10, &[&[7u8; 10]], Some([0xAB; 32]));
    let r = finish(r, Duration::from_secs(30), "receiver");
    assert_eq!(verdict, Some(false), "the receiver accepted a forged hash");
    assert!(!r.status.success());
    assert!(
        text(&r.stderr).contains("verification"),
        "{}",
        text(&r.stderr)
    );
    assert_eq!(std::fs::read(&dest).unwrap(), b"precious");
    assert_eq!(listing(dir.path()), ["data.bin"]);

    // Cut short: half the data, then silence until the idle timeout.
    let port = 5334;
    let r = recv(port, &["--output", dest_s, "--idle-timeout", "1s"]);
    assert_eq!(forge(port, 2800, &[&[1u8; 1400]], None), None);
    let r = finish(r, Duration::from_secs(30), "receiver");
    assert!(!r.status.success());
    assert!(text(&r.stderr).contains("silent"), "{}", text(&r.stderr));
    assert_eq!(std::fs::read(&dest).unwrap(), b"precious");
    assert_eq!(listing(dir.path()), ["data.bin"]);
}

/// A verified transfer replaces the output with exactly the file sent,
/// and leaves nothing else beside it.
#[test]
fn recv_output_gets_the_verified_file() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.bin");
    let data: Vec<u8> = (0..300_001u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&src, &data).unwrap();
    let dest = dir.path().join("dest.bin");
    std::fs::write(&dest, b"old").unwrap();
    let port = 5335;
    let r = recv(
        port,
        &["--output", dest.to_str().unwrap(), "--idle-timeout", "10s"],
    );
    let s = send(
        port,
        &[
            "--file",
            src.to_str().unwrap(),
            "--quiet",
            "--idle-timeout",
            "10s",
        ],
    );
    let s = finish(s, Duration::from_secs(60), "sender");
    let r = finish(r, Duration::from_secs(60), "receiver");
    assert!(s.status.success(), "{}", text(&s.stderr));
    assert!(r.status.success(), "{}", text(&r.stderr));
    assert_eq!(std::fs::read(&dest).unwrap(), data);
    assert_eq!(listing(dir.path()), ["dest.bin", "src.bin"]);
}

/// `bbrlab recv --output` stopped by SIGTERM or Ctrl-C (SIGINT)
/// mid-transfer exits with an error that says so, keeps the file that was
/// at the path, and removes its `.partial-PID` file (which used to stay
/// behind, since the signal ended the process before any cleanup).
#[test]
fn a_signalled_recv_leaves_no_partial_file() {
    for (sig, port) in [(libc::SIGTERM, 5336), (libc::SIGINT, 5337)] {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("data.bin");
        std::fs::write(&dest, b"precious").unwrap();
        let r = recv(
            port,
            &["--output", dest.to_str().unwrap(), "--idle-timeout", "10s"],
        );
        let s = send(
            port,
            &["--duration", "60s", "--quiet", "--idle-timeout", "3s"],
        );
        // Wait (bounded) until the temporary file holds data.
        let t0 = Instant::now();
        loop {
            let written = std::fs::read_dir(dir.path()).unwrap().any(|e| {
                let e = e.unwrap();
                e.file_name().to_string_lossy().contains(".partial-")
                    && e.metadata().is_ok_and(|m| m.len() > 0)
            });
            if written {
                break;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "signal {sig}: no data reached the temporary file"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: signalling our own child by its PID.
        assert_eq!(unsafe { libc::kill(r.id() as i32, sig) }, 0);
        let r = finish(r, Duration::from_secs(30), "receiver");
        let _ = finish(s, Duration::from_secs(60), "sender");
        assert!(!r.status.success(), "signal {sig}: recv reported success");
        let err = text(&r.stderr);
        assert!(err.contains("stopped"), "signal {sig}: {err}");
        assert_eq!(std::fs::read(&dest).unwrap(), b"precious");
        assert_eq!(listing(dir.path()), ["data.bin"], "signal {sig}");
    }
}

/// What the sender can check alone is checked before it sends a packet:
/// a directory as `--file` (it opens, and failed only at the first read
/// after the handshake) and an `--interval` below 1 ms (silently raised to
/// 1 ms). The receiver here is a socket that never answers: the old code
/// sent its HELLO and waited out the 30 s idle timeout.
#[test]
fn bad_send_options_are_refused_before_a_packet_leaves() {
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for (extra, want) in [
        (vec!["--file", d], "is a directory; give a file to send"),
        (
            vec!["--bytes", "1000", "--interval", "0s"],
            "--interval 0s: below the shortest sampling interval, 1ms",
        ),
        (
            vec!["--bytes", "1000", "--interval", "500us"],
            "--interval 500us: below the shortest sampling interval, 1ms; give at least 1ms",
        ),
    ] {
        let mut args = vec!["--idle-timeout", "30s", "--quiet"];
        args.extend(extra);
        let o = finish(send(port, &args), Duration::from_secs(10), "send");
        let err = text(&o.stderr);
        assert!(!o.status.success() && err.contains(want), "{args:?}: {err}");
    }
    silent.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 2048];
    assert!(
        silent.recv(&mut buf).is_err(),
        "a packet was sent before the options were checked"
    );
}
