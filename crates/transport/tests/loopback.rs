//! Whole transfers on loopback (no root, no emulator): every byte arrives,
//! GSO batching really batches, and the receiver never processes a
//! datagram twice. Each test uses its own ports.

mod common;

use sender::schema::{
    Column, DATA_PACKETS_SENT, DELIVERED_BYTES, FLOW, MODE, RETRANSMITTED_PACKETS,
};
use std::net::SocketAddr;
use std::time::Duration;
use transport::data::Source;
use transport::receiver::{recv, RecvConfig, RecvSummary};
use transport::sender::{send, SendConfig, SendSummary};

fn transfer(port: u16, bytes: u64, gso: bool) -> (SendSummary, RecvSummary) {
    let (sent, got) = common::with_receiver(port, |addr| {
        send(SendConfig {
            gso,
            ..common::pattern_config(
                addr,
                congestion::Config::new(congestion::Algorithm::Bbr),
                11,
                bytes,
            )
        })
        .expect("send")
    });
    (sent, got.expect("recv"))
}

/// 50 MB with and without GSO: intact at both ends, and a duplicate at the
/// receiver can only come from a retransmission (a receive path that hands
/// a datagram out twice breaks this). With GSO, sends carry several
/// datagrams each: on loopback BBR's quantum is 64 KiB (46 datagrams), so
/// the mean must be well above 1; 4 allows for the slow start and the
/// small bursts after each ACK.
#[test]
fn fifty_megabytes_intact_with_and_without_gso() {
    for (gso, port) in [(true, 47_311), (false, 47_312)] {
        let (s, r) = transfer(port, 50_000_000, gso);
        assert_eq!(s.bytes, 50_000_000, "gso={gso}");
        assert_eq!(r.bytes, 50_000_000, "gso={gso}");
        assert!(
            r.duplicates <= s.retransmissions,
            "gso={gso}: {} duplicates from {} retransmissions",
            r.duplicates,
            s.retransmissions
        );
        assert_eq!((r.malformed, r.stray, r.refused), (0, 0, 0), "gso={gso}");
        if gso && s.gso {
            assert!(s.datagrams_per_syscall > 4.0, "{s:?}");
        } else {
            assert!((s.datagrams_per_syscall - 1.0).abs() < 1e-9, "{s:?}");
        }
    }
}

/// The send log is written through the csv crate: it reads back as CSV
/// with every row as wide as the header, and the header is the shared
/// schema followed by the transport's own columns.
#[test]
fn the_send_log_reads_back_as_csv() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("send.csv");
    let addr = SocketAddr::from(([127, 0, 0, 1], 47_313));
    std::thread::scope(|s| {
        let r = s.spawn(move || {
            recv(RecvConfig {
                listen: addr,
                output: None,
                window_chunks: 8192,
                idle_timeout: Duration::from_secs(5),
                accept_timeout: Duration::from_secs(10),
                stop: None,
            })
        });
        std::thread::sleep(Duration::from_millis(100));
        send(SendConfig {
            peer: addr,
            cc: congestion::Config::new(congestion::Algorithm::Cubic),
            source: Source::Pattern {
                seed: 5,
                total: Some(5_000_000),
            },
            duration: None,
            idle_timeout: Duration::from_secs(5),
            log: Some(log.clone()),
            interval: Duration::from_millis(1),
            progress: false,
            gso: true,
            ecn: false,
        })
        .expect("send");
        r.join().expect("receiver thread").expect("recv");
    });
    let mut rd = csv::Reader::from_path(&log).unwrap();
    let header = rd.headers().unwrap().clone();
    let want = format!(
        "{},{}",
        sender::schema::FLOW_CSV_HEADER,
        transport::sender::PACING_ERROR_US
    );
    assert_eq!(header.iter().collect::<Vec<_>>().join(","), want);
    let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.expect("a CSV row")).collect();
    assert!(!rows.is_empty(), "no rows");
    // Each cell is under its column's name: read by name, the values are
    // what those columns mean.
    let col = |c: Column| header.iter().position(|h| h == c.name).unwrap();
    let num = |r: &csv::StringRecord, c| r[col(c)].parse::<u64>().expect("a count");
    for r in &rows {
        assert_eq!(r.len(), header.len(), "{r:?}");
        assert!(!r[col(MODE)].is_empty(), "{r:?}");
        assert_eq!(&r[col(FLOW)], "0", "{r:?}");
        assert!(
            num(r, RETRANSMITTED_PACKETS) <= num(r, DATA_PACKETS_SENT),
            "{r:?}"
        );
    }
    let last = rows.last().unwrap();
    // Bytes delivered per data packet sent: at most a chunk, and not far
    // below it on a loopback that loses nothing.
    let per_packet = num(last, DELIVERED_BYTES) / num(last, DATA_PACKETS_SENT).max(1);
    assert!(
        (100..=transport::wire::CHUNK as u64).contains(&per_packet),
        "{per_packet} bytes a packet: {last:?}"
    );
}
