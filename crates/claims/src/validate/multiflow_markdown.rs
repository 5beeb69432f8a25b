//! The competing-flow table of `validate.md`.

use super::multiflow_judge::{DECIDED_SE, QUEUE_DELAY_MS, QUEUE_DELAY_PCT, SHARE};
use super::*;

/// Formats a number with `p` decimals, `–` when missing.
pub fn num(v: &Value, p: usize) -> String {
    v.as_f64().map_or("–".into(), |x| format!("{x:.p$}"))
}

/// "0.86 / 0.14": the flows' shares; with their spread over the
/// simulator's seed draws (start phases, in sections written before
/// 2026-12-01) or the kernel's repetitions, when there is more than one,
/// "0.61 [0.52–0.85] / 0.39 [0.15–0.48]".
pub fn shares_cell(side: &Value) -> String {
    let draws = |key: &str| side[key].as_f64().unwrap_or(1.0);
    let spread = draws("draws") > 1.0 || draws("phases") > 1.0 || draws("repetitions") > 1.0;
    side["flows"].as_array().map_or("–".into(), |a| {
        a.iter()
            .map(
                |f| match (f["share_min"].as_f64(), f["share_max"].as_f64()) {
                    (Some(lo), Some(hi)) if spread => {
                        format!("{} [{lo:.2}–{hi:.2}]", num(&f["share"], 2))
                    }
                    _ => num(&f["share"], 2),
                },
            )
            .collect::<Vec<_>>()
            .join(" / ")
    })
}

/// "bbr, cubic", "bbr +10ms, bbr +50ms", "bbr @5s".
pub fn flows_cell(flows: &Value) -> String {
    flows.as_array().map_or("?".into(), |a| {
        a.iter()
            .map(|f| {
                let mut s = f["cc"].as_str().unwrap_or("?").to_string();
                if let Some(x) = f["extra_rtt_ms"].as_f64().filter(|x| *x > 0.0) {
                    s += &format!(" +{x}ms");
                }
                if let Some(x) = f["start_s"].as_u64().filter(|x| *x > 0) {
                    s += &format!(" @{x}s");
                }
                s
            })
            .collect::<Vec<_>>()
            .join(", ")
    })
}

pub fn queue_cell(side: &Value) -> String {
    let q = &side["queue_delay_ms"];
    format!(
        "{} / {} / {}",
        num(&q["p10"], 1),
        num(&q["p50"], 1),
        num(&q["p90"], 1)
    )
}

/// The Markdown table of `validate.json`'s `multiflow` section (empty
/// when it has none).
/// How the simulator started the flows in sections written from
/// 2026-11-30 until 2026-12-01's change to the kernel's SYN times
/// (`simulator_starts`): each flow opened with TCP's SYN exchange through
/// the simulated path (`handshake = "tcp"`), as the kernel's does, and
/// sent its first data when the SYN-ACK arrived; the start phases were
/// centred on the first flow.
pub const STARTS: &str = "SYN exchange simulated, phases centred";

/// How the simulator starts the flows since 2026-12-01: each flow sends
/// its SYN when the repetition's kernel flow did (the emulator's packet
/// log), and the simulator's figures are the median over seed draws
/// (`simulator_draws`), not over start phases.
pub const STARTS_KERNEL: &str = "at the kernel's SYN times, seed draws";

/// The same, when some repetition's kernel run was logged without ports
/// (before 2026-12-01), so its simulated flows started at their
/// scheduled times.
pub const STARTS_SCHEDULED: &str =
    "at the scheduled times where the kernel's are unknown, seed draws";

/// What validate.json said of sections written when the simulator had
/// no handshake and started each flow's data one round trip of its path
/// after the flow's start instead.
pub const STARTS_SHIFTED: &str = "after the handshake, phases centred";

