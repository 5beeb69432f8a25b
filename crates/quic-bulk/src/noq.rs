//! The noq stack (`noq` 1.4, a fork of quinn): its own controllers
//! (`noq:bbr3`, `noq:cubic`, `noq:newreno`, the factories noq-proto's
//! `congestion` module exports) and bbrlab's (`bbr`, `bbr-jitter`, `bbr3`,
//! `cubic`, `reno`) through the `bbrlab-noq` adapter, whose `Observer`
//! gives the time series their controller state.
//!
//! The transfer itself is the one quinn's module runs too
//! ([`crate::quinn_family`]); this module says how noq differs: path
//! statistics per path (`Connection::path_stats(PathId::ZERO)`: cwnd,
//! smoothed RTT, the controller's bandwidth estimate, packets and bytes
//! sent and lost; no min RTT), and stream chunks as plain `Bytes`.
//!
//! ECN: noq marks ECT(0) and validates ECN by itself; `--ecn` changes
//! nothing here.

/// The noq stack.
pub struct Noq;

/// noq's own controller factories, with their default configurations.
fn own_factory(name: &str) -> Result<Factory, String> {
    use noq::congestion::{Bbr3Config, CubicConfig, NewRenoConfig};
    Ok(match name {
        "bbr3" => Arc::new(Bbr3Config::default()),
        "cubic" => Arc::new(CubicConfig::default()),
        "newreno" => Arc::new(NewRenoConfig::default()),
        other => return Err(format!("noq has no controller `{other}`")),
    })
}

/// The first (and, without multipath, only) path's statistics.
fn path_now(conn: &noq::Connection) -> PathNow {
    let Some(p) = conn.path_stats(noq::PathId::ZERO) else {
        return PathNow::default();
    };
    PathNow {
        srtt: p.rtt,
        min_rtt: None,
        cwnd: p.cwnd,
        bw_bps: p.bandwidth_estimate.map(|b| b as f64),
        packets_sent: p.sent_packets,
        packets_lost: p.lost_packets,
        bytes_sent: p.sent_bytes,
        bytes_lost: p.lost_bytes,
    }
}

async fn next_chunk(rx: &mut noq::RecvStream) -> Result<Option<bytes::Bytes>, noq::ReadError> {
    rx.read_chunk(usize::MAX).await
}

crate::quinn_family::quinn_family!(Noq, "noq", ["bbr3", "cubic", "newreno"], noq, bbrlab_noq);
