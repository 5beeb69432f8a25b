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

/// Whether `name` is one of ours (the one rule,
/// [`congestion::kernel_names::is_bpf_control`]).
pub fn is_ours(name: &str) -> bool {
    congestion::kernel_names::is_bpf_control(name)
}

fn check_name(name: &str) -> Result<(), String> {
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

fn is_root() -> bool {
    hostfacts::is_root()
}

/// The checks before any BPF call, each with the error a user can act on:
/// root, the kernel's BTF, and struct_ops support for TCP congestion
/// controls. `btf` is the BTF path (a parameter so tests can point it
/// elsewhere).
pub fn preflight(btf: &Path) -> Result<(), String> {
    if !is_root() {
        return Err(
            "loading a BPF congestion control needs root (CAP_BPF, CAP_NET_ADMIN and \
             CAP_SYS_ADMIN for bpffs): run it with sudo"
                .into(),
        );
    }
    if !btf.exists() {
        return Err(format!(
            "this kernel has no BTF ({} is missing): BPF struct_ops congestion controls \
             need a kernel built with CONFIG_DEBUG_INFO_BTF=y and CONFIG_BPF_JIT=y",
            btf.display()
        ));
    }
    // The kernel side of struct_ops TCP congestion controls is
    // net/ipv4/bpf_tcp_ca.c; its symbols are in kallsyms when built in.
    if let Ok(syms) = fs::read_to_string("/proc/kallsyms") {
        if !syms.contains("bpf_tcp_ca") {
            return Err(
                "this kernel does not support BPF struct_ops congestion controls \
                 (no bpf_tcp_ca symbols in /proc/kallsyms: CONFIG_BPF_JIT and \
                 CONFIG_INET are needed, Linux >= 5.6; cong_control with four \
                 arguments needs >= 6.10)"
                    .into(),
            );
        }
    }
    Ok(())
}

/// Mounts bpffs on /sys/fs/bpf when nothing is mounted there, so pins
/// can be made.
fn ensure_bpffs() -> Result<(), String> {
    let mounts = fs::read_to_string("/proc/mounts").unwrap_or_default();
    if mounts
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some(BPFFS) && l.contains(" bpf "))
    {
        return Ok(());
    }
    let src = c"bpf";
    let target = c"/sys/fs/bpf";
    // SAFETY: all pointers are valid NUL-terminated strings; data is null.
    let r = unsafe {
        libc::mount(
            src.as_ptr(),
            target.as_ptr(),
            src.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if r != 0 {
        return Err(format!(
            "cannot mount bpffs on {BPFFS}: {}",
            io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// libbpf's messages during the current load, so a verifier rejection
/// is reported with the verifier's own words.
#[cfg(not(kernel_cc_missing))]
static LOG: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

#[cfg(not(kernel_cc_missing))]
fn capture(level: libbpf_rs::PrintLevel, msg: String) {
    if level != libbpf_rs::PrintLevel::Debug {
        if let Ok(mut l) = LOG.lock() {
            l.push(msg);
        }
    }
}

#[cfg(not(kernel_cc_missing))]
fn take_log() -> String {
    let lines: Vec<String> = LOG
        .lock()
        .map(|mut l| std::mem::take(&mut *l))
        .unwrap_or_default();
    // The verifier log can be long; its end says why.
    let text: String = lines.concat();
    let tail: Vec<&str> = text.lines().rev().take(40).collect();
    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
}

/// What [`unload`] and [`list`] report per control.
#[derive(Debug, Clone)]
pub struct Status {
    /// Kernel name.
    pub name: String,
    /// Pinned by `bbrlab kernel load` (under [`PIN_ROOT`]).
    pub loaded: bool,
    /// Listed in `tcp_available_congestion_control`.
    pub registered: bool,
    /// Sockets whose `init` ran and `release` has not (0 when not loaded).
    pub live_sockets: u64,
}

fn live_sockets(name: &str) -> Option<u64> {
    let m = libbpf_rs::MapHandle::from_pinned_path(pin_dir(name).join("live")).ok()?;
    let v = m
        .lookup(&0u32.to_ne_bytes(), libbpf_rs::MapFlags::ANY)
        .ok()??;
    Some(u64::from_ne_bytes(v.get(..8)?.try_into().ok()?))
}

/// The state of each of our controls.
pub fn list() -> Vec<Status> {
    let avail = available();
    NAMES
        .iter()
        .map(|n| {
            let loaded = pin_dir(n).join("link").exists();
            Status {
                name: n.to_string(),
                loaded,
                registered: avail.iter().any(|a| a == n),
                live_sockets: if loaded {
                    live_sockets(n).unwrap_or(0)
                } else {
                    0
                },
            }
        })
        .collect()
}

fn remove_pins(name: &str) {
    let dir = pin_dir(name);
    for f in ["link", "state", "live"] {
        let _ = fs::remove_file(dir.join(f));
    }
    let _ = fs::remove_dir(&dir);
    let _ = fs::remove_dir(PIN_ROOT); // only when empty
}

/// Waits (bounded) until the kernel's list agrees that `name` is or is
/// not registered: releasing a link may finish just after the unlink.
fn wait_registered(name: &str, want: bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(3) {
        if registered(name) == want {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    registered(name) == want
}

/// Loads `name` into the kernel and pins it so it stays registered after
/// this process exits. Errors: not root, no BTF or struct_ops, already
/// loaded (by us or anyone else), or the verifier's rejection.
pub fn load(name: &str) -> Result<(), String> {
    check_name(name)?;
    built()?;
    preflight(Path::new(BTF))?;
    if pin_dir(name).join("link").exists() {
        return Err(format!(
            "{name} is already loaded (pinned at {}); `bbrlab kernel unload {name}` first",
            pin_dir(name).display()
        ));
    }
    if registered(name) {
        return Err(format!(
            "a congestion control named {name} is already registered, but not by \
             `bbrlab kernel load` (nothing pinned at {})",
            pin_dir(name).display()
        ));
    }
    ensure_bpffs()?;
    fs::create_dir_all(pin_dir(name))
        .map_err(|e| format!("cannot create {}: {e}", pin_dir(name).display()))?;
    let r = load_pinned(name);
    if r.is_err() {
        remove_pins(name);
    }
    r?;
    if !wait_registered(name, true) {
        remove_pins(name);
        return Err(format!(
            "{name} was attached but the kernel does not list it in {AVAILABLE}"
        ));
    }
    Ok(())
}

#[cfg(kernel_cc_missing)]
fn load_pinned(_name: &str) -> Result<(), String> {
    built()
}

#[cfg(not(kernel_cc_missing))]
fn load_pinned(name: &str) -> Result<(), String> {
    use libbpf_rs::skel::{OpenSkel, SkelBuilder};
    use std::mem::MaybeUninit;

    let dir = pin_dir(name);
    let prev = libbpf_rs::set_print(Some((libbpf_rs::PrintLevel::Warn, capture)));
    let _ = take_log();
    let fail = |what: &str, e: libbpf_rs::Error| failure(name, what, &e);
    macro_rules! go {
        ($builder:expr, $ops:ident, $state:ident, $live:ident) => {{
            let mut obj = MaybeUninit::uninit();
            let open = $builder
                .open(&mut obj)
                .map_err(|e| fail("cannot open", e))?;
            let mut skel = open.load().map_err(|e| fail("the kernel refused", e))?;
            let mut link = skel
                .maps
                .$ops
                .attach_struct_ops()
                .map_err(|e| fail("cannot register", e))?;
            link.pin(dir.join("link"))
                .map_err(|e| fail("cannot pin the link of", e))?;
            skel.maps
                .$state
                .pin(dir.join("state"))
                .map_err(|e| fail("cannot pin the state map of", e))?;
            skel.maps
                .$live
                .pin(dir.join("live"))
                .map_err(|e| fail("cannot pin the socket count of", e))?;
            Ok::<(), String>(())
        }};
    }
    let r = match name {
        BPF_BBR => go!(
            skel::bbr::BbrlabBbrSkelBuilder::default(),
            bbrlab_bbr,
            bbrlab_bbr_st,
            bbrlab_bbr_live
        ),
        BPF_BBR3 => go!(
            skel::bbr3::BbrlabBbr3SkelBuilder::default(),
            bbrlab_bbr3,
            bbrlab_b3_st,
            bbrlab_b3_live
        ),
        _ => go!(
            skel::jitter::BbrlabJitterSkelBuilder::default(),
            bbrlab_jitter,
            bbrlab_jit_st,
            bbrlab_jit_live
        ),
    };
    libbpf_rs::set_print(prev);
    r
}

/// The error of a failed step: what failed, libbpf's error, a hint for
/// the errno, the field this kernel lacks (when a CO-RE relocation
/// failed), and the tail of what libbpf and the verifier said.
#[cfg(not(kernel_cc_missing))]
fn failure(name: &str, what: &str, e: &libbpf_rs::Error) -> String {
    let log = take_log();
    let mut m = format!("{what} {name}: {e}");
    if let Some(field) = missing_field(&log) {
        m.push_str(&format!(
            " (this kernel lacks {field}, which {name} reads: it needs Linux >= 6.10 \
             with the stock tcp_sock and rate_sample)"
        ));
    } else if let Some(hint) = errno_hint(e) {
        m.push_str(&format!(" ({hint})"));
    }
    if !log.trim().is_empty() {
        m.push_str("\nlibbpf and the verifier said:\n");
        m.push_str(log.trim_end());
    }
    m
}

/// The field a failed CO-RE relocation names in libbpf's log (`failed to
/// resolve CO-RE relocation <byte_off> [N] struct tcp_sock.delivered_ce
/// (...)`), e.g. `struct tcp_sock.delivered_ce`.
pub fn missing_field(log: &str) -> Option<String> {
    let line = log
        .lines()
        .find(|l| l.contains("failed to resolve CO-RE relocation"))?;
    let at = line.find("struct ").or_else(|| line.find("union "))?;
    let field = line[at..].split(" (").next()?.trim();
    Some(field.to_string())
}

/// Loads `bbrlab_bbr3_broken` (bbrlab_bbr3 with a deliberate verifier
/// error: its socket-storage pointer used unchecked) and returns the
/// error a user would see, through the same path as [`load`]. For the
/// root test that a rejection reports the verifier's own message; it
/// registers and pins nothing (the load fails before any attach).
#[doc(hidden)]
pub fn load_rejected_variant() -> Result<(), String> {
    built()?;
    preflight(Path::new(BTF))?;
    #[cfg(not(kernel_cc_missing))]
    {
        use libbpf_rs::skel::{OpenSkel, SkelBuilder};
        use std::mem::MaybeUninit;

        let name = "bbrlab_bbr3_broken";
        let prev = libbpf_rs::set_print(Some((libbpf_rs::PrintLevel::Warn, capture)));
        let _ = take_log();
        let mut obj = MaybeUninit::uninit();
        let r = skel::bbr3_broken::BbrlabBbr3BrokenSkelBuilder::default()
            .open(&mut obj)
            .map_err(|e| failure(name, "cannot open", &e))
            .and_then(|open| {
                open.load()
                    .map(|_| ())
                    .map_err(|e| failure(name, "the kernel refused", &e))
            });
        libbpf_rs::set_print(prev);
        r
    }
    #[cfg(kernel_cc_missing)]
    {
        Ok(())
    }
}

#[cfg(not(kernel_cc_missing))]
fn errno_hint(e: &libbpf_rs::Error) -> Option<&'static str> {
    match e.kind() {
        libbpf_rs::ErrorKind::PermissionDenied => {
            Some("permission denied: needs root, or a lockdown/LSM forbids BPF")
        }
        libbpf_rs::ErrorKind::AlreadyExists => {
            Some("a congestion control of that name is already registered")
        }
        libbpf_rs::ErrorKind::Unsupported => Some(
            "this kernel lacks a BPF feature the control uses (struct_ops links: Linux >= 6.4)",
        ),
        _ => None,
    }
}

/// What [`unload`] did.
#[derive(Debug, Clone)]
pub struct Unloaded {
    /// Sockets still running the control (only with `force`): they keep it
    /// until they close, but no new socket can choose it.
    pub sockets_left: u64,
    /// The control was this network namespace's default
    /// (`net.ipv4.tcp_congestion_control`, only with `force`): the default
    /// holds a reference, so new sockets keep getting it until the default
    /// is changed.
    pub still_default: bool,
}

/// This network namespace's default congestion control, if readable.
fn namespace_default() -> Option<String> {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control")
        .ok()
        .map(|s| s.trim().to_string())
}

/// Unregisters `name` by removing its pins. Refuses while sockets use it
/// unless `force`: those sockets keep the program until they close.
pub fn unload(name: &str, force: bool) -> Result<Unloaded, String> {
    check_name(name)?;
    if !is_root() {
        return Err("unloading a BPF congestion control needs root: run it with sudo".into());
    }
    let dir = pin_dir(name);
    if !dir.join("link").exists() {
        return Err(if registered(name) {
            format!(
                "{name} is registered, but not by `bbrlab kernel load` (nothing pinned at {}); \
                 not touching it",
                dir.display()
            )
        } else {
            format!("{name} is not loaded")
        });
    }
    let live = live_sockets(name).unwrap_or(0);
    if live > 0 && !force {
        return Err(format!(
            "{live} socket(s) still use {name}; close them first, or pass --force \
             (they keep running it until they close, but no new socket can choose it)"
        ));
    }
    // The namespace default keeps the ops referenced after unregistering
    // (tcp_set_default_congestion_control() holds them): new sockets would
    // silently go on running the "unloaded" control (measured on 6.18).
    let still_default = namespace_default().as_deref() == Some(name);
    if still_default && !force {
        return Err(format!(
            "{name} is this network namespace's default (net.ipv4.tcp_congestion_control); \
             set the default back first (e.g. sysctl -w net.ipv4.tcp_congestion_control=cubic), \
             or pass --force (new sockets would keep getting {name} until the default changes)"
        ));
    }
    remove_pins(name);
    if !wait_registered(name, false) {
        return Err(format!(
            "removed the pins of {name}, but the kernel still lists it in {AVAILABLE}"
        ));
    }
    Ok(Unloaded {
        sockets_left: live,
        still_default,
    })
}

/// The kernel name of a control's state map (BPF map names have at most
/// 15 characters).
fn state_map_name(cc: &str) -> &'static str {
    match cc {
        BPF_BBR => "bbrlab_bbr_st",
        BPF_BBR3 => "bbrlab_b3_st",
        _ => "bbrlab_jit_st",
    }
}

/// One control's state for one socket, as published by the BPF program
/// (`struct bbrlab_cc_state` in `src/bpf/bbrlab_cc.h`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RawState {
    /// BBR's bandwidth estimate in use (`bbr_bw()`): packets/µs × 2^24.
    pub bw: u64,
    /// The max filter's estimate (`bbr_max_bw()`), same unit.
    pub max_bw: u64,
    /// `cong_control` calls (ACKs processed).
    pub acks: u64,
    /// Times PROBE_RTT was entered.
    pub probe_rtt_entries: u64,
    /// `tcp_mstamp` (µs) at the last PROBE_RTT entry.
    pub last_probe_rtt_us: u64,
    /// MSS the control computes with.
    pub mss: u32,
    /// min_rtt, µs (`u32::MAX` before a sample).
    pub min_rtt_us: u32,
    /// Seed 001's srtt, µs (0 for `bbrlab_bbr`).
    pub srtt_us: u32,
    /// Seed 001's rttvar, µs (0 for `bbrlab_bbr`).
    pub rttvar_us: u32,
    /// 0 STARTUP, 1 DRAIN, 2 PROBE_BW, 3 PROBE_RTT.
    pub mode: u32,
    /// Pacing gain, 256 = 1.0.
    pub pacing_gain: u32,
    /// cwnd gain, 256 = 1.0.
    pub cwnd_gain: u32,
    /// PROBE_BW phase.
    pub cycle_idx: u32,
    /// PROBE_BW cycle length (5 while the variant deems the path unstable).
    pub cycle_len: u32,
    /// Whether the variant builds the BDP on srtt now.
    pub using_srtt: u32,
    /// Whether the policer (lt_bw) estimate is in use.
    pub lt_use_bw: u32,
    /// cwnd, packets.
    pub cwnd: u32,
    /// Lowest cwnd seen during the last PROBE_RTT, packets.
    pub probe_rtt_min_cwnd: u32,
    counted: u32,
    pad: [u32; 2],
}

impl RawState {
    /// The mode's name in bbrlab's schema.
    pub fn mode_name(&self) -> &'static str {
        match self.mode {
            0 => "startup",
            1 => "drain",
            2 => "probe_bw",
            3 => "probe_rtt",
            _ => "",
        }
    }

    /// Bandwidth estimate in bits/s (the schema's `btl_bw_bps`).
    pub fn bw_bps(&self) -> f64 {
        kernel_bw_bps(self.bw, self.mss)
    }
}

/// The size of a control's socket-storage value: `struct bbrlab_cc_state`
/// for the v1 controls, the whole `struct bbrlab_b3_state` (its published
/// block, [`RawState3`], first) for `bbrlab_bbr3`.
fn value_size(cc: &str) -> usize {
    if cc == BPF_BBR3 {
        BBR3_VALUE_SIZE
    } else {
        std::mem::size_of::<RawState>()
    }
}

/// `sizeof(struct bbrlab_b3_state)` in `src/bpf/bbrlab_bbr3.bpf.c`: the
/// published block (144 bytes) and the controller's private state.
const BBR3_VALUE_SIZE: usize = 352;

/// `bbrlab_bbr3`'s published state for one socket: the first block of
/// `struct bbrlab_b3_state` in `src/bpf/bbrlab_bbr3.bpf.c`. Volumes are
/// packets, `u32::MAX` where the model has no bound.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RawState3 {
    /// `max_bw` (the two-cycle max filter): packets/µs × 2^24.
    pub max_bw: u64,
    /// The model's bw, min(max_bw, bw_shortterm), same unit.
    pub bw: u64,
    /// `bw_shortterm` (`bw_lo`), same unit; `u32::MAX` when unset.
    pub bw_shortterm: u64,
    /// `cong_control` calls.
    pub acks: u64,
    /// Times PROBE_RTT was entered.
    pub probe_rtt_entries: u64,
    /// `tcp_mstamp` (µs) at the last PROBE_RTT entry.
    pub last_probe_rtt_us: u64,
    /// Times PROBE_BW_UP was entered.
    pub up_entries: u64,
    /// `tcp_mstamp` (µs) at the last UP entry.
    pub last_up_us: u64,
    /// Cuts of inflight_longterm (`bbr_handle_inflight_too_high()`).
    pub cuts: u64,
    /// Probes started one round after an UP that stopped as a precaution
    /// at a risky inflight_longterm and saw no loss or ECN since
    /// (`stopped_risky_probe` in `bbr_adapt_upper_bounds()`): the one way
    /// besides the wall clock, the Reno bound and ECN to leave DOWN early.
    pub risky_reprobes: u64,
    /// MSS the control computes with.
    pub mss: u32,
    /// min_rtt, µs (`u32::MAX` before a sample).
    pub min_rtt_us: u32,
    /// 0 STARTUP, 1 DRAIN, 2 DOWN, 3 CRUISE, 4 REFILL, 5 UP, 6 PROBE_RTT.
    pub mode: u32,
    /// Pacing gain, 256 = 1.0.
    pub pacing_gain: u32,
    /// cwnd gain, 256 = 1.0.
    pub cwnd_gain: u32,
    /// cwnd, packets.
    pub cwnd: u32,
    /// `inflight_longterm` (`inflight_hi`), packets.
    pub inflight_longterm: u32,
    /// `inflight_shortterm` (`inflight_lo`), packets.
    pub inflight_shortterm: u32,
    /// Lowest cwnd seen during the last PROBE_RTT, packets.
    pub probe_rtt_min_cwnd: u32,
    /// The in-flight figure (prior_in_flight) of the last cut.
    pub last_cut_tx_in_flight: u32,
    /// The target inflight (BDP with budget, at most cwnd) at the last cut.
    pub last_cut_target: u32,
    /// inflight_longterm as the last cut set it.
    pub last_cut_longterm: u32,
    /// The state (as `mode`) the last cut happened in.
    pub last_cut_state: u32,
    /// `ecn_alpha`, 256 = 1.0.
    pub ecn_alpha: u32,
    /// Whether the ECN response is on for this socket.
    pub ecn_eligible: u32,
    counted: u32,
}

/// A mode number of `bbrlab_bbr3` as the simulator's `bbr3` names it
/// (`congestion::Mode::name`).
pub fn bbr3_mode_name(mode: u32) -> &'static str {
    match mode {
        0 => "startup",
        1 => "drain",
        2 => "probe_bw_down",
        3 => "probe_bw_cruise",
        4 => "probe_bw_refill",
        5 => "probe_bw_up",
        6 => "probe_rtt",
        _ => "",
    }
}

impl RawState3 {
    /// The mode's name in bbrlab's schema (the simulator's `bbr3` names).
    pub fn mode_name(&self) -> &'static str {
        bbr3_mode_name(self.mode)
    }

    /// `max_bw` in bits/s (the schema's `btl_bw_bps`).
    pub fn bw_bps(&self) -> f64 {
        kernel_bw_bps(self.max_bw, self.mss)
    }

    /// PROBE_BW's phase as Linux numbers it (`enum bbr_pacing_gain_phase`):
    /// UP 0, DOWN 1, CRUISE 2, REFILL 3; `None` outside PROBE_BW.
    pub fn cycle_idx(&self) -> Option<u32> {
        match self.mode {
            5 => Some(0),
            2 => Some(1),
            3 => Some(2),
            4 => Some(3),
            _ => None,
        }
    }
}

/// packets/µs × 2^24 at `mss` bytes a packet, in bits/s.
fn kernel_bw_bps(bw: u64, mss: u32) -> f64 {
    bw as f64 * mss as f64 * 8.0 * 1e6 / (1u64 << 24) as f64
}

/// Reads a control's per-socket state through its pinned socket-storage
/// map (the key is the socket's fd in this process).
pub struct StateReader {
    map: libbpf_rs::MapHandle,
}

impl StateReader {
    /// Opens the state map of a loaded control: by its pin, or, where the
    /// pin is hidden (`ip netns exec` mounts a fresh /sys), by its map name
    /// (the newest map of that name: an older one belongs to a control
    /// unloaded while sockets still ran it).
    pub fn open(name: &str) -> Result<StateReader, String> {
        check_name(name)?;
        let p = pin_dir(name).join("state");
        let map = match libbpf_rs::MapHandle::from_pinned_path(&p) {
            Ok(m) => m,
            Err(_) => {
                let want = state_map_name(name);
                let id = libbpf_rs::query::MapInfoIter::default()
                    .filter(|m| m.name.to_str() == Some(want))
                    .map(|m| m.id)
                    .max()
                    .ok_or_else(|| format!("{name} is not loaded (no map {want})"))?;
                libbpf_rs::MapHandle::from_map_id(id)
                    .map_err(|e| format!("cannot open map {want} (id {id}): {e}"))?
            }
        };
        let want = value_size(name);
        if map.value_size() as usize != want {
            return Err(format!(
                "{}: value size {} != {want}: bbrlab and the loaded program differ; \
                 unload and load again",
                p.display(),
                map.value_size()
            ));
        }
        Ok(StateReader { map })
    }

    /// The state for the socket `fd`, `None` when the control has not
    /// initialised it (or the socket uses another control).
    pub fn read(&self, fd: i32) -> Option<RawState> {
        let v = self.bytes(fd)?;
        if v.len() != std::mem::size_of::<RawState>() {
            return None;
        }
        // SAFETY: RawState is repr(C) plain integers, any bit pattern is
        // valid, and the length was checked.
        Some(unsafe { std::ptr::read_unaligned(v.as_ptr().cast::<RawState>()) })
    }

    /// `bbrlab_bbr3`'s published state for the socket `fd` (the map must be
    /// `bbrlab_bbr3`'s), `None` as [`StateReader::read`].
    pub fn read3(&self, fd: i32) -> Option<RawState3> {
        let v = self.bytes(fd)?;
        if v.len() != BBR3_VALUE_SIZE {
            return None;
        }
        // SAFETY: RawState3 is repr(C) plain integers, any bit pattern is
        // valid, and the value is longer than it.
        Some(unsafe { std::ptr::read_unaligned(v.as_ptr().cast::<RawState3>()) })
    }

    fn bytes(&self, fd: i32) -> Option<Vec<u8>> {
        self.map
            .lookup(&fd.to_ne_bytes(), libbpf_rs::MapFlags::ANY)
            .ok()?
    }
}

/// The congestion control a socket runs (`TCP_CONGESTION`), e.g. `bbr`.
pub fn socket_cc(fd: i32) -> Option<String> {
    let mut name = [0u8; 16];
    let mut len = name.len() as libc::socklen_t;
    // SAFETY: the buffer and its length are valid for the call.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if r != 0 {
        return None;
    }
    let n = &name[..(len as usize).min(name.len())];
    let end = n.iter().position(|&b| b == 0).unwrap_or(n.len());
    Some(String::from_utf8_lossy(&n[..end]).into_owned())
}

