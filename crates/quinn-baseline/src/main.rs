//! `quinn-bulk`: one bulk transfer over QUIC with the `quinn` crate, the
//! baseline that `bbrlab bench --transport` measures in the same run as
//! bbrlab's own UDP transport.
//!
//! Why a separate program: the comparison is of two whole processes per
//! transfer (sender and receiver), each single-threaded, so the CPU time
//! the benchmark reads from `wait4` is what each stack costs per byte. And
//! quinn, rustls and tokio stay out of the shipped `bbrlab` binary.
//!
//! ```text
//! quinn-bulk server --listen 127.0.0.1:5410 --cert-out /tmp/x/cert.der
//! quinn-bulk client --to 127.0.0.1:5410 --cert /tmp/x/cert.der --cc bbr --seconds 5
//! ```
//!
//! The server makes a self-signed certificate, writes it where the client
//! reads it (so the client verifies the real handshake, no skipped
//! checks), accepts one connection, reads one unidirectional stream to its
//! end and exits. The client writes for `--seconds`, finishes the stream,
//! waits until the server has acknowledged every byte and prints
//! `{"bytes":..,"seconds":..,"goodput_bps":..}`. Both use a single-thread
//! tokio runtime and give up on their own (idle timeout 10 s, accept
//! timeout 30 s), so a bench never waits on them forever.

