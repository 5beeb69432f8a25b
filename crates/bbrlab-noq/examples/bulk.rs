//! A bulk transfer over loopback with one of bbrlab's controllers inside
//! noq: a server and a client in this one process, a real TLS handshake on
//! a self-signed certificate, every byte checked on arrival.
//!
//! ```sh
//! cargo run --release -p bbrlab-noq --example bulk-noq -- --cc bbr --bytes 200000000
//! ```

use bbrlab_noq::ControllerFactory;
use clap::Parser;
use congestion::{Algorithm, Bbr3Profile, Config};
use noq::{ClientConfig, Endpoint, ServerConfig, TransportConfig, VarInt};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::error::Error;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(about = "Bulk transfer over loopback through bbrlab's controller in noq")]
struct Args {
    /// The sender's congestion controller: bbr, bbr-jitter, bbr3, cubic, reno.
    #[arg(long, default_value = "bbr")]
    cc: Algorithm,
    /// bbr3's profile: draft or linux-v3.
    #[arg(long, default_value = "draft")]
    bbr3_profile: Bbr3Profile,
    /// Bytes to send (1 to 64 GiB).
    #[arg(long, default_value_t = 100_000_000,
          value_parser = clap::value_parser!(u64).range(1..=1 << 36))]
    bytes: u64,
}

/// Flow-control windows large enough that neither end waits on them.
const WINDOW: u32 = 64 << 20;

/// The byte at `offset` of the stream: the receiver recomputes it, so a
/// lost, duplicated or shifted byte shows.
fn pattern(offset: u64) -> u8 {
    (offset.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8
}

fn transport(factory: Option<ControllerFactory>) -> Arc<TransportConfig> {
    let mut t = TransportConfig::default();
    t.stream_receive_window(VarInt::from_u32(WINDOW))
        .receive_window(VarInt::from_u32(WINDOW))
        .send_window(u64::from(WINDOW))
        .max_idle_timeout(Some(VarInt::from_u32(10_000).into()));
    if let Some(f) = factory {
        t.congestion_controller_factory(Arc::new(f));
    }
    Arc::new(t)
}

/// Reads the stream, checking every byte; returns how many arrived.
async fn receive(server: Endpoint) -> Result<u64, String> {
    let incoming = server.accept().await.ok_or("server endpoint closed")?;
    let conn = incoming
        .await
        .map_err(|e| format!("server handshake: {e}"))?;
    let mut rx = conn
        .accept_uni()
        .await
        .map_err(|e| format!("accept: {e}"))?;
    let mut offset = 0u64;
    while let Some(chunk) = rx
        .read_chunk(usize::MAX)
        .await
        .map_err(|e| format!("read: {e}"))?
    {
        for &b in chunk.iter() {
            if b != pattern(offset) {
                return Err(format!("byte {offset} corrupted"));
            }
            offset += 1;
        }
    }
    Ok(offset)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn Error>> {
    let args = Args::parse();
    let mut config = Config::new(args.cc);
    // The whole profile, not only its label: each sets its own constants.
    config.bbr3 = congestion::Bbr3Config::for_profile(args.bbr3_profile);
    let factory = ControllerFactory::new(config);
    let observer = factory.observer();

    let ck = rcgen::generate_simple_self_signed(vec!["localhost".into()])?;
    let cert: CertificateDer<'static> = ck.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ck.key_pair.serialize_der()));
    let mut server_config = ServerConfig::with_single_cert(vec![cert.clone()], key)?;
    server_config.transport_config(transport(None));
    let server = Endpoint::server(server_config, "127.0.0.1:0".parse()?)?;
    let addr = server.local_addr()?;
    let receiver = tokio::spawn(receive(server));

    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert)?;
    let mut client_config = ClientConfig::with_root_certificates(Arc::new(roots))?;
    client_config.transport_config(transport(Some(factory)));
    let client = Endpoint::client("127.0.0.1:0".parse()?)?;
    let conn = client
        .connect_with(client_config, addr, "localhost")?
        .await?;

    let t0 = Instant::now();
    let mut tx = conn.open_uni().await?;
    let mut buf = vec![0u8; 64 << 10];
    let mut sent = 0u64;
    while sent < args.bytes {
        let n = (args.bytes - sent).min(buf.len() as u64) as usize;
        for (i, b) in buf[..n].iter_mut().enumerate() {
            *b = pattern(sent + i as u64);
        }
        tx.write_all(&buf[..n]).await?;
        sent += n as u64;
    }
    tx.finish()?;
    // Resolves once the server has acknowledged every byte.
    tokio::time::timeout(Duration::from_secs(60), tx.stopped()).await??;
    let secs = t0.elapsed().as_secs_f64();
    let received = receiver.await??;
    if received != args.bytes {
        return Err(format!("sent {} bytes, received {received}", args.bytes).into());
    }
    let stats = conn.stats();
    conn.close(VarInt::from_u32(0), b"done");
    client.wait_idle().await;

    println!(
        "noq {}: {} bytes intact in {secs:.3} s, goodput {:.1} Mbit/s, {} lost packets",
        args.cc,
        received,
        received as f64 * 8.0 / secs / 1e6,
        stats.lost_packets,
    );
    if let Some(o) = observer.latest() {
        println!(
            "controller: {:?}, cwnd {} B, pacing {:.1} Mbit/s, bw estimate {:.1} Mbit/s, srtt {:?}",
            o.snapshot.mode,
            o.snapshot.cwnd_bytes,
            o.snapshot.pacing_rate_bytes_per_sec as f64 * 8.0 / 1e6,
            o.snapshot.bw_estimate_bytes_per_sec.unwrap_or(0.0) * 8.0 / 1e6,
            o.srtt.unwrap_or_default(),
        );
    }
    Ok(())
}
