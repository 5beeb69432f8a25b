//! Whole-run statistics the simulator reports beside each flow's own.
//!
//! The RTT histogram lives in the `sender` crate (every sender keeps one);
//! it is re-exported here so existing paths keep working.

pub use sender::LogHistogram;

/// Jain's fairness index (the `stats` crate's one rule).
pub use stats::jain as jain_index;
