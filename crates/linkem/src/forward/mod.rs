//! The forwarding engine: reads IP packets from one TUN device, asks the
//! link model when each leaves (or whether it is dropped), and writes it
//! into the other TUN device at that instant, never before.
//!
//! One dedicated thread does everything. It waits with `ppoll` (nanosecond
//! timeout) until shortly before the next release, then spins, reading any
//! newly arrived packets while it does, so releases land within
//! microseconds of the model's schedule rather than a scheduler tick late.
//! Every packet is stamped with the clock right after its own read, so a
//! packet read late in a pass is not credited with the pass's start.

mod error_histogram;
mod log;
mod wait;

pub use error_histogram::ErrorHistogram;
pub use log::{CsvLog, LinkSample, Log, NoLog, PacketRecord, LINK_CSV_HEADER, PACKETS_CSV_HEADER};
pub use wait::{Wait, WaitPlanner};

use crate::netns::{Topology, Tun};
use crate::rt::RealtimeStatus;
use crate::stall::StallMeter;
use link::{Direction, DropReason, Ecn, ResolvedDirection, Verdict};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Below this distance to the next release the thread spins instead of
/// sleeping: a sleeping thread wakes tens of µs late on a loaded machine.
const SPIN_NS: u64 = 150_000;
/// The CPU budget's accounting window: see [`WaitPlanner`].
const CPU_WINDOW_NS: u64 = 100_000_000;
/// CPU the forwarding thread may use per window before it stops spinning
/// (70 %): well under the kernel's default RT throttling at 95 %, and it
/// leaves most of a core to the programs under test.
const MAX_CPU_PER_WINDOW_NS: u64 = 70_000_000;
/// Longest single sleep, so the loop notices `stop` promptly.
const MAX_SLEEP_NS: u64 = 50_000_000;
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
    /// Ask for real-time scheduling for the forwarding thread (see
    /// [`crate::rt`]); without it a busy machine delays releases by
    /// milliseconds. Falls back, with a warning, where not permitted.
    pub realtime: bool,
    /// Per-port extra delay, jitter and loss after the shared directions
    /// ([`crate::ports`]); empty: every packet sees the shared path only.
    pub ports: Vec<crate::ports::PortPath>,
    /// Forward hops after `forward`, in series ([`crate::hops`]); empty:
    /// one bottleneck.
    pub hops: Vec<ResolvedDirection>,
    /// Delay schedules in place of `forward`'s and `reverse`'s constant
    /// delay (which must then be 0), timed from the forwarder's start and
    /// applied as the simulator applies them: to each packet as it leaves
    /// the queue, keeping the order unless the schedule reorders
    /// ([`link::ScheduledDelay`]). `[None, None]`: constant delays.
    pub delay_schedules: [Option<link::DelaySchedule>; 2],
}

/// FQ-CoDel's flow key for an IPv4 packet: a hash of its 5-tuple
/// (addresses, protocol, and for TCP, UDP, SCTP and UDP-Lite the ports;
/// RFC 8290 §4.1.1), or of the 3-tuple for other protocols or fragments
/// after the first. FNV-1a: fixed, so a run's classification repeats.
pub fn flow_key(pkt: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: &[u8]| {
        for &x in b {
            h ^= u64::from(x);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    if pkt.len() < 20 {
        eat(pkt);
        return h;
    }
    let ihl = usize::from(pkt[0] & 0x0f) * 4;
    let proto = pkt[9];
    eat(&pkt[12..20]);
    eat(&[proto]);
    let frag_offset = u16::from_be_bytes([pkt[6], pkt[7]]) & 0x1fff;
    if matches!(proto, 6 | 17 | 132 | 136) && frag_offset == 0 && pkt.len() >= ihl + 4 && ihl >= 20
    {
        eat(&pkt[ihl..ihl + 4]);
    }
    h
}

/// The source and destination ports of an IPv4 TCP or UDP packet, or
/// of the first fragment of one; `None` for other protocols, later
/// fragments and packets too short to hold them.
pub fn transport_ports(pkt: &[u8]) -> Option<(u16, u16)> {
    if pkt.len() < 20 || pkt[0] >> 4 != 4 {
        return None;
    }
    let ihl = usize::from(pkt[0] & 0x0f) * 4;
    let frag_offset = u16::from_be_bytes([pkt[6], pkt[7]]) & 0x1fff;
    if !matches!(pkt[9], 6 | 17) || frag_offset != 0 || ihl < 20 || pkt.len() < ihl + 4 {
        return None;
    }
    let port = |i: usize| u16::from_be_bytes([pkt[i], pkt[i + 1]]);
    Some((port(ihl), port(ihl + 2)))
}

/// The TCP header fields the per-packet log keeps, so a run can be read
/// segment by segment (which segment an ACK covers, where PSH falls,
/// the window offered) without a packet capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpFields {
    /// Sequence number, as on the wire (not relative to the ISN).
    pub seq: u32,
    /// Acknowledgment number, as on the wire.
    pub ack: u32,
    /// The flags, one letter each in header bit order: `F` FIN, `S` SYN,
    /// `R` RST, `P` PSH, `.` ACK, `U` URG, `E` ECE, `W` CWR (tcpdump's
    /// letters).
    pub flags: TcpFlagLetters,
    /// The window field, before the window scale is applied.
    pub window: u16,
}

/// A TCP header's flags as letters ([`TcpFields::flags`]); up to eight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpFlagLetters {
    letters: [u8; 8],
    len: u8,
}

impl TcpFlagLetters {
    /// The letters, e.g. `P.` for a data segment with PSH and ACK.
    pub fn as_str(&self) -> &str {
        // Only ASCII letters and '.' are ever stored.
        std::str::from_utf8(&self.letters[..self.len as usize]).unwrap_or("")
    }
}

/// The TCP header of an IPv4 packet that is not a fragment; `None` for
/// other protocols, fragments and packets too short or malformed to hold
/// one (read with `etherparse`).
pub fn tcp_fields(pkt: &[u8]) -> Option<TcpFields> {
    let ip = etherparse::Ipv4Slice::from_slice(pkt).ok()?;
    if ip.payload_ip_number() != etherparse::IpNumber::TCP || ip.is_payload_fragmented() {
        return None;
    }
    let tcp = etherparse::TcpHeaderSlice::from_slice(ip.payload().payload).ok()?;
    let mut flags = TcpFlagLetters {
        letters: [0; 8],
        len: 0,
    };
    for (on, letter) in [
        (tcp.fin(), b'F'),
        (tcp.syn(), b'S'),
        (tcp.rst(), b'R'),
        (tcp.psh(), b'P'),
        (tcp.ack(), b'.'),
        (tcp.urg(), b'U'),
        (tcp.ece(), b'E'),
        (tcp.cwr(), b'W'),
    ] {
        if on {
            flags.letters[flags.len as usize] = letter;
            flags.len += 1;
        }
    }
    Some(TcpFields {
        seq: tcp.sequence_number(),
        ack: tcp.acknowledgment_number(),
        flags,
        window: tcp.window_size(),
    })
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
    /// Packets whose IP header was set to CE because the model marked
    /// them, per direction (equal to the model's
    /// [`link::DirectionStats::marked_ce`]).
    pub marked_ce: [u64; 2],
    /// Non-IPv4 packets discarded (IPv6 neighbour discovery and the like).
    pub not_ipv4: u64,
    /// Actual release − scheduled release of every forwarded packet.
    pub release_error: ErrorHistogram,
    /// Time the loop spent spinning (waiting without sleeping), ns.
    pub spin_ns: u64,
    /// CPU time the forwarding thread used, ns (work and spinning; capped
    /// per window by [`WaitPlanner`]).
    pub cpu_ns: u64,
    /// How long the loop ran, ns.
    pub wall_ns: u64,
    /// What the forwarding thread got of real-time scheduling.
    pub realtime: RealtimeStatus,
    /// Times the forwarder could not run while a packet fell due
    /// ([`crate::stall`]).
    pub stalls: u64,
    /// Their total, ns: wall time in which some packet was overdue by
    /// more than [`crate::stall::STALL_NS`].
    pub stalled_ns: u64,
    /// The longest, ns.
    pub longest_stall_ns: u64,
}

