//! `bbrlab send` and `bbrlab recv`: the UDP transport (crate `transport`)
//! driven by a `congestion` controller, results printed as one JSON line.

use crate::cli::{duration_arg, SendArgs};
use std::net::SocketAddr;
use std::path::PathBuf;
use transport::sender::check_interval;

/// Runs `bbrlab send`.
pub(crate) fn send(a: SendArgs) -> Result<(), String> {
    let SendArgs {
        to,
        cc,
        file,
        bytes,
        duration,
        idle_timeout,
        log,
        interval,
        quiet,
        no_gso,
        ecn,
        bbr3_profile,
    } = a;
    let cc = congestion::Config::from_names(&cc, bbr3_profile.as_deref())?;
    let source = match (file, bytes) {
        (Some(f), _) => transport::data::Source::file(&f)?,
        (None, Some(0)) => return Err("--bytes 0: nothing to send".into()),
        (None, b) => transport::data::Source::Pattern {
            seed: rand_seed(),
            total: b,
        },
    };
    let duration = match duration {
        Some(d) => match duration_arg("--duration", &d)? {
            std::time::Duration::ZERO => {
                return Err(format!(
                    "--duration {d}: nothing to send; give a duration > 0"
                ))
            }
            d => Some(d),
        },
        None if source.total().is_none() => Some(std::time::Duration::from_secs(10)),
        None => None,
    };
    let s = transport::sender::send(transport::sender::SendConfig {
        peer: to,
        cc,
        source,
        duration,
        idle_timeout: duration_arg("--idle-timeout", &idle_timeout)?,
        log,
        interval: check_interval(
            &format!("--interval {interval}"),
            duration_arg("--interval", &interval)?,
        )?,
        progress: !quiet,
        gso: !no_gso,
        ecn,
    })?;
    println!("{}", serde_json::to_string(&s).map_err(|e| e.to_string())?);
    Ok(())
}

/// A seed for the pattern that differs between runs.
fn rand_seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    t ^ ((std::process::id() as u64) << 32)
}

/// Runs `bbrlab recv`: one transfer, verified; Ctrl-C or SIGTERM stops it
/// and removes the partial output.
pub(crate) fn recv(
    listen: SocketAddr,
    output: Option<PathBuf>,
    window: u64,
    idle_timeout: &str,
    accept_timeout: &str,
) -> Result<(), String> {
    let s = transport::receiver::recv(transport::receiver::RecvConfig {
        listen,
        output,
        window_chunks: transport::receiver::window_chunks("--window", window)?,
        idle_timeout: duration_arg("--idle-timeout", idle_timeout)?,
        accept_timeout: duration_arg("--accept-timeout", accept_timeout)?,
        stop: Some(testbed::signals::stop_flag()?),
    })?;
    println!("{}", serde_json::to_string(&s).map_err(|e| e.to_string())?);
    Ok(())
}
