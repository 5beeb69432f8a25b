//! Algorithm selection and configuration: which algorithm, and the
//! settings every algorithm shares ([`Config`]). Each algorithm's own
//! switches have a file of their own (`config/bbr.rs`, `config/bbr3.rs`,
//! `config/cubic.rs`), re-exported here. They sit below the algorithms,
//! not beside them, because [`Config`] holds them all and every algorithm
//! reads [`Config`]: beside, each would import the other.
//!
//! Every constant defaults to what Linux ships (`tcp_bbr.c`, `tcp_cubic.c`),
//! and every BBR mechanism has a switch, because experiments (claims C9 and
//! C14) compare BBR with and without a mechanism.

use core::fmt;
use core::str::FromStr;

mod bbr;
mod bbr3;
mod check;
mod connection_seed;
mod cubic;

// Each algorithm's own settings have a file of their own; they are named
// here, where a user builds a [`Config`].
pub use bbr::{
    AckAggregation, BbrConfig, BbrFlavour, BbrRecovery, JitterCadence, JitterConfig, JitterStats,
    MinRttSamples,
};
pub use bbr3::{
    Bbr3Config, Bbr3Ecn, Bbr3ExtraAcked, Bbr3Profile, Bbr3Signals, StartupLossCount,
    UnknownBbr3Profile, UnknownBbr3Signals,
};
pub use check::ConfigError;
pub use connection_seed::ConnectionSeeds;
pub use cubic::{CubicAvoidance, CubicConfig, HyStartVariant};

/// The built-in algorithms, named the same in every bbrlab interface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Algorithm {
    /// BBR v1 as Linux ships it.
    #[default]
    Bbr,
    /// BBR with the jitter-robust BDP and cycle of Dong & Guo (2019).
    BbrJitter,
    /// BBRv3: draft-ietf-ccwg-bbr-06, or Linux's v3 branch with
    /// [`Bbr3Profile::LinuxV3`].
    Bbr3,
    /// CUBIC (RFC 9438) with HyStart++ (RFC 9406).
    Cubic,
    /// NewReno (RFC 5681, RFC 6582).
    Reno,
}

impl Algorithm {
    /// Every algorithm, in the order they are listed to users.
    pub const ALL: [Algorithm; 5] = [
        Algorithm::Bbr,
        Algorithm::BbrJitter,
        Algorithm::Bbr3,
        Algorithm::Cubic,
        Algorithm::Reno,
    ];

    /// The canonical name: `bbr`, `bbr-jitter`, `bbr3`, `cubic`, `reno`.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Bbr => "bbr",
            Algorithm::BbrJitter => "bbr-jitter",
            Algorithm::Bbr3 => "bbr3",
            Algorithm::Cubic => "cubic",
            Algorithm::Reno => "reno",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Returned when parsing an algorithm name fails; its message lists the known names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownAlgorithm {
    /// The name that was given.
    pub given: String,
}

impl fmt::Display for UnknownAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown congestion control algorithm `{}`; known algorithms: ",
            self.given
        )?;
        for (i, a) in Algorithm::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(a.name())?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownAlgorithm {}

impl FromStr for Algorithm {
    type Err = UnknownAlgorithm;

    /// Parses a canonical name. Matching ignores ASCII case and surrounding
    /// whitespace, so `BBR` from a command line works, but no aliases are
    /// accepted: one name per algorithm keeps logs and files unambiguous.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| UnknownAlgorithm {
                given: s.to_string(),
            })
    }
}

/// Everything needed to build a [`crate::Controller`].
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Config {
    /// Which algorithm.
    pub algorithm: Algorithm,
    /// How recovery episodes end; see [`RecoveryExit`].
    pub recovery_exit: RecoveryExit,
    /// Payload bytes per full-sized packet; windows are counted in these.
    /// The controllers take 0 as 1 and anything above [`MAX_MSS_BYTES`]
    /// as that.
    pub mss_bytes: u64,
    /// Initial window in packets (Linux `TCP_INIT_CWND` = 10).
    pub initial_cwnd_packets: u64,
    /// Seed for BBR's random choices (where PROBE_BW's gain cycle
    /// starts, v3's wait before probing). It must differ per connection:
    /// connections with one seed probe in step, the synchronisation the
    /// randomness exists to avoid. [`Config::for_new_connection`] gives
    /// one; the adapters into QUIC stacks use it for every connection
    /// unless told otherwise ([`ConnectionSeeds`]). The default, 1, is
    /// for simulations, where a scenario sets each flow's.
    pub seed: u64,
    /// BBR switches (used by `bbr` and `bbr-jitter`).
    pub bbr: BbrConfig,
    /// `bbr-jitter` parameters.
    pub jitter: JitterConfig,
    /// How CUBIC and Reno bring their window down in a recovery or CWR
    /// episode; see [`WindowReduction`].
    pub window_reduction: WindowReduction,
    /// CUBIC switches.
    pub cubic: CubicConfig,
    /// BBRv3 switches and constants (used by `bbr3`).
    pub bbr3: Bbr3Config,
    /// Which acknowledged packet's RTT the smoothed RTT follows; see
    /// [`SrttSample`].
    pub srtt_sample: SrttSample,
}

