//! The rules that decide who wins when flows compete, each held on the
//! path where it shows. The kernel's figures quoted here were measured
//! with two kernel TCP flows (iperf3) through `bbrlab emu` on the same
//! path: 20 Mbit/s, 40 ms, drop-tail, MSS 1448, 30 s.

use congestion::{Algorithm, Bbr3Profile, Config, CubicAvoidance, HyStartVariant, Mode};
use netsim::{
    AckPolicy, App, Ecn, FlowConfig, Handshake, MemoryRecorder, NoRecorder, Pacing, SimConfig,
    Summary,
};

mod common;
use common::direction;

const SEC: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;
const MSS: u64 = 1448;

/// A TCP-like flow: Linux's receiver, MSS 1448, and for CUBIC the
/// kernel's HyStart and avoidance rules. BBR is paced in quanta (TSO bursts); CUBIC is not
/// paced at all, as Linux sends it without an fq qdisc. Both defer a TSO
/// packet the window cannot let out whole, as Linux does.
fn tcp_flow(cc: Config) -> FlowConfig {
    let mut cc = cc;
    cc.mss_bytes = MSS;
    cc.cubic.hystart_variant = HyStartVariant::Linux;
    cc.cubic.avoidance = CubicAvoidance::Linux;
    let mut f = FlowConfig::bulk(cc.algorithm.name(), cc);
    f.ack = AckPolicy::LINUX;
    f.pacing = if cc.algorithm == Algorithm::Cubic {
        Pacing::Off
    } else {
        Pacing::Quantum
    };
    f.tso_defer = true;
    f.header_bytes = 52;
    f
}

/// 20 Mbit/s, 40 ms, a drop-tail buffer of `bdp` bandwidth-delay
/// products (one BDP is 100 kB, 69 packets of 1448 bytes).
fn dumbbell(bdp: f64, flows: Vec<FlowConfig>, seconds: u64) -> SimConfig {
    let packets = (bdp * 20e6 * 0.040 / 8.0 / MSS as f64).round().max(1.0);
    SimConfig {
        duration_ns: seconds * SEC,
        seed: 1,
        forward: direction(&format!(
            "rate = \"20mbit\"\ndelay = \"20ms\"\nqueue = {{ limit = \"{packets}pkt\" }}"
        )),
        reverse: direction("rate = \"20mbit\"\ndelay = \"20ms\""),
        flows,
        sample_interval_ns: 0,
        topology: Default::default(),
    }
}

fn share(s: &Summary) -> f64 {
    let (a, b) = (s.flows[0].goodput_bps, s.flows[1].goodput_bps);
    a / (a + b)
}

/// The first flow's share over seeds `first..=last` of `cfg`, sorted, and
/// their median: with no host timing noise, or a little, two flows at a
/// full queue can lock in phase, so one seed is one draw. The first
/// seed's run goes to `rec`.
fn shares_by_seed(
    cfg: &mut SimConfig,
    seeds: std::ops::RangeInclusive<u64>,
    rec: &mut dyn netsim::Recorder,
) -> (f64, Vec<f64>) {
    let first = *seeds.start();
    let mut shares: Vec<f64> = seeds
        .map(|seed| {
            cfg.seed = seed;
            let r: &mut dyn netsim::Recorder = if seed == first { rec } else { &mut NoRecorder };
            share(&netsim::run(cfg, r).expect("simulation"))
        })
        .collect();
    shares.sort_by(f64::total_cmp);
    (shares[shares.len() / 2], shares)
}

