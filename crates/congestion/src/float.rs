//! Conversions between floats and integers on the per-packet and per-ACK
//! paths, written once for every algorithm and the pacer.

/// `x.ceil() as u64`, without the libm call `ceil` compiles to on
/// baseline x86-64 (no SSE4.1 `roundsd`): a per-packet and per-ACK cost.
/// Exact for every `x`: below 2^53 the truncation is exact and one step up
/// is the ceiling; above it every `f64` is an integer; NaN, zero,
/// negatives and values past `u64::MAX` saturate as the cast does (0, or
/// `u64::MAX`).
#[inline]
pub(crate) fn ceil_to_u64(x: f64) -> u64 {
    let t = x as u64;
    if (t as f64) < x {
        t.saturating_add(1)
    } else {
        t
    }
}

/// `a <= x as u64`, without the conversion (a dozen instructions on
/// baseline x86-64, as `as` saturates) when `a` is exact as an `f64`
/// (below 2^53) and `x` is neither NaN nor negative. Exact: for
/// 0 <= x < 2^64, `x as u64` is the integer t with t <= x < t + 1, and an
/// integer is <= t exactly when it is <= x; from 2^64 up `as` gives
/// `u64::MAX`, and both sides are true. Other inputs take the conversion.
#[inline(always)]
pub(crate) fn at_most_as_u64(a: u64, x: f64) -> bool {
    if a < 1 << 53 && x >= 0.0 {
        a as f64 <= x
    } else {
        a <= x as u64
    }
}

/// [`at_most_as_u64`] for a caller that knows `a` is below 2^53 and `x`
/// is neither NaN nor negative: the comparison of its first arm alone,
/// without the two tests that choose it. `a` converts exactly by the
/// signed conversion (it is below 2^63), as `as` would.
#[inline(always)]
pub(crate) fn at_most_as_u64_in_range(a: u64, x: f64) -> bool {
    debug_assert!(a < 1 << 53 && x >= 0.0);
    let v = a as i64 as f64 <= x;
    debug_assert_eq!(v, at_most_as_u64(a, x));
    v
}

/// `x as f64`, by the signed conversion (one instruction on baseline
/// x86-64, where the unsigned one is six, with two constant loads) when
/// `x` is below 2^63, as byte counts and nanosecond intervals are. Exact,
/// bit for bit: below 2^63 `x as i64` is `x`, and both conversions round
/// the same integer to the nearest `f64`, ties to even.
///
/// From 2^63 up it converts half of `x`, with the bit shifted out or-ed
/// back in as a sticky low bit, by the signed conversion and doubles
/// the result (the sequence compilers emit for the unsigned conversion
/// in general registers). Exact too: `x` has 64 significant bits and the
/// half 63, so rounding to 53 drops `x`'s low 11 bits and the half's low
/// 10; the bits kept are the same, the rounding bit (`x`'s bit 10, the
/// half's bit 9) is the same, and the bits below it are all zero in `x`
/// exactly when they are in the half (`x`'s bit 0 is or-ed into the
/// half's), so both round alike, ties to even on the same kept bits, and
/// doubling is exact.
///
/// That arm must not be written `x as f64`: LLVM then finds both arms
/// converting `x` and merges them into the six-instruction unsigned
/// conversion, which is what this function compiled to before
/// (`examples/ack_loop`: no gain over `as`).
///
/// Every `u64` conversion on a per-ACK or per-packet path goes through
/// it (the delivery rate, the ACK-aggregation epochs, the departure-time
/// look-ahead, the loss-based pacing rate and CUBIC's segments, the
/// jitter statistics, the pacer); the rare ones keep `as`.
#[inline(always)]
pub(crate) fn u64_as_f64(x: u64) -> f64 {
    match i64::try_from(x) {
        Ok(i) => i as f64,
        Err(_) => ((x >> 1) | (x & 1)) as i64 as f64 * 2.0,
    }
}

