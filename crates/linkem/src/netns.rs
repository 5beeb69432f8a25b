//! Network namespaces and TUN devices: the emulator's topology.
//!
//! Two namespaces, `client` and `server`, each hold one TUN device with a
//! point-to-point address. The kernel in each namespace routes the peer's
//! address into its TUN device; the emulator reads the packets from one
//! device's file descriptor and writes them into the other's. Everything is
//! created with iproute2 (`ip`), named `bbrlab-<pid>-…`, and removed when
//! the [`Topology`] is dropped, so an error or a signal that unwinds cleans
//! up. Namespaces left by a process that was killed outright are removed
//! by [`reap_stale`] the next time the emulator starts.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::Command;

/// The client side's address.
pub const CLIENT_ADDR: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 1);
/// The server side's address.
pub const SERVER_ADDR: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 2);
/// Prefix of every namespace the emulator creates.
pub const PREFIX: &str = "bbrlab-";

/// Runs `ip` with `args`; an error carries the command and its stderr.
pub fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run `ip` (install iproute2): {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// TCP buffer limits the emulator sets in both namespaces unless told to
/// keep the kernel's: `min default max` bytes for `net.ipv4.tcp_rmem` and
/// `net.ipv4.tcp_wmem`. A new namespace starts from the kernel's built-in
/// 6 MiB receive / 4 MiB send maximum, which caps a single TCP flow at
/// about 4 MiB / RTT (335 Mbit/s at 100 ms): the host, not the emulated
/// path, would be the bottleneck on fast or long paths. 64 MiB covers the
/// bandwidth-delay product plus a full queue of 1 Gbit/s at 250 ms with
/// Linux's receive-window overhead (half the buffer), and costs nothing
/// until a flow actually needs it (autotuning grows buffers on demand).
/// Minimum and default stay at the kernel's values.
pub const TCP_BUFFERS: [(&str, &str); 2] = [
    ("net.ipv4.tcp_rmem", "4096 131072 67108864"),
    ("net.ipv4.tcp_wmem", "4096 16384 67108864"),
];

/// Checks for what the emulator needs, saying what is missing.
pub fn check_environment() -> Result<(), String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("the emulator must run as root: creating network namespaces and TUN devices needs CAP_NET_ADMIN (try sudo)".into());
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Err("/dev/net/tun is missing: this kernel or container has no TUN support (modprobe tun, or run the container with --device /dev/net/tun)".into());
    }
    ip(&["netns", "list"]).map_err(|e| {
        format!("network namespaces are unavailable ({e}); the kernel needs CONFIG_NET_NS")
    })
}

/// The namespaces the emulator created, by name.
pub fn list_ours() -> Vec<String> {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(PREFIX))
        .map(str::to_string)
        .collect()
}

/// Removes namespaces left by emulator processes that no longer exist
/// (killed with SIGKILL, say). Returns how many were removed.
pub fn reap_stale() -> usize {
    let mut n = 0;
    for name in list_ours() {
        let pid = name[PREFIX.len()..]
            .split('-')
            .next()
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(pid) = pid {
            if !std::path::Path::new(&format!("/proc/{pid}")).exists() && delete(&name).is_ok() {
                n += 1;
            }
        }
    }
    n
}

/// A network namespace, deleted on drop.
pub struct Namespace {
    name: String,
}

impl Namespace {
    fn create(name: String) -> Result<Namespace, String> {
        ip(&["netns", "add", &name])?;
        Ok(Namespace { name })
    }

