//! The two ways a search spends its evaluations: CMA-ES (the `cmaes`
//! crate, with IPOP restarts: a run that converges starts again from a
//! random point with twice the population, Auger and Hansen 2005) and
//! uniform random sampling, the baseline it must beat in the same number
//! of evaluations. Both maximize a badness over the unit cube and
//! evaluate each generation's points in parallel on a rayon pool.
//!
//! CMA-ES samples from an unbounded Gaussian; a coordinate outside
//! [0, 1] is folded back by reflection ([`fold`]) so the distribution's
//! mass at a bound is not piled on the bound itself.
//!
//! Both are deterministic for a seed, however many threads: a
//! generation's points come from the seeded sampler before any is
//! evaluated, and the history lists a generation's points by their
//! coordinates, an order no thread can change.

use rand::{Rng, SeedableRng};
use std::sync::Mutex;

/// One evaluated point.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// The point, in the unit cube.
    pub x: Vec<f64>,
    /// Its badness (larger is worse for the controller).
    pub badness: f64,
}

/// Reflects `v` into [0, 1]: 1.2 becomes 0.8, -0.3 becomes 0.3.
pub fn fold(v: f64) -> f64 {
    if !v.is_finite() {
        return 0.5;
    }
    let m = v.rem_euclid(2.0);
    if m > 1.0 {
        2.0 - m
    } else {
        m
    }
}

/// Called after each evaluation with how many are done and the most so
/// far; must be cheap.
pub type OnEval<'a> = &'a (dyn Fn(usize) + Sync);

