//! How Linux TCP names the algorithms, in one place: the kernel's own
//! controls (`bbr`, `cubic`, `reno`) and bbrlab's BPF controls, which run
//! the algorithms mainline Linux lacks (seed 001's jitter variant, BBRv3)
//! and a second reading of BBR v1. The BPF loader, the host checks, the
//! report and the validation runs all take the names from here, so a
//! control cannot be "ours" to one of them and the kernel's to another.

use crate::config::Algorithm;

/// bbrlab's BPF reading of Linux's BBR v1 (`tcp_bbr.c`).
pub const BPF_BBR: &str = "bbrlab_bbr";
/// Seed 001's jitter-robust BBR as a BPF control.
pub const BPF_JITTER: &str = "bbrlab_jitter";
/// BBRv3 as Google's v3 branch runs it, as a BPF control.
pub const BPF_BBR3: &str = "bbrlab_bbr3";

/// Every BPF control bbrlab provides, in the order users see them.
pub const BPF_CONTROLS: [&str; 3] = [BPF_BBR, BPF_JITTER, BPF_BBR3];

/// Whether a Linux congestion-control name is one of bbrlab's BPF
/// controls (which `bbrlab kernel load` registers) rather than one the
/// kernel ships.
pub fn is_bpf_control(name: &str) -> bool {
    BPF_CONTROLS.contains(&name)
}

impl Algorithm {
    /// The Linux TCP control that runs this algorithm: the kernel's own
    /// where mainline ships it (`bbr`, `cubic`, `reno`), else bbrlab's
    /// BPF control (`bbrlab_jitter`, `bbrlab_bbr3`: mainline has neither
    /// the variant nor v3).
    pub fn kernel_name(self) -> &'static str {
        match self {
            Algorithm::Bbr => "bbr",
            Algorithm::BbrJitter => BPF_JITTER,
            Algorithm::Bbr3 => BPF_BBR3,
            Algorithm::Cubic => "cubic",
            Algorithm::Reno => "reno",
        }
    }

    /// bbrlab's BPF control for this algorithm, where there is one.
    pub fn bpf_name(self) -> Option<&'static str> {
        match self {
            Algorithm::Bbr => Some(BPF_BBR),
            Algorithm::BbrJitter => Some(BPF_JITTER),
            Algorithm::Bbr3 => Some(BPF_BBR3),
            Algorithm::Cubic | Algorithm::Reno => None,
        }
    }

    /// The algorithm a Linux control runs: the kernel's `bbr`, `cubic`
    /// and `reno`, and each of bbrlab's BPF controls. `None` for any other
    /// control (the kernel's `vegas`, Google's out-of-tree `bbr3`...).
    pub fn from_kernel_name(name: &str) -> Option<Algorithm> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.kernel_name() == name || a.bpf_name() == Some(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_maps_back_to_its_algorithm() {
        for a in Algorithm::ALL {
            assert_eq!(Algorithm::from_kernel_name(a.kernel_name()), Some(a));
            if let Some(b) = a.bpf_name() {
                assert_eq!(Algorithm::from_kernel_name(b), Some(a));
                assert!(is_bpf_control(b));
            }
        }
        assert_eq!(
            Algorithm::from_kernel_name("bbrlab_bbr"),
            Some(Algorithm::Bbr)
        );
        assert_eq!(Algorithm::from_kernel_name("vegas"), None);
        assert_eq!(Algorithm::from_kernel_name("bbr3"), None);
    }

    #[test]
    fn the_kernels_own_controls_are_not_ours() {
        for n in ["bbr", "cubic", "reno", "bbrlab_", "bbrlab_bbr3_broken"] {
            assert!(!is_bpf_control(n), "{n}");
        }
        let bpf: Vec<&str> = Algorithm::ALL.iter().filter_map(|a| a.bpf_name()).collect();
        assert_eq!(bpf, BPF_CONTROLS);
    }
}
