//! Is `bbrlab_bbr` (our BPF reading of `tcp_bbr.c`) the kernel's BBR? Both
//! run the same emulated paths, the same repetitions (same loss seeds),
//! side by side (each on its own path, at the same time); the means over the repetitions must agree within 5 % in
//! goodput and 10 % in median RTT (issue 15), and PROBE_RTT must come every
//! 10 s at 4 packets for both. Root: the controls register kernel-wide and
//! the paths are `bbrlab emu`'s namespaces (removed even on failure; the
//! guard unloads the controls on drop).
//!
//! Each run sends a fixed amount, about `seconds` at 95 % of the rate
//! (goodput = bytes / time to the receiver's verdict): a fixed duration
//! would measure the socket buffer too, which Linux autotunes up to
//! tcp_wmem's 64 MiB and then drains after the writes stop.
//!
//! BBRLAB_KCC_REPS and BBRLAB_KCC_SECONDS change the repetitions (3) and
//! the nominal run length (24 s, which spans two PROBE_RTTs; the
//! receiver's verdict must come within 30 s of the last write);
//! BBRLAB_KCC_PATH runs only the paths whose name contains it.
//!
//! Only with the binary's `kernel` feature (`scripts/test.sh` sets it).
#![cfg(feature = "kernel")]

mod common;

use common::kernel::Loaded;

use std::collections::HashMap;

struct PathCase {
    name: &'static str,
    rate: &'static str,
    rate_bps: f64,
    rtt: &'static str,
    queue: &'static str,
    loss: Option<&'static str>,
}

/// Four paths: a 1-BDP buffer, 1 % random loss, a deep (8 BDP) buffer and
/// a shallow (0.5 BDP) one at a higher rate.
const PATHS: &[PathCase] = &[
    PathCase {
        name: "10M-40ms-1bdp",
        rate: "10Mbit",
        rate_bps: 10e6,
        rtt: "40ms",
        queue: "34pkt",
        loss: None,
    },
    PathCase {
        name: "20M-40ms-1bdp-1%loss",
        rate: "20Mbit",
        rate_bps: 20e6,
        rtt: "40ms",
        queue: "67pkt",
        loss: Some("1%"),
    },
    PathCase {
        name: "5M-60ms-8bdp",
        rate: "5Mbit",
        rate_bps: 5e6,
        rtt: "60ms",
        queue: "200pkt",
        loss: None,
    },
    PathCase {
        name: "50M-10ms-0.5bdp",
        rate: "50Mbit",
        rate_bps: 50e6,
        rtt: "10ms",
        queue: "21pkt",
        loss: None,
    },
];

