/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * BBR v1 as a BPF struct_ops congestion control, written for bbrlab from
 * the behaviour of Linux's net/ipv4/tcp_bbr.c (each rule names the kernel
 * function it follows), and seed 001's jitter-robust variant (eqs. 8-11)
 * when BBRLAB_JITTER is 1.
 *
 * Units follow the kernel: bandwidth in packets per microsecond scaled by
 * 2^24 (BW_UNIT), gains scaled by 256 (BBR_UNIT), times in microseconds.
 *
 * Where the BPF interface differs from a kernel module:
 *  - Writes: bpf_tcp_ca_btf_struct_access lets a BPF control write only
 *    sk_pacing_rate, sk_pacing_status, icsk_ca_priv, icsk_ack.pending,
 *    snd_cwnd, snd_cwnd_cnt, snd_ssthresh, ecn_flags and (in newer kernels,
 *    this 6.18 included) app_limited: all that tcp_bbr.c writes. An older
 *    kernel rejects the app_limited store in PROBE_RTT with "no write
 *    support to tcp_sock at off N".
 *  - tcp_jiffies32 and HZ: we time the min_rtt window and PROBE_RTT with
 *    the low 32 bits of tp->tcp_mstamp (microseconds) instead of jiffies:
 *    same rules, finer clock.
 *  - get_info (TCP_CC_INFO) is not supported for BPF congestion controls
 *    (bpf_tcp_ca's unsupported_ops), so the state the probe samples is
 *    published in a socket-storage map instead (struct bbrlab_cc_state).
 *  - bbr_tso_segs_goal's MAX_TCP_HEADER is a kernel build constant; we use
 *    320 bytes (x86_64 defaults). It only matters above ~500 Mbit/s.
 *  - tcp_bbr.c's two small u32 ops, min_tso_segs (2 segments per TSO burst,
 *    1 below 1.2 Mbit/s) and sndbuf_expand (3 x cwnd of send buffer), are
 *    left out: registered as BPF programs, the kernel sometimes acted on
 *    other values (on Linux 6.18, 10 Mbit/s / 40 ms / 1 BDP, 20 s runs:
 *    TSO bursts of 44 segments where bbr's are at most 16, so 130-200
 *    retransmissions against bbr's 74, and a send buffer that jumped to
 *    tcp_wmem[2]; without the two ops 74-76 retransmissions and bursts of
 *    16-18, as bbr; README, "Is bbrlab_bbr the kernel's BBR?"). The kernel
 *    then uses net.ipv4.tcp_min_tso_segs (default 2, bbr's value above
 *    1.2 Mbit/s) and 2 x cwnd of send buffer. min_tso() below still sizes
 *    the quantization budget, as bbr_tso_segs_goal() does.
 */
#ifndef BBRLAB_CC_H
#define BBRLAB_CC_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#ifndef BBRLAB_JITTER
#error "define BBRLAB_JITTER to 0 (bbrlab_bbr) or 1 (bbrlab_jitter)"
#endif

char _license[] SEC("license") = "GPL";

#define BW_SCALE 24
#define BW_UNIT (1ULL << BW_SCALE)
#define BBR_SCALE 8
#define BBR_UNIT (1U << BBR_SCALE)
#define USEC_PER_SEC 1000000ULL
#define USEC_PER_MSEC 1000ULL
#define NSEC_PER_USEC 1000ULL
#define TCP_INIT_CWND 10U
#define TCP_INFINITE_SSTHRESH 0x7fffffffU
#define CA_OPEN 0
#define CA_RECOVERY 3
#define CA_LOSS 4
#define EVENT_TX_START 0
#define PACING_NONE 0
#define PACING_NEEDED 1
#define GSO_LEGACY_MAX 65536U
#define MAX_TCP_HEADER_GUESS 320U

/* Modes, numbered as tcp_bbr.c's enum bbr_mode. */
#define BBR_STARTUP 0
#define BBR_DRAIN 1
#define BBR_PROBE_BW 2
#define BBR_PROBE_RTT 3

/* Parameters, the values of tcp_bbr.c. */
#define CYCLE_LEN 8
#define JITTER_CYCLE_LEN 5
#define BW_RTTS (CYCLE_LEN + 2)
#define MIN_RTT_WIN_US (10 * USEC_PER_SEC)
#define PROBE_RTT_MODE_US (200 * USEC_PER_MSEC)
#define PACING_MARGIN_PERCENT 1
#define HIGH_GAIN (BBR_UNIT * 2885 / 1000 + 1)
#define DRAIN_GAIN (BBR_UNIT * 1000 / 2885)
#define CWND_GAIN (BBR_UNIT * 2)
#define CWND_MIN_TARGET 4U
#define FULL_BW_THRESH (BBR_UNIT * 5 / 4)
#define FULL_BW_CNT 3
#define LT_INTVL_MIN_RTTS 4
#define LT_LOSS_THRESH 50
#define LT_BW_RATIO (BBR_UNIT / 8)
#define LT_BW_DIFF (4000 / 8)
#define LT_BW_MAX_RTTS 48
#define EXTRA_ACKED_GAIN BBR_UNIT
#define EXTRA_ACKED_WIN_RTTS 5
#define ACK_EPOCH_ACKED_RESET_THRESH (1U << 20)
#define EXTRA_ACKED_MAX_US (100 * 1000)
#define MIN_TSO_RATE 1200000ULL

/* Seed 001: alpha = 1/8 (eq. 8), beta = 1/4 (eq. 9), gamma = 0.3. */
#define GAMMA_NUM 3
#define GAMMA_DEN 10

/* bbr_pacing_gain[]: {5/4, 3/4, 1, 1, 1, 1, 1, 1} (a function, not a
 * table: a constant array lands in .rodata.cst32, which libbpf refuses). */
