//! What the forwarder records: each packet's fate (`packets.csv`) and the
//! queue of each direction over time (`link.csv`, the simulator's
//! schema), through the [`Log`] a run is given.

use super::*;
use std::sync::mpsc;

/// One packet's fate, for the per-packet log.
#[derive(Clone, Copy, Debug)]
pub struct PacketRecord<'a> {
    /// 0 = client → server, 1 = server → client.
    pub direction: usize,
    /// IP packet size.
    pub bytes: usize,
    /// When it was read from the TUN device, ns since start.
    pub enqueue_ns: u64,
    /// When the model says it finished transmission (None: dropped).
    pub dequeue_ns: Option<u64>,
    /// When the model scheduled its arrival.
    pub scheduled_ns: Option<u64>,
    /// When it was actually written out.
    pub released_ns: Option<u64>,
    /// Why it was dropped.
    pub dropped: Option<DropReason>,
    /// It left CE-marked (marked here, or it arrived CE); false if dropped.
    pub ce: bool,
    /// The packet itself (from its IP header), for a log to read what it
    /// keeps: the CSV log its TCP or UDP ports ([`transport_ports`]), so
    /// it tells competing flows apart, and a TCP segment's header fields
    /// ([`tcp_fields`]). Lent, not parsed, so a run that
    /// keeps no log does no work for it.
    pub packet: &'a [u8],
}

/// Where the forwarder reports packets and queue samples.
pub trait Log {
    /// One packet, once its fate is known.
    fn packet(&mut self, p: &PacketRecord) -> io::Result<()>;
    /// A queue sample per direction. Logs that keep only packets leave it
    /// as this no-op.
    fn link_sample(&mut self, _s: &LinkSample) -> io::Result<()> {
        Ok(())
    }
}

/// One direction's queue and counters at a sample time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkSample {
    /// ns since start.
    pub t_ns: u64,
    /// 0 = forward (client → server), 1 = reverse.
    pub direction: usize,
    /// Packets waiting or in transmission.
    pub queue_packets: u64,
    /// Their bytes.
    pub queue_bytes: u64,
    /// The last packet's wait before its own transmission, ns.
    pub queue_delay_ns: u64,
    /// Packets the direction dropped so far, all causes.
    pub drops: u64,
    /// Packets the direction marked CE so far
    /// ([`link::DirectionStats::marked_ce`]).
    pub marked_ce: u64,
}

impl LinkSample {
    /// The cell of the `link.csv` column `name` (a name of
    /// `sender::schema::LINK_COLUMNS`); `None` for a name this log does
    /// not know (a test checks that it knows every one of the schema's).
    pub fn cell(&self, name: &str) -> Option<String> {
        Some(match name {
            "time_s" => format!("{:.6}", self.t_ns as f64 / 1e9),
            "direction" => DIRS[self.direction].to_string(),
            "queue_packets" => self.queue_packets.to_string(),
            "queue_bytes" => self.queue_bytes.to_string(),
            "queue_delay_ms" => format!("{:.3}", self.queue_delay_ns as f64 / 1e6),
            "drops" => self.drops.to_string(),
            "ce_marked" => self.marked_ce.to_string(),
            _ => return None,
        })
    }
}

/// A log that keeps nothing.
pub struct NoLog;

impl Log for NoLog {
    fn packet(&mut self, _: &PacketRecord) -> io::Result<()> {
        Ok(())
    }
}

const DIRS: [&str; 2] = ["forward", "reverse"];

/// Columns of `packets.csv`. The ports and then the TCP header's fields
/// ([`tcp_fields`]; empty for other packets) come last, so readers of the
/// first eight by position still read them.
pub const PACKETS_CSV_HEADER: [&str; 14] = [
    "enqueue_s",
    "dequeue_s",
    "scheduled_s",
    "released_s",
    "direction",
    "bytes",
    "dropped",
    "ce",
    "src_port",
    "dst_port",
    "tcp_seq",
    "tcp_ack",
    "tcp_flags",
    "tcp_window",
];

/// Columns of `link.csv`: the one per-link schema
/// (`sender::schema::LINK_COLUMNS`, which the simulator writes too), so
/// `bbrlab plot` and every reader take either file.
pub const LINK_CSV_HEADER: [&str; sender::schema::LINK_COLUMNS.len()] =
    names(&sender::schema::LINK_COLUMNS);

/// The names of `columns`, in order (a const fn, so the header above is
/// made from the schema when compiling).
const fn names<const N: usize>(columns: &[sender::schema::Column; N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = columns[i].name;
        i += 1;
    }
    out
}

/// CSV files: `packets.csv` (one row per packet) and `link.csv` (the
/// simulator's queue schema, so `bbrlab plot` reads it). Written through
/// the `csv` crate, like every CSV bbrlab writes, so quoting is right
/// whatever a cell holds.
///
/// The rows are formatted and written by a thread of their own, not by
/// the forwarder that calls [`Log::packet`]: the forwarder runs under
/// `SCHED_FIFO` and every packet's release waits on it, while a file
/// write can block for milliseconds when the machine is flushing dirty
/// pages (a build writing its artefacts, say), and formatting fourteen
/// cells costs microseconds a packet. The forwarder only reads the header
/// fields the log keeps and sends a fixed-size row down a channel, which
/// holds whatever the writer has not caught up with: no row is dropped,
/// and a write error reaches the caller at the next call or at
/// [`CsvLog::finish`].
pub struct CsvLog {
    rows: Option<mpsc::Sender<Row>>,
    writer: Option<std::thread::JoinHandle<io::Result<()>>>,
}

