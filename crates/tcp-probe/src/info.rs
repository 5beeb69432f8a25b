//! What the kernel reports about a socket: `TCP_INFO` (with the fields
//! this kernel's struct has), BBR's `TCP_CC_INFO`, and bbrlab's BPF
//! controls' state read through their map.

use super::*;

pub(crate) const TCP_CC_INFO: libc::c_int = 26;

/// The kernel's `struct tcp_info` (include/uapi/linux/tcp.h) up to
/// `tcpi_total_rto_time`. The layout is append-only across kernel
/// versions and the kernel copies min(our size, its size) bytes and
/// reports that length, so a field past the returned length does not
/// exist on the running kernel: [`Probe::from_info`] turns such fields into
/// `None` rather than reading our zero-initialised bytes as data. Fields
/// and the version that added them: `data_segs_out` 4.6,
/// `delivery_rate` 4.9, `busy_time`/`rwnd_limited`/`sndbuf_limited` 4.10,
/// `delivered` 4.18, `bytes_sent`/`bytes_retrans` 4.19, `rcv_ooopack` and
/// `snd_wnd` 5.4, `rcv_wnd`/`rehash` 6.2, `total_rto*` 6.7.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct TcpInfo {
    pub(crate) state: u8,
    pub(crate) ca_state: u8,
    pub(crate) retransmits: u8,
    pub(crate) probes: u8,
    pub(crate) backoff: u8,
    pub(crate) options: u8,
    pub(crate) wscale: u8,
    pub(crate) flags: u8,
    pub(crate) rto: u32,
    pub(crate) ato: u32,
    pub(crate) snd_mss: u32,
    pub(crate) rcv_mss: u32,
    pub(crate) unacked: u32,
    pub(crate) sacked: u32,
    pub(crate) lost: u32,
    pub(crate) retrans: u32,
    pub(crate) fackets: u32,
    pub(crate) last_data_sent: u32,
    pub(crate) last_ack_sent: u32,
    pub(crate) last_data_recv: u32,
    pub(crate) last_ack_recv: u32,
    pub(crate) pmtu: u32,
    pub(crate) rcv_ssthresh: u32,
    pub(crate) rtt: u32,
    pub(crate) rttvar: u32,
    pub(crate) snd_ssthresh: u32,
    pub(crate) snd_cwnd: u32,
    pub(crate) advmss: u32,
    pub(crate) reordering: u32,
    pub(crate) rcv_rtt: u32,
    pub(crate) rcv_space: u32,
    pub(crate) total_retrans: u32,
    pub(crate) pacing_rate: u64,
    pub(crate) max_pacing_rate: u64,
    pub(crate) bytes_acked: u64,
    pub(crate) bytes_received: u64,
    pub(crate) segs_out: u32,
    pub(crate) segs_in: u32,
    pub(crate) notsent_bytes: u32,
    pub(crate) min_rtt: u32,
    pub(crate) data_segs_in: u32,
    pub(crate) data_segs_out: u32,
    pub(crate) delivery_rate: u64,
    pub(crate) busy_time: u64,
    pub(crate) rwnd_limited: u64,
    pub(crate) sndbuf_limited: u64,
    pub(crate) delivered: u32,
    pub(crate) delivered_ce: u32,
    pub(crate) bytes_sent: u64,
    pub(crate) bytes_retrans: u64,
    pub(crate) dsack_dups: u32,
    pub(crate) reord_seen: u32,
    pub(crate) rcv_ooopack: u32,
    pub(crate) snd_wnd: u32,
    pub(crate) rcv_wnd: u32,
    pub(crate) rehash: u32,
    pub(crate) total_rto: u16,
    pub(crate) total_rto_recoveries: u16,
    pub(crate) total_rto_time: u32,
}

/// Whether the field at `offset` of `size` bytes lies inside the `len`
/// bytes the kernel filled.
pub(crate) fn present(len: usize, offset: usize, size: usize) -> bool {
    offset + size <= len
}

/// Reads `$field` of a [`TcpInfo`] the kernel filled `$len` bytes of, or
/// `None` when this kernel's struct ends before it.
macro_rules! field {
    ($ti:expr, $len:expr, $field:ident) => {
        present(
            $len,
            std::mem::offset_of!(TcpInfo, $field),
            std::mem::size_of_val(&$ti.$field),
        )
        .then_some($ti.$field)
    };
}

