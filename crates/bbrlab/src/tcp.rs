//! `bbrlab tcp`: a bulk sender and receiver over kernel TCP, for measuring
//! Linux's own `tcp_bbr`, CUBIC and Reno.
//!
//! The sender picks the kernel algorithm per socket (`TCP_CONGESTION`),
//! and a sampler thread reads `TCP_INFO` and, for BBR, `TCP_CC_INFO`
//! (bw, min_rtt, pacing and cwnd gains) every interval, writing the same
//! time-series schema as the simulator. The stream is framed and carries a
//! seeded byte pattern and a SHA-256 trailer; the receiver checks every
//! byte, the length and the hash, and answers `OK` or an error.

use sha2::{Digest, Sha256};
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

/// The kernel's `struct tcp_info` (include/uapi/linux/tcp.h), as far as
/// bbrlab reads it. The layout is append-only across kernel versions.
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
}

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

fn getsockopt<T: Default>(fd: i32, opt: libc::c_int) -> io::Result<T> {
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
        Ok(v)
    } else {
        Err(io::Error::last_os_error())
    }
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
    let avail = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .unwrap_or_default();
    Err(format!(
        "the kernel refused TCP_CONGESTION={cc}: {} (available: {})",
        io::Error::last_os_error(),
        avail.trim()
    ))
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

/// A seeded byte pattern (xorshift64*), so the receiver can check every
/// byte without the sender shipping a copy.
struct Pattern {
    state: u64,
    word: [u8; 8],
    pos: usize,
}

impl Pattern {
    fn new(seed: u64) -> Self {
        Pattern {
            state: seed | 1,
            word: [0; 8],
            pos: 8,
        }
    }
    fn fill(&mut self, buf: &mut [u8]) {
        for b in buf {
            if self.pos == 8 {
                self.state ^= self.state >> 12;
                self.state ^= self.state << 25;
                self.state ^= self.state >> 27;
                self.word = self.state.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes();
                self.pos = 0;
            }
            *b = self.word[self.pos];
            self.pos += 1;
        }
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
    /// Seconds from connect to the last byte acknowledged.
    pub seconds: f64,
    /// bytes × 8 / seconds.
    pub goodput_bps: f64,
    /// Median sampled RTT over the whole run, ms.
    pub rtt_median_ms: Option<f64>,
    /// Median sampled RTT after the first quarter (steady state), ms.
    pub rtt_median_steady_ms: Option<f64>,
    /// 95th-percentile sampled RTT, ms.
    pub rtt_p95_ms: Option<f64>,
    /// Segments retransmitted (tcpi_total_retrans).
    pub retransmits: u32,
    /// Samples taken.
    pub samples: usize,
}

/// The `q` quantile of `v` (nearest rank; sorts `v`), `None` when empty.
pub(crate) fn quantile(v: &mut [f64], q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[((v.len() - 1) as f64 * q).round() as usize])
}

/// The sampler: one row of the shared schema per interval.
fn sample_loop(
    fd: i32,
    interval: Duration,
    done: &AtomicBool,
    log: Option<PathBuf>,
) -> Result<(Vec<(f64, f64)>, u32), String> {
    let mut w = match &log {
        Some(p) => {
            let mut w = BufWriter::new(
                File::create(p).map_err(|e| format!("cannot write {}: {e}", p.display()))?,
            );
            writeln!(w, "{}", netsim::FLOW_CSV_HEADER).map_err(|e| e.to_string())?;
            Some(w)
        }
        None => None,
    };
    let t0 = Instant::now();
    let mut rtts = Vec::new();
    let mut last_acked = 0u64;
    let mut last_t = 0.0;
    let mut retrans = 0;
    let mut next = t0;
    while !done.load(Ordering::Relaxed) {
        next += interval;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        }
        let Ok(ti) = getsockopt::<TcpInfo>(fd, libc::TCP_INFO) else {
            break;
        };
        let bbr = getsockopt::<BbrInfo>(fd, TCP_CC_INFO).ok();
        let t = t0.elapsed().as_secs_f64();
        let rtt_ms = ti.rtt as f64 / 1000.0;
        if ti.rtt > 0 {
            rtts.push((t, rtt_ms));
        }
        retrans = ti.total_retrans;
        if let Some(w) = w.as_mut() {
            let goodput = (ti.bytes_acked - last_acked) as f64 * 8.0 / (t - last_t).max(1e-6);
            let mss = ti.snd_mss as u64;
            let inflight = (ti.unacked as u64 + ti.retrans as u64)
                .saturating_sub(ti.sacked as u64 + ti.lost as u64)
                * mss;
            let (mode, bw, min_rtt) = match bbr.filter(|b| b.pacing_gain > 0) {
                Some(b) => (
                    bbr_mode(&b),
                    format!("{}", ((b.bw_hi as u64) << 32 | b.bw_lo as u64) * 8),
                    format!("{:.3}", b.min_rtt as f64 / 1000.0),
                ),
                None => (
                    "",
                    String::new(),
                    format!("{:.3}", ti.min_rtt as f64 / 1000.0),
                ),
            };
            writeln!(
                w,
                "{t:.6},0,{},{goodput:.0},{rtt_ms:.3},{},{},{inflight},{mode},{bw},{min_rtt},,{}",
                ti.bytes_acked,
                ti.snd_cwnd as u64 * mss,
                ti.pacing_rate * 8,
                ti.total_retrans
            )
            .map_err(|e| e.to_string())?;
        }
        last_acked = ti.bytes_acked;
        last_t = t;
    }
    if let Some(mut w) = w {
        w.flush().map_err(|e| e.to_string())?;
    }
    Ok((rtts, retrans))
}

