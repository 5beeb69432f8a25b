//! The one time-series schema: the columns of `flows.csv`, `link.csv`
//! and `model.csv`.
//!
//! The simulator, the UDP transport and the kernel-TCP probe all write
//! [`FLOW_COLUMNS`], in this order, as the first columns of their per-flow
//! time series (a source's own columns come after them), so one plotting
//! path and one comparison serve every source. The simulator writes
//! [`LINK_COLUMNS`] per link direction, and [`MODEL_COLUMNS`] for each
//! BBR-family flow. The schema lives here, in the crate every source
//! shares, so no source depends on another for it. A writer takes its
//! header from here ([`FLOW_CSV_HEADER`], [`LINK_CSV_HEADER`] and
//! [`MODEL_CSV_HEADER`] are the tables' names, joined when compiling)
//! rather than spelling it again, and a reader its units and kinds.
//!
//! Units live in the names (`_s`, `_ms`, `_bps`, `_bytes`); [`Column::unit`]
//! says the same in the words of the data dictionary (`docs/outputs.md`),
//! and [`Column::kind`] the type of a cell, for a reader that stores typed
//! columns (the Python package's Arrow tables).
//!
//! ```
//! use sender::schema::{FLOW_COLUMNS, FLOW_CSV_HEADER, SRTT_MS};
//!
//! let h = FLOW_CSV_HEADER;
//! assert!(h.starts_with("time_s,flow,delivered_bytes,goodput_bps,rtt_ms,"));
//! let i = FLOW_COLUMNS.iter().position(|c| *c == SRTT_MS).unwrap();
//! assert_eq!(h.split(',').nth(i), Some("srtt_ms"));
//! ```

/// The type of a column's cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A float (rates, times); may be missing (an empty CSV cell).
    Float,
    /// An integer (bytes, packets, indices).
    Int,
    /// A name (mode, direction).
    Text,
}

/// One column of a time series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    /// The column's name in the CSV header.
    pub name: &'static str,
    /// Its unit as the data dictionary writes it: `s`, `ms`, `bit/s`,
    /// `bytes`, `packets`, or `index` and `name` for the cells that are
    /// neither a quantity nor a count.
    pub unit: &'static str,
    /// The type of its cells.
    pub kind: Kind,
}

const fn column(name: &'static str, unit: &'static str, kind: Kind) -> Column {
    Column { name, unit, kind }
}

/// Sample time, from the start of the run (or of the transfer).
pub const TIME_S: Column = column("time_s", "s", Kind::Float);
/// The flow's index in the run.
pub const FLOW: Column = column("flow", "index", Kind::Int);
/// Unique payload bytes received so far.
pub const DELIVERED_BYTES: Column = column("delivered_bytes", "bytes", Kind::Int);
/// Goodput over the last sampling interval.
pub const GOODPUT_BPS: Column = column("goodput_bps", "bit/s", Kind::Float);
/// The most recent RTT sample.
pub const RTT_MS: Column = column("rtt_ms", "ms", Kind::Float);
/// Congestion window.
pub const CWND_BYTES: Column = column("cwnd_bytes", "bytes", Kind::Int);
/// The controller's pacing rate.
pub const PACING_RATE_BPS: Column = column("pacing_rate_bps", "bit/s", Kind::Float);
/// Bytes sent and not yet acknowledged or declared lost.
pub const INFLIGHT_BYTES: Column = column("inflight_bytes", "bytes", Kind::Int);
/// The controller's mode (`congestion::Mode::name`).
pub const MODE: Column = column("mode", "name", Kind::Text);
/// BBR's bottleneck-bandwidth estimate; empty for other controllers.
pub const BW_ESTIMATE_BPS: Column = column("bw_estimate_bps", "bit/s", Kind::Float);
/// The controller's min_rtt.
pub const MIN_RTT_MS: Column = column("min_rtt_ms", "ms", Kind::Float);
/// How long a packet offered to the bottleneck at the sample time would
/// wait before its own transmission starts (in `flows.csv` the forward
/// bottleneck's; an end host cannot see it and leaves it empty).
pub const QUEUE_DELAY_MS: Column = column("queue_delay_ms", "ms", Kind::Float);
/// Packets dropped so far: the flow's, by the forward link, in
/// `flows.csv`; the direction's, all causes, in `link.csv`.
pub const DROPS: Column = column("drops", "packets", Kind::Int);
/// The smoothed RTT (RFC 6298 gains; what the kernel reports as
/// `tcpi_rtt`, which has no per-ACK sample), so every source can be
/// compared on one statistic.
pub const SRTT_MS: Column = column("srtt_ms", "ms", Kind::Float);
/// Data packets sent so far, retransmissions included.
pub const DATA_PACKETS_SENT: Column = column("data_packets_sent", "packets", Kind::Int);
/// Of those, retransmissions: what a real sender sees of its losses
/// (the simulator's [`DROPS`] counts link drops, which it cannot see).
pub const RETRANSMITTED_PACKETS: Column = column("retransmitted_packets", "packets", Kind::Int);
/// Packets the sender has learned were CE-marked (ECN), cumulative: from
/// QUIC's ECN-CE count, or under TCP the packets ACKs with ECE
/// acknowledged (Linux's `tcpi_delivered_ce`); 0 without ECN.
pub const DELIVERED_CE: Column = column("delivered_ce", "packets", Kind::Int);

