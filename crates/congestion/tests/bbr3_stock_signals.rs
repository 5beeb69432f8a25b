//! `Bbr3Signals::StockKernel`: the substitutes a stock Linux kernel gives
//! `bbrlab_bbr3` for the signals v3's patches add (issue 24's contract),
//! each shown to change what it should on scripted samples, on the
//! default path of `bbr3_rules` (1 MB/s, 100 ms, BDP 100 000 B, MSS
//! 1500 B) in PROBE_BW UP with the linux-v3 profile. Expected values are
//! worked by hand from v3's formulas (loss_thresh 5/256, Linux's rounded
//! `bbr_inflight_hi_from_lost_skb()`).

mod bbr3_support;

use bbr3_support::*;
use congestion::{Bbr3Config, Bbr3Signals, Mode};

const RTT: u64 = 100 * MS;
const BW: f64 = 1e6;
const BDP: u64 = 100_000;

fn linux(signals: Bbr3Signals) -> Bbr3Config {
    let mut c = Bbr3Config::linux_v3();
    c.signals = signals;
    c
}

/// Reaches UP on the default path.
fn up(b3: Bbr3Config) -> Drv {
    let mut d = Drv::new(b3);
    d.drive_to_probe_bw(BW, RTT);
    d.until(Mode::ProbeBwUp, BW, RTT, BDP, 80);
    d
}

#[test]
fn exact_is_the_default_and_names_round_trip() {
    assert_eq!(Bbr3Config::draft().signals, Bbr3Signals::Exact);
    assert_eq!(Bbr3Config::linux_v3().signals, Bbr3Signals::Exact);
    for s in Bbr3Signals::ALL {
        assert_eq!(s.to_string().parse::<Bbr3Signals>(), Ok(s));
    }
    assert_eq!(
        " Stock-Kernel ".parse::<Bbr3Signals>(),
        Ok(Bbr3Signals::StockKernel)
    );
    let e = "stock".parse::<Bbr3Signals>().unwrap_err().to_string();
    assert!(
        e.contains("`stock`") && e.contains("exact, stock-kernel"),
        "{e}"
    );
}

/// Substitute 3: 10 packets lost by a timer (tx_in_flight 200 000) end an
/// exact probe at once (`bbr_skb_marked_lost()`); the stock kernel has no
/// such hook, and its check runs only on an ACK that carries losses
/// (`rs->losses > 0`), so UP goes on until the next ACK. That ACK ends it
/// even without losses of its own: its packet left before the timer's
/// losses, so substitute 2 counts them (15 000 of prior_in_flight
/// 225 000). With one mark at the round's start, which this ACK is, it
/// read none and UP went on: the blind spot the two marks close. An ACK
/// that reveals one more loss ends it too: 16 500 of 226 500. There the
/// per-ACK check sets inflight_longterm to 225 000 (earlier losses alone
/// crossed the budget, so the prefix is 0,
/// `bbr_inflight_hi_from_lost_skb()`), and the same ACK's model update,
/// seeing the same losses, leaves it there.
#[test]
fn stock_kernel_judges_losses_once_per_ack_not_per_lost_packet() {
    let mut d = up(linux(Bbr3Signals::Exact));
    d.lose_now(10, 1, 200_000, 125_000);
    assert_eq!(d.mode(), Mode::ProbeBwDown);

    let stock_after_timer_loss = || {
        let mut d = up(linux(Bbr3Signals::StockKernel));
        d.lose_now(10, 1, 200_000, 125_000);
        assert_eq!(d.mode(), Mode::ProbeBwUp, "no per-packet check");
        assert_eq!(d.b3().inflight_longterm_bytes, None);
        d
    };
    let mut d = stock_after_timer_loss();
    let s = d.ack(Ack::new(BW, RTT, 125_000));
    assert_eq!(s.mode, Mode::ProbeBwDown, "the timer's losses count");
    let b = s.bbr3.unwrap();
    assert!(b.prev_probe_too_high);
    assert_eq!(b.inflight_longterm_bytes, Some(225_000));

    let mut d = stock_after_timer_loss();
    let s = d.ack(Ack::new(BW, RTT, 125_000).lose_at(1, 1, 400_000));
    assert_eq!(s.mode, Mode::ProbeBwDown);
    let b = s.bbr3.unwrap();
    assert!(b.prev_probe_too_high);
    assert_eq!(b.inflight_longterm_bytes, Some(225_000));
}