/// BBR against CUBIC by buffer depth, TCP-like on both sides, against the
/// kernel's shares on the same path (iperf3 `-C bbr` and `-C cubic`
/// through `bbrlab emu`; the mean of three 30 s runs of 2026-12-02, as
/// `docs/validate/validate-multiflow-linux.json` has them; issue 31's
/// first single runs gave 0.89, 0.86, 0.53, 0.29, 0.16 and 0.08): the
/// median of five seeds within 0.05 of each,
/// the bound `bbrlab validate` holds competing flows to (two 30 s runs
/// differ by about 0.03 in the kernel; the rest is model error we
/// accept). One seed is not enough: with no host timing noise the two
/// flows can lock in phase at the full queue, and at 2 BDP seed 1 gives
/// 0.62 where seeds 2-8 give 0.52-0.58 (since TCP repairs leave in
/// bursts of their own). The rules that decide it
/// are Linux's: which ACK may refresh an expired min_rtt (a lone runt's
/// only, `FLAG_ACK_MAYBE_DELAYED`), CUBIC's window brought down by PRR and
/// grown only when used, and the receiver's delayed-ACK timer cancelled by
/// every ACK sent (`tcp_event_ack_sent()`). Before them the simulator gave
/// BBR 0.777 at half a BDP and 0.235 at four; with a delayed-ACK timer
/// that outlived the ACK it was armed for, 0.478 at two BDPs. The path is
/// the kernel's: 52-byte headers (TCP with timestamps) and ACKs on a
/// 20 Mbit/s return link, as `bbrlab validate --multiflow` builds it, and
/// CUBIC leaves slow start by Linux's HyStart, followed by at least 5 %
/// growth a round until its first loss (with RFC 9406's HyStart++ and no
/// such floor it gives 0.472 at 2 BDP; with Linux's HyStart alone, 0.245
/// and 0.146 at 8 and 16, as CUBIC crawls up its flat curve).
#[test]
fn bbr_against_cubic_shares_the_link_as_the_kernels_do() {
    for (bdp, kernel) in [
        (0.5, 0.886),
        (1.0, 0.866),
        (2.0, 0.557),
        (4.0, 0.330),
        (8.0, 0.182),
        (16.0, 0.118),
    ] {
        let flows = vec![
            tcp_flow(Config::new(Algorithm::Bbr)),
            tcp_flow(Config::new(Algorithm::Cubic)),
        ];
        let mut rec = MemoryRecorder::default();
        let mut cfg = dumbbell(bdp, flows, 30);
        cfg.sample_interval_ns = 100 * MS;
        let (bbr, shares) = shares_by_seed(&mut cfg, 1..=5, &mut rec);
        eprintln!("{bdp} BDP: bbr's share {bbr:.3} (seeds {shares:.3?}), the kernel's {kernel}");
        assert!(
            (bbr - kernel).abs() <= 0.05,
            "{bdp} BDP: bbr's share {bbr:.3}, the kernel's {kernel}"
        );
        if bdp >= 4.0 {
            // Once the first 10 s window has passed, BBR's min_rtt holds
            // the queue CUBIC keeps standing (the path's own RTT is 40 ms).
            let late_min_rtt = rec
                .flows
                .iter()
                .filter(|f| f.flow == 0 && f.t_ns > 20 * SEC)
                .filter_map(|f| f.min_rtt_ns)
                .max()
                .expect("samples");
            assert!(
                late_min_rtt > 45 * MS,
                "{bdp} BDP: min_rtt {late_min_rtt} ns"
            );
        }
    }
}