/// Bytes sent, (time, RTT ms) samples, total retransmissions.
type Sent = (u64, Vec<(f64, f64)>, u32);

/// `bbrlab tcp send`.
pub fn send(o: &SendOptions) -> Result<SendSummary, String> {
    let sock = socket2_connect(o)?;
    let mut stream = sock;
    let fd = stream.as_raw_fd();
    let seed = std::process::id() as u64 ^ 0x9E37_79B9_7F4A_7C15;
    let done = AtomicBool::new(false);
    let t0 = Instant::now();
    let (sent, rtts, retrans) = std::thread::scope(|s| -> Result<Sent, String> {
        let sampler = s.spawn(|| sample_loop(fd, o.interval, &done, o.log.clone()));
        let r = (|| -> Result<u64, String> {
            stream.write_all(MAGIC).map_err(|e| format!("send: {e}"))?;
            stream
                .write_all(&seed.to_le_bytes())
                .map_err(|e| format!("send: {e}"))?;
            let mut pat = Pattern::new(seed);
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
                pat.fill(&mut buf[..n]);
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
            // The receiver's verdict.
            stream
                .set_read_timeout(Some(Duration::from_secs(30)))
                .map_err(|e| e.to_string())?;
            let mut line = String::new();
            BufReader::new(&stream)
                .read_line(&mut line)
                .map_err(|e| format!("no verdict from the receiver: {e}"))?;
            if line.trim() != "OK" {
                return Err(format!(
                    "the receiver rejected the transfer: {}",
                    line.trim()
                ));
            }
            Ok(sent)
        })();
        done.store(true, Ordering::Relaxed);
        let (rtts, retrans) = sampler
            .join()
            .map_err(|_| "sampler panicked".to_string())??;
        Ok((r?, rtts, retrans))
    })?;
    let secs = t0.elapsed().as_secs_f64();
    let mut all: Vec<f64> = rtts.iter().map(|r| r.1).collect();
    let mut steady: Vec<f64> = rtts
        .iter()
        .filter(|r| r.0 >= secs / 4.0)
        .map(|r| r.1)
        .collect();
    Ok(SendSummary {
        cc: o.cc.clone(),
        bytes: sent,
        seconds: secs,
        goodput_bps: sent as f64 * 8.0 / secs,
        rtt_median_ms: quantile(&mut all, 0.5),
        rtt_median_steady_ms: quantile(&mut steady, 0.5),
        rtt_p95_ms: quantile(&mut all, 0.95),
        retransmits: retrans,
        samples: rtts.len(),
    })
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
    let mut pat = Pattern::new(seed);
    let mut hash = Sha256::new();
    let mut buf = vec![0u8; FRAME];
    let mut want = vec![0u8; FRAME];
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
        pat.fill(&mut want[..n]);
        if buf[..n] != want[..n] {
            let at = buf[..n]
                .iter()
                .zip(&want[..n])
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            return Err(format!(
                "byte {} differs from the pattern",
                total + at as u64
            ));
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
