//! From the file's tables to a simulation: each table checked for what
//! serde cannot check and turned into the simulator's configuration, one
//! function per table ([`build`] runs them in the file's order).

use super::*;

/// A flow's `hops = [first, ..., last]`: consecutive hop indices, hop 0
/// being `[link.forward]` and hop k the k-th `[[link.hops]]` table.
fn flow_hops(list: &[i64], n_hops: usize) -> Result<(usize, usize), String> {
    let allowed = if n_hops == 1 {
        "the path has one hop, 0 ([link.forward]); add `[[link.hops]]` tables for more".to_string()
    } else {
        format!(
            "allowed: consecutive indices from 0 ([link.forward]) to {} (the last `[[link.hops]]`), e.g. `hops = [0, 1]`",
            n_hops - 1
        )
    };
    let Some(&first) = list.first() else {
        return Err(format!("empty; {allowed}"));
    };
    for (j, &h) in list.iter().enumerate() {
        if h < 0 || h as usize >= n_hops {
            return Err(format!("hop {h} does not exist; {allowed}"));
        }
        if h != first + j as i64 {
            return Err(format!(
                "{list:?} is not consecutive and ascending; a flow crosses a run of hops in order ({allowed})"
            ));
        }
    }
    Ok((first as usize, first as usize + list.len() - 1))
}

/// Most header bytes a flow may declare: IPv6 (40) with a full TCP header
/// (60) and room for tunnels, far below any packet it would ride on.
const MAX_HEADER_BYTES: u64 = 1000;

/// The most packets `initial_burst` may let leave unpaced: a bound a
/// typo cannot pass, far above any stack's initial window (Linux: 10).
const MAX_INITIAL_BURST: i64 = 100_000;

/// QUIC's maximum ACK delay (25 ms), for the `quic-2018` stack.
const QUIC_MAX_ACK_DELAY_NS: u64 = 25_000_000;

