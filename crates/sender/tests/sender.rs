//! The sans-IO sender on its own: pacing, timeouts, loss detection,
//! late ACKs and undo, driven packet by packet with hand-made ACKs.

use congestion::{Algorithm, Config, Instant};
use sender::SenderConfig;

const MS: u64 = 1_000_000;

/// The sender takes instants; these tests count in nanoseconds.
fn at(ns: u64) -> Instant {
    Instant::from_nanos(ns)
}

/// Sends the sender releases at one instant, when it may send next, and
/// its pacing rate.
fn burst_at(f: &SenderConfig, now: u64) -> (u64, u64, u64) {
    let mut s = sender::Sender::new(f, 1);
    let sent = send_all(&mut s, now).len() as u64;
    match s.poll(at(now)) {
        sender::SendDecision::PaceUntil(t) => {
            (sent, t.as_nanos(), s.cc.pacing_rate_bytes_per_sec())
        }
        other => panic!("unexpected {other:?} after {sent} sends"),
    }
}

/// Exact pacing releases one packet per slot; quantum pacing releases a
/// burst of several (the send quantum, bounded by cwnd) and then waits the
/// burst's whole length at the pacing rate, so both average the same rate.
#[test]
fn quantum_pacing_bursts_a_quantum_then_waits_its_length() {
    let mut cc = Config::new(Algorithm::Bbr);
    // A 100-packet initial window: the initial pacing rate, 2.885 × 100
    // packets per ms (433 MB/s), gives the largest quantum, 64 KiB = 43
    // packets, and cwnd does not bind first.
    cc.initial_cwnd_packets = 100;
    let mut f = SenderConfig::bulk(cc);
    f.start_ns = 5 * MS;
    let (n, next, rate) = burst_at(&f, f.start_ns);
    assert_eq!(n, 1, "exact pacing sends one packet per slot");
    let slot = |packets: u64| packets as f64 * 1500.0 * 1e9 / rate as f64;
    assert!(((next - f.start_ns) as f64 - slot(1)).abs() <= 1.0);

    f.pacing = sender::Pacing::Quantum;
    let (n, next, rate) = burst_at(&f, f.start_ns);
    assert_eq!(n, 65_536 / 1500, "one 64 KiB quantum of 1500-byte packets");
    let wait = (next - f.start_ns) as f64;
    assert!(
        (wait - slot(n)).abs() <= n as f64,
        "burst of {n} packets then a wait of {wait} ns (rate {rate} B/s)"
    );
}

/// With no pacer, the whole window leaves at one instant and the sender
/// then waits for ACKs, not for a pacing slot: Linux TCP's CUBIC without
/// an fq qdisc. The paced senders release one packet or one quantum.
#[test]
fn without_a_pacer_the_whole_window_leaves_at_once() {
    for alg in [Algorithm::Cubic, Algorithm::Reno, Algorithm::Bbr] {
        let mut cc = Config::new(alg);
        cc.initial_cwnd_packets = 100;
        let mut f = SenderConfig::bulk(cc);
        f.start_ns = 5 * MS;
        f.pacing = sender::Pacing::Off;
        let mut s = sender::Sender::new(&f, 1);
        let sent = send_all(&mut s, f.start_ns);
        assert_eq!(sent.len(), 100, "{alg:?}: the initial window at once");
        assert!(
            matches!(s.poll(at(f.start_ns)), sender::SendDecision::CwndLimited),
            "{alg:?}: then limited by the window, not paced"
        );
        f.pacing = sender::Pacing::Exact;
        let mut s = sender::Sender::new(&f, 1);
        assert_eq!(send_all(&mut s, f.start_ns).len(), 1, "{alg:?} paced");
    }
}

/// Linux TCP charges pacing time only from its tenth data segment on
/// (`tcp_update_skb_after_send()`), so with `initial_burst_packets = 10`
/// the first ten packets leave at one instant and the eleventh waits one
/// packet's time at the pacing rate; without it, exact and quantum
/// pacing both start pacing from the first packet.
#[test]
fn an_initial_burst_leaves_back_to_back_then_pacing_starts() {
    for pacing in [sender::Pacing::Exact, sender::Pacing::Quantum] {
        let mut cc = Config::new(Algorithm::Bbr);
        cc.initial_cwnd_packets = 100;
        let mut f = SenderConfig::bulk(cc);
        f.start_ns = 5 * MS;
        f.pacing = pacing;
        let paced = burst_at(&f, f.start_ns).0;
        f.initial_burst_packets = 10;
        let (n, next, rate) = burst_at(&f, f.start_ns);
        let one = 1500.0 * 1e9 / rate as f64;
        if pacing == sender::Pacing::Exact {
            assert_eq!(paced, 1, "{pacing:?}: paced from the first packet");
            assert_eq!(n, 10, "{pacing:?}: the first ten at once");
            assert!(
                ((next - f.start_ns) as f64 - one).abs() <= 1.0,
                "{pacing:?}"
            );
        } else {
            // The burst is followed by the quantum the pacer opens: ten
            // more packets than without it, and the wait of that quantum.
            assert_eq!(
                n,
                paced + 9,
                "{pacing:?}: nine free packets, then a quantum"
            );
        }
    }
}

/// An ACK of the ranges given (inclusive, highest first).
fn ack_of(ranges: &[(u64, u64)]) -> sender::Ack {
    let mut a = sender::Ack {
        len: ranges.len() as u8,
        ..Default::default()
    };
    a.ranges[..ranges.len()].copy_from_slice(ranges);
    a
}

/// Sends whatever the sender allows at `now` (ignoring pacing); returns
/// the chunks sent.
fn send_all(s: &mut sender::Sender, now: u64) -> Vec<u64> {
    let mut chunks = Vec::new();
    for _ in 0..100 {
        match s.poll(at(now)) {
            sender::SendDecision::Send {
                chunk,
                bytes,
                retransmission,
            } => {
                s.on_sent(at(now), chunk, bytes, retransmission);
                chunks.push(chunk);
            }
            _ => break,
        }
    }
    chunks
}