    /// Its name, for `ip netns exec`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Moves the calling thread into this namespace: sockets it creates
    /// afterwards live there. (Used by the self-test's traffic threads.)
    pub fn enter_current_thread(&self) -> io::Result<()> {
        let f = File::open(format!("/var/run/netns/{}", self.name))?;
        // SAFETY: setns on a valid namespace fd affects only this thread.
        let r = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

/// Where a network-namespace sysctl lives under /proc/sys, checked so a
/// name cannot reach outside `net/`.
fn sysctl_path(key: &str) -> Result<String, String> {
    let ok = !key.is_empty()
        && key
            .split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    if !ok || !key.starts_with("net.") {
        return Err(format!(
            "sysctl `{key}`: expected a dotted name under net. (e.g. net.ipv4.tcp_rmem)"
        ));
    }
    Ok(format!("/proc/sys/{}", key.replace('.', "/")))
}

impl Namespace {
    /// Runs `f` on a short-lived thread inside this namespace: /proc/sys/net
    /// shows the namespace of the thread that opens it, and the caller's
    /// own thread must stay where it is.
    fn inside<T: Send>(&self, f: impl FnOnce() -> Result<T, String> + Send) -> Result<T, String> {
        std::thread::scope(|s| {
            s.spawn(|| {
                self.enter_current_thread()
                    .map_err(|e| format!("cannot enter namespace {}: {e}", self.name))?;
                f()
            })
            .join()
            .map_err(|_| "the namespace helper thread panicked".to_string())?
        })
    }

    /// Reads a sysctl (e.g. `net.ipv4.tcp_rmem`) as this namespace sees it,
    /// whitespace normalised to single spaces.
    pub fn sysctl(&self, key: &str) -> Result<String, String> {
        let path = sysctl_path(key)?;
        self.inside(|| {
            let v = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {key} in {}: {e}", self.name))?;
            Ok(v.split_whitespace().collect::<Vec<_>>().join(" "))
        })
    }

    /// Sets a per-namespace sysctl (TCP buffer limits and the like): what
    /// `ip netns exec NS sysctl -w key=value` does, without needing procps.
    pub fn set_sysctl(&self, key: &str, value: &str) -> Result<(), String> {
        let path = sysctl_path(key)?;
        self.inside(|| {
            std::fs::write(&path, value)
                .map_err(|e| format!("cannot set {key} = {value} in {}: {e}", self.name))
        })
    }
}

/// Deletes a namespace, and first the TCP sockets left in it. A program
/// that closes a connection whose data or FIN is not yet acknowledged
/// leaves an orphan socket, which the kernel keeps retransmitting (for 2-4
/// minutes here) after the namespace and its path are gone, holding its
/// congestion control meanwhile: a BPF one could not be unloaded without
/// `--force` until they died. `ss -K` closes them at once (SOCK_DESTROY,
/// CONFIG_INET_DIAG_DESTROY); on a kernel without it nothing changes.
fn delete(name: &str) -> Result<(), String> {
    let _ = Command::new("ip")
        .args(["netns", "exec", name, "ss", "-K", "-t", "-a"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    // Deleting the namespace destroys the TUN device inside it.
    ip(&["netns", "del", name])
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = delete(&self.name);
    }
}

/// A TUN device's file descriptor (non-blocking, no packet-info header).
pub struct Tun {
    fd: OwnedFd,
    /// Interface name.
    pub name: String,
}

#[repr(C)]
struct IfReq {
    name: [libc::c_char; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;

impl Tun {
    fn open(name: &str) -> Result<Tun, String> {
        let path = CString::new("/dev/net/tun").expect("no NUL");
        // SAFETY: open with a valid C string.
        let fd = unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(format!(
                "cannot open /dev/net/tun: {}",
                io::Error::last_os_error()
            ));
        }
        // SAFETY: fd is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut req = IfReq {
            name: [0; libc::IFNAMSIZ],
            flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short,
            _pad: [0; 22],
        };
        for (d, s) in req
            .name
            .iter_mut()
            .zip(name.bytes().take(libc::IFNAMSIZ - 1))
        {
            *d = s as libc::c_char;
        }
        // SAFETY: TUNSETIFF reads and writes an ifreq we own.
        let r = unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF as _, &mut req) };
        if r < 0 {
            return Err(format!(
                "cannot create TUN device {name}: {}",
                io::Error::last_os_error()
            ));
        }
        Ok(Tun {
            fd,
            name: name.to_string(),
        })
    }

    /// The raw descriptor, for poll.
    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Reads one packet; `Ok(None)` when none is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: buf is valid for buf.len() bytes.
        let n = unsafe { libc::read(self.raw(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::WouldBlock {
            Ok(None)
        } else {
            Err(e)
        }
    }

    /// Writes one packet. A full device queue drops it (as a NIC would).
    pub fn send(&self, pkt: &[u8]) -> io::Result<()> {
        // SAFETY: pkt is valid for pkt.len() bytes.
        let n = unsafe { libc::write(self.raw(), pkt.as_ptr().cast(), pkt.len()) };
        if n >= 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::WouldBlock {
            Ok(())
        } else {
            Err(e)
        }
    }
}

/// The two namespaces and their TUN devices.
pub struct Topology {
    /// TUN device in the client namespace (reads: client → server).
    pub client_tun: Tun,
    /// TUN device in the server namespace (reads: server → client).
    pub server_tun: Tun,
    // Declared after the TUN devices so the descriptors close first.
    /// The client side.
    pub client: Namespace,
    /// The server side.
    pub server: Namespace,
}

impl Topology {
    /// Creates both namespaces and TUN devices and configures addresses.
    /// Anything created before a failure is removed again.
    pub fn create() -> Result<Topology, String> {
        check_environment()?;
        reap_stale();
        let pid = std::process::id();
        let client = Namespace::create(format!("{PREFIX}{pid}-client"))?;
        let server = Namespace::create(format!("{PREFIX}{pid}-server"))?;
        let tag = pid % 100_000;
        let client_tun = Tun::open(&format!("bblc{tag}"))?;
        let server_tun = Tun::open(&format!("bbls{tag}"))?;
        let setup = |tun: &Tun, ns: &Namespace, me: Ipv4Addr, peer: Ipv4Addr| {
            ip(&["link", "set", &tun.name, "netns", ns.name()])?;
            ip(&["-n", ns.name(), "link", "set", "lo", "up"])?;
            ip(&[
                "-n",
                ns.name(),
                "addr",
                "add",
                &me.to_string(),
                "peer",
                &peer.to_string(),
                "dev",
                &tun.name,
            ])?;
            ip(&[
                "-n",
                ns.name(),
                "link",
                "set",
                &tun.name,
                "mtu",
                "1500",
                "up",
            ])
        };
        setup(&client_tun, &client, CLIENT_ADDR, SERVER_ADDR)?;
        setup(&server_tun, &server, SERVER_ADDR, CLIENT_ADDR)?;
        Ok(Topology {
            client_tun,
            server_tun,
            client,
            server,
        })
    }

    /// Sets [`TCP_BUFFERS`] in both namespaces.
    pub fn raise_tcp_buffers(&self) -> Result<(), String> {
        for ns in [&self.client, &self.server] {
            for (k, v) in TCP_BUFFERS {
                ns.set_sysctl(k, v)?;
            }
        }
        Ok(())
    }

    /// Raises the namespaces' TCP buffer limits ([`TCP_BUFFERS`]) unless
    /// `keep_kernel_defaults`, and reads back what applies.
    pub fn setup_tcp_buffers(&self, keep_kernel_defaults: bool) -> Result<TcpBuffers, String> {
        if !keep_kernel_defaults {
            self.raise_tcp_buffers()?;
        }
        Ok(TcpBuffers {
            mode: if keep_kernel_defaults {
                "kernel"
            } else {
                "raised"
            },
            tcp_rmem: self.client.sysctl("net.ipv4.tcp_rmem")?,
            tcp_wmem: self.client.sysctl("net.ipv4.tcp_wmem")?,
        })
    }
}

impl Topology {
    /// Turns on ECN for kernel TCP in both namespaces
    /// (`net.ipv4.tcp_ecn = 1`: request ECN on outgoing connections and
    /// accept it on incoming ones; a new namespace starts at 2, accept
    /// only), so connections between them negotiate ECN and react to the
    /// link's CE marks. Returns the value read back from each namespace.
    pub fn enable_tcp_ecn(&self) -> Result<[String; 2], String> {
        let mut out = [String::new(), String::new()];
        for (o, ns) in out.iter_mut().zip([&self.client, &self.server]) {
            ns.set_sysctl(TCP_ECN, "1")?;
            *o = ns.sysctl(TCP_ECN)?;
        }
        Ok(out)
    }
}

/// The sysctl [`Topology::enable_tcp_ecn`] sets.
pub const TCP_ECN: &str = "net.ipv4.tcp_ecn";

/// Which TCP buffer limits the namespaces have, as read back from them
/// ([`Topology::setup_tcp_buffers`]).
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct TcpBuffers {
    /// `raised` (the emulator set [`TCP_BUFFERS`]) or `kernel` (a new
    /// namespace's defaults kept).
    pub mode: &'static str,
    /// `net.ipv4.tcp_rmem` in the client namespace (min default max).
    pub tcp_rmem: String,
    /// `net.ipv4.tcp_wmem` in the client namespace.
    pub tcp_wmem: String,
}