static __always_inline u32 pacing_gain_cycle(u32 idx)
{
	if (idx == 0)
		return BBR_UNIT * 5 / 4;
	if (idx == 1)
		return BBR_UNIT * 3 / 4;
	return BBR_UNIT;
}

struct bl_sample32 {
	u32 t;
	u32 v;
};

/* A windowed running maximum of three samples (lib/win_minmax.c). */
struct bl_winmax {
	struct bl_sample32 s[3];
};

/* The private state, in icsk_ca_priv (13 u64 on Linux >= 6.x). */
struct bl_bbr {
	u32 min_rtt_us;
	u32 min_rtt_stamp;        /* low 32 bits of tcp_mstamp, us */
	u32 probe_rtt_done_stamp; /* idem, 0 = unset */
	struct bl_winmax bw;
	u32 rtt_cnt;
	u32 next_rtt_delivered;
	u32 cycle_mstamp; /* low 32 bits of delivered_mstamp */
	u32 lt_bw;
	u32 lt_last_delivered;
	u32 lt_last_stamp; /* ms */
	u32 lt_last_lost;
	u32 prior_cwnd;
	u32 full_bw;
	u32 ack_epoch_mstamp; /* low 32 bits */
	u32 ack_epoch_acked;
	u16 extra_acked[2];
	u16 pacing_gain;
	u16 cwnd_gain;
	u32 mode : 2, prev_ca_state : 3, packet_conservation : 1,
		round_start : 1, idle_restart : 1, probe_rtt_round_done : 1,
		lt_is_sampling : 1, lt_rtt_cnt : 7, lt_use_bw : 1,
		full_bw_reached : 1, full_bw_cnt : 2, cycle_idx : 3,
		has_seen_rtt : 1, extra_acked_win_rtts : 5,
		extra_acked_win_idx : 1, using_srtt : 1;
	/* Seed 001, eqs. 8-9: srtt and rttvar in us scaled by 8. */
	u32 srtt8;
	u32 rttvar8;
};

_Static_assert(sizeof(struct bl_bbr) <= 13 * sizeof(u64),
	       "BBR's state must fit in icsk_ca_priv");

/* What `bbrlab tcp send` samples, per socket (TCP_CC_INFO's stand-in). */
struct bbrlab_cc_state {
	u64 bw;       /* bbr_bw(): packets/us << 24 */
	u64 max_bw;   /* bbr_max_bw() */
	u64 acks;     /* cong_control calls */
	u64 probe_rtt_entries;
	u64 last_probe_rtt_us; /* tcp_mstamp at the last PROBE_RTT entry */
	u32 mss;
	u32 min_rtt_us;
	u32 srtt_us;   /* seed 001's srtt (variant only, else 0) */
	u32 rttvar_us; /* seed 001's rttvar (variant only, else 0) */
	u32 mode;
	u32 pacing_gain;
	u32 cwnd_gain;
	u32 cycle_idx;
	u32 cycle_len;
	u32 using_srtt;
	u32 lt_use_bw;
	u32 cwnd;
	u32 probe_rtt_min_cwnd; /* lowest cwnd seen in the last PROBE_RTT */
	u32 counted;            /* counted in `live` (init ran) */
	u32 pad[2];
};

/* Map names say which control they belong to, so `bbrlab tcp send` can
 * find them by name from inside `ip netns exec`, which hides the pins in
 * /sys/fs/bpf behind a fresh /sys. */
#if BBRLAB_JITTER
#define state bbrlab_jit_st
#define live bbrlab_jit_live
#else
#define state bbrlab_bbr_st
#define live bbrlab_bbr_live
#endif

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bbrlab_cc_state);
} state SEC(".maps");

/* Sockets whose init ran and release has not: `kernel unload` refuses
 * while this is non-zero. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} live SEC(".maps");

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct bl_bbr *bbr_of(const struct sock *sk)
{
	return (struct bl_bbr *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

/* before()/after() of include/net/tcp.h: sequence-space comparisons. */
static __always_inline bool before32(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}
#define after32(a, b) before32(b, a)

static __always_inline u32 now32(const struct tcp_sock *tp)
{
	return (u32)tp->tcp_mstamp;
}

/* tcp_packets_in_flight() */
static __always_inline u32 in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) +
	       tp->retrans_out;
}

