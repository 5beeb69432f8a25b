//! A case's checks and how a run is judged by them.
//!
//! Every check reads what any implementation exposes through the
//! simulator's sender: the time series of delivered bytes, inflight,
//! retransmissions and the bottleneck's queue, sampled every
//! `sample_interval`. The state checks also read the controller's mode;
//! for an implementation that does not expose one they are skipped, and
//! say so. A state visit shorter than the sampling interval can be
//! missed; the grid samples at an eighth of the round trip.

use runner::run::FlowSample;
use serde::Serialize;

/// A time in a case: a number of the path's base round trips (`"20rtt"`)
/// or of seconds (`"5s"`, `"200ms"`), from the flow's start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum When {
    /// Round trips of the grid point's base RTT.
    Rtts(f64),
    /// Seconds.
    Seconds(f64),
}

impl When {
    /// `"20rtt"`, `"1.5rtt"`, `"5s"`, `"200ms"`, `"0"`.
    pub fn parse(s: &str) -> Result<When, String> {
        let t = s.trim();
        let num = |n: &str| -> Result<f64, String> {
            n.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| format!("`{s}`: expected a number ≥ 0 with rtt, s or ms (e.g. \"20rtt\", \"5s\", \"200ms\")"))
        };
        if let Some(n) = t.strip_suffix("rtt") {
            Ok(When::Rtts(num(n)?))
        } else if let Some(n) = t.strip_suffix("ms") {
            Ok(When::Seconds(num(n)? / 1e3))
        } else if let Some(n) = t.strip_suffix('s') {
            Ok(When::Seconds(num(n)?))
        } else if t == "0" {
            Ok(When::Seconds(0.0))
        } else {
            Err(format!(
                "`{s}`: expected a number with rtt, s or ms (e.g. \"20rtt\", \"5s\", \"200ms\")"
            ))
        }
    }

    /// Nanoseconds on a path of base RTT `rtt_ns`.
    pub fn ns(self, rtt_ns: u64) -> u64 {
        match self {
            When::Rtts(r) => (r * rtt_ns as f64).round() as u64,
            When::Seconds(s) => (s * 1e9).round() as u64,
        }
    }

    fn text(self) -> String {
        match self {
            When::Rtts(r) => format!("{r} RTT"),
            When::Seconds(s) if s < 1.0 => format!("{} ms", s * 1e3),
            When::Seconds(s) => format!("{s} s"),
        }
    }
}

/// One check with the reason for its bound.
#[derive(Clone, Debug)]
pub struct Check {
    /// What is checked.
    pub kind: CheckKind,
    /// Why the bound is what it is.
    pub why: String,
}

/// What a check asserts.
#[derive(Clone, Debug)]
pub enum CheckKind {
    /// The flow is in `state` at some point and leaves it by `within`.
    StateLeft { state: String, within: When },
    /// The flow is in `state` at some time in [`from`, `within`].
    StateEntered {
        state: String,
        from: When,
        within: When,
    },
    /// The flow is never in `state` in [`from`, `to`] (`to`: the end).
    StateAbsent {
        state: String,
        from: When,
        to: Option<When>,
    },
    /// Every visit to `state` lasts at most `within` (plus a sample).
    StateDurationAtMost { state: String, within: When },
    /// The flow visits `state` in [`from`, `to`], and every such visit
    /// that ends before the run does ends in one of `next`: the draft's
    /// transitions (UP to DOWN, DOWN to CRUISE, REFILL to UP, ...).
    StateFollowedBy {
        state: String,
        next: Vec<String>,
        from: When,
        to: Option<When>,
    },
    /// Inflight stays at most `bdp` × BDP + `packets` × MSS in [`from`, `to`].
    InflightAtMost {
        bdp: f64,
        packets: f64,
        from: When,
        to: Option<When>,
    },
    /// Delivery over [`from`, `to`] is at least `fraction` of `mbps` (or of
    /// the bottleneck's rate).
    GoodputAtLeast {
        fraction: f64,
        mbps: Option<f64>,
        from: When,
        to: Option<When>,
    },
    /// The bottleneck's queueing delay stays at most `rtt` base RTTs in
    /// [`from`, `to`].
    QueueDelayAtMost {
        rtt: f64,
        packets: f64,
        from: When,
        to: Option<When>,
    },
    /// Retransmitted packets are at most `fraction` of those sent in
    /// [`from`, `to`] (the whole run by default).
    RetransmittedAtMost {
        fraction: f64,
        from: When,
        to: Option<When>,
    },
    /// The controller's bandwidth estimate stays at most `mbps` in
    /// [`from`, `to`] (skipped for a controller that reports none).
    BwEstimateAtMost {
        mbps: f64,
        from: When,
        to: Option<When>,
    },
    /// The controller's bandwidth estimate stays at least `mbps` in
    /// [`from`, `to`] (skipped for a controller that reports none).
    BwEstimateAtLeast {
        mbps: f64,
        from: When,
        to: Option<When>,
    },
}

