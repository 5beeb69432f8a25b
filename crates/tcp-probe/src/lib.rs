//! `bbrlab tcp`: a bulk sender and receiver over kernel TCP, for measuring
//! Linux's own `tcp_bbr`, CUBIC and Reno.
//!
//! The sender picks the kernel algorithm per socket (`TCP_CONGESTION`),
//! and a sampler thread reads `TCP_INFO` and, for BBR, `TCP_CC_INFO`
//! (bw, min_rtt, pacing and cwnd gains) every interval, writing the same
//! time-series schema as the simulator. The stream is framed and carries a
//! seeded byte pattern and a SHA-256 trailer; the receiver checks every
//! byte, the length and the hash, and answers `OK` or an error.
//!
//! With the `kernel` feature, a socket running one of bbrlab's own BPF
//! controls (which have no `TCP_CC_INFO`) is read through their state map
//! instead; without it, such a socket's BBR columns stay empty.
//!
//! ```
//! use std::time::Duration;
//! // A verified 1 MB transfer over loopback with the kernel's CUBIC.
//! let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
//! let addr = listener.local_addr().unwrap();
//! drop(listener); // recv binds the port itself
//! let receiver = std::thread::spawn(move || tcp_probe::recv(addr, Duration::from_secs(10)));
//! std::thread::sleep(Duration::from_millis(200));
//! let sent = tcp_probe::send(&tcp_probe::SendOptions {
//!     to: addr,
//!     cc: "cubic".into(),
//!     duration_s: 0.0,
//!     bytes: Some(1_000_000),
//!     interval: Duration::from_millis(10),
//!     log: None,
//! })
//! .unwrap();
//! receiver.join().unwrap().unwrap();
//! // Every byte was checked by the receiver (pattern, length, SHA-256).
//! assert_eq!(sent.bytes, 1_000_000);
//! assert!(sent.goodput_bps > 0.0);
//! ```

use sender::schema::FLOW_CSV_HEADER;
use sha2::{Digest, Sha256};
use stats::quantile;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const MAGIC: &[u8; 4] = b"BBRL";
const FRAME: usize = 64 * 1024;
const TCP_CONGESTION: libc::c_int = 13;
const TCP_CC_INFO: libc::c_int = 26;

/// At most this much written but not yet sent (`TCP_NOTSENT_LOWAT`): the
/// writer blocks beyond it. Without a bound the kernel may let a bulk
/// writer queue up to `tcp_wmem[2]` (64 MiB in `bbrlab emu`'s namespaces)
/// before the first byte of it leaves, so `--duration` would stop writing
/// on time and then drain for a minute (seen with the BPF controls, whose
/// send buffer sometimes autotunes to that maximum; docs/src/kernel.md, "Is
/// `bbrlab_bbr` the kernel's BBR?"). 512 KiB keeps a `--duration` run
/// within 1.4 s of its end at 3 Mbit/s (42 ms at 100 Mbit/s) and is still
/// 4 ms of data at 1 Gbit/s, far more than the writer needs to refill.
pub const NOTSENT_LOWAT_BYTES: u32 = 512 * 1024;

/// The kernel's `struct tcp_info` (include/uapi/linux/tcp.h) up to
/// `tcpi_total_rto_time`. The layout is append-only across kernel
/// versions and the kernel copies min(our size, its size) bytes and
/// reports that length, so a field past the returned length does not
/// exist on the running kernel: [`Probe::from_info`] turns such fields into
/// `None` rather than reading our zero-initialised bytes as data. Fields
/// and the version that added them: `data_segs_out` 4.6,
/// `delivery_rate` 4.9, `busy_time`/`rwnd_limited`/`sndbuf_limited` 4.10,
/// `delivered` 4.18, `bytes_sent`/`bytes_retrans` 4.19, `rcv_ooopack` and
/// `snd_wnd` 5.4, `rcv_wnd`/`rehash` 6.2, `total_rto*` 6.7.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
struct TcpInfo {
    state: u8,
    ca_state: u8,
    retransmits: u8,
    probes: u8,
    backoff: u8,
    options: u8,
    wscale: u8,
    flags: u8,
    rto: u32,
    ato: u32,
    snd_mss: u32,
    rcv_mss: u32,
    unacked: u32,
    sacked: u32,
    lost: u32,
    retrans: u32,
    fackets: u32,
    last_data_sent: u32,
    last_ack_sent: u32,
    last_data_recv: u32,
    last_ack_recv: u32,
    pmtu: u32,
    rcv_ssthresh: u32,
    rtt: u32,
    rttvar: u32,
    snd_ssthresh: u32,
    snd_cwnd: u32,
    advmss: u32,
    reordering: u32,
    rcv_rtt: u32,
    rcv_space: u32,
    total_retrans: u32,
    pacing_rate: u64,
    max_pacing_rate: u64,
    bytes_acked: u64,
    bytes_received: u64,
    segs_out: u32,
    segs_in: u32,
    notsent_bytes: u32,
    min_rtt: u32,
    data_segs_in: u32,
    data_segs_out: u32,
    delivery_rate: u64,
    busy_time: u64,
    rwnd_limited: u64,
    sndbuf_limited: u64,
    delivered: u32,
    delivered_ce: u32,
    bytes_sent: u64,
    bytes_retrans: u64,
    dsack_dups: u32,
    reord_seen: u32,
    rcv_ooopack: u32,
    snd_wnd: u32,
    rcv_wnd: u32,
    rehash: u32,
    total_rto: u16,
    total_rto_recoveries: u16,
    total_rto_time: u32,
}

