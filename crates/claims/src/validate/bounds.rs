//! The bounds the simulator is held to, as tolerances with their reasons,
//! and the verdict of one row against them.

use super::*;

/// `bbr`'s goodput: within 5 % of kernel TCP's.
pub const BBR_GOODPUT: Tolerance = Tolerance::new(
    Range::at_most(5.0).unit(" %"),
    "issue 11's goal for a model-based flow: its goodput is the bottleneck's rate less PROBE_RTT's dips, which the simulator and the kernel share",
);

/// `bbr`'s median srtt: within 10 % of kernel TCP's…
pub const BBR_SRTT_PCT: Tolerance = Tolerance::new(
    Range::at_most(10.0).unit(" %"),
    "issue 11's goal: the standing queue BBR keeps is a few packets, so its srtt is the path's RTT within this",
);

/// A loss-based flow's goodput: within 10 % of kernel TCP's.
pub const LOSS_BASED_GOODPUT: Tolerance = Tolerance::new(
    Range::at_most(10.0).unit(" %"),
    "a loss-based flow's sawtooth makes its short-run averages noisier than BBR's",
);

/// A loss-based flow's median srtt: within 15 % of kernel TCP's…
pub const LOSS_BASED_SRTT_PCT: Tolerance = Tolerance::new(
    Range::at_most(15.0).unit(" %"),
    "a loss-based flow fills the buffer and drains it by half on each loss, so where in the sawtooth a short run ends moves its median",
);

/// …or within 2 ms, whichever is larger (every algorithm).
pub const SRTT_MS: Tolerance = Tolerance::new(
    Range::at_most(2.0).unit(" ms"),
    "a floor for short paths: srtt is sampled every 10 ms and the emulator releases packets within a fraction of a ms of their time, so 2 ms is sampling, not behaviour",
);

/// Retransmitted segments, where judged (`bbrlab_bbr3`): within this
/// fraction of kernel TCP's count…
pub const RETX_FRACTION: f64 = 0.15;

/// …plus this many segments.
pub const RETX_SEGMENTS: Tolerance = Tolerance::new(
    Range::at_most(10.0).unit(" segments"),
    "issue 24: 15 % of the kernel's count plus 10 segments, the bound kernel_cc_validate holds bbrlab_bbr to; the probes' overflows vary from run to run by about that much",
);

/// The agreement the simulator must reach with kernel TCP, per algorithm:
/// goodput within [`Bounds::goodput`], median srtt within
/// [`Bounds::srtt_pct`] or [`SRTT_MS`], whichever is larger (issue 11's
/// goal), and, for `bbrlab_bbr3`, retransmissions within
/// [`RETX_FRACTION`] of the kernel's count plus [`RETX_SEGMENTS`]. UDP
/// and s2n-quic `bbr` are held to `bbr`'s. Each is a [`Tolerance`] with
/// its reason, written once.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// The goodput difference, percent of kernel TCP's.
    pub goodput: &'static Tolerance,
    /// The median-srtt difference, percent of kernel TCP's…
    pub srtt_pct: &'static Tolerance,
    /// …or in ms ([`SRTT_MS`]), whichever is larger.
    pub srtt_ms: &'static Tolerance,
    /// Retransmitted segments, when they are judged.
    pub retx: Option<&'static Tolerance>,
}

/// The bounds for `algorithm` (`bbr` 5 % / 10 %, loss-based 10 % / 15 %,
/// `bbrlab_bbr3` bbr's and its retransmissions).
pub fn bounds_for(algorithm: &str) -> Bounds {
    let (goodput, srtt_pct, retx) = match algorithm {
        "bbr" | "bbr-jitter" => (&BBR_GOODPUT, &BBR_SRTT_PCT, None),
        BBR3_KERNEL => (&BBR_GOODPUT, &BBR_SRTT_PCT, Some(&RETX_SEGMENTS)),
        _ => (&LOSS_BASED_GOODPUT, &LOSS_BASED_SRTT_PCT, None),
    };
    Bounds {
        goodput,
        srtt_pct,
        srtt_ms: &SRTT_MS,
        retx,
    }
}

/// The bounds as `validate.json` states them: per class of algorithm,
/// each tolerance's rule in words and its reason, from the tolerances.
pub fn bounds_json() -> Value {
    let t = tolerance_json;
    let class = |b: Bounds| {
        let mut v = json!({
            "goodput": t(b.goodput, "|simulator − kernel| goodput, relative to the kernel's:"),
            "srtt_pct": t(b.srtt_pct, "|simulator − kernel| median srtt, relative to the kernel's:"),
            "srtt_ms": t(b.srtt_ms, "…or absolute, whichever is larger:"),
        });
        if let Some(r) = b.retx {
            v["retransmissions"] = t(
                r,
                &format!(
                    "|simulator − kernel| retransmitted segments, beyond {} % of the kernel's:",
                    RETX_FRACTION * 100.0
                ),
            );
        }
        v
    };
    json!({
        "bbr": class(bounds_for("bbr")),
        BBR3_KERNEL: class(bounds_for(BBR3_KERNEL)),
        "loss_based": class(bounds_for("cubic")),
        "rule": "UDP bbr and s2n-quic bbr (bbrlab's through the adapter) are held to bbr's bounds; bbrlab_bbr3 (kernel) is held against the simulator's bbr3 (linux-v3, stock-kernel signals)",
    })
}

/// [`judge`] with retransmissions: `got_retx` against `want_retx` within
/// `b.retx` (when `b` has it; a missing count misses it).
pub fn judge_retx(
    got: (f64, Option<f64>),
    want: (f64, Option<f64>),
    got_retx: Option<f64>,
    want_retx: Option<f64>,
    b: Bounds,
) -> Value {
    let mut v = judge(got, want, b);
    let Some(segments) = b.retx else {
        return v;
    };
    let ok = match (got_retx, want_retx) {
        (Some(g), Some(w)) => segments
            .plus(RETX_FRACTION * w, "15 % of the kernel's count")
            .check((g - w).abs()),
        _ => false,
    };
    v["retx_kernel"] = json!(want_retx);
    v["retx_simulator"] = json!(got_retx);
    v["retx_within"] = json!(ok);
    v["within"] = json!(v["within"].as_bool() == Some(true) && ok);
    v
}

/// Differences of `got` against the reference `want`, and whether they
/// are within `b`.
pub fn judge(got: (f64, Option<f64>), want: (f64, Option<f64>), b: Bounds) -> Value {
    let gp_pct = if want.0 > 0.0 {
        (got.0 - want.0) / want.0 * 100.0
    } else {
        f64::NAN
    };
    let (rtt_ms, rtt_pct) = match (got.1, want.1) {
        (Some(g), Some(w)) if w > 0.0 => (g - w, (g - w) / w * 100.0),
        _ => (f64::NAN, f64::NAN),
    };
    let gp_ok = b.goodput.check(gp_pct.abs());
    let rtt_ok = b.srtt_ms.check(rtt_ms.abs()) || b.srtt_pct.check(rtt_pct.abs());
    json!({
        "goodput_diff_pct": finite(gp_pct),
        "srtt_diff_ms": finite(rtt_ms),
        "srtt_diff_pct": finite(rtt_pct),
        "goodput_within": gp_ok,
        "srtt_within": rtt_ok,
        "within": gp_ok && rtt_ok,
    })
}

pub fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some((x * 100.0).round() / 100.0)
}

pub fn pair(x: Option<(f64, Option<f64>)>) -> Value {
    x.map_or(
        Value::Null,
        |(g, r)| json!({ "goodput_mbps": g, "srtt_median_ms": r }),
    )
}
