//! End-to-end integrity on loopback: a byte changed in flight, or a whole
//! chunk replaced by an on-path forger, must make the transfer fail at
//! both ends (BLAKE3 digest at FIN for a file, the pattern check for a
//! pattern), and an untouched transfer through the same relay must arrive
//! intact. The relay sits between sender and receiver and alters exactly
//! one data datagram, the first transmission of a chosen chunk; the
//! altered copy is acknowledged, so the genuine bytes are never resent.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use transport::data::Source;
use transport::receiver::{recv, RecvConfig, RecvSummary};
use transport::sender::{send, SendConfig, SendSummary};
use transport::wire::{self, Frame, CHUNK, DATA_HEADER};

/// What the relay does to the chosen chunk's first datagram.
#[derive(Clone, Copy, Debug)]
enum Tamper {
    /// Forward everything unchanged.
    None,
    /// Flip one bit of payload byte `at`.
    FlipByte { chunk: u64, at: usize },
    /// Keep the header (connection id, packet number, chunk) and replace
    /// every payload byte, as a forger who saw the header would.
    Forge { chunk: u64 },
}

fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Relays datagrams between the sender and `to` until `stop`, applying
/// `tamper` once; returns whether it did.
fn relay(sock: UdpSocket, to: SocketAddr, tamper: Tamper, stop: &AtomicBool) -> bool {
    sock.set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let mut sender: Option<SocketAddr> = None;
    let mut done = false;
    let mut buf = [0u8; 2048];
    let give_up = Instant::now() + Duration::from_secs(120);
    while !stop.load(Ordering::Relaxed) && Instant::now() < give_up {
        let Ok((n, from)) = sock.recv_from(&mut buf) else {
            continue;
        };
        if from == to {
            if let Some(s) = sender {
                let _ = sock.send_to(&buf[..n], s);
            }
            continue;
        }
        sender = Some(from);
        if !done {
            if let Ok(wire::Packet {
                frame: Frame::Data { chunk, payload },
                ..
            }) = wire::decode(&buf[..n])
            {
                let len = payload.len();
                match tamper {
                    Tamper::FlipByte { chunk: c, at } if c == chunk => {
                        buf[DATA_HEADER + at] ^= 0x04;
                        done = true;
                    }
                    Tamper::Forge { chunk: c } if c == chunk => {
                        for b in &mut buf[DATA_HEADER..DATA_HEADER + len] {
                            *b = b.wrapping_mul(7).wrapping_add(1);
                        }
                        done = true;
                    }
                    _ => {}
                }
            }
        }
        let _ = sock.send_to(&buf[..n], to);
    }
    done
}

/// One transfer of `source` through the relay; the receiver writes to
/// `output` if given.
fn transfer(
    source: Source,
    output: Option<std::path::PathBuf>,
    tamper: Tamper,
) -> (
    Result<SendSummary, String>,
    Result<RecvSummary, String>,
    bool,
) {
    let recv_addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let relay_sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let relay_addr = relay_sock.local_addr().unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let r = s.spawn(move || {
            recv(RecvConfig {
                listen: recv_addr,
                output,
                window_chunks: 4096,
                idle_timeout: Duration::from_secs(2),
                accept_timeout: Duration::from_secs(10),
                stop: None,
            })
        });
        let p = s.spawn(|| relay(relay_sock, recv_addr, tamper, &stop));
        std::thread::sleep(Duration::from_millis(100));
        let sent = send(SendConfig {
            peer: relay_addr,
            cc: congestion::Config::new(congestion::Algorithm::Bbr),
            source,
            duration: None,
            idle_timeout: Duration::from_secs(2),
            log: None,
            interval: Duration::from_millis(100),
            progress: false,
            gso: true,
            ecn: false,
        });
        let got = r.join().expect("receiver thread");
        stop.store(true, Ordering::Relaxed);
        let tampered = p.join().expect("relay thread");
        (sent, got, tampered)
    })
}

const BYTES: usize = 3_000_000;

fn file_source(dir: &std::path::Path) -> (Source, Vec<u8>) {
    let data: Vec<u8> = (0..BYTES as u64)
        .map(|i| (i.wrapping_mul(0x9E37_79B9) >> 13) as u8)
        .collect();
    let path = dir.join("in.bin");
    std::fs::write(&path, &data).unwrap();
    (Source::file(&path).unwrap(), data)
}

/// Untouched, the relay changes nothing: the file arrives byte for byte.
#[test]
fn a_file_through_an_honest_relay_arrives_intact() {
    let dir = tempfile::tempdir().unwrap();
    let (source, data) = file_source(dir.path());
    let out = dir.path().join("out.bin");
    let (s, r, _) = transfer(source, Some(out.clone()), Tamper::None);
    assert_eq!(s.expect("send").bytes, BYTES as u64);
    assert_eq!(r.expect("recv").bytes, BYTES as u64);
    assert!(std::fs::read(&out).unwrap() == data, "output differs");
}

