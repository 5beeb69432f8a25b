//! The path budget a search may spend, and the paths inside it.
//!
//! A budget bounds every number a path may take: the bottleneck's rate
//! within [R/k, R], the forward one-way delay within [d, d + j] (the
//! reverse stays at d), random loss up to p, and a schedule of at most n
//! pieces of at least t each, each piece with its own rate and delay. A
//! point of the search is a vector in the unit cube, one coordinate per
//! number the budget leaves free ([`Budget::dimensions`]); [`Budget::path`]
//! turns it into the path, so every point the optimizer proposes is a path
//! inside the budget and every path inside it has a point. The ideal a
//! path is judged against is computed for that very path
//! ([`SearchPath::ideal_bits`]).

use std::fmt::Write as _;

/// What a search may choose, and within what.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Budget {
    /// The top of the rate range, bit/s (R).
    pub rate_bps: f64,
    /// The range's ratio k ≥ 1: rates from R/k to R (1 fixes the rate).
    pub rate_ratio: f64,
    /// The shortest forward one-way delay, and the reverse one, ns (d).
    pub delay_ns: u64,
    /// How far the forward delay may rise above d, ns (j; 0 fixes it).
    pub jitter_ns: u64,
    /// The most random loss, a fraction (p; 0: none).
    pub loss: f64,
    /// The most per-packet jitter, ns: each packet's forward delay gains
    /// a uniform draw from 0 to a level the search picks up to this, drawn
    /// independently, so packets overtake (seed 001's "independent
    /// delays"); 0: none.
    pub packet_jitter_ns: u64,
    /// The per-packet jitter drawn from a normal distribution instead:
    /// each packet's extra delay is max(0, Normal(mean, sd)), the search
    /// picking the mean and the standard deviation each up to
    /// `packet_jitter_ns` (seed 001's delays: Normal(60 ms, 40 ms), a
    /// longer tail than a uniform draw).
    pub packet_jitter_normal: bool,
    /// The most pieces the schedule may have (n ≥ 1).
    pub pieces: usize,
    /// The shortest a piece may be, ns (t).
    pub min_piece_ns: u64,
    /// The run, ns.
    pub duration_ns: u64,
    /// The bottleneck's buffer, in BDPs of R and the shortest round trip
    /// (2d).
    pub buffer_bdp: f64,
    /// The queue discipline: `drop-tail`, `codel`, `fq_codel` or `pie`.
    pub aqm: String,
}

/// The largest number of pieces: more is a trace, not a schedule.
pub const MAX_PIECES: usize = 16;

/// The queue disciplines a budget may name.
pub const AQMS: [&str; 4] = ["drop-tail", "codel", "fq_codel", "pie"];

/// The wire size of a full packet, bytes, for the buffer in packets.
const PACKET_BYTES: f64 = 1500.0;

