//! Propagation delay that changes over time: a route change, or a LEO
//! satellite path whose delay is rescheduled every 15 s.
//!
//! A direction's `delay_schedule` replaces its constant `delay`. Two
//! forms:
//!
//! ```toml
//! # Steps: from each `at`, the delay is `delay` (the first step must be at 0).
//! delay_schedule = [{ at = "0s", delay = "20ms" }, { at = "10s", delay = "80ms" }]
//! # Periodic: the delay takes `values` in turn, one per `every`, and
//! # starts again from the first after the last (deterministic, no seed).
//! delay_schedule = { every = "15s", values = ["25ms", "40ms", "32ms"] }
//! # Either, as a table with `reorder = true`: a packet that leaves after
//! # the delay drops may overtake those still on the longer path.
//! delay_schedule = { steps = [{ at = "0s", delay = "40ms" }, { at = "3s", delay = "20ms" }], reorder = true }
//! ```
//!
//! The schedule is looked up at the moment a packet leaves the link's
//! queue (its serialisation done). A packet never arrives before one that
//! left earlier on the same direction: its arrival is
//! `max(previous arrival, leave time + delay(leave time))`. When the delay
//! drops, the packets behind the change wait for those ahead, as they
//! would on one wire; a scheduled direction therefore never reorders,
//! unless the schedule says `reorder = true`: then a drop is a route
//! change to a shorter path, and what leaves after it may arrive before
//! what is still on the longer one (reordering as real route changes
//! cause it, which TCP's loss detection reads as loss until the late
//! packets arrive).

use crate::units::serde_units::Dur;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;

/// Most steps or values a delay schedule may have.
pub const MAX_DELAY_STEPS: usize = 100_000;

/// Longest delay a schedule may give (one minute), so arrival times stay
/// far from overflow in any run the scenario limits allow.
pub const MAX_DELAY_NS: u64 = 60_000_000_000;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StepTable {
    at: Dur,
    delay: Dur,
}

/// The table form: `{ every, values }`, or `{ steps }`, either with
/// `reorder`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScheduleTable {
    every: Option<Dur>,
    values: Option<Vec<Dur>>,
    steps: Option<Vec<StepTable>>,
    reorder: Option<bool>,
}

/// The written forms. Not `#[serde(untagged)]`: that would hide a
/// bad value inside a step behind "did not match any variant".
enum ScheduleText {
    Steps(Vec<StepTable>),
    Table(ScheduleTable),
}

impl<'de> Deserialize<'de> for ScheduleText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ScheduleText;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "an array of `{ at, delay }` steps, or a table `{ every, values }` or `{ steps }` (either may add `reorder`)",
                )
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<ScheduleText, A::Error> {
                Vec::<StepTable>::deserialize(de::value::SeqAccessDeserializer::new(a))
                    .map(ScheduleText::Steps)
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<ScheduleText, A::Error> {
                ScheduleTable::deserialize(de::value::MapAccessDeserializer::new(a))
                    .map(ScheduleText::Table)
            }
        }
        d.deserialize_any(V)
    }
}

/// A delay schedule, checked.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "ScheduleText")]
pub struct DelaySchedule {
    /// How the delay changes.
    pub shape: DelayShape,
    /// Whether a packet that leaves after a drop may overtake those still
    /// on the longer path (a route change), rather than wait behind them.
    pub reorder: bool,
}

/// How a scheduled delay changes over time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DelayShape {
    /// (from ns, delay ns), ascending, the first at 0.
    Steps(Vec<(u64, u64)>),
    /// The delay is `values[(t / every_ns) % values.len()]`.
    Periodic {
        /// Period of each value, ns.
        every_ns: u64,
        /// Delays taken in turn, ns.
        values: Vec<u64>,
    },
}

impl DelaySchedule {
    /// A schedule that keeps packets in order (the default).
    pub fn in_order(shape: DelayShape) -> Self {
        DelaySchedule {
            shape,
            reorder: false,
        }
    }
}