/* tcp_stamp_us_delta() on the low 32 bits: never negative. */
static __always_inline u32 delta_us(u32 t1, u32 t0)
{
	s32 d = (s32)(t1 - t0);
	return d > 0 ? (u32)d : 0;
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

/* ---- windowed max (lib/win_minmax.c, minmax_running_max) ------------ */

static __always_inline u32 winmax_reset(struct bl_winmax *m, u32 t, u32 v)
{
	m->s[0].t = m->s[1].t = m->s[2].t = t;
	m->s[0].v = m->s[1].v = m->s[2].v = v;
	return v;
}

/* minmax_subwin_update(): age the three samples through the window. */
static __always_inline void winmax_age(struct bl_winmax *m, u32 win, u32 t, u32 v)
{
	u32 dt = t - m->s[0].t;

	if (dt > win) {
		m->s[0] = m->s[1];
		m->s[1] = m->s[2];
		m->s[2].t = t;
		m->s[2].v = v;
		if (t - m->s[0].t > win) {
			m->s[0] = m->s[1];
			m->s[1] = m->s[2];
			m->s[2].t = t;
			m->s[2].v = v;
		}
	} else if (m->s[1].t == m->s[0].t && dt > win / 4) {
		m->s[1].t = m->s[2].t = t;
		m->s[1].v = m->s[2].v = v;
	} else if (m->s[2].t == m->s[1].t && dt > win / 2) {
		m->s[2].t = t;
		m->s[2].v = v;
	}
}

static __always_inline void winmax_update(struct bl_winmax *m, u32 win, u32 t, u32 v)
{
	if (v >= m->s[0].v || t - m->s[2].t > win) {
		winmax_reset(m, t, v);
		return;
	}
	if (v >= m->s[1].v) {
		m->s[1].t = m->s[2].t = t;
		m->s[1].v = m->s[2].v = v;
	} else if (v >= m->s[2].v) {
		m->s[2].t = t;
		m->s[2].v = v;
	}
	winmax_age(m, win, t, v);
}

/* ---- the model ------------------------------------------------------ */

static __always_inline u32 max_bw(const struct bl_bbr *bbr)
{
	return bbr->bw.s[0].v; /* bbr_max_bw() */
}

/* bbr_bw(): the long-term rate when policing was detected. */
static __always_inline u32 bbr_bw(const struct bl_bbr *bbr)
{
	return bbr->lt_use_bw ? bbr->lt_bw : max_bw(bbr);
}

/* bbr_extra_acked() */
static __always_inline u32 extra_acked(const struct bl_bbr *bbr)
{
	return max_u32(bbr->extra_acked[0], bbr->extra_acked[1]);
}

/* Seed 001 eqs. 10-11: unstable when rttvar > gamma * srtt. */
static __always_inline bool unstable(const struct bl_bbr *bbr)
{
#if BBRLAB_JITTER
	return bbr->using_srtt;
#else
	return false;
#endif
}

/* Seed 001 eq. 11: the shortened cycle while unstable. */
static __always_inline u32 cycle_len(const struct bl_bbr *bbr)
{
	return unstable(bbr) ? JITTER_CYCLE_LEN : CYCLE_LEN;
}

/* bbr_rate_bytes_per_sec(): rate (pkts/us << 24) times gain, less the
 * pacing margin, in bytes per second. */
static __always_inline u64 rate_bytes_per_sec(const struct sock *sk, u64 rate,
					      u32 gain)
{
	rate *= tcp_sk(sk)->mss_cache;
	rate *= gain;
	rate >>= BBR_SCALE;
	rate *= USEC_PER_SEC / 100 * (100 - PACING_MARGIN_PERCENT);
	return rate >> BW_SCALE;
}

/* bbr_bw_to_pacing_rate(): capped by SO_MAX_PACING_RATE. */
static __always_inline u64 pacing_rate_for(const struct sock *sk, u64 bw, u32 gain)
{
	return min_u64(rate_bytes_per_sec(sk, bw, gain), sk->sk_max_pacing_rate);
}

/* bbr_init_pacing_rate_from_rtt(): high_gain x cwnd / srtt (1 ms before
 * any RTT sample). */
static __always_inline void init_pacing_rate_from_rtt(struct sock *sk, struct bl_bbr *bbr)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u64 rtt_us = USEC_PER_MSEC;
	u64 bw;

	if (tp->srtt_us) {
		rtt_us = max_u32(tp->srtt_us >> 3, 1);
		bbr->has_seen_rtt = 1;
	}
	bw = (u64)tp->snd_cwnd * BW_UNIT / rtt_us;
	sk->sk_pacing_rate = pacing_rate_for(sk, bw, HIGH_GAIN);
}

/* bbr_set_pacing_rate(): before the pipe is full, only raise the rate. */
static __always_inline void set_pacing_rate(struct sock *sk, struct bl_bbr *bbr,
					    u32 bw, u32 gain)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u64 rate = pacing_rate_for(sk, bw, gain);

	if (!bbr->has_seen_rtt && tp->srtt_us)
		init_pacing_rate_from_rtt(sk, bbr);
	if (bbr->full_bw_reached || rate > sk->sk_pacing_rate)
		sk->sk_pacing_rate = rate;
}

/* bbr_min_tso_segs(): one segment per TSO burst below 1.2 Mbit/s. */
static __always_inline u32 min_tso(const struct sock *sk)
{
	return sk->sk_pacing_rate < (MIN_TSO_RATE >> 3) ? 1 : 2;
}

/* bbr_tso_segs_goal(): about 1 ms of data at the pacing rate per burst. */
static __always_inline u32 tso_segs_goal(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u64 bytes = sk->sk_pacing_rate >> sk->sk_pacing_shift;
	u32 segs;

	bytes = min_u64(bytes, GSO_LEGACY_MAX - 1 - MAX_TCP_HEADER_GUESS);
	segs = max_u32((u32)bytes / max_u32(tp->mss_cache, 1), min_tso(sk));
	return min_u32(segs, 0x7F);
}

/* bbr_save_cwnd(): remember cwnd before recovery or PROBE_RTT. */
static __always_inline void save_cwnd(struct sock *sk, struct bl_bbr *bbr)
{
	u32 cwnd = tcp_sk(sk)->snd_cwnd;

	if (bbr->prev_ca_state < CA_RECOVERY && bbr->mode != BBR_PROBE_RTT)
		bbr->prior_cwnd = cwnd;
	else
		bbr->prior_cwnd = max_u32(bbr->prior_cwnd, cwnd);
}

/* The RTT the BDP is built on: min_rtt, or (variant, unstable path)
 * srtt (seed 001 eq. 10). */
static __always_inline u32 model_rtt_us(const struct bl_bbr *bbr)
{
	if (unstable(bbr))
		return bbr->srtt8 >> 3;
	return bbr->min_rtt_us;
}

/* bbr_bdp(): gain x bw x RTT in packets, rounded up; the initial window
 * before any RTT sample. */
