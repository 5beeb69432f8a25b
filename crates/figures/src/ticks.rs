//! Axis ranges and labelled ticks ([`scale`]): a log axis gets decades
//! plus 1-2-5 (or finer) ticks and a range snapped out to a labelled value,
//! so every value lies between two labels; labels are unique and carry no
//! needless ".0".

/// One axis's visible range, in data units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Axis {
    /// Lowest visible value.
    pub lo: f64,
    /// Highest visible value.
    pub hi: f64,
    /// Logarithmic: positions are proportional to `log10` of the value.
    pub log: bool,
}

impl Axis {
    /// The value in axis space (`log10` on a log axis), where the mapping
    /// to pixels is linear; `None` for what the axis cannot show (zero or
    /// less on a log axis, NaN).
    pub fn t(&self, v: f64) -> Option<f64> {
        let t = if self.log {
            (v > 0.0).then(|| v.log10())?
        } else {
            v
        };
        t.is_finite().then_some(t)
    }

    /// The visible range in axis space.
    pub fn t_range(&self) -> (f64, f64) {
        let f = |v: f64| if self.log { v.log10() } else { v };
        (f(self.lo), f(self.hi))
    }
}

/// A labelled tick.
#[derive(Clone, Debug, PartialEq)]
pub struct Tick {
    /// Where, in data units.
    pub value: f64,
    /// What is printed there.
    pub label: String,
}

/// An axis with its labelled ticks and unlabelled grid lines.
#[derive(Clone, Debug)]
pub struct Scale {
    /// The visible range.
    pub axis: Axis,
    /// Labelled ticks, increasing, all inside the range.
    pub ticks: Vec<Tick>,
    /// Light grid lines (data units), inside the range.
    pub minor: Vec<f64>,
}

/// Chooses the visible range and the labelled ticks of an axis that must
/// show data from `lo` to `hi` (published markers included), with at most
/// about `max_labels` labels.
///
/// A log axis adds a margin of a factor 1.2 each side and snaps its ends
/// out to labelled values, so every value lies between two labels; it
/// labels 1-2-3…9 of a decade when it spans less than one, else 1-2-5,
/// else decades (every second or more when there are many). A linear axis
/// starts at zero (or below, for negative data), ends 5 % above the data,
/// and labels multiples of 1, 2, 2.5 or 5 × 10ⁿ. Labels are unique and
/// print no trailing zeros ("10", not "10.0").
pub fn scale(lo: f64, hi: f64, log: bool, max_labels: usize) -> Scale {
    let max_labels = max_labels.max(3);
    if log {
        log_scale(lo, hi, max_labels)
    } else {
        linear_scale(lo, hi, max_labels)
    }
}