impl CheckKind {
    /// Whether it reads the controller's state.
    pub fn reads_state(&self) -> bool {
        matches!(
            self,
            CheckKind::StateLeft { .. }
                | CheckKind::StateEntered { .. }
                | CheckKind::StateAbsent { .. }
                | CheckKind::StateDurationAtMost { .. }
                | CheckKind::StateFollowedBy { .. }
        )
    }

    /// The check in words, as the report states it.
    pub fn text(&self) -> String {
        let end = |to: &Option<When>| to.map_or("the end".to_string(), When::text);
        match self {
            CheckKind::StateLeft { state, within } => {
                format!("leaves {state} within {}", within.text())
            }
            CheckKind::StateEntered {
                state,
                from,
                within,
            } => format!("in {state} between {} and {}", from.text(), within.text()),
            CheckKind::StateAbsent { state, from, to } => {
                format!("never in {state} from {} to {}", from.text(), end(to))
            }
            CheckKind::StateDurationAtMost { state, within } => {
                format!("each {state} lasts at most {}", within.text())
            }
            CheckKind::StateFollowedBy {
                state,
                next,
                from,
                to,
            } => format!(
                "each {state} begun from {} to {} is followed by {}",
                from.text(),
                end(to),
                next.join(" or ")
            ),
            CheckKind::InflightAtMost {
                bdp,
                packets,
                from,
                to,
            } => format!(
                "inflight ≤ {bdp} BDP + {packets} packets from {} to {}",
                from.text(),
                end(to)
            ),
            CheckKind::GoodputAtLeast {
                fraction,
                mbps,
                from,
                to,
            } => format!(
                "goodput ≥ {} % of {} from {} to {}",
                pct(*fraction),
                mbps.map_or("the link".to_string(), |m| format!("{m} Mbit/s")),
                from.text(),
                end(to)
            ),
            CheckKind::QueueDelayAtMost {
                rtt,
                packets,
                from,
                to,
            } => format!(
                "queueing delay ≤ {rtt} RTT + {packets} packets from {} to {}",
                from.text(),
                end(to)
            ),
            CheckKind::RetransmittedAtMost { fraction, from, to } => {
                if *from == When::Rtts(0.0) && to.is_none() {
                    format!("retransmitted ≤ {} % of packets sent", pct(*fraction))
                } else {
                    format!(
                        "retransmitted ≤ {} % of packets sent from {} to {}",
                        pct(*fraction),
                        from.text(),
                        end(to)
                    )
                }
            }
            CheckKind::BwEstimateAtMost { mbps, from, to } => format!(
                "bandwidth estimate ≤ {mbps} Mbit/s from {} to {}",
                from.text(),
                end(to)
            ),
            CheckKind::BwEstimateAtLeast { mbps, from, to } => format!(
                "bandwidth estimate ≥ {mbps} Mbit/s from {} to {}",
                from.text(),
                end(to)
            ),
        }
    }
}

/// What a check found on one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// Within the bound; what was measured.
    Pass { measured: String },
    /// Outside it; what was measured against what was allowed.
    Fail { measured: String, allowed: String },
    /// Not judged, and why.
    Skipped { why: String },
}

