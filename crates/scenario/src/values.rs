//! Values written with units in scenario files: durations ("40ms"),
//! rates ("10Mbit") and sizes ("64KB"), each checked as it is read.

use super::*;
use link::units;

/// A duration written with a unit ("40ms").
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(try_from = "String")]
pub struct Dur(pub u64);

impl TryFrom<String> for Dur {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        units::parse_duration_ns(&s)
            .map(Dur)
            .map_err(|e| e.to_string())
    }
}

/// A rate written with a unit ("10mbit").
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(try_from = "String")]
pub struct Rate(pub f64);

impl TryFrom<String> for Rate {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        units::parse_rate_bps(&s)
            .map(Rate)
            .map_err(|e| e.to_string())
    }
}

/// A byte count written with a unit ("10MB").
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(try_from = "String")]
pub struct Bytes(pub u64);

impl TryFrom<String> for Bytes {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        match units::parse_size(&s).map_err(|e| e.to_string())? {
            units::Size::Bytes(b) if b > 0 => Ok(Bytes(b)),
            units::Size::Bytes(_) => Err(format!(
                "`{s}` is zero bytes; expected a positive size like `10MB`"
            )),
            units::Size::Packets(_) => Err(format!(
                "`{s}` is a packet count; expected bytes, like `10MB` or `1500B`"
            )),
        }
    }
}
