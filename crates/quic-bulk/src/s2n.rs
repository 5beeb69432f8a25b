//! The s2n-quic stack: its own controllers (`s2n:bbr2`, `s2n:cubic`) and
//! bbrlab's (`bbr`, `bbr-jitter`, `bbr3`, `cubic`, `reno`) through the
//! `bbrlab-s2n` adapter, whose `Observer` gives the time series their
//! controller state (cwnd, pacing rate, mode, bandwidth estimate, min_rtt,
//! bytes in flight as the adapter counts them, srtt, CE marks).
//!
//! The sender is s2n's client (the side whose controller is measured),
//! the receiver its server. Both run on a single-thread tokio runtime, so
//! a process's CPU time is one stack's cost per byte.
//!
//! What the time series shows of s2n's own controllers (and, for every
//! controller, the bytes acknowledged and the packet counts) comes from its
//! event subscriber ([`Probe`]): `on_recovery_metrics` (srtt, latest and
//! min RTT, cwnd, bytes in flight), `on_pacing_rate_updated`,
//! `on_bbr_state_changed`, `on_slow_start_exited` (CUBIC's mode),
//! `on_packet_sent` and `on_packet_lost` (counts), the ACK frames' ECN
//! counts (`on_frame_received`), and, when logging, each packet's stream
//! bytes (`on_frame_sent`) matched with `on_ack_range_received` for the
//! bytes acknowledged. s2n does not report BBRv2's bandwidth estimate:
//! that cell stays empty.
//!
//! ECN: s2n-quic marks ECT(0) and validates ECN on every path (its
//! `path::ecn` controller, RFC 9000 §13.4.2) with no switch in its
//! public API to turn it off, so `--ecn` changes nothing here. Once ECN
//! is validated, s2n also sends a CE-marked packet now and then to check
//! the peer does not suppress CE reports (RFC 9000 §13.4.2.2's
//! suppression test): `delivered_ce` counts those too (s2n itself does
//! not treat them as congestion).

use crate::pattern;
use crate::series::spawn_sampler;
use crate::series::{Sample, Series};
use crate::stack::{
    idle_timeout, next_write, runtime, write_wait, Amount, Cc, RecvOpts, RecvReport, SendOpts,
    SendReport, Stack, DEADLINE_CODE,
};
use bytes::{Bytes, BytesMut};
use s2n_quic::client::Connect;
use s2n_quic::provider::congestion_controller::{Bbr, Cubic};
use s2n_quic::provider::event::{events, ConnectionInfo, ConnectionMeta, Subscriber};
use s2n_quic::provider::io::tokio::Builder as IoBuilder;
use s2n_quic::provider::limits::Limits;
use s2n_quic::{Client, Server};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The s2n-quic stack.
pub struct S2n;

/// Flow-control windows: the 64 MiB bbrlab's own receiver gives (as the
/// noq and quinn stacks do), so no run is window-limited on loopback.
const WINDOW: u64 = 64 << 20;

/// The send buffer s2n keeps per stream: the bytes written but not yet
/// acknowledged. 16 MiB covers a loopback BDP at 10 Gbit/s with room.
const SEND_BUFFER: u32 = 16 << 20;

/// UDP socket buffers: the 4 MiB bbrlab's transport asks for on both ends.
const SOCKET_BUFFER: usize = 4 << 20;

/// Bytes handed to s2n per write.
const WRITE: usize = 64 << 10;

impl Stack for S2n {
    fn name(&self) -> &'static str {
        "s2n"
    }

    fn own_controllers(&self) -> &'static [&'static str] {
        &["bbr2", "cubic"]
    }

    fn bbrlab_controllers(&self) -> Result<(), String> {
        // Through the bbrlab-s2n adapter, built in.
        Ok(())
    }

    fn send(&self, o: &SendOpts) -> Result<SendReport, String> {
        runtime()?.block_on(send(o))
    }

    fn recv(&self, o: RecvOpts) -> Result<RecvReport, String> {
        runtime()?.block_on(recv(o))
    }
}

fn limits(timeout: Duration) -> Result<Limits, String> {
    fn e(e: impl std::fmt::Display) -> String {
        format!("s2n-quic limits: {e}")
    }
    Limits::new()
        .with_data_window(WINDOW)
        .map_err(e)?
        .with_unidirectional_data_window(WINDOW)
        .map_err(e)?
        .with_bidirectional_local_data_window(WINDOW)
        .map_err(e)?
        .with_bidirectional_remote_data_window(WINDOW)
        .map_err(e)?
        .with_max_send_buffer_size(SEND_BUFFER)
        .map_err(e)?
        .with_max_idle_timeout(idle_timeout(timeout))
        .map_err(e)?
        .with_max_handshake_duration(timeout)
        .map_err(e)
}