/// TCP's RTO and QUIC's PTO on the same silence: a 10-packet window, one
/// ACK (a 40 ms RTT sample), then nothing. The RTO declares all nine
/// outstanding packets lost and collapses cwnd; the PTO (RFC 9002 §6.2)
/// sends two probes (the two oldest unacknowledged chunks) past cwnd,
/// declares nothing lost, keeps cwnd, and doubles its next timeout.
#[test]
fn pto_probes_without_declaring_loss_while_rto_collapses() {
    let mut cc = Config::new(Algorithm::Reno);
    cc.initial_cwnd_packets = 10;
    let mss = cc.mss_bytes;
    for timeout in [
        sender::Timeout::Rto,
        sender::Timeout::Pto {
            max_ack_delay_ns: 25 * MS,
        },
    ] {
        let mut f = SenderConfig::bulk(cc);
        f.timeout = timeout;
        // The RTO alone: a tail-loss probe would otherwise come first.
        f.tail_loss_probe = false;
        let mut s = sender::Sender::new(&f, 1);
        // Pacing spreads the window; send until cwnd binds.
        let mut t = 0;
        let mut sent = Vec::new();
        let mut last_sent = 0;
        while sent.len() < 10 && t < 100 * MS {
            let now = send_all(&mut s, t);
            if !now.is_empty() {
                last_sent = t;
            }
            sent.extend(now);
            t += 100_000;
        }
        assert_eq!(sent, (0..10).collect::<Vec<_>>());
        s.on_ack(at(40 * MS), &ack_of(&[(0, 0)]));
        let cwnd = s.cc.cwnd_bytes();
        let inflight = s.inflight;
        assert_eq!(inflight, 9 * mss);
        let deadline = s.timer_deadline().map(Instant::as_nanos).expect("armed");
        s.on_timer(at(deadline));
        let probes = send_all(&mut s, deadline);
        match timeout {
            sender::Timeout::Rto => {
                // RFC 6298 with Linux's 200 ms floor.
                assert!(deadline >= 40 * MS + 200 * MS, "RTO at {deadline}");
                assert!(s.cc.cwnd_bytes() < cwnd, "RTO collapses cwnd");
                assert_eq!(
                    probes,
                    vec![1],
                    "one retransmission fits the collapsed window"
                );
            }
            sender::Timeout::Pto { .. } => {
                // srtt 40 ms + 4 × rttvar (20 ms) + 25 ms max_ack_delay,
                // from the last packet sent (RFC 9002 §6.2.1), not from
                // the ACK at 40 ms as TCP's RTO.
                assert_eq!(deadline, last_sent + 145 * MS);
                assert!(last_sent < 40 * MS);
                assert_eq!(probes, vec![1, 2]);
                assert_eq!(s.cc.cwnd_bytes(), cwnd, "a PTO does not touch cwnd");
                assert_eq!(s.inflight, inflight + 2 * mss, "nothing declared lost");
                let next = s.timer_deadline().map(Instant::as_nanos).expect("re-armed");
                assert_eq!(next - deadline, 2 * 145 * MS, "backed off");
            }
        }
    }
}

/// RFC 9002 §6.2.1 and appendix A.8: the probe timeout counts from the
/// last ack-eliciting packet sent. An ACK resets its backoff but does not
/// move its base (TCP's RTO restarts on each ACK of new data instead,
/// RFC 6298 §5.3); a new packet sent moves it.
#[test]
fn the_pto_counts_from_the_last_packet_sent_and_the_rto_from_the_last_ack() {
    let mut cc = Config::new(Algorithm::Reno);
    cc.initial_cwnd_packets = 10;
    for pto in [true, false] {
        let mut f = SenderConfig::bulk(cc);
        f.tail_loss_probe = false;
        if pto {
            f.timeout = sender::Timeout::Pto {
                max_ack_delay_ns: 25 * MS,
            };
        }
        let mut s = sender::Sender::new(&f, 1);
        let mut t = 0;
        let mut n = 0;
        let mut last_sent = 0;
        while n < 10 && t < 100 * MS {
            let k = send_all(&mut s, t).len();
            if k > 0 {
                last_sent = t;
            }
            n += k;
            t += 100_000;
        }
        assert_eq!(n, 10);
        // Where the timer counts from: its deadline less its length
        // (RFC 9002 §6.2.1's PTO; RFC 6298 §2 with Linux's 200 ms floor).
        let base = |s: &sender::Sender| {
            let rtt = s.cc.rtt();
            let srtt = rtt.smoothed().expect("an RTT sample").as_nanos() as u64;
            let var4 = 4 * rtt.var().as_nanos() as u64;
            let len = if pto {
                srtt + var4.max(MS) + 25 * MS
            } else {
                (srtt + var4).max(200 * MS)
            };
            s.timer_deadline().map(Instant::as_nanos).expect("armed") - len
        };
        s.on_ack(at(40 * MS), &ack_of(&[(0, 0)]));
        let first = base(&s);
        s.on_ack(at(50 * MS), &ack_of(&[(1, 1)]));
        let second = base(&s);
        if pto {
            assert_eq!(first, last_sent, "the PTO did not count from the last send");
            assert_eq!(second, last_sent, "an ACK moved the PTO's base");
            // A packet sent moves it (the window has room after two ACKs).
            let at = 60 * MS;
            assert!(!send_all(&mut s, at).is_empty(), "nothing to send at 60 ms");
            assert_eq!(base(&s), at, "the PTO did not restart at the send");
        } else {
            assert_eq!(
                (first, second),
                (40 * MS, 50 * MS),
                "the RTO did not restart at each ACK"
            );
        }
    }
}

