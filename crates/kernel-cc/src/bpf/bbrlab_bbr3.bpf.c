// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * bbrlab_bbr3: BBRv3 as a BPF struct_ops congestion control for a stock
 * Linux kernel (6.10 or later; written and measured on 6.18), implementing
 * the `linux-v3` profile of bbrlab's simulator `bbr3`
 * (crates/congestion/src/bbr3/, Bbr3Config::linux_v3) with its
 * "stock-kernel" signals. Written for bbrlab from that code and the facts
 * of Google's v3 tcp_bbr.c (each rule names the function it follows);
 * no code is copied.
 *
 * Units are the kernel's: bandwidth in packets per microsecond scaled by
 * 2^24 (BW_UNIT), gains and fractions scaled by 256 (BBR_UNIT), volumes in
 * packets, times in microseconds (tp->tcp_mstamp).
 *
 * What it approximates, and why (the stock kernel lacks v3's patches;
 * notes/issue24-contract.md has the list the simulator follows too):
 *  1. rs->tx_in_flight (inflight when the ACKed packet was sent) is
 *     rs->prior_in_flight (inflight just before this ACK): the only
 *     inflight figure the stock rate sample has; close to the one a round
 *     trip ago in steady state, too high right after a cwnd cut.
 *  2. rs->lost (losses over the ACKed packet's flight) is tp->lost now
 *     less an estimate of tp->lost when the ACKed packet left: read at
 *     rs->prior_delivered off the line through tp->lost marked at the
 *     last two round starts (start_round()) and now (sample_lost()).
 *     Counting only since the current round started read zero on the
 *     ACK that starts a round, where STARTUP judges its loss rate.
 *  3. v3's per-lost-packet hook (skb_marked_lost ->
 *     bbr_handle_inflight_too_high) does not exist for BPF controls: the
 *     same loss-rate check runs once per ACK with rs->losses > 0, at the
 *     top of cong_control, before the model update, with 1 and 2 and the
 *     ACK's newly lost packets as the "lost skb".
 *  4. ECN: the CE counts are tp->delivered_ce and tp->delivered (the
 *     kernel adds to delivered_ce exactly the packets of ACKs carrying ECE
 *     under RFC 3168 ECN, tcp_ecn=1, which is what CA_ACK_ECE flags; the
 *     per-ACK CE count is the increase of delivered_ce). v3's per-route
 *     `ecn_low` feature does not exist: the ECN response is on when the
 *     socket negotiated ECN (tp->ecn_flags & TCP_ECN_OK), still only on
 *     paths with min_rtt <= 5 ms (bbr_ecn_max_rtt_us).
 *  5. v3's TLP-retransmission flag (is_acking_tlp_retrans_seq) does not
 *     exist: such ACKs are treated as ordinary.
 *
 * Where the BPF interface differs from a kernel module (as bbrlab_cc.h):
 *  - Writes: snd_cwnd, snd_ssthresh, sk_pacing_rate/status and, in
 *    PROBE_RTT, tp->app_limited; a kernel that does not allow the last
 *    (older than this 6.18) rejects the load with the verifier's "no write
 *    support to tcp_sock at off N".
 *  - The state (360 bytes) does not fit icsk_ca_priv (104 bytes):
 *    all of it lives in a socket-storage map created at init, which is
 *    also what the probe reads (get_info is not allowed for BPF controls).
 *    A socket whose storage could not be allocated (memory pressure) runs
 *    with the kernel's initial cwnd and pacing untouched.
 *  - Times use tp->tcp_mstamp (µs), not jiffies.
 *  - MAX_TCP_HEADER is a kernel build constant: 320 bytes (x86_64).
 *  - Random numbers come from bpf_get_prandom_u32() (v3: get_random_u32).
 *
 * What it leaves out:
 *  - min_tso_segs and sndbuf_expand, as bbrlab_bbr does (registered as BPF
 *    programs the kernel acted on other values; see bbrlab_cc.h; the cause
 *    was not found, and was not re-measured for v3). Instead the kernel
 *    uses net.ipv4.tcp_min_tso_segs (default 2, v3's value above
 *    1.2 Mbit/s; v3 asks 1 below) and 2 x cwnd of send buffer (v3 asks
 *    3 x). The TSO goal (bbr_tso_segs_generic()) still sizes the
 *    quantization budget; the kernel's own autosizing decides the bursts.
 *  - undo: bbr_undo_cwnd() restores the model and cwnd but, as the
 *    linux-v3 profile, not the state (no return to STARTUP or UP).
 *  - get_info (TCP_CC_INFO): unsupported for BPF; the socket-storage map
 *    publishes the state instead.
 *  - Everything v3 does beyond the simulator's linux-v3 profile (the
 *    simulator is the specification here).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char _license[] SEC("license") = "GPL";

#define BW_SCALE 24
#define BW_UNIT (1ULL << BW_SCALE)
#define BBR_SCALE 8
#define BBR_UNIT 256U
#define USEC_PER_SEC 1000000ULL
#define USEC_PER_MSEC 1000ULL
#define NSEC_PER_USEC 1000ULL
#define TCP_INIT_CWND 10U
#define TCP_INFINITE_SSTHRESH 0x7fffffffU
#define TCP_ECN_OK 1
#define CA_OPEN 0
#define CA_RECOVERY 3
#define CA_LOSS 4
#define EVENT_TX_START 0
#define PACING_NONE 0
#define PACING_NEEDED 1
#define GSO_LEGACY_MAX 65536U
#define MAX_TCP_HEADER_GUESS 320U
#define INF32 0xffffffffU

/* States; PROBE_BW's four phases are states of their own, as the
 * simulator's (bbr3/mod.rs `State`). */
#define S_STARTUP 0
#define S_DRAIN 1
#define S_DOWN 2
#define S_CRUISE 3
#define S_REFILL 4
#define S_UP 5
#define S_PROBE_RTT 6

/* enum bbr_ack_phase */
#define ACK_INIT 0
#define ACK_REFILLING 1
#define ACK_PROBE_STARTING 2
#define ACK_PROBE_FEEDBACK 3
#define ACK_PROBE_STOPPING 4

/* Bbr3Config::linux_v3(), in BBR_UNIT. */
#define STARTUP_PACING_GAIN (BBR_UNIT * 277 / 100 + 1)
#define STARTUP_CWND_GAIN (BBR_UNIT * 2)
#define DRAIN_PACING_GAIN (BBR_UNIT * 1000 / 2885)
#define DOWN_PACING_GAIN (BBR_UNIT * 91 / 100)
#define UP_PACING_GAIN (BBR_UNIT * 5 / 4)
#define CWND_GAIN (BBR_UNIT * 2)
#define UP_CWND_GAIN (BBR_UNIT * 9 / 4)
#define PROBE_RTT_CWND_GAIN (BBR_UNIT / 2)
#define LOSS_THRESH (BBR_UNIT * 2 / 100) /* 5/256 */
#define BETA (BBR_UNIT - BBR_UNIT * 30 / 100) /* 180/256 */
#define HEADROOM (BBR_UNIT * 15 / 100) /* 38/256 */
#define FULL_BW_THRESH (BBR_UNIT * 5 / 4)
#define FULL_BW_CNT 3
#define STARTUP_FULL_LOSS_CNT 6
#define MIN_PIPE_CWND 4U
#define PACING_MARGIN_PERCENT 1
#define PROBE_RTT_INTERVAL_US (5 * USEC_PER_SEC)
#define PROBE_RTT_DURATION_US (200 * USEC_PER_MSEC)
#define MIN_RTT_WIN_US (10 * USEC_PER_SEC)
#define PROBE_WAIT_BASE_US (2 * USEC_PER_SEC)
#define PROBE_WAIT_RAND_US (1 * USEC_PER_SEC)
#define PROBE_MAX_ROUNDS 63
#define PROBE_RAND_ROUNDS 2
#define EXTRA_ACKED_WIN_RTTS 5
#define EXTRA_ACKED_MAX_US (100 * USEC_PER_MSEC)
#define TSO_RTT_SHIFT 9
#define ECN_ALPHA_GAIN 16 /* 1/16 */
#define ECN_ALPHA_INIT BBR_UNIT
#define ECN_FACTOR 85 /* 1/3 */
#define ECN_THRESH 128 /* 1/2 */
#define FULL_ECN_ROUNDS 2
#define ECN_REPROBE_GAIN 128 /* 1/2 */
#define ECN_MAX_RTT_US 5000

