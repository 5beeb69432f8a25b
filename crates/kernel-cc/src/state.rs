//! Each control's per-socket state, read from its socket-storage map by
//! the socket's fd: the layouts the BPF programs write.

use super::*;

/// The kernel name of a control's state map (BPF map names have at most
/// 15 characters).
pub(crate) fn state_map_name(cc: &str) -> &'static str {
    match cc {
        BPF_BBR => "bbrlab_bbr_st",
        BPF_BBR3 => "bbrlab_b3_st",
        _ => "bbrlab_jit_st",
    }
}

/// One control's state for one socket, as published by the BPF program
/// (`struct bbrlab_cc_state` in `src/bpf/bbrlab_cc.h`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RawState {
    /// BBR's bandwidth estimate in use (`bbr_bw()`): packets/µs × 2^24.
    pub bw: u64,
    /// The max filter's estimate (`bbr_max_bw()`), same unit.
    pub max_bw: u64,
    /// `cong_control` calls (ACKs processed).
    pub acks: u64,
    /// Times PROBE_RTT was entered.
    pub probe_rtt_entries: u64,
    /// `tcp_mstamp` (µs) at the last PROBE_RTT entry.
    pub last_probe_rtt_us: u64,
    /// MSS the control computes with.
    pub mss: u32,
    /// min_rtt, µs (`u32::MAX` before a sample).
    pub min_rtt_us: u32,
    /// Seed 001's srtt, µs (0 for `bbrlab_bbr`).
    pub srtt_us: u32,
    /// Seed 001's rttvar, µs (0 for `bbrlab_bbr`).
    pub rttvar_us: u32,
    /// 0 STARTUP, 1 DRAIN, 2 PROBE_BW, 3 PROBE_RTT.
    pub mode: u32,
    /// Pacing gain, 256 = 1.0.
    pub pacing_gain: u32,
    /// cwnd gain, 256 = 1.0.
    pub cwnd_gain: u32,
    /// PROBE_BW phase.
    pub cycle_idx: u32,
    /// PROBE_BW cycle length (5 while the variant deems the path unstable).
    pub cycle_len: u32,
    /// Whether the variant builds the BDP on srtt now.
    pub using_srtt: u32,
    /// Whether the policer (lt_bw) estimate is in use.
    pub lt_use_bw: u32,
    /// cwnd, packets.
    pub cwnd: u32,
    /// Lowest cwnd seen during the last PROBE_RTT, packets.
    pub probe_rtt_min_cwnd: u32,
    pub(crate) counted: u32,
    pub(crate) pad: [u32; 2],
}

impl RawState {
    /// The mode's name in bbrlab's schema.
    pub fn mode_name(&self) -> &'static str {
        match self.mode {
            0 => "startup",
            1 => "drain",
            2 => "probe_bw",
            3 => "probe_rtt",
            _ => "",
        }
    }

    /// Bandwidth estimate in bits/s (the schema's `btl_bw_bps`).
    pub fn bw_bps(&self) -> f64 {
        kernel_bw_bps(self.bw, self.mss)
    }
}

/// The size of a control's socket-storage value: `struct bbrlab_cc_state`
/// for the v1 controls, the whole `struct bbrlab_b3_state` (its published
/// block, [`RawState3`], first) for `bbrlab_bbr3`.
pub(crate) fn value_size(cc: &str) -> usize {
    if cc == BPF_BBR3 {
        BBR3_VALUE_SIZE
    } else {
        std::mem::size_of::<RawState>()
    }
}

/// `sizeof(struct bbrlab_b3_state)` in `src/bpf/bbrlab_bbr3.bpf.c`: the
/// published block (168 bytes) and the controller's private state.
pub(crate) const BBR3_VALUE_SIZE: usize = 368;

/// `BBR3_LAYOUT` in `src/bpf/bbrlab_bbr3.bpf.c`: the published block's
/// version. A program pinned by an older bbrlab is refused when its value
/// size differs ([`StateReader::open`]); one whose layout differs at the
/// same size is told by this, and [`StateReader::read3`] refuses its
/// readings rather than return fields read from the wrong offsets.
pub const BBR3_LAYOUT: u64 = 2;