impl Budget {
    /// Checks the budget, saying what is wrong and what is allowed.
    pub fn check(&self) -> Result<(), String> {
        let secs = |ns: u64| ns as f64 / 1e9;
        if !(self.rate_bps.is_finite() && (64e3..=100e9).contains(&self.rate_bps)) {
            return Err(format!(
                "--rate {:.0} bit/s: allowed 64 kbit/s to 100 Gbit/s",
                self.rate_bps
            ));
        }
        if !(self.rate_ratio.is_finite() && self.rate_ratio >= 1.0) {
            return Err(format!(
                "--rate-ratio {}: must be at least 1 (1 fixes the rate at --rate)",
                self.rate_ratio
            ));
        }
        if self.rate_bps / self.rate_ratio < 64e3 {
            return Err(format!(
                "--rate-ratio {}: the lowest rate, {:.0} bit/s, is below the simulator's 64 kbit/s",
                self.rate_ratio,
                self.rate_bps / self.rate_ratio
            ));
        }
        if self.delay_ns < 50_000 || self.delay_ns > 1_000_000_000 {
            return Err(format!(
                "--delay {} s: the one-way delay must be from 50 us to 1 s",
                secs(self.delay_ns)
            ));
        }
        if self.jitter_ns > 1_000_000_000 {
            return Err(format!(
                "--jitter {} s: at most 1 s of extra one-way delay",
                secs(self.jitter_ns)
            ));
        }
        if self.packet_jitter_ns > 2_000_000_000 {
            return Err(format!(
                "--packet-jitter {} s: at most 2 s",
                secs(self.packet_jitter_ns)
            ));
        }
        if self.packet_jitter_normal && self.packet_jitter_ns == 0 {
            return Err(
                "--packet-jitter-dist normal: give --packet-jitter, the most its mean and its standard deviation may be"
                    .into(),
            );
        }
        if !(self.loss.is_finite() && (0.0..=0.5).contains(&self.loss)) {
            return Err(format!(
                "--loss {}: a fraction from 0 to 0.5 (0.01 is 1 %)",
                self.loss
            ));
        }
        if !(1..=MAX_PIECES).contains(&self.pieces) {
            return Err(format!("--pieces {}: from 1 to {MAX_PIECES}", self.pieces));
        }
        if self.duration_ns < 1_000_000_000 || self.duration_ns > 600_000_000_000 {
            return Err(format!(
                "--duration {} s: from 1 s to 600 s",
                secs(self.duration_ns)
            ));
        }
        if self.min_piece_ns == 0 {
            return Err("--min-piece 0: a piece must last some time".into());
        }
        if self.min_piece_ns.saturating_mul(self.pieces as u64) > self.duration_ns {
            return Err(format!(
                "--pieces {} of at least --min-piece {} s need {} s, more than --duration {} s",
                self.pieces,
                secs(self.min_piece_ns),
                secs(self.min_piece_ns * self.pieces as u64),
                secs(self.duration_ns)
            ));
        }
        if !(self.buffer_bdp.is_finite() && (0.01..=100.0).contains(&self.buffer_bdp)) {
            return Err(format!(
                "--buffer {}: from 0.01 to 100 BDPs",
                self.buffer_bdp
            ));
        }
        if !AQMS.contains(&self.aqm.as_str()) {
            return Err(format!("--aqm {}: one of {}", self.aqm, AQMS.join(", ")));
        }
        if self.dimensions().is_empty() {
            return Err(
                "nothing to search: the budget fixes the path (give --rate-ratio above 1, --jitter, --packet-jitter or --loss above 0)"
                    .into(),
            );
        }
        Ok(())
    }

    /// The numbers the budget leaves free, in the order of a point's
    /// coordinates: per piece its rate (if k > 1), its delay (if j > 0)
    /// and its length (if n > 1 and pieces can differ), then the loss (if
    /// p > 0), then the per-packet jitter (if allowed).
    pub fn dimensions(&self) -> Vec<Dim> {
        let mut d = Vec::new();
        let pieces_differ = self.rate_ratio > 1.0 || self.jitter_ns > 0;
        for i in 0..self.pieces {
            if self.rate_ratio > 1.0 {
                d.push(Dim::Rate(i));
            }
            if self.jitter_ns > 0 {
                d.push(Dim::Delay(i));
            }
            if self.pieces > 1 && pieces_differ {
                d.push(Dim::Length(i));
            }
        }
        if self.loss > 0.0 {
            d.push(Dim::Loss);
        }
        if self.packet_jitter_ns > 0 {
            d.push(Dim::PacketJitter);
            if self.packet_jitter_normal {
                d.push(Dim::PacketJitterSd);
            }
        }
        d
    }

    /// The buffer, packets (at least 2).
    pub fn buffer_packets(&self) -> u64 {
        let bdp_bytes = self.rate_bps * 2.0 * self.delay_ns as f64 / 1e9 / 8.0;
        (self.buffer_bdp * bdp_bytes / PACKET_BYTES).ceil().max(2.0) as u64
    }

