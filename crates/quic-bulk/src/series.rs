//! The sender's time series: one row of [`sender::schema::FLOW_COLUMNS`]
//! per sampling interval, the schema every bbrlab source writes first, so
//! a QUIC run plots and compares beside the simulator, the UDP transport
//! and kernel TCP.
//!
//! A stack module fills a [`Sample`] from what its stack reports (the
//! adapter's `Observer` for bbrlab's controllers, the stack's own event
//! reporting for its controllers); what it cannot see stays `None` and is
//! written as an empty cell. [`Series`] turns samples into rows and keeps
//! the smoothed RTT of every sample for the summary's median, so the
//! median is over time (one value per interval), as kernel TCP's sampled
//! `tcpi_rtt` is, not over ACKs.

use sender::schema::FLOW_COLUMNS;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the sender knows at one sampling time. Cumulative counts start
/// at the end of the handshake.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sample {
    /// Seconds from the end of the handshake.
    pub time_s: f64,
    /// Stream bytes the peer has acknowledged.
    pub delivered_bytes: u64,
    /// The most recent RTT sample, ms.
    pub rtt_ms: Option<f64>,
    /// Congestion window, bytes.
    pub cwnd_bytes: Option<u64>,
    /// The controller's pacing rate, bit/s.
    pub pacing_rate_bps: Option<f64>,
    /// Bytes in flight.
    pub inflight_bytes: Option<u64>,
    /// The controller's mode, named as `congestion::Mode::name` names it.
    pub mode: Option<&'static str>,
    /// The bottleneck-bandwidth estimate, bit/s (BBR only).
    pub bw_estimate_bps: Option<f64>,
    /// The min_rtt, ms.
    pub min_rtt_ms: Option<f64>,
    /// The smoothed RTT, ms.
    pub srtt_ms: Option<f64>,
    /// Packets sent.
    pub packets_sent: u64,
    /// Packets declared lost (QUIC resends their frames in new packets,
    /// so these are the run's retransmissions).
    pub packets_lost: u64,
    /// CE marks the peer reported.
    pub delivered_ce: u64,
}

impl Sample {
    /// Overlays the controller state a bbrlab adapter's `Observer` saw
    /// (the same `congestion::observe::Observed` from every stack): cwnd,
    /// pacing rate, bytes in flight, mode, bandwidth estimate and min_rtt
    /// from the controller; srtt and the RTT sample from the adapter, where
    /// it has them, else what the stack's own reporting said.
    pub fn overlay(&mut self, o: &congestion::observe::Observed) {
        let ms = |d: Option<Duration>| d.map(|d| d.as_secs_f64() * 1e3);
        let snap = &o.snapshot;
        self.cwnd_bytes = Some(snap.cwnd_bytes);
        self.pacing_rate_bps = Some(snap.pacing_rate_bytes_per_sec as f64 * 8.0);
        self.inflight_bytes = Some(o.bytes_in_flight);
        self.mode = Some(snap.mode.name());
        self.bw_estimate_bps = snap.bw_estimate_bytes_per_sec.map(|b| b * 8.0);
        self.min_rtt_ms = ms(snap.min_rtt);
        self.srtt_ms = ms(o.srtt).or(self.srtt_ms);
        self.rtt_ms = ms(o.latest_rtt).or(self.rtt_ms);
        self.delivered_ce = o.ce_packets;
    }
}

/// Turns [`Sample`]s into `FLOW_COLUMNS` rows (when logging) and keeps
/// what the summary needs.
pub struct Series {
    log: Option<(csv::Writer<BufWriter<File>>, PathBuf)>,
    last: Option<(f64, u64)>,
    srtt_ms: Vec<f64>,
}

impl Series {
    /// A series that writes rows to `log` (created, with the header) or,
    /// without a log, only keeps the summary's statistics.
    pub fn create(log: Option<&Path>) -> Result<Self, String> {
        let log = match log {
            Some(p) => {
                let f =
                    File::create(p).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
                let mut w = csv::Writer::from_writer(BufWriter::new(f));
                w.write_record(FLOW_COLUMNS.iter().map(|c| c.name))
                    .map_err(|e| format!("writing {}: {e}", p.display()))?;
                Some((w, p.to_path_buf()))
            }
            None => None,
        };
        Ok(Series {
            log,
            last: None,
            srtt_ms: Vec::new(),
        })
    }

