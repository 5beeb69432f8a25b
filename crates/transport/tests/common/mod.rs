#![allow(dead_code)] // each test binary uses a part of it

//! What the loopback transfer tests share: a receiver on its own thread
//! and a sender configuration for a pattern of a given length.

use std::net::SocketAddr;
use std::time::Duration;
use transport::data::Source;
use transport::receiver::{recv, RecvConfig, RecvSummary};
use transport::sender::SendConfig;

/// Runs `send` against a receiver listening on 127.0.0.1:`port` (started
/// first, on its own thread), and returns what `send` returned with the
/// receiver's summary.
pub fn with_receiver<T: Send>(
    port: u16,
    send: impl FnOnce(SocketAddr) -> T,
) -> (T, Result<RecvSummary, String>) {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    std::thread::scope(|s| {
        let r = s.spawn(move || {
            recv(RecvConfig {
                listen: addr,
                output: None,
                window_chunks: 8192,
                idle_timeout: Duration::from_secs(5),
                accept_timeout: Duration::from_secs(10),
                stop: None,
            })
        });
        std::thread::sleep(Duration::from_millis(100));
        let sent = send(addr);
        (sent, r.join().expect("receiver thread"))
    })
}

/// A sender of `bytes` of the pattern seeded `seed` to `peer` with `cc`,
/// no log or progress, 5 s idle timeout.
pub fn pattern_config(
    peer: SocketAddr,
    cc: congestion::Config,
    seed: u64,
    bytes: u64,
) -> SendConfig {
    SendConfig {
        peer,
        cc,
        source: Source::Pattern {
            seed,
            total: Some(bytes),
        },
        duration: None,
        idle_timeout: Duration::from_secs(5),
        log: None,
        interval: Duration::from_millis(100),
        progress: false,
        gso: false,
        ecn: false,
    }
}