    /// The path a point stands for. Coordinates outside [0, 1] are
    /// clamped; a point shorter than [`Budget::dimensions`] leaves the
    /// rest at 0.5.
    pub fn path(&self, x: &[f64]) -> SearchPath {
        let dims = self.dimensions();
        let at = |want: Dim| {
            dims.iter()
                .position(|d| *d == want)
                .map(|i| x.get(i).copied().unwrap_or(0.5).clamp(0.0, 1.0))
        };
        let n = self.pieces;
        // Lengths: each piece t, and the rest shared by weight (a floor of
        // 0.05 keeps a weight of 0 from making the share undefined).
        let weights: Vec<f64> = (0..n)
            .map(|i| 0.05 + at(Dim::Length(i)).unwrap_or(0.5))
            .collect();
        let total: f64 = weights.iter().sum();
        let spare = (self.duration_ns - self.min_piece_ns * n as u64) as f64;
        let mut pieces = Vec::with_capacity(n);
        let mut start = 0u64;
        for (i, w) in weights.iter().enumerate() {
            // Whole milliseconds, so the file reads well; the last piece
            // takes what is left.
            let len = self.min_piece_ns as f64 + spare * w / total;
            let rate = match at(Dim::Rate(i)) {
                Some(r) => self.rate_bps / self.rate_ratio.powf(1.0 - r),
                None => self.rate_bps,
            };
            let delay = self.delay_ns
                + at(Dim::Delay(i)).map_or(0, |u| (u * self.jitter_ns as f64).round() as u64);
            // Whole bits per second and microseconds: what the file holds.
            let (rate_bps, delay_ns) = (rate.round(), delay / 1000 * 1000);
            // A piece the same as the one before extends it: no change.
            if !pieces
                .last()
                .is_some_and(|p: &Piece| p.rate_bps == rate_bps && p.delay_ns == delay_ns)
            {
                pieces.push(Piece {
                    start_ns: start,
                    rate_bps,
                    delay_ns,
                });
            }
            start = ((start as f64 + len) / 1e6).round() as u64 * 1_000_000;
        }
        let loss = at(Dim::Loss).map_or(0.0, |u| (u * self.loss * 1e6).round() / 1e6);
        let level =
            |d: Dim| at(d).map(|u| (u * self.packet_jitter_ns as f64 / 1e3).round() as u64 * 1000);
        let packet_jitter_ns = level(Dim::PacketJitter).unwrap_or(0);
        SearchPath {
            pieces,
            loss,
            packet_jitter_ns,
            packet_jitter_sd_ns: level(Dim::PacketJitterSd),
            duration_ns: self.duration_ns,
            reverse_delay_ns: self.delay_ns / 1000 * 1000,
        }
    }
}

/// One free number of a budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    /// Piece i's rate, on a log scale from R/k (0) to R (1).
    Rate(usize),
    /// Piece i's forward delay, from d (0) to d + j (1).
    Delay(usize),
    /// Piece i's share of the time beyond its minimum.
    Length(usize),
    /// The random loss, from 0 to p.
    Loss,
    /// The per-packet jitter's level, from 0 to its most (a normal
    /// jitter's mean).
    PacketJitter,
    /// A normal per-packet jitter's standard deviation, from 0 to the
    /// most.
    PacketJitterSd,
}

/// One piece of a schedule.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Piece {
    /// When it starts, ns.
    pub start_ns: u64,
    /// The bottleneck's rate, bit/s.
    pub rate_bps: f64,
    /// The forward one-way delay, ns.
    pub delay_ns: u64,
}

/// A path inside a budget.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SearchPath {
    /// The schedule, in time order, the first at 0.
    pub pieces: Vec<Piece>,
    /// Random loss on the forward direction, a fraction.
    pub loss: f64,
    /// Per-packet extra forward delay, uniform from 0 to this, ns, each
    /// packet's drawn on its own (packets may overtake); with
    /// `packet_jitter_sd_ns`, the mean of a normal draw.
    pub packet_jitter_ns: u64,
    /// A normal per-packet jitter's standard deviation, ns: the extra
    /// delay is then max(0, Normal(`packet_jitter_ns`, this)).
    pub packet_jitter_sd_ns: Option<u64>,
    /// The run, ns.
    pub duration_ns: u64,
    /// The reverse one-way delay, ns.
    pub reverse_delay_ns: u64,
}

