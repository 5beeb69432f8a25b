//! bbrlab's congestion controllers inside [s2n-quic].
//!
//! [`Endpoint`] is an s2n-quic congestion-controller provider (s2n-quic's
//! `unstable-congestion-controller` feature): every connection gets a
//! [`CongestionController`] that runs a [`congestion::Controller`] with
//! any bbrlab algorithm (`bbr`, `bbr-jitter`, `bbr3` with its profiles,
//! `cubic`, `reno`) or a user's [`congestion::CongestionControl`]. The
//! controller paces: s2n-quic asks it for the earliest departure time of
//! each packet and for the send quantum, so BBR runs at its own pacing
//! rate, as in Linux.
//!
//! The library depends on `s2n-quic-core` only (where the trait lives), so
//! it builds without s2n-quic's TLS stack; the program that runs
//! s2n-quic enables s2n-quic's `unstable-congestion-controller` feature.
//! Both are pinned to one minor version (0.91 / 1.91): the trait is
//! unstable and changes between minor versions.
//!
//! # Use `Endpoint` like this
//!
//! ```no_run
//! # // no_run: it needs a certificate and a network.
//! # async fn run(cert_pem: &str, key_pem: &str) -> Result<(), Box<dyn std::error::Error>> {
//! use bbrlab_s2n::Endpoint;
//! use congestion::{Algorithm, Config};
//!
//! let cc = Endpoint::new(Config::new(Algorithm::Bbr));
//! let observer = cc.observer();
//! let mut server = s2n_quic::Server::builder()
//!     .with_tls((cert_pem, key_pem))?
//!     .with_io("127.0.0.1:4433")?
//!     .with_congestion_controller(cc)?
//!     .start()?;
//! // ... accept connections and send; meanwhile, from a sampler:
//! if let Some(o) = observer.latest() {
//!     println!(
//!         "cwnd {} B, pacing {} B/s, mode {:?}, in flight {} B",
//!         o.snapshot.cwnd_bytes,
//!         o.snapshot.pacing_rate_bytes_per_sec,
//!         o.snapshot.mode,
//!         o.bytes_in_flight,
//!     );
//! }
//! # let _ = server.accept().await;
//! # Ok(())
//! # }
//! ```
//!
//! `examples/bulk.rs` is a complete transfer (server and client over
//! loopback, real TLS handshake, every byte checked):
//! `cargo run --release -p bbrlab-s2n --example bulk-s2n -- --cc bbr`.
//!
//! # The mapping
//!
//! s2n-quic's recovery manager (s2n-quic-transport 0.91,
//! `recovery/manager.rs`, `process_acks()`) handles one ACK frame in this
//! order: it removes the acked packets; calls `on_rtt_update` if the frame
//! gives an RTT sample; runs loss detection, calling `on_packet_lost` for
//! each packet it declares lost (`detect_and_remove_lost_packets()`);
//! calls `on_explicit_congestion` if the frame's ECN-CE count rose
//! (`process_ecn()`); and last calls `on_ack` once, with the bytes of all
//! acked packets and the info of the newest. Its loss timer calls
//! `on_packet_lost` with no ACK after it. The adapter buffers a frame's
//! losses and CE marks and gives [`congestion::Controller`] the whole frame
//! as one [`AckEvent`](congestion::AckEvent) at its `on_ack`, as bbrlab's
//! own transport does:
//!
//! | s2n-quic callback | bbrlab event |
//! |---|---|
//! | `on_packet_sent(t, bytes, app_limited)` | [`Controller::on_packet_sent`](congestion::Controller::on_packet_sent) with the bytes in flight before; the returned `SentPacketState` is the [`PacketInfo`]. `app_limited` `None` (Initial, Handshake) counts as app-limited. Then the pacer's next departure ([`Controller::set_next_departure`](congestion::Controller::set_next_departure)). |
//! | `on_packet_sent` with 0 bytes (ACK-only) | nothing; the last counted packet's [`PacketInfo`] is returned |
//! | `on_rtt_update(now, rtt)` | held: `rtt.latest_rtt()` becomes the RTT sample of the `on_ack` with the same time |
//! | `on_packet_lost(bytes, info, persistent, new_burst, t)` | buffered; bytes leave flight at once; `new_burst` counts lost ranges |
//! | `on_explicit_congestion(ce)` | held: the CE count of the frame's event |
//! | `on_ack(bytes, newest info, t)` | one [`Controller::on_ack`](congestion::Controller::on_ack): bytes in flight before the ACK's losses as its `prior_bytes_in_flight`, the buffered losses and persistent congestion, the held CE marks and RTT sample, and the acked bytes as datagram-sized `AckedPacket`s, each with the newest packet's state |
//! | `persistent_congestion` on a loss | the frame event's `persistent_congestion` (a timer's batch: [`Controller::on_persistent_congestion`](congestion::Controller::on_persistent_congestion) after [`Controller::on_timer_losses`](congestion::Controller::on_timer_losses)) |
//! | `on_packet_discarded(bytes)` | bytes leave flight; no congestion event |
//! | `on_mtu_update(size)` | [`Controller::on_mss_change`](congestion::Controller::on_mss_change) |
//! | `congestion_window()` | [`Controller::cwnd_bytes`](congestion::Controller::cwnd_bytes) |
//! | `bytes_in_flight()` | the adapter's count: sent − acked − lost − discarded |
//! | `is_congestion_limited()` | less than one datagram of room in the window |
//! | `requires_fast_retransmission()` | a loss batch just began a recovery episode, until the next send (RFC 9002 §7.3.2) |
//! | `earliest_departure_time()` | the EDT pacer's next departure once the current burst has no room for another datagram within the send quantum; `None` before |
//! | `send_quantum()` | [`Controller::send_quantum_bytes`](congestion::Controller::send_quantum_bytes), at least one datagram |
//!
//! **Pacing** follows Linux's earliest departure time (`tcp_wstamp_ns`):
//! each packet moves the next departure on by its size at the pacing
//! rate, counted from the previous departure. A sender that wakes late
//! keeps that schedule if it is late by no more than 2 ms (tokio's timer
//! wheel, on which s2n-quic waits for a departure time, rounds a wait up
//! to its next 1 ms tick, and the event loop adds its own delay) or half
//! the packet's time, whichever is larger; later than that, it
//! counts from now less that slack. Linux gives half a packet back
//! (`tcp_update_skb_after_send()`) because its pacing timer is precise;
//! with a millisecond timer and only that, the sender fell short of its
//! pacing rate (a bandwidth estimate at 0.85 of a 20 Mbit/s emulated
//! link; with 1 ms of slack, 0.91 of kernel TCP's goodput at 10 Mbit/s;
//! with 2 ms, within 3 % of it). A pause longer than the slack earns no more catch-up than the
//! slack's worth.
//! Packets leave back to back while the current burst has room for one
//! more datagram within one send quantum; then s2n-quic waits for the
//! departure time. No burst exceeds the quantum, and the average rate
//! exceeds the pacing rate only by the lateness it makes up. Unlike s2n-quic's own BBR pacer, the
//! adapter paces at every RTT, even below 2 ms; on loopback the pacing
//! timer's resolution can then cap the rate.
//!
//! **Time.** [`congestion::Instant`] is nanoseconds since an epoch the
//! caller picks. The adapter picks the connection's first sent packet,
//! which maps to [`EPOCH_OFFSET`] (1 s, because `Instant::ZERO` means
//! "never" to the controllers); every later s2n-quic timestamp maps to
//! that plus the time since the first packet. The controller is created
//! (by s2n-quic, without a time) just before that first packet and is
//! started at the same instant. s2n-quic's timestamps have microsecond
//! resolution; departure times are rounded down to it.
//!
//! # What s2n-quic does not report, and what the adapter does instead
//!
//! - **The end of a loss-timer batch.** Losses from the loss timer come
//!   with no ACK after them. A batch whose time differs from the next
//!   `on_ack`'s is reported on its own before that ACK; otherwise it is
//!   reported before the next send. Until then `congestion_window()`
//!   still shows the window before those losses, so the retransmission
//!   that follows a timer loss goes out under it (RFC 9002 §7.3.2 allows
//!   one such packet). The losses leave flight at once. s2n-quic reads
//!   its clock once per event-loop pass, so losses stamped with an ACK's
//!   time (a timer batch in the same pass, or an earlier frame of the
//!   same datagrams that acked only ACK-only packets) are counted as that
//!   ACK's.
//! - **Per-packet ACK information.** `on_ack` gives the acked bytes in
//!   total and the newest packet's info. That is what a rate sample uses
//!   (Linux `tcp_rate_skb_delivered()` takes the most recently sent acked
//!   packet). The bytes are split into datagram-sized packets for the
//!   count of acked packets (BBRv3's ECN fraction uses it): exact when the
//!   acked packets were full-sized, an undercount of small ones otherwise.
//!   Which of them were app-limited, and each one's send time, are lost;
//!   only the newest packet's matter to the sample and to recovery.
//! - **The peer's ACK delay.** `on_rtt_update` gives s2n-quic's
//!   estimator, not the frame's ACK delay, so the controller's own srtt
//!   includes the delay (as TCP's does); its min_rtt is unaffected
//!   (RFC 9002 §5.2). [`Observed::srtt`] is s2n-quic's (ack-delay
//!   adjusted) srtt.
//! - **A probe timeout (PTO).** s2n-quic's PTO sends probes and declares
//!   nothing lost (RFC 9002 §6.2); the controller sees the probes as
//!   sends. There is no RTO: **persistent congestion** (RFC 9002 §7.6) is
//!   QUIC's collapse of the window to its minimum, the counterpart of
//!   TCP's RTO, so it maps to [`Controller::on_persistent_congestion`]
//!   (which is our timeout, [`Controller::on_retransmission_timeout`]),
//!   once per loss batch that carries it.
//! - **Spurious losses.** s2n-quic never tells that a packet it declared
//!   lost was acked after all (it forgets lost packets), so
//!   [`Controller::on_spurious_loss`] is never called: no undo.
//! - **App-limited between sends.** s2n-quic tells app-limited only at
//!   send time, which is where Linux marks it too; the adapter does not
//!   call [`Controller::on_app_limited`].
//! - **Whether lost data awaits repair.** The adapter calls
//!   [`Controller::on_packet_sent`], which restarts the rate interval
//!   whenever nothing is in flight (`on_packet_sent_when` needs to know
//!   about unrepaired losses too).
//! - **Clones.** s2n-quic clones each connection's controller once, before
//!   its first packet, and uses the clone. [`congestion::Controller`]
//!   cannot be cloned, so a clone is rebuilt from the configuration: exact
//!   before the first packet, a restart of the algorithm after it (see
//!   [`CongestionController`]).
//!
//! [s2n-quic]: https://github.com/aws/s2n-quic
//! [`Controller::on_persistent_congestion`]: congestion::Controller::on_persistent_congestion
//! [`Controller::on_retransmission_timeout`]: congestion::Controller::on_retransmission_timeout
//! [`Controller::on_spurious_loss`]: congestion::Controller::on_spurious_loss
//! [`Controller::on_app_limited`]: congestion::Controller::on_app_limited
//! [`Controller::on_packet_sent`]: congestion::Controller::on_packet_sent

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod controller;
mod endpoint;
mod shared;

/// The controller's state for a time series, shared by every bbrlab
/// adapter (see [`congestion::observe`]). Here each connection's
/// controller is numbered and registered when the endpoint builds it, so
/// the observer shows the newest connection; it publishes after every
/// ACK, loss batch and change of send quantum.
pub use congestion::observe::{Observed, Observer};
/// The `congestion` crate this adapter runs, and the types a user names to
/// configure it, so a program needs no separate dependency on it (and
/// cannot end up with a second, different version).
pub use congestion::{self, Algorithm, Bbr3Config, Config, ConfigError, ConnectionSeeds};
pub use controller::{CongestionController, PacketInfo, EPOCH_OFFSET};
pub use endpoint::Endpoint;
