//! The per-packet log (`packets.csv`, `bbrlab sim --packets`): every
//! packet a link direction takes in gets one row, its departure or its
//! drop; the rows add up to what the run's summary counts, and a FIFO's
//! departures are one service time apart or more.

use congestion::{Algorithm, Config};
use netsim::{FlowConfig, PacketKind, PacketMemory, PacketRecord, Recorder, SimConfig};

mod common;
use common::direction;

const MS: u64 = 1_000_000;

/// `bbr` against `cubic` for 5 s on 20 Mbit/s, 40 ms, with `queue` on
/// the forward link.
fn competing(queue: &str, rec: &mut dyn Recorder) -> netsim::Summary {
    let cfg = SimConfig {
        duration_ns: 5_000 * MS,
        seed: 1,
        forward: direction(&format!(
            "rate = \"20mbit\"\ndelay = \"20ms\"\nqueue = {{ {queue} }}"
        )),
        reverse: direction("rate = \"20mbit\"\ndelay = \"20ms\""),
        flows: vec![
            FlowConfig::bulk("bbr", Config::new(Algorithm::Bbr)),
            FlowConfig::bulk("cubic", Config::new(Algorithm::Cubic)),
        ],
        sample_interval_ns: 10 * MS,
        topology: Default::default(),
    };
    netsim::run(&cfg, rec).unwrap()
}

#[test]
fn a_drop_tail_queue_logs_every_packet_its_drops_and_its_service_times() {
    let mut rec = PacketMemory::default();
    let s = competing("limit = \"30pkt\"", &mut rec);
    let rows = &rec.packets;
    for (k, f) in s.flows.iter().enumerate() {
        let data: Vec<&PacketRecord> = rows
            .iter()
            .filter(|r| r.direction == "forward" && r.kind == PacketKind::Data && r.flow == k)
            .collect();
        // One row per packet sent (each enters the forward link once),
        // its drops the summary's.
        assert_eq!(data.len() as u64, f.packets_sent, "flow {k}");
        let dropped = data.iter().filter(|r| r.dropped.is_some()).count() as u64;
        assert_eq!(dropped, f.drops, "flow {k}");
        assert!(dropped > 0, "flow {k}: the 30-packet queue must overflow");
        for r in &data {
            match (r.dropped, r.dequeue_ns) {
                (Some(reason), None) => assert_eq!(reason, link::DropReason::QueueFull),
                (None, Some(d)) => assert!(d > r.enqueue_ns, "{r:?}"),
                _ => panic!("a drop on arrival has no departure, a departure no drop: {r:?}"),
            }
        }
    }
    // The FIFO serves one packet at a time: departures at least one
    // service time (bytes at 20 Mbit/s) apart.
    let mut served: Vec<&PacketRecord> = rows
        .iter()
        .filter(|r| r.direction == "forward" && r.dequeue_ns.is_some())
        .collect();
    served.sort_by_key(|r| r.dequeue_ns);
    for w in served.windows(2) {
        let service = w[1].bytes as u64 * 8 * 1_000_000_000 / 20_000_000;
        let gap = w[1].dequeue_ns.unwrap() - w[0].dequeue_ns.unwrap();
        assert!(gap + 1 >= service, "{:?} then {:?}", w[0], w[1]);
    }
    // The ACKs come back on the reverse link, one row each.
    assert!(rows
        .iter()
        .filter(|r| r.direction == "reverse")
        .all(|r| r.kind == PacketKind::Ack));
    assert!(rows.iter().any(|r| r.direction == "reverse"));
}

/// CoDel drops at the head of the queue, so its packets' fate is known
/// only at departure: those rows come from the release, with the time of
/// the drop.
#[test]
fn a_dequeue_time_discipline_logs_its_drops_at_departure() {
    let mut rec = PacketMemory::default();
    let s = competing(
        "limit = \"1000pkt\", aqm = \"fq_codel\", target = \"5ms\"",
        &mut rec,
    );
    let rows = &rec.packets;
    let codel: Vec<&PacketRecord> = rows
        .iter()
        .filter(|r| r.dropped == Some(link::DropReason::FqCodel))
        .collect();
    assert!(!codel.is_empty(), "FQ-CoDel must drop in 5 s of bulk flows");
    for r in &codel {
        assert!(r.dequeue_ns.is_some_and(|d| d >= r.enqueue_ns), "{r:?}");
    }
    for (k, f) in s.flows.iter().enumerate() {
        let dropped = rows
            .iter()
            .filter(|r| r.flow == k && r.kind == PacketKind::Data && r.dropped.is_some())
            .count() as u64;
        assert_eq!(dropped, f.drops, "flow {k}");
        // Every packet sent has a row, but those still queued at the end.
        let logged = rows
            .iter()
            .filter(|r| r.flow == k && r.kind == PacketKind::Data)
            .count() as u64;
        assert!(
            logged <= f.packets_sent && logged + 1000 >= f.packets_sent,
            "flow {k}: {logged} rows, {} sent",
            f.packets_sent
        );
    }
}

/// The log only watches: a run writes the same summary with it as
/// without.
#[test]
fn logging_packets_changes_nothing_the_run_reports() {
    let with = competing("limit = \"30pkt\"", &mut PacketMemory::default());
    let without = competing("limit = \"30pkt\"", &mut netsim::NoRecorder);
    assert_eq!(format!("{with:?}"), format!("{without:?}"));
}
