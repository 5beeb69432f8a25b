//! What bbrlab's QUIC-stack adapters share: how each connection's
//! controller is made ([`Recipe`]), and, for a stack that reports one ACK
//! frame as several callbacks, the frame assembled into one
//! [`congestion::AckEvent`] ([`FrameAssembler`]).
//!
//! The adapters differ in what their stacks tell them (packet numbers or
//! not, losses per packet or in bytes, one ACK call or one per packet), so
//! each keeps its own record of packets in flight; what is the same for
//! all of them is here, once.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod frame;
mod recipe;

pub use frame::{Delivered, FrameAssembler};
pub use recipe::{MakeAlgorithm, Recipe};
