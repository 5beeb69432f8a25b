//! A tolerance: the values a check accepts and why.
//!
//! Every check of a published claim compares a measured value with a
//! range, and states that range in the report with the reason it is that
//! wide. Written as two things (a comparison in code and a sentence beside
//! it) they drift apart; here the range is written once, in a
//! [`Tolerance`], which both judges a value ([`Tolerance::check`]) and
//! says what it accepts ([`Rule::sentence`]).
//!
//! A bound may be relative to another value known only when the claim is
//! evaluated: "≤ 0.9 × the retransmission rate without lt_bw",
//! "≤ log2(BDP) + 4 rounds". [`Tolerance::times`] and [`Tolerance::plus`]
//! give such a [`Rule`]; the tolerance itself keeps only the factor or the
//! offset.

use std::fmt;
use std::ops::{Bound, RangeBounds};

/// The values a check accepts, and the reason the range is as wide as it
/// is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// The accepted values.
    pub range: Range,
    /// Why the range is this wide: what in the published setup or in the
    /// model it allows for.
    pub reason: &'static str,
}

/// A range of accepted values and the unit its numbers are written in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    shape: Shape,
    unit: Unit,
}

/// How a range is given; each is written the way a reader states it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    /// A lower and an upper bound, each inclusive, exclusive or absent.
    Bounds(Bound<f64>, Bound<f64>),
    /// Within a fraction of a target: |v / target − 1| ≤ within.
    Near { target: f64, within: f64 },
    /// Within a factor of a target: target / factor ≤ v ≤ target × factor.
    Factor { target: f64, factor: f64 },
}

/// How a range's numbers are written.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Unit {
    /// As they are, followed by a suffix (`""`, `" s"`, `" Mbit/s"`, `"×"`).
    Suffix(&'static str),
    /// Fractions as percentages: 0.95 is written `95 %`.
    Percent,
}

impl Range {
    const fn bounds(lower: Bound<f64>, upper: Bound<f64>) -> Range {
        Range {
            shape: Shape::Bounds(lower, upper),
            unit: Unit::Suffix(""),
        }
    }

    /// `min` or more.
    pub const fn at_least(min: f64) -> Range {
        Range::bounds(Bound::Included(min), Bound::Unbounded)
    }

    /// More than `min`.
    pub const fn above(min: f64) -> Range {
        Range::bounds(Bound::Excluded(min), Bound::Unbounded)
    }

    /// `max` or less.
    pub const fn at_most(max: f64) -> Range {
        Range::bounds(Bound::Unbounded, Bound::Included(max))
    }

    /// Less than `max`.
    pub const fn below(max: f64) -> Range {
        Range::bounds(Bound::Unbounded, Bound::Excluded(max))
    }

    /// From `min` to `max`, both included.
    pub const fn between(min: f64, max: f64) -> Range {
        Range::bounds(Bound::Included(min), Bound::Included(max))
    }

    /// Within the fraction `within` of `target` either way (0.1: ±10 %).
    pub const fn near(target: f64, within: f64) -> Range {
        Range {
            shape: Shape::Near { target, within },
            unit: Unit::Suffix(""),
        }
    }

    /// Within a factor of `target` either way (2: from half to double).
    pub const fn factor(target: f64, factor: f64) -> Range {
        Range {
            shape: Shape::Factor { target, factor },
            unit: Unit::Suffix(""),
        }
    }

    /// The same range, its numbers written with `suffix` (`" s"`, `"×"`).
    pub const fn unit(self, suffix: &'static str) -> Range {
        Range {
            unit: Unit::Suffix(suffix),
            ..self
        }
    }

    /// The same range, its numbers (fractions) written as percentages.
    pub const fn percent(self) -> Range {
        Range {
            unit: Unit::Percent,
            ..self
        }
    }
}

/// What a tolerance's numbers are relative to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Of<'a> {
    /// They are values of the measured quantity itself.
    Itself,
    /// Each bound (or target) is a multiple of this value, named in the
    /// sentence.
    Times(f64, &'a str),
    /// Each bound (or target) is an offset from this value, named in the
    /// sentence.
    Plus(f64, &'a str),
}

/// A tolerance applied to one check: the tolerance and what its numbers
/// are relative to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rule<'a> {
    /// The tolerance.
    pub tolerance: &'a Tolerance,
    /// What its numbers are relative to.
    pub of: Of<'a>,
}

impl Tolerance {
    /// A tolerance of `range`, for `reason`.
    pub const fn new(range: Range, reason: &'static str) -> Tolerance {
        Tolerance { range, reason }
    }

    /// Whether `value` is in the range. NaN (a quantity that could not be
    /// measured) is never in it.
    pub fn check(&self, value: f64) -> bool {
        Rule::from(self).check(value)
    }

