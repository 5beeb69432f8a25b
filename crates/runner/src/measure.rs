//! One reader for a flows.csv written by any source (the simulator, the
//! UDP transport, the kernel probe, quic-bulk): the same statistics on
//! every one, over a common window from its first data packet.

use crate::stats::quantile;
use figures::Table;
use sender::schema;
use std::path::{Path, PathBuf};

/// A source's figures over the common window, times from its origin.
#[derive(Debug)]
pub struct Measured {
    /// Payload delivered over the time since the first data packet.
    pub goodput_mbps: f64,
    pub rtt_median_ms: Option<f64>,
    pub rtt_p95_ms: Option<f64>,
    pub data_packets: Option<u64>,
    pub retransmitted: Option<u64>,
    pub bw_mbps: Option<f64>,
    pub min_rtt_ms: Option<f64>,
    pub goodput: Vec<(f64, f64)>,
    pub rtt: Vec<(f64, f64)>,
    pub bw: Vec<(f64, f64)>,
    pub min_rtt: Vec<(f64, f64)>,
}

impl Measured {
    pub fn retransmitted_fraction(&self) -> Option<f64> {
        match (self.retransmitted, self.data_packets) {
            (Some(r), Some(n)) if n > 0 => Some(r as f64 / n as f64),
            _ => None,
        }
    }
}

/// Width of the goodput overlay's averaging window. Kernel TCP's
/// `bytes_acked` jumps when a SACK hole fills, so 10 ms goodput spikes to
/// many times the link rate; 100 ms (2.5 RTTs on the default path) shows
/// the rate the eye wants while keeping PROBE_RTT dips visible.
const GOODPUT_WINDOW_S: f64 = 0.1;

/// Goodput in Mbit/s over consecutive windows of `window` seconds, from a
/// cumulative delivered-bytes series.
fn windowed_goodput(delivered: &[(f64, f64)], window: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let Some(&(mut t0, mut b0)) = delivered.first() else {
        return out;
    };
    for &(t, b) in delivered {
        if t - t0 >= window {
            out.push((t, (b - b0) * 8.0 / (t - t0) / 1e6));
            (t0, b0) = (t, b);
        }
    }
    out
}

/// Moves a series to the common origin (subtracting `origin_s`) and keeps
/// the points inside `[0, window_s]`.
fn align(points: Vec<(f64, f64)>, origin_s: f64, window_s: f64) -> Vec<(f64, f64)> {
    points
        .into_iter()
        .map(|(t, v)| (t - origin_s, v))
        .filter(|&(t, _)| (-1e-9..=window_s + 1e-9).contains(&t))
        .collect()
}

/// Reads a flows.csv written by any source: `origin_s` is when its first
/// data packet left (in the file's own times), `window_s` the common span
/// measured from there.
pub fn measure(csv: &Path, origin_s: f64, window_s: f64) -> Result<Measured, String> {
    let t = Table::read(csv)?;
    let col = |y: schema::Column| -> Result<Vec<(f64, f64)>, String> {
        Ok(align(
            t.points(
                csv,
                schema::TIME_S.name,
                y.name,
                Some((schema::FLOW.name, "0")),
            )?,
            origin_s,
            window_s,
        ))
    };
    let delivered = col(schema::DELIVERED_BYTES)?;
    let srtt = col(schema::SRTT_MS)?;
    let sent = col(schema::DATA_PACKETS_SENT)?;
    let retx = col(schema::RETRANSMITTED_PACKETS)?;
    let bw = col(schema::BW_ESTIMATE_BPS)?;
    let min_rtt = col(schema::MIN_RTT_MS)?;
    let goodput_mbps = match delivered.last() {
        Some(&(t, b)) if t > 0.0 => b * 8.0 / t / 1e6,
        _ => 0.0,
    };
    let mut r: Vec<f64> = srtt.iter().map(|p| p.1).collect();
    let half = window_s / 2.0;
    let mut bws: Vec<f64> = bw
        .iter()
        .filter(|p| p.0 >= half)
        .map(|p| p.1 / 1e6)
        .collect();
    Ok(Measured {
        goodput_mbps,
        rtt_median_ms: quantile(&mut r, 0.5),
        rtt_p95_ms: quantile(&mut r, 0.95),
        data_packets: sent.last().map(|p| p.1 as u64),
        retransmitted: retx.last().map(|p| p.1 as u64),
        bw_mbps: quantile(&mut bws, 0.5),
        min_rtt_ms: min_rtt.last().map(|p| p.1),
        goodput: windowed_goodput(&delivered, GOODPUT_WINDOW_S),
        rtt: srtt,
        bw: bw.iter().map(|&(t, b)| (t, b / 1e6)).collect(),
        min_rtt,
    })
}

