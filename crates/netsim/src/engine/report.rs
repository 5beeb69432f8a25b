//! What a run reports: the time-series samples and the summary.

use super::*;

impl Sim<'_> {
    /// Never inlined (see `Sim::on_cross`).
    #[inline(never)]
    pub(super) fn sample(&mut self, rec: &mut dyn Recorder) -> io::Result<()> {
        let t = self.now;
        let interval = self.cfg.sample_interval_ns.max(1);
        let fwd_queue_delay_ns = self.fwd.queue_delay_ns(t);
        // Generated flows are not sampled: tens of thousands of them would
        // swamp flows.csv; their completion records are their output.
        for (i, f) in self.flows[..self.listed].iter_mut().enumerate() {
            if t < f.start_ns {
                continue;
            }
            let s = f.sender.cc.snapshot();
            let delivered = f.receiver.unique_bytes;
            let goodput =
                (delivered - f.last_sample_delivered) as f64 * 8.0 * 1e9 / interval as f64;
            f.last_sample_delivered = delivered;
            rec.flow_sample(&FlowSample {
                t_ns: t,
                flow: i,
                delivered_bytes: delivered,
                goodput_bps: goodput,
                rtt_ns: f.sender.latest_rtt_ns,
                srtt_ns: f.sender.cc.rtt().smoothed_ns(),
                cwnd_bytes: s.cwnd_bytes,
                pacing_rate_bps: s.pacing_rate_bytes_per_sec as f64 * 8.0,
                inflight_bytes: f.sender.inflight,
                inflight_peak_bytes: f.sender.take_inflight_peak(),
                mode: s.mode,
                bw_estimate_bps: s.bw_estimate_bytes_per_sec.map(|b| b * 8.0),
                min_rtt_ns: s.min_rtt.map(|d| d.as_nanos() as u64),
                queue_delay_ns: fwd_queue_delay_ns,
                drops: f.drops,
                packets_sent: f.sender.packets_sent,
                retransmissions: f.sender.retransmissions,
                packets_lost: f.sender.packets_lost,
                delivered_ce: f.sender.delivered_ce,
            })?;
            if crate::ModelSample::applies(&s) {
                rec.model_sample(&crate::ModelSample {
                    t_ns: t,
                    flow: i,
                    snapshot: s,
                })?;
            }
        }
        // Hops after the first follow as `hop1`, `hop2`, ...; access links
        // are a flow's own and have no rows.
        let hops = self
            .hop_segs
            .iter()
            .enumerate()
            .map(|(k, &s)| (HOP_NAMES[k + 1], &self.segs[s as usize].link));
        for (name, link) in [(super::FORWARD, &self.fwd), (super::REVERSE, &self.rev)]
            .into_iter()
            .chain(hops)
        {
            let q = link.queue(t);
            let st = link.stats();
            rec.link_sample(&LinkSample {
                t_ns: t,
                direction: name,
                queue_packets: q.packets,
                queue_bytes: q.bytes,
                queue_delay_ns: link.queue_delay_ns(t),
                drops: st.dropped_total(),
                ce_marked: st.marked_ce,
            })?;
        }
        Ok(())
    }

    pub(super) fn summary(&self) -> Summary {
        let flows: Vec<FlowSummary> = self
            .cfg
            .flows
            .iter()
            .zip(&self.flows)
            .map(|(fc, f)| {
                let s = &f.sender;
                let end = active_end(
                    f.receiver.completed_at,
                    fc.stop_ns,
                    f.receiver.last_unique_at,
                    self.cfg.duration_ns,
                );
                let active = end.saturating_sub(f.start_ns).max(1);
                let ms = |v: Option<f64>| v.map(|x| x / 1e6);
                FlowSummary {
                    name: fc.name.clone(),
                    algorithm: algorithm_name(fc),
                    delivered_bytes: f.receiver.unique_bytes,
                    goodput_bps: f.receiver.unique_bytes as f64 * 8.0 * 1e9 / active as f64,
                    rtt_mean_ms: ms(s.rtt_hist.mean()),
                    rtt_median_ms: ms(s.rtt_hist.quantile(0.5)),
                    rtt_p95_ms: ms(s.rtt_hist.quantile(0.95)),
                    rtt_p99_ms: ms(s.rtt_hist.quantile(0.99)),
                    packets_sent: s.packets_sent,
                    retransmissions: s.retransmissions,
                    retransmission_rate: if s.packets_sent == 0 {
                        0.0
                    } else {
                        s.retransmissions as f64 / s.packets_sent as f64
                    },
                    drops: f.drops,
                    rtos: s.rtos,
                    loss_episodes: s.loss_episodes,
                    undos: s.undos,
                    mode_times: s.mode_times.clone(),
                    completion_ns: f.receiver.completed_at.map(Instant::as_nanos),
                    ce_packets: s.delivered_ce,
                    delivered_packets: s.delivered_packets,
                    // Exact: a run holds at most 10^8 packets (scenario limits).
                    ce_received: f.receiver.ecn_counts.ce as u64,
                    handshake: f.opened,
                    rwnd_limited_ns: f
                        .receiver
                        .offers_window()
                        .then(|| s.rwnd_limited_ns(Instant::from_nanos(end))),
                    rwnd_reach: f.receiver.window_reach(),
                    timestamps: f.timestamps.then_some(crate::record::TimestampRecord {
                        partial_undos: s.partial_undos,
                        segments_received: f.receiver.timestamps().segments,
                        paws_discards: f.receiver.timestamps().paws_discards,
                    }),
                }
            })
            .collect();
        let goodputs: Vec<f64> = flows.iter().map(|f| f.goodput_bps).collect();
        Summary {
            jain_fairness: jain_index(&goodputs),
            flows,
            packets_simulated: self.packets,
            ack_packets_simulated: self.rev.stats().offered,
            events: self.events,
            forward_drops: self.fwd.stats().dropped_total(),
            forward_ce_marked: self.fwd.stats().marked_ce,
            reverse_drops: self.rev.stats().dropped_total(),
            reverse_ce_marked: self.rev.stats().marked_ce,
            fct: self.fct.summary(),
            cross: self.cross.iter().map(|c| c.stats.clone()).collect(),
            flow_slots: self.flows.len(),
            peak_live_flows: self.peak_live,
            hops: self
                .hop_segs
                .iter()
                .enumerate()
                .map(|(k, &s)| {
                    let st = self.segs[s as usize].link.stats();
                    HopSummary {
                        name: HOP_NAMES[k + 1],
                        offered: st.offered,
                        drops: st.dropped_total(),
                        ce_marked: st.marked_ce,
                    }
                })
                .collect(),
        }
    }
}

/// When a flow's active time ends, for its goodput: when a finite flow
/// completed; for a flow told to stop before the run's end, its stop or
/// the arrival of its last new byte (data in flight at the stop, or
/// repaired after it), whichever is later; otherwise the run's end.
/// Averaged over the whole run instead, a flow that stopped at 10 s of
/// 30 showed a third of its goodput, and Jain's index counted it as
/// starved.
fn active_end(
    completed_at: Option<Instant>,
    stop_ns: Option<u64>,
    last_unique_at: Instant,
    duration_ns: u64,
) -> u64 {
    match (completed_at, stop_ns) {
        (Some(t), _) => t.as_nanos(),
        (None, Some(stop)) if stop < duration_ns => {
            stop.max(last_unique_at.as_nanos()).min(duration_ns)
        }
        _ => duration_ns,
    }
}
