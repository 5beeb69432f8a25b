//! The network namespace's TCP counters over one transfer
//! (`/proc/net/netstat`'s `TcpExt`, `/proc/net/snmp`'s `Tcp`), which
//! `TCP_INFO` does not give:
//!
//! - at the sender, how often Linux entered recovery and undid a
//!   reduction; the simulator reports the same two things per flow
//!   (`loss_episodes`, `undos`), so a kernel run and a simulated one can
//!   be set side by side;
//! - at the receiver, what it did with what arrived: segments discarded
//!   by PAWS (a timestamp older than the last one it accepted, RFC 7323
//!   §5), queued out of order, and answered with a D-SACK. Under heavy
//!   reordering PAWS discards originals that arrive after a later-sent
//!   retransmission, which the sender then repairs as losses.
//!
//! The counters are the namespace's, not the socket's: they are one
//! connection's alone only where nothing else in the namespace uses TCP,
//! as in `bbrlab emu`'s namespaces.

use std::collections::HashMap;

/// One section's counters (`TcpExt` or `Tcp`) by name, as read at one
/// moment.
pub(crate) type Snapshot = HashMap<String, u64>;

/// The receiver's namespace's counters at one moment: `TcpExt`, and `Tcp`
/// for the segment count.
pub(crate) type ReceiverSnapshot = (Snapshot, Snapshot);

/// The counters' changes over a transfer.
#[derive(serde::Serialize, serde::Deserialize, Debug, Clone, Default, PartialEq)]
pub struct NetnsCounters {
    /// Fast recoveries entered with SACK (`TCPSackRecovery`).
    pub sack_recoveries: u64,
    /// Retransmission timeouts, repeats included (`TCPTimeouts`).
    pub timeouts: u64,
    /// Recoveries undone when the ACK that ended them showed an original
    /// had arrived, or nothing was retransmitted (`TCPFullUndo`).
    pub full_undos: u64,
    /// Recoveries undone by an ACK within them whose timestamp echo showed
    /// an original filled the hole (`TCPPartialUndo`).
    pub partial_undos: u64,
    /// Recoveries undone once every retransmission was DSACKed
    /// (`TCPDSACKUndo`).
    pub dsack_undos: u64,
    /// Timeouts undone (`TCPLossUndo`).
    pub loss_undos: u64,
}

impl NetnsCounters {
    /// Recoveries begun, as the simulator's `loss_episodes` counts them:
    /// fast recoveries plus timeouts.
    pub fn recoveries_begun(&self) -> u64 {
        self.sack_recoveries + self.timeouts
    }

    /// Reductions undone as spurious, of every kind.
    pub fn undos(&self) -> u64 {
        self.full_undos + self.partial_undos + self.dsack_undos + self.loss_undos
    }
}

/// What one transfer's receiver saw in its network namespace (see the
/// module's note on whose counters these are).
#[derive(serde::Serialize, serde::Deserialize, Debug, Clone, Default, PartialEq)]
pub struct ReceiverCounters {
    /// TCP segments that arrived (`Tcp: InSegs`, `/proc/net/snmp`), every
    /// one counted before any check, so the discards below are a share of
    /// it.
    pub segments_in: u64,
    /// Segments discarded because their timestamp was older than the one
    /// last accepted (`PAWSEstab`; Linux `tcp_paws_discard()`), each
    /// answered with a duplicate ACK and never queued.
    pub paws_discards: u64,
    /// Segments queued out of order (`TCPOFOQueue`).
    pub ofo_queued: u64,
    /// Out-of-order segments dropped for want of receive memory
    /// (`TCPOFODrop`).
    pub ofo_drops: u64,
    /// D-SACKs sent, for data that had already arrived in order or out of
    /// order (`TCPDSACKOldSent` plus `TCPDSACKOfoSent`).
    pub dsacks_sent: u64,
}

