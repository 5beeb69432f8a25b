//! The published claims bbrlab reproduces (C1–C14, listed in
//! `CLAIMS.md`): each claim's scenario, its evaluation against the
//! published result with a stated tolerance, the figures, and the HTML
//! report that shows them side by side.
//!
//! [`reproduce::run`] is the whole job behind `bbrlab reproduce` and
//! Python's `bbrlab.reproduce()`; [`linux_tcp`] holds the data of the one
//! claim pair also measured on real Linux TCP (seed 001's jitter sweep),
//! shown in the report beside the simulator's result.
//!
//! ```
//! use std::path::Path;
//! // Fourteen claims, each with a scenario that parses into runs.
//! assert_eq!(claims::evaluate::all().len(), 14);
//! for def in claims::evaluate::all() {
//!     let file = format!("scenarios/claims/{}.toml", def.file);
//!     let sc = scenario::parse(def.toml, &file, Path::new("."), Path::new(&file)).unwrap();
//!     assert!(!sc.runs.is_empty(), "{}", def.id);
//! }
//! ```

pub mod evaluate;
pub mod linux_tcp;
pub mod meta;
pub mod reproduce;
pub mod tolerance;