#[doc(hidden)]
/// A flows.csv of flow 0 with rows (time s, delivered bytes, srtt ms,
/// data packets sent, retransmitted packets), the other columns fixed: for
/// tests of code that reads one (here and in the crates above).
pub fn sample_flows_csv(
    dir: &Path,
    rows: &[(f64, u64, f64, u64, u64)],
) -> Result<PathBuf, csv::Error> {
    let p = dir.join("flows.csv");
    let mut w = csv::Writer::from_path(&p)?;
    w.write_record(schema::FLOW_CSV_HEADER.split(','))?;
    for &(t, d, s, n, r) in rows {
        // drops (link drops in the simulator) deliberately disagrees
        // with the retransmission count, which is what must be used.
        let (t, d, s, n, r3) = (
            format!("{t:.6}"),
            d.to_string(),
            format!("{s:.3}"),
            n.to_string(),
            (r * 3).to_string(),
        );
        let r = r.to_string();
        // By column name, so a column the schema gains later is just
        // left empty here.
        let cell = |c: &schema::Column| -> &str {
            match c.name {
                "time_s" => &t,
                "delivered_bytes" => &d,
                "rtt_ms" => "99.000",
                "mode" => "probe_bw",
                "bw_estimate_bps" => "1000000",
                "min_rtt_ms" => "40.000",
                "queue_delay_ms" => "0.000",
                "drops" => &r3,
                "srtt_ms" => &s,
                "data_packets_sent" => &n,
                "retransmitted_packets" => &r,
                "flow" | "goodput_bps" | "cwnd_bytes" | "pacing_rate_bps" | "inflight_bytes" => "0",
                _ => "",
            }
        };
        w.write_record(schema::FLOW_COLUMNS.iter().map(cell))?;
    }
    w.flush()?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(dir: &Path, rows: &[(f64, u64, f64, u64, u64)]) -> PathBuf {
        sample_flows_csv(dir, rows).unwrap()
    }

    #[test]
    fn retransmissions_are_a_share_of_data_packets_at_the_window_end() {
        let dir = tempfile::tempdir().unwrap();
        let p = csv(
            dir.path(),
            &[
                (0.0, 0, 40.0, 0, 0),
                (1.0, 1_000_000, 50.0, 700, 7),
                (2.0, 2_000_000, 60.0, 1400, 10),
                // After the 2 s window: ignored.
                (3.0, 2_100_000, 500.0, 1500, 200),
            ],
        );
        let m = measure(&p, 0.0, 2.0).unwrap();
        assert_eq!((m.retransmitted, m.data_packets), (Some(10), Some(1400)));
        assert!((m.retransmitted_fraction().unwrap() - 10.0 / 1400.0).abs() < 1e-12);
        // 2 MB in 2 s; the srtt median of 40, 50, 60 (not the rtt_ms
        // column's 99, nor the post-window 500).
        assert!((m.goodput_mbps - 8.0).abs() < 1e-9);
        assert_eq!(m.rtt_median_ms, Some(50.0));
        // runner::stats::quantile interpolates (the one rule every report
        // uses): 0.95 of the way from 40 to 60 over two steps is 59.
        assert_eq!(m.rtt_p95_ms, Some(59.0));
    }

    #[test]
    fn no_packets_sent_gives_no_fraction() {
        let dir = tempfile::tempdir().unwrap();
        let p = csv(dir.path(), &[(0.0, 0, 40.0, 0, 0)]);
        let m = measure(&p, 0.0, 1.0).unwrap();
        assert_eq!(m.retransmitted_fraction(), None);
        assert_eq!(m.goodput_mbps, 0.0);
    }

    #[test]
    fn a_late_flow_start_is_moved_to_the_origin() {
        // A simulated flow starting at 1.5 s: its samples before then do
        // not exist, and times count from its start.
        let dir = tempfile::tempdir().unwrap();
        let p = csv(
            dir.path(),
            &[
                (1.5, 0, 40.0, 0, 0),
                (2.5, 1_250_000, 45.0, 900, 0),
                (3.5, 2_500_000, 45.0, 1800, 0),
            ],
        );
        let m = measure(&p, 1.5, 2.0).unwrap();
        // 2.5 MB in the 2 s since the start: 10 Mbit/s, not 2.5 MB over
        // 3.5 s of file time.
        assert!((m.goodput_mbps - 10.0).abs() < 1e-9);
        assert_eq!(m.rtt.first().map(|p| p.0), Some(0.0));
        assert!((m.rtt.last().unwrap().0 - 2.0).abs() < 1e-9);
    }
}
