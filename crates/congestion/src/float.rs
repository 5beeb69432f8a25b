//! Float-to-integer rounding on the per-packet and per-ACK paths, written
//! once for every algorithm and the pacer.

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

#[cfg(test)]
mod tests {
    use super::*;

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
