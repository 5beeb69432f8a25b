//! ECN through real IP headers (root): `bbrlab send --ecn` in one network
//! namespace, `bbrlab recv` in another, joined by a veth pair whose
//! sending end marks CE on every 10th ECN-capable packet. The receiver
//! counts the marks from the IP header, the ACKs carry them back, and the
//! sender's controller gets them (its validated `ce_packets`).
//!
//! The marker is a tc classifier (BPF, direct action, on the veth's
//! egress `clsact` hook) rather than a marking qdisc: the kernel this
//! project is tested on has no fq_codel, codel, red or pie (only tbf, htb
//! and fifo), but it has `cls_bpf`. Like an AQM it marks only ECT packets
//! (RFC 3168 §5: Not-ECT packets are left alone), rewrites the IPv4
//! header checksum, and on IPv6 sets the traffic class's ECN bits. It is
//! compiled here with clang (scripts/setup.sh installs clang, libbpf-dev
//! and iproute2). A GSO train passes the hook as one packet, so a mark
//! lands on a whole train: the receiver's CE count is about, not exactly,
//! a tenth.
//!
//! A second test runs the transfer through bbrlab's own emulator
//! (`bbrlab emu`, whose link model marks CE at a queue's AQM decision,
//! here a step at 1 ms of sojourn on a 20 Mbit/s bottleneck): the marks
//! come from a real queue there, and replace the drops the same queue
//! inflicts on a flow without ECN.
//!
//! The namespaces are created by the test and removed by a guard's Drop,
//! so they go on failure too (removing a namespace removes its veth end);
//! every process is stopped by its PID; every wait is bounded.

mod common;
use common::{emu, json_with, require_root, BIN, SERIAL};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A packet out of this many ECN-capable ones is marked CE.
const EVERY: u64 = 10;

const MARKER: &str = r#"
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <stddef.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/* [0]: ECT packets seen, [1]: marked CE. */
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 2);
    __type(key, __u32);
    __type(value, __u64);
} ce_counts SEC(".maps");

/* Whether this ECT packet is the one in EVERY to mark. */
static __always_inline int pick(void)
{
    __u32 k0 = 0, k1 = 1;
    __u64 *seen = bpf_map_lookup_elem(&ce_counts, &k0);
    __u64 *marked = bpf_map_lookup_elem(&ce_counts, &k1);
    if (!seen || !marked)
        return 0;
    if (__sync_fetch_and_add(seen, 1) % EVERY)
        return 0;
    __sync_fetch_and_add(marked, 1);
    return 1;
}

SEC("tc")
int mark_ce(struct __sk_buff *skb)
{
    void *data = (void *)(long)skb->data;
    void *end = (void *)(long)skb->data_end;
    struct ethhdr *eth = data;
    if ((void *)(eth + 1) > end)
        return TC_ACT_OK;
    if (eth->h_proto == bpf_htons(ETH_P_IP)) {
        struct iphdr *ip = (void *)(eth + 1);
        if ((void *)(ip + 1) > end)
            return TC_ACT_OK;
        __u8 ecn = ip->tos & 3;
        if ((ecn != 1 && ecn != 2) || !pick())
            return TC_ACT_OK;
        /* The checksum covers the 16-bit word holding version/IHL and TOS. */
        __u16 old = *(__u16 *)ip;
        __u8 tos = ip->tos | 3;
        __u16 new = old;
        ((__u8 *)&new)[1] = tos;
        bpf_l3_csum_replace(skb, ETH_HLEN + offsetof(struct iphdr, check), old, new, 2);
        bpf_skb_store_bytes(skb, ETH_HLEN + offsetof(struct iphdr, tos), &tos, 1, 0);
    } else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
        __u8 *b = (void *)(eth + 1);
        if ((void *)(b + 2) > end)
            return TC_ACT_OK;
        /* Traffic class: low nibble of byte 0, high nibble of byte 1; ECN
           is its two low bits, bits 4-5 of byte 1. */
        __u8 ecn = (b[1] >> 4) & 3;
        if ((ecn != 1 && ecn != 2) || !pick())
            return TC_ACT_OK;
        __u8 v = b[1] | 0x30;
        bpf_skb_store_bytes(skb, ETH_HLEN + 1, &v, 1, 0);
    }
    return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
"#;

/// Runs a command to completion; panics with its stderr if it fails.
fn run(args: &[&str]) {
    let o = Command::new(args[0])
        .args(&args[1..])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", args[0]));
    assert!(
        o.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The two namespaces; Drop removes them (and with them the veth pair).
struct Namespaces {
    names: Vec<String>,
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
    }
}

fn namespaces_left(tag: &str) -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(tag))
        .map(str::to_string)
        .collect()
}

/// A process killed by its PID if still running when dropped.
struct Proc(Option<Child>);

