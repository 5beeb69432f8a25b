//! `bbrlab tcp send|recv`: kernel TCP as a measured source (crate
//! `tcp-probe`), its results printed as one JSON line.

use crate::cli::{duration_arg, TcpSide};
use transport::sender::check_interval;

/// Runs `bbrlab tcp …`.
pub(crate) fn command(side: TcpSide) -> Result<(), String> {
    match side {
        TcpSide::Send {
            to,
            cc,
            duration,
            bytes,
            interval,
            log,
        } => {
            let o = tcp_probe::SendOptions {
                to,
                cc,
                duration_s: duration_arg("--duration", &duration)?.as_secs_f64(),
                bytes,
                interval: check_interval(
                    &format!("--interval {interval}"),
                    duration_arg("--interval", &interval)?,
                )?,
                log,
            };
            let s = tcp_probe::send(&o)?;
            println!("{}", serde_json::to_string(&s).map_err(|e| e.to_string())?);
            Ok(())
        }
        TcpSide::Recv {
            listen,
            idle_timeout,
        } => {
            let s = tcp_probe::recv(listen, duration_arg("--idle-timeout", &idle_timeout)?)?;
            println!("{}", serde_json::to_string(&s).map_err(|e| e.to_string())?);
            Ok(())
        }
    }
}
