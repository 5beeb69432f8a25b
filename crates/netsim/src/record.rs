//! What a run reports: time-series samples as it goes, and a summary at the
//! end.
//!
//! The time series use bbrlab's one shared schema ([`sender::schema`],
//! docs/src/outputs.md), so the simulator, the UDP transport and the kernel-TCP
//! probe can be plotted and compared by the same code.
//! [`FlowSample::fields`] and [`LinkSample::fields`] give a row's cells in
//! that schema's order.

use crate::cells::{self, Cells, Row};
use crate::workload::{CrossSummary, FctRecord, FctSummary};
use congestion::Mode;
use sender::schema::{FLOW_COLUMNS, LINK_COLUMNS};
pub use sender::ModeTimes;
use std::io::{self, Write};

/// One row of a flow's time series.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSample {
    /// Sample time.
    pub t_ns: u64,
    /// Flow index.
    pub flow: usize,
    /// Unique payload bytes received so far.
    pub delivered_bytes: u64,
    /// Goodput over the last sampling interval, bits/s.
    pub goodput_bps: f64,
    /// Latest RTT sample.
    pub rtt_ns: Option<u64>,
    /// The controller's smoothed RTT (RFC 6298 gains), the statistic the
    /// kernel reports as `tcpi_rtt`.
    pub srtt_ns: Option<u64>,
    /// Congestion window.
    pub cwnd_bytes: u64,
    /// Pacing rate, bits/s.
    pub pacing_rate_bps: f64,
    /// Bytes in flight.
    pub inflight_bytes: u64,
    /// The most bytes in flight since the previous sample (not written to
    /// `flows.csv`; the fuzzer judges window growth by it).
    pub inflight_peak_bytes: u64,
    /// Controller mode.
    pub mode: Mode,
    /// BBR's bandwidth estimate, bits/s.
    pub bw_estimate_bps: Option<f64>,
    /// The controller's min_rtt.
    pub min_rtt_ns: Option<u64>,
    /// How long a packet offered to the forward bottleneck at the sample
    /// time would wait before its own service starts (the backlog ahead of
    /// it at the link's rate); 0 when the queue is empty.
    pub queue_delay_ns: u64,
    /// This flow's packets dropped so far.
    pub drops: u64,
    /// Data packets sent so far, retransmissions included.
    pub packets_sent: u64,
    /// Of those, retransmissions.
    pub retransmissions: u64,
    /// Packets the sender declared lost so far (not a `flows.csv` column;
    /// qlog's `recovery:packet_lost`).
    pub packets_lost: u64,
    /// Packets the sender has learned were CE-marked, cumulative (from
    /// QUIC's ECN counts or TCP's ECE, as told to the controller).
    pub delivered_ce: u64,
}

/// A time in ms to 3 decimals; empty when there is none.
fn ms(c: &mut Cells<'_>, ns: Option<u64>) -> io::Result<()> {
    match ns {
        Some(v) => c.put(format_args!("{:.3}", v as f64 / 1e6)),
        None => c.empty(),
    }
}

impl Row for FlowSample {
    /// [`FLOW_COLUMNS`]' order. Fixed precision keeps output
    /// byte-identical across runs.
    fn cells(&self, c: &mut Cells<'_>) -> io::Result<()> {
        c.put(format_args!("{:.6}", self.t_ns as f64 / 1e9))?;
        c.put(format_args!("{}", self.flow))?;
        c.put(format_args!("{}", self.delivered_bytes))?;
        c.put(format_args!("{:.0}", self.goodput_bps))?;
        ms(c, self.rtt_ns)?;
        c.put(format_args!("{}", self.cwnd_bytes))?;
        c.put(format_args!("{:.0}", self.pacing_rate_bps))?;
        c.put(format_args!("{}", self.inflight_bytes))?;
        c.text(self.mode.name())?;
        match self.bw_estimate_bps {
            Some(b) => c.put(format_args!("{b:.0}"))?,
            None => c.empty()?,
        }
        ms(c, self.min_rtt_ns)?;
        c.put(format_args!("{:.3}", self.queue_delay_ns as f64 / 1e6))?;
        c.put(format_args!("{}", self.drops))?;
        ms(c, self.srtt_ns)?;
        c.put(format_args!("{}", self.packets_sent))?;
        c.put(format_args!("{}", self.retransmissions))?;
        c.put(format_args!("{}", self.delivered_ce))
    }
}

