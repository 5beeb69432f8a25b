//! The network namespace's TCP recovery counters (`/proc/net/netstat`,
//! `TcpExt`) over one transfer: how often Linux entered recovery and undid
//! a reduction, which `TCP_INFO` does not say. The simulator reports the
//! same two things per flow (`loss_episodes`, `undos`), so a kernel run
//! and a simulated one can be set side by side.
//!
//! The counters are the namespace's, not the socket's: they are one
//! connection's alone only where nothing else in the namespace uses TCP,
//! as in `bbrlab emu`'s namespaces.

use std::collections::HashMap;

/// `TcpExt` counters by name, as read at one moment.
pub(crate) type Snapshot = HashMap<String, u64>;

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

/// Reads `/proc/net/netstat` as this thread's namespace sees it; `None`
/// when it cannot be read or parsed (a summary then has no counters rather
/// than wrong ones).
pub(crate) fn read() -> Option<Snapshot> {
    parse(&std::fs::read_to_string("/proc/net/netstat").ok()?)
}

/// The `TcpExt` counters of a `/proc/net/netstat` text: a line of names
/// and a line of values, each starting `TcpExt:`. `None` if the two lines
/// are missing or do not pair up.
pub(crate) fn parse(text: &str) -> Option<Snapshot> {
    let mut lines = text.lines().filter(|l| l.starts_with("TcpExt:"));
    let names = lines.next()?.split_whitespace().skip(1);
    let values: Vec<&str> = lines.next()?.split_whitespace().skip(1).collect();
    let names: Vec<&str> = names.collect();
    if names.len() != values.len() {
        return None;
    }
    names
        .into_iter()
        .zip(values)
        .map(|(n, v)| Some((n.to_string(), v.parse().ok()?)))
        .collect()
}

/// What changed between `before` and `after`; a counter missing from
/// either (an older kernel) counts as unchanged.
pub(crate) fn between(before: &Snapshot, after: &Snapshot) -> NetnsCounters {
    let d = |k: &str| match (before.get(k), after.get(k)) {
        (Some(b), Some(a)) => a.saturating_sub(*b),
        _ => 0,
    };
    NetnsCounters {
        sack_recoveries: d("TCPSackRecovery"),
        timeouts: d("TCPTimeouts"),
        full_undos: d("TCPFullUndo"),
        partial_undos: d("TCPPartialUndo"),
        dsack_undos: d("TCPDSACKUndo"),
        loss_undos: d("TCPLossUndo"),
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
        let before = parse(BEFORE).unwrap();
        let after = parse(&BEFORE.replace("TcpExt: 0 10 2 1 5 0 0", "TcpExt: 0 498 5 20 208 27 1"))
            .unwrap();
        assert_eq!(
            between(&before, &after),
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
        assert_eq!(parse(""), None);
        assert_eq!(parse("TcpExt: A B\nTcpExt: 1\n"), None, "unpaired");
        assert_eq!(parse("TcpExt: A\nTcpExt: x\n"), None, "not a number");
        let old = parse("TcpExt: TCPSackRecovery\nTcpExt: 4\n").unwrap();
        let new = parse("TcpExt: TCPSackRecovery\nTcpExt: 9\n").unwrap();
        let d = between(&old, &new);
        assert_eq!((d.sack_recoveries, d.partial_undos), (5, 0));
    }
}
