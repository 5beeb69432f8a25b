//! The single-flow matrix: its paths, the quick subset, and the scenario
//! each path and algorithm runs as (the simulated counterpart of each
//! kernel control).

use super::*;

/// One emulated path of the matrix.
#[derive(Clone, Copy, Debug)]
pub struct PathSpec {
    /// Short label, used for directories and `--only`.
    pub name: &'static str,
    /// Bottleneck rate, Mbit/s (both directions).
    pub rate_mbit: f64,
    /// Round-trip propagation delay, ms (half each way).
    pub rtt_ms: f64,
    /// Bottleneck buffer in bandwidth-delay products.
    pub buffer_bdp: f64,
    /// Random loss probability on the data direction.
    pub loss: f64,
    /// Per-packet delay jitter on the data direction: sd of a normal
    /// extra delay (mean 2 × sd, floored at 0), packets kept in order.
    pub jitter_sd_ms: f64,
}

/// The matrix: rates 2–100 Mbit/s, RTTs 5–200 ms, buffers 0.25–10 BDP,
/// random loss 0–5 %, one path with delay jitter. Rates stop at 100 Mbit/s,
/// which the emulator's single forwarding thread sustains with headroom.
pub const MATRIX: &[PathSpec] = &[
    PathSpec {
        name: "10M-40ms-1bdp",
        rate_mbit: 10.0,
        rtt_ms: 40.0,
        buffer_bdp: 1.0,
        loss: 0.0,
        jitter_sd_ms: 0.0,
    },
    PathSpec {
        name: "2M-100ms-2bdp",
        rate_mbit: 2.0,
        rtt_ms: 100.0,
        buffer_bdp: 2.0,
        loss: 0.0,
        jitter_sd_ms: 0.0,
    },
    PathSpec {
        name: "20M-20ms-0.25bdp",
        rate_mbit: 20.0,
        rtt_ms: 20.0,
        buffer_bdp: 0.25,
        loss: 0.0,
        jitter_sd_ms: 0.0,
    },
    PathSpec {
        name: "50M-10ms-10bdp",
        rate_mbit: 50.0,
        rtt_ms: 10.0,
        buffer_bdp: 10.0,
        loss: 0.0,
        jitter_sd_ms: 0.0,
    },
    PathSpec {
        name: "100M-5ms-1bdp",
        rate_mbit: 100.0,
        rtt_ms: 5.0,
        buffer_bdp: 1.0,
        loss: 0.0,
        jitter_sd_ms: 0.0,
    },
    PathSpec {
        name: "10M-200ms-1bdp",
        rate_mbit: 10.0,
        rtt_ms: 200.0,
        buffer_bdp: 1.0,
        loss: 0.0,
        jitter_sd_ms: 0.0,
    },
    PathSpec {
        name: "20M-40ms-1bdp-1%loss",
        rate_mbit: 20.0,
        rtt_ms: 40.0,
        buffer_bdp: 1.0,
        loss: 0.01,
        jitter_sd_ms: 0.0,
    },
    PathSpec {
        name: "10M-80ms-2bdp-5%loss",
        rate_mbit: 10.0,
        rtt_ms: 80.0,
        buffer_bdp: 2.0,
        loss: 0.05,
        jitter_sd_ms: 0.0,
    },
    PathSpec {
        name: "5M-60ms-4bdp-0.1%loss",
        rate_mbit: 5.0,
        rtt_ms: 60.0,
        buffer_bdp: 4.0,
        loss: 0.001,
        jitter_sd_ms: 0.0,
    },
    PathSpec {
        name: "50M-50ms-0.5bdp",
        rate_mbit: 50.0,
        rtt_ms: 50.0,
        buffer_bdp: 0.5,
        loss: 0.0,
        jitter_sd_ms: 0.0,
    },
    PathSpec {
        name: "10M-40ms-2bdp-jitter",
        rate_mbit: 10.0,
        rtt_ms: 40.0,
        buffer_bdp: 2.0,
        loss: 0.0,
        jitter_sd_ms: 2.0,
    },
];