/* The published block's version (struct bbrlab_b3_state's `layout`):
 * 2 since probe_rtt_min_stamp was published (2026-12-05). */
#define BBR3_LAYOUT 2

/* The whole state, in the socket-storage map. The first block is what
 * the probe reads (kernel-cc's RawState3 mirrors it); the rest is the
 * controller's own. */
struct bbrlab_b3_state {
	/* ---- published ---- */
	u64 max_bw;       /* bbr_max_bw(): packets/us << 24 */
	u64 bw;           /* min(max_bw, bw_shortterm) */
	u64 bw_shortterm; /* ~0U unset */
	u64 acks;
	u64 probe_rtt_entries;
	u64 last_probe_rtt_us; /* tcp_mstamp at the last PROBE_RTT entry */
	u64 up_entries;        /* PROBE_BW_UP entries */
	u64 last_up_us;        /* tcp_mstamp at the last UP entry */
	u64 cuts;              /* bbr_handle_inflight_too_high() calls */
	u64 risky_reprobes;    /* REFILLs one round after a precautionary UP stop */
	/* us: when probe_rtt_min_us last took a sample (a lower one, or the
	 * first after 5 s), or PROBE_RTT last ended; PROBE_RTT is due 5 s
	 * after (bbr_update_min_rtt()).
	 * Published so that a run can tell a late PROBE_RTT (a lower RTT
	 * restarted the clock) from a missed one. */
	u64 probe_rtt_min_stamp;
	/* BBR3_LAYOUT: the published block's version, so that a reader can
	 * tell a program loaded by an older bbrlab whose layout differs at
	 * the same size (kernel-cc's RawState3 and BBR3_LAYOUT mirror it). */
	u64 layout;
	u32 mss;
	u32 min_rtt_us; /* ~0U before a sample */
	u32 mode;       /* S_* */
	u32 pacing_gain;
	u32 cwnd_gain;
	u32 cwnd;
	u32 inflight_longterm;  /* packets, ~0U unset */
	u32 inflight_shortterm; /* packets, ~0U unset */
	u32 probe_rtt_min_cwnd; /* lowest cwnd in the last PROBE_RTT */
	u32 last_cut_tx_in_flight; /* the tx_in_flight of the last cut */
	u32 last_cut_target;       /* target inflight at the last cut */
	u32 last_cut_longterm;     /* inflight_longterm set by it */
	u32 last_cut_state;        /* state when cut (S_*) */
	u32 ecn_alpha;
	u32 ecn_eligible;
	u32 round_count;           /* rounds counted (update_round()) */
	u32 rounds_since_probe_up; /* rounds since DOWN began, plus pick_probe_wait()'s head start */
	u32 counted; /* counted in `live` */

	/* ---- private ---- */
	u64 cycle_stamp;          /* us */
	u64 probe_wait_us;
	u64 min_rtt_stamp;        /* us */
	u64 probe_rtt_done_stamp; /* us, 0 unset */
	u64 extra_acked_start;    /* us */
	u32 probe_rtt_min_us;
	u32 next_round_delivered;
	u32 round_lost_start; /* tp->lost at the round's start (2.) */
	u32 prev_round_delivered; /* the previous round start's marks (2.) */
	u32 prev_round_lost;
	u32 bw_slot[2];       /* TwoSlotMax */
	u32 bw_latest;
	u32 inflight_latest;
	u32 loss_round_delivered;
	u32 full_bw;
	u32 full_bw_count;
	u32 drain_start_round;
	u32 bw_probe_up_acked;
	u32 probe_up_acked_per_inc;
	u32 bw_probe_up_rounds;
	u32 loss_events_in_round;
	u32 startup_ecn_rounds;
	u32 prior_cwnd;
	u32 prev_ca_state;
	u32 undo_bw_shortterm;
	u32 undo_inflight_shortterm;
	u32 undo_inflight_longterm;
	u32 round_ce_ratio;
	u32 alpha_last_delivered;
	u32 alpha_last_ce;
	u32 last_delivered_ce;
	u32 extra_acked_delivered;
	u32 extra_acked_slot[2];
	u32 extra_acked_win_rounds;
	u32 extra_acked_win_idx;
	u32 sample_rate; /* this ACK's rate, 0 when the sample is invalid */
	u8 sample_valid;
	u8 ack_phase;
	u8 round_start;
	u8 loss_round_start;
	u8 is_loss_in_round;
	u8 is_ecn_in_round;
	u8 loss_round_had_loss;
	u8 loss_in_cycle;
	u8 ecn_in_cycle;
	u8 probe_rtt_expired;
	u8 probe_rtt_round_done;
	u8 idle_restart;
	u8 full_bw_now;
	u8 full_bw_reached;
	u8 is_bw_probe_sample;
	u8 prev_probe_too_high;
	u8 prev_probe_precautionary;
	u8 has_seen_rtt;
	u8 pad[6];
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bbrlab_b3_state);
} bbrlab_b3_st SEC(".maps");

/* Sockets whose init ran and release has not. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} bbrlab_b3_live SEC(".maps");

typedef struct bbrlab_b3_state b3_t;

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline u32 min_u32(u32 a, u32 b)
{
	return a < b ? a : b;
}
static __always_inline u32 max_u32(u32 a, u32 b)
{
	return a > b ? a : b;
}
static __always_inline u64 min_u64(u64 a, u64 b)
{
	return a < b ? a : b;
}

/* before() of include/net/tcp.h, for delivered counts. */
static __always_inline bool before32(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

static __always_inline u64 now_us(const struct tcp_sock *tp)
{
	return tp->tcp_mstamp;
}

/* tcp_packets_in_flight() */
static __always_inline u32 in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

static __always_inline u32 ca_state(const struct sock *sk)
{
	const struct inet_connection_sock *icsk = (const void *)sk;

	return BPF_CORE_READ_BITFIELD(icsk, icsk_ca_state);
}

/* tp->is_cwnd_limited: the whole cwnd was used in the last round (v3
 * reads the flag; the simulator's C.is_cwnd_limited). */
static __always_inline bool cwnd_limited(const struct tcp_sock *tp)
{
	return BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited);
}

/* v * f / 256 for a volume that may be ~0U (infinite), which stays so. */
static __always_inline u32 scale(u32 v, u32 f)
{
	if (v == INF32)
		return v;
	return (u32)(((u64)v * f) >> BBR_SCALE);
}

/* floor(log2(x)) for x > 0, 0 for 0 (ilog2 without a loop). */
static __always_inline u32 ilog2_u64(u64 x)
{
	u32 n = 0;

	if (x >> 32) { x >>= 32; n += 32; }
	if (x >> 16) { x >>= 16; n += 16; }
	if (x >> 8) { x >>= 8; n += 8; }
	if (x >> 4) { x >>= 4; n += 4; }
	if (x >> 2) { x >>= 2; n += 2; }
	if (x >> 1) { n += 1; }
	return n;
}

static __always_inline bool is_probe_bw(u32 s)
{
	return s >= S_DOWN && s <= S_UP;
}

/* bbr_is_probing_bandwidth(): STARTUP, REFILL and UP. */
static __always_inline bool is_probing_bw(const b3_t *b)
{
	return b->mode == S_STARTUP || b->mode == S_REFILL || b->mode == S_UP;
}

static __always_inline u32 max_bw(const b3_t *b)
{
	return max_u32(b->bw_slot[0], b->bw_slot[1]);
}