impl Proc {
    fn start(ns: &str, args: &[&str]) -> Proc {
        Proc(Some(
            Command::new("ip")
                .args(["netns", "exec", ns, BIN])
                .args(args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start bbrlab in the namespace"),
        ))
    }

    /// Waits at most `limit`, then kills it by PID and fails.
    fn finish(mut self, limit: Duration, what: &str) -> Output {
        let mut c = self.0.take().expect("running");
        let t0 = Instant::now();
        while t0.elapsed() < limit {
            if c.try_wait().expect("try_wait").is_some() {
                return c.wait_with_output().expect("output");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = c.kill();
        let o = c.wait_with_output().expect("output");
        panic!(
            "{what} did not exit within {limit:?}; stderr: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn json(o: &Output, what: &str) -> serde_json::Value {
    assert!(
        o.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(out.lines().last().expect("a summary line")).expect("JSON summary")
}

/// One 4 MB transfer from the sender's namespace to `listen` in the
/// receiver's; the two summaries.
fn transfer(
    ns: &Namespaces,
    listen: &str,
    send_args: &[&str],
) -> (serde_json::Value, serde_json::Value) {
    let r = Proc::start(
        &ns.names[1],
        &["recv", "--listen", listen, "--accept-timeout", "20s"],
    );
    std::thread::sleep(Duration::from_millis(300));
    let mut args = vec!["send", "--to", listen, "--bytes", "4000000", "--quiet"];
    args.extend_from_slice(send_args);
    let s = Proc::start(&ns.names[0], &args).finish(Duration::from_secs(60), "bbrlab send");
    let r = r.finish(Duration::from_secs(30), "bbrlab recv");
    (json(&s, "bbrlab send"), json(&r, "bbrlab recv"))
}

/// The receiver saw CE in the IP headers, the ACKs carried the count, and
/// the sender's controller was given the marks (validated, so never more
/// than the receiver counted, and all of them on a path that loses
/// nothing); every data packet arrived ECT(0) or CE.
fn assert_marks_reach_the_controller(s: &serde_json::Value, r: &serde_json::Value) {
    let n = |v: &serde_json::Value, k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k}: {v}"));
    let (data, ect0, ce) = (n(r, "data_packets"), n(r, "ecn_ect0"), n(r, "ecn_ce"));
    assert_eq!(ect0 + ce, data, "{r}");
    assert!(ce > 0, "no CE reached the receiver: {r}");
    // About one in EVERY, a GSO train counting once at the marker.
    assert!(
        ce * EVERY * 4 >= data && ce <= data / 2,
        "{ce} CE of {data}: {r}"
    );
    assert_eq!(s["ecn"], "capable", "{s}");
    let fed = n(s, "ce_packets");
    assert!(fed > 0 && fed <= ce, "{fed} CE fed, {ce} counted: {s}");
    if n(s, "retransmissions") == 0 {
        assert_eq!(fed, ce, "{s} {r}");
    }
    assert!(s["ce_fraction"].as_f64().unwrap() > 0.0, "{s}");
}

#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn ce_marked_on_a_veth_reaches_the_udp_senders_controller() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    let pid = std::process::id();
    let tag = format!("bbrlab-ecn-{pid}-");
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("ce.c");
    let obj = dir.path().join("ce.o");
    std::fs::write(&src, MARKER).unwrap();
    let multiarch = format!("-I/usr/include/{}-linux-gnu", std::env::consts::ARCH);
    run(&[
        "clang",
        "-O2",
        "-g",
        "-target",
        "bpf",
        &multiarch,
        &format!("-DEVERY={EVERY}"),
        "-c",
        src.to_str().unwrap(),
        "-o",
        obj.to_str().unwrap(),
    ]);

    let ns = Namespaces {
        names: vec![format!("{tag}s"), format!("{tag}r")],
    };
    let (s_ns, r_ns) = (ns.names[0].as_str(), ns.names[1].as_str());
    let (s_if, r_if) = (
        format!("bbecs{}", pid % 100_000),
        format!("bbecr{}", pid % 100_000),
    );
    for n in &ns.names {
        run(&["ip", "netns", "add", n]);
        run(&["ip", "-n", n, "link", "set", "lo", "up"]);
    }
    run(&[
        "ip", "link", "add", &s_if, "netns", s_ns, "type", "veth", "peer", "name", &r_if, "netns",
        r_ns,
    ]);
    for (n, i, v4, v6) in [
        (s_ns, &s_if, "10.203.0.1/24", "fd77:203::1/64"),
        (r_ns, &r_if, "10.203.0.2/24", "fd77:203::2/64"),
    ] {
        run(&["ip", "-n", n, "addr", "add", v4, "dev", i]);
        run(&["ip", "-n", n, "addr", "add", v6, "dev", i, "nodad"]);
        run(&["ip", "-n", n, "link", "set", i, "up"]);
    }
    run(&["tc", "-n", s_ns, "qdisc", "add", "dev", &s_if, "clsact"]);
    run(&[
        "tc",
        "-n",
        s_ns,
        "filter",
        "add",
        "dev",
        &s_if,
        "egress",
        "bpf",
        "da",
        "obj",
        obj.to_str().unwrap(),
        "sec",
        "tc",
    ]);

    // IPv4, CUBIC (which answers CE as a loss).
    let (s, r) = transfer(&ns, "10.203.0.2:5402", &["--ecn", "--cc", "cubic"]);
    assert_marks_reach_the_controller(&s, &r);
    // IPv6 (the traffic class), bbr3 with the Linux profile.
    let (s, r) = transfer(
        &ns,
        "[fd77:203::2]:5403",
        &["--ecn", "--cc", "bbr3", "--bbr3-profile", "linux-v3"],
    );
    assert_marks_reach_the_controller(&s, &r);
    // Without --ecn nothing is ECN-capable, so nothing is marked.
    let (s, r) = transfer(&ns, "10.203.0.2:5404", &["--cc", "cubic"]);
    assert_eq!(r["ecn_ce"], 0, "{r}");
    assert_eq!(r["ecn_not_ect"], r["data_packets"], "{r}");
    assert_eq!(
        (s["ecn"].as_str(), s["ce_packets"].as_u64()),
        (Some("off"), Some(0))
    );

    drop(ns);
    assert!(
        namespaces_left(&tag).is_empty(),
        "{:?}",
        namespaces_left(&tag)
    );
}

/// 20 Mbit/s, 40 ms, a 300-packet queue that marks ECN-capable packets
/// (and drops the others) above 1 ms of sojourn.
const STEP_ECN_PATH: &str = r#"
[link.forward]
rate = "20mbit"
delay = "20ms"
queue = { limit = "300pkt", aqm = "step", threshold = "1ms", ecn = true }
[link.reverse]
delay = "20ms"
"#;

/// A `cubic` upload of 6 s over `STEP_ECN_PATH` through the emulator,
/// with `--ecn` or without: the sender's and receiver's summaries and the
/// emulator's forward (drops, CE marks).
fn cubic_over_step_queue(ecn: bool) -> (serde_json::Value, serde_json::Value, u64, u64) {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("step-ecn.toml");
    std::fs::write(&scenario, STEP_ECN_PATH).unwrap();
    let flag = if ecn { "--ecn" } else { "" };
    let (ok, out, err) = emu(
        &["--scenario", scenario.to_str().unwrap()],
        &format!("{BIN} recv --listen {{server}}:5202 --idle-timeout 10s"),
        &format!(
            "{BIN} send --to {{server}}:5202 --cc cubic --duration 6s --quiet --idle-timeout 10s {flag}"
        ),
        60,
    );
    assert!(ok, "emu failed\n{out}\n{err}");
    // "dropped A / B, marked CE C / D": the forward direction's counts.
    let count = |what: &str| -> u64 {
        let at = err
            .rfind(what)
            .unwrap_or_else(|| panic!("no `{what}` in {err}"));
        err[at + what.len()..]
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no count after `{what}` in {err}"))
    };
    (
        json_with(&out, "\"cc\""),
        json_with(&out, "\"duplicates\""),
        count("dropped "),
        count("marked CE "),
    )
}

/// Through the emulator's step-marking queue, the UDP sender with `--ecn`
/// gets the queue's decisions as CE marks: the emulator marks, the
/// receiver counts CE from the IP header, the sender's controller gets
/// every mark the receiver counted (none lost: only data packets are
/// ECN-capable, and a flow that answers marks leaves the 300-packet queue
/// far from full), and nothing is dropped or repaired. Without
/// `--ecn` the same queue drops instead and nothing is marked.
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn udp_with_ecn_gets_the_emulators_step_marks_instead_of_drops() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_root();
    let (s, r, dropped, marked) = cubic_over_step_queue(true);
    let n = |v: &serde_json::Value, k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k}: {v}"));
    assert_eq!(s["ecn"], "capable", "{s}");
    assert!(marked > 0, "the emulator marked nothing");
    assert!(n(&r, "ecn_ce") > 0, "{r}");
    assert!(n(&r, "ecn_ce") <= marked, "{r} after {marked} marks");
    assert_eq!(
        n(&r, "ecn_ect0") + n(&r, "ecn_ce"),
        n(&r, "data_packets"),
        "{r}"
    );
    assert_eq!(n(&s, "ce_packets"), n(&r, "ecn_ce"), "{s} {r}");
    // Nothing dropped, so nothing repaired: any retransmission is one of
    // the two probes a probe timeout sends (at a window cut to a packet or
    // two, the receiver's 25 ms delayed ACK can outlast the timeout).
    assert_eq!(dropped, 0);
    assert!(n(&s, "retransmissions") <= 2 * n(&s, "rtos"), "{s}");

    let (s, r, dropped, marked) = cubic_over_step_queue(false);
    assert_eq!(s["ecn"], "off", "{s}");
    assert_eq!((marked, n(&r, "ecn_ce")), (0, 0), "{r}");
    assert!(dropped > 0, "the step dropped nothing");
    assert!(n(&s, "retransmissions") > 0, "{s}");
}