/// Whether the field at `offset` of `size` bytes lies inside the `len`
/// bytes the kernel filled.
fn present(len: usize, offset: usize, size: usize) -> bool {
    offset + size <= len
}

/// Reads `$field` of a [`TcpInfo`] the kernel filled `$len` bytes of, or
/// `None` when this kernel's struct ends before it.
macro_rules! field {
    ($ti:expr, $len:expr, $field:ident) => {
        present(
            $len,
            std::mem::offset_of!(TcpInfo, $field),
            std::mem::size_of_val(&$ti.$field),
        )
        .then_some($ti.$field)
    };
}

/// What one `TCP_INFO` read tells about the sender, with each field that
/// newer kernels added as `None` when the running kernel lacks it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Probe {
    /// Payload bytes the peer acknowledged.
    bytes_acked: u64,
    /// Linux's smoothed RTT (`tcpi_rtt`, srtt per RFC 6298), µs.
    srtt_us: u32,
    /// Data segments sent, retransmissions included (`tcpi_data_segs_out`).
    data_segs_out: Option<u32>,
    /// Segments retransmitted (`tcpi_total_retrans`; not `tcpi_retransmits`,
    /// which is the count of back-to-back RTOs still unresolved).
    total_retrans: u32,
    /// Retransmission timeouts over the connection (`tcpi_total_rto`,
    /// Linux 6.7), SYN timeouts included.
    total_rto: Option<u16>,
    /// The latest delivery-rate sample, bytes/s.
    delivery_rate: Option<u64>,
    /// Time with data outstanding, µs.
    busy_time_us: Option<u64>,
    /// Of it, time the peer's receive window was the limit, µs.
    rwnd_limited_us: Option<u64>,
    /// Of it, time the local send buffer was the limit, µs.
    sndbuf_limited_us: Option<u64>,
    /// Packets acknowledged by ACKs that echoed congestion
    /// (`tcpi_delivered_ce`, Linux 4.18): the kernel adds an ACK's newly
    /// delivered packets when the ACK carries ECE (`tcp_count_delivered`).
    /// With classic ECN (`net.ipv4.tcp_ecn = 1`) the receiver sets ECE on
    /// every ACK from a CE mark until the sender's CWR, so this counts
    /// the packets acknowledged under an echo, not CE marks one for one.
    delivered_ce: Option<u32>,
    /// Sender MSS and path MTU, bytes.
    snd_mss: u32,
    pmtu: u32,
}

impl Probe {
    fn from_info(ti: &TcpInfo, len: usize) -> Self {
        Probe {
            bytes_acked: field!(ti, len, bytes_acked).unwrap_or(0),
            srtt_us: ti.rtt,
            data_segs_out: field!(ti, len, data_segs_out),
            total_retrans: ti.total_retrans,
            total_rto: field!(ti, len, total_rto),
            delivery_rate: field!(ti, len, delivery_rate),
            busy_time_us: field!(ti, len, busy_time),
            rwnd_limited_us: field!(ti, len, rwnd_limited),
            sndbuf_limited_us: field!(ti, len, sndbuf_limited),
            delivered_ce: field!(ti, len, delivered_ce),
            snd_mss: ti.snd_mss,
            pmtu: ti.pmtu,
        }
    }

    /// Share of the busy time the receive window or the send buffer was
    /// the limit: near 0 means the path (cwnd/pacing) set the pace; a
    /// large share means the hosts did, and the run says little about the
    /// congestion control.
    fn host_limited_fraction(&self) -> Option<f64> {
        let busy = self.busy_time_us.filter(|&b| b > 0)?;
        let limited = self.rwnd_limited_us? + self.sndbuf_limited_us?;
        Some(limited as f64 / busy as f64)
    }
}