impl ReceiverCounters {
    /// The share of the segments that arrived which PAWS discarded;
    /// `None` when none arrived.
    pub fn paws_discarded_fraction(&self) -> Option<f64> {
        (self.segments_in > 0).then(|| self.paws_discards as f64 / self.segments_in as f64)
    }
}

/// Reads `/proc/net/netstat` as this thread's namespace sees it; `None`
/// when it cannot be read or parsed (a summary then has no counters rather
/// than wrong ones).
pub(crate) fn read() -> Option<Snapshot> {
    parse(
        &std::fs::read_to_string("/proc/net/netstat").ok()?,
        "TcpExt:",
    )
}

/// Reads what [`ReceiverCounters`] needs: `/proc/net/netstat` and
/// `/proc/net/snmp`; `None` when either cannot be read or parsed.
pub(crate) fn read_receiver() -> Option<ReceiverSnapshot> {
    let snmp = std::fs::read_to_string("/proc/net/snmp").ok()?;
    Some((read()?, parse(&snmp, "Tcp:")?))
}

/// The counters of the section `prefix` (`TcpExt:` in `/proc/net/netstat`,
/// `Tcp:` in `/proc/net/snmp`): a line of names and a line of values, each
/// starting with the prefix. `None` if the two lines are missing, do not
/// pair up, or a value is not an integer. A negative value (`Tcp`'s
/// `MaxConn` is -1, "no limit") is not a counter and is left out.
pub(crate) fn parse(text: &str, prefix: &str) -> Option<Snapshot> {
    let mut lines = text.lines().filter(|l| l.starts_with(prefix));
    let names = lines.next()?.split_whitespace().skip(1);
    let values: Vec<&str> = lines.next()?.split_whitespace().skip(1).collect();
    let names: Vec<&str> = names.collect();
    if names.len() != values.len() {
        return None;
    }
    let mut out = Snapshot::new();
    for (n, v) in names.into_iter().zip(values) {
        let v: i64 = v.parse().ok()?;
        if let Ok(v) = u64::try_from(v) {
            out.insert(n.to_string(), v);
        }
    }
    Some(out)
}

/// `after[k] - before[k]`, or 0 where either lacks `k` (an older kernel).
fn change(before: &Snapshot, after: &Snapshot, k: &str) -> u64 {
    match (before.get(k), after.get(k)) {
        (Some(b), Some(a)) => a.saturating_sub(*b),
        _ => 0,
    }
}

/// What changed between `before` and `after`; a counter missing from
/// either (an older kernel) counts as unchanged.
pub(crate) fn between(before: &Snapshot, after: &Snapshot) -> NetnsCounters {
    let d = |k: &str| change(before, after, k);
    NetnsCounters {
        sack_recoveries: d("TCPSackRecovery"),
        timeouts: d("TCPTimeouts"),
        full_undos: d("TCPFullUndo"),
        partial_undos: d("TCPPartialUndo"),
        dsack_undos: d("TCPDSACKUndo"),
        loss_undos: d("TCPLossUndo"),
    }
}