/// `bbrlab_bbr3`'s published state for one socket: the first block of
/// `struct bbrlab_b3_state` in `src/bpf/bbrlab_bbr3.bpf.c`. Volumes are
/// packets, `u32::MAX` where the model has no bound.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RawState3 {
    /// `max_bw` (the two-cycle max filter): packets/µs × 2^24.
    pub max_bw: u64,
    /// The model's bw, min(max_bw, bw_shortterm), same unit.
    pub bw: u64,
    /// `bw_shortterm` (`bw_lo`), same unit; `u32::MAX` when unset.
    pub bw_shortterm: u64,
    /// `cong_control` calls.
    pub acks: u64,
    /// Times PROBE_RTT was entered.
    pub probe_rtt_entries: u64,
    /// `tcp_mstamp` (µs) at the last PROBE_RTT entry.
    pub last_probe_rtt_us: u64,
    /// Times PROBE_BW_UP was entered.
    pub up_entries: u64,
    /// `tcp_mstamp` (µs) at the last UP entry.
    pub last_up_us: u64,
    /// Cuts of inflight_longterm (`bbr_handle_inflight_too_high()`).
    pub cuts: u64,
    /// Probes started one round after an UP that stopped as a precaution
    /// at a risky inflight_longterm and saw no loss or ECN since
    /// (`stopped_risky_probe` in `bbr_adapt_upper_bounds()`): the one way
    /// besides the wall clock, the Reno bound and ECN to leave DOWN early.
    pub risky_reprobes: u64,
    /// `tcp_mstamp` (µs) when the 5 s PROBE_RTT clock last restarted: a
    /// sample below the windowed min RTT (`probe_rtt_min_us`), the first
    /// sample after the clock ran out, or the end of a PROBE_RTT
    /// (`bbr_update_min_rtt()`, `bbr_check_probe_rtt_done()`).
    /// Published because a PROBE_RTT that comes later than 5 s after the
    /// last one is the rule at work only if this moved in between.
    pub probe_rtt_min_stamp_us: u64,
    /// The published block's version, [`BBR3_LAYOUT`] for this bbrlab's.
    pub layout: u64,
    /// MSS the control computes with.
    pub mss: u32,
    /// min_rtt, µs (`u32::MAX` before a sample).
    pub min_rtt_us: u32,
    /// 0 STARTUP, 1 DRAIN, 2 DOWN, 3 CRUISE, 4 REFILL, 5 UP, 6 PROBE_RTT.
    pub mode: u32,
    /// Pacing gain, 256 = 1.0.
    pub pacing_gain: u32,
    /// cwnd gain, 256 = 1.0.
    pub cwnd_gain: u32,
    /// cwnd, packets.
    pub cwnd: u32,
    /// `inflight_longterm` (`inflight_hi`), packets.
    pub inflight_longterm: u32,
    /// `inflight_shortterm` (`inflight_lo`), packets.
    pub inflight_shortterm: u32,
    /// Lowest cwnd seen during the last PROBE_RTT, packets.
    pub probe_rtt_min_cwnd: u32,
    /// The in-flight figure (prior_in_flight) of the last cut.
    pub last_cut_tx_in_flight: u32,
    /// The target inflight (BDP with budget, at most cwnd) at the last cut.
    pub last_cut_target: u32,
    /// inflight_longterm as the last cut set it.
    pub last_cut_longterm: u32,
    /// The state (as `mode`) the last cut happened in.
    pub last_cut_state: u32,
    /// `ecn_alpha`, 256 = 1.0.
    pub ecn_alpha: u32,
    /// Whether the ECN response is on for this socket.
    pub ecn_eligible: u32,
    /// Round trips counted (`update_round()`, Linux's
    /// `bbr_update_round_start()`): published so a kernel run's probes can
    /// be placed in rounds, as the simulator's `model.csv` places its own.
    pub round_count: u32,
    /// Rounds since PROBE_BW_DOWN began, plus the random head start of 0 or
    /// 1 round drawn then (`bbr_pick_probe_wait()`): the count the probe
    /// wait's Reno-coexistence bound compares
    /// (`bbr_is_reno_coexistence_probe_time()`).
    pub rounds_since_probe_up: u32,
    pub(crate) counted: u32,
}

/// A mode number of `bbrlab_bbr3` as the simulator's `bbr3` names it
/// (`congestion::Mode::name`).
pub fn bbr3_mode_name(mode: u32) -> &'static str {
    match mode {
        0 => "startup",
        1 => "drain",
        2 => "probe_bw_down",
        3 => "probe_bw_cruise",
        4 => "probe_bw_refill",
        5 => "probe_bw_up",
        6 => "probe_rtt",
        _ => "",
    }
}

impl RawState3 {
    /// The mode's name in bbrlab's schema (the simulator's `bbr3` names).
    pub fn mode_name(&self) -> &'static str {
        bbr3_mode_name(self.mode)
    }

    /// `max_bw` in bits/s (the schema's `btl_bw_bps`).
    pub fn bw_bps(&self) -> f64 {
        kernel_bw_bps(self.max_bw, self.mss)
    }

    /// PROBE_BW's phase as Linux numbers it (`enum bbr_pacing_gain_phase`):
    /// UP 0, DOWN 1, CRUISE 2, REFILL 3; `None` outside PROBE_BW.
    pub fn cycle_idx(&self) -> Option<u32> {
        match self.mode {
            5 => Some(0),
            2 => Some(1),
            3 => Some(2),
            4 => Some(3),
            _ => None,
        }
    }
}

/// packets/µs × 2^24 at `mss` bytes a packet, in bits/s.
pub(crate) fn kernel_bw_bps(bw: u64, mss: u32) -> f64 {
    bw as f64 * mss as f64 * 8.0 * 1e6 / (1u64 << 24) as f64
}

/// Reads a control's per-socket state through its pinned socket-storage
/// map (the key is the socket's fd in this process).
pub struct StateReader {
    pub(crate) map: libbpf_rs::MapHandle,
}

