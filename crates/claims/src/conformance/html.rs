//! `conformance.html`: the suite's report for people to read and link
//! to, beside `reproduce`'s: the matrix of case × controller, each
//! failure's numbers, and per case its path, the draft's section, every
//! check with the reason for its bound, its figures (each controller's
//! inflight and pacing rate with the expectations drawn) and each
//! controller's outcome at the figure's point.

use super::case::Case;
use super::check::Outcome;
use super::report::cell;
use super::RunResult;
use crate::html::{esc, STYLE};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The page. `figures` maps a case id to its figures' stems (SVG files
/// beside the page, in `figures/`); `how` says what was run (grid,
/// command) in a sentence.
pub fn page(
    cases: &[Case],
    controllers: &[String],
    results: &[RunResult],
    figures: &BTreeMap<String, Vec<String>>,
    how: &str,
) -> String {
    let mut h = String::new();
    let (version, commit) = runner::provenance();
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>bbrlab: BBRv3 conformance</title><style>{STYLE}</style></head><body>\
         <h1>bbrlab: the draft's test cases, on each controller</h1>\
         <p>The example test cases of draft-ietf-ccwg-bbr-06 (Appendix A), each a path, a workload and what a correct BBRv3 does there, \
         run in bbrlab's simulator on each controller. {}</p>\
         <p>bbrlab {} (git commit {}), generated {} UTC. ✓: every point passes; ✗ n/N: n of the N points fail; a state check is skipped for a controller that does not expose its state.</p>",
        esc(how),
        esc(version),
        esc(commit),
        hostfacts::utc_today(),
    );
    // The matrix.
    let _ = write!(h, "<table><tr><th>case</th>");
    for c in controllers {
        let _ = write!(h, "<th>{}</th>", esc(c));
    }
    h.push_str("</tr>");
    for c in cases {
        let _ = write!(
            h,
            "<tr><td><a href=\"#{}\">{} {}</a></td>",
            esc(&c.id),
            esc(&c.id),
            esc(&c.title)
        );
        for cc in controllers {
            let cell = cell(results, &c.id, cc);
            let (class, text) = if cell.runs == 0 {
                ("", "–".to_string())
            } else if cell.failed == 0 {
                ("pass", "✓".to_string())
            } else {
                ("fail", format!("✗ {}/{}", cell.failed, cell.runs))
            };
            let mut title = cell.first_failure.clone().unwrap_or_default();
            if !cell.skipped.is_empty() {
                let _ = write!(title, " skipped: {}", cell.skipped.join("; "));
            }
            let skip = if cell.skipped.is_empty() {
                ""
            } else {
                " (some skipped)"
            };
            let _ = write!(
                h,
                "<td class=\"{class}\" title=\"{}\">{text}{skip}</td>",
                esc(title.trim())
            );
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
    // Each case.
    for c in cases {
        let _ = write!(
            h,
            "<section id=\"{}\"><h2>{} {}</h2><p>{}. Case file: <code>{}</code>.</p>",
            esc(&c.id),
            esc(&c.id),
            esc(&c.title),
            esc(&c.section),
            esc(&c.path.display().to_string()),
        );
        h.push_str("<table><tr><th>check</th><th>why the bound is what it is</th></tr>");
        for k in &c.checks {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td></tr>",
                esc(&k.kind.text()),
                esc(&k.why)
            );
        }
        h.push_str("</table>");
        for stem in figures.get(&c.id).into_iter().flatten() {
            let _ = write!(
                h,
                "<p><img src=\"figures/{}.svg\" alt=\"{}\"></p>",
                esc(stem),
                esc(stem)
            );
        }
        // Every run of the case that did not pass, with its numbers.
        let bad: Vec<&RunResult> = results
            .iter()
            .filter(|r| r.case == c.id && r.failed())
            .collect();
        if bad.is_empty() {
            h.push_str("<p class=\"pass\">Every run passes.</p>");
        } else {
            h.push_str("<table><tr><th>controller</th><th>point</th><th>what failed</th></tr>");
            for r in bad {
                let why = match &r.error {
                    Some(e) => e.clone(),
                    None => r
                        .checks
                        .iter()
                        .filter_map(|k| match &k.outcome {
                            Outcome::Fail { measured, allowed } => {
                                Some(format!("{}: {measured}, allowed {allowed}", k.check))
                            }
                            _ => None,
                        })
                        .collect::<Vec<_>>()
                        .join("; "),
                };
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td class=\"fail\">{}</td></tr>",
                    esc(&r.controller),
                    esc(&r.point),
                    esc(&why)
                );
            }
            h.push_str("</table>");
        }
        h.push_str("</section>");
    }
    h.push_str("</body></html>\n");
    h
}