/// `forward` (data) or `reverse` (ACKs).
pub const DIRECTION: Column = column("direction", "name", Kind::Text);
/// Packets waiting or in transmission at the direction's bottleneck.
pub const QUEUE_PACKETS: Column = column("queue_packets", "packets", Kind::Int);
/// Their bytes on the wire.
pub const QUEUE_BYTES: Column = column("queue_bytes", "bytes", Kind::Int);
/// ECN-capable packets the direction marked CE so far (instead of
/// dropping them).
pub const CE_MARKED: Column = column("ce_marked", "packets", Kind::Int);

/// BBRv3's `BBR.bw`, min(`max_bw`, `bw_shortterm`): the rate it paces
/// from (empty for v1).
pub const BW_BPS: Column = column("bw_bps", "bit/s", Kind::Float);
/// The current phase's pacing gain.
pub const PACING_GAIN: Column = column("pacing_gain", "ratio", Kind::Float);
/// The current phase's cwnd gain.
pub const CWND_GAIN: Column = column("cwnd_gain", "ratio", Kind::Float);
/// Round trips counted (BBR's clock).
pub const ROUND_COUNT: Column = column("round_count", "rounds", Kind::Int);
/// Whether STARTUP judged the pipe full (0 or 1).
pub const FULL_BW_REACHED: Column = column("full_bw_reached", "flag", Kind::Int);
/// The ACK-aggregation allowance added to cwnd.
pub const EXTRA_ACKED_BYTES: Column = column("extra_acked_bytes", "bytes", Kind::Int);
/// v1's long-term (policer) bandwidth, while in use.
pub const LT_BW_BPS: Column = column("lt_bw_bps", "bit/s", Kind::Float);
/// BBRv3's `inflight_longterm` (Linux's `inflight_hi`); empty while unset,
/// so a float column (an integer cell cannot be missing).
pub const INFLIGHT_LONGTERM_BYTES: Column = column("inflight_longterm_bytes", "bytes", Kind::Float);
/// BBRv3's `inflight_shortterm` (Linux's `inflight_lo`); empty while unset.
pub const INFLIGHT_SHORTTERM_BYTES: Column =
    column("inflight_shortterm_bytes", "bytes", Kind::Float);
/// BBRv3's `bw_shortterm` (Linux's `bw_lo`); empty while unset.
pub const BW_SHORTTERM_BPS: Column = column("bw_shortterm_bps", "bit/s", Kind::Float);
/// BBRv3: loss seen in the current round (0 or 1; empty for v1).
pub const LOSS_IN_ROUND: Column = column("loss_in_round", "flag", Kind::Float);
/// BBRv3: CE seen in the current round (0 or 1; empty for v1).
pub const ECN_IN_ROUND: Column = column("ecn_in_round", "flag", Kind::Float);
/// The `linux-v3` profile's CE-fraction EWMA.
pub const ECN_ALPHA: Column = column("ecn_alpha", "fraction", Kind::Float);

/// The per-flow time series (`flows.csv`), in order: the columns every
/// source writes first.
pub const FLOW_COLUMNS: [Column; 17] = [
    TIME_S,
    FLOW,
    DELIVERED_BYTES,
    GOODPUT_BPS,
    RTT_MS,
    CWND_BYTES,
    PACING_RATE_BPS,
    INFLIGHT_BYTES,
    MODE,
    BW_ESTIMATE_BPS,
    MIN_RTT_MS,
    QUEUE_DELAY_MS,
    DROPS,
    SRTT_MS,
    DATA_PACKETS_SENT,
    RETRANSMITTED_PACKETS,
    DELIVERED_CE,
];