pub fn markdown(doc: &Value) -> Result<String, String> {
    let mf = &doc["multiflow"];
    if mf.is_null() {
        return Ok(String::new());
    }
    let paths = mf["paths"]
        .as_array()
        .ok_or("validate.json's `multiflow` has no `paths` list")?;
    // Sections written before the simulator ran start phases have none;
    // those written since 2026-12-01 have seed draws instead.
    let draws = mf["simulator_draws"].as_u64();
    let phases = mf["simulator_phases"].as_u64().unwrap_or(1);
    // Sections written before the phases were centred and followed the
    // handshake have no `simulator_starts`: their later flows started
    // 0 to 1 round trip late.
    let span = if mf["simulator_starts"] == STARTS {
        "from half a round trip ahead of the first flow to half behind, each flow opening with a simulated SYN exchange"
    } else if mf["simulator_starts"] == STARTS_SHIFTED {
        "from half a round trip ahead of the first flow to half behind, each flow's data after its handshake"
    } else {
        "one round trip apart in all"
    };
    let mut sim_figures = if let Some(n) = draws {
        let median = if n > 1 {
            format!("; the simulator's figures are the median over {n} seeds per repetition, with each share's least and greatest in brackets")
        } else {
            String::new()
        };
        let when = if mf["simulator_starts"] == STARTS_KERNEL {
            "when the repetition's kernel flows did (the emulator's packet log)"
        } else {
            "when the repetition's kernel flows did where the emulator's packet log says, else at their scheduled times"
        };
        // Sections written before 2026-12-02 have no host noise.
        let noise = super::host_noise_text::host_noise_text(
            &mf["simulator_host_noise"],
            "each simulated ACK",
        );
        format!("{median}; the simulator's flows send their SYNs {when} and open with a simulated SYN exchange{noise}")
    } else if phases > 1 {
        format!("; the simulator's figures are the median over {phases} start phases of the later flows, {span}, with each share's least and greatest in brackets")
    } else {
        String::new()
    };
    sim_figures.push_str(SimPacer::caption(mf));
    sim_figures.push_str(super::sim_timestamps::caption(mf));
    if mf["repetitions"].as_u64().unwrap_or(1) > 1 {
        sim_figures.push_str("; the kernel's are the mean over the repetitions, with each share's least and greatest in brackets");
    }
    // Sections written before 2026-12-03 judged no verdict's margin; the
    // caption explains the mark only where a row carries it.
    let undecided = if paths
        .iter()
        .any(|r| r["simulator_vs_kernel"]["decided"].as_bool() == Some(false))
    {
        format!("; undecided: a share's difference is within {DECIDED_SE} standard errors (the repetitions' spread, both sides') of the bound, so a re-run may flip the verdict")
    } else {
        String::new()
    };
    let mut s = format!(
        "Competing flows: {} s per run, {} repetition(s); each flow's share of the total goodput, total goodput Mbit/s (payload) and the bottleneck's queueing delay p10 / p50 / p90 ms{sim_figures}; ✓: every share differs from the kernel's by {} and the median queueing delay by {} or {}{undecided}.\n\n",
        mf["seconds_per_run"],
        mf["repetitions"],
        Rule::from(&SHARE),
        Rule::from(&QUEUE_DELAY_PCT),
        Rule::from(&QUEUE_DELAY_MS),
    );
    s.push_str("| path | flows | kernel shares | simulator shares | Δ share (largest) | total kernel / sim | queue delay kernel | queue delay sim | Δ p50 | verdict |\n");
    s.push_str("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for r in paths {
        let name = r["path"].as_str().unwrap_or("?");
        let flows = flows_cell(&r["flows"]);
        if let Some(why) = r["skipped"].as_str() {
            s.push_str(&format!(
                "| {name} | {flows} | – | – | – | – | – | – | – | skipped: {why} |\n"
            ));
            continue;
        }
        if let Some(why) = r["failed"].as_str() {
            // The first line: the emulator's whole log is in the run's
            // directory.
            let why = why.lines().next().unwrap_or("");
            s.push_str(&format!(
                "| {name} | {flows} | – | – | – | – | – | – | – | failed ✗: {why} |\n"
            ));
            continue;
        }
        let v = &r["simulator_vs_kernel"];
        // The largest difference, the earlier flow's on a tie: on a
        // two-flow path the first (leading) flow's, its sign saying
        // whether the simulator gives it more or less than the kernel.
        let max_diff = v["flows"].as_array().and_then(|a| {
            a.iter()
                .filter_map(|f| f["share_diff"].as_f64())
                .reduce(|m, d| if d.abs() > m.abs() { d } else { m })
        });
        let mark = |ok: &Value| {
            if ok.as_bool() == Some(true) {
                "✓"
            } else {
                "✗"
            }
        };
        s.push_str(&format!(
            "| {name} | {flows} | {} | {} | {} {} | {} / {} | {} | {} | {} ms {} | {} |\n",
            shares_cell(&r["kernel"]),
            shares_cell(&r["simulator"]),
            max_diff.map_or("–".into(), |d| format!("{d:+.2}")),
            mark(&v["shares_within"]),
            num(&r["kernel"]["total_goodput_mbps"], 2),
            num(&r["simulator"]["total_goodput_mbps"], 2),
            queue_cell(&r["kernel"]),
            queue_cell(&r["simulator"]),
            num(&v["queue_delay_p50_diff_ms"], 1),
            mark(&v["queue_delay_within"]),
            verdict_cell(v, &r["failed_repetitions"]),
        ));
    }
    Ok(s)
}

/// ✓ or ✗, "undecided" when the repetitions' spread could flip it
/// ([`super::multiflow_judge::DECIDED_SE`]), and how many repetitions
/// failed where some did (the figures are then over the ones that ran).
pub fn verdict_cell(v: &Value, failed: &Value) -> String {
    let mut cell = if v["within"].as_bool() == Some(true) {
        "✓"
    } else {
        "✗"
    }
    .to_string();
    if v["decided"].as_bool() == Some(false) {
        cell.push_str(", undecided");
    }
    match failed.as_array().map_or(0, Vec::len) {
        0 => cell,
        n => format!("{cell} ({n} rep(s) failed)"),
    }
}
