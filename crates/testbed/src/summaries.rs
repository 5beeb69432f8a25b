//! The summaries the senders a real run starts print, read back as types.
//!
//! `bbrlab tcp send`, `bbrlab send` and `quic-bulk send` each end with one
//! JSON line (the emulator passes its client's and server's on). The first
//! two are this workspace's own types ([`tcp_probe::SendSummary`],
//! [`transport::sender::SendSummary`]), serialised and read back through the same
//! struct. quic-bulk is a program of its own, built against the QUIC
//! stacks, so its lines are described here ([`QuicSendSummary`],
//! [`QuicRecvSummary`]), after the contract its `main.rs` prints. A line
//! that is there but lacks a figure is an error naming the figure, never a
//! silently missing value.

use serde::de::DeserializeOwned;
use serde::Deserialize;

pub use tcp_probe::SendSummary as TcpSendSummary;
pub use transport::sender::SendSummary as UdpSendSummary;

/// `quic-bulk send`'s line (`{"quic_stack": ...}`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct QuicSendSummary {
    /// The stack (`s2n`, `quinn`, `noq`).
    pub quic_stack: String,
    /// The controller it ran, as asked.
    pub cc: String,
    /// Stream bytes the peer acknowledged.
    pub bytes: u64,
    /// Seconds from the end of the handshake.
    pub seconds: f64,
    /// bytes × 8 / seconds.
    pub goodput_bps: f64,
    /// Median smoothed RTT, ms; `None` when the stack reported none.
    pub srtt_median_ms: Option<f64>,
    /// Packets sent.
    pub packets_sent: u64,
    /// Packets the stack declared lost.
    pub packets_lost: u64,
    /// packets_lost / packets_sent.
    pub retransmit_fraction: Option<f64>,
    /// Whether `--seconds` stopped it with data still in flight.
    #[serde(default)]
    pub stopped_at_deadline: bool,
}

/// `quic-bulk recv`'s line (`{"role": "recv", "intact": ...}`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct QuicRecvSummary {
    /// Bytes received and verified.
    pub bytes: u64,
    /// Whether every byte matched the pattern.
    pub intact: bool,
    /// Seconds from the handshake to the end of the stream.
    pub seconds: f64,
    /// Whether the sender's deadline ended the stream.
    #[serde(default)]
    pub stopped_at_deadline: bool,
}

/// A sender's summary, whichever program printed it.
#[derive(Clone, Debug, PartialEq)]
pub enum SenderSummary {
    /// `bbrlab tcp send` (kernel TCP).
    Tcp(TcpSendSummary),
    /// `bbrlab send` (the UDP transport).
    Udp(UdpSendSummary),
    /// `quic-bulk send`.
    Quic(QuicSendSummary),
}

impl SenderSummary {
    /// Kernel TCP's, if it is one.
    pub fn tcp(&self) -> Option<&TcpSendSummary> {
        match self {
            SenderSummary::Tcp(t) => Some(t),
            _ => None,
        }
    }

    /// quic-bulk's, if it is one.
    pub fn quic(&self) -> Option<&QuicSendSummary> {
        match self {
            SenderSummary::Quic(q) => Some(q),
            _ => None,
        }
    }

    /// Loss recoveries begun and reductions undone, where the sender
    /// counts them: kernel TCP from its namespace's counters
    /// (`TCPSackRecovery` plus `TCPTimeouts`, the four undo counters
    /// summed), when it could read them.
    pub fn recoveries(&self) -> Option<(u64, u64)> {
        let n = self.tcp()?.netns.as_ref()?;
        Some((n.recoveries_begun(), n.undos()))
    }

    /// Retransmission timeouts, where the sender counts them (kernel TCP
    /// from Linux 6.7, the UDP transport; QUIC has none).
    pub fn rtos(&self) -> Option<u64> {
        match self {
            SenderSummary::Tcp(t) => t.rtos.map(u64::from),
            SenderSummary::Udp(u) => Some(u.rtos),
            SenderSummary::Quic(_) => None,
        }
    }
}