/// RFC 9002 §7.6: when packets sent over more than three (unbacked-off)
/// PTOs are all lost (here the probes of three successive PTOs) and a
/// later packet is acknowledged, cwnd collapses; losses that span less do
/// not collapse it.
#[test]
fn persistent_congestion_collapses_cwnd_only_across_three_ptos() {
    let mut cc = Config::new(Algorithm::Reno);
    cc.initial_cwnd_packets = 10;
    let mut f = SenderConfig::bulk(cc);
    f.timeout = sender::Timeout::Pto {
        max_ack_delay_ns: 25 * MS,
    };
    let mut s = sender::Sender::new(&f, 1);
    let mut t = 0;
    let mut n = 0;
    while n < 10 && t < 100 * MS {
        n += send_all(&mut s, t).len();
        t += 100_000;
    }
    s.on_ack(at(40 * MS), &ack_of(&[(0, 0)]));
    let cwnd = s.cc.cwnd_bytes();
    // Four PTOs (145, 290, 580, 1160 ms apart), two probes each: pn 10–17.
    let mut fired = Vec::new();
    for _ in 0..4 {
        let d = s.timer_deadline().map(Instant::as_nanos).unwrap();
        s.on_timer(at(d));
        assert_eq!(send_all(&mut s, d).len(), 2);
        fired.push(d);
    }
    assert_eq!(fired[1] - fired[0], 2 * 145 * MS);
    assert_eq!(fired[2] - fired[1], 4 * 145 * MS);
    // Only the newest probe (pn 17) is acknowledged: pn 10–15, sent from
    // the first PTO to the third (870 ms ≥ 3 × 145 ms), are declared lost
    // together (by count, and by time for the third PTO's pair).
    s.on_ack(at(fired[3] + 40 * MS), &ack_of(&[(17, 17)]));
    // RFC 9002 §7.6.2's minimum, two packets, then the acknowledged
    // packet's slow-start growth.
    assert!(
        s.cc.cwnd_bytes() <= 3 * cc.mss_bytes,
        "cwnd {} after persistent congestion (was {cwnd})",
        s.cc.cwnd_bytes()
    );

    // The same, but the ACK also covers the third PTO's probes (pn 14
    // and 15): the lost span, pn 10–13, is 290 ms < 3 × 145 ms, an
    // ordinary loss.
    let mut s = sender::Sender::new(&f, 1);
    let (mut t, mut n) = (0, 0);
    while n < 10 && t < 100 * MS {
        n += send_all(&mut s, t).len();
        t += 100_000;
    }
    s.on_ack(at(40 * MS), &ack_of(&[(0, 0)]));
    let mut last = 0;
    for _ in 0..4 {
        last = s.timer_deadline().map(Instant::as_nanos).unwrap();
        s.on_timer(at(last));
        send_all(&mut s, last);
    }
    s.on_ack(at(last + 40 * MS), &ack_of(&[(17, 17), (14, 15)]));
    assert!(
        s.cc.cwnd_bytes() > 3 * cc.mss_bytes,
        "cwnd {} after an ordinary loss (was {cwnd})",
        s.cc.cwnd_bytes()
    );
}

/// A late wake-up under quantum pacing is made up as Linux makes it up
/// (`tcp_update_skb_after_send()`): one quantum (here 43 packets) leaves
/// at once, never more, and the next follows early by the lateness, up to
/// half the burst's time; exact pacing sends one packet and the lateness
/// is lost. Before, a late poll sent the quantum plus the packets it owed
/// in one burst (52-54 here), and a window-limited flow sent a third
/// packet on the heels of every pair, where Linux sends it half a pair's
/// time later.
#[test]
fn quantum_pacing_makes_up_a_late_wake_up() {
    let mut cc = Config::new(Algorithm::Bbr);
    cc.initial_cwnd_packets = 200;
    for pacing in [sender::Pacing::Exact, sender::Pacing::Quantum] {
        let mut f = SenderConfig::bulk(cc);
        f.start_ns = 5 * MS;
        f.pacing = pacing;
        let mut s = sender::Sender::new(&f, 1);
        let first = send_all(&mut s, f.start_ns).len() as u64;
        let sender::SendDecision::PaceUntil(next) = s.poll(at(f.start_ns)) else {
            panic!("the pacer must pause after a burst");
        };
        let slot = 1500.0 * 1e9 / s.cc.pacing_rate_bytes_per_sec() as f64;
        // 10 packet times late: within half a burst, so made up in full.
        let late = (10.0 * slot) as u64;
        let woke = next.as_nanos() + late;
        let second = send_all(&mut s, woke).len() as u64;
        let sender::SendDecision::PaceUntil(after) = s.poll(at(woke)) else {
            panic!("the pacer must pause after the second burst");
        };
        let gap = (after.as_nanos() - woke) as f64 / slot;
        match pacing {
            sender::Pacing::Exact => {
                assert_eq!((first, second), (1, 1));
                assert!((gap - 1.0).abs() < 0.01, "{gap}");
            }
            sender::Pacing::Quantum => {
                assert_eq!((first, second), (43, 43));
                // The schedule kept: 43 packet times after the second
                // burst was due, 33 after it left.
                assert!((gap - 33.0).abs() < 0.05, "next burst {gap} slots on");
                // 40 packet times late: only half the burst (21.5) is
                // forgiven.
                let woke = after.as_nanos() + (40.0 * slot) as u64;
                assert_eq!(send_all(&mut s, woke).len(), 43);
                let sender::SendDecision::PaceUntil(then) = s.poll(at(woke)) else {
                    panic!("the pacer must pause after the third burst");
                };
                let gap = (then.as_nanos() - woke) as f64 / slot;
                assert!((gap - 21.5).abs() < 0.05, "next burst {gap} slots on");
            }
            sender::Pacing::Off => unreachable!("not in this test"),
        }
    }
}

/// Sends at `t` until nothing more may go (pacing ignored by stepping
/// time in 100 µs steps up to `until`); returns the chunks sent.
fn send_until(s: &mut sender::Sender, mut t: u64, until: u64, want: usize) -> (Vec<u64>, u64) {
    let mut sent = Vec::new();
    while sent.len() < want && t < until {
        sent.extend(send_all(s, t));
        t += 100_000;
    }
    (sent, t)
}

/// A sender with a 10-packet window that has sent pn 0–9 (chunks 0–9).
fn ten_sent(alg: Algorithm) -> sender::Sender {
    let mut cc = Config::new(alg);
    cc.initial_cwnd_packets = 10;
    let mut f = SenderConfig::bulk(cc);
    f.tail_loss_probe = false;
    let mut s = sender::Sender::new(&f, 1);
    let (sent, _) = send_until(&mut s, 0, 100 * MS, 10);
    assert_eq!(sent, (0..10).collect::<Vec<_>>());
    s
}

/// An ACK of `ranges` whose receiver has every chunk below `cum`.
fn ack_cum(ranges: &[(u64, u64)], cum: u64, dsack: bool) -> sender::Ack {
    let mut a = ack_of(ranges);
    a.cum_chunk = cum;
    a.dsack = dsack;
    a
}