static __always_inline u32 bdp(const struct bl_bbr *bbr, u32 bw, u32 gain)
{
	u64 w;

	if (bbr->min_rtt_us == ~0U)
		return TCP_INIT_CWND;
	w = (u64)bw * model_rtt_us(bbr);
	return (u32)((((w * gain) >> BBR_SCALE) + BW_UNIT - 1) / BW_UNIT);
}

/* bbr_quantization_budget(): room for three TSO bursts, rounded up to an
 * even count, and two more packets in the probing phase. */
static __always_inline u32 quantization_budget(const struct sock *sk,
					       const struct bl_bbr *bbr, u32 cwnd)
{
	cwnd += 3 * tso_segs_goal(sk);
	cwnd = (cwnd + 1) & ~1U;
	if (bbr->mode == BBR_PROBE_BW && bbr->cycle_idx == 0)
		cwnd += 2;
	return cwnd;
}

/* bbr_inflight() */
static __always_inline u32 inflight_for(const struct sock *sk, const struct bl_bbr *bbr,
					u32 bw, u32 gain)
{
	return quantization_budget(sk, bbr, bdp(bbr, bw, gain));
}

/* bbr_packets_in_net_at_edt(): inflight when the next packet departs. */
static __always_inline u32 in_net_at_edt(const struct sock *sk, const struct bl_bbr *bbr,
					 u32 inflight_now)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u64 now_ns = tp->tcp_clock_cache;
	u64 edt_ns = tp->tcp_wstamp_ns > now_ns ? tp->tcp_wstamp_ns : now_ns;
	u64 interval_us = (edt_ns - now_ns) / NSEC_PER_USEC;
	u64 delivered = ((u64)bbr_bw(bbr) * interval_us) >> BW_SCALE;
	u64 at_edt = inflight_now;

	if (bbr->pacing_gain > BBR_UNIT)
		at_edt += tso_segs_goal(sk);
	if (delivered >= at_edt)
		return 0;
	return (u32)(at_edt - delivered);
}

/* bbr_ack_aggregation_cwnd(): extra cwnd for ACK aggregation, capped at
 * 100 ms of data. */
static __always_inline u32 ack_aggregation_cwnd(const struct bl_bbr *bbr)
{
	u32 max_aggr, aggr = 0;

	if (bbr->full_bw_reached) {
		max_aggr = (u32)((u64)bbr_bw(bbr) * EXTRA_ACKED_MAX_US / BW_UNIT);
		aggr = (EXTRA_ACKED_GAIN * extra_acked(bbr)) >> BBR_SCALE;
		aggr = min_u32(aggr, max_aggr);
	}
	return aggr;
}

/* The current icsk_ca_state (a bitfield, read through CO-RE). */
static __always_inline u32 ca_state(const struct sock *sk)
{
	const struct inet_connection_sock *icsk = (const void *)sk;

	return BPF_CORE_READ_BITFIELD(icsk, icsk_ca_state);
}

/* bbr_set_cwnd_to_recover_or_restore(): packet conservation on entering
 * recovery, the saved cwnd back on leaving it. Returns 1 and the cwnd when
 * conservation decides it. */
static __always_inline int recover_or_restore(struct sock *sk, struct bl_bbr *bbr,
					      const struct rate_sample *rs,
					      u32 acked, u32 *new_cwnd)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 prev = bbr->prev_ca_state, st = ca_state(sk);
	u32 cwnd = tp->snd_cwnd;
	s32 losses = rs->losses;

	if (losses > 0)
		cwnd = (s32)cwnd - losses > 1 ? cwnd - losses : 1;
	if (st == CA_RECOVERY && prev != CA_RECOVERY) {
		bbr->packet_conservation = 1;
		bbr->next_rtt_delivered = tp->delivered;
		cwnd = in_flight(tp) + acked;
	} else if (prev >= CA_RECOVERY && st < CA_RECOVERY) {
		cwnd = max_u32(cwnd, bbr->prior_cwnd);
		bbr->packet_conservation = 0;
	}
	bbr->prev_ca_state = st;
	if (bbr->packet_conservation) {
		*new_cwnd = max_u32(cwnd, in_flight(tp) + acked);
		return 1;
	}
	*new_cwnd = cwnd;
	return 0;
}

/* bbr_set_cwnd(): grow towards gain x BDP (+ aggregation allowance) by
 * what was acked; at least 4 packets; 4 in PROBE_RTT. */
static __always_inline void set_cwnd(struct sock *sk, struct bl_bbr *bbr,
				     const struct rate_sample *rs, u32 acked,
				     u32 bw, u32 gain)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 cwnd = tp->snd_cwnd, target;

	if (!acked)
		goto done;
	if (recover_or_restore(sk, bbr, rs, acked, &cwnd))
		goto done;
	target = bdp(bbr, bw, gain);
	target += ack_aggregation_cwnd(bbr);
	target = quantization_budget(sk, bbr, target);
	if (bbr->full_bw_reached)
		cwnd = min_u32(cwnd + acked, target);
	else if (cwnd < target || tp->delivered < TCP_INIT_CWND)
		cwnd = cwnd + acked;
	cwnd = max_u32(cwnd, CWND_MIN_TARGET);
done:
	cwnd = min_u32(cwnd, tp->snd_cwnd_clamp);
	if (bbr->mode == BBR_PROBE_RTT)
		cwnd = min_u32(cwnd, CWND_MIN_TARGET);
	tp->snd_cwnd = cwnd;
}

/* bbr_advance_cycle_phase() (modulo the variant's cycle length). */
static __always_inline void advance_cycle_phase(struct sock *sk, struct bl_bbr *bbr)
{
	bbr->cycle_idx = (bbr->cycle_idx + 1) % cycle_len(bbr);
	bbr->cycle_mstamp = (u32)tcp_sk(sk)->delivered_mstamp;
}

