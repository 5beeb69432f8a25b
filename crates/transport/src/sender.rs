//! The sending endpoint: handshake, paced transmission, ACK processing,
//! loss recovery and the final integrity check.
//!
//! The loss detection, retransmission and pacing decisions are the
//! shared sans-IO sender (`sender::Sender`, the one the simulator runs), so the UDP
//! transport and the simulator run the very same logic around the
//! `congestion` controller: RFC 9002 loss detection (3-packet and 9/8-RTT
//! thresholds, switching to Linux RACK's time-only rule with its
//! reordering window once reordering is seen), RFC 9002's probe timeout
//! with backoff and persistent congestion (`sender::Timeout::Pto`), Linux
//! recovery episodes (the receiver's in-order point is known), and pacing
//! at the controller's rate in send quanta (`sender::Pacing::Quantum`).
//! This module adds sockets, GSO batching, the wire format, flow control,
//! a precise timer and the FIN/DONE exchange.

use crate::data::Source;
use crate::integrity::StreamHash;
use crate::udp_batch::{BatchSender, SendError};
use crate::wire::{self, Frame, Packet, CHUNK, CONTROL_PN, DATA_HEADER, MAX_DATAGRAM};
use crate::{now_ns, wait_readable};
use congestion::Config;
use congestion::Instant as CcInstant;
use sender::schema::{FLOW_COLUMNS, FLOW_CSV_HEADER};
use sender::{Ack, LogHistogram, SendDecision, Sender, SenderConfig};
use std::fs::File;
use std::io::BufWriter;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How to send.
pub struct SendConfig {
    /// Receiver address.
    pub peer: SocketAddr,
    /// Congestion controller (algorithm and switches).
    pub cc: Config,
    /// What to send.
    pub source: Source,
    /// Stop offering new data after this long (pattern without a length).
    pub duration: Option<Duration>,
    /// Give up when the peer is silent this long.
    pub idle_timeout: Duration,
    /// Time-series CSV (the shared schema, `sender::schema::FLOW_COLUMNS`,
    /// then [`PACING_ERROR_US`]). Its time origin is the end of the handshake,
    /// when the first data packet may leave.
    pub log: Option<PathBuf>,
    /// Sampling interval of the log and the progress line.
    pub interval: Duration,
    /// Print a progress line to stderr every second.
    pub progress: bool,
    /// Batch the datagrams the pacer releases together into one GSO send
    /// (`UDP_SEGMENT`) where the kernel supports it.
    pub gso: bool,
    /// Send data packets ECN-capable (ECT(0)) and feed the CE marks the
    /// receiver's ACKs count to the controller ([`crate::ecn`]; the shared
    /// sender's `SenderConfig::ecn`). Marking stops for the connection if
    /// the ACKs' counts fail validation.
    pub ecn: bool,
}

/// The sampling interval's floor and its check, shared with the
/// kernel-TCP probe.
pub use sender::sample_interval::{check_interval, MIN_INTERVAL};

/// The column the log writes after the shared schema
/// (`sender::schema::FLOW_COLUMNS`): how late paced sends went out
/// against their pacing time over the sampling interval, median, µs.
pub const PACING_ERROR_US: &str = "pacing_error_us";

/// The sender's final report.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SendSummary {
    /// Algorithm.
    pub cc: String,
    /// Stream bytes delivered and verified by the receiver.
    pub bytes: u64,
    /// Seconds from the handshake to the receiver's verdict.
    pub seconds: f64,
    /// bytes × 8 / seconds.
    pub goodput_bps: f64,
    /// RTT percentiles over every sample, ms.
    pub rtt_median_ms: Option<f64>,
    /// See `rtt_median_ms`.
    pub rtt_p95_ms: Option<f64>,
    /// Data packets sent, and retransmitted.
    pub packets_sent: u64,
    /// See `packets_sent`.
    pub retransmissions: u64,
    /// Probe timeouts that fired (RFC 9002 §6.2).
    pub rtos: u64,
    /// How late paced sends went out against their pacing time, µs.
    pub pacing_error_p50_us: Option<f64>,
    /// See `pacing_error_p50_us`.
    pub pacing_error_p99_us: Option<f64>,
    /// Whether GSO batching was in use at the end (it turns itself off if
    /// the device refuses it).
    pub gso: bool,
    /// Datagrams per send system call (1 without GSO).
    pub datagrams_per_syscall: f64,
    /// Datagrams dropped as malformed, and as stray (another connection).
    pub malformed: u64,
    /// See `malformed`.
    pub stray: u64,
    /// ECN: `off`, `capable` (marked ECT(0) throughout, every ACK's counts
    /// valid) or `failed: REASON` (marking stopped when validation failed).
    pub ecn: String,
    /// CE marks the receiver counted, validated, and given to the
    /// controller (the shared sender's `delivered_ce`).
    pub ce_packets: u64,
    /// `ce_packets` over the data packets acknowledged; absent without
    /// ECN.
    pub ce_fraction: Option<f64>,
}