/// A packet declared lost (packet threshold) whose ACK then arrives before
/// its repair was sent: its bytes count as delivered on that ACK, the
/// queued repair is cancelled (nothing is retransmitted), the reordering
/// is noted, and since every loss of the episode proved spurious the
/// reduction is undone (Reno's cwnd back to what it was).
#[test]
fn a_late_ack_for_a_lost_packet_delivers_it_cancels_its_repair_and_undoes() {
    let mut s = ten_sent(Algorithm::Reno);
    let cwnd0 = s.cc.cwnd_bytes();
    // pn 0 missing, 1–3 acked: pn 0 lost by the 3-packet rule.
    s.on_ack(at(40 * MS), &ack_cum(&[(1, 3)], 0, false));
    assert!(s.cc.cwnd_bytes() < cwnd0, "the loss halves Reno's window");
    let delivered = s.delivered_bytes();
    assert_eq!(delivered, 3 * 1500);
    // pn 0 arrives after all.
    s.on_ack(at(41 * MS), &ack_cum(&[(0, 3)], 4, false));
    assert_eq!(
        s.delivered_bytes(),
        delivered + 1500,
        "late packet delivered"
    );
    assert_eq!(s.late_acks, 1);
    assert_eq!(s.undos, 1);
    // Undone to the prior window, then grown by this ACK in slow start.
    assert!(
        s.cc.cwnd_bytes() >= cwnd0,
        "cwnd {} not undone",
        s.cc.cwnd_bytes()
    );
    // No repair of chunk 0 goes out: the next sends are new data.
    let (sent, _) = send_until(&mut s, 41 * MS, 200 * MS, 1);
    assert!(!sent.contains(&0), "cancelled repair was sent: {sent:?}");
    assert_eq!(s.retransmissions, 0);
}

/// Linux begins a recovery again when the recovery point is reached with
/// lost data still to repair (`tcp_fastretrans_alert()`: back to Open,
/// then `tcp_time_to_recover()` sees `lost_out` and `tcp_enter_recovery()`
/// counts `TCPSackRecovery`). The sender's controller does the same, and
/// `loss_episodes` counts it, as the kernel's counter does, so the two
/// can be set side by side.
#[test]
fn reaching_the_recovery_point_with_repairs_pending_counts_a_recovery() {
    let mut s = ten_sent(Algorithm::Reno);
    // pn 0 missing, 1-9 acked: pn 0 lost by the 3-packet rule, one
    // recovery begun, its point after pn 9.
    s.on_ack(at(40 * MS), &ack_cum(&[(1, 9)], 0, false));
    assert_eq!(s.loss_episodes, 1);
    // The repair (pn 10) and new data (pn 11 on) go out.
    let (sent, _) = send_until(&mut s, 40 * MS, 300 * MS, 5);
    assert_eq!(&sent[..2], &[0, 10], "repair then new data: {sent:?}");
    let last = 10 + sent.len() as u64 - 1;
    // The repair arrives and the point is passed, but pn 11 (chunk 10,
    // sent after the point) is lost by the 3-packet rule: a repair is
    // pending there, so a second recovery begins.
    s.on_ack(at(80 * MS), &ack_cum(&[(12, last), (1, 10)], 10, false));
    assert_eq!(s.packets_lost, 2);
    assert_eq!(s.loss_episodes, 2, "the re-entry counts");
    assert_eq!(s.cc.recovery_state(), congestion::RecoveryState::Recovery);
    // Reached with nothing pending, a recovery simply ends: no count.
    let (sent2, _) = send_until(&mut s, 80 * MS, 300 * MS, 1);
    assert_eq!(sent2.first(), Some(&10), "the repair of chunk 10");
    let top = last + sent2.len() as u64;
    let every_chunk = sent.iter().chain(&sent2).max().unwrap() + 1;
    s.on_ack(
        at(120 * MS),
        &ack_cum(&[(12, top), (1, 10)], every_chunk, false),
    );
    assert_eq!(s.cc.recovery_state(), congestion::RecoveryState::Open);
    assert_eq!(s.loss_episodes, 2);
    assert_eq!(s.packets_lost, 2);
}

/// When a real loss and a reordered packet share an episode, one late ACK
/// is not proof: the reduction stays until every loss is shown spurious
/// (as Linux undoes only when every retransmission is DSACKed).
#[test]
fn a_late_ack_does_not_undo_while_another_loss_of_the_episode_stands() {
    let mut s = ten_sent(Algorithm::Reno);
    let cwnd0 = s.cc.cwnd_bytes();
    // pn 0 and 1 missing, 2–5 acked: both lost.
    s.on_ack(at(40 * MS), &ack_cum(&[(2, 5)], 0, false));
    let reduced = s.cc.cwnd_bytes();
    assert!(reduced < cwnd0);
    // pn 1 turns up late; pn 0 is still lost.
    s.on_ack(at(41 * MS), &ack_cum(&[(1, 5)], 0, false));
    assert_eq!(s.late_acks, 1);
    assert_eq!(s.undos, 0);
    assert!(s.cc.cwnd_bytes() <= reduced + 1500);
}

/// DSACK-based undo (RFC 2883; Linux `tcp_try_undo_dsack()`): once every
/// retransmission of the episode has been reported as a duplicate, the
/// reduction is undone. CUBIC returns to its prior cwnd and ssthresh.
#[test]
fn dsacks_for_every_retransmission_undo_cubic() {
    let mut s = ten_sent(Algorithm::Cubic);
    let cwnd0 = s.cc.cwnd_bytes();
    s.on_ack(at(40 * MS), &ack_cum(&[(1, 3)], 0, false));
    assert!(s.cc.cwnd_bytes() < cwnd0);
    // The repair of chunk 0 goes out as pn 10 (or later).
    let (sent, _) = send_until(&mut s, 40 * MS, 300 * MS, 1);
    assert_eq!(sent.first(), Some(&0), "repair first: {sent:?}");
    assert_eq!(s.retransmissions, 1);
    // The receiver had chunk 0 after all (its ACK range was lost): the
    // repair arrives as a duplicate, reported by DSACK.
    s.on_ack(at(80 * MS), &ack_cum(&[(10, 10), (1, 9)], 10, true));
    assert_eq!(s.undos, 1);
    // Back to the prior window (and slow start, as ssthresh was not yet
    // set), then grown by this ACK's seven packets.
    assert!(s.cc.cwnd_bytes() >= cwnd0, "cwnd {}", s.cc.cwnd_bytes());
    assert_eq!(s.cc.snapshot().ssthresh_bytes, None, "ssthresh restored");
}