/* bbr_is_next_cycle_phase(): a phase lasts min_rtt; the probe phase
 * until 1.25 BDP is in flight (or a loss), the drain phase ends early
 * once inflight is down to one BDP. */
static __always_inline bool is_next_cycle_phase(struct sock *sk, struct bl_bbr *bbr,
						const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	bool full_length = delta_us((u32)tp->delivered_mstamp, bbr->cycle_mstamp) >
			   bbr->min_rtt_us;
	u32 inflight, bw;

	if (bbr->pacing_gain == BBR_UNIT)
		return full_length;
	inflight = in_net_at_edt(sk, bbr, rs->prior_in_flight);
	bw = max_bw(bbr);
	if (bbr->pacing_gain > BBR_UNIT)
		return full_length &&
		       (rs->losses || inflight >= inflight_for(sk, bbr, bw, bbr->pacing_gain));
	return full_length || inflight <= inflight_for(sk, bbr, bw, BBR_UNIT);
}

/* bbr_reset_probe_bw_mode(): a random phase, never the drain phase. */
static __always_inline void reset_probe_bw_mode(struct sock *sk, struct bl_bbr *bbr)
{
	u32 len = cycle_len(bbr);

	bbr->mode = BBR_PROBE_BW;
	bbr->cycle_idx = len - 1 - bpf_get_prandom_u32() % (len - 1);
	advance_cycle_phase(sk, bbr);
}

/* bbr_reset_mode() */
static __always_inline void reset_mode(struct sock *sk, struct bl_bbr *bbr)
{
	if (!bbr->full_bw_reached)
		bbr->mode = BBR_STARTUP;
	else
		reset_probe_bw_mode(sk, bbr);
}

/* ---- long-term (policer) bandwidth, bbr_lt_bw_sampling() ------------ */

/* bbr_reset_lt_bw_sampling_interval() */
static __always_inline void lt_reset_interval(struct sock *sk, struct bl_bbr *bbr)
{
	struct tcp_sock *tp = tcp_sk(sk);

	bbr->lt_last_stamp = (u32)(tp->delivered_mstamp / USEC_PER_MSEC);
	bbr->lt_last_delivered = tp->delivered;
	bbr->lt_last_lost = tp->lost;
	bbr->lt_rtt_cnt = 0;
}

/* bbr_reset_lt_bw_sampling() */
static __always_inline void lt_reset(struct sock *sk, struct bl_bbr *bbr)
{
	bbr->lt_bw = 0;
	bbr->lt_use_bw = 0;
	bbr->lt_is_sampling = 0;
	lt_reset_interval(sk, bbr);
}

/* bbr_lt_bw_interval_done(): two consistent lossy intervals in a row
 * mean a policer; use their average. */
static __always_inline void lt_interval_done(struct sock *sk, struct bl_bbr *bbr, u32 bw)
{
	u32 diff;

	if (bbr->lt_bw) {
		diff = bw > bbr->lt_bw ? bw - bbr->lt_bw : bbr->lt_bw - bw;
		if ((u64)diff * BBR_UNIT <= (u64)LT_BW_RATIO * bbr->lt_bw ||
		    rate_bytes_per_sec(sk, diff, BBR_UNIT) <= LT_BW_DIFF) {
			bbr->lt_bw = (bw + bbr->lt_bw) >> 1;
			bbr->lt_use_bw = 1;
			bbr->pacing_gain = BBR_UNIT;
			bbr->lt_rtt_cnt = 0;
			return;
		}
	}
	bbr->lt_bw = bw;
	lt_reset_interval(sk, bbr);
}

/* bbr_lt_bw_sampling(): measured over 4-16 rounds that begin and end
 * with a loss and lose at least 20 %. */
static __always_inline void lt_sampling(struct sock *sk, struct bl_bbr *bbr,
					s32 losses, bool app_limited)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 lost, delivered, t;
	u64 bw;

	if (bbr->lt_use_bw) {
		if (bbr->mode == BBR_PROBE_BW && bbr->round_start &&
		    ++bbr->lt_rtt_cnt >= LT_BW_MAX_RTTS) {
			lt_reset(sk, bbr);
			reset_probe_bw_mode(sk, bbr);
		}
		return;
	}
	if (!bbr->lt_is_sampling) {
		if (!losses)
			return;
		lt_reset_interval(sk, bbr);
		bbr->lt_is_sampling = 1;
	}
	if (app_limited) {
		lt_reset(sk, bbr);
		return;
	}
	if (bbr->round_start)
		bbr->lt_rtt_cnt++;
	if (bbr->lt_rtt_cnt < LT_INTVL_MIN_RTTS)
		return;
	if (bbr->lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS) {
		lt_reset(sk, bbr);
		return;
	}
	if (!losses)
		return;
	lost = tp->lost - bbr->lt_last_lost;
	delivered = tp->delivered - bbr->lt_last_delivered;
	if (!delivered || ((u64)lost << BBR_SCALE) < (u64)LT_LOSS_THRESH * delivered)
		return;
	t = (u32)(tp->delivered_mstamp / USEC_PER_MSEC) - bbr->lt_last_stamp;
	if ((s32)t < 1)
		return;
	if (t >= ~0U / USEC_PER_MSEC) {
		lt_reset(sk, bbr);
		return;
	}
	bw = (u64)delivered * BW_UNIT / ((u64)t * USEC_PER_MSEC);
	lt_interval_done(sk, bbr, (u32)bw);
}