/// What the forwarding loop needs from the outside: a clock, the two
/// sides' packets and a way to wait. The TUN devices implement it for
/// real ([`run`]); the unit tests implement it with a simulated clock, so
/// the loop's timing guarantees are checked without root or real time.
pub trait PacketIo {
    /// Monotonic time, ns since an arbitrary origin. Read after every
    /// `recv` that returned a packet (its arrival stamp) and before every
    /// `send` (the release check).
    fn now_ns(&mut self) -> u64;
    /// Reads one packet that arrived on `side` (0 client, 1 server);
    /// `Ok(None)` when none is waiting.
    fn recv(&mut self, side: usize, buf: &mut [u8]) -> io::Result<Option<usize>>;
    /// Writes one packet out of `side`.
    fn send(&mut self, side: usize, pkt: &[u8]) -> io::Result<()>;
    /// Sleeps up to `ns`, returning early when either side has a packet.
    fn wait(&mut self, ns: u64) -> io::Result<()>;
    /// CPU time the calling thread has used, ns: what the spin budget
    /// counts.
    fn cpu_ns(&mut self) -> u64;
}

/// The real [`PacketIo`]: two TUN devices and the monotonic clock.
struct TunIo<'a> {
    tuns: [&'a Tun; 2],
    start: Instant,
}

impl PacketIo for TunIo<'_> {
    fn now_ns(&mut self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }
    fn recv(&mut self, side: usize, buf: &mut [u8]) -> io::Result<Option<usize>> {
        self.tuns[side].recv(buf)
    }
    fn send(&mut self, side: usize, pkt: &[u8]) -> io::Result<()> {
        self.tuns[side].send(pkt)
    }
    fn wait(&mut self, ns: u64) -> io::Result<()> {
        poll_readable(self.tuns, ns)
    }
    fn cpu_ns(&mut self) -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is valid for the call to fill.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }
}

struct Slot {
    buf: Box<[u8; BUF]>,
    len: usize,
    dir: usize,
    enqueue_ns: u64,
    dequeue_ns: u64,
    ce: bool,
}

/// Forwards packets between the topology's two TUN devices until `stop`
/// is set. Per-packet cost is two system calls and no allocation once the
/// buffer pool has grown to the number of packets in flight. With
/// `cfg.realtime`, the calling thread first asks for real-time scheduling
/// (see [`crate::rt`]); what it got is in the returned stats.
pub fn run(
    topo: &Topology,
    cfg: &ForwardConfig,
    stop: &AtomicBool,
    log: &mut dyn Log,
) -> io::Result<ForwardStats> {
    let (realtime, _latency) = if cfg.realtime {
        let (st, latency) = crate::rt::prepare_forwarding_thread();
        // Once per process: a self-test starts several forwarders.
        static WARNED: std::sync::Once = std::sync::Once::new();
        WARNED.call_once(|| {
            for w in &st.warnings {
                eprintln!("linkem: {w}");
            }
        });
        (st, latency)
    } else {
        (RealtimeStatus::default(), crate::rt::LatencyRequest::none())
    };
    let mut tun_io = TunIo {
        tuns: [&topo.client_tun, &topo.server_tun],
        start: Instant::now(),
    };
    let mut stats = run_io(&mut tun_io, cfg, stop, log)?;
    stats.realtime = realtime;
    Ok(stats)
}

