//! The quinn 0.11 stack: its own controllers (`quinn:bbr`, `quinn:cubic`,
//! `quinn:newreno`, the factories quinn-proto's `congestion` module
//! exports) and bbrlab's (`bbr`, `bbr-jitter`, `bbr3`, `cubic`, `reno`)
//! through the `bbrlab-quinn` adapter, whose `Observer` gives the time
//! series their controller state. quinn paces at 1.25 × cwnd / srtt
//! whatever the controller says, so bbrlab's BBR runs here cwnd-limited,
//! without its own pacing (the `pacing_rate_bps` column is the
//! controller's, which quinn ignores).
//!
//! The transfer itself is the one noq's module runs too
//! ([`crate::quinn_family`]); this module says how quinn differs:
//! statistics for the one path in `Connection::stats().path` (cwnd,
//! smoothed and min RTT, packets sent and lost, bytes lost; bytes sent
//! from the UDP counters, ACK-only datagrams included), no bandwidth
//! estimate, and stream chunks wrapped in `Chunk`.
//!
//! ECN: quinn marks ECT(0) and validates ECN by itself; `--ecn` changes
//! nothing here.

/// The quinn stack.
pub struct Quinn;

/// quinn's own controller factories, with their default configurations.
fn own_factory(name: &str) -> Result<Factory, String> {
    use quinn::congestion::{BbrConfig, CubicConfig, NewRenoConfig};
    Ok(match name {
        "bbr" => Arc::new(BbrConfig::default()),
        "cubic" => Arc::new(CubicConfig::default()),
        "newreno" => Arc::new(NewRenoConfig::default()),
        other => return Err(format!("quinn has no controller `{other}`")),
    })
}

fn path_now(conn: &quinn::Connection) -> PathNow {
    let s = conn.stats();
    PathNow {
        srtt: s.path.rtt,
        min_rtt: Some(s.path.min_rtt),
        cwnd: s.path.cwnd,
        bw_bps: None,
        packets_sent: s.path.sent_packets,
        packets_lost: s.path.lost_packets,
        bytes_sent: s.udp_tx.bytes,
        bytes_lost: s.path.lost_bytes,
    }
}

async fn next_chunk(rx: &mut quinn::RecvStream) -> Result<Option<bytes::Bytes>, quinn::ReadError> {
    Ok(rx.read_chunk(usize::MAX, true).await?.map(|c| c.bytes))
}

crate::quinn_family::quinn_family!(
    Quinn,
    "quinn",
    ["bbr", "cubic", "newreno"],
    quinn,
    bbrlab_quinn
);
