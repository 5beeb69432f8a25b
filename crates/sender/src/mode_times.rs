//! Time per controller mode, for the share-of-time figures (C8's 98 % in
//! PROBE_BW) that every source reports the same way.

use congestion::Mode;

/// Time spent in each controller mode, ns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModeTimes {
    /// (mode, ns) for every mode seen, in first-seen order.
    pub entries: Vec<(Mode, u64)>,
}

impl ModeTimes {
    /// Adds `ns` to `mode`.
    pub fn add(&mut self, mode: Mode, ns: u64) {
        match self.entries.iter_mut().find(|(m, _)| *m == mode) {
            Some((_, t)) => *t += ns,
            None => self.entries.push((mode, ns)),
        }
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