/// CMA-ES with IPOP restarts on `f` over `[0, 1]^dim`, for at most
/// `evaluations`: generations run whole, so it stops before one that
/// would pass the limit, and the history may be a little shorter.
pub fn cmaes(
    dim: usize,
    evaluations: usize,
    seed: u64,
    pool: &rayon::ThreadPool,
    f: &(dyn Fn(&[f64]) -> f64 + Sync),
    on_eval: OnEval<'_>,
) -> Vec<Point> {
    let mut history: Vec<Point> = Vec::with_capacity(evaluations);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_c3a5);
    let default_lambda = 4 + (3.0 * (dim.max(1) as f64).ln()).floor() as usize;
    let mut lambda = default_lambda;
    let mut restart = 0u64;
    while history.len() + lambda <= evaluations {
        // The first run starts at the cube's centre, each restart at a
        // random point; a step of 0.3 covers the cube within two sigmas.
        let mean: Vec<f64> = if restart == 0 {
            vec![0.5; dim]
        } else {
            (0..dim).map(|_| rng.gen_range(0.1..0.9)).collect()
        };
        let gen_seed = seed.wrapping_add(restart.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let batch: Mutex<Vec<(Vec<u64>, Point)>> = Mutex::new(Vec::new());
        let done = std::sync::atomic::AtomicUsize::new(history.len());
        let objective = |raw: &cmaes::DVector<f64>| -> f64 {
            let x: Vec<f64> = raw.iter().map(|v| fold(*v)).collect();
            let badness = f(&x);
            let key = raw.iter().map(|v| v.to_bits()).collect();
            batch
                .lock()
                .expect("no evaluation panics holding it")
                .push((key, Point { x, badness }));
            on_eval(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
            // cmaes minimizes; a non-finite badness would end the run.
            if badness.is_finite() {
                -badness
            } else {
                f64::MAX
            }
        };
        let built = cmaes::CMAESOptions::new(mean, 0.3)
            .population_size(lambda)
            .seed(gen_seed)
            .build(&objective);
        let Ok(mut state) = built else {
            break;
        };
        loop {
            if history.len() + lambda > evaluations {
                break;
            }
            let ended = pool.install(|| state.next_parallel());
            let mut points = std::mem::take(&mut *batch.lock().expect("no panic holding it"));
            // The threads finish in any order; the coordinates do not.
            points.sort_by(|a, b| a.0.cmp(&b.0));
            history.extend(points.into_iter().map(|(_, p)| p));
            if ended.is_some() {
                break;
            }
        }
        restart += 1;
        lambda *= 2;
    }
    history
}

/// `evaluations` uniform random points, evaluated in parallel, in the
/// order drawn.
pub fn random(
    dim: usize,
    evaluations: usize,
    seed: u64,
    pool: &rayon::ThreadPool,
    f: &(dyn Fn(&[f64]) -> f64 + Sync),
    on_eval: OnEval<'_>,
) -> Vec<Point> {
    use rayon::prelude::*;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x0ba5_e11e);
    let xs: Vec<Vec<f64>> = (0..evaluations)
        .map(|_| (0..dim).map(|_| rng.gen::<f64>()).collect())
        .collect();
    let done = std::sync::atomic::AtomicUsize::new(0);
    pool.install(|| {
        xs.into_par_iter()
            .map(|x| {
                let badness = f(&x);
                on_eval(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
                Point { x, badness }
            })
            .collect()
    })
}

/// The worst point of a history (the largest badness; the first of
/// equals), if any.
pub fn worst(history: &[Point]) -> Option<&Point> {
    history.iter().fold(None, |w: Option<&Point>, p| match w {
        Some(w) if w.badness >= p.badness || !p.badness.is_finite() => Some(w),
        _ => Some(p),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(n: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
    }

    #[test]
    fn fold_reflects_into_the_unit_interval() {
        for (v, want) in [
            (0.25, 0.25),
            (1.2, 0.8),
            (-0.3, 0.3),
            (2.5, 0.5),
            (-1.25, 0.75),
            (1.0, 1.0),
        ] {
            assert!((fold(v) - want).abs() < 1e-12, "{v}: {}", fold(v));
        }
        assert_eq!(fold(f64::NAN), 0.5);
    }

    /// A narrow peak away from the centre: CMA-ES must find it closer than
    /// uniform sampling does in the same number of evaluations, on each of
    /// several seeds (a search engine that cannot beat random is no
    /// engine).
    #[test]
    fn cmaes_beats_random_on_a_narrow_peak_in_the_same_budget() {
        let peak = [0.83, 0.17, 0.64, 0.29, 0.91, 0.05];
        let f = |x: &[f64]| -> f64 {
            let d2: f64 = x.iter().zip(peak).map(|(a, b)| (a - b) * (a - b)).sum();
            (-d2 / 0.01).exp() - d2
        };
        let p = pool(2);
        for seed in [1, 2, 3] {
            let c = cmaes(6, 300, seed, &p, &f, &|_| {});
            let r = random(6, c.len(), seed, &p, &f, &|_| {});
            assert!(c.len() > 250 && c.len() <= 300, "{}", c.len());
            assert_eq!(r.len(), c.len());
            let (bc, br) = (worst(&c).unwrap().badness, worst(&r).unwrap().badness);
            assert!(bc > br, "seed {seed}: cmaes {bc} against random {br}");
            assert!(bc > 0.5, "seed {seed}: cmaes reached only {bc}");
        }
    }

    #[test]
    fn a_search_repeats_for_its_seed_whatever_the_threads() {
        let f = |x: &[f64]| x.iter().map(|v| (v * 7.0).sin()).sum::<f64>();
        let a = cmaes(4, 80, 9, &pool(1), &f, &|_| {});
        let b = cmaes(4, 80, 9, &pool(2), &f, &|_| {});
        assert_eq!(a, b);
        let c = cmaes(4, 80, 10, &pool(2), &f, &|_| {});
        assert_ne!(a, c);
        assert_eq!(
            random(4, 30, 9, &pool(1), &f, &|_| {}),
            random(4, 30, 9, &pool(2), &f, &|_| {})
        );
        for p in a.iter().chain(&c) {
            assert!(p.x.iter().all(|v| (0.0..=1.0).contains(v)));
        }
    }

    #[test]
    fn restarts_spend_the_budget_after_convergence() {
        // Flat: CMA-ES stops early on a flat function; restarts must use
        // what is left.
        let f = |_: &[f64]| 1.0;
        let c = cmaes(3, 200, 1, &pool(1), &f, &|_| {});
        assert!(c.len() >= 150, "{}", c.len());
    }
}