fn io(addr: SocketAddr) -> Result<s2n_quic::provider::io::tokio::Provider, String> {
    let e = |e: std::io::Error| format!("socket on {addr}: {e}");
    IoBuilder::default()
        .with_receive_address(addr)
        .map_err(e)?
        .with_recv_buffer_size(SOCKET_BUFFER)
        .map_err(e)?
        .with_send_buffer_size(SOCKET_BUFFER)
        .map_err(e)?
        .build()
        .map_err(e)
}

/// A connection or stream error as one line; an expired idle timer is
/// named as the peer going silent.
fn conn_error(e: s2n_quic::connection::Error, timeout: Duration) -> String {
    match e {
        s2n_quic::connection::Error::IdleTimerExpired { .. } => format!(
            "the peer stopped responding (idle timeout {} s)",
            idle_timeout(timeout).as_secs_f64()
        ),
        other => format!("the connection failed: {other}"),
    }
}

fn stream_error(e: s2n_quic::stream::Error, timeout: Duration) -> String {
    match e {
        s2n_quic::stream::Error::ConnectionError { error, .. } => conn_error(error, timeout),
        other => format!("the stream failed: {other}"),
    }
}

/// Whether the sender closed the connection at its `--duration` deadline
/// ([`DEADLINE_CODE`]): the end of the transfer, not a failure.
fn closed_at_deadline(e: &s2n_quic::stream::Error) -> bool {
    matches!(
        e,
        s2n_quic::stream::Error::ConnectionError {
            error: s2n_quic::connection::Error::Application { error, .. },
            ..
        } if u64::from(*error) == u64::from(DEADLINE_CODE)
    )
}

async fn recv(o: RecvOpts) -> Result<RecvReport, String> {
    let (cert, key) = crate::stack::self_signed()?;
    let mut server = Server::builder()
        .with_tls((cert.as_str(), key.as_str()))
        .map_err(|e| format!("s2n-quic TLS: {e}"))?
        .with_io(io(o.listen)?)
        .map_err(|e| format!("s2n-quic io: {e}"))?
        .with_limits(limits(o.timeout)?)
        .map_err(|e| format!("s2n-quic limits: {e}"))?
        .start()
        .map_err(|e| format!("s2n-quic server on {}: {e}", o.listen))?;
    let addr = server
        .local_addr()
        .map_err(|e| format!("local address: {e}"))?;
    // Written once the socket is bound, so a sender that sees the file
    // reaches a listening socket.
    crate::stack::make_cert(&o.cert, &cert)?;
    if let Some(tx) = &o.ready {
        let _ = tx.send(addr);
    }
    let mut conn = tokio::time::timeout(o.timeout, server.accept())
        .await
        .map_err(|_| {
            format!(
                "no connection on {addr} within {} s",
                o.timeout.as_secs_f64()
            )
        })?
        .ok_or("the server stopped before a connection arrived")?;
    let t0 = Instant::now();
    let mut stream = tokio::time::timeout(o.timeout, conn.accept_receive_stream())
        .await
        .map_err(|_| format!("no stream within {} s", o.timeout.as_secs_f64()))?
        .map_err(|e| conn_error(e, o.timeout))?
        .ok_or("the peer closed the connection before opening a stream")?;
    let mut bytes = 0u64;
    let mut stopped_at_deadline = false;
    // Bounded by the idle timeout: a silent peer ends `receive` in error.
    loop {
        match stream.receive().await {
            Ok(Some(chunk)) => {
                pattern::verify(bytes, &chunk)?;
                bytes += chunk.len() as u64;
            }
            Ok(None) => break,
            Err(e) if closed_at_deadline(&e) => {
                stopped_at_deadline = true;
                break;
            }
            Err(e) => return Err(stream_error(e, o.timeout)),
        }
    }
    let seconds = t0.elapsed().as_secs_f64();
    let report = RecvReport {
        bytes,
        stopped_at_deadline,
        seconds,
    };
    if let Some(tx) = &o.done {
        let _ = tx.send(report.clone());
    }
    // Stay until the sender closes the connection (it does once the end
    // of the stream is acknowledged), so the acknowledgement of the last
    // bytes is not lost with this process.
    if !stopped_at_deadline {
        let _ = tokio::time::timeout(o.timeout, conn.accept_receive_stream()).await;
    }
    Ok(report)
}

