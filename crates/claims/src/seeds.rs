//! Claims measured over several seeds: runs grouped into sweep points by
//! every parameter but `seed`, each point judged on its mean over the
//! seeds, and the spread drawn as a band around that mean.

use crate::runs::{series, RunData};
use figures::Band;
use runner::stats::Stats;

/// Which spread a band shows around the mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Spread {
    /// From the smallest to the largest seed's value.
    MinMax,
    /// ± one sample standard deviation.
    StdDev,
}

/// The runs of one sweep point, over its seeds.
pub(crate) struct Point<'a> {
    /// The point's sweep parameters, `seed` left out.
    pub params: Vec<(String, String)>,
    /// Its runs, one per seed, in run order.
    pub runs: Vec<&'a RunData>,
}

impl Point<'_> {
    /// The value of sweep parameter `key` at this point.
    pub fn param(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// `f` of each run, over the seeds.
    pub fn stats(&self, f: impl Fn(&RunData) -> f64) -> Stats {
        Stats::of(&self.runs.iter().map(|d| f(d)).collect::<Vec<_>>())
    }
}

/// Groups runs by every sweep parameter except `seed` (a sweep key
/// `seed = [1, 2, …]` gives one run per seed), in order of first
/// appearance, so a claim can judge each point by its mean over seeds.
pub(crate) fn by_point(data: &[RunData]) -> Vec<Point<'_>> {
    group_except_seed(data, |d| &d.params)
        .into_iter()
        .map(|(params, runs)| Point { params, runs })
        .collect()
}

/// [`by_point`]'s grouping for anything with sweep parameters.
#[allow(clippy::type_complexity)]
fn group_except_seed<T>(
    items: &[T],
    params: impl Fn(&T) -> &[(String, String)],
) -> Vec<(Vec<(String, String)>, Vec<&T>)> {
    let mut groups: Vec<(Vec<(String, String)>, Vec<&T>)> = Vec::new();
    for item in items {
        let key: Vec<(String, String)> = params(item)
            .iter()
            .filter(|(k, _)| k != "seed")
            .cloned()
            .collect();
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(item),
            None => groups.push((key, vec![item])),
        }
    }
    groups
}

/// A band of the mean at each x with the chosen spread around it; points
/// without a finite mean are left out.
pub(crate) fn band(label: &str, points: &[(f64, Stats)], spread: Spread) -> Band {
    let mut pts: Vec<(f64, f64, f64, f64)> = points
        .iter()
        .filter(|(x, s)| x.is_finite() && s.n > 0)
        .map(|&(x, s)| match spread {
            Spread::MinMax => (x, s.mean, s.min, s.max),
            Spread::StdDev => (x, s.mean, s.mean - s.sd, s.mean + s.sd),
        })
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    Band {
        label: label.to_string(),
        points: pts,
    }
}

/// Mean and spread over the runs' time series `col` (×`scale`), sample by
/// sample; the runs share a sample interval, so samples align by index.
pub(crate) fn series_stats(
    runs: &[&RunData],
    col: &str,
    scale: f64,
) -> Result<Vec<(f64, Stats)>, String> {
    let all: Vec<Vec<(f64, f64)>> = runs
        .iter()
        .map(|d| series(d, 0, col, scale))
        .collect::<Result<_, _>>()?;
    let n = all.iter().map(Vec::len).min().unwrap_or(0);
    Ok((0..n)
        .map(|i| {
            let v: Vec<f64> = all.iter().map(|s| s[i].1).collect();
            (all[0][i].0, Stats::of(&v))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_group_by_every_parameter_but_the_seed() {
        let p = |alg: &str, seed: &str| {
            vec![
                ("flow.algorithm".to_string(), alg.to_string()),
                ("seed".to_string(), seed.to_string()),
            ]
        };
        let runs = [
            p("bbr", "1"),
            p("cubic", "1"),
            p("bbr", "2"),
            p("cubic", "2"),
        ];
        let g = group_except_seed(&runs, |r| r);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].0, vec![("flow.algorithm".into(), "bbr".into())]);
        assert_eq!(g[0].1, vec![&runs[0], &runs[2]]);
        assert_eq!(g[1].1, vec![&runs[1], &runs[3]]);
        // No sweep at all: one group of one.
        let single: [Vec<(String, String)>; 1] = [vec![]];
        assert_eq!(group_except_seed(&single, |r| r).len(), 1);
    }

    #[test]
    fn bands_sort_by_x_and_drop_points_without_runs() {
        let s = Stats::of(&[1.0, 3.0]);
        let b = band(
            "x",
            &[(2.0, s), (1.0, s), (3.0, Stats::of(&[]))],
            Spread::MinMax,
        );
        assert_eq!(b.points, vec![(1.0, 2.0, 1.0, 3.0), (2.0, 2.0, 1.0, 3.0)]);
        let sd = 2f64.sqrt();
        let b = band("x", &[(1.0, s)], Spread::StdDev);
        assert!((b.points[0].2 - (2.0 - sd)).abs() < 1e-12);
        assert!((b.points[0].3 - (2.0 + sd)).abs() < 1e-12);
    }
}