/// The per-link-direction time series (`link.csv`), in order.
pub const LINK_COLUMNS: [Column; 7] = [
    TIME_S,
    DIRECTION,
    QUEUE_PACKETS,
    QUEUE_BYTES,
    QUEUE_DELAY_MS,
    DROPS,
    CE_MARKED,
];

/// A BBR-family flow's model (`model.csv`), in order: its controller's
/// state at each sample. A cell is empty where the controller has no such
/// state (v1 has no inflight bounds) or has not set it.
pub const MODEL_COLUMNS: [Column; 19] = [
    TIME_S,
    FLOW,
    MODE,
    BW_ESTIMATE_BPS,
    BW_BPS,
    MIN_RTT_MS,
    PACING_GAIN,
    CWND_GAIN,
    CWND_BYTES,
    ROUND_COUNT,
    FULL_BW_REACHED,
    EXTRA_ACKED_BYTES,
    LT_BW_BPS,
    INFLIGHT_LONGTERM_BYTES,
    INFLIGHT_SHORTTERM_BYTES,
    BW_SHORTTERM_BPS,
    LOSS_IN_ROUND,
    ECN_IN_ROUND,
    ECN_ALPHA,
];

/// The header line of `flows.csv`: [`FLOW_COLUMNS`]' names joined by
/// commas (made from the table when compiling; no name needs quoting).
pub const FLOW_CSV_HEADER: &str = header(&FLOW_HEADER_BYTES);

/// The header line of `link.csv`: [`LINK_COLUMNS`]' names joined by
/// commas.
pub const LINK_CSV_HEADER: &str = header(&LINK_HEADER_BYTES);

/// The header line of `model.csv`: [`MODEL_COLUMNS`]' names joined by
/// commas.
pub const MODEL_CSV_HEADER: &str = header(&MODEL_HEADER_BYTES);

const FLOW_HEADER_BYTES: [u8; header_len(&FLOW_COLUMNS)] = join(&FLOW_COLUMNS);
const LINK_HEADER_BYTES: [u8; header_len(&LINK_COLUMNS)] = join(&LINK_COLUMNS);
const MODEL_HEADER_BYTES: [u8; header_len(&MODEL_COLUMNS)] = join(&MODEL_COLUMNS);

/// The length of the columns' names joined by commas.
const fn header_len(columns: &[Column]) -> usize {
    let mut len = columns.len().saturating_sub(1);
    let mut i = 0;
    while i < columns.len() {
        len += columns[i].name.len();
        i += 1;
    }
    len
}

/// The columns' names joined by commas, `N` ([`header_len`]) bytes.
const fn join<const N: usize>(columns: &[Column]) -> [u8; N] {
    let mut out = [0u8; N];
    let mut at = 0;
    let mut i = 0;
    while i < columns.len() {
        if i > 0 {
            out[at] = b',';
            at += 1;
        }
        let name = columns[i].name.as_bytes();
        let mut j = 0;
        while j < name.len() {
            out[at] = name[j];
            at += 1;
            j += 1;
        }
        i += 1;
    }
    assert!(at == N, "N is the joined length");
    out
}

/// [`join`]'s bytes as text (ASCII names, so always valid).
const fn header(bytes: &'static [u8]) -> &'static str {
    match core::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(_) => panic!("column names are ASCII"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header lines made when compiling are the tables' names.
    #[test]
    fn the_headers_are_the_tables_names() {
        let joined = |cols: &[Column]| cols.iter().map(|c| c.name).collect::<Vec<_>>().join(",");
        assert_eq!(FLOW_CSV_HEADER, joined(&FLOW_COLUMNS));
        assert_eq!(LINK_CSV_HEADER, joined(&LINK_COLUMNS));
        assert_eq!(MODEL_CSV_HEADER, joined(&MODEL_COLUMNS));
    }

    /// A header is read by name, so a name appears once, and writes
    /// unquoted, so it holds nothing CSV would quote.
    #[test]
    fn names_are_unique_and_plain() {
        for cols in [&FLOW_COLUMNS[..], &LINK_COLUMNS[..]] {
            for (i, c) in cols.iter().enumerate() {
                assert!(
                    c.name
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                    "{}",
                    c.name
                );
                assert!(
                    cols[..i].iter().all(|d| d.name != c.name),
                    "{} twice",
                    c.name
                );
            }
        }
    }
}