    /// Records one sample (a row when logging). Goodput is the delivered
    /// bytes since the previous sample over the time between them.
    pub fn record(&mut self, s: &Sample) -> Result<(), String> {
        if let Some(v) = s.srtt_ms {
            self.srtt_ms.push(v);
        }
        let goodput = match self.last {
            Some((t, d)) if s.time_s > t => {
                Some(s.delivered_bytes.saturating_sub(d) as f64 * 8.0 / (s.time_s - t))
            }
            Some(_) => None,
            None if s.time_s > 0.0 => Some(s.delivered_bytes as f64 * 8.0 / s.time_s),
            None => None,
        };
        self.last = Some((s.time_s, s.delivered_bytes));
        let Some((w, path)) = self.log.as_mut() else {
            return Ok(());
        };
        let opt =
            |v: Option<f64>, digits: usize| v.map_or(String::new(), |x| format!("{x:.digits$}"));
        let int = |v: Option<u64>| v.map_or(String::new(), |x| x.to_string());
        let row: [String; FLOW_COLUMNS.len()] = [
            format!("{:.6}", s.time_s),
            "0".to_string(),
            s.delivered_bytes.to_string(),
            opt(goodput, 0),
            opt(s.rtt_ms, 3),
            int(s.cwnd_bytes),
            opt(s.pacing_rate_bps, 0),
            int(s.inflight_bytes),
            s.mode.unwrap_or("").to_string(),
            opt(s.bw_estimate_bps, 0),
            opt(s.min_rtt_ms, 3),
            String::new(), // queue_delay_ms: an end host cannot see it
            s.packets_lost.to_string(),
            opt(s.srtt_ms, 3),
            s.packets_sent.to_string(),
            s.packets_lost.to_string(),
            s.delivered_ce.to_string(),
        ];
        w.write_record(&row)
            .map_err(|e| format!("writing {}: {e}", path.display()))
    }

    /// Flushes the log; returns the median of the samples' smoothed RTTs
    /// (ms), `None` without any.
    pub fn finish(mut self) -> Result<Option<f64>, String> {
        if let Some((w, path)) = self.log.as_mut() {
            w.flush()
                .map_err(|e| format!("writing {}: {e}", path.display()))?;
        }
        Ok(median(&mut self.srtt_ms))
    }
}

/// Samples the sender every `interval` on the current tokio runtime
/// (`sample` gets the seconds since `t0`, the end of the handshake) until
/// `done` is set, then hands the series back: the sender records the last
/// row itself, at the end's time.
pub fn spawn_sampler<F>(
    mut series: Series,
    interval: Duration,
    t0: Instant,
    done: Arc<AtomicBool>,
    mut sample: F,
) -> tokio::task::JoinHandle<Result<Series, String>>
where
    F: FnMut(f64) -> Sample + Send + 'static,
{
    tokio::spawn(async move {
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if done.load(Ordering::Relaxed) {
                break;
            }
            series.record(&sample(t0.elapsed().as_secs_f64()))?;
        }
        Ok(series)
    })
}

/// The median (the mean of the middle two for an even count).
fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut []), None);
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }

    /// Rows carry the schema's header, goodput from the delivered bytes
    /// between samples, and empty cells for what is unknown.
    #[test]
    fn rows_follow_the_schema() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.csv");
        let mut s = Series::create(Some(&p)).unwrap();
        let mut a = Sample {
            time_s: 0.5,
            delivered_bytes: 1000,
            srtt_ms: Some(10.0),
            cwnd_bytes: Some(15000),
            ..Sample::default()
        };
        s.record(&a).unwrap();
        a.time_s = 1.0;
        a.delivered_bytes = 3000;
        a.srtt_ms = Some(30.0);
        s.record(&a).unwrap();
        assert_eq!(s.finish().unwrap(), Some(20.0));
        let mut r = csv::Reader::from_path(&p).unwrap();
        let h: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
        let names: Vec<&str> = FLOW_COLUMNS.iter().map(|c| c.name).collect();
        assert_eq!(h, names);
        let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 2);
        let col = |n: &str| names.iter().position(|c| *c == n).unwrap();
        // 2000 bytes in 0.5 s is 32 kbit/s.
        assert_eq!(&rows[1][col("goodput_bps")], "32000");
        assert_eq!(&rows[1][col("cwnd_bytes")], "15000");
        assert_eq!(&rows[1][col("pacing_rate_bps")], "");
        assert_eq!(&rows[1][col("mode")], "");
    }
}
