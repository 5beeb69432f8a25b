//! `quic-bulk`: one bulk transfer over a real QUIC stack, with bbrlab's
//! controllers (through the stack's adapter crate) or the stack's own.
//!
//! `bbrlab quic`, `bbrlab compare --with s2n` and `bbrlab validate` spawn
//! it, one process per end, so each end's CPU time is its own and the
//! stacks (s2n-quic, aws-lc, noq, quinn, rustls, tokio) stay out of the `bbrlab` binary.
//!
//! ```text
//! quic-bulk recv --stack s2n --listen 127.0.0.1:5420 --cert /tmp/x/cert.pem
//! quic-bulk send --stack s2n --to 127.0.0.1:5420 --cert /tmp/x/cert.pem --cc s2n:bbr2 --bytes 10000000
//! quic-bulk both --stack s2n --cc s2n:cubic --bytes 10000000
//! quic-bulk both --stack noq --cc bbr --bytes 10000000
//! quic-bulk both --stack quinn --cc quinn:cubic --bytes 10000000
//! ```
//!
//! The receiver makes a self-signed certificate for `localhost`, writes
//! it where the sender reads it (the sender verifies the real handshake
//! against it), accepts one connection, reads one stream to its end
//! checking every byte against a deterministic pattern, and prints
//! `{"role":"recv",..}`. The sender prints its summary line
//! (`{"quic_stack":..}`) and, with `--log`, writes the shared time series.
//! Errors: exit 1 and one line `quic-bulk: <what>` on stderr; bad
//! arguments exit 2.

mod noq;
mod pattern;
mod quinn;
mod quinn_family;
mod s2n;
mod series;
mod stack;
mod stacks;

use clap::{ArgGroup, Args, Parser, Subcommand};
use stack::{Amount, RecvOpts, SendOpts, SendReport, Stack};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "quic-bulk",
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("QUIC_BULK_STACKS"), ")"),
    about = "One bulk transfer over a real QUIC stack (s2n-quic, noq, quinn) with bbrlab's controllers or the stack's own"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Accept one connection, check every byte of one stream, print a JSON line.
    Recv(RecvArgs),
    /// Send to a `recv`, print a JSON summary line.
    Send(SendArgs),
    /// Both ends in one process over loopback (prints the sender's line).
    Both(BothArgs),
}

#[derive(Args)]
struct RecvArgs {
    /// QUIC stack: s2n, noq or quinn.
    #[arg(long)]
    stack: String,
    /// Address to listen on (ADDR:PORT).
    #[arg(long)]
    listen: SocketAddr,
    /// Where to write the self-signed certificate (PEM) the sender verifies.
    #[arg(long)]
    cert: PathBuf,
    /// Seconds to wait for the connection, and the bound on any silence.
    #[arg(long, default_value = "30")]
    timeout: String,
}

/// The sender's options shared by `send` and `both`.
#[derive(Args)]
struct SendCommon {
    /// Controller: bbr, bbr-jitter, bbr3, cubic, reno (bbrlab's, through
    /// the stack's adapter), or the stack's own: s2n:bbr2, s2n:cubic;
    /// noq:bbr3, noq:cubic, noq:newreno; quinn:bbr, quinn:cubic,
    /// quinn:newreno.
    #[arg(long)]
    cc: String,
    /// Send for this long after the handshake (`10s`, `500ms`), then stop:
    /// the sender stops writing and does not wait for what its stack still
    /// buffers; it reports the bytes acknowledged by then and closes the
    /// connection with the deadline's code, which the receiver takes as
    /// the end of the transfer.
    #[arg(long)]
    duration: Option<String>,
    /// Send exactly this many bytes.
    #[arg(long)]
    bytes: Option<u64>,
    /// Time-series sampling interval (`10ms`).
    #[arg(long, default_value = "10ms")]
    interval: String,
    /// Write the time series (sender::schema::FLOW_COLUMNS) here.
    #[arg(long)]
    log: Option<PathBuf>,
    /// BBRv3 profile for --cc bbr3: draft or linux-v3.
    #[arg(long)]
    bbr3_profile: Option<String>,
    /// ECN. s2n-quic, noq and quinn mark ECT(0) and validate ECN (RFC
    /// 9000 §13.4) on every connection whether or not this is given; this
    /// tool does not switch that off, so the flag changes nothing yet.
    #[arg(long)]
    ecn: bool,
    /// Seconds: the bound on every wait; a silent peer is reported within it.
    #[arg(long, default_value = "30")]
    timeout: String,
}