fn log_scale(lo: f64, hi: f64, max_labels: usize) -> Scale {
    let (lo, hi) = if lo > 0.0 && hi >= lo && hi.is_finite() {
        (lo, hi)
    } else {
        (1.0, 10.0)
    };
    let (lo, hi) = (lo / 1.2, hi * 1.2);
    let span = (hi / lo).log10();
    let mut choices: Vec<(&[u32], i32)> = Vec::new();
    if span < 1.0 {
        choices.push((&[1, 2, 3, 4, 5, 6, 7, 8, 9], 1));
    }
    choices.push((&[1, 2, 5], 1));
    for every in 1..=12 {
        choices.push((&[1], every));
    }
    let mut chosen = Vec::new();
    for (mantissas, every) in choices {
        chosen = log_ticks(lo, hi, mantissas, every);
        if chosen.len() <= max_labels {
            break;
        }
    }
    let value = |&(m, e): &(u32, i32)| f64::from(m) * 10f64.powi(e);
    let axis = Axis {
        lo: chosen.first().map_or(lo, value),
        hi: chosen.last().map_or(hi, value),
        log: true,
    };
    let ticks: Vec<Tick> = chosen
        .iter()
        .map(|t| Tick {
            value: value(t),
            label: log_label(t.0, t.1),
        })
        .collect();
    let (e0, e1) = (
        axis.lo.log10().floor() as i32,
        axis.hi.log10().ceil() as i32,
    );
    let mut minor = Vec::new();
    if e1 - e0 <= 8 {
        for e in e0..=e1 {
            for m in 1..=9u32 {
                let v = f64::from(m) * 10f64.powi(e);
                let inside = v >= axis.lo * (1.0 - 1e-9) && v <= axis.hi * (1.0 + 1e-9);
                if inside && !ticks.iter().any(|t| close(t.value, v)) {
                    minor.push(v);
                }
            }
        }
    }
    Scale { axis, ticks, minor }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// The values `m × 10^e` (`m` from `mantissas`, `e` a multiple of `every`)
/// from the largest at or below `lo` to the smallest at or above `hi`.
fn log_ticks(lo: f64, hi: f64, mantissas: &[u32], every: i32) -> Vec<(u32, i32)> {
    let e_lo = lo.log10().floor() as i32 - 1;
    let e_hi = hi.log10().ceil() as i32 + 1;
    let e_lo = e_lo.div_euclid(every) * every;
    let mut all = Vec::new();
    let mut e = e_lo;
    while e <= e_hi + every {
        for &m in mantissas {
            all.push((m, e));
        }
        e += every;
    }
    let value = |&(m, e): &(u32, i32)| f64::from(m) * 10f64.powi(e);
    let first = all
        .iter()
        .rposition(|t| value(t) <= lo * (1.0 + 1e-9))
        .unwrap_or(0);
    let last = all
        .iter()
        .position(|t| value(t) >= hi * (1.0 - 1e-9))
        .unwrap_or(all.len() - 1);
    all[first..=last].to_vec()
}

/// `m × 10^e` printed without float noise or needless zeros.
fn log_label(m: u32, e: i32) -> String {
    if (0..=6).contains(&e) {
        (u64::from(m) * 10u64.pow(e as u32)).to_string()
    } else if (-5..0).contains(&e) {
        format!("0.{}{m}", "0".repeat((-e - 1) as usize))
    } else {
        format!("{m}e{e}")
    }
}

fn linear_scale(lo: f64, hi: f64, max_labels: usize) -> Scale {
    let (lo, hi) = if lo.is_finite() && hi.is_finite() && hi >= lo {
        (lo, hi)
    } else {
        (0.0, 1.0)
    };
    let mut lo = lo.min(0.0);
    let mut hi = if hi > lo { hi } else { lo + 1.0 };
    let span = hi - lo;
    if lo < 0.0 {
        lo -= 0.05 * span;
    }
    hi += 0.05 * span;
    // The smallest step of 1, 2, 2.5 or 5 × 10ⁿ that keeps the labels
    // within the budget.
    let raw = (hi - lo) / (max_labels - 1) as f64;
    let mut k = raw.log10().floor() as i32;
    let (mantissa, step) = loop {
        let base = 10f64.powi(k);
        if let Some(&m) = [1.0, 2.0, 2.5, 5.0]
            .iter()
            .find(|&&m| m * base >= raw * (1.0 - 1e-9))
        {
            break (m, m * base);
        }
        k += 1;
    };
    let decimals = ((-k).max(0) + i32::from(mantissa == 2.5)) as usize;
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    let ticks = (first..=last)
        .map(|i| {
            let value = i as f64 * step;
            Tick {
                value,
                label: trim_number(&format!("{value:.decimals$}")),
            }
        })
        .collect::<Vec<_>>();
    let minor_step = if mantissa == 2.5 {
        step / 5.0
    } else {
        step / 2.0
    };
    let minor = ((lo / minor_step - 1e-9).ceil() as i64..=(hi / minor_step + 1e-9).floor() as i64)
        .map(|i| i as f64 * minor_step)
        .filter(|v| {
            !ticks
                .iter()
                .any(|t| (t.value - v).abs() < minor_step * 1e-6)
        })
        .collect();
    Scale {
        axis: Axis { lo, hi, log: false },
        ticks,
        minor,
    }
}

/// "10.50" → "10.5", "10.0" → "10", "-0" → "0".
fn trim_number(s: &str) -> String {
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    };
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_scale(s: &Scale, data: &[f64], max_labels: usize) {
        let labels: Vec<&str> = s.ticks.iter().map(|t| t.label.as_str()).collect();
        let mut unique = labels.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), labels.len(), "duplicate labels {labels:?}");
        assert!(
            s.ticks.len() >= 2 && s.ticks.len() <= max_labels,
            "{labels:?}"
        );
        for t in &s.ticks {
            assert!(
                !t.label.ends_with(".0") && !t.label.contains(".0e"),
                "{labels:?}"
            );
            let slack = 1e-9 * t.value.abs().max(1e-300);
            assert!(
                t.value >= s.axis.lo - slack && t.value <= s.axis.hi + slack,
                "label {} outside {:?}",
                t.label,
                s.axis
            );
            assert_eq!(
                t.label
                    .parse::<f64>()
                    .ok()
                    .map(|v| close(v, t.value) || v == t.value),
                Some(true),
                "{}",
                t.label
            );
        }
        let (first, last) = (s.ticks[0].value, s.ticks[s.ticks.len() - 1].value);
        for &v in data {
            assert!(v >= s.axis.lo && v <= s.axis.hi, "{v} outside {:?}", s.axis);
            // Every value lies between two labels: none below the lowest
            // or above the highest (C3's 43 ms under a lowest label of 100).
            if s.axis.log {
                assert!(v >= first && v <= last, "{v} outside labels {labels:?}");
            } else {
                // Linear: the grid goes on, so within a step of a label.
                let step = s.ticks[1].value - s.ticks[0].value;
                assert!(
                    v >= first - step && v <= last + step,
                    "{v} far from {labels:?}"
                );
            }
            if s.axis.log {
                let d = 10f64.powf(v.log10().floor());
                assert!(
                    s.ticks
                        .iter()
                        .any(|t| t.value >= d * (1.0 - 1e-9) && t.value <= d * 10.0 * (1.0 + 1e-9)),
                    "no label in the decade of {v}: {labels:?}"
                );
            }
        }
    }

    #[test]
    fn log_ticks_label_every_decade_of_the_data_once_inside_the_range() {
        let cases: &[&[f64]] = &[
            &[43.0, 50.0, 60.0, 1300.0],      // C3: 43 ms published, ~50 ms bbr
            &[0.9, 1.05, 10.0, 100.0, 380.0], // C7's RTT in seconds
            &[10.0, 300.0, 4000.0],           // C7's buffer sizes
            &[0.001, 0.01, 5.0, 50.0],        // C1's loss rates
            &[45.0, 52.0, 60.0],              // less than a decade
            &[1e-6, 1e3],
            &[7.0, 7.0],
        ];
        for data in cases {
            let lo = data.iter().copied().fold(f64::MAX, f64::min);
            let hi = data.iter().copied().fold(f64::MIN, f64::max);
            for max_labels in [8, 11, 13] {
                let s = scale(lo, hi, true, max_labels);
                check_scale(&s, data, max_labels);
            }
        }
        // C3 concretely: a label below the 43 ms marker, none repeated.
        let s = scale(43.0, 1300.0, true, 12);
        let labels: Vec<&str> = s.ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["20", "50", "100", "200", "500", "1000", "2000"]);
        // C7's axes: no "10.0", no "100.0".
        let s = scale(0.9, 380.0, true, 13);
        let labels: Vec<&str> = s.ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(
            labels,
            ["0.5", "1", "2", "5", "10", "20", "50", "100", "200", "500"]
        );
    }

    #[test]
    fn linear_ticks_are_unique_round_and_cover_the_data() {
        for (lo, hi) in [
            (0.0, 10.0),
            (0.0, 120.0),
            (0.0, 3.0),
            (-2.0, 7.5),
            (0.2, 0.35),
            (0.0, 1e-7),
            (5.0, 5.0),
        ] {
            for max_labels in [6, 11, 14] {
                let s = scale(lo, hi, false, max_labels);
                check_scale(&s, &[lo, hi], max_labels);
            }
        }
        let s = scale(0.0, 10.0, false, 12);
        assert!(s.ticks.iter().any(|t| t.label == "10"));
        assert!(s.ticks.iter().all(|t| !t.label.contains('.')));
    }
}
