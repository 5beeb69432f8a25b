//! The sidecar time series of a control's state (`flows.cc.csv`) that
//! `bbrlab tcp send --log` writes beside the TCP_INFO series.

use super::*;

/// Columns of the per-sample file [`Sampler`] writes beside the probe's
/// time series: the control's own state, which the shared schema has no
/// columns for (srtt/rttvar of seed 001, the cycle, PROBE_RTT counts).
pub const SAMPLER_COLUMNS: &str = "time_s,cc,mode,bw_estimate_bps,min_rtt_ms,srtt_ms,rttvar_ms,\
using_srtt,cycle_len,cycle_idx,pacing_gain,cwnd_gain,cwnd_packets,lt_use_bw,\
probe_rtt_entries,probe_rtt_min_cwnd";

/// The sidecar columns of `bbrlab_bbr3` (its own set: v3 has no srtt,
/// cycle of eight or lt_bw, and has the two-scale model). `mode`,
/// `bw_estimate_bps` (max_bw) and `min_rtt_ms` mean what they mean in the
/// shared schema, with the simulator's `bbr3` mode names; volumes are
/// bytes (packets × MSS), empty where the model has no bound.
/// `probe_rtt_clock_ms` is how long ago, at the sample, the 5 s PROBE_RTT
/// clock last restarted (a sample below the windowed min RTT, the first
/// sample after it ran out, or the end of a PROBE_RTT): PROBE_RTT is due
/// when it passes 5000, so it tells a late PROBE_RTT (the clock
/// restarted) from a missed one.
pub const SAMPLER3_COLUMNS: &str = "time_s,cc,mode,bw_estimate_bps,min_rtt_ms,pacing_gain,\
cwnd_gain,cwnd_packets,inflight_longterm_bytes,inflight_shortterm_bytes,bw_shortterm_bps,\
cycle_idx,probe_rtt_entries,probe_rtt_min_cwnd,probe_bw_up_entries,inflight_cuts,risky_reprobes,\
last_cut_tx_in_flight,last_cut_target,last_cut_inflight_longterm,last_cut_mode,ecn_alpha,\
round_count,rounds_since_probe_up,probe_rtt_clock_ms";

/// One reading of one of our controls.
#[derive(Clone, Copy, Debug)]
pub enum Reading {
    /// `bbrlab_bbr` or `bbrlab_jitter`.
    V1(RawState),
    /// `bbrlab_bbr3`.
    V3(RawState3),
}

impl Reading {
    /// The mode in the shared schema's names.
    pub fn mode_name(&self) -> &'static str {
        match self {
            Reading::V1(s) => s.mode_name(),
            Reading::V3(s) => s.mode_name(),
        }
    }

    /// The bandwidth estimate in use, bits/s (v3: max_bw).
    pub fn bw_bps(&self) -> f64 {
        match self {
            Reading::V1(s) => s.bw_bps(),
            Reading::V3(s) => s.bw_bps(),
        }
    }

    /// min_rtt, µs (`u32::MAX` before a sample).
    pub fn min_rtt_us(&self) -> u32 {
        match self {
            Reading::V1(s) => s.min_rtt_us,
            Reading::V3(s) => s.min_rtt_us,
        }
    }

    /// Pacing and cwnd gains, 256 = 1.0.
    pub fn gains(&self) -> (u32, u32) {
        match self {
            Reading::V1(s) => (s.pacing_gain, s.cwnd_gain),
            Reading::V3(s) => (s.pacing_gain, s.cwnd_gain),
        }
    }
}

/// The probe's hook (`bbrlab tcp send`): for a socket running one of our
/// controls, reads its state every sample (what `TCP_CC_INFO` gives for
/// the kernel's `bbr`) and, with a log, writes every field to
/// `<log>.cc.csv`.
pub struct Sampler {
    pub(crate) cc: String,
    pub(crate) reader: StateReader,
    pub(crate) csv: Option<csv::Writer<fs::File>>,
    /// Whether a refused layout was said (once, on stderr).
    pub(crate) layout_said: bool,
}

/// The sidecar file of a probe log: `flows.csv` → `flows.cc.csv`.
pub fn sampler_path(log: &Path) -> PathBuf {
    log.with_extension("cc.csv")
}

