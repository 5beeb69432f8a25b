//! Facts about the machine a real run needs: whether we are root, which
//! congestion controls the kernel offers, its release and load, and the
//! time. One reader each, so every command and library (`kernel-cc`,
//! `tcp-probe`, `linkem`, `testbed`, `claims`) says the same thing, and
//! records a run's provenance the same way.

use std::path::Path;

/// Where Linux lists the congestion controls a socket may choose (for
/// messages that name it; read it with [`available_congestion_controls`]).
pub const AVAILABLE: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";

/// The running kernel's release (`uname -r`), or `unknown`.
pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Peak resident memory of this process in KiB (`VmHWM` in
/// /proc/self/status), or `None` where that file does not exist: what a
/// speed figure reports beside its time.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The 1-minute load average, or NaN where `/proc/loadavg` cannot be
/// read: a busy host is part of a real run's provenance.
pub fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

/// Now, in UTC, as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Today's date in UTC, as `YYYY-MM-DD`.
pub fn utc_today() -> String {
    utc_date(chrono::Utc::now().timestamp().max(0) as u64)
}

/// The UTC calendar date of `secs` since the Unix epoch, as `YYYY-MM-DD`.
pub fn utc_date(secs: u64) -> String {
    i64::try_from(secs)
        .ok()
        .and_then(|s| chrono::DateTime::from_timestamp(s, 0))
        .map_or_else(|| "unknown".into(), |d| d.format("%Y-%m-%d").to_string())
}

/// Whether this process runs as root (network namespaces, TUN devices and
/// BPF need it).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The congestion controls the kernel offers now (empty where it lists
/// none, as on a machine without Linux's `/proc`).
pub fn available_congestion_controls() -> Vec<String> {
    read_list(Path::new(AVAILABLE))
}

fn read_list(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// `Ok` unless a control of bbrlab's (a BPF control,
/// [`congestion::kernel_names::is_bpf_control`]) in
/// `wanted` is missing from `available`: those must be registered with
/// `bbrlab kernel load` first. The kernel's own controls pass even when not
/// listed, since Linux loads `tcp_NAME` when a root socket asks for it
/// (`tcp_ca_find_autoload()`); a control it has no module for fails at
/// that socket, whose error lists what the kernel offers.
pub fn check_offered<S: AsRef<str>>(wanted: &[S], available: &[String]) -> Result<(), String> {
    let missing: Vec<&str> = wanted
        .iter()
        .map(AsRef::as_ref)
        .filter(|w| {
            congestion::kernel_names::is_bpf_control(w) && !available.iter().any(|a| a == w)
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let offers = if available.is_empty() {
        format!("nothing readable in {AVAILABLE}")
    } else {
        available.join(" ")
    };
    let names = missing.join(" ");
    Err(format!(
        "kernel TCP cannot run {}: not registered (the kernel offers {offers}); load with `sudo bbrlab kernel load {names}` first (and `sudo bbrlab kernel unload {names}` after)",
        missing.join(" and ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process that holds 8 MiB it has written has a peak of at least
    /// that (Linux has /proc/self/status).
    #[test]
    fn the_peak_resident_memory_counts_what_was_touched() {
        let held = vec![1u8; 8 << 20];
        let kib = peak_rss_kib().expect("VmHWM on Linux");
        assert!(kib >= 8 << 10, "{kib} KiB with {} bytes held", held.len());
    }

    /// Civil dates, the epoch and a leap day included; the time stamp's
    /// shape.
    #[test]
    fn dates_are_civil_and_stamps_are_utc() {
        assert_eq!(utc_date(0), "1970-01-01");
        // 2026-11-23 00:00 UTC and the last second of 2024-02-29.
        assert_eq!(utc_date(1_795_392_000), "2026-11-23");
        assert_eq!(utc_date(1_709_164_800 + 86_399), "2024-02-29");
        let now = utc_now();
        assert_eq!(now.len(), 20, "{now}");
        assert!(now.ends_with('Z') && now.as_bytes()[10] == b'T', "{now}");
        assert!(now.starts_with(&utc_today()), "{now}");
    }

    #[test]
    fn the_list_is_read_word_by_word() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("list");
        std::fs::write(&f, "reno cubic bbr\n").unwrap();
        assert_eq!(read_list(&f), ["reno", "cubic", "bbr"]);
        assert!(read_list(&d.path().join("absent")).is_empty());
    }

    #[test]
    fn a_control_of_ours_that_is_not_registered_is_refused_with_the_load_command() {
        let avail: Vec<String> = ["reno", "cubic", "bbr"].map(String::from).to_vec();
        let e = check_offered(&["bbr", "bbrlab_bbr3"], &avail).unwrap_err();
        assert!(e.contains("sudo bbrlab kernel load bbrlab_bbr3"), "{e}");
        assert!(e.contains("reno cubic bbr"), "{e}");
        let e = check_offered(&["bbrlab_bbr", "bbrlab_jitter"], &[]).unwrap_err();
        assert!(
            e.contains("bbrlab_bbr and bbrlab_jitter") && e.contains("nothing readable"),
            "{e}"
        );
        let with_ours: Vec<String> = ["cubic", "bbrlab_bbr3"].map(String::from).to_vec();
        assert!(check_offered(&["bbrlab_bbr3"], &with_ours).is_ok());
        // The kernel's own are loaded on demand.
        assert!(check_offered(&["bbr", "vegas"], &avail).is_ok());
    }
}