impl SearchPath {
    /// Piece `i`'s end, ns.
    pub fn piece_end_ns(&self, i: usize) -> u64 {
        self.pieces
            .get(i + 1)
            .map_or(self.duration_ns, |p| p.start_ns)
    }

    /// Piece `i`'s base round trip, ns.
    pub fn piece_rtt_ns(&self, i: usize) -> u64 {
        self.pieces[i].delay_ns + self.reverse_delay_ns
    }

    /// The most payload bits the path can deliver from `from_ns` to
    /// `to_ns`: each piece's rate for its time there, less the random
    /// loss, times `payload` (the share of a packet's wire bytes that is
    /// payload).
    pub fn ideal_bits(&self, from_ns: u64, to_ns: u64, payload: f64) -> f64 {
        (0..self.pieces.len())
            .map(|i| {
                let a = self.pieces[i].start_ns.max(from_ns);
                let b = self.piece_end_ns(i).min(to_ns);
                if b > a {
                    self.pieces[i].rate_bps * (b - a) as f64 / 1e9
                } else {
                    0.0
                }
            })
            .sum::<f64>()
            * (1.0 - self.loss)
            * payload
    }

    /// One line per piece, for reports: `0-7.5 s: 12.3 Mbit/s, 25.0 ms`.
    pub fn describe(&self) -> String {
        let mut t = String::new();
        for (i, p) in self.pieces.iter().enumerate() {
            let _ = write!(
                t,
                "{}{:.1}-{:.1} s: {:.2} Mbit/s, {:.1} ms one way",
                if i > 0 { "; " } else { "" },
                p.start_ns as f64 / 1e9,
                self.piece_end_ns(i) as f64 / 1e9,
                p.rate_bps / 1e6,
                p.delay_ns as f64 / 1e6
            );
        }
        if self.loss > 0.0 {
            let _ = write!(t, "; {:.3} % random loss", self.loss * 100.0);
        }
        match (self.packet_jitter_ns, self.packet_jitter_sd_ns) {
            (0, None | Some(0)) => {}
            (m, Some(sd)) => {
                let _ = write!(
                    t,
                    "; per-packet jitter Normal({:.1} ms, {:.1} ms)",
                    m as f64 / 1e6,
                    sd as f64 / 1e6
                );
            }
            (max, None) => {
                let _ = write!(t, "; per-packet jitter up to {:.1} ms", max as f64 / 1e6);
            }
        }
        t
    }