/* ---- pacing and volumes (bbr_set_pacing_rate(), bbr_bdp(), ...) ---- */

/* bbr_rate_bytes_per_sec(): rate x gain less the 1 % margin, bytes/s. */
static __always_inline u64 rate_bytes_per_sec(const struct sock *sk, u64 rate, u32 gain)
{
	rate *= tcp_sk(sk)->mss_cache;
	rate *= gain;
	rate >>= BBR_SCALE;
	rate *= USEC_PER_SEC / 100 * (100 - PACING_MARGIN_PERCENT);
	return rate >> BW_SCALE;
}

static __always_inline u64 pacing_rate_for(const struct sock *sk, u64 bw, u32 gain)
{
	return min_u64(rate_bytes_per_sec(sk, bw, gain), sk->sk_max_pacing_rate);
}

/* bbr_init_pacing_rate_from_rtt(): startup gain x cwnd / (srtt or 1 ms). */
static __always_inline void init_pacing_rate(struct sock *sk, b3_t *b)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u64 rtt_us = USEC_PER_MSEC;
	u64 bw;

	if (tp->srtt_us) {
		rtt_us = max_u32(tp->srtt_us >> 3, 1);
		b->has_seen_rtt = 1;
	}
	bw = (u64)tp->snd_cwnd * BW_UNIT / rtt_us;
	sk->sk_pacing_rate = pacing_rate_for(sk, bw, STARTUP_PACING_GAIN);
}

/* bbr_set_pacing_rate(): before the pipe is full the rate only rises. */
static __always_inline void set_pacing_rate_gain(struct sock *sk, b3_t *b, u32 gain)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u64 rate;

	if (!b->has_seen_rtt && tp->srtt_us)
		init_pacing_rate(sk, b);
	rate = pacing_rate_for(sk, b->bw, gain);
	if (rate > 0 && (b->full_bw_reached || rate > sk->sk_pacing_rate))
		sk->sk_pacing_rate = rate;
}

/* bbr_tso_segs_generic(): ~1 ms at the pacing rate plus 64 KiB halved per
 * 512 us of min_rtt, capped at a GSO packet, at least 2 segments. */
static __always_inline u32 tso_segs_goal(const struct sock *sk, const b3_t *b)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u64 bytes = sk->sk_pacing_rate >> 10;
	u32 shift = b->min_rtt_us == INF32 ? 32 : (b->min_rtt_us >> TSO_RTT_SHIFT);
	u32 segs;

	if (shift < 32)
		bytes += GSO_LEGACY_MAX >> shift;
	bytes = min_u64(bytes, GSO_LEGACY_MAX - 1 - MAX_TCP_HEADER_GUESS);
	segs = (u32)bytes / max_u32(tp->mss_cache, 1);
	return max_u32(segs, 2);
}

/* bbr_bdp(): gain x bw x min_rtt in packets, rounded up; the initial
 * window before any RTT sample. */
static __always_inline u32 bdp(const b3_t *b, u32 bw, u32 gain)
{
	u64 w;

	if (b->min_rtt_us == INF32)
		return TCP_INIT_CWND;
	w = (u64)bw * b->min_rtt_us;
	return (u32)((((w * gain) >> BBR_SCALE) + BW_UNIT - 1) / BW_UNIT);
}

/* bbr_quantization_budget(): at least 3 TSO bursts and 4 packets, and two
 * more in UP. */
static __always_inline u32 quantization_budget(const struct sock *sk, const b3_t *b,
					       u32 cwnd)
{
	cwnd = max_u32(cwnd, 3 * tso_segs_goal(sk, b));
	cwnd = max_u32(cwnd, MIN_PIPE_CWND);
	if (b->mode == S_UP)
		cwnd += 2;
	return cwnd;
}

/* bbr_inflight() */
static __always_inline u32 inflight_for(const struct sock *sk, const b3_t *b, u32 bw,
					u32 gain)
{
	return quantization_budget(sk, b, bdp(b, bw, gain));
}

/* bbr_target_inflight(): the BDP (with budget) unless cwnd is lower. */
static __always_inline u32 target_inflight(const struct sock *sk, const b3_t *b)
{
	return min_u32(inflight_for(sk, b, (u32)b->bw, BBR_UNIT), tcp_sk(sk)->snd_cwnd);
}

/* bbr_packets_in_net_at_edt(): what is still in the network when the next
 * packet departs. */
static __always_inline u32 in_net_at_edt(const struct sock *sk, const b3_t *b,
					 u32 inflight_now)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u64 now_ns = tp->tcp_clock_cache;
	u64 edt_ns = tp->tcp_wstamp_ns > now_ns ? tp->tcp_wstamp_ns : now_ns;
	u64 interval_us = (edt_ns - now_ns) / NSEC_PER_USEC;
	u64 delivered = ((u64)b->bw * interval_us + BW_UNIT - 1) >> BW_SCALE;
	u64 at_edt = inflight_now;

	if (b->pacing_gain > BBR_UNIT)
		at_edt += tso_segs_goal(sk, b);
	if (delivered >= at_edt)
		return 0;
	return (u32)(at_edt - delivered);
}

/* bbr_extra_acked(), capped at bw x 100 ms (bbr_ack_aggregation_cwnd()). */
static __always_inline u32 extra_acked(const b3_t *b)
{
	u32 aggr = max_u32(b->extra_acked_slot[0], b->extra_acked_slot[1]);
	u64 cap = ((u64)b->bw * EXTRA_ACKED_MAX_US) >> BW_SCALE;

	return (u32)min_u64(aggr, cap);
}

/* bbr_inflight_with_headroom(): inflight_longterm less 15 % (at least a
 * packet), at least 4 packets. */
static __always_inline u32 inflight_with_headroom(const b3_t *b)
{
	u32 headroom;

	if (b->inflight_longterm == INF32)
		return INF32;
	headroom = max_u32(scale(b->inflight_longterm, HEADROOM), 1);
	headroom = b->inflight_longterm > headroom ? b->inflight_longterm - headroom : 0;
	return max_u32(headroom, MIN_PIPE_CWND);
}

/* bbr_probe_rtt_cwnd(): half the BDP, at least 4 packets. */
static __always_inline u32 probe_rtt_cwnd(const b3_t *b)
{
	return max_u32(bdp(b, (u32)b->bw, PROBE_RTT_CWND_GAIN), MIN_PIPE_CWND);
}

/* ---- rounds, signals, the short-term model -------------------------- */

/* StartRound(): also snapshots tp->lost (substitute 2). */
static __always_inline void start_round(const struct tcp_sock *tp, b3_t *b)
{
	b->prev_round_delivered = b->next_round_delivered;
	b->prev_round_lost = b->round_lost_start;
	b->next_round_delivered = tp->delivered;
	b->round_lost_start = tp->lost;
}

/* tp->lost at delivered = x on the line from mark a to mark b, clamped to
 * the segment (the simulator's bbr3/round_losses.rs, lost_at()). */
static __always_inline u32 lost_at(u32 a_del, u32 a_lost, u32 b_del, u32 b_lost, u32 x)
{
	u32 span, part, rise;

	if (!before32(a_del, x) || !before32(a_del, b_del) || !before32(a_lost, b_lost))
		return a_lost;
	if (!before32(x, b_del))
		return b_lost;
	span = b_del - a_del;
	part = x - a_del;
	rise = b_lost - a_lost;
	return a_lost + (u32)((u64)rise * part / span);
}

/* rs->lost's substitute (2): losses since the ACKed packet left, which
 * left when prior_delivered had been delivered. */
static __always_inline u32 sample_lost(const struct tcp_sock *tp, const b3_t *b,
				       const struct rate_sample *rs)
{
	u32 x = rs->prior_delivered, at_send;

	if (!before32(x, b->next_round_delivered))
		at_send = lost_at(b->next_round_delivered, b->round_lost_start,
				  tp->delivered, tp->lost, x);
	else
		at_send = lost_at(b->prev_round_delivered, b->prev_round_lost,
				  b->next_round_delivered, b->round_lost_start, x);
	return before32(at_send, tp->lost) ? tp->lost - at_send : 0;
}

