//! The forwarding engine: reads IP packets from one TUN device, asks the
//! link model when each leaves (or whether it is dropped), and writes it
//! into the other TUN device at that instant.
//!
//! One dedicated thread does everything. It waits with `ppoll` (nanosecond
//! timeout) until shortly before the next release, then spins, reading any
//! newly arrived packets while it does, so releases land within
//! microseconds of the model's schedule rather than a scheduler tick late.

use crate::netns::{Topology, Tun};
use link::{Direction, DropReason, ResolvedDirection, Verdict};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Below this distance to the next release the thread spins instead of
/// sleeping: a sleeping thread wakes tens of µs late on a loaded machine.
const SPIN_NS: u64 = 150_000;
/// Largest packet a TUN device hands over (MTU 1500 plus slack).
const BUF: usize = 2048;
/// Packets read from one device before looking at the other.
const BATCH: usize = 64;

/// What the forwarder runs.
#[derive(Clone, Debug)]
pub struct ForwardConfig {
    /// Client → server direction (the data direction for an upload).
    pub forward: ResolvedDirection,
    /// Server → client direction.
    pub reverse: ResolvedDirection,
    /// Seed for the model's randomness (loss, jitter).
    pub seed: u64,
    /// Interval of the queue samples in the log (0: none).
    pub sample_interval_ns: u64,
}

/// One packet's fate, for the per-packet log.
#[derive(Clone, Copy, Debug)]
pub struct PacketRecord {
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
}

/// Where the forwarder reports packets and queue samples.
pub trait Log {
    /// One packet, once its fate is known.
    fn packet(&mut self, p: &PacketRecord) -> io::Result<()>;
    /// A queue sample per direction.
    fn link_sample(
        &mut self,
        t_ns: u64,
        direction: usize,
        queue_packets: u64,
        queue_bytes: u64,
        queue_delay_ns: u64,
        drops: u64,
    ) -> io::Result<()>;
}

/// A log that keeps nothing.
pub struct NoLog;

impl Log for NoLog {
    fn packet(&mut self, _: &PacketRecord) -> io::Result<()> {
        Ok(())
    }
    fn link_sample(&mut self, _: u64, _: usize, _: u64, _: u64, _: u64, _: u64) -> io::Result<()> {
        Ok(())
    }
}

const DIRS: [&str; 2] = ["forward", "reverse"];

/// CSV files: `packets.csv` (one row per packet) and `link.csv` (the
/// simulator's queue schema, so `bbrlab plot` reads it).
pub struct CsvLog {
    packets: BufWriter<File>,
    link: BufWriter<File>,
}

impl CsvLog {
    /// Creates both files in `dir`.
    pub fn create(dir: &Path) -> io::Result<CsvLog> {
        std::fs::create_dir_all(dir)?;
        let mut packets = BufWriter::new(File::create(dir.join("packets.csv"))?);
        writeln!(
            packets,
            "enqueue_s,dequeue_s,scheduled_s,released_s,direction,bytes,dropped"
        )?;
        let mut link = BufWriter::new(File::create(dir.join("link.csv"))?);
        writeln!(
            link,
            "time_s,direction,queue_packets,queue_bytes,queue_delay_ms,drops"
        )?;
        Ok(CsvLog { packets, link })
    }

    /// Flushes both files.
    pub fn finish(mut self) -> io::Result<()> {
        self.packets.flush()?;
        self.link.flush()
    }
}

fn secs(ns: Option<u64>) -> String {
    ns.map_or(String::new(), |v| format!("{:.6}", v as f64 / 1e9))
}

impl Log for CsvLog {
    fn packet(&mut self, p: &PacketRecord) -> io::Result<()> {
        writeln!(
            self.packets,
            "{},{},{},{},{},{},{}",
            secs(Some(p.enqueue_ns)),
            secs(p.dequeue_ns),
            secs(p.scheduled_ns),
            secs(p.released_ns),
            DIRS[p.direction],
            p.bytes,
            p.dropped.map_or("", drop_name)
        )
    }
    fn link_sample(
        &mut self,
        t_ns: u64,
        direction: usize,
        queue_packets: u64,
        queue_bytes: u64,
        queue_delay_ns: u64,
        drops: u64,
    ) -> io::Result<()> {
        writeln!(
            self.link,
            "{:.6},{},{queue_packets},{queue_bytes},{:.3},{drops}",
            t_ns as f64 / 1e9,
            DIRS[direction],
            queue_delay_ns as f64 / 1e6
        )
    }
}

