//! What the emulator's logs (`emu --log DIR`) say about the flows that
//! crossed it: when each flow's first packets arrived, read from its
//! packet log by port.
//!
//! Both `search --confirm` and `validate --multiflow` start the simulated
//! flows when the kernel's sent their SYNs, and place each kernel flow's
//! own log (which counts from its first write) on the emulator's clock by
//! its first data packet; the kernel's flows' SYNs arrive microseconds to
//! a third of a millisecond apart, in an order that decides some runs.

use std::path::Path;

/// A CSV file's reader and the positions of the columns `names`, by
/// header, so a column the schema gains later does not move them.
pub(crate) fn columns<const N: usize>(
    path: &Path,
    names: [&str; N],
) -> Result<(csv::Reader<std::fs::File>, [usize; N]), String> {
    let mut r = csv::Reader::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let h = r
        .headers()
        .map_err(|e| format!("{}: {e}", path.display()))?
        .clone();
    let mut at = [0; N];
    for (k, n) in names.iter().enumerate() {
        at[k] = h
            .iter()
            .position(|c| c == *n)
            .ok_or(format!("{}: no column {n}", path.display()))?;
    }
    Ok((r, at))
}

/// When one flow's packets first reached the emulator, ns on its clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FirstPackets {
    /// Its first forward packet: the SYN.
    pub syn_ns: u64,
    /// Its first forward packet with data (more than a header's worth of
    /// bytes), at or after the SYN.
    pub data_ns: u64,
}

/// Each of `flows` flows' first packets in the emulator's packet log,
/// flow k by its receiver's port (`first_port` + k); an error names a
/// flow that sent no SYN or no data. It reads only as far as the last
/// flow's first data, so a flow started late costs its start's rows.
pub fn first_packets(
    packets: &Path,
    first_port: u16,
    flows: usize,
) -> Result<Vec<FirstPackets>, String> {
    let (mut r, [t, d, b, p]) = columns(packets, ["enqueue_s", "direction", "bytes", "dst_port"])?;
    let mut syn: Vec<Option<u64>> = vec![None; flows];
    let mut data: Vec<Option<u64>> = vec![None; flows];
    for row in r.records() {
        let row = row.map_err(|e| format!("{}: {e}", packets.display()))?;
        if &row[d] != "forward" {
            continue;
        }
        let Some(k) = row[p]
            .parse::<u16>()
            .ok()
            .and_then(|port| port.checked_sub(first_port))
            .map(usize::from)
            .filter(|&k| k < flows)
        else {
            continue;
        };
        let s: f64 = row[t]
            .parse()
            .map_err(|_| format!("{}: bad time {:?}", packets.display(), &row[t]))?;
        let ns = (s * 1e9) as u64;
        syn[k].get_or_insert(ns);
        if data[k].is_none() && row[b].parse::<u64>().unwrap_or(0) > 200 {
            data[k] = Some(ns);
        }
        if data.iter().all(Option::is_some) {
            break;
        }
    }
    (0..flows)
        .map(|k| match (syn[k], data[k]) {
            (Some(syn_ns), Some(data_ns)) => Ok(FirstPackets { syn_ns, data_ns }),
            _ => Err(format!(
                "{}: flow {k} (port {}) sent no {} through the emulator",
                packets.display(),
                first_port + k as u16,
                if syn[k].is_none() { "packet" } else { "data" }
            )),
        })
        .collect()
}

/// Whether `packets` is a packet log that names each packet's ports (the
/// emulator's since 2026-12-01): runs logged before then, or without
/// `--log`, cannot tell the flows' first packets apart.
pub fn logs_ports(packets: &Path) -> bool {
    csv::Reader::from_path(packets)
        .ok()
        .and_then(|mut r| r.headers().ok().map(|h| h.iter().any(|c| c == "dst_port")))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The emulator's log as `--log` writes it: SYNs, then data, the
    /// second flow (port 5202) first; the reverse direction's ACKs and
    /// another port's packets ignored.
    #[test]
    fn each_flows_syn_and_first_data_come_from_its_port() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("packets.csv");
        std::fs::write(
            &f,
            "enqueue_s,dequeue_s,scheduled_s,released_s,direction,bytes,dropped,ce,src_port,dst_port\n\
             0.100000,0.1,0.1,0.1,reverse,60,,0,5201,40000\n\
             0.305735,0.3,0.3,0.3,forward,60,,0,39210,5202\n\
             0.305891,0.3,0.3,0.3,forward,60,,0,40622,5201\n\
             0.306000,0.3,0.3,0.3,forward,1500,,0,40000,5209\n\
             0.346042,0.3,0.3,0.3,forward,52,,0,39210,5202\n\
             0.346417,0.3,0.3,0.3,forward,1500,,0,39210,5202\n\
             0.346702,0.3,0.3,0.3,forward,1500,,0,40622,5201\n",
        )
        .unwrap();
        let got = first_packets(&f, 5201, 2).unwrap();
        assert_eq!(
            got,
            [
                FirstPackets {
                    syn_ns: 305_891_000,
                    data_ns: 346_702_000
                },
                FirstPackets {
                    syn_ns: 305_735_000,
                    data_ns: 346_417_000
                },
            ]
        );
        // A third flow that never sent is named, not read as at 0.
        let e = first_packets(&f, 5201, 3).unwrap_err();
        assert!(e.contains("flow 2 (port 5203) sent no packet"), "{e}");
        assert!(logs_ports(&f));
        // An older log, without ports, and no log at all.
        let old = dir.path().join("old.csv");
        std::fs::write(&old, "enqueue_s,direction,bytes\n0.1,forward,60\n").unwrap();
        assert!(!logs_ports(&old));
        assert!(!logs_ports(&dir.path().join("none.csv")));
    }
}
