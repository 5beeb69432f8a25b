//! Helpers for the root tests that load the BPF congestion controls
//! (`bbrlab kernel load|unload|list`): they register kernel-wide, so every
//! such test holds [`super::kernel_lock`] and a [`Loaded`] guard that
//! leaves nothing registered or pinned, panics included.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// `bbrlab kernel ARGS…`, run to completion.
pub fn kernel(args: &[&str]) -> Output {
    Command::new(super::BIN)
        .arg("kernel")
        .args(args)
        .output()
        .unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Whether the kernel offers `name` to sockets now.
pub fn registered(name: &str) -> bool {
    testbed::host::available_congestion_controls()
        .iter()
        .any(|n| n == name)
}

/// `bpftool struct_ops list` (the kernel's view of registered struct_ops
/// maps, whatever our pins say).
pub fn struct_ops_list() -> String {
    let o = Command::new("bpftool")
        .args(["struct_ops", "list"])
        .output()
        .expect("bpftool (scripts/setup.sh installs it)");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Nothing of `name` registered, pinned or left as a struct_ops map, and
/// `kernel list` agrees.
pub fn assert_nothing_left(name: &str) {
    assert!(!registered(name), "{name} still registered");
    assert!(
        !kernel_cc::pin_dir(name).exists(),
        "pins left in {}",
        kernel_cc::pin_dir(name).display()
    );
    // The kernel frees the struct_ops map when the last socket that ran
    // the control is gone; sockets closed in a namespace being torn down
    // linger a moment (bounded wait).
    let t0 = Instant::now();
    let mut list = struct_ops_list();
    while list.split_whitespace().any(|w| w == name) && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
        list = struct_ops_list();
    }
    assert!(
        !list.split_whitespace().any(|w| w == name),
        "bpftool still lists {name}: {list}"
    );
    let ours = String::from_utf8_lossy(&kernel(&["list"]).stdout).into_owned();
    let line = ours.lines().find(|l| l.starts_with(name)).unwrap_or("");
    assert!(
        line.split_whitespace().nth(1) == Some("no")
            && line.split_whitespace().nth(2) == Some("no"),
        "`kernel list` says {line:?}"
    );
}

/// Holds controls registered for a test's lifetime and unloads exactly
/// those it loaded on drop (forcing: sockets may still close), then checks
/// nothing of them is left.
pub struct Loaded(Vec<&'static str>);

impl Loaded {
    /// Loads `names`. One pinned by an earlier run of these tests that was
    /// killed without its guard is unloaded first; one someone else
    /// registered (no pin) makes the load fail and say so.
    pub fn new(names: &[&'static str]) -> Loaded {
        for n in names {
            if kernel_cc::pin_dir(n).join("link").exists() {
                let _ = kernel(&["unload", n, "--force"]);
            }
        }
        let mut args = vec!["load"];
        args.extend(names);
        let o = kernel(&args);
        assert!(o.status.success(), "load failed: {}", stderr(&o));
        Loaded(names.to_vec())
    }

    /// Makes sure `name` is registered: loads it unless it already is, and
    /// then unloads on drop only if it loaded it (another user's stays).
    pub fn ensure(name: &'static str) -> Loaded {
        if registered(name) {
            Loaded(Vec::new())
        } else {
            Loaded::new(&[name])
        }
    }
}

impl Drop for Loaded {
    fn drop(&mut self) {
        // Only what is still pinned: a test may have unloaded already.
        let pinned: Vec<&str> = self
            .0
            .iter()
            .copied()
            .filter(|n| kernel_cc::pin_dir(n).join("link").exists())
            .collect();
        let o = if pinned.is_empty() {
            None
        } else {
            let mut args = vec!["unload", "--force"];
            args.extend(&pinned);
            Some(kernel(&args))
        };
        if !std::thread::panicking() {
            if let Some(o) = o {
                assert!(o.status.success(), "unload failed: {}", stderr(&o));
            }
            for n in &self.0 {
                // Release of the link may finish a moment after the unlink.
                let t0 = Instant::now();
                while registered(n) && t0.elapsed() < Duration::from_secs(5) {
                    std::thread::sleep(Duration::from_millis(50));
                }
                assert_nothing_left(n);
            }
        }
    }
}

/// Brings `lo` up in the calling thread's network namespace (a test's
/// anonymous one, from `unshare(CLONE_NEWNET)`).
pub fn loopback_up() {
    // SAFETY: a plain socket for the ioctl; ifreq is zeroed and named "lo".
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0);
        assert!(s >= 0);
        let mut req: libc::ifreq = std::mem::zeroed();
        req.ifr_name[0] = b'l' as libc::c_char;
        req.ifr_name[1] = b'o' as libc::c_char;
        assert_eq!(libc::ioctl(s, libc::SIOCGIFFLAGS, &mut req), 0);
        req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
        assert_eq!(libc::ioctl(s, libc::SIOCSIFFLAGS, &mut req), 0);
        libc::close(s);
    }
}