/* bbr_reset_congestion_signals() */
static __always_inline void reset_congestion_signals(b3_t *b)
{
	b->is_loss_in_round = 0;
	b->is_ecn_in_round = 0;
	b->loss_in_cycle = 0;
	b->ecn_in_cycle = 0;
	b->bw_latest = 0;
	b->inflight_latest = 0;
}

/* bbr_reset_lower_bounds() */
static __always_inline void reset_short_term_model(b3_t *b)
{
	b->bw_shortterm = INF32;
	b->inflight_shortterm = INF32;
}

static __always_inline void reset_full_bw(b3_t *b)
{
	b->full_bw = 0;
	b->full_bw_count = 0;
	b->full_bw_now = 0;
}

/* bbr_save_cwnd() */
static __always_inline void save_cwnd(const struct tcp_sock *tp, b3_t *b)
{
	if (b->prev_ca_state < CA_RECOVERY && b->mode != S_PROBE_RTT)
		b->prior_cwnd = tp->snd_cwnd;
	else
		b->prior_cwnd = max_u32(b->prior_cwnd, tp->snd_cwnd);
}

/* bbr_update_round_start(): a valid sample whose packet was sent after
 * the round's boundary ends the round. */
static __always_inline void update_round(const struct tcp_sock *tp, b3_t *b,
					 const struct rate_sample *rs)
{
	b->round_start = 0;
	if (rs->acked_sacked == 0 || !b->sample_valid)
		return;
	if (!before32(rs->prior_delivered, b->next_round_delivered)) {
		start_round(tp, b);
		b->round_count++;
		b->rounds_since_probe_up++;
		b->round_start = 1;
	}
}

/* The ECN response is on for a socket that negotiated ECN on a path of
 * min_rtt <= 5 ms (bbr->ecn_eligible; substitute 4), sticky once on. */
static __always_inline void update_ecn_eligible(const struct tcp_sock *tp, b3_t *b)
{
	if (b->ecn_eligible)
		return;
	b->ecn_eligible = (tp->ecn_flags & TCP_ECN_OK) && b->min_rtt_us <= ECN_MAX_RTT_US;
}

/* bbr_handle_queue_too_high_in_startup() */
static __always_inline void queue_too_high_in_startup(const struct sock *sk, b3_t *b)
{
	b->full_bw_reached = 1;
	b->inflight_longterm = max_u32(inflight_for(sk, b, max_bw(b), BBR_UNIT),
				       b->inflight_latest);
}

/* bbr_update_ecn_alpha() at a round start: the round's CE fraction, its
 * EWMA, and STARTUP's exit on ECN (bbr_check_ecn_too_high_in_startup()). */
static __always_inline void update_ecn_round(const struct sock *sk, b3_t *b)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 acked, ce, ratio;

	update_ecn_eligible(tp, b);
	acked = tp->delivered - b->alpha_last_delivered;
	ce = tp->delivered_ce - b->alpha_last_ce;
	if (!b->ecn_eligible || acked == 0) {
		b->round_ce_ratio = 0;
		return;
	}
	ratio = (u32)(((u64)min_u32(ce, acked) << BBR_SCALE) / acked);
	b->round_ce_ratio = min_u32(ratio, BBR_UNIT);
	b->alpha_last_delivered = tp->delivered;
	b->alpha_last_ce = tp->delivered_ce;
	b->ecn_alpha = (((BBR_UNIT - ECN_ALPHA_GAIN) * b->ecn_alpha) >> BBR_SCALE) +
		       ((ECN_ALPHA_GAIN * b->round_ce_ratio) >> BBR_SCALE);
	b->ecn_alpha = min_u32(b->ecn_alpha, BBR_UNIT);
	if (!b->full_bw_reached) {
		if (b->round_ce_ratio >= ECN_THRESH)
			b->startup_ecn_rounds++;
		else
			b->startup_ecn_rounds = 0;
		if (b->startup_ecn_rounds >= FULL_ECN_ROUNDS)
			queue_too_high_in_startup(sk, b);
	}
}

/* bbr_is_inflight_too_high() for loss: more than 2 % of what was in
 * flight was lost. */
static __always_inline bool loss_too_high(u32 lost, u32 tx_in_flight)
{
	return lost > 0 && tx_in_flight > 0 &&
	       (u64)lost * BBR_UNIT > (u64)tx_in_flight * LOSS_THRESH;
}

/* The same for CE: the last round's CE fraction above ecn_thresh. */
static __always_inline bool round_ce_too_high(const b3_t *b)
{
	return b->ecn_eligible && b->round_ce_ratio > ECN_THRESH;
}

/* bbr_inflight_hi_from_lost_skb(): the prefix of the lost batch (`size`
 * packets) at which the loss rate crossed 2 %. */
static __always_inline u32 inflight_at_loss(u32 size, u32 lost, u32 tx_in_flight)
{
	u32 inflight_prev, lost_prev, budget;
	u64 prefix;

	if (tx_in_flight < size || lost < size)
		return INF32;
	inflight_prev = tx_in_flight - size;
	lost_prev = lost - size;
	budget = (u32)(((u64)inflight_prev * LOSS_THRESH + BBR_UNIT - 1) >> BBR_SCALE);
	if (lost_prev >= budget)
		prefix = 0;
	else /* (budget - lost_prev) / (1 - thresh), rounded up */
		prefix = ((u64)(budget - lost_prev) * BBR_UNIT + (BBR_UNIT - LOSS_THRESH) - 1) /
			 (BBR_UNIT - LOSS_THRESH);
	return (u32)min_u64((u64)inflight_prev + prefix, INF32 - 1);
}

static __always_inline void pick_probe_wait(b3_t *b)
{
	/* bbr_pick_probe_wait(): a random 0-1 round head start and a wall-clock
	 * wait uniform in [2 s, 3 s). */
	b->rounds_since_probe_up = bpf_get_prandom_u32() % PROBE_RAND_ROUNDS;
	b->probe_wait_us = PROBE_WAIT_BASE_US + bpf_get_prandom_u32() % PROBE_WAIT_RAND_US;
}

/* bbr_start_bw_probe_down() */
static __always_inline void start_probe_bw_down(const struct tcp_sock *tp, b3_t *b)
{
	reset_congestion_signals(b);
	b->probe_up_acked_per_inc = INF32;
	pick_probe_wait(b);
	b->cycle_stamp = now_us(tp);
	b->ack_phase = ACK_PROBE_STOPPING;
	start_round(tp, b);
	b->mode = S_DOWN;
}

/* bbr_start_bw_probe_cruise(): a set inflight_shortterm is clamped to
 * inflight_longterm. */
static __always_inline void start_probe_bw_cruise(b3_t *b)
{
	if (b->inflight_shortterm != INF32)
		b->inflight_shortterm = min_u32(b->inflight_shortterm, b->inflight_longterm);
	b->mode = S_CRUISE;
}

/* bbr_start_bw_probe_refill() */
static __always_inline void start_probe_bw_refill(const struct tcp_sock *tp, b3_t *b,
						  u32 up_rounds)
{
	reset_short_term_model(b);
	b->bw_probe_up_rounds = up_rounds;
	b->bw_probe_up_acked = 0;
	b->prev_probe_precautionary = 0;
	b->ack_phase = ACK_REFILLING;
	start_round(tp, b);
	b->mode = S_REFILL;
}

/* bbr_raise_inflight_hi_slope(): each round of UP doubles the growth. */
static __always_inline void raise_slope(const struct tcp_sock *tp, b3_t *b)
{
	u32 growth = 1U << min_u32(b->bw_probe_up_rounds, 30);

	b->bw_probe_up_rounds = min_u32(b->bw_probe_up_rounds + 1, 30);
	b->probe_up_acked_per_inc = max_u32(tp->snd_cwnd / growth, 1);
}

