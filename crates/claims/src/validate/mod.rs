//! What `bbrlab validate` holds the simulator to and how it reports it,
//! apart from the real runs (which are `testbed`'s): the single-flow
//! matrix and the scenario each path and algorithm runs as, the bounds
//! as tolerances with their reasons and the verdicts against them, the
//! Markdown tables of a `validate.json` (single-flow, competing-flow, and
//! the two receivers side by side). Pure, so a study, a test or Python
//! can use them without the emulator.

mod bounds;
mod host_noise_text;
mod kernel_receiver;
mod markdown;
mod matrix;
pub mod multiflow_judge;
pub mod multiflow_markdown;
mod packet_size;
pub mod receivers;
pub mod sim_timestamps;

pub use bounds::*;
pub use kernel_receiver::{linux_rcv_autotuning, rcv_autotuning_for};
pub use markdown::*;
pub use matrix::*;
pub use packet_size::{PacketSize, KERNEL_DEFAULT};

use crate::tolerance::{Range, Rule, Tolerance};
use scenario::builder::{millis, Direction, Flow, Jitter, Queue, ScenarioBuilder};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// bbrlab's BPF BBRv3 (crate `kernel-cc`): validated against the
/// simulator's `bbr3` with `profile = "linux-v3"` and `signals =
/// "stock-kernel"` (the same substitutes for the signals a stock kernel
/// lacks), not against a kernel `bbr3`, which stock Linux does not have.
pub const BBR3_KERNEL: &str = congestion::kernel_names::BPF_BBR3;

/// A tolerance as validate.json states it: the rule, with what it bounds
/// in words, and the reason (single-flow and competing-flow bounds alike).
pub fn tolerance_json(t: &Tolerance, what: &str) -> Value {
    json!({ "rule": format!("{what} {}", Rule::from(t)), "reason": t.reason })
}
