//! Which kernel a directory's kernel TCP runs were made on, kept beside
//! them, so that a later `--resimulate` matches the simulated receiver to
//! that kernel and not to the one it happens to run on.
//!
//! The simulator's Linux receiver grows its window by the rule of the
//! kernel it is matched to (`rcv_autotuning`: Linux 6.16 rewrote
//! `tcp_rcvbuf_grow()`). A fresh run takes the running kernel's rule; runs
//! judged again on another machine, or after a kernel upgrade, must take
//! the rule of the kernel that made them.

use std::path::Path;

/// The file, in a directory of kernel runs, that names their kernel
/// (`uname -r`, one line).
pub const FILE: &str = "kernel-release";

/// Writes the running kernel's release into `dir`, beside the kernel runs
/// just made there.
pub fn record(dir: &Path) -> Result<(), String> {
    let path = dir.join(FILE);
    std::fs::write(&path, format!("{}\n", hostfacts::kernel_release()))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The release the runs in `dir` were made on, if it was recorded (runs
/// made before 2026-12-04 have none).
pub fn of_runs(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(FILE)).ok()?;
    let release = text.trim();
    (!release.is_empty()).then(|| release.to_string())
}

/// The `rcv_autotuning` rule for simulations matched to the kernel runs
/// in `dir`: their kernel's, or, where `dir` does not say (older runs),
/// the running kernel's, with a note on standard error saying so.
pub fn rcv_rule_for_runs(dir: &Path) -> &'static str {
    match of_runs(dir) {
        Some(release) => claims::validate::rcv_autotuning_for(&release),
        None => {
            eprintln!(
                "note: {} does not name the kernel its runs were made on (no {FILE}: runs before 2026-12-04); \
                 their simulation takes this machine's kernel's receive-buffer rule ({})",
                dir.display(),
                claims::validate::linux_rcv_autotuning()
            );
            claims::validate::linux_rcv_autotuning()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_take_the_rule_of_the_kernel_that_made_them() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(of_runs(dir.path()), None);
        assert_eq!(
            rcv_rule_for_runs(dir.path()),
            claims::validate::linux_rcv_autotuning(),
            "no file: the running kernel's"
        );
        record(dir.path()).unwrap();
        assert_eq!(of_runs(dir.path()), Some(hostfacts::kernel_release()));
        std::fs::write(dir.path().join(FILE), "6.1.0-25-amd64\n").unwrap();
        assert_eq!(rcv_rule_for_runs(dir.path()), "pre-6.16");
        std::fs::write(dir.path().join(FILE), "6.18.44-cloud-amd64\n").unwrap();
        assert_eq!(rcv_rule_for_runs(dir.path()), "6.16");
    }
}