    /// The scenario file: the schedule on `[link.forward]`, a buffer of
    /// `budget`'s size, one flow per entry of `flows` (its `algorithm`
    /// and bbr3 profile), flow k starting at `starts_ns[k]` (to the
    /// microsecond, rounded up so a flow a few hundred ns behind is still
    /// behind; at 0 past the list's end), each with `stack` if given;
    /// `header` lines go first as comments.
    pub fn scenario(
        &self,
        budget: &Budget,
        flows: &[(&str, Option<&str>)],
        starts_ns: &[u64],
        stack: Option<&str>,
        seed: u64,
        header: &[String],
    ) -> String {
        let mut t = String::new();
        for h in header {
            let _ = writeln!(t, "# {h}");
        }
        // Whole seconds or milliseconds where the time is one.
        let us = |ns: u64| match ns {
            n if n % 1_000_000_000 == 0 => format!("{}s", n / 1_000_000_000),
            n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
            n => format!("{}us", n / 1000),
        };
        let min_rtt = self
            .pieces
            .iter()
            .map(|p| p.delay_ns + self.reverse_delay_ns)
            .min()
            .unwrap_or(1_000_000);
        // Half a round trip in whole ms, between 1 and 50 ms, and at most
        // 2,000 samples a flow: fine enough to see a round trip's events.
        let interval = (min_rtt / 2)
            .clamp(1_000_000, 50_000_000)
            .max(self.duration_ns / 2000)
            / 1_000_000
            * 1_000_000;
        let _ = writeln!(t, "name = \"search\"");
        let _ = writeln!(t, "duration = \"{}\"", us(self.duration_ns));
        let _ = writeln!(t, "seed = {seed}");
        let _ = writeln!(t, "sample_interval = \"{}\"", us(interval));
        let _ = writeln!(t, "\n[link.forward]");
        let rates_vary = self
            .pieces
            .iter()
            .any(|p| p.rate_bps != self.pieces[0].rate_bps);
        if rates_vary {
            let steps: Vec<String> = self
                .pieces
                .iter()
                .map(|p| {
                    format!(
                        "{{ at = \"{}\", rate = \"{}bit\" }}",
                        us(p.start_ns),
                        p.rate_bps
                    )
                })
                .collect();
            let _ = writeln!(t, "rate = {{ steps = [ {} ] }}", steps.join(", "));
        } else {
            let _ = writeln!(t, "rate = \"{}bit\"", self.pieces[0].rate_bps);
        }
        let delays_vary = self
            .pieces
            .iter()
            .any(|p| p.delay_ns != self.pieces[0].delay_ns);
        if delays_vary {
            let steps: Vec<String> = self
                .pieces
                .iter()
                .map(|p| {
                    format!(
                        "{{ at = \"{}\", delay = \"{}\" }}",
                        us(p.start_ns),
                        us(p.delay_ns)
                    )
                })
                .collect();
            let _ = writeln!(t, "delay_schedule = {{ steps = [ {} ] }}", steps.join(", "));
        } else {
            let _ = writeln!(t, "delay = \"{}\"", us(self.pieces[0].delay_ns));
        }
        let aqm = match budget.aqm.as_str() {
            "drop-tail" => String::new(),
            a => format!(", aqm = \"{a}\""),
        };
        let _ = writeln!(
            t,
            "queue = {{ limit = \"{}pkt\"{aqm} }}",
            budget.buffer_packets()
        );
        if self.loss > 0.0 {
            let _ = writeln!(t, "loss = {}", self.loss);
        }
        match (self.packet_jitter_ns, self.packet_jitter_sd_ns) {
            (0, None | Some(0)) => {}
            (mean, Some(sd)) => {
                let _ = writeln!(
                    t,
                    "jitter = {{ normal = {{ mean = \"{}\", sd = \"{}\", floor = \"0us\" }}, reorder = true }}",
                    us(mean),
                    us(sd)
                );
            }
            (max, None) => {
                let _ = writeln!(
                    t,
                    "jitter = {{ uniform = {{ min = \"0us\", max = \"{}\" }}, reorder = true }}",
                    us(max)
                );
            }
        }
        let _ = writeln!(
            t,
            "\n[link.reverse]\ndelay = \"{}\"",
            us(self.reverse_delay_ns)
        );
        for (k, (algorithm, profile)) in flows.iter().enumerate() {
            let _ = writeln!(t, "\n[[flow]]");
            if let Some(us) = start_us(starts_ns, k) {
                let _ = writeln!(t, "start = \"{us}us\"");
            }
            let _ = writeln!(t, "algorithm = \"{algorithm}\"");
            if let Some(s) = stack {
                let _ = writeln!(t, "stack = \"{s}\"");
            }
            if let Some(p) = profile {
                let _ = writeln!(t, "[flow.bbr3]\nprofile = \"{p}\"");
            }
        }
        t
    }
}