impl FlowSample {
    /// The row's cells in [`FLOW_COLUMNS`]' order ([`Row::cells`]).
    pub fn fields(&self) -> [String; FLOW_COLUMNS.len()] {
        cells::collect(self)
    }

    /// Writes the row as one CSV record (through the `csv` crate, so any
    /// cell is quoted as CSV requires).
    pub fn write_csv(&self, w: &mut dyn Write) -> io::Result<()> {
        cells::write_one(self, w)
    }
}

/// One row of a link direction's time series.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSample {
    /// Sample time.
    pub t_ns: u64,
    /// `forward` or `reverse`.
    pub direction: &'static str,
    /// Packets queued.
    pub queue_packets: u64,
    /// Bytes queued.
    pub queue_bytes: u64,
    /// How long a packet offered to this direction at the sample time
    /// would wait before its own service starts; 0 when the queue is empty.
    pub queue_delay_ns: u64,
    /// Packets dropped so far (all causes).
    pub drops: u64,
    /// ECN-capable packets this direction marked CE so far.
    pub ce_marked: u64,
}

impl Row for LinkSample {
    /// [`LINK_COLUMNS`]' order.
    fn cells(&self, c: &mut Cells<'_>) -> io::Result<()> {
        c.put(format_args!("{:.6}", self.t_ns as f64 / 1e9))?;
        c.text(self.direction)?;
        c.put(format_args!("{}", self.queue_packets))?;
        c.put(format_args!("{}", self.queue_bytes))?;
        c.put(format_args!("{:.3}", self.queue_delay_ns as f64 / 1e6))?;
        c.put(format_args!("{}", self.drops))?;
        c.put(format_args!("{}", self.ce_marked))
    }
}

impl LinkSample {
    /// The row's cells in [`LINK_COLUMNS`]' order ([`Row::cells`]).
    pub fn fields(&self) -> [String; LINK_COLUMNS.len()] {
        cells::collect(self)
    }

    /// Writes the row as one CSV record.
    pub fn write_csv(&self, w: &mut dyn Write) -> io::Result<()> {
        cells::write_one(self, w)
    }
}

/// Where samples go while a run progresses. The CLI streams them to CSV
/// files, so memory stays bounded however long the run; tests keep them.
pub trait Recorder {
    /// A flow sample.
    fn flow_sample(&mut self, s: &FlowSample) -> io::Result<()>;
    /// A link sample.
    fn link_sample(&mut self, s: &LinkSample) -> io::Result<()>;
    /// A finite flow finished (one row of `fct.csv`), as it happens, so
    /// tens of thousands of completions need not be held in memory.
    /// Ignored unless a recorder wants them.
    fn flow_completed(&mut self, _r: &FctRecord) -> io::Result<()> {
        Ok(())
    }
    /// A BBR-family flow's model at a sample time (`model.csv`,
    /// [`crate::model`]), after that flow's [`Self::flow_sample`].
    /// Ignored unless a recorder wants it.
    fn model_sample(&mut self, _s: &crate::ModelSample) -> io::Result<()> {
        Ok(())
    }
    /// Called every [`crate::HEARTBEAT_EVENTS`] events with the simulated
    /// time, between samples too: a recorder that must stop a run on a
    /// wall-clock deadline returns an error here, so a run that spends
    /// long between two samples (a controller sending millions of packets
    /// a millisecond) is stopped as well. Ignored unless a recorder wants
    /// it.
    fn heartbeat(&mut self, _t_ns: u64) -> io::Result<()> {
        Ok(())
    }
    /// Whether this recorder wants every packet's row
    /// ([`Self::packet`]); asked once when a run starts, so a run that
    /// logs nothing builds no rows.
    fn wants_packets(&self) -> bool {
        false
    }
    /// A packet a link direction took in ([`crate::packet_log`]), once its
    /// fate is settled. Only called if [`Self::wants_packets`].
    fn packet(&mut self, _p: &crate::PacketRecord) -> io::Result<()> {
        Ok(())
    }
}