impl Outcome {
    /// Whether it failed.
    pub fn failed(&self) -> bool {
        matches!(self, Outcome::Fail { .. })
    }
}

/// The path a run was on, for the checks' units.
#[derive(Clone, Copy, Debug)]
pub struct Path {
    /// Base round trip, ns.
    pub rtt_ns: u64,
    /// Bottleneck rate, bit/s.
    pub rate_bps: f64,
    /// Bytes per packet on the wire the window counts (the MSS).
    pub mss: u64,
}

impl Path {
    /// The bandwidth-delay product, bytes.
    pub fn bdp_bytes(&self) -> f64 {
        self.rate_bps / 8.0 * self.rtt_ns as f64 / 1e9
    }
}

/// A fraction as a percentage with at most four significant decimals and
/// no float noise (0.035 is "3.5", not "3.5000000000000004").
fn pct(fraction: f64) -> String {
    let t = format!("{:.4}", fraction * 100.0);
    let t = t.trim_end_matches('0').trim_end_matches('.');
    t.to_string()
}

fn ms(ns: u64) -> String {
    format!("{:.1} ms", ns as f64 / 1e6)
}

/// Judges one check on one flow's samples (in time order). `no_state`
/// says why the controller's state cannot be read, if it cannot.
pub fn judge(check: &CheckKind, s: &[FlowSample], path: &Path, no_state: Option<&str>) -> Outcome {
    if let (true, Some(why)) = (check.reads_state(), no_state) {
        return Outcome::Skipped { why: why.into() };
    }
    let Some(last) = s.last() else {
        return Outcome::Fail {
            measured: "no samples".into(),
            allowed: "a run with samples".into(),
        };
    };
    let end_ns = last.t_ns;
    let at = |w: When| w.ns(path.rtt_ns);
    let until = |to: &Option<When>| to.map_or(end_ns, at);
    let window = |from: When, to: &Option<When>| {
        let (a, b) = (at(from), until(to));
        s.iter().filter(move |x| x.t_ns >= a && x.t_ns <= b)
    };
    let is = |x: &FlowSample, state: &str| x.mode.name() == state;
    match check {
        CheckKind::StateLeft { state, within } => {
            let Some(first) = s.iter().position(|x| is(x, state)) else {
                return Outcome::Fail {
                    measured: format!("never in {state}"),
                    allowed: format!("in {state}, then out of it"),
                };
            };
            match s[first..].iter().find(|x| !is(x, state)) {
                Some(x) if x.t_ns <= at(*within) => Outcome::Pass {
                    measured: format!("left at {}", ms(x.t_ns)),
                },
                Some(x) => Outcome::Fail {
                    measured: format!("left at {}", ms(x.t_ns)),
                    allowed: format!("by {}", ms(at(*within))),
                },
                None => Outcome::Fail {
                    measured: format!("still in {state} at the end, {}", ms(end_ns)),
                    allowed: format!("out by {}", ms(at(*within))),
                },
            }
        }
        CheckKind::StateEntered {
            state,
            from,
            within,
        } => match s
            .iter()
            .find(|x| x.t_ns >= at(*from) && is(x, state))
            .map(|x| x.t_ns)
        {
            Some(t) if t <= at(*within) => Outcome::Pass {
                measured: format!("in {state} at {}", ms(t)),
            },
            Some(t) => Outcome::Fail {
                measured: format!("first in {state} at {}", ms(t)),
                allowed: format!("between {} and {}", ms(at(*from)), ms(at(*within))),
            },
            None => Outcome::Fail {
                measured: format!("never in {state} after {}", ms(at(*from))),
                allowed: format!("by {}", ms(at(*within))),
            },
        },
        CheckKind::StateAbsent { state, from, to } => {
            match window(*from, to).find(|x| is(x, state)) {
                None => Outcome::Pass {
                    measured: format!("never in {state}"),
                },
                Some(x) => Outcome::Fail {
                    measured: format!("in {state} at {}", ms(x.t_ns)),
                    allowed: format!("not between {} and {}", ms(at(*from)), ms(until(to))),
                },
            }
        }
        CheckKind::StateDurationAtMost { state, within } => {
            // Each visit: from its first sample to the first sample after.
            let step = s
                .windows(2)
                .map(|w| w[1].t_ns - w[0].t_ns)
                .max()
                .unwrap_or(0);
            let (mut longest, mut start) = (0u64, None);
            for x in s {
                match (is(x, state), start) {
                    (true, None) => start = Some(x.t_ns),
                    (false, Some(t0)) => {
                        longest = longest.max(x.t_ns - t0);
                        start = None;
                    }
                    _ => {}
                }
            }
            if let Some(t0) = start {
                longest = longest.max(end_ns - t0);
            }
            let allowed = at(*within) + step;
            if longest <= allowed {
                Outcome::Pass {
                    measured: format!("longest {state} {}", ms(longest)),
                }
            } else {
                Outcome::Fail {
                    measured: format!("a {state} of {}", ms(longest)),
                    allowed: format!("at most {} (one sample included)", ms(allowed)),
                }
            }
        }
        CheckKind::StateFollowedBy {
            state,
            next,
            from,
            to,
        } => {
            let (a, b) = (at(*from), until(to));
            // Each visit begun in [a, b]: when it began and what came after.
            let mut visits: Vec<(u64, Option<&FlowSample>)> = Vec::new();
            let mut prev: Option<&FlowSample> = None;
            for x in s {
                let began = is(x, state) && prev.is_none_or(|p| !is(p, state));
                if began && x.t_ns >= a && x.t_ns <= b {
                    visits.push((x.t_ns, None));
                }
                if let (Some(p), Some(v)) = (prev, visits.last_mut()) {
                    if is(p, state) && !is(x, state) && v.1.is_none() {
                        v.1 = Some(x);
                    }
                }
                prev = Some(x);
            }
            let ended: Vec<(u64, &FlowSample)> = visits
                .iter()
                .filter_map(|(t, n)| n.map(|n| (*t, n)))
                .collect();
            if ended.is_empty() {
                return Outcome::Fail {
                    measured: format!(
                        "no {state} begun between {} and {} ended before the run did",
                        ms(a),
                        ms(b)
                    ),
                    allowed: format!("at least one, followed by {}", next.join(" or ")),
                };
            }
            match ended
                .iter()
                .find(|(_, n)| !next.iter().any(|want| is(n, want)))
            {
                None => Outcome::Pass {
                    measured: format!("{} × {state} → {}", ended.len(), next.join(" or ")),
                },
                Some((t, n)) => Outcome::Fail {
                    measured: format!(
                        "the {state} begun at {} went to {} at {}",
                        ms(*t),
                        n.mode.name(),
                        ms(n.t_ns)
                    ),
                    allowed: format!("{state} → {}", next.join(" or ")),
                },
            }
        }
        CheckKind::InflightAtMost {
            bdp,
            packets,
            from,
            to,
        } => {
            let limit = bdp * path.bdp_bytes() + packets * path.mss as f64;
            let top = window(*from, to).max_by_key(|x| x.inflight_bytes);
            match top {
                Some(x) if x.inflight_bytes as f64 <= limit => Outcome::Pass {
                    measured: format!("at most {} B", x.inflight_bytes),
                },
                Some(x) => Outcome::Fail {
                    measured: format!("{} B at {}", x.inflight_bytes, ms(x.t_ns)),
                    allowed: format!("{limit:.0} B"),
                },
                None => Outcome::Fail {
                    measured: "no samples in the window".into(),
                    allowed: "samples to judge".into(),
                },
            }
        }
        CheckKind::GoodputAtLeast {
            fraction,
            mbps,
            from,
            to,
        } => {
            let (a, b) = (at(*from), until(to));
            let before = s.iter().take_while(|x| x.t_ns <= a).last();
            let upto = s.iter().take_while(|x| x.t_ns <= b).last();
            let (Some(x0), Some(x1)) = (before.or(s.first()), upto) else {
                return Outcome::Fail {
                    measured: "no samples in the window".into(),
                    allowed: "samples to judge".into(),
                };
            };
            let secs = (x1.t_ns.saturating_sub(x0.t_ns)) as f64 / 1e9;
            let got = if secs > 0.0 {
                (x1.delivered_bytes - x0.delivered_bytes) as f64 * 8.0 / secs / 1e6
            } else {
                0.0
            };
            let of = mbps.unwrap_or(path.rate_bps / 1e6);
            if got >= fraction * of {
                Outcome::Pass {
                    measured: format!("{got:.3} Mbit/s"),
                }
            } else {
                Outcome::Fail {
                    measured: format!("{got:.3} Mbit/s"),
                    allowed: format!("≥ {:.3} Mbit/s", fraction * of),
                }
            }
        }
        CheckKind::QueueDelayAtMost {
            rtt,
            packets,
            from,
            to,
        } => {
            // A packet's time at the bottleneck, for the allowance in packets.
            let packet_ns = path.mss as f64 * 8.0 / path.rate_bps * 1e9;
            let limit = (rtt * path.rtt_ns as f64 + packets * packet_ns) as u64;
            match window(*from, to).max_by_key(|x| x.queue_delay_ns) {
                Some(x) if x.queue_delay_ns <= limit => Outcome::Pass {
                    measured: format!("at most {}", ms(x.queue_delay_ns)),
                },
                Some(x) => Outcome::Fail {
                    measured: format!("{} at {}", ms(x.queue_delay_ns), ms(x.t_ns)),
                    allowed: format!("≤ {}", ms(limit)),
                },
                None => Outcome::Fail {
                    measured: "no samples in the window".into(),
                    allowed: "samples to judge".into(),
                },
            }
        }
        CheckKind::BwEstimateAtMost { mbps, from, to }
        | CheckKind::BwEstimateAtLeast { mbps, from, to } => {
            if s.iter().all(|x| x.bw_estimate_bps.is_none()) {
                return Outcome::Skipped {
                    why: "no bandwidth estimate reported".into(),
                };
            }
            let at_most = matches!(check, CheckKind::BwEstimateAtMost { .. });
            let limit = mbps * 1e6;
            let in_window =
                window(*from, to).filter_map(|x| x.bw_estimate_bps.map(|b| (x.t_ns, b)));
            // The sample furthest past the bound's side.
            let worst = if at_most {
                in_window.max_by(|a, b| a.1.total_cmp(&b.1))
            } else {
                in_window.min_by(|a, b| a.1.total_cmp(&b.1))
            };
            let (word, sign) = if at_most {
                ("most", "≤")
            } else {
                ("least", "≥")
            };
            match worst {
                Some((_, b)) if (at_most && b <= limit) || (!at_most && b >= limit) => {
                    Outcome::Pass {
                        measured: format!("at {word} {:.3} Mbit/s", b / 1e6),
                    }
                }
                Some((t, b)) => Outcome::Fail {
                    measured: format!("{:.3} Mbit/s at {}", b / 1e6, ms(t)),
                    allowed: format!("{sign} {mbps} Mbit/s"),
                },
                None => Outcome::Fail {
                    measured: "no estimate in the window".into(),
                    allowed: "an estimate to judge".into(),
                },
            }
        }
        CheckKind::RetransmittedAtMost { fraction, from, to } => {
            // The counters are cumulative: the window's share is the
            // difference between the last sample at its start (none: the
            // run's start) and the last at its end.
            let (a, b) = (at(*from), until(to));
            let base = s.iter().take_while(|x| x.t_ns <= a).last();
            let upto = s.iter().take_while(|x| x.t_ns <= b).last().unwrap_or(last);
            let (sent0, retx0) = match base {
                Some(x) if a > 0 => (x.packets_sent, x.retransmissions),
                _ => (0, 0),
            };
            let sent = upto.packets_sent.saturating_sub(sent0);
            let retx = upto.retransmissions.saturating_sub(retx0);
            let share = if sent == 0 {
                0.0
            } else {
                retx as f64 / sent as f64
            };
            let measured = format!("{retx} of {sent} ({:.2} %)", share * 100.0);
            if share <= *fraction {
                Outcome::Pass { measured }
            } else {
                Outcome::Fail {
                    measured,
                    allowed: format!("≤ {} %", pct(*fraction)),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use congestion::Mode;

    fn sample(t_ms: u64, mode: Mode, inflight: u64, delivered: u64) -> FlowSample {
        FlowSample {
            t_ns: t_ms * 1_000_000,
            flow: 0,
            delivered_bytes: delivered,
            goodput_bps: 0.0,
            rtt_ns: None,
            srtt_ns: None,
            cwnd_bytes: 0,
            pacing_rate_bps: 0.0,
            inflight_bytes: inflight,
            inflight_peak_bytes: inflight,
            mode,
            bw_estimate_bps: None,
            min_rtt_ns: None,
            queue_delay_ns: 0,
            drops: 0,
            packets_sent: 100,
            retransmissions: 3,
            packets_lost: 3,
            delivered_ce: 0,
        }
    }

    const PATH: Path = Path {
        rtt_ns: 10_000_000,
        rate_bps: 8e6,
        mss: 1000,
    };

    #[test]
    fn times_parse_in_round_trips_seconds_and_milliseconds_and_refuse_the_rest() {
        assert_eq!(When::parse("20rtt"), Ok(When::Rtts(20.0)));
        assert_eq!(When::parse("1.5rtt").unwrap().ns(10), 15);
        assert_eq!(When::parse("200ms").unwrap().ns(1), 200_000_000);
        assert_eq!(When::parse("5s"), Ok(When::Seconds(5.0)));
        assert_eq!(When::parse("0"), Ok(When::Seconds(0.0)));
        for bad in ["", "5", "-1s", "xrtt", "5 min"] {
            assert!(When::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn state_checks_pass_fail_and_skip_on_what_the_series_shows() {
        let s = [
            sample(0, Mode::Startup, 0, 0),
            sample(50, Mode::Startup, 0, 0),
            sample(100, Mode::Drain, 0, 0),
            sample(150, Mode::ProbeBwDown, 0, 0),
        ];
        let left = |rtts| CheckKind::StateLeft {
            state: "startup".into(),
            within: When::Rtts(rtts),
        };
        assert!(matches!(
            judge(&left(10.0), &s, &PATH, None),
            Outcome::Pass { .. }
        ));
        assert!(judge(&left(9.0), &s, &PATH, None).failed());
        assert!(matches!(
            judge(&left(1.0), &s, &PATH, Some("no state")),
            Outcome::Skipped { .. }
        ));
        let absent = CheckKind::StateAbsent {
            state: "probe_rtt".into(),
            from: When::Rtts(0.0),
            to: None,
        };
        assert!(!judge(&absent, &s, &PATH, None).failed());
        let drain_short = CheckKind::StateDurationAtMost {
            state: "drain".into(),
            within: When::Seconds(0.0),
        };
        // One 50 ms visit, judged against 0 + one 50 ms sample step.
        assert!(!judge(&drain_short, &s, &PATH, None).failed());
        let startup_short = CheckKind::StateDurationAtMost {
            state: "startup".into(),
            within: When::Seconds(0.0),
        };
        assert!(judge(&startup_short, &s, &PATH, None).failed());
    }

    #[test]
    fn series_checks_read_inflight_goodput_and_retransmissions_in_path_units() {
        // BDP = 1 MB/s × 10 ms = 10,000 B.
        let s = [
            sample(0, Mode::Startup, 5_000, 0),
            sample(1000, Mode::Startup, 12_000, 900_000),
        ];
        let inflight = |bdp| CheckKind::InflightAtMost {
            bdp,
            packets: 1.0,
            from: When::Rtts(0.0),
            to: None,
        };
        assert!(!judge(&inflight(1.2), &s, &PATH, None).failed());
        assert!(judge(&inflight(1.0), &s, &PATH, None).failed());
        // 900 kB in 1 s = 7.2 Mbit/s of the 8.
        let goodput = |fraction| CheckKind::GoodputAtLeast {
            fraction,
            mbps: None,
            from: When::Rtts(0.0),
            to: None,
        };
        assert!(!judge(&goodput(0.9), &s, &PATH, None).failed());
        assert!(judge(&goodput(0.91), &s, &PATH, None).failed());
        let retx = |fraction| CheckKind::RetransmittedAtMost {
            fraction,
            from: When::Rtts(0.0),
            to: None,
        };
        assert!(!judge(&retx(0.03), &s, &PATH, None).failed());
        assert!(judge(&retx(0.02), &s, &PATH, None).failed());
    }

    #[test]
    fn transitions_are_judged_per_visit_in_the_window_and_need_one_that_ended() {
        let s = [
            sample(0, Mode::ProbeBwUp, 0, 0),
            sample(10, Mode::ProbeBwDown, 0, 0),
            sample(20, Mode::ProbeBwCruise, 0, 0),
            sample(30, Mode::ProbeBwDown, 0, 0),
            sample(40, Mode::ProbeBwRefill, 0, 0),
            sample(50, Mode::ProbeBwDown, 0, 0),
        ];
        let followed = |next: &[&str], from: f64, to: Option<f64>| CheckKind::StateFollowedBy {
            state: "probe_bw_down".into(),
            next: next.iter().map(|n| n.to_string()).collect(),
            from: When::Seconds(from),
            to: to.map(When::Seconds),
        };
        // DOWN → CRUISE at 10 ms, DOWN → REFILL at 30 ms; the last DOWN
        // has not ended and is not judged.
        assert!(judge(&followed(&["probe_bw_cruise"], 0.0, None), &s, &PATH, None).failed());
        let both = judge(
            &followed(&["probe_bw_cruise", "probe_bw_refill"], 0.0, None),
            &s,
            &PATH,
            None,
        );
        assert!(
            matches!(&both, Outcome::Pass { measured } if measured.starts_with("2 ×")),
            "{both:?}"
        );
        assert!(!judge(
            &followed(&["probe_bw_refill"], 0.025, None),
            &s,
            &PATH,
            None
        )
        .failed());
        // Only the unfinished visit begins after 45 ms: nothing to judge.
        assert!(judge(
            &followed(&["probe_bw_refill"], 0.045, None),
            &s,
            &PATH,
            None
        )
        .failed());
        assert!(matches!(
            judge(
                &followed(&["probe_bw_refill"], 0.0, None),
                &s,
                &PATH,
                Some("no state")
            ),
            Outcome::Skipped { .. }
        ));
    }

    #[test]
    fn estimate_bounds_and_windowed_retransmissions_read_their_window() {
        let mut s = [
            sample(0, Mode::Startup, 0, 0),
            sample(100, Mode::ProbeBwCruise, 0, 0),
            sample(200, Mode::ProbeBwCruise, 0, 0),
        ];
        for (x, (bw, sent, retx)) in
            s.iter_mut()
                .zip([(5e6, 100, 10), (50e6, 200, 10), (48e6, 400, 12)])
        {
            x.bw_estimate_bps = Some(bw);
            x.packets_sent = sent;
            x.retransmissions = retx;
        }
        let at_least = |mbps, from| CheckKind::BwEstimateAtLeast {
            mbps,
            from: When::Seconds(from),
            to: None,
        };
        assert!(judge(&at_least(45.0, 0.0), &s, &PATH, None).failed());
        assert!(!judge(&at_least(45.0, 0.1), &s, &PATH, None).failed());
        assert!(judge(&at_least(49.0, 0.1), &s, &PATH, None).failed());
        let mut none = s.clone();
        none.iter_mut().for_each(|x| x.bw_estimate_bps = None);
        assert!(matches!(
            judge(&at_least(1.0, 0.0), &none, &PATH, None),
            Outcome::Skipped { .. }
        ));
        // Whole run: 12 of 400 (3 %); from 100 ms: 2 of 200 (1 %).
        let retx = |fraction, from| CheckKind::RetransmittedAtMost {
            fraction,
            from: When::Seconds(from),
            to: None,
        };
        assert!(judge(&retx(0.02, 0.0), &s, &PATH, None).failed());
        assert!(!judge(&retx(0.02, 0.1), &s, &PATH, None).failed());
        assert_eq!(pct(0.035), "3.5");
        assert_eq!(pct(0.001), "0.1");
        assert_eq!(pct(1.0), "100");
    }
}
