//! Compiles the BPF congestion controls with clang and generates their
//! libbpf-rs skeletons.
//!
//! `vmlinux.h` is generated here from the running kernel's BTF
//! (`bpftool btf dump file /sys/kernel/btf/vmlinux format c`), not checked
//! in: it is ~3 MB and must describe the kernel the programs load into
//! anyway (CO-RE relocates field offsets, but the struct_ops signatures,
//! e.g. `cong_control`'s four arguments since Linux 6.10, come from it).
//! `BBRLAB_VMLINUX_H=path` uses a given header instead; `BBRLAB_NO_BPF=1`
//! builds without the programs (as when the tools are missing).
//!
//! When clang, bpftool or the kernel BTF is missing, the build does not
//! fail: it sets `cfg(kernel_cc_missing)` and the reason, and
//! `bbrlab kernel load` reports it. A compile error in our own BPF C does
//! fail the build: that is a bug to see, not a missing tool.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `bbrlab_bbr3_broken` is `bbrlab_bbr3` with a deliberate verifier error,
/// for the test that a rejection reports the verifier's words; it is never
/// registered.
const SOURCES: &[&str] = &[
    "bbrlab_bbr",
    "bbrlab_jitter",
    "bbrlab_bbr3",
    "bbrlab_bbr3_broken",
];

fn tool_ok(cmd: &str, arg: &str) -> bool {
    Command::new(cmd)
        .arg(arg)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn missing(reason: &str) {
    println!("cargo:rustc-cfg=kernel_cc_missing");
    println!("cargo:rustc-env=KERNEL_CC_MISSING={reason}");
    println!("cargo:warning=kernel-cc: BPF congestion controls not built: {reason}");
}

fn vmlinux_h(out: &Path) -> Result<PathBuf, String> {
    if let Ok(p) = env::var("BBRLAB_VMLINUX_H") {
        let src = PathBuf::from(p);
        let dir = out.join("vmlinux");
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        std::fs::copy(&src, dir.join("vmlinux.h"))
            .map_err(|e| format!("BBRLAB_VMLINUX_H={}: {e}", src.display()))?;
        return Ok(dir);
    }
    let btf = Path::new("/sys/kernel/btf/vmlinux");
    if !btf.exists() {
        return Err(
            "the kernel has no BTF (/sys/kernel/btf/vmlinux is missing; \
                    CONFIG_DEBUG_INFO_BTF=y is needed for struct_ops)"
                .into(),
        );
    }
    if !tool_ok("bpftool", "version") {
        return Err("bpftool is not installed (scripts/setup.sh installs it)".into());
    }
    let o = Command::new("bpftool")
        .args(["btf", "dump", "file"])
        .arg(btf)
        .args(["format", "c"])
        .output()
        .map_err(|e| format!("bpftool: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "bpftool btf dump failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    let dir = out.join("vmlinux");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("vmlinux.h"), &o.stdout).map_err(|e| e.to_string())?;
    Ok(dir)
}

fn main() {
    println!("cargo::rustc-check-cfg=cfg(kernel_cc_missing)");
    println!("cargo:rerun-if-changed=src/bpf");
    println!("cargo:rerun-if-env-changed=BBRLAB_VMLINUX_H");
    println!("cargo:rerun-if-env-changed=BBRLAB_NO_BPF");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("manifest dir"));

    if env::var_os("BBRLAB_NO_BPF").is_some() {
        missing("BBRLAB_NO_BPF is set");
        return;
    }
    if !tool_ok("clang", "--version") {
        missing("clang is not installed (scripts/setup.sh installs it)");
        return;
    }
    let inc = match vmlinux_h(&out) {
        Ok(d) => d,
        Err(e) => {
            missing(&e);
            return;
        }
    };
    for name in SOURCES {
        let src = manifest.join("src/bpf").join(format!("{name}.bpf.c"));
        let skel = out.join(format!("{name}.skel.rs"));
        libbpf_cargo::SkeletonBuilder::new()
            .source(&src)
            .obj(out.join(format!("{name}.bpf.o")))
            .clang_args([
                std::ffi::OsString::from("-I"),
                inc.clone().into_os_string(),
                "-Wall".into(),
            ])
            .build_and_generate(&skel)
            .unwrap_or_else(|e| panic!("building {}: {e:#}", src.display()));
    }
}
