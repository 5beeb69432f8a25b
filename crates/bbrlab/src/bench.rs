//! `bbrlab bench`: the simulator's speed on the standard dumbbell.
//!
//! One BBR flow over 100 Mbit/s with a 40 ms RTT and a 2-BDP drop-tail
//! buffer, simulated for 60 s by default. Reports simulated packets and
//! events per wall-clock second. The baseline in the same run is the
//! identical scenario with CUBIC, so the figures can be compared as a ratio
//! on a machine whose speed drifts.

use crate::scenario;
use std::path::Path;
use std::time::Instant;

/// C2's path: 10 Gbit/s, 100 ms RTT, 1 % random loss, a 1.2-BDP buffer.
fn large_path(algorithm: &str) -> String {
    format!(
        r#"
duration = "30s"
sample_interval = "0s"
[link.forward]
rate = "10gbit"
delay = "50ms"
queue = {{ limit = "100000pkt" }}
loss = 0.01
[link.reverse]
delay = "50ms"
[[flow]]
algorithm = "{algorithm}"
"#
    )
}

/// Peak resident memory of this process in KiB (`VmHWM` in
/// /proc/self/status), or `None` where that file does not exist.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn dumbbell(algorithm: &str, seconds: u64) -> String {
    format!(
        r#"
duration = "{seconds}s"
sample_interval = "0s"
[link.forward]
rate = "100mbit"
delay = "20ms"
queue = {{ limit = "667pkt" }}
[link.reverse]
delay = "20ms"
[[flow]]
algorithm = "{algorithm}"
"#
    )
}

/// Runs the benchmark and prints its figures.
pub fn run(seconds: u64, large: bool) -> Result<(), String> {
    if seconds == 0 || seconds > 3600 {
        return Err(format!("--seconds {seconds}: allowed 1 to 3600"));
    }
    println!("dumbbell: 100 Mbit/s, 40 ms RTT, 667-packet buffer, {seconds} s simulated, one flow");
    let mut rates = Vec::new();
    for alg in ["bbr", "cubic"] {
        let text = dumbbell(alg, seconds);
        let sc = scenario::parse(&text, "<bench>", Path::new("."), Path::new("bench.toml"))
            .map_err(|e| e.to_string())?;
        let cfg = &sc.runs[0].config;
        let t0 = Instant::now();
        let summary = netsim::run(cfg, &mut netsim::NoRecorder).map_err(|e| e.to_string())?;
        let wall = t0.elapsed().as_secs_f64();
        let pps = summary.packets_simulated as f64 / wall;
        let all = (summary.packets_simulated + summary.ack_packets_simulated) as f64 / wall;
        println!(
            "{alg:<6} {:>9} data + {:>9} ACK packets, {:>9} events in {wall:.3} s: \
             {:.2} M data packets/s, {:.2} M packets/s (data+ACK), {:.2} M events/s, goodput {:.1} Mbit/s",
            summary.packets_simulated,
            summary.ack_packets_simulated,
            summary.events,
            pps / 1e6,
            all / 1e6,
            summary.events as f64 / wall / 1e6,
            summary.flows[0].goodput_bps / 1e6
        );
        rates.push(pps);
    }
    println!("bbr/cubic speed ratio: {:.2}", rates[0] / rates[1]);
    if large {
        let before = peak_rss_kib();
        let sc = scenario::parse(
            &large_path("bbr"),
            "<bench>",
            Path::new("."),
            Path::new("bench.toml"),
        )
        .map_err(|e| e.to_string())?;
        let t0 = Instant::now();
        let summary =
            netsim::run(&sc.runs[0].config, &mut netsim::NoRecorder).map_err(|e| e.to_string())?;
        let wall = t0.elapsed().as_secs_f64();
        let kib = |v: Option<u64>| {
            v.map_or("unknown".to_string(), |k| {
                format!("{:.1} MiB", k as f64 / 1024.0)
            })
        };
        println!(
            "C2 path (10 Gbit/s, 100 ms, 1 % loss, 30 s, bbr): {} data packets in {wall:.2} s ({:.2} M/s), \
             goodput {:.0} Mbit/s; peak RSS before {} after {}",
            summary.packets_simulated,
            summary.packets_simulated as f64 / wall / 1e6,
            summary.flows[0].goodput_bps / 1e6,
            kib(before),
            kib(peak_rss_kib()),
        );
    }
    Ok(())
}

