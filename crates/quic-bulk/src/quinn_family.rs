//! The transfer noq and quinn share: noq is a fork of quinn, and the two
//! crates' endpoint, connection, stream and configuration APIs are the
//! same but for a few calls. [`quinn_family!`] writes the transfer once
//! for a crate path, with the [`Stack`](crate::stack::Stack) impl; each
//! stack's module (`noq.rs`, `quinn.rs`) gives its unit type, name and own
//! controllers as the macro's arguments, and supplies what differs:
//!
//! - `own_factory(name)`: the stack's own controller by name;
//! - `path_now(&Connection) -> PathNow`: what its statistics say now;
//! - `next_chunk(&mut RecvStream)`: the next chunk of the stream (quinn
//!   wraps chunks in a `Chunk`, noq hands out `Bytes`).
//!
//! What the time series shows: for bbrlab's controllers, the controller's
//! state from the adapter's `Observer` (cwnd, pacing rate, mode, bandwidth
//! estimate, min_rtt, bytes in flight, srtt, RTT sample, CE reports); for
//! the stack's own, what `Connection::stats()` (quinn) or
//! `Connection::path_stats` (noq) report: cwnd, smoothed RTT, min RTT
//! (quinn) or bandwidth estimate (noq). Neither stack reports the bytes the
//! peer acknowledged on a stream, so `delivered_bytes` is the adapter's
//! acknowledged bytes (bbrlab's controllers) or the bytes sent and not
//! declared lost (the stack's own: in-flight bytes counted as delivered),
//! both QUIC packet bytes, capped at the stream bytes written; the last
//! row, taken once the peer has acknowledged the stream's end, is exact.
//! Packet counts come from the stack's statistics for every controller,
//! so the stack's controllers and bbrlab's are counted alike.

use std::time::Duration;

/// Flow-control windows: the 64 MiB bbrlab's own receiver gives, so no
/// run is window-limited on loopback.
pub const WINDOW: u32 = 64 << 20;

/// UDP socket buffers: the 4 MiB bbrlab's transport asks for on both ends.
pub const SOCKET_BUFFER: usize = 4 << 20;

/// Bytes handed to the stack per write.
pub const WRITE: usize = 64 << 10;

/// What a stack's connection statistics say at one moment.
#[derive(Clone, Copy, Debug, Default)]
pub struct PathNow {
    /// The stack's smoothed RTT.
    pub srtt: Duration,
    /// Its minimum RTT, when it reports one (quinn).
    pub min_rtt: Option<Duration>,
    /// The congestion window, bytes.
    pub cwnd: u64,
    /// The controller's bandwidth estimate, bit/s, when the stack reports
    /// one (noq).
    pub bw_bps: Option<f64>,
    /// Packets sent (ack-eliciting and probes).
    pub packets_sent: u64,
    /// Packets declared lost.
    pub packets_lost: u64,
    /// Bytes sent (QUIC packet bytes).
    pub bytes_sent: u64,
    /// Bytes of the packets declared lost.
    pub bytes_lost: u64,
}