/// What the forwarder hands the writing thread.
enum Row {
    Packet(PacketRow),
    Link(LinkSample),
}

/// One packet's row of `packets.csv`, before formatting: the record
/// (without the packet it lent) and the header fields read from the
/// packet on the forwarder's side.
#[derive(Clone, Copy, Debug)]
struct PacketRow {
    record: PacketRecord<'static>,
    ports: Option<(u16, u16)>,
    tcp: Option<TcpFields>,
}

impl PacketRow {
    fn of(p: &PacketRecord) -> PacketRow {
        PacketRow {
            record: PacketRecord { packet: &[], ..*p },
            ports: transport_ports(p.packet),
            tcp: tcp_fields(p.packet),
        }
    }

    fn write(&self, w: &mut csv::Writer<BufWriter<File>>) -> io::Result<()> {
        let (p, ports, tcp) = (&self.record, self.ports, self.tcp);
        w.write_record([
            secs(Some(p.enqueue_ns)),
            secs(p.dequeue_ns),
            secs(p.scheduled_ns),
            secs(p.released_ns),
            DIRS[p.direction].to_string(),
            p.bytes.to_string(),
            p.dropped.map_or("", DropReason::name).to_string(),
            match (p.dropped, p.ce) {
                (Some(_), _) => "",
                (None, true) => "1",
                (None, false) => "0",
            }
            .to_string(),
            ports.map_or(String::new(), |(s, _)| s.to_string()),
            ports.map_or(String::new(), |(_, d)| d.to_string()),
            tcp.map_or(String::new(), |t| t.seq.to_string()),
            tcp.map_or(String::new(), |t| t.ack.to_string()),
            tcp.map_or(String::new(), |t| t.flags.as_str().to_string()),
            tcp.map_or(String::new(), |t| t.window.to_string()),
        ])
        .map_err(io_error)
    }
}

/// The I/O error inside a `csv` error, so the caller sees its kind (a
/// full disk as `StorageFull`, not as an opaque CSV failure).
fn io_error(e: csv::Error) -> io::Error {
    if !e.is_io_error() {
        return io::Error::other(e);
    }
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => io::Error::other(format!("{other:?}")),
    }
}

impl CsvLog {
    /// Creates both files in `dir` (errors here, on the caller's thread)
    /// and starts the thread that writes them.
    pub fn create(dir: &Path) -> io::Result<CsvLog> {
        std::fs::create_dir_all(dir)?;
        let open = |name: &str, header: &[&str]| -> io::Result<csv::Writer<BufWriter<File>>> {
            let mut w = csv::Writer::from_writer(BufWriter::new(File::create(dir.join(name))?));
            w.write_record(header)?;
            Ok(w)
        };
        let mut packets = open("packets.csv", &PACKETS_CSV_HEADER)?;
        let mut link = open("link.csv", &LINK_CSV_HEADER)?;
        let (tx, rx) = mpsc::channel::<Row>();
        let writer = std::thread::Builder::new().name("emu-log".into()).spawn(
            move || -> io::Result<()> {
                // Whatever the thread that made the log runs under, the
                // writer must not compete with the forwarder.
                let _ = crate::rt::normal_scheduling();
                for row in rx {
                    match row {
                        Row::Packet(p) => p.write(&mut packets)?,
                        // By the schema's names, in its order: a column the
                        // schema gains is written as soon as
                        // `LinkSample::cell` knows it.
                        Row::Link(s) => link
                            .write_record(
                                LINK_CSV_HEADER
                                    .iter()
                                    .map(|name| s.cell(name).unwrap_or_default()),
                            )
                            .map_err(io_error)?,
                    }
                }
                packets.flush()?;
                link.flush()
            },
        )?;
        Ok(CsvLog {
            rows: Some(tx),
            writer: Some(writer),
        })
    }

    /// Waits for the writer to write every row sent so far and flush both
    /// files; its first error, if it had one.
    pub fn finish(mut self) -> io::Result<()> {
        self.stop_writer()
    }

    /// Closes the channel and waits for the writer: its result, once.
    fn stop_writer(&mut self) -> io::Result<()> {
        self.rows = None;
        match self.writer.take().map(|h| h.join()) {
            None => Ok(()),
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(io::Error::other("the log's writing thread panicked")),
        }
    }

    /// Sends a row; if the writer has stopped (it stops only on an
    /// error), that error.
    fn send(&mut self, row: Row) -> io::Result<()> {
        let sent = match &self.rows {
            Some(tx) => tx.send(row).is_ok(),
            None => false,
        };
        if sent {
            return Ok(());
        }
        match self.stop_writer() {
            Err(e) => Err(e),
            Ok(()) => Err(io::Error::other("the log was already finished")),
        }
    }
}

/// A log dropped without [`CsvLog::finish`] (the forwarder failed) still
/// writes what it was given before its thread ends.
impl Drop for CsvLog {
    fn drop(&mut self) {
        let _ = self.stop_writer();
    }
}

fn secs(ns: Option<u64>) -> String {
    ns.map_or(String::new(), |v| format!("{:.6}", v as f64 / 1e9))
}

impl Log for CsvLog {
    fn packet(&mut self, p: &PacketRecord) -> io::Result<()> {
        self.send(Row::Packet(PacketRow::of(p)))
    }
    fn link_sample(&mut self, s: &LinkSample) -> io::Result<()> {
        self.send(Row::Link(*s))
    }
}