    /// The rule whose bounds are this tolerance's × `value` (named `name`
    /// in the sentence): `at_most(0.9).times(r, "without")` accepts
    /// v ≤ 0.9 × r.
    pub fn times<'a>(&'a self, value: f64, name: &'a str) -> Rule<'a> {
        Rule {
            tolerance: self,
            of: Of::Times(value, name),
        }
    }

    /// The rule whose bounds are `value` + this tolerance's (named `name`
    /// in the sentence): `at_most(4.0).plus(r, "log2(BDP)")` accepts
    /// v ≤ r + 4.
    pub fn plus<'a>(&'a self, value: f64, name: &'a str) -> Rule<'a> {
        Rule {
            tolerance: self,
            of: Of::Plus(value, name),
        }
    }
}

impl<'a> From<&'a Tolerance> for Rule<'a> {
    fn from(tolerance: &'a Tolerance) -> Rule<'a> {
        Rule {
            tolerance,
            of: Of::Itself,
        }
    }
}

impl Rule<'_> {
    /// A number of the tolerance, made absolute.
    fn resolve(&self, x: f64) -> f64 {
        match self.of {
            Of::Itself => x,
            Of::Times(r, _) => x * r,
            Of::Plus(r, _) => r + x,
        }
    }

    /// Whether `value` is in the range. NaN is never in it.
    pub fn check(&self, value: f64) -> bool {
        let bound = |b: Bound<f64>| match b {
            Bound::Included(x) => Bound::Included(self.resolve(x)),
            Bound::Excluded(x) => Bound::Excluded(self.resolve(x)),
            Bound::Unbounded => Bound::Unbounded,
        };
        match self.tolerance.range.shape {
            // `contains` of an unbounded range would accept NaN.
            Shape::Bounds(lo, hi) => !value.is_nan() && (bound(lo), bound(hi)).contains(&value),
            Shape::Near { target, within } => (value / self.resolve(target) - 1.0).abs() <= within,
            Shape::Factor { target, factor } => {
                let t = self.resolve(target);
                (t / factor..=t * factor).contains(&value)
            }
        }
    }

    /// Whether every one of `values` is in the range (and there is one).
    pub fn check_all(&self, values: &[f64]) -> bool {
        !values.is_empty() && values.iter().all(|&v| self.check(v))
    }

    /// The check's sentence: "`subject` *range* (*reason*): `measured`",
    /// e.g. "BBR's median RTT ≤ 1.3 × the published 43 ms (Linux's
    /// quantization budget stays queued): 48.2 ms".
    pub fn sentence(&self, subject: &str, measured: &str) -> String {
        format!("{subject} {self} ({}): {measured}", self.tolerance.reason)
    }
}