/// What the subscriber has seen of the sender's connection.
#[derive(Debug, Default)]
struct State {
    srtt: Option<Duration>,
    latest_rtt: Option<Duration>,
    min_rtt: Option<Duration>,
    cwnd: Option<u32>,
    inflight: Option<u32>,
    pacing_bytes_per_sec: Option<u64>,
    mode: Option<&'static str>,
    packets_sent: u64,
    packets_lost: u64,
    ce: u64,
    /// Whether to follow stream bytes per packet (only for the log).
    track: bool,
    /// 1-RTT packets in flight carrying stream bytes: number → bytes.
    unacked: BTreeMap<u64, u64>,
    acked_stream_bytes: u64,
}

/// s2n's event subscriber for the sender's connection.
#[derive(Clone)]
struct Probe(Arc<Mutex<State>>);

impl Probe {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves counters that
        // are still meaningful; keep reading them.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn one_rtt(h: &events::PacketHeader) -> Option<u64> {
    match h {
        events::PacketHeader::OneRtt { number, .. } => Some(*number),
        _ => None,
    }
}

/// s2n's BBRv2 states under `congestion::Mode`'s names.
fn bbr_mode(s: &events::BbrState) -> Option<&'static str> {
    Some(match s {
        events::BbrState::Startup { .. } => "startup",
        events::BbrState::Drain { .. } => "drain",
        events::BbrState::ProbeBwDown { .. } => "probe_bw_down",
        events::BbrState::ProbeBwCruise { .. } => "probe_bw_cruise",
        events::BbrState::ProbeBwRefill { .. } => "probe_bw_refill",
        events::BbrState::ProbeBwUp { .. } => "probe_bw_up",
        events::BbrState::ProbeRtt { .. } => "probe_rtt",
        _ => return None,
    })
}

impl Subscriber for Probe {
    type ConnectionContext = ();

    fn create_connection_context(&mut self, _: &ConnectionMeta, _: &ConnectionInfo) {}

    fn on_recovery_metrics(&mut self, _: &mut (), _: &ConnectionMeta, e: &events::RecoveryMetrics) {
        let mut s = self.state();
        s.srtt = Some(e.smoothed_rtt);
        s.latest_rtt = Some(e.latest_rtt);
        s.min_rtt = Some(e.min_rtt);
        s.cwnd = Some(e.congestion_window);
        s.inflight = Some(e.bytes_in_flight);
    }

    fn on_pacing_rate_updated(
        &mut self,
        _: &mut (),
        _: &ConnectionMeta,
        e: &events::PacingRateUpdated,
    ) {
        self.state().pacing_bytes_per_sec = Some(e.bytes_per_second);
    }

    fn on_bbr_state_changed(
        &mut self,
        _: &mut (),
        _: &ConnectionMeta,
        e: &events::BbrStateChanged,
    ) {
        if let Some(m) = bbr_mode(&e.state) {
            self.state().mode = Some(m);
        }
    }

    fn on_slow_start_exited(
        &mut self,
        _: &mut (),
        _: &ConnectionMeta,
        _: &events::SlowStartExited,
    ) {
        let mut s = self.state();
        // BBRv2 reports its own states; this is CUBIC leaving slow start.
        if s.mode == Some("slow_start") {
            s.mode = Some("congestion_avoidance");
        }
    }

    fn on_packet_sent(&mut self, _: &mut (), _: &ConnectionMeta, _: &events::PacketSent) {
        self.state().packets_sent += 1;
    }

    fn on_frame_sent(&mut self, _: &mut (), _: &ConnectionMeta, e: &events::FrameSent) {
        if let (Some(pn), events::Frame::Stream { len, .. }) = (one_rtt(&e.packet_header), &e.frame)
        {
            let mut s = self.state();
            if s.track {
                *s.unacked.entry(pn).or_insert(0) += u64::from(*len);
            }
        }
    }

    fn on_ack_range_received(
        &mut self,
        _: &mut (),
        _: &ConnectionMeta,
        e: &events::AckRangeReceived,
    ) {
        if one_rtt(&e.packet_header).is_none() {
            return;
        }
        let mut s = self.state();
        if !s.track {
            return;
        }
        let acked: Vec<u64> = s
            .unacked
            .range(e.ack_range.clone())
            .map(|(k, _)| *k)
            .collect();
        for k in acked {
            if let Some(b) = s.unacked.remove(&k) {
                s.acked_stream_bytes += b;
            }
        }
    }