/// Columns of the per-sample file [`Sampler`] writes beside the probe's
/// time series: the control's own state, which the shared schema has no
/// columns for (srtt/rttvar of seed 001, the cycle, PROBE_RTT counts).
pub const SAMPLER_COLUMNS: &str = "time_s,cc,mode,bw_estimate_bps,min_rtt_ms,srtt_ms,rttvar_ms,\
using_srtt,cycle_len,cycle_idx,pacing_gain,cwnd_gain,cwnd_packets,lt_use_bw,\
probe_rtt_entries,probe_rtt_min_cwnd";

/// The sidecar columns of `bbrlab_bbr3` (its own set: v3 has no srtt,
/// cycle of eight or lt_bw, and has the two-scale model). `mode`,
/// `bw_estimate_bps` (max_bw) and `min_rtt_ms` mean what they mean in the
/// shared schema, with the simulator's `bbr3` mode names; volumes are
/// bytes (packets × MSS), empty where the model has no bound.
pub const SAMPLER3_COLUMNS: &str = "time_s,cc,mode,bw_estimate_bps,min_rtt_ms,pacing_gain,\
cwnd_gain,cwnd_packets,inflight_longterm_bytes,inflight_shortterm_bytes,bw_shortterm_bps,\
cycle_idx,probe_rtt_entries,probe_rtt_min_cwnd,probe_bw_up_entries,inflight_cuts,risky_reprobes,\
last_cut_tx_in_flight,last_cut_target,last_cut_inflight_longterm,last_cut_mode,ecn_alpha";

