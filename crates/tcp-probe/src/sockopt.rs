//! The sender's socket: its congestion control, set before the handshake,
//! and the bound on what it may hold unsent.

use super::*;

pub(crate) const TCP_CONGESTION: libc::c_int = 13;

/// At most this much written but not yet sent (`TCP_NOTSENT_LOWAT`): the
/// writer blocks beyond it. Without a bound the kernel may let a bulk
/// writer queue up to `tcp_wmem[2]` (64 MiB in `bbrlab emu`'s namespaces)
/// before the first byte of it leaves, so `--duration` would stop writing
/// on time and then drain for a minute (seen with the BPF controls, whose
/// send buffer sometimes autotunes to that maximum; docs/src/kernel.md, "Is
/// `bbrlab_bbr` the kernel's BBR?"). 512 KiB keeps a `--duration` run
/// within 1.4 s of its end at 3 Mbit/s (42 ms at 100 Mbit/s) and is still
/// 4 ms of data at 1 Gbit/s, far more than the writer needs to refill.
pub const NOTSENT_LOWAT_BYTES: u32 = 512 * 1024;

pub(crate) fn set_congestion(fd: i32, cc: &str) -> Result<(), String> {
    // SAFETY: the name buffer is valid for its length.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            TCP_CONGESTION,
            cc.as_ptr().cast(),
            cc.len() as libc::socklen_t,
        )
    };
    if r == 0 {
        return Ok(());
    }
    // The error first: reading the list must not overwrite errno.
    let err = io::Error::last_os_error();
    Err(format!(
        "the kernel refused TCP_CONGESTION={cc}: {err} (available: {})",
        hostfacts::available_congestion_controls().join(" ")
    ))
}

/// Bounds the unsent part of the send queue ([`NOTSENT_LOWAT_BYTES`]).
pub(crate) fn set_notsent_lowat(fd: i32, bytes: u32) -> Result<(), String> {
    // SAFETY: a u32 option value, valid for its size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_NOTSENT_LOWAT,
            (&bytes as *const u32).cast(),
            std::mem::size_of::<u32>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(format!(
            "the kernel refused TCP_NOTSENT_LOWAT={bytes}: {}",
            io::Error::last_os_error()
        ))
    }
}
