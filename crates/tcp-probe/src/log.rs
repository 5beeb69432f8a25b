//! The sampler: a thread that reads the socket every interval and writes
//! the time series in the simulator's schema.

use super::*;

/// What the sampler hands back: (time, srtt ms) and (time, delivery rate
/// bit/s) per sample, and the last reading.
pub(crate) struct Sampled {
    pub(crate) rtts: Vec<(f64, f64)>,
    pub(crate) rates: Vec<(f64, f64)>,
    pub(crate) last: Probe,
}

pub(crate) fn opt_cell<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

/// The sampler: one row of the shared schema per interval, timed from
/// `t0`, the instant the sender starts writing.
pub(crate) fn sample_loop(
    fd: i32,
    t0: Instant,
    interval: Duration,
    done: &AtomicBool,
    log: Option<PathBuf>,
) -> Result<Sampled, String> {
    let log_err = |e: csv::Error| match &log {
        Some(p) => format!("writing {}: {e}", p.display()),
        None => e.to_string(),
    };
    let mut w = match &log {
        Some(p) => {
            let mut w = csv::Writer::from_writer(BufWriter::new(
                File::create(p).map_err(|e| format!("cannot write {}: {e}", p.display()))?,
            ));
            w.write_record(log_header()).map_err(log_err)?;
            Some(w)
        }
        None => None,
    };
    let mut out = Sampled {
        rtts: Vec::new(),
        rates: Vec::new(),
        last: Probe::default(),
    };
    #[cfg(feature = "kernel")]
    let mut bpf_cc = kernel_cc::Sampler::for_socket(fd, log.as_deref());
    let mut last_acked = 0u64;
    let mut last_t = 0.0;
    let mut next = t0;
    while !done.load(Ordering::Relaxed) {
        next += interval;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        }
        let Ok((ti, len)) = getsockopt_len::<TcpInfo>(fd, libc::TCP_INFO) else {
            break;
        };
        let p = Probe::from_info(&ti, len);
        // bbrlab's BPF controls have no TCP_CC_INFO: their state comes
        // from their socket-storage map, in the same units.
        let bbr = getsockopt::<BbrInfo>(fd, TCP_CC_INFO)
            .ok()
            .filter(|b| b.pacing_gain > 0);
        #[allow(unused_mut)]
        let mut mode: Option<&'static str> = None;
        #[cfg(feature = "kernel")]
        let bbr = bbr.or_else(|| {
            let (b, m) = bpf_info(bpf_cc.as_mut()?, fd, t0)?;
            mode = Some(m);
            Some(b)
        });
        let t = t0.elapsed().as_secs_f64();
        let rtt_ms = p.srtt_us as f64 / 1000.0;
        if p.srtt_us > 0 {
            out.rtts.push((t, rtt_ms));
        }
        if let Some(r) = p.delivery_rate.filter(|&r| r > 0) {
            out.rates.push((t, r as f64 * 8.0));
        }
        if let Some(w) = w.as_mut() {
            let goodput = (p.bytes_acked - last_acked) as f64 * 8.0 / (t - last_t).max(1e-6);
            w.write_record(log_row(t, goodput, &p, &ti, bbr.as_ref(), mode))
                .map_err(log_err)?;
        }
        last_acked = p.bytes_acked;
        last_t = t;
        out.last = p;
    }
    // One last reading, so the counters cover the whole transfer.
    if let Ok(p) = read_probe(fd) {
        out.last = p;
    }
    if let Some(mut w) = w {
        w.flush().map_err(|e| log_err(csv::Error::from(e)))?;
    }
    Ok(out)
}

/// The log's columns: the shared schema, then the probe's own
/// ([`PROBE_COLUMNS`]).
pub(crate) fn log_header() -> Vec<&'static str> {
    [FLOW_CSV_HEADER, PROBE_COLUMNS]
        .iter()
        .flat_map(|h| h.split(','))
        .collect()
}

/// One row of the log, in [`log_header`]'s order, at `t` seconds with
/// `goodput` bit/s over the last interval, from one `TCP_INFO` reading
/// (`p`, `ti`) and, for BBR, `TCP_CC_INFO`. Written through the `csv`
/// crate, so every row has the header's columns whatever a cell holds.
/// `mode` is the control's own mode name where it publishes one (our BPF
/// controls); else it is read from BBR's gains.
pub(crate) fn log_row(
    t: f64,
    goodput: f64,
    p: &Probe,
    ti: &TcpInfo,
    bbr: Option<&BbrInfo>,
    mode: Option<&str>,
) -> Vec<String> {
    log_header()
        .into_iter()
        .map(|name| match (name, mode) {
            ("mode", Some(m)) => m.to_string(),
            _ => log_cell(name, t, goodput, p, ti, bbr).unwrap_or_default(),
        })
        .collect()
}