use quinn::congestion::{BbrConfig, CubicConfig};
use quinn::{
    ClientConfig, Endpoint, EndpointConfig, ServerConfig, TokioRuntime, TransportConfig, VarInt,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Flow-control windows: the same 64 MiB that `bbrlab bench --transport`
/// gives its own receiver, so neither stack is window-limited on loopback.
const WINDOW: u32 = 64 << 20;

/// Bytes handed to quinn per write.
const WRITE: usize = 64 << 10;

fn usage() -> String {
    "usage: quinn-bulk server --listen ADDR --cert-out PATH\n       \
     quinn-bulk client --to ADDR --cert PATH [--cc bbr|cubic] [--seconds N]"
        .to_string()
}

/// `--name value` pairs after the mode.
fn arg(args: &[String], name: &str) -> Option<String> {
    args.windows(2).find(|w| w[0] == name).map(|w| w[1].clone())
}

fn transport_config(cc: &str) -> Result<TransportConfig, String> {
    let mut t = TransportConfig::default();
    t.stream_receive_window(VarInt::from_u32(WINDOW))
        .receive_window(VarInt::from_u32(WINDOW))
        .send_window(WINDOW as u64)
        .max_idle_timeout(Some(
            VarInt::from_u32(10_000).into(), // ms
        ));
    match cc {
        "bbr" => t.congestion_controller_factory(Arc::new(BbrConfig::default())),
        "cubic" => t.congestion_controller_factory(Arc::new(CubicConfig::default())),
        other => return Err(format!("--cc {other}: bbr or cubic")),
    };
    Ok(t)
}

/// Socket buffers: the 4 MiB bbrlab's transport asks for on both ends, so
/// neither stack loses datagrams to a smaller kernel buffer.
const SOCKET_BUFFER: usize = 4 << 20;

/// An endpoint on a UDP socket bound to `addr` with [`SOCKET_BUFFER`]
/// buffers (must run inside the tokio runtime).
fn endpoint(addr: SocketAddr, server: Option<ServerConfig>) -> Result<Endpoint, String> {
    let sock = std::net::UdpSocket::bind(addr).map_err(|e| format!("bind {addr}: {e}"))?;
    let s2 = socket2::SockRef::from(&sock);
    let _ = s2.set_recv_buffer_size(SOCKET_BUFFER);
    let _ = s2.set_send_buffer_size(SOCKET_BUFFER);
    Endpoint::new(
        EndpointConfig::default(),
        server,
        sock,
        Arc::new(TokioRuntime),
    )
    .map_err(|e| format!("endpoint on {addr}: {e}"))
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio: {e}"))
}

fn server(listen: SocketAddr, cert_out: &Path) -> Result<(), String> {
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".into()])
        .map_err(|e| format!("certificate: {e}"))?;
    let cert: CertificateDer<'static> = ck.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ck.key_pair.serialize_der()));
    let mut cfg = ServerConfig::with_single_cert(vec![cert.clone()], key)
        .map_err(|e| format!("server config: {e}"))?;
    cfg.transport_config(Arc::new(transport_config("cubic")?));
    let rt = runtime()?;
    rt.block_on(async move {
        let ep = endpoint(listen, Some(cfg))?;
        // Written after the socket is bound, and renamed into place, so a
        // client that sees the file can connect.
        let tmp = cert_out.with_extension("tmp");
        std::fs::write(&tmp, cert.as_ref()).map_err(|e| format!("{}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, cert_out).map_err(|e| format!("{}: {e}", cert_out.display()))?;
        let incoming = tokio::time::timeout(Duration::from_secs(30), ep.accept())
            .await
            .map_err(|_| "no client within 30 s".to_string())?
            .ok_or("endpoint closed")?;
        let conn = incoming.await.map_err(|e| format!("handshake: {e}"))?;
        let mut rx = conn
            .accept_uni()
            .await
            .map_err(|e| format!("accept stream: {e}"))?;
        let mut bytes = 0u64;
        while let Some(c) = rx
            .read_chunk(usize::MAX, true)
            .await
            .map_err(|e| format!("read: {e}"))?
        {
            bytes += c.bytes.len() as u64;
        }
        // Let the client's close arrive (bounded by the idle timeout).
        let _ = tokio::time::timeout(Duration::from_secs(5), conn.closed()).await;
        println!("{{\"bytes\":{bytes}}}");
        Ok(())
    })
}

fn client(to: SocketAddr, cert: &Path, cc: &str, seconds: f64) -> Result<(), String> {
    let t_wait = Instant::now();
    let der = loop {
        match std::fs::read(cert) {
            Ok(d) => break d,
            Err(_) if t_wait.elapsed() < Duration::from_secs(10) => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(e) => return Err(format!("{}: {e}", cert.display())),
        }
    };
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from(der))
        .map_err(|e| format!("certificate: {e}"))?;
    let mut cfg =
        ClientConfig::with_root_certificates(Arc::new(roots)).map_err(|e| e.to_string())?;
    cfg.transport_config(Arc::new(transport_config(cc)?));
    let bind: SocketAddr = if to.is_ipv4() {
        "127.0.0.1:0".parse().expect("literal")
    } else {
        "[::1]:0".parse().expect("literal")
    };
    let rt = runtime()?;
    rt.block_on(async move {
        let ep = endpoint(bind, None)?;
        let conn = ep
            .connect_with(cfg, to, "localhost")
            .map_err(|e| format!("connect: {e}"))?
            .await
            .map_err(|e| format!("handshake: {e}"))?;
        let t0 = Instant::now();
        let mut tx = conn.open_uni().await.map_err(|e| format!("stream: {e}"))?;
        let buf = vec![0x5Au8; WRITE];
        let mut bytes = 0u64;
        let stop = Duration::from_secs_f64(seconds);
        while t0.elapsed() < stop {
            tx.write_all(&buf).await.map_err(|e| format!("write: {e}"))?;
            bytes += buf.len() as u64;
        }
        tx.finish().map_err(|e| format!("finish: {e}"))?;
        // Resolves once the server has acknowledged every byte.
        tokio::time::timeout(Duration::from_secs(30), tx.stopped())
            .await
            .map_err(|_| "the server did not acknowledge the stream in 30 s".to_string())?
            .map_err(|e| format!("stream: {e}"))?;
        let secs = t0.elapsed().as_secs_f64();
        let stats = conn.stats();
        conn.close(VarInt::from_u32(0), b"done");
        let _ = tokio::time::timeout(Duration::from_secs(2), ep.wait_idle()).await;
        println!(
            "{{\"cc\":\"{cc}\",\"bytes\":{bytes},\"seconds\":{secs:.6},\"goodput_bps\":{:.0},\
             \"udp_datagrams_sent\":{},\"lost_packets\":{},\"congestion_events\":{},\"rtt_ms\":{:.3},\"mtu\":{}}}",
            bytes as f64 * 8.0 / secs.max(1e-9),
            stats.udp_tx.datagrams,
            stats.path.lost_packets,
            stats.path.congestion_events,
            stats.path.rtt.as_secs_f64() * 1e3,
            stats.path.current_mtu,
        );
        Ok(())
    })
}

fn run(args: &[String]) -> Result<(), String> {
    let addr = |name: &str| -> Result<SocketAddr, String> {
        arg(args, name)
            .ok_or_else(usage)?
            .parse()
            .map_err(|e| format!("{name}: {e}"))
    };
    let path = |name: &str| arg(args, name).map(PathBuf::from).ok_or_else(usage);
    match args.first().map(String::as_str) {
        Some("server") => server(addr("--listen")?, &path("--cert-out")?),
        Some("client") => {
            let cc = arg(args, "--cc").unwrap_or_else(|| "bbr".into());
            let seconds: f64 = arg(args, "--seconds")
                .unwrap_or_else(|| "5".into())
                .parse()
                .map_err(|e| format!("--seconds: {e}"))?;
            if !(seconds > 0.0 && seconds <= 600.0) {
                return Err("--seconds: allowed (0, 600]".into());
            }
            client(addr("--to")?, &path("--cert")?, &cc, seconds)
        }
        _ => Err(usage()),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("quinn-bulk: {e}");
            ExitCode::FAILURE
        }
    }
}
