//! A tiny seeded RNG, so the crate stays dependency-free and runs are reproducible.
//!
//! BBR draws one random number per entry into PROBE_BW (the starting phase of
//! the gain cycle). The caller supplies the seed, which is what makes a whole
//! simulation deterministic. SplitMix64 is ample for this: it is not used for
//! anything security-relevant.

/// SplitMix64 (Steele, Lea & Flood, 2014): 64 bits of state, full period.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// Seeds the generator. Every seed, including 0, is valid.
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `0..n` (`n` must be non-zero; 0 yields 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        // Multiply-shift reduction: bias is below 2^-32 for the small n we use.
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence_and_roughly_uniform() {
        let mut a = SplitMix64::new(7);
        let mut b = SplitMix64::new(7);
        let mut counts = [0u32; 7];
        for _ in 0..70_000 {
            let x = a.below(7);
            assert_eq!(x, b.below(7));
            counts[x as usize] += 1;
        }
        // Each bucket expects 10_000; 5 sigma is about 470.
        for c in counts {
            assert!((9_500..=10_500).contains(&c), "bucket count {c}");
        }
        assert_eq!(SplitMix64::new(1).below(0), 0);
    }
}
