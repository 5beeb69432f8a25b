//! The published claims bbrlab reproduces (C1–C14, listed in
//! the book's Claims chapter): each claim's scenario, its evaluation against the
//! published result with a stated tolerance, the figures, and the HTML
//! report that shows them side by side.
//!
//! [`reproduce::run`] is the whole job behind `bbrlab reproduce` and
//! Python's `bbrlab.reproduce()`; [`jitter_sweep`] holds the data of the
//! one claim pair also measured on real stacks (seed 001's jitter sweep on
//! Linux TCP, [`linux_tcp`], and on s2n-quic), shown in the report beside
//! the simulator's result.
//!
//! # How a claim is put together
//!
//! A claim is read by two kinds of people: those who check the numbers
//! and those who change the model. So its parts live where each looks:
//!
//! - **The scenario**, `scenarios/claims/<file>.toml`, is what runs.
//! - **What the report says about it**, `scenarios/claims/meta/<file>.toml`:
//!   title, source, the published text and values, remarks, and the
//!   analysis shown when it is not reproduced. Prose and published numbers
//!   change without a code change ([`meta`]).
//! - **How it is judged**, one module per claim in [`claim`]: what is
//!   measured from the runs, and each check's [`tolerance::Tolerance`].
//!   A tolerance is written once, with the reason for it, and it both
//!   judges the value and states the rule in the report, so the two
//!   cannot disagree ("≥ 0.85" in code beside "≥ 0.9" in the sentence).
//!
//! The BBRv3 results (V1 …, issue 22) are a suite of their own, built
//! the same way: scenarios and metadata in `scenarios/bbr3/`, one module
//! per result in [`bbr3`], judged by the same tolerances and drawn by the
//! same figure helpers; `reproduce` runs them after the claims, in the same
//! job list and report ([`evaluate::bbr3`]).
//!
//! The modules beside them hold what the claims share: [`runs`] (reading
//! a run's summary and time series), the statistics over seeds, and the
//! figure helpers.
//!
//! ```
//! use std::path::Path;
//! // Fourteen claims, each with a scenario that parses into runs.
//! assert_eq!(claims::evaluate::all().len(), 14);
//! for def in claims::evaluate::all() {
//!     let file = format!("scenarios/claims/{}.toml", def.file);
//!     let sc = scenario::parse(def.toml, &file, Path::new("."), Path::new(&file)).unwrap();
//!     assert!(!sc.runs.is_empty(), "{}", def.meta.id);
//! }
//!
//! // A tolerance judges a value and says what it accepts, and why.
//! use claims::tolerance::{Range, Tolerance};
//! let fill = Tolerance::new(Range::at_least(0.95).percent(), "PROBE_RTT costs 2 %");
//! let rule = fill.times(10.0, "the 10 Mbit/s link");
//! assert!(rule.check(9.8) && !rule.check(9.4));
//! assert_eq!(
//!     rule.sentence("BBR's goodput", "9.80"),
//!     "BBR's goodput ≥ 95 % of the 10 Mbit/s link (PROBE_RTT costs 2 %): 9.80"
//! );
//! ```

pub mod bbr3;
pub mod bbr3_signals;
pub mod claim;
pub mod conformance;
pub mod evaluate;
mod figure;
mod findings;
pub mod fuzz;
mod html;
pub mod jitter_sweep;
pub mod linux_tcp;
pub mod meta;
pub mod reproduce;
pub mod runs;
pub mod sampled;
pub mod search;
pub mod seconds;
mod seeds;
pub mod stacks;
mod stats;
pub mod tolerance;
pub mod validate;