/// Discards everything (for benchmarks and summary-only runs).
pub struct NoRecorder;

impl Recorder for NoRecorder {
    fn flow_sample(&mut self, _: &FlowSample) -> io::Result<()> {
        Ok(())
    }
    fn link_sample(&mut self, _: &LinkSample) -> io::Result<()> {
        Ok(())
    }
}

/// Keeps every sample in memory (tests, small runs).
#[derive(Default)]
pub struct MemoryRecorder {
    /// Flow samples in time order.
    pub flows: Vec<FlowSample>,
    /// Link samples in time order.
    pub links: Vec<LinkSample>,
    /// Finished finite flows in completion order.
    pub fct: Vec<FctRecord>,
    /// BBR-family flows' model samples in time order.
    pub models: Vec<crate::ModelSample>,
}

impl Recorder for MemoryRecorder {
    fn flow_sample(&mut self, s: &FlowSample) -> io::Result<()> {
        self.flows.push(s.clone());
        Ok(())
    }
    fn link_sample(&mut self, s: &LinkSample) -> io::Result<()> {
        self.links.push(s.clone());
        Ok(())
    }
    fn flow_completed(&mut self, r: &FctRecord) -> io::Result<()> {
        self.fct.push(r.clone());
        Ok(())
    }
    fn model_sample(&mut self, s: &crate::ModelSample) -> io::Result<()> {
        self.models.push(*s);
        Ok(())
    }
}

/// Keeps every packet row of a run in memory (what `--packets` writes to
/// `packets.csv`), for tests and small runs that count packets.
#[derive(Default)]
pub struct PacketMemory {
    /// Packet rows in the order the links logged them.
    pub packets: Vec<crate::PacketRecord>,
}

impl Recorder for PacketMemory {
    fn flow_sample(&mut self, _: &FlowSample) -> io::Result<()> {
        Ok(())
    }
    fn link_sample(&mut self, _: &LinkSample) -> io::Result<()> {
        Ok(())
    }
    fn wants_packets(&self) -> bool {
        true
    }
    fn packet(&mut self, p: &crate::PacketRecord) -> io::Result<()> {
        self.packets.push(p.clone());
        Ok(())
    }
}

/// How a flow's handshake went.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HandshakeRecord {
    /// When the SYN-ACK arrived and data could flow, ns.
    pub opened_ns: u64,
    /// The exchange's RTT (the SYN that was answered to its SYN-ACK), ns.
    pub rtt_ns: u64,
}

/// What TCP timestamps did in a flow that has them
/// ([`crate::FlowConfig::timestamps`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimestampRecord {
    /// Recoveries undone before their point (Linux `TCPPartialUndo`),
    /// among [`FlowSummary::undos`].
    pub partial_undos: u64,
    /// Data segments that reached the receiver with a timestamp.
    pub segments_received: u64,
    /// Of those, the ones it discarded by PAWS (Linux `PAWSEstab`).
    pub paws_discards: u64,
}

