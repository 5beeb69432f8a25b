//! The receiver: reads the framed stream, checks every byte, the length
//! and the SHA-256 trailer, and answers `OK` or what was wrong.

use super::*;

/// What `tcp recv` checked.
#[derive(serde::Serialize, Debug)]
pub struct RecvSummary {
    /// Payload bytes received and verified.
    pub bytes: u64,
    /// Seconds from accept to the trailer.
    pub seconds: f64,
    /// bytes × 8 / seconds.
    pub goodput_bps: f64,
    /// The receiver's network namespace's counters from before the
    /// connection was accepted to after the answer was sent: what arrived
    /// and what Linux discarded or queued out of order. This connection's
    /// alone only where nothing else in the namespace uses TCP, as in
    /// `bbrlab emu`'s namespaces. `None` where they cannot be read.
    pub netns: Option<crate::ReceiverCounters>,
}

/// `bbrlab tcp recv`: accepts one connection, verifies it, answers.
pub fn recv(listen: SocketAddr, idle_timeout: Duration) -> Result<RecvSummary, String> {
    let l = TcpListener::bind(listen).map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    // Before the accept, so the handshake's segments count too.
    let counters_before = crate::netstat::read_receiver();
    let (mut c, peer) = l.accept().map_err(|e| format!("accept: {e}"))?;
    c.set_read_timeout(Some(idle_timeout))
        .map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    let r = verify(&mut c);
    let answer = match &r {
        Ok(_) => "OK\n".to_string(),
        Err(e) => format!("ERR {e}\n"),
    };
    let _ = c.write_all(answer.as_bytes());
    let bytes = r.map_err(|e| format!("transfer from {peer} failed: {e}"))?;
    let secs = t0.elapsed().as_secs_f64();
    let netns = counters_before
        .zip(crate::netstat::read_receiver())
        .map(|(b, a)| crate::netstat::receiver_between(&b, &a));
    Ok(RecvSummary {
        bytes,
        seconds: secs,
        goodput_bps: bytes as f64 * 8.0 / secs.max(1e-9),
        netns,
    })
}

pub(crate) fn read_exact(c: &mut TcpStream, buf: &mut [u8], what: &str) -> Result<(), String> {
    c.read_exact(buf).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => format!("the stream ended early (reading {what})"),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            format!("the sender went quiet (reading {what})")
        }
        _ => format!("reading {what}: {e}"),
    })
}

pub(crate) fn verify(c: &mut TcpStream) -> Result<u64, String> {
    let mut head = [0u8; 12];
    read_exact(c, &mut head, "the header")?;
    if &head[..4] != MAGIC {
        return Err("not a bbrlab tcp stream (bad magic)".into());
    }
    let seed = u64::from_le_bytes(head[4..12].try_into().expect("8 bytes"));
    let mut hash = Sha256::new();
    let mut buf = vec![0u8; FRAME];
    let mut total = 0u64;
    loop {
        let mut len = [0u8; 4];
        read_exact(c, &mut len, "a frame length")?;
        let n = u32::from_le_bytes(len) as usize;
        if n == 0 {
            break;
        }
        if n > FRAME {
            return Err(format!("frame of {n} bytes exceeds {FRAME}"));
        }
        read_exact(c, &mut buf[..n], "frame data")?;
        if let Some(at) = sender::pattern::mismatch(seed, total, &buf[..n]) {
            return Err(format!("byte {at} differs from the pattern"));
        }
        hash.update(&buf[..n]);
        total += n as u64;
    }
    let mut trailer = [0u8; 40];
    read_exact(c, &mut trailer, "the trailer")?;
    let len = u64::from_le_bytes(trailer[..8].try_into().expect("8 bytes"));
    if len != total {
        return Err(format!(
            "length mismatch: sender says {len}, received {total}"
        ));
    }
    if trailer[8..] != hash.finalize()[..] {
        return Err("SHA-256 mismatch".into());
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Over loopback the receiver reads its namespace's counters around
    /// the connection: at least the segments that carried the data
    /// arrived (others' traffic in this namespace can only add to them).
    #[test]
    fn the_receiver_reports_its_namespaces_segments() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let receiver = std::thread::spawn(move || recv(addr, Duration::from_secs(10)));
        let opts = crate::SendOptions {
            to: addr,
            cc: "cubic".into(),
            duration_s: 0.0,
            bytes: Some(2_000_000),
            interval: Duration::from_millis(10),
            log: None,
        };
        // The receiver binds in its thread: try until it listens (bounded).
        let mut sent = Err(String::new());
        for _ in 0..50 {
            sent = crate::send(&opts);
            if sent.is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(sent.unwrap().bytes, 2_000_000);
        let r = receiver.join().unwrap().unwrap();
        assert_eq!(r.bytes, 2_000_000);
        let n = r
            .netns
            .expect("/proc/net/netstat and /proc/net/snmp are readable here");
        // Loopback's MSS is at most 64 KiB.
        assert!(n.segments_in >= 2_000_000 / 65_536, "{n:?}");
    }
}