/// Two `bbr` flows with 10 and 50 ms added to the 40 ms path in a 1-BDP
/// drop-tail buffer: the kernel's shorter flow takes 0.55 of the goodput
/// (0.54-0.57 over three 30 s runs of 2026-12-02,
/// `docs/validate/validate-multiflow-linux.json`). Both STARTUPs overflow
/// the queue, and what the longer flow loses there sets the bandwidth it
/// leaves STARTUP with, which it then keeps. Linux retransmits a lost skb
/// alone, so a kernel flow in recovery sends most repairs as single
/// segments and meets the full queue in more, smaller bursts; before the
/// simulated TCP sender did the same, its repairs rode in new data's
/// bursts, the longer flow lost 44 packets to the kernel's 27 in the first
/// overflow (one kernel run against its simulation without the timing
/// noise) and the shorter one got 0.69 in `validate`. As `validate
/// --multiflow` runs it (Linux's receiver, kernel-sized bursts, TCP's
/// handshake, the hosts' timing noise on the ACK path), the median of 15
/// seeds within 0.05: 0.591 (0.56-0.83; 0.567 before the sender pushed
/// the last segment of each whole burst); without the rule 0.661
/// (0.57-0.83). The outcome turns on a few packets in the first second,
/// so one seed says little.
#[test]
fn two_bbr_flows_rtt_unfairness_in_one_bdp_shares_as_the_kernels_do() {
    let flow = |extra_ms: u64, start_ns: u64| {
        let mut f = tcp_flow(Config::new(Algorithm::Bbr));
        f.extra_rtt_ns = extra_ms * MS;
        f.start_ns = start_ns;
        f.handshake = Handshake::Tcp;
        f.initial_burst_packets = 10;
        f
    };
    let mut cfg = dumbbell(1.0, vec![flow(10, 0), flow(50, 444_000)], 30);
    cfg.forward = direction("rate = \"20mbit\"\ndelay = \"20ms\"\nqueue = { limit = \"67pkt\" }");
    cfg.reverse = direction(
        "rate = \"20mbit\"\ndelay = \"20ms\"\n\
         jitter = { reorder = false, normal = { mean = \"50us\", sd = \"20us\", floor = \"0s\" } }",
    );
    let (short, shares) = shares_by_seed(&mut cfg, 1..=15, &mut NoRecorder);
    eprintln!("the shorter flow's share {short:.3} (seeds {shares:.3?}), the kernel's 0.55");
    assert!(
        (short - 0.55).abs() <= 0.05,
        "{short:.3} (seeds {shares:.3?})"
    );
}

/// An application-limited CUBIC flow must not grow a window it does not
/// use (Linux `tcp_is_cwnd_limited()` in `cubictcp_cong_avoid()`; RFC 9002
/// §7.8). 5 Mbit/s offered on a 100 Mbit/s, 40 ms path keeps about 25 kB
/// in flight; the window may reach twice the most in flight in slow start
/// and no more. Without the rule it reached 18.7 MB.
#[test]
fn an_app_limited_cubic_flow_keeps_its_window_near_what_it_uses() {
    for algorithm in [Algorithm::Cubic, Algorithm::Reno] {
        let mut f = tcp_flow(Config::new(algorithm));
        f.app = App::Rate {
            bytes_per_sec: 5e6 / 8.0,
        };
        let cfg = SimConfig {
            duration_ns: 20 * SEC,
            seed: 1,
            forward: direction(
                "rate = \"100mbit\"\ndelay = \"20ms\"\nqueue = { limit = \"1000pkt\" }",
            ),
            reverse: direction("delay = \"20ms\""),
            flows: vec![f],
            sample_interval_ns: 10 * MS,
            topology: Default::default(),
        };
        let mut rec = MemoryRecorder::default();
        netsim::run(&cfg, &mut rec).expect("simulation");
        let max_inflight = rec.flows.iter().map(|f| f.inflight_bytes).max().unwrap();
        let max_cwnd = rec.flows.iter().map(|f| f.cwnd_bytes).max().unwrap();
        eprintln!("{algorithm:?}: max inflight {max_inflight}, max cwnd {max_cwnd}");
        assert!(
            max_inflight < 60_000,
            "{algorithm:?}: inflight {max_inflight}"
        );
        assert!(
            max_cwnd <= 2 * max_inflight + 10 * MSS,
            "{algorithm:?}: cwnd {max_cwnd} with at most {max_inflight} in flight"
        );
    }
}

