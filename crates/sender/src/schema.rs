//! The one per-flow time-series schema. The simulator, the UDP transport
//! and the kernel-TCP probe all write these columns, so one plotting path
//! and one comparison serve every source. It lives here, in the crate
//! every source shares, so no source depends on another for it.

/// Column names of the shared per-flow time series, in order.
pub const FLOW_CSV_HEADER: &str = "time_s,flow,delivered_bytes,goodput_bps,rtt_ms,cwnd_bytes,pacing_rate_bps,inflight_bytes,mode,bw_estimate_bps,min_rtt_ms,queue_delay_ms,drops";
