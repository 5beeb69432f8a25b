//! Time per controller mode, for the share-of-time figures (C8's 98 % in
//! PROBE_BW) that every source reports the same way.

use congestion::Mode;

/// Time spent in each controller mode, ns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModeTimes {
    /// (mode, ns) for every mode seen, in first-seen order.
    pub entries: Vec<(Mode, u64)>,
    /// For `bbr-jitter` only: (ns during which the BDP was built on srtt
    /// rather than min_rtt, ns accounted). How often the variant's rule
    /// (seed 001, eqs. 10–11) fires is what decides whether it can differ
    /// from `bbr` at all, so claims C11–C13 report it.
    pub srtt: Option<(u64, u64)>,
}

impl ModeTimes {
    /// Adds `ns` to `mode`.
    pub fn add(&mut self, mode: Mode, ns: u64) {
        match self.entries.iter_mut().find(|(m, _)| *m == mode) {
            Some((_, t)) => *t += ns,
            None => self.entries.push((mode, ns)),
        }
    }

    /// Adds `ns` to the srtt account; `using` is `None` for controllers
    /// that have no such rule, which then keep no account.
    pub fn add_srtt(&mut self, using: Option<bool>, ns: u64) {
        if let Some(using) = using {
            let (u, t) = self.srtt.get_or_insert((0, 0));
            *t += ns;
            if using {
                *u += ns;
            }
        }
    }

    /// Fraction of the accounted time during which `bbr-jitter` used srtt;
    /// `None` for other controllers or before any time was accounted.
    pub fn srtt_fraction(&self) -> Option<f64> {
        self.srtt
            .filter(|&(_, t)| t > 0)
            .map(|(u, t)| u as f64 / t as f64)
    }

    /// Fraction of the total spent in `mode`.
    pub fn fraction(&self, mode: Mode) -> f64 {
        let total: u64 = self.entries.iter().map(|e| e.1).sum();
        let t = self.entries.iter().find(|e| e.0 == mode).map_or(0, |e| e.1);
        if total == 0 {
            0.0
        } else {
            t as f64 / total as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srtt_account_only_for_controllers_with_the_rule() {
        let mut m = ModeTimes::default();
        m.add_srtt(None, 100);
        assert_eq!(m.srtt_fraction(), None);
        m.add_srtt(Some(true), 30);
        m.add_srtt(Some(false), 90);
        assert_eq!(m.srtt, Some((30, 120)));
        assert!((m.srtt_fraction().unwrap() - 0.25).abs() < 1e-12);
    }
}
