//! The claims and how each is evaluated: a [`ClaimDef`] per claim joins
//! its scenario, its metadata (title, source, published text and values,
//! remarks, analysis; data in `scenarios/claims/meta/`) and the evaluation
//! in its own module of [`crate::claim`], which records what it finds in
//! an [`Eval`].
//!
//! The BBRv3 results ([`bbr3`], V1 …, modules in [`crate::bbr3`], files in
//! `scenarios/bbr3/`) are put together the same way and judged by the same
//! machinery; they are a suite of their own, not claims C15 and on.

pub use crate::claim::Evaluator;
pub use crate::findings::{Check, Eval, Row};
use crate::meta::{self, Meta};
use std::sync::OnceLock;

/// Which list a [`ClaimDef`] belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suite {
    /// The published claims about BBR v1, C1–C14.
    Claims,
    /// The BBRv3 results, V1 …: `bbr3` beside v1 `bbr` on the same path.
    Bbr3,
}

impl Suite {
    /// Its directory under `scenarios/` (and its name in `claims.json`).
    pub fn dir(self) -> &'static str {
        match self {
            Suite::Claims => "claims",
            Suite::Bbr3 => "bbr3",
        }
    }
}

/// One claim: where it comes from, its scenario, and how it is judged.
pub struct ClaimDef {
    /// The claims or the BBRv3 suite.
    pub suite: Suite,
    /// What the report says about it, from its metadata file.
    pub meta: Meta,
    /// Scenario file stem in `scenarios/<suite>/` (its metadata has the
    /// same stem in `scenarios/<suite>/meta/`).
    pub file: &'static str,
    /// The scenario file's text.
    pub toml: &'static str,
    /// Measures and judges the runs; writes figures into the directory.
    pub evaluate: Evaluator,
}

impl ClaimDef {
    /// Its scenario's path in the repository, as errors and the report
    /// name it.
    pub fn scenario_path(&self) -> String {
        format!("scenarios/{}/{}.toml", self.suite.dir(), self.file)
    }
}

/// Every claim, in order (C1 … C14). The metadata is parsed on the first
/// call.
pub fn all() -> &'static [ClaimDef] {
    static ALL: OnceLock<Vec<ClaimDef>> = OnceLock::new();
    ALL.get_or_init(|| defs(Suite::Claims, &crate::claim::SOURCES))
}

/// The BBRv3 results, in order (V1 …), run after the claims by
/// `bbrlab reproduce`. The metadata is parsed on the first call.
pub fn bbr3() -> &'static [ClaimDef] {
    static ALL: OnceLock<Vec<ClaimDef>> = OnceLock::new();
    ALL.get_or_init(|| defs(Suite::Bbr3, &crate::bbr3::SOURCES))
}

/// The claims, then the BBRv3 results: everything `reproduce` can run.
pub fn everything() -> impl Iterator<Item = &'static ClaimDef> {
    all().iter().chain(bbr3())
}

/// A suite's definitions from its compiled-in files.
fn defs(suite: Suite, sources: &[crate::claim::Source]) -> Vec<ClaimDef> {
    let names: Vec<String> = sources
        .iter()
        .map(|s| format!("scenarios/{}/meta/{}.toml", suite.dir(), s.file))
        .collect();
    let files: Vec<(&str, &str)> = names
        .iter()
        .zip(sources)
        .map(|(n, s)| (n.as_str(), s.meta))
        .collect();
    let metas = match meta::parse_all(&files) {
        Ok(m) => m,
        // Compiled in and parsed by this module's tests: a bug here is
        // one in a file of this repository.
        Err(e) => panic!("{e}"),
    };
    metas
        .into_iter()
        .zip(sources)
        .map(|(meta, s)| ClaimDef {
            suite,
            meta,
            file: s.file,
            toml: s.scenario,
            evaluate: s.evaluate,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn every_claim_has_complete_metadata_in_order() {
        let all = all();
        assert_eq!(all.len(), 14);
        for (i, c) in all.iter().enumerate() {
            let m = &c.meta;
            // C1 is c01-…, in order.
            assert_eq!(m.id, format!("C{}", i + 1), "{}", c.file);
            assert!(c.file.starts_with(&format!("c{:02}-", i + 1)), "{}", c.file);
            for (what, text) in [
                ("title", &m.title),
                ("source", &m.source),
                ("published", &m.published),
            ] {
                assert!(
                    !text.trim().is_empty() && !text.contains('\n'),
                    "{}: {what}",
                    m.id
                );
            }
            // The analysis of a miss is prose, not a placeholder.
            if let Some(a) = &m.analysis {
                assert!(a.len() > 200, "{}: analysis", m.id);
            }
        }
    }

    #[test]
    fn every_claim_cites_a_known_source_document() {
        let seeds: Vec<&str> = meta::references().iter().map(|r| r.seed.as_str()).collect();
        for c in all() {
            let cited: Vec<&&str> = seeds
                .iter()
                .filter(|s| c.meta.source.contains(&format!("seed {s}")))
                .collect();
            assert!(!cited.is_empty(), "{}: {}", c.meta.id, c.meta.source);
        }
    }

    #[test]
    fn published_points_parse_and_are_finite() {
        let mut figures = 0;
        for c in all() {
            for stem in c.meta.published_points.keys() {
                let p = c.meta.points(stem, Some(60.0)).unwrap();
                assert!(!p.is_empty(), "{}: {stem}", c.meta.id);
                assert!(
                    p.iter().all(|(x, y)| x.is_finite() && y.is_finite()),
                    "{}: {stem}",
                    c.meta.id
                );
                figures += 1;
            }
        }
        // C1, C2, C3, C4, C11 and C12 draw published values.
        assert_eq!(figures, 6);
    }

    #[test]
    fn a_quick_run_is_shorter_than_the_full_one() {
        for c in all() {
            let Some(q) = c.meta.quick_seconds else {
                continue;
            };
            let file = format!("scenarios/claims/{}.toml", c.file);
            let sc = scenario::parse(c.toml, &file, Path::new("."), Path::new(&file)).unwrap();
            for r in &sc.runs {
                assert!(q * 1_000_000_000 < r.config.duration_ns, "{}", c.meta.id);
            }
        }
    }
}