fn env_or(key: &str, default: u32) -> u32 {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Run {
    goodput: f64,
    /// Segments retransmitted.
    retransmits: f64,
    /// Of those, the ones per second after STARTUP and DRAIN (from the
    /// first sample at 1 s or later in another mode) until the first
    /// PROBE_RTT began, or to the end on a path with random loss or a run
    /// without PROBE_RTT: see the retransmission bounds.
    probe_bw_retx_per_s: f64,
    /// For each PROBE_RTT whose [`AFTER_PROBE_RTT_S`] closed before the
    /// log ended, the ones from its start until then (none with random
    /// loss).
    probe_rtt_retx: Vec<f64>,
    rtt_median: f64,
    /// Start times of PROBE_RTT episodes, s.
    probe_rtt_starts: Vec<f64>,
    /// cwnd in each sample taken during PROBE_RTT, packets.
    probe_rtt_cwnds: Vec<u64>,
    /// For each PROBE_RTT, s since the min_rtt filter was last refreshed:
    /// the last lower min_rtt outside PROBE_RTT, or the end of the last
    /// PROBE_RTT (`bbr_check_probe_rtt_done` restamps the filter).
    probe_rtt_waits: Vec<f64>,
}

/// How long after a PROBE_RTT began its retransmissions still count:
/// the episode (200 ms and a round) and the refill after it, whose
/// overflow of a shallow buffer is most of that episode's cost.
const AFTER_PROBE_RTT_S: f64 = 2.0;

fn run(p: &PathCase, cc: &str, secs: u32, seed: u32, dir: &std::path::Path) -> Run {
    let log = dir.join(format!("{}-{cc}-{seed}.csv", p.name.replace('%', "pct")));
    let seed_s = seed.to_string();
    let bytes = (p.rate_bps * 0.95 * secs as f64 / 8.0) as u64;
    let mut args = vec![
        "--rate", p.rate, "--rtt", p.rtt, "--queue", p.queue, "--seed", &seed_s,
    ];
    if let Some(l) = p.loss {
        args.extend(["--loss", l]);
    }
    // A run whose emulator's forwarder was off the CPU too long (a busy
    // host's hypervisor took the vCPU, and the link delivered in bursts)
    // is run again, as validate does: on 50M-10ms-0.5bdp such a run lost
    // 38 % more packets after STARTUP than its pair, two kernel controls
    // that agree on a quiet host.
    let rtt_ms: f64 = p.rtt.trim_end_matches("ms").parse().unwrap();
    let ((ok, out, err), _) = common::unstalled(&format!("{} {cc}", p.name), rtt_ms, |stats| {
        let stats = stats.display().to_string();
        let mut a = args.clone();
        a.extend(["--stats", stats.as_str()]);
        common::emu(
            &a,
            &format!("{} tcp recv --listen {{server}}:5201", common::BIN),
            &format!(
                "{} tcp send --to {{server}}:5201 --cc {cc} --bytes {bytes} --log {}",
                common::BIN,
                log.display()
            ),
            2 * secs + 60,
        )
    });
    assert!(ok, "{} {cc}: emu failed: {err}\n{out}", p.name);
    let s = common::json_with(&out, "\"cc\"");
    let mut r = csv::Reader::from_path(&log).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |k: &str| h.iter().position(|c| c == k).unwrap();
    let (ti, mi, ci, ri, xi) = (
        col("time_s"),
        col("mode"),
        col("cwnd_bytes"),
        col("min_rtt_ms"),
        col("retransmitted_packets"),
    );
    let mut retx_last = f64::NAN;
    let mut t_last = f64::NAN;
    // (time, count) when STARTUP and DRAIN ended and when the first
    // PROBE_RTT began; (start, count) of the PROBE_RTT whose refill is
    // being counted, and the refills counted (see Run).
    let mut startup_end: Option<(f64, f64)> = None;
    let mut at_first_probe_rtt: Option<(f64, f64)> = None;
    let mut refilling: Option<(f64, f64)> = None;
    let mut refills = Vec::new();
    // In a PROBE_RTT whose refill count has not started yet.
    let mut unstarted = false;
    let mss = s["mss"].as_u64().unwrap();
    let mut starts = Vec::new();
    let mut cwnds = Vec::new();
    let mut waits = Vec::new();
    let mut prev_in = false;
    let mut prev_min: Option<f64> = None;
    let mut refreshed = 0.0;
    for rec in r.records() {
        let rec = rec.unwrap();
        // The kernel's mode is inferred from TCP_CC_INFO's gains, which
        // read 1.0/1.0 (as in PROBE_RTT) before its first ACK: skip the
        // first second.
        let t: f64 = rec[ti].parse().unwrap();
        let in_probe_rtt = &rec[mi] == "probe_rtt" && t >= 1.0;
        unstarted = in_probe_rtt && (unstarted || !prev_in);
        if let Some((_, x0)) = refilling.filter(|(t0, _)| t > t0 + AFTER_PROBE_RTT_S) {
            refills.push(retx_last - x0);
            refilling = None;
        }
        if let Ok(x) = rec[xi].parse::<f64>() {
            retx_last = x;
            t_last = t;
            if startup_end.is_none() && t >= 1.0 && !matches!(&rec[mi], "startup" | "drain") {
                startup_end = Some((t, x));
            }
            if in_probe_rtt && at_first_probe_rtt.is_none() && p.loss.is_none() {
                at_first_probe_rtt = Some((t, x));
            }
            // An episode's refill is counted from its first sample with a
            // count (episodes are ~10 s apart, so one at a time).
            if in_probe_rtt && unstarted && p.loss.is_none() {
                refilling = Some((t, x));
                unstarted = false;
            }
        }
        let min_rtt: Option<f64> = rec[ri].parse().ok();
        if in_probe_rtt {
            if !prev_in {
                starts.push(t);
                waits.push(t - refreshed);
            }
            cwnds.push(rec[ci].parse::<u64>().unwrap() / mss);
        } else if prev_in {
            refreshed = t;
        } else if let (Some(m), Some(p)) = (min_rtt, prev_min) {
            if m < p {
                refreshed = t;
            }
        }
        prev_in = in_probe_rtt;
        prev_min = min_rtt.or(prev_min);
    }
    Run {
        goodput: s["goodput_bps"].as_f64().unwrap(),
        retransmits: s["retransmits"].as_f64().unwrap_or(f64::NAN),
        probe_bw_retx_per_s: match (startup_end, at_first_probe_rtt) {
            (Some((t0, x0)), Some((t1, x1))) if t1 > t0 => (x1 - x0) / (t1 - t0),
            (Some((t0, x0)), _) if t_last > t0 => (retx_last - x0) / (t_last - t0),
            _ => f64::NAN,
        },
        probe_rtt_retx: refills,
        rtt_median: s["rtt_median_ms"].as_f64().unwrap(),
        probe_rtt_starts: starts,
        probe_rtt_cwnds: cwnds,
        probe_rtt_waits: waits,
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The middle value (the mean of the middle two for an even count).
fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn bbrlab_bbr_matches_kernel_bbr_on_four_paths() {
    common::require_root();
    let _serial = common::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _kernel = common::kernel_lock();
    let reps = env_or("BBRLAB_KCC_REPS", 3);
    let secs = env_or("BBRLAB_KCC_SECONDS", 24);
    let _guard = Loaded::new(&["bbrlab_bbr"]);
    let dir = tempfile::tempdir().unwrap();
    let mut report = Vec::new();
    let mut failures = Vec::new();
    let only = std::env::var("BBRLAB_KCC_PATH").unwrap_or_default();
    for p in PATHS.iter().filter(|p| p.name.contains(only.as_str())) {
        let mut runs: HashMap<&str, Vec<Run>> = HashMap::new();
        for rep in 0..reps {
            // The two controls run at the same time, each on its own
            // emulated path (its own namespaces, its own SCHED_FIFO
            // forwarder): whatever the shared machine does to one run it
            // does to the other, and the pair takes one run's time. A run
            // whose forwarder stalled is repeated on its own (`run`).
            let (kernel, ours) = std::thread::scope(|s| {
                let k = s.spawn(|| run(p, "bbr", secs, rep + 1, dir.path()));
                let o = s.spawn(|| run(p, "bbrlab_bbr", secs, rep + 1, dir.path()));
                (k.join(), o.join())
            });
            for (cc, r) in [("bbr", kernel), ("bbrlab_bbr", ours)] {
                let r = r.unwrap_or_else(|e| std::panic::resume_unwind(e));
                runs.entry(cc).or_default().push(r);
            }
        }
        // A figure of the kernel's control and of ours over the
        // repetitions: their mean, or (retransmissions after STARTUP: see
        // the bounds below) their median.
        let both = |stat: fn(&[f64]) -> f64, f: fn(&Run) -> f64| {
            let of = |cc: &str| stat(&runs[cc].iter().map(f).collect::<Vec<_>>());
            (of("bbr"), of("bbrlab_bbr"))
        };
        let (gk, gb) = both(mean, |r| r.goodput);
        let (rk, rb) = both(mean, |r| r.rtt_median);
        let (xk, xb) = both(mean, |r| r.retransmits);
        let (bw_k, bw_b) = both(median, |r| r.probe_bw_retx_per_s);
        // The refills, pooled over the repetitions (see the bounds).
        let refills = |cc: &str| -> Vec<f64> {
            runs[cc]
                .iter()
                .flat_map(|r| r.probe_rtt_retx.iter().copied())
                .collect()
        };
        let (ep_k, ep_b) = (mean(&refills("bbr")), mean(&refills("bbrlab_bbr")));
        let (ep_nk, ep_nb) = (refills("bbr").len(), refills("bbrlab_bbr").len());
        let gd = gb / gk - 1.0;
        let rd = rb / rk - 1.0;
        report.push(format!(
            "{}: goodput kernel {:.2} vs bpf {:.2} Mbit/s ({:+.1} %), median RTT {:.1} vs {:.1} ms ({:+.1} %), retransmissions {:.0} vs {:.0} (medians: {:.1} vs {:.1}/s after STARTUP; {:.0} vs {:.0} in a PROBE_RTT's refill, mean of {} and {})",
            p.name,
            gk / 1e6,
            gb / 1e6,
            gd * 100.0,
            rk,
            rb,
            rd * 100.0,
            xk,
            xb,
            bw_k,
            bw_b,
            ep_k,
            ep_b,
            ep_nk,
            ep_nb
        ));
        println!("{}", report.last().unwrap());
        for cc in ["bbr", "bbrlab_bbr"] {
            let each: Vec<String> = runs[cc]
                .iter()
                .map(|r| format!("{:.1}/s and {:?}", r.probe_bw_retx_per_s, r.probe_rtt_retx))
                .collect();
            report.push(format!(
                "  {cc}: retransmissions after STARTUP and in each PROBE_RTT's refill, per run: [{}]",
                each.join(", ")
            ));
            println!("{}", report.last().unwrap());
        }
        // Retransmissions after STARTUP: random loss and the probes'
        // overflows give both the same counts; the bounds catch a control
        // that bursts where the kernel's paces (it did, 2x:
        // docs/src/kernel.md, "Is bbrlab_bbr the kernel's BBR?").
        // STARTUP's own overflow is left out: one event per run whose size
        // varies with where the random losses fall (on the 1 %-loss path,
        // about 50-190 queue drops a run; the totals' means over 3 runs
        // differed by 20 % in a CI run, 516 vs 620).
        //
        // Judged as two figures:
        // - per second, from the end of STARTUP until the first PROBE_RTT
        //   (to the end with random loss), on the medians of the
        //   repetitions (a median of three ignores one odd run and still
        //   sees a control that bursts in every run): a rate, because that span is
        //   ~9 s in most runs but ~14 s in a run whose STARTUP losses kept
        //   refreshing min_rtt: a count over it was 814 in such a run
        //   (first PROBE_RTT at 14.8 s) against 520-614 in the other
        //   fifteen, and the counts' medians of three failed a CI run on
        //   the 0.5-BDP path (623 vs 530).
        //   Bound 25 % + 1/s, from the scatter of single runs on the
        //   0.5-BDP path (the 1-BDP and 8-BDP paths retransmit nothing
        //   after STARTUP): a run's rate is a few hundred drops from ~90
        //   overflowing probes, and runs of one control scatter 6-8 % (sd)
        //   whatever the other does (the two of a pair run at the same
        //   time, yet their rates are uncorrelated). Measured: eight runs
        //   of each, 46.7-48.5 and 47.4-51.1/s; six of each on 2026-12-07,
        //   46.1-56.3 and 45.5-53.8/s (medians 49.6 and 50.1); medians of
        //   three then differ by ~6 % (sd), and CI runs missed a 10 %
        //   bound by 6.1/s and 8.1/s in opposite directions (2026-12-02:
        //   the kernel's three at 44.1, 46.8, 63.2/s) and by 8.7/s
        //   (2026-12-07: 53.3-54.6 against 41.4-46.5/s). 25 % is ~4 sd
        //   of that difference; a control that bursts (twice the kernel's
        //   rate, +100 %) misses it by four times its width.
        // - a PROBE_RTT's refill, until AFTER_PROBE_RTT_S after it began
        //   (paths without random loss): it overflows the 0.5-BDP buffer,
        //   and as one event it scatters far more (single episodes 76-151
        //   for either control). Judged on the mean over every episode of
        //   the repetitions that closed within its run (one or two a run:
        //   a second comes when no lower RTT sample refreshed the filter
        //   in between), not on the median of the runs' first episodes:
        //   those medians failed a CI run on 2026-12-07 (134 against 84,
        //   from 144, 134, 80 and 151, 84, 76, whose means are 119 and
        //   104), as single episodes fall near 80 or near 140 and a median
        //   of three takes one or the other. Six repetitions of each on
        //   2026-12-07 gave ten episodes apiece, 102-140 and 89-143
        //   (means 126 and 120, sd 13 and 15). Bound 40 % + 15: a mean of
        //   about five episodes whose sd is 15-30 differs from the other
        //   control's by ~10-20 (sd), so the bound (~63 at 120) is three
        //   or more sd, and a refill sent in a burst, overflowing by twice
        //   as much (+120), is about twice the bound.
        if (bw_b - bw_k).abs() > 0.25 * bw_k + 1.0 || bw_b.is_nan() || bw_k.is_nan() {
            failures.push(format!(
                "{}: retransmissions per second after STARTUP (median) {bw_b:.1} against the kernel's {bw_k:.1} (in all, mean {xb:.0} and {xk:.0})",
                p.name
            ));
        }
        if p.loss.is_none() && ((ep_b - ep_k).abs() > 0.40 * ep_k + 15.0 || ep_b.is_nan()) {
            failures.push(format!(
                "{}: retransmissions from the first PROBE_RTT (median) {ep_b:.0} against the kernel's {ep_k:.0}",
                p.name
            ));
        }
        if gd.abs() > 0.05 {
            failures.push(format!(
                "{}: goodput differs by {:+.1} %",
                p.name,
                gd * 100.0
            ));
        }
        if rd.abs() > 0.10 {
            failures.push(format!(
                "{}: median RTT differs by {:+.1} %",
                p.name,
                rd * 100.0
            ));
        }
        // PROBE_RTT, on the paths without random loss, for both: at 4
        // packets, and exactly when the 10 s min_rtt window runs out, i.e.
        // 10 s after the filter was last refreshed (bbr_update_min_rtt).
        // The first comes at ~10.1 s unless STARTUP's losses (the 0.5-BDP
        // buffer) kept lowering min_rtt (seen: the kernel's at 16.4 s); a
        // later one 10 s after the previous episode ended, or after a
        // lower sample in the PROBE_BW that followed (both controls take
        // one now and then: PROBE_RTT's own samples come from 2-packet
        // bursts, ~1 packet time above the floor), so the checked rule is
        // the wait since the refresh, not the gap between episodes.
        // Tolerance -0.1/+0.25 s: both events are read from 10 ms samples
        // (each up to a sample late, more on a busy machine) and the
        // expiry acts on the next ACK. cwnd is 4 in most PROBE_RTT samples:
        // recovery's packet conservation may take it lower, and TCP_INFO
        // and the mode are two reads, so one sample at an edge may see the
        // cwnd from outside the episode.
        if p.loss.is_none() {
            for cc in ["bbr", "bbrlab_bbr"] {
                for r in &runs[cc] {
                    let round = |v: &[f64]| -> Vec<f64> {
                        v.iter().map(|t| (t * 100.0).round() / 100.0).collect()
                    };
                    let at4 = r.probe_rtt_cwnds.iter().filter(|c| **c == 4).count();
                    report.push(format!(
                        "  {cc}: PROBE_RTT at {:?} s, {:?} s after the min_rtt filter's refresh, cwnd 4 in {at4} of {} samples (min {:?})",
                        round(&r.probe_rtt_starts),
                        round(&r.probe_rtt_waits),
                        r.probe_rtt_cwnds.len(),
                        r.probe_rtt_cwnds.iter().min()
                    ));
                    println!("{}", report.last().unwrap());
                    if r.probe_rtt_starts.is_empty()
                        || r.probe_rtt_waits.iter().any(|w| !(9.9..=10.25).contains(w))
                        || at4 * 2 <= r.probe_rtt_cwnds.len()
                    {
                        failures.push(format!(
                            "{} {cc}: PROBE_RTT at {:?}, {:?} s after the refresh, cwnds {:?}",
                            p.name, r.probe_rtt_starts, r.probe_rtt_waits, r.probe_rtt_cwnds
                        ));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n\n{}",
        failures.join("\n"),
        report.join("\n")
    );
}