/// Columns the probe writes after the shared schema
/// ([`sender::schema::FLOW_COLUMNS`]); empty where the kernel lacks the
/// field.
const PROBE_COLUMNS: &str = "delivery_rate_bps,busy_time_us,rwnd_limited_us,sndbuf_limited_us,rtos";

/// `struct tcp_bbr_info` from `TCP_CC_INFO`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
struct BbrInfo {
    bw_lo: u32,
    bw_hi: u32,
    min_rtt: u32,
    pacing_gain: u32,
    cwnd_gain: u32,
}

/// The option's value and the length the kernel filled.
fn getsockopt_len<T: Default>(fd: i32, opt: libc::c_int) -> io::Result<(T, usize)> {
    let mut v = T::default();
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: v is valid for len bytes; the kernel writes at most len.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            opt,
            (&mut v as *mut T).cast(),
            &mut len,
        )
    };
    if r == 0 {
        Ok((v, len as usize))
    } else {
        Err(io::Error::last_os_error())
    }
}

fn getsockopt<T: Default>(fd: i32, opt: libc::c_int) -> io::Result<T> {
    getsockopt_len(fd, opt).map(|(v, _)| v)
}

/// Seconds the sender waits for the receiver's verdict while nothing it
/// sent is being acknowledged.
const VERDICT_IDLE_S: u64 = 30;

/// Reads the receiver's one-line verdict, polling once a second. While
/// TCP_INFO shows bytes being acknowledged the transfer is still draining
/// the send buffer, so only VERDICT_IDLE_S seconds without progress is
/// an error (a bounded wait: a stalled transfer ends it).
fn await_verdict(
    stream: &std::net::TcpStream,
    fd: i32,
    idle_limit_s: u64,
) -> Result<String, String> {
    stream
        .set_read_timeout(Some(Duration::from_secs(1)))
        .map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    let mut last_acked = read_probe(fd).map(|p| p.bytes_acked).unwrap_or(0);
    let mut idle = 0u64;
    loop {
        match reader.read_line(&mut line) {
            Ok(_) => return Ok(line),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                let acked = read_probe(fd).map(|p| p.bytes_acked).unwrap_or(last_acked);
                if acked > last_acked {
                    last_acked = acked;
                    idle = 0;
                } else {
                    idle += 1;
                    if idle >= idle_limit_s {
                        return Err(format!(
                            "no verdict from the receiver: nothing acknowledged for {idle_limit_s} s"
                        ));
                    }
                }
            }
            Err(e) => return Err(format!("no verdict from the receiver: {e}")),
        }
    }
}

fn read_probe(fd: i32) -> io::Result<Probe> {
    let (ti, len) = getsockopt_len::<TcpInfo>(fd, libc::TCP_INFO)?;
    Ok(Probe::from_info(&ti, len))
}

fn set_congestion(fd: i32, cc: &str) -> Result<(), String> {
    // SAFETY: the name buffer is valid for its length.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            TCP_CONGESTION,
            cc.as_ptr().cast(),
            cc.len() as libc::socklen_t,
        )
    };
    if r == 0 {
        return Ok(());
    }
    // The error first: reading the list must not overwrite errno.
    let err = io::Error::last_os_error();
    Err(format!(
        "the kernel refused TCP_CONGESTION={cc}: {err} (available: {})",
        hostfacts::available_congestion_controls().join(" ")
    ))
}

/// Bounds the unsent part of the send queue ([`NOTSENT_LOWAT_BYTES`]).
fn set_notsent_lowat(fd: i32, bytes: u32) -> Result<(), String> {
    // SAFETY: a u32 option value, valid for its size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_NOTSENT_LOWAT,
            (&bytes as *const u32).cast(),
            std::mem::size_of::<u32>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(format!(
            "the kernel refused TCP_NOTSENT_LOWAT={bytes}: {}",
            io::Error::last_os_error()
        ))
    }
}

/// BBR's mode from its gains (Linux units: 256 = 1.0). STARTUP paces and
/// sizes cwnd at 2/ln2 (739); DRAIN paces at its inverse (88); PROBE_RTT
/// uses 1.0 for both; PROBE_BW has cwnd_gain 2 (512).
fn bbr_mode(b: &BbrInfo) -> &'static str {
    match (b.pacing_gain, b.cwnd_gain) {
        (p, _) if p > 600 => "startup",
        (p, _) if p < 128 => "drain",
        (_, 512) => "probe_bw",
        (256, 256) => "probe_rtt",
        _ => "",
    }
}

