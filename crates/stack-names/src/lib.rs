//! The names of the QUIC stacks' own congestion controllers that bbrlab
//! runs inside its sender: `s2n:bbr2`, `s2n:cubic`, `quinn:bbr`,
//! `quinn:cubic`, `noq:bbr3` and `noq:cubic`.
//!
//! A scenario names a flow's controller; parsing and checking that name
//! needs the list, not the stacks. The controllers themselves are in the
//! `quic-controllers` crate, which builds on `s2n-quic-core` and
//! `quinn-proto`; keeping the names here lets the scenario parser (and
//! whatever only reads scenarios) build without those crates, while the
//! runner, which runs the flows, builds the controllers.

use core::fmt;
use core::str::FromStr;

/// A stack's controller, by the name scenarios use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StackAlgorithm {
    /// s2n-quic's BBRv2 (`s2n_quic_core::recovery::bbr::BbrCongestionController`).
    S2nBbr2,
    /// s2n-quic's CUBIC (`s2n_quic_core::recovery::CubicCongestionController`).
    S2nCubic,
    /// quinn's BBR (`quinn_proto::congestion::Bbr`).
    QuinnBbr,
    /// quinn's CUBIC (`quinn_proto::congestion::Cubic`).
    QuinnCubic,
    /// noq's BBRv3 (`noq_proto::congestion::Bbr3`).
    NoqBbr3,
    /// noq's CUBIC (`noq_proto::congestion::Cubic`).
    NoqCubic,
}

impl StackAlgorithm {
    /// Every stack controller, in the order error messages list them.
    pub const ALL: [StackAlgorithm; 6] = [
        StackAlgorithm::S2nBbr2,
        StackAlgorithm::S2nCubic,
        StackAlgorithm::QuinnBbr,
        StackAlgorithm::QuinnCubic,
        StackAlgorithm::NoqBbr3,
        StackAlgorithm::NoqCubic,
    ];

    /// The stack it comes from, as its name's prefix says: `s2n`,
    /// `quinn` or `noq`.
    pub fn stack(self) -> &'static str {
        match self {
            StackAlgorithm::S2nBbr2 | StackAlgorithm::S2nCubic => "s2n",
            StackAlgorithm::QuinnBbr | StackAlgorithm::QuinnCubic => "quinn",
            StackAlgorithm::NoqBbr3 | StackAlgorithm::NoqCubic => "noq",
        }
    }

    /// The name scenarios, sweeps, the CLI and Python use.
    pub fn name(self) -> &'static str {
        match self {
            StackAlgorithm::S2nBbr2 => "s2n:bbr2",
            StackAlgorithm::S2nCubic => "s2n:cubic",
            StackAlgorithm::QuinnBbr => "quinn:bbr",
            StackAlgorithm::QuinnCubic => "quinn:cubic",
            StackAlgorithm::NoqBbr3 => "noq:bbr3",
            StackAlgorithm::NoqCubic => "noq:cubic",
        }
    }
}

impl fmt::Display for StackAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no stack controller's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownStackAlgorithm(pub String);

impl fmt::Display for UnknownStackAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown stack controller `{}`; expected one of {}",
            self.0,
            names().join(", ")
        )
    }
}

impl std::error::Error for UnknownStackAlgorithm {}

impl FromStr for StackAlgorithm {
    type Err = UnknownStackAlgorithm;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // As `congestion::Algorithm` parses: ASCII case and surrounding
        // whitespace ignored, no aliases.
        let t = s.trim();
        StackAlgorithm::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| UnknownStackAlgorithm(s.to_string()))
    }
}

/// Every stack controller's name.
pub fn names() -> Vec<&'static str> {
    StackAlgorithm::ALL.iter().map(|a| a.name()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_a_bad_one_lists_the_allowed() {
        for a in StackAlgorithm::ALL {
            assert_eq!(a.name().parse::<StackAlgorithm>(), Ok(a));
        }
        let e = "s2n:bbr3".parse::<StackAlgorithm>().unwrap_err();
        let m = e.to_string();
        assert!(m.contains("`s2n:bbr3`"), "{m}");
        for n in names() {
            assert!(m.contains(n), "{m} lacks {n}");
        }
    }
}