/// The forwarding loop over any [`PacketIo`]; see [`run`].
///
/// Its timing guarantee: a packet is written no earlier than the moment
/// it was read plus the model's queueing, serialisation and delay. Each
/// packet is stamped with a clock reading taken after its own `recv`
/// returned (a stamp taken once per pass would be too early for every
/// packet that arrived while the pass was reading, or while the thread was
/// preempted in it, and the path would be that much shorter), and the
/// clock is read again before each write, which happens only if the
/// scheduled time has come.
pub fn run_io(
    io: &mut dyn PacketIo,
    cfg: &ForwardConfig,
    stop: &AtomicBool,
    log: &mut dyn Log,
) -> io::Result<ForwardStats> {
    let mut dirs = [
        Direction::new(&cfg.forward, cfg.seed),
        Direction::new(&cfg.reverse, cfg.seed ^ 0x5DEE_CE66_D1CE_4E5B),
    ];
    for (d, which, s) in [
        (&cfg.forward, "forward", &cfg.delay_schedules[0]),
        (&cfg.reverse, "reverse", &cfg.delay_schedules[1]),
    ] {
        if s.is_some() && d.delay_ns != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the {which} direction has a delay schedule and a delay of {} ns; the schedule replaces the delay, which must be 0", d.delay_ns),
            ));
        }
    }
    let mut wires = cfg
        .delay_schedules
        .clone()
        .map(|s| s.map(link::ScheduledDelay::new));
    let mut port_paths = crate::ports::PortPaths::new(&cfg.ports, cfg.seed);
    let mut tandem = crate::hops::Tandem::new(&cfg.hops, cfg.seed)
        .map_err(|m| io::Error::new(io::ErrorKind::InvalidInput, m))?;
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
    let (wall_start, cpu_start) = (io.now_ns(), io.cpu_ns());
    let mut planner = WaitPlanner::new(SPIN_NS, CPU_WINDOW_NS, MAX_CPU_PER_WINDOW_NS);
    let mut stalls = StallMeter::new();
    while !stop.load(Ordering::Relaxed) {
        // Read what has arrived on both sides.
        for d in 0..2 {
            for _ in 0..BATCH {
                let mut buf = pool.pop().unwrap_or_else(|| Box::new([0u8; BUF]));
                let Some(n) = io.recv(d, &mut buf[..])? else {
                    pool.push(buf);
                    break;
                };
                // This packet's own arrival stamp: it was in the device no
                // later than now.
                let now = io.now_ns();
                if n == 0 || buf[0] >> 4 != 4 {
                    stats.not_ipv4 += 1;
                    pool.push(buf);
                    continue;
                }
                let cp = crate::ecn::codepoint(&buf[..n]).unwrap_or(Ecn::NotEct);
                let verdict = dirs[d].enqueue_flow(now, n as u32, cp, flow_key(&buf[..n]));
                let (dequeue_ns, arrive, held_id, ce) = match verdict {
                    // Its departure is decided later, at dequeue: the
                    // slot waits like a held one, times filled in then.
                    Verdict::Queued { id, .. } => (now, None, Some(id), false),
                    Verdict::Deliver {
                        dequeue_ns,
                        arrive_ns,
                        ce,
                        ..
                    } => (dequeue_ns, Some(arrive_ns), None, ce),
                    Verdict::Held {
                        id, dequeue_ns, ce, ..
                    } => (dequeue_ns, None, Some(id), ce),
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
                            ce: false,
                            packet: &buf[..n],
                        })?;
                        pool.push(buf);
                        continue;
                    }
                };
                // The model marked it: say so in the header (ECT → CE).
                if ce && cp != Ecn::Ce && crate::ecn::set_ce(&mut buf[..n]) {
                    stats.marked_ce[d] += 1;
                }
                if !matches!(verdict, Verdict::Queued { .. }) {
                    last_sojourn[d] = dequeue_ns - now;
                }
                let slot = Slot {
                    buf,
                    len: n,
                    dir: d,
                    enqueue_ns: now,
                    dequeue_ns,
                    ce,
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
                    let at = wires[d].as_mut().map_or(at, |w| w.arrive_ns(at));
                    let pkt = &mut slots[i].as_mut().expect("just filled").buf[..n];
                    let fate = tandem
                        .release_ns(d, pkt, at)
                        .and_then(|at| port_paths.release_ns(d, pkt, at));
                    match fate {
                        Ok(at) => {
                            seq += 1;
                            pending.push(Reverse((at, seq, i)));
                        }
                        Err(reason) => {
                            let buf =
                                port_drop(&mut slots, &mut free_slots, i, reason, &mut stats, log)?;
                            pool.push(buf);
                        }
                    }
                } else if let Some(id) = held_id {
                    held[d].insert(id, i);
                }
            }
        }
        // Aggregated packets whose batch is complete or timed out.
        let now = io.now_ns();
        for d in 0..2 {
            dirs[d].release_due(now, &mut releases);
            for r in releases.drain(..) {
                let Some(i) = held[d].remove(&r.id) else {
                    continue;
                };
                if let Some(reason) = r.drop {
                    // A dequeue-time discipline dropped it.
                    let slot = slots[i].take().expect("held slots are filled");
                    free_slots.push(i);
                    stats.dropped[d] += 1;
                    log.packet(&PacketRecord {
                        direction: d,
                        bytes: slot.len,
                        enqueue_ns: slot.enqueue_ns,
                        dequeue_ns: None,
                        scheduled_ns: None,
                        released_ns: None,
                        dropped: Some(reason),
                        ce: false,
                        packet: &slot.buf[..slot.len],
                    })?;
                    pool.push(slot.buf);
                    continue;
                }
                if let Some(slot) = slots[i].as_mut() {
                    if r.dequeue_ns > slot.dequeue_ns {
                        // Decided at dequeue: its times and mark come now.
                        slot.dequeue_ns = r.dequeue_ns;
                        last_sojourn[d] = r.dequeue_ns - slot.enqueue_ns;
                    }
                    if r.ce && !slot.ce {
                        slot.ce = true;
                        let n = slot.len;
                        if crate::ecn::codepoint(&slot.buf[..n]) != Some(Ecn::Ce)
                            && crate::ecn::set_ce(&mut slot.buf[..n])
                        {
                            stats.marked_ce[d] += 1;
                        }
                    }
                }
                // Then the hops after the first and the packet's own port
                // path, if it has them.
                let slot = slots[i].as_mut().expect("held slots are filled");
                let pkt = &mut slot.buf[..slot.len];
                let at = wires[d]
                    .as_mut()
                    .map_or(r.arrive_ns, |w| w.arrive_ns(r.arrive_ns));
                let fate = tandem
                    .release_ns(d, pkt, at)
                    .and_then(|at| port_paths.release_ns(d, pkt, at));
                match fate {
                    Ok(at) => {
                        seq += 1;
                        pending.push(Reverse((at, seq, i)));
                    }
                    Err(reason) => {
                        let buf =
                            port_drop(&mut slots, &mut free_slots, i, reason, &mut stats, log)?;
                        pool.push(buf);
                    }
                }
            }
        }
        // Release everything that is due, reading the clock before each
        // write: a write never starts before its scheduled time.
        while let Some(&Reverse((at, _, i))) = pending.peek() {
            let now = io.now_ns();
            if at > now {
                break;
            }
            stalls.observe(at, now);
            pending.pop();
            let slot = slots[i].take().expect("pending slots are filled");
            free_slots.push(i);
            let out = 1 - slot.dir;
            io.send(out, &slot.buf[..slot.len])?;
            let released = io.now_ns();
            stats.forwarded[slot.dir] += 1;
            stats.forwarded_bytes[slot.dir] += slot.len as u64;
            stats.release_error.record_release(at, released);
            log.packet(&PacketRecord {
                direction: slot.dir,
                bytes: slot.len,
                enqueue_ns: slot.enqueue_ns,
                dequeue_ns: Some(slot.dequeue_ns),
                scheduled_ns: Some(at),
                released_ns: Some(released),
                dropped: None,
                ce: slot.ce,
                packet: &slot.buf[..slot.len],
            })?;
            pool.push(slot.buf);
        }
        let now = io.now_ns();
        if cfg.sample_interval_ns > 0 && now >= next_sample {
            for (d, dir) in dirs.iter().enumerate() {
                let q = dir.queue(now);
                log.link_sample(&LinkSample {
                    t_ns: now,
                    direction: d,
                    queue_packets: q.packets,
                    queue_bytes: q.bytes,
                    queue_delay_ns: last_sojourn[d],
                    drops: dir.stats().dropped_total(),
                    marked_ce: dir.stats().marked_ce,
                })?;
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
        let (now, cpu) = (io.now_ns(), io.cpu_ns());
        match planner.plan(now, next, cpu) {
            Wait::Sleep(ns) => io.wait(ns)?,
            // Loop straight back, reading as we go.
            Wait::Spin => {}
        }
    }
    stats.spin_ns = planner.total_spun_ns();
    stats.stalls = stalls.stalls();
    stats.stalled_ns = stalls.stalled_ns();
    stats.longest_stall_ns = stalls.longest_ns();
    stats.cpu_ns = io.cpu_ns().saturating_sub(cpu_start);
    stats.wall_ns = io.now_ns().saturating_sub(wall_start);
    Ok(stats)
}