/// One reading of one of our controls.
#[derive(Clone, Copy, Debug)]
pub enum Reading {
    /// `bbrlab_bbr` or `bbrlab_jitter`.
    V1(RawState),
    /// `bbrlab_bbr3`.
    V3(RawState3),
}

impl Reading {
    /// The mode in the shared schema's names.
    pub fn mode_name(&self) -> &'static str {
        match self {
            Reading::V1(s) => s.mode_name(),
            Reading::V3(s) => s.mode_name(),
        }
    }

    /// The bandwidth estimate in use, bits/s (v3: max_bw).
    pub fn bw_bps(&self) -> f64 {
        match self {
            Reading::V1(s) => s.bw_bps(),
            Reading::V3(s) => s.bw_bps(),
        }
    }

    /// min_rtt, µs (`u32::MAX` before a sample).
    pub fn min_rtt_us(&self) -> u32 {
        match self {
            Reading::V1(s) => s.min_rtt_us,
            Reading::V3(s) => s.min_rtt_us,
        }
    }

    /// Pacing and cwnd gains, 256 = 1.0.
    pub fn gains(&self) -> (u32, u32) {
        match self {
            Reading::V1(s) => (s.pacing_gain, s.cwnd_gain),
            Reading::V3(s) => (s.pacing_gain, s.cwnd_gain),
        }
    }
}