    fn on_packet_lost(&mut self, _: &mut (), _: &ConnectionMeta, e: &events::PacketLost) {
        let mut s = self.state();
        s.packets_lost += 1;
        // Its stream bytes go out again in new packets.
        if let Some(pn) = one_rtt(&e.packet_header) {
            s.unacked.remove(&pn);
        }
    }

    fn on_frame_received(&mut self, _: &mut (), _: &ConnectionMeta, e: &events::FrameReceived) {
        if let events::Frame::Ack {
            ecn_counts: Some(c),
            ..
        } = &e.frame
        {
            if one_rtt(&e.packet_header).is_some() {
                let mut s = self.state();
                s.ce = s.ce.max(c.ce_count);
            }
        }
    }
}

/// One sample of the sender's state at `t` seconds after the handshake:
/// the controller's state from the adapter's `Observer` when one is
/// given (bbrlab's controllers), otherwise from s2n's events; the
/// delivered bytes and the packet counts from the events in both cases,
/// so s2n's controllers and bbrlab's are counted alike.
fn sample(p: &Probe, observer: Option<&bbrlab_s2n::Observer>, t: f64) -> Sample {
    let mut out = events_sample(p, t);
    if let Some(o) = observer.and_then(bbrlab_s2n::Observer::latest) {
        out.overlay(&o);
    }
    out
}

/// What s2n's events alone say.
fn events_sample(p: &Probe, t: f64) -> Sample {
    let s = p.state();
    let ms = |d: Option<Duration>| d.map(|d| d.as_secs_f64() * 1e3);
    Sample {
        time_s: t,
        delivered_bytes: s.acked_stream_bytes,
        rtt_ms: ms(s.latest_rtt),
        cwnd_bytes: s.cwnd.map(u64::from),
        pacing_rate_bps: s.pacing_bytes_per_sec.map(|b| b as f64 * 8.0),
        inflight_bytes: s.inflight.map(u64::from),
        mode: s.mode,
        bw_estimate_bps: None,
        min_rtt_ms: ms(s.min_rtt),
        srtt_ms: ms(s.srtt),
        packets_sent: s.packets_sent,
        packets_lost: s.packets_lost,
        delivered_ce: s.ce,
    }
}