/// The paths `--quick` runs: a plain path, a shallow buffer, loss and
/// jitter, one repetition each, so the whole run stays under ten minutes.
pub const QUICK: &[&str] = &[
    "10M-40ms-1bdp",
    "20M-20ms-0.25bdp",
    "20M-40ms-1bdp-1%loss",
    "10M-40ms-2bdp-jitter",
];

/// Queue limit in packets for `p`: its buffer in BDPs of 1500-byte
/// packets, at least 2.
pub fn queue_packets(p: &PathSpec) -> u64 {
    buffer_packets(p.rate_mbit, p.rtt_ms, p.buffer_bdp)
}

/// `buffer_bdp` bandwidth-delay products of `rate_mbit` × `rtt_ms` in
/// 1500-byte packets, at least 2 (single-flow and competing-flow paths
/// size their buffers alike).
pub fn buffer_packets(rate_mbit: f64, rtt_ms: f64, buffer_bdp: f64) -> u64 {
    let bdp = rate_mbit * 1e6 * rtt_ms / 1e3 / (1500.0 * 8.0);
    ((bdp * buffer_bdp).round() as u64).max(2)
}

/// The matrix's paths with these names (`--only`), in the order given;
/// an unknown name is an error that lists the matrix.
pub fn paths_named(names: &[String]) -> Result<Vec<PathSpec>, String> {
    names
        .iter()
        .map(|n| {
            MATRIX
                .iter()
                .find(|p| p.name == n.as_str())
                .copied()
                .ok_or_else(|| {
                    format!(
                        "--only: no path `{n}`; the matrix has: {}",
                        MATRIX.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
                    )
                })
        })
        .collect()
}

/// The packets Linux TCP sends before it paces any
/// (`tcp_update_skb_after_send()` charges pacing time from the tenth data
/// segment on): the simulated match's `initial_burst`.
pub const LINUX_INITIAL_BURST: u32 = 10;

/// A flow made to run as kernel TCP's `kernel_cc` does, as validate's
/// competing flows are: [`sim_flow`] with the kernel's packet size,
/// TCP's SYN exchange, Linux's first burst, receiver (with the running
/// kernel's receive-buffer rule, [`linux_rcv_autotuning`]), pacing and
/// TSO deferral.
pub fn tcp_like_flow(kernel_cc: &str) -> Flow {
    sim_flow(kernel_cc)
        .handshake("tcp")
        .initial_burst(LINUX_INITIAL_BURST)
        .packet(KERNEL_DEFAULT.payload, u64::from(KERNEL_DEFAULT.header))
        .pacing(sim_pacing(kernel_cc))
        .tso_defer(true)
        .ack("linux")
        .rcv_autotuning(super::linux_rcv_autotuning())
}

/// The simulator's counterpart of the kernel's `kernel_cc`, for every
/// scenario validate writes (single-flow and competing): its `algorithm`
/// and the sub-table that makes it run as the kernel's does.
/// - `bbrlab_bbr3`: `bbr3` as Linux v3 with the stock kernel's signals
///   (compare maps it back to bbrlab_bbr3);
/// - `cubic`: with Linux's HyStart (`tcp_cubic.c`), not RFC 9406's
///   HyStart++, which left slow start later and with a conservative
///   phase: beside a BBRv3 flow in a 2-BDP buffer it grew to 184 packets
///   where the kernel's stopped at about 70, and the overflow cut BBRv3's
///   `inflight_longterm` for the rest of the run.
pub fn sim_counterpart(kernel_cc: &str) -> &str {
    congestion::Algorithm::from_kernel_name(kernel_cc).map_or(kernel_cc, |a| a.name())
}

/// The simulated flow matched to a kernel control: its algorithm
/// ([`sim_counterpart`]) with the kernel's settings, BBRv3 as the BPF
/// control runs it (the linux-v3 profile, stock-kernel signals) and
/// CUBIC with Linux's HyStart and congestion-avoidance rules.
pub fn sim_flow(kernel_cc: &str) -> Flow {
    let flow = Flow::new(sim_counterpart(kernel_cc));
    match kernel_cc {
        BBR3_KERNEL => {
            flow.tune("bbr3", "profile", "linux-v3")
                .tune("bbr3", "signals", "stock-kernel")
        }
        "cubic" => {
            flow.tune("cubic", "hystart_variant", "linux")
                .tune("cubic", "avoidance", "linux")
        }
        _ => flow,
    }
}