/// The probe's hook (`bbrlab tcp send`): for a socket running one of our
/// controls, reads its state every sample (what `TCP_CC_INFO` gives for
/// the kernel's `bbr`) and, with a log, writes every field to
/// `<log>.cc.csv`.
pub struct Sampler {
    cc: String,
    reader: StateReader,
    csv: Option<csv::Writer<fs::File>>,
}

/// The sidecar file of a probe log: `flows.csv` → `flows.cc.csv`.
pub fn sampler_path(log: &Path) -> PathBuf {
    log.with_extension("cc.csv")
}

impl Sampler {
    /// `None` unless the socket runs one of ours and its state map can be
    /// opened.
    pub fn for_socket(fd: i32, log: Option<&Path>) -> Option<Sampler> {
        let cc = socket_cc(fd).filter(|c| is_ours(c))?;
        let reader = match StateReader::open(&cc) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("tcp send: not sampling {cc}'s state: {e}");
                return None;
            }
        };
        let csv = log.and_then(|l| {
            let p = sampler_path(l);
            let mut w = csv::Writer::from_path(&p).ok()?;
            let cols = if cc == BPF_BBR3 {
                SAMPLER3_COLUMNS
            } else {
                SAMPLER_COLUMNS
            };
            w.write_record(cols.split(',')).ok()?;
            Some(w)
        });
        Some(Sampler { cc, reader, csv })
    }

    /// One reading at `t` seconds; also a row of the sidecar file. A
    /// write error is said once on stderr and ends the sidecar (the probe's
    /// own log goes on).
    pub fn sample(&mut self, fd: i32, t: f64) -> Option<Reading> {
        let s = if self.cc == BPF_BBR3 {
            Reading::V3(self.reader.read3(fd)?)
        } else {
            Reading::V1(self.reader.read(fd)?)
        };
        if let Some(w) = self.csv.as_mut() {
            let row = match &s {
                Reading::V1(r) => sampler_row(&self.cc, t, r),
                Reading::V3(r) => sampler3_row(&self.cc, t, r),
            };
            if let Err(e) = w.write_record(&row) {
                eprintln!("tcp send: stopped writing {}'s state: {e}", self.cc);
                self.csv = None;
            }
        }
        Some(s)
    }
}