fn drop_name(r: DropReason) -> &'static str {
    match r {
        DropReason::RandomLoss => "loss",
        DropReason::Policer => "policer",
        DropReason::QueueFull => "queue",
        DropReason::Codel => "codel",
    }
}

/// Histogram of release errors in 1 µs buckets up to 100 ms.
#[derive(Clone, Debug)]
pub struct ErrorHistogram {
    counts: Vec<u64>,
    total: u64,
}

impl Default for ErrorHistogram {
    fn default() -> Self {
        ErrorHistogram {
            counts: vec![0; 100_001],
            total: 0,
        }
    }
}

impl ErrorHistogram {
    /// Records one error in ns.
    pub fn record(&mut self, ns: u64) {
        let us = ((ns / 1000) as usize).min(self.counts.len() - 1);
        self.counts[us] += 1;
        self.total += 1;
    }
    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.total
    }
    /// The `q` quantile in µs (upper edge of its bucket).
    pub fn quantile_us(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(i as u64 + 1);
            }
        }
        None
    }
}

/// Counters from a run.
#[derive(Clone, Debug, Default)]
pub struct ForwardStats {
    /// Packets written out, per direction.
    pub forwarded: [u64; 2],
    /// Bytes written out, per direction.
    pub forwarded_bytes: [u64; 2],
    /// Packets dropped by the model, per direction.
    pub dropped: [u64; 2],
    /// Non-IPv4 packets discarded (IPv6 neighbour discovery and the like).
    pub not_ipv4: u64,
    /// |actual release − scheduled release| of every forwarded packet.
    pub release_error: ErrorHistogram,
}

struct Slot {
    buf: Box<[u8; BUF]>,
    len: usize,
    dir: usize,
    enqueue_ns: u64,
    dequeue_ns: u64,
}

