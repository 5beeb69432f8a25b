//! The boundary between the command line and a QUIC stack.
//!
//! A stack is one module (`s2n.rs`, `noq.rs`, `quinn.rs`) with one
//! unit type implementing [`Stack`], listed in [`crate::stacks::by_name`]. Everything a
//! stack does not need to know stays out of it: argument parsing, the
//! summary line, `both` (two threads running [`Stack::recv`] and
//! [`Stack::send`]), the byte pattern ([`crate::pattern`]), the time
//! series ([`crate::series`]) and the certificate files ([`make_cert`],
//! [`wait_for_cert`]), so a new stack writes only its transfer.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Which controller a sender runs.
#[derive(Clone, Debug)]
pub enum Cc {
    /// One of bbrlab's, through the stack's adapter crate.
    Bbrlab(Box<congestion::Config>),
    /// The stack's own, by its name without the stack prefix
    /// (`bbr2` for `s2n:bbr2`).
    Own(&'static str),
}

/// The application error code a `--duration` sender closes its connection
/// with at the deadline: it stops sending and stops waiting there, and
/// the receiver takes this close as the transfer's end (what it verified
/// by then is what arrived), not as a failure.
pub const DEADLINE_CODE: u32 = 0x0b1;

/// Seconds left until `deadline` (none in `--bytes` mode), at most
/// `timeout`: how long one write may wait for room in the send buffer.
pub fn write_wait(deadline: Option<Instant>, timeout: Duration) -> Duration {
    deadline.map_or(timeout, |d| {
        d.saturating_duration_since(Instant::now()).min(timeout)
    })
}

/// How much a sender sends.
#[derive(Clone, Copy, Debug)]
pub enum Amount {
    /// Exactly this many bytes.
    Bytes(u64),
    /// As much as it can for this long (from the end of the handshake).
    Duration(Duration),
}

/// What `send` runs.
#[derive(Clone, Debug)]
pub struct SendOpts {
    /// The receiver.
    pub to: SocketAddr,
    /// The receiver's certificate (PEM), already read.
    pub cert_pem: String,
    /// The controller.
    pub cc: Cc,
    /// How much.
    pub amount: Amount,
    /// Time-series sampling interval.
    pub interval: Duration,
    /// Where the time series goes, if anywhere.
    pub log: Option<PathBuf>,
    /// `--ecn` was given (what it changes is the stack's to say).
    #[allow(
        dead_code,
        reason = "s2n-quic, noq and quinn always mark ECN; a stack that can switch it reads it"
    )]
    pub ecn: bool,
    /// The bound on every wait; a silent peer is reported within it.
    pub timeout: Duration,
}

/// What `recv` runs.
#[derive(Debug)]
pub struct RecvOpts {
    /// Where to listen.
    pub listen: SocketAddr,
    /// Where to write the self-signed certificate (PEM).
    pub cert: PathBuf,
    /// The bound on every wait (the connection's arrival included).
    pub timeout: Duration,
    /// Told the bound address once the certificate is written (used by
    /// `both`, which listens on port 0).
    pub ready: Option<mpsc::Sender<SocketAddr>>,
    /// Told the report as soon as the stream's end is verified, before the
    /// receiver waits for the sender to close the connection. That wait
    /// can last the idle timeout when the sender's close is lost (at 30 %
    /// loss, one close in three), and whoever runs the receiver (`bbrlab
    /// emu` gives a server 3 s after its client ends) should have the
    /// result by then.
    pub done: Option<mpsc::Sender<RecvReport>>,
}

/// A finished send.
#[derive(Clone, Debug, PartialEq)]
pub struct SendReport {
    /// Bytes the peer acknowledged: all that were written with `--bytes`
    /// (the send ends when the peer has acknowledged the stream's end);
    /// with `--duration`, those acknowledged by the deadline.
    pub bytes: u64,
    /// Seconds from the end of the handshake to the last byte acknowledged
    /// (`--bytes`) or to the deadline (`--duration`).
    pub seconds: f64,
    /// The sender stopped at its `--duration` deadline and closed the
    /// connection with [`DEADLINE_CODE`], leaving what it had buffered.
    pub stopped_at_deadline: bool,
    /// Packets sent.
    pub packets_sent: u64,
    /// Packets declared lost.
    pub packets_lost: u64,
    /// Median of the sampled smoothed RTTs, ms.
    pub srtt_median_ms: Option<f64>,
}

/// A finished receive (every byte checked).
#[derive(Clone, Debug, PartialEq)]
pub struct RecvReport {
    /// Bytes received, each checked against the pattern.
    pub bytes: u64,
    /// The sender ended the transfer at its deadline ([`DEADLINE_CODE`])
    /// rather than with the stream's end.
    pub stopped_at_deadline: bool,
    /// Seconds from the end of the handshake to the stream's end.
    pub seconds: f64,
}