/* bbr_update_bw(): round counting and the max filter of delivery rate. */
static __always_inline void update_bw(struct sock *sk, struct bl_bbr *bbr,
				      const struct rate_sample *rs, bool app_lim)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u64 bw;

	bbr->round_start = 0;
	if (rs->delivered < 0 || rs->interval_us <= 0)
		return;
	if (!before32(rs->prior_delivered, bbr->next_rtt_delivered)) {
		bbr->next_rtt_delivered = tp->delivered;
		bbr->rtt_cnt++;
		bbr->round_start = 1;
		bbr->packet_conservation = 0;
	}
	lt_sampling(sk, bbr, rs->losses, app_lim);
	bw = (u64)rs->delivered * BW_UNIT / (u64)rs->interval_us;
	if (!app_lim || bw >= max_bw(bbr))
		winmax_update(&bbr->bw, BW_RTTS, bbr->rtt_cnt, (u32)bw);
}

/* bbr_update_ack_aggregation(): how far ACKs run ahead of bw over
 * epochs; the max of two 5-round windows. */
static __always_inline void update_ack_aggregation(struct sock *sk, struct bl_bbr *bbr,
						   const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 epoch_us, expected, extra;

	if (rs->acked_sacked <= 0 || rs->delivered < 0 ||
	    rs->interval_us <= 0)
		return;
	if (bbr->round_start) {
		bbr->extra_acked_win_rtts = min_u32(0x1F, bbr->extra_acked_win_rtts + 1);
		if (bbr->extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS) {
			bbr->extra_acked_win_rtts = 0;
			bbr->extra_acked_win_idx = bbr->extra_acked_win_idx ? 0 : 1;
			if (bbr->extra_acked_win_idx)
				bbr->extra_acked[1] = 0;
			else
				bbr->extra_acked[0] = 0;
		}
	}
	epoch_us = delta_us((u32)tp->delivered_mstamp, bbr->ack_epoch_mstamp);
	expected = (u32)((u64)bbr_bw(bbr) * epoch_us / BW_UNIT);
	if (bbr->ack_epoch_acked <= expected ||
	    bbr->ack_epoch_acked + rs->acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH) {
		bbr->ack_epoch_acked = 0;
		bbr->ack_epoch_mstamp = (u32)tp->delivered_mstamp;
		expected = 0;
	}
	bbr->ack_epoch_acked = min_u32(0xFFFFF, bbr->ack_epoch_acked + rs->acked_sacked);
	extra = bbr->ack_epoch_acked - expected;
	extra = min_u32(extra, tp->snd_cwnd);
	if (bbr->extra_acked_win_idx) {
		if (extra > bbr->extra_acked[1])
			bbr->extra_acked[1] = extra;
	} else {
		if (extra > bbr->extra_acked[0])
			bbr->extra_acked[0] = extra;
	}
}

/* bbr_check_full_bw_reached(): three rounds without 25 % growth. */
static __always_inline void check_full_bw_reached(struct bl_bbr *bbr, bool app_lim)
{
	u64 thresh;

	if (bbr->full_bw_reached || !bbr->round_start || app_lim)
		return;
	thresh = ((u64)bbr->full_bw * FULL_BW_THRESH) >> BBR_SCALE;
	if (max_bw(bbr) >= thresh) {
		bbr->full_bw = max_bw(bbr);
		bbr->full_bw_cnt = 0;
		return;
	}
	bbr->full_bw_cnt++;
	bbr->full_bw_reached = bbr->full_bw_cnt >= FULL_BW_CNT;
}

/* bbr_check_drain(): STARTUP -> DRAIN -> PROBE_BW. */
static __always_inline void check_drain(struct sock *sk, struct bl_bbr *bbr)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (bbr->mode == BBR_STARTUP && bbr->full_bw_reached) {
		bbr->mode = BBR_DRAIN;
		tp->snd_ssthresh = inflight_for(sk, bbr, max_bw(bbr), BBR_UNIT);
	}
	if (bbr->mode == BBR_DRAIN &&
	    in_net_at_edt(sk, bbr, in_flight(tp)) <=
		    inflight_for(sk, bbr, max_bw(bbr), BBR_UNIT))
		reset_probe_bw_mode(sk, bbr);
}

/* bbr_check_probe_rtt_done(): after 200 ms and a round at 4 packets,
 * restore cwnd and leave PROBE_RTT. */
static __always_inline void check_probe_rtt_done(struct sock *sk, struct bl_bbr *bbr)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!(bbr->probe_rtt_done_stamp &&
	      after32(now32(tp), bbr->probe_rtt_done_stamp)))
		return;
	bbr->min_rtt_stamp = now32(tp);
	tp->snd_cwnd = max_u32(tp->snd_cwnd, bbr->prior_cwnd);
	reset_mode(sk, bbr);
}

/* bbr_update_min_rtt(): the 10 s min_rtt filter and PROBE_RTT. */
static __always_inline void update_min_rtt(struct sock *sk, struct bl_bbr *bbr,
					   const struct rate_sample *rs,
					   struct bbrlab_cc_state *st)
{
	struct tcp_sock *tp = tcp_sk(sk);
	bool expired = after32(now32(tp), bbr->min_rtt_stamp + (u32)MIN_RTT_WIN_US);
	long rtt_us = rs->rtt_us;