impl StateReader {
    /// Opens the state map of a loaded control: by its pin, or, where the
    /// pin is hidden (`ip netns exec` mounts a fresh /sys), by its map name
    /// (the newest map of that name: an older one belongs to a control
    /// unloaded while sockets still ran it).
    pub fn open(name: &str) -> Result<StateReader, String> {
        check_name(name)?;
        let p = pin_dir(name).join("state");
        let map = match libbpf_rs::MapHandle::from_pinned_path(&p) {
            Ok(m) => m,
            Err(_) => {
                let want = state_map_name(name);
                let id = libbpf_rs::query::MapInfoIter::default()
                    .filter(|m| m.name.to_str() == Some(want))
                    .map(|m| m.id)
                    .max()
                    .ok_or_else(|| format!("{name} is not loaded (no map {want})"))?;
                libbpf_rs::MapHandle::from_map_id(id)
                    .map_err(|e| format!("cannot open map {want} (id {id}): {e}"))?
            }
        };
        let want = value_size(name);
        if map.value_size() as usize != want {
            return Err(format!(
                "{}: value size {} != {want}: bbrlab and the loaded program differ; \
                 unload and load again",
                p.display(),
                map.value_size()
            ));
        }
        Ok(StateReader { map })
    }

    /// The state for the socket `fd`, `None` when the control has not
    /// initialised it (or the socket uses another control).
    pub fn read(&self, fd: i32) -> Option<RawState> {
        let v = self.bytes(fd)?;
        if v.len() != std::mem::size_of::<RawState>() {
            return None;
        }
        // SAFETY: RawState is repr(C) plain integers, any bit pattern is
        // valid, and the length was checked.
        Some(unsafe { std::ptr::read_unaligned(v.as_ptr().cast::<RawState>()) })
    }

    /// `bbrlab_bbr3`'s published state for the socket `fd` (the map must be
    /// `bbrlab_bbr3`'s), `None` as [`StateReader::read`] and when the
    /// loaded program publishes another layout than [`BBR3_LAYOUT`].
    pub fn read3(&self, fd: i32) -> Option<RawState3> {
        self.raw3(fd).filter(|s| s.layout == BBR3_LAYOUT)
    }

    /// The layout version `bbrlab_bbr3` published for the socket `fd`,
    /// whatever it is (to say why [`StateReader::read3`] refused it).
    pub fn layout3(&self, fd: i32) -> Option<u64> {
        self.raw3(fd).map(|s| s.layout)
    }

    /// The value for `fd` read as [`RawState3`] whatever its layout field
    /// says: one unaligned read serving [`StateReader::read3`] (which then
    /// checks the layout) and [`StateReader::layout3`] (which reports it).
    fn raw3(&self, fd: i32) -> Option<RawState3> {
        let v = self.bytes(fd)?;
        if v.len() != BBR3_VALUE_SIZE {
            return None;
        }
        // SAFETY: RawState3 is repr(C) plain integers, any bit pattern is
        // valid, and the value is BBR3_VALUE_SIZE bytes, no shorter than it.
        Some(unsafe { std::ptr::read_unaligned(v.as_ptr().cast::<RawState3>()) })
    }

    pub(crate) fn bytes(&self, fd: i32) -> Option<Vec<u8>> {
        self.map
            .lookup(&fd.to_ne_bytes(), libbpf_rs::MapFlags::ANY)
            .ok()?
    }
}

/// The congestion control a socket runs (`TCP_CONGESTION`), e.g. `bbr`.
pub fn socket_cc(fd: i32) -> Option<String> {
    let mut name = [0u8; 16];
    let mut len = name.len() as libc::socklen_t;
    // SAFETY: the buffer and its length are valid for the call.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if r != 0 {
        return None;
    }
    let n = &name[..(len as usize).min(name.len())];
    let end = n.iter().position(|&b| b == 0).unwrap_or(n.len());
    Some(String::from_utf8_lossy(&n[..end]).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_state_matches_the_bpf_layout() {
        // struct bbrlab_cc_state: 5 u64 then 16 u32.
        assert_eq!(std::mem::size_of::<RawState>(), 5 * 8 + 16 * 4);
    }

    #[test]
    fn raw_state3_matches_the_bpf_layout() {
        // struct bbrlab_b3_state's published block: 12 u64 then 18 u32.
        assert_eq!(std::mem::size_of::<RawState3>(), 12 * 8 + 18 * 4);
        assert!(BBR3_VALUE_SIZE > std::mem::size_of::<RawState3>());
    }

    #[test]
    fn bandwidth_converts_from_kernel_units() {
        // 1 packet/ms of 1000 B = 8 Mbit/s; kernel units: pkts/us << 24.
        let s = RawState {
            bw: (1u64 << 24) / 1000,
            mss: 1000,
            ..Default::default()
        };
        assert!((s.bw_bps() - 8e6).abs() / 8e6 < 1e-3, "{}", s.bw_bps());
    }
}
