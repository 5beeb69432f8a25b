//! Bytes per data packet of each real source (payload, which goodput
//! counts, and headers), so that the simulator run matched to a source
//! carries the same bytes on its link per byte of goodput.

pub use claims::validate::{PacketSize, KERNEL_DEFAULT};

/// The UDP transport's full data packet: its chunk, and IPv4 (20) and UDP
/// (8) headers plus its own datagram overhead, measured by encoding one.
pub fn udp_packet_size() -> PacketSize {
    use transport::wire::{encode, Frame, Packet, CHUNK};
    let payload = [0u8; CHUNK];
    let mut out = Vec::new();
    encode(
        &Packet {
            conn_id: 0,
            pn: 0,
            frame: Frame::Data {
                chunk: 0,
                payload: &payload,
            },
        },
        &mut out,
    );
    PacketSize {
        payload: CHUNK as u64,
        header: (20 + 8 + out.len() - CHUNK) as u32,
    }
}

/// Bytes around each STREAM frame's payload in an s2n-quic 1-RTT packet:
/// IPv4 (20) and UDP (8); the short header's first byte, s2n-quic's 16-byte
/// destination connection ID and a packet number of up to 4 bytes (RFC
/// 9000 17.3.1); the AEAD tag (16, AES-GCM); the STREAM frame's type,
/// stream ID and 4-byte offset (RFC 9000 19.8; s2n-quic leaves out the
/// length of a packet's last frame).
pub const S2N_HEADER: u32 = 20 + 8 + 1 + 16 + 4 + 16 + 1 + 1 + 4;

/// s2n-quic's packet size: [`S2N_HEADER`] bytes of headers around the
/// payload the sender's summary shows per packet (bytes acknowledged over
/// packets sent and not lost). Without a summary, a full 1500-byte packet
/// (s2n-quic probes its MTU up to the emulator's 1500 bytes).
pub fn s2n_packet_size(summary: Option<&crate::summaries::QuicSendSummary>) -> PacketSize {
    let per_packet = summary.and_then(|s| {
        let delivered = s.packets_sent.saturating_sub(s.packets_lost);
        (delivered > 100).then(|| (s.bytes as f64 / delivered as f64).round() as u64)
    });
    match per_packet {
        Some(p) if (500..=1500 - S2N_HEADER as u64).contains(&p) => PacketSize {
            payload: p,
            header: S2N_HEADER,
        },
        _ => PacketSize {
            payload: 1500 - S2N_HEADER as u64,
            header: S2N_HEADER,
        },
    }
}

/// The kernel connection's packet size from `tcp send`'s summary: its MSS
/// as payload and the rest of the path MTU as headers (52 bytes with TCP
/// timestamps, 40 without).
pub fn kernel_packet_size(summary: Option<&crate::summaries::TcpSendSummary>) -> PacketSize {
    let get = |v: u32| Some(u64::from(v)).filter(|&v| v > 0);
    match summary
        .map(|s| (get(s.mss), get(s.pmtu)))
        .unwrap_or((None, None))
    {
        (Some(mss), Some(pmtu)) if pmtu > mss && pmtu - mss <= 1000 => PacketSize {
            payload: mss,
            header: (pmtu - mss) as u32,
        },
        _ => KERNEL_DEFAULT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn udp_packets_carry_ip_udp_and_datagram_headers() {
        // IPv4 20 + UDP 8 + the transport's header 18 (version, type,
        // connection id, packet number) + the data frame's chunk index 8
        // and length 2, around a 1400-byte chunk.
        assert_eq!(
            udp_packet_size(),
            PacketSize {
                payload: 1400,
                header: 56
            }
        );
    }

    /// `tcp send`'s summary with this MSS and path MTU.
    fn tcp(mss: u32, pmtu: u32) -> crate::summaries::TcpSendSummary {
        let line = format!(
            r#"{{"cc":"cubic","bytes":1,"seconds":1.0,"goodput_bps":8.0,"rtt_median_ms":null,"rtt_median_steady_ms":null,"rtt_p95_ms":null,"retransmits":0,"data_segments_sent":1,"retransmitted_fraction":0.0,"rtos":0,"delivery_rate_median_bps":null,"busy_s":null,"rwnd_limited_s":null,"sndbuf_limited_s":null,"host_limited_fraction":null,"delivered_ce":0,"mss":{mss},"pmtu":{pmtu},"samples":1}}"#
        );
        serde_json::from_str(&line).unwrap()
    }

    /// quic-bulk's summary with these counts.
    fn quic(bytes: u64, sent: u64, lost: u64) -> crate::summaries::QuicSendSummary {
        let line = format!(
            r#"{{"quic_stack":"s2n","cc":"bbr","bytes":{bytes},"seconds":1.0,"goodput_bps":8.0,"srtt_median_ms":null,"packets_sent":{sent},"packets_lost":{lost},"retransmit_fraction":0.0}}"#
        );
        serde_json::from_str(&line).unwrap()
    }

    #[test]
    fn kernel_packet_size_comes_from_the_probe() {
        assert_eq!(
            kernel_packet_size(Some(&tcp(1448, 1500))),
            PacketSize {
                payload: 1448,
                header: 52
            }
        );
        assert_eq!(kernel_packet_size(Some(&tcp(1460, 1500))).header, 40);
        // Missing or nonsensical figures fall back to 1448 + 52.
        assert_eq!(kernel_packet_size(Some(&tcp(1500, 1500))), KERNEL_DEFAULT);
        assert_eq!(kernel_packet_size(Some(&tcp(0, 1500))), KERNEL_DEFAULT);
        assert_eq!(kernel_packet_size(None), KERNEL_DEFAULT);
    }

    #[test]
    fn s2n_packets_carry_quic_headers_around_the_measured_payload() {
        // 12 MB over 8500 packets of which 100 were lost: 1429 bytes each.
        assert_eq!(
            s2n_packet_size(Some(&quic(12_003_600, 8500, 100))),
            PacketSize {
                payload: 1429,
                header: 71
            }
        );
        // Too few packets to tell, or a figure no 1500-byte packet holds:
        // a full packet.
        let few = quic(1000, 10, 0);
        let big = quic(15_000_000, 10_000, 0);
        for s in [Some(&few), Some(&big), None] {
            assert_eq!(
                s2n_packet_size(s),
                PacketSize {
                    payload: 1429,
                    header: 71
                }
            );
        }
    }
}
