//! One module per published claim (C1–C14, the book's Claims chapter): how the claim is
//! measured from its runs, and the tolerance of each check with the
//! reason for it, written once as a [`Tolerance`](crate::tolerance::Tolerance)
//! that both judges the value and states the rule in the report.
//!
//! Where a published figure came from a real network, the checks are about
//! the shape (who wins, by roughly how much, where the curve bends), as
//! the claims ask for. A claim the model does not reproduce keeps its checks,
//! and its metadata carries an analysis of why.
//!
//! What the report says about a claim that is not computed (title, source,
//! the published text and values, remarks, analysis) is data, in
//! `scenarios/claims/meta/`, beside the claim's scenario.

use crate::findings::Eval;
use crate::meta::Meta;
use crate::runs::RunData;
use std::path::Path;

pub mod c01_random_loss;
pub mod c02_10g_loss;
pub mod c03_bufferbloat;
pub mod c04_bandwidth_step;
pub mod c05_startup;
pub mod c06_five_flows;
pub mod c07_buffer_sweep;
pub mod c08_probe_rtt;
pub mod c09_policer;
pub mod c10_bbr_vs_cubic;
pub mod c11_jitter;
pub mod c12_jitter_sweep;
pub mod c13_square_wave;
pub mod c14_ack_aggregation;
mod jitter;

/// Measures and judges a claim's runs (in run order), writing its figures
/// into the directory; the metadata gives the published values the
/// figures draw.
pub type Evaluator = fn(&[RunData], &Path, &Meta) -> Result<Eval, String>;

/// A claim's (or a suite result's) files and its evaluation.
pub(crate) struct Source {
    /// The stem of its scenario `scenarios/<suite>/<file>.toml` and of its
    /// metadata `scenarios/<suite>/meta/<file>.toml` (`claims` or `bbr3`).
    pub file: &'static str,
    /// The scenario's text.
    pub scenario: &'static str,
    /// The metadata's text.
    pub meta: &'static str,
    /// Its evaluation.
    pub evaluate: Evaluator,
}

/// A claim's (or a suite result's) files, compiled in so the binary works
/// from any directory: `source!(module, "dir", "stem")` reads
/// `scenarios/<dir>/<stem>.toml` and `scenarios/<dir>/meta/<stem>.toml`.
macro_rules! source {
    ($module:ident, $dir:literal, $file:literal) => {
        $crate::claim::Source {
            file: $file,
            scenario: include_str!(concat!("../../../../scenarios/", $dir, "/", $file, ".toml")),
            meta: include_str!(concat!(
                "../../../../scenarios/",
                $dir,
                "/meta/",
                $file,
                ".toml"
            )),
            evaluate: $module::evaluate,
        }
    };
}
pub(crate) use source;

/// A claim's files and its evaluation.
macro_rules! claim {
    ($module:ident, $file:literal) => {
        source!($module, "claims", $file)
    };
}

/// Every claim, in order.
pub(crate) const SOURCES: [Source; 14] = [
    claim!(c01_random_loss, "c01-random-loss"),
    claim!(c02_10g_loss, "c02-10g-loss"),
    claim!(c03_bufferbloat, "c03-bufferbloat"),
    claim!(c04_bandwidth_step, "c04-bandwidth-step"),
    claim!(c05_startup, "c05-startup"),
    claim!(c06_five_flows, "c06-five-flows"),
    claim!(c07_buffer_sweep, "c07-buffer-sweep"),
    claim!(c08_probe_rtt, "c08-probe-rtt"),
    claim!(c09_policer, "c09-policer"),
    claim!(c10_bbr_vs_cubic, "c10-bbr-vs-cubic"),
    claim!(c11_jitter, "c11-jitter"),
    claim!(c12_jitter_sweep, "c12-jitter-sweep"),
    claim!(c13_square_wave, "c13-square-wave"),
    claim!(c14_ack_aggregation, "c14-ack-aggregation"),
];
