//! Loading and unloading: the checks before a load (root, BTF, bpffs),
//! the load through pinned struct_ops links, the verifier's messages made
//! readable, and the unload that refuses to pull a namespace's default.

use super::*;

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
pub(crate) fn ensure_bpffs() -> Result<(), String> {
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
pub(crate) static LOG: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

#[cfg(not(kernel_cc_missing))]
pub(crate) fn capture(level: libbpf_rs::PrintLevel, msg: String) {
    if level != libbpf_rs::PrintLevel::Debug {
        if let Ok(mut l) = LOG.lock() {
            l.push(msg);
        }
    }
}

#[cfg(not(kernel_cc_missing))]
pub(crate) fn take_log() -> String {
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

pub(crate) fn live_sockets(name: &str) -> Option<u64> {
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

pub(crate) fn remove_pins(name: &str) {
    let dir = pin_dir(name);
    for f in ["link", "state", "live"] {
        let _ = fs::remove_file(dir.join(f));
    }
    let _ = fs::remove_dir(&dir);
    let _ = fs::remove_dir(PIN_ROOT); // only when empty
}

/// Waits (bounded) until the kernel's list agrees that `name` is or is
/// not registered: releasing a link may finish just after the unlink.
pub(crate) fn wait_registered(name: &str, want: bool) -> bool {
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
pub(crate) fn load_pinned(_name: &str) -> Result<(), String> {
    built()
}

#[cfg(not(kernel_cc_missing))]
pub(crate) fn load_pinned(name: &str) -> Result<(), String> {
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
pub(crate) fn failure(name: &str, what: &str, e: &libbpf_rs::Error) -> String {
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
pub(crate) fn errno_hint(e: &libbpf_rs::Error) -> Option<&'static str> {
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
pub(crate) fn namespace_default() -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