/// Which packet of an ACK the smoothed RTT (and so the retransmission
/// timer) is sampled from. The RTT the algorithms see, and min_rtt, are
/// always the newest packet's: the least delayed by the receiver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum SrttSample {
    /// The largest (newest) packet the ACK newly acknowledges, less the
    /// peer's reported ACK delay where that stays above min_rtt (RFC 9002
    /// §5.1 and §5.3). The default: QUIC.
    #[default]
    Newest,
    /// The oldest packet the ACK newly acknowledges, with no ACK delay
    /// taken off (TCP carries none): what Linux's `tcp_clean_rtx_queue()`
    /// hands `tcp_rtt_estimator()` (`seq_rtt_us`, from the first
    /// cumulatively acknowledged segment, else the first newly SACKed
    /// one), while `tcp_update_rtt_min()` and the congestion control get
    /// the newest (`ca_rtt_us`). Under a receiver that acknowledges every
    /// second segment the smoothed RTT then includes the first segment's
    /// wait for the second, as the kernel's srtt (`tcpi_rtt`) does.
    Oldest,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            algorithm: Algorithm::Bbr,
            recovery_exit: RecoveryExit::default(),
            mss_bytes: 1500,
            initial_cwnd_packets: 10,
            seed: 1,
            bbr: BbrConfig::default(),
            jitter: JitterConfig::default(),
            window_reduction: WindowReduction::default(),
            cubic: CubicConfig::default(),
            bbr3: Bbr3Config::default(),
            srtt_sample: SrttSample::default(),
        }
    }
}

/// How a loss-based window (CUBIC, Reno) comes down to its new ssthresh
/// when an episode begins. BBR keeps its own recovery rules either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum WindowReduction {
    /// Proportional Rate Reduction (RFC 6937), as Linux runs it in
    /// recovery and CWR (`tcp_cwnd_reduction()`): sending continues in
    /// proportion to delivery through the episode, and cwnd becomes
    /// ssthresh when it ends. The default, because the kernel's CUBIC is
    /// what the simulator is validated against.
    #[default]
    Prr,
    /// cwnd drops to ssthresh at once (RFC 9002 §7.3.2's simplest choice,
    /// and what quinn and s2n-quic do).
    Immediate,
}

/// How a loss-recovery episode ends.
///
/// It matters more than it looks. BBR holds cwnd to packet conservation for
/// the first round of every episode and restores the pre-loss window when
/// one ends; CUBIC and Reno cut the window once per episode. Under steady
/// random loss a new episode starts as soon as the previous one ends, so
/// the episode length decides how much of the time BBR spends conserving.
/// Linux episodes last until the cumulative ACK passes `high_seq` (the
/// highest sequence sent when the episode began), which includes the
/// round trip needed to repair losses; RFC 9002 episodes end one round
/// trip after they begin. With 5 % loss on a 100 Mbit/s, 100 ms path the
/// difference is ~88 against ~11 Mbit/s for BBR, measured in bbrlab's
/// simulator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecoveryExit {
    /// RFC 9002 §7.3.2: the episode ends when a packet sent after it began
    /// is acknowledged, and a loss of such a packet starts a new one. The
    /// default, because a QUIC-style transport has no cumulative ACK point.
    #[default]
    FirstAckAfterStart,
    /// Linux TCP (`tcp_fastretrans_alert()`): the episode ends only when the
    /// transport says so in an ACK's [`crate::AckEvent`] (its
    /// [`crate::RecoveryPoint`]): everything sent before the episode began has been delivered
    /// (`snd_una` ≥ `high_seq`). Losses during an episode never start
    /// another. Use it to behave as Linux does, as the simulator does.
    Transport,
}

/// The largest segment size the controllers count in: an IPv6
/// jumbogram's payload, whose length field has 32 bits (RFC 2675 §2).
/// Windows are whole segments and a send quantum is up to 64 of them, so
/// a size near `u64::MAX` (a transport's bug, or an unset field read as
/// all ones) would overflow those products; the controllers take any
/// larger [`Config::mss_bytes`] or [`crate::Controller::on_mss_change`]
/// as this, and 0 as 1.
pub const MAX_MSS_BYTES: u64 = u32::MAX as u64;

/// `mss` within what the controllers count in: 1 to [`MAX_MSS_BYTES`].
pub(crate) fn usable_mss(mss: u64) -> u64 {
    mss.clamp(1, MAX_MSS_BYTES)
}

impl Config {
    /// Default configuration for `algorithm`.
    pub fn new(algorithm: Algorithm) -> Self {
        Config {
            algorithm,
            ..Config::default()
        }
    }

