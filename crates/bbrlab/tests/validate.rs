//! `bbrlab validate` on one path (root: it runs kernel TCP, the UDP
//! transport and s2n-quic through the emulator). The bounds catch a regression in the
//! sender, the emulator or the comparison, not the 5 % goal: a
//! 4 s run includes STARTUP, where short-run averages differ most, and
//! CI's machine may be busy.

mod common;

use serde_json::Value;

#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn validate_one_path_agrees_with_kernel_tcp_within_regression_bounds() {
    common::require_root();
    let _guard = common::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir
        .path()
        .to_str()
        .expect("a temporary directory's path is UTF-8");
    common::bbrlab([
        "validate",
        "--only",
        "10M-40ms-1bdp",
        "--reps",
        "1",
        "--seconds",
        "4",
        "--algorithms",
        "bbr,cubic",
        "--out",
        out_dir,
    ]);
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("validate.json")).unwrap())
            .unwrap();
    let paths = doc["paths"].as_array().unwrap();
    assert_eq!(paths.len(), 2, "one path × bbr, cubic");
    for r in paths {
        let alg = r["algorithm"].as_str().unwrap();
        let k = r["kernel"]["goodput_mbps"].as_f64().unwrap();
        let s = r["simulator"]["goodput_mbps"].as_f64().unwrap();
        // The link carries 10 Mbit/s; 1448 of every 1500 bytes are payload.
        assert!(k > 8.0 && k < 9.8, "{alg}: kernel {k}");
        // Seen: within 1 % for both. A sender or comparison regression
        // (e.g. the old 0.35 Mbit/s collapse) is far outside 10 %.
        assert!((s / k - 1.0).abs() < 0.10, "{alg}: sim {s} vs kernel {k}");
        let kr = r["kernel"]["srtt_median_ms"].as_f64().unwrap();
        let sr = r["simulator"]["srtt_median_ms"].as_f64().unwrap();
        // Seen: bbr 49 vs 52 ms, cubic 67 vs 67 ms.
        assert!(
            (sr / kr - 1.0).abs() < 0.25,
            "{alg}: srtt sim {sr} vs kernel {kr}"
        );
        let diff = &r["simulator_vs_kernel"];
        assert!(diff["goodput_diff_pct"].as_f64().is_some(), "{diff}");
        if alg == "bbr" {
            // The UDP transport runs too, for bbr only.
            let u = r["udp"]["goodput_mbps"].as_f64().unwrap();
            assert!(u > 0.5 * k, "udp {u} vs kernel {k}");
            // And s2n-quic with bbrlab's bbr (quic-bulk is built next to
            // bbrlab for the tests): a real transfer, judged against the
            // kernel like the UDP row (the goal's 5 % is docs/src/quic.md's
            // measurement, not a CI bound).
            let q = r["s2n"]["goodput_mbps"].as_f64();
            assert!(
                q.is_some_and(|q| q > 0.5 * k),
                "s2n {:?} vs kernel {k}: {}",
                q,
                r["s2n_vs_kernel"]
            );
            assert!(r["s2n_vs_kernel"]["goodput_diff_pct"].as_f64().is_some());
        } else {
            assert!(r["udp"].is_null() && r["s2n"].is_null());
        }
    }
    let md = std::fs::read_to_string(dir.path().join("validate.md")).unwrap();
    assert!(md.contains("| 10M-40ms-1bdp | cubic |"), "{md}");
    assert!(md.contains("| s2n-quic | s2n − kernel |"), "{md}");
}