/// One sidecar row, in [`SAMPLER_COLUMNS`]' order; unknown values (no
/// min_rtt yet, no PROBE_RTT yet) are empty cells.
fn sampler_row(cc: &str, t: f64, s: &RawState) -> Vec<String> {
    let min_rtt = if s.min_rtt_us == u32::MAX {
        String::new()
    } else {
        format!("{:.3}", s.min_rtt_us as f64 / 1000.0)
    };
    vec![
        format!("{t:.6}"),
        cc.to_string(),
        s.mode_name().to_string(),
        format!("{:.0}", s.bw_bps()),
        min_rtt,
        format!("{:.3}", s.srtt_us as f64 / 1000.0),
        format!("{:.3}", s.rttvar_us as f64 / 1000.0),
        s.using_srtt.to_string(),
        s.cycle_len.to_string(),
        s.cycle_idx.to_string(),
        s.pacing_gain.to_string(),
        s.cwnd_gain.to_string(),
        s.cwnd.to_string(),
        s.lt_use_bw.to_string(),
        s.probe_rtt_entries.to_string(),
        if s.probe_rtt_entries > 0 {
            s.probe_rtt_min_cwnd.to_string()
        } else {
            String::new()
        },
    ]
}

/// One `bbrlab_bbr3` sidecar row, in [`SAMPLER3_COLUMNS`]' order;
/// unknowns (no min_rtt, unset bounds, no PROBE_RTT or cut yet) are empty.
fn sampler3_row(cc: &str, t: f64, s: &RawState3) -> Vec<String> {
    let mss = u64::from(s.mss);
    let bytes = |v: u32| {
        if v == u32::MAX {
            String::new()
        } else {
            (u64::from(v) * mss).to_string()
        }
    };
    let min_rtt = if s.min_rtt_us == u32::MAX {
        String::new()
    } else {
        format!("{:.3}", s.min_rtt_us as f64 / 1000.0)
    };
    let bw_st = if s.bw_shortterm >= u64::from(u32::MAX) {
        String::new()
    } else {
        format!("{:.0}", kernel_bw_bps(s.bw_shortterm, s.mss))
    };
    let cut = |v: u32| {
        if s.cuts > 0 {
            v.to_string()
        } else {
            String::new()
        }
    };
    vec![
        format!("{t:.6}"),
        cc.to_string(),
        s.mode_name().to_string(),
        format!("{:.0}", s.bw_bps()),
        min_rtt,
        s.pacing_gain.to_string(),
        s.cwnd_gain.to_string(),
        s.cwnd.to_string(),
        bytes(s.inflight_longterm),
        bytes(s.inflight_shortterm),
        bw_st,
        s.cycle_idx().map_or(String::new(), |i| i.to_string()),
        s.probe_rtt_entries.to_string(),
        if s.probe_rtt_entries > 0 {
            s.probe_rtt_min_cwnd.to_string()
        } else {
            String::new()
        },
        s.up_entries.to_string(),
        s.cuts.to_string(),
        s.risky_reprobes.to_string(),
        cut(s.last_cut_tx_in_flight),
        cut(s.last_cut_target),
        cut(s.last_cut_longterm),
        if s.cuts > 0 {
            bbr3_mode_name(s.last_cut_state).to_string()
        } else {
            String::new()
        },
        format!("{:.4}", f64::from(s.ecn_alpha) / 256.0),
    ]
}

