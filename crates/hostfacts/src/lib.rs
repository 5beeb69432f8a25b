//! Facts about the machine a real run needs: whether we are root, and
//! which congestion controls the kernel offers. One reader each, so every
//! command and library (`kernel-cc`, `tcp-probe`, `testbed`) says the same
//! thing when one is missing.

use std::path::Path;

/// Where Linux lists the congestion controls a socket may choose (for
/// messages that name it; read it with [`available_congestion_controls`]).
pub const AVAILABLE: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";

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
