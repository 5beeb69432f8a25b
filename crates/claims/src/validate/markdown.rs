//! `validate.md`: the Markdown table of a `validate.json`, with the notes
//! on rows the host disturbed.

use super::*;

pub fn cell(v: &Value, key: &str, p: usize) -> String {
    v[key].as_f64().map_or("–".into(), |x| format!("{x:.p$}"))
}

pub fn diff_cell(v: &Value) -> String {
    if v.is_null() {
        return "–".into();
    }
    if let Some(n) = v["failed_runs"].as_u64() {
        return format!("{n} run(s) failed ✗");
    }
    let mark = if v["within"].as_bool() == Some(true) {
        "✓"
    } else {
        "✗"
    };
    // Retransmissions, where they are judged (bbrlab_bbr3): the
    // simulator's count against the kernel's.
    let retx = if v.get("retx_within").is_some() {
        format!(
            " / retx {} vs {}",
            cell(v, "retx_simulator", 0),
            cell(v, "retx_kernel", 0)
        )
    } else {
        String::new()
    };
    format!(
        "{} % / {} ms{retx} {mark}",
        cell(v, "goodput_diff_pct", 1),
        cell(v, "srtt_diff_ms", 1)
    )
}

/// The Markdown table of a `validate.json` (the book's validation table is this
/// output, pasted, never edited by hand).
pub fn markdown(doc: &Value) -> Result<String, String> {
    let multi = super::multiflow_markdown::markdown(doc)?;
    let Some(paths) = doc["paths"].as_array() else {
        return if multi.is_empty() {
            Err("validate.json has neither a `paths` list nor a `multiflow` section".into())
        } else {
            Ok(multi)
        };
    };
    let mut s = String::new();
    // Runs before `--sim-ack` had an ACK per packet.
    let receiver = match doc["simulator_ack"].as_str() {
        Some("linux") => {
            "; the simulation matched to kernel TCP has Linux's receiver (`--sim-ack linux`)"
        }
        _ => "",
    };
    // Runs before 2026-12-04 had no host noise in their kernel matches.
    let noise = super::host_noise_text::host_noise_text(
        &doc["simulator_host_noise"],
        "each ACK of the simulation matched to kernel TCP",
    );
    s.push_str(&format!(
        "{} s per run, {} repetition(s); goodput Mbit/s (payload) and median srtt ms{receiver}{}{}{noise}; differences against kernel TCP (goodput % / srtt ms), ✓ within bounds.\n\n",
        doc["seconds_per_run"],
        doc["repetitions"],
        SimPacer::caption(doc),
        super::sim_timestamps::caption(doc)
    ));
    s.push_str("| path | alg | kernel | simulator | sim − kernel | UDP | UDP − kernel | s2n-quic | s2n − kernel |\n");
    s.push_str("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for r in paths {
        let fig = |v: &Value| {
            if v.is_null() {
                "–".to_string()
            } else {
                format!(
                    "{} / {}",
                    cell(v, "goodput_mbps", 2),
                    cell(v, "srtt_median_ms", 1)
                )
            }
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r["path"].as_str().unwrap_or("?"),
            r["algorithm"].as_str().unwrap_or("?"),
            fig(&r["kernel"]),
            fig(&r["simulator"]),
            diff_cell(&r["simulator_vs_kernel"]),
            fig(&r["udp"]),
            diff_cell(&r["udp_vs_kernel"]),
            fig(&r["s2n"]),
            diff_cell(&r["s2n_vs_kernel"]),
        ));
    }
    s.push_str(&emulator_notes(paths));
    if !multi.is_empty() {
        s.push('\n');
        s.push_str(&multi);
    }
    Ok(s)
}

/// The lines under the table that say which real runs failed, and where
/// the emulator could not hold the path: runs repeated because its
/// forwarder stalled too long, and rows whose kept runs still did (`linkem::stall::max_stalled_fraction`). Empty when there
/// is nothing to say.
pub fn emulator_notes(paths: &[Value]) -> String {
    let mut notes = String::new();
    for r in paths {
        let what = format!(
            "{} {}",
            r["path"].as_str().unwrap_or("?"),
            r["algorithm"].as_str().unwrap_or("?")
        );
        for (source, key, vs) in [
            ("kernel TCP", "kernel_failed_runs", "simulator_vs_kernel"),
            ("UDP transport", "udp_failed_runs", "udp_vs_kernel"),
        ] {
            let n = r[key].as_u64().unwrap_or(0);
            if n > 0 {
                notes.push_str(&format!(
                    "- {what}: {n} {source} run(s) failed{}; the figures are over the repetitions that ran.\n",
                    r[vs]["error"]
                        .as_str()
                        .map_or(String::new(), |e| format!(" (the last: {e})"))
                ));
            }
        }
        let e = &r["emulator"];
        let reruns = e["reruns"].as_u64().unwrap_or(0);
        let stalled = e["stalled"].as_bool() == Some(true);
        if reruns == 0 && !stalled {
            continue;
        }
        if stalled {
            notes.push_str(&format!(
                "- {what}: the emulator's forwarder could not run up to {:.1} % of a run (the machine did not give it the CPU; the limit is {:.1} %), so this row says as much about the machine as about the algorithm{}.\n",
                e["stalled_pct_max"].as_f64().unwrap_or(f64::NAN),
                e["stalled_pct_limit"].as_f64().unwrap_or(f64::NAN),
                if reruns > 0 { format!("; {reruns} run(s) repeated") } else { String::new() }
            ));
        } else {
            notes.push_str(&format!(
                "- {what}: {reruns} run(s) repeated because the emulator's forwarder could not run over {:.1} % of the run.\n",
                e["stalled_pct_limit"].as_f64().unwrap_or(f64::NAN)
            ));
        }
    }
    if notes.is_empty() {
        notes
    } else {
        format!("\n{notes}")
    }
}

/// `bbrlab validate --table FILE`: the Markdown table of an existing
/// `validate.json`, for the book (docs/src/validation.md).
pub fn table_from(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let doc: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    markdown(&doc)
}