/* bbr_start_bw_probe_up() */
static __always_inline void start_probe_bw_up(const struct tcp_sock *tp, b3_t *b,
					      struct bbrlab_b3_state *st)
{
	b->ack_phase = ACK_PROBE_STARTING;
	start_round(tp, b);
	reset_full_bw(b);
	b->full_bw = b->sample_rate;
	b->mode = S_UP;
	raise_slope(tp, b);
	st->up_entries++;
	st->last_up_us = now_us(tp);
}

/* bbr_handle_inflight_too_high(): once per probe, cut inflight_longterm
 * to max(tx_in_flight, beta x target inflight) unless app-limited; UP
 * stops and goes DOWN. */
static __always_inline void handle_inflight_too_high(const struct sock *sk, b3_t *b,
						     u32 tx_in_flight, bool app_limited)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 target;

	b->prev_probe_too_high = 1;
	b->is_bw_probe_sample = 0;
	if (!app_limited) {
		target = target_inflight(sk, b);
		b->inflight_longterm = max_u32(tx_in_flight, scale(target, BETA));
		b->cuts++;
		b->last_cut_tx_in_flight = tx_in_flight;
		b->last_cut_target = target;
		b->last_cut_longterm = b->inflight_longterm;
		b->last_cut_state = b->mode;
	}
	if (b->mode == S_UP)
		start_probe_bw_down(tp, b);
}

/* Substitute 3: v3's per-lost-packet check (bbr_skb_marked_lost()), once
 * per ACK that marked packets lost, with prior_in_flight and the round's
 * losses; the ACK's newly lost packets play the lost skb. */
static __always_inline void per_ack_loss_check(const struct sock *sk, b3_t *b,
					       const struct rate_sample *rs)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 lost, tx;

	if (rs->losses <= 0 || !b->is_bw_probe_sample)
		return;
	lost = sample_lost(tp, b, rs);
	tx = rs->prior_in_flight;
	if (loss_too_high(lost, tx))
		handle_inflight_too_high(sk, b, inflight_at_loss((u32)rs->losses, lost, tx),
					 rs->is_app_limited);
}

/* bbr_note_loss(): the first loss of a round starts the loss round here. */
static __always_inline void note_loss(const struct tcp_sock *tp, b3_t *b)
{
	if (!b->is_loss_in_round)
		b->loss_round_delivered = tp->delivered;
	b->is_loss_in_round = 1;
	b->loss_in_cycle = 1;
}

/* bbr_update_latest_delivery_signals() */
static __always_inline void update_latest_delivery_signals(const struct tcp_sock *tp, b3_t *b,
							   const struct rate_sample *rs)
{
	b->loss_round_start = 0;
	if (rs->acked_sacked == 0 || !b->sample_valid)
		return;
	b->bw_latest = max_u32(b->bw_latest, b->sample_rate);
	b->inflight_latest = max_u32(b->inflight_latest, (u32)rs->delivered);
	if (!before32(rs->prior_delivered, b->loss_round_delivered)) {
		b->loss_round_delivered = tp->delivered;
		b->loss_round_start = 1;
	}
}

/* bbr_advance_latest_delivery_signals() */
static __always_inline void advance_latest_delivery_signals(b3_t *b,
							    const struct rate_sample *rs)
{
	if (b->loss_round_start) {
		b->bw_latest = b->sample_rate;
		b->inflight_latest = rs->delivered > 0 ? (u32)rs->delivered : 0;
	}
}

/* bbr_init_lower_bounds() */
static __always_inline void init_lower_bounds(const struct tcp_sock *tp, b3_t *b,
					      bool init_bw)
{
	if (init_bw && b->bw_shortterm == INF32)
		b->bw_shortterm = max_bw(b);
	if (b->inflight_shortterm == INF32)
		b->inflight_shortterm = tp->snd_cwnd;
}

/* bbr_adapt_lower_bounds(): once per loss round while not probing: CE
 * cuts inflight_shortterm by ecn_factor x ecn_alpha, loss cuts both
 * short-term bounds by beta, floored at the latest round's delivery. */
static __always_inline void adapt_lower_bounds(const struct tcp_sock *tp, b3_t *b)
{
	u32 ecn_inflight = INF32, cut;

	if (is_probing_bw(b))
		return;
	if (b->is_ecn_in_round) {
		init_lower_bounds(tp, b, false);
		/* bbr_ecn_cut() */
		cut = BBR_UNIT - min_u32((b->ecn_alpha * ECN_FACTOR) >> BBR_SCALE, BBR_UNIT);
		ecn_inflight = scale(b->inflight_shortterm, cut);
	}
	if (b->is_loss_in_round) {
		init_lower_bounds(tp, b, true);
		/* bbr_loss_lower_bounds() */
		b->bw_shortterm = max_u32(b->bw_latest, scale((u32)b->bw_shortterm, BETA));
		b->inflight_shortterm = max_u32(b->inflight_latest,
						scale(b->inflight_shortterm, BETA));
	}
	b->inflight_shortterm = min_u32(b->inflight_shortterm, ecn_inflight);
}

/* bbr_update_congestion_signals(): max_bw every ACK, the short-term model
 * once per loss round. */
static __always_inline void update_congestion_signals(const struct tcp_sock *tp, b3_t *b,
						      const struct rate_sample *rs)
{
	u32 rate = b->sample_rate;

	/* bbr_update_bw(): app-limited samples only if they raise max_bw. */
	if (b->sample_valid && rate > 0 && (rate >= max_bw(b) || !rs->is_app_limited))
		if (rate > b->bw_slot[1])
			b->bw_slot[1] = rate;
	if (rs->losses > 0)
		b->is_loss_in_round = 1;
	if (!b->loss_round_start)
		return;
	b->loss_round_had_loss = b->is_loss_in_round;
	adapt_lower_bounds(tp, b);
	b->is_loss_in_round = 0;
	b->is_ecn_in_round = 0;
}

/* bbr_update_ack_aggregation() with v3's window: 1 round in STARTUP, 5
 * after. */
static __always_inline void update_ack_aggregation(const struct tcp_sock *tp, b3_t *b,
						   const struct rate_sample *rs)
{
	u64 interval, expected;
	u32 extra, thresh, idx;

	if (rs->acked_sacked == 0 || rs->interval_us <= 0)
		return;
	if (b->round_start) {
		thresh = b->full_bw_reached ? EXTRA_ACKED_WIN_RTTS : 1;
		b->extra_acked_win_rounds = min_u32(b->extra_acked_win_rounds + 1, 0x1F);
		if (b->extra_acked_win_rounds >= thresh) {
			b->extra_acked_win_rounds = 0;
			b->extra_acked_win_idx ^= 1;
			if (b->extra_acked_win_idx)
				b->extra_acked_slot[1] = 0;
			else
				b->extra_acked_slot[0] = 0;
		}
	}
	interval = now_us(tp) - b->extra_acked_start;
	expected = (b->bw * interval) >> BW_SCALE;
	if (b->extra_acked_delivered <= expected) {
		b->extra_acked_delivered = 0;
		b->extra_acked_start = now_us(tp);
		expected = 0;
	}
	b->extra_acked_delivered += rs->acked_sacked;
	extra = (u32)min_u64(b->extra_acked_delivered - expected, tp->snd_cwnd);
	idx = b->extra_acked_win_idx;
	if (idx) {
		if (extra > b->extra_acked_slot[1])
			b->extra_acked_slot[1] = extra;
	} else {
		if (extra > b->extra_acked_slot[0])
			b->extra_acked_slot[0] = extra;
	}
}

/* bbr_check_full_bw_reached() as v3: any ACK whose rate grew 25 % restarts
 * the count; three round starts without such growth fill the pipe. */