/// `bbrlab bench --transport`: loopback goodput of the UDP transport with
/// BBR, and of kernel TCP with BBR in the same run, `seconds` each.
pub fn transport(seconds: u64) -> Result<(), String> {
    if seconds == 0 || seconds > 600 {
        return Err(format!("--seconds {seconds}: allowed 1 to 600"));
    }
    let secs = std::time::Duration::from_secs(seconds);
    let mut udp = Vec::new();
    for (gso, port) in [(true, 5403), (false, 5405)] {
        udp.push(udp_loopback(secs, gso, port)?);
    }
    let tcp_addr: std::net::SocketAddr = "127.0.0.1:5404".parse().expect("literal");
    let tcp = std::thread::scope(|s| -> Result<f64, String> {
        let r = s.spawn(|| crate::tcp::recv(tcp_addr, std::time::Duration::from_secs(5)));
        std::thread::sleep(std::time::Duration::from_millis(200));
        let sent = crate::tcp::send(&crate::tcp::SendOptions {
            to: tcp_addr,
            cc: "bbr".into(),
            duration_s: secs.as_secs_f64(),
            bytes: None,
            interval: std::time::Duration::from_millis(100),
            log: None,
        })?;
        r.join().map_err(|_| "receiver panicked".to_string())??;
        println!("kernel TCP (bbr):    {:.2} Gbit/s", sent.goodput_bps / 1e9);
        Ok(sent.goodput_bps)
    })?;
    println!(
        "udp / kernel TCP goodput ratio: {:.2} with GSO, {:.2} without",
        udp[0] / tcp,
        udp[1] / tcp
    );
    Ok(())
}

/// One loopback transfer of the UDP transport with BBR; returns goodput.
fn udp_loopback(secs: std::time::Duration, gso: bool, port: u16) -> Result<f64, String> {
    let udp_addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    std::thread::scope(|s| -> Result<f64, String> {
        let r = s.spawn(|| {
            transport::receiver::recv(transport::receiver::RecvConfig {
                listen: udp_addr,
                output: None,
                window_chunks: (64 << 20) / transport::wire::CHUNK as u64,
                idle_timeout: std::time::Duration::from_secs(5),
                accept_timeout: std::time::Duration::from_secs(10),
            })
        });
        std::thread::sleep(std::time::Duration::from_millis(200));
        let sent = transport::sender::send(transport::sender::SendConfig {
            peer: udp_addr,
            cc: congestion::Config::new(congestion::Algorithm::Bbr),
            source: transport::data::Source::Pattern {
                seed: 7,
                total: None,
            },
            duration: Some(secs),
            idle_timeout: std::time::Duration::from_secs(5),
            log: None,
            interval: std::time::Duration::from_millis(100),
            progress: false,
            gso,
        })?;
        r.join().map_err(|_| "receiver panicked".to_string())??;
        println!(
            "udp transport (bbr, {}): {:.2} Gbit/s, {:.1} datagrams per send call, pacing error p50 {:.1} µs p99 {:.1} µs, {} retransmissions",
            if sent.gso { "GSO" } else { "no GSO" },
            sent.goodput_bps / 1e9,
            sent.datagrams_per_syscall,
            sent.pacing_error_p50_us.unwrap_or(f64::NAN),
            sent.pacing_error_p99_us.unwrap_or(f64::NAN),
            sent.retransmissions
        );
        Ok(sent.goodput_bps)
    })
}