/// Options of `tcp send`.
pub struct SendOptions {
    /// Receiver address.
    pub to: SocketAddr,
    /// Kernel algorithm.
    pub cc: String,
    /// How long to send, s (ignored with `bytes`).
    pub duration_s: f64,
    /// Exactly this many bytes instead.
    pub bytes: Option<u64>,
    /// Sampling interval.
    pub interval: Duration,
    /// Time-series CSV.
    pub log: Option<PathBuf>,
}

/// What `tcp send` reports (printed as JSON).
#[derive(serde::Serialize, Debug)]
pub struct SendSummary {
    /// Kernel algorithm.
    pub cc: String,
    /// Payload bytes sent and verified by the receiver.
    pub bytes: u64,
    /// Seconds from the first write (the time origin of the log, just
    /// after the handshake) to the receiver's verdict.
    pub seconds: f64,
    /// bytes × 8 / seconds.
    pub goodput_bps: f64,
    /// Median sampled RTT over the whole run, ms. The kernel exposes no
    /// per-ACK RTT, so every sample is its smoothed RTT (`tcpi_rtt`).
    pub rtt_median_ms: Option<f64>,
    /// Median sampled RTT after the first quarter (steady state), ms.
    pub rtt_median_steady_ms: Option<f64>,
    /// 95th-percentile sampled RTT, ms.
    pub rtt_p95_ms: Option<f64>,
    /// Segments retransmitted (tcpi_total_retrans).
    pub retransmits: u32,
    /// Data segments sent, retransmissions included (tcpi_data_segs_out,
    /// Linux 4.6).
    pub data_segments_sent: Option<u32>,
    /// retransmits / data_segments_sent: the statistic `compare` puts
    /// beside the simulator's and the UDP transport's.
    pub retransmitted_fraction: Option<f64>,
    /// Retransmission timeouts (tcpi_total_rto, Linux 6.7; `None` on older
    /// kernels). Includes SYN timeouts.
    pub rtos: Option<u16>,
    /// Median delivery-rate sample (tcpi_delivery_rate) after the first
    /// quarter, bits/s.
    pub delivery_rate_median_bps: Option<f64>,
    /// Seconds with data outstanding (tcpi_busy_time, Linux 4.10).
    pub busy_s: Option<f64>,
    /// Of those, seconds limited by the receiver's window
    /// (tcpi_rwnd_limited).
    pub rwnd_limited_s: Option<f64>,
    /// Of those, seconds limited by the local send buffer
    /// (tcpi_sndbuf_limited).
    pub sndbuf_limited_s: Option<f64>,
    /// (rwnd_limited + sndbuf_limited) / busy: a share well above 0 means
    /// the hosts, not the congestion control, set the pace.
    pub host_limited_fraction: Option<f64>,
    /// Packets acknowledged by ACKs echoing congestion (ECE), cumulative
    /// (tcpi_delivered_ce, Linux 4.18; 0 without ECN on the connection).
    pub delivered_ce: Option<u32>,
    /// Sender MSS (tcpi_snd_mss) and path MTU (tcpi_pmtu), bytes: `compare`
    /// gives the simulator the same payload and header sizes.
    pub mss: u32,
    /// See `mss`.
    pub pmtu: u32,
    /// Samples taken.
    pub samples: usize,
}

/// What the sampler hands back: (time, srtt ms) and (time, delivery rate
/// bit/s) per sample, and the last reading.
struct Sampled {
    rtts: Vec<(f64, f64)>,
    rates: Vec<(f64, f64)>,
    last: Probe,
}

fn opt_cell<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

#[cfg(feature = "kernel")]
/// One reading of a bbrlab BPF control (`kernel_cc`) as `TCP_CC_INFO`
/// would give it: bw in bytes/s, min_rtt in µs, gains ×256.
/// Also the control's own mode name (bbrlab_bbr3's PROBE_BW phases cannot
/// be told from its gains).
fn bpf_info(s: &mut kernel_cc::Sampler, fd: i32, t0: Instant) -> Option<(BbrInfo, &'static str)> {
    let r = s.sample(fd, t0.elapsed().as_secs_f64())?;
    let bw = (r.bw_bps() / 8.0) as u64;
    let (pacing_gain, cwnd_gain) = r.gains();
    Some((
        BbrInfo {
            bw_lo: bw as u32,
            bw_hi: (bw >> 32) as u32,
            min_rtt: r.min_rtt_us(),
            pacing_gain,
            cwnd_gain,
        },
        r.mode_name(),
    ))
}