impl Drop for Sampler {
    fn drop(&mut self) {
        if let Some(w) = self.csv.as_mut() {
            if let Err(e) = w.flush() {
                eprintln!("tcp send: could not finish {}'s state file: {e}", self.cc);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_state_matches_the_bpf_layout() {
        // struct bbrlab_cc_state: 5 u64 then 16 u32.
        assert_eq!(std::mem::size_of::<RawState>(), 5 * 8 + 16 * 4);
    }

    /// A sidecar row has a cell per column, and unknowns are empty cells
    /// rather than the kernel's sentinels.
    #[test]
    fn a_sidecar_row_fills_every_column() {
        let fresh = RawState {
            min_rtt_us: u32::MAX,
            ..RawState::default()
        };
        let row = sampler_row("bbrlab_bbr", 0.25, &fresh);
        let columns: Vec<&str> = SAMPLER_COLUMNS.split(',').collect();
        assert_eq!(row.len(), columns.len());
        let cell = |r: &[String], c: &str| r[columns.iter().position(|k| *k == c).unwrap()].clone();
        assert_eq!(cell(&row, "time_s"), "0.250000");
        assert_eq!(cell(&row, "min_rtt_ms"), "");
        assert_eq!(cell(&row, "probe_rtt_min_cwnd"), "");
        let later = RawState {
            min_rtt_us: 40_250,
            probe_rtt_entries: 1,
            probe_rtt_min_cwnd: 4,
            ..RawState::default()
        };
        let row = sampler_row("bbrlab_bbr", 10.0, &later);
        assert_eq!(cell(&row, "min_rtt_ms"), "40.250");
        assert_eq!(cell(&row, "probe_rtt_min_cwnd"), "4");
    }

    #[test]
    fn raw_state3_matches_the_bpf_layout() {
        // struct bbrlab_b3_state's published block: 10 u64 then 16 u32.
        assert_eq!(std::mem::size_of::<RawState3>(), 10 * 8 + 16 * 4);
        assert!(BBR3_VALUE_SIZE > std::mem::size_of::<RawState3>());
    }

    /// A bbr3 sidecar row has a cell per column, the simulator's mode
    /// names, volumes in bytes, and empty cells for unset bounds.
    #[test]
    fn a_bbr3_sidecar_row_fills_every_column() {
        let columns: Vec<&str> = SAMPLER3_COLUMNS.split(',').collect();
        let cell = |r: &[String], c: &str| r[columns.iter().position(|k| *k == c).unwrap()].clone();
        let fresh = RawState3 {
            min_rtt_us: u32::MAX,
            inflight_longterm: u32::MAX,
            inflight_shortterm: u32::MAX,
            bw_shortterm: u64::from(u32::MAX),
            mss: 1448,
            ..RawState3::default()
        };
        let row = sampler3_row("bbrlab_bbr3", 0.5, &fresh);
        assert_eq!(row.len(), columns.len());
        assert_eq!(cell(&row, "mode"), "startup");
        assert_eq!(cell(&row, "inflight_longterm_bytes"), "");
        assert_eq!(cell(&row, "cycle_idx"), "");
        assert_eq!(cell(&row, "last_cut_target"), "");
        let up = RawState3 {
            mode: 5,
            inflight_longterm: 100,
            inflight_shortterm: u32::MAX,
            cuts: 1,
            last_cut_target: 80,
            ..fresh
        };
        let row = sampler3_row("bbrlab_bbr3", 1.0, &up);
        assert_eq!(cell(&row, "mode"), "probe_bw_up");
        assert_eq!(cell(&row, "cycle_idx"), "0");
        assert_eq!(cell(&row, "inflight_longterm_bytes"), "144800");
        assert_eq!(cell(&row, "last_cut_target"), "80");
        let names: Vec<&str> = (0..7).map(bbr3_mode_name).collect();
        assert_eq!(
            names,
            [
                "startup",
                "drain",
                "probe_bw_down",
                "probe_bw_cruise",
                "probe_bw_refill",
                "probe_bw_up",
                "probe_rtt"
            ]
        );
    }

    /// A CO-RE failure names the field the kernel lacks.
    #[test]
    fn a_missing_kernel_field_is_named() {
        let log = "libbpf: prog 'bbr3_cong_control': BPF program load failed: Invalid argument\n\
                   12: <invalid CO-RE relocation>\n\
                   failed to resolve CO-RE relocation <byte_off> [2961] struct tcp_sock.delivered_ce (0:58 @ offset 1620)\n";
        assert_eq!(
            missing_field(log).as_deref(),
            Some("struct tcp_sock.delivered_ce")
        );
        assert_eq!(missing_field("R1 invalid mem access 'scalar'"), None);
    }

    #[test]
    fn bandwidth_converts_from_kernel_units() {
        // 1 packet/ms of 1000 B = 8 Mbit/s; kernel units: pkts/us << 24.
        let s = RawState {
            bw: (1u64 << 24) / 1000,
            mss: 1000,
            ..Default::default()
        };
        assert!((s.bw_bps() - 8e6).abs() / 8e6 < 1e-3, "{}", s.bw_bps());
    }

    #[test]
    fn unknown_names_are_refused() {
        let e = load("cubic").unwrap_err();
        assert!(e.contains("bbrlab_bbr, bbrlab_jitter, bbrlab_bbr3"), "{e}");
    }

    #[test]
    fn a_kernel_without_btf_is_named_as_such() {
        if !is_root() {
            let e = preflight(Path::new("/nonexistent")).unwrap_err();
            assert!(e.contains("root"), "{e}");
            return;
        }
        let e = preflight(Path::new("/nonexistent/btf/vmlinux")).unwrap_err();
        assert!(
            e.contains("no BTF") && e.contains("CONFIG_DEBUG_INFO_BTF"),
            "{e}"
        );
    }
}