/// What one `TCP_INFO` read tells about the sender, with each field that
/// newer kernels added as `None` when the running kernel lacks it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Probe {
    /// Payload bytes the peer acknowledged.
    pub(crate) bytes_acked: u64,
    /// Linux's smoothed RTT (`tcpi_rtt`, srtt per RFC 6298), µs.
    pub(crate) srtt_us: u32,
    /// Data segments sent, retransmissions included (`tcpi_data_segs_out`).
    pub(crate) data_segs_out: Option<u32>,
    /// Segments retransmitted (`tcpi_total_retrans`; not `tcpi_retransmits`,
    /// which is the count of back-to-back RTOs still unresolved).
    pub(crate) total_retrans: u32,
    /// Retransmission timeouts over the connection (`tcpi_total_rto`,
    /// Linux 6.7), SYN timeouts included.
    pub(crate) total_rto: Option<u16>,
    /// The latest delivery-rate sample, bytes/s.
    pub(crate) delivery_rate: Option<u64>,
    /// Time with data outstanding, µs.
    pub(crate) busy_time_us: Option<u64>,
    /// Of it, time the peer's receive window was the limit, µs.
    pub(crate) rwnd_limited_us: Option<u64>,
    /// Of it, time the local send buffer was the limit, µs.
    pub(crate) sndbuf_limited_us: Option<u64>,
    /// Packets acknowledged by ACKs that echoed congestion
    /// (`tcpi_delivered_ce`, Linux 4.18): the kernel adds an ACK's newly
    /// delivered packets when the ACK carries ECE (`tcp_count_delivered`).
    /// With classic ECN (`net.ipv4.tcp_ecn = 1`) the receiver sets ECE on
    /// every ACK from a CE mark until the sender's CWR, so this counts
    /// the packets acknowledged under an echo, not CE marks one for one.
    pub(crate) delivered_ce: Option<u32>,
    /// Sender MSS and path MTU, bytes.
    pub(crate) snd_mss: u32,
    pub(crate) pmtu: u32,
}

impl Probe {
    pub(crate) fn from_info(ti: &TcpInfo, len: usize) -> Self {
        Probe {
            bytes_acked: field!(ti, len, bytes_acked).unwrap_or(0),
            srtt_us: ti.rtt,
            data_segs_out: field!(ti, len, data_segs_out),
            total_retrans: ti.total_retrans,
            total_rto: field!(ti, len, total_rto),
            delivery_rate: field!(ti, len, delivery_rate),
            busy_time_us: field!(ti, len, busy_time),
            rwnd_limited_us: field!(ti, len, rwnd_limited),
            sndbuf_limited_us: field!(ti, len, sndbuf_limited),
            delivered_ce: field!(ti, len, delivered_ce),
            snd_mss: ti.snd_mss,
            pmtu: ti.pmtu,
        }
    }

    /// Share of the busy time the receive window or the send buffer was
    /// the limit: near 0 means the path (cwnd/pacing) set the pace; a
    /// large share means the hosts did, and the run says little about the
    /// congestion control.
    pub(crate) fn host_limited_fraction(&self) -> Option<f64> {
        let busy = self.busy_time_us.filter(|&b| b > 0)?;
        let limited = self.rwnd_limited_us? + self.sndbuf_limited_us?;
        Some(limited as f64 / busy as f64)
    }
}

/// Columns the probe writes after the shared schema
/// ([`sender::schema::FLOW_COLUMNS`]); empty where the kernel lacks the
/// field.
pub(crate) const PROBE_COLUMNS: &str =
    "delivery_rate_bps,busy_time_us,rwnd_limited_us,sndbuf_limited_us,rtos";

/// `struct tcp_bbr_info` from `TCP_CC_INFO`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct BbrInfo {
    pub(crate) bw_lo: u32,
    pub(crate) bw_hi: u32,
    pub(crate) min_rtt: u32,
    pub(crate) pacing_gain: u32,
    pub(crate) cwnd_gain: u32,
}

/// The option's value and the length the kernel filled.
pub(crate) fn getsockopt_len<T: Default>(fd: i32, opt: libc::c_int) -> io::Result<(T, usize)> {
    let mut v = T::default();
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: v is valid for len bytes; the kernel writes at most len.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            opt,
            (&mut v as *mut T).cast(),
            &mut len,
        )
    };
    if r == 0 {
        Ok((v, len as usize))
    } else {
        Err(io::Error::last_os_error())
    }
}

pub(crate) fn getsockopt<T: Default>(fd: i32, opt: libc::c_int) -> io::Result<T> {
    getsockopt_len(fd, opt).map(|(v, _)| v)
}

pub(crate) fn read_probe(fd: i32) -> io::Result<Probe> {
    let (ti, len) = getsockopt_len::<TcpInfo>(fd, libc::TCP_INFO)?;
    Ok(Probe::from_info(&ti, len))
}

/// BBR's mode from its gains (Linux units: 256 = 1.0). STARTUP paces and
/// sizes cwnd at 2/ln2 (739); DRAIN paces at its inverse (88); PROBE_RTT
/// uses 1.0 for both; PROBE_BW has cwnd_gain 2 (512).
pub(crate) fn bbr_mode(b: &BbrInfo) -> &'static str {
    match (b.pacing_gain, b.cwnd_gain) {
        (p, _) if p > 600 => "startup",
        (p, _) if p < 128 => "drain",
        (_, 512) => "probe_bw",
        (256, 256) => "probe_rtt",
        _ => "",
    }
}