/// A number as a reader writes it: no trailing zeros, at most six
/// decimals (so 4 + 10⁻⁹, a bound with room for rounding, reads "4").
fn num(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

impl fmt::Display for Rule<'_> {
    /// The range in words: "≥ 0.85", "within 1.5–3 %", "within ±10 % of
    /// 9150 Mbit/s", "≤ 1.3 × the published 43 ms", "≤ log2(BDP) + 4
    /// rounds".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let range = &self.tolerance.range;
        // A number with the range's unit, and how it relates to `of`.
        let (scale, suffix) = match range.unit {
            Unit::Suffix(s) => (1.0, s),
            Unit::Percent => (100.0, " %"),
        };
        let bare = |x: f64| num(x * scale);
        let value = |x: f64| match self.of {
            Of::Itself => format!("{}{suffix}", bare(x)),
            Of::Times(_, name) => match range.unit {
                Unit::Percent => format!("{} % of {name}", bare(x)),
                Unit::Suffix(_) => format!("{} × {name}", bare(x)),
            },
            Of::Plus(_, name) => format!("{name} + {}{suffix}", bare(x)),
        };
        match range.shape {
            Shape::Bounds(Bound::Included(lo), Bound::Included(hi)) => match self.of {
                Of::Itself => write!(f, "within {}–{}{suffix}", bare(lo), bare(hi)),
                _ => write!(f, "within {} to {}", value(lo), value(hi)),
            },
            Shape::Bounds(lo, hi) => {
                let mut parts = Vec::new();
                match lo {
                    Bound::Included(x) => parts.push(format!("≥ {}", value(x))),
                    Bound::Excluded(x) => parts.push(format!("> {}", value(x))),
                    Bound::Unbounded => {}
                }
                match hi {
                    Bound::Included(x) => parts.push(format!("≤ {}", value(x))),
                    Bound::Excluded(x) => parts.push(format!("< {}", value(x))),
                    Bound::Unbounded => {}
                }
                if parts.is_empty() {
                    parts.push("any value".to_string());
                }
                write!(f, "{}", parts.join(" and "))
            }
            Shape::Near { target, within } => {
                write!(f, "within ±{} % of {}", num(within * 100.0), value(target))
            }
            Shape::Factor { target, factor } => {
                write!(f, "within ×/÷ {} of {}", num(factor), value(target))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT_LEAST: Tolerance = Tolerance::new(Range::at_least(0.85), "why");

    #[test]
    fn bounds_judge_as_the_comparisons_they_replace() {
        assert!(AT_LEAST.check(0.85) && AT_LEAST.check(1.0) && !AT_LEAST.check(0.84));
        let below = Tolerance::new(Range::below(0.1), "r");
        assert!(below.check(0.099) && !below.check(0.1));
        let above = Tolerance::new(Range::above(0.0), "r");
        assert!(above.check(1e-300) && !above.check(0.0));
        let between = Tolerance::new(Range::between(0.55, 0.95), "r");
        assert!(between.check(0.55) && between.check(0.95) && !between.check(0.96));
        // NaN, a quantity that could not be measured, never passes.
        for t in [AT_LEAST, below, above, between] {
            assert!(!t.check(f64::NAN), "{t:?}");
        }
    }

    #[test]
    fn near_and_factor_are_relative_to_their_target() {
        let near = Tolerance::new(Range::near(9150.0, 0.10), "r");
        assert!(near.check(9150.0 * 1.09) && near.check(9150.0 * 0.91));
        assert!(!near.check(9150.0 * 1.11) && !near.check(f64::NAN));
        let factor = Tolerance::new(Range::factor(3.27, 3.0), "r");
        assert!(factor.check(3.27 / 3.0) && factor.check(3.27 * 3.0));
        assert!(!factor.check(1.0) && !factor.check(10.0));
        // ×/÷ 2 of 0.30 and of 0.10 are exactly the bounds 0.15–0.6 and
        // 0.05–0.2 written out.
        let (lo, hi) = (0.30f64 / 2.0, 0.30f64 * 2.0);
        assert_eq!((lo, hi), (0.15, 0.6));
        assert_eq!((0.10f64 / 2.0, 0.10f64 * 2.0), (0.05, 0.2));
    }

    #[test]
    fn relative_bounds_scale_or_shift_with_their_reference() {
        let t = Tolerance::new(Range::at_most(0.9), "r");
        assert!(t.times(10.0, "x").check(9.0) && !t.times(10.0, "x").check(9.1));
        let s = Tolerance::new(Range::at_most(4.0).unit(" rounds"), "r");
        assert!(s.plus(5.1, "log2(BDP)").check(9.1));
        assert!(!s.plus(5.1, "log2(BDP)").check(9.2));
        // The bound is computed as the code it replaces computed it.
        let q = Tolerance::new(Range::at_most(1.3), "r");
        assert!(q.times(43.0, "x").check(43.0 * 1.3));
        let fill = Tolerance::new(Range::at_least(0.95).percent(), "r");
        assert!(fill.times(10.0, "x").check(9.5));
    }

    #[test]
    fn check_all_needs_every_value_and_at_least_one() {
        let r = Rule::from(&AT_LEAST);
        assert!(r.check_all(&[0.9, 0.85]));
        assert!(!r.check_all(&[0.9, 0.8]));
        assert!(!r.check_all(&[]));
    }

    #[test]
    fn each_range_reads_as_a_reader_would_state_it() {
        let say = |t: Tolerance| Rule::from(&t).to_string();
        assert_eq!(say(AT_LEAST), "≥ 0.85");
        assert_eq!(say(Tolerance::new(Range::below(0.1), "")), "< 0.1");
        assert_eq!(
            say(Tolerance::new(Range::between(0.015, 0.03).percent(), "")),
            "within 1.5–3 %"
        );
        assert_eq!(
            say(Tolerance::new(Range::near(9150.0, 0.1).unit(" Mbit/s"), "")),
            "within ±10 % of 9150 Mbit/s"
        );
        assert_eq!(
            say(Tolerance::new(Range::factor(3.27, 3.0).unit(" Mbit/s"), "")),
            "within ×/÷ 3 of 3.27 Mbit/s"
        );
        assert_eq!(
            say(Tolerance::new(
                Range::at_most(4.0 + 1e-9).unit(" packets"),
                ""
            )),
            "≤ 4 packets"
        );
        assert_eq!(
            say(Tolerance::new(Range::at_least(1000.0).unit("×"), "")),
            "≥ 1000×"
        );
        let q = Tolerance::new(Range::at_most(1.3), "the quantization budget");
        assert_eq!(
            q.times(43.0, "the published 43 ms")
                .sentence("BBR's median RTT", "48.2 ms"),
            "BBR's median RTT ≤ 1.3 × the published 43 ms (the quantization budget): 48.2 ms"
        );
        let p = Tolerance::new(Range::at_least(0.95).percent(), "");
        assert_eq!(p.times(10.0, "the link").to_string(), "≥ 95 % of the link");
        let s = Tolerance::new(Range::at_most(4.0).unit(" rounds"), "");
        assert_eq!(
            s.plus(5.1, "log2(BDP)").to_string(),
            "≤ log2(BDP) + 4 rounds"
        );
    }
}