/// The sampler: one row of the shared schema per interval, timed from
/// `t0`, the instant the sender starts writing.
fn sample_loop(
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
fn log_header() -> Vec<&'static str> {
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
fn log_row(
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
fn log_cell(
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

/// `bbrlab tcp send`.
pub fn send(o: &SendOptions) -> Result<SendSummary, String> {
    let sock = socket2_connect(o)?;
    let mut stream = sock;
    let fd = stream.as_raw_fd();
    let seed = std::process::id() as u64 ^ 0x9E37_79B9_7F4A_7C15;
    let done = AtomicBool::new(false);
    // The time origin of the log and the summary: the first write, right
    // after the handshake (the simulator's flow start and the UDP
    // transport's first data packet are the same instant).
    let t0 = Instant::now();
    let (sent, sampled) = std::thread::scope(|s| -> Result<(u64, Sampled), String> {
        let sampler = s.spawn(|| sample_loop(fd, t0, o.interval, &done, o.log.clone()));
        let r = (|| -> Result<u64, String> {
            stream.write_all(MAGIC).map_err(|e| format!("send: {e}"))?;
            stream
                .write_all(&seed.to_le_bytes())
                .map_err(|e| format!("send: {e}"))?;
            let mut hash = Sha256::new();
            let mut buf = vec![0u8; FRAME];
            let mut sent = 0u64;
            loop {
                let n = match o.bytes {
                    Some(total) => ((total - sent) as usize).min(FRAME),
                    None if t0.elapsed().as_secs_f64() < o.duration_s => FRAME,
                    None => 0,
                };
                if n == 0 {
                    break;
                }
                // Every real transfer's byte pattern, so the receiver can
                // check every byte without the sender shipping a copy.
                sender::pattern::fill(seed, sent, &mut buf[..n]);
                hash.update(&buf[..n]);
                stream
                    .write_all(&(n as u32).to_le_bytes())
                    .map_err(|e| format!("send: {e}"))?;
                stream
                    .write_all(&buf[..n])
                    .map_err(|e| format!("send: {e}"))?;
                sent += n as u64;
            }
            stream
                .write_all(&0u32.to_le_bytes())
                .map_err(|e| format!("send: {e}"))?;
            stream
                .write_all(&sent.to_le_bytes())
                .map_err(|e| format!("send: {e}"))?;
            stream
                .write_all(&hash.finalize())
                .map_err(|e| format!("send: {e}"))?;
            stream.flush().map_err(|e| format!("send: {e}"))?;
            // The receiver's verdict. With large socket buffers the writes
            // above return while most of the data is still queued, so the
            // wait covers the rest of the transfer: give up only after
            // VERDICT_IDLE_S without the receiver acknowledging anything.
            let line = await_verdict(&stream, fd, VERDICT_IDLE_S)?;
            if line.trim() != "OK" {
                return Err(format!(
                    "the receiver rejected the transfer: {}",
                    line.trim()
                ));
            }
            Ok(sent)
        })();
        done.store(true, Ordering::Relaxed);
        let sampled = sampler
            .join()
            .map_err(|_| "sampler panicked".to_string())??;
        Ok((r?, sampled))
    })?;
    let secs = t0.elapsed().as_secs_f64();
    Ok(summarise(&o.cc, sent, secs, &sampled))
}

/// The summary of a transfer of `bytes` over `secs` from its samples.
fn summarise(cc: &str, bytes: u64, secs: f64, s: &Sampled) -> SendSummary {
    let steady = |v: &[(f64, f64)]| -> Vec<f64> {
        v.iter()
            .filter(|r| r.0 >= secs / 4.0)
            .map(|r| r.1)
            .collect()
    };
    let mut all: Vec<f64> = s.rtts.iter().map(|r| r.1).collect();
    let p = &s.last;
    let us = |v: Option<u64>| v.map(|x| x as f64 / 1e6);
    SendSummary {
        cc: cc.to_string(),
        bytes,
        seconds: secs,
        goodput_bps: bytes as f64 * 8.0 / secs.max(1e-9),
        rtt_median_ms: quantile(&mut all, 0.5),
        rtt_median_steady_ms: quantile(&mut steady(&s.rtts), 0.5),
        rtt_p95_ms: quantile(&mut all, 0.95),
        retransmits: p.total_retrans,
        data_segments_sent: p.data_segs_out,
        retransmitted_fraction: p
            .data_segs_out
            .filter(|&n| n > 0)
            .map(|n| p.total_retrans as f64 / n as f64),
        rtos: p.total_rto,
        delivery_rate_median_bps: quantile(&mut steady(&s.rates), 0.5),
        busy_s: us(p.busy_time_us),
        rwnd_limited_s: us(p.rwnd_limited_us),
        sndbuf_limited_s: us(p.sndbuf_limited_us),
        host_limited_fraction: p.host_limited_fraction(),
        delivered_ce: p.delivered_ce,
        mss: p.snd_mss,
        pmtu: p.pmtu,
        samples: s.rtts.len(),
    }
}

/// Connects with the congestion control set before the handshake, so the
/// whole connection runs it.
fn socket2_connect(o: &SendOptions) -> Result<TcpStream, String> {
    let domain = if o.to.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    // SAFETY: plain socket creation.
    let fd = unsafe { libc::socket(domain, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(format!("socket: {}", io::Error::last_os_error()));
    }
    // SAFETY: fd is ours; TcpStream takes ownership.
    let stream = unsafe { <TcpStream as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    set_congestion(fd, &o.cc)?;
    set_notsent_lowat(fd, NOTSENT_LOWAT_BYTES)?;
    let (addr, len) = sockaddr(&o.to);
    // SAFETY: addr is a valid sockaddr of len bytes.
    let r = unsafe { libc::connect(fd, (&addr as *const libc::sockaddr_storage).cast(), len) };
    if r != 0 {
        return Err(format!(
            "cannot connect to {}: {}",
            o.to,
            io::Error::last_os_error()
        ));
    }
    Ok(stream)
}

fn sockaddr(a: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: all-zero is a valid sockaddr_storage.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    match a {
        SocketAddr::V4(v4) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: v4.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(v4.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_in fits in sockaddr_storage.
            unsafe { std::ptr::write((&mut ss as *mut libc::sockaddr_storage).cast(), sin) };
            (
                ss,
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        }
        SocketAddr::V6(v6) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: v6.port().to_be(),
                sin6_flowinfo: v6.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: v6.ip().octets(),
                },
                sin6_scope_id: v6.scope_id(),
            };
            // SAFETY: sockaddr_in6 fits in sockaddr_storage.
            unsafe { std::ptr::write((&mut ss as *mut libc::sockaddr_storage).cast(), sin6) };
            (
                ss,
                std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t,
            )
        }
    }
}

/// What `tcp recv` checked.
#[derive(serde::Serialize, Debug)]
pub struct RecvSummary {
    /// Payload bytes received and verified.
    pub bytes: u64,
    /// Seconds from accept to the trailer.
    pub seconds: f64,
    /// bytes × 8 / seconds.
    pub goodput_bps: f64,
}

/// `bbrlab tcp recv`: accepts one connection, verifies it, answers.
pub fn recv(listen: SocketAddr, idle_timeout: Duration) -> Result<RecvSummary, String> {
    let l = TcpListener::bind(listen).map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let (mut c, peer) = l.accept().map_err(|e| format!("accept: {e}"))?;
    c.set_read_timeout(Some(idle_timeout))
        .map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    let r = verify(&mut c);
    let answer = match &r {
        Ok(_) => "OK\n".to_string(),
        Err(e) => format!("ERR {e}\n"),
    };
    let _ = c.write_all(answer.as_bytes());
    let bytes = r.map_err(|e| format!("transfer from {peer} failed: {e}"))?;
    let secs = t0.elapsed().as_secs_f64();
    Ok(RecvSummary {
        bytes,
        seconds: secs,
        goodput_bps: bytes as f64 * 8.0 / secs.max(1e-9),
    })
}

fn read_exact(c: &mut TcpStream, buf: &mut [u8], what: &str) -> Result<(), String> {
    c.read_exact(buf).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => format!("the stream ended early (reading {what})"),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            format!("the sender went quiet (reading {what})")
        }
        _ => format!("reading {what}: {e}"),
    })
}