impl Sampler {
    /// `None` unless the socket runs one of ours and its state map can be
    /// opened.
    pub fn for_socket(fd: i32, log: Option<&Path>) -> Option<Sampler> {
        let cc = socket_cc(fd).filter(|c| is_ours(c))?;
        let reader = match StateReader::open(&cc) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("tcp send: not sampling {cc}'s state: {e}");
                return None;
            }
        };
        let csv = log.and_then(|l| {
            let p = sampler_path(l);
            let mut w = csv::Writer::from_path(&p).ok()?;
            let cols = if cc == BPF_BBR3 {
                SAMPLER3_COLUMNS
            } else {
                SAMPLER_COLUMNS
            };
            w.write_record(cols.split(',')).ok()?;
            Some(w)
        });
        Some(Sampler {
            cc,
            reader,
            csv,
            layout_said: false,
        })
    }

    /// One reading at `t` seconds; also a row of the sidecar file. A
    /// write error is said once on stderr and ends the sidecar (the probe's
    /// own log goes on).
    pub fn sample(&mut self, fd: i32, t: f64) -> Option<Reading> {
        let s = if self.cc == BPF_BBR3 {
            match self.reader.read3(fd) {
                Some(r) => Reading::V3(r),
                None => {
                    self.say_layout(fd);
                    return None;
                }
            }
        } else {
            Reading::V1(self.reader.read(fd)?)
        };
        if let Some(w) = self.csv.as_mut() {
            let row = match &s {
                Reading::V1(r) => sampler_row(&self.cc, t, r),
                Reading::V3(r) => sampler3_row(&self.cc, t, r, monotonic_us()),
            };
            if let Err(e) = w.write_record(&row) {
                eprintln!("tcp send: stopped writing {}'s state: {e}", self.cc);
                self.csv = None;
            }
        }
        Some(s)
    }
}

impl Sampler {
    /// Says once on stderr that the loaded `bbrlab_bbr3` publishes another
    /// layout than this bbrlab reads (a program pinned by an older build),
    /// so that an empty sidecar is not a silent one.
    fn say_layout(&mut self, fd: i32) {
        if self.layout_said {
            return;
        }
        if let Some(l) = self.reader.layout3(fd).filter(|&l| l != BBR3_LAYOUT) {
            eprintln!(
                "tcp send: not sampling {}'s state: the loaded program publishes layout {l}, \
                 this bbrlab reads {BBR3_LAYOUT}; `bbrlab kernel unload {}` and load it again",
                self.cc, self.cc
            );
            self.layout_said = true;
        }
    }
}

/// One sidecar row, in [`SAMPLER_COLUMNS`]' order; unknown values (no
/// min_rtt yet, no PROBE_RTT yet) are empty cells.
pub(crate) fn sampler_row(cc: &str, t: f64, s: &RawState) -> Vec<String> {
    let min_rtt = if s.min_rtt_us == u32::MAX {
        String::new()
    } else {
        format!("{:.3}", s.min_rtt_us as f64 / 1000.0)
    };
    vec![
        format!("{t:.6}"),
        cc.to_string(),
        s.mode_name().to_string(),
        format!("{:.0}", s.bw_bps()),
        min_rtt,
        format!("{:.3}", s.srtt_us as f64 / 1000.0),
        format!("{:.3}", s.rttvar_us as f64 / 1000.0),
        s.using_srtt.to_string(),
        s.cycle_len.to_string(),
        s.cycle_idx.to_string(),
        s.pacing_gain.to_string(),
        s.cwnd_gain.to_string(),
        s.cwnd.to_string(),
        s.lt_use_bw.to_string(),
        s.probe_rtt_entries.to_string(),
        if s.probe_rtt_entries > 0 {
            s.probe_rtt_min_cwnd.to_string()
        } else {
            String::new()
        },
    ]
}

/// CLOCK_MONOTONIC in µs: the clock of the kernel's `tcp_mstamp`
/// (`tcp_clock_us()`), so the control's published stamps can be aged.
fn monotonic_us() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1_000
}

/// One `bbrlab_bbr3` sidecar row, in [`SAMPLER3_COLUMNS`]' order, read at
/// `now_us` (CLOCK_MONOTONIC, µs); unknowns (no min_rtt, unset bounds, no
/// PROBE_RTT or cut yet) are empty.
pub(crate) fn sampler3_row(cc: &str, t: f64, s: &RawState3, now_us: u64) -> Vec<String> {
    let mss = u64::from(s.mss);
    let bytes = |v: u32| {
        if v == u32::MAX {
            String::new()
        } else {
            (u64::from(v) * mss).to_string()
        }
    };
    let min_rtt = if s.min_rtt_us == u32::MAX {
        String::new()
    } else {
        format!("{:.3}", s.min_rtt_us as f64 / 1000.0)
    };
    let bw_st = if s.bw_shortterm >= u64::from(u32::MAX) {
        String::new()
    } else {
        format!("{:.0}", kernel_bw_bps(s.bw_shortterm, s.mss))
    };
    let cut = |v: u32| {
        if s.cuts > 0 {
            v.to_string()
        } else {
            String::new()
        }
    };
    vec![
        format!("{t:.6}"),
        cc.to_string(),
        s.mode_name().to_string(),
        format!("{:.0}", s.bw_bps()),
        min_rtt,
        s.pacing_gain.to_string(),
        s.cwnd_gain.to_string(),
        s.cwnd.to_string(),
        bytes(s.inflight_longterm),
        bytes(s.inflight_shortterm),
        bw_st,
        s.cycle_idx().map_or(String::new(), |i| i.to_string()),
        s.probe_rtt_entries.to_string(),
        if s.probe_rtt_entries > 0 {
            s.probe_rtt_min_cwnd.to_string()
        } else {
            String::new()
        },
        s.up_entries.to_string(),
        s.cuts.to_string(),
        s.risky_reprobes.to_string(),
        cut(s.last_cut_tx_in_flight),
        cut(s.last_cut_target),
        cut(s.last_cut_longterm),
        if s.cuts > 0 {
            bbr3_mode_name(s.last_cut_state).to_string()
        } else {
            String::new()
        },
        format!("{:.4}", f64::from(s.ecn_alpha) / 256.0),
        s.round_count.to_string(),
        s.rounds_since_probe_up.to_string(),
        // `sample` reads the clock after the state, so the stamp is never
        // ahead of it; a clock that were would read 0, not 2^64 µs.
        format!(
            "{:.3}",
            now_us.saturating_sub(s.probe_rtt_min_stamp_us) as f64 / 1000.0
        ),
    ]
}

