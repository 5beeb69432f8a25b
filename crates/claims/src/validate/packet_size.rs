//! Bytes per data packet (payload, which goodput counts, and headers): a
//! simulation matched to a real source carries the same bytes on its link
//! per byte of goodput. How each real source's size is read is testbed's.

/// The kernel's IPv4 + TCP header with the timestamp option, and its
/// payload per segment on the emulator's 1500-byte MTU: what `compare`
/// assumes if the probe's summary does not say.
pub const KERNEL_DEFAULT: PacketSize = PacketSize {
    payload: 1448,
    header: 52,
};

/// Bytes per data packet: payload (what goodput counts) and headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PacketSize {
    pub payload: u64,
    pub header: u32,
}