/// Frees slot `i`, whose packet its port's own path dropped after the
/// shared direction let it through, and logs the drop; the caller returns
/// the buffer to its pool.
fn port_drop(
    slots: &mut [Option<Slot>],
    free_slots: &mut Vec<usize>,
    i: usize,
    reason: DropReason,
    stats: &mut ForwardStats,
    log: &mut dyn Log,
) -> io::Result<Box<[u8; BUF]>> {
    let slot = slots[i].take().expect("a filled slot");
    free_slots.push(i);
    stats.dropped[slot.dir] += 1;
    log.packet(&PacketRecord {
        direction: slot.dir,
        bytes: slot.len,
        enqueue_ns: slot.enqueue_ns,
        dequeue_ns: Some(slot.dequeue_ns),
        scheduled_ns: None,
        released_ns: None,
        dropped: Some(reason),
        ce: slot.ce,
        packet: &slot.buf[..slot.len],
    })?;
    Ok(slot.buf)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake device pair for the forwarding loop: a clock that advances
    /// 100 ns per reading and by each wait (at most 50 µs), the `offered`
    /// packets (time, bytes) arriving on side 0 in order, every written
    /// packet kept with the time it left, and `stop` set once the clock
    /// passes `until_ns`.
    struct ScriptedIo<'a> {
        t: u64,
        next: usize,
        offered: Vec<(u64, Vec<u8>)>,
        written: Vec<(u64, Vec<u8>)>,
        until_ns: u64,
        stop: &'a AtomicBool,
    }

    impl<'a> ScriptedIo<'a> {
        fn new(offered: Vec<(u64, Vec<u8>)>, until_ns: u64, stop: &'a AtomicBool) -> Self {
            ScriptedIo {
                t: 0,
                next: 0,
                offered,
                written: Vec::new(),
                until_ns,
                stop,
            }
        }
    }

    impl PacketIo for ScriptedIo<'_> {
        fn now_ns(&mut self) -> u64 {
            self.t += 100;
            self.t
        }
        fn recv(&mut self, side: usize, buf: &mut [u8]) -> io::Result<Option<usize>> {
            match self.offered.get(self.next) {
                Some((at, p)) if side == 0 && *at <= self.t => {
                    buf[..p.len()].copy_from_slice(p);
                    self.next += 1;
                    Ok(Some(p.len()))
                }
                _ => Ok(None),
            }
        }
        fn send(&mut self, _side: usize, p: &[u8]) -> io::Result<()> {
            self.written.push((self.t, p.to_vec()));
            Ok(())
        }
        fn wait(&mut self, ns: u64) -> io::Result<()> {
            self.t += ns.min(50_000);
            if self.t > self.until_ns {
                self.stop.store(true, Ordering::Relaxed);
            }
            Ok(())
        }
        fn cpu_ns(&mut self) -> u64 {
            0
        }
    }
    use link::{QueueConfig, RateSchedule};
    use std::collections::VecDeque;

    /// The log's rows are written by a thread of its own; when writing
    /// fails (here the files are `/dev/full`), the error reaches the
    /// forwarder, at a later row or at `finish`, and is not lost.
    #[test]
    fn a_failing_log_write_reaches_the_caller() {
        if !Path::new("/dev/full").exists() {
            return;
        }
        let d = std::env::temp_dir().join(format!("linkem-fulllog-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        for name in ["packets.csv", "link.csv"] {
            std::os::unix::fs::symlink("/dev/full", d.join(name)).unwrap();
        }
        let mut log = CsvLog::create(&d).unwrap();
        let pkt = tcp_packet(1, 40_000, 0, 100);
        let mut first_err = None;
        for i in 0..10_000u64 {
            let r = log.packet(&PacketRecord {
                direction: 0,
                bytes: 1500,
                enqueue_ns: i,
                dequeue_ns: Some(i + 1),
                scheduled_ns: Some(i + 2),
                released_ns: Some(i + 3),
                dropped: None,
                ce: false,
                packet: &pkt,
            });
            if let Err(e) = r {
                first_err = Some(e);
                break;
            }
        }
        let err = first_err
            .or_else(|| log.finish().err())
            .expect("no error from a full disk");
        let _ = std::fs::remove_dir_all(&d);
        assert_eq!(err.kind(), io::ErrorKind::StorageFull, "{err}");
    }

    /// packets.csv and link.csv, written through the `csv` crate, read
    /// back by column name: every row has the header's width, dropped
    /// packets leave their times empty and name the reason.
    #[test]
    fn the_csv_log_reads_back_by_column() {
        let d = std::env::temp_dir().join(format!("linkem-csvlog-{}", std::process::id()));
        let mut log = CsvLog::create(&d).unwrap();
        log.packet(&PacketRecord {
            direction: 0,
            bytes: 1500,
            enqueue_ns: 1_000_000,
            dequeue_ns: Some(2_000_000),
            scheduled_ns: Some(22_000_000),
            released_ns: Some(22_010_000),
            dropped: None,
            ce: true,
            packet: &tcp_packet(1, 40_000, 0, 100),
        })
        .unwrap();
        log.packet(&PacketRecord {
            direction: 1,
            bytes: 52,
            enqueue_ns: 3_000_000,
            dequeue_ns: None,
            scheduled_ns: None,
            released_ns: None,
            dropped: Some(DropReason::QueueFull),
            ce: false,
            packet: &[],
        })
        .unwrap();
        log.link_sample(&LinkSample {
            t_ns: 10_000_000,
            direction: 1,
            queue_packets: 3,
            queue_bytes: 4500,
            queue_delay_ns: 1_200_000,
            drops: 9,
            marked_ce: 4,
        })
        .unwrap();
        log.finish().unwrap();
        let read = |name: &str| {
            let mut r = csv::Reader::from_path(d.join(name)).unwrap();
            let h: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
            let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
            (h, rows)
        };
        let (h, rows) = read("packets.csv");
        assert_eq!(h, PACKETS_CSV_HEADER);
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(|r| r.len() == h.len()));
        assert_eq!(&rows[0][3], "0.022010");
        assert_eq!(&rows[0][7], "1");
        assert_eq!(
            (&rows[1][1], &rows[1][4], &rows[1][6], &rows[1][7]),
            ("", "reverse", "queue", "")
        );
        assert_eq!((&rows[0][8], &rows[0][9]), ("40000", "80"));
        assert_eq!((&rows[1][8], &rows[1][9]), ("", ""));
        let (h, rows) = read("link.csv");
        assert_eq!(h, LINK_CSV_HEADER);
        assert_eq!(rows[0].len(), h.len());
        let cell = |name: &str| &rows[0][h.iter().position(|c| c == name).unwrap()];
        for (name, want) in [
            ("time_s", "0.010000"),
            ("direction", "reverse"),
            ("queue_packets", "3"),
            ("queue_bytes", "4500"),
            ("queue_delay_ms", "1.200"),
            ("drops", "9"),
        ] {
            assert_eq!(cell(name), want, "{name}");
        }
        // The schema's CE column, once it has one.
        if h.iter().any(|c| c == "ce_marked") {
            assert_eq!(cell("ce_marked"), "4");
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    fn dir(rate_bps: Option<f64>, delay_ns: u64) -> ResolvedDirection {
        ResolvedDirection {
            rate: rate_bps.map_or(RateSchedule::Unlimited, RateSchedule::Constant),
            delay_ns,
            queue: QueueConfig::drop_tail(link::units::Size::Packets(100_000)),
            loss: None,
            jitter: None,
            policer: None,
            aggregation: None,
        }
    }

    /// A simulated machine: a clock that advances with every system call,
    /// packets that arrive on schedule, reads that are sometimes preempted
    /// for a long time (every `stall_every`-th read that finds a packet: a
    /// busy machine), and sleeps that overshoot.
    struct Sim<'a> {
        t: u64,
        /// Per side: (arrival ns, id, bytes), in arrival order.
        arrivals: [VecDeque<(u64, u64, usize)>; 2],
        arrival_of: HashMap<u64, (u64, usize, usize)>,
        /// (clock when the write started, side written to, id).
        sent: Vec<(u64, usize, u64)>,
        reads: u64,
        slept: u64,
        stall_every: u64,
        stall_ns: u64,
        oversleep_ns: u64,
        expected: usize,
        limit_ns: u64,
        stop: &'a AtomicBool,
    }

    impl<'a> Sim<'a> {
        fn new(stop: &'a AtomicBool, stall_every: u64, stall_ns: u64) -> Sim<'a> {
            Sim {
                t: 0,
                arrivals: [VecDeque::new(), VecDeque::new()],
                arrival_of: HashMap::new(),
                sent: Vec::new(),
                reads: 0,
                slept: 0,
                stall_every,
                stall_ns,
                oversleep_ns: 30_000,
                expected: 0,
                limit_ns: 10_000_000_000,
                stop,
            }
        }
        fn offer(&mut self, side: usize, at: u64, bytes: usize) {
            let id = self.arrival_of.len() as u64;
            self.arrivals[side].push_back((at, id, bytes));
            self.arrival_of.insert(id, (at, side, bytes));
            self.expected += 1;
        }
        fn advance(&mut self, ns: u64) {
            self.t += ns;
            if self.sent.len() >= self.expected || self.t > self.limit_ns {
                self.stop.store(true, Ordering::Relaxed);
            }
        }
    }

    impl PacketIo for Sim<'_> {
        fn now_ns(&mut self) -> u64 {
            self.advance(50);
            self.t
        }
        fn recv(&mut self, side: usize, buf: &mut [u8]) -> io::Result<Option<usize>> {
            self.advance(1_000);
            if self.arrivals[side].front().is_some_and(|p| p.0 <= self.t) {
                self.reads += 1;
                if self.stall_every > 0 && self.reads % self.stall_every == 0 {
                    // Preempted inside this read: whatever arrives
                    // meanwhile is what it returns.
                    self.advance(self.stall_ns);
                }
            }
            match self.arrivals[side].front() {
                Some(&(at, id, n)) if at <= self.t => {
                    self.arrivals[side].pop_front();
                    buf[0] = 0x45;
                    buf[1..9].copy_from_slice(&id.to_be_bytes());
                    Ok(Some(n))
                }
                _ => Ok(None),
            }
        }
        fn send(&mut self, side: usize, pkt: &[u8]) -> io::Result<()> {
            let id = u64::from_be_bytes(pkt[1..9].try_into().unwrap());
            self.sent.push((self.t, side, id));
            self.advance(2_000);
            Ok(())
        }
        fn wait(&mut self, ns: u64) -> io::Result<()> {
            let wake = self.t + ns + self.oversleep_ns;
            let first = self
                .arrivals
                .iter()
                .filter_map(|a| a.front().map(|p| p.0))
                .min()
                .unwrap_or(u64::MAX);
            let to = if first < wake {
                first.max(self.t) + self.oversleep_ns
            } else {
                wake
            };
            let d = to - self.t;
            self.slept += d;
            self.advance(d);
            Ok(())
        }
        fn cpu_ns(&mut self) -> u64 {
            // Busy whenever not asleep (stalls included: a conservative
            // reading for the budget).
            self.t - self.slept
        }
    }

    fn config(forward: ResolvedDirection, reverse: ResolvedDirection) -> ForwardConfig {
        ForwardConfig {
            forward,
            reverse,
            seed: 1,
            sample_interval_ns: 0,
            realtime: false,
            ports: Vec::new(),
            hops: Vec::new(),
            delay_schedules: [None, None],
        }
    }

    /// Serialisation time of `bytes` at `bps`, rounded up as the model does.
    fn ser_ns(bytes: usize, bps: Option<f64>) -> u64 {
        bps.map_or(0, |r| (bytes as f64 * 8.0 / r * 1e9).ceil() as u64)
    }

    /// Bursts client → server through 100 Mbit/s and single small packets
    /// back, on a machine that preempts every 7th read for 300 µs: every
    /// packet leaves no earlier than it arrived plus its serialisation
    /// plus the one-way delay, all of them get through, and the reverse
    /// direction (no queue) is late by at most a stall and a wake-up.
    /// Stamping a whole pass with its start would release the packets that
    /// arrived during a stall up to 300 µs early.
    #[test]
    fn no_packet_leaves_before_arrival_plus_serialisation_plus_delay() {
        let stop = AtomicBool::new(false);
        let mut sim = Sim::new(&stop, 7, 300_000);
        let (fwd_rate, delay) = (Some(100e6), 5_000_000);
        for burst in 0..100u64 {
            for k in 0..20 {
                sim.offer(0, burst * 2_000_000 + k * 3_000, 1500);
            }
        }
        for i in 0..200u64 {
            sim.offer(1, i * 1_000_000 + 417_000, 60);
        }
        let cfg = config(dir(fwd_rate, delay), dir(None, delay));
        let st = run_io(&mut sim, &cfg, &stop, &mut NoLog).unwrap();
        assert_eq!(sim.sent.len(), sim.expected, "not everything was forwarded");
        assert_eq!(st.release_error.early(), 0);
        let mut worst_reverse_late = 0;
        for &(t, side, id) in &sim.sent {
            let (at, from, bytes) = sim.arrival_of[&id];
            assert_eq!(side, 1 - from, "packet {id} went out the wrong side");
            let rate = if from == 0 { fwd_rate } else { None };
            let earliest = at + ser_ns(bytes, rate) + delay;
            assert!(
                t >= earliest,
                "packet {id} (side {from}) written at {t} ns, {} ns before {earliest}",
                earliest - t
            );
            if from == 1 {
                worst_reverse_late = worst_reverse_late.max(t - earliest);
            }
        }
        // A burst of 20 reads holds up to 3 stalls; add one, and reads,
        // writes and an overslept wake-up.
        assert!(
            worst_reverse_late <= 4 * 300_000 + 200_000,
            "reverse packets up to {worst_reverse_late} ns late"
        );
    }

    /// A forward delay schedule (5 ms, 20 ms from 100 ms, 2 ms from
    /// 200 ms) on a machine that preempts reads: each packet leaves no
    /// earlier than it left the queue plus the delay in force then, the
    /// packets keep their order when the delay falls (they bunch up, as
    /// on the simulator's wire), and a packet that left the queue in a
    /// piece is not held much past that piece's delay.
    #[test]
    fn a_delay_schedule_delays_by_the_piece_each_packet_leaves_in() {
        let stop = AtomicBool::new(false);
        let mut sim = Sim::new(&stop, 5, 200_000);
        for i in 0..300u64 {
            sim.offer(0, i * 1_000_000, 1000);
        }
        let schedule: link::DelaySchedule = toml::from_str::<toml::Table>(
            "s = { steps = [ { at = \"0s\", delay = \"5ms\" }, { at = \"100ms\", delay = \"20ms\" }, { at = \"200ms\", delay = \"2ms\" } ] }",
        )
        .unwrap()["s"]
            .clone()
            .try_into()
            .unwrap();
        let mut cfg = config(dir(None, 0), dir(None, 0));
        cfg.delay_schedules = [Some(schedule), None];
        run_io(&mut sim, &cfg, &stop, &mut NoLog).unwrap();
        assert_eq!(sim.sent.len(), 300);
        let delay_at = |t: u64| match t {
            t if t < 100_000_000 => 5_000_000,
            t if t < 200_000_000 => 20_000_000,
            _ => 2_000_000,
        };
        let mut last = 0;
        for &(t, _, id) in &sim.sent {
            let (at, _, _) = sim.arrival_of[&id];
            assert!(id >= last, "packet {id} overtook {last}");
            last = id;
            // Read within a stall of arriving: it left the queue (no rate)
            // between `at` and `at + stall`.
            assert!(
                t >= at + delay_at(at).min(delay_at(at + 200_000)),
                "packet {id}: {t} ns"
            );
            if (10_000_000..90_000_000).contains(&at) {
                assert!(
                    t <= at + 5_000_000 + 1_000_000,
                    "packet {id} held: {} ns",
                    t - at
                );
            }
            if (110_000_000..190_000_000).contains(&at) {
                assert!(
                    t >= at + 20_000_000 && t <= at + 21_000_000,
                    "packet {id}: {} ns",
                    t - at
                );
            }
        }
        // After the fall to 2 ms, the packets that left at 20 ms of delay
        // are still ahead: the first packets of the new piece wait for
        // them (kept in order), then the delay is 2 ms.
        let late = sim
            .sent
            .iter()
            .find(|x| sim.arrival_of[&x.2].0 == 250_000_000)
            .unwrap();
        assert!(late.0 - 250_000_000 < 3_000_000, "{}", late.0);
        // A delay with a schedule is refused.
        let mut bad = config(dir(None, 1_000_000), dir(None, 0));
        bad.delay_schedules = cfg.delay_schedules.clone();
        let stop = AtomicBool::new(false);
        let e = run_io(&mut Sim::new(&stop, 0, 0), &bad, &stop, &mut NoLog).unwrap_err();
        assert!(e.to_string().contains("must be 0"), "{e}");
    }

    /// A steady stream on a machine that takes the forwarder away for 5 ms
    /// twice: two stalls of about 5 ms each are counted, however many
    /// packets fell due in them.
    #[test]
    fn the_forwarders_stalls_are_measured() {
        let stop = AtomicBool::new(false);
        let mut sim = Sim::new(&stop, 400, 5_000_000);
        sim.oversleep_ns = 0;
        let rate = Some(50e6);
        // 1000 packets offered at 1.1x the link rate: a standing queue.
        let spacing = ser_ns(1500, rate) * 10 / 11;
        for k in 0..1000u64 {
            sim.offer(0, k * spacing, 1500);
        }
        let cfg = config(dir(rate, 2_000_000), dir(None, 2_000_000));
        let st = run_io(&mut sim, &cfg, &stop, &mut NoLog).unwrap();
        assert_eq!(st.forwarded[0], 1000);
        assert_eq!(st.stalls, 2, "one per stall");
        assert!(
            st.stalled_ns > 8_000_000 && st.stalled_ns <= 10_500_000,
            "stalled {} ns in two 5 ms stalls",
            st.stalled_ns
        );
        assert!(st.longest_stall_ns <= 5_250_000, "{}", st.longest_stall_ns);
    }

    /// Each packet's logged arrival stamp is no earlier than when it
    /// arrived, also for packets read late in a long pass.
    #[test]
    fn every_packet_is_stamped_after_its_own_read() {
        struct Stamps(Vec<(u64, u64)>);
        impl Log for Stamps {
            fn packet(&mut self, p: &PacketRecord) -> io::Result<()> {
                self.0.push((p.enqueue_ns, p.released_ns.unwrap_or(0)));
                Ok(())
            }
        }
        let stop = AtomicBool::new(false);
        let mut sim = Sim::new(&stop, 3, 100_000);
        // 64 packets arriving 50 µs apart: one pass reads many of them.
        for k in 0..64 {
            sim.offer(0, k * 50_000, 1000);
        }
        let cfg = config(dir(None, 1_000_000), dir(None, 1_000_000));
        let mut log = Stamps(Vec::new());
        run_io(&mut sim, &cfg, &stop, &mut log).unwrap();
        assert_eq!(log.0.len(), 64);
        // Packets leave in arrival order on an unshaped path; match them up.
        let mut arrivals: Vec<u64> = sim.arrival_of.values().map(|a| a.0).collect();
        arrivals.sort_unstable();
        let mut stamps: Vec<u64> = log.0.iter().map(|s| s.0).collect();
        stamps.sort_unstable();
        for (a, s) in arrivals.iter().zip(&stamps) {
            assert!(s >= a, "stamped {s} for a packet that arrived at {a}");
        }
        // And the stamps differ: not one reading for the whole pass.
        stamps.dedup();
        assert_eq!(stamps.len(), 64);
    }

    /// The release check reads the clock per packet: a backlog whose
    /// times fall due while earlier packets are being written goes out in
    /// the same pass, and nothing not yet due does.
    #[test]
    fn releases_are_due_when_written() {
        let stop = AtomicBool::new(false);
        let mut sim = Sim::new(&stop, 0, 0);
        sim.oversleep_ns = 0;
        for k in 0..50 {
            sim.offer(0, 1_000 + k * 500, 100);
        }
        let cfg = config(dir(None, 2_000_000), dir(None, 2_000_000));
        let st = run_io(&mut sim, &cfg, &stop, &mut NoLog).unwrap();
        assert_eq!(st.release_error.early(), 0);
        assert_eq!(st.forwarded[0], 50);
        for &(t, _, id) in &sim.sent {
            assert!(t >= sim.arrival_of[&id].0 + 2_000_000);
        }
    }

    #[test]
    fn planner_sleeps_when_far_and_spins_when_close() {
        let mut p = WaitPlanner::new(150_000, 100_000_000, 70_000_000);
        assert_eq!(p.plan(0, 1_000_000, 0), Wait::Sleep(850_000));
        assert_eq!(p.plan(0, u64::MAX, 0), Wait::Sleep(MAX_SLEEP_NS));
        assert_eq!(p.plan(10, 100_000, 10), Wait::Spin);
        // Work due now is not spinning.
        let mut q = WaitPlanner::new(150_000, 100_000_000, 70_000_000);
        for t in 0..1000 {
            assert_eq!(q.plan(t * 1000, t * 1000, t * 1000), Wait::Spin);
        }
        assert_eq!(q.total_spun_ns(), 0);
    }

    /// A stream that keeps a release always within the spin distance for
    /// a full second, with work taking some of the time: the planner spins
    /// only while the thread's CPU use in the current window is under the
    /// budget, then sleeps to the exact event time, so the window's CPU is
    /// the budget plus the work that still has to be done; and it is not
    /// so eager that it stops spinning well short of the budget.
    #[test]
    fn planner_caps_cpu_at_its_budget_in_every_window() {
        let (window, budget) = (100_000_000u64, 70_000_000u64);
        let mut p = WaitPlanner::new(150_000, window, budget);
        let (mut t, mut cpu) = (0u64, 0u64);
        let mut per_window = [0u64; 10];
        let mut step = 0u64;
        while t < 1_000_000_000 && step < 1_000_000 {
            step += 1;
            let w = ((t / window) as usize).min(9);
            let used = match p.plan(t, t + 40_000, cpu) {
                Wait::Spin => {
                    // The planner's window starts at its first call in
                    // it, at most one step after the window boundary.
                    assert!(
                        per_window[w] < budget + 50_000,
                        "spun at {t} with {} ns used in window {w}",
                        per_window[w]
                    );
                    10_000
                }
                Wait::Sleep(ns) => {
                    assert_eq!(ns, 40_000, "sleeps to the event, not short of it");
                    t += ns;
                    0
                }
            };
            // Every fifth step also does 10 µs of work.
            let busy = used + if step % 5 == 0 { 10_000 } else { 0 };
            per_window[w] += busy;
            t += busy;
            cpu += busy;
        }
        for (i, &c) in per_window.iter().enumerate() {
            // Budget, then 30 ms of which at most a fifth is work.
            assert!(c <= budget + 7_000_000, "window {i}: {c} ns of CPU");
            assert!(
                c >= budget - 5_000_000,
                "window {i}: only {c} ns: too eager"
            );
        }
    }

    #[test]
    fn histogram_counts_early_releases_apart() {
        let mut h = ErrorHistogram::default();
        h.record_release(1_000, 1_500);
        h.record_release(1_000, 41_000);
        h.record_release(5_000, 4_000);
        assert_eq!(h.count(), 3);
        assert_eq!(h.early(), 1);
        assert_eq!(h.max_early_ns(), 1_000);
        assert_eq!(h.max_us(), Some(40));
        assert_eq!(h.quantile_us(0.5), Some(1));
        assert_eq!(h.quantile_us(1.0), Some(41));
    }

    /// Every column of the shared link.csv schema has a cell here: a
    /// column the schema gains fails this test until [`LinkSample::cell`]
    /// writes it, rather than going out empty.
    #[test]
    fn the_link_log_knows_every_schema_column() {
        let s = LinkSample::default();
        for name in LINK_CSV_HEADER {
            assert!(s.cell(name).is_some(), "link.csv column `{name}` unknown");
        }
    }

    /// Real IPv4 packets through a step-marking queue: ECT(0) and ECT(1)
    /// packets above the threshold go out with CE set and a valid header
    /// checksum, Not-ECT ones above it are dropped, none is marked, and
    /// the counts agree with the model's.
    #[test]
    fn marked_packets_leave_with_ce_in_the_header() {
        use crate::ecn::{codepoint, ipv4_header_checksum};
        // 1000-byte packets every 0.5 ms (16 Mbit/s) into 10 Mbit/s for
        // 0.5 s: the queue builds past 1 ms within a few packets.
        let packet = |i: u16, tos: u8| {
            let mut p = vec![0u8; 1000];
            p[..20].copy_from_slice(&[
                0x45,
                tos,
                0x03,
                0xe8,
                (i >> 8) as u8,
                i as u8,
                0x40,
                0,
                64,
                6,
                0,
                0,
                10,
                77,
                0,
                1,
                10,
                77,
                0,
                2,
            ]);
            let c = ipv4_header_checksum(&p[..20]);
            p[10..12].copy_from_slice(&c.to_be_bytes());
            p
        };
        let tos = [0x00u8, 0x02, 0x01, 0xb8 | 0x02];
        let offered: Vec<(u64, Vec<u8>)> = (0..1000u16)
            .map(|i| (u64::from(i) * 500_000, packet(i, tos[usize::from(i) % 4])))
            .collect();
        let mut fwd = dir(Some(10e6), 1_000_000);
        fwd.queue = QueueConfig {
            step_ns: Some(1_000_000),
            ecn: true,
            ..QueueConfig::drop_tail(link::units::Size::Packets(10_000))
        };
        let stop = AtomicBool::new(false);
        let mut io = ScriptedIo::new(offered.clone(), 2_000_000_000, &stop);
        let mut model = Direction::new(&fwd, 1);
        let st = run_io(&mut io, &config(fwd, dir(None, 0)), &stop, &mut NoLog).unwrap();
        let (mut ce_out, mut not_ect_out) = (0, 0);
        for (_, p) in &io.written {
            let i = usize::from(u16::from_be_bytes([p[4], p[5]]));
            let orig = &offered[i].1;
            if !codepoint(orig).unwrap().is_ect() {
                // Never marked: forwarded as it came, or dropped.
                assert_eq!(p, orig, "packet {i}: a Not-ECT packet changed");
                not_ect_out += 1;
                continue;
            }
            assert_eq!(
                u16::from_be_bytes([p[10], p[11]]),
                ipv4_header_checksum(&p[..20]),
                "packet {i}: bad checksum"
            );
            if codepoint(p) == Some(Ecn::Ce) {
                ce_out += 1;
                assert_eq!(p[1], orig[1] | 0b11, "packet {i}: DSCP changed");
            } else {
                assert_eq!(p, orig, "packet {i} changed without a mark");
            }
            assert_eq!(&p[12..], &orig[12..]);
        }
        // The queue is above 1 ms from early on, so every Not-ECT packet
        // after the first few is dropped and most ECT ones are marked.
        assert!(ce_out > 600, "{ce_out} marked of {}", io.written.len());
        assert!(not_ect_out < 10, "{not_ect_out} Not-ECT packets forwarded");
        assert_eq!(io.written.len() as u64 + st.dropped[0], 1000);
        assert_eq!(st.marked_ce, [ce_out, 0]);
        assert!(st.dropped[0] > 200, "{:?}", st.dropped);
        // The same offer through the model alone gives the same counts
        // (the forwarder stamps arrivals with its own clock, so only the
        // totals are compared, within a packet or two).
        let mut marks = 0u64;
        for (at, p) in &offered {
            if let Verdict::Deliver { ce: true, .. } =
                model.enqueue_with(*at, 1000, codepoint(p).unwrap())
            {
                marks += 1;
            }
        }
        assert!(
            marks.abs_diff(ce_out) <= 2,
            "model {marks}, forwarder {ce_out}"
        );
    }

    /// An IPv4/TCP header (no options) from port `sport` to 80, id `i`,
    /// `len` bytes in all, with a valid checksum.
    fn tcp_packet(i: u16, sport: u16, tos: u8, len: usize) -> Vec<u8> {
        let mut p = vec![0u8; len];
        p[..20].copy_from_slice(&[
            0x45,
            tos,
            (len >> 8) as u8,
            len as u8,
            (i >> 8) as u8,
            i as u8,
            0x40,
            0,
            64,
            6,
            0,
            0,
            10,
            77,
            0,
            1,
            10,
            77,
            0,
            2,
        ]);
        p[20..22].copy_from_slice(&sport.to_be_bytes());
        p[22..24].copy_from_slice(&80u16.to_be_bytes());
        let c = crate::ecn::ipv4_header_checksum(&p[..20]);
        p[10..12].copy_from_slice(&c.to_be_bytes());
        p
    }

    /// A segment's header as a sender built it: sequence and ACK numbers,
    /// the flags in tcpdump's letters and the raw window; nothing for UDP,
    /// a later fragment, a cut-off header or an IPv6 packet.
    #[test]
    fn tcp_fields_are_read_from_a_real_segment() {
        let segment = |psh: bool, cwr: bool| {
            let mut b = etherparse::PacketBuilder::ipv4([10, 77, 0, 1], [10, 77, 0, 2], 64)
                .tcp(50_974, 5202, 2_074_646_516, 628)
                .ack(839_834_714);
            if psh {
                b = b.psh();
            }
            if cwr {
                b = b.cwr();
            }
            let payload = [7u8; 1448];
            let mut out = Vec::new();
            b.write(&mut out, &payload).unwrap();
            out
        };
        let p = segment(true, false);
        let f = tcp_fields(&p).expect("a TCP segment");
        assert_eq!(f.seq, 2_074_646_516);
        assert_eq!(f.ack, 839_834_714);
        assert_eq!(f.flags.as_str(), "P.");
        assert_eq!(f.window, 628);
        assert_eq!(
            tcp_fields(&segment(false, false)).unwrap().flags.as_str(),
            "."
        );
        assert_eq!(
            tcp_fields(&segment(true, true)).unwrap().flags.as_str(),
            "P.W"
        );
        let syn = {
            let b = etherparse::PacketBuilder::ipv4([10, 77, 0, 1], [10, 77, 0, 2], 64)
                .tcp(50_974, 5202, 1, 64_240)
                .syn();
            let mut out = Vec::new();
            b.write(&mut out, &[]).unwrap();
            out
        };
        assert_eq!(tcp_fields(&syn).unwrap().flags.as_str(), "S");
        let udp = {
            let b = etherparse::PacketBuilder::ipv4([10, 77, 0, 1], [10, 77, 0, 2], 64).udp(1, 2);
            let mut out = Vec::new();
            b.write(&mut out, &[1, 2, 3]).unwrap();
            out
        };
        assert_eq!(tcp_fields(&udp), None);
        assert_eq!(transport_ports(&udp), Some((1, 2)));
        let mut later_fragment = p.clone();
        later_fragment[7] = 3;
        assert_eq!(tcp_fields(&later_fragment), None);
        assert_eq!(tcp_fields(&p[..30]), None);
        let mut v6 = p.clone();
        v6[0] = 0x60;
        assert_eq!(tcp_fields(&v6), None);
    }

    /// The flow key is the 5-tuple: the same for every packet of a
    /// connection, different for another source port.
    #[test]
    fn the_flow_key_hashes_the_5_tuple() {
        let a = tcp_packet(1, 1000, 0, 100);
        let b = tcp_packet(2, 1000, 2, 1500);
        let c = tcp_packet(3, 1001, 0, 100);
        assert_eq!(flow_key(&a), flow_key(&b));
        assert_ne!(flow_key(&a), flow_key(&c));
        let mut udp = a.clone();
        udp[9] = 17;
        assert_ne!(flow_key(&a), flow_key(&udp));
    }

    /// The log's ports: TCP's and UDP's from the first fragment on; none
    /// for other protocols, later fragments or a truncated header.
    #[test]
    fn transport_ports_are_read_where_they_exist() {
        let a = tcp_packet(1, 40_000, 0, 100);
        assert_eq!(transport_ports(&a), Some((40_000, 80)));
        let mut udp = a.clone();
        udp[9] = 17;
        assert_eq!(transport_ports(&udp), Some((40_000, 80)));
        let mut icmp = a.clone();
        icmp[9] = 1;
        assert_eq!(transport_ports(&icmp), None);
        let mut later_fragment = a.clone();
        later_fragment[7] = 3;
        assert_eq!(transport_ports(&later_fragment), None);
        assert_eq!(transport_ports(&a[..22]), None);
        assert_eq!(transport_ports(&a[..19]), None);
        let mut v6 = a.clone();
        v6[0] = 0x60;
        assert_eq!(transport_ports(&v6), None);
    }

    /// Real packets through an FQ-CoDel forward queue: a bulk connection
    /// at twice the link rate and a sparse one (another source port)
    /// beside it. The sparse one is served ahead of the bulk backlog and
    /// loses nothing; the bulk one is dropped by its own CoDel, and the
    /// drops show in the forwarder's counts.
    #[test]
    fn fq_codel_in_the_forwarder_isolates_a_sparse_connection() {
        // Bulk: 1000 B every 0.4 ms (20 Mbit/s) into 10 Mbit/s for 2 s;
        // sparse: 100 B every 20 ms.
        let mut offered: Vec<(u64, Vec<u8>)> = Vec::new();
        for i in 0..5000u16 {
            offered.push((u64::from(i) * 400_000, tcp_packet(i, 1000, 0, 1000)));
        }
        for i in 0..100u16 {
            offered.push((
                u64::from(i) * 20_000_000 + 150_000,
                tcp_packet(i, 2000, 0, 100),
            ));
        }
        offered.sort_by_key(|o| o.0);
        assert_ne!(
            link::fq_codel_bucket(flow_key(&offered[0].1), 1024),
            link::fq_codel_bucket(flow_key(&tcp_packet(0, 2000, 0, 100)), 1024)
        );
        let mut fwd = dir(Some(10e6), 1_000_000);
        // RFC 8290's defaults.
        fwd.queue = QueueConfig {
            discipline: Some(link::Discipline::FqCodel {
                target_ns: 5_000_000,
                interval_ns: 100_000_000,
                flows: 1024,
                quantum: 1514,
            }),
            ..QueueConfig::drop_tail(link::units::Size::Packets(10_000))
        };
        let stop = AtomicBool::new(false);
        // Long enough for the bulk backlog to drain.
        let mut io = ScriptedIo::new(offered.clone(), 10_000_000_000, &stop);
        let st = run_io(&mut io, &config(fwd, dir(None, 0)), &stop, &mut NoLog).unwrap();
        let sport = |p: &[u8]| u16::from_be_bytes([p[20], p[21]]);
        let id = |p: &[u8]| u16::from_be_bytes([p[4], p[5]]);
        let sparse: Vec<&(u64, Vec<u8>)> =
            io.written.iter().filter(|w| sport(&w.1) == 2000).collect();
        assert_eq!(sparse.len(), 100, "the sparse connection lost nothing");
        for (t, p) in &sparse {
            let at = u64::from(id(p)) * 20_000_000 + 150_000;
            // 1 ms of delay, at most the 0.8 ms bulk packet in service and
            // (while the bulk queue is still new) one more, its own 80 µs,
            // and the emulator's polling.
            assert!(
                t - at <= 1_000_000 + 1_600_000 + 80_000 + 200_000,
                "sparse {} late by {}",
                id(p),
                t - at
            );
        }
        let bulk_out = io.written.len() - 100;
        assert!(st.dropped[0] > 100, "{:?}", st.dropped);
        assert_eq!(bulk_out as u64 + st.dropped[0], 5000);
    }
}