async fn send(o: &SendOpts) -> Result<SendReport, String> {
    let bind: SocketAddr = if o.to.is_ipv4() {
        "0.0.0.0:0".parse().expect("literal")
    } else {
        "[::]:0".parse().expect("literal")
    };
    let probe = Probe(Arc::new(Mutex::new(State {
        // Acknowledged bytes are tracked for the time series, and for a
        // --duration run's report (what was acknowledged by the deadline).
        track: o.log.is_some() || matches!(o.amount, Amount::Duration(_)),
        ..State::default()
    })));
    let tls = o.cert_pem.as_str();
    let io = io(bind)?;
    let limits = limits(o.timeout)?;
    // The builder's type changes with the controller; each arm ends at
    // the same `Client`.
    macro_rules! client {
        ($cc:expr) => {
            Client::builder()
                .with_tls(tls)
                .map_err(|e| format!("s2n-quic TLS (the certificate): {e}"))?
                .with_io(io)
                .map_err(|e| format!("s2n-quic io: {e}"))?
                .with_limits(limits)
                .map_err(|e| format!("s2n-quic limits: {e}"))?
                .with_event(probe.clone())
                .map_err(|e| format!("s2n-quic events: {e}"))?
                .with_congestion_controller($cc)
                .map_err(|e| format!("s2n-quic congestion controller: {e}"))?
                .start()
                .map_err(|e| format!("s2n-quic client: {e}"))?
        };
    }
    // bbrlab's controllers report their state through the adapter's
    // Observer; s2n's own through the event subscriber alone.
    let mut observer: Option<bbrlab_s2n::Observer> = None;
    let client = match &o.cc {
        Cc::Own("bbr2") => {
            probe.state().mode = Some("startup");
            client!(Bbr::default())
        }
        Cc::Own("cubic") => {
            probe.state().mode = Some("slow_start");
            client!(Cubic::default())
        }
        Cc::Own(other) => return Err(format!("s2n has no controller `{other}`")),
        Cc::Bbrlab(cfg) => {
            let endpoint = bbrlab_s2n::Endpoint::new(**cfg);
            observer = Some(endpoint.observer());
            client!(endpoint)
        }
    };
    let connect = Connect::new(o.to).with_server_name("localhost");
    let mut conn = tokio::time::timeout(o.timeout, client.connect(connect))
        .await
        .map_err(|_| {
            format!(
                "no handshake with {} within {} s",
                o.to,
                o.timeout.as_secs_f64()
            )
        })?
        .map_err(|e| format!("handshake with {}: {}", o.to, conn_error(e, o.timeout)))?;
    let t0 = Instant::now();
    let mut stream = conn
        .open_send_stream()
        .await
        .map_err(|e| conn_error(e, o.timeout))?;

    // The sampler: one sample per interval on this runtime's thread.
    let done = Arc::new(AtomicBool::new(false));
    let series = Series::create(o.log.as_deref())?;
    let sampler = {
        let (probe, observer) = (probe.clone(), observer.clone());
        spawn_sampler(series, o.interval, t0, done.clone(), move |t| {
            sample(&probe, observer.as_ref(), t)
        })
    };

    let mut sent = 0u64;
    let stall = |what: &str| {
        format!(
            "{what} made no progress for {} s (the peer stopped responding?)",
            o.timeout.as_secs_f64()
        )
    };
    // With --duration the sender stops at this instant: it stops writing
    // (a write waiting for room in the send buffer gives up) and does not
    // wait for what the buffer still holds to be acknowledged.
    let deadline = match o.amount {
        Amount::Duration(d) => Some(t0 + d),
        Amount::Bytes(_) => None,
    };
    loop {
        let n = next_write(o.amount, sent, t0, WRITE);
        if n == 0 {
            break;
        }
        let mut buf = BytesMut::zeroed(n);
        pattern::fill(sent, &mut buf);
        let chunk: Bytes = buf.freeze();
        match tokio::time::timeout(write_wait(deadline, o.timeout), stream.send(chunk)).await {
            Ok(r) => r.map_err(|e| stream_error(e, o.timeout))?,
            Err(_) if deadline.is_some_and(|d| Instant::now() >= d) => break,
            Err(_) => return Err(stall("sending")),
        }
        sent += n as u64;
    }
    if deadline.is_some() {
        let seconds = t0.elapsed().as_secs_f64();
        done.store(true, Ordering::Relaxed);
        let mut series = sampler
            .await
            .map_err(|e| format!("the sampler failed: {e}"))??;
        // The last row: what the peer acknowledged by the deadline.
        let last = sample(&probe, observer.as_ref(), seconds);
        let acked = last.delivered_bytes;
        series.record(&last)?;
        let srtt_median_ms = series.finish()?;
        conn.close(DEADLINE_CODE.into());
        let (packets_sent, packets_lost) = {
            let s = probe.state();
            (s.packets_sent, s.packets_lost)
        };
        let mut client = client;
        let _ = tokio::time::timeout(Duration::from_secs(2), client.wait_idle()).await;
        return Ok(SendReport {
            bytes: acked,
            seconds,
            packets_sent,
            packets_lost,
            srtt_median_ms,
            stopped_at_deadline: true,
        });
    }
    // Resolves once the peer has acknowledged every byte and the end. The
    // send buffer may hold many seconds of data on a slow path, so the
    // wait is judged by progress, not by one deadline: it fails only when
    // a whole `--timeout` passes with no packet sent (no retransmission
    // either), bounded at MAX_DRAIN overall.
    {
        const MAX_DRAIN: Duration = Duration::from_secs(3600);
        let started = Instant::now();
        let mut close = Box::pin(stream.close());
        let mut seen = probe.state().packets_sent;
        loop {
            match tokio::time::timeout(o.timeout, &mut close).await {
                Ok(r) => {
                    r.map_err(|e| stream_error(e, o.timeout))?;
                    break;
                }
                Err(_) => {
                    let now_sent = probe.state().packets_sent;
                    if now_sent == seen || started.elapsed() >= MAX_DRAIN {
                        return Err(stall("waiting for the acknowledgement of the last bytes"));
                    }
                    seen = now_sent;
                }
            }
        }
    }
    let seconds = t0.elapsed().as_secs_f64();
    done.store(true, Ordering::Relaxed);
    let mut series = sampler
        .await
        .map_err(|e| format!("the sampler failed: {e}"))??;
    // The last row: everything written is acknowledged now.
    let mut last = sample(&probe, observer.as_ref(), seconds);
    last.delivered_bytes = sent;
    series.record(&last)?;
    let srtt_median_ms = series.finish()?;
    conn.close(0u32.into());
    let (packets_sent, packets_lost) = {
        let s = probe.state();
        (s.packets_sent, s.packets_lost)
    };
    let mut client = client;
    let _ = tokio::time::timeout(Duration::from_secs(2), client.wait_idle()).await;
    Ok(SendReport {
        bytes: sent,
        seconds,
        packets_sent,
        packets_lost,
        srtt_median_ms,
        stopped_at_deadline: false,
    })
}