static __always_inline void check_full_bw_reached(b3_t *b, const struct rate_sample *rs)
{
	if (b->full_bw_now || rs->is_app_limited || !b->sample_valid)
		return;
	if ((u64)b->sample_rate >= (((u64)b->full_bw * FULL_BW_THRESH) >> BBR_SCALE)) {
		reset_full_bw(b);
		b->full_bw = b->sample_rate;
		return;
	}
	if (!b->round_start)
		return;
	b->full_bw_count++;
	b->full_bw_now = b->full_bw_count >= FULL_BW_CNT;
	if (b->full_bw_now)
		b->full_bw_reached = 1;
}

/* bbr_check_loss_too_high_in_startup(): at a loss round's end, in
 * recovery, more than 2 % lost in at least 6 loss-marking ACKs. */
static __always_inline void check_startup_high_loss(const struct sock *sk, b3_t *b,
						    const struct rate_sample *rs)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 cas;
	bool in_recovery;

	if (b->full_bw_reached || b->mode != S_STARTUP) {
		if (b->loss_round_start)
			b->loss_events_in_round = 0;
		return;
	}
	if (!b->loss_round_start)
		return;
	cas = ca_state(sk);
	in_recovery = cas == CA_RECOVERY || (b->loss_round_had_loss && cas == CA_OPEN);
	if (in_recovery && loss_too_high(sample_lost(tp, b, rs), rs->prior_in_flight) &&
	    b->loss_events_in_round >= STARTUP_FULL_LOSS_CNT)
		queue_too_high_in_startup(sk, b);
	b->loss_events_in_round = 0;
}

/* bbr_check_drain(): STARTUP -> DRAIN -> PROBE_BW (DOWN). */
static __always_inline void check_startup_and_drain(struct sock *sk, b3_t *b,
						    const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);

	check_startup_high_loss(sk, b, rs);
	if (b->mode == S_STARTUP && b->full_bw_reached) {
		b->mode = S_DRAIN;
		b->drain_start_round = b->round_count;
		reset_congestion_signals(b);
		tp->snd_ssthresh = inflight_for(sk, b, max_bw(b), BBR_UNIT);
	}
	if (b->mode == S_DRAIN &&
	    in_net_at_edt(sk, b, in_flight(tp)) <= inflight_for(sk, b, max_bw(b), BBR_UNIT)) {
		b->cwnd_gain = CWND_GAIN;
		start_probe_bw_down(tp, b);
	}
}

/* bbr_probe_inflight_hi_upward(): one packet more per
 * probe_up_acked_per_inc packets ACKed while cwnd-limited at it. */
static __always_inline void probe_inflight_longterm_upward(const struct tcp_sock *tp, b3_t *b,
							   const struct rate_sample *rs)
{
	u32 per, delta;

	if (!cwnd_limited(tp) || tp->snd_cwnd < b->inflight_longterm)
		return;
	b->bw_probe_up_acked += rs->acked_sacked;
	per = max_u32(b->probe_up_acked_per_inc, 1);
	if (b->bw_probe_up_acked >= per) {
		delta = b->bw_probe_up_acked / per;
		b->bw_probe_up_acked -= delta * per;
		b->inflight_longterm = (u32)min_u64((u64)b->inflight_longterm + delta, INF32 - 1);
	}
	if (b->round_start)
		raise_slope(tp, b);
}

/* bbr_adapt_upper_bounds(): follow the ACK phase, advance the max_bw
 * filter after a probe, re-probe after a good precautionary one, and move
 * inflight_longterm with the loss rate. True when it changed state. */
static __always_inline bool adapt_long_term_model(const struct sock *sk, b3_t *b,
						  const struct rate_sample *rs)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	bool too_high;
	u32 tx = rs->prior_in_flight;

	if (b->ack_phase == ACK_PROBE_STARTING && b->round_start)
		b->ack_phase = ACK_PROBE_FEEDBACK;
	if (b->ack_phase == ACK_PROBE_STOPPING && b->round_start) {
		b->is_bw_probe_sample = 0;
		b->ack_phase = ACK_INIT;
		/* bbr_advance_max_bw_filter(), keeping a slot with no sample */
		if (is_probe_bw(b->mode) && !rs->is_app_limited && b->bw_slot[1] > 0) {
			b->bw_slot[0] = b->bw_slot[1];
			b->bw_slot[1] = 0;
		}
		if (is_probe_bw(b->mode) && b->prev_probe_precautionary &&
		    !b->prev_probe_too_high) {
			b->risky_reprobes++;
			start_probe_bw_refill(tp, b, 0);
			return true;
		}
	}
	too_high = (rs->acked_sacked > 0 && loss_too_high(sample_lost(tp, b, rs), tx)) ||
		   (b->round_start && round_ce_too_high(b));
	if (too_high) {
		if (b->is_bw_probe_sample)
			handle_inflight_too_high(sk, b, tx, rs->is_app_limited);
		return false;
	}
	if (b->inflight_longterm == INF32)
		return false;
	if (tx > b->inflight_longterm)
		b->inflight_longterm = tx;
	if (b->mode == S_UP)
		probe_inflight_longterm_upward(tp, b, rs);
	return false;
}

/* bbr_check_time_to_probe_bw(): CE without loss re-probes quickly; else
 * the wall-clock wait or the Reno bound. */
static __always_inline bool is_time_to_probe_bw(const struct sock *sk, b3_t *b)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u64 target;
	u32 n, reno;

	if (b->ecn_eligible && b->ecn_in_cycle && !b->loss_in_cycle &&
	    ca_state(sk) == CA_OPEN) {
		target = ((u64)b->inflight_longterm * ECN_REPROBE_GAIN) >> BBR_SCALE;
		n = target ? ilog2_u64(target) : 0;
		start_probe_bw_refill(tp, b, min_u32(n, 30));
		return true;
	}
	/* bbr_is_reno_coexistence_probe_time() */
	reno = min_u32(target_inflight(sk, b), PROBE_MAX_ROUNDS);
	if (now_us(tp) - b->cycle_stamp > b->probe_wait_us ||
	    b->rounds_since_probe_up >= reno) {
		start_probe_bw_refill(tp, b, 0);
		return true;
	}
	return false;
}

/* bbr_check_time_to_cruise(): headroom left and the queue drained. */
static __always_inline bool is_time_to_cruise(const struct sock *sk, const b3_t *b,
					      u32 inflight)
{
	if (inflight > inflight_with_headroom(b))
		return false;
	return inflight <= inflight_for(sk, b, max_bw(b), BBR_UNIT);
}

/* bbr_is_time_to_go_down() / the UP exit: a precautionary stop at a risky
 * inflight_longterm, or a bandwidth plateau not due to inflight_longterm. */
static __always_inline bool is_time_to_go_down(const struct tcp_sock *tp, b3_t *b,
					       u32 inflight)
{
	if (b->prev_probe_too_high && inflight >= b->inflight_longterm) {
		b->prev_probe_precautionary = 1;
		return true;
	}
	if (cwnd_limited(tp) && tp->snd_cwnd >= b->inflight_longterm) {
		reset_full_bw(b);
		b->full_bw = b->sample_rate;
	} else if (b->full_bw_now) {
		return true;
	}
	return false;
}

/* bbr_update_cycle_phase() */
static __always_inline void update_cycle_phase(const struct sock *sk, b3_t *b,
					       const struct rate_sample *rs,
					       struct bbrlab_b3_state *st)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 inflight;

	if (!b->full_bw_reached)
		return;
	if (adapt_long_term_model(sk, b, rs))
		return;
	if (!is_probe_bw(b->mode))
		return;
	inflight = in_net_at_edt(sk, b, rs->prior_in_flight);
	switch (b->mode) {
	case S_DOWN:
		if (is_time_to_probe_bw(sk, b))
			return;
		if (is_time_to_cruise(sk, b, inflight))
			start_probe_bw_cruise(b);
		break;
	case S_CRUISE:
		is_time_to_probe_bw(sk, b);
		break;
	case S_REFILL:
		if (b->round_start) {
			b->is_bw_probe_sample = 1;
			start_probe_bw_up(tp, b, st);
		}
		break;
	case S_UP:
		if (is_time_to_go_down(tp, b, inflight)) {
			b->prev_probe_too_high = 0;
			start_probe_bw_down(tp, b);
		}
		break;
	}
}

