//! Human units for rates, durations, sizes and probabilities.
//!
//! Scenario files and command-line flags say `10mbit`, `40ms`, `100pkt`,
//! `1%`. One parser serves both, so the same text means the same thing
//! everywhere, and every error says what was wrong and what is accepted.

use std::fmt;

/// A unit-parsing error: the text, and what would have been accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitError {
    /// The text that was given.
    pub given: String,
    /// What was wrong and what is allowed.
    pub problem: String,
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.given, self.problem)
    }
}

impl std::error::Error for UnitError {}

fn err(given: &str, problem: impl Into<String>) -> UnitError {
    UnitError {
        given: given.to_string(),
        problem: problem.into(),
    }
}

/// Splits "12.5mbit" into (12.5, "mbit").
fn split(s: &str) -> Result<(f64, String), UnitError> {
    let t = s.trim();
    let idx = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(idx);
    if num.is_empty() {
        return Err(err(s, "expected a number followed by a unit"));
    }
    let v: f64 = num
        .parse()
        .map_err(|_| err(s, format!("`{num}` is not a number")))?;
    if !v.is_finite() {
        return Err(err(s, "the number must be finite"));
    }
    Ok((v, unit.trim().to_ascii_lowercase()))
}

const RATE_UNITS: &str = "bit, kbit, mbit, gbit (or bps, kbps, mbps, gbps), e.g. `10mbit`";

/// Parses a rate in bits per second: `10mbit`, `1.5gbit`, `64kbps`.
pub fn parse_rate_bps(s: &str) -> Result<f64, UnitError> {
    let (v, unit) = split(s)?;
    let mult = match unit.as_str() {
        "bit" | "bps" | "b/s" => 1.0,
        "kbit" | "kbps" | "kb/s" => 1e3,
        "mbit" | "mbps" | "mb/s" => 1e6,
        "gbit" | "gbps" | "gb/s" => 1e9,
        "" => return Err(err(s, format!("a rate needs a unit: {RATE_UNITS}"))),
        other => {
            return Err(err(
                s,
                format!("unknown rate unit `{other}`; allowed: {RATE_UNITS}"),
            ))
        }
    };
    if v < 0.0 {
        return Err(err(
            s,
            "the rate is negative; expected a positive rate like `10mbit`",
        ));
    }
    if v == 0.0 {
        return Err(err(
            s,
            "the rate is zero; expected a positive rate like `10mbit`",
        ));
    }
    Ok(v * mult)
}

const TIME_UNITS: &str = "ns, us, ms, s, e.g. `40ms`";

/// Parses a duration in nanoseconds: `40ms`, `1.5s`, `250us`.
pub fn parse_duration_ns(s: &str) -> Result<u64, UnitError> {
    let (v, unit) = split(s)?;
    let mult = match unit.as_str() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" | "sec" => 1e9,
        "" => return Err(err(s, format!("a duration needs a unit: {TIME_UNITS}"))),
        other => {
            return Err(err(
                s,
                format!("unknown time unit `{other}`; allowed: {TIME_UNITS}"),
            ))
        }
    };
    if v < 0.0 {
        return Err(err(s, "the duration is negative"));
    }
    let ns = v * mult;
    if ns > 1e18 {
        return Err(err(s, "the duration is too long (over 30 years)"));
    }
    Ok(ns.round() as u64)
}

/// A queue or transfer size: in packets or in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// A number of packets.
    Packets(u64),
    /// A number of bytes.
    Bytes(u64),
}

const SIZE_UNITS: &str =
    "pkt, B, kB (1000 B), KiB (1024 B), MB, MiB, GB, GiB, e.g. `100pkt` or `150kB`";

/// Parses a size: `100pkt`, `1500B`, `150kB`, `64KiB`, `10MB`; a bare
/// number means packets (so `--queue 100` works).
pub fn parse_size(s: &str) -> Result<Size, UnitError> {
    let (v, unit_lc) = split(s)?;
    if v < 0.0 {
        return Err(err(s, "the size is negative"));
    }
    // Case matters for k/K only in the binary prefixes, which we spell out.
    let unit_raw = s.trim()[s.trim().len() - unit_lc.len()..].to_string();
    let bytes = |m: f64| Ok(Size::Bytes((v * m).round() as u64));
    match unit_lc.as_str() {
        "" | "pkt" | "pkts" | "packets" | "p" => {
            if v.fract() != 0.0 {
                return Err(err(s, "a packet count must be a whole number"));
            }
            Ok(Size::Packets(v as u64))
        }
        "b" if unit_raw == "B" || unit_raw == "b" => bytes(1.0),
        "kb" => bytes(1e3),
        "kib" => bytes(1024.0),
        "mb" => bytes(1e6),
        "mib" => bytes(1024.0 * 1024.0),
        "gb" => bytes(1e9),
        "gib" => bytes(1024.0 * 1024.0 * 1024.0),
        other => Err(err(
            s,
            format!("unknown size unit `{other}`; allowed: {SIZE_UNITS}"),
        )),
    }
}