/// Turns a typed scenario into a simulation, checking what serde cannot.
/// `err(field, message)` makes an error located at `field` (a path such
/// as `flow[0].mss`) in the file.
pub(crate) fn build(
    sf: &ScenarioFile,
    base_dir: &Path,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<(SimConfig, netsim::Workload), ScenarioError> {
    if sf.duration.0 == 0 {
        return Err(err("duration", "must be positive, e.g. `60s`".into()));
    }
    if let Some(si) = sf.sample_interval.filter(|d| d.0 >= sf.duration.0) {
        // The samples are taken at 0, one interval, ... before the end: an
        // interval as long as the run leaves the one at 0, and the
        // figures and queue statistics drawn from samples would show an
        // empty run.
        return Err(err(
            "sample_interval",
            format!(
                "{:?} is not shorter than the run (duration {:?}): only the sample at 0 s would be taken; give a shorter interval, or \"0s\" for no time series",
                std::time::Duration::from_nanos(si.0),
                std::time::Duration::from_nanos(sf.duration.0)
            ),
        ));
    }
    if sf.flow.is_empty() && sf.arrivals.is_empty() {
        return Err(err(
            "[[flow]]",
            "the scenario has no flows; add at least one `[[flow]]` or `[[arrivals]]` table".into(),
        ));
    }
    for (i, a) in sf.arrivals.iter().enumerate() {
        workload::check_template(i, a, err)?;
    }
    let (forward, reverse, topology) = link_tables(sf, base_dir, err)?;
    let n_hops = topology.hops.len() + 1;
    let mut flows = Vec::new();
    // Arrival templates go through the same checks as flows, after them.
    let listed = sf.flow.len();
    let templates = sf.arrivals.iter().map(|a| &a.flow);
    for (i, f) in sf.flow.iter().chain(templates).enumerate() {
        let field = |name: &str| match i.checked_sub(listed) {
            None => format!("flow[{i}].{name}"),
            Some(j) => format!("arrivals[{j}].{name}"),
        };
        if i >= listed && f.access.is_some() {
            return Err(err(
                &field("access"),
                "a generated flow crosses the shared path; per-flow access links are for listed `[[flow]]`s (give the arrivals `extra_rtt` for a longer path)".into(),
            ));
        }
        if i < listed {
            check_starts_in_run(f, sf.duration.0, &field, err)?;
        }
        flows.extend(flow_table(f, &field, n_hops, base_dir, err)?);
        // After the table's own checks, which name a bad `mss` first.
        check_mss_change_in_run(f, sf.duration.0, &field, err)?;
    }
    // Each template made exactly one flow (count and stagger are refused).
    let templates = flows.split_off(flows.len() - sf.arrivals.len());
    let work = netsim::Workload {
        arrivals: workload::arrivals(&sf.arrivals, templates, sf.duration.0, base_dir, err)?,
        cross: workload::cross(&sf.cross, sf.duration.0, err)?,
    };
    let cfg = SimConfig {
        duration_ns: sf.duration.0,
        seed: sf.seed.unwrap_or(1),
        forward,
        reverse,
        flows,
        sample_interval_ns: sf.sample_interval.map_or(10_000_000, |d| d.0),
        topology,
    };
    // What a run may cost in time, memory and disk.
    crate::limits::check_run(&cfg, sf.link.forward.rate.is_some())
        .map_err(|(field, message)| err(&field, message))?;
    crate::packet_fit::check_policers(&cfg, &work)
        .map_err(|(field, message)| err(&field, message))?;
    Ok((cfg, work))
}

/// `[link]`: the forward and reverse directions and the hops after the
/// forward one.
fn link_tables(
    sf: &ScenarioFile,
    base_dir: &Path,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<
    (
        link::ResolvedDirection,
        link::ResolvedDirection,
        netsim::Topology,
    ),
    ScenarioError,
> {
    let forward = sf
        .link
        .forward
        .resolve(base_dir)
        .map_err(|e| err(&format!("link.forward.{}", e.field), e.message))?;
    let reverse_cfg = sf.link.reverse.clone().unwrap_or_default();
    let reverse = reverse_cfg
        .resolve(base_dir)
        .map_err(|e| err(&format!("link.reverse.{}", e.field), e.message))?;
    let mut topology = netsim::Topology {
        hops: Vec::new(),
        forward_delay_schedule: sf.link.forward.delay_schedule.clone(),
        reverse_delay_schedule: reverse_cfg.delay_schedule.clone(),
    };
    if sf.link.ports.is_some() {
        return Err(err(
            "link.ports",
            "`[[link.ports]]` is the emulator's per-port path (`bbrlab emu --scenario`); in the simulator give the flow its own access link, `[flow.access.forward]` / `[flow.access.reverse]`".into(),
        ));
    }
    let hop_tables = sf.link.hops.as_deref().unwrap_or(&[]);
    if hop_tables.len() + 1 > netsim::MAX_HOPS {
        return Err(err(
            "link.hops",
            format!(
                "{} hops after [link.forward]; allowed up to {} (so {} hops in all)",
                hop_tables.len(),
                netsim::MAX_HOPS - 1,
                netsim::MAX_HOPS
            ),
        ));
    }
    for (k, h) in hop_tables.iter().enumerate() {
        let d = h
            .resolve(base_dir)
            .map_err(|e| err(&format!("link.hops[{k}].{}", e.field), e.message))?;
        topology.hops.push(netsim::Segment {
            direction: d,
            delay_schedule: h.delay_schedule.clone(),
        });
    }
    Ok((forward, reverse, topology))
}

/// A listed flow must start before the run ends, and with `count` and
/// `stagger` so must its last copy: one that never starts sends nothing,
/// yet counts in the summaries (a Jain's index of 0.33 for three flows
/// of which two never ran), which is a mistake in the file, not a result.
fn check_starts_in_run(
    f: &FlowTable,
    duration_ns: u64,
    field: &dyn Fn(&str) -> String,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    let start = f.start.map_or(0, |d| d.0);
    let copies = f.count.unwrap_or(1).max(1);
    let last = f
        .stagger
        .map_or(0, |s| s.0.saturating_mul(copies.saturating_sub(1) as u64))
        .saturating_add(start);
    let secs = |ns: u64| ns as f64 / 1e9;
    let never = "the flow would never send";
    crate::workload::check_before_end(start, duration_ns, "start", never, field, err)?;
    if last >= duration_ns {
        return Err(err(
            &field("stagger"),
            format!(
                "with count {copies}, the last copy would start at {} s, not before the run's end ({} s), and never send; give fewer copies or a shorter stagger",
                secs(last),
                secs(duration_ns)
            ),
        ));
    }
    Ok(())
}

/// A flow's `mss_change` must come before the run ends: one at or after
/// the end never happens, yet the run's scenario.toml lists it, so the
/// results would seem to include a segment-size change they do not.
fn check_mss_change_in_run(
    f: &FlowTable,
    duration_ns: u64,
    field: &dyn Fn(&str) -> String,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    f.mss_change.map_or(Ok(()), |c| {
        let never = "the segment size would never change";
        crate::workload::check_before_end(c.at.0, duration_ns, "mss_change.at", never, field, err)
    })
}

/// One `[[flow]]` (or an arrival's template): its flows, `count` of them
/// (`stagger` apart), named, timed and configured. `field(name)` is the
/// path errors point at.
fn flow_table(
    f: &FlowTable,
    field: &dyn Fn(&str) -> String,
    n_hops: usize,
    base_dir: &Path,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<Vec<FlowConfig>, ScenarioError> {
    let segment = |d: &Option<link::DirectionConfig>, side: &str| {
        d.as_ref()
            .map(|d| {
                d.resolve(base_dir)
                    .map(|direction| netsim::Segment {
                        direction,
                        delay_schedule: d.delay_schedule.clone(),
                    })
                    .map_err(|e| err(&field(&format!("access.{side}.{}", e.field)), e.message))
            })
            .transpose()
    };
    let (access_forward, access_reverse) = match &f.access {
        None => (None, None),
        Some(a) => (
            segment(&a.forward, "forward")?,
            segment(&a.reverse, "reverse")?,
        ),
    };
    let hops = match &f.hops {
        None => None,
        Some(list) => Some(flow_hops(list, n_hops).map_err(|m| err(&field("hops"), m))?),
    };
    let header_bytes = match f.header_bytes {
        None => 0,
        Some(h) if h <= MAX_HEADER_BYTES => h as u32,
        Some(h) => {
            return Err(err(
                &field("header_bytes"),
                format!(
                    "{h} bytes; allowed 0 to {MAX_HEADER_BYTES} (52 is IPv4 + TCP with timestamps)"
                ),
            ))
        }
    };
    let initial_burst_packets = match f.initial_burst {
        None => 0,
        Some(n) if (0..=MAX_INITIAL_BURST).contains(&n) => n as u32,
        Some(n) => {
            return Err(err(
                &field("initial_burst"),
                format!(
                    "{n} packets; allowed 0 to {MAX_INITIAL_BURST} (Linux TCP sends its first 10 unpaced)"
                ),
            ))
        }
    };
    let mss_change = match f.mss_change {
        None => None,
        Some(c) if !(500..=9000).contains(&c.mss) => {
            return Err(err(
                &field("mss_change.mss"),
                format!("{} bytes; allowed 500 to 9000, as for `mss`", c.mss),
            ))
        }
        Some(c) if c.at.0 > crate::limits::MAX_TIME_NS => {
            return Err(err(
                &field("mss_change.at"),
                format!(
                    "{:.0} s; the limit is {} s (one day, the longest run)",
                    c.at.0 as f64 / 1e9,
                    crate::limits::MAX_TIME_NS / 1_000_000_000
                ),
            ))
        }
        Some(c) => Some(netsim::MssChange {
            at_ns: c.at.0,
            mss: c.mss,
        }),
    };
    let quic = f.stack == Some(FlavourName::Quic2018);
    let cc = cc_tables(f, quic, field, err)?;
    let app = app_of(f, field, err)?;
    for (name, v) in [
        ("start", f.start),
        ("stop", f.stop),
        ("stagger", f.stagger),
        ("extra_rtt", f.extra_rtt),
        ("app_rate_from", f.app_rate_from),
    ] {
        if let Some(d) = v.filter(|d| d.0 > crate::limits::MAX_TIME_NS) {
            return Err(err(
                &field(name),
                format!(
                    "{:.0} s; the limit is {} s (one day, the longest run)",
                    d.0 as f64 / 1e9,
                    crate::limits::MAX_TIME_NS / 1_000_000_000
                ),
            ));
        }
    }
    let start = f.start.map_or(0, |d| d.0);
    if let Some(stop) = f.stop {
        if stop.0 <= start {
            return Err(err(&field("stop"), "must be after `start`".into()));
        }
    }
    let count = f.count.unwrap_or(1);
    if count == 0 || count > 1000 {
        return Err(err(&field("count"), format!("{count}; allowed 1 to 1000")));
    }
    let ack = with_rcv_buffer(
        ack_policy(f.ack, quic, f.algorithm.builtin().is_none()),
        f.rcv_buffer,
        field,
        err,
    )?;
    let ack = with_rcv_autotuning(ack, f.rcv_autotuning, field, err)?;
    let pacing = pacing_of(f.pacing, quic, f.algorithm.builtin());
    let tso_defer = tso_defer_of(f.tso_defer, quic, pacing, field, err)?;
    if f.timestamps == Some(true) && quic {
        return Err(err(
            &field("timestamps"),
            "is TCP's option, and this flow runs QUIC's stack (`stack = \"quic-2018\"`), whose packets carry none".into(),
        ));
    }
    let mut flows = Vec::new();
    for k in 0..count {
        let label = f
            .name
            .clone()
            .unwrap_or_else(|| f.algorithm.name().to_string());
        let name = if count > 1 {
            format!("{label}-{k}")
        } else {
            label
        };
        let offset = f.stagger.map_or(0, |s| s.0.saturating_mul(k as u64));
        flows.push(FlowConfig {
            name,
            cc,
            start_ns: start + offset,
            stop_ns: f.stop.map(|s| s.0 + offset),
            size_bytes: f.size.map(|s| s.0),
            extra_rtt_ns: f.extra_rtt.map_or(0, |d| d.0),
            app: app.clone(),
            ack,
            // QUIC's probe timeout, which never collapses cwnd by itself.
            timeout: if quic {
                netsim::Timeout::Pto {
                    max_ack_delay_ns: QUIC_MAX_ACK_DELAY_NS,
                }
            } else {
                netsim::Timeout::Rto
            },
            loss_detection: if quic {
                netsim::LossDetection::Quic2018
            } else {
                netsim::LossDetection::Linux
            },
            custom_cc: match f.algorithm {
                AlgName::Builtin(_) => None,
                // By name: the runner attaches the stack's controller
                // (the parser does not link the stacks).
                AlgName::Stack(q) => Some(netsim::CustomCc::named(q.name())),
            },
            pacing,
            tso_defer,
            initial_burst_packets,
            mss_change,
            header_bytes,
            timestamps: f.timestamps.unwrap_or(false),
            handshake: match f.handshake {
                Some(HandshakeName::Tcp) => netsim::Handshake::Tcp,
                Some(HandshakeName::None) | None => netsim::Handshake::None,
            },
            ecn: f.ecn.map_or(netsim::Ecn::NotEct, |e| e.0),
            access_forward: access_forward.clone(),
            access_reverse: access_reverse.clone(),
            hops,
        });
    }
    Ok(flows)
}

/// The controller's configuration from `algorithm`, `mss`, `stack` and the
/// tuning tables (`[flow.bbr]`, `[flow.jitter]`, `[flow.bbr3]`,
/// `[flow.cubic]`), each refused where it does not apply.
fn cc_tables(
    f: &FlowTable,
    quic: bool,
    field: &dyn Fn(&str) -> String,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<CcConfig, ScenarioError> {
    // A stack's controller ignores `cc.algorithm` (it runs through
    // `Controller::custom`); CUBIC's defaults fill the rest.
    let mut cc = CcConfig::new(f.algorithm.builtin().unwrap_or(Algorithm::Cubic));
    if let Some(mss) = f.mss {
        if !(500..=9000).contains(&mss) {
            return Err(err(
                &field("mss"),
                format!("{mss} bytes; allowed 500 to 9000"),
            ));
        }
        cc.mss_bytes = mss;
    }
    if quic {
        // The whole stack of seed 001's authors: QUIC's BBR, RTT
        // statistics and loss detection of 2018.
        cc.bbr = congestion::BbrConfig::quic_2018();
        cc.jitter.stats = congestion::JitterStats::Quic2018;
    }
    if let Some(b) = &f.bbr {
        let c = &mut cc.bbr;
        match b.flavour {
            Some(FlavourName::Linux) => *c = congestion::BbrConfig::default(),
            Some(FlavourName::Quic2018) => *c = congestion::BbrConfig::quic_2018(),
            None => {}
        }
        c.quantization_budget = b.quantization_budget.unwrap_or(c.quantization_budget);
        if let Some(m) = b.min_cwnd {
            c.min_cwnd_bytes = Some(m.0);
        }
        c.ack_aggregation = match b.ack_aggregation {
            Some(FlavourName::Linux) => congestion::AckAggregation::Linux,
            Some(FlavourName::Quic2018) => congestion::AckAggregation::Quic2018,
            None => c.ack_aggregation,
        };
        c.min_rtt_samples = match b.min_rtt_samples {
            Some(MinRttName::Latest) => congestion::MinRttSamples::Latest,
            Some(MinRttName::AllAcked) => congestion::MinRttSamples::AllAcked,
            None => c.min_rtt_samples,
        };
        c.bw_window_follows_cycle = b
            .bw_window_follows_cycle
            .unwrap_or(c.bw_window_follows_cycle);
        c.recovery = match b.recovery {
            Some(RecoveryName::Auto) => congestion::BbrRecovery::Auto,
            Some(RecoveryName::Linux) => congestion::BbrRecovery::Linux,
            Some(RecoveryName::Quic2018) => congestion::BbrRecovery::Quic2018,
            None => c.recovery,
        };
        c.lt_bw = b.lt_bw.unwrap_or(c.lt_bw);
        c.extra_acked = b.extra_acked.unwrap_or(c.extra_acked);
        c.probe_rtt = b.probe_rtt.unwrap_or(c.probe_rtt);
        c.idle_restart = b.idle_restart.unwrap_or(c.idle_restart);
        c.packet_conservation = b.packet_conservation.unwrap_or(c.packet_conservation);
    }
    if let Some(j) = &f.jitter {
        cc.jitter.alpha = j.alpha.unwrap_or(cc.jitter.alpha);
        cc.jitter.beta = j.beta.unwrap_or(cc.jitter.beta);
        cc.jitter.gamma = j.gamma.unwrap_or(cc.jitter.gamma);
        cc.jitter.stats = match j.stats {
            Some(JitterStatsName::Quic2018) => congestion::JitterStats::Quic2018,
            Some(JitterStatsName::SrttFirst) => congestion::JitterStats::SrttFirst,
            None => cc.jitter.stats,
        };
        if let Some(c) = j.cadence {
            cc.jitter.cadence = c.0;
        }
    }
    if let AlgName::Stack(q) = f.algorithm {
        for (table, set) in [
            ("bbr", f.bbr.is_some()),
            ("bbr3", f.bbr3.is_some()),
            ("jitter", f.jitter.is_some()),
            ("cubic", f.cubic.is_some()),
        ] {
            if set {
                return Err(err(
                    &field(table),
                    format!(
                        "`[flow.{table}]` tunes bbrlab's own algorithms; `{q}` is the QUIC stack's controller and runs with that stack's defaults"
                    ),
                ));
            }
        }
    }
    if let Some(b) = &f.bbr3 {
        if f.algorithm != AlgName::Builtin(Algorithm::Bbr3) {
            return Err(err(
                &field("bbr3"),
                format!(
                    "`[flow.bbr3]` applies only to `algorithm = \"bbr3\"`; this flow's algorithm is `{}`",
                    f.algorithm.name()
                ),
            ));
        }
        if let Some(p) = b.profile {
            cc.bbr3 = congestion::Bbr3Config::for_profile(p.0);
        }
        // After the profile, which resets every field to its own.
        if let Some(s) = b.signals {
            cc.bbr3.signals = s.0;
        }
    }
    if let Some(c) = &f.cubic {
        cc.cubic.hystart = c.hystart.unwrap_or(cc.cubic.hystart);
        if let Some(v) = c.hystart_variant {
            cc.cubic.hystart_variant = v.0;
        }
        if let Some(a) = c.avoidance {
            cc.cubic.avoidance = a.0;
        }
        cc.cubic.fast_convergence = c.fast_convergence.unwrap_or(cc.cubic.fast_convergence);
        cc.cubic.reno_friendly = c.reno_friendly.unwrap_or(cc.cubic.reno_friendly);
    }
    // The ranges are the crate's (`Config::check`), so a file and an
    // embedder's code are refused on the same values. Of the fields it
    // checks, a file sets only `jitter.alpha`, `beta` and `gamma`, and
    // `ConfigError::field` is their path under `[flow]` as written; a
    // preset's own value would be named the same way, at the flow.
    cc.check().map_err(|e| {
        err(
            &field(e.field),
            format!("{}; allowed {}", e.value, e.allowed),
        )
    })?;
    Ok(cc)
}

/// What the application offers: bulk, a rate, or chunks.
fn app_of(
    f: &FlowTable,
    field: &dyn Fn(&str) -> String,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<App, ScenarioError> {
    if f.app_rate_from.is_some() && f.app_rate.is_none() {
        return Err(err(
            &field("app_rate_from"),
            "needs `app_rate`: the flow is bulk until `app_rate_from`, then offers `app_rate`"
                .into(),
        ));
    }
    Ok(match (f.app_rate, f.chunk_size, f.chunk_every) {
        (None, None, None) => App::Bulk,
        (Some(r), None, None) if r.0 > 0.0 => match f.app_rate_from {
            Some(from) => App::BulkThenRate {
                after_ns: from.0,
                bytes_per_sec: r.0 / 8.0,
            },
            None => App::Rate {
                bytes_per_sec: r.0 / 8.0,
            },
        },
        (Some(_), None, None) => {
            return Err(err(
                &field("app_rate"),
                "must be positive, e.g. `2mbit`".into(),
            ))
        }
        (None, Some(size), Some(every)) if every.0 > 0 => App::Chunks {
            bytes: size.0,
            every_ns: every.0,
        },
        (None, Some(_), Some(_)) => {
            return Err(err(
                &field("chunk_every"),
                "must be positive, e.g. `4s`".into(),
            ))
        }
        _ => {
            return Err(err(
                &field("app_rate"),
                "give either `app_rate`, or both `chunk_size` and `chunk_every`, or neither (bulk)"
                    .into(),
            ))
        }
    })
}

/// Linux's window share of a receive buffer: the kernel traced counts
/// 160/256 of a segment's memory as window (`scaling_ratio`), the share
/// `AckPolicy::LINUX`'s window sizes are taken at.
const RCV_WINDOW_SHARE: (u64, u64) = (160, 256);

/// The receive buffers `rcv_buffer` accepts, bytes: from one that still
/// holds the SYN's 64 KiB window to the largest `net.ipv4.tcp_rmem[2]`
/// takes (an `int`).
const RCV_BUFFER_RANGE: std::ops::RangeInclusive<u64> = 65_536..=2_147_483_647;

/// `ack` with `rcv_buffer` (Linux's `net.ipv4.tcp_rmem[2]`, the most the
/// receive buffer may grow to; 32 MiB by default) applied: the window may
/// grow to its window share. Only Linux's receiver has a window, so the
/// key is refused with any other. A path whose BDP exceeds the default's
/// 20 MB window (C2's 10 Gbit/s × 100 ms) needs it, as a kernel receiver
/// there needs its sysctl raised.
fn with_rcv_buffer(
    ack: AckPolicy,
    rcv_buffer: Option<Bytes>,
    field: &dyn Fn(&str) -> String,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<AckPolicy, ScenarioError> {
    let Some(Bytes(b)) = rcv_buffer else {
        return Ok(ack);
    };
    if !RCV_BUFFER_RANGE.contains(&b) {
        return Err(err(
            &field("rcv_buffer"),
            format!(
                "{b} bytes; allowed {} to {} (Linux's tcp_rmem[2] is 32 MiB by default)",
                RCV_BUFFER_RANGE.start(),
                RCV_BUFFER_RANGE.end()
            ),
        ));
    }
    match ack {
        AckPolicy::Linux {
            quickacks,
            max_delay_ns,
            comp_sack_delay_ns,
            comp_sack_slack_ns,
            comp_sack_max,
            rcv_window_init,
            autotuning,
            ..
        } => {
            let max = b * RCV_WINDOW_SHARE.0 / RCV_WINDOW_SHARE.1;
            Ok(AckPolicy::Linux {
                quickacks,
                max_delay_ns,
                comp_sack_delay_ns,
                comp_sack_slack_ns,
                comp_sack_max,
                rcv_window_init: rcv_window_init.min(max),
                rcv_window_max: max,
                autotuning,
            })
        }
        _ => Err(not_linuxs_receiver(
            "rcv_buffer",
            "Linux's receive buffer",
            field,
            err,
        )),
    }
}

/// The sender's pacer: the one `pacing` names, else Linux's for a flow of
/// bbrlab's algorithms on the Linux stack, as its receiver is Linux's
/// ([`ack_policy`]). Linux paces a control that asks it to (BBR sets
/// `sk_pacing_status`; `tcp_needs_internal_pacing()`) in TSO-sized bursts
/// (`tcp_tso_autosize()`), which `"quantum"` models, and without an fq
/// qdisc sends CUBIC and Reno unpaced (`"off"`). Judged against the same
/// kernel runs (`validate --sim-pacing`), Linux's pacer matched kernel
/// TCP where flows compete on 15 of 17 paths against 7 one packet at a
/// time, and a single flow's srtt more closely on 14 rows against 1 (20
/// of 22 rows within against 21, the one between them inside the kernel
/// runs' own spread); three BBR v1 flows in a queue of a few packets
/// share with it, as in Linux, where one packet at a time locks one out.
/// QUIC's stack and a stack's own controller pace one packet at a time
/// (`"exact"`), the default before 2026-12-06.
fn pacing_of(named: Option<PacingName>, quic: bool, builtin: Option<Algorithm>) -> netsim::Pacing {
    match named {
        Some(PacingName::Exact) => netsim::Pacing::Exact,
        Some(PacingName::Quantum) => netsim::Pacing::Quantum,
        Some(PacingName::Off) => netsim::Pacing::Off,
        None if quic => netsim::Pacing::Exact,
        None => match builtin {
            Some(Algorithm::Cubic | Algorithm::Reno) => netsim::Pacing::Off,
            Some(Algorithm::Bbr | Algorithm::BbrJitter | Algorithm::Bbr3) => {
                netsim::Pacing::Quantum
            }
            // A stack's controller, or a built-in added later, until its
            // kernel counterpart's pacer is known.
            _ => netsim::Pacing::Exact,
        },
    }
}

/// `tso_defer`: whether the flow's sender waits, as Linux's does, for the
/// ACK that lets a whole TSO packet out (off by default). Only a TCP
/// sender with TSO packets defers: with the exact pacer (one packet at a
/// time) or QUIC's stack the key would change nothing, so it is refused.
fn tso_defer_of(
    set: Option<bool>,
    quic: bool,
    pacing: netsim::Pacing,
    field: &dyn Fn(&str) -> String,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<bool, ScenarioError> {
    match set {
        Some(true) if quic => Err(err(
            &field("tso_defer"),
            "is Linux TCP's rule, and this flow runs QUIC's stack (`stack = \"quic-2018\"`)".into(),
        )),
        Some(true) if pacing == netsim::Pacing::Exact => Err(err(
            &field("tso_defer"),
            "needs TSO packets to defer: `pacing = \"quantum\"` or `\"off\"` (this flow paces one packet at a time, `\"exact\"`)".into(),
        )),
        Some(on) => Ok(on),
        None => Ok(false),
    }
}

/// The error for a key of Linux's receiver (`key`, which sets `what`) on a
/// flow whose receiver is another.
fn not_linuxs_receiver(
    key: &str,
    what: &str,
    field: &dyn Fn(&str) -> String,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> ScenarioError {
    err(
        &field(key),
        format!("sets {what}, and this flow's receiver is not Linux's (`ack = \"linux\"`, the default of bbrlab's algorithms on the Linux stack)"),
    )
}

/// `ack` with `rcv_autotuning`: which kernel's rule raises Linux's
/// receive-window clamp (the default is the rule before Linux 6.16, which
/// the simulator's fidelity tests are matched with). Only Linux's receiver
/// has a window, so the key is refused with any other.
fn with_rcv_autotuning(
    ack: AckPolicy,
    name: Option<RcvAutotuningName>,
    field: &dyn Fn(&str) -> String,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<AckPolicy, ScenarioError> {
    let Some(name) = name else {
        return Ok(ack);
    };
    let rule = match name {
        RcvAutotuningName::Pre6_16 => netsim::sender::RcvAutotuning::Cushioned,
        RcvAutotuningName::Linux6_16 => netsim::sender::RcvAutotuning::Linux6_16,
    };
    let mut ack = ack;
    if let AckPolicy::Linux { autotuning, .. } = &mut ack {
        *autotuning = rule;
        return Ok(ack);
    }
    Err(not_linuxs_receiver(
        "rcv_autotuning",
        "how Linux's receive window grows",
        field,
        err,
    ))
}

/// The receiver's ACK policy: `ack`, or when it is not given the
/// receiver of the flow's stack.
///
/// - A TCP-like flow (one of bbrlab's algorithms on the Linux stack, the
///   default) gets Linux's receiver (`AckPolicy::LINUX`): it is what a
///   kernel TCP sender meets, and `bbrlab validate` found it matching
///   kernel TCP at least as well as an ACK per packet on every single-flow
///   and competing-flow path (book, Validation, "PSH in the simulator";
///   the default since 2026-12-02, see the book's changelog of
///   behaviour). Its ECN feedback is TCP's ECE.
/// - `stack = "quic-2018"`: QUIC 2018's receiver.
/// - A QUIC stack's own controller (`quinn:bbr`, ...): an ACK per packet,
///   as before; its stack's receiver is not modelled.
fn ack_policy(ack: Option<AckName>, quic: bool, stack_controller: bool) -> AckPolicy {
    match ack {
        // QUIC 2018's receiver: an ACK every second packet or after
        // 25 ms (`kMaxDelayedAckTimeMs`), at once on reordering.
        None if quic => AckPolicy::Delayed {
            max_packets: 2,
            max_delay_ns: QUIC_MAX_ACK_DELAY_NS,
        },
        Some(AckName::Quic2018) => AckPolicy::Delayed {
            max_packets: 2,
            max_delay_ns: QUIC_MAX_ACK_DELAY_NS,
        },
        None if stack_controller => AckPolicy::EveryPacket,
        None | Some(AckName::Linux) => AckPolicy::LINUX,
        Some(AckName::Every) => AckPolicy::EveryPacket,
        Some(AckName::Delayed) => AckPolicy::Delayed {
            max_packets: 2,
            max_delay_ns: 40_000_000,
        },
        Some(AckName::Decimated) => AckPolicy::CHROMIUM_ACK_DECIMATION,
    }
}
