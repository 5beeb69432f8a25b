//! `compare.json`, typed: what `bbrlab compare` writes is the serialisation
//! of a [`CompareReport`], and what `validate` reads back is the same
//! struct, so a key cannot be renamed on one side only.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// The file's name in a compare run's directory.
pub const FILE: &str = "compare.json";

/// One compare run: every source's figures over the common window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompareReport {
    /// The scenario's name.
    #[serde(default)]
    pub scenario: String,
    /// The common window, s from each source's first data packet.
    #[serde(default)]
    pub window_s: f64,
    /// What each figure is, in words.
    #[serde(default)]
    pub statistics: Statistics,
    /// One row per source, simulator runs matched to real ones included.
    pub sources: Vec<SourceRow>,
    /// Real runs that failed, with why.
    #[serde(default)]
    pub failed_sources: Vec<FailedSource>,
}

/// How each figure is measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Statistics {
    pub time_origin: String,
    pub goodput: String,
    pub rtt: String,
    pub retransmissions: String,
    pub bw_estimate: String,
    pub min_rtt: String,
    /// Absent from a report written before recoveries were counted.
    #[serde(default)]
    pub recoveries: String,
}

/// One source's figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceRow {
    /// The row's label (`kernel TCP (bbr)`, `simulator as udp (bbr)`).
    #[serde(default)]
    pub source: String,
    /// `simulator`, `kernel`, `udp` or `s2n`.
    pub kind: String,
    /// For a simulator row, the real source it is matched to.
    #[serde(default)]
    pub matched_to: Option<String>,
    #[serde(default)]
    pub payload_bytes_per_packet: Option<u64>,
    #[serde(default)]
    pub header_bytes_per_packet: Option<u32>,
    #[serde(default)]
    pub goodput_mbps: Option<f64>,
    #[serde(default)]
    pub srtt_median_ms: Option<f64>,
    #[serde(default)]
    pub srtt_p95_ms: Option<f64>,
    #[serde(default)]
    pub data_packets_sent: Option<u64>,
    #[serde(default)]
    pub retransmitted_packets: Option<u64>,
    #[serde(default)]
    pub retransmitted_fraction: Option<f64>,
    #[serde(default)]
    pub rtos: Option<u64>,
    #[serde(default)]
    pub bw_estimate_mbps: Option<f64>,
    #[serde(default)]
    pub min_rtt_ms: Option<f64>,
    /// The kernel probe's host-limit figures (kernel rows).
    #[serde(default)]
    pub host: Option<Value>,
    /// The emulator's own figures for the run (`bbrlab emu --stats`).
    #[serde(default)]
    pub emulator: Option<Value>,
    /// The share of the flow's data packets the bottleneck marked CE,
    /// over the whole run (absent where none was marked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ce_marked_fraction: Option<f64>,
    /// Loss recoveries begun over the whole run: the simulator's
    /// `loss_episodes`; kernel TCP's sender namespace's `TCPSackRecovery`
    /// plus `TCPTimeouts`. Absent where the source does not count them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_episodes: Option<u64>,
    /// Reductions undone as spurious over the whole run: the simulator's
    /// `undos`; the kernel's four undo counters, summed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undos: Option<u64>,
    /// The share of the TCP segments reaching kernel TCP's receiver that it
    /// discarded by PAWS (its namespace's `PAWSEstab` over `InSegs`); for a
    /// simulator row, its receiver's `paws_discards` over
    /// `segments_received` when the flow keeps TCP timestamps, else none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paws_discarded_fraction: Option<f64>,
}

impl SourceRow {
    /// The largest share of the run the emulator's forwarder could not
    /// run while packets fell due, if the emulator said.
    pub fn emulator_stalled(&self) -> Option<f64> {
        self.emulator.as_ref()?.get("stalled_fraction")?.as_f64()
    }
}

/// A real run that failed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FailedSource {
    /// `kernel`, `udp` or `s2n`.
    pub kind: String,
    /// The run's label.
    #[serde(default)]
    pub source: String,
    /// Why it failed.
    #[serde(default)]
    pub error: String,
}

impl CompareReport {
    /// Writes the report as `dir/compare.json`.
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        let path = dir.join(FILE);
        let json = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        std::fs::write(&path, json + "\n")
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// Reads `dir/compare.json`.
    pub fn read(dir: &Path) -> Result<CompareReport, String> {
        let path = dir.join(FILE);
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The failure of the real source `kind`, if it failed.
    pub fn failure(&self, kind: &str) -> Option<&FailedSource> {
        self.failed_sources.iter().find(|f| f.kind == kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What is written reads back equal, and a file of the older shape
    /// (sorted keys, absent optional figures) reads too.
    #[test]
    fn a_report_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let r = CompareReport {
            scenario: "s".into(),
            window_s: 10.0,
            sources: vec![SourceRow {
                source: "kernel TCP (bbr)".into(),
                kind: "kernel".into(),
                goodput_mbps: Some(9.4),
                srtt_median_ms: Some(42.0),
                emulator: Some(serde_json::json!({"stalled_fraction": 0.01})),
                loss_episodes: Some(503),
                undos: Some(258),
                paws_discarded_fraction: Some(0.182),
                ..SourceRow::default()
            }],
            failed_sources: vec![FailedSource {
                kind: "udp".into(),
                source: "UDP transport (bbr)".into(),
                error: "no summary".into(),
            }],
            ..CompareReport::default()
        };
        r.write(dir.path()).unwrap();
        let back = CompareReport::read(dir.path()).unwrap();
        assert_eq!(back, r);
        assert_eq!(back.sources[0].emulator_stalled(), Some(0.01));
        assert_eq!(back.failure("udp").unwrap().error, "no summary");
        assert!(back.failure("kernel").is_none());
        std::fs::write(
            dir.path().join(FILE),
            r#"{"sources": [{"kind": "simulator", "matched_to": "kernel TCP (bbr)", "goodput_mbps": 9.5, "srtt_median_ms": null}]}"#,
        )
        .unwrap();
        let old = CompareReport::read(dir.path()).unwrap();
        assert_eq!(old.sources[0].srtt_median_ms, None);
        let e = CompareReport::read(&dir.path().join("absent")).unwrap_err();
        assert!(e.contains("compare.json"), "{e}");
    }
}