/// Flow `k`'s start in `starts_ns`, in whole microseconds rounded up;
/// none for a flow at 0 or past the list's end.
pub(crate) fn start_us(starts_ns: &[u64], k: usize) -> Option<u64> {
    starts_ns
        .get(k)
        .filter(|&&ns| ns > 0)
        .map(|ns| ns.div_ceil(1000))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn budget() -> Budget {
        Budget {
            rate_bps: 20e6,
            rate_ratio: 4.0,
            delay_ns: 20_000_000,
            jitter_ns: 10_000_000,
            loss: 0.01,
            packet_jitter_ns: 0,
            packet_jitter_normal: false,
            pieces: 3,
            min_piece_ns: 2_000_000_000,
            duration_ns: 20_000_000_000,
            buffer_bdp: 1.0,
            aqm: "drop-tail".into(),
        }
    }

    #[test]
    fn every_point_is_a_path_inside_the_budget() {
        let b = budget();
        assert_eq!(b.dimensions().len(), 3 * 3 + 1);
        for x in [
            vec![0.0, 0.2, 0.5, 0.5, 0.3, 0.1, 1.0, 1.0, 0.9, 0.0],
            vec![0.3, 0.1, 0.2, 0.9, 0.7, 0.3, 0.1, 0.2, 0.3, 0.4],
            vec![-5.0, 7.0, 0.5, 2.0, 0.1, 0.9, 0.4, 0.6, 0.2, 3.0],
        ] {
            let p = b.path(&x);
            assert_eq!(p.pieces.len(), 3);
            assert_eq!(p.pieces[0].start_ns, 0);
            for (i, q) in p.pieces.iter().enumerate() {
                assert!(q.rate_bps >= 5e6 - 1.0 && q.rate_bps <= 20e6 + 1.0, "{q:?}");
                assert!((20_000_000..=30_000_000).contains(&q.delay_ns), "{q:?}");
                assert!(
                    p.piece_end_ns(i) - q.start_ns >= 2_000_000_000 - 1_000_000,
                    "{p:?}"
                );
            }
            assert!((0.0..=0.01).contains(&p.loss));
        }
        let low = b.path(&[0.0; 10]);
        assert_eq!(low.pieces[0].rate_bps, 5e6);
        assert_eq!(low.loss, 0.0);
        let high = b.path(&[1.0; 10]);
        assert_eq!(high.pieces[0].rate_bps, 20e6);
        assert_eq!(high.pieces[0].delay_ns, 30_000_000);
        assert_eq!(high.loss, 0.01);
        // Pieces alike are one: the schedule has no change there.
        assert_eq!((low.pieces.len(), high.pieces.len()), (1, 1));
        assert_eq!(high.piece_end_ns(0), b.duration_ns);
    }

    #[test]
    fn the_ideal_is_the_schedule_less_the_loss() {
        let b = Budget {
            loss: 0.1,
            ..budget()
        };
        let p = b.path(&[1.0, 0.0, 0.5, 0.0, 0.0, 0.5, 1.0, 0.0, 0.5, 1.0]);
        // 20 Mbit/s then 5 then 20, equal lengths of 20/3 s.
        let whole = p.ideal_bits(0, p.duration_ns, 1.0);
        let expect: f64 = (0..3)
            .map(|i| p.pieces[i].rate_bps * (p.piece_end_ns(i) - p.pieces[i].start_ns) as f64 / 1e9)
            .sum::<f64>()
            * 0.9;
        assert!((whole - expect).abs() < 1.0);
        assert!(
            (expect - (45e6 * 20.0 / 3.0 * 0.9)).abs() / expect < 0.01,
            "{expect}"
        );
        // A window inside the second piece: its rate alone.
        let s = p.pieces[1].start_ns;
        assert!((p.ideal_bits(s, s + 1_000_000_000, 0.5) - 5e6 * 0.9 * 0.5).abs() < 1.0);
    }

    #[test]
    fn a_budget_out_of_range_is_refused_with_what_is_allowed() {
        let cases: Vec<(Budget, &str)> = vec![
            (
                Budget {
                    rate_ratio: 0.5,
                    ..budget()
                },
                "at least 1",
            ),
            (
                Budget {
                    pieces: 0,
                    ..budget()
                },
                "--pieces 0",
            ),
            (
                Budget {
                    pieces: 11,
                    ..budget()
                },
                "more than --duration",
            ),
            (
                Budget {
                    loss: 0.9,
                    ..budget()
                },
                "--loss",
            ),
            (
                Budget {
                    aqm: "red".into(),
                    ..budget()
                },
                "one of drop-tail",
            ),
            (
                Budget {
                    rate_ratio: 1.0,
                    jitter_ns: 0,
                    loss: 0.0,
                    ..budget()
                },
                "nothing to search",
            ),
            (
                Budget {
                    rate_bps: 100e3,
                    ..budget()
                },
                "below the simulator",
            ),
        ];
        for (b, want) in cases {
            let e = b.check().expect_err(want);
            assert!(e.contains(want), "{e}");
        }
        budget().check().expect("the sample budget is valid");
    }

    /// `p`'s scenario file for one `bbr` flow on the QUIC 2018 stack,
    /// checked to hold the jitter line `line` and to be one the simulator
    /// takes.
    fn jitter_file(b: &Budget, p: &SearchPath, line: &str) -> String {
        let text = p.scenario(b, &[("bbr", None)], &[], Some("quic-2018"), 1, &[]);
        assert!(text.contains(line), "{line} missing:\n{text}");
        scenario::parse(
            &text,
            "s.toml",
            std::path::Path::new("."),
            std::path::Path::new("s.toml"),
        )
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
        text
    }

    /// A normal per-packet jitter has two free numbers, its mean and its
    /// standard deviation, and reaches the file as the link's normal
    /// jitter (floored at 0, packets overtaking); without a most it is
    /// refused.
    #[test]
    fn a_normal_packet_jitter_searches_its_mean_and_deviation() {
        let b = Budget {
            rate_ratio: 1.0,
            jitter_ns: 0,
            loss: 0.0,
            packet_jitter_ns: 120_000_000,
            packet_jitter_normal: true,
            pieces: 1,
            ..budget()
        };
        assert_eq!(b.dimensions(), vec![Dim::PacketJitter, Dim::PacketJitterSd]);
        let p = b.path(&[0.5, 1.0 / 3.0]);
        assert_eq!(
            (p.packet_jitter_ns, p.packet_jitter_sd_ns),
            (60_000_000, Some(40_000_000))
        );
        assert!(
            p.describe().contains("Normal(60.0 ms, 40.0 ms)"),
            "{}",
            p.describe()
        );
        jitter_file(
            &b,
            &p,
            "jitter = { normal = { mean = \"60ms\", sd = \"40ms\", floor = \"0us\" }, reorder = true }",
        );
        let e = Budget {
            packet_jitter_ns: 0,
            ..b
        }
        .check()
        .unwrap_err();
        assert!(e.contains("--packet-jitter-dist normal"), "{e}");
    }

    #[test]
    fn per_packet_jitter_is_a_free_number_and_reaches_the_file() {
        let b = Budget {
            rate_ratio: 1.0,
            jitter_ns: 0,
            loss: 0.0,
            packet_jitter_ns: 50_000_000,
            pieces: 1,
            ..budget()
        };
        assert_eq!(b.dimensions(), vec![Dim::PacketJitter]);
        let p = b.path(&[0.5]);
        assert_eq!(p.packet_jitter_ns, 25_000_000);
        let text = jitter_file(
            &b,
            &p,
            "jitter = { uniform = { min = \"0us\", max = \"25ms\" }, reorder = true }",
        );
        assert!(p.describe().contains("per-packet jitter up to 25.0 ms"));
        assert!(text.contains("stack = \"quic-2018\""));
    }

    #[test]
    fn the_scenario_holds_the_schedule() {
        let b = budget();
        let p = b.path(&[1.0, 0.0, 0.5, 0.0, 1.0, 0.5, 1.0, 0.0, 0.5, 0.5]);
        let text = p.scenario(
            &b,
            &[("bbr", None), ("bbr3", Some("linux-v3"))],
            &[],
            None,
            7,
            &["hello".into()],
        );
        assert!(text.starts_with("# hello\n"));
        assert!(
            text.contains("rate = { steps = [ { at = \"0s\", rate = \"20000000bit\" }"),
            "{text}"
        );
        assert!(
            text.contains("delay_schedule = { steps = [ { at = \"0s\", delay = \"20ms\" }"),
            "{text}"
        );
        assert!(text.contains("loss = 0.005"), "{text}");
        assert!(text.contains("profile = \"linux-v3\""));
        let sc = scenario::parse(
            &text,
            "s.toml",
            std::path::Path::new("."),
            std::path::Path::new("s.toml"),
        )
        .expect("the simulator takes it");
        assert_eq!(sc.runs[0].config.flows.len(), 2);
    }
}