fn verify(c: &mut TcpStream) -> Result<u64, String> {
    let mut head = [0u8; 12];
    read_exact(c, &mut head, "the header")?;
    if &head[..4] != MAGIC {
        return Err("not a bbrlab tcp stream (bad magic)".into());
    }
    let seed = u64::from_le_bytes(head[4..12].try_into().expect("8 bytes"));
    let mut hash = Sha256::new();
    let mut buf = vec![0u8; FRAME];
    let mut total = 0u64;
    loop {
        let mut len = [0u8; 4];
        read_exact(c, &mut len, "a frame length")?;
        let n = u32::from_le_bytes(len) as usize;
        if n == 0 {
            break;
        }
        if n > FRAME {
            return Err(format!("frame of {n} bytes exceeds {FRAME}"));
        }
        read_exact(c, &mut buf[..n], "frame data")?;
        if let Some(at) = sender::pattern::mismatch(seed, total, &buf[..n]) {
            return Err(format!("byte {at} differs from the pattern"));
        }
        hash.update(&buf[..n]);
        total += n as u64;
    }
    let mut trailer = [0u8; 40];
    read_exact(c, &mut trailer, "the trailer")?;
    let len = u64::from_le_bytes(trailer[..8].try_into().expect("8 bytes"));
    if len != total {
        return Err(format!(
            "length mismatch: sender says {len}, received {total}"
        ));
    }
    if trailer[8..] != hash.finalize()[..] {
        return Err("SHA-256 mismatch".into());
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// Offsets from the kernel's uapi `struct tcp_info`, worked out by hand
    /// from its field list: 8 single bytes, 24 `__u32` (rto …
    /// total_retrans) to byte 104, 4 `__u64` to 136, 6 `__u32` to 160.
    #[test]
    fn the_verdict_wait_ends_on_an_answer_or_after_the_idle_limit() {
        use std::io::Write;
        use std::net::{TcpListener, TcpStream};
        use std::os::fd::AsRawFd;
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        // A receiver that answers after 1.5 s: longer than one poll.
        let server = std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            std::thread::sleep(Duration::from_millis(1500));
            c.write_all(b"OK\n").unwrap();
            let (_quiet, _) = l.accept().unwrap();
            std::thread::sleep(Duration::from_secs(4));
        });
        let s = TcpStream::connect(addr).unwrap();
        assert_eq!(await_verdict(&s, s.as_raw_fd(), 5).unwrap().trim(), "OK");
        // One that never answers, with nothing in flight: an error after
        // the idle limit, saying so.
        let q = TcpStream::connect(addr).unwrap();
        let e = await_verdict(&q, q.as_raw_fd(), 2).unwrap_err();
        assert!(e.contains("nothing acknowledged for 2 s"), "{e}");
        server.join().unwrap();
    }

    /// The sender's socket bounds its unsent queue, so `--duration` ends
    /// within that much data of its end whatever the send buffer
    /// autotunes to; and the bound does hold: with nobody reading, the
    /// writes stop near it rather than at the send buffer's size.
    #[test]
    fn the_sender_socket_bounds_its_unsent_queue() {
        use std::net::TcpListener;
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let o = SendOptions {
            to: l.local_addr().unwrap(),
            cc: "cubic".into(),
            duration_s: 1.0,
            bytes: None,
            interval: Duration::from_millis(10),
            log: None,
        };
        let mut s = socket2_connect(&o).unwrap();
        let (_peer, _) = l.accept().unwrap();
        let v: u32 = getsockopt(s.as_raw_fd(), libc::TCP_NOTSENT_LOWAT).unwrap();
        assert_eq!(v, NOTSENT_LOWAT_BYTES);
        // Nobody reads: writes fill the receiver's window and buffer, then
        // at most the low-water mark (plus one write) waits unsent.
        s.set_nonblocking(true).unwrap();
        let buf = vec![0u8; 64 * 1024];
        let mut written = 0usize;
        for _ in 0..100_000 {
            match std::io::Write::write(&mut s, &buf) {
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => panic!("write: {e}"),
            }
        }
        let mut outq: libc::c_int = 0;
        let mut notsent: libc::c_int = 0;
        // SAFETY: SIOCOUTQ/SIOCOUTQNSPC write one int.
        unsafe {
            assert_eq!(libc::ioctl(s.as_raw_fd(), libc::TIOCOUTQ, &mut outq), 0);
            assert_eq!(libc::ioctl(s.as_raw_fd(), 0x894B, &mut notsent), 0); // SIOCOUTQNSPC
        }
        assert!(written > 0);
        assert!(
            (notsent as usize) <= NOTSENT_LOWAT_BYTES as usize + buf.len(),
            "{notsent} bytes wait unsent (written {written}, queued {outq})"
        );
    }

    #[test]
    fn tcp_info_matches_the_kernel_layout() {
        assert_eq!(offset_of!(TcpInfo, rtt), 68);
        assert_eq!(offset_of!(TcpInfo, total_retrans), 100);
        assert_eq!(offset_of!(TcpInfo, pacing_rate), 104);
        assert_eq!(offset_of!(TcpInfo, data_segs_out), 156);
        assert_eq!(offset_of!(TcpInfo, delivery_rate), 160);
        assert_eq!(offset_of!(TcpInfo, busy_time), 168);
        assert_eq!(offset_of!(TcpInfo, rwnd_limited), 176);
        assert_eq!(offset_of!(TcpInfo, sndbuf_limited), 184);
        // __u32 tcpi_delivered, tcpi_delivered_ce after the four __u64.
        assert_eq!(offset_of!(TcpInfo, delivered), 192);
        assert_eq!(offset_of!(TcpInfo, delivered_ce), 196);
        assert_eq!(offset_of!(TcpInfo, bytes_retrans), 208);
        assert_eq!(offset_of!(TcpInfo, total_rto), 240);
        assert_eq!(offset_of!(TcpInfo, total_rto_time), 244);
        assert_eq!(size_of::<TcpInfo>(), 248);
    }

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
        let ti = info();
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
        let ti = info();
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

    fn info() -> TcpInfo {
        TcpInfo {
            rtt: 45_000,
            total_retrans: 7,
            data_segs_out: 700,
            delivery_rate: 2_400_000,
            busy_time: 10_000_000,
            rwnd_limited: 1_000_000,
            sndbuf_limited: 500_000,
            total_rto: 2,
            delivered_ce: 31,
            snd_mss: 1448,
            pmtu: 1500,
            ..TcpInfo::default()
        }
    }

    #[test]
    fn fields_past_the_kernels_length_are_none() {
        // A 4.9 kernel's struct ends after tcpi_delivery_rate (168 bytes):
        // it has the delivery rate but neither busy time nor RTO count.
        let p = Probe::from_info(&info(), 168);
        assert_eq!(p.delivery_rate, Some(2_400_000));
        assert_eq!(p.data_segs_out, Some(700));
        assert_eq!(p.busy_time_us, None);
        assert_eq!(p.rwnd_limited_us, None);
        assert_eq!(p.total_rto, None);
        assert_eq!(p.host_limited_fraction(), None);
        assert_eq!(p.delivered_ce, None);
        // 4.10 to 6.6 (e.g. 6.1, 232 bytes): chrono stats, no RTO count.
        let p = Probe::from_info(&info(), 232);
        assert_eq!(p.sndbuf_limited_us, Some(500_000));
        assert_eq!(p.delivered_ce, Some(31));
        // 4.10 to 4.17 end after tcpi_sndbuf_limited: no CE count.
        assert_eq!(Probe::from_info(&info(), 192).delivered_ce, None);
        assert_eq!(Probe::from_info(&info(), 200).delivered_ce, Some(31));
        assert_eq!(p.total_rto, None);
        // 6.7 and later fill the whole struct (or more, cut to ours).
        let p = Probe::from_info(&info(), 248);
        assert_eq!(p.total_rto, Some(2));
        // A 4.5 kernel (before data_segs_out): no packet count at all.
        let p = Probe::from_info(&info(), 144);
        assert_eq!(p.data_segs_out, None);
        assert_eq!(p.total_retrans, 7);
    }

    #[test]
    fn host_limited_share_of_busy_time() {
        let p = Probe::from_info(&info(), 248);
        // (1 s + 0.5 s) of 10 s busy.
        assert!((p.host_limited_fraction().unwrap() - 0.15).abs() < 1e-12);
        let idle = Probe {
            busy_time_us: Some(0),
            ..p
        };
        assert_eq!(idle.host_limited_fraction(), None);
    }

    #[test]
    fn summary_reports_retransmitted_segments_over_data_segments() {
        let s = Sampled {
            rtts: vec![(0.5, 40.0), (1.5, 50.0), (2.5, 60.0), (3.5, 70.0)],
            rates: vec![(0.5, 1e6), (3.0, 19e6)],
            last: Probe::from_info(&info(), 248),
        };
        let sum = summarise("bbr", 1_000_000, 4.0, &s);
        assert!((sum.retransmitted_fraction.unwrap() - 0.01).abs() < 1e-12);
        assert_eq!(sum.rtos, Some(2));
        assert_eq!(sum.rtt_median_steady_ms, Some(60.0));
        // Only the delivery-rate sample after the first second counts.
        assert_eq!(sum.delivery_rate_median_bps, Some(19e6));
        assert_eq!(sum.busy_s, Some(10.0));
        assert_eq!(sum.delivered_ce, Some(31));
        assert_eq!((sum.mss, sum.pmtu), (1448, 1500));
        // A kernel without data_segs_out gives no fraction rather than a
        // division by a zero it never reported.
        let old = Sampled {
            last: Probe::from_info(&info(), 144),
            ..s
        };
        assert_eq!(summarise("bbr", 1, 1.0, &old).retransmitted_fraction, None);
    }
}