/// BBRv3 (linux-v3) re-probes early after ECN only in `TCP_CA_Open`
/// (`bbr_check_time_to_probe_bw()`), and every ACK with ECE holds Linux in
/// CWR until an ACK passes the point CWR began. Alone on a queue that
/// marks above 1 ms, with marks arriving every round, the kernel rarely
/// sees Open; a simulator that never left Open re-probed on the first
/// DOWN ACK of every cycle and spent 73 % of its time in REFILL. The bound
/// (REFILL under a third of the time) leaves room for the re-probes CWR
/// does allow between marked rounds.
///
/// Without TSO deferral, which is not the rule under test: with it this
/// flow's whole TSO packets (8 segments, about 1 ms at this rate) meet
/// the 1 ms step harder, and it reads "too much CE" twice as often
/// (REFILL 33 %, 66 Mbit/s). This flow has v3's exact signals, which no
/// kernel here runs; in the stock kernel's form, with deferral and
/// Linux's prompt ECN ACKs, the simulator gives 90.6 Mbit/s on this rate
/// and step against kernel `bbrlab_bbr3`'s 88.5-89.3, marking 42.8 % of
/// its packets to the kernel's 39-42 % (book, Validation, "ECN on a step
/// queue against the kernel").
#[test]
fn linux_v3_with_persistent_marks_stays_out_of_refill() {
    let mut cc = Config::new(Algorithm::Bbr3);
    cc.bbr3 = congestion::Bbr3Config::for_profile(Bbr3Profile::LinuxV3);
    let mut f = tcp_flow(cc);
    f.tso_defer = false;
    f.ecn = Ecn::Ect0;
    let cfg = SimConfig {
        duration_ns: 20 * SEC,
        seed: 1,
        forward: direction(
            "rate = \"100mbit\"\ndelay = \"2ms\"\n\
             queue = { limit = \"1000pkt\", aqm = \"step\", threshold = \"1ms\", ecn = true }",
        ),
        reverse: direction("delay = \"2ms\""),
        flows: vec![f],
        sample_interval_ns: 0,
        topology: Default::default(),
    };
    let s = netsim::run(&cfg, &mut NoRecorder).expect("simulation");
    let f = &s.flows[0];
    let refill = f.mode_times.fraction(Mode::ProbeBwRefill);
    eprintln!(
        "REFILL {:.3}, goodput {:.1} Mbit/s",
        refill,
        f.goodput_bps / 1e6
    );
    assert!(f.ce_packets > 0, "the queue marked");
    assert!(refill < 0.33, "REFILL {:.0} % of the time", refill * 100.0);
    assert!(
        f.goodput_bps > 0.8 * 100e6,
        "goodput {:.1} Mbit/s",
        f.goodput_bps / 1e6
    );
}

/// A BBRv3 flow (`linux-v3`, stock-kernel signals, as the BPF control)
/// and a CUBIC flow `offset_ns` later, in a `bdp`-BDP buffer, CUBIC sent
/// with `pacing`: CUBIC's window when it first leaves slow start, in
/// packets, and what BBRv3 retransmitted in STARTUP.
fn cubic_exit_beside_bbr3(bdp: f64, offset_ns: u64, pacing: Pacing) -> (u64, u64) {
    let mut v3 = Config::new(Algorithm::Bbr3);
    v3.bbr3 = congestion::Bbr3Config::for_profile(Bbr3Profile::LinuxV3);
    v3.bbr3.signals = congestion::Bbr3Signals::StockKernel;
    let mut cubic = tcp_flow(Config::new(Algorithm::Cubic));
    cubic.start_ns = offset_ns;
    cubic.pacing = pacing;
    let mut rec = MemoryRecorder::default();
    let mut cfg = dumbbell(bdp, vec![tcp_flow(v3), cubic], 2);
    cfg.sample_interval_ns = MS;
    netsim::run(&cfg, &mut rec).expect("simulation");
    let exit = rec
        .flows
        .iter()
        .find(|f| f.flow == 1 && f.mode != Mode::SlowStart)
        .map(|f| f.cwnd_bytes / MSS)
        .expect("cubic leaves slow start");
    let startup_end = rec
        .flows
        .iter()
        .find(|f| f.flow == 0 && f.mode != Mode::Startup)
        .map(|f| f.t_ns)
        .expect("bbr3 leaves STARTUP");
    let retx_in_startup = rec
        .flows
        .iter()
        .filter(|f| f.flow == 0 && f.t_ns <= startup_end)
        .map(|f| f.retransmissions)
        .max()
        .unwrap_or(0);
    (exit, retx_in_startup)
}

