//! The sender: a framed, patterned stream for a duration or a size, and
//! the receiver's verdict on it.

use super::*;

/// Seconds the sender waits for the receiver's verdict while nothing it
/// sent is being acknowledged.
pub(crate) const VERDICT_IDLE_S: u64 = 30;

/// Reads the receiver's one-line verdict, polling once a second. While
/// TCP_INFO shows bytes being acknowledged the transfer is still draining
/// the send buffer, so only VERDICT_IDLE_S seconds without progress is
/// an error (a bounded wait: a stalled transfer ends it).
pub(crate) fn await_verdict(
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
    /// Sampling interval: at least [`MIN_INTERVAL`] (`send` refuses a
    /// shorter one).
    pub interval: Duration,
    /// Time-series CSV.
    pub log: Option<PathBuf>,
}

/// What `tcp send` reports (printed as JSON; read back by the commands
/// that run it as a child, through the same type).
#[derive(serde::Serialize, serde::Deserialize, Debug, Clone, PartialEq)]
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
    /// The sender's network namespace's recovery and undo counters over
    /// the transfer (`/proc/net/netstat`): this connection's alone only
    /// where nothing else in the namespace uses TCP, as in `bbrlab emu`'s
    /// namespaces. `None` where they cannot be read. Absent from a summary
    /// written before they were added.
    #[serde(default)]
    pub netns: Option<crate::NetnsCounters>,
}

/// The shortest sampling interval [`send`] takes (the UDP transport's
/// too: one floor, in the crate both share).
pub use sender::sample_interval::MIN_INTERVAL;

/// `bbrlab tcp send`. An `interval` below [`MIN_INTERVAL`] is refused
/// before connecting.
pub fn send(o: &SendOptions) -> Result<SendSummary, String> {
    sender::sample_interval::check_interval(
        &format!("sampling interval {:?}", o.interval),
        o.interval,
    )?;
    let counters_before = crate::netstat::read();
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
    let mut summary = summarise(&o.cc, sent, secs, &sampled);
    summary.netns = counters_before
        .zip(crate::netstat::read())
        .map(|(b, a)| crate::netstat::between(&b, &a));
    Ok(summary)
}

/// The summary of a transfer of `bytes` over `secs` from its samples.
pub(crate) fn summarise(cc: &str, bytes: u64, secs: f64, s: &Sampled) -> SendSummary {
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
        netns: None,
    }
}

/// Connects with the congestion control set before the handshake, so the
/// whole connection runs it.
pub(crate) fn socket2_connect(o: &SendOptions) -> Result<TcpStream, String> {
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

pub(crate) fn sockaddr(a: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn summary_reports_retransmitted_segments_over_data_segments() {
        let s = Sampled {
            rtts: vec![(0.5, 40.0), (1.5, 50.0), (2.5, 60.0), (3.5, 70.0)],
            rates: vec![(0.5, 1e6), (3.0, 19e6)],
            last: Probe::from_info(&sample_info(), 248),
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
            last: Probe::from_info(&sample_info(), 144),
            ..s
        };
        assert_eq!(summarise("bbr", 1, 1.0, &old).retransmitted_fraction, None);
    }

    /// A zero interval made the sampler spin beside the transfer; it is
    /// refused before any connection (nothing listens at the address).
    #[test]
    fn an_interval_below_the_minimum_is_refused_before_connecting() {
        let o = SendOptions {
            to: "127.0.0.1:9".parse().unwrap(),
            cc: "cubic".into(),
            duration_s: 1.0,
            bytes: None,
            interval: Duration::ZERO,
            log: None,
        };
        let e = send(&o).unwrap_err();
        assert!(
            e.contains("sampling interval 0ns") && e.contains("1ms"),
            "{e}"
        );
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
}