/// F-RTO (RFC 5682): an RTO declares the window lost; an ACK that then
/// arrives for data sent before the timeout shows the timeout spurious.
/// The window is restored and packets whose repair had not yet gone out
/// are in flight again, so they are not retransmitted.
#[test]
fn an_ack_for_pre_timeout_data_undoes_the_rto() {
    let mut s = ten_sent(Algorithm::Reno);
    let cwnd0 = s.cc.cwnd_bytes();
    s.on_ack(at(40 * MS), &ack_cum(&[(0, 0)], 1, false));
    let rto = s
        .timer_deadline()
        .map(Instant::as_nanos)
        .expect("RTO armed");
    s.on_timer(at(rto));
    assert_eq!(s.rtos, 1);
    assert_eq!(s.inflight, 0);
    assert!(s.cc.cwnd_bytes() <= 1500);
    // One repair fits the collapsed window.
    assert_eq!(send_all(&mut s, rto), vec![1]);
    // The originals of chunks 1–9 were only delayed.
    s.on_ack(at(rto + MS), &ack_cum(&[(1, 9)], 10, false));
    assert_eq!(s.rto_undos, 1);
    // pn 9 was never retransmitted, so its ACK is an RTT sample (packet
    // numbers are not reused): one that spans the whole timeout.
    assert!(
        s.latest_rtt_ns.is_some_and(|r| r > rto - 100 * MS),
        "{:?}",
        s.latest_rtt_ns
    );
    assert!(
        s.cc.cwnd_bytes() >= cwnd0,
        "cwnd {} restored to at least {cwnd0}",
        s.cc.cwnd_bytes()
    );
    // Only the repair (pn 10, a duplicate now) is in flight.
    assert_eq!(s.inflight, 1500);
    let (sent, _) = send_until(&mut s, rto + MS, rto + 100 * MS, 3);
    assert_eq!(sent, vec![10, 11, 12], "new data, no further repairs");
}

/// Linux's TCP_RTO_MAX: repeated timeouts back off to 120 s, no further.
#[test]
fn the_rto_backs_off_to_120_seconds() {
    let mut s = ten_sent(Algorithm::Reno);
    s.on_ack(at(40 * MS), &ack_cum(&[(0, 0)], 1, false));
    let mut last = 0;
    let mut gaps = Vec::new();
    for _ in 0..14 {
        let d = s.timer_deadline().map(Instant::as_nanos).expect("armed");
        s.on_timer(at(d));
        send_all(&mut s, d);
        if last > 0 {
            gaps.push(d - last);
        }
        last = d;
    }
    assert_eq!(*gaps.last().unwrap(), sender::sender::MAX_RTO_NS);
    assert_eq!(sender::sender::MAX_RTO_NS, 120_000_000_000);
    assert!(gaps.windows(2).all(|w| w[1] >= w[0]), "{gaps:?}");
}

/// A tail-loss probe (RFC 8985 §7): with the last packets of a flight
/// lost and nothing acknowledged, a probe goes out after about two RTTs,
/// long before the RTO (≥ 200 ms), without touching cwnd. Its ACK reveals
/// the lost tail to RACK.
#[test]
fn a_tail_loss_probe_goes_out_before_the_rto() {
    let mut cc = Config::new(Algorithm::Cubic);
    cc.initial_cwnd_packets = 10;
    let mut f = SenderConfig::bulk(cc);
    f.size_bytes = Some(10 * 1500);
    let mut s = sender::Sender::new(&f, 1);
    let (sent, _) = send_until(&mut s, 0, 100 * MS, 10);
    assert_eq!(sent.len(), 10);
    // pn 0–6 acked 40 ms later; the tail, pn 7–9, is lost.
    s.on_ack(at(40 * MS), &ack_cum(&[(0, 6)], 7, false));
    let cwnd = s.cc.cwnd_bytes();
    let deadline = s.timer_deadline().map(Instant::as_nanos).expect("armed");
    // 2 × srtt (40 ms) + 2 ms, well before 40 ms + 200 ms.
    assert!(
        (120 * MS..240 * MS).contains(&deadline),
        "probe at {deadline}"
    );
    s.on_timer(at(deadline));
    let probe = send_all(&mut s, deadline);
    assert_eq!(probe, vec![9], "the newest outstanding chunk is probed");
    assert_eq!(s.tail_loss_probes, 1);
    assert_eq!(s.cc.cwnd_bytes(), cwnd, "a probe is not a reduction");
    // The probe (pn 10) is acked: RACK declares pn 7–8 lost. Recovery's
    // PRR (RFC 6937; Linux's `tcp_cwnd_reduction()` adds no extra segment
    // when snd_una did not advance) lets one repair go per packet
    // delivered: the probe's ACK releases chunk 7's repair (pn 11), whose
    // ACK releases chunk 8's.
    let t1 = deadline + 40 * MS;
    s.on_ack(at(t1), &ack_cum(&[(10, 10), (0, 6)], 7, false));
    let repairs = send_until(&mut s, t1, t1 + 200 * MS, 2).0;
    assert_eq!(repairs, vec![7]);
    let t2 = t1 + 40 * MS;
    s.on_ack(at(t2), &ack_cum(&[(10, 11), (0, 6)], 8, false));
    let repairs = send_until(&mut s, t2, t2 + 200 * MS, 2).0;
    // Chunk 8's repair first. (Chunk 9 follows it: RACK now declares pn 9
    // lost although the probe, pn 10, delivered its data; a spurious
    // repair, noted and not fixed here.)
    assert_eq!(repairs.first(), Some(&8), "{repairs:?}");
}

/// QUIC 2018's loss detection (Chromium `GeneralLossAlgorithm`, kNack)
/// against Linux's on the same reordering: both declare pn 0 lost when
/// three later packets are acknowledged; when pn 0 then arrives, Linux
/// undoes the reduction and from then on judges loss by time alone, so a
/// second hole four packets below the newest acknowledged is not yet lost
/// 2 ms later; QUIC 2018 undoes nothing and keeps counting packets.
#[test]
fn quic_2018_keeps_counting_packets_after_reordering_and_never_undoes() {
    for quic in [false, true] {
        let mut cc = Config::new(Algorithm::Reno);
        cc.initial_cwnd_packets = 20;
        let mut f = SenderConfig::bulk(cc);
        f.tail_loss_probe = false;
        if quic {
            f.loss_detection = sender::LossDetection::Quic2018;
        }
        let mut s = sender::Sender::new(&f, 1);
        let (sent, _) = send_until(&mut s, 0, 100 * MS, 20);
        assert_eq!(sent.len(), 20);
        let lost = |s: &sender::Sender| s.cc.sampler().lost_bytes();
        s.on_ack(at(40 * MS), &ack_of(&[(1, 3)]));
        assert_eq!(
            lost(&s),
            1500,
            "pn 0 lost by the 3-packet rule (quic {quic})"
        );
        // pn 0 turns up: an ACK that newly acknowledges only pn 0.
        s.on_ack(at(41 * MS), &ack_of(&[(0, 3)]));
        assert_eq!(s.late_acks, 1);
        assert_eq!(s.undos, if quic { 0 } else { 1 }, "undo (quic {quic})");
        // pn 4 missing, 5–8 acknowledged: 4 packets above it.
        s.on_ack(at(42 * MS), &ack_of(&[(5, 8), (0, 3)]));
        let expect = if quic { 2 * 1500 } else { 1500 };
        assert_eq!(lost(&s), expect, "second hole (quic {quic})");
    }
}

