//! End to end: a transfer over loopback between two noq endpoints in this
//! process, the sender running bbrlab's controller through the adapter.
//! Judged on bytes and on what the controller saw, never on speed.

use bbrlab_noq::ControllerFactory;
use congestion::{Algorithm, Config, Mode};
use noq::{ClientConfig, Endpoint, ServerConfig, TransportConfig, VarInt};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::sync::Arc;
use std::time::Duration;

const BYTES: u64 = 8 << 20;

fn pattern(offset: u64) -> u8 {
    (offset.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8
}

fn transport(factory: Option<ControllerFactory>) -> Arc<TransportConfig> {
    let mut t = TransportConfig::default();
    t.max_idle_timeout(Some(VarInt::from_u32(30_000).into()));
    if let Some(f) = factory {
        t.congestion_controller_factory(Arc::new(f));
    }
    Arc::new(t)
}

async fn receive(server: Endpoint) -> Result<u64, String> {
    let incoming = server.accept().await.ok_or("server endpoint closed")?;
    let conn = incoming.await.map_err(|e| format!("handshake: {e}"))?;
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

/// Sends [`BYTES`] and returns what the server received intact.
async fn transfer(factory: ControllerFactory) -> Result<u64, String> {
    let ck =
        rcgen::generate_simple_self_signed(vec!["localhost".into()]).map_err(|e| e.to_string())?;
    let cert: CertificateDer<'static> = ck.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ck.key_pair.serialize_der()));
    let mut sc =
        ServerConfig::with_single_cert(vec![cert.clone()], key).map_err(|e| e.to_string())?;
    sc.transport_config(transport(None));
    let server = Endpoint::server(sc, "127.0.0.1:0".parse().unwrap()).map_err(|e| e.to_string())?;
    let addr = server.local_addr().map_err(|e| e.to_string())?;
    let receiver = tokio::spawn(receive(server));

    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert).map_err(|e| e.to_string())?;
    let mut cc =
        ClientConfig::with_root_certificates(Arc::new(roots)).map_err(|e| e.to_string())?;
    cc.transport_config(transport(Some(factory)));
    let client = Endpoint::client("127.0.0.1:0".parse().unwrap()).map_err(|e| e.to_string())?;
    let conn = client
        .connect_with(cc, addr, "localhost")
        .map_err(|e| e.to_string())?
        .await
        .map_err(|e| format!("client handshake: {e}"))?;
    let mut tx = conn.open_uni().await.map_err(|e| e.to_string())?;
    let data: Vec<u8> = (0..BYTES).map(pattern).collect();
    tx.write_all(&data)
        .await
        .map_err(|e| format!("write: {e}"))?;
    tx.finish().map_err(|e| e.to_string())?;
    tx.stopped().await.map_err(|e| format!("stopped: {e}"))?;
    let received = receiver.await.map_err(|e| e.to_string())??;
    conn.close(VarInt::from_u32(0), b"done");
    client.wait_idle().await;
    Ok(received)
}

async fn run(algorithm: Algorithm) {
    let factory = ControllerFactory::new(Config::new(algorithm));
    let observer = factory.observer();
    // Generous: a loaded 2-core CI machine; the test judges bytes, not time.
    let received = tokio::time::timeout(Duration::from_secs(120), transfer(factory))
        .await
        .unwrap_or_else(|_| panic!("{algorithm}: no completion in 120 s"))
        .unwrap_or_else(|e| panic!("{algorithm}: {e}"));
    assert_eq!(received, BYTES, "{algorithm}: every byte intact");
    let o = observer.latest().expect("the controller processed ACKs");
    // Every stream byte rode in an acknowledged packet the controller saw.
    assert!(
        o.bytes_acked >= BYTES,
        "{algorithm}: {} bytes acked",
        o.bytes_acked
    );
    assert!(
        o.packets_sent >= BYTES / 1500,
        "{algorithm}: {} packets",
        o.packets_sent
    );
    // The ACKs moved the window off its initial ten 1200-byte datagrams.
    assert_ne!(o.snapshot.cwnd_bytes, 10 * 1200, "{algorithm}: cwnd");
    if algorithm == Algorithm::Bbr {
        let bw = o.snapshot.bw_estimate_bytes_per_sec.unwrap_or(0.0);
        assert!(
            bw > 0.0,
            "{algorithm}: a bandwidth estimate from rate samples"
        );
        assert_ne!(o.snapshot.mode, Mode::Startup, "{algorithm}: left Startup");
    }
    assert!(o.srtt.is_some() && o.latest_rtt.is_some());
    assert_eq!(o.snapshot.algorithm, Some(algorithm));
}

#[tokio::test]
async fn bbr_moves_every_byte_through_the_adapter() {
    run(Algorithm::Bbr).await;
}

#[tokio::test]
async fn cubic_moves_every_byte_through_the_adapter() {
    run(Algorithm::Cubic).await;
}