/// The stack `$stack` (named `$name`, with the own controllers `$own`)
/// for a quinn-like crate `$q` with the adapter crate `$adapter`; see the
/// module docs for what the calling module defines.
macro_rules! quinn_family {
    ($stack:ident, $name:literal, [$($own:literal),*], $q:ident, $adapter:ident) => {
        use crate::pattern;
        use crate::quinn_family::{PathNow, SOCKET_BUFFER, WINDOW, WRITE};
        use crate::series::{spawn_sampler, Sample, Series};
        use crate::stack::{
            Amount, Cc, DEADLINE_CODE, RecvOpts, RecvReport, SendOpts, SendReport, idle_timeout, next_write, runtime, write_wait,
        };
        use std::net::SocketAddr;
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        use std::time::{Duration, Instant};
        use $q::rustls::pki_types::pem::PemObject;
        use $q::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

        type Factory = Arc<dyn $q::congestion::ControllerFactory + Send + Sync + 'static>;

        impl crate::stack::Stack for $stack {
            fn name(&self) -> &'static str {
                $name
            }

            fn own_controllers(&self) -> &'static [&'static str] {
                &[$($own),*]
            }

            fn bbrlab_controllers(&self) -> Result<(), String> {
                // Through the adapter crate, built in.
                Ok(())
            }

            fn send(&self, o: &SendOpts) -> Result<SendReport, String> {
                runtime()?.block_on(send(o))
            }

            fn recv(&self, o: RecvOpts) -> Result<RecvReport, String> {
                runtime()?.block_on(recv(o))
            }
        }

        fn transport(timeout: Duration, factory: Option<Factory>) -> Arc<$q::TransportConfig> {
            let mut t = $q::TransportConfig::default();
            // At most 1800 s (half of --timeout's 3600), well inside u32 ms.
            let idle_ms = idle_timeout(timeout).as_millis().min(u128::from(u32::MAX)) as u32;
            t.stream_receive_window($q::VarInt::from_u32(WINDOW))
                .receive_window($q::VarInt::from_u32(WINDOW))
                .send_window(u64::from(WINDOW))
                .max_idle_timeout(Some($q::VarInt::from_u32(idle_ms).into()));
            if let Some(f) = factory {
                t.congestion_controller_factory(f);
            }
            Arc::new(t)
        }

        /// An endpoint on a UDP socket bound to `addr` with
        /// [`SOCKET_BUFFER`] buffers (inside the tokio runtime).
        fn endpoint(
            addr: SocketAddr,
            server: Option<$q::ServerConfig>,
        ) -> Result<$q::Endpoint, String> {
            let sock =
                std::net::UdpSocket::bind(addr).map_err(|e| format!("socket on {addr}: {e}"))?;
            let s2 = socket2::SockRef::from(&sock);
            // The kernel caps these at net.core.{r,w}mem_max; a smaller
            // buffer is not an error, only a slower loopback.
            let _ = s2.set_recv_buffer_size(SOCKET_BUFFER);
            let _ = s2.set_send_buffer_size(SOCKET_BUFFER);
            $q::Endpoint::new(
                $q::EndpointConfig::default(),
                server,
                sock,
                Arc::new($q::TokioRuntime),
            )
            .map_err(|e| format!("endpoint on {addr}: {e}"))
        }

        /// A connection error as one line; an idle timeout is named as the
        /// peer going silent.
        fn conn_error(e: &$q::ConnectionError, timeout: Duration) -> String {
            match e {
                $q::ConnectionError::TimedOut => format!(
                    "the peer stopped responding (idle timeout {} s)",
                    idle_timeout(timeout).as_secs_f64()
                ),
                other => format!("the connection failed: {other}"),
            }
        }

        fn read_error(e: $q::ReadError, timeout: Duration) -> String {
            match e {
                $q::ReadError::ConnectionLost(c) => conn_error(&c, timeout),
                other => format!("the stream failed: {other}"),
            }
        }

        fn write_error(e: $q::WriteError, timeout: Duration) -> String {
            match e {
                $q::WriteError::ConnectionLost(c) => conn_error(&c, timeout),
                other => format!("the stream failed: {other}"),
            }
        }

        fn stopped_error(e: $q::StoppedError, timeout: Duration) -> String {
            match e {
                $q::StoppedError::ConnectionLost(c) => conn_error(&c, timeout),
                other => format!("the stream failed: {other}"),
            }
        }

        /// Whether the sender closed the connection at its `--duration`
        /// deadline ([`DEADLINE_CODE`]): the transfer's end, not a failure.
        fn closed_at_deadline(e: &$q::ReadError) -> bool {
            let code = $q::VarInt::from_u32(DEADLINE_CODE);
            match e {
                $q::ReadError::Reset(c) => *c == code,
                $q::ReadError::ConnectionLost($q::ConnectionError::ApplicationClosed(c)) => {
                    c.error_code == code
                }
                _ => false,
            }
        }

        /// Longest a `--duration` sender waits after the deadline for the
        /// receiver to close the connection in answer to the stream's reset.
        const DEADLINE_CLOSE_WAIT: Duration = Duration::from_secs(3);

        async fn recv(o: RecvOpts) -> Result<RecvReport, String> {
            let cert = crate::stack::self_signed_der()?;
            let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(cert.key_der));
            let mut sc =
                $q::ServerConfig::with_single_cert(vec![CertificateDer::from(cert.cert_der)], key)
                    .map_err(|e| format!("TLS server configuration: {e}"))?;
            sc.transport_config(transport(o.timeout, None));
            let ep = endpoint(o.listen, Some(sc))?;
            let addr = ep.local_addr().map_err(|e| format!("local address: {e}"))?;
            // Written once the socket is bound, so a sender that sees the
            // file reaches a listening socket.
            crate::stack::make_cert(&o.cert, &cert.cert_pem)?;
            if let Some(tx) = &o.ready {
                let _ = tx.send(addr);
            }
            let no_conn = || {
                format!(
                    "no connection on {addr} within {} s",
                    o.timeout.as_secs_f64()
                )
            };
            let incoming = tokio::time::timeout(o.timeout, ep.accept())
                .await
                .map_err(|_| no_conn())?
                .ok_or("the endpoint closed before a connection arrived")?;
            let conn = tokio::time::timeout(o.timeout, incoming)
                .await
                .map_err(|_| no_conn())?
                .map_err(|e| format!("handshake: {}", conn_error(&e, o.timeout)))?;
            let t0 = Instant::now();
            let mut rx = tokio::time::timeout(o.timeout, conn.accept_uni())
                .await
                .map_err(|_| format!("no stream within {} s", o.timeout.as_secs_f64()))?
                .map_err(|e| conn_error(&e, o.timeout))?;
            let mut bytes = 0u64;
            let mut stopped_at_deadline = false;
            // Bounded by the idle timeout: a silent peer ends the read in error.
            loop {
                match next_chunk(&mut rx).await {
                    Ok(Some(chunk)) => {
                        pattern::verify(bytes, &chunk)?;
                        bytes += chunk.len() as u64;
                    }
                    Ok(None) => break,
                    Err(e) if closed_at_deadline(&e) => {
                        // Tells a sender that reset the stream that it
                        // arrived (see DEADLINE_CLOSE_WAIT).
                        conn.close($q::VarInt::from_u32(DEADLINE_CODE), b"deadline");
                        stopped_at_deadline = true;
                        break;
                    }
                    Err(e) => return Err(read_error(e, o.timeout)),
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
            // Stay until the sender closes the connection (it does once
            // the end of the stream is acknowledged), so the acknowledgement
            // of the last bytes is not lost with this process.
            if stopped_at_deadline {
                // Long enough for the close to leave before the endpoint
                // goes with this function.
                let _ = tokio::time::timeout(Duration::from_secs(1), ep.wait_idle()).await;
            } else {
                let _ = tokio::time::timeout(o.timeout, conn.closed()).await;
            }
            Ok(report)
        }

        /// One sample at `t` s after the handshake: the controller's state
        /// from the adapter's Observer when given (bbrlab's controllers),
        /// otherwise from the stack's statistics.
        fn sample(
            conn: &$q::Connection,
            observer: Option<&$adapter::Observer>,
            written: u64,
            t: f64,
        ) -> Sample {
            let ms = |d: Option<Duration>| d.map(|d| d.as_secs_f64() * 1e3);
            let p: PathNow = path_now(conn);
            let mut out = Sample {
                time_s: t,
                delivered_bytes: p.bytes_sent.saturating_sub(p.bytes_lost).min(written),
                rtt_ms: None,
                cwnd_bytes: Some(p.cwnd),
                pacing_rate_bps: None,
                inflight_bytes: None,
                mode: None,
                bw_estimate_bps: p.bw_bps,
                min_rtt_ms: ms(p.min_rtt),
                srtt_ms: ms(Some(p.srtt)),
                packets_sent: p.packets_sent,
                packets_lost: p.packets_lost,
                delivered_ce: 0,
            };
            if let Some(o) = observer.and_then($adapter::Observer::latest) {
                out.delivered_bytes = o.bytes_acked.min(written);
                out.overlay(&o);
            }
            out
        }

        async fn send(o: &SendOpts) -> Result<SendReport, String> {
            let cert = CertificateDer::from_pem_slice(o.cert_pem.as_bytes())
                .map_err(|e| format!("the receiver's certificate: {e}"))?;
            let mut roots = $q::rustls::RootCertStore::empty();
            roots
                .add(cert)
                .map_err(|e| format!("the receiver's certificate: {e}"))?;
            let mut observer: Option<$adapter::Observer> = None;
            let factory: Factory = match &o.cc {
                Cc::Own(name) => own_factory(name)?,
                Cc::Bbrlab(cfg) => {
                    let f = $adapter::ControllerFactory::new(**cfg);
                    observer = Some(f.observer());
                    Arc::new(f)
                }
            };
            let mut cc = $q::ClientConfig::with_root_certificates(Arc::new(roots))
                .map_err(|e| format!("TLS client configuration: {e}"))?;
            cc.transport_config(transport(o.timeout, Some(factory)));
            let bind: SocketAddr = if o.to.is_ipv4() {
                "0.0.0.0:0".parse().expect("literal")
            } else {
                "[::]:0".parse().expect("literal")
            };
            let ep = endpoint(bind, None)?;
            let connecting = ep
                .connect_with(cc, o.to, "localhost")
                .map_err(|e| format!("connect to {}: {e}", o.to))?;
            let conn = tokio::time::timeout(o.timeout, connecting)
                .await
                .map_err(|_| {
                    format!(
                        "no handshake with {} within {} s",
                        o.to,
                        o.timeout.as_secs_f64()
                    )
                })?
                .map_err(|e| format!("handshake with {}: {}", o.to, conn_error(&e, o.timeout)))?;
            let t0 = Instant::now();
            let mut tx = conn
                .open_uni()
                .await
                .map_err(|e| conn_error(&e, o.timeout))?;

            // The sampler: one sample per interval on this runtime's thread.
            let done = Arc::new(AtomicBool::new(false));
            let written = Arc::new(std::sync::atomic::AtomicU64::new(0));
            let series = Series::create(o.log.as_deref())?;
            let sampler = {
                let (conn, written, observer) = (conn.clone(), written.clone(), observer.clone());
                // The own controllers' delivered bytes are sent less lost,
                // which a loss can lower: rows never go back.
                let mut delivered = 0u64;
                spawn_sampler(series, o.interval, t0, done.clone(), move |t| {
                    let mut s =
                        sample(&conn, observer.as_ref(), written.load(Ordering::Relaxed), t);
                    s.delivered_bytes = s.delivered_bytes.max(delivered);
                    delivered = s.delivered_bytes;
                    s
                })
            };

            let stall = |what: &str| {
                format!(
                    "{what} made no progress for {} s (the peer stopped responding?)",
                    o.timeout.as_secs_f64()
                )
            };
            let mut buf = vec![0u8; WRITE];
            let mut sent = 0u64;
            // With --duration the sender stops at this instant: it stops
            // writing (a write waiting for flow-control credit gives up)
            // and does not wait for what is buffered to be acknowledged.
            let deadline = match o.amount {
                Amount::Duration(d) => Some(t0 + d),
                Amount::Bytes(_) => None,
            };
            loop {
                let n = next_write(o.amount, sent, t0, WRITE);
                if n == 0 {
                    break;
                }
                pattern::fill(sent, &mut buf[..n]);
                match tokio::time::timeout(write_wait(deadline, o.timeout), tx.write_all(&buf[..n]))
                    .await
                {
                    Ok(r) => r.map_err(|e| write_error(e, o.timeout))?,
                    Err(_) if deadline.is_some_and(|d| Instant::now() >= d) => break,
                    Err(_) => return Err(stall("sending")),
                }
                sent += n as u64;
                written.store(sent, Ordering::Relaxed);
            }
            if deadline.is_some() {
                let seconds = t0.elapsed().as_secs_f64();
                done.store(true, Ordering::Relaxed);
                let mut series = sampler
                    .await
                    .map_err(|e| format!("the sampler failed: {e}"))??;
                // The last row: what the peer acknowledged by the deadline
                // (bbrlab's controllers count it exactly; the stack's own
                // are read as sent less lost, in flight included).
                let last = sample(&conn, observer.as_ref(), sent, seconds);
                let acked = last.delivered_bytes;
                series.record(&last)?;
                let srtt_median_ms = series.finish()?;
                let p = path_now(&conn);
                // RESET_STREAM is retransmitted until acknowledged, where a
                // lone CONNECTION_CLOSE can be lost in a flooded receive
                // buffer (seen on loopback): the receiver closes the
                // connection when the reset arrives, and the sender waits
                // a bounded time for that before closing anyway.
                let _ = tx.reset($q::VarInt::from_u32(DEADLINE_CODE));
                let _ = tokio::time::timeout(DEADLINE_CLOSE_WAIT, conn.closed()).await;
                conn.close($q::VarInt::from_u32(DEADLINE_CODE), b"deadline");
                let _ = tokio::time::timeout(Duration::from_secs(2), ep.wait_idle()).await;
                return Ok(SendReport {
                    bytes: acked,
                    seconds,
                    packets_sent: p.packets_sent,
                    packets_lost: p.packets_lost,
                    srtt_median_ms,
                    stopped_at_deadline: true,
                });
            }
            tx.finish()
                .map_err(|e| format!("finishing the stream: {e}"))?;
            // Resolves once the peer has acknowledged every byte and the end.
            tokio::time::timeout(o.timeout, tx.stopped())
                .await
                .map_err(|_| stall("waiting for the acknowledgement of the last bytes"))?
                .map_err(|e| stopped_error(e, o.timeout))?;
            let seconds = t0.elapsed().as_secs_f64();
            done.store(true, Ordering::Relaxed);
            let mut series = sampler
                .await
                .map_err(|e| format!("the sampler failed: {e}"))??;
            // The last row: everything written is acknowledged now.
            let mut last = sample(&conn, observer.as_ref(), sent, seconds);
            last.delivered_bytes = sent;
            series.record(&last)?;
            let srtt_median_ms = series.finish()?;
            let p = path_now(&conn);
            conn.close($q::VarInt::from_u32(0), b"done");
            let _ = tokio::time::timeout(Duration::from_secs(2), ep.wait_idle()).await;
            Ok(SendReport {
                bytes: sent,
                seconds,
                packets_sent: p.packets_sent,
                packets_lost: p.packets_lost,
                srtt_median_ms,
                stopped_at_deadline: false,
            })
        }
    };
}

pub(crate) use quinn_family;