impl TryFrom<ScheduleText> for DelaySchedule {
    type Error = String;
    fn try_from(t: ScheduleText) -> Result<Self, String> {
        let check = |d: u64| {
            if d > MAX_DELAY_NS {
                Err(format!(
                    "a delay of {} ms; allowed up to 60 s",
                    d as f64 / 1e6
                ))
            } else {
                Ok(d)
            }
        };
        let steps = |steps: Vec<StepTable>| -> Result<DelayShape, String> {
            if steps.is_empty() {
                return Err(
                    "an empty schedule; give at least `[{ at = \"0s\", delay = \"20ms\" }]`".into(),
                );
            }
            if steps.len() > MAX_DELAY_STEPS {
                return Err(format!(
                    "{} steps; allowed up to {MAX_DELAY_STEPS}",
                    steps.len()
                ));
            }
            if steps[0].at.0 != 0 {
                return Err("the first step must be at \"0s\"".into());
            }
            let mut out = Vec::with_capacity(steps.len());
            for (i, s) in steps.iter().enumerate() {
                if i > 0 && s.at.0 <= steps[i - 1].at.0 {
                    return Err(format!(
                        "step {i}: `at` must be later than the step before it"
                    ));
                }
                out.push((s.at.0, check(s.delay.0)?));
            }
            Ok(DelayShape::Steps(out))
        };
        match t {
            ScheduleText::Steps(s) => Ok(DelaySchedule::in_order(steps(s)?)),
            ScheduleText::Table(t) => {
                let shape = match (t.steps, t.every, t.values) {
                    (Some(s), None, None) => steps(s)?,
                    (None, Some(every), Some(values)) => {
                        if every.0 == 0 {
                            return Err("`every` must be positive, e.g. \"15s\"".into());
                        }
                        if values.is_empty() || values.len() > MAX_DELAY_STEPS {
                            return Err(format!(
                                "{} values; give 1 to {MAX_DELAY_STEPS} delays in `values`",
                                values.len()
                            ));
                        }
                        let values = values
                            .iter()
                            .map(|d| check(d.0))
                            .collect::<Result<Vec<_>, _>>()?;
                        DelayShape::Periodic {
                            every_ns: every.0,
                            values,
                        }
                    }
                    _ => {
                        return Err(
                            "a table schedule takes `steps`, or both `every` and `values` (and may add `reorder`)"
                                .into(),
                        )
                    }
                };
                Ok(DelaySchedule {
                    shape,
                    reorder: t.reorder.unwrap_or(false),
                })
            }
        }
    }
}

impl DelaySchedule {
    /// The one-way delay at `t_ns`.
    pub fn delay_at(&self, t_ns: u64) -> u64 {
        match &self.shape {
            DelayShape::Steps(steps) => {
                // The last step at or before t (the first is at 0).
                let i = steps.partition_point(|s| s.0 <= t_ns);
                steps[i.max(1) - 1].1
            }
            DelayShape::Periodic { every_ns, values } => {
                values[((t_ns / every_ns) % values.len() as u64) as usize]
            }
        }
    }

    /// The smallest delay the schedule ever gives.
    pub fn min_delay_ns(&self) -> u64 {
        match &self.shape {
            DelayShape::Steps(s) => s.iter().map(|x| x.1).min().unwrap_or(0),
            DelayShape::Periodic { values, .. } => values.iter().copied().min().unwrap_or(0),
        }
    }

    /// The largest delay the schedule ever gives.
    pub fn max_delay_ns(&self) -> u64 {
        match &self.shape {
            DelayShape::Steps(s) => s.iter().map(|x| x.1).max().unwrap_or(0),
            DelayShape::Periodic { values, .. } => values.iter().copied().max().unwrap_or(0),
        }
    }
}

/// Applies a [`DelaySchedule`] to the packets leaving one direction, in
/// the order they leave, keeping them in order on the wire.
#[derive(Clone, Debug)]
pub struct ScheduledDelay {
    schedule: DelaySchedule,
    last_arrive_ns: u64,
}

impl ScheduledDelay {
    /// A wire with `schedule` and nothing on it yet.
    pub fn new(schedule: DelaySchedule) -> Self {
        ScheduledDelay {
            schedule,
            last_arrive_ns: 0,
        }
    }

    /// When a packet that leaves the queue at `leave_ns` reaches the far
    /// end: `max(previous arrival, leave + delay(leave))`, or without the
    /// `max` for a schedule that reorders.
    pub fn arrive_ns(&mut self, leave_ns: u64) -> u64 {
        let t = leave_ns.saturating_add(self.schedule.delay_at(leave_ns));
        if self.schedule.reorder {
            return t;
        }
        let t = t.max(self.last_arrive_ns);
        self.last_arrive_ns = t;
        t
    }

