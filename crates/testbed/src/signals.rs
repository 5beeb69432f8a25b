//! Turning Ctrl-C, SIGTERM and SIGHUP into a flag that long-running
//! commands poll, so they stop by their own cleanup path (remove
//! namespaces, stop children by PID, delete a partial output) instead of
//! dying half-way through it.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// A flag set when the process receives SIGINT, SIGTERM or SIGHUP. Once it
/// is installed those signals no longer end the process, so every loop of
/// the caller must poll the flag (with a bounded wait between polls).
pub fn stop_flag() -> Result<Arc<AtomicBool>, String> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .map_err(|e| format!("cannot install a signal handler: {e}"))?;
    }
    Ok(stop)
}