/// Parses a probability: `0.01` or `1%`.
pub fn parse_probability(s: &str) -> Result<f64, UnitError> {
    let t = s.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), 0.01),
        None => (t, 1.0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| err(s, "expected a probability like `0.01` or `1%`"))?;
    let p = v * scale;
    if !(0.0..=1.0).contains(&p) {
        return Err(err(
            s,
            "outside [0, 1]; expected a probability like `0.01` or `1%`",
        ));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_and_rejects_bad_ones_with_the_allowed_list() {
        assert_eq!(parse_rate_bps("10mbit").unwrap(), 10e6);
        assert_eq!(parse_rate_bps("1.5gbit").unwrap(), 1.5e9);
        assert_eq!(parse_rate_bps(" 64 kbps ").unwrap(), 64e3);
        assert!(parse_rate_bps("-5mbit")
            .unwrap_err()
            .to_string()
            .contains("negative"));
        let e = parse_rate_bps("10parsecs").unwrap_err().to_string();
        assert!(e.contains("parsecs") && e.contains("mbit"), "{e}");
        assert!(parse_rate_bps("10")
            .unwrap_err()
            .to_string()
            .contains("needs a unit"));
        assert_eq!(parse_duration_ns("40ms").unwrap(), 40_000_000);
        assert_eq!(parse_duration_ns("1.5s").unwrap(), 1_500_000_000);
        assert_eq!(parse_duration_ns("250us").unwrap(), 250_000);
        assert!(parse_duration_ns("5 fortnights").is_err());
        assert_eq!(parse_size("100pkt").unwrap(), Size::Packets(100));
        assert_eq!(parse_size("100").unwrap(), Size::Packets(100));
        assert_eq!(parse_size("150kB").unwrap(), Size::Bytes(150_000));
        assert_eq!(parse_size("64KiB").unwrap(), Size::Bytes(65_536));
        assert_eq!(parse_size("1500B").unwrap(), Size::Bytes(1500));
        assert_eq!(parse_size("10MB").unwrap(), Size::Bytes(10_000_000));
        assert!(parse_size("1.5pkt").is_err());
        assert!(parse_size("3 furlongs")
            .unwrap_err()
            .to_string()
            .contains("KiB"));
        assert_eq!(parse_probability("1%").unwrap(), 0.01);
        assert_eq!(parse_probability("0.2").unwrap(), 0.2);
        assert!(parse_probability("150%").is_err());
    }
}

/// Serde newtypes: unit values parsed while deserialising, so a bad value
/// is reported with its position in the file.
pub mod serde_units {
    use super::*;
    use serde::Deserialize;

    /// A rate in bits/s, written `"10mbit"`.
    #[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
    #[serde(try_from = "String")]
    pub struct Rate(pub f64);

    impl TryFrom<String> for Rate {
        type Error = String;
        fn try_from(s: String) -> Result<Self, String> {
            parse_rate_bps(&s).map(Rate).map_err(|e| e.to_string())
        }
    }

    /// A duration in ns, written `"40ms"`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
    #[serde(try_from = "String")]
    pub struct Dur(pub u64);

    impl TryFrom<String> for Dur {
        type Error = String;
        fn try_from(s: String) -> Result<Self, String> {
            parse_duration_ns(&s).map(Dur).map_err(|e| e.to_string())
        }
    }

    /// A size in packets or bytes, written `"100pkt"` or `"150kB"`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
    #[serde(try_from = "String")]
    pub struct SizeValue(pub Size);

    impl TryFrom<String> for SizeValue {
        type Error = String;
        fn try_from(s: String) -> Result<Self, String> {
            parse_size(&s).map(SizeValue).map_err(|e| e.to_string())
        }
    }

    /// A byte count, written `"150kB"` (packets are not accepted).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
    #[serde(try_from = "String")]
    pub struct ByteCount(pub u64);

    impl TryFrom<String> for ByteCount {
        type Error = String;
        fn try_from(s: String) -> Result<Self, String> {
            match parse_size(&s).map_err(|e| e.to_string())? {
                Size::Bytes(b) if b > 0 => Ok(ByteCount(b)),
                Size::Bytes(_) => Err(format!(
                    "`{s}`: zero bytes; expected a positive size like `30kB`"
                )),
                Size::Packets(_) => Err(format!(
                    "`{s}`: a packet count; expected bytes, like `30kB` or `1500B`"
                )),
            }
        }
    }

    /// A probability in [0, 1].
    #[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
    #[serde(try_from = "f64")]
    pub struct Prob(pub f64);

    impl TryFrom<f64> for Prob {
        type Error = String;
        fn try_from(p: f64) -> Result<Self, String> {
            if (0.0..=1.0).contains(&p) {
                Ok(Prob(p))
            } else {
                Err(format!(
                    "{p} is outside [0, 1]; expected a probability like 0.01"
                ))
            }
        }
    }
}