    /// The schedule.
    pub fn schedule(&self) -> &DelaySchedule {
        &self.schedule
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct T {
        delay_schedule: DelaySchedule,
    }

    fn parse(s: &str) -> Result<DelaySchedule, String> {
        toml::from_str::<T>(s)
            .map(|t| t.delay_schedule)
            .map_err(|e| e.to_string())
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn steps_hold_from_their_time_on() {
        let s = parse(
            r#"delay_schedule = [{ at = "0s", delay = "20ms" }, { at = "10s", delay = "80ms" }]"#,
        )
        .unwrap();
        assert_eq!(s.delay_at(0), 20 * MS);
        assert_eq!(s.delay_at(10_000 * MS - 1), 20 * MS);
        assert_eq!(s.delay_at(10_000 * MS), 80 * MS);
        assert_eq!(s.delay_at(u64::MAX), 80 * MS);
        assert_eq!(s.min_delay_ns(), 20 * MS);
    }

    #[test]
    fn periodic_values_cycle() {
        let s = parse(r#"delay_schedule = { every = "15s", values = ["25ms", "40ms", "30ms"] }"#)
            .unwrap();
        let at = |sec: u64| s.delay_at(sec * 1000 * MS) / MS;
        assert_eq!(
            [at(0), at(14), at(15), at(30), at(44), at(45)],
            [25, 25, 40, 30, 30, 25]
        );
    }

    #[test]
    fn bad_schedules_say_what_is_allowed() {
        for (text, want) in [
            (r#"delay_schedule = []"#, "empty schedule"),
            (
                r#"delay_schedule = [{ at = "1s", delay = "20ms" }]"#,
                "first step must be at",
            ),
            (
                r#"delay_schedule = [{ at = "0s", delay = "2ms" }, { at = "0s", delay = "3ms" }]"#,
                "later than the step before",
            ),
            (
                r#"delay_schedule = { every = "0s", values = ["1ms"] }"#,
                "`every` must be positive",
            ),
            (
                r#"delay_schedule = { every = "1s", values = [] }"#,
                "give 1 to",
            ),
            (
                r#"delay_schedule = [{ at = "0s", delay = "61s" }]"#,
                "allowed up to 60 s",
            ),
            (
                r#"delay_schedule = { every = "1s", reorder = true }"#,
                "takes `steps`, or both `every` and `values`",
            ),
            (
                r#"delay_schedule = { steps = [{ at = "0s", delay = "2ms" }], every = "1s", values = ["1ms"] }"#,
                "takes `steps`, or both",
            ),
            (
                r#"delay_schedule = { steps = [], reorder = true }"#,
                "empty schedule",
            ),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn a_delay_drop_never_reorders() {
        let s = DelaySchedule::in_order(DelayShape::Steps(vec![(0, 80 * MS), (10 * MS, 20 * MS)]));
        let mut w = ScheduledDelay::new(s);
        // Leaves at 9 ms with 80 ms: arrives at 89 ms.
        assert_eq!(w.arrive_ns(9 * MS), 89 * MS);
        // Leaves at 10 ms with 20 ms would arrive at 30 ms: waits for 89.
        assert_eq!(w.arrive_ns(10 * MS), 89 * MS);
        // Once the wire has drained, the new delay holds.
        assert_eq!(w.arrive_ns(100 * MS), 120 * MS);
    }

    #[test]
    fn a_reordering_schedule_lets_packets_after_a_drop_overtake() {
        let s = parse(
            r#"delay_schedule = { steps = [{ at = "0s", delay = "80ms" }, { at = "10ms", delay = "20ms" }], reorder = true }"#,
        )
        .unwrap();
        assert!(s.reorder);
        assert_eq!(s.max_delay_ns(), 80 * MS);
        let mut w = ScheduledDelay::new(s);
        assert_eq!(w.arrive_ns(9 * MS), 89 * MS);
        // The shorter path: arrives at 30 ms, before the packet ahead.
        assert_eq!(w.arrive_ns(10 * MS), 30 * MS);
        let p = parse(r#"delay_schedule = { every = "1s", values = ["5ms"], reorder = true }"#)
            .unwrap();
        assert!(p.reorder && p.delay_at(0) == 5 * MS);
        assert!(
            !parse(r#"delay_schedule = { every = "1s", values = ["5ms"] }"#)
                .unwrap()
                .reorder
        );
    }
}