/// One flipped bit in one file chunk: the BLAKE3 digest differs, the
/// receiver refuses the transfer and the sender reports the rejection.
#[test]
fn a_flipped_byte_in_a_file_fails_both_ends() {
    for at in [0, 701, CHUNK - 1] {
        let dir = tempfile::tempdir().unwrap();
        let (source, _) = file_source(dir.path());
        let out = dir.path().join("out.bin");
        let (s, r, tampered) = transfer(
            source,
            Some(out.clone()),
            Tamper::FlipByte { chunk: 1000, at },
        );
        assert!(tampered, "the relay never saw chunk 1000");
        let r = r.expect_err("the receiver accepted a corrupted file");
        assert!(r.contains("verification"), "{r}");
        let s = s.expect_err("the sender reported success");
        assert!(s.contains("rejected"), "{s}");
        assert!(!out.exists(), "unverified data left at the output");
    }
}

/// A forged chunk (right header, other bytes) in a file: refused.
#[test]
fn a_forged_file_chunk_fails_both_ends() {
    let dir = tempfile::tempdir().unwrap();
    let (source, _) = file_source(dir.path());
    let (s, r, tampered) = transfer(source, None, Tamper::Forge { chunk: 5 });
    assert!(tampered);
    assert!(r
        .expect_err("forged chunk accepted")
        .contains("verification"));
    assert!(s.is_err());
}

/// In a pattern transfer the receiver's word-at-a-time check names the
/// exact stream offset of the flipped byte, before the FIN.
#[test]
fn a_flipped_byte_in_a_pattern_is_found_at_its_offset() {
    for (chunk, at) in [(0u64, 0usize), (777, 333), (1500, CHUNK - 1)] {
        let source = Source::Pattern {
            seed: 0xC0FFEE,
            total: Some(BYTES as u64),
        };
        let (s, r, tampered) = transfer(source, None, Tamper::FlipByte { chunk, at });
        assert!(tampered);
        let r = r.expect_err("corrupted pattern accepted");
        let offset = chunk * CHUNK as u64 + at as u64;
        assert!(
            r.contains("stream corrupted") && r.contains(&format!("offset {offset} ")),
            "{r}"
        );
        assert!(s.is_err(), "the sender reported success");
    }
}

/// A file to a receiver that writes nothing: checked by the digest alone
/// (it was checked against a seed-0 pattern and always refused).
#[test]
fn a_file_without_an_output_is_verified_by_its_digest() {
    let dir = tempfile::tempdir().unwrap();
    let (source, _) = file_source(dir.path());
    let (s, r, _) = transfer(source, None, Tamper::None);
    assert_eq!(s.expect("send").bytes, BYTES as u64);
    assert_eq!(r.expect("recv").bytes, BYTES as u64);
}

/// A receiver told to stop mid-transfer (as `bbrlab recv` is by Ctrl-C,
/// SIGTERM or SIGHUP) returns an error saying so and leaves nothing in the
/// output's directory: neither the output nor its `.partial-PID` file,
/// which used to stay behind when the process was killed.
#[test]
fn a_stopped_receiver_leaves_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.bin");
    let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let stop = Arc::new(AtomicBool::new(false));
    std::thread::scope(|s| {
        let r = {
            let (out, stop) = (out.clone(), Arc::clone(&stop));
            s.spawn(move || {
                recv(RecvConfig {
                    listen: addr,
                    output: Some(out),
                    window_chunks: 4096,
                    idle_timeout: Duration::from_secs(5),
                    accept_timeout: Duration::from_secs(10),
                    stop: Some(stop),
                })
            })
        };
        std::thread::sleep(Duration::from_millis(100));
        // An endless stream, bounded by its duration and by the sender's
        // idle timeout once the receiver is gone.
        let snd = s.spawn(move || {
            send(SendConfig {
                peer: addr,
                cc: congestion::Config::new(congestion::Algorithm::Bbr),
                source: Source::Pattern {
                    seed: 3,
                    total: None,
                },
                duration: Some(Duration::from_secs(20)),
                idle_timeout: Duration::from_secs(2),
                log: None,
                interval: Duration::from_millis(100),
                progress: false,
                gso: true,
                ecn: false,
            })
        });
        // Stop once the temporary file holds data (bounded wait).
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let written = std::fs::read_dir(dir.path())
                .unwrap()
                .filter_map(|e| e.ok())
                .any(|e| {
                    e.file_name().to_string_lossy().contains(".partial-")
                        && e.metadata().is_ok_and(|m| m.len() > 0)
                });
            if written {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "no data reached the temporary file within 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        stop.store(true, Ordering::Relaxed);
        let err = r
            .join()
            .expect("receiver thread")
            .expect_err("a stopped receiver must not report success");
        assert!(err.contains("stopped"), "{err}");
        assert!(err.contains("nothing written to"), "{err}");
        // The sender gives up by its idle timeout; its result is not the
        // point here.
        let _ = snd.join().expect("sender thread");
    });
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// An output that cannot take the data is refused before any sender is
/// accepted: a directory (the data used to arrive, be verified and then
/// be thrown away at the final rename, while the sender reported
/// success), or a path in a directory that does not exist. No sender is
/// started here, so a receiver that waited for one would say "no sender
/// connected" instead.
#[test]
fn an_unusable_output_is_refused_before_a_sender_connects() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir").join("out.bin");
    for (output, says) in [
        (dir.path().to_path_buf(), "is a directory"),
        (missing, "cannot create the temporary file"),
    ] {
        let e = recv(RecvConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], free_port())),
            output: Some(output.clone()),
            window_chunks: 4096,
            idle_timeout: Duration::from_secs(1),
            accept_timeout: Duration::from_secs(2),
            stop: None,
        })
        .unwrap_err();
        assert!(e.contains(says), "{}: {e}", output.display());
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