/// The peak in flight between two reads counts a burst that is gone by
/// the second: ten packets sent and eight acknowledged read as ten, and
/// the next read starts from the two still in flight.
#[test]
fn the_inflight_peak_counts_a_burst_between_reads() {
    let mut cc = Config::new(Algorithm::Cubic);
    cc.initial_cwnd_packets = 10;
    let mut f = SenderConfig::bulk(cc);
    f.pacing = sender::Pacing::Off;
    let mut s = sender::Sender::new(&f, 1);
    assert_eq!(s.take_inflight_peak(), 0);
    assert_eq!(send_all(&mut s, 0).len(), 10);
    s.on_ack(at(40 * MS), &ack_of(&[(0, 7)]));
    assert_eq!(s.inflight, 2 * 1500);
    assert_eq!(s.take_inflight_peak(), 10 * 1500);
    assert_eq!(s.take_inflight_peak(), 2 * 1500);
}

/// A segment-size change cuts the data not yet sent anew: a 15,500-byte
/// flow that has sent four 1,500-byte segments when the size falls to
/// 1,000 sends the remaining 9,500 bytes as nine of 1,000 and one of 500,
/// and its controller counts in the new size.
#[test]
fn an_mss_change_recuts_the_unsent_data() {
    fn send(s: &mut sender::Sender, now: u64, sizes: &mut Vec<u32>) {
        while let sender::SendDecision::Send {
            chunk,
            bytes,
            retransmission,
        } = s.poll(at(now))
        {
            s.on_sent(at(now), chunk, bytes, retransmission);
            sizes.push(bytes);
        }
    }
    let mut cc = Config::new(Algorithm::Cubic);
    cc.initial_cwnd_packets = 4;
    let mut f = SenderConfig::bulk(cc);
    f.pacing = sender::Pacing::Off;
    f.size_bytes = Some(15_500);
    f.mss_change = Some(sender::MssChange {
        at_ns: MS,
        mss: 1000,
    });
    let mut s = sender::Sender::new(&f, 1);
    let mut sizes = Vec::new();
    send(&mut s, 0, &mut sizes);
    assert_eq!(sizes.len(), 4);
    assert_eq!(s.take_new_total_chunks(), None, "not due yet");
    // Everything sent is acknowledged a millisecond later, from 40 ms on:
    // the change, due since 1 ms, applies before the fifth send.
    for k in 0..20u64 {
        let sent = sizes.len() as u64;
        s.on_ack(at((40 + k) * MS), &ack_of(&[(0, sent - 1)]));
        send(&mut s, (40 + k) * MS, &mut sizes);
        if s.inflight == 0 {
            break;
        }
    }
    assert_eq!(
        sizes,
        [1500, 1500, 1500, 1500, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 500]
    );
    assert!(s.is_done());
    assert_eq!(s.cc.mss_bytes(), 1000);
    assert_eq!(s.take_new_total_chunks(), Some(14));
    assert_eq!(s.take_new_total_chunks(), None, "taken once");
}

/// `timer_deadline_not_before(t)` is the simulator's shortcut past
/// `timer_deadline()`: whenever it says yes, the deadline is at or after
/// `t` or there is none. Checked for TCP's RTO (with and without tail-loss
/// probes) and QUIC's PTO over two seconds of sends, ACKs with holes
/// (every seventh packet is never acknowledged: losses, loss timers and
/// repairs) and timer expiries, at instants around the deadline and
/// after the present; and, with the RTO, the shortcut does answer yes at
/// the deadline itself most of the time.
#[test]
fn the_timer_shortcut_never_says_not_before_a_deadline_that_is() {
    let timeouts = [
        (sender::Timeout::Rto, true),
        (sender::Timeout::Rto, false),
        (
            sender::Timeout::Pto {
                max_ack_delay_ns: 25 * MS,
            },
            false,
        ),
    ];
    for (timeout, tlp) in timeouts {
        let mut f = SenderConfig::bulk(Config::new(Algorithm::Cubic));
        f.timeout = timeout;
        f.tail_loss_probe = tlp;
        let mut s = sender::Sender::new(&f, 1);
        let mut sent_at: Vec<u64> = Vec::new();
        let (mut checked, mut yes_at_deadline, mut deadlines) = (0u64, 0u64, 0u64);
        let mut t = 0;
        while t < 2_000 * MS {
            // A silence from 0.8 s to 1.5 s lets the timers fire.
            let silent = (800 * MS..1_500 * MS).contains(&t);
            if let Some(d) = s.timer_deadline().map(Instant::as_nanos) {
                if d <= t {
                    s.on_timer(at(d.max(t)));
                }
            }
            for _ in send_all(&mut s, t) {
                sent_at.push(t);
            }
            // ACK what was sent 40 ms ago or earlier, the newest four runs
            // between the never-acknowledged packets.
            let acked = sent_at.iter().take_while(|&&x| x + 40 * MS <= t).count() as u64;
            if !silent {
                if let Some(ack) = ack_with_holes(acked) {
                    s.on_ack(at(t), &ack);
                }
            }
            let deadline = s.timer_deadline().map(Instant::as_nanos);
            let mut probes = vec![t, t + MS, t + 200 * MS, t + 400 * MS, t + 10_000 * MS];
            if let Some(d) = deadline {
                probes.extend([d.saturating_sub(1), d, d + 1]);
                deadlines += 1;
                if s.timer_deadline_not_before(at(d)) {
                    yes_at_deadline += 1;
                }
            }
            for p in probes {
                if s.timer_deadline_not_before(at(p)) {
                    assert!(
                        deadline.is_none_or(|d| d >= p),
                        "{timeout:?}: deadline {deadline:?} is before {p} at {t}"
                    );
                    checked += 1;
                }
            }
            t += MS;
        }
        // QUIC's PTO has no floor, so the shortcut helps only TCP's RTO.
        if timeout == sender::Timeout::Rto {
            assert!(checked > 1_000, "{timeout:?}: {checked} yes answers");
            assert!(
                yes_at_deadline * 2 > deadlines,
                "{timeout:?}: yes at the deadline {yes_at_deadline} of {deadlines}"
            );
        }
    }
}