/* ---- min_rtt and PROBE_RTT (bbr_update_min_rtt()) ------------------- */

/* bbr_check_probe_rtt_done(): after 200 ms and a round at the PROBE_RTT
 * cwnd: schedule the next, restore cwnd, back to PROBE_BW via DOWN into
 * CRUISE (bbr_exit_probe_rtt()), or to STARTUP. */
static __always_inline void check_probe_rtt_done(struct sock *sk, b3_t *b)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!(b->probe_rtt_done_stamp && now_us(tp) > b->probe_rtt_done_stamp))
		return;
	b->probe_rtt_min_stamp = now_us(tp);
	tp->snd_cwnd = max_u32(tp->snd_cwnd, b->prior_cwnd);
	reset_short_term_model(b);
	if (b->full_bw_reached) {
		start_probe_bw_down(tp, b);
		start_probe_bw_cruise(b);
	} else {
		b->mode = S_STARTUP;
	}
}

static __always_inline void update_min_rtt(struct sock *sk, b3_t *b,
					   const struct rate_sample *rs,
					   struct bbrlab_b3_state *st)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u64 now = now_us(tp);
	long rtt = rs->rtt_us;
	u32 mark;

	b->probe_rtt_expired = now - b->probe_rtt_min_stamp > PROBE_RTT_INTERVAL_US;
	if (rtt >= 0) {
		/* v3 will not refresh an expired estimate from a delayed ACK. */
		if ((u64)rtt < b->probe_rtt_min_us ||
		    (b->probe_rtt_expired && !rs->is_ack_delayed)) {
			b->probe_rtt_min_us = (u32)min_u64(rtt, INF32 - 1);
			b->probe_rtt_min_stamp = now;
		}
	}
	if (b->probe_rtt_min_us != INF32 &&
	    (b->probe_rtt_min_us <= b->min_rtt_us || now - b->min_rtt_stamp > MIN_RTT_WIN_US)) {
		b->min_rtt_us = b->probe_rtt_min_us;
		b->min_rtt_stamp = b->probe_rtt_min_stamp;
	}

	/* bbr_check_probe_rtt() */
	if (b->mode != S_PROBE_RTT && b->probe_rtt_expired && !b->idle_restart) {
		b->mode = S_PROBE_RTT;
		b->pacing_gain = BBR_UNIT;
		b->cwnd_gain = PROBE_RTT_CWND_GAIN;
		/* bbr_save_cwnd() after the mode change, as the simulator's
		 * check_probe_rtt(): the larger of the saved and current cwnd. */
		save_cwnd(tp, b);
		b->probe_rtt_done_stamp = 0;
		b->ack_phase = ACK_PROBE_STOPPING;
		start_round(tp, b);
		st->probe_rtt_entries++;
		st->last_probe_rtt_us = now;
		st->probe_rtt_min_cwnd = INF32;
	}
	if (b->mode == S_PROBE_RTT) {
		/* Its low delivery rates must not lower max_bw. */
		mark = tp->delivered + in_flight(tp);
		tp->app_limited = mark ? mark : 1;
		if (!b->probe_rtt_done_stamp && in_flight(tp) <= probe_rtt_cwnd(b)) {
			b->probe_rtt_done_stamp = now + PROBE_RTT_DURATION_US;
			b->probe_rtt_round_done = 0;
			start_round(tp, b);
		} else if (b->probe_rtt_done_stamp) {
			if (b->round_start)
				b->probe_rtt_round_done = 1;
			if (b->probe_rtt_round_done)
				check_probe_rtt_done(sk, b);
		}
	}
	if (rs->delivered > 0)
		b->idle_restart = 0;
}

/* bbr_update_gains() */
static __always_inline void update_gains(b3_t *b)
{
	switch (b->mode) {
	case S_STARTUP:
		b->pacing_gain = STARTUP_PACING_GAIN;
		b->cwnd_gain = STARTUP_CWND_GAIN;
		break;
	case S_DRAIN:
		b->pacing_gain = DRAIN_PACING_GAIN;
		b->cwnd_gain = STARTUP_CWND_GAIN;
		break;
	case S_DOWN:
		b->pacing_gain = DOWN_PACING_GAIN;
		b->cwnd_gain = CWND_GAIN;
		break;
	case S_CRUISE:
	case S_REFILL:
		b->pacing_gain = BBR_UNIT;
		b->cwnd_gain = CWND_GAIN;
		break;
	case S_UP:
		b->pacing_gain = UP_PACING_GAIN;
		b->cwnd_gain = UP_CWND_GAIN;
		break;
	default:
		b->pacing_gain = BBR_UNIT;
		b->cwnd_gain = PROBE_RTT_CWND_GAIN;
		break;
	}
}

/* bbr_set_cwnd(): towards cwnd_gain x BDP + extra_acked by at most what
 * was ACKed (STARTUP also grows below twice the initial window), then the
 * PROBE_RTT and model bounds (bbr_bound_cwnd_for_inflight_model()). */
static __always_inline void set_cwnd(struct sock *sk, b3_t *b, const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 acked = rs->acked_sacked;
	u32 cwnd = tp->snd_cwnd;
	u32 target = quantization_budget(sk, b, bdp(b, (u32)b->bw, b->cwnd_gain) + extra_acked(b));
	u32 cap = INF32;

	if (acked > 0) {
		if (b->full_bw_reached)
			cwnd = min_u32(cwnd + acked, target);
		else if (cwnd < target || cwnd < 2 * TCP_INIT_CWND)
			cwnd += acked;
		cwnd = max_u32(cwnd, MIN_PIPE_CWND);
	}
	if (b->mode == S_PROBE_RTT)
		cwnd = min_u32(cwnd, probe_rtt_cwnd(b));
	if (is_probe_bw(b->mode) && b->mode != S_CRUISE)
		cap = b->inflight_longterm;
	else if (b->mode == S_PROBE_RTT || b->mode == S_CRUISE)
		cap = inflight_with_headroom(b);
	cap = min_u32(cap, b->inflight_shortterm);
	cap = max_u32(cap, MIN_PIPE_CWND);
	cwnd = min_u32(cwnd, cap);
	tp->snd_cwnd = max_u32(cwnd, 1);
}

static __always_inline void publish(const struct tcp_sock *tp, b3_t *b)
{
	b->acks++;
	b->max_bw = max_bw(b);
	b->mss = tp->mss_cache;
	b->cwnd = tp->snd_cwnd;
	if (b->mode == S_PROBE_RTT && tp->snd_cwnd < b->probe_rtt_min_cwnd)
		b->probe_rtt_min_cwnd = tp->snd_cwnd;
}

/* ---- the tcp_congestion_ops callbacks ------------------------------- */