impl Drop for Sampler {
    fn drop(&mut self) {
        if let Some(w) = self.csv.as_mut() {
            if let Err(e) = w.flush() {
                eprintln!("tcp send: could not finish {}'s state file: {e}", self.cc);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sidecar row has a cell per column, and unknowns are empty cells
    /// rather than the kernel's sentinels.
    #[test]
    fn a_sidecar_row_fills_every_column() {
        let fresh = RawState {
            min_rtt_us: u32::MAX,
            ..RawState::default()
        };
        let row = sampler_row("bbrlab_bbr", 0.25, &fresh);
        let columns: Vec<&str> = SAMPLER_COLUMNS.split(',').collect();
        assert_eq!(row.len(), columns.len());
        let cell = |r: &[String], c: &str| r[columns.iter().position(|k| *k == c).unwrap()].clone();
        assert_eq!(cell(&row, "time_s"), "0.250000");
        assert_eq!(cell(&row, "min_rtt_ms"), "");
        assert_eq!(cell(&row, "probe_rtt_min_cwnd"), "");
        let later = RawState {
            min_rtt_us: 40_250,
            probe_rtt_entries: 1,
            probe_rtt_min_cwnd: 4,
            ..RawState::default()
        };
        let row = sampler_row("bbrlab_bbr", 10.0, &later);
        assert_eq!(cell(&row, "min_rtt_ms"), "40.250");
        assert_eq!(cell(&row, "probe_rtt_min_cwnd"), "4");
    }

    /// A bbr3 sidecar row has a cell per column, the simulator's mode
    /// names, volumes in bytes, and empty cells for unset bounds.
    #[test]
    fn a_bbr3_sidecar_row_fills_every_column() {
        let columns: Vec<&str> = SAMPLER3_COLUMNS.split(',').collect();
        let cell = |r: &[String], c: &str| r[columns.iter().position(|k| *k == c).unwrap()].clone();
        let fresh = RawState3 {
            min_rtt_us: u32::MAX,
            inflight_longterm: u32::MAX,
            inflight_shortterm: u32::MAX,
            bw_shortterm: u64::from(u32::MAX),
            mss: 1448,
            ..RawState3::default()
        };
        let row = sampler3_row("bbrlab_bbr3", 0.5, &fresh, 0);
        assert_eq!(row.len(), columns.len());
        assert_eq!(cell(&row, "mode"), "startup");
        assert_eq!(cell(&row, "inflight_longterm_bytes"), "");
        assert_eq!(cell(&row, "cycle_idx"), "");
        assert_eq!(cell(&row, "last_cut_target"), "");
        let up = RawState3 {
            mode: 5,
            inflight_longterm: 100,
            inflight_shortterm: u32::MAX,
            cuts: 1,
            last_cut_target: 80,
            ..fresh
        };
        let row = sampler3_row("bbrlab_bbr3", 1.0, &up, 0);
        assert_eq!(cell(&row, "mode"), "probe_bw_up");
        assert_eq!(cell(&row, "cycle_idx"), "0");
        assert_eq!(cell(&row, "inflight_longterm_bytes"), "144800");
        assert_eq!(cell(&row, "last_cut_target"), "80");
        let counted = RawState3 {
            round_count: 41,
            rounds_since_probe_up: 3,
            ..up
        };
        let counted = RawState3 {
            probe_rtt_min_stamp_us: 7_000_000,
            ..counted
        };
        let row = sampler3_row("bbrlab_bbr3", 1.5, &counted, 12_000_250);
        assert_eq!(cell(&row, "round_count"), "41");
        assert_eq!(cell(&row, "rounds_since_probe_up"), "3");
        assert_eq!(cell(&row, "probe_rtt_clock_ms"), "5000.250");
        // A stamp ahead of the clock ages 0, not 2^64 µs.
        let row = sampler3_row("bbrlab_bbr3", 1.5, &counted, 6_999_000);
        assert_eq!(cell(&row, "probe_rtt_clock_ms"), "0.000");
        let names: Vec<&str> = (0..7).map(bbr3_mode_name).collect();
        assert_eq!(
            names,
            [
                "startup",
                "drain",
                "probe_bw_down",
                "probe_bw_cruise",
                "probe_bw_refill",
                "probe_bw_up",
                "probe_rtt"
            ]
        );
    }
}
