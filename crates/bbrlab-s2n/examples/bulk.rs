//! A bulk transfer over s2n-quic on loopback, the sender running a bbrlab
//! controller through `bbrlab_s2n::Endpoint`.
//!
//! ```text
//! cargo run --release -p bbrlab-s2n --example bulk-s2n -- --cc bbr --bytes 100000000
//! ```
//!
//! Server (receiver) and client (sender) run in one process with a real
//! TLS 1.3 handshake (s2n-quic's default TLS provider). The certificate is
//! self-signed for `localhost` and made at start-up with rcgen: s2n-quic's
//! own test certificates are not part of its public API. The receiver
//! checks every byte against the pattern the sender wrote.

use bbrlab_s2n::{Endpoint, Observed};
use bytes::Bytes;
use clap::Parser;
use congestion::{Algorithm, Bbr3Config, Bbr3Profile, Config};
use s2n_quic::{client::Connect, Client, Server};
use std::error::Error;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

type BoxError = Box<dyn Error + Send + Sync>;

#[derive(Parser, Debug)]
#[command(about = "Bulk transfer over s2n-quic (loopback) with a bbrlab controller")]
struct Args {
    /// Congestion controller of the sender: bbr, bbr-jitter, bbr3, cubic, reno.
    #[arg(long, default_value = "bbr")]
    cc: Algorithm,
    /// BBRv3 profile (only with --cc bbr3): draft, linux-v3.
    #[arg(long)]
    bbr3_profile: Option<Bbr3Profile>,
    /// Bytes to transfer (at least 1).
    #[arg(long, default_value_t = 100_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    bytes: u64,
}

/// What one transfer measured.
#[derive(Debug)]
pub struct Report {
    /// Bytes the receiver got, all checked.
    pub bytes: u64,
    /// From the end of the handshake to the last byte received.
    pub elapsed: Duration,
    /// The sender's controller as its last ACK left it.
    pub observed: Option<Observed>,
}

impl Report {
    /// Goodput in Mbit/s.
    pub fn goodput_mbps(&self) -> f64 {
        self.bytes as f64 * 8.0 / self.elapsed.as_secs_f64().max(1e-9) / 1e6
    }
}

/// Byte `i` of the stream. 251 is prime, so no chunk size lines up with
/// the pattern: a chunk delivered at the wrong offset is caught.
fn pattern(i: u64) -> u8 {
    (i % 251) as u8
}

/// Sends `total` bytes from a client running `cc` to a server on
/// 127.0.0.1 and checks them there.
pub async fn transfer(cc: Endpoint, total: u64) -> Result<Report, BoxError> {
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()])?;
    let (cert_pem, key_pem) = (cert.cert.pem(), cert.key_pair.serialize_pem());

    // A 4 MiB socket receive buffer (the kernel caps it at
    // net.core.rmem_max): at Linux's default of 208 KiB, loopback drops
    // whatever exceeds it, and BBR's window (2 BDP plus its ACK
    // aggregation and quantization allowances) does, so about a fifth of
    // its packets were lost there while CUBIC's smaller window fit.
    let io = s2n_quic::provider::io::tokio::Builder::default()
        .with_receive_address("127.0.0.1:0".parse()?)?
        .with_recv_buffer_size(4 << 20)?
        .build()?;
    let mut server = Server::builder()
        .with_tls((cert_pem.as_str(), key_pem.as_str()))?
        .with_io(io)?
        .start()?;
    let addr: SocketAddr = server.local_addr()?;
    let receiver = tokio::spawn(async move {
        let mut conn = server
            .accept()
            .await
            .ok_or("server closed before a connection")?;
        let mut stream = conn
            .accept_receive_stream()
            .await?
            .ok_or("connection closed before a stream")?;
        let mut offset = 0u64;
        while let Some(chunk) = stream.receive().await? {
            for (i, b) in chunk.iter().enumerate() {
                if *b != pattern(offset + i as u64) {
                    return Err(format!("byte {} corrupted", offset + i as u64).into());
                }
            }
            offset += chunk.len() as u64;
        }
        let end = Instant::now();
        // Keep the connection until the client closes it: dropping it now
        // could close it before the client's `close()` sees its last ACK.
        let _ = conn.accept_receive_stream().await;
        Ok::<(u64, Instant), BoxError>((offset, end))
    });

    let observer = cc.observer();
    let client = Client::builder()
        .with_tls(cert_pem.as_str())?
        .with_io("127.0.0.1:0")?
        .with_congestion_controller(cc)?
        .start()?;
    let mut conn = client
        .connect(Connect::new(addr).with_server_name("localhost"))
        .await?;
    let start = Instant::now();
    let mut stream = conn.open_send_stream().await?;
    // One buffer holds the pattern from every phase; chunks are slices of
    // it, so sending copies nothing.
    const CHUNK: u64 = 64 * 1024;
    let buf = Bytes::from((0..CHUNK + 251).map(pattern).collect::<Vec<u8>>());
    let mut sent = 0u64;
    while sent < total {
        let n = CHUNK.min(total - sent);
        let from = (sent % 251) as usize;
        stream.send(buf.slice(from..from + n as usize)).await?;
        sent += n;
    }
    // Returns once the server has acknowledged every byte.
    stream.close().await?;
    drop(stream);
    conn.close(0u32.into());
    let (received, end) = receiver.await??;
    if received != total {
        return Err(format!("received {received} of {total} bytes").into());
    }
    Ok(Report {
        bytes: received,
        elapsed: end.saturating_duration_since(start),
        observed: observer.latest(),
    })
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = Args::parse();
    let mut config = Config::new(args.cc);
    if let Some(profile) = args.bbr3_profile {
        if args.cc != Algorithm::Bbr3 {
            return Err(
                format!("--bbr3-profile is only for --cc bbr3, not --cc {}", args.cc).into(),
            );
        }
        config.bbr3 = Bbr3Config::for_profile(profile);
    }
    let report = transfer(Endpoint::new(config), args.bytes).await?;
    println!(
        "{}: {} bytes intact in {:.3} s, goodput {:.1} Mbit/s",
        args.cc,
        report.bytes,
        report.elapsed.as_secs_f64(),
        report.goodput_mbps()
    );
    if let Some(o) = report.observed {
        println!(
            "sender: cwnd {} B, pacing {:.1} Mbit/s, mode {}, bw estimate {:.1} Mbit/s, \
             min_rtt {:?}, srtt {:?}, {} packets sent, {} lost, {} rounds",
            o.snapshot.cwnd_bytes,
            o.snapshot.pacing_rate_bytes_per_sec as f64 * 8.0 / 1e6,
            o.snapshot.mode.name(),
            o.snapshot.bw_estimate_bytes_per_sec.unwrap_or(0.0) * 8.0 / 1e6,
            o.snapshot.min_rtt,
            o.srtt,
            o.packets_sent,
            o.packets_lost,
            o.snapshot.round_count,
        );
    }
    Ok(())
}