    /// `algorithm` for a QUIC connection whose datagrams carry
    /// `max_datagram_size` bytes: windows counted in that size, recovery
    /// episodes that end as RFC 9002 §7.3.2 says (a packet sent after the
    /// episode began is acknowledged), srtt from the largest acknowledged
    /// packet (§5), and RFC 9002 §7.2's initial window, min(10 × size,
    /// max(14,720 B, 2 × size)), rounded down to whole datagrams (10 up to
    /// 1,472 bytes, 9 at 1,500). Every other field keeps its default; set
    /// the seed per connection ([`Config::for_new_connection`]).
    pub fn for_quic(algorithm: Algorithm, max_datagram_size: u64) -> Self {
        let size = usable_mss(max_datagram_size);
        let window = (10 * size).min(14_720.max(2 * size));
        Config {
            algorithm,
            recovery_exit: RecoveryExit::FirstAckAfterStart,
            mss_bytes: size,
            initial_cwnd_packets: (window / size).max(1),
            srtt_sample: SrttSample::Newest,
            ..Config::default()
        }
    }

    /// The configuration a command line names: `algorithm` by its name and,
    /// for `bbr3` only, a profile by its name (`draft`, `linux-v3`), whose
    /// every constant is set (not just its label). Errors name the option
    /// (`--cc`, `--bbr3-profile`) and what it allows.
    pub fn from_names(algorithm: &str, bbr3_profile: Option<&str>) -> Result<Self, String> {
        let a: Algorithm = algorithm.parse().map_err(|e| format!("--cc: {e}"))?;
        let mut cfg = Config::new(a);
        if let Some(p) = bbr3_profile {
            if a != Algorithm::Bbr3 {
                return Err(format!(
                    "--bbr3-profile {p}: only for --cc bbr3 (this run is --cc {})",
                    a.name()
                ));
            }
            let profile: Bbr3Profile = p.parse().map_err(|e| format!("--bbr3-profile: {e}"))?;
            cfg.bbr3 = Bbr3Config::for_profile(profile);
        }
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 9002's construction: the datagram size counts windows, the
    /// initial window is min(10 × size, max(14,720, 2 × size)) in whole
    /// datagrams, and episodes end as §7.3.2 says.
    #[test]
    fn for_quic_follows_rfc_9002() {
        let c = Config::for_quic(Algorithm::Bbr3, 1200);
        assert_eq!((c.mss_bytes, c.initial_cwnd_packets), (1200, 10));
        assert_eq!(c.recovery_exit, RecoveryExit::FirstAckAfterStart);
        assert_eq!(c.srtt_sample, SrttSample::Newest);
        assert_eq!(c.algorithm, Algorithm::Bbr3);
        // 14,720 B allows 9 datagrams of 1,500 and 2 of 9,000 (the floor).
        assert_eq!(
            Config::for_quic(Algorithm::Cubic, 1500).initial_cwnd_packets,
            9
        );
        assert_eq!(
            Config::for_quic(Algorithm::Cubic, 9000).initial_cwnd_packets,
            2
        );
        assert_eq!(Config::for_quic(Algorithm::Cubic, 0).mss_bytes, 1);
    }

    /// A named profile sets the profile's constants, and a profile for any
    /// algorithm but bbr3, or an unknown name, is refused by option.
    #[test]
    fn a_command_lines_names_make_the_whole_configuration() {
        let c = Config::from_names("bbr3", Some("linux-v3")).unwrap();
        assert_eq!(c.algorithm, Algorithm::Bbr3);
        assert_eq!(c.bbr3, Bbr3Config::linux_v3());
        assert_eq!(
            Config::from_names("bbr3", None).unwrap().bbr3,
            Bbr3Config::default()
        );
        assert_eq!(
            Config::from_names("cubic", None).unwrap().algorithm,
            Algorithm::Cubic
        );
        let e = Config::from_names("cubic", Some("draft")).unwrap_err();
        assert!(
            e.contains("only for --cc bbr3") && e.contains("--cc cubic"),
            "{e}"
        );
        assert!(Config::from_names("vegas", None)
            .unwrap_err()
            .starts_with("--cc:"));
        assert!(Config::from_names("bbr3", Some("v9"))
            .unwrap_err()
            .starts_with("--bbr3-profile:"));
    }

    #[test]
    fn names_round_trip_and_unknown_lists_known() {
        for a in Algorithm::ALL {
            assert_eq!(a.name().parse::<Algorithm>(), Ok(a));
        }
        assert_eq!(
            " BBR-Jitter ".parse::<Algorithm>(),
            Ok(Algorithm::BbrJitter)
        );
        let err = "vegas".parse::<Algorithm>().unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("`vegas`"), "{msg}");
        assert!(msg.contains("bbr, bbr-jitter, bbr3, cubic, reno"), "{msg}");
    }

    #[test]
    fn bbr3_profiles_parse_and_unknown_lists_known() {
        for p in Bbr3Profile::ALL {
            assert_eq!(p.name().parse::<Bbr3Profile>(), Ok(p));
            assert_eq!(Bbr3Config::for_profile(p).profile(), p);
        }
        assert_eq!(" Linux-V3 ".parse(), Ok(Bbr3Profile::LinuxV3));
        assert_eq!(Bbr3Config::default().profile(), Bbr3Profile::Draft);
        let msg = "v2".parse::<Bbr3Profile>().unwrap_err().to_string();
        assert!(
            msg.contains("`v2`") && msg.contains("draft, linux-v3"),
            "{msg}"
        );
    }
}
