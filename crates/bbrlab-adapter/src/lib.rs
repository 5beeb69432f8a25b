//! What bbrlab's QUIC-stack adapters share: how each connection's
//! controller is made ([`Recipe`]), and, for a stack that reports one ACK
//! frame as several callbacks, the frame assembled into one
//! [`congestion::AckEvent`] ([`FrameAssembler`]).
//!
//! The adapters differ in what their stacks tell them (packet numbers or
//! not, losses per packet or in bytes, one ACK call or one per packet), so
//! each keeps its own record of packets in flight; what is the same for
//! all of them is here, once.
//!
//! An adapter for a stack that reports an ACK frame packet by packet, its
//! end, then its losses (as quinn and noq do) builds each connection's
//! controller from a [`Recipe`] and feeds a [`FrameAssembler`]; the frame
//! reaches the controller as one ACK event at the stack's next call of
//! another kind:
//!
//! ```
//! use bbrlab_adapter::{Delivered, FrameAssembler, Recipe};
//! use congestion::{AckedPacket, Algorithm, Config, LostPacket};
//! use std::time::{Duration, Instant};
//!
//! let recipe = Recipe::try_new(Config::for_quic(Algorithm::Cubic, 1200))?;
//! let epoch = Instant::now(); // the stack's clock when the connection began
//! let (mut cc, _seed) = recipe.build(1200, congestion::Instant::ZERO);
//! let mut frame = FrameAssembler::new(epoch);
//!
//! // Three packets sent; keep each one's state with it.
//! let states: Vec<_> = (0..3u64)
//!     .map(|i| cc.on_packet_sent(frame.at(epoch), 1200, i * 1200, false))
//!     .collect();
//!
//! // An ACK frame: two packets acknowledged, the frame's end (1,200 bytes
//! // still in flight), then its loss.
//! let now = epoch + Duration::from_millis(40);
//! frame.open_frame();
//! for &state in &states[..2] {
//!     frame.acked(epoch, AckedPacket { bytes: 1200, state });
//! }
//! frame.close_frame(now, 1200, false);
//! frame.lost(LostPacket { bytes: 1200, state: states[2] }, true);
//!
//! // The stack's next call (a send, a window query): the frame is complete.
//! let delivered = frame.deliver(&mut cc, 0);
//! assert_eq!(delivered, Delivered::Frame { newest_acked_sent: Some(epoch) });
//! assert_eq!(cc.recovery_episodes(), 1); // the loss came with its ACK
//! assert_eq!(frame.latest_rtt(), Some(Duration::from_millis(40)));
//! # Ok::<(), congestion::ConfigError>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod frame;
mod recipe;

pub use frame::{Delivered, FrameAssembler};
pub use recipe::{MakeAlgorithm, Recipe};