/// End-of-run figures for one flow.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSummary {
    /// Flow label.
    pub name: String,
    /// Algorithm name.
    pub algorithm: String,
    /// Unique bytes delivered.
    pub delivered_bytes: u64,
    /// Unique bytes delivered per second of the flow's active time, bits/s:
    /// from its start to its completion (a sized flow), to its stop or its
    /// last new byte's arrival, whichever is later (a flow told to stop
    /// before the run's end), or to the run's end.
    pub goodput_bps: f64,
    /// RTT statistics, ms (None if no samples).
    pub rtt_mean_ms: Option<f64>,
    /// Median RTT, ms.
    pub rtt_median_ms: Option<f64>,
    /// 95th-percentile RTT, ms.
    pub rtt_p95_ms: Option<f64>,
    /// 99th-percentile RTT, ms: the tail a median and p95 hide.
    pub rtt_p99_ms: Option<f64>,
    /// Data packets sent (including retransmissions).
    pub packets_sent: u64,
    /// Retransmitted packets.
    pub retransmissions: u64,
    /// retransmissions / packets_sent.
    pub retransmission_rate: f64,
    /// Packets of this flow dropped by the path.
    pub drops: u64,
    /// Retransmission timeouts.
    pub rtos: u64,
    /// Loss episodes begun: fast recoveries (those begun again at the
    /// recovery point included) and first timeouts
    /// ([`sender::Sender::loss_episodes`]).
    pub loss_episodes: u64,
    /// Reductions undone as spurious ([`sender::Sender::undos`]).
    pub undos: u64,
    /// Time in each controller mode.
    pub mode_times: ModeTimes,
    /// When the last byte of a finite flow was delivered.
    pub completion_ns: Option<u64>,
    /// Packets the sender learned were CE-marked (`delivered_ce` at the end).
    pub ce_packets: u64,
    /// Packets the sender saw acknowledged.
    pub delivered_packets: u64,
    /// CE-marked packets that reached the receiver (its ECN-CE count).
    pub ce_received: u64,
    /// A flow with [`crate::Handshake::Tcp`]: when its SYN-ACK arrived
    /// (its data began), and the handshake's RTT. `None` without a
    /// handshake, or if no SYN-ACK arrived within the run.
    pub handshake: Option<HandshakeRecord>,
    /// How long new data waited for the receiver's window, ns (Linux's
    /// `tcpi_rwnd_limited`): `None` for a receiver that offers none (only
    /// [`crate::AckPolicy::Linux`]'s does).
    pub rwnd_limited_ns: Option<u64>,
    /// (The largest window the receiver offered, the most it could),
    /// bytes: `None` for a receiver that offers none. Whether a flow that
    /// waited on the window waited on its cap or on its growth.
    pub rwnd_reach: Option<(u64, u64)>,
    /// A flow with TCP timestamps: its partial undos and PAWS discards.
    pub timestamps: Option<TimestampRecord>,
}

impl FlowSummary {
    /// CE-marked packets over packets delivered (0 when none were).
    pub fn ce_fraction(&self) -> f64 {
        if self.delivered_packets == 0 {
            0.0
        } else {
            self.ce_packets as f64 / self.delivered_packets as f64
        }
    }
}

/// End-of-run figures for the whole simulation.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Per flow.
    pub flows: Vec<FlowSummary>,
    /// Jain's fairness index over flow goodputs.
    pub jain_fairness: Option<f64>,
    /// Data packets the bottleneck carried or dropped.
    pub packets_simulated: u64,
    /// ACK packets offered to the reverse direction (each is simulated
    /// hop by hop like a data packet, so both count towards speed).
    pub ack_packets_simulated: u64,
    /// Events processed.
    pub events: u64,
    /// Forward-direction drops.
    pub forward_drops: u64,
    /// Packets the forward direction marked CE.
    pub forward_ce_marked: u64,
    /// Reverse-direction drops.
    pub reverse_drops: u64,
    /// Packets the reverse direction marked CE (ACKs are Not-ECT: 0).
    pub reverse_ce_marked: u64,
    /// Flow completion times by size bucket; `None` without finite flows.
    pub fct: Option<FctSummary>,
    /// Each cross-traffic source, in configuration order.
    pub cross: Vec<CrossSummary>,
    /// Flow slots the engine held at the end: listed flows plus the most
    /// generated flows alive at once (slots are reused), so memory follows
    /// the flows alive, not the flows started.
    pub flow_slots: usize,
    /// Most flows (listed and generated) alive at once.
    pub peak_live_flows: usize,
    /// The bottleneck hops after the first (`hop1`, `hop2`, ...; the first
    /// is `forward_*` above); empty on a single path.
    pub hops: Vec<HopSummary>,
}

/// End-of-run figures of one bottleneck hop after the first.
#[derive(Clone, Debug, PartialEq)]
pub struct HopSummary {
    /// `hop1`, `hop2`, ... as in `link.csv`.
    pub name: &'static str,
    /// Packets offered to the hop.
    pub offered: u64,
    /// Drops, all causes.
    pub drops: u64,
    /// Packets marked CE.
    pub ce_marked: u64,
}