#[derive(Args)]
#[command(group(ArgGroup::new("amount").required(true).args(["duration", "bytes"])))]
struct SendArgs {
    /// QUIC stack: s2n, noq or quinn.
    #[arg(long)]
    stack: String,
    /// The receiver (ADDR:PORT).
    #[arg(long)]
    to: SocketAddr,
    /// The receiver's certificate (PEM), waited for until it appears.
    #[arg(long)]
    cert: PathBuf,
    #[command(flatten)]
    common: SendCommon,
}

#[derive(Args)]
#[command(group(ArgGroup::new("amount").required(true).args(["duration", "bytes"])))]
struct BothArgs {
    /// QUIC stack: s2n, noq or quinn.
    #[arg(long)]
    stack: String,
    #[command(flatten)]
    common: SendCommon,
}

/// How a run failed: bad arguments (exit 2) or the transfer (exit 1).
enum Failure {
    Usage(String),
    Run(String),
}

/// `--timeout`: seconds (`30`), or a duration with its unit (`30s`).
fn timeout_arg(v: &str) -> Result<Duration, Failure> {
    let d = match v.parse::<f64>() {
        // Past what a Duration holds is past the limit below too (and
        // `from_secs_f64` would panic on it).
        Ok(s) if s.is_finite() => Duration::try_from_secs_f64(s.max(0.0)).unwrap_or(Duration::MAX),
        _ => {
            link::units::parse_duration(v).map_err(|e| Failure::Usage(format!("--timeout: {e}")))?
        }
    };
    if d < Duration::from_secs(1) || d > Duration::from_secs(3600) {
        return Err(Failure::Usage(format!(
            "--timeout {v}: allowed from 1 s to 3600 s"
        )));
    }
    Ok(d)
}

fn duration_arg(flag: &str, v: &str) -> Result<Duration, Failure> {
    link::units::parse_duration(v).map_err(|e| Failure::Usage(format!("{flag}: {e}")))
}

/// The sender's options from the command line, the certificate not yet read.
fn send_opts(
    stack: &dyn Stack,
    to: SocketAddr,
    c: &SendCommon,
) -> Result<(String, SendOpts), Failure> {
    let (cc_name, cc) =
        stack::parse_cc(stack, &c.cc, c.bbr3_profile.as_deref()).map_err(Failure::Usage)?;
    let amount = match (&c.duration, c.bytes) {
        (_, Some(0)) => return Err(Failure::Usage("--bytes 0: nothing to send".into())),
        (_, Some(n)) => Amount::Bytes(n),
        (Some(d), None) => {
            let d = duration_arg("--duration", d)?;
            if d.is_zero() || d > Duration::from_secs(24 * 3600) {
                return Err(Failure::Usage(format!(
                    "--duration {}: allowed above 0 up to one day",
                    c.duration.as_deref().unwrap_or("")
                )));
            }
            Amount::Duration(d)
        }
        (None, None) => return Err(Failure::Usage("--duration or --bytes is needed".into())),
    };
    let interval = duration_arg("--interval", &c.interval)?;
    if interval < Duration::from_millis(1) || interval > Duration::from_secs(60) {
        return Err(Failure::Usage(format!(
            "--interval {}: allowed from 1ms to 60s",
            c.interval
        )));
    }
    Ok((
        cc_name,
        SendOpts {
            to,
            cert_pem: String::new(),
            cc,
            amount,
            interval,
            log: c.log.clone(),
            ecn: c.ecn,
            timeout: timeout_arg(&c.timeout)?,
        },
    ))
}

/// The sender's summary line, the contract's keys in the contract's order.
fn summary(stack: &str, cc: &str, r: &SendReport) -> String {
    let goodput = if r.seconds > 0.0 {
        r.bytes as f64 * 8.0 / r.seconds
    } else {
        0.0
    };
    let retx = if r.packets_sent > 0 {
        r.packets_lost as f64 / r.packets_sent as f64
    } else {
        0.0
    };
    serde_json::json!({
        "quic_stack": stack,
        "cc": cc,
        "bytes": r.bytes,
        "seconds": r.seconds,
        "goodput_bps": goodput.round(),
        "srtt_median_ms": r.srtt_median_ms,
        "packets_sent": r.packets_sent,
        "packets_lost": r.packets_lost,
        "retransmit_fraction": retx,
        "origin": "end of the handshake",
        "stopped_at_deadline": r.stopped_at_deadline,
    })
    .to_string()
}

