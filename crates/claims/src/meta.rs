//! What the report says about each claim, kept as data beside the
//! scenarios: `scenarios/claims/meta/<scenario stem>.toml` holds a claim's
//! id, title, source, the published result as the seed states it, the
//! published values its figures draw, remarks and the analysis of a miss;
//! `scenarios/claims/meta/references.toml` holds the source documents.
//!
//! Prose and published numbers change for reasons of their own (a better
//! reading of a figure, a clearer sentence) and are read by people who do
//! not read Rust, so they live in files that need no code change; the
//! code keeps what is computed and judged. The files are compiled in
//! (`include_str!`) and parsed once, so the binary works from any
//! directory; a test of this crate parses every one of them.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// One claim's description, from `scenarios/claims/meta/<file>.toml`.
#[derive(Clone, Debug)]
pub struct Meta {
    /// `C1` … `C14`.
    pub id: String,
    /// Short title.
    pub title: String,
    /// Seed file and figure ("seed 000 fig. 8; seed 003"); every "seed
    /// NNN" it names is cited in full from `references.toml`.
    pub source: String,
    /// The published result, as the claim states it.
    pub published: String,
    /// Duration for `--quick`, s (None: the full duration, already short).
    pub quick_seconds: Option<u64>,
    /// Remarks shown whatever the verdict.
    pub notes: Vec<String>,
    /// Why the model misses the claim, shown when it is not reproduced.
    pub analysis: Option<String>,
    /// Published values drawn on the claim's figures, by figure stem.
    pub published_points: BTreeMap<String, Vec<(X, f64)>>,
}

/// Where a published value sits on a figure's time or parameter axis.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum X {
    /// At this x.
    At(f64),
    /// At a point of the run, for a value published without a time.
    Run(RunPoint),
}

/// A point of a run's duration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunPoint {
    /// Its end.
    End,
    /// Its middle.
    Middle,
}

/// One source document.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    /// Its seed number, `000` … `004`.
    pub seed: String,
    /// The full citation.
    pub text: String,
}

/// A claim's metadata file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    id: String,
    title: String,
    source: String,
    published: String,
    quick_seconds: Option<u64>,
    #[serde(default)]
    notes: Vec<String>,
    analysis: Option<Analysis>,
    #[serde(default)]
    published_points: BTreeMap<String, Vec<(X, f64)>>,
}

/// An analysis: its text, or that of another claim with the same cause.
#[derive(Deserialize)]
#[serde(untagged)]
enum Analysis {
    Text(String),
    SameAs {
        #[serde(rename = "same_as")]
        id: String,
    },
}

/// `references.toml` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct References {
    reference: Vec<Reference>,
}

/// One source document of the BBRv3 suite, cited as `[tag]` in a result's
/// `source`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Document {
    /// Its short tag (`D06`, `I117`, `GOMEZ24` …).
    pub tag: String,
    /// The full citation, with where it can be read.
    pub text: String,
}

/// `scenarios/bbr3/meta/references.toml` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Documents {
    document: Vec<Document>,
}

impl Meta {
    /// The published values of figure `stem` as (x, y) points; `run_s`
    /// is the run's duration, for values placed at a point of the run
    /// (an error if they are and it is not given).
    pub fn points(&self, stem: &str, run_s: Option<f64>) -> Result<Vec<(f64, f64)>, String> {
        let points = self.published_points.get(stem).ok_or_else(|| {
            format!(
                "{}: no published points for figure `{stem}` in its metadata",
                self.id
            )
        })?;
        points
            .iter()
            .map(|&(x, y)| {
                let x = match (x, run_s) {
                    (X::At(x), _) => x,
                    (X::Run(RunPoint::End), Some(d)) => d,
                    (X::Run(RunPoint::Middle), Some(d)) => d / 2.0,
                    (X::Run(_), None) => {
                        return Err(format!(
                            "{}: figure `{stem}` places a published value on the run, and no run is given",
                            self.id
                        ))
                    }
                };
                Ok((x, y))
            })
            .collect()
    }
}

/// Parses every claim's metadata, `(file name, text)` in order, and
/// resolves each `analysis = { same_as = "Cn" }` to that claim's text.
pub fn parse_all(files: &[(&str, &str)]) -> Result<Vec<Meta>, String> {
    let parsed: Vec<File> = files
        .iter()
        .map(|(name, text)| toml::from_str(text).map_err(|e| format!("{name}: {e}")))
        .collect::<Result<_, _>>()?;
    let text_of = |id: &str| {
        parsed
            .iter()
            .find(|f| f.id == id)
            .and_then(|f| match &f.analysis {
                Some(Analysis::Text(t)) => Some(t.clone()),
                _ => None,
            })
    };
    parsed
        .iter()
        .zip(files)
        .map(|(f, (name, _))| {
            let analysis = match &f.analysis {
                None => None,
                Some(Analysis::Text(t)) => Some(t.clone()),
                Some(Analysis::SameAs { id }) => Some(text_of(id).ok_or_else(|| {
                    format!("{name}: `analysis = {{ same_as = \"{id}\" }}` names no claim with an analysis of its own")
                })?),
            };
            Ok(Meta {
                id: f.id.clone(),
                title: f.title.clone(),
                source: f.source.clone(),
                published: f.published.clone(),
                quick_seconds: f.quick_seconds,
                notes: f.notes.clone(),
                analysis,
                published_points: f.published_points.clone(),
            })
        })
        .collect()
}

