//! bbrlab's BBR v1 (`bbrlab_bbr`), seed 001's jitter-robust variant
//! (`bbrlab_jitter`) and BBRv3 (`bbrlab_bbr3`, the simulator's `bbr3`
//! `linux-v3` profile with the signals a stock kernel has) as BPF
//! `struct_ops` congestion controls inside Linux TCP, and their loader.
//!
//! Why BPF: a congestion control loaded this way appears in
//! `tcp_available_congestion_control` and is chosen per socket with
//! `TCP_CONGESTION`, like the kernel's own `bbr`, without building a kernel
//! module. The programs are in `src/bpf/` (v1: one implementation,
//! `bbrlab_cc.h`, compiled twice; v3: `bbrlab_bbr3.bpf.c`, whose header
//! says what it approximates), built by `build.rs` with clang.
//!
//! Kernel requirements: BTF (`CONFIG_DEBUG_INFO_BTF=y`), the BPF JIT, and
//! Linux >= 6.10 (`cong_control` with four arguments; struct_ops links
//! since 6.4). A kernel that lacks a field a program reads fails the load
//! with the field named ([`missing_field`]).
//!
//! Lifetime: [`load`] attaches each control through a struct_ops *link*
//! and pins the link and its maps under [`PIN_ROOT`]`/<name>/`, so the
//! control outlives the `bbrlab kernel load` process; [`unload`] removes
//! the pins, which drops the link and unregisters the control. Nothing else
//! holds it: no pin, no registration.
//!
//! The controls cannot answer `TCP_CC_INFO` (the kernel does not let BPF
//! controls implement `get_info`), so each publishes its state per socket
//! in a socket-storage map; [`StateReader`] reads it with the socket's fd.
//!
//! Loading needs root and a kernel with BTF; what needs neither:
//!
//! ```
//! use std::path::Path;
//! assert!(kernel_cc::is_ours("bbrlab_jitter") && !kernel_cc::is_ours("bbr"));
//! // Where `bbrlab tcp send --log flows.csv` puts a control's own state.
//! assert_eq!(kernel_cc::sampler_path(Path::new("out/flows.csv")), Path::new("out/flows.cc.csv"));
//! ```

use congestion::kernel_names::{BPF_BBR, BPF_BBR3};
use libbpf_rs::MapCore;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The congestion controls this crate provides, by their kernel names
/// ([`congestion::kernel_names`] owns them).
pub const NAMES: &[&str] = &congestion::kernel_names::BPF_CONTROLS;

/// Where [`load`] pins each control's link and maps (a bpffs directory).
pub const PIN_ROOT: &str = "/sys/fs/bpf/bbrlab";

const BPFFS: &str = "/sys/fs/bpf";
use hostfacts::AVAILABLE;
const BTF: &str = "/sys/kernel/btf/vmlinux";

#[cfg(not(kernel_cc_missing))]
mod skel {
    #![allow(clippy::all, clippy::pedantic, missing_docs, dead_code, unused)]
    pub mod bbr {
        include!(concat!(env!("OUT_DIR"), "/bbrlab_bbr.skel.rs"));
    }
    pub mod jitter {
        include!(concat!(env!("OUT_DIR"), "/bbrlab_jitter.skel.rs"));
    }
    pub mod bbr3 {
        include!(concat!(env!("OUT_DIR"), "/bbrlab_bbr3.skel.rs"));
    }
    pub mod bbr3_broken {
        include!(concat!(env!("OUT_DIR"), "/bbrlab_bbr3_broken.skel.rs"));
    }
}

/// Whether this build contains the BPF programs; `Err` says why not
/// (clang, bpftool or the kernel's BTF was missing when it was built).
pub fn built() -> Result<(), String> {
    #[cfg(kernel_cc_missing)]
    {
        Err(format!(
            "this bbrlab was built without its BPF congestion controls: {}; \
             run scripts/setup.sh and rebuild",
            env!("KERNEL_CC_MISSING")
        ))
    }
    #[cfg(not(kernel_cc_missing))]
    {
        Ok(())
    }
}

// One concept per module; each sees the others' items through this one
// (`use super::*`), as when they were one file.
mod lifecycle;
mod registry;
mod sampler;
mod state;

pub use lifecycle::*;
pub use registry::*;
pub use sampler::*;
pub use state::*;