/// The simulated sender's pacer for a kernel control: Linux paces only a
/// control that asks it to (BBR and bbrlab's controls set
/// `sk_pacing_status`; `tcp_needs_internal_pacing()`), and the emulator's
/// machine has no fq qdisc to pace the rest, so CUBIC and Reno send each
/// window's worth at once. Their own bursts then queue at the bottleneck
/// and reach their RTT samples, which decides when HyStart ends slow
/// start beside another flow.
pub fn sim_pacing(kernel_cc: &str) -> &'static str {
    if matches!(kernel_cc, "cubic" | "reno") {
        "off"
    } else {
        "quantum"
    }
}

/// The sender's pacer in validate's simulations matched to kernel TCP
/// (`validate --sim-pacing`).
///
/// Linux's is what they run by default, and since 2026-12-06 the
/// default of a TCP-like flow. One packet at a time, the default before,
/// is there to judge it against the same kernel runs: where the two
/// differ is where a scenario with `pacing = "exact"` parts from Linux (three `bbr` flows in a queue of a few
/// packets lock one out one packet at a time, and share in Linux's
/// pairs: the fuzz chapter, "Checked against Linux").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SimPacer {
    /// Linux's: BBR and bbrlab's BPF controls in TSO-sized bursts, CUBIC
    /// and Reno not paced ([`sim_pacing`]).
    #[default]
    Linux,
    /// One packet at a time for every algorithm (`pacing = "exact"`, the
    /// simulator's default for TCP-like flows before 2026-12-06).
    Exact,
}

impl SimPacer {
    /// Both, in the order the option lists them.
    pub const ALL: [SimPacer; 2] = [SimPacer::Linux, SimPacer::Exact];

    /// The option's spelling, as `validate.json` records it.
    pub fn name(self) -> &'static str {
        match self {
            SimPacer::Linux => "linux",
            SimPacer::Exact => "exact",
        }
    }

    /// The pacer `name` spells, if any ([`SimPacer::name`]).
    pub fn from_name(name: &str) -> Option<SimPacer> {
        SimPacer::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The pacer a `validate.json` records (`simulator_pacer`); a file
    /// from before the option has none and ran Linux's.
    pub fn of_json(doc: &Value) -> Result<SimPacer, String> {
        match doc["simulator_pacer"].as_str() {
            None => Ok(SimPacer::Linux),
            Some(n) => SimPacer::from_name(n).ok_or_else(|| {
                format!("simulator_pacer `{n}`: not a pacer validate knows (linux or exact)")
            }),
        }
    }

    /// What a table's caption says of the pacer `doc` records (a
    /// validate.json, or its `multiflow` section): nothing for Linux's,
    /// which every run before the option had.
    pub fn caption(doc: &Value) -> &'static str {
        match SimPacer::of_json(doc) {
            Ok(SimPacer::Linux) => "",
            Ok(SimPacer::Exact) => {
                "; the simulated senders pace one packet at a time (`--sim-pacing exact`), not as Linux does"
            }
            Err(_) => "; the simulated senders' pacer is not one this version knows",
        }
    }

    /// The scenario's `pacing` for the counterpart of `kernel_cc`.
    pub fn pacing(self, kernel_cc: &str) -> &'static str {
        match self {
            SimPacer::Linux => sim_pacing(kernel_cc),
            SimPacer::Exact => "exact",
        }
    }
}

