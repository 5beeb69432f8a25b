//! `bbrlab validate --receivers EVERY LINUX`: which simulated receiver
//! matches kernel TCP better on the single-flow paths?
//!
//! Issue 31 makes Linux's receiver (`ack = "linux"`) validate's default
//! for TCP-like flows only if it matches the kernel at least as well as an
//! ACK per packet on every validate path. The simulator is deterministic
//! (the same path, seed and packet size give the same figures), so the
//! simulator column of a run with an ACK per packet (EVERY) is what that
//! receiver gives against the kernel runs of a `--sim-ack linux` run
//! (LINUX) too: both receivers are judged against one set of kernel runs,
//! with validate's own bounds (`bounds_for`, `judge`).

use super::{bounds_for, judge};
use serde_json::Value;
use std::path::Path;

/// A row's (goodput Mbit/s, median srtt ms) on one side, when it has both.
fn figures(side: &Value) -> Option<(f64, Option<f64>)> {
    let g = side["goodput_mbps"].as_f64()?;
    let r = side["srtt_median_ms"].as_f64()?;
    Some((g, Some(r)))
}

fn read(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let doc: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    if !doc["paths"].is_array() {
        return Err(format!(
            "{}: no single-flow `paths` (a validate.json that `bbrlab validate` wrote)",
            path.display()
        ));
    }
    Ok(doc)
}

/// The comparison as a Markdown table, from two `validate.json`
/// documents: `every`'s simulator and `linux`'s, each against `linux`'s
/// kernel figures, a mark for each within its bounds, and which is
/// closer in srtt (the figure the receiver moves; "same" within 0.5 ms).
/// Errors when `linux` was not run with Linux's receiver or `every` was.
pub fn table(every: &Value, linux: &Value) -> Result<String, String> {
    let ack = |d: &Value| d["simulator_ack"].as_str().unwrap_or("every").to_string();
    if ack(linux) != "linux" || ack(every) != "every" {
        return Err(format!(
            "--receivers EVERY LINUX: EVERY's simulator must have had an ACK per packet and LINUX's Linux's receiver (`--sim-ack linux`); they had `{}` and `{}`",
            ack(every),
            ack(linux)
        ));
    }
    let empty = Vec::new();
    let every_rows = every["paths"].as_array().unwrap_or(&empty);
    let mut s = String::from(
        "| path | alg | kernel | `ack = \"every\"` | `ack = \"linux\"` | closer in srtt |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    let (mut n, mut ok_every, mut ok_linux, mut closer_linux, mut closer_every) = (0, 0, 0, 0, 0);
    for r in linux["paths"].as_array().unwrap_or(&empty) {
        let (path, alg) = (
            r["path"].as_str().unwrap_or("?"),
            r["algorithm"].as_str().unwrap_or("?"),
        );
        let Some(e) = every_rows
            .iter()
            .find(|e| e["path"] == r["path"] && e["algorithm"] == r["algorithm"])
        else {
            continue;
        };
        let (Some(k), Some(sl), Some(se)) = (
            figures(&r["kernel"]),
            figures(&r["simulator"]),
            figures(&e["simulator"]),
        ) else {
            continue;
        };
        n += 1;
        let b = bounds_for(alg);
        let cell = |sim: (f64, Option<f64>), count: &mut usize| {
            let within = judge(sim, k, b)["within"].as_bool() == Some(true);
            *count += usize::from(within);
            format!(
                "{:.2} / {:.1} {}",
                sim.0,
                sim.1.unwrap_or(f64::NAN),
                if within { "✓" } else { "✗" }
            )
        };
        let (ce, cl) = (cell(se, &mut ok_every), cell(sl, &mut ok_linux));
        let d = |sim: (f64, Option<f64>)| (sim.1.unwrap_or(0.0) - k.1.unwrap_or(0.0)).abs();
        let closer = if (d(se) - d(sl)).abs() < 0.5 {
            "same"
        } else if d(sl) < d(se) {
            closer_linux += 1;
            "`linux`"
        } else {
            closer_every += 1;
            "`every`"
        };
        s.push_str(&format!(
            "| {path} | {alg} | {:.2} / {:.1} | {ce} | {cl} | {closer} |\n",
            k.0,
            k.1.unwrap_or(f64::NAN)
        ));
    }
    if n == 0 {
        return Err("--receivers: the two runs share no path and algorithm with figures".into());
    }
    s.push_str(&format!(
        "\nAgainst the kernel runs of the `--sim-ack linux` run: within the bounds with an ACK per packet {ok_every} of {n}, with Linux's receiver {ok_linux} of {n}; closer in srtt with Linux's receiver on {closer_linux}, with an ACK per packet on {closer_every}, the same (within 0.5 ms) on {}.\n",
        n - closer_linux - closer_every
    ));
    Ok(s)
}

/// `bbrlab validate --receivers EVERY LINUX`.
pub fn table_from(every: &Path, linux: &Path) -> Result<String, String> {
    table(&read(every)?, &read(linux)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(ack: Option<&str>, sim_srtt: f64) -> Value {
        let mut d = json!({"paths": [
            {"path": "p", "algorithm": "bbr",
             "kernel": {"goodput_mbps": 10.0, "srtt_median_ms": 100.0},
             "simulator": {"goodput_mbps": 10.1, "srtt_median_ms": sim_srtt}},
            {"path": "q", "algorithm": "cubic",
             "kernel": {"goodput_mbps": 10.0, "srtt_median_ms": 50.0},
             "simulator": {"goodput_mbps": 10.0, "srtt_median_ms": 50.2}},
        ]});
        if let Some(a) = ack {
            d["simulator_ack"] = json!(a);
        }
        d
    }

    #[test]
    fn each_receiver_is_judged_against_the_linux_runs_kernel() {
        // An ACK per packet: 88 ms against the kernel's 100 (12 %, out);
        // Linux's: 97 ms (within). An older validate.json has no
        // simulator_ack: an ACK per packet.
        let t = table(&doc(None, 88.0), &doc(Some("linux"), 97.0)).unwrap();
        assert!(
            t.contains("| p | bbr | 10.00 / 100.0 | 10.10 / 88.0 ✗ | 10.10 / 97.0 ✓ | `linux` |"),
            "{t}"
        );
        assert!(
            t.contains("| q | cubic | 10.00 / 50.0 | 10.00 / 50.2 ✓ | 10.00 / 50.2 ✓ | same |"),
            "{t}"
        );
        assert!(t.contains("with an ACK per packet 1 of 2, with Linux's receiver 2 of 2; closer in srtt with Linux's receiver on 1, with an ACK per packet on 0, the same (within 0.5 ms) on 1."), "{t}");
    }

    #[test]
    fn the_runs_must_be_one_of_each_receiver() {
        let e = table(&doc(Some("linux"), 1.0), &doc(Some("linux"), 1.0)).unwrap_err();
        assert!(e.contains("had `linux` and `linux`"), "{e}");
        let e = table(&doc(None, 1.0), &doc(None, 1.0)).unwrap_err();
        assert!(e.contains("had `every` and `every`"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("v.json");
        std::fs::write(&f, r#"{"multiflow": {}}"#).unwrap();
        let e = table_from(&f, &f).unwrap_err();
        assert!(e.contains("no single-flow `paths`"), "{e}");
        let e = table_from(&dir.path().join("none.json"), &f).unwrap_err();
        assert!(e.contains("none.json"), "{e}");
    }
}