fn send_error(e: SendError) -> String {
    match e {
        SendError::Refused => "the receiver is not listening (connection refused)".into(),
        SendError::Other(e) => format!("send: {e}"),
    }
}

/// Sends one control datagram on its own.
fn send_packet(batch: &mut BatchSender, sock: &UdpSocket, buf: &[u8]) -> Result<(), String> {
    batch.push(sock, buf).map_err(send_error)?;
    batch.flush(sock).map_err(send_error)
}

/// The live progress line on stderr (redrawn in place with `\r`). It is
/// ended with a newline before anything else is printed: by
/// [`ProgressLine::finish`] at the end of a transfer and, when `send`
/// returns early with an error, by its `Drop`, so the caller's error
/// message starts on a line of its own instead of after the figures.
#[derive(Default)]
struct ProgressLine {
    /// A line is on screen without its newline.
    open: bool,
}

impl ProgressLine {
    /// Redraws the line.
    fn show(&mut self, text: std::fmt::Arguments<'_>) {
        eprint!("\r{text}");
        self.open = true;
    }

    /// Ends the line if one is open.
    fn finish(&mut self) {
        if std::mem::take(&mut self.open) {
            eprintln!();
        }
    }
}

impl Drop for ProgressLine {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Runs a transfer to completion.
pub fn send(cfg: SendConfig) -> Result<SendSummary, String> {
    send_with(cfg, None)
}

/// [`send`] with a user's congestion control ([`sender::CustomCc`]) in
/// place of `cfg.cc.algorithm` (`cfg.cc` still supplies the switches the
/// sender reads, such as the initial window). The transport drives it
/// exactly as it drives the built-in algorithms.
pub fn send_with(
    cfg: SendConfig,
    custom_cc: Option<sender::CustomCc>,
) -> Result<SendSummary, String> {
    if let Source::Pattern { seed: 0, .. } = cfg.source {
        return Err("pattern seed 0 is reserved (it announces a file)".into());
    }
    if let Some(e) = custom_cc.as_ref().and_then(|c| c.unbuilt_error()) {
        return Err(e);
    }
    check_interval(&format!("interval {:?}", cfg.interval), cfg.interval)?;
    let bind: SocketAddr = if cfg.peer.is_ipv4() {
        "0.0.0.0:0".parse().expect("literal")
    } else {
        "[::]:0".parse().expect("literal")
    };
    let sock = UdpSocket::bind(bind).map_err(|e| format!("bind: {e}"))?;
    sock.connect(cfg.peer)
        .map_err(|e| format!("cannot reach {}: {e}", cfg.peer))?;
    sock.set_nonblocking(true).map_err(|e| e.to_string())?;
    let mut batch = BatchSender::new(&sock, cfg.peer, cfg.gso).map_err(|e| e.to_string())?;
    let fd = sock.as_raw_fd();
    let conn_id: u64 = rand::random();
    let start = Instant::now();
    let mut out = Vec::with_capacity(MAX_DATAGRAM);
    let mut inbuf = [0u8; 2048];
    let (mut malformed, mut stray) = (0u64, 0u64);
    let total = cfg.source.total();

    // Handshake: HELLO every 200 ms until HELLO_ACK.
    let mut last_heard = Instant::now();
    let mut next_hello = 0u64;
    let limit = loop {
        let now = now_ns(start);
        if now >= next_hello {
            wire::encode(
                &Packet {
                    conn_id,
                    pn: CONTROL_PN,
                    frame: Frame::Hello {
                        total: total.unwrap_or(u64::MAX),
                        seed: cfg.source.seed(),
                    },
                },
                &mut out,
            );
            send_packet(&mut batch, &sock, &out)?;
            next_hello = now + 200_000_000;
        }
        if last_heard.elapsed() > cfg.idle_timeout {
            // A `bbrlab recv` that is busy answers BUSY (below), so
            // silence means nothing listening that speaks this protocol,
            // or a path that loses the datagrams.
            return Err(format!(
                "no answer from {} within {:?}: no `bbrlab recv` is listening there, or the path drops its datagrams",
                cfg.peer, cfg.idle_timeout
            ));
        }
        wait_readable(fd, next_hello.saturating_sub(now_ns(start)));
        let mut got = None;
        while let Ok(n) = sock.recv(&mut inbuf) {
            match wire::decode(&inbuf[..n]) {
                Ok(p) if p.conn_id != conn_id => stray += 1,
                Ok(Packet {
                    frame: Frame::HelloAck { max_chunks },
                    ..
                }) => got = Some(max_chunks),
                Ok(Packet {
                    frame: Frame::Busy, ..
                }) => {
                    return Err(format!(
                        "the receiver at {} is busy with another transfer and refused this one (`bbrlab recv` serves one sender at a time); try again when it has finished, or start another receiver",
                        cfg.peer
                    ))
                }
                Ok(_) => stray += 1,
                Err(_) => malformed += 1,
            }
        }
        if let Some(l) = got {
            last_heard = Instant::now();
            break l;
        }
    };

    let t0 = now_ns(start);
    let mut flow = SenderConfig::bulk(cfg.cc);
    flow.cc.mss_bytes = CHUNK as u64;
    let cc_name = custom_cc
        .as_ref()
        .map_or(cfg.cc.algorithm.name(), |c| c.name.as_str())
        .to_string();
    flow.custom_cc = custom_cc;
    // A real sender releases a send quantum per timer wake (one GSO send);
    // per-packet wakes cost more than the packet at Gbit/s rates.
    flow.pacing = sender::Pacing::Quantum;
    // QUIC's probe timeout, with the receiver's delayed-ACK bound as the
    // peer's max_ack_delay.
    flow.timeout = sender::Timeout::Pto {
        max_ack_delay_ns: crate::receiver::MAX_ACK_DELAY_NS,
    };
    flow.start_ns = t0;
    flow.size_bytes = total;
    // QUIC's ECN: ECT(0) on data packets, counts in the ACKs.
    if cfg.ecn {
        flow.ecn = sender::Ecn::Ect0;
        flow.ecn_feedback = sender::EcnFeedback::Counts;
    }
    flow.stop_ns = match (total, cfg.duration) {
        (None, Some(d)) => Some(t0 + d.as_nanos() as u64),
        (None, None) => Some(t0 + 10_000_000_000),
        _ => None,
    };
    let mut sender = Sender::new(&flow, rand::random());
    sender.set_flow_limit(limit);
    // Why ECN validation failed, once it has.
    let mut ecn_failure: Option<&'static str> = None;
    let mut hash = StreamHash::new();
    let mut hashed_chunks = 0u64;
    let mut pace_err = LogHistogram::default();
    let mut waiting_for_pace: Option<u64> = None;
    let mut log = match &cfg.log {
        Some(p) => {
            let mut w = csv::Writer::from_writer(BufWriter::new(
                File::create(p).map_err(|e| format!("cannot write {}: {e}", p.display()))?,
            ));
            let header = FLOW_CSV_HEADER.split(',').chain([PACING_ERROR_US]);
            w.write_record(header)
                .map_err(|e| format!("writing {}: {e}", p.display()))?;
            Some(w)
        }
        None => None,
    };
    let interval = cfg.interval.as_nanos() as u64;
    let mut next_sample = t0;
    let mut last_delivered = 0u64;
    let mut last_progress = t0;
    let mut line = ProgressLine::default();
    let mut window_err = LogHistogram::default();
    // FIN phase state.
    let mut fin: Option<(u64, [u8; 32])> = None;
    let mut next_fin = 0u64;
    let mut done: Option<(bool, u64)> = None;
    let verdict = loop {
        let now = now_ns(start);
        // Datagrams from the receiver.
        while let Ok(n) = sock.recv(&mut inbuf) {
            let p = match wire::decode(&inbuf[..n]) {
                Ok(p) => p,
                Err(_) => {
                    malformed += 1;
                    continue;
                }
            };
            if p.conn_id != conn_id {
                stray += 1;
                continue;
            }
            last_heard = Instant::now();
            match p.frame {
                Frame::Ack {
                    ranges,
                    len,
                    ack_delay_us,
                    dsack,
                    cum_chunk,
                    max_chunks,
                    ecn: counts,
                } => {
                    let ack = Ack {
                        ranges,
                        len,
                        ack_delay_ns: ack_delay_us as u64 * 1000,
                        dsack,
                        cum_chunk,
                        // A plain ACK reports no counts: zeros, which fail
                        // validation once ECT packets are acknowledged.
                        ecn: counts.map(wire::EcnCounts::to_shared).unwrap_or_default(),
                        ece: false,
                        // The frame's `max_chunks` is this protocol's window.
                        rwnd_chunks: None,
                        ts_echo_ms: None,
                    };
                    // Stamped when read, not when the loop began: a
                    // datagram read later in a drained batch would
                    // otherwise get a short RTT sample. The shared sender
                    // validates the counts and gives the controller the
                    // new CE marks between its `on_ack_begin` and `on_ack`.
                    sender.on_ack(CcInstant::from_nanos(now_ns(start)), &ack);
                    sender.set_flow_limit(max_chunks);
                    if cfg.ecn && sender.ecn_failed && ecn_failure.is_none() {
                        let why = crate::ecn::failure_reason(counts.is_some());
                        ecn_failure = Some(why);
                        line.finish();
                        eprintln!("ECN validation failed, marking stopped: {why}");
                    }
                }
                Frame::Done { ok, received } => {
                    if fin.is_some() {
                        done = Some((ok, received));
                    }
                }
                Frame::HelloAck { max_chunks } => sender.set_flow_limit(max_chunks),
                _ => stray += 1,
            }
        }
        if let Some(v) = done {
            break v;
        }
        if last_heard.elapsed() > cfg.idle_timeout {
            return Err(format!(
                "the receiver went silent for {:?}; giving up",
                cfg.idle_timeout
            ));
        }
        if let Some(t) = sender.timer_deadline() {
            if t.as_nanos() <= now {
                sender.on_timer(CcInstant::from_nanos(now));
            }
        }
        // Send what may be sent now.
        if fin.is_none() {
            // One clock reading per wake, as Linux's `tcp_write_xmit()`
            // stamps a whole write with one `tcp_clock_cache`: what leaves
            // in this wake is one burst to the pacer (one GSO batch), which
            // it would not be if each datagram read the clock afresh.
            let now = now_ns(start);
            loop {
                match sender.poll(CcInstant::from_nanos(now)) {
                    SendDecision::Send {
                        chunk,
                        bytes,
                        retransmission,
                    } => {
                        if let Some(t) = waiting_for_pace.take() {
                            let e = now.saturating_sub(t);
                            pace_err.record(e);
                            window_err.record(e);
                        }
                        // The datagram is built where the kernel reads it:
                        // the payload is generated (or read from the file)
                        // straight into the batch, and hashed from there.
                        let len = bytes as usize;
                        // The packet's number and codepoint are known
                        // before it is written: recording the send first
                        // changes nothing the sender reads in between.
                        let sent = sender.on_sent_ecn(
                            CcInstant::from_nanos(now),
                            chunk,
                            bytes,
                            retransmission,
                        );
                        let slot = batch
                            .slot_ecn(&sock, DATA_HEADER + len, crate::ecn::to_quinn(sent.ecn))
                            .map_err(send_error)?;
                        let (header, payload) = slot.split_at_mut(DATA_HEADER);
                        cfg.source
                            .chunk(chunk, len, payload)
                            .map_err(|e| format!("reading the source: {e}"))?;
                        if !retransmission && chunk == hashed_chunks {
                            hash.update(payload);
                            hashed_chunks += 1;
                        }
                        wire::encode_data_header(header, conn_id, sent.pn, chunk, len as u16);
                    }
                    SendDecision::PaceUntil(t) => {
                        waiting_for_pace = Some(t.as_nanos());
                        break;
                    }
                    _ => break,
                }
            }
            // Everything released at this instant leaves now.
            batch.flush(&sock).map_err(send_error)?;
            if sender.is_finished(CcInstant::from_nanos(now_ns(start))) {
                let sent_bytes = stream_len(total, sender.chunks_sent());
                fin = Some((sent_bytes, hash.digest()));
            }
        }
        if let Some((total_bytes, digest)) = fin {
            let now = now_ns(start);
            if now >= next_fin {
                wire::encode(
                    &Packet {
                        conn_id,
                        pn: CONTROL_PN,
                        frame: Frame::Fin {
                            total: total_bytes,
                            digest,
                        },
                    },
                    &mut out,
                );
                send_packet(&mut batch, &sock, &out)?;
                next_fin = now + 100_000_000;
            }
        }
        // Samples and progress.
        let now = now_ns(start);
        if now >= next_sample {
            let delivered = sender.delivered_bytes();
            let s = sender.cc.snapshot();
            if let Some(w) = log.as_mut() {
                let gp = (delivered - last_delivered) as f64 * 8e9 / interval as f64;
                let opt = |v: Option<f64>, digits: usize| {
                    v.map_or(String::new(), |x| format!("{x:.digits$}"))
                };
                let ms = |ns: Option<u64>| opt(ns.map(|r| r as f64 / 1e6), 3);
                let row: [String; FLOW_COLUMNS.len() + 1] = [
                    format!("{:.6}", (now - t0) as f64 / 1e9),
                    "0".to_string(),
                    delivered.to_string(),
                    format!("{gp:.0}"),
                    ms(sender.latest_rtt_ns),
                    s.cwnd_bytes.to_string(),
                    (s.pacing_rate_bytes_per_sec * 8).to_string(),
                    sender.inflight.to_string(),
                    s.mode.name().to_string(),
                    opt(s.bw_estimate_bytes_per_sec.map(|b| b * 8.0), 0),
                    opt(s.min_rtt.map(|d| d.as_secs_f64() * 1e3), 3),
                    String::new(), // queue_delay_ms: not seen by an end host
                    sender.retransmissions.to_string(),
                    ms(sender.cc.rtt().smoothed_ns()),
                    sender.packets_sent.to_string(),
                    sender.retransmissions.to_string(),
                    sender.delivered_ce.to_string(),
                    opt(window_err.quantile(0.5).map(|e| e / 1e3), 1),
                ];
                w.write_record(&row)
                    .map_err(|e| format!("writing the log: {e}"))?;
            }
            window_err = LogHistogram::default();
            last_delivered = delivered;
            next_sample = now + interval;
            if cfg.progress && now - last_progress >= 1_000_000_000 {
                // With ECN, the CE marks given to the controller so far.
                let ce = if cfg.ecn {
                    format!("  ce {}", sender.delivered_ce)
                } else {
                    String::new()
                };
                line.show(format_args!(
                    "{:6.1} s {:8.2} Mbit/s  rtt {:6.1} ms  cwnd {:7.0} kB  {:<10} retx {}{ce}   ",
                    (now - t0) as f64 / 1e9,
                    delivered as f64 * 8e3 / (now - t0).max(1) as f64,
                    sender.latest_rtt_ns.unwrap_or(0) as f64 / 1e6,
                    s.cwnd_bytes as f64 / 1e3,
                    s.mode.name(),
                    sender.retransmissions
                ));
                last_progress = now;
            }
        }
        // Wait for the next thing to do.
        let mut next = next_sample;
        if let Some(t) = waiting_for_pace {
            next = next.min(t);
        }
        if let Some(t) = sender.timer_deadline() {
            next = next.min(t.as_nanos());
        }
        if fin.is_some() {
            next = next.min(next_fin);
        }
        wait_readable(fd, next.saturating_sub(now_ns(start)).min(50_000_000));
    };
    if let Some(w) = log.as_mut() {
        w.flush().map_err(|e| format!("writing the log: {e}"))?;
    }
    line.finish();
    let (ok, received) = verdict;
    let (total_bytes, _) = fin.expect("verdict only after FIN");
    if !ok {
        return Err(format!(
            "the receiver rejected the transfer: it got {received} bytes in order of {total_bytes}, or the BLAKE3 digest differed"
        ));
    }
    let secs = (now_ns(start) - t0) as f64 / 1e9;
    let ms = |v: Option<f64>| v.map(|x| x / 1e6);
    let us = |v: Option<f64>| v.map(|x| x / 1e3);
    Ok(SendSummary {
        cc: cc_name,
        bytes: total_bytes,
        seconds: secs,
        goodput_bps: total_bytes as f64 * 8.0 / secs.max(1e-9),
        rtt_median_ms: ms(sender.rtt_hist.quantile(0.5)),
        rtt_p95_ms: ms(sender.rtt_hist.quantile(0.95)),
        packets_sent: sender.packets_sent,
        retransmissions: sender.retransmissions,
        rtos: sender.rtos,
        pacing_error_p50_us: us(pace_err.quantile(0.5)),
        pacing_error_p99_us: us(pace_err.quantile(0.99)),
        gso: batch.gso(),
        datagrams_per_syscall: batch.datagrams as f64 / batch.syscalls.max(1) as f64,
        malformed,
        stray,
        ecn: match (cfg.ecn, ecn_failure) {
            (false, _) => "off".into(),
            (true, None) => "capable".into(),
            (true, Some(why)) => format!("failed: {why}"),
        },
        ce_packets: sender.delivered_ce,
        ce_fraction: (cfg.ecn && sender.delivered_packets > 0)
            .then(|| sender.delivered_ce as f64 / sender.delivered_packets as f64),
    })
}

fn stream_len(total: Option<u64>, chunks: u64) -> u64 {
    total.unwrap_or(chunks * CHUNK as u64)
}