/// The counters in `bbrlab tcp recv`'s summary line among `stdout` (a
/// JSON object without the sender's `cc`, whose `netns` has
/// `segments_in`); `None` when there is no such line or it has no
/// counters (the receiver could not read them).
pub fn tcp_receiver_counters(stdout: &str) -> Option<tcp_probe::ReceiverCounters> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
        .filter(|v| v.get("cc").is_none())
        .find_map(|v| serde_json::from_value(v.get("netns")?.clone()).ok())
}

/// The first line of `stdout` that is a JSON object with `key`, as a `T`:
/// `Ok(None)` when no line has the key, an error naming what the line
/// lacks when it has the key but not the shape of a `T`.
pub fn line_with<T: DeserializeOwned>(stdout: &str, key: &str) -> Result<Option<T>, String> {
    let Some(v) = crate::child::json_line_with(stdout, key) else {
        return Ok(None);
    };
    serde_json::from_value(v.clone()).map(Some).map_err(|e| {
        format!("the summary line with `{key}` does not read as expected: {e} (the line: {v})")
    })
}

/// Checks the receiver's verdict against the sender's count: every byte
/// intact, and as many as the sender says the peer acknowledged. Returns
/// the bytes the run delivered.
pub fn check_delivery(send: &QuicSendSummary, recv: &QuicRecvSummary) -> Result<u64, String> {
    if !recv.intact {
        return Err(format!(
            "the receiver did not find the data intact ({} bytes received)",
            recv.bytes
        ));
    }
    // A sender stopped at its --seconds deadline closed the connection
    // with data still in flight: the receiver verified what arrived by
    // then, which can be more than the sender saw acknowledged (and, with
    // a stack's own controller on quinn or noq, whose acknowledged bytes
    // are read as sent less lost, a little less). Its count is the run's.
    if send.stopped_at_deadline {
        if recv.bytes == 0 {
            return Err("no bytes were delivered before the deadline".into());
        }
        return Ok(recv.bytes);
    }
    if recv.bytes != send.bytes {
        return Err(format!(
            "the receiver got {} bytes, the sender reports {} acknowledged",
            recv.bytes, send.bytes
        ));
    }
    if send.bytes == 0 {
        return Err("no bytes were delivered".into());
    }
    Ok(send.bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUIC: &str = r#"{"quic_stack":"s2n","cc":"bbr","bytes":1000,"seconds":2.0,"goodput_bps":4000.0,"srtt_median_ms":41.5,"packets_sent":10,"packets_lost":1,"retransmit_fraction":0.1,"origin":"end of the handshake","stopped_at_deadline":false}"#;
    const RECV: &str = r#"{"role":"recv","stack":"s2n","bytes":1000,"intact":true,"seconds":2.1,"stopped_at_deadline":false}"#;

    /// The lines the programs print read as their types, among other
    /// output; a line without the key is absent, one with it but missing a
    /// figure is an error that names the figure.
    #[test]
    fn summary_lines_read_as_types_or_say_what_they_lack() {
        let out = format!("emu: up\n{RECV}\nnoise\n{QUIC}\n");
        let s: QuicSendSummary = line_with(&out, "quic_stack").unwrap().unwrap();
        assert_eq!(
            (s.bytes, s.packets_lost, s.srtt_median_ms),
            (1000, 1, Some(41.5))
        );
        let r: QuicRecvSummary = line_with(&out, "intact").unwrap().unwrap();
        assert!(r.intact);
        assert_eq!(check_delivery(&s, &r), Ok(1000));
        assert_eq!(
            line_with::<QuicSendSummary>("emu: up\n", "quic_stack"),
            Ok(None)
        );
        let broken = QUIC.replace("\"packets_sent\":10,", "");
        let e = line_with::<QuicSendSummary>(&broken, "quic_stack").unwrap_err();
        assert!(e.contains("packets_sent"), "{e}");
    }

    /// The kernel probe's and the UDP transport's summaries read back
    /// through the very types that print them.
    #[test]
    fn the_workspaces_own_senders_round_trip() {
        let tcp = r#"{"cc":"cubic","bytes":6553600,"seconds":10.9,"goodput_bps":4774861.9,"rtt_median_ms":248.7,"rtt_median_steady_ms":248.4,"rtt_p95_ms":299.8,"retransmits":11,"data_segments_sent":4539,"retransmitted_fraction":0.0024,"rtos":0,"delivery_rate_median_bps":4826640.0,"busy_s":10.976,"rwnd_limited_s":0.0,"sndbuf_limited_s":0.0,"host_limited_fraction":0.0,"delivered_ce":0,"mss":1448,"pmtu":1500,"samples":1058}"#;
        let t: TcpSendSummary = line_with(tcp, "pmtu").unwrap().unwrap();
        assert_eq!((t.mss, t.pmtu, t.rtos), (1448, 1500, Some(0)));
        let again: TcpSendSummary =
            serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(again, t);
    }

    /// `emu`'s output of a kernel transfer: the receiver's line (its
    /// namespace's counters) and the sender's (its own): each read from
    /// its own line, and the sender's recoveries summed as Linux counts
    /// them.
    #[test]
    fn the_kernel_receivers_counters_and_the_senders_recoveries_are_read() {
        let recv = r#"{"bytes":12451840,"seconds":61.19,"goodput_bps":1627837.6,"netns":{"segments_in":11717,"paws_discards":1993,"ofo_queued":7256,"ofo_drops":0,"dsacks_sent":1718}}"#;
        let send = r#"{"cc":"bbr","bytes":12451840,"seconds":61.2,"goodput_bps":1627686.5,"rtt_median_ms":58.9,"rtt_median_steady_ms":58.2,"rtt_p95_ms":80.7,"retransmits":3114,"data_segments_sent":11715,"retransmitted_fraction":0.27,"rtos":5,"delivery_rate_median_bps":1584280.0,"busy_s":61.0,"rwnd_limited_s":0.0,"sndbuf_limited_s":0.0,"host_limited_fraction":0.0,"delivered_ce":0,"mss":1448,"pmtu":1500,"samples":6000,"netns":{"sack_recoveries":485,"timeouts":5,"full_undos":24,"partial_undos":206,"dsack_undos":20,"loss_undos":0}}"#;
        for out in [
            format!("emu: up\n{recv}\n{send}\n"),
            format!("{send}\n{recv}\n"),
        ] {
            let r = tcp_receiver_counters(&out).unwrap();
            assert_eq!((r.segments_in, r.paws_discards), (11_717, 1_993), "{out}");
            let s = SenderSummary::Tcp(line_with(&out, "pmtu").unwrap().unwrap());
            assert_eq!(s.recoveries(), Some((490, 250)));
        }
        // The sender's line alone (its `netns` is not a receiver's), a
        // receiver that could not read its counters, and a sender without
        // them: nothing, rather than a wrong figure.
        assert_eq!(tcp_receiver_counters(send), None);
        assert_eq!(
            tcp_receiver_counters(r#"{"bytes":1,"seconds":1.0,"goodput_bps":8.0,"netns":null}"#),
            None
        );
        let old = send.replace(r#","netns":{"sack_recoveries":485,"timeouts":5,"full_undos":24,"partial_undos":206,"dsack_undos":20,"loss_undos":0}"#, "");
        let s = SenderSummary::Tcp(line_with(&old, "pmtu").unwrap().unwrap());
        assert_eq!(s.recoveries(), None);
    }

    /// The receiver's verdict decides: a corrupt stream, a count that
    /// differs, and a deadline stop with nothing delivered are errors.
    #[test]
    fn delivery_is_checked_against_the_receivers_verdict() {
        let s: QuicSendSummary = serde_json::from_str(QUIC).unwrap();
        let r: QuicRecvSummary = serde_json::from_str(RECV).unwrap();
        let corrupt = QuicRecvSummary {
            intact: false,
            ..r.clone()
        };
        assert!(check_delivery(&s, &corrupt).unwrap_err().contains("intact"));
        let short = QuicRecvSummary {
            bytes: 900,
            ..r.clone()
        };
        assert!(check_delivery(&s, &short).unwrap_err().contains("900"));
        let stopped = QuicSendSummary {
            stopped_at_deadline: true,
            ..s.clone()
        };
        assert_eq!(check_delivery(&stopped, &short), Ok(900));
        let none = QuicRecvSummary { bytes: 0, ..r };
        assert!(check_delivery(&stopped, &none).is_err());
        let nothing = QuicSendSummary { bytes: 0, ..s };
        assert!(check_delivery(&nothing, &none)
            .unwrap_err()
            .contains("no bytes"));
    }
}