/// An ACK of packets `0..acked` but every seventh (pn % 7 == 3), which is
/// never acknowledged: its newest four ranges, or `None` if empty.
fn ack_with_holes(acked: u64) -> Option<sender::Ack> {
    let mut ranges = Vec::new();
    let mut hi = acked.checked_sub(1)?;
    while ranges.len() < 4 {
        let lo = if hi % 7 == 3 {
            hi + 1
        } else {
            hi - hi % 7 + if hi % 7 >= 4 { 4 } else { 0 }
        };
        if lo <= hi {
            ranges.push((lo, hi));
        }
        if lo < 2 {
            break;
        }
        hi = lo - 2;
    }
    (!ranges.is_empty()).then(|| ack_of(&ranges))
}

/// `paced_until` is the simulator's shortcut past `poll` for a flow that
/// is already to be woken in time, and `poll_settled` its shortcut past
/// the `poll` after each send: two senders driven alike, one always
/// polled (and each `poll_settled` answer it gives checked against its
/// `poll`) and one whose poll is skipped whenever a shortcut allows,
/// send the same packets at the same instants, in the same kick (an
/// ACK's or a wake-up's, which may come at the wake-up's own instant),
/// and end in the same state, with exact and quantum pacing, losses
/// (repairs, tail-loss probes and RTOs through a silence) and an
/// application that is not bulk.
#[test]
fn skipping_poll_when_paced_until_allows_changes_nothing() {
    /// (which kick, when, chunk, bytes, retransmission, packet number)
    type Sent = Vec<(u8, u64, u64, u32, bool, u64)>;
    /// Kicks `s` at `t` as the simulator does; returns whether poll was
    /// skipped.
    fn kick(
        s: &mut sender::Sender,
        wake_at: &mut Option<u64>,
        (t, which): (u64, u8),
        fast: bool,
        sent: &mut Sent,
    ) -> bool {
        if fast && wake_at.is_some_and(|w| s.paced_until(at(t)).is_some_and(|p| w <= p.as_nanos()))
        {
            return true;
        }
        let mut settled = None;
        let mut skipped = false;
        loop {
            let decision = match settled.take() {
                Some(d) => {
                    skipped = true;
                    d
                }
                None => {
                    // Whenever `poll_settled` answers, `poll` says the same.
                    let known = s.poll_settled(at(t));
                    let d = s.poll(at(t));
                    if let Some(k) = known {
                        assert_eq!(k, d, "poll_settled at {t}");
                    }
                    d
                }
            };
            match decision {
                sender::SendDecision::Send {
                    chunk,
                    bytes,
                    retransmission,
                } => {
                    let pn = s.on_sent(at(t), chunk, bytes, retransmission);
                    sent.push((which, t, chunk, bytes, retransmission, pn));
                    if fast {
                        settled = s.poll_settled(at(t));
                    }
                }
                sender::SendDecision::PaceUntil(p) | sender::SendDecision::NoData(Some(p)) => {
                    if wake_at.is_none_or(|w| p.as_nanos() < w) {
                        *wake_at = Some(p.as_nanos());
                    }
                    break;
                }
                _ => break,
            }
        }
        skipped
    }
    let mut cases = Vec::new();
    for alg in [Algorithm::Bbr, Algorithm::Cubic] {
        for pacing in [sender::Pacing::Exact, sender::Pacing::Quantum] {
            let mut f = SenderConfig::bulk(Config::new(alg));
            f.pacing = pacing;
            cases.push(f);
        }
    }
    let mut f = SenderConfig::bulk(Config::new(Algorithm::Bbr));
    f.app = sender::App::Rate { bytes_per_sec: 2e6 };
    cases.push(f);
    for f in cases {
        let mut a = sender::Sender::new(&f, 1);
        let mut b = sender::Sender::new(&f, 1);
        // The first wake-up at the start, as the simulator queues it.
        let (mut wake_a, mut wake_b) = (Some(0), Some(0));
        let (mut sent_a, mut sent_b) = (Sent::new(), Sent::new());
        let mut skipped = 0;
        let mut t = 0;
        while t < 3_000 * MS {
            // A timer due fires and kicks.
            for (s, wake, sent, fast) in [
                (&mut a, &mut wake_a, &mut sent_a, false),
                (&mut b, &mut wake_b, &mut sent_b, true),
            ] {
                if s.timer_deadline().is_some_and(|d| d.as_nanos() <= t) {
                    s.on_timer(at(t));
                    skipped += kick(s, wake, (t, 0), fast, sent) as u64;
                }
            }
            // An ACK of what was sent 40 ms ago (none from 1 s to 1.6 s),
            // then a wake-up due now.
            let acked = sent_a.iter().take_while(|x| x.1 + 40 * MS <= t).count() as u64;
            let ack = ack_with_holes(acked).filter(|_| !(1_000 * MS..1_600 * MS).contains(&t));
            for (s, wake, sent, fast) in [
                (&mut a, &mut wake_a, &mut sent_a, false),
                (&mut b, &mut wake_b, &mut sent_b, true),
            ] {
                if let Some(ack) = &ack {
                    s.on_ack(at(t), ack);
                    skipped += kick(s, wake, (t, 1), fast, sent) as u64;
                }
                if wake.is_some_and(|w| w <= t) {
                    *wake = None;
                    skipped += kick(s, wake, (t, 2), fast, sent) as u64;
                }
            }
            assert_eq!(sent_a, sent_b, "{:?} {:?} at {t}", f.cc.algorithm, f.pacing);
            assert_eq!(wake_a, wake_b);
            t += MS / 4;
        }
        assert_eq!(a.inflight, b.inflight);
        assert_eq!(a.cc.cwnd_bytes(), b.cc.cwnd_bytes());
        assert_eq!(a.timer_deadline(), b.timer_deadline());
        assert!(
            a.retransmissions > 0 && a.packets_sent > 100,
            "{:?} {:?}: {} sent, {} retransmitted, {skipped} skipped",
            f.cc.algorithm,
            f.pacing,
            a.packets_sent,
            a.retransmissions
        );
        if matches!(f.app, sender::App::Bulk) && f.pacing == sender::Pacing::Exact {
            assert!(
                skipped > 1_000,
                "{:?}: {skipped} polls skipped",
                f.cc.algorithm
            );
        }
    }
}

