//! Seed 001's jitter experiment (claims C11 and C12) on real Linux TCP:
//! the [`Source::LinuxTcp`] side of [`crate::jitter_sweep`], kept under
//! its own name for `bbrlab kernel jitter-sweep` and the code written
//! before the s2n-quic sweep. The kernel's own `bbr` and our BPF
//! `bbrlab_jitter` each run through `bbrlab emu` on C11/C12's path; the
//! CSV, its provenance, the table and the report block are the shared
//! ones, labelled "Linux TCP".

pub use crate::jitter_sweep::{
    label, link_toml, parse_csv, path_words, read_csv, write_csv, Provenance, Source, SweepRow,
    CSV_COLUMNS, CSV_FILE, FLOOR_MS, MEAN_DELAY_MS, PROVENANCE_FILE, QUEUE_PACKETS, RATE,
};
use std::path::{Path, PathBuf};

/// Whether a congestion control is one of bbrlab's BPF controls rather
/// than one of the kernel's own ([`congestion::kernel_names`], the list
/// `kernel-cc` registers too). The data and the report need only the
/// name, not the BPF loader.
pub fn is_ours(cc: &str) -> bool {
    congestion::kernel_names::is_bpf_control(cc)
}

/// The Linux-TCP table ([`crate::jitter_sweep::markdown`]).
pub fn markdown(rows: &[SweepRow]) -> String {
    crate::jitter_sweep::markdown(Source::LinuxTcp, rows)
}

/// `kernel jitter-sweep --table CSV`.
pub fn table_from(path: &Path) -> Result<String, String> {
    crate::jitter_sweep::table_from(Source::LinuxTcp, path)
}

/// Where the report looks for measured Linux-TCP sweeps:
/// `$BBRLAB_KERNEL_TCP_DIR`, else the checkout's `docs/kernel-tcp`.
pub fn data_dir() -> PathBuf {
    Source::LinuxTcp.data_dir()
}

/// The command that measures the committed sweep (3 MB per run).
pub const REGENERATE: &str = crate::jitter_sweep::LINUX_TCP_REGENERATE;

/// The report's "Linux TCP (kernel, measured)" block for C11/C12
/// ([`crate::jitter_sweep::report_section`]).
pub fn report_section(data: &Path, out: &Path) -> String {
    crate::jitter_sweep::report_section(Source::LinuxTcp, data, out)
}