fn recv_line(stack: &str, r: &stack::RecvReport) -> String {
    serde_json::json!({
        "role": "recv",
        "stack": stack,
        "bytes": r.bytes,
        "intact": true,
        "seconds": r.seconds,
        "stopped_at_deadline": r.stopped_at_deadline,
    })
    .to_string()
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.cmd {
        Cmd::Recv(a) => {
            let stack = stacks::by_name(&a.stack).map_err(Failure::Usage)?;
            let timeout = timeout_arg(&a.timeout)?;
            // The line is printed as soon as the stream is verified, not
            // after the receiver's wait for the sender's close (see
            // `RecvOpts::done`), from a thread that ends with the channel.
            let (tx, rx) = std::sync::mpsc::channel::<stack::RecvReport>();
            let name = stack.name();
            let printer = std::thread::spawn(move || {
                let got = rx.recv().ok();
                if let Some(r) = &got {
                    println!("{}", recv_line(name, r));
                }
                got.is_some()
            });
            let result = stack.recv(RecvOpts {
                listen: a.listen,
                cert: a.cert,
                timeout,
                ready: None,
                done: Some(tx),
            });
            let printed = printer.join().unwrap_or(false);
            let r = result.map_err(Failure::Run)?;
            if !printed {
                println!("{}", recv_line(stack.name(), &r));
            }
            Ok(())
        }
        Cmd::Send(a) => {
            let stack = stacks::by_name(&a.stack).map_err(Failure::Usage)?;
            let (cc, mut o) = send_opts(stack, a.to, &a.common)?;
            o.cert_pem = stack::wait_for_cert(&a.cert, o.timeout).map_err(Failure::Run)?;
            let r = stack.send(&o).map_err(Failure::Run)?;
            println!("{}", summary(stack.name(), &cc, &r));
            Ok(())
        }
        Cmd::Both(a) => {
            let stack = stacks::by_name(&a.stack).map_err(Failure::Usage)?;
            let (cc, o) = send_opts(stack, "127.0.0.1:0".parse().expect("literal"), &a.common)?;
            let r = both(stack, o).map_err(Failure::Run)?;
            println!("{}", summary(stack.name(), &cc, &r));
            Ok(())
        }
    }
}

/// Both ends in this process: the receiver on a thread listening on a
/// loopback port of its choosing, the certificate in a private temporary
/// directory removed afterwards.
fn both(stack: &'static dyn Stack, mut o: SendOpts) -> Result<SendReport, String> {
    let dir = std::env::temp_dir().join(format!(
        "quic-bulk-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let result = (|| {
        let cert = dir.join("cert.pem");
        let (tx, rx) = std::sync::mpsc::channel();
        let ropts = RecvOpts {
            listen: "127.0.0.1:0".parse().expect("literal"),
            cert: cert.clone(),
            timeout: o.timeout,
            ready: Some(tx),
            done: None,
        };
        let receiver = std::thread::spawn(move || stack.recv(ropts));
        let addr = match rx.recv_timeout(o.timeout) {
            Ok(a) => a,
            Err(_) => {
                // The receiver failed before listening (or is stuck): its
                // own error says why.
                return Err(match receiver.join() {
                    Ok(Err(e)) => format!("receiver: {e}"),
                    _ => "the receiver did not start listening".to_string(),
                });
            }
        };
        o.to = addr;
        o.cert_pem = stack::wait_for_cert(&cert, o.timeout)?;
        let sent = stack.send(&o);
        let got = receiver
            .join()
            .map_err(|_| "the receiver thread panicked".to_string())?;
        let sent = sent?;
        let got = got.map_err(|e| format!("receiver: {e}"))?;
        // A sender stopped at its deadline left data in flight, which the
        // receiver may have verified without the sender seeing its ACK.
        if got.bytes != sent.bytes && !sent.stopped_at_deadline {
            return Err(format!(
                "the receiver got {} bytes, the sender sent {}",
                got.bytes, sent.bytes
            ));
        }
        Ok(sent)
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(e)) => {
            eprintln!("quic-bulk: {e}");
            ExitCode::from(2)
        }
        Err(Failure::Run(e)) => {
            eprintln!("quic-bulk: {e}");
            ExitCode::FAILURE
        }
    }
}