/// Substitute 1: the same sample, 2 lost packets (3 000 B), judged against
/// tx_in_flight 100 000 (exact: 3 000 > 1 953, too high; inflight_longterm
/// = max(tx_in_flight, β × target) = 100 000) or prior_in_flight 228 000
/// (stock: 3 000 < 4 453, keep probing).
#[test]
fn stock_kernel_judges_the_loss_rate_against_prior_in_flight() {
    let ack = || {
        Ack::new(BW, RTT, 125_000)
            .tx(100_000)
            .lose_at(2, 1, 400_000)
    };
    let mut d = up(linux(Bbr3Signals::Exact));
    let s = d.ack(ack());
    assert_eq!(s.mode, Mode::ProbeBwDown);
    assert_eq!(s.bbr3.unwrap().inflight_longterm_bytes, Some(100_000));

    let mut d = up(linux(Bbr3Signals::StockKernel));
    let s = d.ack(ack());
    assert_eq!(s.mode, Mode::ProbeBwUp);
    assert_eq!(s.bbr3.unwrap().inflight_longterm_bytes, None);
}

/// Substitute 2: 2 packets lost by a timer earlier in the round, then an
/// ACK that reveals 2 more, with tx_in_flight = prior_in_flight = 228 000
/// so only the loss count differs. Exact counts the losses since the
/// ACKed packet was sent, 3 000 < 4 453: keep probing. Stock counts the
/// round's, 6 000 > 4 453: too high; the ACK's 3 000 B are the lost
/// packet: budget ceil(225 000 × 5/256) = 4 395, prefix (4 395 − 3 000)
/// × 256/251 = 1 422.8, inflight_longterm = ceil(226 422.8) = 226 423.
/// The same ACK's `bbr_adapt_upper_bounds()` sees the same losses and
/// leaves it there (with one mark it read none after the round's start
/// and raised it to prior_in_flight, 228 000).
#[test]
fn stock_kernel_counts_the_losses_of_the_whole_round() {
    let run = |signals| {
        let mut d = up(linux(signals));
        d.lose_now(2, 1, 400_000, 125_000);
        d.ack(
            Ack::new(BW, RTT, 125_000)
                .tx(228_000)
                .lose_at(2, 1, 400_000),
        )
    };
    let s = run(Bbr3Signals::Exact);
    assert_eq!(s.mode, Mode::ProbeBwUp);
    assert_eq!(s.bbr3.unwrap().inflight_longterm_bytes, None);
    let s = run(Bbr3Signals::StockKernel);
    assert_eq!(s.mode, Mode::ProbeBwDown);
    let b = s.bbr3.unwrap();
    assert!(b.prev_probe_too_high);
    assert_eq!(b.inflight_longterm_bytes, Some(226_423));
}

/// Substitute 2 where STARTUP judges its loss rate: the first loss comes
/// on an ACK that starts a round (so the loss round and the packet-timed
/// round end together), ten more follow in five batches, and the ACK of
/// the packet sent just after the first ends both rounds, in recovery,
/// with six loss events. v3 counts the ten lost since that packet left,
/// 15 000 B of its tx_in_flight 325 000 (> 5/256 of it), and leaves
/// STARTUP. The stock substitute counts them too, against
/// prior_in_flight 440 000 (still > 5/256); with one mark, taken at this
/// ACK's round start, it read none and STARTUP went on (the kernel control did
/// so for three more rounds in two of four runs of
/// `bbr3-vs-cubic-1bdp`, `validate --multiflow`, 2026-12-01).
#[test]
fn stock_kernel_startup_sees_the_losses_of_a_round_that_starts_with_one() {
    for signals in Bbr3Signals::ALL {
        let mut d = Drv::new(linux(signals));
        let mut rate = 0.1e6;
        for _ in 0..4 {
            d.ack(Ack::new(rate, RTT, 2 * (rate as u64) / 10));
            rate *= 2.0;
        }
        assert_eq!(d.mode(), Mode::Startup);
        d.ack(Ack::new(rate, RTT, 200_000).lose_at(1, 1, 300_000));
        let lost_then = d.cc.sampler().lost_bytes();
        for _ in 0..5 {
            d.lose_now(2, 1, 300_000, 200_000);
        }
        assert_eq!(
            d.mode(),
            Mode::Startup,
            "{signals}: losses alone end nothing"
        );
        let s = d.ack(
            Ack::new(rate * 1.5, RTT, 200_000)
                .tx(325_000)
                .sent_when_lost(lost_then),
        );
        assert_ne!(s.mode, Mode::Startup, "{signals}");
        assert!(
            s.bbr3.unwrap().inflight_longterm_bytes.is_some(),
            "{signals}"
        );
    }
}

/// Without loss the two modes see the same signals until inflight_longterm
/// exists (only then does tx_in_flight move the model), so the path to UP
/// is identical, snapshot for snapshot.
#[test]
fn without_loss_the_modes_agree() {
    let a = up(linux(Bbr3Signals::Exact)).snap();
    let b = up(linux(Bbr3Signals::StockKernel)).snap();
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}