/// `a.min(b)` for an `a` that is never NaN, by one comparison: `f64::min`
/// also tests `a` for NaN and blends (four instructions more on x86-64),
/// which only matters when `a` is NaN. With `a` not NaN both give `b`
/// when `b < a` and `a` otherwise (a NaN `b` included), bit for bit, as
/// a test below holds, except for two zeros of opposite sign: they
/// compare equal, and `f64::min` may return either (Rust leaves it
/// unspecified; a release build gave `-0.0` for `(0.0, -0.0)`), where
/// this returns `a`. A caller that may pass `-0.0` must not rely on the
/// two agreeing.
#[inline(always)]
pub(crate) fn min_of_not_nan(a: f64, b: f64) -> f64 {
    debug_assert!(!a.is_nan());
    if b < a {
        b
    } else {
        a
    }
}

/// `(x.floor(), x.floor() as u64)` for `x >= 0` (or NaN), without the
/// libm call `floor` compiles to on baseline x86-64 (no SSE4.1
/// `roundsd`): some 30 instructions with the call and the registers
/// saved around it, on most of CUBIC's avoidance ACKs (the one-flow
/// CUBIC bench path, 100 Mbit/s for 20 s: about 2 M of 329.6 M).
/// Exact, bit for bit: below 2^52 the truncation of a non-negative `x`
/// is its floor, an integer that converts back exactly; from 2^52 up
/// every `f64` is an integer, its own floor, and the second item is the
/// cast `as` would give; NaN fails the first test and is returned, as
/// `floor` returns it, with `as`'s 0. Not for negative `x` (truncation
/// rounds those up, and `-0.0` would lose its sign).
#[inline(always)]
pub(crate) fn floor_of_non_negative(x: f64) -> (f64, u64) {
    debug_assert!(x >= 0.0 || x.is_nan());
    const TWO_POW_52: f64 = 4_503_599_627_370_496.0;
    if x < TWO_POW_52 {
        let t = x as i64;
        (t as f64, t as u64)
    } else {
        (x, x as u64)
    }
}

