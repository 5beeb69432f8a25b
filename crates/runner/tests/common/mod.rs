//! The path where the simulator's BBRv3 share against CUBIC fell short
//! of the kernel's, shared by the tests that look at its first second
//! packet by packet.

use netsim::PacketMemory;
use std::path::Path;

/// Kernel `bbrlab_bbr3` against kernel `cubic` as `validate --multiflow`
/// simulates its 1-BDP path (20 Mbit/s, 40 ms, 67 packets), the BBRv3
/// flow's SYN first, for 1 s; `KEYS` is replaced, in both flows, by the
/// keys under test.
const TEXT: &str = r#"
name = "bbr3-vs-cubic-1bdp"
duration = "1s"
sample_interval = "10ms"
seed = 1
[[flow]]
algorithm = "bbr3"
handshake = "tcp"
header_bytes = 52
initial_burst = 10
mss = 1448
pacing = "quantum"
KEYS
[flow.bbr3]
profile = "linux-v3"
signals = "stock-kernel"
[[flow]]
algorithm = "cubic"
handshake = "tcp"
header_bytes = 52
initial_burst = 10
mss = 1448
pacing = "off"
start = "9us"
KEYS
[flow.cubic]
avoidance = "linux"
hystart_variant = "linux"
[link.forward]
delay = "20ms"
rate = "20Mbit"
queue = { limit = "67pkt" }
[link.reverse]
delay = "20ms"
rate = "20Mbit"
"#;

/// Every packet of a run of the path with `keys` in both flows.
pub fn run_start_up_path(keys: &str) -> PacketMemory {
    let text = TEXT.replace("KEYS", keys);
    let sc = scenario::parse(&text, "t.toml", Path::new("."), Path::new("t.toml")).unwrap();
    let mut rec = PacketMemory::default();
    netsim::run(&sc.runs[0].config, &mut rec).unwrap();
    rec
}