/// One QUIC stack's bulk transfer.
pub trait Stack: Sync {
    /// The name used in `--stack` and in names like `s2n:bbr2`.
    fn name(&self) -> &'static str;
    /// The stack's own controllers, without the prefix (`bbr2`, `cubic`).
    fn own_controllers(&self) -> &'static [&'static str];
    /// `Ok` when bbrlab's controllers run on this stack (its adapter is
    /// built in); otherwise why not.
    fn bbrlab_controllers(&self) -> Result<(), String>;
    /// Sends per `o`; errors are one line for `quic-bulk: <line>`.
    fn send(&self, o: &SendOpts) -> Result<SendReport, String>;
    /// Accepts one connection and reads one stream to its end, checking
    /// every byte with [`crate::pattern::check`].
    fn recv(&self, o: RecvOpts) -> Result<RecvReport, String>;
}

/// Parses `--cc` for `stack`: bbrlab's controller names, or
/// `STACK:NAME` for the stack's own. The error lists every allowed name.
pub fn parse_cc(
    stack: &dyn Stack,
    name: &str,
    bbr3_profile: Option<&str>,
) -> Result<(String, Cc), String> {
    let allowed = || {
        let mut v: Vec<String> = congestion::Algorithm::ALL
            .iter()
            .map(|a| a.name().to_string())
            .collect();
        v.extend(
            stack
                .own_controllers()
                .iter()
                .map(|c| format!("{}:{c}", stack.name())),
        );
        v.join(", ")
    };
    let own = name
        .strip_prefix(stack.name())
        .and_then(|r| r.strip_prefix(':'))
        .and_then(|r| stack.own_controllers().iter().find(|c| **c == r));
    if let Some(own) = own {
        if let Some(p) = bbr3_profile {
            return Err(format!(
                "--bbr3-profile {p}: only for --cc bbr3 (this run is --cc {name})"
            ));
        }
        return Ok((name.to_string(), Cc::Own(own)));
    }
    let Ok(algorithm) = name.parse::<congestion::Algorithm>() else {
        return Err(format!(
            "--cc {name}: unknown controller for --stack {}; allowed: {}",
            stack.name(),
            allowed()
        ));
    };
    let cfg = congestion::Config::from_names(algorithm.name(), bbr3_profile)?;
    stack
        .bbrlab_controllers()
        .map_err(|why| format!("--cc {name}: {why}"))?;
    Ok((algorithm.name().to_string(), Cc::Bbrlab(Box::new(cfg))))
}

/// A self-signed certificate for `localhost` (PEM certificate, PEM key).
pub fn self_signed() -> Result<(String, String), String> {
    let c = self_signed_der()?;
    Ok((c.cert_pem, c.key_pem))
}

/// A self-signed certificate for `localhost` in both encodings: PEM for
/// the file the sender reads (and for s2n-quic), DER for rustls (noq and
/// quinn).
pub struct SelfSigned {
    /// The certificate, PEM (written to `--cert`).
    pub cert_pem: String,
    /// The private key, PEM.
    pub key_pem: String,
    /// The certificate, DER.
    pub cert_der: Vec<u8>,
    /// The private key, PKCS#8 DER.
    pub key_der: Vec<u8>,
}

/// Makes a [`SelfSigned`] certificate.
pub fn self_signed_der() -> Result<SelfSigned, String> {
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".into()])
        .map_err(|e| format!("making a certificate: {e}"))?;
    Ok(SelfSigned {
        cert_pem: ck.cert.pem(),
        key_pem: ck.key_pair.serialize_pem(),
        cert_der: ck.cert.der().to_vec(),
        key_der: ck.key_pair.serialize_der(),
    })
}

/// Writes `pem` to `path` atomically (to `PATH.tmp`, then renamed), so
/// a sender polling for the file never reads half of it.
pub fn make_cert(path: &Path, pem: &str) -> Result<(), String> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, pem).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot rename {} to {}: {e}", tmp.display(), path.display())
    })
}

/// Waits (up to `timeout`) for the receiver's certificate to appear at
/// `path`, then reads it.
pub fn wait_for_cert(path: &Path, timeout: Duration) -> Result<String, String> {
    let start = Instant::now();
    loop {
        match std::fs::read_to_string(path) {
            Ok(pem) => return Ok(pem),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && start.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(format!(
                "no certificate at {} after {} s (is `quic-bulk recv` running with this --cert?)",
                path.display(),
                timeout.as_secs_f64()
            ))
            }
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        }
    }
}

/// A single-thread tokio runtime: each end runs on one thread, so a
/// process's CPU time is one stack's cost per byte.
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio: {e}"))
}

/// The idle timeout both ends advertise: half of `--timeout` (at least
/// 1 s), so a silent peer is reported well within `--timeout` even with
/// the probe timeouts a stack adds before closing (RFC 9000 §10.1 makes
/// the effective timeout at least three PTOs).
pub fn idle_timeout(timeout: Duration) -> Duration {
    (timeout / 2).max(Duration::from_secs(1))
}

/// How many bytes the sender writes next (at most `write`), having sent
/// `sent` since `t0`, the end of the handshake; 0 when it is done.
pub fn next_write(amount: Amount, sent: u64, t0: Instant, write: usize) -> usize {
    match amount {
        Amount::Bytes(total) => (total - sent).min(write as u64) as usize,
        Amount::Duration(d) if t0.elapsed() < d => write,
        Amount::Duration(_) => 0,
    }
}
