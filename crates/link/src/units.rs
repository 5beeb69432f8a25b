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

/// Splits "12.5mbit" or "1e3 ms" into the number's text and the unit's
/// text (case kept: `MB/s` and `mb/s` mean different things). The number
/// may have a sign, a fraction and an exponent; the unit is what follows,
/// with surrounding spaces removed.
fn split(s: &str) -> Result<(&str, &str), UnitError> {
    let t = s.trim();
    let b = t.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits_from = i;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
        i += 1;
    }
    if i == digits_from {
        return Err(err(s, "expected a number followed by a unit"));
    }
    // An exponent only if digits follow it: `1e3ms` is 1000 ms, while the
    // `e` of a unit (none today) would not be taken for one.
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            i = j;
        }
    }
    let (num, unit) = t.split_at(i);
    Ok((num, unit.trim()))
}

/// Parses the number part as a finite float.
fn number(s: &str, num: &str) -> Result<f64, UnitError> {
    let v: f64 = num
        .parse()
        .map_err(|_| err(s, format!("`{num}` is not a number")))?;
    if !v.is_finite() {
        return Err(err(s, "the number is too large"));
    }
    Ok(v)
}

/// The rate spellings accepted, for error messages and docs.
pub const RATE_UNITS: &str = "bits per second: `bit`, `kbit`, `Mbit`, `Gbit`, `Tbit` (k/M/G/T in either case, optionally followed by `/s`: `10Mbit/s`); bytes per second: `B/s`, `kB/s`, `MB/s`, `GB/s` (1 MB/s = 8 Mbit/s)";

/// Lowest rate accepted anywhere, bits/s.
pub const MIN_RATE_BPS: f64 = 1.0;
/// Highest rate accepted anywhere, bits/s (1 Tbit/s): above any link the
/// simulator can run in reasonable time or the emulator can forward.
pub const MAX_RATE_BPS: f64 = 1e12;

/// Bits/s per unit for the accepted rate spellings. Case matters only for
/// `B` (bytes) against `bit`; the decimal prefixes may be either case
/// since no rate is written in millibits.
fn rate_multiplier(unit: &str) -> Option<f64> {
    let bits = unit.strip_suffix("/s").unwrap_or(unit);
    let prefix = |p: &str| match p {
        "" => Some(1.0),
        "k" | "K" => Some(1e3),
        "m" | "M" => Some(1e6),
        "g" | "G" => Some(1e9),
        "t" | "T" => Some(1e12),
        _ => None,
    };
    if let Some(p) = bits.strip_suffix("bit") {
        return prefix(p);
    }
    match unit {
        "B/s" => Some(8.0),
        "kB/s" => Some(8e3),
        "MB/s" => Some(8e6),
        "GB/s" => Some(8e9),
        _ => None,
    }
}

