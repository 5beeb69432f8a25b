//! Which of Linux's receive-buffer rules a simulation matched to kernel
//! TCP runs: the kernel's own. Linux 6.16 rewrote `tcp_rcvbuf_grow()`
//! ("tcp: fix sk_rcvbuf overshoot"): kernel 6.18's tracepoint on the
//! emulator reads each clamp it set to within a few bytes of the
//! simulator's `rcv_autotuning = "6.16"`, and with it (and Linux's TSO
//! deferral) 16 of 17 competing-flow paths were within the bounds
//! against 14 with the older rule (book, Validation, 2026-12-04).

/// The `rcv_autotuning` rule of the kernel this machine runs (`uname
/// -r`; [`rcv_autotuning_for`]).
pub fn linux_rcv_autotuning() -> &'static str {
    rcv_autotuning_for(&hostfacts::kernel_release())
}

/// The `rcv_autotuning` rule of Linux release `release` (`6.18.44-…`):
/// `"6.16"` from 6.16 on, `"pre-6.16"` before. A release that does not
/// read as `MAJOR.MINOR` (not Linux, or `/proc` unreadable) gets the
/// newer rule, the kernels of today.
pub fn rcv_autotuning_for(release: &str) -> &'static str {
    let mut parts = release.split(['.', '-', '+']);
    let major = parts.next().and_then(|p| p.parse::<u32>().ok());
    let minor = parts.next().and_then(|p| p.parse::<u32>().ok());
    match (major, minor) {
        (Some(a), Some(b)) if (a, b) < (6, 16) => "pre-6.16",
        _ => "6.16",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_follows_the_release() {
        for (release, rule) in [
            ("6.18.44-cloud-amd64", "6.16"),
            ("6.16.0", "6.16"),
            ("7.0-rc1", "6.16"),
            ("6.15.9-arch1-1", "pre-6.16"),
            ("6.1.0-25-amd64", "pre-6.16"),
            ("5.15.0-113-generic", "pre-6.16"),
            ("unknown", "6.16"),
            ("", "6.16"),
        ] {
            assert_eq!(rcv_autotuning_for(release), rule, "{release}");
        }
    }
}