	if (rtt_us >= 0 &&
	    ((u64)rtt_us < bbr->min_rtt_us || (expired && !rs->is_ack_delayed))) {
		bbr->min_rtt_us = (u32)rtt_us;
		bbr->min_rtt_stamp = now32(tp);
	}
	if (expired && !bbr->idle_restart && bbr->mode != BBR_PROBE_RTT) {
		bbr->mode = BBR_PROBE_RTT;
		save_cwnd(sk, bbr);
		bbr->probe_rtt_done_stamp = 0;
		if (st) {
			st->probe_rtt_entries++;
			st->last_probe_rtt_us = tp->tcp_mstamp;
			st->probe_rtt_min_cwnd = ~0U;
		}
	}
	if (bbr->mode == BBR_PROBE_RTT) {
		/* Mark the connection app-limited so that PROBE_RTT's low
		 * delivery rates do not count as bandwidth samples. */
		u32 mark = tp->delivered + in_flight(tp);

		tp->app_limited = mark ? mark : 1;
		if (!bbr->probe_rtt_done_stamp && in_flight(tp) <= CWND_MIN_TARGET) {
			u32 done = now32(tp) + (u32)PROBE_RTT_MODE_US;

			bbr->probe_rtt_done_stamp = done ? done : 1;
			bbr->probe_rtt_round_done = 0;
			bbr->next_rtt_delivered = tp->delivered;
		} else if (bbr->probe_rtt_done_stamp) {
			if (bbr->round_start)
				bbr->probe_rtt_round_done = 1;
			if (bbr->probe_rtt_round_done)
				check_probe_rtt_done(sk, bbr);
		}
	}
	if (rs->delivered > 0)
		bbr->idle_restart = 0;
}

/* bbr_update_gains() */
static __always_inline void update_gains(struct bl_bbr *bbr)
{
	switch (bbr->mode) {
	case BBR_STARTUP:
		bbr->pacing_gain = HIGH_GAIN;
		bbr->cwnd_gain = HIGH_GAIN;
		break;
	case BBR_DRAIN:
		bbr->pacing_gain = DRAIN_GAIN;
		bbr->cwnd_gain = HIGH_GAIN;
		break;
	case BBR_PROBE_BW:
		bbr->pacing_gain = bbr->lt_use_bw ? BBR_UNIT :
				   pacing_gain_cycle(bbr->cycle_idx);
		bbr->cwnd_gain = CWND_GAIN;
		break;
	default:
		bbr->pacing_gain = BBR_UNIT;
		bbr->cwnd_gain = BBR_UNIT;
		break;
	}
}

/* Seed 001 eqs. 8-9, in the paper's order (rttvar against the updated
 * srtt); the first sample sets srtt and leaves rttvar 0, as the congestion
 * crate's bbr-jitter does. */
static __always_inline void update_jitter_stats(struct bl_bbr *bbr, long rtt_us)
{
#if BBRLAB_JITTER
	u32 r, d8;

	if (rtt_us < 0)
		return;
	r = (u32)rtt_us;
	if (!bbr->srtt8) {
		bbr->srtt8 = max_u32(r, 1) << 3;
		bbr->rttvar8 = 0;
	} else {
		bbr->srtt8 = bbr->srtt8 - (bbr->srtt8 >> 3) + r; /* eq. 8, alpha 1/8 */
		d8 = bbr->srtt8 > (r << 3) ? bbr->srtt8 - (r << 3) : (r << 3) - bbr->srtt8;
		bbr->rttvar8 = bbr->rttvar8 - (bbr->rttvar8 >> 2) + (d8 >> 2); /* eq. 9, beta 1/4 */
	}
	/* eqs. 10-11: unstable when rttvar > gamma * srtt */
	bbr->using_srtt = (u64)bbr->rttvar8 * GAMMA_DEN > (u64)bbr->srtt8 * GAMMA_NUM;
#endif
}

static __always_inline void publish(struct sock *sk, struct bl_bbr *bbr,
				    struct bbrlab_cc_state *st)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!st)
		return;
	st->acks++;
	st->bw = bbr_bw(bbr);
	st->max_bw = max_bw(bbr);
	st->mss = tp->mss_cache;
	st->min_rtt_us = bbr->min_rtt_us;
	st->srtt_us = bbr->srtt8 >> 3;
	st->rttvar_us = bbr->rttvar8 >> 3;
	st->mode = bbr->mode;
	st->pacing_gain = bbr->pacing_gain;
	st->cwnd_gain = bbr->cwnd_gain;
	st->cycle_idx = bbr->cycle_idx;
	st->cycle_len = cycle_len(bbr);
	st->using_srtt = unstable(bbr);
	st->lt_use_bw = bbr->lt_use_bw;
	st->cwnd = tp->snd_cwnd;
	if (bbr->mode == BBR_PROBE_RTT && tp->snd_cwnd < st->probe_rtt_min_cwnd)
		st->probe_rtt_min_cwnd = tp->snd_cwnd;
}

/* ---- the tcp_congestion_ops callbacks ------------------------------- */

/* bbr_main(): update the model, then pacing rate, then cwnd. */
SEC("struct_ops")
void BPF_PROG(bbrlab_cong_control, struct sock *sk, u32 ack, int flag,
	      const struct rate_sample *rs)
{
	struct bl_bbr *bbr = bbr_of(sk);
	struct bbrlab_cc_state *st = bpf_sk_storage_get(&state, sk, 0, 0);
	bool app_lim = rs->is_app_limited;
	u32 bw;

	update_jitter_stats(bbr, rs->rtt_us);
	/* bbr_update_model() */
	update_bw(sk, bbr, rs, app_lim);
	update_ack_aggregation(sk, bbr, rs);
	if (bbr->mode == BBR_PROBE_BW && is_next_cycle_phase(sk, bbr, rs))
		advance_cycle_phase(sk, bbr); /* bbr_update_cycle_phase() */
	check_full_bw_reached(bbr, app_lim);
	check_drain(sk, bbr);
	update_min_rtt(sk, bbr, rs, st);
	update_gains(bbr);

	bw = bbr_bw(bbr);
	set_pacing_rate(sk, bbr, bw, bbr->pacing_gain);
	set_cwnd(sk, bbr, rs, rs->acked_sacked, bw, bbr->cwnd_gain);
	publish(sk, bbr, st);
}