/// The cell of column `name` ([`log_header`]'s names: the shared schema's,
/// then the probe's own); `None` for a name the probe does not know (a
/// test checks that it knows every one, so a column the schema gains is
/// written as soon as it has an arm here).
pub(crate) fn log_cell(
    name: &str,
    t: f64,
    goodput: f64,
    p: &Probe,
    ti: &TcpInfo,
    bbr: Option<&BbrInfo>,
) -> Option<String> {
    let mss = ti.snd_mss as u64;
    let bbr = bbr.filter(|b| b.pacing_gain > 0);
    Some(match name {
        "time_s" => format!("{t:.6}"),
        "flow" => "0".into(),
        "delivered_bytes" => p.bytes_acked.to_string(),
        "goodput_bps" => format!("{goodput:.0}"),
        // The kernel's rtt is its srtt, so srtt_ms repeats it: both
        // columns mean what they mean on every source.
        "rtt_ms" | "srtt_ms" => format!("{:.3}", p.srtt_us as f64 / 1000.0),
        "cwnd_bytes" => (ti.snd_cwnd as u64 * mss).to_string(),
        "pacing_rate_bps" => (ti.pacing_rate * 8).to_string(),
        "inflight_bytes" => ((ti.unacked as u64 + ti.retrans as u64)
            .saturating_sub(ti.sacked as u64 + ti.lost as u64)
            * mss)
            .to_string(),
        "mode" => bbr.map_or("", bbr_mode).into(),
        "bw_estimate_bps" => bbr.map_or(String::new(), |b| {
            format!("{}", ((b.bw_hi as u64) << 32 | b.bw_lo as u64) * 8)
        }),
        "min_rtt_ms" => format!(
            "{:.3}",
            bbr.map_or(ti.min_rtt, |b| b.min_rtt) as f64 / 1000.0
        ),
        // queue_delay_ms: an end host cannot see the bottleneck's queue.
        "queue_delay_ms" => String::new(),
        // drops: the kernel's retransmissions stand for its losses.
        "drops" | "retransmitted_packets" => p.total_retrans.to_string(),
        "data_packets_sent" => opt_cell(p.data_segs_out),
        "delivered_ce" => opt_cell(p.delivered_ce),
        "delivery_rate_bps" => opt_cell(p.delivery_rate.map(|r| r * 8)),
        "busy_time_us" => opt_cell(p.busy_time_us),
        "rwnd_limited_us" => opt_cell(p.rwnd_limited_us),
        "sndbuf_limited_us" => opt_cell(p.sndbuf_limited_us),
        "rtos" => opt_cell(p.total_rto),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel probe's log goes through the `csv` crate: the header is
    /// the shared schema plus the probe's columns, every row has as many
    /// cells, and a reader gets the values back by column name.
    #[test]
    fn the_log_has_the_shared_schema_and_rows_of_its_width() {
        let header = log_header();
        assert_eq!(
            header.join(","),
            format!("{FLOW_CSV_HEADER},{PROBE_COLUMNS}")
        );
        let ti = sample_info();
        let p = Probe::from_info(&ti, size_of::<TcpInfo>());
        let bbr = BbrInfo {
            pacing_gain: 256,
            cwnd_gain: 512,
            ..BbrInfo::default()
        };
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(&header).unwrap();
        for b in [Some(&bbr), None] {
            let row = log_row(1.5, 2e6, &p, &ti, b, None);
            assert_eq!(row.len(), header.len());
            w.write_record(&row).unwrap();
        }
        let bytes = w.into_inner().unwrap();
        let mut r = csv::Reader::from_reader(bytes.as_slice());
        let names: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
        let col = |n: &str| names.iter().position(|h| h == n).unwrap();
        let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(&rows[0][col("mode")], "probe_bw");
        assert_eq!(&rows[1][col("mode")], "");
        assert_eq!(&rows[0][col("srtt_ms")], &rows[0][col("rtt_ms")]);
        assert_eq!(&rows[0][col("retransmitted_packets")], "7");
        assert_eq!(&rows[0][col("rtos")], "2");
        assert_eq!(&rows[0][col("queue_delay_ms")], "");
        assert_eq!(&rows[0][col("min_rtt_ms")], "0.000");
        assert_eq!(&rows[1][col("min_rtt_ms")], "0.000");
        assert_eq!(&rows[0][col("data_packets_sent")], "700");
        assert_eq!(&rows[0][col("delivery_rate_bps")], "19200000");
        // The schema's CE column, once it has one.
        if names.iter().any(|n| n == "delivered_ce") {
            assert_eq!(&rows[0][col("delivered_ce")], "31");
        }
    }

    /// Every column of the log (the shared schema's and the probe's) has
    /// a cell: a column the schema gains fails this test until
    /// [`log_cell`] writes it, rather than going out empty.
    #[test]
    fn the_log_knows_every_column() {
        let ti = sample_info();
        let p = Probe::from_info(&ti, size_of::<TcpInfo>());
        for name in log_header() {
            assert!(
                log_cell(name, 0.0, 0.0, &p, &ti, None).is_some(),
                "column `{name}` unknown"
            );
        }
        assert_eq!(
            log_cell("delivered_ce", 0.0, 0.0, &p, &ti, None).as_deref(),
            Some("31")
        );
    }
}