/// A BBRv3 flow and a CUBIC flow start together in a 2-, 4- and 16-BDP
/// buffer, CUBIC 0 to 4 ms after BBRv3: the kernel's two connections sent
/// their SYNs within 0.35 ms of each other in every run of `validate
/// --multiflow`. The kernel's CUBIC left slow start at about 70 packets at
/// 2 BDP, 76 at 4 and 70-89 at 16 (four runs), and BBRv3 lost nothing in
/// STARTUP (nor does it here whenever CUBIC leaves by 90 packets). Later
/// starts (a fifth of the base RTT or more) change which of CUBIC's rounds
/// BBRv3's packets fall in, and its HyStart then leaves at 88-92 packets by
/// the delay test instead of the ACK train: no kernel run had such a start.
///
/// Three rules put the simulator there. Linux's receiver ACKs every
/// segment that raises its receive window, as it does while the senders
/// ramp up: the kernel's trace of the 16-BDP run shows CUBIC's ACKs one
/// segment each, 0.6 ms apart, and HyStart's ACK train ending slow start
/// at 72 packets. With an ACK every second segment (1.2 ms apart, and
/// more than 2 ms when BBRv3's packets fall between) the train broke and
/// CUBIC went on to 118-147 packets at 16 BDP. Linux's HyStart, not HyStart++:
/// with HyStart++ CUBIC grew to 184 packets at 2 BDP, BBRv3 lost 8 packets
/// in STARTUP and kept about 0.3 of the link for the rest of the run (the
/// BPF control: 0.53). And no pacer for CUBIC, as Linux sends it without
/// fq. The median over the starts is 68 packets at each depth (70 before
/// the sender pushed the last segment of each burst, 69 before the ACK
/// train counted Linux's TSO/GRO cushion, `hystart_ack_delay()`). Paced
/// in quanta it was 168 before PSH (the spread-out packets missed the
/// round's first RTT samples) and is 62 with it, each paced burst's
/// pushed segment now acknowledged at once: the kernel's figure comes
/// from the unpaced sender it has, not from this contrast. HyStart's rounds are counted from the first ACK,
/// below its low window too, as Linux has done since 6.13 (and the stable kernels the fix went to)
/// (`hystart_update()`); when they began only at 16 packets, the median
/// over nine starts spread over the base RTT was 72 unpaced and 100 paced.
#[test]
fn kernel_cubic_leaves_slow_start_before_it_overflows_a_bbr3_flows_buffer() {
    for bdp in [2.0, 4.0, 16.0] {
        let median_exit = |pacing: Pacing| {
            let mut exits: Vec<u64> = [0, 100, 200, 350, 1_000, 2_000, 4_000]
                .into_iter()
                .map(|us| {
                    let (exit, retx) = cubic_exit_beside_bbr3(bdp, us * 1_000, pacing);
                    if exit <= 90 {
                        assert_eq!(retx, 0, "{bdp} BDP, start +{us} µs: bbr3 lost in STARTUP");
                    }
                    exit
                })
                .collect();
            exits.sort_unstable();
            exits[exits.len() / 2]
        };
        let unpaced = median_exit(Pacing::Off);
        assert!(
            (60..=90).contains(&unpaced),
            "{bdp} BDP: cubic left slow start at {unpaced} packets (median; the kernel: 70-89)"
        );
        eprintln!("{bdp} BDP: cubic left slow start at {unpaced} packets (median)");
    }
}