/// The source documents, from `scenarios/claims/meta/references.toml`.
pub fn references() -> &'static [Reference] {
    static REFERENCES: OnceLock<Vec<Reference>> = OnceLock::new();
    REFERENCES.get_or_init(|| {
        let text = include_str!("../../../scenarios/claims/meta/references.toml");
        match toml::from_str::<References>(text) {
            Ok(r) => r.reference,
            // Compiled in and parsed by this crate's tests: a bug here is
            // one in a file of this repository.
            Err(e) => panic!("scenarios/claims/meta/references.toml: {e}"),
        }
    })
}

/// The BBRv3 suite's source documents, from
/// `scenarios/bbr3/meta/references.toml`.
pub fn documents() -> &'static [Document] {
    static DOCUMENTS: OnceLock<Vec<Document>> = OnceLock::new();
    DOCUMENTS.get_or_init(|| {
        let text = include_str!("../../../scenarios/bbr3/meta/references.toml");
        match toml::from_str::<Documents>(text) {
            Ok(r) => r.document,
            // Compiled in and parsed by this crate's tests.
            Err(e) => panic!("scenarios/bbr3/meta/references.toml: {e}"),
        }
    })
}

/// The documents a `source` cites, as (label, full citation): each
/// "seed NNN" it names from [`references`] (label `NNN`), each `[TAG]`
/// from [`documents`] (label `TAG`), in that order.
pub fn cited(source: &str) -> Vec<(&'static str, &'static str)> {
    let seeds = references()
        .iter()
        .filter(|r| source.contains(&format!("seed {}", r.seed)))
        .map(|r| (r.seed.as_str(), r.text.as_str()));
    let docs = documents()
        .iter()
        .filter(|d| source.contains(&format!("[{}]", d.tag)))
        .map(|d| (d.tag.as_str(), d.text.as_str()));
    seeds.chain(docs).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = r#"
id = "C1"
title = "t"
source = "seed 000"
published = """
two \
lines"""
analysis = "why"
[published_points]
fig = [[1.5, 2.0], ["end", 3.0], ["middle", 4.0]]
"#;

    #[test]
    fn points_are_placed_on_the_run_when_published_without_a_time() {
        let m = &parse_all(&[("one", ONE)]).unwrap()[0];
        assert_eq!(m.published, "two lines");
        assert_eq!(
            m.points("fig", Some(10.0)).unwrap(),
            [(1.5, 2.0), (10.0, 3.0), (5.0, 4.0)]
        );
        assert!(m.points("fig", None).unwrap_err().contains("no run"));
        assert!(m.points("other", Some(1.0)).unwrap_err().contains("other"));
        assert_eq!(m.quick_seconds, None);
        assert!(m.notes.is_empty());
    }

    #[test]
    fn an_analysis_may_be_another_claims() {
        let two = "id = \"C2\"\ntitle = \"t\"\nsource = \"s\"\npublished = \"p\"\nanalysis = { same_as = \"C1\" }\n";
        let all = parse_all(&[("one", ONE), ("two", two)]).unwrap();
        assert_eq!(all[1].analysis.as_deref(), Some("why"));
        let e = parse_all(&[("two", two)]).unwrap_err();
        assert!(e.starts_with("two: ") && e.contains("C1"), "{e}");
    }

    #[test]
    fn unknown_or_missing_keys_are_refused_with_the_file_named() {
        let e = parse_all(&[("x.toml", "id = \"C1\"\n")]).unwrap_err();
        assert!(e.starts_with("x.toml: ") && e.contains("title"), "{e}");
        let typo = ONE.replace("title", "titel");
        assert!(parse_all(&[("x.toml", &typo)]).is_err());
    }

    #[test]
    fn the_references_parse_and_name_each_seed_once() {
        let r = references();
        let seeds: Vec<&str> = r.iter().map(|r| r.seed.as_str()).collect();
        assert_eq!(seeds, ["000", "001", "002", "003", "004"]);
        assert!(r.iter().all(|r| r.text.len() > 50));
    }

    #[test]
    fn the_bbr3_documents_parse_each_tag_once_and_are_cited_by_tag() {
        let d = documents();
        let mut tags: Vec<&str> = d.iter().map(|d| d.tag.as_str()).collect();
        assert!(d.iter().all(|d| d.text.len() > 50));
        let n = tags.len();
        tags.sort_unstable();
        tags.dedup();
        assert_eq!(tags.len(), n, "a tag twice");
        let c = cited("[D06] §5.3.4.2; seed 002");
        let labels: Vec<&str> = c.iter().map(|c| c.0).collect();
        assert_eq!(labels, ["002", "D06"]);
        assert!(cited("D06 without brackets").is_empty());
    }
}