#[cfg(feature = "kernel")]
/// One reading of a bbrlab BPF control (`kernel_cc`) as `TCP_CC_INFO`
/// would give it: bw in bytes/s, min_rtt in µs, gains ×256.
/// Also the control's own mode name (bbrlab_bbr3's PROBE_BW phases cannot
/// be told from its gains).
pub(crate) fn bpf_info(
    s: &mut kernel_cc::Sampler,
    fd: i32,
    t0: Instant,
) -> Option<(BbrInfo, &'static str)> {
    let r = s.sample(fd, t0.elapsed().as_secs_f64())?;
    let bw = (r.bw_bps() / 8.0) as u64;
    let (pacing_gain, cwnd_gain) = r.gains();
    Some((
        BbrInfo {
            bw_lo: bw as u32,
            bw_hi: (bw >> 32) as u32,
            min_rtt: r.min_rtt_us(),
            pacing_gain,
            cwnd_gain,
        },
        r.mode_name(),
    ))
}

/// A socket's `TCP_INFO` as a test reads it: 45 ms of srtt, 7 of 700
/// segments retransmitted, a 2.4 MB/s delivery rate, 10 s busy.
#[cfg(test)]
pub(crate) fn sample_info() -> TcpInfo {
    TcpInfo {
        rtt: 45_000,
        total_retrans: 7,
        data_segs_out: 700,
        delivery_rate: 2_400_000,
        busy_time: 10_000_000,
        rwnd_limited: 1_000_000,
        sndbuf_limited: 500_000,
        total_rto: 2,
        delivered_ce: 31,
        snd_mss: 1448,
        pmtu: 1500,
        ..TcpInfo::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn tcp_info_matches_the_kernel_layout() {
        assert_eq!(offset_of!(TcpInfo, rtt), 68);
        assert_eq!(offset_of!(TcpInfo, total_retrans), 100);
        assert_eq!(offset_of!(TcpInfo, pacing_rate), 104);
        assert_eq!(offset_of!(TcpInfo, data_segs_out), 156);
        assert_eq!(offset_of!(TcpInfo, delivery_rate), 160);
        assert_eq!(offset_of!(TcpInfo, busy_time), 168);
        assert_eq!(offset_of!(TcpInfo, rwnd_limited), 176);
        assert_eq!(offset_of!(TcpInfo, sndbuf_limited), 184);
        // __u32 tcpi_delivered, tcpi_delivered_ce after the four __u64.
        assert_eq!(offset_of!(TcpInfo, delivered), 192);
        assert_eq!(offset_of!(TcpInfo, delivered_ce), 196);
        assert_eq!(offset_of!(TcpInfo, bytes_retrans), 208);
        assert_eq!(offset_of!(TcpInfo, total_rto), 240);
        assert_eq!(offset_of!(TcpInfo, total_rto_time), 244);
        assert_eq!(size_of::<TcpInfo>(), 248);
    }

    #[test]
    fn fields_past_the_kernels_length_are_none() {
        // A 4.9 kernel's struct ends after tcpi_delivery_rate (168 bytes):
        // it has the delivery rate but neither busy time nor RTO count.
        let p = Probe::from_info(&sample_info(), 168);
        assert_eq!(p.delivery_rate, Some(2_400_000));
        assert_eq!(p.data_segs_out, Some(700));
        assert_eq!(p.busy_time_us, None);
        assert_eq!(p.rwnd_limited_us, None);
        assert_eq!(p.total_rto, None);
        assert_eq!(p.host_limited_fraction(), None);
        assert_eq!(p.delivered_ce, None);
        // 4.10 to 6.6 (e.g. 6.1, 232 bytes): chrono stats, no RTO count.
        let p = Probe::from_info(&sample_info(), 232);
        assert_eq!(p.sndbuf_limited_us, Some(500_000));
        assert_eq!(p.delivered_ce, Some(31));
        // 4.10 to 4.17 end after tcpi_sndbuf_limited: no CE count.
        assert_eq!(Probe::from_info(&sample_info(), 192).delivered_ce, None);
        assert_eq!(Probe::from_info(&sample_info(), 200).delivered_ce, Some(31));
        assert_eq!(p.total_rto, None);
        // 6.7 and later fill the whole struct (or more, cut to ours).
        let p = Probe::from_info(&sample_info(), 248);
        assert_eq!(p.total_rto, Some(2));
        // A 4.5 kernel (before data_segs_out): no packet count at all.
        let p = Probe::from_info(&sample_info(), 144);
        assert_eq!(p.data_segs_out, None);
        assert_eq!(p.total_retrans, 7);
    }

    #[test]
    fn host_limited_share_of_busy_time() {
        let p = Probe::from_info(&sample_info(), 248);
        // (1 s + 0.5 s) of 10 s busy.
        assert!((p.host_limited_fraction().unwrap() - 0.15).abs() < 1e-12);
        let idle = Probe {
            busy_time_us: Some(0),
            ..p
        };
        assert_eq!(idle.host_limited_fraction(), None);
    }
}