/// Forwards packets between the topology's two TUN devices until `stop`
/// is set. Per-packet cost is two system calls and no allocation once the
/// buffer pool has grown to the number of packets in flight.
pub fn run(
    topo: &Topology,
    cfg: &ForwardConfig,
    stop: &AtomicBool,
    log: &mut dyn Log,
) -> io::Result<ForwardStats> {
    let tuns: [&Tun; 2] = [&topo.client_tun, &topo.server_tun];
    let mut dirs = [
        Direction::new(&cfg.forward, cfg.seed),
        Direction::new(&cfg.reverse, cfg.seed ^ 0x5DEE_CE66_D1CE_4E5B),
    ];
    let start = Instant::now();
    let now_ns = || start.elapsed().as_nanos() as u64;
    let mut stats = ForwardStats::default();
    let mut slots: Vec<Option<Slot>> = Vec::new();
    let mut free_slots: Vec<usize> = Vec::new();
    let mut pool: Vec<Box<[u8; BUF]>> = Vec::new();
    let mut pending: BinaryHeap<Reverse<(u64, u64, usize)>> = BinaryHeap::new();
    let mut held: [HashMap<u64, usize>; 2] = [HashMap::new(), HashMap::new()];
    let mut releases = Vec::new();
    let mut seq = 0u64;
    let mut last_sojourn = [0u64; 2];
    let mut next_sample = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let now = now_ns();
        // Read what has arrived on both sides.
        for d in 0..2 {
            for _ in 0..BATCH {
                let mut buf = pool.pop().unwrap_or_else(|| Box::new([0u8; BUF]));
                let Some(n) = tuns[d].recv(&mut buf[..])? else {
                    pool.push(buf);
                    break;
                };
                if n == 0 || buf[0] >> 4 != 4 {
                    stats.not_ipv4 += 1;
                    pool.push(buf);
                    continue;
                }
                let verdict = dirs[d].enqueue(now, n as u32);
                let (dequeue_ns, arrive, held_id) = match verdict {
                    Verdict::Deliver {
                        dequeue_ns,
                        arrive_ns,
                        ..
                    } => (dequeue_ns, Some(arrive_ns), None),
                    Verdict::Held { id, dequeue_ns, .. } => (dequeue_ns, None, Some(id)),
                    Verdict::Drop { reason, .. } => {
                        stats.dropped[d] += 1;
                        log.packet(&PacketRecord {
                            direction: d,
                            bytes: n,
                            enqueue_ns: now,
                            dequeue_ns: None,
                            scheduled_ns: None,
                            released_ns: None,
                            dropped: Some(reason),
                        })?;
                        pool.push(buf);
                        continue;
                    }
                };
                last_sojourn[d] = dequeue_ns - now;
                let slot = Slot {
                    buf,
                    len: n,
                    dir: d,
                    enqueue_ns: now,
                    dequeue_ns,
                };
                let i = match free_slots.pop() {
                    Some(i) => {
                        slots[i] = Some(slot);
                        i
                    }
                    None => {
                        slots.push(Some(slot));
                        slots.len() - 1
                    }
                };
                if let Some(at) = arrive {
                    seq += 1;
                    pending.push(Reverse((at, seq, i)));
                } else if let Some(id) = held_id {
                    held[d].insert(id, i);
                }
            }
        }
        // Aggregated packets whose batch is complete or timed out.
        for d in 0..2 {
            dirs[d].release_due(now, &mut releases);
            for r in releases.drain(..) {
                if let Some(i) = held[d].remove(&r.id) {
                    seq += 1;
                    pending.push(Reverse((r.arrive_ns, seq, i)));
                }
            }
        }
        // Release everything that is due.
        let now = now_ns();
        while let Some(&Reverse((at, _, i))) = pending.peek() {
            if at > now {
                break;
            }
            pending.pop();
            let slot = slots[i].take().expect("pending slots are filled");
            free_slots.push(i);
            let out = 1 - slot.dir;
            tuns[out].send(&slot.buf[..slot.len])?;
            let released = now_ns();
            stats.forwarded[slot.dir] += 1;
            stats.forwarded_bytes[slot.dir] += slot.len as u64;
            stats.release_error.record(released.abs_diff(at));
            log.packet(&PacketRecord {
                direction: slot.dir,
                bytes: slot.len,
                enqueue_ns: slot.enqueue_ns,
                dequeue_ns: Some(slot.dequeue_ns),
                scheduled_ns: Some(at),
                released_ns: Some(released),
                dropped: None,
            })?;
            pool.push(slot.buf);
        }
        if cfg.sample_interval_ns > 0 && now >= next_sample {
            for (d, dir) in dirs.iter().enumerate() {
                let q = dir.queue(now);
                log.link_sample(
                    now,
                    d,
                    q.packets,
                    q.bytes,
                    last_sojourn[d],
                    dir.stats().dropped_total(),
                )?;
            }
            next_sample = now + cfg.sample_interval_ns;
        }
        // Wait for the next release, a new packet, or the next sample.
        let mut next = pending.peek().map_or(u64::MAX, |r| r.0 .0);
        for dir in &dirs {
            if let Some(t) = dir.next_release_ns() {
                next = next.min(t);
            }
        }
        if cfg.sample_interval_ns > 0 {
            next = next.min(next_sample);
        }
        let now = now_ns();
        let wait = next.saturating_sub(now);
        if wait > SPIN_NS {
            // Sleep until shortly before it (at most 50 ms, to notice `stop`).
            let sleep = (wait - SPIN_NS).min(50_000_000);
            poll_readable(tuns, sleep)?;
        }
        // Otherwise spin: loop straight back, reading as we go.
    }
    Ok(stats)
}

/// Waits up to `ns` for either device to become readable.
fn poll_readable(tuns: [&Tun; 2], ns: u64) -> io::Result<()> {
    let mut fds = [
        libc::pollfd {
            fd: tuns[0].raw(),
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: tuns[1].raw(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: fds and ts are valid for the call; no signal mask change.
    let r = unsafe { libc::ppoll(fds.as_mut_ptr(), 2, &ts, std::ptr::null()) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(())
}