/// Parses a rate in bits per second: `10mbit`, `1.5Gbit`, `10 Mbit/s`,
/// `64kbit`, or bytes per second `10MB/s` (80 Mbit/s). Spellings that
/// different tools read differently (`mbps` is megabytes per second to
/// Linux `tc` and megabits to most people; `Mb/s`, `KB/s`) are rejected
/// with the list of accepted forms, as is any rate outside
/// [`MIN_RATE_BPS`, `MAX_RATE_BPS`].
pub fn parse_rate_bps(s: &str) -> Result<f64, UnitError> {
    let (num, unit) = split(s)?;
    let v = number(s, num)?;
    let mult = match rate_multiplier(unit) {
        Some(m) => m,
        None if unit.is_empty() => {
            return Err(err(
                s,
                format!("a rate needs a unit; accepted: {RATE_UNITS}"),
            ))
        }
        None => {
            let lc = unit.to_ascii_lowercase();
            let ambiguous = lc.ends_with("bps")
                || lc.ends_with("b/s")
                || lc.ends_with("ib/s")
                || lc.ends_with("bytes/s");
            let problem = if ambiguous {
                format!(
                    "`{unit}` is ambiguous (Linux tc reads `mbps` as megabytes per second, most tools as megabits; `b` and `B` are bits and bytes); write `{num}Mbit` for bits or `{num}MB/s` for bytes. Accepted: {RATE_UNITS}"
                )
            } else {
                format!("unknown rate unit `{unit}`; accepted: {RATE_UNITS}")
            };
            return Err(err(s, problem));
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
    let bps = v * mult;
    if !(MIN_RATE_BPS..=MAX_RATE_BPS).contains(&bps) {
        return Err(err(
            s,
            format!("{bps:e} bit/s is outside the supported range, 1 bit/s to 1 Tbit/s (`1Tbit`)"),
        ));
    }
    Ok(bps)
}

const TIME_UNITS: &str = "ns, us (or µs), ms, s; e.g. `40ms`, `1.5s`, `1e3ms`";

/// Longest duration accepted anywhere, ns (about 31.7 years; the
/// simulator sets tighter limits on what a run may cover).
pub const MAX_DURATION_NS: f64 = 1e18;

/// Parses a duration in nanoseconds: `40ms`, `1.5s`, `250us`, `1e3ms`.
/// Units are case-sensitive (`Ms` would be megaseconds to some readers).
pub fn parse_duration_ns(s: &str) -> Result<u64, UnitError> {
    let (num, unit) = split(s)?;
    let v = number(s, num)?;
    let mult = match unit {
        "ns" => 1.0,
        // The micro sign (U+00B5) and the Greek mu (U+03BC) look alike;
        // keyboards give either.
        "us" | "µs" | "\u{3bc}s" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "" => return Err(err(s, format!("a duration needs a unit: {TIME_UNITS}"))),
        other => {
            let hint = if ["ns", "us", "µs", "ms", "s"].contains(&other.to_lowercase().as_str()) {
                " (units are case-sensitive)"
            } else {
                ""
            };
            return Err(err(
                s,
                format!("unknown time unit `{other}`{hint}; allowed: {TIME_UNITS}"),
            ));
        }
    };
    if v < 0.0 {
        return Err(err(s, "the duration is negative"));
    }
    let ns = v * mult;
    if ns > 0.0 && ns < 0.5 {
        // It would round to 0, which means "none" wherever a duration may
        // be 0: not what a positive value asks for.
        return Err(err(
            s,
            "the duration is below half a nanosecond, the resolution; give 0 for none",
        ));
    }
    if ns > MAX_DURATION_NS {
        return Err(err(
            s,
            "the duration is too long; the limit is 1e18 ns (about 31 years)",
        ));
    }
    Ok(ns.round() as u64)
}

/// [`parse_duration_ns`] as a `std::time::Duration`, for the command-line
/// flags and options that hold one (timeouts, noise, intervals).
pub fn parse_duration(s: &str) -> Result<std::time::Duration, UnitError> {
    parse_duration_ns(s).map(std::time::Duration::from_nanos)
}

/// Parses a byte count for a transfer (`send --bytes`): a bare whole
/// number is bytes (not packets, as for [`parse_size`]), or one with a
/// byte unit: `5MB`, `64KiB`, `1500B`.
pub fn parse_bytes(s: &str) -> Result<u64, UnitError> {
    let t = s.trim();
    if !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit()) {
        return t
            .parse::<u64>()
            .ok()
            .filter(|&n| n <= MAX_SIZE_BYTES)
            .ok_or_else(|| {
                err(
                    s,
                    format!("too large; the limit is {MAX_SIZE_BYTES} bytes (1 PB)"),
                )
            });
    }
    match parse_size(s)? {
        Size::Bytes(b) => Ok(b),
        Size::Packets(_) => Err(err(
            s,
            "a byte count: give bytes (a plain number, or B, kB, KiB, MB, MiB, GB, GiB), not packets",
        )),
    }
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
    "pkt, B, kB (1000 B), KiB (1024 B), MB, MiB, GB, GiB (case-sensitive), e.g. `100pkt` or `150kB`";

/// Largest size accepted anywhere: 10^15 bytes or 10^12 packets (the
/// simulator sets tighter limits for what a run may hold).
pub const MAX_SIZE_BYTES: u64 = 1_000_000_000_000_000;
/// See [`MAX_SIZE_BYTES`].
pub const MAX_SIZE_PACKETS: u64 = 1_000_000_000_000;

/// Parses a size: `100pkt`, `1500B`, `150kB`, `64KiB`, `10MB`; a bare
/// number means packets (so `--queue 100` works). Units are
/// case-sensitive: `b` (bits) and `KB` (1000 or 1024?) are rejected as
/// ambiguous. Counts must be whole and at most [`MAX_SIZE_PACKETS`]
/// packets or [`MAX_SIZE_BYTES`] bytes; nothing is rounded or truncated
/// silently.
pub fn parse_size(s: &str) -> Result<Size, UnitError> {
    let (num, unit) = split(s)?;
    let v = number(s, num)?;
    if v < 0.0 {
        return Err(err(s, "the size is negative"));
    }
    let mult = match unit {
        "" | "pkt" | "pkts" | "packets" => None,
        "B" => Some(1.0),
        "kB" => Some(1e3),
        "KiB" => Some(1024.0),
        "MB" => Some(1e6),
        "MiB" => Some(1024.0 * 1024.0),
        "GB" => Some(1e9),
        "GiB" => Some(1024.0 * 1024.0 * 1024.0),
        other => {
            let lc = other.to_ascii_lowercase();
            let problem = if ["pkt", "pkts", "packets"].contains(&lc.as_str()) {
                format!("`{other}`: packets are `pkt` (units are case-sensitive): {SIZE_UNITS}")
            } else if ["b", "kb", "mb", "gb", "kib", "mib", "gib"].contains(&lc.as_str()) {
                format!("`{other}` is ambiguous (`b` is bits, `B` bytes; `KB` is 1000 or 1024); units are case-sensitive: {SIZE_UNITS}")
            } else {
                format!("unknown size unit `{other}`; allowed: {SIZE_UNITS}")
            };
            return Err(err(s, problem));
        }
    };
    // Whole numbers written as plain digits are read exactly, so a count
    // past 2^64 is an error rather than a rounded float.
    let exact: Option<u64> = if num.bytes().all(|c| c.is_ascii_digit()) {
        Some(num.parse().map_err(|_| err(s, "the number is too large"))?)
    } else {
        None
    };
    match mult {
        None => {
            if v.fract() != 0.0 {
                return Err(err(s, "a packet count must be a whole number"));
            }
            let n = exact.unwrap_or(v as u64);
            if n > MAX_SIZE_PACKETS || v > MAX_SIZE_PACKETS as f64 {
                return Err(err(
                    s,
                    format!("too many packets; the limit is {MAX_SIZE_PACKETS}"),
                ));
            }
            Ok(Size::Packets(n))
        }
        Some(m) => {
            let b = v * m;
            if b > MAX_SIZE_BYTES as f64 || exact.is_some_and(|n| n > MAX_SIZE_BYTES) {
                return Err(err(
                    s,
                    format!("too large; the limit is {MAX_SIZE_BYTES} bytes (1 PB)"),
                ));
            }
            if b.fract() != 0.0 {
                return Err(err(s, format!("{b} bytes is not a whole number of bytes")));
            }
            Ok(Size::Bytes(b as u64))
        }
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
        assert_eq!(parse_rate_bps(" 64 kbit ").unwrap(), 64e3);
        assert!(parse_rate_bps("-5mbit")
            .unwrap_err()
            .to_string()
            .contains("negative"));
        let e = parse_rate_bps("10parsecs").unwrap_err().to_string();
        assert!(e.contains("parsecs") && e.contains("Mbit"), "{e}");
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

    /// `send --bytes` takes units, and a bare number is bytes.
    #[test]
    fn byte_counts_take_units_and_a_bare_number_is_bytes() {
        assert_eq!(parse_bytes("100000"), Ok(100_000));
        assert_eq!(parse_bytes("5MB"), Ok(5_000_000));
        assert_eq!(parse_bytes("64KiB"), Ok(65_536));
        assert!(parse_bytes("10pkt")
            .unwrap_err()
            .to_string()
            .contains("not packets"));
        assert!(parse_bytes("5mb").is_err());
        assert!(parse_bytes("99999999999999999999").is_err());
    }

    /// From a CLI audit: the Greek mu is read as micro; a duration that
    /// would round to 0 is refused (it would mean "none"); `100PKT` is
    /// told that packets are `pkt`, not that `b` means bits.
    #[test]
    fn mu_sub_nanosecond_and_packet_case_messages() {
        assert_eq!(parse_duration_ns("20\u{3bc}s").unwrap(), 20_000);
        assert_eq!(parse_duration_ns("20\u{b5}s").unwrap(), 20_000);
        let e = parse_duration_ns("1e-10s").unwrap_err().to_string();
        assert!(e.contains("half a nanosecond"), "{e}");
        assert_eq!(parse_duration_ns("0s").unwrap(), 0);
        assert_eq!(parse_duration_ns("0.5ns").unwrap(), 1);
        let e = parse_size("100PKT").unwrap_err().to_string();
        assert!(
            e.contains("packets are `pkt`") && !e.contains("bits"),
            "{e}"
        );
    }

    /// Issue 13: `10MBps` and `10MB/s` gave a 10 Mbit/s link (8x too slow)
    /// and `10 Mbit/s` was rejected.
    #[test]
    fn byte_rates_are_bytes_and_ambiguous_rates_are_rejected() {
        assert_eq!(parse_rate_bps("10MB/s").unwrap(), 80e6);
        assert_eq!(parse_rate_bps("10 Mbit/s").unwrap(), 10e6);
        assert_eq!(parse_rate_bps("10Mbit").unwrap(), 10e6);
        assert_eq!(parse_rate_bps("2Gbit/s").unwrap(), 2e9);
        assert_eq!(parse_rate_bps("1kB/s").unwrap(), 8e3);
        for bad in [
            "10MBps", "10mbps", "10Mbps", "10kbps", "10bps", "10Mb/s", "10mb/s", "10KB/s",
        ] {
            let e = parse_rate_bps(bad).unwrap_err().to_string();
            assert!(
                e.contains("ambiguous") && e.contains("Mbit") && e.contains("MB/s"),
                "{bad}: {e}"
            );
        }
        // Case changes meaning only between bits and bytes.
        assert!(parse_rate_bps("10mB/s").is_err());
    }

    /// Issue 13: a rate that overflows was accepted and the run never ended.
    #[test]
    fn rates_outside_the_supported_range_are_rejected_with_the_range() {
        for bad in [
            "99999999999999999999999mbit",
            "2Tbit",
            "1e300gbit",
            "0.5bit",
        ] {
            let e = parse_rate_bps(bad).unwrap_err().to_string();
            assert!(e.contains("1 bit/s to 1 Tbit/s"), "{bad}: {e}");
        }
        assert_eq!(parse_rate_bps("1Tbit").unwrap(), 1e12);
    }

    /// Issue 13: `1e300ms` was "unknown time unit `e300ms`".
    #[test]
    fn exponents_are_numbers_and_huge_durations_name_the_limit() {
        assert_eq!(parse_duration_ns("1e3ms").unwrap(), 1_000_000_000);
        assert_eq!(parse_duration_ns("2.5e-3s").unwrap(), 2_500_000);
        let e = parse_duration_ns("1e300ms").unwrap_err().to_string();
        assert!(e.contains("too long") && e.contains("limit"), "{e}");
        let e = parse_duration_ns("40MS").unwrap_err().to_string();
        assert!(e.contains("case-sensitive"), "{e}");
        assert_eq!(
            parse_duration("2.5e-3s").unwrap(),
            std::time::Duration::from_micros(2500)
        );
        assert!(parse_duration("1e300ms").is_err());
    }

    /// Issue 13: `18446744073709551616pkt` was accepted silently.
    #[test]
    fn sizes_are_exact_case_sensitive_and_bounded() {
        for bad in [
            "18446744073709551616pkt",
            "18446744073709551616",
            "99999999999999999999999B",
            "1e20pkt",
            "2PB",
        ] {
            let e = parse_size(bad).unwrap_err().to_string();
            assert!(
                e.contains("too large") || e.contains("limit") || e.contains("unknown"),
                "{bad}: {e}"
            );
        }
        assert!(parse_size("2e20pkt")
            .unwrap_err()
            .to_string()
            .contains("limit"));
        assert_eq!(parse_size("1e3pkt").unwrap(), Size::Packets(1000));
        assert!(parse_size("1.5B")
            .unwrap_err()
            .to_string()
            .contains("whole"));
        for amb in ["10KB", "10mb", "10Mb", "10b"] {
            let e = parse_size(amb).unwrap_err().to_string();
            assert!(e.contains("ambiguous") && e.contains("KiB"), "{amb}: {e}");
        }
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
