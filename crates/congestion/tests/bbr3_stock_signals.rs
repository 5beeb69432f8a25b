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
/// (`rs->losses > 0`), so UP goes on. An ACK without losses does not end
/// it either (the blind spot: it starts a new round, and the round's
/// losses count from there). An ACK that reveals one more loss does: the
/// round's losses 16 500 of prior_in_flight 226 500 (> 5/256 of it). The
/// check sets inflight_longterm to 225 000 (earlier losses alone crossed
/// the budget, so the prefix is 0, `bbr_inflight_hi_from_lost_skb()`),
/// and the same ACK's `bbr_adapt_upper_bounds()` raises it to the
/// sample's "tx_in_flight", here prior_in_flight, 226 500.
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
    assert_eq!(s.mode, Mode::ProbeBwUp, "no losses on this ACK");

    let mut d = stock_after_timer_loss();
    let s = d.ack(Ack::new(BW, RTT, 125_000).lose_at(1, 1, 400_000));
    assert_eq!(s.mode, Mode::ProbeBwDown);
    let b = s.bbr3.unwrap();
    assert!(b.prev_probe_too_high);
    assert_eq!(b.inflight_longterm_bytes, Some(226_500));
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
/// × 256/251 = 1 422.8, inflight_longterm = ceil(226 422.8) = 226 423,
/// which the same ACK's `bbr_adapt_upper_bounds()` raises to the
/// sample's prior_in_flight, 228 000 (v3 would raise it to the ACKed
/// packet's tx_in_flight).
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
    assert_eq!(b.inflight_longterm_bytes, Some(228_000));
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