/// What changed at the receiver between `before` and `after`, as
/// [`between`] does for the sender.
pub(crate) fn receiver_between(
    before: &ReceiverSnapshot,
    after: &ReceiverSnapshot,
) -> ReceiverCounters {
    let ext = |k: &str| change(&before.0, &after.0, k);
    ReceiverCounters {
        segments_in: change(&before.1, &after.1, "InSegs"),
        paws_discards: ext("PAWSEstab"),
        ofo_queued: ext("TCPOFOQueue"),
        ofo_drops: ext("TCPOFODrop"),
        dsacks_sent: ext("TCPDSACKOldSent") + ext("TCPDSACKOfoSent"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "TcpExt: SyncookiesSent TCPSackRecovery TCPTimeouts TCPFullUndo TCPPartialUndo TCPDSACKUndo TCPLossUndo\n\
TcpExt: 0 10 2 1 5 0 0\n\
IpExt: InNoRoutes InTruncatedPkts\n\
IpExt: 0 0\n";

    #[test]
    fn the_counters_change_is_read_by_name() {
        let before = parse(BEFORE, "TcpExt:").unwrap();
        let after = parse(
            &BEFORE.replace("TcpExt: 0 10 2 1 5 0 0", "TcpExt: 0 498 5 20 208 27 1"),
            "TcpExt:",
        )
        .unwrap();
        let d = between(&before, &after);
        assert_eq!((d.recoveries_begun(), d.undos()), (491, 250));
        assert_eq!(
            d,
            NetnsCounters {
                sack_recoveries: 488,
                timeouts: 3,
                full_undos: 19,
                partial_undos: 203,
                dsack_undos: 27,
                loss_undos: 1,
            }
        );
    }

    #[test]
    fn an_unreadable_text_has_no_counters_and_a_missing_one_is_unchanged() {
        let p = |t: &str| parse(t, "TcpExt:");
        assert_eq!(p(""), None);
        assert_eq!(p("TcpExt: A B\nTcpExt: 1\n"), None, "unpaired");
        assert_eq!(p("TcpExt: A\nTcpExt: x\n"), None, "not a number");
        let old = p("TcpExt: TCPSackRecovery\nTcpExt: 4\n").unwrap();
        let new = p("TcpExt: TCPSackRecovery\nTcpExt: 9\n").unwrap();
        let d = between(&old, &new);
        assert_eq!((d.sack_recoveries, d.partial_undos), (5, 0));
    }

    /// `/proc/net/snmp` as Linux 6.18 writes it: `Ip`, `Icmp` ... lines
    /// around `Tcp`'s, whose `MaxConn` is -1.
    const SNMP: &str = "Ip: Forwarding DefaultTTL InReceives\n\
Ip: 1 64 1000\n\
Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n\
Tcp: 1 200 120000 -1 3 2 0 0 1 426705 265227 80 0 1590 0\n\
Udp: InDatagrams NoPorts\n\
Udp: 7 0\n";

    const EXT: &str = "TcpExt: PAWSEstab TCPOFOQueue TCPOFODrop TCPDSACKOldSent TCPDSACKOfoSent\n\
TcpExt: 2 10 0 1 1\n";

    #[test]
    fn the_receivers_counters_are_its_segments_and_what_it_did_with_them() {
        let tcp = parse(SNMP, "Tcp:").unwrap();
        assert_eq!(tcp.get("InSegs"), Some(&426_705));
        assert_eq!(tcp.get("MaxConn"), None, "-1 is no limit, not a counter");
        let before = (parse(EXT, "TcpExt:").unwrap(), tcp);
        let after = (
            parse(&EXT.replace("2 10 0 1 1", "910 4010 3 201 51"), "TcpExt:").unwrap(),
            parse(&SNMP.replace(" 426705 ", " 430818 "), "Tcp:").unwrap(),
        );
        assert_eq!(
            receiver_between(&before, &after),
            ReceiverCounters {
                segments_in: 4_113,
                paws_discards: 908,
                ofo_queued: 4_000,
                ofo_drops: 3,
                dsacks_sent: 250,
            }
        );
        let share = receiver_between(&before, &after).paws_discarded_fraction();
        assert!((share.unwrap() - 908.0 / 4_113.0).abs() < 1e-12);
        assert_eq!(ReceiverCounters::default().paws_discarded_fraction(), None);
        // A counter a kernel does not have reads as unchanged; the others
        // still count.
        let ext = |v: &str| parse(&format!("TcpExt: PAWSEstab\nTcpExt: {v}\n"), "TcpExt:").unwrap();
        let d = receiver_between(&(ext("5"), Snapshot::new()), &(ext("9"), Snapshot::new()));
        assert_eq!(
            d,
            ReceiverCounters {
                paws_discards: 4,
                ..ReceiverCounters::default()
            }
        );
    }
}