/// A TCP receiver's window holds the sender: no new chunk at or beyond
/// the right edge offered (`tcp_snd_wnd_test()`), first the SYN-ACK's,
/// then each ACK's; the sender then says it is flow-blocked, not
/// cwnd-limited (cwnd is 100 packets here), and an ACK that moves the
/// edge lets exactly that much more go. An edge never moves back.
#[test]
fn new_data_stops_at_the_receive_windows_right_edge() {
    let mut cc = Config::new(Algorithm::Cubic);
    cc.initial_cwnd_packets = 100;
    let mut f = SenderConfig::bulk(cc);
    f.tail_loss_probe = false;
    let mut s = sender::Sender::new(&f, 1);
    s.set_flow_limit(10);
    let (sent, t) = send_until(&mut s, 0, 100 * MS, 20);
    assert_eq!(sent, (0..10).collect::<Vec<_>>());
    assert_eq!(s.poll(at(t)), sender::SendDecision::FlowBlocked);
    let mut a = ack_cum(&[(0, 9)], 10, false);
    a.rwnd_chunks = Some(4);
    s.on_ack(at(40 * MS), &a);
    let (sent, t) = send_until(&mut s, 40 * MS, 100 * MS, 20);
    assert_eq!(sent, (10..14).collect::<Vec<_>>());
    assert_eq!(s.poll(at(t)), sender::SendDecision::FlowBlocked);
    let mut b = ack_cum(&[(10, 10)], 11, false);
    b.rwnd_chunks = Some(6);
    s.on_ack(at(t), &b);
    let (sent, t) = send_until(&mut s, t, 200 * MS, 20);
    assert_eq!(sent, (14..17).collect::<Vec<_>>());
    let mut c = ack_cum(&[(10, 11)], 12, false);
    c.rwnd_chunks = Some(3);
    s.on_ack(at(t), &c);
    assert_eq!(s.poll(at(t)), sender::SendDecision::FlowBlocked);
    // Without an edge (a receiver that offers no window) nothing changes.
    let d = ack_cum(&[(10, 12)], 13, false);
    s.on_ack(at(t + MS), &d);
    assert_eq!(s.poll(at(t + MS)), sender::SendDecision::FlowBlocked);
}

/// The sends of each instant from `from` until `until` (stepping 10 µs,
/// at most `bursts` instants that sent something): the chunks of each
/// burst.
fn bursts_from(s: &mut sender::Sender, from: u64, until: u64, bursts: usize) -> Vec<Vec<u64>> {
    let mut out = Vec::new();
    let mut t = from;
    while out.len() < bursts && t < until {
        let sent = send_all(s, t);
        if !sent.is_empty() {
            out.push(sent);
        }
        t += 10_000;
    }
    out
}

/// A TCP segment burst is one skb: contiguous data of one kind. Linux
/// retransmits a lost skb on its own (`tcp_xmit_retransmit_queue()`,
/// paced by `tcp_pacing_check()`), so with quantum pacing a repair
/// never leaves in one burst with new data or with a repair of a chunk
/// that is not next to it; adjacent repairs leave together. A QUIC
/// sender (PTO) may put any packets in one GSO burst. Without the rule
/// the TCP sender sent all four repairs and the new data in one burst.
#[test]
fn a_tcp_repair_leaves_in_its_own_burst_and_quic_mixes() {
    let run = |timeout: sender::Timeout| {
        let mut cc = Config::new(Algorithm::Bbr);
        cc.initial_cwnd_packets = 100;
        let mut f = SenderConfig::bulk(cc);
        f.pacing = sender::Pacing::Quantum;
        f.tail_loss_probe = false;
        f.timeout = timeout;
        let mut s = sender::Sender::new(&f, 1);
        let first = send_all(&mut s, 0);
        assert_eq!(first.len(), 43, "one 64 KiB quantum");
        // Chunks 2, 4, 10 and 11 missing, everything else up to 42
        // SACKed: all four lost by the packet threshold.
        let ack = ack_cum(&[(12, 42), (5, 9), (3, 3), (0, 1)], 2, false);
        s.on_ack(at(40 * MS), &ack);
        bursts_from(&mut s, 40 * MS, 60 * MS, 4)
    };
    let tcp = run(sender::Timeout::Rto);
    assert_eq!(tcp[0], vec![2], "{tcp:?}");
    assert_eq!(tcp[1], vec![4], "{tcp:?}");
    assert_eq!(tcp[2], vec![10, 11], "adjacent repairs together: {tcp:?}");
    assert!(
        tcp[3][0] == 43 && tcp[3].len() > 1,
        "then new data: {tcp:?}"
    );
    let quic = run(sender::Timeout::Pto {
        max_ack_delay_ns: 25 * MS,
    });
    assert_eq!(quic[0][..5], [2, 4, 10, 11, 43], "{quic:?}");
}

/// Under QUIC 2018's loss detection a loss of a packet sent after the
/// episode began is a new congestion event (RFC 9002 §7.3.2; the
/// controller begins one), and `loss_episodes` counts it as it counts the
/// first; a loss of a packet sent before the episode began does not.
#[test]
fn quic_2018_counts_an_episode_begun_inside_recovery() {
    let mut cc = Config::new(Algorithm::Reno);
    cc.initial_cwnd_packets = 20;
    let mut f = SenderConfig::bulk(cc);
    f.tail_loss_probe = false;
    f.loss_detection = sender::LossDetection::Quic2018;
    let mut s = sender::Sender::new(&f, 1);
    let (sent, _) = send_until(&mut s, 0, 100 * MS, 20);
    assert_eq!(sent.len(), 20);
    // pn 0 lost by the 3-packet rule: the first episode, begun at 40 ms.
    s.on_ack(at(40 * MS), &ack_of(&[(1, 3)]));
    assert_eq!((s.loss_episodes, s.cc.recovery_episodes()), (1, 1));
    // pn 4, sent at 0 (before the episode began), lost too: the same one.
    s.on_ack(at(41 * MS), &ack_of(&[(5, 19), (1, 3)]));
    assert_eq!(s.packets_lost, 2);
    assert_eq!((s.loss_episodes, s.cc.recovery_episodes()), (1, 1));
    // Repairs and new data go out after the episode began.
    let (more, _) = send_until(&mut s, 42 * MS, 300 * MS, 8);
    assert!(more.len() >= 6, "{more:?}");
    let top = 20 + more.len() as u64 - 1;
    // pn 22, sent at 42 ms, missing with every later packet acknowledged:
    // lost, and a new episode.
    s.on_ack(at(90 * MS), &ack_of(&[(23, top), (5, 21), (0, 3)]));
    assert_eq!(s.packets_lost, 3);
    assert_eq!(s.cc.recovery_episodes(), 2, "the controller began one");
    assert_eq!(s.loss_episodes, 2, "and the sender counts it");
}