/* bbr_init() */
SEC("struct_ops")
void BPF_PROG(bbrlab_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bl_bbr *bbr = bbr_of(sk);
	struct bbrlab_cc_state *st;
	u32 zero = 0;
	u64 *n;

	bbr->prior_cwnd = 0;
	tp->snd_ssthresh = TCP_INFINITE_SSTHRESH;
	bbr->rtt_cnt = 0;
	bbr->next_rtt_delivered = tp->delivered;
	bbr->prev_ca_state = CA_OPEN;
	bbr->packet_conservation = 0;
	bbr->probe_rtt_done_stamp = 0;
	bbr->probe_rtt_round_done = 0;
	bbr->min_rtt_us = tp->rtt_min.s[0].v; /* tcp_min_rtt() */
	bbr->min_rtt_stamp = now32(tp);
	winmax_reset(&bbr->bw, 0, 0);
	bbr->has_seen_rtt = 0;
	bbr->srtt8 = 0;
	bbr->rttvar8 = 0;
	bbr->using_srtt = 0;
	init_pacing_rate_from_rtt(sk, bbr);
	bbr->round_start = 0;
	bbr->idle_restart = 0;
	bbr->full_bw_reached = 0;
	bbr->full_bw = 0;
	bbr->full_bw_cnt = 0;
	bbr->cycle_mstamp = 0;
	bbr->cycle_idx = 0;
	bbr->pacing_gain = HIGH_GAIN;
	bbr->cwnd_gain = HIGH_GAIN;
	lt_reset(sk, bbr);
	bbr->mode = BBR_STARTUP;
	bbr->ack_epoch_mstamp = (u32)tp->tcp_mstamp;
	bbr->ack_epoch_acked = 0;
	bbr->extra_acked_win_rtts = 0;
	bbr->extra_acked_win_idx = 0;
	bbr->extra_acked[0] = 0;
	bbr->extra_acked[1] = 0;
	/* cmpxchg(sk_pacing_status, NONE, NEEDED): the TCP stack paces us. */
	if (sk->sk_pacing_status == PACING_NONE)
		sk->sk_pacing_status = PACING_NEEDED;

	st = bpf_sk_storage_get(&state, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (st && !st->counted) {
		st->counted = 1;
		n = bpf_map_lookup_elem(&live, &zero);
		if (n)
			__sync_fetch_and_add(n, 1);
	}
	publish(sk, bbr, st);
}

/* Counts the socket out of `live`; the storage itself goes with the
 * socket. */
SEC("struct_ops")
void BPF_PROG(bbrlab_release, struct sock *sk)
{
	struct bbrlab_cc_state *st = bpf_sk_storage_get(&state, sk, 0, 0);
	u32 zero = 0;
	u64 *n;

	if (st && st->counted) {
		st->counted = 0;
		n = bpf_map_lookup_elem(&live, &zero);
		if (n)
			__sync_fetch_and_sub(n, 1);
	}
}

/* bbr_undo_cwnd(): a spurious loss; restart full-pipe and policer
 * detection, keep cwnd. */
SEC("struct_ops")
u32 BPF_PROG(bbrlab_undo_cwnd, struct sock *sk)
{
	struct bl_bbr *bbr = bbr_of(sk);

	bbr->full_bw = 0;
	bbr->full_bw_cnt = 0;
	lt_reset(sk, bbr);
	return tcp_sk(sk)->snd_cwnd;
}

/* bbr_ssthresh(): remember cwnd; ssthresh is not BBR's signal. */
SEC("struct_ops")
u32 BPF_PROG(bbrlab_ssthresh, struct sock *sk)
{
	save_cwnd(sk, bbr_of(sk));
	return tcp_sk(sk)->snd_ssthresh;
}

/* bbr_set_state(): an RTO restarts full-pipe detection and counts as a
 * lossy round for the policer detector. */
SEC("struct_ops")
void BPF_PROG(bbrlab_set_state, struct sock *sk, u8 new_state)
{
	struct bl_bbr *bbr = bbr_of(sk);

	if (new_state == CA_LOSS) {
		bbr->prev_ca_state = CA_LOSS;
		bbr->full_bw = 0;
		bbr->round_start = 1;
		lt_sampling(sk, bbr, 1, false);
	}
}

/* bbr_cwnd_event(): restarting from idle, pace at bw (PROBE_BW) or see
 * whether PROBE_RTT is done. */
SEC("struct_ops")
void BPF_PROG(bbrlab_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bl_bbr *bbr = bbr_of(sk);

	if (event == EVENT_TX_START && tp->app_limited) {
		bbr->idle_restart = 1;
		bbr->ack_epoch_mstamp = (u32)tp->tcp_mstamp;
		bbr->ack_epoch_acked = 0;
		if (bbr->mode == BBR_PROBE_BW)
			set_pacing_rate(sk, bbr, bbr_bw(bbr), BBR_UNIT);
		else if (bbr->mode == BBR_PROBE_RTT)
			check_probe_rtt_done(sk, bbr);
	}
}

#define BBRLAB_OPS(var, cc_name)                                   \
	SEC(".struct_ops.link")                                    \
	struct tcp_congestion_ops var = {                          \
		.init = (void *)bbrlab_init,                       \
		.release = (void *)bbrlab_release,                 \
		.ssthresh = (void *)bbrlab_ssthresh,               \
		.cong_control = (void *)bbrlab_cong_control,       \
		.undo_cwnd = (void *)bbrlab_undo_cwnd,             \
		.cwnd_event = (void *)bbrlab_cwnd_event,           \
		.set_state = (void *)bbrlab_set_state,             \
		.flags = 0x1, /* TCP_CONG_NON_RESTRICTED, as bbr */ \
		.name = cc_name,                                   \
	}

#endif /* BBRLAB_CC_H */