/* bbr_main(): the congestion signals, the model, then pacing and cwnd. */
SEC("struct_ops")
void BPF_PROG(bbr3_cong_control, struct sock *sk, u32 ack, int flag,
	      const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	b3_t *b = bpf_sk_storage_get(&bbrlab_b3_st, sk, 0, 0);
	u32 cas;

#ifndef BBRLAB_BBR3_BROKEN
	if (!b)
		return;
#endif
	b->sample_valid = rs->delivered >= 0 && rs->interval_us > 0;
	b->sample_rate = b->sample_valid ?
		(u32)min_u64((u64)rs->delivered * BW_UNIT / (u64)rs->interval_us, INF32 - 1) : 0;

	/* Leaving an RTO's recovery restores cwnd (bbr_set_state() ->
	 * bbr_exit_loss_recovery()); the simulator's track_recovery(). */
	cas = ca_state(sk);
	if (b->prev_ca_state == CA_LOSS && cas == CA_OPEN)
		tp->snd_cwnd = max_u32(tp->snd_cwnd, b->prior_cwnd);
	b->prev_ca_state = cas;

	/* Substitute 3, before the model update. */
	per_ack_loss_check(sk, b, rs);
	if (rs->losses > 0) {
		note_loss(tp, b);
		b->loss_events_in_round++;
	}

	update_round(tp, b, rs);
	if (b->round_start)
		update_ecn_round(sk, b);
	/* CE on this ACK (substitute 4) */
	if (tp->delivered_ce != b->last_delivered_ce) {
		update_ecn_eligible(tp, b);
		if (b->ecn_eligible)
			b->is_ecn_in_round = 1;
	}
	update_latest_delivery_signals(tp, b, rs);
	update_congestion_signals(tp, b, rs);
	update_ack_aggregation(tp, b, rs);
	check_full_bw_reached(b, rs);
	check_startup_and_drain(sk, b, rs);
	update_cycle_phase(sk, b, rs, b);
	update_min_rtt(sk, b, rs, b);
	advance_latest_delivery_signals(b, rs);
	b->bw = min_u64(max_bw(b), b->bw_shortterm); /* bbr_bound_bw_for_model() */

	update_gains(b);
	set_pacing_rate_gain(sk, b, b->pacing_gain);
	set_cwnd(sk, b, rs);
	if (rs->losses > 0)
		b->loss_in_cycle = 1;
	if (tp->delivered_ce != b->last_delivered_ce)
		b->ecn_in_cycle = 1;
	b->last_delivered_ce = tp->delivered_ce;
	publish(tp, b);
}

/* bbr_init() */
SEC("struct_ops")
void BPF_PROG(bbr3_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 zero = 0, was_counted;
	u64 *n;
	b3_t *b = bpf_sk_storage_get(&bbrlab_b3_st, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);

	/* cmpxchg(sk_pacing_status, NONE, NEEDED): the TCP stack paces us. */
	if (sk->sk_pacing_status == PACING_NONE)
		sk->sk_pacing_status = PACING_NEEDED;
	if (!b)
		return;
	/* A second init without a release (none seen; cheap to allow) must
	 * not count the socket twice. */
	was_counted = b->counted;
	__builtin_memset(b, 0, sizeof(*b));
	tp->snd_ssthresh = TCP_INFINITE_SSTHRESH;
	b->mode = S_STARTUP;
	b->layout = BBR3_LAYOUT;
	/* bbr_init(): min_rtt and the PROBE_RTT minimum start from the
	 * handshake's RTT (tcp_min_rtt(); ~0U, our INF32, when there was no
	 * sample), as the simulator's linux-v3 profile does
	 * (Bbr3::on_handshake_rtt). */
	b->min_rtt_us = tp->rtt_min.s[0].v;
	b->probe_rtt_min_us = b->min_rtt_us;
	b->min_rtt_stamp = now_us(tp);
	b->probe_rtt_min_stamp = now_us(tp);
	b->cycle_stamp = now_us(tp);
	b->extra_acked_start = now_us(tp);
	b->next_round_delivered = tp->delivered;
	b->round_lost_start = tp->lost;
	/* v3: the first loss round ends only after the first flight. */
	b->loss_round_delivered = tp->delivered + 1;
	b->inflight_longterm = INF32;
	b->inflight_shortterm = INF32;
	b->bw_shortterm = INF32;
	b->probe_up_acked_per_inc = INF32;
	b->ecn_alpha = ECN_ALPHA_INIT;
	b->alpha_last_delivered = tp->delivered;
	b->alpha_last_ce = tp->delivered_ce;
	b->last_delivered_ce = tp->delivered_ce;
	b->prev_ca_state = CA_OPEN;
	b->pacing_gain = STARTUP_PACING_GAIN;
	b->cwnd_gain = STARTUP_CWND_GAIN;
	init_pacing_rate(sk, b);
	b->counted = 1;
	n = bpf_map_lookup_elem(&bbrlab_b3_live, &zero);
	if (n && !was_counted)
		__sync_fetch_and_add(n, 1);
	publish(tp, b);
}

/* Counts the socket out of `live`; the storage goes with the socket. */
SEC("struct_ops")
void BPF_PROG(bbr3_release, struct sock *sk)
{
	b3_t *b = bpf_sk_storage_get(&bbrlab_b3_st, sk, 0, 0);
	u32 zero = 0;
	u64 *n;

	if (b && b->counted) {
		b->counted = 0;
		n = bpf_map_lookup_elem(&bbrlab_b3_live, &zero);
		if (n)
			__sync_fetch_and_sub(n, 1);
	}
}

/* bbr_ssthresh(): entering recovery saves cwnd and the model a spurious
 * loss will restore; ssthresh is not BBR's signal. */
SEC("struct_ops")
u32 BPF_PROG(bbr3_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	b3_t *b = bpf_sk_storage_get(&bbrlab_b3_st, sk, 0, 0);

	if (b) {
		save_cwnd(tp, b);
		b->undo_bw_shortterm = (u32)b->bw_shortterm;
		b->undo_inflight_shortterm = b->inflight_shortterm;
		b->undo_inflight_longterm = b->inflight_longterm;
	}
	return tp->snd_ssthresh;
}

/* bbr_undo_cwnd(): a spurious loss: restart the full-bw search, put the
 * saved model back, keep the larger cwnd. */
SEC("struct_ops")
u32 BPF_PROG(bbr3_undo_cwnd, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	b3_t *b = bpf_sk_storage_get(&bbrlab_b3_st, sk, 0, 0);

	if (!b)
		return tp->snd_cwnd;
	b->is_loss_in_round = 0;
	reset_full_bw(b);
	b->bw_shortterm = max_u32((u32)b->bw_shortterm, b->undo_bw_shortterm);
	b->inflight_shortterm = max_u32(b->inflight_shortterm, b->undo_inflight_shortterm);
	b->inflight_longterm = max_u32(b->inflight_longterm, b->undo_inflight_longterm);
	return max_u32(tp->snd_cwnd, b->prior_cwnd);
}

/* bbr_set_state(): an RTO restarts the full-bw search and, when not
 * probing, seeds inflight_shortterm from the cwnd. */
SEC("struct_ops")
void BPF_PROG(bbr3_set_state, struct sock *sk, u8 new_state)
{
	struct tcp_sock *tp = tcp_sk(sk);
	b3_t *b = bpf_sk_storage_get(&bbrlab_b3_st, sk, 0, 0);

	if (!b || new_state != CA_LOSS)
		return;
	b->prev_ca_state = CA_LOSS;
	reset_full_bw(b);
	if (!is_probing_bw(b) && b->inflight_shortterm == INF32)
		b->inflight_shortterm = max_u32(tp->snd_cwnd, b->prior_cwnd);
}

/* bbr_cwnd_event(): restarting from idle, pace at bw (PROBE_BW) or see
 * whether PROBE_RTT is done. */
SEC("struct_ops")
void BPF_PROG(bbr3_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	struct tcp_sock *tp = tcp_sk(sk);
	b3_t *b;

	if (event != EVENT_TX_START || !tp->app_limited)
		return;
	b = bpf_sk_storage_get(&bbrlab_b3_st, sk, 0, 0);
	if (!b)
		return;
	b->idle_restart = 1;
	b->extra_acked_start = now_us(tp);
	b->extra_acked_delivered = 0;
	if (is_probe_bw(b->mode))
		set_pacing_rate_gain(sk, b, BBR_UNIT);
	else if (b->mode == S_PROBE_RTT)
		check_probe_rtt_done(sk, b);
}

SEC(".struct_ops.link")
struct tcp_congestion_ops bbrlab_bbr3 = {
	.init = (void *)bbr3_init,
	.release = (void *)bbr3_release,
	.ssthresh = (void *)bbr3_ssthresh,
	.cong_control = (void *)bbr3_cong_control,
	.undo_cwnd = (void *)bbr3_undo_cwnd,
	.cwnd_event = (void *)bbr3_cwnd_event,
	.set_state = (void *)bbr3_set_state,
	.flags = 0x1, /* TCP_CONG_NON_RESTRICTED, as bbr */
	.name = "bbrlab_bbr3",
};
