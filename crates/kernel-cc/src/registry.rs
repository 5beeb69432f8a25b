//! Which controls are bbrlab's, whether the kernel has them registered,
//! and where their pins live.

use super::*;

/// Whether `name` is one of ours (the one rule,
/// [`congestion::kernel_names::is_bpf_control`]).
pub fn is_ours(name: &str) -> bool {
    congestion::kernel_names::is_bpf_control(name)
}

pub(crate) fn check_name(name: &str) -> Result<(), String> {
    if is_ours(name) {
        Ok(())
    } else {
        Err(format!(
            "unknown congestion control '{name}': bbrlab provides {}",
            NAMES.join(", ")
        ))
    }
}

/// The pin directory of `name`.
pub fn pin_dir(name: &str) -> PathBuf {
    Path::new(PIN_ROOT).join(name)
}

/// The congestion controls the kernel offers now (`hostfacts`'s
/// reader, which every command shares).
pub fn available() -> Vec<String> {
    hostfacts::available_congestion_controls()
}

/// Whether the kernel lists `name` as available.
pub fn registered(name: &str) -> bool {
    available().iter().any(|n| n == name)
}

pub(crate) fn is_root() -> bool {
    hostfacts::is_root()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_names_are_refused() {
        let e = load("cubic").unwrap_err();
        assert!(e.contains("bbrlab_bbr, bbrlab_jitter, bbrlab_bbr3"), "{e}");
    }
}