/// The one-flow scenario `compare` runs for `p`, its sender paced by
/// `pacer`.
pub fn scenario_toml_paced(
    p: &PathSpec,
    algorithm: &str,
    seconds: u64,
    seed: u64,
    pacer: SimPacer,
) -> String {
    // Kernel-sized bursts: Linux hands the pacer TSO super-packets of at
    // least two segments once BBR paces above 1.2 Mbit/s
    // (`bbr_min_tso_segs()`, `tcp_tso_autosize()`), and fq or TCP's own
    // pacing releases each at once; the UDP transport sends a quantum per
    // GSO call. The second segment of a pair waits one packet time at the
    // bottleneck, which at 2 Mbit/s is 6 ms of every other RTT sample:
    // with one packet at a time the simulated `bbr3` read 106.6 ms there
    // against the kernel's 116-127, with bursts 112.3 (multi-flow
    // validate always used bursts). CUBIC and Reno are not paced at all
    // ([`sim_pacing`]).
    let flow = sim_flow(algorithm).pacing(pacer.pacing(algorithm));
    path_scenario(p, flow, seconds, seed).to_toml()
}

/// The simulator's scenario of path `p` with one flow, `flow`, as
/// validate writes it ([`scenario_toml_paced`]).
pub fn path_scenario(p: &PathSpec, flow: Flow, seconds: u64, seed: u64) -> ScenarioBuilder {
    let half = millis(p.rtt_ms / 2.0);
    let rate_bps = (p.rate_mbit * 1000.0).round() * 1e3;
    let mut fwd = Direction::new()
        .rate_bps(rate_bps)
        .delay(half)
        .queue(Queue::packets(queue_packets(p)));
    if p.loss > 0.0 {
        fwd = fwd.loss(p.loss);
    }
    if p.jitter_sd_ms > 0.0 {
        fwd = fwd.jitter(&Jitter {
            mean: millis(2.0 * p.jitter_sd_ms),
            sd: millis(p.jitter_sd_ms),
            floor: Duration::ZERO,
            reorder: false,
        });
    }
    ScenarioBuilder::new(fwd)
        .comment(&format!(
            "Written by `bbrlab validate` for path {}.",
            p.name
        ))
        .name(&format!("validate-{}", p.name))
        .duration(Duration::from_secs(seconds))
        .sample_interval(Duration::from_millis(10))
        .seed(seed)
        .reverse(Direction::new().rate_bps(rate_bps).delay(half))
        .flow(flow)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--sim-pacing`: Linux's pacer writes what Linux does for each
    /// control (BBR in bursts, CUBIC not paced); one packet at a time
    /// writes `exact` for every one. The scenario parses either way.
    #[test]
    fn each_pacer_writes_its_pacing_for_every_control() {
        let p = &MATRIX[0];
        for (pacer, bbr, cubic) in [
            (SimPacer::Linux, "quantum", "off"),
            (SimPacer::Exact, "exact", "exact"),
        ] {
            for (alg, want) in [("bbr", bbr), ("cubic", cubic)] {
                let text = scenario_toml_paced(p, alg, 6, 1, pacer);
                assert!(
                    text.contains(&format!("pacing = \"{want}\"")),
                    "{pacer:?} {alg}: {text}"
                );
                scenario::parse(&text, "v.toml", Path::new("."), Path::new("v.toml"))
                    .unwrap_or_else(|e| panic!("{pacer:?} {alg}: {e}\n{text}"));
            }
        }
    }

    /// The pacer a validate.json records: none (every run before the
    /// option) is Linux's; an unknown name is an error naming both; the
    /// caption speaks only of the one-packet pacer.
    #[test]
    fn a_recorded_pacer_reads_back_and_captions() {
        for p in SimPacer::ALL {
            assert_eq!(SimPacer::from_name(p.name()), Some(p));
            let doc = serde_json::json!({ "simulator_pacer": p.name() });
            assert_eq!(SimPacer::of_json(&doc), Ok(p));
        }
        assert_eq!(
            SimPacer::of_json(&serde_json::json!({})),
            Ok(SimPacer::Linux)
        );
        let e = SimPacer::of_json(&serde_json::json!({ "simulator_pacer": "fq" })).unwrap_err();
        assert!(e.contains("`fq`") && e.contains("linux or exact"), "{e}");
        assert_eq!(SimPacer::caption(&serde_json::json!({})), "");
        assert!(
            SimPacer::caption(&serde_json::json!({ "simulator_pacer": "exact" }))
                .contains("--sim-pacing exact")
        );
    }
}