/// A pacing rate in bytes/s as the integer the controllers report: the
/// rate truncated, at least 1 (a NaN, infinite, zero or sub-byte rate
/// paces at 1 byte/s rather than not at all), at most `u64::MAX`. Written
/// once for `bbr` and `bbr3`, which keep it beside their `f64` rate
/// because the sender asks for it on every packet and the saturating
/// conversion costs some twenty instructions.
pub(crate) fn rate_bytes_per_sec(rate: f64) -> u64 {
    if rate.is_finite() && rate >= 1.0 {
        rate.min(u64::MAX as f64) as u64
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`floor_of_non_negative`] is `floor` and its cast, bit for bit,
    /// around the precision limits and on fractions.
    #[test]
    fn floor_of_non_negative_is_floor() {
        let mut values = vec![
            0.0,
            0.5,
            1.0,
            1.5,
            2.0 - f64::EPSILON,
            f64::NAN,
            f64::INFINITY,
        ];
        for shift in [0i32, 10, 51, 52, 53, 63, 64, 70] {
            let p = 2f64.powi(shift);
            values.extend([
                p,
                p * (1.0 - f64::EPSILON),
                p * (1.0 + f64::EPSILON),
                p + 0.5,
            ]);
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(f64::from_bits(x >> 1));
            values.push((x >> 11) as f64 / 4096.0);
        }
        for v in values {
            let (f, u) = floor_of_non_negative(v);
            if v.is_nan() {
                assert!(f.is_nan() && u == 0);
                continue;
            }
            assert_eq!(f.to_bits(), v.floor().to_bits(), "{v}");
            assert_eq!(u, v.floor() as u64, "{v}");
        }
    }

    /// [`u64_as_f64`] is `x as f64`, bit for bit, around every place the
    /// two conversions could part: the f64 precision limits, ties to
    /// even, the sign boundary and the top.
    #[test]
    fn u64_as_f64_is_the_cast() {
        let mut values = vec![0, 1, 2, 1500, u64::MAX];
        for shift in [52u32, 53, 54, 62, 63] {
            let p = 1u64 << shift;
            for d in 0..4 {
                values.extend([p - d, p + d, p.wrapping_mul(2).wrapping_sub(d)]);
            }
            values.extend([p + (p >> 52), p + (p >> 53), p | (p >> 53) | 1]);
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.extend([x, x >> 1, x >> 11, x >> 40]);
        }
        // From 2^63 up the conversion rounds off the low 11 bits: every
        // pattern of them (below, at and above the tie, with an even and
        // an odd kept part), under a few top parts, the largest included.
        for top in [
            1u64 << 63,
            (1 << 63) | (1 << 11),
            u64::MAX << 11,
            x << 11 | 1 << 63,
        ] {
            values.extend((0..1u64 << 12).map(|low| top.wrapping_add(low) | 1 << 63));
        }
        for v in values {
            assert_eq!(u64_as_f64(v).to_bits(), (v as f64).to_bits(), "{v}");
        }
    }

    /// [`min_of_not_nan`] is `f64::min`, bit for bit, for every `a` that
    /// is not NaN and every `b`, except a pair of zeros of opposite sign,
    /// for which `f64::min` may return either (and a release build
    /// returns `-0.0` for `(0.0, -0.0)`): there it returns `a`, a zero
    /// equal to both.
    #[test]
    fn min_of_not_nan_is_f64_min() {
        let values = [
            0.0,
            -0.0,
            1.5,
            -2.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            1e-300,
            f64::MAX,
            f64::NAN,
        ];
        for a in values.into_iter().filter(|a| !a.is_nan()) {
            for b in values {
                if a == 0.0 && b == 0.0 && a.is_sign_negative() != b.is_sign_negative() {
                    assert_eq!(min_of_not_nan(a, b).to_bits(), a.to_bits());
                    continue;
                }
                assert_eq!(
                    min_of_not_nan(a, b).to_bits(),
                    a.min(b).to_bits(),
                    "{a} {b}"
                );
            }
        }
    }

    #[test]
    fn at_most_as_u64_is_the_comparison_with_the_cast() {
        let xs = [
            0.0,
            -0.0,
            -0.5,
            -1.0,
            0.5,
            1.0,
            1.5,
            2.0,
            1e6 - 0.5,
            1e6,
            1e6 + 0.5,
            4503599627370495.5,
            9007199254740991.0,
            9007199254740992.0,
            9007199254740994.0,
            1.8e19,
            18446744073709549568.0,
            18446744073709551616.0,
            2e19,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
        ];
        let as_: [u64; 14] = [
            0,
            1,
            2,
            999_999,
            1_000_000,
            1_000_001,
            (1 << 52) - 1,
            (1 << 53) - 1,
            1 << 53,
            (1 << 53) + 1,
            (1 << 53) + 2,
            18446744073709549568,
            u64::MAX - 1,
            u64::MAX,
        ];
        for x in xs {
            for a in as_ {
                assert_eq!(at_most_as_u64(a, x), a <= x as u64, "{a} {x}");
            }
        }
        let mut x = 0.1f64;
        for _ in 0..3000 {
            let t = x as u64;
            for a in [t.saturating_sub(1), t, t.saturating_add(1)] {
                assert_eq!(at_most_as_u64(a, x), a <= x as u64, "{a} {x}");
            }
            x = x * 1.031 + 0.7;
        }
    }

    #[test]
    fn rounds_up_and_handles_non_finite() {
        assert_eq!(ceil_to_u64(0.0), 0);
        assert_eq!(ceil_to_u64(-3.5), 0);
        assert_eq!(ceil_to_u64(f64::NAN), 0);
        assert_eq!(ceil_to_u64(2.0), 2);
        assert_eq!(ceil_to_u64(2.000001), 3);
        assert_eq!(ceil_to_u64(f64::INFINITY), u64::MAX);
    }

    #[test]
    fn is_the_cast_ceiling_everywhere() {
        let cases = [
            0.0,
            -0.0,
            -0.5,
            0.25,
            1.0,
            1.0000001,
            2.5,
            1e6 + 0.5,
            4503599627370495.5,
            9007199254740993.0,
            1.8e19,
            2e19,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
            1e9 / 3.0,
        ];
        for x in cases {
            assert_eq!(ceil_to_u64(x), x.ceil() as u64, "{x}");
        }
        let mut v = 0.1f64;
        for _ in 0..2000 {
            assert_eq!(ceil_to_u64(v), v.ceil() as u64, "{v}");
            v = v * 1.037 + 0.3;
        }
    }
}
